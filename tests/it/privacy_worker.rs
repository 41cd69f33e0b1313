//! The worker's privacy layer on its own: with the validator (and the worker's walk of DuckDB's
//! tree) switched off by the test-only bypass, no route reaches a hidden table or column. The
//! worker shows DuckDB's binder a catalog without them (`src/engine/shadow.rs`), so a hidden
//! name fails like a made-up one and expansions give the visible columns; and it checks DuckDB's
//! plan (`src/engine/plan_check/`), which refuses catalog listings and views stored in the
//! database that read hidden data. Over real MCP stdio, against the real binary and a real
//! DuckDB file with the same hidden objects and planted token as `tests/it/privacy.rs`, plus a view
//! the database itself defines over a hidden column.

use crate::support::steps::{PRIVATE_RULES, PrivateDb, private_db};
use crate::support::{FORBIDDEN, error_kind, status};
use duckgate::mcp_client::{McpClient, envelope_of};
use duckgate::privacy::{PLAN_REFUSAL, PLAN_REFUSAL_HINT};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// A view over the hidden serial number, added to [`crate::support::PRIVATE_SCHEMA`]: the view is not hidden
/// itself, so the validator sees only its visible name and columns.
const VIEW_OVER_HIDDEN_COLUMN: &str =
    "CREATE VIEW device_labels AS SELECT device_id, serial_number AS label FROM devices;";

/// Every route to a hidden column or table an attack has tried, and a few more.
const ROUTES: &[(&str, &str)] = &[
    ("hidden table", "SELECT body FROM raw_payloads"),
    ("hidden table, all rows", "SELECT * FROM raw_payloads"),
    (
        "hidden table, count only",
        "SELECT count(*) FROM raw_payloads",
    ),
    ("hidden column by name", "SELECT serial_number FROM devices"),
    (
        "hidden column by alias",
        "SELECT serial_number AS s FROM devices",
    ),
    (
        "inside an expression",
        "SELECT upper(serial_number) FROM devices",
    ),
    (
        "filter-only oracle (no match)",
        "SELECT count(*) FROM devices WHERE serial_number LIKE 'A%'",
    ),
    (
        "filter-only oracle (match)",
        "SELECT count(*) FROM devices WHERE serial_number LIKE 'SN-P%'",
    ),
    (
        "filter on a null test",
        "SELECT count(*) FROM devices WHERE serial_number IS NULL",
    ),
    (
        "ordering by it",
        "SELECT model FROM devices ORDER BY serial_number",
    ),
    ("aggregate", "SELECT max(serial_number) FROM devices"),
    (
        "aggregate of the other hidden column",
        "SELECT string_agg(secret_note, ',') FROM readings",
    ),
    ("star", "SELECT * FROM devices"),
    ("FROM alone", "FROM devices"),
    ("row as a struct", "SELECT d FROM devices d"),
    ("row as JSON", "SELECT to_json(d) FROM devices d"),
    ("COLUMNS(*)", "SELECT COLUMNS(*) FROM devices"),
    ("positional reference", "SELECT #3 FROM devices"),
    (
        "CTE",
        "WITH x AS (SELECT serial_number AS s FROM devices) SELECT s FROM x",
    ),
    (
        "materialized CTE",
        "WITH x AS MATERIALIZED (SELECT serial_number AS s FROM devices) SELECT s FROM x",
    ),
    (
        "subquery",
        "SELECT s FROM (SELECT serial_number AS s FROM devices)",
    ),
    (
        "scalar subquery",
        "SELECT (SELECT max(body) FROM raw_payloads) AS b",
    ),
    (
        "join",
        "SELECT r.glucose, d.serial_number AS s FROM readings r JOIN devices d USING (device_id)",
    ),
    (
        "join condition only",
        "SELECT r.glucose FROM readings r JOIN devices d ON d.serial_number <> r.secret_note",
    ),
    (
        "view over a hidden column",
        "SELECT label FROM device_labels",
    ),
    ("SUMMARIZE", "SUMMARIZE devices"),
    ("SUMMARIZE a query", "SUMMARIZE SELECT * FROM readings"),
    ("DESCRIBE", "DESCRIBE devices"),
    (
        "DESCRIBE a visible query",
        "DESCRIBE SELECT model FROM devices",
    ),
    ("SHOW TABLES", "SHOW TABLES"),
    (
        "duckdb_columns()",
        "SELECT column_name FROM duckdb_columns()",
    ),
    ("duckdb_tables()", "SELECT table_name FROM duckdb_tables()"),
    (
        "duckdb_indexes()",
        "SELECT index_name FROM duckdb_indexes()",
    ),
    (
        "information_schema.columns",
        "SELECT column_name FROM information_schema.columns",
    ),
    (
        "information_schema.tables",
        "SELECT table_name FROM information_schema.tables",
    ),
    (
        "pragma_table_info",
        "SELECT name FROM pragma_table_info('devices')",
    ),
    ("query_table()", "SELECT * FROM query_table('devices')"),
    (
        "EXPLAIN of a hidden column",
        "EXPLAIN SELECT serial_number FROM devices",
    ),
    (
        "binder error that would name it",
        "SELECT * EXCLUDE (device_id) FROM devices GROUP BY model",
    ),
];

