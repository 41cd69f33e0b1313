//! What DuckDB bound for one plan, as plain Rust values: the typed facts duckgate's plan reader
//! (`crates/plan-reader`) reads from DuckDB's own structures and hands to the worker's judge.
//!
//! # Why a crate of its own
//!
//! The facts are DuckDB's enumeration values and names, owned: nothing here calls DuckDB. The
//! plan reader, which links DuckDB and holds the `unsafe` of its C calls, fills them; the
//! worker's plan policy (`src/plan_policy/` of duckgate) decides on them; and the `plan_facts`
//! fuzz target builds them from arbitrary bytes to try that policy, without compiling DuckDB.
//!
//! # What is here
//!
//! - [`PlanFacts`]: one plan, as the reader's walk met it: each [`Fact`] (an operator, an
//!   expression class, a type, a bound [`FunctionFact`], or a part the walk could not read) and
//!   each scan ([`ScanFacts`]: the function, the stored table, the [`ScanColumn`]s, the files).
//! - The enumerations the facts carry ([`LogicalOperatorType`], [`ExpressionClass`],
//!   [`LogicalTypeId`], and [`ExceptionType`] for DuckDB's typed errors), DuckDB 2.0's value for
//!   value, each value wrapped in a [`Code`] that also holds a code this crate does not know:
//!   the policy refuses that. The plan reader's tests check the enumerations against the DuckDB
//!   it links, so an upgrade that changes one fails there.

// No panics on the paths an agent's input reaches: `unwrap`, `expect` and indexing that may
// panic are refused outside tests (clippy.toml lets tests use them).
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod enums;
mod facts;

pub use enums::{Enumeration, ExceptionType, ExpressionClass, LogicalOperatorType, LogicalTypeId};
pub use facts::{
    Code, ColumnKind, Fact, FunctionFact, FunctionKind, PlanFacts, ScanColumn, ScanFacts,
};
