//! Big data within hard limits, through the real binary: a query that needs more memory than
//! DuckDB's `memory_limit` spills to the worker's private temporary directory and answers as
//! in-process DuckDB does; that directory is gone however the worker ends; and memory DuckDB does
//! not track is held to the budget by each worker's cap.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::support::steps::ENDLESS;
use crate::support::{
    TempDir, duckgate_cli, error_kind, make_db, outcome, run_cli, serve, wait_until, workers_of,
};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use serde_json::json;

/// 3 M readings of 2,000 patients, with a note that makes every row distinct: a DISTINCT over
/// it needs ~150 MB of hash table, well past a 64 MB memory_limit.
pub(crate) fn spill_db(tag: &str) -> (TempDir, PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("spill.duckdb");
    make_db(
        &db,
        "CREATE TABLE readings AS SELECT i % 2000 AS patient_id, \
         TIMESTAMP '2026-01-01' + to_seconds(i * 300 // 2000) AS ts, \
         40 + (i * 7919) % 360 AS glucose, 'note-' || (i * 104729 % 3000017)::VARCHAR AS note \
         FROM range(3000000) t(i);",
    );
    (dir, db)
}

const DISTINCT: &str = "SELECT count(*) AS n FROM (SELECT DISTINCT note, patient_id FROM readings)";

/// The answer in-process DuckDB gives.
fn duckdb_answer(db: &Path, sql: &str) -> i64 {
    let conn = duckdb::Connection::open_with_flags(
        db,
        duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .unwrap(),
    )
    .unwrap();
    conn.query_row(sql, [], |row| row.get(0)).unwrap()
}

/// A private root for the workers' temporary directories.
fn temp_root(dir: &TempDir) -> PathBuf {
    let root = dir.path().join("spill-root");
    std::fs::create_dir(&root).unwrap();
    std::fs::set_permissions(&root, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    root
}

/// The servers' directories under `root` (`server-…`, not their lock files).
fn server_dirs(root: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(root)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// Wait (at most 10 s: the pool removes a directory once it has reaped the worker) until no
/// worker's directory is left under `root`; fail naming `after` otherwise.
async fn all_removed(root: &Path, after: &str) {
    let gone = wait_until(Duration::from_secs(10), || worker_dirs(root).is_empty()).await;
    assert!(
        gone.is_some(),
        "left after {after}: {:?}",
        worker_dirs(root)
    );
}

/// Every worker's directory under `root`.
fn worker_dirs(root: &Path) -> Vec<PathBuf> {
    server_dirs(root)
        .iter()
        .flat_map(|server| server_dirs(server))
        .collect()
}

/// `duckgate ARGS…`: (exit code, stdout, stderr).
fn duckgate(args: &[&str]) -> (i32, String, String) {
    outcome(&run_cli(duckgate_cli(args), None))
}

#[test]
fn a_query_needing_more_than_the_memory_limit_spills_and_answers_as_duckdb_does() {
    let (dir, db) = spill_db("spill-distinct");
    let root = temp_root(&dir);
    let expected = duckdb_answer(&db, DISTINCT);
    assert_eq!(expected, 3_000_000);
    let db_arg = db.to_str().unwrap();
    let root_arg = root.to_str().unwrap();
    let common = [
        "query",
        "--db",
        db_arg,
        "--memory-limit",
        "64MB",
        "--temp-dir",
        root_arg,
    ];

    let (code, out, err) = duckgate(&[&common[..], &[DISTINCT]].concat());
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&expected.to_string()), "{out}");

    // Without spilling the same query fails, and says which limit and what to do: so the
    // answer above came from spilling.
    let (code, out, err) = duckgate(&[&common[..], &["--max-temp-size", "0", DISTINCT]].concat());
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("resource_limit"), "{out}");
    assert!(out.contains("--max-temp-size"), "{out}");

    // A spill cap too small for the query: a resource_limit naming the temporary space.
    let (code, out, err) = duckgate(&[&common[..], &["--max-temp-size", "8MB", DISTINCT]].concat());
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("resource_limit"), "{out}");
    assert!(out.contains("temporary disk space"), "{out}");

    // Each run removed its directories on the way out.
    assert_eq!(server_dirs(&root), Vec::<PathBuf>::new());
}

