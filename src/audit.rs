//! The audit log: one JSON line per tool call, appended by the parent (issue 6).
//!
//! The file is opened here, in the parent, append-only with mode 0600. Rust opens files with
//! `O_CLOEXEC`, and workers are spawned with only their pipes, so no worker holds this
//! descriptor. A line records what was asked and how it ended, never result data.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

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
}

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    file: Mutex<File>,
    redact_sql: bool,
    required: bool,
}

/// What one tool call did, as the log records it.
#[derive(Debug, Clone)]
pub struct AuditEntry<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// The call's arguments as the client sent them.
    pub arguments: Option<&'a Map<String, Value>>,
    /// Envelope status (`success`, `empty`, `partial`, `error`, `refused`).
    pub status: &'a str,
    /// Registry error kind, if the call failed.
    pub error_kind: Option<String>,
    /// Rows returned to the agent, for row-returning tools.
    pub rows: Option<u64>,
    /// Bytes of the reply sent to the agent.
    pub bytes: usize,
    /// Wall-clock time of the call.
    pub duration_ms: f64,
}

impl AuditLog {
    /// Open (creating with mode 0600) `path` for appending.
    pub fn open(path: &Path, redact_sql: bool, required: bool) -> Result<AuditLog, String> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)
            .map_err(|e| format!("cannot open the audit log {}: {e}", path.display()))?;
        Ok(AuditLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            redact_sql,
            required,
        })
    }

    /// Whether a call must fail when its line cannot be written.
    pub fn required(&self) -> bool {
        self.required
    }

    /// The JSON line for `entry` (without the newline).
    pub fn line(&self, entry: &AuditEntry<'_>) -> String {
        let mut arguments = entry.arguments.cloned().unwrap_or_default();
        if self.redact_sql
            && let Some(Value::String(sql)) = arguments.remove("sql")
        {
            arguments.insert("sql_sha256".into(), Value::String(sha256_hex(&sql)));
        }
        let verdict = match entry.status {
            "refused" => "refused",
            "error" => "failed",
            _ => "answered",
        };
        json!({
            "time": rfc3339_utc(SystemTime::now()),
            "tool": entry.tool,
            "arguments": arguments,
            "verdict": verdict,
            "status": entry.status,
            "error_kind": entry.error_kind,
            "rows": entry.rows,
            "bytes": entry.bytes,
            "duration_ms": (entry.duration_ms * 1000.0).round() / 1000.0,
            "worker_exit": worker_exit(entry),
        })
        .to_string()
    }

    /// Append one line; the error says why it could not be written.
    pub fn record(&self, entry: &AuditEntry<'_>) -> Result<(), String> {
        let mut line = self.line(entry);
        line.push('\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // One write of the whole line: with O_APPEND it lands after every earlier line.
        file.write_all(line.as_bytes())
            .and_then(|()| file.flush())
            .map_err(|e| format!("cannot write the audit log {}: {e}", self.path.display()))
    }
}

/// How the call's worker ended, as far as the reply tells: killed at the deadline or on cancel,
/// stopped at a cap, or a normal exit. The pool reaps workers itself and does not report codes.
fn worker_exit(entry: &AuditEntry<'_>) -> &'static str {
    match entry.error_kind.as_deref() {
        Some("timeout") => "killed_timeout",
        Some("cancelled") => "killed_cancelled",
        Some("resource_limit") => "stopped_resource_limit",
        Some("internal_error") => "abnormal",
        Some("policy_blocked" | "multiple_statements") => "none",
        Some(_) | None => "normal",
    }
}

/// Lower-case hex SHA-256 of `text`.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
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

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_format_as_rfc3339_utc() {
        assert_eq!(rfc3339_utc(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day in a century leap year) 12:34:56.789.
        let t = UNIX_EPOCH + Duration::from_millis(951_827_696_789);
        assert_eq!(rfc3339_utc(t), "2000-02-29T12:34:56.789Z");
        let t = UNIX_EPOCH + Duration::from_secs(1_795_329_702);
        assert_eq!(rfc3339_utc(t), "2026-11-22T06:41:42.000Z");
    }

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
