//! The audit log: one JSON line per request, appended by the parent.
//!
//! The file is opened here, in the parent, append-only with mode 0600. Rust opens files with
//! `O_CLOEXEC`, and workers are spawned with only their pipes, so no worker holds this
//! descriptor. A line records what was asked and how it ended, never result data.
//!
//! Every record is bounded and is exactly one line: strings are kept up to
//! [`MAX_RECORDED_TEXT_BYTES`] (longer ones as a prefix, their length and their SHA-256), the
//! arguments as a whole up to [`MAX_RECORDED_ARGUMENTS_BYTES`], and the line terminators
//! serde_json leaves raw (U+0085, U+2028, U+2029) are escaped.
//!
//! **No agent can remove a record of its own session.** The log is kept in generations: `PATH`
//! is rotated to `PATH.1` (and `PATH.1` to `PATH.2`, …) when a record would take it past
//! `--audit-max-bytes`, and the oldest generations go once there are more than
//! `--audit-generations` — but only a generation no running server holds. Each server holds a
//! shared lock (`flock`) on the file its first record went to, for as long as it runs (the kernel
//! drops it when the process ends, however it ends); a server's records are all in that file or
//! newer ones, and generations go oldest first, so a locked one stops the removal. When nothing
//! may go, the log grows past its cap (with a warning on stderr), or under `--audit-required`
//! the tool call is not answered. And every record but a tool call's answer costs the session
//! time in proportion to its bytes (past a burst): the transport reads no line, and a refused
//! call is not answered, until that time has passed, so a flood grows the log slowly.
//! docs/ARCHITECTURE.md ("The audit trail") has the design and its limits.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::calendar::civil_from_days;
use crate::error::ErrorKind;
use crate::outcome::Status;

pub use crate::session::event;

/// Longest string a record keeps whole, in bytes as written (JSON-escaped). A longer one is
/// recorded as `{"truncated": true, "prefix": …, "bytes": …, "sha256": …}`: its first bytes up
/// to this bound (on a character boundary), its length in bytes and the SHA-256 of all of it.
pub const MAX_RECORDED_TEXT_BYTES: usize = 4096;
/// Longest argument name (object key) or tool name a record keeps whole, in bytes.
pub const MAX_RECORDED_NAME_BYTES: usize = 256;
/// Most bytes a record's `arguments` take as written; beyond, the whole object is recorded as a
/// prefix, its length and its SHA-256 (so a record is under 10 KB whatever the call).
pub const MAX_RECORDED_ARGUMENTS_BYTES: usize = 8192;
/// Default `--audit-max-bytes`: a generation is rotated before it grows past 100 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 100 * 1024 * 1024;
/// Default `--audit-generations`: `PATH` and nine rotated files, about 1 GiB at the default size.
pub const DEFAULT_GENERATIONS: u32 = 10;
/// Fewest generations: the current file and one rotated (with one, a rotation would have to
/// remove the file the session just filled).
pub const MIN_GENERATIONS: u32 = 2;
/// What a charged record costs the session: one second per this many bytes, past the burst.
/// A refused call's record is about 4 KB at most, so a flood is answered some 16 times a second.
pub const CHARGE_BYTES_PER_SECOND: u64 = 64 * 1024;
/// Bytes of charged records a session may write before it waits (at [`CHARGE_BYTES_PER_SECOND`],
/// four seconds' worth): an agent's ordinary mistakes never wait.
pub const CHARGE_BURST_BYTES: u64 = 256 * 1024;

/// The `[audit]` section of the configuration, plus the `--audit-*` flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuditSettings {
    /// Where to append the log; no log without it.
    #[serde(default)]
    pub log: Option<PathBuf>,
    /// Record the SHA-256 of the SQL instead of the SQL.
    #[serde(default)]
    pub redact_sql: bool,
    /// Fail a call closed when its line cannot be written.
    #[serde(default)]
    pub required: bool,
    /// Rotate the file to `PATH.1` before it grows past this many bytes
    /// (default [`DEFAULT_MAX_BYTES`]).
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// Keep this many generations (`PATH`, `PATH.1`, …) beyond which the oldest are removed,
    /// unless a running server holds them (default [`DEFAULT_GENERATIONS`], at least
    /// [`MIN_GENERATIONS`]).
    #[serde(default)]
    pub generations: Option<u32>,
}

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    state: Mutex<LogState>,
    redact_sql: bool,
    required: bool,
    max_bytes: u64,
    generations: u32,
    /// Only a regular file is rotated (not `/dev/full`, a FIFO or a terminal).
    rotates: bool,
    /// When the session's charged records are paid for (a GCRA's theoretical arrival time).
    paid_until: Mutex<Instant>,
}

