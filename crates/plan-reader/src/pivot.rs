//! A `PIVOT` whose values DuckDB takes from the data, as DuckDB's parser splits it.
//!
//! DuckDB's parser turns `PIVOT t ON col USING sum(x)` (an `ON` column without an `IN` list, or
//! with `IN (subquery)`) into several statements: per such column a `CREATE TEMPORARY TYPE
//! __pivot_enum_<uuid> AS ENUM (<query>)`, whose query finds the values, then the `SELECT` that
//! pivots `IN` that type. [`pivot_parts`] hands over those parts as DuckDB's parser made them and
//! DuckDB writes them out (`vendor/libduckdb-sys/duckgate/pivot_parts.cpp`); the caller never runs
//! the `CREATE`, and checks each text it does run as a query of its own.

use crate::ffi;
use crate::registry::{DatabaseToken, database_of};

/// The parts of one such `PIVOT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PivotParts {
    /// The `SELECT` that pivots, as DuckDB writes it: each column whose values come from the
    /// data reads `IN "<type name>"` (DuckDB's reference to a type by name).
    pub statement: String,
    /// For each type DuckDB's parser would create, in its order: its name and the query whose
    /// values it would hold.
    pub value_queries: Vec<ValueQuery>,
}

/// One type DuckDB's parser would create for a `PIVOT`'s values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueQuery {
    /// Its name (`__pivot_enum_<uuid>`), as [`PivotParts::statement`] refers to it.
    pub type_name: String,
    /// The query of its values, as DuckDB writes it: `SELECT DISTINCT CAST(col AS VARCHAR) FROM
    /// <source> WHERE (col IS NOT NULL) ORDER BY 1`, or the `IN (subquery)`'s subquery.
    pub query: String,
}

/// The parts of `sql` when DuckDB's parser, configured as a connection to the database `token`
/// names is, reads it as exactly one statement that is such a `PIVOT`; `None` for anything else
/// (including SQL DuckDB cannot parse, which the caller's ordinary checks answer).
pub fn pivot_parts(token: DatabaseToken, sql: &str) -> Option<PivotParts> {
    let database = database_of(token)?;
    // SAFETY: the databases `database_of` knows were opened by `open_in_memory` and are never
    // closed.
    let parts = unsafe { ffi::pivot_parts(database, sql) }?;
    let mut texts = parts.into_iter().map(|part| String::from_utf8(part).ok());
    let statement = texts.next()??;
    let mut value_queries = Vec::new();
    while let Some(type_name) = texts.next() {
        let query = texts.next()??;
        value_queries.push(ValueQuery {
            type_name: type_name?,
            query,
        });
    }
    (!value_queries.is_empty()).then_some(PivotParts {
        statement,
        value_queries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::open_in_memory;

    #[test]
    fn a_pivot_without_in_is_split_into_its_value_queries_and_the_pivot() {
        let (connection, token) = open_in_memory(&[], &crate::FolderMounts::NONE).expect("open");
        connection
            .execute_batch("CREATE TABLE t (k INTEGER, col VARCHAR, x INTEGER)")
            .expect("table");
        let parts = pivot_parts(token, "PIVOT t ON col USING sum(x)").expect("a pivot");
        assert_eq!(parts.value_queries.len(), 1);
        let value = &parts.value_queries[0];
        assert!(value.type_name.starts_with("__pivot_enum_"), "{value:?}");
        assert_eq!(
            value.query,
            "SELECT DISTINCT CAST(col AS VARCHAR) FROM t WHERE (col IS NOT NULL) ORDER BY 1 ASC"
        );
        assert!(
            parts
                .statement
                .contains(&format!("IN \"{}\"", value.type_name)),
            "{}",
            parts.statement
        );

        let two =
            pivot_parts(token, "PIVOT t ON col, k IN (1, 2), x USING count(*)").expect("a pivot");
        assert_eq!(two.value_queries.len(), 2);
    }

    #[test]
    fn anything_else_is_not_split() {
        let (_connection, token) = open_in_memory(&[], &crate::FolderMounts::NONE).expect("open");
        for sql in [
            "SELECT 1",
            "PIVOT t ON col IN ('a') USING sum(x)",
            "CREATE TEMPORARY TYPE __pivot_enum_x AS ENUM (SELECT 'a'); SELECT 1",
            "CREATE TEMPORARY TYPE __pivot_enum_x AS ENUM (SELECT 'a')",
            "PIVOT t ON col USING sum(x); SELECT 1",
            "SELEC nothing",
            "",
        ] {
            assert_eq!(pivot_parts(token, sql), None, "{sql}");
        }
    }
}
