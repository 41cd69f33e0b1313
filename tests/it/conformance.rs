//! What DuckDB's own test suite asks of a read-only gateway, answered exactly as DuckDB answers.
//!
//! `tests/it/conformance/queries.sql` holds at least ten queries for every class of query that
//! DuckDB's sqllogictest suite showed duckgate refusing, misreading or answering differently:
//! result types (VARIANT, GEOMETRY, TIME WITH TIME ZONE, TIME_NS, TIMESTAMPTZ_NS, untyped NULL
//! inside nested types), lossless values (INTERVAL past 292 years, JSON null, unnamed tuples),
//! the database's own objects (stored scalar and table macros, secure views, nested schemas,
//! quoted and qualified names), read-only built-in table functions, and the grammar sqlparser
//! misreads (E'' and X'' literals, tagged dollar quotes, slice steps, `JOIN BY`, `FROM
//! values(…)`, `USING KEY`, `DESCRIBE TABLES`, `1__2`, `CALL`). The database they run on is
//! built by the test from `tests/it/conformance/schema.sql`.
//!
//! Each query goes to the real `duckgate serve` over MCP stdio; its column names, DuckDB's type
//! names and its rows must equal those of the same SQL on an in-process DuckDB over the same
//! file (the test kit's `support::oracle`, tests/kit/src/support/oracle.rs, which
//! has DuckDB render what the `duckdb` crate cannot decode). The test reports the count of queries and of answers by class.
//!
//! Classes whose answers need work not done yet are listed in [`AWAITING`] with what they wait
//! for: their differences are reported, not failed, and a listed class that is answered whole
//! fails the test until it leaves the list. Any difference in any other class fails it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use crate::support::corpus_file::{Entry, assert_well_formed, parse_corpus};
use crate::support::oracle::{JsonEncoding, Oracle, Reply, first_difference, mcp_answer};
use crate::support::{TempDir, make_db, serve, serve_whole};
use duckgate::mcp_client::McpClient;
use serde_json::json;

const SCHEMA: &str = include_str!("conformance/schema.sql");
const QUERIES: &str = include_str!("conformance/queries.sql");

/// The file's stem is the catalog name both sides attach it as (`conformance.main.patients`).
const DB_FILE: &str = "conformance.duckdb";
/// A zone with daylight saving time: TIMESTAMPTZ_NS and TIMETZ casts depend on it.
const TIME_ZONE: &str = "America/New_York";
/// JSON-typed values as their text, so a JSON `null` differs from SQL NULL: the lossless
/// encoding. Only the `json_null` class returns JSON-typed columns.
const JSON_ENCODING: JsonEncoding = JsonEncoding::Text;
/// Fewest queries per class.
const PER_CLASS: usize = 10;

/// Every class of `queries.sql`, with what it holds.
const CLASSES: &[(&str, &str)] = &[
    ("variant", "VARIANT values and columns"),
    ("geometry", "GEOMETRY values, also over VARIANT"),
    (
        "table_functions",
        "read-only built-in table functions (repeat, test_all_types, range, unnest, duckdb_*)",
    ),
    (
        "pragma_table_info",
        "pragma_table_info over the database's own tables",
    ),
    (
        "untyped_null_nested",
        "untyped NULL inside LIST, STRUCT, MAP and UNION",
    ),
    ("table_macros", "table macros stored in the database"),
    ("stored_macros", "scalar macros stored in the database"),
    ("pivot_without_in", "PIVOT without an IN list"),
    ("timetz", "TIME WITH TIME ZONE"),
    ("secure_views", "CREATE SECURE VIEW in the database"),
    (
        "describe_names",
        "qualified and quoted names in DESCRIBE (and FROM) that look like files",
    ),
    ("from_values", "FROM values(…)"),
    ("using_key", "recursive CTEs with USING KEY"),
    ("escape_strings", "escape strings E'…'"),
    ("nested_schemas", "nested schemas s1.s2.t"),
    ("join_by", "JOIN BY (TYPE …)"),
    ("slice_step", "list slices with a step"),
    ("hex_literals", "hex literals X'…'"),
    ("time_ns", "TIME_NS"),
    ("timestamptz_ns", "TIMESTAMPTZ_NS"),
    ("dollar_quotes", "tagged dollar quotes"),
    ("call", "CALL of a table function"),
    ("digit_separators", "numbers with underscores (1__2)"),
    ("describe_tables", "DESCRIBE TABLES and the other listings"),
    ("interval_range", "INTERVAL across its whole range"),
    ("json_null", "JSON null against SQL NULL"),
    ("unnamed_tuples", "unnamed tuples, by position"),
    (
        "aggregate_states",
        "aggregate states: EXPORT_STATE, finalize and combine",
    ),
    ("bit_bignum", "BIT and BIGNUM values and constants"),
    ("ctes_and_lateral", "materialized CTEs and lateral joins"),
    (
        "method_calls",
        "method calls x.f(…), on columns, literals and chains",
    ),
];

