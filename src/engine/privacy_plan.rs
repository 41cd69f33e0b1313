//! The worker's own privacy check (issue 6): DuckDB binds and plans the query, and the plan must
//! read no hidden table, no hidden column and no catalog listing.
//!
//! Why the bound plan is the right place. The validator reads the SQL *text*, and every way of
//! reaching a column that text allows has to be foreseen there: an alias (`serial_number AS s`),
//! an expression (`upper(serial_number)`), a filter that returns no column at all (`WHERE
//! serial_number LIKE 'A%'`), a whole row packed into a struct (`SELECT d FROM devices d`,
//! `to_json(d)`), star and `COLUMNS(*)` expansions, positional references (`#3`), CTEs,
//! subqueries, joins, `SUMMARIZE`, and views stored in the database, whose text the validator
//! never sees. DuckDB's binder resolves all of them to the same thing: a scan of a base table
//! that reads named columns. So the physical plan (`EXPLAIN (FORMAT JSON)`) lists, per `SEQ_SCAN`,
//! the table (`catalog.schema.name`) and every column it reads: `Projections` for columns it
//! returns, `Filters` for columns read only to filter (pushed into the scan). Catalog listings
//! (`duckdb_columns()`, `information_schema.*`, `SHOW TABLES`, `pragma_table_info`, …) show up
//! as table-function operators named after the function. This check does not need to know how
//! the query got there.
//!
//! Three details make the plan trustworthy:
//! - **Data-independent.** DuckDB's statistics propagation prunes scans and filters from the plan
//!   when a column's min/max or null statistics prove a filter always false or always true
//!   (measured: `count(*) … WHERE serial_number LIKE 'A%'` planned as `EMPTY_RESULT`, no scan).
//!   A check on that plan would be an oracle on the hidden column's statistics. So under privacy
//!   rules the worker switches that optimizer off (`disabled_optimizers`, before the
//!   configuration is locked) for the check and for the query alike: the plan checked is the
//!   plan that runs, and what it reads depends on the SQL only. (With the whole optimizer off,
//!   DuckDB 2.0 prints no projections for a scan at all, so that is not an option.)
//! - **Fail closed.** Operators are an allowlist: a plan node that is neither a table scan nor a
//!   known row-shaping operator nor a table function that computes from its arguments only is
//!   refused, as is a scan whose table cannot be read, a plan of an unexpected shape, or an
//!   unknown catalog.
//! - **What the plan cannot show.** `DESCRIBE` is answered by the binder (the plan is a bare
//!   `COLUMN_DATA_SCAN`), so it is refused from DuckDB's own syntax tree (`json_serialize_sql`)
//!   instead. Binder errors can name columns (`column "x" must appear in the GROUP BY clause`),
//!   so an error that names a hidden object becomes the same refusal.
//!
//! What it does not cover: a query may still *name* a hidden column without reading it
//! (`typeof(serial_number)`, `LIMIT 0`), and a binder error differs from a refusal, so with the
//! validator switched off an agent can confirm that a hidden column exists; its values, and
//! everything in a hidden table, stay out of reach. Hiding names is the validator's job.

use std::collections::HashMap;

use duckdb::Connection;
use serde_json::Value as Json;

use super::errors::{query_error, worker_error};
use super::statement;
use crate::error::ErrorKind;
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};
use crate::protocol::WorkerError;

/// The optimizer that makes plans depend on column statistics; off under privacy rules.
pub(crate) const DATA_DEPENDENT_OPTIMIZERS: &str = "statistics_propagation";

/// The operator DuckDB names a scan of a stored table (sequential and index scans alike).
const TABLE_SCAN: &str = "SEQ_SCAN";

/// Operators that read nothing themselves: they shape their children's rows, or produce
/// constants the query wrote (`VALUES`, `SELECT 1`).
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

/// Table functions whose rows come from their arguments alone (plan names, upper case). Every
/// other table function, the catalog listings first of all, is refused under privacy rules.
const ARGUMENT_ONLY_TABLE_FUNCTIONS: &[&str] = &[
    "RANGE",
    "GENERATE_SERIES",
    "UNNEST",
    "JSON_EACH",
    "JSON_TREE",
    "DUCKDB_KEYWORDS",
];

/// `extra_info` keys of a table scan that name the table or carry no column names.
const SCAN_KEYS_WITHOUT_COLUMNS: &[&str] = &["Table", "Type", "Estimated Cardinality"];

/// The refusal; it names nothing and says what to do instead.
pub(crate) fn refusal() -> WorkerError {
    worker_error(ErrorKind::PolicyBlocked, PLAN_REFUSAL)
}

