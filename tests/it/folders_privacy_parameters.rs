//! Every named parameter of the Parquet readers that keeps the files' column names answers on
//! files with a hidden column, through the real binary, exactly as in-process DuckDB answers over
//! the same files written without that column; the hidden column stays hidden under each; and
//! each parameter that chooses which file column a result column is gets the privacy refusal.
//! With the plan check off, DuckDB's side alone (the folders' Parquet reader) does the same.
//!
//! The classification is `PARAMETERS_KEEPING_COLUMN_NAMES` and `PARAMETERS_BINDING_COLUMNS` in
//! src/plan_policy/facts.rs; a unit test there holds it against the linked DuckDB's list.

use std::path::{Path, PathBuf};

use crate::folders_privacy::reply_bytes;
use crate::support::folder_scene::FolderScene;
use crate::support::oracle::{Answer, JsonEncoding, Oracle, Reply, first_difference, mcp_answer};
use crate::support::status;
use duckgate::mcp_client::{McpClient, envelope_of};
use serde_json::{Value as Json, json};

/// What every hidden value holds; no reply may carry it.
const PLANTED: &str = "Planted-Carol-5b2e";

/// The key the sealed file is encrypted with (16 bytes: AES-128).
const KEY: &str = "0123456789112345";

/// The Parquet files of two months, hive-partitioned by year.
const PEOPLE: &str = "'exports/people/*/*.parquet'";

/// The encrypted file.
const SEALED: &str = "'exports/sealed/readings.parquet'";

/// The folder served (its files hold `patient_name`) and, beside it, the same files written
/// without `patient_name`, which the in-process oracle reads under the same names.
struct Scene {
    /// The database and the folder served; `root` holds `exports`, for an in-process DuckDB that
    /// reads the hidden column.
    folder: FolderScene,
    plain_root: PathBuf,
}

/// One month's rows: a BLOB (for `binary_as_string`), a NaN among the floats (`can_have_nan`),
/// a timestamp, and the hidden column between visible ones when `hidden`. The files carry
/// Parquet field ids, as exports from Spark or Iceberg do: the `schema` parameter maps them.
fn month_sql(first_id: u32, hidden: bool) -> String {
    let patient = if hidden {
        format!("'{PLANTED} ' || i AS patient_name,")
    } else {
        String::new()
    };
    format!(
        "SELECT ({first_id} + i)::BIGINT AS id, {patient}
                CASE WHEN i = 2 THEN 'NaN'::DOUBLE ELSE 80.5 + i * 7 END AS glucose,
                ('sensor-' || i)::BLOB AS raw,
                TIMESTAMP '2026-01-01 08:00:00' + INTERVAL (i) HOUR AS taken_at
         FROM range(5) t(i)"
    )
}

fn write_files(conn: &duckdb::Connection, exports: &Path, hidden: bool) {
    for dir in ["people/year=2025", "people/year=2026", "sealed"] {
        std::fs::create_dir_all(exports.join(dir)).unwrap();
    }
    let at = |p: &str| exports.join(p).display().to_string();
    conn.execute_batch(&format!(
        "COPY ({}) TO '{}' (FORMAT parquet, FIELD_IDS 'auto');
         COPY ({}) TO '{}' (FORMAT parquet, FIELD_IDS 'auto');
         COPY ({}) TO '{}' (FORMAT parquet, ENCRYPTION_CONFIG {{footer_key: 'sealed'}});",
        month_sql(0, hidden),
        at("people/year=2025/december.parquet"),
        month_sql(10, hidden),
        at("people/year=2026/january.parquet"),
        month_sql(20, hidden),
        at("sealed/readings.parquet"),
    ))
    .unwrap();
}

fn scene(tag: &str) -> Scene {
    let folder = FolderScene::new(
        tag,
        "health.duckdb",
        "CREATE TABLE notes (id INTEGER); INSERT INTO notes VALUES (1);",
        &[],
    );
    let conn = duckdb::Connection::open_in_memory().unwrap();
    // Without httpfs, DuckDB's crypto module writes only when told that this file need not be
    // securely encrypted (a test's fixture: what matters is that it is encrypted).
    conn.execute_batch(&format!(
        "SET force_mbedtls_unsafe = 'true'; PRAGMA add_parquet_key('sealed', '{KEY}');"
    ))
    .unwrap();
    write_files(&conn, &folder.exports, true);
    let plain_root = folder.root.join("plain");
    write_files(&conn, &plain_root.join("exports"), false);
    Scene { folder, plain_root }
}

async fn server(scene: &Scene, bypass: &str) -> McpClient {
    let args = [
        "--time-zone",
        "UTC",
        "--threads",
        "1",
        "--hide-column",
        "exports/**/*.parquet.patient_name",
    ];
    scene.folder.serve(bypass, &args).await
}

