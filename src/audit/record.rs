//! One record: what a request did, as one bounded line of JSON.
//!
//! Every record is exactly one line of at most [`MAX_RECORD_BYTES`] with its newline: strings are
//! kept up to [`MAX_RECORDED_TEXT_BYTES`] (longer ones as a prefix, their length and their
//! SHA-256), the arguments as a whole up to [`MAX_RECORDED_ARGUMENTS_BYTES`], and the line
//! terminators serde_json leaves raw (U+0085, U+2028, U+2029) are escaped. A record says what was
//! asked and how it ended, never result data.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::{AuditEntry, AuditErrorKind, AuditStatus, event};
use crate::calendar::civil_from_days;
use crate::outcome::Status;
use duckgate_validate::error::ErrorKind;

/// Longest string a record keeps whole, in bytes as written (JSON-escaped). A longer one is
/// recorded as `{"truncated": true, "prefix": …, "bytes": …, "sha256": …}`: its first bytes up
/// to this bound (on a character boundary), its length in bytes and the SHA-256 of all of it.
pub const MAX_RECORDED_TEXT_BYTES: usize = 4096;
/// Longest argument name (object key) or tool name a record keeps whole, in bytes.
pub const MAX_RECORDED_NAME_BYTES: usize = 256;
/// Most bytes a record's `arguments` take as written; beyond, the whole object is recorded as a
/// prefix, its length and its SHA-256.
pub const MAX_RECORDED_ARGUMENTS_BYTES: usize = 8192;
/// Most bytes one record takes in the log, its newline included, whatever the request: what a
/// tool call is charged before it runs (`super::charge`).
pub const MAX_RECORD_BYTES: usize = 10 * 1024;

/// The JSON line for `entry` (without the newline): bounded (at most [`MAX_RECORD_BYTES`] with
/// its newline), and one line for every line-splitting tool.
pub(super) fn line(entry: &AuditEntry<'_>, redact_sql: bool) -> String {
    let arguments = entry
        .arguments
        .map(|arguments| bounded_arguments(arguments, redact_sql));
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
            let head = line.get(..MAX_RECORDED_TEXT_BYTES).unwrap_or(line);
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
