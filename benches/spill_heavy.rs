//! Heavy queries that must spill, through duckgate's confined workers, against in-process DuckDB
//! configured with a temporary directory; the same `memory_limit` (2 GB) and thread count (2) on
//! both sides. Reports each query's answer on both sides (they must be equal) and median times
//! and their ratio; never a pass/fail test.
//!
//! Run: `cargo bench --bench spill_heavy -- [--rows N] [--runs N] [--db PATH] [--only NAME]
//! [--parquet]`. The default is 100 M readings of 2,000 patients (about 1 GB on disk; built once
//! and kept at `--db`, default `<system temp>/duckgate-spill-heavy.duckdb`), 3 runs per query and
//! side.
//!
//! With `--parquet`, the same queries read a Parquet copy of the tables instead (written once
//! beside the database, `<db>.parquet/`): duckgate through a declared folder (`--files
//! bench=DIR`, every file the plan binds checked), in-process DuckDB from the same files. This is
//! the speed of a declared folder against DuckDB reading it directly.
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use std::path::{Path, PathBuf};
use std::time::Instant;

use duckgate::gateway::{Gateway, GatewayConfig};
use tokio_util::sync::CancellationToken;

const MEMORY_LIMIT: u64 = 2_000_000_000;
const THREADS: u32 = 2;

/// The heavy shapes: each needs more than 2 GB of working memory at 100 M rows.
const QUERIES: [(&str, &str); 4] = [
    (
        "distinct",
        "SELECT count(*) FROM (SELECT DISTINCT patient_id, ts, glucose FROM cgm_readings)",
    ),
    (
        "window lag() by patient",
        "SELECT sum(abs(d)) FROM (SELECT glucose - lag(glucose) OVER (PARTITION BY patient_id ORDER BY ts) AS d FROM cgm_readings)",
    ),
    (
        "full sort, large offset",
        "SELECT patient_id, ts, glucose FROM cgm_readings ORDER BY glucose DESC, ts, patient_id OFFSET 99999999",
    ),
    (
        "self-join: each reading to the next",
        "SELECT count(*), sum(b.glucose - a.glucose) FROM cgm_readings a JOIN cgm_readings b ON b.patient_id = a.patient_id AND b.ts = a.ts + INTERVAL 5 MINUTE",
    ),
];

