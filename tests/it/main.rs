//! duckgate's integration tests, as one binary: DuckDB is linked into it once, not once per
//! file. Each module is what was a test file of its own; `support`, `raw_support` and
//! `everyday` are what they share.
//!
//! They run against the real `duckgate` binary, built with the test switches (the `test-bypass`
//! feature, on through the package's dev-dependency on itself). `tests/shipped_binary.rs`, a
//! binary of its own that cargo runs after this one, checks the binary users get.

mod everyday;
mod raw_support;
mod support;

mod argument_limits;
mod audit_limits;
mod bind_time;
mod bypass_reach;
mod cli;
mod conformance;
mod engine_hardening;
mod everyday_corpus;
mod import_vendors;
mod kernel_requirements;
mod layer_bypass;
mod local_time;
mod mcp_concurrency;
mod mcp_demo;
mod mcp_errors;
mod mcp_tools;
mod plot;
mod privacy;
mod privacy_oracles;
mod privacy_worker;
mod protocol_versions;
mod queue;
mod sandbox_denial;
mod security_md;
mod spilling;
mod supply_chain;
mod transport_resilience;
mod validator_differential;
mod walk_differential;
mod worker_checks;
mod worker_faults;
mod worker_replies;
mod zygote;
