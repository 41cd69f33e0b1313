//! Per-query latency through validator + warm confined worker, against the same query on an
//! in-process DuckDB connection (with the same think time between calls, and hot). Reports
//! medians and ratios; never a pass/fail test.
//!
//! Run: `cargo bench --bench worker_latency` (release profile; add `-- --quick` for fewer rounds).
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use duckgate::protocol::databases::Databases;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use duckgate::engine::{Engine, EngineConfig};
use duckgate::gateway::{Gateway, GatewayConfig};
use duckgate_validate::validate::tree::{TreeRules, walk_tree};
use support::{
    QUERIES, Regime, build_database, percentile, scratch_dir, time_regime, time_regime_in_process,
};
use tokio_util::sync::CancellationToken;

mod support;

/// The baseline: one in-process read-only DuckDB connection, opened once.
fn in_process(db: &Path) -> duckdb::Connection {
    let config = duckdb::Config::default()
        .access_mode(duckdb::AccessMode::ReadOnly)
        .expect("config");
    duckdb::Connection::open_with_flags(db, config).expect("open read-only")
}

/// One in-process call: prepare, run, step through every row.
fn time_in_process(conn: &duckdb::Connection, sql: &str) -> f64 {
    let start = Instant::now();
    let mut stmt = conn.prepare(sql).expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    let mut n = 0usize;
    while let Some(_row) = rows.next().expect("row") {
        n += 1;
    }
    std::hint::black_box(n);
    start.elapsed().as_secs_f64() * 1000.0
}

/// One in-process call that also reads every value out of DuckDB, as any consumer of the
/// result does (the gateway's worker reads and converts every value it returns).
fn time_in_process_reading(conn: &duckdb::Connection, sql: &str) -> f64 {
    let start = Instant::now();
    let mut stmt = conn.prepare(sql).expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    let columns = rows.as_ref().map_or(0, |s| s.column_count());
    let mut values = 0usize;
    while let Some(row) = rows.next().expect("row") {
        for i in 0..columns {
            let value: duckdb::types::Value = row.get_ref(i).expect("value").to_owned();
            std::hint::black_box(&value);
            values += 1;
        }
    }
    std::hint::black_box(values);
    start.elapsed().as_secs_f64() * 1000.0
}

/// Round-trip times through the gateway, and the part of each spent in the worker's engine
/// (attach with DuckDB's statement check beside it, plan check, run and row conversion).
async fn through_gateway(
    gateway: &Gateway,
    sql: &str,
    rounds: usize,
    think: Duration,
) -> (Vec<f64>, Vec<f64>) {
    let mut times = Vec::with_capacity(rounds);
    let mut in_engine = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        // Think time lets the pool re-warm its spare, as it does between an agent's calls.
        tokio::time::sleep(think).await;
        let start = Instant::now();
        let result = gateway
            .query(sql, 1000, CancellationToken::new())
            .await
            .expect("gateway query");
        times.push(start.elapsed().as_secs_f64() * 1000.0);
        in_engine.push(result.duration_ms);
        std::hint::black_box(result.row_count);
    }
    (times, in_engine)
}