/// [`crate::support::PRIVATE_SCHEMA`] and the view over its hidden column.
fn fixture(tag: &str) -> PrivateDb {
    private_db(tag, VIEW_OVER_HIDDEN_COLUMN)
}

/// `duckgate serve` with the same rules as `tests/it/privacy.rs`, and `bypass` as the test-only
/// layer switch (empty: none).
async fn server(f: &PrivateDb, bypass: &str) -> McpClient {
    let mut command = tokio::process::Command::new(crate::support::exe());
    command
        .args(["serve", "--db"])
        .arg(&f.db)
        .args(PRIVATE_RULES);
    if !bypass.is_empty() {
        command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
    }
    McpClient::spawn_command(command, std::process::Stdio::null())
        .await
        .expect("duckgate serve initialises")
}

/// Call, and fail if the reply holds a hidden name or the planted token anywhere, except a
/// name the SQL itself wrote, echoed in a "does not exist" error exactly as a made-up name is
/// (`the_worker_answers_a_hidden_name_exactly_like_a_made_up_one`).
async fn call(client: &McpClient, tool: &str, args: Value) -> CallToolResult {
    let result = client.call(tool, args.clone()).await.unwrap();
    let mut reply = serde_json::to_string(&result).unwrap().to_lowercase();
    let written = args.to_string().to_lowercase();
    for word in FORBIDDEN {
        if written.contains(word) && error_kind(&result) == "unknown_name" {
            reply = reply.replace(word, "<echo>");
        }
        assert!(
            !reply.contains(word),
            "{tool} {args} leaks {word:?}: {reply}"
        );
    }
    result
}

