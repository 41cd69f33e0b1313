//! duckgate: a sandboxed, read-only DuckDB query gateway for AI agents over MCP.
//!
//! The design is in `docs/ARCHITECTURE.md`; the threat model, with the test behind each claim,
//! in `SECURITY.md`. One request, by module:
//!
//! - [`session`]: the stdio session's state machine: what each client line is, what rmcp sees.
//! - [`mcp`]: the line transport and the rmcp handler; every argument capped before any work.
//! - [`gateway`]: the parent's one entry point; never opens the database.
//! - [`duckgate_validate::validate`]: the sqlparser walk and the policy table both walks share
//!   (the `duckgate-validate` crate, with [`duckgate_validate::error`], the one error type and
//!   the kinds it carries; every module imports them from that crate).
//! - [`sandbox`]: the worker pool, the worker's life, and its confinement (`sandbox::confine`).
//! - [`engine`]: the hardened DuckDB inside the worker: attach, the walk of DuckDB's parse tree,
//!   the plan check, the shadow catalog under privacy rules, the query.
//!
//! Beside the request path: [`import`], the operator's own command that turns CGM, pump and
//! health exports into the database to serve (its parsers pure code, fuzzed without DuckDB),
//! and [`clinical`], the one definition of every clinical number import, charts and prompts
//! use.

// The test switches (the `test-bypass` feature) build only for duckgate's own tests, benches
// and examples: build.rs sets this cfg from the test harness's mark, which only the package's
// dev-dependency turns on (Cargo.toml). `cargo build --all-features` and `cargo install
// --all-features` stop here, so no binary a user runs can carry them.
#[cfg(all(feature = "test-bypass", not(duckgate_test_harness)))]
compile_error!(
    "the `test-bypass` feature (duckgate's test-only layer bypass, sandbox probe and worker \
     hook) builds only for duckgate's own tests, benches and examples (`cargo test`, \
     `cargo bench`): build duckgate without it, e.g. without --all-features"
);

pub mod clinical;
pub mod import;
pub mod outcome;
pub mod privacy;
pub mod sql_text;

#[cfg(feature = "transport")]
pub mod session;

#[cfg(feature = "engine")]
pub mod audit;
mod calendar;
#[cfg(feature = "engine")]
pub mod config_file;
#[cfg(feature = "engine")]
pub mod demo;
#[cfg(feature = "engine")]
pub mod engine;
#[cfg(feature = "engine")]
pub mod gateway;
#[cfg(feature = "engine")]
pub mod mcp;
#[cfg(feature = "engine")]
pub mod mcp_client;
#[cfg(feature = "engine")]
mod partial_file;
#[cfg(feature = "engine")]
pub mod plot;
#[cfg(feature = "worker-protocol")]
pub mod protocol;
#[cfg(feature = "worker-protocol")]
pub mod sandbox;
#[cfg(feature = "engine")]
pub mod size;
#[cfg(feature = "engine")]
pub mod time_zone;
