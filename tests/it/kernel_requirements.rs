//! duckgate refuses to start on a kernel without landlock or seccomp, unless the operator passes
//! `--allow-unconfined`, which it then announces on stderr and reports in `server_info`. A
//! refused `serve` still answers an MCP client, with the refusal as every tool's error. On
//! older landlock ABIs (simulated with the test bypass's `landlock_abi_N`) it starts, and
//! `server_info` names the mechanism that keeps each promise.
//!
//! The missing kernel feature is real, not a flag: the real `duckgate` binary runs under
//! `tests/programs/without_kernel_feature.rs`, which installs a seccomp filter making the landlock
//! system calls (or the `seccomp` system call) fail with `ENOSYS`, as a kernel built without
//! them answers, and then execs duckgate, whose every process inherits the filter. Cargo builds
//! that example next to the binary (`target/release/examples/`) for `cargo test`; a run of this
//! file alone builds it first.
//!
//! Without landlock, that filter is also what duckgate sees in a container whose seccomp
//! profile refuses landlock: on a kernel new enough for landlock, in a process under a filter it
//! inherited, duckgate names the filter as the likely cause (the kernel's own `ENOSYS` would
//! look the same, and the words say so), and how to start without it.

use std::ffi::OsString;
use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::support::{
    OutputSchemas, cgm_db, duckgate_cli, example, exe, run_cli, status, stderr_of,
};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use duckgate::protocol::{LandlockAbsence, SeccompAbsence, UnenforcedLayer};
use serde_json::{Value, json};

/// The wrapper program (built once per test binary).
fn wrapper() -> &'static Path {
    example("without_kernel_feature")
}

/// `without_kernel_feature FEATURE -- duckgate ARGS…` as a command (stdio left to the caller).
fn without(feature: &str, duckgate_args: &[OsString]) -> Command {
    let mut command = Command::new(wrapper());
    command
        .arg(feature)
        .arg("--")
        .arg(exe())
        .args(duckgate_args);
    command
}

fn args(parts: &[&str], db: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = parts.iter().map(OsString::from).collect();
    out.push("--db".into());
    out.push(db.into());
    out
}

/// The refusal paragraph: the one stderr line that says duckgate refuses to start.
fn refusal_line(output: &Output) -> String {
    let stderr = stderr_of(output);
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("refuses to start"))
        .collect();
    assert_eq!(lines.len(), 1, "one refusal paragraph expected:\n{stderr}");
    lines[0].to_string()
}

/// `duckgate serve --db DB extra…` through the wrapper (or directly with `None`), as an MCP
/// session; the server's stderr goes to `stderr_file`.
async fn serve_with(
    feature: Option<&str>,
    db: &Path,
    extra: &[&str],
    stderr_file: &Path,
) -> McpClient {
    let mut command = match feature {
        Some(feature) => {
            let mut c = tokio::process::Command::new(wrapper());
            c.arg(feature).arg("--").arg(exe());
            c
        }
        None => tokio::process::Command::new(exe()),
    };
    command.arg("serve").arg("--db").arg(db).args(extra);
    let stderr = File::create(stderr_file).expect("stderr file");
    McpClient::spawn_command(command, Stdio::from(stderr))
        .await
        .expect("duckgate serve initialises")
}

/// Run a query that must succeed, and `server_info`'s posture, validated against its schema.
async fn query_and_posture(client: &McpClient) -> (Value, String) {
    let schemas = OutputSchemas::fetch(client).await;
    crate::support::steps::count_cgm_readings(client, &schemas).await;
    let info = client.call("server_info", json!({})).await.unwrap();
    schemas.check("server_info", &info);
    assert_eq!(status(&info), "success", "{}", envelope_of(&info));
    (
        envelope_of(&info)["data"]["posture"].clone(),
        text_of(&info).to_string(),
    )
}

/// The posture's `unenforced` list, read back as the layers it names.
fn unenforced(posture: &Value) -> Vec<UnenforcedLayer> {
    serde_json::from_value(posture["unenforced"].clone())
        .unwrap_or_else(|e| panic!("no unenforced list ({e}): {posture}"))
}

/// The wrapper works at the kernel level: its child runs under a seccomp filter with
/// no_new_privs, as `/proc/self/status` shows, and `exec` still works (it is not filtered).
#[test]
fn the_wrapper_installs_a_real_seccomp_filter_and_execs() {
    for feature in ["landlock", "seccomp"] {
        let mut command = Command::new(wrapper());
        command.args([feature, "--", "/bin/cat", "/proc/self/status"]);
        let output = run_cli(command, None);
        assert!(output.status.success(), "{output:?}");
        let status = String::from_utf8_lossy(&output.stdout);
        assert!(status.contains("NoNewPrivs:\t1"), "{status}");
        assert!(status.contains("Seccomp:\t2"), "{status}");
    }
}

