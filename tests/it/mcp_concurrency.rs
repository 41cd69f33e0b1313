//! Cancellation, progress and concurrent calls against the real binary.

use std::time::{Duration, Instant};

use crate::support::steps::{ENDLESS, busy_worker, still_answers};
use crate::support::{cgm_db, is_dead, serve, wait_until};
use duckgate::mcp_client::envelope_of;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_running_query_kills_its_worker_at_once_and_the_server_goes_on() {
    let (_dir, db) = cgm_db("cancel");
    let client = serve(&db, &["--timeout", "120"]).await;
    let server = client.server_pid().expect("server pid");
    let call = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .unwrap();
    let worker = busy_worker(server).await;
    assert!(!is_dead(worker));

    call.cancel("test cancels the query").await.unwrap();
    let gone_after = wait_until(Duration::from_secs(5), || is_dead(worker)).await;
    let gone_after =
        gone_after.unwrap_or_else(|| panic!("worker {worker} still alive 5 s after the cancel"));
    assert!(
        gone_after < Duration::from_millis(1500),
        "worker took {gone_after:?} to die"
    );
    // Reaped, not left as a zombie.
    assert!(
        wait_until(Duration::from_secs(2), || !std::path::Path::new(&format!(
            "/proc/{worker}"
        ))
        .exists())
        .await
        .is_some(),
        "worker {worker} was killed but not reaped"
    );

    still_answers(&client).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_running_query_with_a_progress_token_reports_progress_every_second() {
    let (_dir, db) = cgm_db("progress");
    let client = serve(&db, &["--timeout", "120"]).await;
    let started = Instant::now();
    let call = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .unwrap();
    let token = call.progress_token();
    // Wait for three notifications rather than a fixed time, so a loaded machine that starts
    // the worker late does not fail the test; then check they did not come faster than 1/s.
    let progress = loop {
        let progress = client.progress_for(&token);
        if progress.len() >= 3 || started.elapsed() > Duration::from_secs(20) {
            break progress;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let waited = started.elapsed().as_secs_f64();
    assert!(
        progress.len() >= 3,
        "expected 3 notifications within 20 s, got {progress:?}"
    );
    assert!(
        waited >= 2.9,
        "3 notifications after {waited:.2} s: faster than one a second: {progress:?}"
    );
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert!(
        values.windows(2).all(|w| w[1] > w[0]),
        "progress must increase: {values:?}"
    );
    assert!(
        progress[0]
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("running"),
        "{progress:?}"
    );
    call.cancel("done watching").await.unwrap();
    // A quick query finishes before the first tick: no progress for it.
    let quick = client
        .start_call("query", json!({ "sql": "SELECT 1" }))
        .await
        .unwrap();
    let quick_token = quick.progress_token();
    quick.result().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert!(client.progress_for(&quick_token).is_empty());
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn eight_concurrent_queries_are_all_answered_with_their_own_rows() {
    let (_dir, db) = cgm_db("concurrent");
    let client = serve(&db, &[]).await;
    let calls = (0..8).map(|i| {
        let client = &client;
        async move {
            let sql = format!(
                "SELECT {i} AS caller, count(*) AS n, min(id) AS first FROM cgm_readings WHERE id % 8 = {i}"
            );
            (i, client.call("query", json!({ "sql": sql })).await.unwrap())
        }
    });
    let results = futures_join_all(calls).await;
    assert_eq!(results.len(), 8);
    for (i, result) in results {
        let envelope = envelope_of(&result);
        assert_eq!(envelope["status"], "success", "call {i}: {envelope}");
        // 4032 rows, ids 0..4031: each residue class mod 8 has 504 rows and starts at i.
        assert_eq!(
            envelope["data"]["rows"],
            json!([[i, 504, i]]),
            "call {i} got another call's answer"
        );
    }
    client.close().await.unwrap();
}

/// Await all futures concurrently on this task (no extra crate needed).
async fn futures_join_all<F: std::future::Future>(
    futures: impl IntoIterator<Item = F>,
) -> Vec<F::Output> {
    let mut pinned: Vec<std::pin::Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = pinned.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in pinned.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    std::task::Poll::Ready(value) => *output = Some(value),
                    std::task::Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    outputs
        .into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}
