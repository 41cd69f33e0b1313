//! The binary users get has no test switch.
//!
//! The test suite runs a `duckgate` built with the `test-bypass` feature (the package's
//! dev-dependency on itself turns it on): the layer bypass read from the environment, the
//! worker's probe of its own sandbox and the worker-binary hook. `cargo build --release` and
//! `cargo install` build without it. This test builds the binary exactly that way and shows that
//! none of it is there: not the variable's name, not the probe's code, and setting the variable
//! switches nothing off. Nor is the validator's test kit among what it is built from.
//!
//! It is a test binary of its own, which cargo runs after `tests/it` (binaries run one at a time,
//! in name order): the build below replaces `target/release/duckgate`, which the integration
//! tests run. What CI runs after the suite (the demo, the import, the official SDKs) therefore
//! runs the shipped binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What only the test switches put into a binary: the bypass's environment variable, the
/// probe's code (its symbols, `duckgate::sandbox::probe::…`, as Rust mangles them) and the
/// worker's refusal of a probe request.
const TEST_ONLY_MARKERS: [&str; 3] = [
    "DUCKGATE_UNSAFE_TEST_BYPASS",
    "7sandbox5probe",
    "probes are a test-only request",
];

/// Every layer the bypass knows, as a test would switch them all off.
const EVERY_LAYER: &str = "validator,worker_walk,plan_check,duckdb_hardening,probe,worker_privacy";

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// Run this cargo in the repository with `args`; its stdout. A failure fails the test.
fn cargo(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo");
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `cargo build --release --all-features`, as someone would who wants "everything": the test
/// switches come with `test-bypass`, which builds only for duckgate's own tests, benches and
/// examples (src/lib.rs, build.rs). The build must fail, naming the feature, and for that reason
/// alone (the same build without the feature is `build_as_users_do`, which succeeds).
#[test]
fn building_the_test_switches_outside_the_test_harness_fails_naming_the_feature() {
    let output = Command::new(env!("CARGO"))
        .args(["build", "--release", "--locked", "--all-features"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "cargo build --release --all-features succeeded:\n{stderr}"
    );
    assert!(
        stderr.contains("error: the `test-bypass` feature")
            && stderr.contains("builds only for duckgate's own tests"),
        "the build failed, but not on the feature's guard:\n{stderr}"
    );
    // And so does naming the feature alone.
    let output = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--locked",
            "--features",
            "test-bypass",
            "--lib",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("error: the `test-bypass` feature"),
        "{stderr}"
    );
}

/// `cargo build --release --locked --bin duckgate`, as a user builds it; the executable it made.
fn build_as_users_do() -> PathBuf {
    cargo(&[
        "build",
        "--release",
        "--locked",
        "--bin",
        "duckgate",
        "--message-format=json-render-diagnostics",
    ])
    .lines()
    .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
    .filter(|message| message["reason"] == "compiler-artifact")
    .filter(|message| message["target"]["name"] == "duckgate")
    .find_map(|message| message["executable"].as_str().map(PathBuf::from))
    .expect("cargo reported no duckgate executable")
}

fn run(exe: &Path, args: &[&str]) -> Output {
    Command::new(exe)
        .args(args)
        .env("DUCKGATE_UNSAFE_TEST_BYPASS", EVERY_LAYER)
        .output()
        .expect("run duckgate")
}

/// The packages the shipped binary is built from (`cargo tree`, normal dependencies only, with
/// the features a user's build resolves).
fn shipped_packages() -> Vec<String> {
    cargo(&[
        "tree", "--locked", "-p", "duckgate", "-e", "normal", "--prefix", "none",
    ])
    .lines()
    .filter_map(|line| line.split_whitespace().next())
    .map(str::to_owned)
    .collect()
}

/// The test kit (`duckgate-test-kit`: the case tables, the query grammar and its `arbitrary`, the
/// integration tests' support) is not part of what users build: only the tests, benches and fuzz
/// targets depend on it.
#[test]
fn the_binary_users_build_has_no_test_kit() {
    let packages = shipped_packages();
    assert!(
        packages.iter().any(|p| p == "duckgate-validate") && packages.len() > 50,
        "cargo tree listed {packages:?}: the listing is wrong"
    );
    for test_only in [
        "duckgate-test-kit",
        "arbitrary",
        "proptest",
        "jsonschema",
        "duckdb-oracle",
    ] {
        assert!(
            !packages.iter().any(|p| p == test_only),
            "{test_only} is among the shipped binary's dependencies"
        );
    }
}

#[test]
fn the_binary_users_build_has_no_test_switch() {
    // The search finds the switches where they are: in the binary the test suite ran.
    let tested = std::fs::read(env!("CARGO_BIN_EXE_duckgate")).expect("read the tested binary");
    for marker in TEST_ONLY_MARKERS {
        assert!(
            contains(&tested, marker),
            "the tested binary should hold {marker:?}; the search is wrong"
        );
    }

    let shipped = build_as_users_do();
    let bytes = std::fs::read(&shipped).expect("read the shipped binary");
    for marker in TEST_ONLY_MARKERS {
        assert!(
            !contains(&bytes, marker),
            "{} holds {marker:?}: a test switch is in the shipped binary",
            shipped.display()
        );
    }

    // And the variable switches nothing off: every layer named, a query that reads a file is
    // still refused, and nothing says a bypass is on.
    let dir = std::env::temp_dir().join(format!("duckgate-shipped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = dir.join("demo.duckdb");
    let db_text = db.to_str().expect("utf-8 path");
    let demo = run(&shipped, &["demo", "--out", db_text]);
    assert!(demo.status.success(), "demo: {demo:?}");
    let read_file = run(
        &shipped,
        &[
            "query",
            "--db",
            db_text,
            "SELECT * FROM read_text('/etc/hostname')",
        ],
    );
    let said = format!(
        "{}\n{}",
        String::from_utf8_lossy(&read_file.stdout),
        String::from_utf8_lossy(&read_file.stderr)
    );
    assert!(!read_file.status.success(), "{said}");
    assert!(
        said.contains("policy_blocked: read_text reads files"),
        "the validator should refuse it: {said}"
    );
    assert!(!said.contains("BYPASS"), "{said}");
    std::fs::remove_dir_all(&dir).expect("remove temp dir");
}
