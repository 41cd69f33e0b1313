//! Every plan DuckDB prepares on a connection, read as typed facts and judged before it can run.
//!
//! # Why
//!
//! duckgate decides what a query may do from what DuckDB bound, not from its text. This crate
//! reads DuckDB's own structures: the `LogicalOperator` tree of each statement, with every bound
//! expression, function, type, scanned table and column and bound file, walked by a small C++
//! visitor compiled with DuckDB (`vendor/libduckdb-sys/duckgate/plan_reader.cpp`). Nothing is
//! serialised or parsed on the way: the facts are DuckDB's enumeration values and names.
//!
//! # How
//!
//! 1. [`open_in_memory`] opens an in-memory DuckDB through the C API and installs the reader on
//!    it as an optimizer extension. DuckDB then calls it with every plan it prepares on that
//!    database, twice: as bound ([`Phase::Bound`], before any optimizer ran, so every object the
//!    statement references is there and nothing has been evaluated) and optimized
//!    ([`Phase::Optimized`], what execution will read).
//! 2. [`arm`] gives one connection a [`Judge`]. From then on, every plan DuckDB prepares on that
//!    connection is walked and handed to the judge; a refusal makes DuckDB's prepare fail, so the
//!    plan never runs. This includes a plan DuckDB prepares again at execution (a rebind), and
//!    every statement the caller derives from the agent's (its own wrappers): whatever is
//!    prepared on an armed connection is judged. Plans of other connections are not walked.
//! 3. [`ArmedConnection::plans_judged`] counts the plans judged per phase, so the caller can
//!    fail closed when DuckDB prepared a statement without calling the reader (for example, with
//!    its optimizer switched off).
//!
//! 4. [`take_typed_error`] gives the caller DuckDB's own error for a failure the `duckdb` crate
//!    reported as text: its [`ExceptionType`] and extra information ([`DuckdbError`]), recorded
//!    by a second piece of C++ (`vendor/libduckdb-sys/duckgate/error_reader.cpp`) as DuckDB ends
//!    each failed query on any connection of the database.
//!
//! An operator or expression class the visitor does not know comes as [`Fact::Unknown`], and a
//! code this crate's enumerations do not know as [`Code::Unrecognised`]: the judge refuses both.
//! The enumerations are DuckDB 2.0's, checked against DuckDB itself by this crate's tests.

// No panics on the paths an agent's input reaches: `unwrap`, `expect` and indexing that may
// panic are refused outside tests (clippy.toml lets tests use them). An exception is marked
// where it stands, with its reason.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

mod call;
#[cfg(test)]
mod enum_tests;
mod errors;
mod ffi;
mod held;
mod pivot;
mod registry;

pub use call::call_select;
// The facts' types are the DuckDB-free crate's, named here as the reader hands them over.
pub use duckgate_plan_facts::{
    Code, ColumnKind, Enumeration, ExceptionType, ExpressionClass, Fact, FunctionFact,
    FunctionKind, LogicalOperatorType, LogicalTypeId, PlanFacts, ScanColumn, ScanFacts,
};
pub use errors::{DuckdbError, ErrorSubtype};
pub use ffi::take_typed_error;
pub use held::{Attaching, HeldFile, hold_database_files, release_database_locks};
pub use pivot::{PivotParts, ValueQuery, pivot_parts};
pub use registry::{
    ArmedConnection, DatabaseToken, FolderMounts, FolderPrivacy, Judge, Phase, Verdict, arm,
    open_in_memory, set_folder_privacy,
};

/// DuckDB's name for value `code` of one of the enumerations facts carry, as DuckDB's
/// `EnumUtil` spells it; `None` when DuckDB has no such value. For tests that this crate's
/// enumerations agree with DuckDB's.
pub fn duckdb_enum_name(enumeration: Enumeration, code: u32) -> Option<String> {
    ffi::enum_name(enumeration, code)
}
