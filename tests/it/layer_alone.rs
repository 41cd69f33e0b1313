//! Two gaps between layers, each closed by the layer that should hold on its own, shown with
//! the layers around it switched off: a name DuckDB's replacement scan would read as a file
//! (`tandem.secret.csv`, a nested schema's `a.b.c.csv`) is refused by the worker's walk of
//! DuckDB's parse tree alone, and a table function that is neither built in nor a table macro
//! stored in the database (`write_csv(…)`) by the parent's validator alone. Through the real
//! binary and a real DuckDB file.

use crate::support::{TempDir, error_kind, make_db, status};
use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::json;

/// `duckgate serve --db DB` with `bypass` switching layers off.
async fn server(db: &std::path::Path, bypass: &str) -> McpClient {
    let mut command = tokio::process::Command::new(crate::support::exe());
    command.args(["serve", "--db"]).arg(db);
    command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
    McpClient::spawn_command(command, std::process::Stdio::null())
        .await
        .expect("duckgate serve initialises")
}

fn database(tag: &str) -> (TempDir, std::path::PathBuf) {
    let dir = TempDir::new(tag);
    let db = dir.path().join("tandem.duckdb");
    make_db(
        &db,
        "CREATE TABLE boluses (units DOUBLE); INSERT INTO boluses VALUES (1.5);
         CREATE MACRO recent_boluses() AS TABLE SELECT * FROM boluses;",
    );
    // A file the names below would read, were they read as files.
    std::fs::write(dir.path().join("tandem.secret.csv"), "secret\nPLANTED\n").unwrap();
    (dir, db)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_dotted_name_of_a_data_file_is_refused_by_the_walk_alone() {
    let (_dir, db) = database("walk-alone");
    let client = server(&db, "validator,plan_check,duckdb_hardening").await;
    for sql in [
        "SELECT * FROM tandem.secret.csv",
        "SELECT * FROM a.b.c.csv",
        "SELECT * FROM tandem.main.csv",
        "DESCRIBE tandem.secret.csv",
    ] {
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(
            status(&result),
            "refused",
            "{sql}: {}",
            envelope_of(&result)
        );
        let message = envelope_of(&result)["error"]["message"].as_str().unwrap();
        assert!(message.contains("names a file"), "{sql}: {message}");
    }
    // The database's own table still answers through the same layers.
    let result = client
        .call("query", json!({ "sql": "SELECT units FROM boluses" }))
        .await
        .unwrap();
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_table_function_that_does_not_exist_is_refused_by_the_validator_alone() {
    let (_dir, db) = database("validator-alone");
    let client = server(&db, "worker_walk,plan_check,duckdb_hardening").await;
    for sql in [
        "SELECT * FROM write_csv('/tmp/x.csv')",
        "SELECT * FROM a_function_nobody_made()",
        "CALL write_csv('/tmp/x')",
    ] {
        let result = client.call("query", json!({ "sql": sql })).await.unwrap();
        assert_eq!(
            status(&result),
            "refused",
            "{sql}: {}",
            envelope_of(&result)
        );
        assert_eq!(error_kind(&result), "policy_blocked", "{sql}");
    }
    // A table macro stored in the database is one: the validator passes it on.
    let result = client
        .call("query", json!({ "sql": "SELECT * FROM recent_boluses()" }))
        .await
        .unwrap();
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    client.close().await.unwrap();
}