/// `serve` on a kernel without `missing` exits 1 before serving, naming that feature (`names`),
/// ENOSYS and the override, and not the feature that is present (`present`).
fn assert_serve_refuses_without(missing: &str, names: &str, present: &str) {
    let (_dir, db) = cgm_db(&format!("kernel-no-{missing}"));
    let output = run_cli(without(missing, &args(&["serve"], &db)), None);
    assert_eq!(output.status.code(), Some(1), "{}", stderr_of(&output));
    let refusal = refusal_line(&output);
    for needle in [names, "ENOSYS", "--allow-unconfined"] {
        assert!(refusal.contains(needle), "{needle:?} not in: {refusal}");
    }
    assert!(
        !refusal.contains(present),
        "{present} is present here: {refusal}"
    );
    // It stopped before serving: nothing on stdout (no MCP traffic, no worker frames).
    assert!(output.stdout.is_empty(), "{output:?}");
}

#[test]
fn serve_refuses_to_start_without_landlock() {
    assert_serve_refuses_without(
        "landlock",
        "Landlock: landlock_create_ruleset fails (ENOSYS, or EPERM as some seccomp profiles \
         answer) in a process that runs under ",
        "Seccomp:",
    );
}

#[test]
fn serve_refuses_to_start_without_seccomp() {
    assert_serve_refuses_without(
        "seccomp",
        "Seccomp: the kernel has no seccomp system call",
        "Landlock:",
    );
}

