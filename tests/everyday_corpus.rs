//! Everyday analytics over MCP give exactly what DuckDB gives.
//!
//! `tests/everyday/corpus.sql` holds a few hundred questions a person asks of their CGM and
//! insulin-pump data (relative dates in local time, time zones, consensus glucose metrics,
//! episodes, ASOF joins, JSON, windows, PIVOT, lambdas, DESCRIBE/SUMMARIZE, DuckDB's friendlier
//! syntax …), written as an agent writes them. Each one goes to the real `duckgate serve` over
//! MCP stdio, and its rows and column names must equal those of the same SQL run on an
//! in-process DuckDB connection over the same file, in the same time zone. A refusal, an error
//! or a different answer fails the test, naming the entry.
//!
//! The in-process side is an oracle written here, not duckgate's conversion code: it renders the
//! `duckdb` crate's values to JSON following the shapes duckgate documents (src/engine/convert.rs),
//! so a rendering bug in duckgate shows up as a difference rather than being shared by both sides.
#![cfg(feature = "engine")]

mod everyday;
mod support;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use duckdb::core::{LogicalTypeHandle, LogicalTypeId};
use duckdb::types::{TimeUnit, Value};
use duckdb::{AccessMode, Config, Connection};
use duckgate::mcp::client::{McpClient, envelope_of};
use everyday::{CORPUS, Entry, SCHEMA, parse_corpus};
use serde_json::{Value as Json, json};
use support::{TempDir, make_db, serve};

/// The zone the server is started in and the oracle sets: it has daylight saving time, so a
/// server that ignored it would answer "today" and hour-of-day questions differently.
const TIME_ZONE: &str = "America/New_York";
/// The catalog name duckgate attaches `health.duckdb` as (its stem), used by three-part names.
const DB_FILE: &str = "health.duckdb";
/// Relative tolerance for floating-point values: parallel aggregation may change the last bits.
const FLOAT_TOLERANCE: f64 = 1e-9;

/// Whether the statement's outermost query has an ORDER BY (not one inside parentheses, such as
/// a window's, an aggregate's or a subquery's), outside strings, quoted names and comments.
fn has_top_level_order_by(sql: &str) -> bool {
    let bytes = sql.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    let mut previous_word = String::new();
    while i < bytes.len() {
        match bytes[i] {
            quote @ (b'\'' | b'"') => {
                i += 1;
                while i < bytes.len() && bytes[i] != quote {
                    i += 1;
                }
            }
            b'-' if bytes.get(i + 1) == Some(&b'-') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i + 1 < bytes.len()
                    && (bytes[i + 1].is_ascii_alphanumeric() || bytes[i + 1] == b'_')
                {
                    i += 1;
                }
                let word = sql[start..=i].to_ascii_uppercase();
                if depth == 0 && previous_word == "ORDER" && word == "BY" {
                    return true;
                }
                previous_word = word;
            }
            _ => {}
        }
        i += 1;
    }
    false
}

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

/// A result: column names and rows as JSON values.
#[derive(Debug, Clone, PartialEq)]
struct Answer {
    columns: Vec<String>,
    rows: Vec<Vec<Json>>,
}

// ------------------------------------------------------------------------------------------
// The oracle: in-process DuckDB and an independent rendering of its values.
// ------------------------------------------------------------------------------------------

/// What the oracle needs of a column's DuckDB type to render its values.
#[derive(Debug)]
struct OracleType {
    id: LogicalTypeId,
    json: bool,
    decimal_scale: u8,
    children: Vec<OracleType>,
}

impl OracleType {
    fn of(handle: &LogicalTypeHandle) -> OracleType {
        let id = handle.id();
        let children = match id {
            LogicalTypeId::List
            | LogicalTypeId::Array
            | LogicalTypeId::Struct
            | LogicalTypeId::Map
            | LogicalTypeId::Union => (0..handle.num_children())
                .map(|i| OracleType::of(&handle.child(i)))
                .collect(),
            _ => Vec::new(),
        };
        OracleType {
            json: id == LogicalTypeId::Varchar
                && handle
                    .get_alias()
                    .is_some_and(|a| a.eq_ignore_ascii_case("json")),
            decimal_scale: if id == LogicalTypeId::Decimal {
                handle.decimal_scale()
            } else {
                0
            },
            id,
            children,
        }
    }

