//! MCP round trips against the real `duckgate serve` binary, through the same client as the tests.
//!
//! Measures: spawn → initialized; `tools/call query` for `SELECT 1` and for 1,000 rows × 4
//! columns in three regimes (back to back, bursts of 4 parallel calls, a 150 ms pause before
//! each call), with workers forked from the template (the default) and spawned
//! (`--spawn-workers`), each against in-process DuckDB under the same regime.
//! Targets: initialize ≤ 50 ms; `SELECT 1` ≤ 5 ms p50 with think time.
//!
//! Run: `cargo bench --bench mcp_roundtrip` (release profile). `MCP_BENCH_ROUNDS` sets the
//! number of calls per series (default 40).
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::json;
use support::{
    Regime, mcp_bench_rounds, percentile as percentile_ms, scratch_dir, time_regime,
    time_regime_in_process,
};

#[allow(
    dead_code,
    reason = "the benches share it; this one uses the regimes, the rounds and the scratch directory"
)]
mod support;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn report(label: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{label:<46} n={:<3} p50 {:>7.2} ms  p90 {:>7.2} ms  min {:>7.2} ms  max {:>7.2} ms",
        samples.len(),
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.9)),
        ms(samples[0]),
        ms(samples[samples.len() - 1]),
    );
}

fn make_db(dir: &Path) -> PathBuf {
    let db = dir.join("bench.duckdb");
    let _ = std::fs::remove_file(&db);
    let conn = duckdb::Connection::open(&db).expect("open bench db");
    conn.execute_batch(
        "CREATE TABLE readings AS SELECT i AS id, TIMESTAMP '2026-01-01' + i * INTERVAL 5 MINUTE AS ts, \
         (80 + (i * 37) % 150)::DOUBLE AS glucose, CASE WHEN i % 3 = 0 THEN 'flat' ELSE 'rising' END AS trend \
         FROM range(1000) t(i);",
    )
    .expect("fill bench db");
    conn.close().map_err(|(_, e)| e).expect("close bench db");
    db
}

async fn spawn(exe: &Path, db: &Path, extra: &[&str]) -> McpClient {
    let mut command = tokio::process::Command::new(exe);
    command.arg("serve").arg("--db").arg(db).args(extra);
    McpClient::spawn_command(command, Stdio::null())
        .await
        .expect("spawn duckgate serve")
}

/// Round trips of `query`, and the worker's own attach + run + fetch time (`duration_ms`).
async fn call_series(
    client: &McpClient,
    sql: &str,
    rows: usize,
    rounds: usize,
    pause: Duration,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut round_trips = Vec::with_capacity(rounds);
    let mut in_worker = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let start = Instant::now();
        let result = client
            .call("query", json!({ "sql": sql, "limit": 10_000 }))
            .await
            .expect("tools/call");
        round_trips.push(start.elapsed());
        let envelope = envelope_of(&result);
        assert_eq!(envelope["status"], "success", "{envelope}");
        assert_eq!(envelope["data"]["row_count"], rows, "{envelope}");
        let worker_ms = envelope["data"]["duration_ms"].as_f64().unwrap_or(0.0);
        in_worker.push(Duration::from_secs_f64(worker_ms / 1000.0));
    }
    (round_trips, in_worker)
}

/// Round trips of a tool that needs no worker once the catalog is cached: the MCP layer's cost.
async fn catalog_series(client: &McpClient, rounds: usize) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let result = client
            .call("list_tables", json!({}))
            .await
            .expect("tools/call");
        samples.push(start.elapsed());
        assert_eq!(envelope_of(&result)["status"], "success");
    }
    samples
}

fn report_series(label: &str, (round_trips, in_worker): (Vec<Duration>, Vec<Duration>)) {
    report(label, round_trips);
    report("    of which in the worker (duration_ms)", in_worker);
}

#[tokio::main]
async fn main() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_duckgate"));
    let rounds = mcp_bench_rounds(40);
    let dir = scratch_dir("mcp-bench");
    let db = make_db(&dir);

    let mut startups = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        let client = spawn(&exe, &db, &[]).await;
        startups.push(start.elapsed());
        client.close().await.expect("close");
    }
    report("spawn → initialized", startups);

    let client = spawn(&exe, &db, &[]).await;
    // Warm-up: the first calls pay for the catalog read and page-cache misses.
    call_series(&client, "SELECT 1", 1, 5, Duration::from_millis(100)).await;
    call_series(
        &client,
        "SELECT * FROM readings",
        1000,
        3,
        Duration::from_millis(100),
    )
    .await;

    report(
        "tools/call list_tables (no worker)",
        catalog_series(&client, rounds).await,
    );
    let pause = Duration::from_millis(150);
    report_series(
        "tools/call SELECT 1 (warm spare ready)",
        call_series(&client, "SELECT 1", 1, rounds, pause).await,
    );
    report_series(
        "tools/call 1,000 rows × 4 cols (warm spare)",
        call_series(&client, "SELECT * FROM readings", 1000, rounds, pause).await,
    );
    client.close().await.expect("close");

    println!();
    println!(
        "regimes: p50 / p90 ms, and the ratio of p50 to in-process DuckDB's in the same regime"
    );
    let conn = duckdb::Connection::open_with_flags(
        &db,
        duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .expect("config"),
    )
    .expect("open read-only");
    for regime in Regime::ALL {
        for (name, sql, rows) in [
            ("SELECT 1", "SELECT 1", 1),
            ("1,000 rows × 4 cols", "SELECT * FROM readings", 1000),
        ] {
            let mut direct = time_regime_in_process(&conn, sql, regime, rounds);
            let d50 = percentile_ms(&mut direct, 0.5);
            for (workers, extra) in [("forked", &[][..]), ("spawned", &["--spawn-workers"][..])] {
                let client = spawn(&exe, &db, extra).await;
                call_series(&client, "SELECT 1", 1, 5, Duration::from_millis(100)).await;
                let mut gated = time_regime(regime, rounds, || async {
                    let result = client
                        .call("query", json!({ "sql": sql, "limit": 10_000 }))
                        .await
                        .expect("tools/call");
                    assert_eq!(envelope_of(&result)["data"]["row_count"], rows);
                })
                .await;
                client.close().await.expect("close");
                let (g50, g90) = (
                    percentile_ms(&mut gated, 0.5),
                    percentile_ms(&mut gated, 0.9),
                );
                println!(
                    "{:<58} {g50:>7.2} / {g90:>7.2}   in-process {d50:>6.2}   {:>5.1}x",
                    format!("{}, {name}, {workers} workers", regime.label()),
                    g50 / d50.max(1e-6)
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
