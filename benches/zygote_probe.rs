//! The zygote probe: what a template process holding a warm DuckDB instance, which
//! `fork()`s one child per query, would gain over duckgate's pool of single-use warm spares.
//! A measurement, never shipped: see docs/ARCHITECTURE.md ("Decisions") and
//! `devtools/zygote-probe`.
//!
//! The template here is **not confined**: duckgate's seccomp filter denies creating processes
//! (`src/sandbox/confine/seccomp.rs`), so a zygote would need that filter loosened in the
//! template and tightened again in each child. The child also skips DuckDB's statement check,
//! which runs on a thread that does not survive `fork()`. Both favour the zygote.
//!
//! Run: `cargo bench --bench zygote_probe`.
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use duckgate::engine::{Engine, EngineConfig};
use duckgate::gateway::{Gateway, GatewayConfig};
use serde_json::{Value as Json, json};
use support::{QUERIES, build_database, percentile};
use tokio_util::sync::CancellationToken;
use zygote_probe::{ForkResult, exit_child, fork_for_measurement, reap};

mod support;

fn write_message(out: &mut impl Write, bytes: &[u8]) {
    let len = u32::try_from(bytes.len()).expect("message size");
    out.write_all(&len.to_le_bytes()).expect("write");
    out.write_all(bytes).expect("write");
    out.flush().expect("flush");
}

fn read_message(input: &mut impl Read) -> Option<Vec<u8>> {
    let mut len = [0u8; 4];
    input.read_exact(&mut len).ok()?;
    let mut body = vec![0u8; u32::from_le_bytes(len) as usize];
    input.read_exact(&mut body).ok()?;
    Some(body)
}

/// The template: a warm engine as a spare has it, then one forked child per request.
fn template(db: &Path) -> ! {
    let wal = duckgate::sandbox::worker::wal_path(db);
    let config = EngineConfig {
        memory_limit_bytes: 2 << 30,
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "UTC".into(),
        harden: true,
        full_warm_up: true,
    };
    let mut engine = Engine::open(&config, db, &wal).expect("template engine");
    let threads: Vec<String> = std::fs::read_dir("/proc/self/task")
        .expect("tasks")
        .flatten()
        .map(|t| {
            std::fs::read_to_string(t.path().join("comm"))
                .unwrap_or_default()
                .trim()
                .to_string()
        })
        .collect();
    let rss = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("VmRSS"))
        .unwrap_or_default()
        .to_string();
    let ready = json!({ "threads": threads, "rss": rss });
    write_message(&mut std::io::stdout().lock(), ready.to_string().as_bytes());
    loop {
        let Some(sql) = read_message(&mut std::io::stdin().lock()) else {
            exit_child(0);
        };
        let sql = String::from_utf8(sql).expect("utf-8 SQL");
        match fork_for_measurement().expect("fork") {
            ForkResult::Child => {
                let outcome = engine.attach(db).and_then(|()| {
                    let rows = engine.run_query(&sql, 1000, 1 << 20)?;
                    engine.detach()?;
                    Ok(rows)
                });
                let reply = match outcome {
                    Ok(rows) => json!({ "rows": rows.row_count, "engine_ms": rows.duration_ms }),
                    Err(e) => json!({ "error": e.message }),
                };
                write_message(&mut std::io::stdout().lock(), reply.to_string().as_bytes());
                exit_child(0);
            }
            ForkResult::Parent { child } => reap(child).expect("reap child"),
        }
    }
}

struct Zygote {
    process: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    ready: Json,
}

impl Zygote {
    fn start(db: &Path) -> Zygote {
        let mut process = Command::new(std::env::current_exe().expect("own path"))
            .arg("--zygote-template")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start template");
        let stdin = process.stdin.take().expect("stdin");
        let mut stdout = process.stdout.take().expect("stdout");
        let ready = serde_json::from_slice(&read_message(&mut stdout).expect("ready")).unwrap();
        Zygote {
            process,
            stdin,
            stdout,
            ready,
        }
    }

