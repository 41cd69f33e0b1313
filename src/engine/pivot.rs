//! A `PIVOT` whose values come from the data (`PIVOT t ON col USING sum(x)`: an `ON` column
//! without an `IN` list, or with `IN (subquery)`), answered as DuckDB answers it.
//!
//! DuckDB's parser makes such a `PIVOT` several statements: per such column a `CREATE TEMPORARY
//! TYPE __pivot_enum_<uuid> AS ENUM (<query>)`, whose query finds the values (`SELECT DISTINCT
//! CAST(col AS VARCHAR) FROM <source> WHERE col IS NOT NULL ORDER BY 1`, or the subquery), then
//! the `SELECT` that pivots `IN` that type. The worker never runs the `CREATE` (nothing may write,
//! not even a temporary type). It takes the parts as DuckDB's parser made them
//! ([`duckgate_plan_reader::pivot_parts`]), and:
//!
//! 1. runs each value query as a query of its own: DuckDB's parse tree walked and its plan judged
//!    exactly like an agent's query, privacy rules included (the worker's `checked_attach`), so a
//!    hidden column's values are refused as `SELECT DISTINCT hidden` is; then reads its values as
//!    DuckDB's `CREATE TYPE … AS ENUM` reads them ([`Engine::pivot_values`]: cast to text, NULLs
//!    left out, each value once, in the query's order), at most DuckDB's `pivot_limit` of them;
//! 2. writes those values into the pivot's parse tree as the `IN` list DuckDB builds from the type
//!    (each value a text constant named by itself, [`Engine::pivot_statement`]) and has DuckDB
//!    write the statement out; that statement is then checked and run like the agent's own.
//!
//! Nothing is written as text but by DuckDB from its own parse tree, and every statement that runs
//! passed every check a query passes.

use std::collections::HashSet;

use duckdb::core::LogicalTypeId;
use serde_json::{Value as Json, json};

use super::Engine;
use super::errors::{query_error, worker_error};
use super::statement::CheckedQuery;
use crate::protocol::Failure;
use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::sql_prefix;

/// DuckDB's default `pivot_limit`, which the worker's locked configuration keeps: DuckDB refuses
/// a pivot with this many columns or more. A value query with more values than this is stopped
/// there rather than read to its end.
pub(crate) const PIVOT_LIMIT: usize = 100_000;

/// The most bytes of values one `PIVOT` may take from the data: they become the pivot's `IN` list
/// (each twice, value and name) and the names of its result columns.
pub(crate) const MAX_PIVOT_VALUE_BYTES: usize = 16 << 20;

/// A `PIVOT` whose values come from the data, as DuckDB's parser split it.
#[derive(Debug)]
pub(crate) struct PivotFromData {
    parts: duckgate_plan_reader::PivotParts,
    /// What precedes the pivot in the request: `EXPLAIN [ANALYZE] [(options)] `, or nothing.
    explain_prefix: String,
}

impl PivotFromData {
    /// How many queries' values the pivot needs ([`Engine::pivot_value_query`]).
    pub(crate) fn value_query_count(&self) -> usize {
        self.parts.value_queries.len()
    }
}

/// What a value query gave.
#[derive(Debug)]
pub(crate) enum PivotValues {
    /// Its values, as DuckDB's `CREATE TYPE … AS ENUM` takes them.
    Found(Vec<String>),
    /// Its one column is not text: DuckDB casts it to `VARCHAR` first, and so must the worker, in
    /// a statement of its own ([`as_text`]), checked again.
    NotText,
}

/// `query` (one `SELECT` of one column, as DuckDB wrote it) inside a statement that casts its
/// column to `VARCHAR`, as DuckDB does before it takes a query's values for an `ENUM`.
fn as_text(query: &str) -> String {
    format!("SELECT CAST(pivot_value AS VARCHAR) FROM (\n{query}\n) AS pivot_values(pivot_value)")
}

impl Engine {
    /// `sql` as DuckDB's parser splits a `PIVOT` whose values come from the data (also under
    /// `EXPLAIN`); `None` for any other SQL.
    pub(crate) fn pivot_from_data(&self, sql: &str) -> Option<PivotFromData> {
        // `PIVOT` and `PIVOT_WIDER` are written where DuckDB reads them; every other query skips
        // a second parse.
        if !sql_prefix::may_hold_keyword(sql, "PIVOT") {
            return None;
        }
        let pivot = sql_prefix::strip_explain(sql).unwrap_or(sql);
        let explain_prefix = sql.get(..sql.len() - pivot.len())?.to_owned();
        let parts = duckgate_plan_reader::pivot_parts(self.token, pivot)?;
        Some(PivotFromData {
            parts,
            explain_prefix,
        })
    }