    fn child(&self, i: usize) -> Option<&OracleType> {
        self.children.get(i)
    }
}

/// The read-only in-process connection, in the server's time zone and lambda syntax.
fn open_oracle(db: &Path, time_zone: &str) -> Connection {
    let config = Config::default()
        .access_mode(AccessMode::ReadOnly)
        .expect("read-only config");
    let conn = Connection::open_with_flags(db, config).expect("open the database read-only");
    conn.execute_batch(&format!(
        "SET TimeZone = '{time_zone}'; SET lambda_syntax = 'ENABLE_SINGLE_ARROW';"
    ))
    .expect("oracle settings");
    conn
}

fn oracle_answer(conn: &Connection, sql: &str) -> Result<Answer, String> {
    let mut stmt = conn.prepare(sql).map_err(|e| e.to_string())?;
    let mut rows = stmt.query([]).map_err(|e| e.to_string())?;
    let (columns, types) = {
        let stmt = rows.as_ref().expect("rows of a statement");
        let n = stmt.column_count();
        let columns: Vec<String> = (0..n)
            .map(|i| stmt.column_name(i).cloned().unwrap_or_default())
            .collect();
        let types: Vec<OracleType> = (0..n)
            .map(|i| OracleType::of(&stmt.column_logical_type(i)))
            .collect();
        (columns, types)
    };
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| e.to_string())? {
        let mut values = Vec::with_capacity(types.len());
        for (i, ty) in types.iter().enumerate() {
            let value = row.get_ref(i).map_err(|e| e.to_string())?.to_owned();
            values.push(render(&value, Some(ty)));
        }
        out.push(values);
    }
    Ok(Answer { columns, rows: out })
}

/// A DuckDB value as duckgate documents its JSON: integers as numbers while a double holds them
/// exactly (else text), DECIMAL as exact text, dates and times in ISO 8601 (TIMESTAMPTZ as local
/// time in [`TIME_ZONE`] with its offset, as DuckDB's own text cast prints it), INTERVAL as an ISO 8601 duration with a sign per component, JSON parsed, LIST as
/// arrays, STRUCT as objects, MAP as `[{"key", "value"}]`.
fn render(value: &Value, ty: Option<&OracleType>) -> Json {
    let id = ty.map(|t| t.id);
    match value {
        Value::Null => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::TinyInt(v) => json!(v),
        Value::SmallInt(v) => json!(v),
        Value::Int(v) => json!(v),
        Value::UTinyInt(v) => json!(v),
        Value::USmallInt(v) => json!(v),
        Value::UInt(v) => json!(v),
        Value::BigInt(v) => whole_number(i128::from(*v)),
        Value::UBigInt(v) => whole_number(i128::from(*v)),
        Value::HugeInt(v) if id == Some(LogicalTypeId::Decimal) => {
            Json::String(decimal_text(*v, ty.map_or(0, |t| t.decimal_scale)))
        }
        Value::HugeInt(v) => whole_number(*v),
        Value::UHugeInt(v) => match i128::try_from(*v) {
            Ok(v) => whole_number(v),
            Err(_) => Json::String(v.to_string()),
        },
        // The shortest decimal that reads back as the same f32, as a person would write it.
        Value::Float(f) => floating(f.to_string().parse().unwrap_or(f64::from(*f))),
        Value::Double(d) => floating(*d),
        Value::Decimal(d) => Json::String(decimal_text(d.value(), d.scale())),
        Value::Text(s) if ty.is_some_and(|t| t.json) => {
            serde_json::from_str(s).unwrap_or_else(|_| Json::String(s.clone()))
        }
        Value::Text(s) | Value::Enum(s) => Json::String(s.clone()),
        Value::Date32(days) => Json::String(date_text(i64::from(*days))),
        Value::Time64(unit, v) => Json::String(clock_text(i128::from(*v) * nanos_per(*unit))),
        Value::Timestamp(unit, v) => {
            if id == Some(LogicalTypeId::TimestampTZ) {
                return Json::String(local_text(unit.to_micros(*v)));
            }
            let nanos = i128::from(*v) * nanos_per(*unit);
            let day = 86_400_000_000_000_i128;
            let mut text = date_text(nanos.div_euclid(day) as i64);
            text.push('T');
            text.push_str(&clock_text(nanos.rem_euclid(day)));
            Json::String(text)
        }
        Value::Interval {
            months,
            days,
            nanos,
        } => Json::String(duration_text(*months, *days, *nanos)),
        Value::List(items) | Value::Array(items) => {
            let child = ty.and_then(|t| t.child(0));
            Json::Array(items.iter().map(|v| render(v, child)).collect())
        }
        Value::Struct(fields) => Json::Object(
            fields
                .iter()
                .enumerate()
                .map(|(i, (name, v))| (name.clone(), render(v, ty.and_then(|t| t.child(i)))))
                .collect(),
        ),
        Value::Map(entries) => Json::Array(
            entries
                .iter()
                .map(|(k, v)| {
                    json!({
                        "key": render(k, ty.and_then(|t| t.child(0))),
                        "value": render(v, ty.and_then(|t| t.child(1))),
                    })
                })
                .collect(),
        ),
        // Not used by the corpus; a value the oracle cannot render can never match.
        other => Json::String(format!("<the oracle does not render {other:?}>")),
    }
}