#[test]
fn flags_that_cannot_fit_in_the_budget_are_refused_at_start_with_the_way_out() {
    let (_dir, db) = spill_db("spill-refuse");
    let (code, out, err) = duckgate(&[
        "query",
        "--db",
        db.to_str().unwrap(),
        "--memory-budget",
        "1GB",
        "--memory-limit",
        "900MB",
        "SELECT 1",
    ]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains("--memory-limit"), "{err}");
    assert!(err.contains("--memory-budget"), "{err}");
    assert!(err.contains("or less"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workers_temporary_directory_is_gone_after_a_reply_a_timeout_and_a_sigkill() {
    let (dir, db) = spill_db("spill-removal");
    let root = temp_root(&dir);
    let root_arg = root.to_str().unwrap().to_string();
    let client = serve(
        &db,
        &[
            "--temp-dir",
            &root_arg,
            "--warm-workers",
            "0",
            "--timeout",
            "3",
        ],
    )
    .await;
    let server = client.server_pid().unwrap();

    // After a reply (the spilling query: its worker wrote in its directory).
    let result = client
        .call("query", json!({ "sql": DISTINCT }))
        .await
        .unwrap();
    assert!(text_of(&result).contains("3000000"), "{}", text_of(&result));
    all_removed(&root, "a reply").await;

    // After the deadline killed the worker.
    let result = client
        .call("query", json!({ "sql": ENDLESS }))
        .await
        .unwrap();
    assert_eq!(error_kind(&result), "timeout", "{}", text_of(&result));
    all_removed(&root, "a timeout").await;

    // After a SIGKILL from outside, while the query runs.
    let call = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .unwrap();
    let running = wait_until(Duration::from_secs(10), || {
        !workers_of(server).is_empty() && !worker_dirs(&root).is_empty()
    })
    .await;
    assert!(running.is_some(), "the worker never started");
    // Past its start-up and into the query: a worker killed before it is ready is replaced by
    // the pool, and the call would go on to its deadline.
    tokio::time::sleep(Duration::from_millis(500)).await;
    for worker in workers_of(server) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(worker as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let result = call.result().await.unwrap();
    assert_eq!(
        error_kind(&result),
        "internal_error",
        "{}",
        text_of(&result)
    );
    all_removed(&root, "a SIGKILL").await;
    // And the server goes on.
    assert_succeeds(&client, "SELECT 1 AS one").await;
    client.close().await.unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || server_dirs(&root).is_empty())
            .await
            .is_some(),
        "the server's directory outlived it: {:?}",
        server_dirs(&root)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_killed_server_left_is_swept_by_the_next_one() {
    let (dir, db) = spill_db("spill-sweep");
    let root = temp_root(&dir);
    let root_arg = root.to_str().unwrap().to_string();
    let args = ["--temp-dir", root_arg.as_str(), "--warm-workers", "1"];
    let crashed = serve(&db, &args).await;
    let crashed_pid = crashed.server_pid().unwrap();
    // A spare is waiting with its directory made.
    let spare = wait_until(Duration::from_secs(10), || !worker_dirs(&root).is_empty()).await;
    assert!(spare.is_some(), "no worker directory appeared");
    let left = server_dirs(&root);
    assert_eq!(left.len(), 1, "{left:?}");
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(crashed_pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    assert!(
        wait_until(Duration::from_secs(10), || crate::support::is_dead(
            crashed_pid
        ))
        .await
        .is_some()
    );
    drop(crashed);
    // Nobody removed it: the server had no chance.
    assert!(left[0].exists());

    let next = serve(&db, &args).await;
    assert_succeeds(&next, "SELECT 1 AS one").await;
    assert!(!left[0].exists(), "the dead server's files were not swept");
    assert_eq!(server_dirs(&root).len(), 1, "{:?}", server_dirs(&root));
    next.close().await.unwrap();
}

/// `sql` through `client` succeeds: the server still answers after what the test did to it.
async fn assert_succeeds(client: &McpClient, sql: &str) {
    let result = client.call("query", json!({ "sql": sql })).await.unwrap();
    assert_eq!(
        envelope_of(&result)["status"],
        "success",
        "{}",
        text_of(&result)
    );
}

/// Resident memory of a process in bytes (`VmRSS`, or its peak `VmHWM`), 0 once it is gone.
fn resident(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|status| {
            status.lines().find_map(|line| {
                let value = line.strip_prefix(field)?.strip_prefix(':')?;
                value
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
        })
        .map_or(0, |kib| kib * 1024)
}

/// Values DuckDB builds row by row and does not count against memory_limit: measured at 6.1 GB
/// and 3.9 GB resident in one worker whose limit was 2 GB.
const BOMBS: [&str; 2] = [
    "SELECT max(length(repeat(i::VARCHAR || '0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789', 30000))) FROM range(4096) t(i)",
    "SELECT list_reduce(range(300000000), lambda a, b: a + b)",
];

#[tokio::test(flavor = "multi_thread")]
async fn untracked_memory_bombs_at_full_concurrency_stay_under_the_budget() {
    const BUDGET: u64 = 3_000_000_000;
    let (_dir, db) = spill_db("spill-bombs");
    let client = serve(
        &db,
        &[
            "--memory-budget",
            "3GB",
            "--max-concurrent",
            "2",
            "--warm-workers",
            "1",
        ],
    )
    .await;
    let server = client.server_pid().unwrap();

    let info = client.call("server_info", json!({})).await.unwrap();
    let memory = envelope_of(&info)["data"]["limits"]["memory"].clone();
    assert_eq!(memory["budget_bytes"], BUDGET, "{memory}");
    assert_eq!(memory["budget_source"], "flag", "{memory}");
    assert_eq!(memory["slots"], 2, "{memory}");
    assert_eq!(
        memory["idle_processes"], 2,
        "one spare and the template: {memory}"
    );
    let cap = memory["cap_bytes"].as_u64().unwrap();
    assert!(
        text_of(&info).contains("each capped at"),
        "{}",
        text_of(&info)
    );

    // Both bombs at once (every running slot taken, the spare waiting), the workers' resident
    // memory sampled until both are answered: each worker's peak (VmHWM), and the largest sum
    // at one moment.
    let mut pending = Vec::new();
    for sql in BOMBS {
        let call = client
            .start_call("query", json!({ "sql": sql }))
            .await
            .unwrap();
        pending.push(tokio::spawn(call.result()));
    }
    let mut peaks = std::collections::HashMap::<u32, u64>::new();
    let mut largest_sum = 0u64;
    while pending.iter().any(|h| !h.is_finished()) {
        let workers = workers_of(server);
        let sum: u64 = workers.iter().map(|pid| resident(*pid, "VmRSS")).sum();
        largest_sum = largest_sum.max(sum);
        for pid in workers {
            let peak = resident(pid, "VmHWM");
            let entry = peaks.entry(pid).or_default();
            *entry = (*entry).max(peak);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut answers = Vec::new();
    for handle in pending {
        answers.push(handle.await.unwrap().unwrap());
    }
    let sum_of_peaks: u64 = peaks.values().sum();
    eprintln!(
        "budget {BUDGET}, cap {cap}: largest sum of resident sizes {largest_sum}, sum of each worker's peak {sum_of_peaks}, peaks {peaks:?}"
    );
    assert!(!peaks.is_empty(), "no worker was sampled");
    assert!(
        sum_of_peaks <= BUDGET,
        "{sum_of_peaks} > {BUDGET}: {peaks:?}"
    );
    for peak in peaks.values() {
        assert!(
            *peak <= cap + 200_000_000,
            "a worker's peak {peak} is far above its cap {cap}"
        );
    }
    for answer in &answers {
        assert_eq!(error_kind(answer), "resource_limit", "{}", text_of(answer));
        let message = envelope_of(answer)["error"]["message"]
            .as_str()
            .unwrap_or("");
        assert!(message.contains("memory cap of"), "{message}");
        assert!(message.contains("--memory-budget"), "{message}");
    }
    // And the next call is answered.
    assert_succeeds(&client, "SELECT 42 AS answer").await;
    client.close().await.unwrap();
}
