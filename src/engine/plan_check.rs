//! The worker's check of DuckDB's bound plan, on every call: the query may read only the
//! attached database's tables, through allowed table functions and operators DuckDB uses to
//! shape rows. Under the operator's privacy rules it also may read no hidden table, no hidden
//! column and no catalog listing.
//!
//! Why the plan. The walks of the SQL (the parent's of sqlparser's tree, the worker's of
//! DuckDB's, `validate::tree`) see names; DuckDB's binder decides what they mean. A name can be
//! a CTE, a table, a view stored in the database whose text no walk sees, one of DuckDB's
//! system views (`pg_settings` is a view over `duckdb_settings()`), or a file (a replacement
//! scan). The physical plan (`EXPLAIN (FORMAT JSON)`) is what will run, with all of that
//! resolved: a scan of a stored table is a `SEQ_SCAN` naming `catalog.schema.table` and, in
//! `Projections` and `Filters`, every column it reads; every table function is an operator
//! named after its function (`RANGE`, `DUCKDB_COLUMNS`, `READ_CSV`), or an `INOUT_FUNCTION`
//! that names it in `Name`. So this check needs to know neither how the query got there nor
//! what any view holds.
//!
//! The rules, each failing closed:
//! - every node is a row-shaping operator ([`ROW_OPERATORS`], DuckDB's own names), a
//!   `SEQ_SCAN` of the attached database, or a table function on the allowlist of
//!   `validate::functions` (the one table the parent's walk and DuckDB-tree walk read too);
//!   anything else — a file reader, `DUCKDB_SETTINGS`, an operator DuckDB adds in a later
//!   version — is refused, naming it;
//! - a plan of an unexpected shape, or a node without its name or details, is refused.
//!
//! Under privacy rules the binder sees a shadow catalog in which hidden objects do not exist
//! (`shadow`): a hidden name fails like a made-up one, and expansions give the visible columns.
//! What the shadow cannot hide is a view stored in the database, whose text may read hidden
//! objects; this check is what stops those, and it holds even if a query names the private
//! catalog. Three details make the plan trustworthy:
//! - **Every reference, even one that reads nothing.** The optimizer drops a scan that cannot
//!   produce rows (`LIMIT 0` plans as `EMPTY_RESULT`), which would still show the columns of a
//!   hidden table behind a stored view. So the worker has DuckDB print its unoptimized logical
//!   plan too (`explain_output = 'all'`), and any table it names must be a table of the
//!   attached database that is not hidden.
//! - **Data-independent.** DuckDB's statistics propagation prunes scans and filters from the plan
//!   when a column's min/max or null statistics prove a filter always false or always true
//!   (measured: `count(*) … WHERE serial_number LIKE 'A%'` planned as `EMPTY_RESULT`, no scan).
//!   A check on that plan would be an oracle on the hidden column's statistics. So under privacy
//!   rules the worker switches that optimizer off (`disabled_optimizers`, before the
//!   configuration is locked) for the check and for the query alike: the plan checked is the
//!   plan that runs, and what it reads depends on the SQL only. (With the whole optimizer off,
//!   DuckDB 2.0 prints no projections for a scan at all, so that is not an option.)
//! - **No catalog listing**, and every refusal is the same [`PLAN_REFUSAL`], naming nothing.
//!
//! DuckDB's own errors pass unchanged: matching hidden names in their text (which the agent
//! writes into, `struct_extract({'a': 1}, 'raw_events')`) would itself tell hidden names apart.
//! The worker rewords "not found" errors afterwards (`Engine::private_error`), whatever they
//! name.

use std::collections::HashMap;

use duckdb::Connection;
use serde_json::Value as Json;

use super::errors::{query_error, worker_error};
use super::statement;
use crate::error::ErrorKind;
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};
use crate::protocol::WorkerError;
use crate::validate::functions::{self, RowSource};
use crate::validate::refusals;
use crate::validate::tree::{self, TreeFacts};