/// Refuse `sql` unless DuckDB's plan for it reads nothing `policy` hides. `conn` has the
/// database attached as `alias` and statistics propagation off ([`DATA_DEPENDENT_OPTIMIZERS`]).
///
/// `sql` may be `EXPLAIN [ANALYZE] <query>`: the query is what gets checked. DuckDB's parser
/// must see exactly one `SELECT` (the same rule as the statement check, enforced here too
/// because the plan is only meaningful for one statement).
///
/// `tree` is DuckDB's syntax tree of that query when the statement check already made it.
pub(crate) fn check(
    conn: &Connection,
    alias: &str,
    policy: &PrivacyPolicy,
    sql: &str,
    tree: Option<Json>,
) -> Result<(), WorkerError> {
    let query = statement::strip_explain(sql).unwrap_or(sql);
    let tree = match tree {
        Some(tree) => tree,
        None => statement::parse_single_select(conn, query)?,
    };
    if describes_something(&tree) {
        return Err(refusal());
    }
    let plan = match physical_plan(conn, query) {
        Ok(plan) => plan,
        Err(error) => return Err(scrubbed(conn, alias, policy, error)),
    };
    let mut columns = CatalogColumns::new(conn, alias);
    match check_nodes(&plan, alias, policy, &mut columns)? {
        Verdict::Allowed => Ok(()),
        Verdict::Refused => Err(refusal()),
    }
}

/// Whether DuckDB's syntax tree holds a `DESCRIBE`/`SHOW <name>`: the binder answers those
/// itself, so the plan shows only a `COLUMN_DATA_SCAN` of the answer. `SUMMARIZE` is a
/// `SHOW_REF` too, but it is planned as a scan of every column and checked like one.
fn describes_something(tree: &Json) -> bool {
    match tree {
        Json::Object(map) => {
            let show = map.get("type").and_then(Json::as_str) == Some("SHOW_REF")
                && map.get("show_type").and_then(Json::as_str) != Some("SUMMARY");
            show || map.values().any(describes_something)
        }
        Json::Array(items) => items.iter().any(describes_something),
        _ => false,
    }
}

