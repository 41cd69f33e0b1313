//! Hidden means hidden through views, types and counters. A view stored in the database whose
//! column reads a hidden column hides that column with it (its name, and its type: an ENUM's
//! labels are the hidden column's values), everywhere: `DESCRIBE`, `SUMMARIZE`, whole rows,
//! every tool and resource; the view's other columns stay answerable. Counters of the process's
//! statements, which count the worker's own work on hidden objects, are refused under rules.
//! And two databases whose visible data are the same and whose hidden data all differ get the
//! same reply, byte for byte, to every probe of every tool and resource. Over real MCP stdio,
//! against the real binary and real DuckDB files; where a check is the worker's, with the
//! layers above it switched off.

use crate::support::steps::{PRIVATE_RULES, private_db};
use crate::support::{FORBIDDEN, error_kind, exe, status, strip_durations};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// A table with a hidden ENUM column, a view of it, a view whose column folds the hidden one
/// away while keeping its type, and a `SELECT *` view over a table with a hidden column.
const VIEWS: &str = "
CREATE TABLE device_meta (device_id INTEGER, tier ENUM('PLANTED_GOLD', 'PLANTED_PLATINUM'), since DATE);
INSERT INTO device_meta VALUES (1, 'PLANTED_GOLD', DATE '2026-01-05'), (2, 'PLANTED_PLATINUM', DATE '2026-02-07');
CREATE VIEW device_tiers AS SELECT device_id, tier, since FROM device_meta;
CREATE VIEW folded_tiers AS SELECT device_id, CASE WHEN false THEN tier END AS folded FROM device_meta;
CREATE VIEW all_devices AS SELECT * FROM devices;
";

/// [`PRIVATE_RULES`] and the ENUM column.
fn rules() -> Vec<&'static str> {
    let mut rules = PRIVATE_RULES.to_vec();
    rules.extend(["--hide-column", "device_meta.tier"]);
    rules
}

/// `duckgate serve` under [`rules`], with `bypass` switching layers off (empty: none).
async fn server(db: &std::path::Path, extra: &[&str], bypass: &str) -> McpClient {
    let mut command = tokio::process::Command::new(exe());
    command
        .args(["serve", "--db"])
        .arg(db)
        .args(rules())
        .args(extra);
    if !bypass.is_empty() {
        command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
    }
    McpClient::spawn_command(command, std::process::Stdio::null())
        .await
        .expect("duckgate serve initialises")
}

/// `text` with every whole-word `word` (not part of a longer name) replaced by `by`.
fn replace_word(text: &str, word: &str, by: &str) -> String {
    let part_of_name = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(word) {
        out.push_str(&rest[..at]);
        let after = rest[at + word.len()..].chars().next();
        if part_of_name(out.chars().last()) || part_of_name(after) {
            out.push_str(word);
        } else {
            out.push_str(by);
        }
        rest = &rest[at + word.len()..];
    }
    out.push_str(rest);
    out
}

/// The whole reply, lower case, must hold nothing hidden: no hidden name, no planted value or
/// ENUM label, and neither hidden view column's name as a word of its own.
fn assert_nothing_hidden(what: &str, reply: &str) {
    let reply = reply.to_lowercase();
    for word in FORBIDDEN {
        assert!(!reply.contains(word), "{what} leaks {word:?}: {reply}");
    }
    for word in ["tier", "folded"] {
        assert_eq!(
            replace_word(&reply, word, "<hidden>"),
            reply,
            "{what} leaks {word:?}"
        );
    }
}

async fn call(client: &McpClient, tool: &str, args: Value) -> CallToolResult {
    let result = client.call(tool, args.clone()).await.unwrap();
    assert_nothing_hidden(
        &format!("{tool} {args}"),
        &serde_json::to_string(&result).unwrap(),
    );
    result
}