/// The optimizer that makes plans depend on column statistics; off under privacy rules.
pub(crate) const DATA_DEPENDENT_OPTIMIZERS: &str = "statistics_propagation";

/// The operator DuckDB names a scan of a stored table (sequential and index scans alike).
const TABLE_SCAN: &str = "SEQ_SCAN";

/// A lateral table function (`FROM t, json_each(t.j)`); its function is in `Name`.
const INOUT_FUNCTION: &str = "INOUT_FUNCTION";

/// Operators that read nothing themselves: they shape their children's rows, or produce
/// constants the query wrote (`VALUES`, `SELECT 1`). DuckDB 2.0's names
/// (`PhysicalOperatorToString`); writes, `COPY`, `ATTACH`, `PRAGMA`, `SET`, `LOAD`, … are not
/// here and so are refused.
const ROW_OPERATORS: &[&str] = &[
    "PROJECTION",
    "FILTER",
    "HASH_GROUP_BY",
    "PERFECT_HASH_GROUP_BY",
    "PARTITIONED_AGGREGATE",
    "UNGROUPED_AGGREGATE",
    "LIMITED_DISTINCT",
    "ORDER_BY",
    "TOP_N",
    "LIMIT",
    "STREAMING_LIMIT",
    "LIMIT_PERCENT",
    "RESERVOIR_SAMPLE",
    "STREAMING_SAMPLE",
    "WINDOW",
    "STREAMING_WINDOW",
    "UNNEST",
    "HASH_JOIN",
    "NESTED_LOOP_JOIN",
    "BLOCKWISE_NL_JOIN",
    "PIECEWISE_MERGE_JOIN",
    "IE_JOIN",
    "ASOF_JOIN",
    "CROSS_PRODUCT",
    "POSITIONAL_JOIN",
    "POSITIONAL_SCAN",
    "LEFT_DELIM_JOIN",
    "RIGHT_DELIM_JOIN",
    "DELIM_SCAN",
    "UNION",
    "EMPTY_RESULT",
    "DUMMY_SCAN",
    "COLUMN_DATA_SCAN",
    "CHUNK_SCAN",
    "EXPRESSION_SCAN",
    "CTE",
    "CTE_SCAN",
    "REC_CTE",
    "REC_KEY_CTE",
    "REC_CTE_SCAN",
    "REC_REC_CTE_SCAN",
    "RECURSIVE_KEY_JOIN",
    "PIVOT",
];

/// `extra_info` keys of a table scan that name the table or carry no column names.
const SCAN_KEYS_WITHOUT_COLUMNS: &[&str] = &["Table", "Type", "Estimated Cardinality", "Function"];

/// The privacy refusal; it names nothing and says what to do instead.
pub(crate) fn privacy_refusal() -> WorkerError {
    WorkerError {
        refusal: Some(crate::protocol::WorkerRefusal::PrivacyPlan),
        ..worker_error(ErrorKind::PolicyBlocked, PLAN_REFUSAL)
    }
}

/// What the plan check enforces beyond the base rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlanRules<'a> {
    /// The catalog name of the attached database.
    pub(crate) alias: &'a str,
    /// The operator's privacy rules, when there are any. `conn` then has statistics
    /// propagation off ([`DATA_DEPENDENT_OPTIMIZERS`]).
    pub(crate) privacy: Option<&'a PrivacyPolicy>,
}

/// Why a plan is refused, before it becomes an error: under privacy rules every reason becomes
/// the one [`PLAN_REFUSAL`].
enum Refused {
    /// A reason worth telling the agent (the refusal the parent would give).
    Because(WorkerError),
    /// The plan has a shape this check does not know.
    Unknown(String),
}

impl Refused {
    fn into_error(self, rules: &PlanRules<'_>) -> WorkerError {
        if rules.privacy.is_some() {
            return privacy_refusal();
        }
        match self {
            Refused::Because(error) => error,
            Refused::Unknown(what) => WorkerError {
                kind: ErrorKind::PolicyBlocked,
                message: format!(
                    "DuckDB's plan for this query uses {what}, which duckgate does not allow, so \
                     it was not run."
                ),
                construct: Some(what),
                suggestion: Some(
                    "Query the database's tables with plain SELECTs (see list_tables).".into(),
                ),
                missing: None,
                refusal: None,
            },
        }
    }
}