/// Classes that differ from DuckDB for a stated reason: reported, not failed.
const AWAITING: &[(&str, &str)] = &[];

fn awaited(class: &str) -> Option<&'static str> {
    AWAITING
        .iter()
        .find(|(awaiting, _)| *awaiting == class)
        .map(|(_, what)| *what)
}

fn entries() -> Vec<Entry> {
    parse_corpus(QUERIES).unwrap_or_else(|e| panic!("tests/it/conformance/queries.sql: {e}"))
}

fn build_database(dir: &TempDir) -> PathBuf {
    let db = dir.path().join(DB_FILE);
    make_db(&db, SCHEMA);
    db
}

/// What is wrong with duckgate's answer to `entry`, if anything.
async fn compare(oracle: &Oracle, client: &McpClient, entry: &Entry) -> Option<String> {
    let expected = oracle.answer(&entry.sql);
    let reply = mcp_answer(client, &entry.sql).await;
    match (expected, reply) {
        (Err(e), _) => Some(format!("in-process DuckDB failed: {e}")),
        (Ok(_), Reply::Failed { status, envelope }) => Some(format!(
            "duckgate answered {status}: {}",
            envelope.get("error").unwrap_or(&envelope)
        )),
        (Ok(expected), Reply::Answered(answer)) => {
            first_difference(&expected, &answer, entry.ordered, true)
        }
    }
}

#[test]
fn every_class_has_ten_well_formed_queries() {
    let entries = entries();
    assert_well_formed(&entries);
    let mut by_class: BTreeMap<&str, usize> = BTreeMap::new();
    for e in &entries {
        assert!(
            CLASSES.iter().any(|(class, _)| *class == e.category),
            "{} (line {}): unknown class {:?}",
            e.name,
            e.line,
            e.category
        );
        assert!(
            !e.expect_refused,
            "{}: every entry must be answered",
            e.name
        );
        *by_class.entry(e.category.as_str()).or_default() += 1;
    }
    for (class, what) in CLASSES {
        let count = by_class.get(class).copied().unwrap_or(0);
        assert!(
            count >= PER_CLASS,
            "class {class} ({what}) has {count} queries, fewer than {PER_CLASS}"
        );
    }
    for (class, _) in AWAITING {
        assert!(
            CLASSES.iter().any(|(known, _)| known == class),
            "AWAITING names {class}, which is no class"
        );
    }
}

