//! The `plot` tool through the real binary over MCP: each chart kind is drawn in the confined
//! worker and comes back as a PNG (decoded here, its pixels looked at), the numbers it shows
//! and a sentence; privacy rules refuse a plot of a hidden column exactly as a query of it;
//! `duckgate plot` writes the same PNG to a file.
#![cfg(feature = "engine")]

mod support;

use base64::Engine as _;
use duckgate::mcp::client::{envelope_of, text_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};
use support::{
    OutputSchemas, PRIVATE_SCHEMA, TempDir, duckgate_cli, error_kind, make_db, run_cli, serve,
    stderr_of, stdout_of,
};

/// A week of readings every 5 minutes with a daily rhythm: low at night, high after meals.
fn week_db(tag: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("week.duckdb");
    make_db(
        &db,
        "CREATE TABLE readings AS SELECT TIMESTAMP '2026-03-02' + to_minutes(i * 5) AS ts, \
         (110 + 60 * sin(2 * pi() * ((i * 5) % 1440 - 360) / 1440.0) + (i * 37) % 20)::SMALLINT \
         AS glucose FROM range(2016) t(i); \
         CREATE TABLE days AS SELECT ts::DATE AS day, round(avg(glucose), 1) AS mean_glucose \
         FROM readings GROUP BY ALL ORDER BY day;",
    );
    (dir, db)
}

/// The PNG of a result, decoded: (width, height, RGB pixels).
fn picture(result: &CallToolResult) -> (u32, u32, Vec<u8>) {
    let image = result
        .content
        .iter()
        .find_map(|c| c.as_image())
        .unwrap_or_else(|| panic!("no image in {result:?}"));
    assert_eq!(image.mime_type, "image/png");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&image.data)
        .unwrap();
    decode(&bytes)
}

fn decode(bytes: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap();
    let mut pixels = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut pixels).unwrap();
    assert_eq!(info.color_type, png::ColorType::Rgb, "{info:?}");
    pixels.truncate(info.buffer_size());
    (info.width, info.height, pixels)
}

