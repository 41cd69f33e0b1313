//! The audit log against a determined client, through the real binary over stdio: every record
//! is one bounded JSON line whatever the arguments, every request is recorded (unknown tools,
//! lines that are not JSON, malformed requests, unknown methods), and the file is rotated at
//! `--audit-max-bytes` (or `[audit] max_bytes`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::raw_support::RawSession;
use crate::support::{assert_failed, cgm_db, exe, serve, status};
use duckgate::audit::{rotated_path, sha256_hex};
use duckgate::mcp_client::envelope_of;
use serde_json::{Value, json};

/// 15 MiB: under rmcp's 16 MiB line cap, so the server reads it and must bound it itself.
const HUGE: usize = 15 << 20;
/// The characters serde_json leaves raw that some tools end a line at.
const TERMINATORS: [char; 3] = ['\u{2028}', '\u{2029}', '\u{85}'];

/// The records of a log file, split on `\n` only; panics unless each is one JSON object with no
/// raw line terminator of any kind.
fn records(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a record is cut short"
    );
    text.split('\n')
        .filter(|line| !line.is_empty())
        .map(|line| {
            for c in TERMINATORS.into_iter().chain(['\r', '\u{b}', '\u{c}']) {
                assert!(!line.contains(c), "raw {c:?} in a record: {line}");
            }
            let record: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not one JSON record ({e}): {line}"));
            assert!(record.is_object(), "{line}");
            record
        })
        .collect()
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

#[tokio::test(flavor = "multi_thread")]
async fn every_audit_record_is_one_json_line_under_10_kb_whatever_the_arguments() {
    let (dir, db) = cgm_db("audit-lines");
    let log = dir.path().join("audit.jsonl");
    let client = serve(&db, &["--audit-log", log.to_str().unwrap()]).await;
    let sql = "SELECT 'a\u{2028}b\u{2029}c\u{85}d' AS s";
    let huge = "x".repeat(HUGE);
    let calls = [
        ("query", json!({ "sql": sql })),
        ("search_schema", json!({ "query": "gluc\u{2028}ose" })),
        ("describe_table", json!({ "table_name": huge })),
        ("query", json!({ "sql": huge })),
        (
            "search_schema",
            json!({ "query": "\u{2029}".repeat(HUGE / 3) }),
        ),
        (
            "query",
            json!({ "sql": "SELECT 1", "limit": 1, "extra": "\u{85}".repeat(HUGE / 2) }),
        ),
    ];
    for (tool, args) in calls {
        let before = size(&log);
        let result = client.call(tool, args).await.unwrap();
        let grown = size(&log) - before;
        eprintln!("{tool}: the log grew by {grown} bytes");
        assert!(grown > 0, "{tool} was not recorded");
        assert!(grown < 10 * 1024, "{tool}: the log grew by {grown} bytes");
        drop(result);
    }
    client.close().await.unwrap();

    // The client's own requests (`initialize`, `tools/list`) have records of their own.
    let lines: Vec<Value> = records(&log)
        .into_iter()
        .filter(|line| line["event"] != "request")
        .collect();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    for line in &lines {
        assert_eq!(line["event"], "tool_call", "{line}");
    }
    // The terminators are escaped, not dropped: the record reads back as sent.
    assert_eq!(lines[0]["arguments"]["sql"], sql);
    assert_eq!(lines[0]["status"], "success");
    assert_eq!(lines[1]["arguments"]["query"], "gluc\u{2028}ose");
    let raw = std::fs::read_to_string(&log).unwrap();
    assert!(raw.contains("\\u2028") && raw.contains("\\u2029") && raw.contains("\\u0085"));
    // A 15 MiB argument: its first 4 KB, its length and its digest.
    let recorded = &lines[2]["arguments"]["table_name"];
    assert_eq!(recorded["truncated"], true, "{recorded}");
    assert_eq!(recorded["bytes"], HUGE);
    assert_eq!(recorded["sha256"], sha256_hex(&huge));
    assert_eq!(recorded["prefix"], "x".repeat(4096));
    assert_eq!(lines[2]["error_kind"], "invalid_argument");
    assert_eq!(lines[3]["arguments"]["sql"]["bytes"], HUGE);
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tools_unparsable_lines_and_malformed_requests_are_recorded() {
    let (dir, db) = cgm_db("audit-protocol");
    let log = dir.path().join("audit.jsonl");
    let mut session = RawSession::start(&exe(), &db, &["--audit-log", log.to_str().unwrap()]);
    session.initialize().await;

    // Each line is spelled out (not shared with argument_limits' malformed-line checks): the
    // audit events asserted below follow these lines one for one.
    session
        .call(2, "drop_database", json!({ "now": true }))
        .await;
    let reply = session.reply(json!(2)).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    session.send("this is not json {").await;
    let reply = session.next_message().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    session
        .send(r#"{"jsonrpc":"2.0","id":5,"method":42}"#)
        .await;
    let reply = session.reply(json!(5)).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    session
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"tables/drop","params":{}}"#)
        .await;
    let reply = session.reply(json!(6)).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    let huge_line = format!("{{\"oops\": \"{}", "\u{2028}".repeat(HUGE / 3));
    session.send(&huge_line).await;
    let reply = session.next_message().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    session.call(7, "query", json!({ "sql": "SELECT 7" })).await;
    let reply = session.reply(json!(7)).await;
    assert_eq!(reply["result"]["structuredContent"]["status"], "success");
    session
        .send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}"#)
        .await;
    let reply = session.reply(json!(8)).await;
    assert!(reply["result"]["tools"].is_array(), "{reply}");
    session.finish().await;

    let all = records(&log);
    // Every other request is recorded as it arrives: `initialize` first, `tools/list` last.
    assert_eq!(all[0]["event"], "request", "{all:#?}");
    assert!(all[0]["line"].as_str().unwrap().contains("initialize"));
    let last = &all[all.len() - 1];
    assert_eq!(last["event"], "request", "{all:#?}");
    assert!(last["line"].as_str().unwrap().contains("tools/list"));
    let lines: Vec<Value> = all
        .iter()
        .filter(|l| l["event"] != "request")
        .cloned()
        .collect();
    let events: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap()).collect();
    assert_eq!(
        events,
        [
            "unknown_tool",
            "unparsable_line",
            "invalid_request",
            "unknown_method",
            "unparsable_line",
            "tool_call"
        ],
        "{lines:#?}"
    );
    assert_eq!(lines[0]["tool"], "drop_database");
    assert_eq!(lines[0]["arguments"], json!({ "now": true }));
    assert_eq!(lines[0]["jsonrpc_code"], -32602);
    assert_eq!(lines[0]["verdict"], "failed");
    assert_eq!(lines[1]["line"], "this is not json {");
    assert_eq!(lines[1]["jsonrpc_code"], -32700);
    assert_eq!(lines[2]["jsonrpc_code"], -32600);
    assert_eq!(lines[3]["jsonrpc_code"], -32601);
    assert!(lines[3]["line"].as_str().unwrap().contains("tables/drop"));
    assert_eq!(lines[4]["line"]["bytes"], huge_line.len());
    assert!(
        serde_json::to_string(&lines[4]).unwrap().len() < 10 * 1024,
        "{}",
        lines[4]
    );
    assert_eq!(lines[5]["tool"], "query");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_log_rotates_to_path_1_at_the_cap_and_every_record_stays_one_line() {
    let (dir, db) = cgm_db("audit-rotate");
    let log = dir.path().join("audit.jsonl");
    let cap: u64 = 2000;
    let client = serve(
        &db,
        &[
            "--audit-log",
            log.to_str().unwrap(),
            "--audit-max-bytes",
            &cap.to_string(),
        ],
    )
    .await;
    let huge = "y".repeat(HUGE);
    for i in 0..12 {
        let sql = if i == 6 {
            huge.clone()
        } else {
            format!("SELECT {i} AS n -- \u{2028}\u{2029}\u{85}")
        };
        client.call("query", json!({ "sql": sql })).await.unwrap();
    }
    client.close().await.unwrap();
    let rotated = rotated_path(&log);
    assert!(rotated.exists(), "no {}", rotated.display());
    for file in [&log, &rotated] {
        let lines = records(file);
        assert!(!lines.is_empty(), "{} is empty", file.display());
        // Within the cap, or one record alone (one larger than the cap is never split).
        assert!(
            size(file) <= cap || lines.len() == 1,
            "{}: {} bytes in {} records",
            file.display(),
            size(file),
            lines.len()
        );
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", file.display());
    }
    let last = records(&log).pop().unwrap();
    assert_eq!(
        last["arguments"]["sql"],
        "SELECT 11 AS n -- \u{2028}\u{2029}\u{85}"
    );

    // The same cap from the configuration file.
    let config = dir.path().join("duckgate.toml");
    let from_file = dir.path().join("from-file.jsonl");
    std::fs::write(
        &config,
        format!(
            "[audit]\nlog = \"{}\"\nmax_bytes = {cap}\n",
            from_file.display()
        ),
    )
    .unwrap();
    let client = serve(&db, &["--config", config.to_str().unwrap()]).await;
    for i in 0..8 {
        let sql = format!("SELECT {i} AS n -- {}", "z".repeat(300));
        client.call("query", json!({ "sql": sql })).await.unwrap();
    }
    client.close().await.unwrap();
    assert!(rotated_path(&from_file).exists());
    assert!(size(&from_file) <= cap);
}