#[test]
fn oracle_renders_the_lossless_shapes() {
    // The encodings duckgate promises for the values the `duckdb` crate cannot decode, produced
    // by DuckDB itself: the oracle is checked against the contract, not against duckgate.
    let expected = [
        json!("PT2562047788H"),
        json!("PT-2562047788H-54.775807S"),
        json!("P-1Y-1M2DT-4H-0.5S"),
        json!("02:30:00+04"),
        json!("12:00:00.123456789"),
        json!({ "k": [1, 2] }),
        json!("null"),
        json!(null),
        json!([1, "a"]),
        json!([]),
        json!([null]),
        json!(["PT3000000H"]),
        json!({ "t": "08:00:00+01" }),
    ];
    let answer = Oracle::in_memory(TIME_ZONE, JSON_ENCODING).assert_renders(
        "SELECT INTERVAL '2562047788 hours' AS long_hours,
                    to_microseconds(-9223372036854775807) AS most_negative,
                    INTERVAL '-13 months 2 days -04:00:00.5' AS mixed_signs,
                    '02:30:00+04'::TIMETZ AS tz, TIME_NS '12:00:00.123456789' AS ns,
                    {'k': [1, 2]}::VARIANT AS v, 'null'::JSON AS json_null,
                    NULL::JSON AS sql_null, (1, 'a') AS tuple, MAP() AS empty_map,
                    [NULL] AS null_list, [INTERVAL '3000000 hours'] AS long_list,
                    {'t': TIMETZ '08:00:00+01'} AS nested_tz",
        &expected,
    );
    let types = answer.types.expect("DuckDB describes a SELECT");
    assert_eq!(types[3], "TIME WITH TIME ZONE");
    assert_eq!(types[8], "TUPLE(INTEGER, VARCHAR)");
    assert_eq!(
        answer.columns,
        [
            "long_hours",
            "most_negative",
            "mixed_signs",
            "tz",
            "ns",
            "v",
            "json_null",
            "sql_null",
            "tuple",
            "empty_map",
            "null_list",
            "long_list",
            "nested_tz"
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn every_conformance_query_is_answered_as_in_process_duckdb_answers_it() {
    let started = Instant::now();
    let entries = entries();
    let dir = TempDir::new("conformance");
    let db = build_database(&dir);
    let client = serve_whole(&db, &["--time-zone", TIME_ZONE]).await;
    let oracle = Oracle::open(&db, TIME_ZONE, JSON_ENCODING);

    // Per class: (queries, answered identically, differences).
    let mut by_class: BTreeMap<&str, (usize, usize, Vec<String>)> = BTreeMap::new();
    for entry in &entries {
        let tally = by_class.entry(entry.category.as_str()).or_default();
        tally.0 += 1;
        match compare(&oracle, &client, entry).await {
            None => tally.1 += 1,
            Some(problem) => tally.2.push(format!(
                "{} (tests/it/conformance/queries.sql line {}): {problem}\n    SQL: {}",
                entry.name,
                entry.line,
                entry.sql.replace('\n', "\n         ")
            )),
        }
    }
    client.close().await.unwrap();

    let mut report = String::new();
    let mut failures = Vec::new();
    let (mut total, mut same) = (0, 0);
    for (class, (queries, answered, differences)) in &by_class {
        total += queries;
        same += answered;
        let status = match (awaited(class), differences.is_empty()) {
            (None, true) => "answered".to_string(),
            (None, false) => {
                failures.extend(differences.iter().map(|d| format!("[{class}] {d}")));
                "FAILS".to_string()
            }
            (Some(what), false) => format!("awaits {what}"),
            (Some(what), true) => {
                failures.push(format!(
                    "[{class}] every query is answered: remove it from AWAITING ({what})"
                ));
                "answered, still listed as awaiting".to_string()
            }
        };
        report.push_str(&format!(
            "  {class:<22} {answered:>3}/{queries:<3} {status}\n"
        ));
    }
    eprintln!(
        "conformance: {same} of {total} queries answered as in-process DuckDB answers them, in {:?}\n{report}",
        started.elapsed()
    );
    for (class, (_, _, differences)) in &by_class {
        if let Some(what) = awaited(class) {
            for difference in differences {
                eprintln!("awaiting {what}: [{class}] {difference}");
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} conformance queries were not answered like in-process DuckDB:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// Under privacy rules the database's stored macros do not exist for DuckDB's binder (the
/// shadow catalog has no copy of them), so every query of them fails as a missing function
/// would; its secure views are views like any other, their columns traced through DuckDB's
/// plans: answered while they read only visible data; a view whose every column depends on a
/// hidden one (here, through its filter) does not exist, as a made-up name.
#[tokio::test(flavor = "multi_thread")]
async fn under_privacy_rules_stored_macros_do_not_exist_and_secure_views_are_checked_by_their_columns()
 {
    let entries = entries();
    let dir = TempDir::new("conformance-private");
    let db = build_database(&dir);
    // `north_patients` filters on the hidden column; `patient_totals` reads none.
    let client = serve(
        &db,
        &["--time-zone", TIME_ZONE, "--hide-column", "patients.clinic"],
    )
    .await;
    let oracle = Oracle::open(&db, TIME_ZONE, JSON_ENCODING);
    let mut wrong = Vec::new();
    for entry in entries
        .iter()
        .filter(|e| ["stored_macros", "table_macros"].contains(&e.category.as_str()))
    {
        match mcp_answer(&client, &entry.sql).await {
            Reply::Answered(_) => wrong.push(format!("{}: answered", entry.name)),
            Reply::Failed { status, .. } if status == "success" => {
                wrong.push(format!("{}: {status}", entry.name))
            }
            Reply::Failed { .. } => {}
        }
    }
    for (sql, answered) in [
        ("SELECT * FROM patient_totals ORDER BY patient_id", true),
        ("SELECT max(readings) AS most FROM patient_totals", true),
        ("SELECT * FROM north_patients", false),
        ("SELECT count(*) FROM north_patients", false),
    ] {
        match (mcp_answer(&client, sql).await, answered) {
            (Reply::Answered(answer), true) => {
                let expected = oracle.answer(sql).expect(sql);
                if let Some(difference) = first_difference(&expected, &answer, true, true) {
                    wrong.push(format!("{sql}: {difference}"));
                }
            }
            (Reply::Failed { envelope, .. }, false)
                if envelope["error"]["kind"] == "unknown_name" => {}
            (reply, _) => wrong.push(format!("{sql}: {reply:?}")),
        }
    }
    client.close().await.unwrap();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
