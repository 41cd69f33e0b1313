//! Under privacy rules, the catalog DuckDB's binder sees: one in which hidden objects do not
//! exist.
//!
//! Why. A hidden table or column must be indistinguishable from a name that does not exist:
//! in errors, result column names and types (a whole row `t` is a STRUCT of every column),
//! `DESCRIBE`, plans that read nothing (`LIMIT 0`), and timing. Refusing queries that *mention*
//! a hidden name cannot get there: a refusal for `cgm_reading` but not for `cgm_readinx` is
//! itself the oracle, and DuckDB's binder, not a walk of the text, decides what a name means.
//! So the worker takes the hidden objects out of what the binder can find:
//!
//! 1. the database file is attached read-only under a private name, fresh and random for every
//!    request ([`private_alias`]), which no reply carries ([`Shadow::scrub`]);
//! 2. an in-memory catalog is attached under the database's public name (`health`), and made
//!    the default;
//! 3. in it, every table and view that is not hidden becomes a view of its visible columns only
//!    (`CREATE VIEW health.main.readings AS SELECT "ts", "glucose" FROM <private>.main.readings`);
//!    a hidden table, and a table whose every column is hidden, get no view.
//!
//! Then `SELECT * FROM readings` returns the visible columns, `SELECT r FROM readings r` is a
//! STRUCT of them, and a hidden name fails in DuckDB's own words exactly as a made-up one does,
//! through the same code, in the same time. What reads through a view stored in the database
//! (whose text may name hidden objects) is still checked by the plan check.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

use duckdb::Connection;
use serde_json::Value as Json;

use super::errors::{query_error, worker_error};
use super::sql_identifier;
use crate::error::ErrorKind;
use crate::privacy::PrivacyPolicy;
use crate::protocol::WorkerError;

/// The two names of a database attached under privacy rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shadow {
    /// The random name the file is attached under.
    pub(crate) private: String,
    /// The database's public name, the shadow catalog's.
    pub(crate) public: String,
}

/// A catalog name nobody can guess: 128 bits from the kernel's random source (the standard
/// library seeds each `RandomState` with `getrandom`, which the sandbox allows; `/dev/urandom`
/// is not readable there).
pub(crate) fn private_alias() -> String {
    let word = || {
        let mut hasher = RandomState::new().build_hasher();
        hasher.write_u8(0);
        hasher.finish()
    };
    format!("duckgate_private_{:016x}{:016x}", word(), word())
}

