//! Everyday analytics over MCP give exactly what DuckDB gives.
//!
//! `tests/it/everyday/corpus.sql` holds a few hundred questions a person asks of their CGM and
//! insulin-pump data (relative dates in local time, time zones, consensus glucose metrics,
//! episodes, ASOF joins, JSON, windows, PIVOT, lambdas, DESCRIBE/SUMMARIZE, DuckDB's friendlier
//! syntax …), written as an agent writes them. Each one goes to the real `duckgate serve` over
//! MCP stdio, and its rows and column names must equal those of the same SQL run on an
//! in-process DuckDB connection over the same file, in the same time zone. A refusal, an error
//! or a different answer fails the test, naming the entry.
//!
//! The in-process side is the test kit's oracle (tests/kit/src/support/oracle.rs),
//! not duckgate's conversion code: it renders the `duckdb` crate's values to JSON following the
//! shapes duckgate documents (src/engine/convert/), so a rendering bug in duckgate shows up as a
//! difference rather than being shared by both sides.

use std::collections::BTreeMap;
use std::time::Instant;

use crate::everyday::{CORPUS, Entry, SCHEMA, parse_corpus};
use crate::support::corpus_file::assert_well_formed;
use crate::support::oracle::{JsonEncoding, Oracle, Reply, first_difference, mcp_answer};
use crate::support::{TempDir, make_db, serve_whole};
use duckgate::mcp_client::McpClient;
use serde_json::json;

/// The zone the server is started in and the oracle sets: it has daylight saving time, so a
/// server that ignored it would answer "today" and hour-of-day questions differently.
const TIME_ZONE: &str = "America/New_York";
/// The catalog name duckgate attaches `health.duckdb` as (its stem), used by three-part names.
const DB_FILE: &str = "health.duckdb";
/// How duckgate returns JSON-typed values today: parsed.
const JSON_ENCODING: JsonEncoding = JsonEncoding::Text;

/// Whether the answer depends on the clock: such an entry is run again once when the two sides
/// differ (see [`compare_entry`]).
fn depends_on_the_clock(sql: &str) -> bool {
    let lower = sql.to_ascii_lowercase();
    [
        "now()",
        "current_date",
        "current_timestamp",
        "today()",
        "age(birth_date)",
    ]
    .iter()
    .any(|word| lower.contains(word))
}

/// Run one entry on both sides and say what is wrong, if anything.
///
/// The oracle runs right before the server. The clock moves between the two: across local
/// midnight "today" and "yesterday" change, and across a 5-minute boundary a window such as
/// "the last 7 days" gains or loses a reading. An entry that depends on the clock is therefore
/// run once more on both sides when they differ; a real difference repeats.
pub(crate) async fn compare_entry(
    oracle: &Oracle,
    client: &McpClient,
    entry: &Entry,
) -> Option<String> {
    let attempts = if depends_on_the_clock(&entry.sql) {
        2
    } else {
        1
    };
    let mut problem = None;
    for _ in 0..attempts {
        let expected = oracle.answer(&entry.sql);
        let reply = mcp_answer(client, &entry.sql).await;
        problem = match (expected, reply) {
            (Err(e), _) => Some(format!("in-process DuckDB failed: {e}")),
            (Ok(_), Reply::Failed { status, envelope }) => Some(format!(
                "duckgate answered {status}: {}",
                envelope.get("error").unwrap_or(&envelope)
            )),
            (Ok(expected), Reply::Answered(answer)) => {
                first_difference(&expected, &answer, entry.ordered, false)
            }
        };
        if problem.is_none() {
            break;
        }
    }
    problem
}

/// The expected refusal must be a refusal whose message or hint shows the `IN (…)` form.
async fn check_expected_refusal(client: &McpClient, entry: &Entry) -> Option<String> {
    match mcp_answer(client, &entry.sql).await {
        Reply::Answered(_) => Some("duckgate answered it; it must be refused".into()),
        Reply::Failed { status, envelope } => {
            let error = &envelope["error"];
            let explanation = format!(
                "{} {}",
                error["message"].as_str().unwrap_or_default(),
                error["recovery"]["hint"].as_str().unwrap_or_default()
            );
            if status != "refused" {
                Some(format!("status {status}, not refused: {error}"))
            } else if !explanation.contains("IN (") {
                Some(format!(
                    "the refusal does not show the IN (…) form: {error}"
                ))
            } else {
                None
            }
        }
    }
}

fn build_database(dir: &TempDir) -> std::path::PathBuf {
    let db = dir.path().join(DB_FILE);
    let started = Instant::now();
    make_db(&db, SCHEMA);
    eprintln!("built {} in {:?}", db.display(), started.elapsed());
    db
}

