//! The engine's own statements, never from the agent's text, and what DuckDB prepares.
//!
//! Two kinds of SQL reach DuckDB's prepare in a worker, and `statement::prepare_sql` is the only
//! place either does:
//!
//! - the agent's query after every check: a `CheckedQuery`, which only the checks can make
//!   (`statement.rs`);
//! - the engine's own statements ([`OwnSql`]): text fixed in this crate, whose variable parts
//!   (a database alias, the agent's SQL handed to DuckDB's serializer) travel as bound
//!   parameters, which DuckDB reads as data and never as SQL; or a `SELECT` of a view the engine
//!   names from the catalog, built here with every name quoted as an identifier.
//!
//! Nothing else in the worker calls DuckDB's `prepare` or `prepare_cached`, so no text an agent
//! wrote can reach DuckDB's binder except as a checked query or a bound parameter.

use std::ops::{Deref, DerefMut};

use duckdb::{CachedStatement, Statement};

use crate::sql_text::quote_identifier as sql_identifier;

/// A statement the engine writes itself, never from the agent's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnSql(OwnText);

#[derive(Debug, Clone, PartialEq, Eq)]
enum OwnText {
    /// Text of this crate; its variable parts are bound parameters.
    Fixed(&'static str),
    /// A statement built here from catalog names, each quoted as an identifier.
    Named(String),
}

impl OwnSql {
    /// Text of this crate, whose variable parts are bound parameters (`?`, `$1`).
    pub(crate) const fn fixed(sql: &'static str) -> OwnSql {
        OwnSql(OwnText::Fixed(sql))
    }

    /// `SELECT <column> FROM <alias>.<schema>.<view>` (`*` when `column` is `None`): the query
    /// whose plans tell what a view's columns read (`lineage.rs`). The names come from the
    /// catalog; each is quoted, so none can end the statement or add to it.
    pub(crate) fn select_from_view(
        alias: &str,
        schema: &str,
        view: &str,
        column: Option<&str>,
    ) -> OwnSql {
        let column = column.map_or_else(|| "*".to_owned(), sql_identifier);
        OwnSql(OwnText::Named(format!(
            "SELECT {column} FROM {}.{}.{}",
            sql_identifier(alias),
            sql_identifier(schema),
            sql_identifier(view)
        )))
    }

    /// The text DuckDB prepares (by `statement::prepare_sql` only).
    pub(super) fn text(&self) -> &str {
        match &self.0 {
            OwnText::Fixed(sql) => sql,
            OwnText::Named(sql) => sql,
        }
    }
}

/// Whether DuckDB's prepared statement is kept on the connection for the next call with the
/// same text (the engine's own statements that every request runs), or made afresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cache {
    /// Prepared once per connection, reused.
    Keep,
    /// Prepared for this call only.
    Fresh,
}

/// A statement DuckDB prepared, kept on the connection or not.
pub(crate) enum Prepared<'c> {
    Fresh(Statement<'c>),
    Cached(CachedStatement<'c>),
}

impl<'c> Deref for Prepared<'c> {
    type Target = Statement<'c>;

    fn deref(&self) -> &Statement<'c> {
        match self {
            Prepared::Fresh(statement) => statement,
            Prepared::Cached(statement) => statement,
        }
    }
}

impl<'c> DerefMut for Prepared<'c> {
    fn deref_mut(&mut self) -> &mut Statement<'c> {
        match self {
            Prepared::Fresh(statement) => statement,
            Prepared::Cached(statement) => statement,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_view_select_quotes_every_name_it_is_given() {
        let sql = OwnSql::select_from_view("health", "main", "v\"; DROP TABLE t; --", Some("a b"));
        assert_eq!(
            sql.text(),
            r#"SELECT "a b" FROM "health"."main"."v""; DROP TABLE t; --""#
        );
        let all = OwnSql::select_from_view("health", "main", "v", None);
        assert_eq!(all.text(), r#"SELECT * FROM "health"."main"."v""#);
    }
}
