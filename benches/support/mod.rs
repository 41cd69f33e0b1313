//! What the benches share: the scratch directory, the number of MCP rounds, and for the latency
//! benches the test database, the percentile and the regimes.

use std::path::{Path, PathBuf};

/// A fresh directory `duckgate-<tag>-<pid>` under the system temp dir, for a bench's database.
pub(crate) fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("duckgate-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("bench dir");
    dir
}

/// Calls per series of an MCP bench: `MCP_BENCH_ROUNDS`, else `default`.
#[allow(
    dead_code,
    reason = "the MCP benches read it; worker_latency takes --quick instead"
)]
pub(crate) fn mcp_bench_rounds(default: usize) -> usize {
    std::env::var("MCP_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The 100k-row, CGM-shaped table the latency figures are measured on.
pub(crate) fn build_database(dir: &Path) -> PathBuf {
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

/// The `p` quantile (0..=1) of `samples`, nearest rank.
pub(crate) fn percentile(samples: &mut [f64], p: f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

/// The three queries of the latency table.
pub(crate) const QUERIES: [(&str, &str); 3] = [
    ("SELECT 1", "SELECT 1"),
    ("1,000-row scan", "SELECT * FROM readings LIMIT 1000"),
    (
        "aggregate over 100k rows",
        "SELECT device, avg(glucose) AS mean_glucose, count(*) AS n FROM readings GROUP BY device ORDER BY device",
    ),
];

/// How calls arrive: the three regimes the latency benches report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Regime {
    /// One call, then 150 ms of nothing, as an agent thinking between calls.
    ThinkTime,
    /// One call after the other, no pause.
    BackToBack,
    /// Four calls at once (an agent's parallel tool calls), then 150 ms of nothing.
    BurstsOf4,
}

impl Regime {
    pub(crate) const ALL: [Regime; 3] = [Regime::BackToBack, Regime::BurstsOf4, Regime::ThinkTime];

    pub(crate) fn label(self) -> &'static str {
        match self {
            Regime::ThinkTime => "150 ms think time",
            Regime::BackToBack => "back to back",
            Regime::BurstsOf4 => "bursts of 4 parallel",
        }
    }

    /// Calls at once: 1, or 4 for [`Regime::BurstsOf4`] (`time_regime` joins four).
    fn parallel(self) -> usize {
        match self {
            Regime::ThinkTime | Regime::BackToBack => 1,
            Regime::BurstsOf4 => 4,
        }
    }

    fn pause(self) -> std::time::Duration {
        match self {
            Regime::ThinkTime | Regime::BurstsOf4 => std::time::Duration::from_millis(150),
            Regime::BackToBack => std::time::Duration::ZERO,
        }
    }
}

/// Per-call latencies in milliseconds of `rounds` rounds of `call` arriving as `regime` says.
pub(crate) async fn time_regime<F, Fut>(regime: Regime, rounds: usize, call: F) -> Vec<f64>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let mut samples = Vec::with_capacity(rounds * regime.parallel());
    for _ in 0..rounds {
        if !regime.pause().is_zero() {
            tokio::time::sleep(regime.pause()).await;
        }
        let timed = || async {
            let start = std::time::Instant::now();
            call().await;
            start.elapsed().as_secs_f64() * 1000.0
        };
        match regime.parallel() {
            1 => samples.push(timed().await),
            _ => {
                let (a, b, c, d) = tokio::join!(timed(), timed(), timed(), timed());
                samples.extend([a, b, c, d]);
            }
        }
    }
    samples
}

/// The same regime against in-process DuckDB: one read-only connection per parallel caller
/// (clones of one instance), every row stepped through.
pub(crate) fn time_regime_in_process(
    conn: &duckdb::Connection,
    sql: &str,
    regime: Regime,
    rounds: usize,
) -> Vec<f64> {
    let mut conns: Vec<duckdb::Connection> = (0..regime.parallel())
        .map(|_| conn.try_clone().expect("clone connection"))
        .collect();
    let mut samples = Vec::with_capacity(rounds * regime.parallel());
    for _ in 0..rounds {
        std::thread::sleep(regime.pause());
        std::thread::scope(|scope| {
            let handles: Vec<_> = conns
                .iter_mut()
                .map(|conn| {
                    scope.spawn(move || {
                        let start = std::time::Instant::now();
                        let mut stmt = conn.prepare(sql).expect("prepare");
                        let mut rows = stmt.query([]).expect("query");
                        while rows.next().expect("row").is_some() {}
                        start.elapsed().as_secs_f64() * 1000.0
                    })
                })
                .collect();
            samples.extend(handles.into_iter().map(|h| h.join().expect("thread")));
        });
    }
    samples
}