/// The files of an open log.
#[derive(Debug)]
struct LogState {
    /// Where records go now.
    file: File,
    /// The file this server's first record went to, share-locked while the process lives: no
    /// server removes it, nor (generations going oldest first) any newer one.
    anchor: Option<File>,
    /// Generations on disk at the last count, `PATH` included.
    kept: u32,
    /// More generations than the cap are kept because running servers hold them.
    over_cap: bool,
}

/// The log's generations, for `server_info` and stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct AuditStats {
    /// Generations on disk (`PATH`, `PATH.1`, …) at the last count.
    pub generations_kept: u32,
    /// `--audit-generations`: beyond it, the oldest go unless a running server holds them.
    pub generations_cap: u32,
    /// `--audit-max-bytes`: each generation is rotated before it passes this.
    pub max_bytes_per_generation: u64,
    /// Whether more generations than the cap are kept because running servers hold them.
    pub over_cap: bool,
}

/// What became of a request, as the log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditStatus {
    /// A tool call's envelope status.
    Tool(Status),
    /// A request other than a tool call, as it arrived.
    Received,
    /// A protocol-level failure (answered with a JSON-RPC error, or not at all).
    ProtocolError,
}

impl AuditStatus {
    /// Its name in the log: a tool call's status as the envelope says it.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditStatus::Tool(status) => status.as_str(),
            AuditStatus::Received => "received",
            AuditStatus::ProtocolError => "error",
        }
    }
}

/// Why a request failed, as the log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuditErrorKind {
    /// A tool's error kind (the registry's).
    Registry(ErrorKind),
    /// A JSON-RPC error for a protocol-level failure (`parse_error`, `invalid_request`,
    /// `invalid_params`, …).
    JsonRpc(&'static str),
}

impl AuditErrorKind {
    /// Its name in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            AuditErrorKind::Registry(kind) => kind.as_str(),
            AuditErrorKind::JsonRpc(name) => name,
        }
    }
}

/// What one request did, as the log records it.
#[derive(Debug, Clone)]
pub struct AuditEntry<'a> {
    /// What the record is about: one of [`event`].
    pub event: &'a str,
    /// Tool name, for tool calls (bounded when recorded: an unknown tool's name is the client's).
    pub tool: Option<&'a str>,
    /// The call's arguments as the client sent them (bounded when recorded).
    pub arguments: Option<&'a Map<String, Value>>,
    /// The raw line, for a line the transport could not take as a request (bounded when
    /// recorded).
    pub line: Option<&'a [u8]>,
    /// The JSON-RPC error code the request was answered with, for protocol-level errors.
    pub jsonrpc_code: Option<i64>,
    /// What became of it.
    pub status: AuditStatus,
    /// Why it failed, if it did.
    pub error_kind: Option<AuditErrorKind>,
    /// Rows returned to the agent, for row-returning tools.
    pub rows: Option<u64>,
    /// Bytes of the reply sent to the agent.
    pub bytes: usize,
    /// Wall-clock time of the call.
    pub duration_ms: f64,
}

impl<'a> AuditEntry<'a> {
    /// A request other than a tool call, as it arrived (`line`, bounded when recorded).
    pub fn request(line: &'a [u8]) -> AuditEntry<'a> {
        AuditEntry {
            event: event::REQUEST,
            tool: None,
            arguments: None,
            line: Some(line),
            jsonrpc_code: None,
            status: AuditStatus::Received,
            error_kind: None,
            rows: None,
            bytes: 0,
            duration_ms: 0.0,
        }
    }

    /// A protocol-level failure: `event` for `line`, answered with `jsonrpc_code` (if at all) in
    /// a reply of `bytes`.
    pub fn protocol(
        event: &'a str,
        line: &'a [u8],
        jsonrpc_code: Option<i64>,
        error_kind: &'static str,
        bytes: usize,
    ) -> AuditEntry<'a> {
        AuditEntry {
            event,
            tool: None,
            arguments: None,
            line: Some(line),
            jsonrpc_code,
            status: AuditStatus::ProtocolError,
            error_kind: Some(AuditErrorKind::JsonRpc(error_kind)),
            rows: None,
            bytes,
            duration_ms: 0.0,
        }
    }
}

