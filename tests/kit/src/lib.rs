//! What duckgate's tests, benches and fuzz targets share, in a crate of its own so that none of
//! it is in the crates users build (`tests/shipped_binary.rs` checks the shipped binary's
//! dependencies).
//!
//! The validator's part, pure Rust like the validator (`duckgate-validate`) and built on its
//! public API only:
//! - [`corpus`]: the case tables and the catalog they run against;
//! - [`generate`]: a grammar of read-only queries (`arbitrary`), with forbidden constructs to
//!   plant in them;
//! - [`fuzz_entry`] and [`fuzz_tree`]: the invariants the fuzz targets and the property tests
//!   check.
//!
//! Behind the `mcp` feature, off by default so the fuzz targets never compile DuckDB, what
//! duckgate's integration tests (`tests/it/`) share: [`support`] (temp dirs, DuckDB files, the
//! real `duckgate` binary as a command line and as an MCP server, the in-process oracle, the
//! processes under a server) and [`raw_support`] (a server driven over raw pipes).

/// The crate whose `Arbitrary` the grammar and the fuzz input derive, so a test builds them from
/// bytes with the very version the kit does.
pub use arbitrary;

pub mod corpus;
pub mod fuzz_entry;
pub mod fuzz_tree;
pub mod generate;

#[cfg(feature = "mcp")]
pub mod raw_support;
#[cfg(feature = "mcp")]
pub mod support;
