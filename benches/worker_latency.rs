//! Per-query latency through validator + warm confined worker, against the same query on an
//! in-process DuckDB connection. Reports medians and ratios; never a pass/fail test.
//!
//! Run: `cargo bench --bench worker_latency` (release profile; add `-- --quick` for fewer rounds).
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use duckgate::gateway::{Gateway, GatewayConfig};
use tokio_util::sync::CancellationToken;

const QUERIES: [(&str, &str); 3] = [
    ("SELECT 1", "SELECT 1"),
    ("1,000-row scan", "SELECT * FROM readings LIMIT 1000"),
    (
        "aggregate over 100k rows",
        "SELECT device, avg(glucose) AS mean_glucose, count(*) AS n FROM readings GROUP BY device ORDER BY device",
    ),
];

fn build_database(dir: &Path) -> PathBuf {
    let path = dir.join("bench.duckdb");
    let _ = std::fs::remove_file(&path);
    let conn = duckdb::Connection::open(&path).expect("create bench database");
    conn.execute_batch(
        "CREATE TABLE readings AS
           SELECT i AS id,
                  TIMESTAMP '2025-01-01' + INTERVAL (i * 5) MINUTE AS ts,
                  'dev' || (i % 4) AS device,
                  90 + (i * 37 % 120) AS glucose,
                  (i % 7 = 0) AS flagged
           FROM range(100000) t(i);",
    )
    .expect("fill bench database");
    drop(conn);
    path
}

fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

fn in_process(db: &Path, sql: &str, rounds: usize) -> Vec<f64> {
    let config = duckdb::Config::default()
        .access_mode(duckdb::AccessMode::ReadOnly)
        .expect("config");
    let conn = duckdb::Connection::open_with_flags(db, config).expect("open read-only");
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let start = Instant::now();
        let mut stmt = conn.prepare(sql).expect("prepare");
        let mut rows = stmt.query([]).expect("query");
        let mut n = 0usize;
        while let Some(_row) = rows.next().expect("row") {
            n += 1;
        }
        std::hint::black_box(n);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times
}

async fn through_gateway(gateway: &Gateway, sql: &str, rounds: usize, think: Duration) -> Vec<f64> {
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        // Think time lets the pool re-warm its spare, as it does between an agent's calls.
        tokio::time::sleep(think).await;
        let start = Instant::now();
        let result = gateway
            .query(sql, 1000, CancellationToken::new())
            .await
            .expect("gateway query");
        std::hint::black_box(result.row_count);
        times.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    times
}

fn config(db: &Path, warm: usize) -> GatewayConfig {
    let mut config = GatewayConfig::new(db.to_path_buf());
    config.worker_exe = Some(PathBuf::from(env!("CARGO_BIN_EXE_duckgate")));
    config.warm_workers = warm;
    config
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rounds = if quick { 10 } else { 40 };
    let dir = std::env::temp_dir().join(format!("duckgate-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = build_database(&dir);

    // Spawn + confine + DuckDB open + warm-up of one worker, cold (no spare).
    let mut spawn_times = Vec::new();
    for _ in 0..rounds.min(20) {
        let gateway = Gateway::start(config(&db, 0)).await.expect("gateway");
        let start = Instant::now();
        gateway.posture().await.expect("posture");
        spawn_times.push(start.elapsed().as_secs_f64() * 1000.0);
        gateway.shutdown().await;
    }
    // In-process DuckDB instance creation, for comparison.
    let mut open_times = Vec::new();
    for _ in 0..rounds.min(20) {
        let start = Instant::now();
        let conn = duckdb::Connection::open_in_memory().expect("open");
        conn.execute_batch("SELECT 1").expect("first query");
        open_times.push(start.elapsed().as_secs_f64() * 1000.0);
    }

    println!("duckgate worker latency ({rounds} rounds per figure, milliseconds)");
    println!(
        "spawn+confine+DuckDB open+warm-up of one worker: p50 {:.2}  p90 {:.2}",
        percentile(&mut spawn_times.clone(), 0.5),
        percentile(&mut spawn_times, 0.9)
    );
    println!(
        "in-process DuckDB instance + first query:        p50 {:.2}  p90 {:.2}",
        percentile(&mut open_times.clone(), 0.5),
        percentile(&mut open_times, 0.9)
    );
    println!();
    println!(
        "{:<26} {:>12} {:>12} {:>12} {:>12} {:>10} {:>14}",
        "query",
        "in-proc p50",
        "in-proc p90",
        "gateway p50",
        "gateway p90",
        "ratio",
        "overhead p50"
    );
    let gateway = Gateway::start(config(&db, 1)).await.expect("gateway");
    // Let the first spare come up and the catalog cache fill.
    gateway.catalog().await.expect("catalog");
    for (name, sql) in QUERIES {
        let mut direct = in_process(&db, sql, rounds);
        let mut gated = through_gateway(&gateway, sql, rounds, Duration::from_millis(150)).await;
        let (d50, d90) = (percentile(&mut direct, 0.5), percentile(&mut direct, 0.9));
        let (g50, g90) = (percentile(&mut gated, 0.5), percentile(&mut gated, 0.9));
        println!(
            "{name:<26} {d50:>12.2} {d90:>12.2} {g50:>12.2} {g90:>12.2} {:>9.1}x {:>14.2}",
            g50 / d50.max(1e-6),
            g50 - d50
        );
    }
    // The same aggregate with privacy rules on: the worker also plans the query and checks
    // the plan (src/engine/privacy_plan.rs), and runs without statistics propagation.
    let mut private = config(&db, 1);
    private.privacy.hide_columns = vec!["readings.flagged".into()];
    let private = Gateway::start(private)
        .await
        .expect("gateway with privacy rules");
    private.catalog().await.expect("catalog");
    let (name, sql) = QUERIES[2];
    let mut direct = in_process(&db, sql, rounds);
    let mut gated = through_gateway(&private, sql, rounds, Duration::from_millis(150)).await;
    let (d50, d90) = (percentile(&mut direct, 0.5), percentile(&mut direct, 0.9));
    let (g50, g90) = (percentile(&mut gated, 0.5), percentile(&mut gated, 0.9));
    println!(
        "{:<26} {d50:>12.2} {d90:>12.2} {g50:>12.2} {g90:>12.2} {:>9.1}x {:>14.2}",
        format!("{name}, privacy on"),
        g50 / d50.max(1e-6),
        g50 - d50
    );
    private.shutdown().await;

    // Back-to-back: no think time, so the spare cannot keep up and calls pay the spawn.
    let start = Instant::now();
    let n = rounds;
    let mut b2b = through_gateway(&gateway, "SELECT 1", n, Duration::ZERO).await;
    let elapsed = start.elapsed().as_secs_f64();
    println!();
    println!(
        "back-to-back SELECT 1: {:.1} queries/s, p50 {:.2} ms, p90 {:.2} ms",
        n as f64 / elapsed,
        percentile(&mut b2b.clone(), 0.5),
        percentile(&mut b2b, 0.9)
    );
    gateway.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