impl AuditLog {
    /// Open (creating with mode 0600) `path` for appending, rotated at [`DEFAULT_MAX_BYTES`].
    ///
    /// The file a session's first record goes to is share-locked for the life of the process: it
    /// is never removed while the session runs (see the module's documentation).
    pub fn open(path: &Path, redact_sql: bool, required: bool) -> Result<AuditLog, AuditError> {
        let file = open_append(path)?;
        let rotates = file.metadata().is_ok_and(|m| m.is_file());
        let kept = if rotates { 1 + rotated_count(path) } else { 1 };
        Ok(AuditLog {
            path: path.to_path_buf(),
            state: Mutex::new(LogState {
                file,
                anchor: None,
                kept,
                over_cap: false,
            }),
            redact_sql,
            required,
            max_bytes: DEFAULT_MAX_BYTES,
            generations: DEFAULT_GENERATIONS,
            rotates,
            paid_until: Mutex::new(Instant::now()),
        })
    }

    /// Rotate at `max_bytes` instead (at least 1: a record larger than the cap gets a file of
    /// its own, never split or dropped).
    pub fn with_max_bytes(mut self, max_bytes: u64) -> AuditLog {
        self.max_bytes = max_bytes.max(1);
        self
    }

    /// Keep `generations` instead (at least [`MIN_GENERATIONS`]).
    pub fn with_generations(mut self, generations: u32) -> AuditLog {
        self.generations = generations.max(MIN_GENERATIONS);
        self
    }

    /// The generations now.
    pub fn stats(&self) -> AuditStats {
        let state = self.lock_state();
        AuditStats {
            generations_kept: state.kept,
            generations_cap: self.generations,
            max_bytes_per_generation: self.max_bytes,
            over_cap: state.over_cap,
        }
    }

    /// How long the session still owes for its charged records: the transport waits this out
    /// before it reads the next line.
    pub fn pending_charge(&self) -> Duration {
        let paid_until = *self
            .paid_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        owed(paid_until, Instant::now())
    }

    /// Charge `bytes` of `entry` to the session; what it owes now.
    fn charge(&self, entry: &AuditEntry<'_>, bytes: usize) -> Duration {
        if !is_charged(entry.status) {
            return Duration::ZERO;
        }
        let now = Instant::now();
        let cost = Duration::from_secs_f64(bytes as f64 / CHARGE_BYTES_PER_SECOND as f64);
        let mut paid_until = self
            .paid_until
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *paid_until = (*paid_until).max(now) + cost;
        owed(*paid_until, now)
    }

