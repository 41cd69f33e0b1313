//! The second opinion: DuckDB's own parser decides whether the SQL is one read-only statement,
//! and its syntax tree goes through the worker's walk (`validate::tree`).
//!
//! DuckDB's `json_serialize_sql` (json extension, built in) parses with the very parser that
//! will run the query and serializes only `SELECT` statements; anything else comes back as an
//! error object. DuckDB turns `DESCRIBE`, `SHOW`, `SUMMARIZE`, `FROM t` and `VALUES` into
//! `SELECT` statements, so they pass; writes, DDL, `COPY`, `ATTACH`, `SET`, `PRAGMA`, `CALL`,
//! `INSTALL`/`LOAD`, transactions do not. `EXPLAIN` is not serializable: it is accepted only in
//! the form `EXPLAIN [ANALYZE] [(options)] <one SELECT>` at the very start of the text, with the
//! rest checked the same way. `CALL f(…)`, which DuckDB binds as `SELECT * FROM f(…)`, is
//! checked in that form.

use std::borrow::Cow;

use duckdb::Connection;
use serde_json::Value as Json;

use super::errors::{query_error, worker_error};
use super::own_sql::{Cache, OwnSql, Prepared};
use crate::protocol::Failure;
use duckgate_plan_reader::DatabaseToken;
use duckgate_validate::error::{ErrorKind, messages};
use duckgate_validate::validate::sql_prefix;
use duckgate_validate::validate::tree::{self, TreeFacts, TreeRules};

/// A statement the worker's checks have passed, as DuckDB will prepare it: the only thing
/// [`Engine::prepare_checked`](super::Engine) takes, so no text reaches DuckDB's prepare that a check
/// did not read.
///
/// Only the checks make one: the walk of DuckDB's syntax tree ([`check`]), the plan check's
/// own reading of that tree when the walk is switched off in a test ([`parse_for_plan_check`]),
/// and, for the engine's own fixed statements, [`CheckedQuery::own`], which takes only text
/// compiled into duckgate. A statement derived from one (rendered, described, explained) is
/// built from DuckDB's rendering of the checked syntax tree and checked again the same way
/// ([`CheckedQuery::checks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedQuery {
    /// What DuckDB prepares: the text as written.
    sql: String,
    /// The one `SELECT` the checks read: the explained query of an `EXPLAIN`, the `SELECT` a
    /// `CALL` binds as, otherwise `sql` itself.
    select: String,
    /// What the walk of DuckDB's syntax tree found in `select`.
    facts: TreeFacts,
    /// Which checks passed it; a statement derived from it must pass the same.
    checks: Checks,
}

/// Which checks a [`CheckedQuery`] passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// DuckDB's parser and the worker's walk of its syntax tree (`validate::tree`).
    Walked,
    /// DuckDB's parser and the plan check's own reading of the tree (functions it must refuse
    /// before binding, relations named like files): the walk was switched off in a test.
    PlanCheckParsed,
    /// The engine's own statement, compiled into duckgate: nothing the agent wrote.
    Own,
    /// None: a test switched every check of the SQL off.
    #[cfg(any(test, feature = "test-bypass"))]
    Off,
}

/// What the worker may prepare.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sql<'q> {
    /// The agent's query, as the checks made it.
    Checked(&'q CheckedQuery),
    /// One of the engine's own statements.
    Own(&'q OwnSql),
}

/// The one place a worker hands DuckDB SQL to prepare: a checked query or one of the engine's
/// own statements (see `own_sql`).
pub(crate) fn prepare_sql<'c>(
    conn: &'c Connection,
    sql: Sql<'_>,
    cache: Cache,
) -> duckdb::Result<Prepared<'c>> {
    let text = match sql {
        Sql::Checked(query) => query.sql(),
        Sql::Own(own) => own.text(),
    };
    match cache {
        Cache::Keep => conn.prepare_cached(text).map(Prepared::Cached),
        Cache::Fresh => conn.prepare(text).map(Prepared::Fresh),
    }
}

impl CheckedQuery {
    /// The engine's own statement (a warm-up's): text compiled into duckgate, never the agent's.
    pub(crate) fn own(sql: &'static str) -> CheckedQuery {
        CheckedQuery {
            sql: sql.to_owned(),
            select: sql.to_owned(),
            facts: TreeFacts::default(),
            checks: Checks::Own,
        }
    }

