//! A worker that breaks the reply protocol costs only its own call: an oversized length, a
//! malformed or truncated frame, no reply, a reply of the wrong kind or a crash each end that
//! call with a clear error, and the next call is answered by a fresh worker.
//!
//! No CLI flag or MCP call can point the server at another worker binary (by design), so this
//! test drives the library's `Gateway`, the same validator, pool and worker code `duckgate serve`
//! runs, with `worker_exe` set to `tests/programs/rogue_worker.rs`. That relay starts the real
//! confined `duckgate __worker`, passes its frames on, and replaces the reply to a query whose
//! SQL names a misbehaviour, as a compromised worker could.

use std::path::Path;
use std::time::Duration;

use crate::support::{cgm_db, example};
use duckgate::gateway::{Gateway, GatewayConfig};
use duckgate_validate::error::ErrorKind;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The relay program (built once per test binary).
fn rogue_worker() -> &'static Path {
    example("rogue_worker")
}

/// Children of this test process that are zombies (exited, not reaped).
fn zombie_children() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut zombies = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid …; comm may hold spaces, so split after its closing paren.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 1 && fields[1] == me && fields[0] == "Z" {
            zombies.push(head.to_string());
        }
    }
    zombies
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_reply_fails_only_its_own_call_and_the_next_call_is_answered() {
    let (_dir, db) = cgm_db("rogue");
    let mut config = GatewayConfig::new(db.clone());
    config.worker_exe = Some(rogue_worker().to_path_buf());
    // The relay stands in for a spawned worker's binary: forked workers' replies take the same
    // path through the pool (`exchange`), and tests/it/zygote.rs covers their deaths.
    config.fork_workers = false;
    // Well above a normal call, well below what a wait for a body that never comes would take
    // to be noticed: an oversized reply must be refused on its prefix, not time out.
    config.timeout = Duration::from_secs(20);
    let gateway = Gateway::start(config).await.expect("gateway starts");

    // The relay passes a real worker's answer on unchanged.
    let control = gateway
        .query(
            "SELECT count(*) AS n FROM cgm_readings",
            10,
            CancellationToken::new(),
        )
        .await
        .expect("a relayed call is answered");
    assert_eq!(control.rows, vec![vec![json!(4032)]]);

    let cases = [
        ("oversized", ErrorKind::ResourceLimit, "above the cap"),
        (
            "malformed",
            ErrorKind::InternalError,
            "failed before answering",
        ),
        (
            "truncated",
            ErrorKind::InternalError,
            "failed before answering",
        ),
        (
            "silent",
            ErrorKind::InternalError,
            "failed before answering",
        ),
        (
            "wrong_kind",
            ErrorKind::InternalError,
            "does not fit the request",
        ),
        ("crash", ErrorKind::InternalError, "died (signal 9)"),
    ];
    for (round, (misbehaviour, kind, words)) in cases.into_iter().enumerate() {
        let sql = format!("SELECT 'rogue:{misbehaviour}' AS marker");
        let error = gateway
            .query(&sql, 10, CancellationToken::new())
            .await
            .expect_err(misbehaviour);
        assert_eq!(error.kind, kind, "{misbehaviour}: {error:?}");
        assert!(
            error.message.contains(words),
            "{misbehaviour}: the message should say {words:?}: {}",
            error.message
        );

        let answer = round as i64 * 1000 + 42;
        let next = gateway
            .query(
                &format!("SELECT {answer} AS answer"),
                10,
                CancellationToken::new(),
            )
            .await
            .unwrap_or_else(|e| panic!("the call after {misbehaviour} failed: {e:?}"));
        assert_eq!(next.rows, vec![vec![json!(answer)]], "after {misbehaviour}");
    }

    // Every broken worker was reaped: a replied worker is reaped within 2 s of its reply.
    let mut zombies = zombie_children();
    for _ in 0..50 {
        if zombies.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        zombies = zombie_children();
    }
    assert!(zombies.is_empty(), "unreaped workers: {zombies:?}");
    gateway.shutdown().await;
}
