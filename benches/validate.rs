//! Validation time of a realistic ~1 KB CGM query (target: p50 ≤ 50 µs).
//!
//! `cargo bench --bench validate --no-default-features` (no DuckDB needed). Plain `Instant`
//! timing of single calls after a warm-up; prints p50 / p90 / p99 per input.
#![allow(
    clippy::print_stdout,
    reason = "a bench's report is its output: it prints the figures to stdout"
)]

use std::time::{Duration, Instant};

use duckgate_test_kit::corpus;
use duckgate_validate::validate::{Limits, validate_sql};

/// A query of the kind an agent writes against glucose data: CTEs, window functions, joins,
/// CASE, date arithmetic, JSON access, a subquery.
const CGM_QUERY: &str = "
WITH recent AS (
    SELECT r.ts, r.glucose, r.device_id, r.raw ->> 'trend' AS trend_arrow,
           lag(r.glucose) OVER (PARTITION BY r.device_id ORDER BY r.ts) AS previous_glucose
    FROM readings r
    WHERE r.ts >= TIMESTAMP '2024-06-01' AND r.ts < TIMESTAMP '2024-07-01'
      AND r.glucose IS NOT NULL
),
boluses AS (
    SELECT date_trunc('hour', p.ts) AS hour, sum(p.units) AS units
    FROM pump_events p
    WHERE p.event_type = 'bolus' AND p.units > 0
    GROUP BY ALL
)
SELECT date_trunc('hour', recent.ts) AS hour,
       d.model,
       count(*) AS readings,
       avg(recent.glucose) AS mean_glucose,
       quantile_cont(recent.glucose, 0.9) AS p90_glucose,
       sum(CASE WHEN recent.glucose BETWEEN 70 AND 180 THEN 1 ELSE 0 END) * 100.0 / count(*) AS time_in_range,
       max(abs(recent.glucose - coalesce(recent.previous_glucose, recent.glucose))) AS max_step,
       any_value(b.units) AS bolus_units
FROM recent
JOIN devices d ON d.device_id = recent.device_id
LEFT JOIN boluses b ON b.hour = date_trunc('hour', recent.ts)
WHERE recent.device_id IN (SELECT device_id FROM devices WHERE model ILIKE 'g7%')
GROUP BY ALL
HAVING count(*) > 3
ORDER BY hour DESC
LIMIT 500
";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn measure(name: &str, sql: &str, iterations: usize) {
    let catalog = corpus::catalog();
    let limits = Limits::default();
    assert!(
        validate_sql(sql, &catalog, &limits).is_ok(),
        "{name} must be accepted"
    );
    for _ in 0..200 {
        std::hint::black_box(validate_sql(sql, &catalog, &limits).ok());
    }
    let mut times: Vec<Duration> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(validate_sql(std::hint::black_box(sql), &catalog, &limits).ok());
            start.elapsed()
        })
        .collect();
    times.sort();
    println!(
        "{name:<28} {:>5} bytes  p50 {:>7.1} µs  p90 {:>7.1} µs  p99 {:>7.1} µs  ({iterations} runs)",
        sql.len(),
        percentile(&times, 0.50).as_secs_f64() * 1e6,
        percentile(&times, 0.90).as_secs_f64() * 1e6,
        percentile(&times, 0.99).as_secs_f64() * 1e6,
    );
}

/// sqlparser alone on the same text (tokenize; tokenize + parse), for scale: the validator
/// cannot be faster than the parser it walks.
fn measure_sqlparser_alone(sql: &str, iterations: usize) {
    use sqlparser::dialect::DuckDbDialect;
    use sqlparser::parser::Parser;
    use sqlparser::tokenizer::Tokenizer;
    let time = |f: &dyn Fn()| {
        let mut times: Vec<Duration> = (0..iterations)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed()
            })
            .collect();
        times.sort();
        percentile(&times, 0.50).as_secs_f64() * 1e6
    };
    let tokenize = time(&|| {
        std::hint::black_box(
            Tokenizer::new(&DuckDbDialect {}, sql)
                .tokenize_with_location()
                .ok(),
        );
    });
    let parse = time(&|| {
        std::hint::black_box(Parser::parse_sql(&DuckDbDialect {}, sql).ok());
    });
    println!(
        "  sqlparser alone: tokenize p50 {tokenize:.1} µs, tokenize + parse p50 {parse:.1} µs"
    );
}

fn main() {
    // `-- --profile-cgm N`: only validate the CGM query N times, for `perf record`.
    let args: Vec<String> = std::env::args().collect();
    if let Some(position) = args.iter().position(|a| a == "--profile-cgm") {
        let runs: usize = args
            .get(position + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(20_000);
        measure("cgm query (~1 KB)", CGM_QUERY, runs);
        return;
    }
    measure("cgm query (~1 KB)", CGM_QUERY, 5000);
    measure_sqlparser_alone(CGM_QUERY, 5000);
    measure("short query", "SELECT * FROM readings LIMIT 10", 5000);
    let long = format!(
        "SELECT {} FROM readings",
        vec!["glucose + 1"; 2000].join(", ")
    );
    measure("long select list (~26 KB)", &long, 200);
}