/// Refuse `sql` unless DuckDB's plan for it passes `rules` (see the module documentation).
/// `conn` has the database attached as `rules.alias`.
///
/// `sql` may be `EXPLAIN [ANALYZE] <query>`: the query is what gets checked. `facts` is what
/// the worker's walk of DuckDB's syntax tree found, when it ran (not under the test bypass).
pub(crate) fn check(
    conn: &Connection,
    rules: &PlanRules<'_>,
    sql: &str,
    facts: Option<TreeFacts>,
) -> Result<(), WorkerError> {
    let query = statement::strip_explain(sql).unwrap_or(sql);
    // The EXPLAIN below must wrap exactly one SELECT: the duckdb crate runs every statement but
    // the last of a text it prepares. The walk established that; without it (test bypass) this
    // check asks DuckDB's parser itself, so it holds on its own.
    let facts = match facts {
        Some(facts) => facts,
        None => tree::facts(&statement::parse_single_select(conn, query)?),
    };
    let plan = match plans(conn, query) {
        Ok(plans) => plans,
        Err(PlanError::DuckDb(explain_error)) => {
            // DuckDB's message quotes the statement with a caret under the fault: the agent
            // should see its own SQL there, not this check's EXPLAIN around it. Preparing the
            // query binds and plans it without running it; it must fail the same way, and if it
            // does not, this check does not know why, so it refuses.
            let error = match conn.prepare(query) {
                Err(own) => query_error(&own),
                Ok(_) => {
                    return Err(Refused::Unknown(format!(
                        "a plan DuckDB could not show ({})",
                        explain_error.message.lines().next().unwrap_or_default()
                    ))
                    .into_error(rules));
                }
            };
            // DuckDB's own words, whatever names they hold: under privacy rules the binder saw
            // only the shadow catalog (`shadow`), so a hidden name fails like a made-up one, and
            // matching hidden names in this text would itself tell them apart.
            return Err(error);
        }
        Err(PlanError::Shape(what)) => return Err(Refused::Unknown(what).into_error(rules)),
    };
    if let Some(policy) = rules.privacy {
        let Some(logical) = &plan.logical else {
            return Err(
                Refused::Unknown("a plan without its logical form".into()).into_error(rules)
            );
        };
        check_logical_scans(logical, rules.alias, policy).map_err(|r| r.into_error(rules))?;
    }
    let mut columns = CatalogColumns::new(conn, rules.alias);
    let shown_tables = check_nodes(&plan.physical, rules, &mut columns)
        .map_err(|refused| refused.into_error(rules))?;
    // `SHOW <name>` of a table plans as PRAGMA_SHOW; of a setting (`SHOW threads`), DuckDB's
    // binder answers with the setting's value and the plan shows only that constant.
    if shown_tables < facts.shows_by_name {
        let refused = refusals::denied("SHOW <setting>", functions::READS_SETTINGS);
        return Err(Refused::Because(refused.into()).into_error(rules));
    }
    Ok(())
}

enum PlanError {
    /// DuckDB could not plan the query: its own error, as running it would give.
    DuckDb(WorkerError),
    /// DuckDB planned it, but the plan is not the one JSON tree this check reads.
    Shape(String),
}

/// DuckDB's plans for one query.
struct Plans {
    /// The physical plan: what will run.
    physical: Json,
    /// The unoptimized logical plan, when DuckDB printed it (`explain_output = 'all'`, set
    /// under privacy rules): every table the query references is a scan there, even one the
    /// optimizer drops (`LIMIT 0` plans as `EMPTY_RESULT`).
    logical: Option<Json>,
}

