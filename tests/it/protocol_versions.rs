//! MCP protocol revisions over the real binary: 2026-07-28 (`server/discover`, every request
//! carrying its version and capabilities in `_meta`, cache hints) beside 2025-11-25 and the older
//! revisions that start with `initialize`. Both through rmcp's client pinned to one revision and
//! through raw JSON-RPC lines, so the exact wire messages are checked too.

use std::time::Duration;

use crate::raw_support::{RawSession, request_meta};
use crate::support::steps::{ENDLESS, busy_worker, count_cgm_readings, still_answers};
use crate::support::{OutputSchemas, cgm_db, exe, is_dead, serve_pinned, status, wait_until};
use duckgate::mcp::tools::ToolName;
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use rmcp::model::ProtocolVersion;
use serde_json::{Value, json};

const SUPPORTED: [&str; 5] = [
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// A JSON-RPC reply refusing a protocol revision the server lacks: code -32022, with the
/// revisions it supports.
fn assert_unsupported_revision(reply: &Value) {
    assert_eq!(reply["error"]["code"], -32022, "{reply}");
    assert_eq!(
        reply["error"]["data"]["supported"],
        json!(SUPPORTED),
        "{reply}"
    );
}

fn tool_order() -> Vec<&'static str> {
    ToolName::ALL.iter().map(|tool| tool.as_str()).collect()
}

