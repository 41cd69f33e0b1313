//! duckgate's integration tests, as one binary: DuckDB is linked into it once, not once per
//! file. Each module is what was a test file of its own; `everyday` and the test kit's `support`
//! and `raw_support` (tests/kit, its `mcp` feature) are what they share.
//!
//! They run against the real `duckgate` binary, built with the test switches (the `test-bypass`
//! feature, on through the package's dev-dependency on itself). `tests/shipped_binary.rs`, a
//! binary of its own that cargo runs after this one, checks the binary users get.

use std::path::Path;

// At the crate's root, so the modules reach them as `crate::support` and `crate::raw_support`.
use duckgate_test_kit::{raw_support, support};

mod everyday;

mod argument_limits;
mod audit_limits;
mod bind_time;
mod bypass_reach;
mod cli;
mod conformance;
mod container_route;
mod databases;
mod databases_and_folders;
mod databases_and_folders_privacy;
mod engine_hardening;
mod everyday_corpus;
mod folders;
mod folders_corpus;
mod folders_discovery;
mod folders_hostile;
mod folders_privacy;
mod folders_privacy_parameters;
mod import_corpus;
mod import_files;
mod import_vendors;
mod kernel_requirements;
mod layer_alone;
mod layer_bypass;
mod layering;
mod local_time;
mod mcp_concurrency;
mod mcp_demo;
mod mcp_errors;
mod mcp_tools;
mod pivot_from_data;
mod plot;
mod privacy;
mod privacy_oracles;
mod privacy_views;
mod privacy_worker;
mod protocol_versions;
mod queue;
mod reply_budget;
mod sandbox_denial;
mod seccomp_trace;
mod security_md;
mod spilling;
mod supply_chain;
mod transport_resilience;
mod typed_errors;
mod validator_differential;
mod walk_differential;
mod worker_checks;
mod worker_faults;
mod worker_replies;
mod zygote;

/// The test kit finds the binary and the scratch folder from the running test binary, since cargo
/// names them only to the integration tests it compiles: they are the very ones cargo names here.
#[test]
fn the_test_kit_runs_the_binary_cargo_built_for_these_tests() {
    let named = Path::new(env!("CARGO_BIN_EXE_duckgate"));
    assert_eq!(
        support::exe()
            .canonicalize()
            .expect("the kit's binary exists"),
        named.canonicalize().expect("cargo's binary exists")
    );
    let dir = support::TempDir::new("kit-paths");
    let scratch = dir
        .path()
        .canonicalize()
        .expect("the scratch folder exists");
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .canonicalize()
        .expect("cargo's scratch folder exists");
    assert!(
        scratch.starts_with(&tmp),
        "{} is not under {}",
        scratch.display(),
        tmp.display()
    );
}
