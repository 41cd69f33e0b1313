//! duckgate's SQL validator, pure: no DuckDB, no I/O, no `unsafe`.
//!
//! - [`validate`]: the parent's walk of sqlparser's tree, the worker's walk of DuckDB's own parse
//!   tree (`validate::tree`), and the function policy table both walks and the worker's plan
//!   check share (`validate::functions`).
//! - [`error`]: the registry of error kinds and the one error type ([`error::Failure`]) the
//!   worker, the gateway and the MCP tools carry.
//!
//! A crate of its own so that the fuzz targets and the tests build it without DuckDB, and so
//! that what decides what SQL may run has no dependency on what runs it. The duckgate package's
//! modules import both from here. The design is in `docs/ARCHITECTURE.md`.

pub mod error;
pub mod validate;