    /// A value query whose column is not text, inside a statement that casts it to `VARCHAR`
    /// ([`as_text`]), built around DuckDB's rendering of the checked query; the caller checks
    /// it again.
    pub(crate) fn pivot_values_as_text(&self, query: &CheckedQuery) -> Result<String, Failure> {
        let rendered = self.render_checked_select(query)?;
        Ok(as_text(&rendered))
    }

    /// Value query `index` of `pivot`, with the values `found` for the queries before it written
    /// into it: a pivot whose source is itself such a pivot (`PIVOT (PIVOT t ON a) ON b`) has a
    /// value query that reads the inner pivot, whose types DuckDB's parser names first.
    pub(crate) fn pivot_value_query(
        &self,
        pivot: &PivotFromData,
        index: usize,
        found: &[Vec<String>],
    ) -> Result<String, Failure> {
        let queries = &pivot.parts.value_queries;
        let Some(this) = queries.get(index) else {
            return Err(worker_error(
                ErrorKind::InternalError,
                "A PIVOT's value query was asked for past its last.",
            ));
        };
        let earlier = queries.get(..index).unwrap_or_default();
        if earlier.is_empty() {
            return Ok(this.query.clone());
        }
        // A later query may read an earlier one's type (a random name DuckDB's parser drew): its
        // parse tree gets the values found, wherever DuckDB's tree names that type (a tree that
        // names none comes back as it was).
        let checker = self.checker()?;
        let mut tree = checker.parse(&this.query)?;
        for (value_query, values) in earlier.iter().zip(found) {
            if values.is_empty() {
                return Err(no_values());
            }
            fill_pivot_values(&mut tree, &value_query.type_name, values);
        }
        checker.render_tree(&tree)
    }

    /// The values of one value query, which the caller has had checked like an agent's query:
    /// prepared here (its plan judged), run, and read as DuckDB's `CREATE TYPE … AS ENUM` reads
    /// them: NULLs left out, each value once, in the query's order.
    pub(crate) fn pivot_values(&mut self, query: &CheckedQuery) -> Result<PivotValues, Failure> {
        self.ensure_lock_held()?;
        let memory = self.memory;
        let judge = self.judge.clone();
        let failed = |e: &duckdb::Error| memory.explain(judge.error_for(e));
        let mut stmt = self.prepare_checked(query).map_err(|e| memory.explain(e))?;
        if stmt.column_count() != 1 {
            return Err(worker_error(
                ErrorKind::DatabaseError,
                "Binder Error: The query must return a single column",
            ));
        }
        if stmt.column_logical_type(0).id() != LogicalTypeId::Varchar {
            return Ok(PivotValues::NotText);
        }
        drop(stmt.stream_arrow([]).map_err(|e| failed(&e))?);
        self.ensure_plan_judged()?;
        let mut values = Vec::new();
        let mut seen = HashSet::new();
        let mut bytes = 0usize;
        let mut cursor = stmt.raw_query();
        while let Some(row) = cursor.next().map_err(|e| query_error(&e))? {
            let value: Option<String> = row.get(0).map_err(|e| query_error(&e))?;
            let Some(value) = value else { continue };
            if seen.contains(&value) {
                continue;
            }
            if values.len() >= PIVOT_LIMIT {
                return Err(too_many_values());
            }
            bytes += value.len();
            if bytes > MAX_PIVOT_VALUE_BYTES {
                return Err(too_many_value_bytes());
            }
            seen.insert(value.clone());
            values.push(value);
        }
        Ok(PivotValues::Found(values))
    }

    /// The pivot with `values` (one list per value query, in order) as its `IN` lists: DuckDB's
    /// parse tree of the pivot, each `IN "<type>"` replaced by the entries DuckDB's binder makes
    /// of that type (a text value named by itself), written out by DuckDB; behind the request's
    /// `EXPLAIN`, if it had one.
    pub(crate) fn pivot_statement(
        &self,
        pivot: &PivotFromData,
        values: &[Vec<String>],
    ) -> Result<String, Failure> {
        let checker = self.checker()?;
        let mut tree = checker.parse(&pivot.parts.statement)?;
        for (value_query, values) in pivot.parts.value_queries.iter().zip(values) {
            // DuckDB pivots on an empty type with no value columns at all; an empty `IN` list
            // has no SQL to be written as.
            if values.is_empty() {
                return Err(no_values());
            }
            let filled = fill_pivot_values(&mut tree, &value_query.type_name, values);
            if filled == 0 {
                return Err(worker_error(
                    ErrorKind::InternalError,
                    "DuckDB's parse tree of the PIVOT does not name the values it was split for.",
                ));
            }
        }
        let statement = checker.render_tree(&tree)?;
        Ok(format!("{}{statement}", pivot.explain_prefix))
    }
}

