//! The wait for a worker slot is not the query's time: with every worker taken, a call waits at
//! most `--queue-timeout` and is then answered `busy` (never `timeout`), and a call that waited
//! still gets its whole `--timeout` once it runs. Real binary over stdio.

use std::time::{Duration, Instant};

use crate::support::steps::ENDLESS;
use crate::support::{assert_failed, cgm_db, error_kind, is_dead, serve, wait_until, workers_of};
use duckgate::mcp_client::envelope_of;
use rmcp::model::CallToolResult;
use serde_json::json;
use tokio::task::JoinHandle;

/// A call's result and when it came, counted from `t0`.
type Timed = (Result<CallToolResult, String>, Duration);

async fn start(
    client: &duckgate::mcp_client::McpClient,
    sql: &str,
    t0: Instant,
) -> JoinHandle<Timed> {
    let call = client
        .start_call("query", json!({ "sql": sql }))
        .await
        .expect("send the call");
    tokio::spawn(async move {
        let result = call.result().await;
        (result, t0.elapsed())
    })
}

/// The number just before `marker`, e.g. `4` in "… 4 queries are running".
fn number_before(text: &str, marker: &str) -> Option<usize> {
    let end = text.find(marker)?;
    text[..end]
        .split_whitespace()
        .last()
        .and_then(|w| w.parse().ok())
}

/// The number just after `marker`, e.g. `3` in "… are running and 3 were waiting".
fn number_after(text: &str, marker: &str) -> Option<usize> {
    let start = text.find(marker)? + marker.len();
    text[start..]
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cheap_query_behind_a_full_queue_is_told_busy_not_timeout() {
    let (_dir, db) = cgm_db("queue-busy");
    let client = serve(
        &db,
        &[
            "--max-concurrent",
            "4",
            "--timeout",
            "30",
            "--queue-timeout",
            "2",
        ],
    )
    .await;
    let server = client.server_pid().expect("server pid");
    let t0 = Instant::now();
    let mut bombs = Vec::new();
    for _ in 0..8 {
        bombs.push(start(&client, ENDLESS, t0).await);
    }
    // Time for the eight to reach the pool (four run, four wait), well inside the 2 s bound of
    // the four that wait.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let sent = Instant::now();
    let cheap = client
        .call("query", json!({ "sql": "SELECT 1" }))
        .await
        .expect("SELECT 1 is answered");
    let took = sent.elapsed();
    let envelope = envelope_of(&cheap).clone();
    eprintln!(
        "SELECT 1 sent {:.2} s after the bombs, answered {} after {:.2} s: {}",
        (sent - t0).as_secs_f64(),
        error_kind(&cheap),
        took.as_secs_f64(),
        envelope["error"]["message"]
    );
    assert_ne!(error_kind(&cheap), "timeout", "{envelope}");
    assert_failed(&cheap, "error", "busy");
    let message = envelope["error"]["message"].as_str().unwrap();
    assert_eq!(
        number_before(message, "queries are running"),
        Some(4),
        "{message}"
    );
    let ahead = number_after(message, "running and ");
    assert!(
        matches!(ahead, Some(1..=4)),
        "the waiting bombs ahead are named: {message}"
    );
    assert!(message.contains("Retry in a few seconds"), "{message}");
    assert!(!message.contains("timed out"), "{message}");
    // It waited the bound, not the 30 s deadline.
    assert!(
        took >= Duration::from_secs(2),
        "busy before the bound: {took:?}"
    );
    assert!(
        took < Duration::from_secs(12),
        "busy long after the 2 s bound: {took:?}"
    );
    let recovery = &envelope["error"]["recovery"];
    assert_eq!(recovery["suggested_tool"], "query", "{envelope}");
    assert_eq!(recovery["suggested_args"]["sql"], "SELECT 1", "{envelope}");
    assert!(
        recovery["hint"]
            .as_str()
            .unwrap_or_default()
            .contains("retry"),
        "{envelope}"
    );

    // The four bombs that waited were answered `busy` too; the four that run are still running.
    let answered = wait_until(Duration::from_secs(10), || {
        bombs.iter().filter(|b| b.is_finished()).count() >= 4
    })
    .await;
    assert!(answered.is_some(), "the waiting bombs were not answered");
    let mut still_running = Vec::new();
    for bomb in bombs {
        if bomb.is_finished() {
            let (result, at) = bomb.await.unwrap();
            let result = result.expect("the bomb is answered");
            eprintln!(
                "waiting bomb answered {} at {:.2} s",
                error_kind(&result),
                at.as_secs_f64()
            );
            assert_failed(&result, "error", "busy");
        } else {
            still_running.push(bomb);
        }
    }
    assert_eq!(still_running.len(), 4, "four bombs hold the four slots");

    // Closing the client ends the server, and with it the running bombs' workers.
    let workers = workers_of(server);
    assert!(workers.len() >= 4, "workers: {workers:?}");
    for bomb in &still_running {
        bomb.abort();
    }
    client.close().await.unwrap();
    let gone = wait_until(Duration::from_secs(10), || {
        workers.iter().all(|w| is_dead(*w))
    })
    .await;
    assert!(
        gone.is_some(),
        "workers left running after the server exited: {workers:?}"
    );
    eprintln!(
        "{} workers gone {:.2} s after close",
        workers.len(),
        gone.unwrap().as_secs_f64()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_that_waited_for_a_slot_still_gets_its_whole_timeout() {
    let (_dir, db) = cgm_db("queue-deadline");
    let client = serve(
        &db,
        &[
            "--max-concurrent",
            "1",
            "--timeout",
            "3",
            "--queue-timeout",
            "20",
        ],
    )
    .await;
    let t0 = Instant::now();
    let first = start(&client, ENDLESS, t0).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second_sent = t0.elapsed();
    let second = start(
        &client,
        "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 4",
        t0,
    )
    .await;
    let (first, first_at) = first.await.unwrap();
    let (second, second_at) = second.await.unwrap();
    let (first, second) = (first.unwrap(), second.unwrap());
    eprintln!(
        "first: {} at {:.2} s; second: sent at {:.2} s, {} at {:.2} s ({:.2} s after the first)",
        error_kind(&first),
        first_at.as_secs_f64(),
        second_sent.as_secs_f64(),
        error_kind(&second),
        second_at.as_secs_f64(),
        (second_at.saturating_sub(first_at)).as_secs_f64()
    );
    // The first ran until its deadline: the bomb does not end by itself.
    assert_failed(&first, "error", "timeout");
    assert!(first_at >= Duration::from_secs(3), "{first_at:?}");
    // The second waited for the first's slot, then ran its own 3 s: its deadline did not start
    // when it was sent.
    let envelope = assert_failed(&second, "error", "timeout");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("after 3 seconds"),
        "{envelope}"
    );
    assert!(
        second_at >= first_at + Duration::from_secs(2),
        "the second was stopped {:?} after the first: its wait counted against its deadline",
        second_at.saturating_sub(first_at)
    );
    assert!(
        second_at - second_sent >= Duration::from_millis(4500),
        "the second was stopped {:?} after it was sent",
        second_at - second_sent
    );
    client.close().await.unwrap();
}
