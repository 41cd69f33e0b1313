//! The audit log: one JSON line per request, appended by the parent.
//!
//! The file is opened here, in the parent, append-only with mode 0600. Rust opens files with
//! `O_CLOEXEC`, and workers are spawned with only their pipes, so no worker holds this
//! descriptor. Three concerns, one module each:
//!
//! - [`record`]: one request as one bounded line of JSON (at most [`MAX_RECORD_BYTES`]), never
//!   result data.
//! - [`rotation`]: the generations `PATH`, `PATH.1`, …; which of them running servers hold;
//!   rotation. With one server the log never keeps more than `--audit-generations` files of
//!   `--audit-max-bytes`; a running server's newest `--audit-generations − 1` generations are
//!   never removed, so no other session can push its records out, and its own records go only
//!   after it has written into that many newer generations.
//! - [`charge`]: every record costs its session time in proportion to its bytes past a burst,
//!   tool calls charged as their line is read: a session writes at most
//!   `CHARGE_BURST_BYTES + CHARGE_BYTES_PER_SECOND × t + MAX_RECORD_BYTES` bytes in `t` seconds.
//!
//! At the cap nothing is refused: the cap is kept by removing the oldest generation nobody
//! holds, so `--audit-required` fails a call closed only when its record cannot be written, and
//! no amount of calls stops the server answering. docs/ARCHITECTURE.md ("The audit trail") has
//! the design, the bounds and their limits.

mod charge;
mod record;
mod rotation;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::outcome::Status;
use duckgate_validate::error::ErrorKind;

pub use charge::{CHARGE_BURST_BYTES, CHARGE_BYTES_PER_SECOND};
pub use record::{
    MAX_RECORD_BYTES, MAX_RECORDED_ARGUMENTS_BYTES, MAX_RECORDED_NAME_BYTES,
    MAX_RECORDED_TEXT_BYTES, bounded_arguments, bounded_bytes, bounded_text,
    escape_line_terminators, escaped_prefix, json_line, rfc3339_utc, sha256_hex, sha256_hex_bytes,
};
pub use rotation::{generation_path, rotated_path};

pub use crate::session::event;

/// Default `--audit-max-bytes`: a generation is rotated before it grows past 100 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 100 * 1024 * 1024;
/// Default `--audit-generations`: `PATH` and nine rotated files, about 1 GiB at the default size.
pub const DEFAULT_GENERATIONS: u32 = 10;
/// Fewest generations: the current file and one rotated (with one, a rotation would have to
/// remove the file the session just filled).
pub const MIN_GENERATIONS: u32 = 2;

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
    /// Fail a call closed when its line cannot be written (never for the cap: see
    /// [`AuditLog`]).
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
    generations_on_disk: Mutex<rotation::Generations>,
    redact_sql: bool,
    required: bool,
    max_bytes: u64,
    generations: u32,
    /// Only a regular file is rotated (not `/dev/full`, a FIFO or a terminal).
    rotates: bool,
    charge: charge::Charge,
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
    /// Whether more generations than the cap are kept because other running servers hold them
    /// (a server alone on its log never passes the cap).
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
    pub fn open(path: &Path, redact_sql: bool, required: bool) -> Result<AuditLog, AuditError> {
        let generations_on_disk = rotation::Generations::open(path)?;
        let rotates = generations_on_disk
            .file
            .metadata()
            .is_ok_and(|m| m.is_file());
        Ok(AuditLog {
            path: path.to_path_buf(),
            generations_on_disk: Mutex::new(generations_on_disk),
            redact_sql,
            required,
            max_bytes: DEFAULT_MAX_BYTES,
            generations: DEFAULT_GENERATIONS,
            rotates,
            charge: charge::Charge::new(),
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
        let files = self.files();
        AuditStats {
            generations_kept: if self.rotates { files.kept } else { 1 },
            generations_cap: self.generations,
            max_bytes_per_generation: self.max_bytes,
            over_cap: files.over_cap,
        }
    }

    /// How long the session still owes for its records: the transport waits this out before it
    /// reads the next line.
    pub fn pending_charge(&self) -> Duration {
        self.charge.pending()
    }

    /// Charge a tool call whose line was just read the most its record can take
    /// ([`MAX_RECORD_BYTES`]); its record, when written, settles the difference. What the
    /// session owes now.
    pub fn charge_tool_call(&self) -> Duration {
        self.charge.reserve_call()
    }

    fn files(&self) -> std::sync::MutexGuard<'_, rotation::Generations> {
        self.generations_on_disk
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
        record::line(entry, self.redact_sql)
    }

    /// Append one line, rotating the file first when the line would take it past the cap; the
    /// error says why it could not be written (or rotated, under `--audit-required`). On success,
    /// how long the caller holds its answer: what the session owes for its records.
    pub fn record(&self, entry: &AuditEntry<'_>) -> Result<Duration, AuditError> {
        let mut line = self.line(entry);
        line.push('\n');
        let mut files = self.files();
        if self.rotates {
            let size = files
                .file
                .metadata()
                .map_err(|error| AuditError::Inspect {
                    path: self.path.clone(),
                    error,
                })?
                .len();
            if size > 0 && size.saturating_add(line.len() as u64) > self.max_bytes {
                let was_over_cap = files.over_cap;
                match files.rotate(line.len() as u64, self.max_bytes, self.generations) {
                    Ok(()) => {
                        if files.over_cap && !was_over_cap {
                            tracing::warn!(
                                "the audit log {} keeps {} generations, past its cap of {}: the \
                                 oldest hold records of other running servers, which are never \
                                 removed",
                                self.path.display(),
                                files.kept,
                                self.generations
                            );
                        }
                        tracing::info!(
                            audit_generations_kept = files.kept,
                            "rotated the audit log {}",
                            self.path.display()
                        );
                    }
                    Err(error) if self.required => return Err(error),
                    // Keep the record rather than lose it: the file grows past the cap.
                    Err(error) => tracing::warn!("{error}; appending to the current file"),
                }
            }
            files
                .hold_current(self.generations - 1)
                .map_err(|error| AuditError::Hold {
                    path: self.path.clone(),
                    error,
                })?;
        }
        // One write of the whole line: with O_APPEND it lands after every earlier line.
        files
            .file
            .write_all(line.as_bytes())
            .and_then(|()| files.file.flush())
            .map_err(|error| AuditError::Write {
                path: self.path.clone(),
                error,
            })?;
        drop(files);
        let settles_call = entry.event == event::TOOL_CALL || entry.event == event::UNKNOWN_TOOL;
        Ok(self.charge.charge(line.len() as u64, settles_call))
    }
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
    /// Taking a shared lock on the file records now go to failed (without it, other servers
    /// could remove it).
    Hold {
        /// The log.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
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
            AuditError::Hold { path, error } => write!(
                f,
                "cannot lock the audit log {} against removal: {error}",
                path.display()
            ),
            AuditError::Write { path, error } => {
                write!(f, "cannot write the audit log {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for AuditError {}

#[cfg(test)]
mod tests;
