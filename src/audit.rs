//! The audit log: one JSON line per request, appended by the parent.
//!
//! The file is opened here, in the parent, append-only with mode 0600. Rust opens files with
//! `O_CLOEXEC`, and workers are spawned with only their pipes, so no worker holds this
//! descriptor. A line records what was asked and how it ended, never result data.
//!
//! Every record is bounded and is exactly one line: strings are kept up to
//! [`MAX_RECORDED_TEXT_BYTES`] (longer ones as a prefix, their length and their SHA-256), the
//! arguments as a whole up to [`MAX_RECORDED_ARGUMENTS_BYTES`], and the line terminators
//! serde_json leaves raw (U+0085, U+2028, U+2029) are escaped. The file is rotated to `PATH.1`
//! when a record would take it past `--audit-max-bytes`.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::calendar::civil_from_days;
use crate::error::ErrorKind;
use crate::mcp::envelope::Status;

/// Longest string a record keeps whole, in bytes as written (JSON-escaped). A longer one is
/// recorded as `{"truncated": true, "prefix": …, "bytes": …, "sha256": …}`: its first bytes up
/// to this bound (on a character boundary), its length in bytes and the SHA-256 of all of it.
pub const MAX_RECORDED_TEXT_BYTES: usize = 4096;
/// Longest argument name (object key) or tool name a record keeps whole, in bytes.
pub const MAX_RECORDED_NAME_BYTES: usize = 256;
/// Most bytes a record's `arguments` take as written; beyond, the whole object is recorded as a
/// prefix, its length and its SHA-256 (so a record is under 10 KB whatever the call).
pub const MAX_RECORDED_ARGUMENTS_BYTES: usize = 8192;
/// Default `--audit-max-bytes`: the file is rotated before it grows past 100 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 100 * 1024 * 1024;

/// What a record is about (its `event` field).
pub mod event {
    /// A call of one of the tools.
    pub const TOOL_CALL: &str = "tool_call";
    /// A `tools/call` naming no tool of this server.
    pub const UNKNOWN_TOOL: &str = "unknown_tool";
    /// A line that is not JSON (answered with a JSON-RPC parse error, -32700).
    pub const UNPARSABLE_LINE: &str = "unparsable_line";
    /// A line longer than the transport accepts (answered with -32600).
    pub const OVERSIZED_LINE: &str = "oversized_line";
    /// JSON that is not a valid JSON-RPC request (answered with -32600).
    pub const INVALID_REQUEST: &str = "invalid_request";
    /// JSON that is not a valid notification (notifications are never answered).
    pub const INVALID_NOTIFICATION: &str = "invalid_notification";
    /// A request of a method this server does not have (answered with -32601).
    pub const UNKNOWN_METHOD: &str = "unknown_method";
    /// Any other request (`initialize`, `tools/list`, `resources/read`, `ping`, …), recorded as
    /// it arrives; tool calls have their own record (`tool_call`) with the outcome.
    pub const REQUEST: &str = "request";
}

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
}

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<File>,
    redact_sql: bool,
    required: bool,
    max_bytes: u64,
    /// Only a regular file is rotated (not `/dev/full`, a FIFO or a terminal).
    rotates: bool,
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
        let file = open_append(path)?;
        let rotates = file.metadata().is_ok_and(|m| m.is_file());
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            redact_sql,
            required,
            max_bytes: DEFAULT_MAX_BYTES,
            rotates,
        })
    }

    /// Rotate at `max_bytes` instead (at least 1: a record larger than the cap gets a file of
    /// its own, never split or dropped).
    pub fn with_max_bytes(mut self, max_bytes: u64) -> AuditLog {
        self.max_bytes = max_bytes.max(1);
        self
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
    /// error says why it could not be written (or rotated, under `--audit-required`).
    pub fn record(&self, entry: &AuditEntry<'_>) -> Result<(), AuditError> {
        let mut line = self.line(entry);
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if self.rotates {
            let size = file
                .metadata()
                .map_err(|error| AuditError::Inspect {
                    path: self.path.clone(),
                    error,
                })?
                .len();
            if size > 0 && size.saturating_add(line.len() as u64) > self.max_bytes {
                match self.rotate() {
                    Ok(fresh) => *file = fresh,
                    Err(error) if self.required => return Err(error),
                    // Keep the record rather than lose it: the file grows past the cap.
                    Err(error) => tracing::warn!("{error}; appending to the current file"),
                }
            }
        }
        // One write of the whole line: with O_APPEND it lands after every earlier line.
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|error| AuditError::Write {
                path: self.path.clone(),
                error,
            })
    }

    /// Rename the file to `PATH.1` (replacing an older one) and open a fresh `PATH`, mode 0600.
    fn rotate(&self) -> Result<File, AuditError> {
        let rotated = rotated_path(&self.path);
        std::fs::rename(&self.path, &rotated).map_err(|error| AuditError::Rotate {
            path: self.path.clone(),
            rotated,
            error,
        })?;
        open_append(&self.path)
    }
}

/// `PATH.1`, where a rotated log goes.
pub fn rotated_path(path: &Path) -> PathBuf {
    let mut rotated = path.as_os_str().to_owned();
    rotated.push(".1");
    PathBuf::from(rotated)
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
