//! Every error kind an agent can reach from the MCP surface, and protocol abuse the server must
//! survive: each failure carries the registry kind, the seed message where one is fixed, a
//! recovery, `isError: true`, and an envelope that matches the tool's outputSchema.

use std::process::Stdio;
use std::time::Duration;

use crate::support::steps::ENDLESS;
use crate::support::{OutputSchemas, assert_failed, cgm_db, exe, serve};
use duckgate::mcp_client::{envelope_of, text_of};
use duckgate_validate::error::messages;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::test(flavor = "multi_thread")]
async fn writes_are_refused_with_the_seed_message() {
    let (_dir, db) = cgm_db("write");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    for sql in [
        "DELETE FROM cgm_readings",
        "INSERT INTO events VALUES (9, 1, 'x', 1)",
        "DROP TABLE events",
        "UPDATE cgm_readings SET glucose_mg_dl = 0",
    ] {
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        schemas.check("query", &result);
        let envelope = assert_failed(&result, "refused", "policy_blocked");
        assert_eq!(
            envelope["error"]["message"],
            messages::WRITE_REFUSED,
            "{sql}"
        );
        assert_eq!(envelope["error"]["recovery"]["suggested_tool"], "query");
    }
    let count = client
        .call(
            "query",
            json!({ "sql": "SELECT count(*) FROM cgm_readings" }),
        )
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&count)["data"]["rows"],
        json!([[4032]]),
        "nothing was deleted"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn file_readers_and_several_statements_are_refused() {
    let (_dir, db) = cgm_db("refused");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let result = client
        .call(
            "query",
            json!({ "sql": "SELECT * FROM read_text('/etc/passwd')" }),
        )
        .await
        .unwrap();
    schemas.check("query", &result);
    let envelope = assert_failed(&result, "refused", "policy_blocked");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("read_text"),
        "{envelope}"
    );
    assert!(
        !text_of(&result).contains("root:"),
        "file contents leaked: {}",
        text_of(&result)
    );

    let result = client
        .call(
            "explain_query",
            json!({ "sql": "SELECT * FROM read_csv('/etc/passwd')" }),
        )
        .await
        .unwrap();
    schemas.check("explain_query", &result);
    assert_failed(&result, "refused", "policy_blocked");

    let result = client
        .call("query", json!({ "sql": "SELECT 1; SELECT 2" }))
        .await
        .unwrap();
    schemas.check("query", &result);
    let envelope = assert_failed(&result, "refused", "multiple_statements");
    assert_eq!(envelope["error"]["message"], messages::MULTIPLE_STATEMENTS);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn syntax_errors_carry_duckdbs_message_and_unknown_names_carry_fuzzy_matches() {
    let (_dir, db) = cgm_db("names");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let result = client
        .call(
            "query",
            json!({ "sql": "SELEC glucose_mg_dl FROM cgm_readings" }),
        )
        .await
        .unwrap();
    schemas.check("query", &result);
    let envelope = assert_failed(&result, "error", "syntax_error");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("selec"),
        "{envelope}"
    );

    let result = client
        .call("query", json!({ "sql": "SELECT * FROM cgm_reading" }))
        .await
        .unwrap();
    schemas.check("query", &result);
    let envelope = assert_failed(&result, "error", "unknown_name");
    let recovery = &envelope["error"]["recovery"];
    assert_eq!(recovery["fuzzy_matches"][0], "cgm_readings", "{envelope}");
    assert_eq!(recovery["suggested_tool"], "list_tables");
    assert!(
        text_of(&result).contains("Did you mean: cgm_readings"),
        "{}",
        text_of(&result)
    );

    // A column DuckDB's binder cannot find: columns are offered first, and search_schema next.
    let result = client
        .call("query", json!({ "sql": "SELECT glucos FROM cgm_readings" }))
        .await
        .unwrap();
    schemas.check("query", &result);
    let envelope = assert_failed(&result, "error", "unknown_name");
    let recovery = &envelope["error"]["recovery"];
    assert_eq!(
        recovery["fuzzy_matches"][0], "cgm_readings.glucose_mg_dl",
        "{envelope}"
    );
    assert_eq!(recovery["suggested_tool"], "search_schema", "{envelope}");
    assert_eq!(
        recovery["suggested_args"],
        json!({ "query": "glucos" }),
        "{envelope}"
    );

    let result = client
        .call("describe_table", json!({ "table_name": "evnts" }))
        .await
        .unwrap();
    schemas.check("describe_table", &result);
    let envelope = assert_failed(&result, "error", "unknown_name");
    assert_eq!(envelope["error"]["recovery"]["fuzzy_matches"][0], "events");

    let result = client
        .call("list_tables", json!({ "schema": "mian" }))
        .await
        .unwrap();
    schemas.check("list_tables", &result);
    let envelope = assert_failed(&result, "error", "unknown_name");
    assert_eq!(
        envelope["error"]["recovery"]["fuzzy_matches"],
        json!(["main"])
    );

    let result = client
        .call("sample_rows", json!({ "table_name": "basal_delivery" }))
        .await
        .unwrap();
    let envelope = assert_failed(&result, "error", "unknown_name");
    assert_eq!(
        envelope["error"]["recovery"]["fuzzy_matches"][0],
        "basal_deliveries"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_are_invalid_argument_naming_the_range_or_the_names() {
    let (_dir, db) = cgm_db("args");
    let client = serve(&db, &[]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "query",
            json!({ "sql": "SELECT 1", "limit": 0 }),
            "limit must be between 1 and 10000 (got 0).",
        ),
        (
            "query",
            json!({ "sql": "SELECT 1", "limit": 10001 }),
            "limit must be between 1 and 10000 (got 10001).",
        ),
        ("query", json!({ "sql": "   " }), "sql must not be empty"),
        ("query", json!({}), "missing field `sql`"),
        (
            "query",
            json!({ "sql": 42 }),
            "invalid type: integer `42`, expected a string",
        ),
        (
            "query",
            json!({ "sql": "SELECT 1", "limit": "ten" }),
            "invalid type: string \"ten\"",
        ),
        (
            "query",
            json!({ "sql": "SELECT 1", "rows": 5 }),
            "unknown field `rows`",
        ),
        (
            "sample_rows",
            json!({ "table_name": "events", "limit": 101 }),
            "limit must be between 1 and 100 (got 101).",
        ),
        (
            "sample_rows",
            json!({ "table_name": "events", "columns": ["unit"] }),
            "Column 'unit' is not in main.events. Allowed columns: id, reading_id, kind, units.",
        ),
        (
            "sample_rows",
            json!({ "table_name": "events", "columns": [] }),
            "columns must name at least one column",
        ),
        (
            "search_schema",
            json!({ "query": "glucose", "limit": 51 }),
            "limit must be between 1 and 50 (got 51).",
        ),
        (
            "explain_query",
            json!({ "sql": "" }),
            "sql must not be empty",
        ),
        (
            "server_info",
            json!({ "verbose": true }),
            "unknown field `verbose`",
        ),
    ];
    for (tool, args, expected) in cases {
        let result = client.call(tool, args.clone()).await.unwrap();
        schemas.check(tool, &result);
        let envelope = assert_failed(&result, "error", "invalid_argument");
        let message = envelope["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(expected),
            "{tool} {args}: {message:?} lacks {expected:?}"
        );
    }
    let result = client
        .call("query", json!({ "sql": "SELECT 1", "limit": 20000 }))
        .await
        .unwrap();
    let envelope = envelope_of(&result);
    assert_eq!(
        envelope["error"]["recovery"]["suggested_args"],
        json!({ "sql": "SELECT 1", "limit": 10000 })
    );
    let result = client
        .call(
            "sample_rows",
            json!({ "table_name": "events", "columns": ["unit"] }),
        )
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&result)["error"]["recovery"]["fuzzy_matches"][0],
        "units"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn conversion_errors_are_database_errors() {
    let (_dir, db) = cgm_db("dberror");
    let client = serve(&db, &[]).await;
    let result = client
        .call("query", json!({ "sql": "SELECT 'not a number'::INTEGER" }))
        .await
        .unwrap();
    let envelope = assert_failed(&result, "error", "database_error");
    assert!(
        envelope["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not a number"),
        "{envelope}"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_past_the_deadline_is_a_timeout_with_the_configured_seconds() {
    let (_dir, db) = cgm_db("timeout");
    let client = serve(&db, &["--timeout", "2"]).await;
    let sql = ENDLESS;
    let started = std::time::Instant::now();
    let result = client.call("query", json!({ "sql": sql })).await.unwrap();
    let elapsed = started.elapsed();
    let envelope = assert_failed(&result, "error", "timeout");
    assert_eq!(envelope["error"]["message"], messages::timeout(2));
    assert_eq!(
        envelope["error"]["recovery"]["suggested_tool"],
        "explain_query"
    );
    assert_eq!(
        envelope["error"]["recovery"]["suggested_args"],
        json!({ "sql": sql })
    );
    assert!(elapsed < Duration::from_secs(6), "timeout took {elapsed:?}");
    let after = client
        .call("query", json!({ "sql": "SELECT 42" }))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&after)["data"]["rows"],
        json!([[42]]),
        "the server still answers"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_query_over_the_memory_limit_is_a_resource_limit() {
    let (_dir, db) = cgm_db("memory");
    let client = serve(&db, &["--memory-limit", "64MB", "--threads", "1"]).await;
    let sql = "SELECT count(DISTINCT s) FROM (SELECT repeat(range::VARCHAR, 20) AS s FROM range(20000000))";
    let result = client.call("query", json!({ "sql": sql })).await.unwrap();
    let envelope = assert_failed(&result, "error", "resource_limit");
    assert_eq!(
        envelope["error"]["recovery"]["suggested_tool"], "explain_query",
        "{envelope}"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_database_shows_the_operators_hint_and_no_host_path() {
    let dir = crate::support::TempDir::new("missing");
    let db = dir.path().join("not-there.duckdb");
    let hint = "Run 'run-pipeline' to fetch data from the Tandem API before querying.";
    let client = serve(&db, &["--missing-db-hint", hint]).await;
    let schemas = OutputSchemas::fetch(&client).await;
    for (tool, args) in [
        ("list_tables", json!({})),
        ("query", json!({ "sql": "SELECT 1 FROM cgm_readings" })),
    ] {
        let result = client.call(tool, args).await.unwrap();
        schemas.check(tool, &result);
        let envelope = assert_failed(&result, "error", "database_not_found");
        let shown = format!("{}\n{}", envelope["error"]["message"], text_of(&result));
        // No reply carries a host path (the operator's stderr names it at start-up).
        assert!(
            !shown.contains(dir.path().to_str().unwrap()),
            "a host path is shown: {shown}"
        );
        assert!(shown.contains("does not exist yet"), "{shown}");
        assert!(shown.contains(hint), "hint not shown: {shown}");
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_writer_holding_the_lock_gives_database_locked_and_a_retry() {
    let (_dir, db) = cgm_db("locked");
    let client = serve(&db, &[]).await;
    // Read the catalog while the file is free, as an agent's first call would.
    let first = client.call("list_tables", json!({})).await.unwrap();
    assert_eq!(crate::support::status(&first), "success");
    let writer = duckdb::Connection::open(&db).unwrap();
    writer
        .execute_batch("INSERT INTO events VALUES (100, 1, 'bolus', 1.5)")
        .unwrap();
    let result = client
        .call("query", json!({ "sql": "SELECT count(*) FROM events" }))
        .await
        .unwrap();
    let envelope = assert_failed(&result, "error", "database_locked");
    assert_eq!(
        envelope["error"]["recovery"]["suggested_tool"], "query",
        "{envelope}"
    );
    writer.close().map_err(|(_, e)| e).unwrap();
    let after = client
        .call("query", json!({ "sql": "SELECT count(*) FROM events" }))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&after)["data"]["rows"],
        json!([[4]]),
        "{}",
        envelope_of(&after)
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unknown_tool_is_a_protocol_error_and_the_server_stays_up() {
    let (_dir, db) = cgm_db("unknown-tool");
    let client = serve(&db, &[]).await;
    let error = client.call("drop_database", json!({})).await.unwrap_err();
    assert!(
        error.contains("-32602") && error.contains("Unknown tool 'drop_database'"),
        "{error}"
    );
    assert!(error.contains("list_tables"), "{error}");
    let after = client
        .call("query", json!({ "sql": "SELECT 7" }))
        .await
        .unwrap();
    assert_eq!(envelope_of(&after)["data"]["rows"], json!([[7]]));
    client.close().await.unwrap();
}

/// The server over raw pipes: one JSON-RPC line at a time, replies read back by id.
struct RawSession {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    stdout: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
}

impl RawSession {
    async fn start(db: &std::path::Path) -> RawSession {
        let mut child = tokio::process::Command::new(exe())
            .arg("serve")
            .arg("--db")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        RawSession {
            child,
            stdin,
            stdout,
        }
    }

    async fn send(&mut self, line: &str) {
        self.stdin.write_all(line.as_bytes()).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    /// The next message that is a reply to `id` (notifications are skipped).
    async fn reply(&mut self, id: i64) -> Value {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            let line = tokio::time::timeout_at(deadline, self.stdout.next_line())
                .await
                .unwrap_or_else(|_| panic!("no reply to id {id}"))
                .unwrap()
                .unwrap_or_else(|| panic!("server closed stdout before replying to id {id}"));
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    async fn initialize(&mut self, version: &str) -> Value {
        self.send(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": version, "capabilities": {}, "clientInfo": { "name": "raw", "version": "0" } }
        }).to_string()).await;
        let reply = self.reply(1).await;
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        reply
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_lines_wrong_shapes_and_unknown_methods_get_errors_and_the_server_stays_up() {
    let (_dir, db) = cgm_db("raw");
    let mut session = RawSession::start(&db).await;
    let init = session.initialize("2025-11-25").await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");

    // Not JSON at all: there is no id to answer, so it is dropped; the session goes on.
    session.send("this is not json {").await;
    session.send("{\"jsonrpc\":\"2.0\",\"id\":").await;
    // JSON, but not a JSON-RPC message: Invalid Request.
    session
        .send(r#"{"jsonrpc":"2.0","id":5,"method":42}"#)
        .await;
    // An unknown method: Method not found.
    session
        .send(r#"{"jsonrpc":"2.0","id":6,"method":"tables/drop","params":{}}"#)
        .await;
    let reply = session.reply(6).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");
    // Arguments that are not an object.
    session.send(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"query","arguments":"SELECT 1"}}"#).await;
    let reply = session.reply(7).await;
    assert!(reply["error"]["code"].is_i64(), "{reply}");
    // Wrong argument types inside an object: a tool error the agent can read.
    session.send(r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"query","arguments":{"sql":["SELECT 1"]}}}"#).await;
    let reply = session.reply(8).await;
    assert_eq!(reply["result"]["isError"], true, "{reply}");
    assert_eq!(
        reply["result"]["structuredContent"]["error"]["kind"], "invalid_argument",
        "{reply}"
    );
    // Unknown tool.
    session.send(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#).await;
    let reply = session.reply(9).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");

    // And after all that, a real query still works.
    session.send(r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"query","arguments":{"sql":"SELECT 40 + 2 AS answer"}}}"#).await;
    let reply = session.reply(10).await;
    assert_eq!(
        reply["result"]["structuredContent"]["data"]["rows"],
        json!([[42]]),
        "{reply}"
    );
    assert!(session.child.try_wait().unwrap().is_none(), "server exited");

    // Closing stdin ends the server cleanly.
    drop(session.stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), session.child.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn protocol_versions_up_to_2025_11_25_are_negotiated_and_newer_ones_fall_back() {
    let (_dir, db) = cgm_db("versions");
    for (asked, agreed) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut session = RawSession::start(&db).await;
        let init = session.initialize(asked).await;
        assert_eq!(
            init["result"]["protocolVersion"], agreed,
            "asked {asked}: {init}"
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "duckgate");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_on_a_missing_database_reports_its_posture_and_answers_database_not_found_until_it_exists()
 {
    let dir = crate::support::TempDir::new("missing-posture");
    let db = dir.path().join("later.duckdb");
    let hint = "Run the nightly import first.";
    let client = serve(&db, &["--missing-db-hint", hint]).await;
    let schemas = OutputSchemas::fetch(&client).await;

    // The workers confine without the file: server_info has their posture, not an error.
    let info = client.call("server_info", json!({})).await.unwrap();
    schemas.check("server_info", &info);
    let envelope = envelope_of(&info);
    assert_eq!(envelope["status"], "success", "{envelope}");
    assert_eq!(envelope["data"]["posture_error"], Value::Null, "{envelope}");
    let properties = envelope["data"]["posture"]["properties"]
        .as_array()
        .unwrap_or_else(|| panic!("no posture properties: {envelope}"));
    assert!(!properties.is_empty(), "{envelope}");
    assert!(
        properties.iter().all(|p| p["enforced"] == true),
        "{envelope}"
    );
    assert!(
        !text_of(&info).contains("posture unavailable"),
        "{}",
        text_of(&info)
    );

    let result = client
        .call("query", json!({ "sql": "SELECT count(*) FROM t" }))
        .await
        .unwrap();
    schemas.check("query", &result);
    let envelope = assert_failed(&result, "error", "database_not_found");
    assert_eq!(envelope["error"]["recovery"]["hint"], hint, "{envelope}");

    // Once the file is there, the next call reads it: no worker confined before it existed
    // (and so without a grant for it) is handed the call.
    crate::support::make_db(&db, "CREATE TABLE t AS SELECT * FROM range(3) r(i);");
    let result = client
        .call("query", json!({ "sql": "SELECT count(*) AS n FROM t" }))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&result)["data"]["rows"],
        json!([[3]]),
        "{}",
        envelope_of(&result)
    );
    client.close().await.unwrap();
}