/// DuckDB's plans for `query`, parsed.
fn plans(conn: &Connection, query: &str) -> Result<Plans, PlanError> {
    let explain = format!("EXPLAIN (FORMAT JSON) {query}");
    let mut stmt = conn
        .prepare(&explain)
        .map_err(|e| PlanError::DuckDb(query_error(&e)))?;
    let rows: Vec<(String, String)> = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(|rows| rows.collect())
        .map_err(|e| PlanError::DuckDb(query_error(&e)))?;
    let (mut physical, mut logical) = (None, None);
    // One plan of each kind, as JSON: anything else is a shape this check does not know.
    for (key, value) in &rows {
        let slot = match key.as_str() {
            "physical_plan" => &mut physical,
            "logical_plan" => &mut logical,
            "logical_opt" => continue,
            other => return Err(PlanError::Shape(format!("a plan of kind {other}"))),
        };
        if slot.is_some() {
            return Err(PlanError::Shape(format!("two plans of kind {key}")));
        }
        *slot = Some(parse_plan(value)?);
    }
    match physical {
        Some(physical) => Ok(Plans { physical, logical }),
        None => Err(PlanError::Shape(format!(
            "{} plans without a physical one",
            rows.len()
        ))),
    }
}

/// One plan's JSON text.
fn parse_plan(text: &str) -> Result<Json, PlanError> {
    let mut reader = serde_json::Deserializer::from_str(text);
    // A plan nests as deep as the query's expressions do; the worker's threads have the stack
    // for it (the checker's is large, see `checker`).
    reader.disable_recursion_limit();
    match serde::Deserialize::deserialize(&mut reader) {
        Ok(plan @ Json::Array(_)) => Ok(plan),
        _ => Err(PlanError::Shape("a plan that is not a JSON list".into())),
    }
}

/// Under privacy rules, every table the unoptimized logical plan names must be a table of the
/// attached database that is not hidden: a query that reaches a hidden table through a view
/// stored in the database is refused even when it reads nothing (`LIMIT 0`), which would still
/// show the hidden table's column names and types. Columns are the physical plan's to check:
/// the logical plan does not list them.
fn check_logical_scans(plan: &Json, alias: &str, policy: &PrivacyPolicy) -> Result<(), Refused> {
    let Json::Array(nodes) = plan else {
        return Err(Refused::Unknown("a logical plan that is not a list".into()));
    };
    let mut stack: Vec<&Json> = nodes.iter().collect();
    while let Some(node) = stack.pop() {
        let (Some(Json::Array(children)), Some(Json::Object(extra))) =
            (node.get("children"), node.get("extra_info"))
        else {
            return Err(Refused::Unknown(
                "a logical operator without details".into(),
            ));
        };
        if let Some(table) = extra.get("Table") {
            let Some(table) = table.as_str() else {
                return Err(Refused::Unknown("a table that is not a name".into()));
            };
            let Some(parts) = split_qualified(table) else {
                return Err(Refused::Unknown(format!("a scan of {table}")));
            };
            let [catalog, schema, name] = parts.as_slice() else {
                return Err(Refused::Unknown(format!("a scan of {table}")));
            };
            if !catalog.eq_ignore_ascii_case(alias) || policy.hides_table(schema, name) {
                return Err(Refused::Unknown(format!("a scan of {table}")));
            }
        }
        stack.extend(children.iter());
    }
    Ok(())
}

/// The operator `SHOW <table>` plans as (the table's columns).
const SHOW_TABLE: &str = "PRAGMA_SHOW";