/// list_tables and query through `client`, each result checked against its outputSchema; the
/// tools come in `ToolName::ALL` order, twice alike.
async fn lists_and_queries(client: &McpClient) {
    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, tool_order());
    let again: Vec<String> = client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(again, names);
    let schemas = OutputSchemas::fetch(client).await;

    let tables = client.call("list_tables", Value::Null).await.unwrap();
    schemas.check("list_tables", &tables);
    assert_eq!(status(&tables), "success", "{}", envelope_of(&tables));
    assert!(
        text_of(&tables).contains("cgm_readings"),
        "{}",
        text_of(&tables)
    );

    let result = count_cgm_readings(client, &schemas).await;
    assert_eq!(result.is_error, Some(false));

    let refused = client
        .call("query", json!({ "sql": "DELETE FROM cgm_readings" }))
        .await
        .unwrap();
    schemas.check("query", &refused);
    assert_eq!(status(&refused), "refused", "{}", envelope_of(&refused));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_pinned_to_2026_07_28_discovers_and_queries() {
    let (_dir, db) = cgm_db("proto-2026");
    let client = serve_pinned(&db, &[], ProtocolVersion::V_2026_07_28).await;
    assert_eq!(
        client.protocol_version().map(|v| v.to_string()).as_deref(),
        Some("2026-07-28")
    );
    let info = client.server_info().expect("discover result");
    let implementation = info.server_info.as_ref().expect("serverInfo in _meta");
    assert_eq!(implementation.name, "duckgate");
    assert!(
        info.instructions
            .as_deref()
            .is_some_and(|text| text.contains("list_tables"))
    );
    assert!(info.capabilities.tools.is_some() && info.capabilities.resources.is_some());
    lists_and_queries(&client).await;
    let snapshot = client.read_resource("schema://snapshot").await.unwrap();
    assert_eq!(snapshot.contents.len(), 1);
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn on_2026_07_28_a_long_query_reports_progress_and_a_cancel_kills_its_worker() {
    let (_dir, db) = cgm_db("proto-2026-cancel");
    let client = serve_pinned(&db, &["--timeout", "120"], ProtocolVersion::V_2026_07_28).await;
    let server = client.server_pid().expect("server pid");
    let call = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .unwrap();
    let token = call.progress_token();
    assert!(
        wait_until(Duration::from_secs(20), || !client
            .progress_for(&token)
            .is_empty())
        .await
        .is_some(),
        "no progress notification within 20 s"
    );
    let worker = busy_worker(server).await;
    call.cancel("test cancels the query").await.unwrap();
    assert!(
        wait_until(Duration::from_secs(5), || is_dead(worker))
            .await
            .is_some(),
        "worker {worker} still alive 5 s after the cancel"
    );
    still_answers(&client).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_pinned_to_2025_11_25_initializes_and_queries() {
    let (_dir, db) = cgm_db("proto-2025");
    let client = serve_pinned(&db, &[], ProtocolVersion::V_2025_11_25).await;
    assert_eq!(
        client.protocol_version().map(|v| v.to_string()).as_deref(),
        Some("2025-11-25")
    );
    lists_and_queries(&client).await;
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_older_revisions_are_still_negotiated_over_initialize() {
    let (_dir, db) = cgm_db("proto-old");
    for version in [
        ProtocolVersion::V_2024_11_05,
        ProtocolVersion::V_2025_03_26,
        ProtocolVersion::V_2025_06_18,
    ] {
        let client = serve_pinned(&db, &[], version.clone()).await;
        assert_eq!(client.protocol_version(), Some(version.clone()));
        let result = client
            .call("query", json!({ "sql": "SELECT 1 AS one" }))
            .await
            .unwrap();
        assert_eq!(
            status(&result),
            "success",
            "{version}: {}",
            envelope_of(&result)
        );
        client.close().await.unwrap();
    }
}

/// Panic unless `structured` validates against `tool`'s outputSchema from a raw tools/list reply.
fn check_against_raw_schema(tools: &Value, tool: &str, structured: &Value) {
    let schema = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .map(|t| t["outputSchema"].clone())
        .unwrap_or_else(|| panic!("no tool {tool}"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(structured)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{tool}: {errors:?}\n{structured}");
}

#[tokio::test(flavor = "multi_thread")]
async fn on_the_wire_2026_07_28_discovers_then_answers_self_contained_requests() {
    let (_dir, db) = cgm_db("proto-wire");
    let meta = request_meta("2026-07-28");
    let mut session = RawSession::start(&exe(), &db, &[]);

    let discover = session.discover(1, "2026-07-28").await;
    let result = &discover["result"];
    assert_eq!(result["supportedVersions"], json!(SUPPORTED), "{discover}");
    assert_eq!(result["resultType"], "complete", "{discover}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "duckgate",
        "{discover}"
    );
    assert!(result["capabilities"]["tools"].is_object(), "{discover}");
    assert!(
        result["capabilities"]["resources"].is_object(),
        "{discover}"
    );
    assert!(
        result["ttlMs"].is_u64() && result["cacheScope"].is_string(),
        "{discover}"
    );

    // Cache hints on every list, and the tools in a fixed order.
    let tools = session
        .request(2, "tools/list", json!({ "_meta": meta }))
        .await;
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, tool_order());
    assert_eq!(tools["result"]["resultType"], "complete");
    assert!(
        tools["result"]["ttlMs"].is_u64(),
        "{}",
        tools["result"]["ttlMs"]
    );
    assert!(tools["result"]["cacheScope"].is_string());
    let again = session
        .request(3, "tools/list", json!({ "_meta": meta }))
        .await;
    assert_eq!(again["result"]["tools"], tools["result"]["tools"]);

    let call = session
        .request(
            4,
            "tools/call",
            json!({ "_meta": meta, "name": "query",
                    "arguments": { "sql": "SELECT count(*) AS n FROM events" } }),
        )
        .await;
    let structured = &call["result"]["structuredContent"];
    assert_eq!(structured["status"], "success", "{call}");
    assert_eq!(structured["data"]["rows"], json!([[3]]), "{call}");
    assert_eq!(call["result"]["resultType"], "complete", "{call}");
    assert_eq!(call["result"]["isError"], false, "{call}");
    check_against_raw_schema(&tools, "query", structured);

    let list = session
        .request(
            5,
            "tools/call",
            json!({ "_meta": meta, "name": "list_tables", "arguments": {} }),
        )
        .await;
    check_against_raw_schema(&tools, "list_tables", &list["result"]["structuredContent"]);

    // A 2026-07-28 request without its _meta, or naming a revision the server lacks, is refused
    // and the session goes on.
    let bare = session
        .request(
            6,
            "tools/call",
            json!({ "name": "query", "arguments": { "sql": "SELECT 1" } }),
        )
        .await;
    assert_eq!(bare["error"]["code"], -32602, "{bare}");
    let future = session
        .request(
            7,
            "tools/call",
            json!({ "_meta": request_meta("2099-01-01"), "name": "query",
                    "arguments": { "sql": "SELECT 1" } }),
        )
        .await;
    assert_unsupported_revision(&future);
    let resources = session
        .request(8, "resources/list", json!({ "_meta": meta }))
        .await;
    assert_eq!(
        resources["result"]["resources"][0]["uri"], "schema://snapshot",
        "{resources}"
    );
    assert!(resources["result"]["ttlMs"].is_u64(), "{resources}");
    session.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_the_wire_a_2026_07_28_client_may_skip_discover() {
    let (_dir, db) = cgm_db("proto-direct");
    let mut session = RawSession::start(&exe(), &db, &[]);
    // The first request names an unknown revision: refused, and nothing is settled yet.
    let future = session.discover(1, "2099-01-01").await;
    assert_unsupported_revision(&future);
    let call = session
        .request(
            2,
            "tools/call",
            json!({ "_meta": request_meta("2026-07-28"), "name": "query",
                    "arguments": { "sql": "SELECT 42 AS answer" } }),
        )
        .await;
    assert_eq!(
        call["result"]["structuredContent"]["status"], "success",
        "{call}"
    );
    assert_eq!(
        call["result"]["structuredContent"]["data"]["rows"],
        json!([[42]])
    );
    session.finish().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn on_the_wire_initialize_keeps_the_2025_11_25_shape_and_offers_it_for_newer_asks() {
    let (_dir, db) = cgm_db("proto-init");
    for (asked, answered) in [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2024-11-05", "2024-11-05"),
        // 2026-07-28 has no initialize; an unknown revision gets the newest the server has.
        ("2026-07-28", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),
    ] {
        let mut session = RawSession::start(&exe(), &db, &[]);
        session
            .send(
                &json!({
                    "jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": { "protocolVersion": asked, "capabilities": {},
                                "clientInfo": { "name": "raw", "version": "0" } }
                })
                .to_string(),
            )
            .await;
        let init = session.reply(json!(1)).await;
        assert_eq!(
            init["result"]["protocolVersion"], answered,
            "{asked}: {init}"
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "duckgate", "{init}");
        session
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        let tools = session.request(2, "tools/list", json!({})).await;
        let names: Vec<&str> = tools["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{tools}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, tool_order(), "{asked}");
        // The session's shape predates 2026-07-28: no resultType, no cache hints required.
        assert!(
            tools["result"].get("resultType").is_none(),
            "{asked}: {tools}"
        );
        session
            .call(3, "query", json!({ "sql": "SELECT 1 AS one" }))
            .await;
        let call = session.reply(json!(3)).await;
        assert_eq!(
            call["result"]["structuredContent"]["status"], "success",
            "{call}"
        );
        assert!(
            call["result"].get("resultType").is_none(),
            "{asked}: {call}"
        );
        check_against_raw_schema(&tools, "query", &call["result"]["structuredContent"]);
        session.finish().await;
    }
}
