//! Every string a client sends has a size cap, checked before any work, and every line gets an
//! answer: through the real binary over stdio, on a real DuckDB file.

use std::time::Instant;

use crate::raw_support::RawSession;
use crate::support::{assert_failed, cgm_db, exe, serve, status};
use duckgate::mcp::tools::{MAX_NAME_BYTES, MAX_SEARCH_BYTES, MAX_URI_BYTES};
use duckgate::mcp_client::{McpClient, envelope_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// 15 MiB: under rmcp's 16 MiB line cap, so the server reads and must refuse it itself.
const HUGE: usize = 15 << 20;

async fn timed_call(client: &McpClient, tool: &str, args: Value) -> (CallToolResult, f64) {
    let started = Instant::now();
    let result = client.call(tool, args).await.unwrap();
    (result, started.elapsed().as_secs_f64() * 1000.0)
}

#[tokio::test(flavor = "multi_thread")]
async fn fifteen_megabyte_arguments_are_refused_naming_the_cap_while_a_query_is_answered() {
    let (_dir, db) = cgm_db("argument-caps");
    let client = serve(&db, &[]).await;
    let huge = "x".repeat(HUGE);
    let search = || timed_call(&client, "search_schema", json!({ "query": huge }));
    let describe = timed_call(&client, "describe_table", json!({ "table_name": huge }));
    let uri = format!("schema://table/{huge}");
    let resource = async {
        let started = Instant::now();
        let read = client.read_resource(&uri).await;
        (read, started.elapsed().as_secs_f64() * 1000.0)
    };
    let query = timed_call(&client, "query", json!({ "sql": "SELECT 1 AS one" }));
    let (searches, described, (read, read_ms), (answered, query_ms)) = tokio::join!(
        async { tokio::join!(search(), search(), search(), search()) },
        describe,
        resource,
        query
    );
    let (s1, s2, s3, s4) = searches;
    for (result, ms) in [s1, s2, s3, s4] {
        eprintln!("search_schema with a 15 MiB query: refused in {ms:.1} ms");
        let envelope = assert_failed(&result, "error", "invalid_argument");
        assert_eq!(
            envelope["error"]["message"],
            format!("query must be at most {MAX_SEARCH_BYTES} bytes; got {HUGE}."),
        );
        assert!(
            envelope["error"]["recovery"]["fuzzy_matches"]
                .as_array()
                .is_some_and(Vec::is_empty),
            "{envelope}"
        );
    }
    let (described, ms) = described;
    eprintln!("describe_table with a 15 MiB name: refused in {ms:.1} ms");
    let envelope = assert_failed(&described, "error", "invalid_argument");
    assert_eq!(
        envelope["error"]["message"],
        format!("table_name must be at most {MAX_NAME_BYTES} bytes; got {HUGE}."),
    );
    eprintln!("resources/read with a 15 MiB name: refused in {read_ms:.1} ms");
    let error = read.unwrap_err();
    assert!(
        error.contains("-32602"),
        "{}",
        &error[..error.len().min(500)]
    );
    assert!(
        error.contains(&format!(
            "uri must be at most {MAX_URI_BYTES} bytes; got {}.",
            uri.len()
        )),
        "{}",
        &error[..error.len().min(500)]
    );
    assert!(error.contains("invalid_argument"), "{error}");
    assert!(error.len() < 1000, "the error echoes the URI");
    eprintln!("SELECT 1 sent meanwhile: answered in {query_ms:.1} ms");
    assert_eq!(status(&answered), "success", "{}", envelope_of(&answered));
    assert_eq!(envelope_of(&answered)["data"]["rows"], json!([[1]]));

    // Positive control: the same calls with names at their caps are looked up, not refused.
    let at_cap = "x".repeat(MAX_NAME_BYTES);
    let missing = client
        .call("describe_table", json!({ "table_name": at_cap }))
        .await
        .unwrap();
    assert_failed(&missing, "error", "unknown_name");
    let found = client
        .call("search_schema", json!({ "query": "glucose" }))
        .await
        .unwrap();
    assert_eq!(status(&found), "success", "{}", envelope_of(&found));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_past_the_validators_cap_and_long_names_anywhere_are_refused_before_any_work() {
    let (_dir, db) = cgm_db("argument-caps-sql");
    let client = serve(&db, &[]).await;
    let sql_cap = duckgate::mcp::tools::max_sql_bytes();
    let long_sql = format!("SELECT 1 -- {}", "x".repeat(sql_cap));
    for tool in ["query", "explain_query"] {
        let result = client.call(tool, json!({ "sql": long_sql })).await.unwrap();
        let envelope = assert_failed(&result, "error", "invalid_argument");
        assert_eq!(
            envelope["error"]["message"],
            format!(
                "sql must be at most {sql_cap} bytes; got {}.",
                long_sql.len()
            ),
        );
    }
    let long = "c".repeat(MAX_NAME_BYTES + 1);
    for (tool, args, message) in [
        (
            "sample_rows",
            json!({ "table_name": "events", "columns": ["id", long] }),
            format!(
                "columns[1] must be at most {MAX_NAME_BYTES} bytes; got {}.",
                long.len()
            ),
        ),
        (
            "list_tables",
            json!({ "schema": long }),
            format!(
                "schema must be at most {MAX_NAME_BYTES} bytes; got {}.",
                long.len()
            ),
        ),
        (
            "query",
            json!({ "sql": "SELECT 1", "limit": long }),
            format!(
                "limit must be at most {MAX_NAME_BYTES} bytes; got {}.",
                long.len()
            ),
        ),
    ] {
        let result = client.call(tool, args).await.unwrap();
        let envelope = assert_failed(&result, "error", "invalid_argument");
        assert_eq!(envelope["error"]["message"], message, "{tool}");
    }
    // An unknown tool's huge name is not echoed back.
    let error = client.call(&"t".repeat(HUGE), json!({})).await.unwrap_err();
    assert!(
        error.contains("-32602"),
        "{}",
        &error[..error.len().min(500)]
    );
    assert!(error.len() < 1000, "the error echoes the tool name");
    assert!(
        error.contains(&format!("at most {MAX_NAME_BYTES} bytes; got {HUGE}")),
        "{error}"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unparsable_line_gets_a_json_rpc_parse_error_with_a_null_id() {
    let (_dir, db) = cgm_db("parse-error");
    let mut session = RawSession::start(&exe(), &db, &[]);
    let init = session.initialize().await;
    assert_eq!(init["result"]["serverInfo"]["name"], "duckgate");

    for line in ["this is not json {", r#"{"jsonrpc":"2.0","id":"#] {
        session.send(line).await;
        let reply = session.next_message().await;
        assert_eq!(reply["jsonrpc"], "2.0", "{line}: {reply}");
        assert_eq!(reply["error"]["code"], -32700, "{line}: {reply}");
        assert!(
            reply.get("id").is_some_and(Value::is_null),
            "{line}: id must be present and null: {reply}"
        );
    }
    // Not UTF-8 at all.
    session
        .send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"\xff\":1}")
        .await;
    let reply = session.next_message().await;
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    // JSON, but not a request: Invalid Request, answered to its id.
    session
        .send(r#"{"jsonrpc":"2.0","id":5,"method":42}"#)
        .await;
    let reply = session.reply(json!(5)).await;
    assert_eq!(reply["error"]["code"], -32600, "{reply}");

    // The session goes on.
    session
        .call(6, "query", json!({ "sql": "SELECT 40 + 2 AS answer" }))
        .await;
    let reply = session.reply(json!(6)).await;
    assert_eq!(
        reply["result"]["structuredContent"]["data"]["rows"],
        json!([[42]]),
        "{reply}"
    );
    session.finish().await;
}