#[tokio::test(flavor = "multi_thread")]
async fn under_audit_required_rotation_keeps_working_and_a_failed_rotation_fails_the_call() {
    let (dir, db) = cgm_db("audit-rotate-required");
    let log = dir.path().join("audit.jsonl");
    let args = [
        "--audit-log",
        log.to_str().unwrap(),
        "--audit-required",
        "--audit-max-bytes",
        "1500",
    ];
    let client = serve(&db, &args).await;
    for i in 0..6 {
        let sql = format!("SELECT {i} AS n -- {}", "z".repeat(300));
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    }
    client.close().await.unwrap();
    assert!(rotated_path(&log).exists());

    // A directory where PATH.1 goes: the rename fails (also as root), so the call fails closed.
    std::fs::remove_file(rotated_path(&log)).unwrap();
    std::fs::create_dir(rotated_path(&log)).unwrap();
    let client = serve(&db, &args).await;
    let mut failed = 0;
    for i in 0..6 {
        let sql = format!("SELECT {i} AS n -- {}", "z".repeat(300));
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        if status(&result) == "error" {
            let envelope = assert_failed(&result, "error", "internal_error");
            assert!(
                envelope["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("audit log"),
                "{envelope}"
            );
            assert!(
                !serde_json::to_string(&result)
                    .unwrap()
                    .contains("\"rows\":[[")
            );
            failed += 1;
        }
    }
    client.close().await.unwrap();
    assert!(failed >= 4, "only {failed} of 6 calls failed closed");
    assert!(size(&log) <= 1500);
}
