//! The demo session: the same MCP client code `duckgate demo` uses, driving the real binary.
#![cfg(feature = "engine")]

mod mcp_support;

use std::process::Command;

use mcp_support::{TempDir, cgm_db, exe};

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_session_runs_every_call_and_shows_the_refusals_and_the_sandbox() {
    let (_dir, db) = cgm_db("demo-session");
    let mut out = Vec::new();
    duckgate::mcp::demo::run_demo_session(&exe(), &db, &mut out)
        .await
        .expect("demo session");
    let text = String::from_utf8(out).unwrap();
    for expected in [
        "── 1. list_tables",
        "── 2. describe_table",
        "── 3. query",
        "avg_glucose_mg_dl",
        "── 4. query {\"sql\":\"DELETE FROM cgm_readings WHERE 1 = 1\"}",
        duckgate::error::messages::WRITE_REFUSED,
        "── 5. query {\"sql\":\"SELECT * FROM read_text('/etc/passwd')\"}",
        "status: refused, error.kind: policy_blocked, isError: true",
        "── 6. server_info",
        "landlock",
        "Demo finished",
    ] {
        assert!(
            text.contains(expected),
            "demo output lacks {expected:?}:\n{text}"
        );
    }
    assert!(
        !text.contains("root:x:0:0"),
        "/etc/passwd leaked into the demo:\n{text}"
    );
}

#[test]
fn duckgate_demo_builds_its_database_and_runs_to_completion() {
    let dir = TempDir::new("demo-cli");
    let db = dir.path().join("demo.duckdb");
    let output = Command::new(exe())
        .arg("demo")
        .arg("--out")
        .arg(&db)
        .output()
        .expect("run duckgate demo");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "demo failed: {}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
    assert!(db.exists(), "demo did not write {}", db.display());
    for expected in [
        "list_tables",
        "describe_table",
        "DELETE",
        "read_text",
        "server_info",
        "Demo finished",
    ] {
        assert!(
            stdout.contains(expected),
            "demo output lacks {expected:?}:\n{stdout}"
        );
    }
}