/// Walk the plan; every node must be understood and allowed. Returns how many `SHOW <table>`
/// operators it holds.
fn check_nodes(
    plan: &Json,
    rules: &PlanRules<'_>,
    columns: &mut CatalogColumns<'_>,
) -> Result<u32, Refused> {
    let mut shown_tables = 0;
    let Json::Array(nodes) = plan else {
        return Err(Refused::Unknown("a plan that is not a list".into()));
    };
    // An explicit stack: a deep plan cannot overflow the worker's stack.
    let mut stack: Vec<&Json> = nodes.iter().collect();
    while let Some(node) = stack.pop() {
        let Some(name) = node.get("name").and_then(Json::as_str) else {
            return Err(Refused::Unknown("an operator without a name".into()));
        };
        let (Some(Json::Array(children)), Some(Json::Object(extra))) =
            (node.get("children"), node.get("extra_info"))
        else {
            return Err(Refused::Unknown(format!(
                "an operator {name} without details"
            )));
        };
        let name = name.trim();
        if name == TABLE_SCAN {
            check_scan(extra, rules, columns)?;
        } else if extra.contains_key("Table") {
            // Something that names a table but is not the scan this check knows.
            return Err(Refused::Unknown(format!("the operator {name}")));
        } else if ROW_OPERATORS.contains(&name) {
        } else if name == INOUT_FUNCTION {
            let called = extra.get("Name").and_then(Json::as_str).unwrap_or_default();
            table_function(called, rules)?;
        } else {
            table_function(name, rules)?;
            if name == SHOW_TABLE {
                shown_tables += 1;
            }
        }
        stack.extend(children.iter());
    }
    Ok(shown_tables)
}

/// A table-function operator (named after its function, in upper case).
fn table_function(operator: &str, rules: &PlanRules<'_>) -> Result<(), Refused> {
    let called = operator.to_ascii_lowercase();
    match functions::plan_table_function(operator) {
        Some(RowSource::Catalog) if rules.privacy.is_some() => Err(Refused::Because(
            refusals::catalog_listing(&format!("{called}()")).into(),
        )),
        Some(RowSource::Arguments | RowSource::Catalog | RowSource::Constant) => Ok(()),
        None if called.is_empty() => Err(Refused::Unknown("an unnamed table function".into())),
        None => Err(Refused::Because(match functions::denial(&called) {
            Some(denial) => refusals::denied(&called, denial).into(),
            None => refusals::table_function_not_allowed(&called).into(),
        })),
    }
}

/// One `SEQ_SCAN`: the table must be in the attached database; under privacy rules it must not
/// be hidden, and no hidden column of it may appear in what the scan reads.
fn check_scan(
    extra: &serde_json::Map<String, Json>,
    rules: &PlanRules<'_>,
    columns: &mut CatalogColumns<'_>,
) -> Result<(), Refused> {
    let Some(table) = extra.get("Table").and_then(Json::as_str) else {
        return Err(Refused::Unknown("a table scan without its table".into()));
    };
    let Some(parts) = split_qualified(table) else {
        return Err(Refused::Unknown(format!("a scan of {table}")));
    };
    // DuckDB prints scans of an attached database's tables as `catalog.schema.name`.
    let [catalog, schema, name] = parts.as_slice() else {
        return Err(Refused::Unknown(format!("a scan of {table}")));
    };
    if !catalog.eq_ignore_ascii_case(rules.alias) {
        return Err(Refused::Because(refusals::unknown_relation(table).into()));
    }
    let Some(policy) = rules.privacy else {
        return Ok(());
    };
    if policy.hides_table(schema, name) {
        return Err(Refused::Unknown(format!("a scan of {table}")));
    }
    let hidden: Vec<String> = columns
        .of(schema, name)
        .map_err(Refused::Because)?
        .iter()
        .filter(|c| policy.hides_column(schema, name, c))
        .map(|c| c.to_lowercase())
        .collect();
    for (key, value) in extra {
        if SCAN_KEYS_WITHOUT_COLUMNS.contains(&key.as_str()) {
            continue;
        }
        let Some(text) = info_text(value) else {
            return Err(Refused::Unknown(format!("a scan detail {key}")));
        };
        let text = text.to_lowercase();
        let reads_hidden = if key == "Projections" {
            hidden.iter().any(|h| projects(&text, h))
        } else {
            // Filters and anything else: free text that names columns.
            hidden.iter().any(|h| mentions(&text, h))
        };
        if reads_hidden {
            return Err(Refused::Unknown(format!("a scan of {table}")));
        }
    }
    // A table scan always lists its projections (it supports projection pushdown); without
    // them this check could not see what the scan reads.
    if !extra.contains_key("Projections") {
        return Err(Refused::Unknown(format!("a scan of {table}")));
    }
    Ok(())
}

