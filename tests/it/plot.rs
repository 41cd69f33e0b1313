//! The `plot` tool through the real binary over MCP: each chart kind is drawn in the confined
//! worker and comes back as a PNG (decoded here, its pixels looked at), the numbers it shows
//! and a sentence; privacy rules refuse a plot of a hidden column exactly as a query of it;
//! `duckgate plot` writes the same PNG to a file.

use crate::support::{
    OutputSchemas, PRIVATE_SCHEMA, TempDir, duckgate_cli, error_kind, make_db, run_cli, serve,
    stderr_of, stdout_of,
};
use base64::Engine as _;
use duckgate::mcp_client::{envelope_of, text_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

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
        // made-up name: tests/it/privacy_oracles.rs), and no hidden value.
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

/// Two weeks of zoned readings every 5 minutes in November (New York is UTC−5 throughout):
/// glucose is 50 + 10 × the UTC hour, so a chart read in local time shows hour h at the value
/// of UTC hour h + 5.
fn zoned_db(tag: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("zoned.duckdb");
    make_db(
        &db,
        "CREATE TABLE readings AS SELECT TIMESTAMPTZ '2026-11-10 00:00:00+00' + to_minutes(i * 5) \
         AS read_at, (50 + 10 * ((i * 5) // 60 % 24))::INTEGER AS glucose FROM range(14 * 288) t(i);",
    );
    (dir, db)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_chart_kind_plots_a_timestamptz_x_in_local_time() {
    let (_dir, db) = zoned_db("plot-zoned");
    let client = serve(&db, &["--time-zone", "America/New_York"]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let cases: [(&str, &str); 6] = [
        ("line", "SELECT read_at, glucose FROM readings"),
        ("scatter", "SELECT read_at, glucose FROM readings"),
        (
            "bar",
            "SELECT date_trunc('day', read_at) AS day, avg(glucose) AS mean FROM readings GROUP BY 1 ORDER BY 1",
        ),
        ("histogram", "SELECT read_at, glucose FROM readings"),
        ("agp", "SELECT read_at, glucose FROM readings"),
        ("tir", "SELECT glucose, read_at FROM readings"),
    ];
    for (kind, sql) in cases {
        let args = match kind {
            "histogram" => json!({ "sql": sql, "kind": kind, "y": "glucose" }),
            _ => json!({ "sql": sql, "kind": kind }),
        };
        let result = client.call("plot", args).await.unwrap();
        assert_eq!(
            envelope_of(&result)["status"],
            "success",
            "{kind}: {}",
            text_of(&result)
        );
        schemas.check("plot", &result);
        let data = &envelope_of(&result)["data"];
        let rows = data["summary"]["rows"].as_array().unwrap();
        match kind {
            // Local midnight is 05:00 UTC, when glucose is 50 + 10 × 5.
            "agp" => assert_eq!(rows[0][4], json!(100.0), "{data}"),
            // Days start at local midnight: the first bar is 2026-11-09 (19:00–23:55 local).
            "bar" => assert_eq!(rows[0][0], json!("2026-11-09"), "{data}"),
            "line" => assert!(
                text_of(&result).contains("from 2026-11-09 19:00:00"),
                "{}",
                text_of(&result)
            ),
            _ => {}
        }
    }
    client.close().await.unwrap();
}

/// Rows of column `x` whose pixel is exactly `colour`.
fn rows_of(pixels: &[u8], width: u32, x: u32, colour: [u8; 3]) -> Vec<u32> {
    let height = pixels.len() as u32 / 3 / width;
    (0..height)
        .filter(|&y| {
            let i = ((y * width + x) * 3) as usize;
            pixels[i..i + 3] == colour
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agp_and_tir_from_the_worker_show_the_consensus_lines_and_shares() {
    let (_dir, db) = week_db("plot-consensus");
    let client = serve(&db, &[]).await;
    let result = client
        .call(
            "plot",
            json!({ "sql": "SELECT ts, glucose FROM readings", "kind": "agp" }),
        )
        .await
        .unwrap();
    let (width, _, pixels) = picture(&result);
    // A quarter of the way across (left of the legend's lines): the 250 line above the 180
    // target line above the 70 one above the 54 line, spaced as a 0–350 mg/dL axis spaces them.
    let x = width / 4;
    let first = |colour: [u8; 3]| -> f64 {
        f64::from(
            *rows_of(&pixels, width, x, colour)
                .first()
                .unwrap_or_else(|| panic!("{colour:?} missing")),
        )
    };
    let target = rows_of(&pixels, width, x, [0, 158, 115]);
    let (row_180, row_70) = (f64::from(target[0]), f64::from(*target.last().unwrap()));
    let (row_250, row_54) = (first([230, 159, 0]), first([213, 94, 0]));
    assert!(row_250 < row_180 && row_180 < row_70 && row_70 < row_54);
    let per_mg_dl = (row_70 - row_180) / 110.0;
    assert!(((row_54 - row_70) / per_mg_dl - 16.0).abs() < 1.5);
    assert!(((row_180 - row_250) / per_mg_dl - 70.0).abs() < 1.5);
    let text = text_of(&result);
    for words in ["GMI", "CV", "CGM active 100.0%", "consensus AGP"] {
        assert!(text.contains(words), "{words}: {text}");
    }

    let result = client
        .call(
            "plot",
            json!({ "sql": "SELECT glucose FROM readings", "kind": "tir" }),
        )
        .await
        .unwrap();
    let data = &envelope_of(&result)["data"];
    let (width, _, pixels) = picture(&result);
    // The bar's column with the most segment colours; each segment's rows are its share.
    let colours = [
        [139, 0, 0],
        [227, 30, 36],
        [59, 181, 74],
        [255, 210, 0],
        [245, 130, 32],
    ];
    let column = (0..width)
        .max_by_key(|&x| {
            colours
                .iter()
                .map(|c| rows_of(&pixels, width, x, *c).len())
                .sum::<usize>()
        })
        .unwrap();
    let heights: Vec<usize> = colours
        .iter()
        .map(|c| rows_of(&pixels, width, column, *c).len())
        .collect();
    let total: usize = heights.iter().sum();
    let rows = data["summary"]["rows"].as_array().unwrap();
    for (i, height) in heights.iter().enumerate() {
        // The summary lists very high first.
        let percent = rows[4 - i][3].as_f64().unwrap();
        let drawn = *height as f64 * 100.0 / total as f64;
        assert!(
            (drawn - percent).abs() < 1.0,
            "segment {i}: {drawn:.1}% drawn, {percent}% counted"
        );
    }
    client.close().await.unwrap();
}
