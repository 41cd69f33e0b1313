//! Issue 6 over real MCP stdio, the real binary and a real DuckDB file: hidden tables and columns
//! never reach the agent by any tool or query route, a hidden column is refused exactly like an
//! unknown one, and the audit log records every call (and nothing of the results).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::{
    FORBIDDEN, PRIVATE_SCHEMA, TempDir, error_kind, make_db, serve, status, wait_until, workers_of,
};
use duckgate::mcp_client::{McpClient, envelope_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

struct Fixture {
    dir: TempDir,
    db: PathBuf,
    config: PathBuf,
}

fn fixture(tag: &str) -> Fixture {
    let dir = TempDir::new(tag);
    let db = dir.path().join("private.duckdb");
    make_db(&db, PRIVATE_SCHEMA);
    // Half the rules from the file, half from flags: both must apply.
    let config = dir.path().join("duckgate.toml");
    std::fs::write(
        &config,
        "[privacy]\nhide_columns = [\"readings.secret_note\"]\n",
    )
    .unwrap();
    Fixture { dir, db, config }
}

async fn private_server(f: &Fixture, extra: &[&str]) -> McpClient {
    let mut args = vec![
        "--config",
        f.config.to_str().unwrap(),
        "--hide-table",
        "raw_payloads",
        "--hide-column",
        "*.serial_number",
    ];
    args.extend_from_slice(extra);
    serve(&f.db, &args).await
}

fn assert_nothing_hidden(what: &str, reply: &str) {
    let lower = reply.to_lowercase();
    for word in FORBIDDEN {
        assert!(!lower.contains(word), "{what} leaks {word:?}: {reply}");
    }
}

/// Call and grep the reply. A name the agent itself wrote may be echoed back ("Table or view
/// raw_payloads does not exist"): those words are not counted for this call (that such echoes
/// read exactly like a missing name's is `a_hidden_name_is_refused_exactly_like_a_missing_one`);
/// every other hidden name and the planted values still are.
async fn call(client: &McpClient, tool: &str, args: Value) -> CallToolResult {
    let result = client.call(tool, args.clone()).await.unwrap();
    let mut reply = serde_json::to_string(&result).unwrap().to_lowercase();
    let written = args.to_string().to_lowercase();
    for word in FORBIDDEN {
        if written.contains(word) {
            reply = reply.replace(word, "<echo>");
        }
    }
    assert_nothing_hidden(&format!("{tool} {args}"), &reply);
    result
}

#[tokio::test(flavor = "multi_thread")]
async fn every_tool_and_resource_shows_nothing_hidden() {
    let f = fixture("tools");
    let client = private_server(&f, &[]).await;

    let tables = call(&client, "list_tables", json!({})).await;
    let listed = serde_json::to_string(envelope_of(&tables)).unwrap();
    assert!(
        listed.contains("devices") && listed.contains("readings"),
        "{listed}"
    );

    let devices = call(&client, "describe_table", json!({"table_name": "devices"})).await;
    assert_eq!(status(&devices), "success");
    let described = serde_json::to_string(envelope_of(&devices)).unwrap();
    assert!(described.contains("model"), "positive control: {described}");
    call(&client, "describe_table", json!({"table_name": "readings"})).await;

    for needle in [
        "serial", "note", "payload", "raw", "secret", "planted", "body",
    ] {
        call(&client, "search_schema", json!({"query": needle})).await;
    }
    let relationships = call(&client, "list_relationships", json!({})).await;
    let relationships = serde_json::to_string(envelope_of(&relationships)).unwrap();
    assert!(
        relationships.contains("device_id"),
        "the visible key stays: {relationships}"
    );
    call(&client, "server_info", json!({})).await;

    let sample = call(&client, "sample_rows", json!({"table_name": "devices"})).await;
    assert_eq!(status(&sample), "success", "{}", envelope_of(&sample));
    assert!(serde_json::to_string(&sample).unwrap().contains("Libre"));
    call(&client, "sample_rows", json!({"table_name": "readings"})).await;
    call(&client, "list_tables", json!({"schema": "main"})).await;
    for sql in [
        "SELECT model FROM devices WHERE device_id = 1",
        "SELECT r.glucose, d.model FROM readings r JOIN devices d ON r.device_id = d.device_id",
    ] {
        let plan = call(&client, "explain_query", json!({"sql": sql})).await;
        assert_eq!(status(&plan), "success", "{sql}: {}", envelope_of(&plan));
    }

    for uri in [
        "schema://snapshot",
        "schema://table/devices",
        "schema://table/readings",
    ] {
        let resource = client.read_resource(uri).await.unwrap();
        assert_nothing_hidden(uri, &serde_json::to_string(&resource).unwrap());
    }
    let hidden = client.read_resource("schema://table/raw_payloads").await;
    let unknown = client.read_resource("schema://table/raw_payloadz").await;
    assert_eq!(hidden.is_err(), unknown.is_err());
    let hidden_text = format!("{hidden:?}").replace("raw_payloads", "X");
    let unknown_text = format!("{unknown:?}").replace("raw_payloadz", "X");
    assert_eq!(hidden_text, unknown_text);
    client.close().await.unwrap();
}

/// A foreign key naming a hidden column whose own name holds a dot (a reference that once crossed
/// the worker's reply as one `table.column` string, split back at the wrong dot, showed the
/// hidden name; it now travels as its table and column). Every place that shows references and
/// keys shows nothing of it.
#[tokio::test(flavor = "multi_thread")]
async fn a_reference_to_a_hidden_column_with_a_dot_in_its_name_shows_nothing_of_it() {
    let dir = TempDir::new("privacy-dotted-reference");
    let db = dir.path().join("dotted.duckdb");
    make_db(
        &db,
        r#"CREATE TABLE devices ("serial.no" VARCHAR PRIMARY KEY, model VARCHAR);
           CREATE TABLE pumps (id INTEGER, dev VARCHAR REFERENCES devices("serial.no"));"#,
    );
    let client = serve(&db, &["--hide-column", "devices.serial.no"]).await;
    let described = client
        .call("describe_table", json!({ "table_name": "pumps" }))
        .await
        .unwrap();
    assert_eq!(status(&described), "success", "{}", envelope_of(&described));
    let columns = &envelope_of(&described)["data"]["columns"];
    assert_eq!(columns[1]["name"], "dev");
    assert_eq!(columns[1]["references"], Value::Null, "{columns}");
    for (tool, args) in [
        ("describe_table", json!({ "table_name": "pumps" })),
        ("describe_table", json!({ "table_name": "devices" })),
        ("list_relationships", json!({})),
    ] {
        let reply = serde_json::to_string(&client.call(tool, args.clone()).await.unwrap()).unwrap();
        assert!(
            !reply.contains("serial"),
            "{tool} {args} shows the hidden column: {reply}"
        );
    }
    let snapshot = client.read_resource("schema://snapshot").await.unwrap();
    let snapshot = serde_json::to_string(&snapshot).unwrap();
    assert!(
        !snapshot.contains("serial"),
        "the schema snapshot shows it: {snapshot}"
    );
    client.close().await.unwrap();
}

/// The envelope with `name` replaced, for comparing a hidden name's refusal with a missing one's.
fn shape(result: &CallToolResult, name: &str) -> String {
    serde_json::to_string(envelope_of(result))
        .unwrap()
        .replace(name, "NAME")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_name_is_refused_exactly_like_a_missing_one() {
    let f = fixture("same");
    let client = private_server(&f, &[]).await;
    let pairs: &[(&str, Value, Value, &str, &str)] = &[
        (
            "query",
            json!({"sql": "SELECT serial_number FROM devices"}),
            json!({"sql": "SELECT serial_numbr FROM devices"}),
            "serial_number",
            "serial_numbr",
        ),
        (
            "query",
            json!({"sql": "SELECT d.serial_number FROM devices d"}),
            json!({"sql": "SELECT d.serial_numbr FROM devices d"}),
            "serial_number",
            "serial_numbr",
        ),
        (
            "query",
            json!({"sql": "SELECT glucose FROM readings WHERE secret_note LIKE '%a%'"}),
            json!({"sql": "SELECT glucose FROM readings WHERE secret_notx LIKE '%a%'"}),
            "secret_note",
            "secret_notx",
        ),
        (
            "query",
            json!({"sql": "SELECT count(*) FROM raw_payloads"}),
            json!({"sql": "SELECT count(*) FROM raw_payloadz"}),
            "raw_payloads",
            "raw_payloadz",
        ),
        (
            "explain_query",
            json!({"sql": "SELECT serial_number FROM devices"}),
            json!({"sql": "SELECT serial_numbr FROM devices"}),
            "serial_number",
            "serial_numbr",
        ),
        (
            "describe_table",
            json!({"table_name": "raw_payloads"}),
            json!({"table_name": "raw_payloadz"}),
            "raw_payloads",
            "raw_payloadz",
        ),
        (
            "sample_rows",
            json!({"table_name": "raw_payloads"}),
            json!({"table_name": "raw_payloadz"}),
            "raw_payloads",
            "raw_payloadz",
        ),
        (
            "sample_rows",
            json!({"table_name": "devices", "columns": ["serial_number"]}),
            json!({"table_name": "devices", "columns": ["serial_numbr"]}),
            "serial_number",
            "serial_numbr",
        ),
    ];
    for (tool, hidden_args, missing_args, hidden_name, missing_name) in pairs {
        let hidden = client.call(tool, hidden_args.clone()).await.unwrap();
        let missing = client.call(tool, missing_args.clone()).await.unwrap();
        assert_ne!(status(&hidden), "success", "{tool} {hidden_args}");
        assert_eq!(
            shape(&hidden, hidden_name),
            shape(&missing, missing_name),
            "{tool}: {hidden_args} and {missing_args} must read the same"
        );
        // Apart from echoing the name the agent itself wrote, nothing hidden comes back.
        let reply = serde_json::to_string(&hidden)
            .unwrap()
            .replace(hidden_name, "NAME");
        assert_nothing_hidden(&format!("{tool} {hidden_args}"), &reply);
    }
    client.close().await.unwrap();
}

/// Every route to hidden data gives none of it: catalog listings and hidden names are refused
/// or unknown, and expansions (`*`, whole rows, `COLUMNS(*)`, `SUMMARIZE`, `DESCRIBE`) answer
/// with the visible columns only (`call` checks every reply for hidden names and the planted
/// token).
#[tokio::test(flavor = "multi_thread")]
async fn every_query_route_to_hidden_data_gives_none_of_it() {
    let f = fixture("routes");
    let client = private_server(&f, &[]).await;
    let routes = [
        "SELECT * FROM devices",
        "SELECT d.* FROM devices d",
        "FROM devices",
        "SELECT * EXCLUDE (model) FROM devices",
        "SELECT * REPLACE ('x' AS model) FROM devices",
        "SELECT COLUMNS(*) FROM devices",
        "SELECT COLUMNS('serial.*') FROM devices",
        "SELECT max(COLUMNS(*)) FROM readings",
        "SELECT to_json(d) FROM devices d",
        "SELECT d FROM devices d",
        "SELECT struct_pack(d.*) FROM devices d",
        "SELECT c FROM devices AS d(a, b, c)",
        "SELECT * FROM (SELECT * FROM devices)",
        "SELECT #3 FROM devices",
        "SUMMARIZE devices",
        "SUMMARIZE SELECT * FROM readings",
        "DESCRIBE devices",
        "DESCRIBE SELECT * FROM devices",
        "SHOW TABLES",
        "SHOW ALL TABLES",
        "SELECT * FROM information_schema.tables",
        "SELECT column_name FROM information_schema.columns",
        "SELECT * FROM duckdb_tables()",
        "SELECT * FROM duckdb_columns()",
        "SELECT * FROM duckdb_constraints()",
        "SELECT * FROM duckdb_indexes()",
        "SELECT sql FROM duckdb_views()",
        "SELECT * FROM raw_payloads",
        "SELECT * FROM main.raw_payloads",
        "SELECT serial_number FROM devices",
        "SELECT upper(serial_number) FROM devices",
        "SELECT model FROM devices ORDER BY serial_number",
        "SELECT secret_note FROM readings",
        "SELECT (SELECT max(body) FROM raw_payloads)",
        "SELECT list_transform([1], x -> secret_note) FROM readings",
    ];
    let mut answered = 0;
    for sql in routes {
        for tool in ["query", "explain_query"] {
            let result = call(&client, tool, json!({"sql": sql})).await;
            match status(&result) {
                "success" | "empty" => answered += 1,
                "refused" | "error" => assert!(
                    matches!(
                        error_kind(&result),
                        "policy_blocked" | "unknown_name" | "syntax_error" | "database_error"
                    ),
                    "{tool} {sql}: {}",
                    envelope_of(&result)
                ),
                other => panic!("{tool} {sql}: {other}"),
            }
        }
    }
    // The expansions are answered, with the visible columns.
    assert!(answered >= 20, "{answered}");
    let star = client
        .call("query", json!({"sql": "SELECT * FROM devices"}))
        .await
        .unwrap();
    assert_eq!(
        envelope_of(&star)["data"]["columns"],
        json!([{"name": "device_id", "type": "INTEGER"}, {"name": "model", "type": "VARCHAR"}])
    );
    // Positive controls: the visible data is there.
    let ok = call(&client, "query", json!({"sql": "SELECT d.model, r.glucose FROM devices d JOIN readings r USING (device_id) ORDER BY 2"})).await;
    assert_eq!(status(&ok), "success", "{}", envelope_of(&ok));
    let count = call(
        &client,
        "query",
        json!({"sql": "SELECT count(*) AS n FROM devices"}),
    )
    .await;
    assert_eq!(status(&count), "success", "{}", envelope_of(&count));
    client.close().await.unwrap();
}

/// The audit log's tool-call records (the client's other requests, `initialize` and
/// `tools/list`, have records of their own: `tests/it/audit_limits.rs`).
fn log_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .filter(|line: &Value| line["event"] != "request")
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_audit_log_has_one_line_per_call_and_no_result_data() {
    let f = fixture("audit");
    let log = f.dir.path().join("audit.jsonl");
    let client = private_server(&f, &["--audit-log", log.to_str().unwrap()]).await;
    client.call("list_tables", json!({})).await.unwrap();
    let rows = client
        .call(
            "query",
            json!({"sql": "SELECT model FROM devices ORDER BY 1"}),
        )
        .await
        .unwrap();
    assert!(serde_json::to_string(&rows).unwrap().contains("Libre"));
    client
        .call("query", json!({"sql": "DELETE FROM devices"}))
        .await
        .unwrap();
    client
        .call("describe_table", json!({"table_name": "nope"}))
        .await
        .unwrap();

    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    for line in &lines {
        for field in [
            "time",
            "tool",
            "arguments",
            "verdict",
            "status",
            "error_kind",
            "rows",
            "bytes",
            "duration_ms",
            "worker_exit",
        ] {
            assert!(line.get(field).is_some(), "{field} missing: {line}");
        }
        let time = line["time"].as_str().unwrap();
        assert!(
            time.len() == 24 && time.ends_with('Z') && &time[10..11] == "T",
            "{time}"
        );
        assert!(line["bytes"].as_u64().unwrap() > 0);
    }
    assert_eq!(lines[0]["tool"], "list_tables");
    assert_eq!(lines[1]["tool"], "query");
    assert_eq!(
        lines[1]["arguments"]["sql"],
        "SELECT model FROM devices ORDER BY 1"
    );
    assert_eq!(lines[1]["status"], "success");
    assert_eq!(lines[1]["rows"], 2);
    assert_eq!(lines[2]["status"], "refused");
    assert_eq!(lines[2]["verdict"], "refused");
    assert_eq!(lines[2]["error_kind"], "policy_blocked");
    assert_eq!(lines[3]["error_kind"], "unknown_name");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("Libre") && !text.contains("G7"),
        "result data in the log: {text}"
    );

    // The log is the parent's alone: no worker holds a descriptor on it.
    let server = client.server_pid().unwrap();
    // The spare that replaces the last call's worker (started once that one is reaped).
    let started = wait_until(std::time::Duration::from_secs(10), || {
        !workers_of(server).is_empty()
    })
    .await;
    assert!(started.is_some(), "a warm worker is expected");
    let workers = workers_of(server);
    let log_real = std::fs::canonicalize(&log).unwrap();
    let server_fds: Vec<PathBuf> = std::fs::read_dir(format!("/proc/{server}/fd"))
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .collect();
    assert!(
        server_fds.contains(&log_real),
        "positive control: the server holds the log"
    );
    // Descriptors actually read (stdin/stdout/stderr pipes at least), so the check cannot pass
    // just because /proc hid them.
    let mut descriptors_read = 0;
    for worker in workers {
        if let Ok(fds) = std::fs::read_dir(format!("/proc/{worker}/fd")) {
            for fd in fds.flatten() {
                if let Ok(target) = std::fs::read_link(fd.path()) {
                    descriptors_read += 1;
                    assert_ne!(target, log_real, "worker {worker} holds the audit log");
                }
            }
        }
    }
    assert!(
        descriptors_read >= 3,
        "no worker's descriptors could be inspected"
    );
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redacted_log_has_the_sql_digest_not_the_sql() {
    let f = fixture("redact");
    let log = f.dir.path().join("audit.jsonl");
    let client = private_server(
        &f,
        &["--audit-log", log.to_str().unwrap(), "--audit-redact-sql"],
    )
    .await;
    // A marker no other field of the line can contain (a bare number could turn up in a time
    // or a duration by chance).
    let sql = "SELECT glucose FROM readings WHERE 'redaction_canary' IS NOT NULL";
    client.call("query", json!({"sql": sql})).await.unwrap();
    client.close().await.unwrap();
    let lines = log_lines(&log);
    assert_eq!(lines.len(), 1);
    assert!(lines[0]["arguments"].get("sql").is_none());
    assert_eq!(
        lines[0]["arguments"]["sql_sha256"].as_str().unwrap(),
        duckgate::audit::sha256_hex(sql)
    );
    assert!(
        !std::fs::read_to_string(&log)
            .unwrap()
            .contains("redaction_canary")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unwritable_audit_log_fails_calls_closed_only_when_required() {
    let f = fixture("required");
    // /dev/full opens fine and fails every write (ENOSPC).
    let required = private_server(&f, &["--audit-log", "/dev/full", "--audit-required"]).await;
    for (tool, args) in [
        ("list_tables", json!({})),
        ("query", json!({"sql": "SELECT model FROM devices"})),
    ] {
        let result = required.call(tool, args).await.unwrap();
        assert_eq!(status(&result), "error", "{}", envelope_of(&result));
        assert_eq!(error_kind(&result), "internal_error");
        assert!(
            envelope_of(&result)["error"]["message"]
                .as_str()
                .unwrap()
                .contains("audit log")
        );
        assert!(!serde_json::to_string(&result).unwrap().contains("G7"));
    }
    required.close().await.unwrap();
    // Positive control: without --audit-required the same failure only warns.
    let lenient = private_server(&f, &["--audit-log", "/dev/full"]).await;
    let result = lenient
        .call("query", json!({"sql": "SELECT model FROM devices"}))
        .await
        .unwrap();
    assert_eq!(status(&result), "success", "{}", envelope_of(&result));
    lenient.close().await.unwrap();
}
