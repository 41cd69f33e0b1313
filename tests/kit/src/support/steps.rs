//! Steps several integration test files take alike: the count query over [`super::CGM_SCHEMA`]
//! with its checks, finding the worker that runs a query, the database and serve flags of the
//! privacy tests.

use std::path::PathBuf;
use std::time::Duration;

use duckgate::mcp_client::{McpClient, envelope_of};
use rmcp::model::CallToolResult;
use serde_json::json;

use super::{OutputSchemas, PRIVATE_SCHEMA, TempDir, cpu_ticks, make_db, status, wait_until};

/// Runs for minutes unless killed (DuckDB does not stop a single aggregate early).
pub const ENDLESS: &str = "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3";

/// `SELECT count(*) AS n FROM cgm_readings` through `client`: the result matches query's
/// outputSchema, succeeds and counts the 4032 readings of [`super::CGM_SCHEMA`].
pub async fn count_cgm_readings(client: &McpClient, schemas: &OutputSchemas) -> CallToolResult {
    let result = client
        .call(
            "query",
            json!({ "sql": "SELECT count(*) AS n FROM cgm_readings" }),
        )
        .await
        .unwrap();
    schemas.check("query", &result);
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    assert_eq!(
        envelope_of(&result)["data"]["rows"],
        json!([[4032]]),
        "{}",
        envelope_of(&result)
    );
    result
}

/// The worker burning CPU under `server`: the one running the query, not the idle warm spare.
pub async fn busy_worker(server: u32) -> u32 {
    let mut busy = None;
    wait_until(Duration::from_secs(10), || {
        busy = super::workers_of(server)
            .into_iter()
            .find(|pid| cpu_ticks(*pid) >= 50);
        busy.is_some()
    })
    .await;
    busy.expect("no worker of the server used half a second of CPU")
}

/// `SELECT 5 AS five` through `client` answers its one row: the server goes on after what the
/// test did to it.
pub async fn still_answers(client: &McpClient) {
    let after = client
        .call("query", json!({ "sql": "SELECT 5 AS five" }))
        .await
        .unwrap();
    assert_eq!(envelope_of(&after)["data"]["rows"], json!([[5]]));
}

/// The `serve` flags hiding what [`PRIVATE_SCHEMA`] plants: the raw-payload table, every
/// serial number and the readings' free-text note.
pub const PRIVATE_RULES: [&str; 6] = [
    "--hide-table",
    "raw_payloads",
    "--hide-column",
    "*.serial_number",
    "--hide-column",
    "readings.secret_note",
];

/// A database made from [`PRIVATE_SCHEMA`] and more SQL, in a directory removed with it.
pub struct PrivateDb {
    _dir: TempDir,
    /// The database file.
    pub db: PathBuf,
}

/// `private.duckdb` holding [`PRIVATE_SCHEMA`] and then `extra_sql`.
pub fn private_db(tag: &str, extra_sql: &str) -> PrivateDb {
    let dir = TempDir::new(tag);
    let db = dir.path().join("private.duckdb");
    make_db(&db, &format!("{PRIVATE_SCHEMA}\n{extra_sql}"));
    PrivateDb { _dir: dir, db }
}