fn flag(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `rows` readings: 2,000 patients, one every 5 minutes; insulin events on about every 7th
/// reading of each patient.
fn build(db: &Path, rows: u64) {
    if db.exists() {
        return;
    }
    let started = Instant::now();
    let conn = duckdb::Connection::open(db).expect("create the bench database");
    conn.execute_batch(&format!(
        "CREATE TABLE cgm_readings AS SELECT (i % 2000)::INTEGER AS patient_id, \
         TIMESTAMP '2020-01-01' + to_minutes((i // 2000) * 5) AS ts, \
         (40 + (i * 7919) % 360)::SMALLINT AS glucose FROM range({rows}) t(i); \
         CREATE TABLE insulin_events AS SELECT patient_id, ts, 1 + glucose % 9 AS units \
         FROM cgm_readings WHERE (hash(patient_id, ts) % 7) = 0;"
    ))
    .expect("fill the bench database");
    conn.close().map_err(|(_, e)| e).expect("close");
    println!(
        "built {} ({rows} readings) in {:.0} s",
        db.display(),
        started.elapsed().as_secs_f64()
    );
}

/// The folder of the Parquet copy of `db`'s tables (written once): `<db>.parquet/bench/`.
fn parquet_copy(db: &Path) -> PathBuf {
    let mut root = db.as_os_str().to_owned();
    root.push(".parquet");
    let dir = PathBuf::from(root).join(FOLDER);
    if dir.join("cgm_readings.parquet").exists() {
        return dir;
    }
    let started = Instant::now();
    std::fs::create_dir_all(&dir).expect("the Parquet copy's folder");
    let conn = duckdb::Connection::open(db).expect("open the bench database");
    for table in ["cgm_readings", "insulin_events"] {
        conn.execute_batch(&format!(
            "COPY {table} TO '{}' (FORMAT parquet);",
            dir.join(format!("{table}.parquet")).display()
        ))
        .expect("write the Parquet copy");
    }
    println!(
        "wrote the Parquet copy {} in {:.0} s",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    dir
}

/// The folder name the Parquet copy is declared under.
const FOLDER: &str = "bench";

/// `sql` reading the Parquet copy: each table a file of the declared folder.
fn over_parquet(sql: &str) -> String {
    sql.replace("cgm_readings", &format!("'{FOLDER}/cgm_readings.parquet'"))
}

/// In-process DuckDB as a user would run it: memory_limit, threads and a temporary directory.
fn in_process(db: &Path, temp: &Path) -> duckdb::Connection {
    let config = duckdb::Config::default()
        .with("memory_limit", format!("{MEMORY_LIMIT}B"))
        .and_then(|c| c.with("threads", THREADS.to_string()))
        .and_then(|c| c.with("temp_directory", temp.to_str().expect("utf-8 temp path")))
        .expect("config");
    let conn = duckdb::Connection::open_in_memory_with_flags(config).expect("open");
    conn.execute_batch(&format!(
        "ATTACH '{}' AS bench (READ_ONLY); USE bench;",
        db.display()
    ))
    .expect("attach");
    conn
}

/// The first row of `sql`, as text, and how long it took (seconds).
fn run_in_process(conn: &duckdb::Connection, sql: &str) -> (String, f64) {
    let started = Instant::now();
    let mut stmt = conn.prepare(sql).expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    let columns = rows.as_ref().map_or(0, |s| s.column_count());
    let row = rows.next().expect("row").expect("one row");
    let values: Vec<String> = (0..columns)
        .map(|i| {
            let value: duckdb::types::Value = row.get_ref(i).expect("value").to_owned();
            match value {
                duckdb::types::Value::Timestamp(_, micros) => micros.to_string(),
                other => format!("{other:?}")
                    .trim_start_matches(|c: char| c.is_alphabetic())
                    .trim_matches(|c| c == '(' || c == ')')
                    .to_string(),
            }
        })
        .collect();
    (values.join(","), started.elapsed().as_secs_f64())
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rows: u64 = flag("--rows").map_or(100_000_000, |r| r.parse().expect("--rows N"));
    let runs: usize = flag("--runs").map_or(3, |r| r.parse().expect("--runs N"));
    let db = flag("--db").map_or_else(
        || std::env::temp_dir().join("duckgate-spill-heavy.duckdb"),
        PathBuf::from,
    );
    build(&db, rows);
    let parquet = std::env::args()
        .any(|a| a == "--parquet")
        .then(|| parquet_copy(&db));
    let temp = std::env::temp_dir().join(format!("duckgate-spill-heavy-{}", std::process::id()));
    std::fs::create_dir_all(&temp).expect("temp dir");

    let mut config = GatewayConfig::new(db.clone());
    config.worker_exe = Some(PathBuf::from(env!("CARGO_BIN_EXE_duckgate")));
    config.memory_limit = Some(MEMORY_LIMIT);
    config.threads = THREADS;
    config.timeout = std::time::Duration::from_secs(3600);
    config.warm_workers = 1;
    config.max_concurrent = 1;
    if let Some(dir) = &parquet {
        config.files = vec![(FOLDER.to_owned(), dir.clone())];
    }
    let gateway = Gateway::start(config).await.expect("gateway");
    println!(
        "memory_limit {MEMORY_LIMIT} B, {THREADS} threads on both sides; duckgate budget {:?}; {runs} runs each, medians; {rows} rows; reading {}",
        gateway.memory(),
        if parquet.is_some() {
            "a Parquet copy (a declared folder)"
        } else {
            "the database"
        }
    );
    println!(
        "{:<28} {:>12} {:>12} {:>7}  answer (same on both sides?)",
        "query", "duckdb s", "duckgate s", "ratio"
    );
    let only = flag("--only");
    for (name, sql) in QUERIES
        .into_iter()
        .filter(|(name, _)| only.as_ref().is_none_or(|o| name.contains(o.as_str())))
    {
        let sql = if parquet.is_some() {
            over_parquet(sql)
        } else {
            sql.to_owned()
        };
        let sql = sql.as_str();
        let mut duckdb_times = Vec::new();
        let mut duckgate_times = Vec::new();
        let mut duckdb_answer = String::new();
        let mut duckgate_answer = String::new();
        for _ in 0..runs {
            // A fresh connection each run: a duckgate worker is fresh each call too.
            let conn = in_process(&db, &temp);
            if let Some(dir) = &parquet {
                // `bench/x.parquet` names the copy's files, as the declared folder does.
                let root = dir.parent().expect("the copy's folder has a parent");
                conn.execute_batch(&format!("SET file_search_path = '{}';", root.display()))
                    .expect("file_search_path");
            }
            let (answer, seconds) = run_in_process(&conn, sql);
            drop(conn);
            duckdb_answer = answer;
            duckdb_times.push(seconds);

            let started = Instant::now();
            let result = gateway
                .query(sql, 10, CancellationToken::new())
                .await
                .unwrap_or_else(|e| panic!("{name}: {e:?}"));
            duckgate_times.push(started.elapsed().as_secs_f64());
            duckgate_answer = result.rows[0]
                .iter()
                .map(|v| v.to_string().trim_matches('"').to_string())
                .collect::<Vec<_>>()
                .join(",");
        }
        let (d, g) = (median(duckdb_times), median(duckgate_times));
        println!(
            "{name:<28} {d:>12.2} {g:>12.2} {:>6.2}x  duckdb {duckdb_answer} | duckgate {duckgate_answer}",
            g / d
        );
    }
    gateway.shutdown().await;
    let _ = std::fs::remove_dir_all(&temp);
}
