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
//! 1. each database file is attached read-only under a private name, fresh and random for every
//!    request and database ([`private_alias`]), which no reply carries ([`Shadow::scrub`]);
//! 2. an in-memory catalog is attached under each database's public name (`health`, `pump`),
//!    and the default database's is made the default;
//! 3. in it, every table and view that is not hidden becomes a view of its visible columns only
//!    (`CREATE VIEW health.main.readings AS SELECT "ts", "glucose" FROM <private>.main.readings`);
//!    a hidden table, and a table whose every column is hidden, get no view. A rule with a
//!    database's name hides in that database only; one without, in every database
//!    (`crate::privacy`).
//!
//! Then `SELECT * FROM readings` returns the visible columns, `SELECT r FROM readings r` is a
//! STRUCT of them, and a hidden name fails in DuckDB's own words exactly as a made-up one does,
//! through the same code, in the same time. What reads through a view stored in the database
//! (whose text may name hidden objects) is still checked by the plan check.

use duckdb::Connection;
use serde_json::Value as Json;

use super::errors::{query_error, worker_error};
use super::own_sql::{Cache, OwnSql};
use super::plan_check::PlanJudge;
use super::sql_identifier;
use super::statement::{Sql, prepare_sql};
use crate::plan_policy::Attached;
use crate::privacy::PrivacyPolicy;
use crate::protocol::Failure;
use duckgate_validate::error::ErrorKind;

/// The rows of `rows` (in column order, grouped by relation), one slice per relation, each
/// with the first of its rows.
fn relations(rows: &[ShadowColumn]) -> impl Iterator<Item = (&ShadowColumn, &[ShadowColumn])> {
    rows.chunk_by(same_relation)
        .filter_map(|relation| Some((relation.first()?, relation)))
}

/// Whether two rows are columns of one relation (of one database).
fn same_relation(a: &ShadowColumn, b: &ShadowColumn) -> bool {
    a.database == b.database && a.schema == b.schema && a.table == b.table
}

/// A stored table's hidden columns, by lower-case `(database, schema, table)`.
type HiddenTableColumns = std::collections::HashMap<(String, String, String), Vec<String>>;

/// The key of [`HiddenTableColumns`].
fn table_key(database: &str, schema: &str, table: &str) -> (String, String, String) {
    (
        database.to_lowercase(),
        schema.to_lowercase(),
        table.to_lowercase(),
    )
}

/// The hidden columns of each stored table of `rows`: those the rules name and those computed
/// from them ([`PrivacyPolicy::hidden_columns`]).
fn hidden_table_columns(rows: &[ShadowColumn], policy: &PrivacyPolicy) -> HiddenTableColumns {
    relations(rows)
        .filter(|(first, _)| first.view_reads.is_none())
        .map(|(first, relation)| {
            let columns: Vec<(&str, Option<&[String]>)> = relation
                .iter()
                .map(|row| (row.column.as_str(), row.reads.as_deref()))
                .collect();
            let hidden =
                policy.hidden_columns((&first.database, &first.schema, &first.table), &columns);
            (
                table_key(&first.database, &first.schema, &first.table),
                hidden,
            )
        })
        .collect()
}

/// Each table and view of `rows`, as (database, schema, name), with its visible columns. A
/// view's column is hidden when the rules name it, or when what DuckDB's plan of it reads is
/// hidden (`lineage`).
fn visible_tables<'r>(
    rows: &'r [ShadowColumn],
    policy: &PrivacyPolicy,
) -> Vec<(&'r str, &'r str, &'r str, Vec<&'r ShadowColumn>)> {
    let hidden_tables = hidden_table_columns(rows, policy);
    let hidden_of = |database: &str, schema: &str, table: &str| {
        hidden_tables
            .get(&table_key(database, schema, table))
            .map(Vec::as_slice)
    };
    relations(rows)
        .map(|(first, relation)| {
            let (database, schema, table) = (&first.database, &first.schema, &first.table);
            let visible = relation
                .iter()
                .filter(|row| match &row.view_reads {
                    None => hidden_of(database, schema, table)
                        .is_none_or(|hidden| !hidden.contains(&row.column)),
                    Some(reads) => {
                        !policy.hides_column((database, schema, table), &row.column)
                            && !policy.view_column_hidden(reads.as_deref(), hidden_of)
                    }
                })
                .collect();
            (database.as_str(), schema.as_str(), table.as_str(), visible)
        })
        .collect()
}