/// One line of the table: the in-process figures with think time and hot, the gateway's.
///
/// The in-process and gateway calls alternate, each after `think` of idle: after ~150 ms idle
/// the same DuckDB work takes up to twice as long as in a hot loop on this machine (caches,
/// sleeping threads), and alternating keeps the machine's drift out of the difference.
async fn row(name: &str, db: &Path, sql: &str, gateway: &Gateway, rounds: usize, think: Duration) {
    let conn = in_process(db);
    let mut hot: Vec<f64> = (0..rounds).map(|_| time_in_process(&conn, sql)).collect();
    let (mut direct, mut gated, mut engine) = (Vec::new(), Vec::new(), Vec::new());
    let mut reading = Vec::new();
    for _ in 0..rounds {
        tokio::time::sleep(think).await;
        direct.push(time_in_process(&conn, sql));
        tokio::time::sleep(think).await;
        reading.push(time_in_process_reading(&conn, sql));
        let (g, e) = through_gateway(gateway, sql, 1, think).await;
        gated.extend(g);
        engine.extend(e);
    }
    let (d50, d90) = (percentile(&mut direct, 0.5), percentile(&mut direct, 0.9));
    let (g50, g90) = (percentile(&mut gated, 0.5), percentile(&mut gated, 0.9));
    let h50 = percentile(&mut hot, 0.5);
    let r50 = percentile(&mut reading, 0.5);
    println!(
        "{name:<38} {d50:>11.2} {d90:>11.2} {g50:>11.2} {g90:>11.2} {:>6.1}x {:>9.2} {h50:>11.2} {:>9.2} {:>9.2} {r50:>11.2} {:>9.2}",
        g50 / d50.max(1e-6),
        g50 - d50,
        g50 - h50,
        percentile(&mut engine, 0.5),
        g50 - r50
    );
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
    let dir = scratch_dir("bench");
    let db = build_database(&dir);

    // Spawn + confine + DuckDB open + warm-up of one worker, cold (no spare).
    let mut spawn_times = Vec::new();
    for _ in 0..rounds.min(20) {
        let mut cold = config(&db, 0);
        cold.fork_workers = false;
        let gateway = Gateway::start(cold).await.expect("gateway");
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
        "Calls arrive 150 ms apart on both sides, as an agent's do; 'hot' is the in-process\n\
         query repeated with no pause, and 'overhead vs hot' the stricter difference to it.\n\
         'in engine' is the worker's attach (DuckDB's statement check beside it), plan check, run\n\
         and row conversion. 'in-proc read' also reads every value out of DuckDB, as a consumer\n\
         of the result does, and 'vs read' is the overhead against that."
    );
    println!(
        "{:<38} {:>11} {:>11} {:>11} {:>11} {:>7} {:>9} {:>11} {:>9} {:>9} {:>11} {:>9}",
        "query",
        "in-proc p50",
        "in-proc p90",
        "gateway p50",
        "gateway p90",
        "ratio",
        "overhead",
        "in-proc hot",
        "vs hot",
        "in engine",
        "in-proc read",
        "vs read"
    );
    let think = Duration::from_millis(150);
    let gateway = Gateway::start(config(&db, 1)).await.expect("gateway");
    // Let the spare come up and the catalog cache fill.
    gateway.catalog().await.expect("catalog");
    for (name, sql) in QUERIES {
        row(name, &db, sql, &gateway, rounds, think).await;
    }
    // The same aggregate with privacy rules on: the worker also plans the query and checks
    // the plan (src/engine/plan_check/), and runs without statistics propagation.
    let mut private = config(&db, 1);
    private.privacy.hide_columns = vec!["readings.flagged".into()];
    let private = Gateway::start(private)
        .await
        .expect("gateway with privacy rules");
    private.catalog().await.expect("catalog");
    let (name, sql) = QUERIES[2];
    let name = format!("{name}, privacy on");
    row(&name, &db, sql, &private, rounds, think).await;
    private.shutdown().await;

    worker_checks(&db, rounds * 5);

    gateway.shutdown().await;

    // How calls arrive changes what a fresh worker per query costs: back to back and in bursts
    // the spares run out, and each call pays for its worker's start. Workers forked from the
    // template (the default) against spawned ones (`--spawn-workers`), each regime against
    // in-process DuckDB under the same regime.
    println!();
    println!(
        "{:<40} {:>11} {:>11} {:>11} {:>11} {:>7}",
        "regime, query, workers",
        "in-proc p50",
        "gateway p50",
        "gateway p90",
        "in-proc p90",
        "ratio"
    );
    let conn = in_process(&db);
    for regime in Regime::ALL {
        for (name, sql) in &QUERIES[..2] {
            let mut direct = time_regime_in_process(&conn, sql, regime, rounds);
            for fork in [true, false] {
                let mut cfg = config(&db, duckgate::gateway::DEFAULT_WARM_WORKERS);
                cfg.fork_workers = fork;
                let gateway = Gateway::start(cfg).await.expect("gateway");
                gateway.catalog().await.expect("catalog");
                tokio::time::sleep(Duration::from_millis(500)).await;
                let mut gated = time_regime(regime, rounds, || async {
                    let result = gateway
                        .query(sql, 1000, CancellationToken::new())
                        .await
                        .expect("gateway query");
                    std::hint::black_box(result.row_count);
                })
                .await;
                gateway.shutdown().await;
                let (d50, d90) = (percentile(&mut direct, 0.5), percentile(&mut direct, 0.9));
                let (g50, g90) = (percentile(&mut gated, 0.5), percentile(&mut gated, 0.9));
                let workers = if fork { "forked" } else { "spawned" };
                println!(
                    "{:<40} {d50:>11.2} {g50:>11.2} {g90:>11.2} {d90:>11.2} {:>6.1}x",
                    format!("{}, {name}, {workers}", regime.label()),
                    g50 / d50.max(1e-6)
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What the worker's checks of each query cost, on an engine hardened and attached as a worker's
/// (in-process, hot): DuckDB's statement check with the walk of its syntax tree (the checker
/// thread's work, which runs beside the attach), the walk alone, and the plan check (on the
/// query's critical path).
fn worker_checks(db: &Path, rounds: usize) {
    let config = EngineConfig {
        memory_limit_bytes: 2 << 30,
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "UTC".into(),
        harden: true,
        full_warm_up: true,
        folders: Default::default(),
    };
    let mut engine = Engine::open(&config, &Databases::single(db)).expect("engine");
    engine.attach().expect("attach");
    let serializer = duckdb::Connection::open_in_memory().expect("in-memory DuckDB");
    let rules = TreeRules {
        databases: &["bench"],
        restricted: false,
        folders: &[],
    };
    println!();
    println!(
        "{:<38} {:>14} {:>11} {:>11}",
        "worker checks, p50 ms", "parse + walk", "walk only", "plan check"
    );
    for (name, sql) in QUERIES.iter().chain([&LONG_QUERY]) {
        let text: String = serializer
            .query_row(
                "SELECT json_serialize_sql(?::VARCHAR)::VARCHAR",
                [sql],
                |r| r.get(0),
            )
            .expect("serialize");
        let tree: serde_json::Value = serde_json::from_str(&text).expect("tree");
        let mut checked = Vec::with_capacity(rounds);
        let mut walked = Vec::with_capacity(rounds);
        let mut planned = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let start = Instant::now();
            let query = engine.check_statement(sql).expect("statement check");
            checked.push(start.elapsed().as_secs_f64() * 1000.0);
            let start = Instant::now();
            std::hint::black_box(walk_tree(&tree, &rules).expect("walk"));
            walked.push(start.elapsed().as_secs_f64() * 1000.0);
            let start = Instant::now();
            engine.check_plan(&query).expect("plan check");
            planned.push(start.elapsed().as_secs_f64() * 1000.0);
        }
        println!(
            "{name:<38} {:>14.3} {:>11.3} {:>11.3}",
            percentile(&mut checked, 0.5),
            percentile(&mut walked, 0.5),
            percentile(&mut planned, 0.5)
        );
    }
}

/// A 1.2 KB analytical query (CTEs, windows, a join, CASE), as the validator bench uses.
const LONG_QUERY: (&str, &str) = (
    "1.2 KB query (CTEs, window, join)",
    "WITH daily AS (SELECT device, ts::DATE AS day, avg(glucose) AS mean_glucose, \
     count(*) FILTER (WHERE glucose < 70) AS lows, count(*) FILTER (WHERE glucose > 180) AS highs, \
     stddev(glucose) AS sd FROM readings WHERE ts >= TIMESTAMP '2025-01-01' GROUP BY device, day), \
     ranked AS (SELECT *, row_number() OVER (PARTITION BY device ORDER BY mean_glucose DESC) AS rank, \
     avg(mean_glucose) OVER (PARTITION BY device ORDER BY day ROWS BETWEEN 6 PRECEDING AND CURRENT ROW) \
     AS weekly FROM daily) SELECT r.device, r.day, round(r.mean_glucose, 1) AS mean_glucose, r.lows, \
     r.highs, round(r.sd / nullif(r.mean_glucose, 0) * 100, 1) AS cv_percent, round(r.weekly, 1) AS weekly, \
     CASE WHEN r.mean_glucose < 70 THEN 'low' WHEN r.mean_glucose > 180 THEN 'high' ELSE 'in range' END \
     AS band, d.n AS readings FROM ranked r JOIN (SELECT device, count(*) AS n FROM readings GROUP BY device) d \
     USING (device) WHERE r.rank <= 5 ORDER BY r.device, r.mean_glucose DESC LIMIT 100",
);
