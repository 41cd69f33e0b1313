//! Under privacy rules a hidden table or column is indistinguishable from a name that does not
//! exist: through every reply, error message, result column name and type, and plans that read
//! nothing. Over real MCP stdio, the real binary and a real DuckDB file.
//!
//! Each oracle a white-box attack found is tried here with a hidden name and with a made-up
//! name of the same length, and the two replies must be the same byte for byte once the name
//! itself and durations are taken out. The worker makes that hold by showing DuckDB's binder a
//! catalog in which hidden objects do not exist (`src/engine/shadow.rs`).

use crate::support::steps::{ENDLESS, PRIVATE_RULES, PrivateDb, private_db};
use crate::support::{FORBIDDEN, error_kind, serve, status, strip_durations};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// A view stored in the database over the hidden table: not hidden itself.
const VIEW_OVER_HIDDEN_TABLE: &str = "CREATE VIEW payload_view AS SELECT * FROM raw_payloads;";

/// [`crate::support::PRIVATE_SCHEMA`] and the view over its hidden table.
fn fixture(tag: &str) -> PrivateDb {
    private_db(tag, VIEW_OVER_HIDDEN_TABLE)
}

/// `duckgate serve` under [`PRIVATE_RULES`], the rules every test here serves under.
async fn private_server(f: &PrivateDb) -> McpClient {
    serve(&f.db, &PRIVATE_RULES).await
}

/// Hidden names and made-up names of the same length.
const PAIRS: &[(&str, &str)] = &[
    ("raw_payloads", "raw_payloadz"),
    ("serial_number", "serial_numbez"),
    ("secret_note", "secret_notf"),
];

/// The reply as the agent sees it (envelope and text), with `name` replaced and durations
/// removed.
fn normalized(result: &CallToolResult, name: &str) -> String {
    let mut envelope = envelope_of(result).clone();
    strip_durations(&mut envelope);
    format!("{envelope}\n{}", text_of(result)).replace(name, "NAME")
}

/// Every reply with any hidden name other than the one the call itself wrote taken out must
/// hold nothing hidden.
fn assert_nothing_hidden(what: &str, result: &CallToolResult, written: &str) {
    let reply = serde_json::to_string(result)
        .unwrap()
        .to_lowercase()
        .replace(written, "<echo>");
    for word in FORBIDDEN {
        assert!(!reply.contains(word), "{what} leaks {word:?}: {reply}");
    }
}

/// Each template, with `NAME` a hidden name and then a made-up one: the oracles of the attack
/// (recursive CTE fall-through, SUMMARIZE, error text the agent controls, result names, the
/// validator's global name check) and the plain routes.
const TEMPLATES: &[(&str, &str)] = &[
    (
        "query",
        "WITH RECURSIVE NAME AS (SELECT * FROM NAME) SELECT * FROM NAME LIMIT 0",
    ),
    ("query", "SUMMARIZE SELECT * FROM NAME"),
    ("query", "SELECT * FROM NAME LIMIT 0"),
    ("query", "SELECT count(*) FROM NAME"),
    ("query", "SELECT struct_extract({'a': 1}, 'NAME')"),
    ("query", "SELECT 1 LIMIT 'NAME'"),
    ("query", "SELECT 1 AS NAME"),
    ("query", "SELECT NAME FROM (SELECT 1 AS NAME) t"),
    ("query", "SELECT NAME FROM devices"),
    ("query", "SELECT NAME FROM readings"),
    ("query", "SELECT d.NAME FROM devices d"),
    (
        "query",
        "SELECT glucose FROM readings WHERE NAME LIKE '%a%'",
    ),
    ("query", "SELECT model FROM devices ORDER BY NAME"),
    (
        "query",
        "SELECT list_transform([1], x -> NAME) FROM readings",
    ),
    ("query", "DESCRIBE NAME"),
    ("explain_query", "SELECT NAME FROM devices"),
    ("explain_query", "SELECT * FROM NAME"),
];