#[test]
fn corpus_is_large_well_formed_and_covers_every_category() {
    let entries = parse_corpus(CORPUS).expect("the corpus parses");
    assert!(
        entries.len() >= 200,
        "only {} corpus entries",
        entries.len()
    );
    assert_well_formed(&entries);
    let refused: Vec<&str> = entries
        .iter()
        .filter(|e| e.expect_refused)
        .map(|e| e.name.as_str())
        .collect();
    assert!(refused.is_empty(), "expected refused: {refused:?}");
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        *by_category.entry(e.category.as_str()).or_default() += 1;
    }
    for category in [
        "relative_dates",
        "time_zones",
        "cgm_metrics",
        "episodes",
        "asof_joins",
        "json",
        "windows",
        "grouping_sets",
        "pivot",
        "filter_clause",
        "sampling",
        "lambdas_lists",
        "structs_maps",
        "describe_summarize",
        "duckdb_syntax",
        "long_expressions",
        "ctes",
        "strings_regex",
        "date_arithmetic",
        "statistics",
    ] {
        assert!(
            by_category.get(category).copied().unwrap_or(0) >= 3,
            "category {category} has fewer than 3 entries: {by_category:?}"
        );
    }
}

#[test]
fn oracle_renders_the_documented_json_shapes() {
    // The shapes src/engine/convert.rs documents for agents, produced by DuckDB itself, so the
    // oracle is checked against the contract rather than against duckgate.
    let expected = [
        json!("2024-01-31"),
        json!("13:45:00.5"),
        json!("2024-01-31T13:45:00.5"),
        json!("2024-01-31T08:45:00-05:00"),
        json!("P1Y2M3DT4H5M6.5S"),
        json!("P-1M"),
        json!("PT0S"),
        json!(9_007_199_254_740_991_i64),
        json!("9007199254740992"),
        json!("12.50"),
        json!("-0.05"),
        json!("{\"a\": [1, 2.5, null]}"),
        json!(["1969-12-31", "2000-02-29"]),
        json!({ "k": "v", "n": 1.5 }),
        json!([{ "key": "a", "value": 1 }]),
        json!("NaN"),
        json!("0044-03-15"),
    ];
    Oracle::in_memory(TIME_ZONE, JSON_ENCODING).assert_renders(
        "SELECT DATE '2024-01-31' AS d, TIME '13:45:00.5' AS t,
                TIMESTAMP '2024-01-31 13:45:00.5' AS ts,
                TIMESTAMPTZ '2024-01-31 08:45:00-05' AS tstz,
                INTERVAL '1 year 2 months 3 days 4 hours 5 minutes 6.5 seconds' AS i,
                -INTERVAL 1 MONTH AS negative_month, INTERVAL 0 SECOND AS zero,
                9007199254740991 AS largest_exact, 9007199254740992 AS too_large,
                12.50::DECIMAL(6, 2) AS dec, -0.05::DECIMAL(4, 2) AS small_negative_dec,
                '{\"a\": [1, 2.5, null]}'::JSON AS j, [DATE '1969-12-31', DATE '2000-02-29'] AS dates,
                {'k': 'v', 'n': 1.5::DOUBLE} AS s, MAP {'a': 1} AS m, 'NaN'::DOUBLE AS nan,
                DATE '0044-03-15' AS old_date",
        &expected,
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_everyday_question_gets_the_same_rows_over_mcp_as_in_process_duckdb() {
    let started = Instant::now();
    let entries = parse_corpus(CORPUS).expect("the corpus parses");
    let dir = TempDir::new("everyday");
    let db = build_database(&dir);
    let client = serve_whole(&db, &["--time-zone", TIME_ZONE]).await;
    let oracle = Oracle::open(&db, TIME_ZONE, JSON_ENCODING);

    let mut failures = Vec::new();
    let mut by_category: BTreeMap<&str, usize> = BTreeMap::new();
    for entry in &entries {
        *by_category.entry(entry.category.as_str()).or_default() += 1;
        let problem = if entry.expect_refused {
            check_expected_refusal(&client, entry).await
        } else {
            compare_entry(&oracle, &client, entry).await
        };
        if let Some(problem) = problem {
            failures.push(format!(
                "{} [{}] (tests/it/everyday/corpus.sql line {}): {problem}\n    SQL: {}",
                entry.name,
                entry.category,
                entry.line,
                entry.sql.replace('\n', "\n         ")
            ));
        }
    }
    client.close().await.unwrap();
    eprintln!(
        "{} entries in {:?}: {by_category:?}",
        entries.len(),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {} everyday queries were not answered like in-process DuckDB:\n\n{}",
        failures.len(),
        entries.len(),
        failures.join("\n\n")
    );
}
