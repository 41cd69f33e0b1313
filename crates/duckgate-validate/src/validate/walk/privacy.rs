//! Catalog listings under privacy rules, and the nesting cap.

use super::{Walk, Walker};
use crate::error::ErrorKind;
use crate::validate::Refusal;
use crate::validate::refusals::{catalog_listing, statement_counter};

impl Walker<'_> {
    /// Catalog listings (`information_schema`, `duckdb_tables()`, `SHOW TABLES`, …) would show
    /// hidden names: refused whenever any privacy rule is set.
    pub(crate) fn check_catalog_listing(&self, construct: &str) -> Walk {
        if !self.catalog.restricted {
            return Ok(());
        }
        Err(catalog_listing(construct))
    }

    /// Counters of the process's statements would count the worker's work on hidden objects:
    /// refused whenever any privacy rule is set (`functions::Class::CountsStatements`).
    pub(crate) fn check_statement_counter(&self, construct: &str) -> Walk {
        if !self.catalog.restricted {
            return Ok(());
        }
        Err(statement_counter(construct))
    }

    pub(super) fn descend(&mut self) -> Walk {
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(Refusal {
                kind: ErrorKind::InvalidArgument,
                message: format!(
                    "The query's expressions nest deeper than {} levels.",
                    self.max_depth
                ),
                construct: "nesting".into(),
                suggestion: "Simplify the expression, e.g. use IN (...) instead of long OR chains."
                    .into(),
                missing: None,
            });
        }
        Ok(())
    }
}