fn whole_number(v: i128) -> Json {
    const EXACT_IN_A_DOUBLE: i128 = (1 << 53) - 1;
    if (-EXACT_IN_A_DOUBLE..=EXACT_IN_A_DOUBLE).contains(&v) {
        json!(v as i64)
    } else {
        Json::String(v.to_string())
    }
}

fn floating(f: f64) -> Json {
    if f.is_nan() {
        json!("NaN")
    } else if f.is_infinite() {
        json!(if f > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        json!(f)
    }
}

fn decimal_text(unscaled: i128, scale: u8) -> String {
    let digits = unscaled.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let sign = if unscaled < 0 { "-" } else { "" };
    if scale == 0 {
        return format!("{sign}{digits}");
    }
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (whole, fraction) = padded.split_at(padded.len() - scale);
    format!("{sign}{whole}.{fraction}")
}

fn nanos_per(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// `YYYY-MM-DD` of a day number since 1970-01-01, counted year by year and month by month.
fn date_text(days_since_epoch: i64) -> String {
    let mut year = 1970;
    let mut day = days_since_epoch;
    let year_length = |y: i64| if is_leap(y) { 366 } else { 365 };
    while day < 0 {
        year -= 1;
        day += year_length(year);
    }
    while day >= year_length(year) {
        day -= year_length(year);
        year += 1;
    }
    let february = if is_leap(year) { 29 } else { 28 };
    let months = [31, february, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    let mut month = 0;
    while day >= months[month] {
        day -= months[month];
        month += 1;
    }
    format!("{year:04}-{:02}-{:02}", month + 1, day + 1)
}

/// `HH:MM:SS` and the fraction of a second without trailing zeros.
fn clock_text(nanos_of_day: i128) -> String {
    let seconds = nanos_of_day / 1_000_000_000;
    let mut text = format!(
        "{:02}:{:02}:{:02}",
        seconds / 3600,
        seconds % 3600 / 60,
        seconds % 60
    );
    let fraction = nanos_of_day % 1_000_000_000;
    if fraction != 0 {
        let digits = format!("{fraction:09}");
        let _ = write!(text, ".{}", digits.trim_end_matches('0'));
    }
    text
}

/// ISO 8601 duration, each component with its own sign: `P1Y2M3DT4H5M6.5S`, `P-1M`, `PT0S`.
fn duration_text(months: i32, days: i32, nanos: i64) -> String {
    let mut text = String::from("P");
    for (amount, unit) in [(months / 12, 'Y'), (months % 12, 'M'), (days, 'D')] {
        if amount != 0 {
            let _ = write!(text, "{amount}{unit}");
        }
    }
    if nanos != 0 {
        text.push('T');
        let sign = if nanos < 0 { "-" } else { "" };
        let total = i128::from(nanos).abs();
        let hours = total / 3_600_000_000_000;
        let minutes = total / 60_000_000_000 % 60;
        let seconds = total / 1_000_000_000 % 60;
        let fraction = total % 1_000_000_000;
        if hours != 0 {
            let _ = write!(text, "{sign}{hours}H");
        }
        if minutes != 0 {
            let _ = write!(text, "{sign}{minutes}M");
        }
        if seconds != 0 || fraction != 0 {
            let _ = write!(text, "{sign}{seconds}");
            if fraction != 0 {
                let digits = format!("{fraction:09}");
                let _ = write!(text, ".{}", digits.trim_end_matches('0'));
            }
            text.push('S');
        }
    }
    if text == "P" {
        "PT0S".to_string()
    } else {
        text
    }
}

// ------------------------------------------------------------------------------------------
// The server side and the comparison.
// ------------------------------------------------------------------------------------------

/// What the server said about one query.
#[derive(Debug)]
enum Reply {
    Answered(Answer),
    Failed { status: String, envelope: Json },
}

async fn mcp_answer(client: &McpClient, sql: &str) -> Reply {
    let result = match client
        .call("query", json!({ "sql": sql, "limit": 10000 }))
        .await
    {
        Ok(result) => result,
        Err(e) => {
            return Reply::Failed {
                status: "transport error".into(),
                envelope: json!(e),
            };
        }
    };
    let envelope = envelope_of(&result).clone();
    let status = envelope["status"]
        .as_str()
        .unwrap_or("<no status>")
        .to_string();
    let truncated = envelope["data"]["truncated"].as_bool() == Some(true);
    if !matches!(status.as_str(), "success" | "empty") || truncated {
        return Reply::Failed { status, envelope };
    }
    let columns: Vec<String> = envelope["data"]["columns"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| c["name"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default();
    let rows: Vec<Vec<Json>> = envelope["data"]["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| r.as_array().cloned().unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    Reply::Answered(Answer { columns, rows })
}

/// Equal JSON values, floating-point numbers within [`FLOAT_TOLERANCE`] (relative). An integer
/// never equals a float: a column rendered with the wrong kind of number is a difference.
fn same_value(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.is_f64() && y.is_f64(), x.as_f64(), y.as_f64()) {
                (true, Some(x), Some(y)) => {
                    x == y || (x - y).abs() <= FLOAT_TOLERANCE * x.abs().max(y.abs())
                }
                _ => false,
            }
        }
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_value(x, y))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

/// A sort key for comparing rows as multisets: floats rounded to 9 significant digits, so rows
/// that differ only in the last bits sort alike; object keys sorted.
fn sort_key(value: &Json, out: &mut String) {
    match value {
        Json::Number(n) if n.is_f64() => {
            let _ = write!(out, "{:.8e}", n.as_f64().unwrap_or_default());
        }
        Json::Array(items) => {
            out.push('[');
            for item in items {
                sort_key(item, out);
                out.push(',');
            }
            out.push(']');
        }
        Json::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for key in keys {
                let _ = write!(out, "{key:?}:");
                sort_key(&map[key], out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn sorted(rows: &[Vec<Json>]) -> Vec<Vec<Json>> {
    let mut keyed: Vec<(String, Vec<Json>)> = rows
        .iter()
        .map(|row| {
            let mut key = String::new();
            sort_key(&Json::Array(row.clone()), &mut key);
            (key, row.clone())
        })
        .collect();
    keyed.sort_by(|(a, _), (b, _)| a.cmp(b));
    keyed.into_iter().map(|(_, row)| row).collect()
}

/// The first difference between the oracle's answer and the server's, if any.
fn first_difference(oracle: &Answer, server: &Answer, ordered: bool) -> Option<String> {
    if oracle.columns != server.columns {
        return Some(format!(
            "column names: DuckDB {:?}, duckgate {:?}",
            oracle.columns, server.columns
        ));
    }
    if oracle.rows.len() != server.rows.len() {
        return Some(format!(
            "{} rows from DuckDB, {} from duckgate",
            oracle.rows.len(),
            server.rows.len()
        ));
    }
    let (left, right) = if ordered {
        (oracle.rows.clone(), server.rows.clone())
    } else {
        (sorted(&oracle.rows), sorted(&server.rows))
    };
    for (i, (l, r)) in left.iter().zip(&right).enumerate() {
        if l.len() != r.len() || !l.iter().zip(r).all(|(x, y)| same_value(x, y)) {
            let which = if ordered { "row" } else { "sorted row" };
            return Some(format!(
                "{which} {i}: DuckDB {}, duckgate {}",
                Json::Array(l.clone()),
                Json::Array(r.clone())
            ));
        }
    }
    None
}

/// Run one entry on both sides and say what is wrong, if anything.
///
/// The oracle runs right before the server. The clock moves between the two: across local
/// midnight "today" and "yesterday" change, and across a 5-minute boundary a window such as
/// "the last 7 days" gains or loses a reading. An entry that depends on the clock is therefore
/// run once more on both sides when they differ; a real difference repeats.
async fn compare_entry(oracle: &Connection, client: &McpClient, entry: &Entry) -> Option<String> {
    let attempts = if depends_on_the_clock(&entry.sql) {
        2
    } else {
        1
    };
    let mut problem = None;
    for _ in 0..attempts {
        let expected = oracle_answer(oracle, &entry.sql);
        let reply = mcp_answer(client, &entry.sql).await;
        problem = match (expected, reply) {
            (Err(e), _) => Some(format!("in-process DuckDB failed: {e}")),
            (Ok(_), Reply::Failed { status, envelope }) => Some(format!(
                "duckgate answered {status}: {}",
                envelope.get("error").unwrap_or(&envelope)
            )),
            (Ok(expected), Reply::Answered(answer)) => {
                first_difference(&expected, &answer, entry.ordered)
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
    let mut names = std::collections::HashSet::new();
    for e in &entries {
        assert!(names.insert(&e.name), "duplicate entry name {}", e.name);
        assert!(
            e.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "entry name {:?} (line {}) is not snake_case",
            e.name,
            e.line
        );
        assert_eq!(
            e.ordered,
            has_top_level_order_by(&e.sql),
            "{} (line {}): `ordered: yes` must go with a top-level ORDER BY, and only with one",
            e.name,
            e.line
        );
    }
    let refused: Vec<&str> = entries
        .iter()
        .filter(|e| e.expect_refused)
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(refused, ["pivot_without_in_list"]);
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

/// An instant as local time in [`TIME_ZONE`] with its offset, from DuckDB's own cast of a
/// TIMESTAMPTZ to text (`2024-01-31 08:45:00.5-05`), reshaped to ISO 8601
/// (`2024-01-31T08:45:00.5-05:00`): an oracle independent of duckgate's offset lookup.
fn local_text(micros: i64) -> String {
    thread_local! {
        static ZONED: Connection = {
            let conn = Connection::open_in_memory().unwrap();
            conn.execute_batch(&format!("SET TimeZone = '{TIME_ZONE}';")).unwrap();
            conn
        };
    }
    let text: String = ZONED.with(|conn| {
        conn.query_row(
            "SELECT CAST(make_timestamp(?::BIGINT) AT TIME ZONE 'UTC' AS VARCHAR)",
            [micros],
            |row| row.get(0),
        )
        .unwrap()
    });
    if text.contains("infinity") {
        return text;
    }
    let iso = text.replacen(' ', "T", 1);
    // The offset starts at the last sign after the clock.
    let clock = iso.find('T').map_or(0, |t| t + 1);
    match iso[clock..].rfind(['+', '-']) {
        Some(at) if iso.len() - (clock + at) == 3 => format!("{iso}:00"),
        _ => iso,
    }
}

#[test]
fn oracle_renders_the_documented_json_shapes() {
    // The shapes src/engine/convert.rs documents for agents, produced by DuckDB itself, so the
    // oracle is checked against the contract rather than against duckgate.
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(&format!("SET TimeZone = '{TIME_ZONE}';"))
        .unwrap();
    let answer = oracle_answer(
        &conn,
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
    )
    .unwrap();
    let row = &answer.rows[0];
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
        json!({ "a": [1, 2.5, null] }),
        json!(["1969-12-31", "2000-02-29"]),
        json!({ "k": "v", "n": 1.5 }),
        json!([{ "key": "a", "value": 1 }]),
        json!("NaN"),
        json!("0044-03-15"),
    ];
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(&row[i], want, "column {}", answer.columns[i]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn every_everyday_question_gets_the_same_rows_over_mcp_as_in_process_duckdb() {
    let started = Instant::now();
    let entries = parse_corpus(CORPUS).expect("the corpus parses");
    let dir = TempDir::new("everyday");
    let db = build_database(&dir);
    // Every answer whole: the corpus compares rows, not the reply budget (tests/mcp_tools.rs).
    let client = serve(
        &db,
        &["--time-zone", TIME_ZONE, "--max-reply-bytes", "67108864"],
    )
    .await;
    let oracle = open_oracle(&db, TIME_ZONE);

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
                "{} [{}] (tests/everyday/corpus.sql line {}): {problem}\n    SQL: {}",
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
