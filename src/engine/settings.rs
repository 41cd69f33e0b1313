//! The hardening as DuckDB reports it back, for the posture: each security-relevant setting,
//! and whether the local file system is really off.

use super::Engine;
use super::errors;
use super::own_sql::{Cache, OwnSql};
use super::statement::{Sql, prepare_sql};

/// The settings read back for the posture report, in report order.
const REPORTED_SETTINGS: [&str; 12] = [
    "enable_external_access",
    "allowed_paths",
    "allowed_directories",
    "autoload_known_extensions",
    "autoinstall_known_extensions",
    "allow_community_extensions",
    "allow_unsigned_extensions",
    "lock_configuration",
    "memory_limit",
    "threads",
    "temp_directory",
    "max_temp_directory_size",
];
impl Engine {
    /// The security-relevant settings as DuckDB reports them now, and whether DuckDB's local
    /// file system is switched off (`local_file_system`), found by trying to use it, because
    /// DuckDB reads `disabled_filesystems` back as empty even when it is set.
    pub fn settings_readback(&self) -> Vec<(String, String)> {
        // One scan of duckdb_settings() for all names: it is in every worker's start-up path.
        // The names travel as one bound parameter (no setting's name holds a comma).
        let names = REPORTED_SETTINGS.join(",");
        let reported = OwnSql::fixed(
            "SELECT name, coalesce(value, 'NULL') FROM duckdb_settings() \
             WHERE list_contains(string_split(?, ','), name)",
        );
        let mut found: std::collections::HashMap<String, String> = std::collections::HashMap::new();
        let read =
            prepare_sql(&self.conn, Sql::Own(&reported), Cache::Fresh).and_then(|mut stmt| {
                let rows = stmt.query_map([&names], |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
                })?;
                rows.collect::<Result<Vec<_>, _>>()
            });
        let error = match read {
            Ok(rows) => {
                found.extend(rows);
                None
            }
            Err(e) => Some(e.to_string()),
        };
        let mut settings: Vec<(String, String)> = REPORTED_SETTINGS
            .iter()
            .map(|name| {
                let value = match (found.get(*name), &error) {
                    (Some(v), _) => v.clone(),
                    (None, Some(e)) => format!("<unreadable: {e}>"),
                    (None, None) => "<not reported by DuckDB>".to_string(),
                };
                (name.to_string(), value)
            })
            .collect();
        settings.push(("local_file_system".into(), self.local_file_system_state()));
        settings
    }

    fn local_file_system_state(&self) -> String {
        let read_a_file =
            OwnSql::fixed("SELECT count(*) FROM read_blob('/nonexistent/duckgate-posture-probe')");
        let probe = prepare_sql(&self.conn, Sql::Own(&read_a_file), Cache::Fresh)
            .and_then(|mut stmt| stmt.query_row([], |r| r.get::<_, i64>(0)));
        match probe {
            Ok(_) => "enabled".into(),
            Err(e) => {
                let message = errors::duckdb_message(&e);
                if message.contains("File system LocalFileSystem has been disabled") {
                    "disabled".into()
                } else if message.contains("disabled by configuration") {
                    "enabled (file access denied by enable_external_access=false)".into()
                } else {
                    format!("enabled (probe: {})", message.lines().next().unwrap_or(""))
                }
            }
        }
    }
}