/// In DuckDB's parse tree `tree` (`json_serialize_sql`), give every pivot column that reads its
/// values from the type `type_name` those `values` as its entries, as DuckDB's binder does
/// (`Binder::BindPivot`: each label a `VARCHAR` value, its alias the label); how many it gave.
fn fill_pivot_values(tree: &mut Json, type_name: &str, values: &[String]) -> usize {
    let mut filled = 0;
    // Iterative: DuckDB's trees nest as deep as its expression-depth limit allows.
    let mut pending: Vec<&mut Json> = vec![tree];
    while let Some(node) = pending.pop() {
        match node {
            Json::Object(object) => {
                if object.get("pivot_enum").and_then(Json::as_str) == Some(type_name) {
                    object.insert("pivot_enum".into(), Json::String(String::new()));
                    object.insert(
                        "entries".into(),
                        Json::Array(values.iter().map(|v| pivot_entry(v)).collect()),
                    );
                    filled += 1;
                    continue;
                }
                pending.extend(object.values_mut());
            }
            Json::Array(items) => pending.extend(items.iter_mut()),
            Json::Null | Json::Bool(_) | Json::Number(_) | Json::String(_) => {}
        }
    }
    filled
}

/// One entry of a pivot's `IN` list as DuckDB serialises a `PivotColumnEntry` with a value.
fn pivot_entry(value: &str) -> Json {
    json!({
        "values": [{
            "type": {"id": "VARCHAR", "type_info": null},
            "is_null": false,
            "value": value,
        }],
        "star_expr": null,
        "alias": value,
    })
}

fn no_values() -> Failure {
    Failure {
        construct: Some("PIVOT".into()),
        suggestion: Some(
            "Check that the PIVOT's source has rows with a value in the ON column, or list the \
             values: PIVOT t ON col IN ('a', 'b') USING sum(v)."
                .into(),
        ),
        ..worker_error(
            ErrorKind::InvalidArgument,
            "The PIVOT's ON column has no values in its source (no rows, or only NULLs), so the \
             pivot would have no value columns: duckgate cannot write an empty IN list, which \
             DuckDB's grammar has no form for.",
        )
    }
}

fn too_many_values() -> Failure {
    Failure {
        construct: Some("PIVOT".into()),
        suggestion: Some(
            "Pivot on a column with fewer distinct values, filter the PIVOT's source, or list the \
             values: PIVOT t ON col IN ('a', 'b') USING sum(v)."
                .into(),
        ),
        ..worker_error(
            ErrorKind::ResourceLimit,
            format!(
                "Binder Error: Pivot column limit of {PIVOT_LIMIT} exceeded: the PIVOT's ON \
                 column has more distinct values than that."
            ),
        )
    }
}

fn too_many_value_bytes() -> Failure {
    Failure {
        construct: Some("PIVOT".into()),
        suggestion: Some(
            "Pivot on a column with shorter or fewer distinct values, or list the values: PIVOT \
             t ON col IN ('a', 'b') USING sum(v)."
                .into(),
        ),
        ..worker_error(
            ErrorKind::ResourceLimit,
            format!(
                "The distinct values of the PIVOT's ON column take more than {} MiB, which \
                 duckgate does not make into column names.",
                MAX_PIVOT_VALUE_BYTES >> 20
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_values_fill_every_pivot_column_of_that_type_and_no_other() {
        let mut tree = json!({"statements": [{"node": {"from_table": {"pivots": [
            {"pivot_expressions": [], "entries": [], "pivot_enum": "__pivot_enum_a"},
            {"pivot_expressions": [], "entries": [], "pivot_enum": "__pivot_enum_b"},
        ]}, "cte_map": {"map": [{"value": {"pivots": [
            {"entries": [], "pivot_enum": "__pivot_enum_a"}]}}]}}}]});
        let values = vec!["x".to_owned(), "it's".to_owned()];
        assert_eq!(fill_pivot_values(&mut tree, "__pivot_enum_a", &values), 2);
        let pivots = &tree["statements"][0]["node"]["from_table"]["pivots"];
        assert_eq!(pivots[0]["pivot_enum"], "");
        assert_eq!(pivots[0]["entries"][1]["alias"], "it's");
        assert_eq!(pivots[0]["entries"][1]["values"][0]["value"], "it's");
        assert_eq!(pivots[1]["pivot_enum"], "__pivot_enum_b");
        assert_eq!(pivots[1]["entries"], json!([]));
        assert_eq!(fill_pivot_values(&mut tree, "__pivot_enum_c", &values), 0);
    }
}