/// One column of an attached database, as the shadow catalog is built from it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ShadowColumn {
    /// Its database's public name.
    database: String,
    schema: String,
    table: String,
    column: String,
    /// What its default or generated expression reads (`catalog::columns_read`).
    reads: Option<Vec<String>>,
    /// For a view's column, what DuckDB's plan of it reads (`lineage::view_column_reads`;
    /// `Some(None)`: unknown); `None` for a stored table's column.
    view_reads: Option<Option<Vec<crate::privacy::ReadColumn>>>,
}

/// The shadow catalogs of one request, the default database's first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Shadow {
    /// Each database as attached: its file under a random private name (`catalog`), its
    /// shadow catalog under its public, declared one (`name`).
    pub(crate) catalogs: Vec<Attached>,
    /// What each view column reads, by (database, schema, view, column), as the shadow decided
    /// it (`lineage`): the catalog a worker reads for the parent carries it.
    pub(crate) view_reads: ViewReads,
}

/// What each view column reads, by (database, schema, view, column); `None`: unknown.
pub(crate) type ViewReads = std::collections::HashMap<
    (String, String, String, String),
    Option<Vec<crate::privacy::ReadColumn>>,
>;

/// A catalog name nobody can guess, different in every request: 128 bits drawn from the kernel
/// (`getrandom(2)`, which the sandbox allows; `/dev/urandom` is not readable there) by the
/// process that answers the request. Never from state a `fork()` copies: std's `RandomState`
/// keys, drawn once per thread, were the same in every worker forked from one template.
pub(crate) fn private_alias() -> Result<String, Failure> {
    let bytes = super::kernel_random::<16>()?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("duckgate_private_{hex}"))
}

/// The columns of every relation of the database attached as `catalog.catalog`, in column
/// order, grouped by relation. Tables of nested schemas (DuckDB 2.0's `a.b.t`) get no view:
/// the shadow's views are named by schema and table, which would not tell `a.b` from a
/// top-level `b`. Under privacy rules they do not exist, and both walks refuse names of that
/// shape.
fn columns_of(conn: &Connection, catalog: &Attached) -> Result<Vec<ShadowColumn>, Failure> {
    let columns_of_every_table = OwnSql::fixed(
        "SELECT schema_name, table_name, column_name, column_default, \
             table_oid IN (SELECT view_oid FROM duckdb_views() WHERE database_name = $1) \
         FROM duckdb_columns() \
         WHERE database_name = $1 AND schema_oid IN (SELECT oid FROM duckdb_schemas() \
             WHERE database_name = $1 AND parent_schema_oid IS NULL) \
         ORDER BY schema_name, table_name, column_index",
    );
    let mut columns = prepare_sql(conn, Sql::Own(&columns_of_every_table), Cache::Fresh)
        .map_err(|e| query_error(&e))?;
    let rows: Vec<(String, String, String, Option<String>, bool)> = columns
        .query_map([&catalog.catalog], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
            ))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| query_error(&e))?;
    drop(columns);
    // A generated column computed from a hidden one is hidden too (`PrivacyPolicy::
    // hidden_columns`), so what each default reads comes from DuckDB's parser.
    Ok(rows
        .into_iter()
        .map(|(schema, table, column, default, is_view)| {
            let reads = match &default {
                Some(expression) => super::catalog::columns_read(conn, expression),
                None => Some(Vec::new()),
            };
            ShadowColumn {
                database: catalog.name.clone(),
                schema,
                table,
                column,
                reads,
                view_reads: is_view.then_some(None),
            }
        })
        .collect())
}

impl Shadow {
    /// Build the shadow catalogs: each file is already attached under its private name; attach
    /// an in-memory catalog under each public name and fill it (see the module documentation).
    pub(crate) fn build(
        &mut self,
        conn: &Connection,
        judge: &PlanJudge,
        policy: &PrivacyPolicy,
    ) -> Result<(), Failure> {
        let mut rows = Vec::new();
        for catalog in &self.catalogs {
            rows.extend(columns_of(conn, catalog)?);
        }
        self.trace_views(conn, judge, policy, &mut rows);
        self.view_reads = rows
            .iter()
            .filter_map(|row| {
                let reads = row.view_reads.clone()?;
                let key = (
                    row.database.clone(),
                    row.schema.clone(),
                    row.table.clone(),
                    row.column.clone(),
                );
                Some((key, reads))
            })
            .collect();
        let script = self.script(&rows, policy);
        conn.execute_batch(&script).map_err(|e| {
            worker_error(
                ErrorKind::InternalError,
                format!(
                    "Could not prepare the databases' visible tables: {}",
                    self.scrub(&e.to_string())
                ),
            )
        })
    }

