//! duckgate's SQL validator, pure: no DuckDB, no I/O, no `unsafe`.
//!
//! Its input is written by an attacker: every byte of SQL comes from an agent that may be
//! prompt-injected by the data it reads. It decides from structure (sqlparser's tree, DuckDB's
//! own syntax tree, a policy table complete against DuckDB's functions), never from lists of
//! forbidden words, and what it does not classify it leaves to a check that refuses it.
//!
//! # Where each part runs
//!
//! - [`validate::validate_sql`], in the parent (`src/gateway.rs`): sqlparser's tree of the agent's SQL
//!   walked against the catalog and the function policy. A fast pre-filter with precise
//!   messages: it refuses on positive evidence only, and passes on what sqlparser cannot parse.
//! - [`validate::tree`], in the worker (`src/engine/statement.rs`): the same policy on the
//!   syntax tree DuckDB itself parsed, with DuckDB's own scoping. It is one of the checks a
//!   statement must pass to reach DuckDB.
//! - [`validate::functions`] and the table it reads (`function_policy.rs`: every function of the
//!   bundled DuckDB, classified, and checked against DuckDB by its tests), which the worker's
//!   policy for bound plans (`src/plan_policy/`) reads too: a function without a row is refused
//!   there.
//! - [`error`]: the registry of error kinds and the one error type ([`error::Failure`]) the
//!   worker, the gateway and the MCP tools carry, each with a message and a next step.
//!
//! A crate of its own so that the fuzz targets and the tests build it without DuckDB, and so
//! that what decides what SQL may run has no dependency on what runs it: the duckgate package's
//! modules import both modules from here. The design is in `docs/ARCHITECTURE.md`, "The layers".

// No panics on the paths an agent's input reaches: `unwrap`, `expect` and indexing that may
// panic are refused outside tests (clippy.toml lets tests use them). An exception is marked
// where it stands, with its reason.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

pub mod error;
pub mod validate;