    /// One query, request to reply, as the parent sees it; checks the row count.
    fn call(&mut self, sql: &str, expected_rows: u64) -> f64 {
        let start = Instant::now();
        write_message(&mut self.stdin, sql.as_bytes());
        let reply: Json =
            serde_json::from_slice(&read_message(&mut self.stdout).expect("reply")).unwrap();
        let elapsed = start.elapsed().as_secs_f64() * 1000.0;
        assert_eq!(reply["rows"], json!(expected_rows), "{reply}");
        elapsed
    }
}

impl Drop for Zygote {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

async fn gateway_call(gateway: &Gateway, sql: &str, expected_rows: usize) -> f64 {
    let start = Instant::now();
    let result = gateway
        .query(sql, 1000, CancellationToken::new())
        .await
        .expect("gateway query");
    let elapsed = start.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(result.row_count, expected_rows);
    elapsed
}

fn gateway_config(db: &Path, warm: usize) -> GatewayConfig {
    let mut config = GatewayConfig::new(db.to_path_buf());
    config.worker_exe = Some(PathBuf::from(env!("CARGO_BIN_EXE_duckgate")));
    config.warm_workers = warm;
    config
}

fn p50_p90(samples: &mut [f64]) -> (f64, f64) {
    (percentile(samples, 0.5), percentile(samples, 0.9))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // Before any runtime starts: the template's only threads are DuckDB's and the checker's.
    if let Some(i) = args.iter().position(|a| a == "--zygote-template") {
        template(Path::new(&args[i + 1]));
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(measure(&args));
}

async fn measure(args: &[String]) {
    let rounds = if args.iter().any(|a| a == "--quick") {
        10
    } else {
        40
    };
    let dir = std::env::temp_dir().join(format!("duckgate-zygote-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let db = build_database(&dir);

    let mut zygote = Zygote::start(&db);
    let threads = zygote.ready["threads"].as_array().map_or(0, Vec::len);
    println!("zygote probe ({rounds} rounds per figure, milliseconds)");
    println!(
        "template before fork: {threads} threads {}, {}",
        zygote.ready["threads"], zygote.ready["rss"]
    );
    let gateway = Gateway::start(gateway_config(&db, 1))
        .await
        .expect("gateway");
    gateway.catalog().await.expect("catalog");

    println!("calls 150 ms apart, zygote and gateway alternating:");
    println!(
        "{:<26} {:>11} {:>11} {:>11} {:>11}",
        "query", "zygote p50", "zygote p90", "gateway p50", "gateway p90"
    );
    let expected = [1usize, 1000, 4];
    for ((name, sql), rows) in QUERIES.iter().zip(expected) {
        let (mut forked, mut pooled) = (Vec::new(), Vec::new());
        for _ in 0..rounds {
            tokio::time::sleep(Duration::from_millis(150)).await;
            forked.push(zygote.call(sql, rows as u64));
            tokio::time::sleep(Duration::from_millis(150)).await;
            pooled.push(gateway_call(&gateway, sql, rows).await);
        }
        let (z50, z90) = p50_p90(&mut forked);
        let (g50, g90) = p50_p90(&mut pooled);
        println!("{name:<26} {z50:>11.2} {z90:>11.2} {g50:>11.2} {g90:>11.2}");
    }

    println!("back-to-back SELECT 1:");
    let start = Instant::now();
    let mut forked: Vec<f64> = (0..rounds).map(|_| zygote.call("SELECT 1", 1)).collect();
    let rate = rounds as f64 / start.elapsed().as_secs_f64();
    let (z50, z90) = p50_p90(&mut forked);
    println!("  zygote:           {rate:>6.1} queries/s, p50 {z50:.2}, p90 {z90:.2}");
    for warm in [1, 2] {
        let gateway = Gateway::start(gateway_config(&db, warm))
            .await
            .expect("gateway");
        gateway.catalog().await.expect("catalog");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let start = Instant::now();
        let mut pooled = Vec::new();
        for _ in 0..rounds {
            pooled.push(gateway_call(&gateway, "SELECT 1", 1).await);
        }
        let rate = rounds as f64 / start.elapsed().as_secs_f64();
        let (g50, g90) = p50_p90(&mut pooled);
        println!("  gateway, {warm} spare: {rate:>6.1} queries/s, p50 {g50:.2}, p90 {g90:.2}");
        gateway.shutdown().await;
    }
    gateway.shutdown().await;
    drop(zygote);
    let _ = std::fs::remove_dir_all(&dir);
}
