//! Under privacy rules, does a hidden name take as long to fail as a made-up one?
//!
//! Against the real `duckgate serve` binary with tables and columns hidden, the same queries
//! with a hidden name and with a made-up name of the same length, interleaved, `MCP_BENCH_ROUNDS`
//! calls each (default 30), with a pause before each call so every call meets a warm worker.
//! Prints the medians, their ratio, and whether they are within 25% or 5 ms of each other (the
//! target). In-process DuckDB has no such gap to compare with; the reference is the worker
//! round trip itself (`SELECT 1`).
//!
//! Run: `cargo bench --bench privacy_timing` (release profile).
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use duckgate::mcp_client::McpClient;
use duckgate_test_kit::support::steps::PRIVATE_RULES;
use serde_json::json;
use support::{mcp_bench_rounds, scratch_dir};

#[allow(
    dead_code,
    reason = "the benches share it; this one uses the rounds and the scratch directory only"
)]
mod support;

fn median_ms(samples: &mut [f64]) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[samples.len() / 2]
}

fn make_db(dir: &Path) -> PathBuf {
    let db = dir.join("private.duckdb");
    let _ = std::fs::remove_file(&db);
    let conn = duckdb::Connection::open(&db).expect("open bench db");
    conn.execute_batch(
        "CREATE TABLE devices (device_id INTEGER, model VARCHAR, serial_number VARCHAR);
         INSERT INTO devices SELECT i, 'M' || i, 'SN-' || i FROM range(100) t(i);
         CREATE TABLE readings AS SELECT i AS id, i % 100 AS device_id, 90 + i % 120 AS glucose,
                'note ' || i AS secret_note FROM range(100000) t(i);
         CREATE TABLE raw_payloads AS SELECT i AS id, 'payload ' || i AS body FROM range(1000) t(i);",
    )
    .expect("fill bench db");
    conn.close().map_err(|(_, e)| e).expect("close bench db");
    db
}

async fn timed(client: &McpClient, sql: &str) -> f64 {
    tokio::time::sleep(Duration::from_millis(120)).await;
    let start = Instant::now();
    client
        .call("query", json!({ "sql": sql }))
        .await
        .expect("tools/call");
    start.elapsed().as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let exe = PathBuf::from(env!("CARGO_BIN_EXE_duckgate"));
    let rounds = mcp_bench_rounds(30);
    let dir = scratch_dir("privacy-bench");
    let db = make_db(&dir);
    let mut command = tokio::process::Command::new(&exe);
    // The rules the privacy tests serve under, over a larger database of the bench's own.
    command
        .arg("serve")
        .arg("--db")
        .arg(&db)
        .args(PRIVATE_RULES);
    let client = McpClient::spawn_command(command, Stdio::null())
        .await
        .expect("spawn duckgate serve");

    let mut reference = Vec::new();
    for _ in 0..rounds {
        reference.push(timed(&client, "SELECT 1").await);
    }
    println!(
        "{:<58} p50 {:>7.2} ms",
        "SELECT 1 (a worker round trip)",
        median_ms(&mut reference)
    );
    let cases = [
        (
            "hidden table",
            "SELECT count(*) FROM raw_payloads",
            "SELECT count(*) FROM raw_payloadz",
        ),
        (
            "hidden column",
            "SELECT serial_number FROM devices",
            "SELECT serial_numbez FROM devices",
        ),
        (
            "hidden column in a filter",
            "SELECT count(*) FROM readings WHERE secret_note LIKE 'x%'",
            "SELECT count(*) FROM readings WHERE secret_notf LIKE 'x%'",
        ),
        (
            "recursive-CTE fall-through",
            "WITH RECURSIVE raw_payloads AS (SELECT * FROM raw_payloads) SELECT * FROM raw_payloads LIMIT 0",
            "WITH RECURSIVE raw_payloadz AS (SELECT * FROM raw_payloadz) SELECT * FROM raw_payloadz LIMIT 0",
        ),
    ];
    let mut all_within = true;
    for (label, hidden_sql, made_up_sql) in cases {
        let (mut hidden, mut made_up) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            hidden.push(timed(&client, hidden_sql).await);
            made_up.push(timed(&client, made_up_sql).await);
        }
        let (h, m) = (median_ms(&mut hidden), median_ms(&mut made_up));
        let within = (h - m).abs() <= 5.0 || (h - m).abs() <= 0.25 * h.max(m);
        all_within &= within;
        println!(
            "{label:<30} hidden p50 {h:>7.2} ms  made-up p50 {m:>7.2} ms  ratio {:>5.2}  {}",
            h / m,
            if within {
                "within 25% or 5 ms"
            } else {
                "OUTSIDE 25% and 5 ms"
            }
        );
    }
    client.close().await.expect("close");
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "verdict: {}",
        if all_within {
            "every hidden/made-up pair within 25% or 5 ms"
        } else {
            "a pair differs by more than 25% and 5 ms"
        }
    );
}