/// A query with each parameter that keeps the files' column names: every one DuckDB 2.0's
/// Parquet readers accept, with a value that does something where it can.
fn kept_parameter_queries() -> Vec<(&'static str, String)> {
    let over = |files: &str, parameters: &str| {
        format!("SELECT * FROM read_parquet({files}, {parameters}) ORDER BY id")
    };
    vec![
        (
            "hive_partitioning",
            over(PEOPLE, "hive_partitioning = true"),
        ),
        (
            "hive_partitioning",
            over(PEOPLE, "hive_partitioning = false"),
        ),
        ("union_by_name", over(PEOPLE, "union_by_name = true")),
        ("filename", over(PEOPLE, "filename = true")),
        ("filename", over(PEOPLE, "filename = 'source_file'")),
        (
            "hive_types",
            over(
                PEOPLE,
                "hive_partitioning = true, hive_types = {'year': 'INTEGER'}",
            ),
        ),
        (
            "hive_types_autocast",
            over(
                PEOPLE,
                "hive_partitioning = true, hive_types_autocast = false",
            ),
        ),
        ("file_row_number", over(PEOPLE, "file_row_number = true")),
        ("allow_empty", over(PEOPLE, "allow_empty = true")),
        ("binary_as_string", over(PEOPLE, "binary_as_string = true")),
        (
            "debug_use_openssl",
            over(PEOPLE, "debug_use_openssl = false"),
        ),
        ("compression", over(PEOPLE, "compression = 'zstd'")),
        (
            "explicit_cardinality",
            over(PEOPLE, "explicit_cardinality = 1000"),
        ),
        ("parquet_version", over(PEOPLE, "parquet_version = 'V2'")),
        (
            "can_have_nan",
            format!(
                "SELECT id, glucose FROM read_parquet({PEOPLE}, can_have_nan = true) \
                 WHERE glucose > 100 ORDER BY id"
            ),
        ),
        (
            "prefetch_strategy",
            over(PEOPLE, "prefetch_strategy = 'whole_group'"),
        ),
        (
            "utf8_validation",
            over(PEOPLE, "utf8_validation = 'strict'"),
        ),
        ("int96_as", over(PEOPLE, "int96_as = 'timestamp_ns'")),
        (
            "encryption_config",
            over(
                SEALED,
                &format!("encryption_config = {{footer_key_value: '{KEY}'}}"),
            ),
        ),
        (
            "file_row_number",
            format!(
                "SELECT * FROM parquet_scan({PEOPLE}, file_row_number = true, \
                 union_by_name = true) ORDER BY id"
            ),
        ),
    ]
}

/// Each parameter that chooses which file column a result column is, or claims facts about a
/// column by its name; `hidden_field_id` is the hidden column's Parquet field id.
fn binding_parameter_queries(hidden_field_id: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "schema",
            format!(
                "SELECT * FROM read_parquet({PEOPLE}, schema = MAP {{{hidden_field_id}: \
                 {{name: 'who', type: 'VARCHAR', default_value: NULL}}}}) ORDER BY who"
            ),
        ),
        (
            "bound_schema",
            format!(
                "SELECT * FROM read_parquet({PEOPLE}, hive_partitioning = false, \
                 bound_schema = {{'id': 'BIGINT', 'patient_name': 'VARCHAR'}}) ORDER BY id"
            ),
        ),
        (
            "column_statistics",
            format!(
                "SELECT id FROM read_parquet({PEOPLE}, column_statistics = \
                 MAP {{'glucose': MAP {{'min': '0', 'max': '1000'}}}}) ORDER BY id"
            ),
        ),
    ]
}

/// The oracle's answer with the plain folder's host prefix taken off every text (the
/// `filename` column), so it names files as duckgate does: `exports/…`.
fn as_named_in_the_folder(mut answer: Answer, plain_root: &Path) -> Answer {
    let prefix = format!("{}/", plain_root.display());
    for row in &mut answer.rows {
        for value in row {
            if let Json::String(text) = value
                && let Some(rest) = text.strip_prefix(&prefix)
            {
                *text = rest.to_owned();
            }
        }
    }
    answer
}