#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_name_and_a_made_up_name_get_the_same_reply_byte_for_byte() {
    let f = fixture("oracles");
    let client = private_server(&f).await;
    let mut compared = 0;
    for (hidden, made_up) in PAIRS {
        assert_eq!(hidden.len(), made_up.len());
        for (tool, template) in TEMPLATES {
            let hidden_sql = template.replace("NAME", hidden);
            let made_up_sql = template.replace("NAME", made_up);
            let a = client
                .call(tool, json!({ "sql": hidden_sql }))
                .await
                .unwrap();
            let b = client
                .call(tool, json!({ "sql": made_up_sql }))
                .await
                .unwrap();
            assert_eq!(
                normalized(&a, hidden),
                normalized(&b, made_up),
                "{tool}: {hidden_sql:?} and {made_up_sql:?} must read the same"
            );
            assert_nothing_hidden(&format!("{tool} {hidden_sql}"), &a, hidden);
            compared += 1;
        }
        for (tool, args) in [
            ("describe_table", json!({ "table_name": hidden })),
            ("sample_rows", json!({ "table_name": hidden })),
            (
                "sample_rows",
                json!({ "table_name": "devices", "columns": [hidden] }),
            ),
        ] {
            let made_up_args: Value =
                serde_json::from_str(&args.to_string().replace(hidden, made_up)).unwrap();
            let a = client.call(tool, args.clone()).await.unwrap();
            let b = client.call(tool, made_up_args).await.unwrap();
            assert_eq!(
                normalized(&a, hidden),
                normalized(&b, made_up),
                "{tool} {args}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, PAIRS.len() * (TEMPLATES.len() + 3));
    client.close().await.unwrap();
}

/// Whole rows, `SELECT *` and `typeof` show the visible columns only: result column names and
/// types (STRUCT fields included) never carry a hidden column, whether the query reads rows or
/// plans none (`LIMIT 0`).
#[tokio::test(flavor = "multi_thread")]
async fn result_names_and_types_never_carry_a_hidden_column() {
    let f = fixture("types");
    let client = private_server(&f).await;
    for sql in [
        "SELECT d AS r FROM devices d LIMIT 0",
        "SELECT d AS r FROM devices d",
        "WITH RECURSIVE devices AS (SELECT * FROM devices) SELECT typeof(c) AS t FROM devices c LIMIT 1",
        "SELECT * FROM devices",
        "SELECT * FROM readings LIMIT 0",
        "SELECT to_json(r) AS j FROM readings r",
        "SELECT map_from_entries([(model, d)]) AS m FROM devices d",
        "SELECT union_value(k := d) AS u FROM devices d",
        "SUMMARIZE devices",
        "DESCRIBE readings",
    ] {
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert!(
            matches!(status(&result), "success" | "empty"),
            "{sql}: {}",
            envelope_of(&result)
        );
        assert_nothing_hidden(sql, &result, "<nothing written>");
    }
    // The visible columns are all there.
    let star = client
        .call("query", json!({ "sql": "SELECT * FROM devices" }))
        .await
        .unwrap();
    let columns: Vec<&str> = envelope_of(&star)["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["device_id", "model"]);
    let row = client
        .call(
            "query",
            json!({ "sql": "SELECT d AS r FROM devices d LIMIT 0" }),
        )
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&row)["data"]["columns"][0]["type"],
        "STRUCT(device_id INTEGER, model VARCHAR)",
        "{}",
        envelope_of(&row)
    );
    client.close().await.unwrap();
}

/// A view stored in the database over a hidden table reads hidden data in every column, so it
/// does not exist: even a plan that reads nothing (`LIMIT 0` plans no scan at all) fails as a
/// made-up name of the same length does, byte for byte.
#[tokio::test(flavor = "multi_thread")]
async fn a_view_over_a_hidden_table_does_not_exist_even_for_a_plan_that_reads_nothing() {
    let f = fixture("reads-nothing");
    let client = private_server(&f).await;
    for template in [
        "SELECT * FROM NAME LIMIT 0",
        "SELECT count(*) FROM NAME",
        "SELECT * FROM NAME",
        "DESCRIBE NAME",
    ] {
        let sql = template.replace("NAME", "payload_view");
        let made_up = template.replace("NAME", "payload_viex");
        let a = client.call("query", json!({ "sql": sql })).await.unwrap();
        let b = client
            .call("query", json!({ "sql": made_up }))
            .await
            .unwrap();
        assert_eq!(error_kind(&a), "unknown_name", "{sql}: {}", envelope_of(&a));
        assert_eq!(
            normalized(&a, "payload_view"),
            normalized(&b, "payload_viex"),
            "{sql}"
        );
        assert_nothing_hidden(&sql, &a, "<nothing written>");
    }
    client.close().await.unwrap();
}

/// Ordinary mistakes over visible objects keep DuckDB's own helpful message, even when it names
/// a column that a hidden table also has (`id`), and `unnest` of a visible list runs.
#[tokio::test(flavor = "multi_thread")]
async fn ordinary_mistakes_keep_duckdbs_message_and_unnest_runs() {
    let f = fixture("mistakes");
    let client = private_server(&f).await;
    let grouped = client
        .call(
            "query",
            json!({ "sql": "SELECT id, count(*) FROM readings" }),
        )
        .await
        .unwrap();
    assert_eq!(
        error_kind(&grouped),
        "database_error",
        "{}",
        envelope_of(&grouped)
    );
    let message = envelope_of(&grouped)["error"]["message"].as_str().unwrap();
    assert!(message.contains("GROUP BY"), "{message}");
    assert!(message.contains("\"id\""), "{message}");
    assert_ne!(message, duckgate::privacy::PLAN_REFUSAL);

    for sql in [
        "SELECT * FROM unnest((SELECT list(id) FROM readings)) u(x)",
        "SELECT unnest((SELECT list(id) FROM readings)) AS x",
        "SELECT x FROM readings, unnest([readings.id, 2]) u(x)",
    ] {
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(
            status(&result),
            "success",
            "{sql}: {}",
            envelope_of(&result)
        );
    }
    client.close().await.unwrap();
}

/// A hidden name and a made-up one take the same path, not only the same words: with every
/// worker slot taken and no queue allowed, each pair is still answered alike. A name only the
/// parent decides is refused there for both; a name the worker decides is `busy` for both. So
/// neither can come back faster because the parent knew it was hidden.
#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_name_and_a_made_up_one_take_the_same_path() {
    let f = fixture("same-path");
    let limits = ["--max-concurrent", "1", "--queue-timeout", "0"];
    let client = serve(&f.db, &[&PRIVATE_RULES[..], &limits[..]].concat()).await;
    // Hold the one worker slot.
    let bomb = client
        .start_call("query", json!({ "sql": ENDLESS }))
        .await
        .unwrap();
    let slot_taken = async {
        for _ in 0..100 {
            let probe = client
                .call("query", json!({ "sql": "SELECT 1" }))
                .await
                .unwrap();
            if error_kind(&probe) == "busy" {
                return true;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        false
    };
    assert!(slot_taken.await, "the long query never took the slot");
    let mut busy = 0;
    for (hidden, made_up) in PAIRS {
        for (tool, template) in TEMPLATES {
            let a = client
                .call(tool, json!({ "sql": template.replace("NAME", hidden) }))
                .await
                .unwrap();
            let b = client
                .call(tool, json!({ "sql": template.replace("NAME", made_up) }))
                .await
                .unwrap();
            assert_eq!(
                normalized(&a, hidden),
                normalized(&b, made_up),
                "{tool} {template} with {hidden}"
            );
            busy += usize::from(error_kind(&a) == "busy");
        }
    }
    assert!(
        busy >= PAIRS.len() * 5,
        "only {busy} pairs reached the worker queue"
    );
    drop(bomb);
    client.close().await.unwrap();
}