/// An `extra_info` value as one text: DuckDB splits a value at line breaks into an array.
fn info_text(value: &Json) -> Option<String> {
    match value {
        Json::String(text) => Some(text.clone()),
        Json::Array(lines) => lines
            .iter()
            .map(|line| line.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .map(|lines| lines.join("\n")),
        _ => None,
    }
}

/// Whether the projection list (column names one per line; a struct field read alone shows as
/// `column.field`) reads `column`. Matching whole lines rather than splitting them keeps a
/// column whose name holds a line break or a dot matchable.
fn projects(list: &str, column: &str) -> bool {
    let mut from = 0;
    while let Some(at) = list[from..].find(column) {
        let start = from + at;
        let end = start + column.len();
        let starts_line = start == 0 || list[..start].ends_with('\n');
        let ends_name = end == list.len() || list[end..].starts_with(['\n', '.']);
        if starts_line && ends_name {
            return true;
        }
        from = start + list[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Whether `text` names `name` as a whole word: no identifier character right before or after
/// it, so a hidden `id` is not found in `device_id`.
fn mentions(text: &str, name: &str) -> bool {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// `a.b."c ""d"""` → `["a", "b", "c \"d\""]`; `None` when the quoting is malformed.
fn split_qualified(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' || c == '"' {
                    break;
                }
                part.push(c);
                chars.next();
            }
        }
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        match chars.next() {
            None => return Some(parts),
            Some('.') => continue,
            Some(_) => return None,
        }
    }
}

/// The columns of the tables a plan scans, read from DuckDB's own catalog once per table.
struct CatalogColumns<'c> {
    conn: &'c Connection,
    alias: &'c str,
    tables: HashMap<(String, String), Vec<String>>,
}

impl<'c> CatalogColumns<'c> {
    fn new(conn: &'c Connection, alias: &'c str) -> Self {
        CatalogColumns {
            conn,
            alias,
            tables: HashMap::new(),
        }
    }