/// The CLI's `query` command makes the same check; with the flag it runs and warns.
#[test]
fn query_command_refuses_without_landlock_and_runs_with_allow_unconfined() {
    let (_dir, db) = cgm_db("kernel-query");
    let sql = "SELECT count(*) AS n FROM cgm_readings";
    let refused = run_cli(without("landlock", &args(&["query", sql], &db)), None);
    assert_eq!(refused.status.code(), Some(1), "{}", stderr_of(&refused));
    assert!(refusal_line(&refused).contains("--allow-unconfined"));
    assert!(refused.stdout.is_empty(), "{refused:?}");

    let allowed = run_cli(
        without(
            "landlock",
            &args(&["query", "--allow-unconfined", sql], &db),
        ),
        None,
    );
    assert_eq!(allowed.status.code(), Some(0), "{}", stderr_of(&allowed));
    let stdout = String::from_utf8_lossy(&allowed.stdout);
    assert!(stdout.contains("4032"), "{stdout}");
    let stderr = stderr_of(&allowed);
    assert!(stderr.contains("WARNING"), "{stderr}");
    assert!(stderr.contains("- landlock: landlock_create_ruleset fails (ENOSYS"));
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_unconfined_serves_without_landlock_warns_and_reports_it() {
    let (dir, db) = cgm_db("kernel-allow-landlock");
    let log = dir.path().join("stderr.log");
    let client = serve_with(Some("landlock"), &db, &["--allow-unconfined"], &log).await;
    let (posture, text) = query_and_posture(&client).await;
    client.close().await.unwrap();

    assert_eq!(posture["landlock"], "not_enforced", "{posture}");
    assert_eq!(posture["landlock_abi"], Value::Null, "{posture}");
    assert_eq!(posture["seccomp"], true, "{posture}");
    assert_eq!(posture["no_new_privs"], true, "{posture}");
    let gaps = unenforced(&posture);
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    // The wrapper's filter, and any this test runner was started under.
    assert!(
        matches!(
            gaps[0],
            UnenforcedLayer::Landlock(LandlockAbsence::FailsUnderInheritedFilter {
                inherited_filters: 1..
            })
        ),
        "{gaps:?}"
    );
    assert!(
        text.contains("NOT ENFORCED (--allow-unconfined): landlock"),
        "{text}"
    );

    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(stderr.contains("WARNING: duckgate runs with --allow-unconfined"));
    assert!(stderr.contains("NOT ENFORCED"), "{stderr}");
    assert!(stderr.contains("- landlock: landlock_create_ruleset fails (ENOSYS"));
    assert!(!stderr.contains("- seccomp:"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_unconfined_serves_without_seccomp_warns_and_reports_it() {
    let (dir, db) = cgm_db("kernel-allow-seccomp");
    let log = dir.path().join("stderr.log");
    let client = serve_with(Some("seccomp"), &db, &["--allow-unconfined"], &log).await;
    let (posture, text) = query_and_posture(&client).await;
    client.close().await.unwrap();

    assert_eq!(posture["seccomp"], false, "{posture}");
    assert_eq!(posture["landlock"], "fully_enforced", "{posture}");
    let gaps = unenforced(&posture);
    assert_eq!(gaps.len(), 1, "{gaps:?}");
    assert_eq!(
        gaps[0],
        UnenforcedLayer::Seccomp(SeccompAbsence::NoSystemCall),
        "{gaps:?}"
    );
    assert!(text.contains("seccomp off"), "{text}");
    assert!(
        text.contains("NOT ENFORCED (--allow-unconfined): seccomp"),
        "{text}"
    );

    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(stderr.contains("WARNING: duckgate runs with --allow-unconfined"));
    assert!(stderr.contains("- seccomp: the kernel has no seccomp system call"));
    assert!(!stderr.contains("- landlock:"), "{stderr}");
}

/// Positive control: on this machine's kernel, without the wrapper, the server starts without
/// the flag, every layer is in force and nothing is announced; with the flag nothing changes.
#[tokio::test(flavor = "multi_thread")]
async fn on_a_full_kernel_the_server_is_fully_confined_with_or_without_the_flag() {
    let (dir, db) = cgm_db("kernel-full");
    for extra in [&[][..], &["--allow-unconfined"][..]] {
        let log = dir.path().join("stderr.log");
        let client = serve_with(None, &db, extra, &log).await;
        let (posture, text) = query_and_posture(&client).await;
        client.close().await.unwrap();

        assert_eq!(
            posture["landlock"], "fully_enforced",
            "{extra:?}: {posture}"
        );
        assert!(
            posture["landlock_abi"].as_i64().is_some_and(|abi| abi >= 1),
            "{posture}"
        );
        assert_eq!(posture["seccomp"], true, "{posture}");
        assert_eq!(posture["no_new_privs"], true, "{posture}");
        assert!(unenforced(&posture).is_empty(), "{posture}");
        assert!(!text.contains("NOT ENFORCED"), "{text}");
        let stderr = std::fs::read_to_string(&log).unwrap();
        assert!(!stderr.contains("WARNING"), "{extra:?}: {stderr}");
        assert!(!stderr.contains("refuses"), "{extra:?}: {stderr}");
    }
}

/// `serve` on a kernel without landlock cannot run queries, but an MCP client (which shows tool
/// errors, not stderr) still learns why: the tools are listed as usual and every call answers
/// `sandbox_unavailable`, naming the missing feature and the fix. No worker ever starts.
#[tokio::test(flavor = "multi_thread")]
async fn the_start_up_refusal_reaches_an_mcp_client_as_a_tool_error() {
    let (dir, db) = cgm_db("kernel-refusal-mcp");
    let log = dir.path().join("stderr.log");
    let client = serve_with(Some("landlock"), &db, &[], &log).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let tools = client.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "query"), "{tools:?}");
    for (tool, args) in [
        (
            "query",
            json!({ "sql": "SELECT count(*) FROM cgm_readings" }),
        ),
        ("list_tables", json!({})),
        ("server_info", json!({})),
    ] {
        let result = client.call(tool, args).await.unwrap();
        schemas.check(tool, &result);
        assert_eq!(result.is_error, Some(true), "{tool}");
        let envelope = envelope_of(&result);
        assert_eq!(status(&result), "error", "{tool}: {envelope}");
        assert_eq!(
            envelope["error"]["kind"], "sandbox_unavailable",
            "{envelope}"
        );
        let message = envelope["error"]["message"].as_str().unwrap();
        for needle in ["landlock", "ENOSYS"] {
            assert!(
                message.contains(needle),
                "{tool}: {needle} not in {message}"
            );
        }
        let hint = envelope["error"]["recovery"]["hint"].as_str().unwrap();
        for needle in ["Linux 5.13", "check-sandbox", "--allow-unconfined"] {
            assert!(hint.contains(needle), "{tool}: {needle} not in {hint}");
        }
        assert!(
            text_of(&result).contains("sandbox_unavailable")
                || text_of(&result).contains("landlock")
        );
    }
    let server = client.server_pid().expect("server pid") as i32;
    assert!(
        children_of(server).is_empty(),
        "no worker may run: {:?}",
        children_of(server)
    );
    client.close().await.unwrap();
    let stderr = std::fs::read_to_string(&log).unwrap();
    assert!(stderr.contains("refuses to start"), "{stderr}");
}

/// Pids whose parent is `pid`.
fn children_of(pid: i32) -> Vec<i32> {
    let mut children = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid …`: comm may hold spaces, so split after its `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|ppid| ppid.parse::<i32>().ok());
        if ppid == Some(pid) {
            children.push(child);
        }
    }
    children
}