/// The refusal is the worker's: its message word for word, kind `policy_blocked`, and a next
/// step.
fn assert_refused_by_the_worker(what: &str, result: &CallToolResult) {
    let envelope = envelope_of(result);
    assert_eq!(status(result), "refused", "{what}: {envelope}");
    assert_eq!(error_kind(result), "policy_blocked", "{what}: {envelope}");
    assert_eq!(
        envelope["error"]["message"], PLAN_REFUSAL,
        "{what}: not the worker's refusal: {envelope}"
    );
    assert_eq!(
        envelope["error"]["recovery"]["hint"], PLAN_REFUSAL_HINT,
        "{what}: {envelope}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_the_validator_off_no_route_reaches_hidden_data() {
    let f = fixture("worker-routes");
    // The worker's walk of DuckDB's tree is off too: the shadow catalog and the plan check
    // stand alone (the walk refuses listings earlier, with the parent's wording:
    // tests/it/worker_checks.rs).
    let client = server(&f, "validator,worker_walk").await;
    let (mut answered, mut unknown, mut refused) = (0, 0, 0);
    for (what, sql) in ROUTES {
        for tool in ["query", "explain_query"] {
            let result = call(&client, tool, json!({ "sql": sql })).await;
            let envelope = envelope_of(&result);
            match (status(&result), error_kind(&result)) {
                ("success" | "empty", _) => answered += 1,
                (_, "unknown_name") => unknown += 1,
                ("refused", "policy_blocked") => {
                    assert_refused_by_the_worker(&format!("{what} via {tool}: {sql}"), &result);
                    refused += 1;
                }
                (_, "database_error" | "syntax_error") => {}
                other => panic!("{what} via {tool}: {sql}: {other:?} {envelope}"),
            }
        }
    }
    // Each of the three ways occurs: expansions answer with visible columns, hidden names do
    // not exist, listings and the view over a hidden column are refused.
    assert!(
        answered >= 10 && unknown >= 10 && refused >= 8,
        "{answered} {unknown} {refused}"
    );
    client.close().await.unwrap();
}

/// Positive controls through the same bypassed server: what reads only visible columns works,
/// from the very tables that have hidden columns, and its plan can be explained.
#[tokio::test(flavor = "multi_thread")]
async fn with_the_validator_off_visible_columns_of_the_same_tables_still_work() {
    let f = fixture("worker-visible");
    let client = server(&f, "validator").await;
    let cases: &[(&str, Value)] = &[
        (
            "SELECT glucose FROM readings ORDER BY id",
            json!([[110], [140]]),
        ),
        ("SELECT count(*) AS n FROM devices", json!([[2]])),
        (
            "SELECT model FROM devices ORDER BY device_id",
            json!([["G7"], ["Libre"]]),
        ),
        (
            "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id) ORDER BY 2",
            json!([["G7", 110], ["Libre", 140]]),
        ),
        (
            "WITH x AS (SELECT device_id FROM devices) SELECT count(*) FROM x",
            json!([[2]]),
        ),
        (
            "SELECT count(*) FROM devices WHERE model LIKE 'G%'",
            json!([[1]]),
        ),
        (
            "SELECT model FROM devices WHERE device_id = 2",
            json!([["Libre"]]),
        ),
        ("SELECT * FROM range(2)", json!([[0], [1]])),
        ("VALUES (1)", json!([[1]])),
    ];
    for (sql, rows) in cases {
        let result = call(&client, "query", json!({ "sql": sql })).await;
        assert_eq!(
            status(&result),
            "success",
            "{sql}: {}",
            envelope_of(&result)
        );
        assert_eq!(&envelope_of(&result)["data"]["rows"], rows, "{sql}");
        let plan = call(&client, "explain_query", json!({ "sql": sql })).await;
        assert_eq!(status(&plan), "success", "{sql}: {}", envelope_of(&plan));
    }
    client.close().await.unwrap();
}

/// A view stored in the database whose column selects a hidden column: the worker traces what
/// each view column reads through DuckDB's plans (`src/engine/lineage.rs`), so that column is
/// hidden with the one it reads (the parent's catalog and the worker's shadow alike) and the
/// view's visible column answers, its whole rows and `sample_rows` with it.
#[tokio::test(flavor = "multi_thread")]
async fn with_every_layer_on_a_view_column_over_a_hidden_column_does_not_exist() {
    let f = fixture("worker-view");
    for bypass in ["", "validator,worker_walk"] {
        let client = server(&f, bypass).await;
        for tool in ["query", "explain_query"] {
            for sql in [
                "SELECT label FROM device_labels",
                "SELECT count(*) FROM device_labels WHERE label LIKE 'SN%'",
                // With DuckDB's statistics propagation on, these two would plan as an empty
                // result that reads no column (every serial number is below 'zzzz' and none is
                // NULL); the column does not exist for them either.
                "SELECT count(*) FROM device_labels WHERE label > 'zzzz'",
                "SELECT count(*) FROM device_labels WHERE label IS NULL",
            ] {
                let result = call(&client, tool, json!({ "sql": sql })).await;
                assert_eq!(
                    error_kind(&result),
                    "unknown_name",
                    "{bypass} {tool}: {sql}: {}",
                    envelope_of(&result)
                );
            }
        }
        let star = call(
            &client,
            "query",
            json!({"sql": "SELECT * FROM device_labels ORDER BY 1"}),
        )
        .await;
        let table = call(
            &client,
            "query",
            json!({"sql": "SELECT device_id FROM devices ORDER BY 1"}),
        )
        .await;
        assert_eq!(status(&star), "success", "{}", envelope_of(&star));
        assert_eq!(
            envelope_of(&star)["data"]["rows"],
            envelope_of(&table)["data"]["rows"]
        );
        let sample = call(
            &client,
            "sample_rows",
            json!({"table_name": "device_labels"}),
        )
        .await;
        assert_eq!(status(&sample), "success", "{}", envelope_of(&sample));
        let described = call(
            &client,
            "describe_table",
            json!({"table_name": "device_labels"}),
        )
        .await;
        let envelope = envelope_of(&described).to_string();
        assert!(!envelope.contains("\"label\""), "{envelope}");
        client.close().await.unwrap();
    }
}

/// With the validator and the walk off, the worker alone answers a hidden name exactly as it
/// answers a made-up name of the same length: same reply, byte for byte, once the name and the
/// duration are taken out.
#[tokio::test(flavor = "multi_thread")]
async fn the_worker_answers_a_hidden_name_exactly_like_a_made_up_one() {
    let f = fixture("worker-same");
    let client = server(&f, "validator,worker_walk").await;
    for (template, hidden, made_up) in [
        ("SELECT body FROM NAME", "raw_payloads", "raw_payloadz"),
        (
            "SELECT NAME AS s FROM devices",
            "serial_number",
            "serial_numbez",
        ),
        (
            "SELECT NAME AS n FROM readings",
            "secret_note",
            "secret_notf",
        ),
        (
            "SELECT typeof(NAME) AS t FROM devices LIMIT 1",
            "serial_number",
            "serial_numbez",
        ),
        (
            "SELECT s FROM (SELECT NAME AS s FROM devices) LIMIT 0",
            "serial_number",
            "serial_numbez",
        ),
        (
            "SELECT NAME FROM devices LIMIT 0",
            "serial_number",
            "serial_numbez",
        ),
    ] {
        let mut replies = Vec::new();
        for name in [hidden, made_up] {
            let result = call(
                &client,
                "query",
                json!({ "sql": template.replace("NAME", name) }),
            )
            .await;
            let mut envelope = envelope_of(&result).clone();
            if let Some(data) = envelope.get_mut("data").and_then(Value::as_object_mut) {
                data.remove("duration_ms");
            }
            replies.push(envelope.to_string().replace(name, "NAME"));
        }
        assert_eq!(replies[0], replies[1], "{template}");
        assert!(
            replies[0].contains("unknown_name"),
            "{template}: {}",
            replies[0]
        );
    }
    client.close().await.unwrap();
}
