//! The worker's check of DuckDB's bound plan, on every call: every operator, table, column,
//! function, cast and type DuckDB bound for the query must be allowed, or nothing runs. Under
//! the operator's privacy rules the query also may read no hidden table, no hidden column and no
//! catalog listing.
//!
//! Why the bound plan. The walks of the SQL (the parent's of sqlparser's tree, the worker's of
//! DuckDB's, `validate::tree`) see names as written; DuckDB's binder decides what they mean. A
//! name can be a CTE, a table, a view or macro stored in the database whose text no walk sees,
//! one of DuckDB's system views (`pg_settings` is a view over `duckdb_settings()`), or a file
//! (a replacement scan). The bound plan has all of that resolved: every table scan names its
//! catalog, schema and table and lists the columns it reads, every function call is bound to
//! the built-in it resolved to (macros expanded), and every value has its type.
//!
//! How it is read. DuckDB serialises the bound plan itself (`json_serialize_plan` with
//! `optimize := false`, called by the worker on its own connection): a structured tree of
//! logical operators and bound expressions, not text to match. The unoptimized plan is the
//! one: it holds every reference the query makes, even one the optimizer would drop (`LIMIT 0`
//! plans no scan once optimized), and planning it evaluates nothing (the optimizer's constant
//! folding would run functions on constant arguments). It depends on the SQL and the catalog
//! only, never on the data.
//!
//! The rules, each failing closed (anything this check does not recognise is refused):
//! - every operator is one of [`ROW_OPERATORS`] or a `LOGICAL_GET`;
//! - a `LOGICAL_GET` is a scan of a table of the attached database (`seq_scan`) or an allowed
//!   table function of `validate::function_policy`, the one table the two walks read too;
//! - every bound function, aggregate, window function, operator and cast has a row in that
//!   table, and its class allows it; one with no row, such as one a later DuckDB adds, is
//!   refused;
//! - every type is one of [`TYPE_IDS`]; `TYPE` values (types built from text) are not;
//! - every expression is of a class in [`EXPRESSION_CLASSES`];
//! - under privacy rules: a scan reads no hidden table and, by the column indexes DuckDB bound,
//!   no hidden column; nothing lists the catalog; every refusal is the same [`PLAN_REFUSAL`],
//!   naming nothing.
//!
//! Under privacy rules the binder sees a shadow catalog in which hidden objects do not exist
//! (`shadow`): a hidden name fails like a made-up one, and expansions give the visible columns.
//! What the shadow cannot hide is a view or macro stored in the database, whose text may read
//! hidden objects; this check is what stops those, from the column bindings, and it holds even
//! if a query names the private catalog.
//!
//! DuckDB's own errors pass unchanged: matching hidden names in their text (which the agent
//! writes into, `struct_extract({'a': 1}, 'raw_events')`) would itself tell hidden names apart.
//! The worker rewords "not found" errors afterwards (`Engine::private_error`), whatever they
//! name.

use duckdb::Connection;
use serde_json::{Map, Value as Json};

use super::errors::{query_error, worker_error};
use super::statement;
use crate::error::ErrorKind;
use crate::privacy::{PLAN_REFUSAL, PrivacyPolicy};
use crate::protocol::Failure;
use crate::validate::functions::{self, Class};
use crate::validate::refusals;
use crate::validate::tree::{self, TreeFacts};

/// The optimizer that makes plans depend on column statistics; off under privacy rules, so
/// what a query costs does not depend on statistics of the tables it reads.
pub(crate) const DATA_DEPENDENT_OPTIMIZERS: &str = "statistics_propagation";

