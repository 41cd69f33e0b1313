//! The syntax-tree walk: every query, relation, function and expression of an accepted statement.
//!
//! Matches are exhaustive (no `_ =>`) over every enum that can carry a relation, a function or a
//! sub-query, and structs are destructured field by field, so a sqlparser upgrade that adds a
//! variant or a field stops the build here instead of slipping through. Constructs DuckDB does not
//! have (other dialects' syntax) are refused rather than walked: fewer paths, fewer surprises.
//!
//! Besides deciding, the walk records what the statement touches (catalog relations, functions).
//! Column references and expansions (`*`, `t.*`, `COLUMNS(...)`, whole rows) decide nothing here:
//! under privacy rules the worker's shadow catalog has no hidden table and no hidden column, so
//! DuckDB resolves them against the visible columns only, and a hidden name fails there exactly
//! like a made-up one.
//!
//! The walk is one type, [`Walker`], with an `impl` block per part:
//! - `privacy`: catalog listings under privacy rules, and the nesting cap;
//! - `queries`: queries, CTEs, set operations, `SELECT` and its clauses;
//! - `from`: the `FROM` clause: joins, table factors, table functions, relation names;
//! - `functions`: function calls, their arguments and window specifications;
//! - `expressions`: expressions, subscripts and literals.

use sqlparser::ast::Ident;

pub(crate) use super::refusals::unsupported;
use super::{Catalog, Limits, Refusal};
use crate::error::ErrorKind;

mod expressions;
mod from;
mod functions;
mod privacy;
mod queries;

/// Walks one statement, deciding and recording.
pub(crate) struct Walker<'a> {
    pub(crate) catalog: &'a Catalog,
    max_depth: usize,
    depth: usize,
    /// CTE names visible at this point (lower case), innermost last.
    ctes: Vec<String>,
    /// Relations read, as `schema.name`, in first-seen order.
    pub(crate) relations: Vec<String>,
    /// Functions called (lower case), in first-seen order.
    pub(crate) functions: Vec<String>,
}

type Walk = Result<(), Refusal>;

/// A column that does not exist in the catalog (hidden columns are not in it).
pub(crate) fn unknown_column(name: &str) -> Refusal {
    Refusal {
        kind: ErrorKind::UnknownName,
        message: format!("Column {name} does not exist in this database."),
        construct: name.into(),
        suggestion: "Check the column names with describe_table.".into(),
        missing: Some(crate::error::MissingName {
            name: name.into(),
            kind: crate::error::MissingKind::Column,
        }),
    }
}

/// A name as DuckDB folds it: ASCII letters only (U+212A KELVIN SIGN is not `k`).
fn lower(ident: &Ident) -> String {
    ident.value.to_ascii_lowercase()
}

fn push_unique(list: &mut Vec<String>, item: String) {
    if !list.contains(&item) {
        list.push(item);
    }
}

impl<'a> Walker<'a> {
    pub(crate) fn new(catalog: &'a Catalog, limits: &Limits) -> Walker<'a> {
        Walker {
            catalog,
            max_depth: limits.max_expression_depth,
            depth: 0,
            ctes: Vec::new(),
            relations: Vec::new(),
            functions: Vec::new(),
        }
    }
}
