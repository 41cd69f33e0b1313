//! A `PIVOT` whose values come from the data (`PIVOT t ON col USING …`, no `IN` list): DuckDB's
//! parser makes it a `CREATE TEMPORARY TYPE … AS ENUM (SELECT DISTINCT …)` and the pivot; the
//! worker runs the value query as a query of its own, under every check a query passes, then the
//! pivot with the values written into its parse tree (`src/engine/pivot.rs`). Shown here through
//! the real binary over MCP stdio and real DuckDB files: a hidden column's values never come
//! back, not even as the names of result columns, with each layer that holds it alone; a view's
//! visible column pivots; the value query's plan is judged (a refused function in the source is
//! refused by the plan check alone, and by the walk alone); the count of values is bounded.
//! That the answers equal in-process DuckDB's is the conformance suite's `pivot_without_in`
//! class and the everyday corpus.

use crate::support::steps::{PRIVATE_RULES, private_db};
use crate::support::{TempDir, error_kind, exe, make_db, status};
use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::{Value, json};

/// `duckgate serve --db DB` with `flags`, and `bypass` switching layers off (empty: none).
async fn server(db: &std::path::Path, flags: &[&str], bypass: &str) -> McpClient {
    let mut command = tokio::process::Command::new(exe());
    command.args(["serve", "--db"]).arg(db).args(flags);
    if !bypass.is_empty() {
        command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
    }
    McpClient::spawn_command(command, std::process::Stdio::null())
        .await
        .expect("duckgate serve initialises")
}

async fn query(client: &McpClient, sql: &str) -> (String, Value) {
    let result = client.call("query", json!({ "sql": sql })).await.unwrap();
    (status(&result).to_owned(), envelope_of(&result).clone())
}

/// A view over `devices` whose `model` is visible and whose `serial_number` reads the hidden
/// column.
const VIEW: &str =
    "CREATE VIEW device_models AS SELECT device_id, model, serial_number FROM devices;";

#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_columns_values_never_come_back_as_pivot_columns_whatever_layer_holds_alone() {
    let private = private_db("pivot-hidden", VIEW);
    // The layers above the worker's rules switched off one by one; the privacy rules themselves
    // (the shadow catalog, the plan check's rules) stay.
    for bypass in [
        "",
        "validator",
        "validator,worker_walk",
        "validator,plan_check",
    ] {
        let client = server(&private.db, &PRIVATE_RULES, bypass).await;
        for sql in [
            "PIVOT devices ON serial_number USING count(*)",
            "PIVOT devices ON lower(serial_number) USING count(*) GROUP BY model",
            "PIVOT readings ON secret_note USING count(*)",
            "PIVOT device_models ON serial_number USING count(*)",
            "SELECT * FROM (PIVOT devices ON model, serial_number USING count(*))",
            "PIVOT devices ON model IN (SELECT serial_number FROM devices) USING count(*)",
        ] {
            let (status, envelope) = query(&client, sql).await;
            let reply = envelope.to_string().to_lowercase();
            assert_ne!(status, "success", "[{bypass}] {sql}: {envelope}");
            // The query names the hidden column itself; what must never come back is a value
            // of it (`SN-PLANTED-…`, `PLANTED note …`), in a message or as a column's name.
            for value in ["planted", "sn-"] {
                assert!(
                    !reply.contains(value),
                    "[{bypass}] {sql} leaks {value}: {reply}"
                );
            }
        }
        // Refused as the hidden column's plain DISTINCT is: in the same kind.
        let (_, distinct) = query(&client, "SELECT DISTINCT serial_number FROM devices").await;
        let (_, pivot) = query(&client, "PIVOT devices ON serial_number USING count(*)").await;
        assert_eq!(
            (&pivot["status"], &pivot["error"]["kind"]),
            (&distinct["status"], &distinct["error"]["kind"]),
            "[{bypass}] {pivot} / {distinct}"
        );
        // The view's visible column pivots: its values are the result's column names.
        let (status, envelope) = query(
            &client,
            "PIVOT device_models ON model USING count(*) GROUP BY device_id ORDER BY device_id",
        )
        .await;
        assert_eq!(status, "success", "[{bypass}] {envelope}");
        let names: Vec<&str> = envelope["data"]["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["device_id", "G7", "Libre"], "[{bypass}] {envelope}");
        assert_eq!(envelope["data"]["rows"], json!([[1, 1, 0], [2, 0, 1]]));
        client.close().await.unwrap();
    }
}

fn plain_db(tag: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("pump.duckdb");
    make_db(
        &db,
        "CREATE TABLE boluses (kind VARCHAR, units DOUBLE);
         INSERT INTO boluses VALUES ('meal', 4.5), ('correction', 1.0), ('meal', 3.0);",
    );
    (dir, db)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_value_query_is_judged_like_any_query_by_each_check_alone() {
    let (_dir, db) = plain_db("pivot-layers");
    // A refused function in the pivot's source and in its ON expression: each reaches the value
    // query DuckDB's parser makes, which each check sees alone.
    let refused = [
        "PIVOT (SELECT kind || getenv('HOME') AS k, units FROM boluses) ON k USING sum(units)",
        "PIVOT boluses ON kind || current_setting('memory_limit') USING sum(units)",
    ];
    for bypass in [
        "",
        "worker_walk,plan_check,duckdb_hardening",
        "validator,plan_check,duckdb_hardening",
        "validator,worker_walk,duckdb_hardening",
    ] {
        let client = server(&db, &[], bypass).await;
        for sql in refused {
            let result = client.call("query", json!({ "sql": sql })).await.unwrap();
            assert_eq!(
                status(&result),
                "refused",
                "[{bypass}] {sql}: {}",
                envelope_of(&result)
            );
            assert_eq!(error_kind(&result), "policy_blocked", "[{bypass}] {sql}");
        }
        // The same pivot without the refused call is answered through the same layers.
        let (status, envelope) = query(&client, "PIVOT boluses ON kind USING sum(units)").await;
        assert_eq!(status, "success", "[{bypass}] {envelope}");
        assert_eq!(envelope["data"]["rows"], json!([[1.0, 7.5]]), "[{bypass}]");
        client.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_count_of_values_is_bounded_and_an_empty_source_is_explained() {
    let (_dir, db) = plain_db("pivot-limits");
    let client = server(&db, &[], "").await;
    for (sql, kind, said) in [
        (
            "PIVOT (SELECT range AS r FROM range(100001)) ON r USING count(*)",
            "resource_limit",
            "Pivot column limit of 100000",
        ),
        (
            "PIVOT (FROM boluses WHERE units < 0) ON kind USING sum(units)",
            "invalid_argument",
            "no values",
        ),
    ] {
        let (_, envelope) = query(&client, sql).await;
        assert_eq!(envelope["error"]["kind"], kind, "{sql}: {envelope}");
        let message = envelope["error"]["message"].to_string();
        assert!(message.contains(said), "{sql}: {message}");
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn explain_takes_the_same_path_in_query_and_in_explain_query() {
    let (_dir, db) = plain_db("pivot-tools");
    let client = server(&db, &[], "").await;
    let (explained, envelope) =
        query(&client, "EXPLAIN PIVOT boluses ON kind USING sum(units)").await;
    assert_eq!(explained, "success", "{envelope}");
    let plan = client
        .call(
            "explain_query",
            json!({ "sql": "PIVOT boluses ON kind USING sum(units)" }),
        )
        .await
        .unwrap();
    assert_eq!(status(&plan), "success", "{}", envelope_of(&plan));
    client.close().await.unwrap();
}