/// Logical operators that read nothing themselves: they shape their children's rows, or produce
/// rows the query or DuckDB's binder wrote (`VALUES`, `DESCRIBE`'s answer). DuckDB 2.0's names
/// (`LogicalOperatorToString`); writes, `COPY`, `ATTACH`, `PRAGMA`, `SET`, `EXPLAIN`, … are not
/// here and so are refused.
const ROW_OPERATORS: &[&str] = &[
    "LOGICAL_PROJECTION",
    "LOGICAL_FILTER",
    "LOGICAL_AGGREGATE_AND_GROUP_BY",
    "LOGICAL_WINDOW",
    "LOGICAL_UNNEST",
    "LOGICAL_LIMIT",
    "LOGICAL_ORDER_BY",
    "LOGICAL_TOP_N",
    "LOGICAL_DISTINCT",
    "LOGICAL_SAMPLE",
    "LOGICAL_PIVOT",
    "LOGICAL_CHUNK_GET",
    "LOGICAL_DELIM_GET",
    "LOGICAL_EXPRESSION_GET",
    "LOGICAL_DUMMY_SCAN",
    "LOGICAL_EMPTY_RESULT",
    "LOGICAL_CTE_REF",
    "LOGICAL_COMPARISON_JOIN",
    "LOGICAL_ANY_JOIN",
    "LOGICAL_DELIM_JOIN",
    "LOGICAL_DEPENDENT_JOIN",
    "LOGICAL_CROSS_PRODUCT",
    "LOGICAL_POSITIONAL_JOIN",
    "LOGICAL_ASOF_JOIN",
    "LOGICAL_UNION",
    "LOGICAL_EXCEPT",
    "LOGICAL_INTERSECT",
    "LOGICAL_RECURSIVE_CTE",
    "LOGICAL_MATERIALIZED_CTE",
    "LOGICAL_SECURE_VIEW",
];

/// The operator of a scan or a table function.
const GET: &str = "LOGICAL_GET";

/// Bound expression classes (`ExpressionClassToString`). A subquery never appears as one in a
/// plan (the planner turns it into joins), so it is not here.
const EXPRESSION_CLASSES: &[&str] = &[
    "BOUND_AGGREGATE",
    "BOUND_BETWEEN",
    "BOUND_CASE",
    "BOUND_CAST",
    "BOUND_COLUMN_REF",
    "BOUND_COMPARISON",
    "BOUND_CONJUNCTION",
    "BOUND_CONSTANT",
    "BOUND_DEFAULT",
    "BOUND_FUNCTION",
    "BOUND_LAMBDA",
    "BOUND_LAMBDA_REF",
    "BOUND_OPERATOR",
    "BOUND_PARAMETER",
    "BOUND_REF",
    "BOUND_UNNEST",
    "BOUND_WINDOW",
];

/// Window functions DuckDB binds by expression type rather than by name (`ExpressionType`);
/// all compute over the window's rows alone. A window aggregate carries its function's name
/// and is checked as a function.
const WINDOW_TYPES: &[&str] = &[
    "WINDOW_AGGREGATE",
    "WINDOW_ROW_NUMBER",
    "WINDOW_RANK",
    "WINDOW_RANK_DENSE",
    "WINDOW_NTILE",
    "WINDOW_PERCENT_RANK",
    "WINDOW_CUME_DIST",
    "WINDOW_LEAD",
    "WINDOW_LAG",
    "WINDOW_FIRST_VALUE",
    "WINDOW_LAST_VALUE",
    "WINDOW_NTH_VALUE",
    "WINDOW_FILL",
];

/// Type ids a plan may carry (`LogicalTypeIdToString`): DuckDB's data types and the internal
/// ones its binder uses for arguments and lambdas. `TYPE` (a type as a value, built from text and
/// resolved in the catalog at run time) and `USER` (a type name not yet bound) are not here.
const TYPE_IDS: &[&str] = &[
    "BOOLEAN",
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
    "BIGNUM",
    "DECIMAL",
    "FLOAT",
    "DOUBLE",
    "VARCHAR",
    "CHAR",
    "BLOB",
    "BIT",
    "UUID",
    "DATE",
    "TIME",
    "TIME_NS",
    "TIME WITH TIME ZONE",
    "TIMESTAMP",
    "TIMESTAMP_S",
    "TIMESTAMP_MS",
    "TIMESTAMP_NS",
    "TIMESTAMP WITH TIME ZONE",
    "TIMESTAMPTZ_NS",
    "INTERVAL",
    "LIST",
    "ARRAY",
    "STRUCT",
    "TUPLE",
    "MAP",
    "UNION",
    "ENUM",
    "VARIANT",
    "GEOMETRY",
    "NULL",
    "ANY",
    "INVALID",
    "UNKNOWN",
    "LAMBDA",
    "STRING_LITERAL",
    "INTEGER_LITERAL",
    "AGGREGATE_STATE",
    "POINTER",
    "VALIDITY",
];