    /// A statement the engine built from its own statement `own` (see
    /// [`Engine::derived`](super::Engine)): still nothing the agent wrote.
    pub(super) fn derived_own(own: &CheckedQuery, derived: String) -> CheckedQuery {
        debug_assert_eq!(own.checks, Checks::Own);
        CheckedQuery {
            select: explained_query(&derived).to_owned(),
            sql: derived,
            facts: TreeFacts::default(),
            checks: Checks::Own,
        }
    }

    /// `sql` with every check of the SQL switched off, for tests that show the layers below
    /// (the plan check, DuckDB's hardening, the sandbox) hold on their own.
    #[cfg(any(test, feature = "test-bypass"))]
    pub fn with_checks_off(sql: &str) -> CheckedQuery {
        CheckedQuery {
            sql: sql.to_owned(),
            select: explained_query(sql).to_owned(),
            facts: TreeFacts::default(),
            checks: Checks::Off,
        }
    }

    /// The text DuckDB prepares.
    pub fn sql(&self) -> &str {
        &self.sql
    }

    /// The one `SELECT` the checks read (see [`CheckedQuery`]).
    pub(crate) fn select(&self) -> &str {
        &self.select
    }

    /// What the walk found.
    pub(crate) fn facts(&self) -> &TreeFacts {
        &self.facts
    }

    /// Which checks it passed.
    pub fn checks(&self) -> Checks {
        self.checks
    }
}

/// Check `sql` with DuckDB's parser on `conn` and walk DuckDB's syntax tree of the query (of
/// the explained query, for `EXPLAIN`) with `rules`; on success, the checked statement.
///
/// DuckDB's tree nests about three JSON levels per level of expression, so call this on a
/// thread with a large stack (the checker's, see `checker`).
pub(crate) fn parse_and_walk(
    conn: &Connection,
    database: DatabaseToken,
    sql: &str,
    rules: &TreeRules<'_>,
) -> Result<CheckedQuery, Failure> {
    let select = checked_query(database, sql);
    let parsed = parse_single_select(conn, &select)?;
    let facts = tree::walk_tree(&parsed, rules).map_err(Failure::from)?;
    Ok(CheckedQuery {
        select: select.into_owned(),
        sql: sql.to_owned(),
        facts,
        checks: Checks::Walked,
    })
}

/// The plan check's own reading of `sql` when the walk is switched off: DuckDB's parser must
/// see exactly one `SELECT`, and no function the binder would evaluate while binding may be
/// written in it (`plan_check::refuse_written_functions`); what the tree holds is read for the
/// plan check (`validate::tree::facts`), without the walk's policy.
///
/// `parse` gives DuckDB's syntax tree of one `SELECT` ([`parse_single_select`]); it runs on the
/// checker's connection, where no request's plan check judges the statement that does it (on
/// the request's own connection, once the rules are in force, the judge would refuse it).
pub(crate) fn parse_for_plan_check(
    database: DatabaseToken,
    sql: &str,
    privacy: bool,
    folders_declared: bool,
    parse: impl FnOnce(&str) -> Result<Json, Failure>,
) -> Result<CheckedQuery, Failure> {
    let select = checked_query(database, sql);
    let tree = parse(&select)?;
    super::plan_check::refuse_written_functions(&tree, privacy, folders_declared)
        .map_err(|refused| refused.into_error(privacy))?;
    Ok(CheckedQuery {
        facts: duckgate_validate::validate::tree::facts(&tree),
        select: select.into_owned(),
        sql: sql.to_owned(),
        checks: Checks::PlanCheckParsed,
    })
}

/// The query the checks read for `sql`: the explained query of an `EXPLAIN`, and a `CALL` as
/// the `SELECT` DuckDB binds it as, built by DuckDB's parser of the database `database`
/// ([`duckgate_plan_reader::call_select`]); otherwise `sql` itself.
fn checked_query(database: DatabaseToken, sql: &str) -> Cow<'_, str> {
    let query = explained_query(sql);
    if !sql_prefix::may_hold_keyword(query, "CALL") {
        return Cow::Borrowed(query);
    }
    match duckgate_plan_reader::call_select(database, query) {
        Some(select) => Cow::Owned(select),
        None => Cow::Borrowed(query),
    }
}

/// The explained query of an `EXPLAIN`; otherwise `sql` itself. The engine's own statements and
/// the test bypass's unchecked ones read no `CALL`: with the checks off, a `CALL` is still
/// judged by its plan, and only its rendering (for types the client cannot decode) fails.
fn explained_query(sql: &str) -> &str {
    sql_prefix::strip_explain(sql).unwrap_or(sql)
}