/// The first value of each row of a `query` reply.
fn first_values(result: &CallToolResult) -> Vec<Value> {
    envelope_of(result)["data"]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows: {}", envelope_of(result)))
        .iter()
        .map(|row| row[0].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_view_column_over_a_hidden_enum_is_hidden_in_every_query_and_its_neighbours_answer() {
    let f = private_db("views", VIEWS);
    // With every layer on, and with the worker's shadow catalog and plan check standing alone.
    for bypass in ["", "validator,worker_walk"] {
        let client = server(&f.db, &[], bypass).await;
        let described = call(&client, "query", json!({ "sql": "DESCRIBE device_tiers" })).await;
        assert_eq!(
            first_values(&described),
            [json!("device_id"), json!("since")],
            "{bypass}"
        );
        let described = call(&client, "query", json!({ "sql": "DESCRIBE all_devices" })).await;
        assert_eq!(
            first_values(&described),
            [json!("device_id"), json!("model")],
            "{bypass}"
        );
        let described = call(&client, "query", json!({ "sql": "DESCRIBE folded_tiers" })).await;
        assert_eq!(first_values(&described), [json!("device_id")], "{bypass}");
        for sql in [
            "SUMMARIZE device_tiers",
            "SELECT * FROM device_tiers",
            "SELECT t FROM device_tiers t",
            "SELECT to_json(t) FROM folded_tiers t",
            "SELECT * FROM all_devices",
            "SELECT device_id, since FROM device_tiers ORDER BY device_id",
            "DESCRIBE SELECT * FROM device_tiers",
        ] {
            let result = call(&client, "query", json!({ "sql": sql })).await;
            assert_eq!(
                status(&result),
                "success",
                "{bypass} {sql}: {}",
                envelope_of(&result)
            );
        }
        let visible = call(
            &client,
            "query",
            json!({ "sql": "SELECT device_id, since FROM device_tiers ORDER BY device_id" }),
        )
        .await;
        assert_eq!(
            envelope_of(&visible)["data"]["rows"],
            json!([[1, "2026-01-05"], [2, "2026-02-07"]])
        );
        // The hidden view columns are names that do not exist, as a made-up one is.
        for (sql, made_up) in [
            (
                "SELECT tier FROM device_tiers",
                "SELECT tiez FROM device_tiers",
            ),
            (
                "SELECT folded FROM folded_tiers",
                "SELECT foldez FROM folded_tiers",
            ),
            (
                "SELECT serial_number FROM all_devices",
                "SELECT serial_numbez FROM all_devices",
            ),
            (
                "SELECT typeof(tier) FROM device_tiers",
                "SELECT typeof(tiez) FROM device_tiers",
            ),
        ] {
            let a = client.call("query", json!({ "sql": sql })).await.unwrap();
            let b = client
                .call("query", json!({ "sql": made_up }))
                .await
                .unwrap();
            assert_eq!(
                error_kind(&a),
                "unknown_name",
                "{bypass} {sql}: {}",
                envelope_of(&a)
            );
            // "Did you mean" draws on the visible names by the written spelling (`tier` is
            // close to `device_tiers`, `tiez` is not), so it is compared apart: it must name
            // nothing hidden.
            let normal = |r: &CallToolResult, word: &str| {
                let mut envelope = envelope_of(r).clone();
                strip_durations(&mut envelope);
                let fuzzy = envelope["error"]["recovery"]["fuzzy_matches"].take();
                assert_nothing_hidden(&format!("{bypass} {sql}"), &fuzzy.to_string());
                let text: Vec<&str> = text_of(r)
                    .lines()
                    .filter(|line| !line.starts_with("Did you mean"))
                    .collect();
                replace_word(&format!("{envelope}{}", text.join("\n")), word, "NAME")
            };
            let word = |sql: &str| {
                sql.split_whitespace()
                    .nth(1)
                    .unwrap()
                    .replace("typeof(", "")
                    .replace(')', "")
            };
            assert_eq!(
                normal(&a, &word(sql)),
                normal(&b, &word(made_up)),
                "{bypass} {sql}"
            );
        }
        client.close().await.unwrap();
    }
}

/// The parent's catalog, which every tool and resource reads, holds the same visible columns.
#[tokio::test(flavor = "multi_thread")]
async fn a_view_column_over_a_hidden_enum_is_hidden_from_every_tool_and_resource() {
    let f = private_db("view-tools", VIEWS);
    let client = server(&f.db, &[], "").await;
    let described = call(
        &client,
        "describe_table",
        json!({ "table_name": "device_tiers" }),
    )
    .await;
    assert_eq!(status(&described), "success", "{}", envelope_of(&described));
    assert!(
        text_of(&described).contains("since"),
        "{}",
        text_of(&described)
    );
    let described = call(
        &client,
        "describe_table",
        json!({ "table_name": "all_devices" }),
    )
    .await;
    assert!(
        text_of(&described).contains("model"),
        "{}",
        text_of(&described)
    );
    // The search echoes what it was asked; what it found and suggests must hold nothing hidden.
    for word in ["tier", "PLANTED", "GOLD", "ENUM", "folded", "serial"] {
        let found = client
            .call("search_schema", json!({ "query": word }))
            .await
            .unwrap();
        let data = &envelope_of(&found)["data"];
        let shown = format!("{}{}", data["matches"], data["did_you_mean"]);
        assert_nothing_hidden(&format!("search_schema {word}"), &shown);
    }
    let listed = call(&client, "list_tables", json!({})).await;
    assert!(
        text_of(&listed).contains("device_tiers"),
        "{}",
        text_of(&listed)
    );
    call(&client, "list_relationships", json!({})).await;
    call(
        &client,
        "sample_rows",
        json!({ "table_name": "device_tiers" }),
    )
    .await;
    for resource in client.list_resources().await.unwrap() {
        let read = client.read_resource(&resource.uri).await.unwrap();
        assert_nothing_hidden(&resource.uri, &serde_json::to_string(&read).unwrap());
    }
    for name in ["device_tiers", "folded_tiers", "all_devices"] {
        let uri = format!("schema://table/{name}");
        let read = client.read_resource(&uri).await.unwrap();
        assert_nothing_hidden(&uri, &serde_json::to_string(&read).unwrap());
    }
    client.close().await.unwrap();
}

/// `current_query_id()`, `current_transaction_id()` and `txid_current()` count every statement
/// the worker ran, its own work on hidden objects included: refused under privacy rules by each
/// layer alone, answered without rules.
#[tokio::test(flavor = "multi_thread")]
async fn statement_counters_are_refused_under_privacy_rules_by_every_layer() {
    let f = private_db("counters", VIEWS);
    let counters = [
        "SELECT current_query_id() AS q",
        "SELECT current_transaction_id() AS t",
        "SELECT txid_current() AS t",
        "SELECT x FROM (SELECT txid_current() + 0 AS x)",
    ];
    for bypass in ["", "validator", "validator,worker_walk"] {
        let client = server(&f.db, &[], bypass).await;
        for sql in counters {
            let result = call(&client, "query", json!({ "sql": sql })).await;
            assert_eq!(
                status(&result),
                "refused",
                "{bypass} {sql}: {}",
                envelope_of(&result)
            );
            assert_eq!(error_kind(&result), "policy_blocked", "{bypass} {sql}");
        }
        client.close().await.unwrap();
    }
    let open = crate::support::serve(&f.db, &[]).await;
    for sql in counters {
        let result = open.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(
            status(&result),
            "success",
            "{sql}: {}",
            envelope_of(&result)
        );
    }
    open.close().await.unwrap();
}

/// Two databases whose visible data are the same and whose hidden data all differ: hidden
/// values, hidden rows, ENUM labels, and a hidden column with a default (one more statement for
/// the worker's shadow to count) in the second only.
const HIDDEN_A: &str = "
CREATE TABLE device_meta (device_id INTEGER, tier ENUM('PLANTED_GOLD', 'PLANTED_PLATINUM'), since DATE);
INSERT INTO device_meta VALUES (1, 'PLANTED_GOLD', DATE '2026-01-05'), (2, 'PLANTED_PLATINUM', DATE '2026-02-07');
CREATE VIEW device_tiers AS SELECT device_id, tier, since FROM device_meta;
CREATE VIEW folded_tiers AS SELECT device_id, CASE WHEN false THEN tier END AS folded FROM device_meta;
CREATE VIEW all_devices AS SELECT * FROM devices;
";
/// [`crate::support::PRIVATE_SCHEMA`] with every hidden value changed (serial numbers, notes,
/// payloads), the visible ones kept.
fn private_schema_b() -> String {
    crate::support::PRIVATE_SCHEMA
        .replace("SN-PLANTED-0001", "SN-PLANTED-OTHER-771")
        .replace("SN-PLANTED-0002", "SN-PLANTED-OTHER-9")
        .replace(
            "PLANTED note one",
            "PLANTED a much longer note, another one",
        )
        .replace("PLANTED note two", "PLANTED x")
        .replace("PLANTED payload", "PLANTED other payload")
}

const HIDDEN_B: &str = "
CREATE TABLE device_meta (device_id INTEGER, tier ENUM('PLANTED_BRONZE', 'PLANTED_SILVER', 'PLANTED_IRON'), since DATE,
                          serial_number VARCHAR DEFAULT 'PLANTED default');
INSERT INTO device_meta VALUES (1, 'PLANTED_IRON', DATE '2026-01-05', 'x'), (2, 'PLANTED_BRONZE', DATE '2026-02-07', 'y');
CREATE VIEW device_tiers AS SELECT device_id, tier, since FROM device_meta;
CREATE VIEW folded_tiers AS SELECT device_id, CASE WHEN false THEN tier END AS folded FROM device_meta;
CREATE VIEW all_devices AS SELECT * FROM devices;
INSERT INTO raw_payloads SELECT i, 1, 'PLANTED row ' || i FROM range(100, 140) t(i);
";

/// Every probe: each tool with arguments that touch the hidden objects' neighbours, and the
/// queries an agent would try on counters, types, sizes and plans.
fn probes() -> Vec<(&'static str, Value)> {
    let mut probes: Vec<(&'static str, Value)> = [
        "SELECT current_query_id() AS q",
        "SELECT txid_current() AS t",
        "SELECT current_transaction_id() AS t",
        "SELECT current_connection_id() AS c",
        "SELECT * FROM devices ORDER BY device_id",
        "SELECT * FROM readings ORDER BY id",
        "SELECT d FROM devices d ORDER BY device_id",
        "DESCRIBE device_tiers",
        "DESCRIBE folded_tiers",
        "DESCRIBE all_devices",
        "DESCRIBE devices",
        "SUMMARIZE device_tiers",
        "SUMMARIZE readings",
        "SELECT * FROM device_tiers ORDER BY device_id",
        "SELECT t FROM device_tiers t ORDER BY device_id",
        "SELECT count(*) FROM devices",
        "SELECT tier FROM device_tiers",
        "SELECT serial_number FROM devices",
        "SELECT * FROM raw_payloads",
        "SELECT max(device_id) FROM device_meta",
        "SELECT random() < 2 AS r",
        "SELECT current_database() AS d, current_schema() AS s",
        // PIVOT without IN runs a query for the values first: over a visible column it is
        // answered, over a hidden one (whose values differ between the two databases) refused
        // alike, the value query included.
        "PIVOT devices ON model USING count(*)",
        "PIVOT readings ON device_id USING sum(glucose) GROUP BY id ORDER BY id",
        "PIVOT device_tiers ON tier USING count(*)",
        "PIVOT device_tiers ON since USING count(*) GROUP BY device_id ORDER BY device_id",
        "PIVOT readings ON secret_note USING count(*)",
        "PIVOT devices ON serial_number USING count(*)",
        "PIVOT device_meta ON since USING count(*)",
        "PIVOT (PIVOT readings ON device_id USING sum(glucose) GROUP BY id) ON id USING count(*)",
        // Errors in DuckDB's own words about the query (a GROUP BY, a cast of visible data, a
        // name two relations share), which the agent reads as DuckDB wrote them.
        "SELECT model, count(*) FROM devices",
        "SELECT CAST(model AS INTEGER) FROM devices",
        "SELECT device_id FROM device_tiers, devices",
        "SELECT device_id FROM device_tiers JOIN device_meta USING (device_id)",
    ]
    .into_iter()
    .flat_map(|sql| {
        [
            ("query", json!({ "sql": sql })),
            ("explain_query", json!({ "sql": sql })),
        ]
    })
    .collect();
    probes.extend([
        ("list_tables", json!({})),
        ("list_relationships", json!({})),
        ("describe_table", json!({ "table_name": "device_tiers" })),
        ("describe_table", json!({ "table_name": "devices" })),
        ("describe_table", json!({ "table_name": "readings" })),
        ("describe_table", json!({ "table_name": "device_meta" })),
        ("search_schema", json!({ "query": "tier" })),
        ("search_schema", json!({ "query": "note" })),
        ("search_schema", json!({ "query": "device" })),
        ("sample_rows", json!({ "table_name": "device_tiers" })),
        ("sample_rows", json!({ "table_name": "devices" })),
        (
            "plot",
            json!({ "sql": "SELECT id AS x, glucose AS y FROM readings", "kind": "scatter" }),
        ),
    ]);
    probes
}

/// A reply as bytes, with durations taken out.
fn reply_bytes(result: &CallToolResult) -> String {
    let mut value = serde_json::to_value(result).unwrap();
    strip_durations(&mut value);
    value.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_databases_whose_hidden_data_differ_get_byte_identical_replies_to_every_probe() {
    let a = private_db("ab-a", HIDDEN_A);
    let b_dir = crate::support::TempDir::new("ab-b");
    let b_db = b_dir.path().join("private.duckdb");
    crate::support::make_db(&b_db, &format!("{}\n{HIDDEN_B}", private_schema_b()));
    let (client_a, client_b) = (server(&a.db, &[], "").await, server(&b_db, &[], "").await);
    let mut compared = 0;
    for (tool, args) in probes() {
        let reply_a = client_a.call(tool, args.clone()).await.unwrap();
        let reply_b = client_b.call(tool, args.clone()).await.unwrap();
        assert_eq!(
            reply_bytes(&reply_a),
            reply_bytes(&reply_b),
            "{tool} {args} tells the two databases apart"
        );
        // Probes write hidden names, which errors echo; no hidden value may come back.
        let reply = reply_bytes(&reply_a).to_lowercase();
        assert!(!reply.contains("planted"), "{tool} {args}: {reply}");
        compared += 1;
    }
    let resources = client_a.list_resources().await.unwrap();
    assert!(!resources.is_empty());
    let mut uris: Vec<String> = resources.iter().map(|r| r.uri.clone()).collect();
    uris.extend(
        ["device_tiers", "devices", "readings", "folded_tiers"]
            .map(|name| format!("schema://table/{name}")),
    );
    for uri in uris {
        let read_a = client_a
            .read_resource(&uri)
            .await
            .map(|r| serde_json::to_string(&r).unwrap());
        let read_b = client_b
            .read_resource(&uri)
            .await
            .map(|r| serde_json::to_string(&r).unwrap());
        assert_eq!(read_a, read_b, "{uri} tells the two databases apart");
        compared += 1;
    }
    assert!(compared >= 60, "{compared}");
    client_a.close().await.unwrap();
    client_b.close().await.unwrap();
}