/// On each older landlock ABI the server starts without the flag, answers queries, and
/// `server_info` names the mechanism of each promise: landlock's own rights where the ABI has
/// them, seccomp where it does not.
#[tokio::test(flavor = "multi_thread")]
async fn on_every_older_landlock_abi_the_server_starts_and_names_each_mechanism() {
    let (dir, db) = cgm_db("kernel-abi-caps");
    for abi in 1..=5 {
        let log = dir.path().join(format!("stderr-abi{abi}.log"));
        let mut command = tokio::process::Command::new(exe());
        command.arg("serve").arg("--db").arg(&db).env(
            duckgate::sandbox::bypass::ENV_VAR,
            format!("landlock_abi_{abi}"),
        );
        let stderr = File::create(&log).expect("stderr file");
        let client = McpClient::spawn_command(command, Stdio::from(stderr))
            .await
            .expect("duckgate serve initialises");
        let (posture, text) = query_and_posture(&client).await;
        client.close().await.unwrap();

        assert_eq!(posture["landlock_abi"], abi, "{posture}");
        assert!(unenforced(&posture).is_empty(), "{posture}");
        let properties = posture["properties"].as_array().unwrap();
        assert_eq!(properties.len(), 6, "{posture}");
        let mechanism = |name: &str| -> String {
            let p = properties
                .iter()
                .find(|p| p["property"] == name)
                .unwrap_or_else(|| panic!("no {name}: {posture}"));
            assert_eq!(p["enforced"], true, "{p}");
            p["mechanism"].as_str().unwrap().to_string()
        };
        let signals = mechanism("signals");
        assert!(signals.contains("seccomp"), "{signals}");
        assert!(
            signals.contains(&format!("landlock ABI {abi} has no signal scoping")),
            "{signals}"
        );
        assert_eq!(
            mechanism("network").contains(&format!("landlock ABI {abi} has no network rules")),
            abi < 4
        );
        assert_eq!(
            mechanism("file_writes").contains("read-only O_TRUNC"),
            abi < 3
        );
        assert!(mechanism("file_reads").starts_with(&format!("landlock ABI {abi}")));
        assert!(
            text.contains("signals (no signals or ptrace beyond itself): seccomp"),
            "{text}"
        );
        let stderr = std::fs::read_to_string(&log).unwrap();
        assert!(
            stderr.contains("query workers confined: file_reads: landlock ABI"),
            "{stderr}"
        );
        assert!(!stderr.contains("refuses"), "{stderr}");
    }
}

/// `duckgate check-sandbox` prints each property with its mechanism and exits 0 here; on a
/// kernel without landlock it names the gap and the fix and exits 1.
#[test]
fn check_sandbox_reports_the_posture_and_exits_by_it() {
    let here = run_cli(duckgate_cli(["check-sandbox"]), None);
    let stdout = String::from_utf8_lossy(&here.stdout);
    assert_eq!(here.status.code(), Some(0), "{stdout}{}", stderr_of(&here));
    assert!(
        stdout.contains("confines its query workers fully"),
        "{stdout}"
    );
    for property in [
        "file_reads",
        "file_writes",
        "network",
        "signals",
        "exec",
        "privilege_gain",
    ] {
        assert!(
            stdout.contains(&format!("\n  {property} (")),
            "{property}: {stdout}"
        );
    }
    assert!(!stdout.contains("NOT ENFORCED"), "{stdout}");

    let mut capped = duckgate_cli(["check-sandbox"]);
    capped.env(duckgate::sandbox::bypass::ENV_VAR, "landlock_abi_2");
    let capped = run_cli(capped, None);
    let stdout = String::from_utf8_lossy(&capped.stdout);
    assert_eq!(capped.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("landlock ABI 2 has no signal scoping"),
        "{stdout}"
    );

    let without = run_cli(
        without("landlock", &[OsString::from("check-sandbox")]),
        None,
    );
    let stdout = String::from_utf8_lossy(&without.stdout);
    assert_eq!(
        without.status.code(),
        Some(1),
        "{stdout}{}",
        stderr_of(&without)
    );
    assert!(
        stdout.contains("cannot confine its query workers fully"),
        "{stdout}"
    );
    assert!(stdout.contains("file_reads (reads only"), "{stdout}");
    assert!(
        stdout.contains("NOT ENFORCED: no landlock on this kernel"),
        "{stdout}"
    );
    assert!(stdout.contains("Missing: landlock: landlock_create_ruleset fails (ENOSYS"));
    assert!(
        stdout.contains(duckgate::sandbox::preflight::FIX_INHERITED_FILTER),
        "{stdout}"
    );
    assert!(stdout.contains("Linux 5.13"), "{stdout}");
}
