//! The demo session: the same MCP client code `duckgate demo` uses, driving the real binary.

use crate::support::{TempDir, cgm_db, duckgate_cli, exe, run_cli, stderr_of, stdout_of};

#[tokio::test(flavor = "multi_thread")]
async fn the_demo_session_runs_every_call_and_shows_the_refusals_and_the_sandbox() {
    let (_dir, db) = cgm_db("demo-session");
    let mut out = Vec::new();
    duckgate::demo::session::run_demo_session(&exe(), &db, &mut out)
        .await
        .expect("demo session");
    let text = String::from_utf8(out).unwrap();
    for expected in [
        "── 1. list_tables",
        "── 2. describe_table",
        "── 3. query",
        "avg_glucose_mg_dl",
        "── 4. plot {\"kind\":\"line\"",
        "── 5. plot {\"kind\":\"agp\"",
        "within the target range 70–180",
        "── 6. plot {\"kind\":\"tir\"",
        "Time in ranges over",
        "── 7. plot {\"kind\":\"histogram\"",
        "── 8. plot {\"kind\":\"bar\"",
        "── 9. plot {\"kind\":\"scatter\"",
        "── 10. query {\"sql\":\"DELETE FROM cgm_readings WHERE 1 = 1\"}",
        duckgate_validate::error::messages::WRITE_REFUSED,
        "── 11. query {\"sql\":\"SELECT * FROM read_text('/etc/passwd')\"}",
        "status: refused, error.kind: policy_blocked, isError: true",
        "── 12. server_info",
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
    let (_dir, db, output) = run_demo("demo-cli");
    let stdout = String::from_utf8_lossy(&output.stdout);
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

/// `duckgate demo --out <fresh path>` with stdout and stderr piped (not a terminal).
fn run_demo(tag: &str) -> (TempDir, std::path::PathBuf, std::process::Output) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("demo.duckdb");
    let mut command = duckgate_cli(["demo", "--out"]);
    command.arg(&db);
    let output = run_cli(command, None);
    assert!(
        output.status.success(),
        "demo failed: {}\nstdout:\n{}\nstderr:\n{}",
        output.status,
        stdout_of(&output),
        stderr_of(&output)
    );
    (dir, db, output)
}

#[test]
fn the_demo_draws_no_progress_frames_into_a_stderr_that_is_not_a_terminal() {
    let (_dir, _db, output) = run_demo("demo-no-tty");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains('\r'),
        "progress frames in a log:\n{stderr:?}"
    );
    assert!(!stderr.contains("[#"), "a progress bar in a log:\n{stderr}");
    assert_eq!(
        stderr.matches("building the demo database at ").count(),
        1,
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("built the demo database").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn the_demo_ends_with_the_claude_mcp_add_line_for_this_binary_and_its_database() {
    let (_dir, db, output) = run_demo("demo-next-step");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The demo names the binary as the kernel knows it (symlinks resolved).
    let binary = std::fs::canonicalize(exe()).unwrap();
    let last = stdout.trim_end().lines().last().unwrap_or_default();
    assert_eq!(
        last.trim(),
        format!(
            "claude mcp add -s user duckgate -- {} serve --db {}",
            binary.display(),
            db.display()
        ),
        "{stdout}"
    );
    // Outside WSL there is no Claude Desktop to configure on this machine: the demo says where
    // the route is instead of printing an entry no client reads.
    if std::env::var_os("WSL_DISTRO_NAME").is_none() {
        assert!(
            stdout.contains("On macOS (and on Windows without WSL), run duckgate in a container"),
            "{stdout}"
        );
        assert!(!stdout.contains("mcpServers"), "{stdout}");
    }
}

/// A stand-in for Windows' wsl.exe: `wsl.exe -d DISTRIBUTION -- COMMAND ARGS…` runs the command
/// with its standard input and output passed through, as wsl.exe does.
const FAKE_WSL: &str = r#"#!/bin/sh
[ "$1" = "-d" ] || { echo "wsl.exe: expected -d" >&2; exit 2; }
shift 2
[ "$1" = "--" ] || { echo "wsl.exe: expected --" >&2; exit 2; }
shift
exec "$@"
"#;

#[tokio::test(flavor = "multi_thread")]
async fn under_wsl_the_demo_prints_a_claude_desktop_entry_that_serves_through_wsl_exe() {
    let dir = TempDir::new("demo-wsl");
    let db = dir.path().join("demo.duckdb");
    let mut command = duckgate_cli(["demo", "--out"]);
    command.arg(&db).env("WSL_DISTRO_NAME", "Ubuntu-24.04");
    let output = run_cli(command, None);
    assert!(output.status.success(), "{}", stderr_of(&output));
    let stdout = stdout_of(&output);
    let from = stdout
        .rfind(duckgate::mcp::next_steps::CLAUDE_DESKTOP_CONFIG)
        .unwrap_or_else(|| panic!("no Windows config path:\n{stdout}"));
    let start = from + stdout[from..].find("\n    {\n").expect("a JSON entry") + 1;
    let end = from + stdout[from..].find("\n    }\n").expect("its end") + "\n    }".len();
    let entry: serde_json::Value =
        serde_json::from_str(&stdout[start..end]).unwrap_or_else(|e| panic!("{e}:\n{stdout}"));
    let server = &entry["mcpServers"]["duckgate"];
    let binary = std::fs::canonicalize(exe()).unwrap();
    assert_eq!(server["command"], "wsl.exe");
    assert_eq!(
        server["args"],
        serde_json::json!([
            "-d",
            "Ubuntu-24.04",
            "--",
            binary.to_str().unwrap(),
            "serve",
            "--db",
            db.to_str().unwrap()
        ])
    );

    // Start the server exactly as the entry says, through the stand-in, and use it over stdio.
    let wsl = dir.path().join("wsl.exe");
    std::fs::write(&wsl, FAKE_WSL).unwrap();
    std::fs::set_permissions(&wsl, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let args: Vec<String> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let mut serve = tokio::process::Command::new(&wsl);
    serve.args(&args);
    let client = duckgate::mcp_client::McpClient::spawn_command(serve, std::process::Stdio::null())
        .await
        .unwrap_or_else(|e| panic!("the entry's command does not start a session: {e}"));
    let result = client
        .call(
            "query",
            serde_json::json!({ "sql": "SELECT count(*) AS n FROM cgm_readings" }),
        )
        .await
        .unwrap();
    assert_eq!(
        duckgate::mcp_client::envelope_of(&result)["status"],
        "success",
        "{result:?}"
    );
    client.close().await.unwrap();
}