    /// What each view column of `rows` reads, from DuckDB's plans of it (`lineage`).
    fn trace_views(
        &self,
        conn: &Connection,
        judge: &PlanJudge,
        policy: &PrivacyPolicy,
        rows: &mut [ShadowColumn],
    ) {
        let hidden_tables = hidden_table_columns(rows, policy);
        let hidden_of = |database: &str, schema: &str, table: &str| {
            hidden_tables
                .get(&table_key(database, schema, table))
                .map(Vec::as_slice)
        };
        for relation in rows.chunk_by_mut(same_relation) {
            let Some(first) = relation.first() else {
                continue;
            };
            if first.view_reads.is_none() {
                continue;
            }
            let Some(catalog) = self
                .catalogs
                .iter()
                .find(|catalog| catalog.name == first.database)
            else {
                // Every row came from one of `catalogs`; a view of none stays unknown: hidden.
                continue;
            };
            let names: Vec<&str> = relation.iter().map(|row| row.column.as_str()).collect();
            let reads = super::lineage::view_column_reads(
                conn,
                judge,
                &self.catalogs,
                &catalog.catalog,
                (first.schema.as_str(), first.table.as_str()),
                &names,
                |reads| policy.view_column_hidden(Some(reads), hidden_of),
            );
            for (row, reads) in relation.iter_mut().zip(reads) {
                row.view_reads = Some(reads);
            }
        }
    }

    /// The statements that build the shadow catalog from `(schema, table, column)` rows in
    /// column order.
    fn script(&self, rows: &[ShadowColumn], policy: &PrivacyPolicy) -> String {
        let mut script = String::new();
        for catalog in &self.catalogs {
            script.push_str(&format!(
                "ATTACH ':memory:' AS {};",
                sql_identifier(&catalog.name)
            ));
        }
        let mut schemas: Vec<(&str, &str)> = Vec::new();
        for (database, schema, table, visible) in visible_tables(rows, policy) {
            let Some(catalog) = self.catalogs.iter().find(|c| c.name == database) else {
                continue;
            };
            let visible: Vec<String> = visible
                .iter()
                .map(|row| sql_identifier(&row.column))
                .collect();
            if visible.is_empty() {
                continue;
            }
            let (public, private) = (
                sql_identifier(&catalog.name),
                sql_identifier(&catalog.catalog),
            );
            if !schemas.contains(&(database, schema)) {
                schemas.push((database, schema));
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
        if let Some(default) = self.catalogs.first() {
            script.push_str(&format!("USE {};", sql_identifier(&default.name)));
        }
        script
    }

    /// `text` with every private name replaced by its public one, in any letter case (DuckDB
    /// folds identifiers, and `upper()` of a name is still the name). Nothing should carry a
    /// private name (no function that lists catalogs or settings is allowed under privacy
    /// rules); this is the last line.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for catalog in &self.catalogs {
            text = scrub_one(&text, &catalog.catalog, &catalog.name);
        }
        text
    }

    /// Whether `text` carries a private name, in any letter case.
    fn carries_private_name(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        self.catalogs
            .iter()
            .any(|catalog| lower.contains(&catalog.catalog.to_ascii_lowercase()))
    }