/// `sql`, which must be exactly one `SELECT` to DuckDB's parser, as DuckDB writes that syntax
/// tree back out (`json_deserialize_sql`): the one statement DuckDB parsed, with nothing before
/// or after it, so a statement built around it (`EXPLAIN (FORMAT JSON) …`) holds exactly it.
pub(crate) fn render_select(conn: &Connection, sql: &str) -> Result<String, Failure> {
    let tree = parse_single_select(conn, sql)?;
    render_tree(conn, &tree.to_string())
}

/// A syntax tree of one SELECT (as `json_serialize_sql` writes it) as DuckDB writes it out as
/// SQL (`json_deserialize_sql`, DuckDB's own `ToString` of the statement it reads back).
pub(crate) fn render_tree(conn: &Connection, tree: &str) -> Result<String, Failure> {
    let deserialize = OwnSql::fixed("SELECT json_deserialize_sql(?::JSON)");
    prepare_sql(conn, Sql::Own(&deserialize), Cache::Keep)
        .and_then(|mut stmt| stmt.query_row([tree], |row| row.get(0)))
        .map_err(|e| query_error(&e))
}

/// DuckDB's syntax tree of `sql` (`json_serialize_sql`), which must be exactly one `SELECT`.
pub(crate) fn parse_single_select(conn: &Connection, sql: &str) -> Result<Json, Failure> {
    // The SQL travels as a bound parameter: it is data to the serializer, never executed.
    // Cached: the checker's warm-up prepares it, so a request skips planning this wrapper.
    let serialize = OwnSql::fixed("SELECT json_serialize_sql(?::VARCHAR)::VARCHAR");
    let serialized: String = prepare_sql(conn, Sql::Own(&serialize), Cache::Keep)
        .and_then(|mut wrapper| wrapper.query_row([sql], |row| row.get(0)))
        .map_err(|e| query_error(&e))?;
    // serde_json stops at 128 levels by default, which a 60-term `a + b + …` chain passes.
    // DuckDB's own expression-depth limit (1000) bounds the tree instead.
    let mut reader = serde_json::Deserializer::from_str(&serialized);
    reader.disable_recursion_limit();
    let parsed: Json = serde::Deserialize::deserialize(&mut reader).map_err(|e| {
        worker_error(
            ErrorKind::InternalError,
            format!("json_serialize_sql returned bad JSON: {e}"),
        )
    })?;
    if parsed.get("error").and_then(Json::as_bool) == Some(true) {
        let error_type = parsed
            .get("error_type")
            .and_then(Json::as_str)
            .unwrap_or("");
        let message = parsed
            .get("error_message")
            .and_then(Json::as_str)
            .unwrap_or("");
        return Err(match error_type {
            "parser" => worker_error(ErrorKind::SyntaxError, format!("Parser Error: {message}")),
            // "not implemented": DuckDB parsed it, and it (or one of several) is not a SELECT.
            _ => Failure {
                construct: Some("a statement that is not a query".into()),
                suggestion: Some(
                    "Send a single read-only query (SELECT, WITH, VALUES, DESCRIBE, SHOW, \
                     SUMMARIZE, PIVOT, EXPLAIN)."
                        .into(),
                ),
                ..worker_error(ErrorKind::PolicyBlocked, messages::WRITE_REFUSED)
            },
        });
    }
    let count = parsed
        .get("statements")
        .and_then(Json::as_array)
        .map_or(0, Vec::len);
    match count {
        1 => Ok(parsed),
        0 => Err(worker_error(ErrorKind::SyntaxError, "The query is empty.")),
        _ => Err(Failure {
            construct: Some(";".into()),
            suggestion: Some("Send one statement per call.".into()),
            ..worker_error(ErrorKind::MultipleStatements, messages::MULTIPLE_STATEMENTS)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_is_checked_as_the_select_duckdb_binds_it_as() {
        let (_connection, database) =
            duckgate_plan_reader::open_in_memory(&[], &duckgate_plan_reader::FolderMounts::NONE)
                .expect("open");
        for (sql, checked) in [
            // As DuckDB writes it (`range` is one of its keywords, so it quotes it).
            ("CALL range(10)", r#"SELECT * FROM "range"(10)"#),
            (
                "/* why */ call\n  range(1) ;",
                r#"SELECT * FROM "range"(1)"#,
            ),
            ("EXPLAIN CALL range(2)", r#"SELECT * FROM "range"(2)"#),
            ("SELECT 1", "SELECT 1"),
            // Not one CALL: read as written, and the parse of the checks refuses it.
            (
                "CALL range(1); CALL range(2)",
                "CALL range(1); CALL range(2)",
            ),
        ] {
            assert_eq!(checked_query(database, sql), checked, "{sql}");
        }
    }
}