impl Shadow {
    /// Build the shadow catalog: the file is already attached as `self.private`; attach the
    /// in-memory catalog as `self.public` and fill it (see the module documentation).
    pub(crate) fn build(
        &self,
        conn: &Connection,
        policy: &PrivacyPolicy,
    ) -> Result<(), WorkerError> {
        let mut columns = conn
            .prepare(
                "SELECT schema_name, table_name, column_name FROM duckdb_columns() \
                 WHERE database_name = ? ORDER BY schema_name, table_name, column_index",
            )
            .map_err(|e| query_error(&e))?;
        let rows: Vec<(String, String, String)> = columns
            .query_map([&self.private], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| query_error(&e))?;
        let script = self.script(&rows, policy);
        conn.execute_batch(&script).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!(
                    "Could not prepare the database's visible tables: {}",
                    self.scrub(&e.to_string())
                ),
            )
        })
    }

    /// The statements that build the shadow catalog from `(schema, table, column)` rows in
    /// column order.
    fn script(&self, rows: &[(String, String, String)], policy: &PrivacyPolicy) -> String {
        let public = sql_identifier(&self.public);
        let private = sql_identifier(&self.private);
        let mut script = format!("ATTACH ':memory:' AS {public};");
        let mut schemas: Vec<&str> = Vec::new();
        let mut at = 0;
        while at < rows.len() {
            let (schema, table) = (&rows[at].0, &rows[at].1);
            let end = rows[at..]
                .iter()
                .position(|(s, t, _)| s != schema || t != table)
                .map_or(rows.len(), |n| at + n);
            let visible: Vec<String> = rows[at..end]
                .iter()
                .filter(|(_, _, column)| !policy.hides_column(schema, table, column))
                .map(|(_, _, column)| sql_identifier(column))
                .collect();
            at = end;
            if visible.is_empty() {
                continue;
            }
            if !schemas.contains(&schema.as_str()) {
                schemas.push(schema);
                script.push_str(&format!(
                    "CREATE SCHEMA IF NOT EXISTS {public}.{};",
                    sql_identifier(schema)
                ));
            }
            let (schema, table) = (sql_identifier(schema), sql_identifier(table));
            script.push_str(&format!(
                "CREATE VIEW {public}.{schema}.{table} AS SELECT {} FROM {private}.{schema}.{table};",
                visible.join(", ")
            ));
        }
        script.push_str(&format!("USE {public};"));
        script
    }

    /// `text` with the private name replaced by the public one.
    pub(crate) fn scrub(&self, text: &str) -> String {
        text.replace(&self.private, &self.public)
    }

    /// Every string in `value` scrubbed.
    pub(crate) fn scrub_json(&self, value: &mut Json) {
        // An explicit stack: a deep plan cannot overflow the worker's stack.
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Json::String(text) => {
                    if text.contains(&self.private) {
                        *text = self.scrub(text);
                    }
                }
                Json::Array(items) => stack.extend(items.iter_mut()),
                Json::Object(map) => stack.extend(map.values_mut()),
                Json::Null | Json::Bool(_) | Json::Number(_) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shadow() -> Shadow {
        Shadow {
            private: "duckgate_private_0123".into(),
            public: "health".into(),
        }
    }

    fn row(schema: &str, table: &str, column: &str) -> (String, String, String) {
        (schema.into(), table.into(), column.into())
    }

    #[test]
    fn the_script_makes_views_of_visible_columns_and_skips_hidden_tables() {
        let policy = PrivacyPolicy {
            hide_tables: vec!["raw_events".into()],
            hide_columns: vec!["readings.note".into(), "only_secret.*".into()],
        };
        let rows = [
            row("main", "raw_events", "id"),
            row("main", "readings", "ts"),
            row("main", "readings", "note"),
            row("main", "readings", "glucose"),
            row("main", "only_secret", "s"),
            row("other", "t", "x"),
        ];
        let script = shadow().script(&rows, &policy);
        assert!(
            script.starts_with("ATTACH ':memory:' AS \"health\";"),
            "{script}"
        );
        assert!(
            script.contains(
                "CREATE VIEW \"health\".\"main\".\"readings\" AS SELECT \"ts\", \"glucose\" FROM \
                 \"duckgate_private_0123\".\"main\".\"readings\";"
            ),
            "{script}"
        );
        assert!(!script.contains("raw_events"), "{script}");
        assert!(!script.contains("only_secret"), "{script}");
        assert!(script.contains("CREATE SCHEMA IF NOT EXISTS \"health\".\"other\";"));
        assert!(script.ends_with("USE \"health\";"), "{script}");
    }

    #[test]
    fn private_names_are_fresh_and_scrubbed_everywhere() {
        let (a, b) = (private_alias(), private_alias());
        assert_ne!(a, b);
        assert_eq!(a.len(), "duckgate_private_".len() + 32);
        let shadow = Shadow {
            private: a.clone(),
            public: "health".into(),
        };
        let mut plan = serde_json::json!([{ "extra_info": { "Table": format!("{a}.main.t") },
                                            "children": [format!("x {a} y")] }]);
        shadow.scrub_json(&mut plan);
        let text = plan.to_string();
        assert!(!text.contains(&a), "{text}");
        assert!(text.contains("health.main.t"), "{text}");
    }
}