    /// Every string in `value` scrubbed.
    pub(crate) fn scrub_json(&self, value: &mut Json) {
        // An explicit stack: a deep plan cannot overflow the worker's stack.
        let mut stack = vec![value];
        while let Some(value) = stack.pop() {
            match value {
                Json::String(text) => {
                    if self.carries_private_name(text) {
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

/// `text` with `private` replaced by `public`, in any letter case.
fn scrub_one(text: &str, private: &str, public: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let private = private.to_ascii_lowercase();
    if !lower.contains(&private) {
        return text.to_owned();
    }
    let mut scrubbed = String::with_capacity(text.len());
    let mut from = 0;
    // ASCII lower-casing keeps byte offsets, so positions in `lower` are positions in `text`.
    while let Some(at) = lower[from..].find(&private) {
        scrubbed.push_str(&text[from..from + at]);
        scrubbed.push_str(public);
        from += at + private.len();
    }
    scrubbed.push_str(&text[from..]);
    scrubbed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog(private: &str, public: &str) -> Attached {
        Attached {
            name: public.into(),
            catalog: private.into(),
            file: Default::default(),
        }
    }

    fn shadow() -> Shadow {
        Shadow {
            catalogs: vec![catalog("duckgate_private_0123", "health")],
            view_reads: Default::default(),
        }
    }

    fn row(schema: &str, table: &str, column: &str) -> ShadowColumn {
        ShadowColumn {
            database: "health".into(),
            schema: schema.into(),
            table: table.into(),
            column: column.into(),
            reads: Some(Vec::new()),
            view_reads: None,
        }
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
    fn a_generated_column_computed_from_a_hidden_one_gets_no_place_in_the_view() {
        let policy = PrivacyPolicy {
            hide_tables: vec![],
            hide_columns: vec!["*.serial_number".into()],
        };
        let reads = |column: &str, read: &[&str]| ShadowColumn {
            reads: Some(read.iter().map(|r| (*r).to_owned()).collect()),
            ..row("main", "devices", column)
        };
        let rows = [
            row("main", "devices", "id"),
            row("main", "devices", "serial_number"),
            // length(serial_number), and a column computed from that one in turn.
            reads("serial_length", &["SERIAL_NUMBER"]),
            reads("serial_length_twice", &["serial_length"]),
            reads("id_plus_one", &["id"]),
            // An expression DuckDB could not parse may read anything.
            ShadowColumn {
                reads: None,
                ..row("main", "devices", "unknown")
            },
        ];
        let script = shadow().script(&rows, &policy);
        assert!(
            script.contains("SELECT \"id\", \"id_plus_one\" FROM"),
            "{script}"
        );
    }

    #[test]
    fn private_names_are_fresh_and_scrubbed_everywhere() {
        let (a, b) = (private_alias().unwrap(), private_alias().unwrap());
        assert_ne!(a, b);
        assert_eq!(a.len(), "duckgate_private_".len() + 32);
        let shadow = Shadow {
            catalogs: vec![catalog(&a, "health"), catalog(&b, "pump")],
            view_reads: Default::default(),
        };
        let mut plan = serde_json::json!([{ "extra_info": { "Table": format!("{a}.main.t") },
                                            "children": [format!("x {a} y")] }]);
        shadow.scrub_json(&mut plan);
        let text = plan.to_string();
        assert!(!text.contains(&a), "{text}");
        assert!(text.contains("health.main.t"), "{text}");
        // In any letter case: `upper()` of the name is still the name.
        let shouted = format!("x {} y {a}", a.to_ascii_uppercase());
        assert_eq!(shadow.scrub(&shouted), "x health y health");
        let mut cell = serde_json::json!(a.to_ascii_uppercase());
        shadow.scrub_json(&mut cell);
        assert_eq!(cell, serde_json::json!("health"));
        // Each database's private name becomes its own public one.
        assert_eq!(
            shadow.scrub(&format!(
                "{a}.main.t JOIN {}.main.u",
                b.to_ascii_uppercase()
            )),
            "health.main.t JOIN pump.main.u"
        );
    }

    #[test]
    fn each_database_gets_its_own_shadow_and_a_rule_with_a_database_name_hides_there_only() {
        let policy = PrivacyPolicy {
            hide_tables: vec!["pump.raw_events".into()],
            hide_columns: vec!["pump.boluses.note".into(), "*.serial".into()],
        };
        let in_pump = |table: &str, column: &str| ShadowColumn {
            database: "pump".into(),
            ..row("main", table, column)
        };
        let rows = [
            row("main", "raw_events", "id"),
            row("main", "boluses", "note"),
            row("main", "boluses", "serial"),
            in_pump("boluses", "units"),
            in_pump("boluses", "note"),
            in_pump("boluses", "serial"),
            in_pump("raw_events", "id"),
        ];
        let shadow = Shadow {
            catalogs: vec![
                catalog("duckgate_private_0123", "health"),
                catalog("duckgate_private_4567", "pump"),
            ],
            ..shadow()
        };
        let script = shadow.script(&rows, &policy);
        assert!(
            script.starts_with("ATTACH ':memory:' AS \"health\";ATTACH ':memory:' AS \"pump\";"),
            "{script}"
        );
        // The default database keeps the names the pump's rules hide.
        assert!(
            script.contains(
                "CREATE VIEW \"health\".\"main\".\"raw_events\" AS SELECT \"id\" FROM \
                 \"duckgate_private_0123\".\"main\".\"raw_events\";"
            ),
            "{script}"
        );
        assert!(
            script.contains(
                "CREATE VIEW \"health\".\"main\".\"boluses\" AS SELECT \"note\" FROM \
                 \"duckgate_private_0123\".\"main\".\"boluses\";"
            ),
            "{script}"
        );
        assert!(
            script.contains(
                "CREATE VIEW \"pump\".\"main\".\"boluses\" AS SELECT \"units\" FROM \
                 \"duckgate_private_4567\".\"main\".\"boluses\";"
            ),
            "{script}"
        );
        assert!(
            !script.contains("\"pump\".\"main\".\"raw_events\""),
            "{script}"
        );
        assert!(script.ends_with("USE \"health\";"), "{script}");
    }
}
