//! "Yesterday" and "the last 7 days" mean local calendar days, also across a daylight-saving
//! change, when the server runs with `--time-zone`.
//!
//! One reading every 5 minutes from 2025-02-28 to 2025-03-15 UTC. In America/New_York, daylight
//! saving time began on 2025-03-09 at 02:00 local time, so that local day had 23 hours. Asked
//! at a fixed moment (2025-03-10 12:00 EDT) instead of `now()`, the answers are computed by hand:
//! - yesterday (local 2025-03-09): 23 h × 12 readings = 276, not 288;
//! - the last 7 local days (2025-03-03 … 2025-03-09): 7 × 288 − 12 = 2004, 2004 / 7 a day;
//! - in UTC the same questions count whole UTC days: 288 and 7 × 288 = 2016.
//!
//! The questions are written the ways an agent writes them (`::DATE`, `date_trunc('day', …)`,
//! `AT TIME ZONE`). A `now()`-based "yesterday" must also equal in-process DuckDB's answer in
//! the same zone.

use crate::support::{TempDir, make_db, serve};
use duckdb::{AccessMode, Config, Connection};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use serde_json::{Value, json};

const READINGS: &str = "
CREATE TABLE readings (read_at TIMESTAMPTZ NOT NULL, glucose INTEGER);
-- every 5 minutes from 2025-02-28 00:00 UTC up to (not including) 2025-03-15 00:00 UTC
INSERT INTO readings
SELECT TIMESTAMPTZ '2025-02-28 00:00:00+00' + INTERVAL (i * 5) MINUTE, 100 + i % 50
FROM range(15 * 288) t(i);
-- and every 5 minutes over the 3 days before the database is built, for `now()`
INSERT INTO readings
SELECT to_timestamp((epoch(now())::BIGINT // 300 - i) * 300), 120 + i % 40
FROM range(3 * 288) t(i);
";

/// The moment the questions are asked: the Monday after clocks sprang forward, at noon EDT.
const ASKED_AT: &str = "TIMESTAMPTZ '2025-03-10 12:00:00-04'";

const NEW_YORK: &str = "America/New_York";

fn database(tag: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("readings.duckdb");
    make_db(&db, READINGS);
    (dir, db)
}

/// The rows of a `query` call that must succeed.
async fn ask(client: &McpClient, sql: &str) -> Vec<Vec<Value>> {
    let result = client
        .call("query", json!({ "sql": sql }))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    let envelope = envelope_of(&result);
    assert_eq!(envelope["status"], "success", "{sql}\n{envelope}");
    serde_json::from_value(envelope["data"]["rows"].clone()).unwrap()
}

/// The single value of a one-row, one-column answer.
async fn ask_one(client: &McpClient, sql: &str) -> Value {
    let rows = ask(client, sql).await;
    assert_eq!(rows.len(), 1, "{sql}: {rows:?}");
    rows[0][0].clone()
}

fn yesterday_by_cast() -> String {
    format!("SELECT count(*) FROM readings WHERE read_at::DATE = ({ASKED_AT})::DATE - 1")
}

fn yesterday_by_date_trunc() -> String {
    format!(
        "SELECT count(*) AS readings FROM readings
         WHERE read_at >= date_trunc('day', {ASKED_AT}) - INTERVAL 1 DAY
           AND read_at < date_trunc('day', {ASKED_AT})"
    )
}

fn yesterday_hours() -> String {
    format!(
        "SELECT count(DISTINCT hour(read_at)) FROM readings
         WHERE read_at::DATE = ({ASKED_AT})::DATE - 1"
    )
}

fn last_7_days_by_cast() -> String {
    format!(
        "SELECT count(*) FROM readings
         WHERE read_at::DATE BETWEEN ({ASKED_AT})::DATE - 7 AND ({ASKED_AT})::DATE - 1"
    )
}

fn last_7_days_by_date_trunc() -> String {
    format!(
        "SELECT count(*) FROM readings
         WHERE read_at >= date_trunc('day', {ASKED_AT}) - INTERVAL 7 DAY
           AND read_at < date_trunc('day', {ASKED_AT})"
    )
}

fn mean_per_day_last_7_days() -> String {
    format!(
        "SELECT avg(n) AS mean_readings_per_day FROM (
             SELECT read_at::DATE AS day, count(*) AS n FROM readings
             WHERE read_at::DATE BETWEEN ({ASKED_AT})::DATE - 7 AND ({ASKED_AT})::DATE - 1
             GROUP BY day)"
    )
}

/// The local calendar day named explicitly: the answer does not depend on the server's zone.
const YESTERDAY_IN_NEW_YORK_BY_NAME: &str = "SELECT count(*) FROM readings
     WHERE (read_at AT TIME ZONE 'America/New_York')::DATE = DATE '2025-03-09'";

#[tokio::test(flavor = "multi_thread")]
async fn yesterday_and_last_7_days_are_local_days_across_the_spring_forward() {
    let (_dir, db) = database("local-ny");
    let client = serve(&db, &["--time-zone", NEW_YORK]).await;

    assert_eq!(ask_one(&client, &yesterday_by_cast()).await, json!(276));
    assert_eq!(
        ask_one(&client, &yesterday_by_date_trunc()).await,
        json!(276)
    );
    assert_eq!(
        ask_one(&client, YESTERDAY_IN_NEW_YORK_BY_NAME).await,
        json!(276)
    );
    // 02:00–02:59 did not exist that night.
    assert_eq!(ask_one(&client, &yesterday_hours()).await, json!(23));

    assert_eq!(ask_one(&client, &last_7_days_by_cast()).await, json!(2004));
    assert_eq!(
        ask_one(&client, &last_7_days_by_date_trunc()).await,
        json!(2004)
    );
    let mean = ask_one(&client, &mean_per_day_last_7_days()).await;
    let mean = mean
        .as_f64()
        .unwrap_or_else(|| panic!("not a number: {mean}"));
    assert!((mean - 2004.0 / 7.0).abs() < 1e-9, "mean per day {mean}");

    // Per local day, keyed by local midnight, shown in local time with its offset: each
    // midnight from Mar 3 to Mar 9 was still EST (UTC−5); the 23-hour day is the last.
    let per_day = ask(
        &client,
        &format!(
            "SELECT date_trunc('day', read_at) AS local_day, count(*) AS readings
             FROM readings
             WHERE read_at >= date_trunc('day', {ASKED_AT}) - INTERVAL 7 DAY
               AND read_at < date_trunc('day', {ASKED_AT})
             GROUP BY 1
             ORDER BY 1"
        ),
    )
    .await;
    let expected: Vec<Vec<Value>> = (3..=9)
        .map(|day| {
            let readings = if day == 9 { 276 } else { 288 };
            vec![
                json!(format!("2025-03-{day:02}T00:00:00-05:00")),
                json!(readings),
            ]
        })
        .collect();
    assert_eq!(per_day, expected);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_same_questions_in_utc_count_whole_utc_days() {
    // The control: a server that ignored --time-zone (or ran in UTC) answers these, so the
    // New York answers above are the zone's doing.
    let (_dir, db) = database("local-utc");
    let client = serve(&db, &["--time-zone", "UTC"]).await;

    assert_eq!(ask_one(&client, &yesterday_by_cast()).await, json!(288));
    assert_eq!(
        ask_one(&client, &yesterday_by_date_trunc()).await,
        json!(288)
    );
    assert_eq!(ask_one(&client, &yesterday_hours()).await, json!(24));
    assert_eq!(ask_one(&client, &last_7_days_by_cast()).await, json!(2016));
    assert_eq!(
        ask_one(&client, &last_7_days_by_date_trunc()).await,
        json!(2016)
    );
    let mean = ask_one(&client, &mean_per_day_last_7_days()).await;
    assert_eq!(mean.as_f64(), Some(288.0), "mean per day {mean}");
    // Naming the zone in the query gives New York's day whatever the server's zone.
    assert_eq!(
        ask_one(&client, YESTERDAY_IN_NEW_YORK_BY_NAME).await,
        json!(276)
    );
    client.close().await.unwrap();
}

/// Yesterday by `now()`: how many readings, and the first and last of them as epoch seconds.
const YESTERDAY_BY_NOW: &str = "SELECT count(*) AS readings,
            epoch(min(read_at))::BIGINT AS first_at, epoch(max(read_at))::BIGINT AS last_at
     FROM readings
     WHERE read_at::DATE = current_date - 1";

fn oracle_yesterday(db: &std::path::Path, time_zone: &str) -> Vec<Value> {
    let config = Config::default().access_mode(AccessMode::ReadOnly).unwrap();
    let conn = Connection::open_with_flags(db, config).unwrap();
    conn.execute_batch(&format!("SET TimeZone = '{time_zone}';"))
        .unwrap();
    let (readings, first_at, last_at): (i64, i64, i64) = conn
        .query_row(YESTERDAY_BY_NOW, [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    vec![json!(readings), json!(first_at), json!(last_at)]
}

#[tokio::test(flavor = "multi_thread")]
async fn now_based_yesterday_matches_in_process_duckdb_in_the_same_zone() {
    let (_dir, db) = database("local-now");
    for zone in [NEW_YORK, "UTC"] {
        let client = serve(&db, &["--time-zone", zone]).await;
        // If local midnight passes between the two runs, "yesterday" moves: ask both once more.
        let mut attempt = 0;
        let (expected, answer) = loop {
            attempt += 1;
            let expected = oracle_yesterday(&db, zone);
            let answer = ask(&client, YESTERDAY_BY_NOW).await;
            if answer == [expected.clone()] || attempt == 2 {
                break (expected, answer);
            }
        };
        assert_eq!(answer, [expected], "yesterday in {zone}");
        client.close().await.unwrap();
    }
    // The question is zone-sensitive: yesterday starts at local midnight, which is never
    // midnight UTC in New York, so a server that ignored the zone would not match above.
    let new_york = oracle_yesterday(&db, NEW_YORK);
    let utc = oracle_yesterday(&db, "UTC");
    assert_ne!(new_york[1], utc[1], "first reading of yesterday");
}

/// A basal event at 03:10 UTC in November and one at 12:00 UTC in July, plain and inside a
/// list and a struct.
const EVENTS: &str = "
CREATE TABLE basal (started TIMESTAMPTZ NOT NULL, rate DOUBLE);
INSERT INTO basal VALUES
  (TIMESTAMPTZ '2026-11-27 03:10:00+00', 0.8),
  (TIMESTAMPTZ '2026-07-01 12:00:00+00', 1.1);
";

#[tokio::test(flavor = "multi_thread")]
async fn zoned_values_are_local_time_with_their_offset_in_text_and_structured_rows() {
    let dir = TempDir::new("local-zoned");
    let db = dir.path().join("basal.duckdb");
    make_db(&db, EVENTS);
    // (zone, November's event, its local hour, July's event, its local hour)
    let zones = [
        (
            "America/New_York",
            "2026-11-26T22:10:00-05:00",
            22,
            "2026-07-01T08:00:00-04:00",
            8,
        ),
        (
            "Asia/Kolkata",
            "2026-11-27T08:40:00+05:30",
            8,
            "2026-07-01T17:30:00+05:30",
            17,
        ),
        ("UTC", "2026-11-27T03:10:00Z", 3, "2026-07-01T12:00:00Z", 12),
    ];
    for (zone, november, november_hour, july, july_hour) in zones {
        let client = serve(&db, &["--time-zone", zone]).await;
        let result = client
            .call(
                "query",
                json!({ "sql": "SELECT started, hour(started) AS local_hour, [started] AS list, \
                                {'at': started} AS event FROM basal ORDER BY started DESC" }),
            )
            .await
            .unwrap();
        let envelope = envelope_of(&result);
        assert_eq!(envelope["status"], "success", "{zone}: {envelope}");
        let rows = &envelope["data"]["rows"];
        assert_eq!(
            rows[0],
            json!([november, november_hour, [november], { "at": november }]),
            "{zone}"
        );
        assert_eq!(
            rows[1],
            json!([july, july_hour, [july], { "at": july }]),
            "{zone}"
        );
        // The text table an agent reads says the same times.
        let text = text_of(&result);
        assert!(
            text.contains(november) && text.contains(july),
            "{zone}: {text}"
        );
        client.close().await.unwrap();
    }
}
