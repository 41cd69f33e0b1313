//! The test-only layer switch (`DUCKGATE_UNSAFE_TEST_BYPASS`, `src/sandbox/bypass.rs`) is an
//! operator's environment variable and nothing else: no CLI flag offers it, only the gateway and
//! the worker read it, a typo in it stops duckgate, and when it is on duckgate says so loudly —
//! while the layers below the switched-off one still hold.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{TempDir, duckgate_cli, make_db, run_cli};

/// Spelled out on purpose, not `duckgate::sandbox::bypass::ENV_VAR`: this test pins the name
/// operators and the suite use.
const ENV_VAR: &str = "DUCKGATE_UNSAFE_TEST_BYPASS";

/// `duckgate ARGS…` without the switch (or a log filter) from the test's own environment.
fn duckgate(args: &[&str]) -> Command {
    let mut command = duckgate_cli(args);
    command.env_remove(ENV_VAR).env_remove("DUCKGATE_LOG");
    command
}

fn all_output(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A small database in its own temporary directory, removed on drop.
struct Scene {
    _dir: TempDir,
    db: PathBuf,
}

impl Scene {
    fn new(tag: &str) -> Scene {
        let dir = TempDir::in_system_temp(&format!("bypass-{tag}"));
        let db = dir.path().join("served.duckdb");
        make_db(&db, "CREATE TABLE readings AS SELECT 42 AS glucose;");
        Scene { _dir: dir, db }
    }
}

fn query(db: &Path, sql: &str, bypass: Option<&str>) -> Output {
    let mut command = duckgate(&["query", "--db"]);
    command.arg(db).arg(sql);
    if let Some(value) = bypass {
        command.env(ENV_VAR, value);
    }
    run_cli(command, None)
}

#[test]
fn no_cli_flag_or_subcommand_offers_the_bypass() {
    // Every subcommand, including the hidden worker mode.
    let subcommands: [&[&str]; 6] = [
        &[],
        &["serve"],
        &["query"],
        &["check"],
        &["demo"],
        &["__worker"],
    ];
    for args in subcommands {
        let mut command = duckgate(args);
        command.arg("--help");
        let output = run_cli(command, None);
        let help = all_output(&output).to_lowercase();
        // A control that this is real help text, not an error.
        assert!(
            output.status.success() && help.contains("usage"),
            "{args:?} --help: {help}"
        );
        for word in ["bypass", "unsafe", "validator", "hardening", "probe"] {
            assert!(
                !help.contains(word),
                "`duckgate {args:?} --help` mentions {word:?}:\n{help}"
            );
        }
    }
}

#[test]
fn a_typo_in_the_bypass_stops_duckgate_instead_of_testing_the_wrong_thing() {
    let scene = Scene::new("typo");
    let output = query(&scene.db, "SELECT glucose FROM readings", Some("validatr"));
    let text = all_output(&output);
    assert!(
        !output.status.success(),
        "started with a misspelt layer: {text}"
    );
    assert!(
        text.contains("validatr"),
        "the error names the unknown layer: {text}"
    );
    // Not "42" (the value): a log line's time can contain it by chance.
    assert!(
        !text.contains("rows returned") && !text.contains("row returned"),
        "the query ran anyway: {text}"
    );
}

#[test]
fn the_bypass_is_announced_and_the_layer_below_still_holds() {
    let scene = Scene::new("loud");

    // Control: without the switch a query runs and nothing is announced.
    let plain = query(&scene.db, "SELECT glucose FROM readings", None);
    let text = all_output(&plain);
    assert!(
        plain.status.success() && text.contains("42") && text.contains(" returned."),
        "{text}"
    );
    assert!(!text.contains("BYPASS"), "{text}");

    // Without the switch the validator refuses a file reader.
    let attack = "SELECT * FROM read_text('/etc/passwd')";
    let refused = query(&scene.db, attack, None);
    let text = all_output(&refused);
    assert!(
        !refused.status.success() && text.contains("read_text"),
        "{text}"
    );

    // With the validator switched off, duckgate says so, and DuckDB's hardening still denies it.
    let bypassed = query(&scene.db, attack, Some("validator"));
    let text = all_output(&bypassed);
    assert!(
        text.contains("TEST-ONLY LAYER BYPASS IS ON"),
        "no loud warning: {text}"
    );
    assert!(!bypassed.status.success(), "{text}");
    assert!(!text.contains("root:"), "/etc/passwd leaked: {text}");
}

/// Only the gateway (parent) and the worker (in its query and confine-only modes) read the
/// switch, and only the pool passes it on; nothing that speaks MCP or parses the command line
/// touches it.
#[test]
fn only_the_gateway_and_the_worker_read_the_switch() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    assert!(files.len() > 10, "found only {} source files", files.len());
    // The confine-only worker of the start-up preflight reads it for the landlock ABI cap; the
    // template reads it once and hands it to every worker it forks (a worker process too).
    // The gateway reads it where it builds the workers' spec.
    let readers = [
        "src/gateway/config.rs",
        "src/sandbox/preflight.rs",
        "src/sandbox/worker.rs",
        "src/sandbox/zygote/template.rs",
    ];
    let mut found_readers = Vec::new();
    for file in &files {
        let relative = file
            .strip_prefix(root.parent().unwrap())
            .unwrap()
            .to_string_lossy()
            .to_string();
        let source = std::fs::read_to_string(file).unwrap();
        if relative != "src/sandbox/bypass.rs" {
            assert!(
                !source.contains(ENV_VAR),
                "{relative} names {ENV_VAR} itself"
            );
            assert!(
                !source.contains("std::env::var(bypass"),
                "{relative} reads the switch by hand"
            );
        }
        let reads = source.contains("Bypass::from_env") || source.contains("Bypass::parse");
        if reads && relative != "src/sandbox/bypass.rs" {
            assert!(
                readers.contains(&relative.as_str()),
                "{relative} reads the bypass switch"
            );
            found_readers.push(relative.clone());
        }
        if relative.starts_with("src/mcp/")
            || relative == "src/main.rs"
            || relative.starts_with("src/cli/")
        {
            assert!(
                !source.contains("bypass::"),
                "{relative} reaches into the bypass module"
            );
        }
    }
    found_readers.sort();
    assert_eq!(
        found_readers, readers,
        "the gateway and the worker are the readers"
    );
}
