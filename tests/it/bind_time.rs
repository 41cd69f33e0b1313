//! What DuckDB binds is what is checked: functions that run SQL text at bind time, a name oracle
//! in literal words, the private catalog name, a `.duckdb` file named as a table, a generated
//! column over a hidden one, and random values that must differ per call. Over real MCP stdio,
//! the real binary and a real DuckDB file, under the privacy rules of `crate::support::steps` and the
//! default spilling; then each layer alone, with the layers above it switched off.

use std::path::Path;

use crate::support::steps::{PRIVATE_RULES, PrivateDb, private_db};
use crate::support::{FORBIDDEN, exe, status};
use duckgate::mcp_client::{McpClient, envelope_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// A table with a column generated from its hidden serial number, and a view stored in the
/// database that reads the hidden serial number (what the shadow catalog cannot hide).
const EXTRA: &str = r#"
CREATE TABLE pumps (
    pump_id INTEGER,
    serial_number VARCHAR,
    serial_length INTEGER GENERATED ALWAYS AS (length(serial_number)) VIRTUAL,
    model VARCHAR
);
INSERT INTO pumps (pump_id, serial_number, model) VALUES (1, 'SN-PLANTED-77', 't:slim');
CREATE VIEW device_labels AS SELECT device_id, serial_number AS label FROM devices;
"#;

fn fixture(tag: &str) -> PrivateDb {
    private_db(tag, EXTRA)
}

/// `duckgate serve` under the privacy rules, with `env` (the test-only layer switch) and the
/// working directory `cwd`.
async fn server(db: &Path, env: Option<&str>, cwd: Option<&Path>) -> McpClient {
    let mut command = tokio::process::Command::new(exe());
    command.arg("serve").arg("--db").arg(db).args(PRIVATE_RULES);
    if let Some(layers) = env {
        command.env(duckgate::sandbox::bypass::ENV_VAR, layers);
    }
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    McpClient::spawn_command(command, std::process::Stdio::null())
        .await
        .expect("duckgate serve starts")
}

async fn query(client: &McpClient, sql: &str) -> CallToolResult {
    client.call("query", json!({ "sql": sql })).await.unwrap()
}

/// The whole reply as the agent sees it, lower case.
fn reply_text(result: &CallToolResult) -> String {
    serde_json::to_string(result).unwrap().to_lowercase()
}

fn assert_refused(what: &str, result: &CallToolResult) {
    assert_refused_echoing(what, result, &[]);
}

/// [`assert_refused`], where the reply may echo the names the query itself wrote; apart from
/// those, no reply may hold a hidden name, a planted value or the private catalog's name.
fn assert_refused_echoing(what: &str, result: &CallToolResult, written: &[&str]) {
    assert_ne!(status(result), "success", "{what}: {}", envelope_of(result));
    assert_ne!(status(result), "empty", "{what}: {}", envelope_of(result));
    assert_eq!(result.is_error, Some(true), "{what}");
    let mut reply = reply_text(result);
    for word in written {
        reply = reply.replace(&word.to_lowercase(), "<written>");
    }
    for word in FORBIDDEN.iter().chain(&["duckgate_private", "sn-planted"]) {
        assert!(!reply.contains(word), "{what} leaks {word:?}: {reply}");
    }
}

/// The SQL-text routes of the white-box round: a function that parses, binds or plans SQL given
/// as a string, the settings it folded, and the file sweep through the CSV sniffer's errors.
fn sql_text_routes(db: &Path) -> Vec<String> {
    let db = db.display().to_string().replace('\'', "''");
    vec![
        "SELECT json_serialize_plan('SELECT current_setting(''allowed_paths'') AS a', optimize := true)".into(),
        "SELECT json_serialize_plan('SELECT id FROM devices')".into(),
        format!(
            "SELECT json_serialize_plan('SELECT * FROM read_csv(''{db}'', max_line_size=64, \
             delim=''\\x01'', header=false, skip=' || k || ')') FROM range(2200, 2400) t(k)"
        ),
        format!("SELECT json_serialize_plan('SELECT * FROM read_duckdb(''{db}'')')"),
        "SELECT json_serialize_sql('SELECT 1')".into(),
        "SELECT json_deserialize_sql(json_serialize_sql('SELECT 1'))".into(),
        "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))".into(),
        "SELECT * FROM query('SELECT * FROM raw_payloads')".into(),
        "SELECT * FROM query_table('raw_payloads')".into(),
        "SELECT current_setting('allowed_paths')".into(),
        "SELECT make_type('VARCHAR')".into(),
        "SELECT setval('s', 1)".into(),
        format!("SELECT * FROM read_csv('{db}', max_line_size=64, delim='\\x01', header=false)"),
        format!("SELECT * FROM read_blob('{db}')"),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn sql_text_functions_and_the_raw_line_sweep_are_refused_and_read_nothing() {
    let f = fixture("sqltext");
    let client = server(&f.db, None, None).await;
    for sql in sql_text_routes(&f.db) {
        let result = query(&client, &sql).await;
        assert_refused(&sql, &result);
    }
    // The server still answers.
    let ok = query(&client, "SELECT count(*) AS n FROM devices").await;
    assert_eq!(envelope_of(&ok)["data"]["rows"], json!([[2]]));
    client.close().await.unwrap();
}

/// A query's own string literals are not evidence of what it reads: a hidden column's name
/// written as a value gets the very reply a made-up name gets, through `query`,
/// `explain_query` and `plot`.
#[tokio::test(flavor = "multi_thread")]
async fn the_literal_word_oracle_answers_hidden_and_made_up_names_alike() {
    let f = fixture("words");
    let client = server(&f.db, None, None).await;
    let pairs = [
        ("serial_number", "serial_numbez"),
        ("secret_note", "secret_notf"),
        ("raw_payloads", "raw_payloadz"),
    ];
    for (hidden, made_up) in pairs {
        for (tool, template) in [
            (
                "query",
                "SELECT count(*) AS n FROM devices WHERE model = 'NAME'",
            ),
            (
                "query",
                "SELECT count(*) AS n FROM readings WHERE glucose::VARCHAR IN ('x', 'NAME', 'y')",
            ),
            (
                "query",
                "SELECT device_id FROM device_labels WHERE device_id::VARCHAR = 'NAME'",
            ),
            (
                "explain_query",
                "SELECT count(*) FROM devices WHERE model = 'NAME'",
            ),
        ] {
            let a = client
                .call(tool, json!({ "sql": template.replace("NAME", hidden) }))
                .await
                .unwrap();
            let b = client
                .call(tool, json!({ "sql": template.replace("NAME", made_up) }))
                .await
                .unwrap();
            assert_eq!(status(&a), status(&b), "{tool} {template} with {hidden}");
            assert_eq!(
                without_durations(envelope_of(&a))
                    .to_string()
                    .replace(hidden, "NAME"),
                without_durations(envelope_of(&b))
                    .to_string()
                    .replace(made_up, "NAME"),
                "{tool} {template}"
            );
        }
        let plot = |name: &str| {
            json!({
                "sql": format!("SELECT glucose AS x, glucose AS y FROM readings WHERE glucose::VARCHAR <> '{name}'"),
                "kind": "scatter"
            })
        };
        let a = client.call("plot", plot(hidden)).await.unwrap();
        let b = client.call("plot", plot(made_up)).await.unwrap();
        assert_eq!(status(&a), "success", "{}", envelope_of(&a));
        assert_eq!(status(&a), status(&b));
    }
    client.close().await.unwrap();
}

/// A reply's envelope without its per-run figures (durations).
fn without_durations(value: &Value) -> Value {
    let mut value = value.clone();
    crate::support::strip_durations(&mut value);
    value
}

/// DuckDB 2.0 reads `name.duckdb` (and `.db`, `.ddb`) as a database file when no table has that
/// name: from the database's own folder that lists every table, hidden ones too.
#[tokio::test(flavor = "multi_thread")]
async fn a_database_file_named_as_a_table_is_refused() {
    let f = fixture("replacement");
    let folder = f.db.parent().unwrap().to_path_buf();
    std::fs::copy(&f.db, folder.join("copy.db")).unwrap();
    let client = server(&f.db, None, Some(&folder)).await;
    for sql in [
        "SELECT _w: 0, * FROM private.duckdb",
        "SELECT * FROM private.duckdb",
        "SELECT * FROM copy.db",
        "SELECT * FROM 'private.duckdb'",
        "DESCRIBE private.duckdb",
    ] {
        let result = query(&client, sql).await;
        assert_refused(sql, &result);
    }
    client.close().await.unwrap();
}

/// `pumps.serial_length` is computed from the hidden serial number: neither it nor its
/// expression shows anywhere, and `SELECT *` answers with the other columns.
#[tokio::test(flavor = "multi_thread")]
async fn a_column_generated_from_a_hidden_one_is_hidden_with_its_expression() {
    let f = fixture("generated");
    let client = server(&f.db, None, None).await;
    let described = client
        .call("describe_table", json!({ "table_name": "pumps" }))
        .await
        .unwrap();
    assert_eq!(status(&described), "success", "{}", envelope_of(&described));
    let text = reply_text(&described);
    assert!(!text.contains("serial"), "{text}");
    assert!(text.contains("model"), "{text}");
    let snapshot = client.read_resource("schema://snapshot").await.unwrap();
    let snapshot = serde_json::to_string(&snapshot).unwrap().to_lowercase();
    assert!(!snapshot.contains("serial"), "{snapshot}");
    assert!(!snapshot.contains("default_reads"), "{snapshot}");
    let star = query(&client, "SELECT * FROM pumps").await;
    assert_eq!(status(&star), "success", "{}", envelope_of(&star));
    assert_eq!(envelope_of(&star)["data"]["rows"], json!([[1, "t:slim"]]));
    for (sql, written) in [
        ("SELECT serial_length FROM pumps", "serial_length"),
        ("SELECT length(serial_number) FROM pumps", "serial_number"),
    ] {
        let result = query(&client, sql).await;
        assert_refused_echoing(sql, &result, &[written]);
    }
    client.close().await.unwrap();
}

/// `uuid()`, `random()` and an unseeded sample draw new values in every call, as they do
/// in-process: workers forked from one template must not replay its generator.
#[tokio::test(flavor = "multi_thread")]
async fn random_values_differ_between_calls() {
    let f = fixture("random");
    let client = server(&f.db, None, None).await;
    let sql = "SELECT uuid()::VARCHAR AS u, random() AS r, gen_random_uuid()::VARCHAR AS g";
    let mut seen = Vec::new();
    for _ in 0..4 {
        let result = query(&client, sql).await;
        assert_eq!(status(&result), "success", "{}", envelope_of(&result));
        seen.push(envelope_of(&result)["data"]["rows"][0].clone());
    }
    for (i, a) in seen.iter().enumerate() {
        for b in &seen[i + 1..] {
            for column in 0..3 {
                assert_ne!(a[column], b[column], "column {column} repeated: {seen:?}");
            }
        }
    }
    client.close().await.unwrap();
}

/// The private name is drawn per call: with every SQL check off (so the catalog can be read at
/// all), two calls show two names, each backwards to get past the reply's scrubbing. With the
/// checks on, a name learnt in one call reaches nothing in the next.
#[tokio::test(flavor = "multi_thread")]
async fn the_private_catalog_name_is_fresh_in_every_call_and_useless_once_known() {
    let f = fixture("alias");
    let unchecked = server(&f.db, Some("validator,worker_walk,plan_check"), None).await;
    let sql = "SELECT reverse(database_name) AS r FROM duckdb_databases() \
               WHERE database_name LIKE 'duckgate_private_%'";
    let mut names = Vec::new();
    for _ in 0..3 {
        let result = query(&unchecked, sql).await;
        assert_eq!(status(&result), "success", "{}", envelope_of(&result));
        let reversed = envelope_of(&result)["data"]["rows"][0][0]
            .as_str()
            .unwrap()
            .to_owned();
        names.push(reversed.chars().rev().collect::<String>());
    }
    assert_ne!(names[0], names[1], "{names:?}");
    assert_ne!(names[1], names[2], "{names:?}");
    unchecked.close().await.unwrap();

    let client = server(&f.db, None, None).await;
    for name in &names {
        for sql in [
            format!("SELECT * FROM {name}.main.raw_payloads"),
            format!("SELECT model FROM {name}.main.devices"),
            format!("SELECT enum_range(NULL::{name}.main.mood)"),
            format!("SELECT {name}.main.upper('x')"),
        ] {
            let result = query(&client, &sql).await;
            assert_ne!(
                status(&result),
                "success",
                "{sql}: {}",
                envelope_of(&result)
            );
            // The agent's own words may come back; nothing else of the catalog may.
            assert_refused_echoing(&sql, &result, &[name.as_str(), "raw_payloads"]);
        }
    }
    client.close().await.unwrap();
}

/// With the parent's validator and the worker's walk off, the plan check alone refuses the
/// SQL-text functions (by what DuckDB bound) and answers the literal-word oracle alike.
#[tokio::test(flavor = "multi_thread")]
async fn the_plan_check_alone_refuses_bind_time_sql_and_has_no_word_oracle() {
    let f = fixture("plan-alone");
    let client = server(&f.db, Some("validator,worker_walk"), None).await;
    for sql in [
        "SELECT json_serialize_plan('SELECT id FROM devices')",
        "SELECT json_serialize_plan('SELECT current_setting(''allowed_paths'') AS a', optimize := true)",
        "SELECT current_setting('allowed_paths')",
        "SELECT json_serialize_sql('SELECT 1')",
        // DuckDB's binder runs these calls while it binds (their results are cast into
        // `lower`'s argument), so no plan shows them: the check refuses them by what the
        // query writes, before binding.
        "SELECT lower(json_serialize_plan('SELECT id FROM devices'))",
        "SELECT lower(current_setting('allowed_paths')::VARCHAR)",
        "SELECT label FROM device_labels",
    ] {
        let result = query(&client, sql).await;
        assert_refused(sql, &result);
    }
    let a = query(
        &client,
        "SELECT count(*) AS n FROM devices WHERE model = 'serial_number'",
    )
    .await;
    let b = query(
        &client,
        "SELECT count(*) AS n FROM devices WHERE model = 'serial_numbez'",
    )
    .await;
    assert_eq!(status(&a), "success", "{}", envelope_of(&a));
    assert_eq!(
        envelope_of(&a)["data"]["rows"],
        envelope_of(&b)["data"]["rows"]
    );
    client.close().await.unwrap();
}

/// With all three SQL checks off, the privacy rules alone keep the database file unreadable
/// from SQL by its path, with spilling at its default: DuckDB's file system is off.
#[tokio::test(flavor = "multi_thread")]
async fn under_privacy_rules_sql_cannot_open_the_database_file_even_with_every_sql_check_off() {
    let f = fixture("file-alone");
    let client = server(&f.db, Some("validator,worker_walk,plan_check"), None).await;
    let db = f.db.display().to_string();
    for sql in [
        format!(
            "SELECT * FROM read_csv('{db}', max_line_size=64, delim='\\x01', header=false, skip=2200)"
        ),
        format!("SELECT * FROM read_blob('{db}')"),
        format!("SELECT * FROM read_text('{db}.wal')"),
        format!("SELECT * FROM read_duckdb('{db}', table_name='raw_payloads')"),
        format!("SELECT * FROM '{db}'"),
    ] {
        let result = query(&client, &sql).await;
        assert_refused(&sql, &result);
    }
    // The database itself is still read through the handle DuckDB holds.
    let ok = query(&client, "SELECT count(*) AS n FROM readings").await;
    assert_eq!(envelope_of(&ok)["data"]["rows"], json!([[2]]));
    client.close().await.unwrap();
}