async fn kept_parameters_answer_as_over_files_without_the_column(bypass: &str) {
    let scene = scene("parquet-parameters-kept");
    let client = server(&scene, bypass).await;
    let oracle = Oracle::in_folder_root(&scene.plain_root, "UTC", JsonEncoding::Text);
    let mut failures = Vec::new();
    for (parameter, sql) in kept_parameter_queries() {
        let expected = as_named_in_the_folder(
            oracle
                .answer(&sql)
                .unwrap_or_else(|e| panic!("{parameter}: {sql}: DuckDB: {e}")),
            &scene.plain_root,
        );
        assert!(!expected.rows.is_empty(), "{parameter}: {sql}: no rows");
        match mcp_answer(&client, &sql).await {
            Reply::Answered(got) => {
                if let Some(difference) = first_difference(&expected, &got, true, true) {
                    failures.push(format!("{parameter}: {sql}: {difference}"));
                }
                if got.columns.iter().any(|column| column == "patient_name") {
                    failures.push(format!("{parameter}: {sql}: shows patient_name"));
                }
            }
            Reply::Failed { status, envelope } => {
                failures.push(format!("{parameter}: {sql}: {status}: {envelope}"));
            }
        }
        // The hidden column, asked for by name under the same parameter, is answered as a
        // made-up name of the same length is.
        let (hidden, made_up) = ("patient_name", "patient_nbme");
        let asked = |column: &str| sql.replacen("SELECT *", &format!("SELECT {column}"), 1);
        let ask = |sql: String| {
            let client = &client;
            async move {
                let result = client
                    .call("query", json!({ "sql": sql, "limit": 100 }))
                    .await
                    .unwrap();
                reply_bytes(&result)
            }
        };
        if sql.starts_with("SELECT *") {
            let with_hidden = ask(asked(hidden)).await.replace(hidden, "NAME");
            let with_made_up = ask(asked(made_up)).await.replace(made_up, "NAME");
            if with_hidden != with_made_up {
                failures.push(format!(
                    "{parameter}: the hidden column is told apart from a made-up one:\n  \
                     {with_hidden}\n  {with_made_up}"
                ));
            }
            assert!(!with_hidden.contains(PLANTED), "{with_hidden}");
        }
    }
    client.close().await.unwrap();
    assert!(
        failures.is_empty(),
        "off: {bypass:?}:\n{}",
        failures.join("\n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_parameter_keeping_column_names_answers_as_duckdb_over_files_without_the_hidden_column()
 {
    kept_parameters_answer_as_over_files_without_the_column("").await;
}

/// DuckDB's side alone: the folders' Parquet reader takes the hidden column out of the schema
/// under every kept parameter, with the plan check off.
#[tokio::test(flavor = "multi_thread")]
async fn with_the_plan_check_off_each_kept_parameter_still_leaves_the_hidden_column_out() {
    kept_parameters_answer_as_over_files_without_the_column("plan_check").await;
}

async fn binding_parameters_are_refused(bypass: &str) {
    let scene = scene("parquet-parameters-refused");
    // In-process DuckDB, which no rule binds, over the very files: `schema` and `bound_schema`
    // read the hidden column under a name of the caller's, and `column_statistics` answers; so
    // the refusal below is the rules', and the attack it stops is real.
    let unruled = Oracle::in_folder_root(&scene.folder.root, "UTC", JsonEncoding::Text);
    let field_id = unruled
        .answer(
            "SELECT field_id FROM parquet_schema('exports/people/year=2025/december.parquet') \
             WHERE name = 'patient_name'",
        )
        .unwrap()
        .rows[0][0]
        .to_string();
    let client = server(&scene, bypass).await;
    for (parameter, sql) in binding_parameter_queries(&field_id) {
        let answer = unruled
            .answer(&sql)
            .unwrap_or_else(|e| panic!("{parameter}: {sql}: DuckDB: {e}"));
        let exposes = serde_json::to_string(&answer.rows)
            .unwrap()
            .contains(PLANTED);
        assert_eq!(
            exposes,
            parameter != "column_statistics",
            "{parameter}: {sql}"
        );
        let result = client
            .call("query", json!({ "sql": sql, "limit": 100 }))
            .await
            .unwrap();
        let envelope = envelope_of(&result);
        assert_eq!(
            envelope["error"]["kind"], "policy_blocked",
            "off: {bypass:?}: {parameter}: {envelope}"
        );
        assert_eq!(status(&result), "refused", "{parameter}: {envelope}");
        let bytes = reply_bytes(&result);
        assert!(!bytes.contains(PLANTED), "{bytes}");
        assert!(
            !bytes.contains(&scene.folder.exports.display().to_string()),
            "{bytes}"
        );
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn each_parameter_choosing_which_file_column_a_result_column_is_gets_the_privacy_refusal() {
    binding_parameters_are_refused("").await;
}

/// DuckDB's side alone refuses them as it parses the option, with the plan check off.
#[tokio::test(flavor = "multi_thread")]
async fn with_the_plan_check_off_duckdbs_reader_alone_refuses_each_binding_parameter() {
    binding_parameters_are_refused("plan_check").await;
}