    fn lock_state(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether a call must fail when its line cannot be written.
    pub fn required(&self) -> bool {
        self.required
    }

    /// The JSON line for `entry` (without the newline): bounded, and one line for every
    /// line-splitting tool.
    pub fn line(&self, entry: &AuditEntry<'_>) -> String {
        let arguments = entry
            .arguments
            .map(|arguments| bounded_arguments(arguments, self.redact_sql));
        let verdict = match entry.status {
            AuditStatus::Tool(Status::Refused) => "refused",
            AuditStatus::Tool(Status::Error) | AuditStatus::ProtocolError => "failed",
            AuditStatus::Tool(Status::Success | Status::Empty | Status::Partial)
            | AuditStatus::Received => "answered",
        };
        let mut record = Map::new();
        record.insert("time".into(), json!(rfc3339_utc(SystemTime::now())));
        record.insert("event".into(), json!(entry.event));
        record.insert(
            "tool".into(),
            entry
                .tool
                .map_or(Value::Null, |tool| bounded(tool, MAX_RECORDED_NAME_BYTES)),
        );
        record.insert(
            "arguments".into(),
            arguments.unwrap_or_else(|| {
                if entry.line.is_some() {
                    Value::Null
                } else {
                    json!({})
                }
            }),
        );
        if let Some(line) = entry.line {
            record.insert("line".into(), bounded_bytes(line));
        }
        if let Some(code) = entry.jsonrpc_code {
            record.insert("jsonrpc_code".into(), json!(code));
        }
        record.insert("verdict".into(), json!(verdict));
        record.insert("status".into(), json!(entry.status.as_str()));
        record.insert(
            "error_kind".into(),
            json!(entry.error_kind.map(AuditErrorKind::as_str)),
        );
        record.insert("rows".into(), json!(entry.rows));
        record.insert("bytes".into(), json!(entry.bytes));
        record.insert(
            "duration_ms".into(),
            json!((entry.duration_ms * 1000.0).round() / 1000.0),
        );
        record.insert("worker_exit".into(), json!(worker_exit(entry)));
        json_line(&Value::Object(record))
    }

    /// Append one line, rotating the file first when the line would take it past the cap; the
    /// error says why it could not be written (or rotated, under `--audit-required`). On success,
    /// how long the caller holds its answer: what the session owes for its charged records.
    pub fn record(&self, entry: &AuditEntry<'_>) -> Result<Duration, AuditError> {
        let mut line = self.line(entry);
        line.push('\n');
        let mut state = self.lock_state();
        if self.rotates {
            let size = state
                .file
                .metadata()
                .map_err(|error| AuditError::Inspect {
                    path: self.path.clone(),
                    error,
                })?
                .len();
            if size > 0 && size.saturating_add(line.len() as u64) > self.max_bytes {
                match self.rotate(&mut state, line.len() as u64) {
                    Ok(()) => {}
                    Err(error) if self.required => return Err(error),
                    // Keep the record rather than lose it: the file grows past the cap.
                    Err(error) => tracing::warn!("{error}; appending to the current file"),
                }
            }
        }
        if self.rotates && state.anchor.is_none() {
            state.anchor = Some(self.anchor(&state.file)?);
        }
        // One write of the whole line: with O_APPEND it lands after every earlier line.
        state
            .file
            .write_all(line.as_bytes())
            .and_then(|()| state.file.flush())
            .map_err(|error| AuditError::Write {
                path: self.path.clone(),
                error,
            })?;
        drop(state);
        Ok(self.charge(entry, line.len()))
    }

    /// A second descriptor of `file`, share-locked: held until the process ends, it keeps `file`
    /// (and every newer generation) from being removed by any server.
    fn anchor(&self, file: &File) -> Result<File, AuditError> {
        let anchor = file
            .try_clone()
            .and_then(|anchor| anchor.lock_shared().map(|()| anchor));
        anchor.map_err(|error| AuditError::Write {
            path: self.path.clone(),
            error,
        })
    }

    /// Make room for a line of `incoming` bytes: remove the oldest generations no running server
    /// holds (as many as needed to stay within the cap after this rotation), then shift every
    /// generation up by one and start a fresh `PATH`, mode 0600. Renames never replace a file.
    fn rotate(&self, state: &mut LogState, incoming: u64) -> Result<(), AuditError> {
        // Another server writing the same log may have rotated it: then `PATH` is a fresh file,
        // and this one goes on there.
        if !is_same_file(&state.file, &self.path) {
            state.file = open_append(&self.path)?;
            let size = state.file.metadata().map_or(0, |m| m.len());
            if size == 0 || size.saturating_add(incoming) <= self.max_bytes {
                return Ok(());
            }
        }
        let rotated = rotated_count(&self.path);
        let cap = self.generations - 1;
        let mut excess = (rotated + 1).saturating_sub(cap);
        let mut oldest = rotated;
        while excess > 0 && oldest > 0 {
            match remove_unless_held(&generation_path(&self.path, oldest)) {
                Ok(Removal::Removed) => {
                    oldest -= 1;
                    excess -= 1;
                }
                Ok(Removal::Held) => break,
                Err(error) => {
                    tracing::warn!(
                        "cannot remove the audit log's oldest generation {}: {error}",
                        generation_path(&self.path, oldest).display()
                    );
                    break;
                }
            }
        }
        if excess > 0 {
            if self.required {
                return Err(AuditError::Full {
                    path: self.path.clone(),
                    generations: oldest + 1,
                    cap: self.generations,
                });
            }
            if !state.over_cap {
                tracing::warn!(
                    "the audit log {} keeps {} generations, past its cap of {}: the oldest hold \
                     records of a running session (this one or another server's), and no record \
                     of a running session is removed",
                    self.path.display(),
                    oldest + 2,
                    self.generations
                );
            }
        }
        for index in (1..=oldest).rev() {
            rename_no_replace(
                &generation_path(&self.path, index),
                &generation_path(&self.path, index + 1),
            )
            .map_err(|error| AuditError::Rotate {
                path: generation_path(&self.path, index),
                rotated: generation_path(&self.path, index + 1),
                error,
            })?;
        }
        let first = rotated_path(&self.path);
        rename_no_replace(&self.path, &first).map_err(|error| AuditError::Rotate {
            path: self.path.clone(),
            rotated: first,
            error,
        })?;
        state.file = open_append(&self.path)?;
        state.kept = oldest + 2;
        state.over_cap = excess > 0;
        tracing::info!(
            audit_generations_kept = state.kept,
            "rotated the audit log {}",
            self.path.display()
        );
        Ok(())
    }
}

/// What a session still owes at `now` when its charged records are paid for at `paid_until`.
fn owed(paid_until: Instant, now: Instant) -> Duration {
    let burst = Duration::from_secs_f64(CHARGE_BURST_BYTES as f64 / CHARGE_BYTES_PER_SECOND as f64);
    paid_until
        .saturating_duration_since(now)
        .saturating_sub(burst)
}

/// Whether a record costs the session time: every one but the answer of a tool call, which
/// already cost the agent a worker's run.
fn is_charged(status: AuditStatus) -> bool {
    match status {
        AuditStatus::Tool(Status::Success | Status::Empty | Status::Partial) => false,
        AuditStatus::Tool(Status::Refused | Status::Error)
        | AuditStatus::Received
        | AuditStatus::ProtocolError => true,
    }
}

/// `PATH.index`: the generation `index` rotations old.
pub fn generation_path(path: &Path, index: u32) -> PathBuf {
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(format!(".{index}"));
    PathBuf::from(rotated)
}

/// How many rotated generations there are: `PATH.1`, `PATH.2`, … up to the first missing.
fn rotated_count(path: &Path) -> u32 {
    let mut count = 0;
    while std::fs::symlink_metadata(generation_path(path, count + 1)).is_ok() {
        count += 1;
    }
    count
}

/// Whether `file` is the file at `path` now.
fn is_same_file(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// What became of an old generation.
enum Removal {
    /// Removed (or already gone).
    Removed,
    /// A running server holds it: kept.
    Held,
}

/// Remove `path` unless a running server holds a lock on it; held exclusively while removed.
fn remove_unless_held(path: &Path) -> std::io::Result<Removal> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Removal::Removed),
        Err(error) => return Err(error),
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => return Ok(Removal::Held),
        Err(std::fs::TryLockError::Error(error)) => return Err(error),
    }
    match std::fs::remove_file(path) {
        Ok(()) => Ok(Removal::Removed),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Removal::Removed),
        Err(error) => Err(error),
    }
}

