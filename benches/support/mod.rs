//! What the latency benches share: the test database and the percentile.

use std::path::{Path, PathBuf};

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