/// DuckDB's physical plan for `query`: the parsed `physical_plan` array.
fn physical_plan(conn: &Connection, query: &str) -> Result<Json, WorkerError> {
    let explain = format!("EXPLAIN (FORMAT JSON) {query}");
    let mut stmt = conn.prepare(&explain).map_err(|e| query_error(&e))?;
    let rows: Vec<(String, String)> = stmt
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .and_then(|rows| rows.collect())
        .map_err(|e| query_error(&e))?;
    // Exactly one physical plan, as JSON: anything else is a shape this check does not know.
    let [(key, value)] = rows.as_slice() else {
        return Err(refusal());
    };
    if key != "physical_plan" {
        return Err(refusal());
    }
    match serde_json::from_str::<Json>(value) {
        Ok(plan @ Json::Array(_)) => Ok(plan),
        _ => Err(refusal()),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Allowed,
    Refused,
}

/// Walk the plan; every node must be understood and allowed.
fn check_nodes(
    plan: &Json,
    alias: &str,
    policy: &PrivacyPolicy,
    columns: &mut CatalogColumns<'_>,
) -> Result<Verdict, WorkerError> {
    let Json::Array(nodes) = plan else {
        return Ok(Verdict::Refused);
    };
    // An explicit stack: a deep plan cannot overflow the worker's stack.
    let mut stack: Vec<&Json> = nodes.iter().collect();
    while let Some(node) = stack.pop() {
        let Some(name) = node.get("name").and_then(Json::as_str) else {
            return Ok(Verdict::Refused);
        };
        let (Some(Json::Array(children)), Some(Json::Object(extra))) =
            (node.get("children"), node.get("extra_info"))
        else {
            return Ok(Verdict::Refused);
        };
        let name = name.trim();
        let verdict = if name == TABLE_SCAN {
            check_scan(extra, alias, policy, columns)?
        } else if extra.contains_key("Table") {
            // Something that names a table but is not the scan this check knows.
            Verdict::Refused
        } else if ROW_OPERATORS.contains(&name) || ARGUMENT_ONLY_TABLE_FUNCTIONS.contains(&name) {
            Verdict::Allowed
        } else {
            Verdict::Refused
        };
        if verdict == Verdict::Refused {
            return Ok(Verdict::Refused);
        }
        stack.extend(children.iter());
    }
    Ok(Verdict::Allowed)
}

/// One `SEQ_SCAN`: the table must be in the attached database and not hidden, and no hidden
/// column of it may appear in what the scan reads.
fn check_scan(
    extra: &serde_json::Map<String, Json>,
    alias: &str,
    policy: &PrivacyPolicy,
    columns: &mut CatalogColumns<'_>,
) -> Result<Verdict, WorkerError> {
    let Some(table) = extra.get("Table").and_then(Json::as_str) else {
        return Ok(Verdict::Refused);
    };
    let Some(parts) = split_qualified(table) else {
        return Ok(Verdict::Refused);
    };
    // DuckDB prints scans of an attached database's tables as `catalog.schema.name`.
    let [catalog, schema, name] = parts.as_slice() else {
        return Ok(Verdict::Refused);
    };
    if !catalog.eq_ignore_ascii_case(alias) || policy.hides_table(schema, name) {
        return Ok(Verdict::Refused);
    }
    let hidden: Vec<String> = columns
        .of(schema, name)?
        .iter()
        .filter(|c| policy.hides_column(schema, name, c))
        .map(|c| c.to_lowercase())
        .collect();
    for (key, value) in extra {
        if SCAN_KEYS_WITHOUT_COLUMNS.contains(&key.as_str()) {
            continue;
        }
        let Some(text) = info_text(value) else {
            return Ok(Verdict::Refused);
        };
        let text = text.to_lowercase();
        let reads_hidden = if key == "Projections" {
            hidden.iter().any(|h| projects(&text, h))
        } else {
            // Filters and anything else: free text that names columns.
            hidden.iter().any(|h| mentions(&text, h))
        };
        if reads_hidden {
            return Ok(Verdict::Refused);
        }
    }
    // A table scan always lists its projections (it supports projection pushdown); without
    // them this check could not see what the scan reads.
    if !extra.contains_key("Projections") {
        return Ok(Verdict::Refused);
    }
    Ok(Verdict::Allowed)
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

/// Every name `policy` hides in the attached database (lower case): hidden tables, and the
/// hidden columns of every table. Only the error path needs them all.
fn hidden_names(
    conn: &Connection,
    alias: &str,
    policy: &PrivacyPolicy,
) -> Result<Vec<String>, WorkerError> {
    let mut stmt = conn
        .prepare(
            "SELECT schema_name, table_name, column_name FROM duckdb_columns() \
             WHERE database_name = ?",
        )
        .map_err(|e| query_error(&e))?;
    let rows: Vec<(String, String, String)> = stmt
        .query_map([alias], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .and_then(|rows| rows.collect())
        .map_err(|e| query_error(&e))?;
    let mut names = Vec::new();
    for (schema, table, column) in rows {
        if policy.hides_table(&schema, &table) {
            names.push(table.to_lowercase());
        }
        if policy.hides_column(&schema, &table, &column) {
            names.push(column.to_lowercase());
        }
    }
    Ok(names)
}

/// An error from planning, unless it names something hidden: then the refusal. An unknown-name
/// error is left alone; the parent rewords those so they list no candidates.
fn scrubbed(
    conn: &Connection,
    alias: &str,
    policy: &PrivacyPolicy,
    error: WorkerError,
) -> WorkerError {
    if error.kind == ErrorKind::UnknownName {
        return error;
    }
    let message = error.message.to_lowercase();
    match hidden_names(conn, alias, policy) {
        Ok(names) if !names.iter().any(|n| mentions(&message, n)) => error,
        _ => refusal(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::tests::TempDir;
    use crate::engine::{Engine, EngineConfig};
    use serde_json::json;

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
        let db = dir.path().join("private.duckdb");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        conn.close().map_err(|(_, e)| e).unwrap();
        let config = EngineConfig {
            memory_limit: "1GB".into(),
            threads: 2,
            harden: true,
            full_warm_up: true,
        };
        let mut wal = db.as_os_str().to_owned();
        wal.push(".wal");
        let mut engine = Engine::open(&config, &db, std::path::Path::new(&wal)).unwrap();
        engine.enforce_privacy(&policy());
        engine.attach(&db).unwrap();
        (dir, engine)
    }

    #[test]
    fn the_plan_check_refuses_every_route_to_hidden_data_and_passes_visible_columns() {
        let (_dir, mut engine) = engine("plan");
        let refused = [
            "SELECT serial_number FROM devices",
            "SELECT serial_number AS s FROM devices",
            "SELECT upper(serial_number) FROM devices",
            "SELECT count(*) FROM devices WHERE serial_number LIKE 'A%'",
            "SELECT count(*) FROM devices WHERE serial_number LIKE 'S%'",
            "SELECT count(*) FROM devices WHERE serial_number IS NULL",
            "SELECT max(serial_number) FROM devices",
            "SELECT * FROM devices",
            "SELECT d FROM devices d",
            "SELECT to_json(d) FROM devices d",
            "SELECT COLUMNS(*) FROM devices",
            "SELECT #3 FROM devices",
            "WITH x AS (SELECT serial_number FROM devices) SELECT * FROM x",
            "WITH x AS MATERIALIZED (SELECT serial_number FROM devices) SELECT * FROM x",
            "SELECT * FROM (SELECT serial_number FROM devices)",
            "SELECT r.glucose FROM readings r JOIN devices d ON d.serial_number = r.secret_note",
            "SELECT label FROM device_labels",
            "SELECT model FROM devices ORDER BY serial_number",
            "SELECT payload.a FROM readings",
            "SELECT secret_note FROM readings",
            "SELECT id FROM raw_payloads",
            "SELECT count(*) FROM raw_payloads",
            "SELECT id FROM other.raw_payloads",
            "SUMMARIZE devices",
            "DESCRIBE devices",
            "DESCRIBE SELECT model FROM devices",
            "SHOW TABLES",
            "SELECT * FROM duckdb_columns()",
            "SELECT column_name FROM information_schema.columns",
            "SELECT * FROM duckdb_tables()",
            "SELECT * FROM pragma_table_info('devices')",
            "SELECT * FROM query_table('devices')",
            "EXPLAIN SELECT serial_number FROM devices",
            // A binder error that would name the hidden column.
            "SELECT * EXCLUDE (device_id) FROM devices GROUP BY model",
        ];
        for sql in refused {
            let error = engine.check_privacy(sql).expect_err(sql);
            assert_eq!(error.kind, ErrorKind::PolicyBlocked, "{sql}: {error:?}");
            assert_eq!(error.message, PLAN_REFUSAL, "{sql}");
        }
        let allowed = [
            "SELECT model FROM devices",
            "SELECT count(*) FROM devices",
            "SELECT glucose FROM readings WHERE glucose > 100",
            "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id)",
            "SELECT * FROM range(3)",
            "VALUES (1), (2)",
            "SELECT 1",
            "EXPLAIN SELECT model FROM devices",
            "WITH x AS (SELECT model FROM devices) SELECT count(*) FROM x",
            "SELECT model FROM devices ORDER BY device_id LIMIT 2",
            "SELECT model FROM devices WHERE device_id = 7",
            "SELECT model FROM devices WHERE device_id IN (SELECT device_id FROM readings)",
        ];
        for sql in allowed {
            assert_eq!(engine.check_privacy(sql), Ok(()), "{sql}");
        }
        // The checked plan is the plan that runs.
        let rows = engine
            .run_query("SELECT count(*) FROM devices", 10, 1 << 20)
            .unwrap();
        assert_eq!(rows.rows, vec![vec![json!(49)]]);
    }

    #[test]
    fn errors_are_duckdbs_unless_they_name_something_hidden() {
        let (_dir, mut engine) = engine("errors");
        let syntax = engine.check_privacy("SELECT FROM WHERE").unwrap_err();
        assert_eq!(syntax.kind, ErrorKind::SyntaxError);
        let unknown = engine
            .check_privacy("SELECT nope FROM devices")
            .unwrap_err();
        assert_eq!(unknown.kind, ErrorKind::UnknownName);
        let several = engine.check_privacy("SELECT 1; SELECT 2").unwrap_err();
        assert_eq!(several.kind, ErrorKind::MultipleStatements);
        let write = engine.check_privacy("DELETE FROM devices").unwrap_err();
        assert_eq!(write.kind, ErrorKind::PolicyBlocked);
        // Names a visible column (a hidden `id` of the hidden table does not count inside
        // `device_id`): DuckDB's own words.
        let grouped = engine
            .check_privacy("SELECT * FROM devices GROUP BY model")
            .unwrap_err();
        assert_eq!(grouped.kind, ErrorKind::DatabaseError, "{grouped:?}");
        assert!(grouped.message.contains("device_id"), "{grouped:?}");
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

    #[test]
    fn describe_and_show_are_found_anywhere_in_the_tree_but_summarize_is_left_to_the_plan() {
        let describe = json!({"statements": [{"node": {"from_table": {"type": "SUBQUERY",
            "subquery": {"from_table": {"type": "SHOW_REF", "show_type": "DESCRIBE"}}}}}]});
        assert!(describes_something(&describe));
        let summarize = json!({"from_table": {"type": "SHOW_REF", "show_type": "SUMMARY"}});
        assert!(!describes_something(&summarize));
        let plain = json!({"from_table": {"type": "BASE_TABLE", "table_name": "SHOW_REF"}});
        assert!(!describes_something(&plain));
    }
}
