//! duckgate: a sandboxed, read-only DuckDB query gateway for AI agents over MCP.
//!
//! People point an agent at their own data (CGM, insulin-pump and health exports in one DuckDB
//! file); the agent writes SQL and duckgate answers exactly as DuckDB would. Nothing the agent
//! sends may change the database, read other files or reach the network, see what the operator
//! hid, or take the machine or the server down or erase the audit trail. This page is the map;
//! `docs/ARCHITECTURE.md` is the design in full and `SECURITY.md` the threat model, with the test
//! behind each claim.
//!
//! # The trust boundary
//!
//! Every byte of SQL and every tool argument is written by an attacker: an agent can be
//! prompt-injected by the very data it reads. The database file and the operator's command line
//! are trusted. Two kinds of process stand on either side of DuckDB:
//!
//! - the **parent**, the MCP server: it reads the client, validates, queues and audits, and never
//!   opens the database (an idle server holds no lock on it);
//! - a single-use **worker**: our own binary, forked from a warm template or re-executed, which
//!   confines itself (landlock, seccomp, rlimits, no new privileges) before DuckDB exists, opens a
//!   hardened in-memory DuckDB, attaches the database read-only, answers one request and exits.
//!
//! What the two say to each other is [`protocol`] (frames: `src/sandbox/frame.rs`), and it is all
//! they share: no parent-side module imports the worker's [`engine`] (`tests/it/layering.rs`).
//! Each layer holds alone: the tests switch the layers above off (`src/sandbox/bypass.rs`, a
//! test-only build) and show the one below still refuses.
//!
//! # Where a request goes
//!
//! 1. `src/mcp/transport.rs` reads stdin one bounded line at a time; the session's state machine
//!    (`src/session/mod.rs`) decides what rmcp may see, and `src/audit/` records every request.
//! 2. `src/mcp/server.rs` hands a tool call to its tool (`src/mcp/tools/`), whose arguments are
//!    capped and typed before any work.
//! 3. `src/gateway.rs`, the parent's one entry point, runs the validator
//!    (`crates/duckgate-validate`: sqlparser's tree against the function policy, refusing on
//!    evidence only) and hands the request to the pool.
//! 4. `src/sandbox/pool/` gives it a worker slot (a full queue answers `busy`), a warm spare and
//!    a deadline; `src/sandbox/zygote/` forks workers from the template.
//! 5. `src/sandbox/worker.rs` confines itself (`src/sandbox/confine/`), then [`engine`] attaches
//!    the database read-only (under privacy rules beneath a shadow catalog), walks DuckDB's own
//!    syntax tree with the same policy, and judges every plan DuckDB prepares
//!    (`src/engine/plan_check/`, by the [`plan_policy`], on the facts `crates/plan-reader`
//!    reads) before the query runs; a chart is drawn here too (`src/plot/`), inside the confined
//!    worker.
//! 6. One reply frame goes back; `src/mcp/envelope.rs` fits it to the agent's reply budget.
//!
//! # The floors, from the ground up
//!
//! Every import runs downhill:
//!
//! - the ground: [`clinical`] (every clinical number), `calendar`, [`size`], [`time_zone`],
//!   [`sql_text`], [`session`] (the transport's pure state machine), [`folders`] (the operator's
//!   declared folders and what a query's files must meet), and the crates under
//!   `crates/`: the validator and the one error type (`crates/duckgate-validate`), a plan's
//!   facts as plain values (`crates/plan-facts`), the plan reader and the zygote's fork
//!   (`crates/plan-reader`, `crates/zygote-fork`, which hold the `unsafe` this package forbids);
//! - [`outcome`] and [`privacy`] (the operator's privacy rules), then [`protocol`] and [`audit`];
//! - the worker's side: [`plan_policy`] (what a bound plan may hold, without DuckDB), [`plot`],
//!   [`engine`], `src/sandbox/worker.rs` and `src/sandbox/confine/`;
//! - the parent's side: `src/sandbox/pool/`, [`gateway`], [`mcp`];
//! - the operator's side, beside the request path: [`config_file`] (the server's settings),
//!   [`import`] (CGM, pump and health exports into the database to serve; its parsers pure code,
//!   fuzzed without DuckDB), [`demo`], [`mcp_client`] and `partial_file` (a new database is
//!   written beside its path, then renamed), and at the top the command line (`src/cli/`,
//!   `src/main.rs`).

// No panics on the paths an agent's input reaches: `unwrap`, `expect` and indexing that may
// panic are refused outside tests (clippy.toml lets tests use them). An exception is marked
// where it stands, with its reason.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

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
#[cfg(feature = "worker-protocol")]
pub mod folders;
#[cfg(feature = "engine")]
pub mod gateway;
#[cfg(feature = "engine")]
pub mod mcp;
#[cfg(feature = "engine")]
pub mod mcp_client;
#[cfg(feature = "engine")]
mod partial_file;
#[cfg(feature = "worker-protocol")]
pub mod plan_policy;
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