/// The column index DuckDB binds for a table's row id (`COLUMN_IDENTIFIER_ROW_ID`): `count(*)`
/// reads it, and it holds no column's data.
const ROW_ID_COLUMN: u64 = u64::MAX;

/// The privacy refusal; it names nothing and says what to do instead.
pub(crate) fn privacy_refusal() -> Failure {
    Failure {
        refusal: Some(crate::protocol::WorkerRefusal::PrivacyPlan),
        ..worker_error(ErrorKind::PolicyBlocked, PLAN_REFUSAL)
    }
}

/// What the plan check enforces beyond the base rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PlanRules<'a> {
    /// The catalog name the database file is attached as (under privacy rules, the private one).
    pub(crate) alias: &'a str,
    /// The operator's privacy rules, when there are any.
    pub(crate) privacy: Option<&'a PrivacyPolicy>,
}

/// Why a plan is refused, before it becomes an error: under privacy rules every reason becomes
/// the one [`PLAN_REFUSAL`].
enum Refused {
    /// A reason worth telling the agent (the refusal the parent would give).
    Because(Failure),
    /// The plan has a shape, or binds something, this check does not allow.
    Unknown(String),
}

impl Refused {
    fn into_error(self, rules: &PlanRules<'_>) -> Failure {
        if rules.privacy.is_some() {
            return privacy_refusal();
        }
        match self {
            Refused::Because(error) => error,
            Refused::Unknown(what) => Failure {
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

/// Refuse `sql` unless DuckDB's bound plan for it passes `rules` (see the module
/// documentation). `conn` has the database attached as `rules.alias`.
///
/// `sql` may be `EXPLAIN [ANALYZE] <query>`: the query is what gets checked. `facts` is what
/// the worker's walk of DuckDB's syntax tree found, when it ran (not under the test bypass).
pub(crate) fn check(
    conn: &Connection,
    rules: &PlanRules<'_>,
    sql: &str,
    facts: Option<TreeFacts>,
) -> Result<(), Failure> {
    let query = statement::checked_query(sql);
    let query = query.as_ref();
    // DuckDB's serialiser must be given exactly one SELECT. The walk established that; without
    // it (test bypass) this check asks DuckDB's parser itself, so it holds on its own.
    let facts = match facts {
        Some(facts) => facts,
        None => {
            let tree = statement::parse_single_select(conn, query)?;
            refuse_written_functions(&tree).map_err(|refused| refused.into_error(rules))?;
            tree::facts(&tree)
        }
    };
    // A relation named like a file binds to the database's table or view of that name, if
    // there is one; otherwise DuckDB would try the file, which binding itself would read.
    if let Some(written) = first_file_outside(conn, rules.alias, &facts.file_like)? {
        return Err(Refused::Because(refusals::file_relation(&written).into()).into_error(rules));
    }
    // DuckDB 2.0 cannot serialise the plan of a recursive CTE with `USING KEY` ("Failed to
    // cast expression to type"); the same query without its key lists it can.
    let serialised = match bound_plan(conn, query) {
        Err(PlanError::DuckDb(error)) => match without_recursion_keys(conn, query) {
            Some(without_keys) => bound_plan(conn, &without_keys),
            None => Err(PlanError::DuckDb(error)),
        },
        other => other,
    };
    let plan = match serialised {
        Ok(plan) => plan,
        Err(PlanError::DuckDb(serialise_error)) => {
            // DuckDB could not bind the query: the agent should see DuckDB's own error for its
            // own SQL. Preparing the query binds and plans it without running it; it must fail
            // too, and if it does not, this check does not know why, so it refuses.
            return Err(match conn.prepare(query) {
                Err(own) => query_error(&own),
                Ok(_) => Refused::Unknown(format!(
                    "a plan DuckDB could not serialise ({})",
                    serialise_error.lines().next().unwrap_or_default()
                ))
                .into_error(rules),
            });
        }
        Err(PlanError::Shape(what)) => return Err(Refused::Unknown(what).into_error(rules)),
    };
    let mut walk = PlanWalk {
        rules,
        shown_tables: 0,
    };
    walk.check(&plan)
        .map_err(|refused| refused.into_error(rules))?;
    // `SHOW <name>` of a table plans as a `pragma_show` scan; of a setting (`SHOW threads`),
    // DuckDB's binder answers with the setting's value and the plan shows only that constant.
    if walk.shown_tables < facts.shows_by_name {
        let refused = refusals::denied("SHOW <setting>", functions::READS_SETTINGS);
        return Err(Refused::Because(refused.into()).into_error(rules));
    }
    Ok(())
}

enum PlanError {
    /// DuckDB could not bind the query; its message.
    DuckDb(String),
    /// DuckDB serialised something that is not the one plan this check reads.
    Shape(String),
}

/// The functions the query writes, refused by the policy before DuckDB binds anything: DuckDB's
/// binder evaluates some calls while it binds (a call with constant arguments that another
/// function's argument must be cast from, `lower(json_serialize_plan('…'))`), so such a call
/// runs before any plan exists and leaves only its result in the plan. The worker's walk of the
/// parse tree refuses these too; this keeps the plan check whole on its own.
fn refuse_written_functions(tree: &Json) -> Result<(), Refused> {
    let mut stack = vec![tree];
    while let Some(value) = stack.pop() {
        match value {
            Json::Object(map) => {
                if let Some(Json::String(name)) = map.get("function_name")
                    && let Some(denial) = functions::denial(name)
                {
                    let name = name.to_ascii_lowercase();
                    return Err(Refused::Because(refusals::denied(&name, denial).into()));
                }
                stack.extend(map.values());
            }
            Json::Array(items) => stack.extend(items.iter()),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
    Ok(())
}

/// `query` with the key lists of its recursive CTEs (`USING KEY (…)`) blanked out, when it has
/// any, for the plan check to read in its place.
///
/// The key lists name columns of the CTE itself; everything else the query binds (scans,
/// functions, casts, types, stored views and macros) is the same with or without them, and a
/// `recurring.<cte>` reference binds to the same CTE's rows. So the plan without the keys holds
/// every object this check judges. Each `USING KEY (…)` is found from where DuckDB's syntax
/// tree places its keys and replaced by as many spaces, and DuckDB's tree of the result must be
/// exactly the original tree without its keys: nothing else of the query can change on the way.
/// Any other shape (a key with aggregates, a comment inside the clause) gives `None`.
fn without_recursion_keys(conn: &Connection, query: &str) -> Option<String> {
    /// Empty every key list, noting where DuckDB found each key in the text.
    fn strip(value: &mut Json, keys_at: &mut Vec<usize>) -> Option<()> {
        match value {
            Json::Object(map) => {
                if let Some(Json::Array(aggregates)) = map.get("payload_aggregates")
                    && !aggregates.is_empty()
                {
                    return None;
                }
                if let Some(Json::Array(keys)) = map.get_mut("key_targets") {
                    for key in keys.drain(..) {
                        let at = key.get("query_location").and_then(Json::as_u64)?;
                        keys_at.push(usize::try_from(at).ok()?);
                    }
                }
                map.values_mut().try_for_each(|v| strip(v, keys_at))
            }
            Json::Array(items) => items.iter_mut().try_for_each(|v| strip(v, keys_at)),
            _ => Some(()),
        }
    }
    /// The tree without source positions.
    fn positionless(value: &mut Json) {
        match value {
            Json::Object(map) => {
                map.retain(|key, _| !key.starts_with("query_location"));
                map.values_mut().for_each(positionless);
            }
            Json::Array(items) => items.iter_mut().for_each(positionless),
            _ => {}
        }
    }
    let mut stripped = statement::parse_single_select(conn, query).ok()?;
    let mut keys_at = Vec::new();
    strip(&mut stripped, &mut keys_at)?;
    if keys_at.is_empty() {
        return None;
    }
    let clauses: std::collections::BTreeSet<(usize, usize)> = keys_at
        .into_iter()
        .map(|at| using_key_clause(query.as_bytes(), at))
        .collect::<Option<_>>()?;
    let mut text = query.as_bytes().to_vec();
    for (start, end) in clauses {
        text[start..=end].fill(b' ');
    }
    let text = String::from_utf8(text).ok()?;
    let mut read_back = statement::parse_single_select(conn, &text).ok()?;
    positionless(&mut stripped);
    positionless(&mut read_back);
    (read_back == stripped).then_some(text)
}

/// The byte range of the `USING KEY (…)` clause whose list holds the key at byte `key_at`: the
/// nearest `(` before it, preceded (across whitespace only) by `KEY` and `USING`, to the `)`
/// that closes it (outside double quotes).
fn using_key_clause(text: &[u8], key_at: usize) -> Option<(usize, usize)> {
    let open = text.get(..key_at)?.iter().rposition(|&b| b == b'(')?;
    let word_before = |end: usize, word: &[u8]| -> Option<usize> {
        let end = text[..end].iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
        let start = end.checked_sub(word.len())?;
        let boundary = start == 0 || text[start - 1].is_ascii_whitespace();
        (boundary && text[start..end].eq_ignore_ascii_case(word)).then_some(start)
    };
    let key = word_before(open, b"KEY")?;
    let using = word_before(key, b"USING")?;
    let mut quoted = false;
    for (offset, &b) in text[open..].iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b')' if !quoted => return Some((using, open + offset)),
            _ => {}
        }
    }
    None
}

/// The first of the relations named like files (`TreeFacts::file_like`) that is no table or
/// view of the database attached as `alias`, as written. DuckDB's binder takes a relation of
/// the database before any replacement scan, so only such a name could be read as a file.
/// Both the worker's walk (once the database is attached) and this plan check ask it, so each
/// holds alone.
pub(super) fn first_file_outside(
    conn: &Connection,
    alias: &str,
    file_like: &[(String, String, String)],
) -> Result<Option<String>, Failure> {
    for name in file_like {
        let (catalog, schema, table) = name;
        let in_the_database = catalog.is_empty() || catalog.eq_ignore_ascii_case(alias);
        if !in_the_database || !is_relation_of(conn, alias, schema, table)? {
            return Ok(Some(written_name(name)));
        }
    }
    Ok(None)
}

/// A relation's (catalog, schema, table) as written: its non-empty parts joined by dots.
pub(super) fn written_name((catalog, schema, table): &(String, String, String)) -> String {
    [catalog, schema, table]
        .iter()
        .filter(|part| !part.is_empty())
        .map(|part| part.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether `schema.table` (`main` when no schema is written) is a table or view of the
/// database attached as `alias`, as DuckDB's binder looks names up: ASCII case-insensitively.
fn is_relation_of(
    conn: &Connection,
    alias: &str,
    schema: &str,
    table: &str,
) -> Result<bool, Failure> {
    let schema = if schema.is_empty() { "main" } else { schema };
    conn.prepare_cached(
        "SELECT count(*) > 0 FROM (
             SELECT schema_name, table_name AS name FROM duckdb_tables() WHERE database_name = $1
             UNION ALL
             SELECT schema_name, view_name FROM duckdb_views() WHERE database_name = $1
         ) WHERE lower(schema_name) = lower($2) AND lower(name) = lower($3)",
    )
    .and_then(|mut stmt| stmt.query_row([alias, schema, table], |row| row.get(0)))
    .map_err(|e| query_error(&e))
}

/// DuckDB's unoptimized bound plan for `query`, as DuckDB serialises it.
fn bound_plan(conn: &Connection, query: &str) -> Result<Json, PlanError> {
    let text: String = conn
        .prepare_cached("SELECT json_serialize_plan(?, optimize := false)")
        .and_then(|mut stmt| stmt.query_row([query], |row| row.get(0)))
        .map_err(|e| PlanError::DuckDb(query_error(&e).message))?;
    let mut reader = serde_json::Deserializer::from_str(&text);
    // A plan nests as deep as the query's expressions do; the worker's threads have the stack
    // for it (the checker's is large, see `checker`).
    reader.disable_recursion_limit();
    let serialised: Json = serde::Deserialize::deserialize(&mut reader)
        .map_err(|_| PlanError::Shape("a plan that is not JSON".into()))?;
    let Json::Object(mut serialised) = serialised else {
        return Err(PlanError::Shape("a plan that is not a JSON object".into()));
    };
    match serialised.get("error") {
        Some(Json::Bool(false)) => {}
        Some(Json::Bool(true)) => {
            let message = serialised
                .get("error_message")
                .and_then(Json::as_str)
                .unwrap_or_default();
            return Err(PlanError::DuckDb(message.to_owned()));
        }
        _ => return Err(PlanError::Shape("a plan without its error flag".into())),
    }
    match serialised.remove("plans") {
        Some(Json::Array(mut plans)) if plans.len() == 1 => Ok(plans.remove(0)),
        Some(Json::Array(plans)) => Err(PlanError::Shape(format!("{} plans", plans.len()))),
        _ => Err(PlanError::Shape("a plan without its plans".into())),
    }
}

/// One walk over a plan.
struct PlanWalk<'r> {
    rules: &'r PlanRules<'r>,
    /// How many `SHOW <table>` scans (`pragma_show`) the plan holds.
    shown_tables: u32,
}

impl PlanWalk<'_> {
    /// Check every object of the plan: operators, expressions and types are recognised by
    /// their keys wherever they sit, so nothing is skipped for being in a place this check did
    /// not expect. An explicit stack: a deep plan cannot overflow the worker's stack.
    fn check(&mut self, plan: &Json) -> Result<(), Refused> {
        let mut stack = vec![plan];
        while let Some(value) = stack.pop() {
            match value {
                Json::Object(map) => {
                    self.object(map)?;
                    stack.extend(map.values());
                }
                Json::Array(items) => stack.extend(items.iter()),
                Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
            }
        }
        Ok(())
    }

    fn object(&mut self, map: &Map<String, Json>) -> Result<(), Refused> {
        if let Some(class) = map.get("expression_class") {
            return self.expression(class, map);
        }
        if let Some(Json::String(operator)) = map.get("type")
            && operator.starts_with("LOGICAL_")
        {
            return self.operator(operator, map);
        }
        if let (Some(id), true) = (map.get("id"), map.contains_key("type_info")) {
            return check_type(id);
        }
        if map.contains_key("qname") {
            return Err(Refused::Unknown(
                "a function bound outside an expression".into(),
            ));
        }
        Ok(())
    }

    fn expression(&mut self, class: &Json, map: &Map<String, Json>) -> Result<(), Refused> {
        let Some(class) = class.as_str().filter(|c| EXPRESSION_CLASSES.contains(c)) else {
            return Err(Refused::Unknown(format!("an expression of class {class}")));
        };
        match map.get("qname") {
            Some(qname) => self.function(qname, true).map(drop),
            None if class == "BOUND_WINDOW" => {
                let kind = map.get("type").and_then(Json::as_str).unwrap_or_default();
                if WINDOW_TYPES.contains(&kind) && kind != "WINDOW_AGGREGATE" {
                    Ok(())
                } else {
                    Err(Refused::Unknown(format!(
                        "a window function of type {kind}"
                    )))
                }
            }
            None if matches!(class, "BOUND_FUNCTION" | "BOUND_AGGREGATE") => {
                Err(Refused::Unknown("a function bound without its name".into()))
            }
            None => Ok(()),
        }
    }

    /// A bound function's name (`qname.path`: `[catalog, schema, name]` for a catalog function,
    /// `[name]` for an operator or cast), checked against the policy.
    fn function(&mut self, qname: &Json, in_expression: bool) -> Result<&'static str, Refused> {
        let path: Option<Vec<&str>> = qname
            .get("path")
            .and_then(Json::as_array)
            .and_then(|parts| parts.iter().map(Json::as_str).collect());
        let name = match path.as_deref() {
            Some([name]) => *name,
            // Built-ins live in the `system` catalog; a function of any other catalog is not one.
            Some(["system", _schema, name]) => *name,
            _ => return Err(Refused::Unknown(format!("the function {qname}"))),
        };
        let Some((name, class)) = functions::bound_function(name, in_expression) else {
            return Err(Refused::Unknown(format!("the function {name}")));
        };
        if let Some(denial) = class.denial() {
            return Err(Refused::Because(refusals::denied(name, denial).into()));
        }
        if class == Class::ListsCatalog && self.rules.privacy.is_some() {
            return Err(Refused::Because(
                refusals::catalog_listing(&format!("{name}()")).into(),
            ));
        }
        Ok(name)
    }

    fn operator(&mut self, operator: &str, map: &Map<String, Json>) -> Result<(), Refused> {
        if operator == GET {
            return self.get(map);
        }
        if ROW_OPERATORS.contains(&operator) {
            Ok(())
        } else {
            Err(Refused::Unknown(format!("the operator {operator}")))
        }
    }

    /// A scan of a stored table, or a table function.
    fn get(&mut self, map: &Map<String, Json>) -> Result<(), Refused> {
        let Some(qname) = map.get("qname") else {
            return Err(Refused::Unknown("a scan without its function".into()));
        };
        match self.function(qname, false)? {
            "seq_scan" => self.table_scan(map),
            "pragma_show" if self.rules.privacy.is_some() => Err(Refused::Because(
                refusals::catalog_listing("SHOW <table>").into(),
            )),
            "pragma_show" => {
                self.shown_tables += 1;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// One scan of a stored table: of the attached database; under privacy rules not of a
    /// hidden table, and no column index DuckDB bound may be a hidden column's.
    fn table_scan(&self, map: &Map<String, Json>) -> Result<(), Refused> {
        let text = |key: &str| {
            map.get("function_data")
                .and_then(|data| data.get(key))
                .and_then(Json::as_str)
        };
        let (Some(catalog), Some(schema), Some(table)) =
            (text("catalog"), text("schema"), text("table"))
        else {
            return Err(Refused::Unknown("a table scan without its table".into()));
        };
        if !catalog.eq_ignore_ascii_case(self.rules.alias) {
            let written = format!("{catalog}.{schema}.{table}");
            return Err(Refused::Because(
                refusals::unknown_relation(&written).into(),
            ));
        }
        let Some(policy) = self.rules.privacy else {
            return Ok(());
        };
        let scan = || Refused::Unknown(format!("a scan of {schema}.{table}"));
        if policy.hides_table(schema, table) {
            return Err(scan());
        }
        let (Some(Json::Array(names)), Some(Json::Array(indexes))) =
            (map.get("names"), map.get("column_indexes"))
        else {
            return Err(scan());
        };
        for index in indexes {
            let Some(at) = index.get("index").and_then(Json::as_u64) else {
                return Err(scan());
            };
            if at == ROW_ID_COLUMN {
                continue;
            }
            let column = usize::try_from(at)
                .ok()
                .and_then(|at| names.get(at))
                .and_then(Json::as_str);
            match column {
                Some(column) if !policy.hides_column(schema, table, column) => {}
                _ => return Err(scan()),
            }
        }
        Ok(())
    }
}

/// A type in the plan: its id must be one this check knows.
fn check_type(id: &Json) -> Result<(), Refused> {
    match id.as_str() {
        Some(id) if TYPE_IDS.contains(&id) => Ok(()),
        _ => Err(Refused::Unknown(format!("the type {id}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use crate::engine::tests::{TempDir, config, make_db};
    use crate::engine::wal_path;

    /// The fixture of `tests/it/privacy.rs`, plus a view over the hidden column and a table in a
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
            // The unoptimized plan binds every column of a view: one over hidden data is
            // refused as a whole, even where the query reads only a visible column.
            "SELECT device_id FROM device_labels",
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
            let a = engine.private_error(a, hidden);
            let b = engine.check_plan(made_up).unwrap_err();
            let b = engine.private_error(b, made_up);
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

    /// The same fixture without privacy rules.
    fn open_engine(tag: &str) -> (TempDir, Engine) {
        let dir = TempDir::new(tag);
        let db = make_db(&dir, "open.duckdb", SCHEMA);
        let mut engine = Engine::open(&config("1GiB"), &db, &wal_path(&db)).unwrap();
        engine.attach(&db).unwrap();
        (dir, engine)
    }

    #[test]
    fn functions_are_checked_where_duckdb_bound_them_even_inside_a_string_or_a_view() {
        let (_dir, mut engine) = open_engine("bound");
        for (sql, construct) in [
            (
                "SELECT json_serialize_plan('SELECT current_setting(''allowed_paths'')', optimize := true)",
                "json_serialize_plan",
            ),
            (
                "SELECT json_serialize_sql('SELECT 1')",
                "json_serialize_sql",
            ),
            ("SELECT current_setting('threads')", "current_setting"),
            (
                "SELECT lower(current_setting('threads')::VARCHAR)",
                "current_setting",
            ),
            (
                "SELECT x FROM (SELECT json_serialize_sql('SELECT 1') AS x)",
                "json_serialize_sql",
            ),
        ] {
            let error = engine.check_plan(sql).expect_err(sql);
            assert_eq!(error.kind, ErrorKind::PolicyBlocked, "{sql}: {error:?}");
            assert_eq!(
                error.construct.as_deref(),
                Some(construct),
                "{sql}: {error:?}"
            );
        }
        for sql in [
            "SELECT upper(model), length(model)::VARCHAR FROM devices",
            "SELECT uuid(), random(), now()",
            "SELECT list_transform([1, 2], lambda x: x + 1)",
            "SELECT * FROM repeat(0, 3)",
            "SELECT * FROM test_all_types()",
            "SELECT count(*) FROM pragma_table_info('devices')",
            "SELECT row_number() OVER (ORDER BY device_id), lag(model) OVER () FROM devices",
            "SELECT * FROM devices WHERE device_id IN (SELECT device_id FROM readings)",
            "SUMMARIZE devices",
            "DESCRIBE devices",
            "SHOW TABLES",
        ] {
            assert_eq!(engine.check_plan(sql), Ok(()), "{sql}");
        }
        // A type built from text is refused, by its function or by the `TYPE` value it makes.
        let typed = engine
            .check_plan("SELECT make_type('VARCHAR')")
            .unwrap_err();
        assert_eq!(typed.kind, ErrorKind::PolicyBlocked, "{typed:?}");
        // A setting read by `SHOW <name>` is answered by the binder; the plan shows only that.
        let setting = engine.check_plan("SHOW threads").unwrap_err();
        assert_eq!(setting.kind, ErrorKind::PolicyBlocked, "{setting:?}");
    }

    #[test]
    fn under_privacy_rules_columns_read_come_from_bindings_not_from_literal_words() {
        let (_dir, mut engine) = engine("words");
        for word in ["serial_number", "serial_numbez", "secret_note", "payload"] {
            for sql in [
                format!("SELECT count(*) FROM devices WHERE model = '{word}'"),
                format!("SELECT count(*) FROM devices WHERE model IN ('a', '{word}', 'b')"),
                format!("SELECT glucose FROM readings WHERE glucose::VARCHAR = '{word}'"),
            ] {
                assert_eq!(engine.check_plan(&sql), Ok(()), "{sql}");
            }
            // A view over a hidden column binds it even where the query reads only its visible
            // column: refused as a whole, whatever the words.
            let sql =
                format!("SELECT device_id FROM device_labels WHERE device_id::VARCHAR = '{word}'");
            assert_eq!(engine.check_plan(&sql), Err(privacy_refusal()), "{sql}");
        }
    }

    /// Shapes no real plan of today's DuckDB has, as a later DuckDB could bind them: each is
    /// refused, and an object that merely looks like part of a plan cannot hide what is inside it.
    #[test]
    fn anything_the_check_does_not_recognise_is_refused() {
        let rules = PlanRules {
            alias: "db",
            privacy: None,
        };
        let function = |path: Json| {
            serde_json::json!({"type": "LOGICAL_PROJECTION", "children": [], "expressions": [
                {"expression_class": "BOUND_FUNCTION", "type": "FUNCTION", "qname": {"path": path},
                 "return_type": {"id": "INTEGER", "type_info": null}, "children": []}]})
        };
        let walk = |plan: &Json| {
            PlanWalk {
                rules: &rules,
                shown_tables: 0,
            }
            .check(plan)
            .is_ok()
        };
        assert!(walk(&function(serde_json::json!([
            "system", "main", "abs"
        ]))));
        assert!(!walk(&function(serde_json::json!([
            "system",
            "main",
            "a_function_added_later"
        ]))));
        assert!(!walk(&function(serde_json::json!([
            "other", "main", "abs"
        ]))));
        assert!(!walk(&function(serde_json::json!([
            "system",
            "main",
            "json_serialize_plan"
        ]))));
        assert!(!walk(
            &serde_json::json!({"type": "LOGICAL_COPY_TO_FILE", "children": []})
        ));
        assert!(!walk(&serde_json::json!({"id": "TYPE", "type_info": null})));
        assert!(!walk(
            &serde_json::json!({"expression_class": "BOUND_SUBQUERY"})
        ));
        assert!(!walk(&serde_json::json!({"qname": {"path": ["abs"]}})));
        assert!(!walk(
            &serde_json::json!({"type": "LOGICAL_GET", "qname": {"path": ["seq_scan"]},
            "function_data": {"catalog": "elsewhere", "schema": "main", "table": "t"}})
        ));
        // A function inside a constant-looking object is still seen.
        assert!(!walk(&serde_json::json!({"value": {"nested": [function(
            serde_json::json!(["system", "main", "current_setting"])
        )]}})));
    }
}