/// Pixels that are neither white nor grey: the data drawn in colour.
fn coloured(pixels: &[u8]) -> usize {
    pixels
        .chunks(3)
        .filter(|p| {
            let (max, min) = (p.iter().max().unwrap(), p.iter().min().unwrap());
            max - min > 40
        })
        .count()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_chart_kind_is_drawn_in_the_worker_and_comes_back_as_image_numbers_and_text() {
    let (_dir, db) = week_db("plot-kinds");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let cases: [(&str, Value); 5] = [
        (
            "line",
            json!({ "sql": "SELECT ts, glucose FROM readings WHERE ts < TIMESTAMP '2026-03-03'", "target_low": 70, "target_high": 180 }),
        ),
        (
            "scatter",
            json!({ "sql": "SELECT hour(ts) AS hour, glucose FROM readings" }),
        ),
        (
            "bar",
            json!({ "sql": "SELECT strftime(day, '%a') AS weekday, mean_glucose FROM days" }),
        ),
        (
            "histogram",
            json!({ "sql": "SELECT glucose FROM readings", "bins": 20 }),
        ),
        (
            "agp",
            json!({ "sql": "SELECT ts, glucose FROM readings", "target_low": 70, "target_high": 180, "width": 1200, "height": 600 }),
        ),
    ];
    for (kind, mut args) in cases {
        args["kind"] = json!(kind);
        let result = client.call("plot", args.clone()).await.unwrap();
        assert_eq!(
            envelope_of(&result)["status"],
            "success",
            "{kind}: {}",
            text_of(&result)
        );
        schemas.check("plot", &result);
        let data = &envelope_of(&result)["data"];
        let (width, height, pixels) = picture(&result);
        assert_eq!(
            (width, height),
            (
                args.get("width").and_then(Value::as_u64).unwrap_or(900) as u32,
                args.get("height").and_then(Value::as_u64).unwrap_or(500) as u32
            ),
            "{kind}"
        );
        assert_eq!(data["width"], width, "{kind}");
        // The corner is background; the data is drawn in colour.
        assert_eq!(&pixels[..3], &[255, 255, 255], "{kind}");
        assert!(coloured(&pixels) > 500, "{kind}: almost nothing drawn");
        assert!(
            !data["summary"]["rows"].as_array().unwrap().is_empty(),
            "{kind}: {data}"
        );
        assert!(
            text_of(&result).contains(&format!("({} rows)", data["rows_read"])),
            "{kind}: {}",
            text_of(&result)
        );
        match kind {
            "agp" => {
                // 24 hourly rows, each with its percentiles; the night is lower than the
                // evening, as the data was made.
                let rows = data["summary"]["rows"].as_array().unwrap();
                assert_eq!(rows.len(), 24, "{data}");
                assert!(
                    text_of(&result).contains("within the target range"),
                    "{}",
                    text_of(&result)
                );
            }
            "histogram" => {
                let counted: f64 = data["summary"]["rows"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|row| row.as_array().unwrap().last().unwrap().as_f64().unwrap())
                    .sum();
                assert_eq!(counted, 2016.0, "{data}");
            }
            "bar" => assert_eq!(data["rows_read"], 7, "{data}"),
            _ => assert_eq!(data["y"], "glucose", "{data}"),
        }
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plot_that_cannot_be_drawn_says_why_and_what_to_do() {
    let (_dir, db) = week_db("plot-errors");
    let client = serve(&db, &[]).await;
    for (args, kind, words) in [
        (
            json!({ "sql": "SELECT ts, glucose FROM readings", "kind": "line", "y": "sugar" }),
            "invalid_argument",
            "no result column \"sugar\"",
        ),
        (
            json!({ "sql": "SELECT ts, 'high' AS label FROM readings", "kind": "line" }),
            "invalid_argument",
            "not numbers",
        ),
        (
            json!({ "sql": "SELECT ts, glucose FROM readings WHERE false", "kind": "agp" }),
            "invalid_argument",
            "no rows",
        ),
        (
            json!({ "sql": "SELECT ts, glucose FROM readings", "kind": "line", "target_low": 70 }),
            "invalid_argument",
            "target_high",
        ),
        (
            json!({ "sql": "COPY readings TO '/tmp/x.csv'", "kind": "line" }),
            "policy_blocked",
            "",
        ),
    ] {
        let result = client.call("plot", args.clone()).await.unwrap();
        assert_eq!(error_kind(&result), kind, "{args}: {}", text_of(&result));
        assert!(
            text_of(&result).contains(words),
            "{args}: {}",
            text_of(&result)
        );
        assert!(result.content.iter().all(|c| c.as_image().is_none()));
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn privacy_rules_refuse_a_plot_of_a_hidden_column_as_a_query_of_it() {
    let dir = TempDir::new("plot-private");
    let db = dir.path().join("private.duckdb");
    make_db(&db, PRIVATE_SCHEMA);
    let rules = [
        "--hide-table",
        "raw_payloads",
        "--hide-column",
        "readings.secret_note",
    ];
    let client = serve(&db, &rules).await;
    for sql in [
        "SELECT id, length(secret_note) AS n FROM readings",
        "SELECT r.id, length(p.body) AS n FROM readings r JOIN raw_payloads p ON p.reading_id = r.id",
    ] {
        let plot = client
            .call("plot", json!({ "sql": sql, "kind": "bar" }))
            .await
            .unwrap();
        let query = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(
            error_kind(&plot),
            error_kind(&query),
            "{sql}: {}",
            text_of(&plot)
        );
        assert_eq!(
            error_kind(&plot),
            "unknown_name",
            "{sql}: {}",
            text_of(&plot)
        );
        // The same answer as the query's, word for word (which says no more than it would for a
        // made-up name: tests/privacy_oracles.rs), and no hidden value.
        assert_eq!(
            envelope_of(&plot)["error"]["message"],
            envelope_of(&query)["error"]["message"],
            "{sql}"
        );
        let everything = serde_json::to_string(&plot).unwrap().to_lowercase();
        assert!(!everything.contains("planted"), "{sql}: {everything}");
    }
    // A visible column still plots.
    let ok = client
        .call(
            "plot",
            json!({ "sql": "SELECT id, glucose FROM readings", "kind": "bar" }),
        )
        .await
        .unwrap();
    assert_eq!(envelope_of(&ok)["status"], "success", "{}", text_of(&ok));
    client.close().await.unwrap();
}

#[test]
fn duckgate_plot_writes_the_png_to_a_file() {
    let (dir, db) = week_db("plot-cli");
    let out = dir.path().join("agp.png");
    let mut command = duckgate_cli(["plot", "--db"]);
    command
        .arg(&db)
        .args([
            "--kind", "agp", "--target", "70:180", "--width", "640", "--height", "400", "--out",
        ])
        .arg(&out)
        .arg("SELECT ts, glucose FROM readings");
    let output = run_cli(command, None);
    let stdout = stdout_of(&output);
    assert!(output.status.success(), "{stdout}{}", stderr_of(&output));
    assert!(stdout.contains("within the target range"), "{stdout}");
    let (width, height, pixels) = decode(&std::fs::read(&out).unwrap());
    assert_eq!((width, height), (640, 400));
    assert!(coloured(&pixels) > 500);
}