    /// The columns of `schema.table` in the attached database (an error when it has no such
    /// table). `pragma_table_info` of one table costs a third of a `duckdb_columns()` scan.
    fn of(&mut self, schema: &str, table: &str) -> Result<&[String], WorkerError> {
        let key = (schema.to_owned(), table.to_owned());
        if !self.tables.contains_key(&key) {
            let qualified = [self.alias, schema, table]
                .map(super::sql_identifier)
                .join(".");
            let sql = format!(
                "SELECT name FROM pragma_table_info({})",
                super::sql_string(&qualified)
            );
            let mut stmt = self.conn.prepare(&sql).map_err(|e| query_error(&e))?;
            let columns: Vec<String> = stmt
                .query_map([], |row| row.get(0))
                .and_then(|rows| rows.collect())
                .map_err(|e| query_error(&e))?;
            self.tables.insert(key.clone(), columns);
        }
        Ok(self.tables.get(&key).map_or(&[], Vec::as_slice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::engine::tests::{TempDir, config, make_db};
    use crate::sandbox::worker::wal_path;

    /// The fixture of `tests/privacy.rs`, plus a view over the hidden column and a table in a
    /// second schema.
    const SCHEMA: &str = r#"
        CREATE TABLE devices (device_id INTEGER PRIMARY KEY, model VARCHAR, serial_number VARCHAR);
        INSERT INTO devices SELECT i, 'M' || i, 'SN-PLANTED-' || i FROM range(1, 50) t(i);
        CREATE TABLE readings (id INTEGER, device_id INTEGER, glucose INTEGER, secret_note VARCHAR,
                               payload STRUCT(a INTEGER, secret VARCHAR));
        INSERT INTO readings VALUES (1, 1, 110, 'PLANTED note', {'a': 1, 'secret': 'x'});
        CREATE TABLE raw_payloads (id INTEGER, body VARCHAR);
        INSERT INTO raw_payloads VALUES (1, 'PLANTED payload');
        CREATE VIEW device_labels AS SELECT device_id, serial_number AS label FROM devices;
        CREATE VIEW payload_view AS SELECT * FROM raw_payloads;
        CREATE SCHEMA other;
        CREATE TABLE other.raw_payloads (id INTEGER);
    "#;

    fn policy() -> PrivacyPolicy {
        PrivacyPolicy {
            hide_tables: vec!["raw_payloads".into()],
            hide_columns: vec![
                "*.serial_number".into(),
                "readings.secret_note".into(),
                "readings.payload".into(),
            ],
        }
    }

    fn engine(tag: &str) -> (TempDir, Engine) {
        let dir = TempDir::new(tag);
        let db = make_db(&dir, "private.duckdb", SCHEMA);
        let mut engine = Engine::open(&config("1GiB"), &db, &wal_path(&db)).unwrap();
        engine.enforce_privacy(&policy());
        engine.attach(&db).unwrap();
        (dir, engine)
    }

    #[test]
    fn under_privacy_rules_hidden_names_do_not_exist_and_hidden_reads_are_refused() {
        let (_dir, mut engine) = engine("plan");
        // The binder sees the shadow catalog: a hidden name does not exist.
        let unknown = [
            "SELECT serial_number FROM devices",
            "SELECT serial_number AS s FROM devices",
            "SELECT upper(serial_number) FROM devices",
            "SELECT count(*) FROM devices WHERE serial_number LIKE 'A%'",
            "SELECT model FROM devices ORDER BY serial_number",
            "SELECT payload.a FROM readings",
            "SELECT secret_note FROM readings",
            "SELECT id FROM raw_payloads",
            "SELECT count(*) FROM raw_payloads",
            "SELECT id FROM other.raw_payloads",
            "SELECT typeof(serial_number) FROM devices LIMIT 1",
            "WITH RECURSIVE raw_payloads AS (SELECT * FROM raw_payloads) SELECT * FROM raw_payloads LIMIT 0",
            "EXPLAIN SELECT serial_number FROM devices",
        ];
        for sql in unknown {
            let error = engine.check_plan(sql).expect_err(sql);
            assert_eq!(error.kind, ErrorKind::UnknownName, "{sql}: {error:?}");
        }
        // What reads hidden data through a view stored in the database, and catalog listings,
        // are refused by the plan, with one sentence that names nothing.
        let refused = [
            "SELECT label FROM device_labels",
            "SELECT count(*) FROM device_labels WHERE label LIKE 'SN%'",
            "SELECT * FROM payload_view",
            "SELECT * FROM payload_view LIMIT 0",
            "SELECT count(*) FROM payload_view",
            "SHOW TABLES",
            "SELECT * FROM duckdb_columns()",
            "SELECT column_name FROM information_schema.columns",
            "SELECT * FROM duckdb_tables()",
            "SELECT * FROM pragma_table_info('devices')",
        ];
        for sql in refused {
            let error = engine.check_plan(sql).expect_err(sql);
            assert_eq!(error.kind, ErrorKind::PolicyBlocked, "{sql}: {error:?}");
            assert_eq!(error.message, PLAN_REFUSAL, "{sql}");
        }
        // Expansions see the visible columns only, so they pass.
        let allowed = [
            "SELECT * FROM devices",
            "SELECT d FROM devices d",
            "SELECT to_json(d) FROM devices d",
            "SELECT COLUMNS(*) FROM devices",
            "SUMMARIZE devices",
            "DESCRIBE devices",
            "DESCRIBE SELECT model FROM devices",
            "SELECT model FROM devices",
            "SELECT count(*) FROM devices",
            "SELECT glucose FROM readings WHERE glucose > 100",
            "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id)",
            "SELECT * FROM range(3)",
            "VALUES (1), (2)",
            "SELECT 1",
            "EXPLAIN SELECT model FROM devices",
            "WITH x AS (SELECT model FROM devices) SELECT count(*) FROM x",
            "SELECT device_id FROM device_labels",
            "SELECT * FROM unnest((SELECT list(id) FROM readings))",
        ];
        for sql in allowed {
            assert_eq!(engine.check_plan(sql), Ok(()), "{sql}");
        }
        // The checked plan is the plan that runs, and a whole row is the visible columns.
        let rows = engine
            .run_query("SELECT d AS r FROM devices d LIMIT 1", 10, 1 << 20)
            .unwrap();
        assert_eq!(
            rows.columns[0].data_type,
            "STRUCT(device_id INTEGER, model VARCHAR)"
        );
    }

    #[test]
    fn errors_are_duckdbs_and_a_hidden_name_fails_like_a_made_up_one() {
        let (_dir, mut engine) = engine("errors");
        let syntax = engine.check_plan("SELECT FROM WHERE").unwrap_err();
        assert_eq!(syntax.kind, ErrorKind::SyntaxError);
        let several = engine.check_plan("SELECT 1; SELECT 2").unwrap_err();
        assert_eq!(several.kind, ErrorKind::MultipleStatements);
        let write = engine.check_plan("DELETE FROM devices").unwrap_err();
        assert_eq!(write.kind, ErrorKind::PolicyBlocked);
        // DuckDB's own words, even where they name a column a hidden table also has (`id`).
        let grouped = engine
            .check_plan("SELECT id, count(*) FROM readings")
            .unwrap_err();
        assert_eq!(grouped.kind, ErrorKind::DatabaseError, "{grouped:?}");
        assert!(grouped.message.contains("GROUP BY"), "{grouped:?}");
        // As the agent gets them: hidden and made-up alike, and no private name anywhere.
        for (hidden, made_up) in [
            ("SELECT * FROM raw_payloads", "SELECT * FROM raw_payloadz"),
            (
                "SELECT serial_number FROM devices",
                "SELECT serial_numbez FROM devices",
            ),
        ] {
            let a = engine.check_plan(hidden).unwrap_err();
            let a = engine.private_error(a);
            let b = engine.check_plan(made_up).unwrap_err();
            let b = engine.private_error(b);
            assert_eq!(a.kind, b.kind);
            assert_eq!(
                a.message
                    .replace("raw_payloads", "N")
                    .replace("serial_number", "N"),
                b.message
                    .replace("raw_payloadz", "N")
                    .replace("serial_numbez", "N"),
                "{hidden}"
            );
            assert!(!a.message.contains("duckgate_private"), "{a:?}");
        }
        let plan = engine.explain("SELECT model FROM devices").unwrap();
        let text = plan.plan.to_string();
        assert!(!text.contains("duckgate_private"), "{text}");
        assert!(!text.contains("logical_plan"), "{text}");
    }

    #[test]
    fn qualified_names_split_with_quotes() {
        assert_eq!(
            split_qualified("demo.main.devices"),
            Some(vec!["demo".into(), "main".into(), "devices".into()])
        );
        assert_eq!(
            split_qualified(r#"db.main."odd ""name""""#),
            Some(vec!["db".into(), "main".into(), r#"odd "name""#.into()])
        );
        assert_eq!(
            split_qualified(r#""a.b".c"#),
            Some(vec!["a.b".into(), "c".into()])
        );
        assert_eq!(split_qualified("a..b"), None);
        assert_eq!(split_qualified(r#"a."b"#), None);
        assert_eq!(split_qualified(r#"a."b"c"#), None);
        assert_eq!(split_qualified(""), None);
    }

    #[test]
    fn projections_match_whole_lines_and_struct_fields() {
        assert!(projects("device_id\nserial_number", "serial_number"));
        assert!(projects("serial_number", "serial_number"));
        assert!(projects("payload.secret", "payload"));
        assert!(!projects("serial_number_hash", "serial_number"));
        assert!(!projects("x_serial_number", "serial_number"));
        assert!(!projects("", "serial_number"));
        // A column whose own name holds a line break is still found.
        assert!(projects("a\nodd\nname\nb", "odd\nname"));
    }
}