/// Rename `from` to `to`, failing if `to` exists (a rename would silently replace it, and with
/// it records): a hard link then an unlink, which keeps the inode (and the locks on it).
fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    // Only the log's own files move: anything else in their place is the operator's to clear.
    if !std::fs::symlink_metadata(from)?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file; move it out of the way",
        ));
    }
    match std::fs::hard_link(from, to) {
        Ok(()) => std::fs::remove_file(from),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Err(error),
        // A file system without hard links: check, then rename (a race with another server's
        // rotation is possible only there).
        Err(_) if std::fs::symlink_metadata(to).is_err() => std::fs::rename(from, to),
        Err(error) => Err(error),
    }
}

/// `PATH.1`, where a rotated log goes.
pub fn rotated_path(path: &Path) -> PathBuf {
    generation_path(path, 1)
}

fn open_append(path: &Path) -> Result<File, AuditError> {
    OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)
        .map_err(|error| AuditError::Open {
            path: path.to_path_buf(),
            error,
        })
}

/// Why a record could not be written, or the log opened; each says which file.
#[derive(Debug)]
pub enum AuditError {
    /// Opening (creating) the log failed.
    Open {
        /// The log.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Reading the log's size, to decide on rotating, failed.
    Inspect {
        /// The log.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Renaming the log to `PATH.1` failed.
    Rotate {
        /// The log.
        path: PathBuf,
        /// Where it was to go.
        rotated: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The log holds its cap of generations, and every one that would have to go holds records
    /// of a running session (under `--audit-required` only; otherwise the log grows past it).
    Full {
        /// The log.
        path: PathBuf,
        /// Generations that would be kept.
        generations: u32,
        /// `--audit-generations`.
        cap: u32,
    },
    /// Appending the line failed.
    Write {
        /// The log.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl std::fmt::Display for AuditError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AuditError::Open { path, error } => {
                write!(f, "cannot open the audit log {}: {error}", path.display())
            }
            AuditError::Inspect { path, error } => {
                write!(f, "cannot read the audit log {}: {error}", path.display())
            }
            AuditError::Rotate {
                path,
                rotated,
                error,
            } => write!(
                f,
                "cannot rotate the audit log {} to {}: {error}",
                path.display(),
                rotated.display()
            ),
            AuditError::Full {
                path,
                generations,
                cap,
            } => write!(
                f,
                "the audit log {} is full: rotating it would keep {} generations, past \
                 --audit-generations {cap}, and the oldest hold records of a running session, \
                 which are never removed",
                path.display(),
                generations + 1
            ),
            AuditError::Write { path, error } => {
                write!(f, "cannot write the audit log {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for AuditError {}

/// `value` as one line of JSON: serde_json's output with U+0085, U+2028 and U+2029 escaped
/// (serde_json leaves them raw, and JavaScript, Python's `splitlines` and others end a line at
/// them). They can only occur inside strings, where `\uXXXX` means the same character.
pub fn json_line(value: &Value) -> String {
    escape_line_terminators(value.to_string())
}

/// `json` with every raw U+0085, U+2028 and U+2029 written as its `\uXXXX` escape.
pub fn escape_line_terminators(json: String) -> String {
    if !json.contains(['\u{85}', '\u{2028}', '\u{2029}']) {
        return json;
    }
    let mut escaped = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        match c {
            '\u{85}' => escaped.push_str("\\u0085"),
            '\u{2028}' => escaped.push_str("\\u2028"),
            '\u{2029}' => escaped.push_str("\\u2029"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// Bytes `c` takes inside a JSON string of the log (escapes included).
fn escaped_len(c: char) -> usize {
    match c {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        '\u{0}'..='\u{1f}' | '\u{85}' | '\u{2028}' | '\u{2029}' => 6,
        other => other.len_utf8(),
    }
}

/// Bytes `text` takes inside a JSON string of the log.
fn escaped_text_len(text: &str) -> usize {
    text.chars().map(escaped_len).sum()
}

/// The longest prefix of `text`, ending on a character boundary, that takes at most `max` bytes
/// inside a JSON string of the log.
pub fn escaped_prefix(text: &str, max: usize) -> &str {
    let mut used = 0;
    for (index, c) in text.char_indices() {
        used += escaped_len(c);
        if used > max {
            return &text[..index];
        }
    }
    text
}

/// `text` as recorded: itself when it takes at most `max` bytes in the log, else its prefix,
/// length and SHA-256.
fn bounded(text: &str, max: usize) -> Value {
    if text.len() <= max / 6 || escaped_text_len(text) <= max {
        return Value::String(text.to_string());
    }
    json!({
        "truncated": true,
        "prefix": escaped_prefix(text, max),
        "bytes": text.len(),
        "sha256": sha256_hex(text),
    })
}

/// A string argument as recorded (see [`MAX_RECORDED_TEXT_BYTES`]).
pub fn bounded_text(text: &str) -> Value {
    bounded(text, MAX_RECORDED_TEXT_BYTES)
}

/// An object key as recorded: itself when short, else its prefix with its length and SHA-256
/// (a key must stay a string).
fn bounded_key(key: &str) -> String {
    if key.len() <= MAX_RECORDED_NAME_BYTES / 6 || escaped_text_len(key) <= MAX_RECORDED_NAME_BYTES
    {
        return key.to_string();
    }
    format!(
        "{}…[truncated: {} bytes, sha256 {}]",
        escaped_prefix(key, MAX_RECORDED_NAME_BYTES),
        key.len(),
        sha256_hex(key)
    )
}

/// A raw line as recorded: like [`bounded_text`], with invalid UTF-8 shown as U+FFFD in the
/// prefix and the length and SHA-256 those of the raw bytes.
pub fn bounded_bytes(line: &[u8]) -> Value {
    match std::str::from_utf8(line) {
        Ok(text) => bounded_text(text),
        Err(_) => {
            let head = &line[..line.len().min(MAX_RECORDED_TEXT_BYTES)];
            let lossy = String::from_utf8_lossy(head);
            json!({
                "truncated": line.len() > head.len(),
                "utf8": false,
                "prefix": escaped_prefix(&lossy, MAX_RECORDED_TEXT_BYTES),
                "bytes": line.len(),
                "sha256": sha256_hex_bytes(line),
            })
        }
    }
}

/// `value` with every string and key bounded.
fn bounded_value(value: &Value) -> Value {
    match value {
        Value::String(text) => bounded_text(text),
        Value::Array(items) => Value::Array(items.iter().map(bounded_value).collect()),
        Value::Object(map) => Value::Object(bounded_map(map, false)),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

/// `map` with every string and key bounded; with `redact_sql`, a string `sql` is replaced by
/// `sql_sha256`, the SHA-256 of all of it.
fn bounded_map(map: &Map<String, Value>, redact_sql: bool) -> Map<String, Value> {
    map.iter()
        .map(|(key, value)| match value {
            Value::String(sql) if redact_sql && key == "sql" => {
                ("sql_sha256".to_string(), Value::String(sha256_hex(sql)))
            }
            _ => (bounded_key(key), bounded_value(value)),
        })
        .collect()
}

/// The arguments as recorded: every string and key bounded (the SQL replaced by its SHA-256
/// with `redact_sql`), and the whole at most [`MAX_RECORDED_ARGUMENTS_BYTES`] as written (else
/// a prefix of it, the length and the SHA-256 of the arguments as sent).
pub fn bounded_arguments(arguments: &Map<String, Value>, redact_sql: bool) -> Value {
    let bounded = Value::Object(bounded_map(arguments, redact_sql));
    let written = json_line(&bounded);
    if written.len() <= MAX_RECORDED_ARGUMENTS_BYTES {
        return bounded;
    }
    let sent = serde_json::to_string(arguments).unwrap_or_default();
    json!({
        "truncated": true,
        "prefix": escaped_prefix(&written, MAX_RECORDED_TEXT_BYTES),
        "bytes": sent.len(),
        "sha256": sha256_hex(&sent),
    })
}

/// How the call's worker ended, as far as the reply tells: killed at the deadline or on cancel,
/// stopped at a cap, or a normal exit. The pool reaps workers itself and does not report codes.
fn worker_exit(entry: &AuditEntry<'_>) -> &'static str {
    if entry.event != event::TOOL_CALL {
        return "none";
    }
    match entry.error_kind {
        Some(AuditErrorKind::Registry(kind)) => match kind {
            ErrorKind::Timeout => "killed_timeout",
            ErrorKind::Cancelled => "killed_cancelled",
            ErrorKind::ResourceLimit => "stopped_resource_limit",
            ErrorKind::InternalError => "abnormal",
            ErrorKind::PolicyBlocked | ErrorKind::MultipleStatements => "none",
            ErrorKind::SyntaxError
            | ErrorKind::UnknownName
            | ErrorKind::InvalidArgument
            | ErrorKind::Busy
            | ErrorKind::DatabaseNotFound
            | ErrorKind::DatabaseLocked
            | ErrorKind::DatabaseError
            | ErrorKind::SandboxUnavailable => "normal",
        },
        Some(AuditErrorKind::JsonRpc(_)) | None => "normal",
    }
}

/// Lower-case hex SHA-256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    sha256_hex_bytes(text.as_bytes())
}

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256_hex_bytes(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `time` as RFC 3339 in UTC with milliseconds, e.g. `2026-11-22T06:41:42.123Z`.
pub fn rfc3339_utc(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_millis()
    )
}

#[cfg(test)]
mod tests;
