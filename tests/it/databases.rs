//! Several databases in one server (`--db NAME=PATH`, `[databases]` in `--config`), through the
//! real binary over MCP stdio and its command line: both listed, described, searched and joined
//! in one query; the default's names unchanged; privacy rules with a database's name hiding in
//! that database only, indistinguishable by two databases whose hidden data differ; a second
//! database missing, locked or not DuckDB refused at start-up, as are names DuckDB keeps and
//! names or files declared twice; and, with each check of the SQL switched off in turn, the
//! kernel still denying every file no database is.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{
    OutputSchemas, TempDir, assert_failed, duckgate_cli, error_kind, exe, field_pairs, make_db,
    outcome, run_cli, status, strip_durations,
};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// The default database, `cgm`.
pub(crate) const CGM: &str = "
CREATE TABLE readings (ts TIMESTAMP, glucose INTEGER, device_id INTEGER);
INSERT INTO readings VALUES ('2026-03-01 08:00', 110, 1), ('2026-03-01 12:00', 185, 1),
                            ('2026-03-01 18:00', 95, 1);
CREATE TABLE devices (device_id INTEGER PRIMARY KEY, model VARCHAR, serial_number VARCHAR);
INSERT INTO devices VALUES (1, 'G7', 'SN-CGM-0001');
COMMENT ON TABLE readings IS 'CGM readings in mg/dL';
";

/// The second database, `pump`: a table of the same name as the default's (`devices`), and
/// one only it has.
pub(crate) const PUMP: &str = "
CREATE TABLE devices (device_id INTEGER PRIMARY KEY, model VARCHAR, serial_number VARCHAR);
INSERT INTO devices VALUES (7, 't:slim X2', 'SN-PUMP-0007');
CREATE TABLE boluses (ts TIMESTAMP, units DECIMAL(5, 2),
                      device_id INTEGER REFERENCES devices (device_id), note VARCHAR);
INSERT INTO boluses VALUES ('2026-03-01 08:00', 4.5, 7, 'breakfast'),
                           ('2026-03-01 12:00', 6.0, 7, 'lunch');
COMMENT ON COLUMN boluses.units IS 'insulin units delivered';
";

/// Two databases in one folder: `cgm.duckdb` (declared by its path, so named `cgm`) and
/// `pump-2026.duckdb` (declared as `pump`).
pub(crate) struct Pair {
    pub(crate) dir: TempDir,
    pub(crate) cgm: PathBuf,
    pub(crate) pump: PathBuf,
}

impl Pair {
    pub(crate) fn new(tag: &str) -> Pair {
        Pair::with(tag, CGM, PUMP)
    }

    pub(crate) fn with(tag: &str, cgm_sql: &str, pump_sql: &str) -> Pair {
        let dir = TempDir::in_system_temp(&format!("dbs-{tag}"));
        let cgm = dir.path().join("cgm.duckdb");
        let pump = dir.path().join("pump-2026.duckdb");
        make_db(&cgm, cgm_sql);
        make_db(&pump, pump_sql);
        Pair { dir, cgm, pump }
    }

    /// `--db CGM --db pump=PUMP`.
    pub(crate) fn flags(&self) -> Vec<String> {
        vec![
            "--db".into(),
            self.cgm.display().to_string(),
            "--db".into(),
            format!("pump={}", self.pump.display()),
        ]
    }
}

/// `duckgate serve` with `args`, `bypass` switching layers off (empty: none).
pub(crate) async fn serve(args: &[String], bypass: &str) -> McpClient {
    let mut command = tokio::process::Command::new(exe());
    command.arg("serve").args(args);
    if bypass.is_empty() {
        command.env_remove(duckgate::sandbox::bypass::ENV_VAR);
    } else {
        command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
    }
    McpClient::spawn_command(command, std::process::Stdio::null())
        .await
        .expect("duckgate serve initialises")
}

pub(crate) async fn call(client: &McpClient, tool: &str, args: Value) -> CallToolResult {
    client.call(tool, args).await.unwrap()
}

pub(crate) async fn rows(client: &McpClient, sql: &str) -> Value {
    let result = call(client, "query", json!({ "sql": sql })).await;
    assert_eq!(
        status(&result),
        "success",
        "{sql}: {}",
        envelope_of(&result)
    );
    envelope_of(&result)["data"]["rows"].clone()
}

/// Every reply must be free of the folder the databases are in: no reply carries a host path.
pub(crate) fn assert_no_host_path(what: &str, reply: &impl serde::Serialize, dir: &Path) {
    let text = serde_json::to_string(reply).unwrap();
    let folder = dir.display().to_string();
    assert!(!text.contains(&folder), "{what} shows a host path: {text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_databases_are_listed_described_searched_and_joined_in_one_query() {
    let pair = Pair::new("both");
    let client = serve(&pair.flags(), "").await;
    let schemas = OutputSchemas::fetch(&client).await;

    // Listed: every relation with its database; the default's named as before.
    let listed = call(&client, "list_tables", json!({})).await;
    schemas.check("list_tables", &listed);
    assert_eq!(
        field_pairs(&envelope_of(&listed)["data"]["tables"], "database", "name"),
        [
            ("cgm", "devices"),
            ("cgm", "readings"),
            ("pump", "boluses"),
            ("pump", "devices")
        ]
    );
    let text = text_of(&listed);
    assert!(text.contains("Databases: cgm (default"), "{text}");
    assert!(text.contains("- main.readings (table"), "{text}");
    assert!(text.contains("- pump.main.boluses (table"), "{text}");
    let only_pump = call(&client, "list_tables", json!({ "database": "PUMP" })).await;
    schemas.check("list_tables", &only_pump);
    assert_eq!(
        envelope_of(&only_pump)["data"]["tables"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let unknown = call(&client, "list_tables", json!({ "database": "pmup" })).await;
    let envelope = assert_failed(&unknown, "error", "unknown_name");
    assert_eq!(
        envelope["error"]["recovery"]["fuzzy_matches"],
        json!(["pump"]),
        "{envelope}"
    );

    // Described: by `database.table`, `database.schema.table` or the database argument; a
    // name both databases have is the default's unless the database is named.
    for args in [
        json!({ "table_name": "pump.boluses" }),
        json!({ "table_name": "pump.main.boluses" }),
        json!({ "table_name": "boluses", "database": "pump" }),
        json!({ "table_name": "boluses" }),
    ] {
        let described = call(&client, "describe_table", args.clone()).await;
        schemas.check("describe_table", &described);
        let data = &envelope_of(&described)["data"];
        assert_eq!(data["database"], "pump", "{args}: {data}");
        assert_eq!(data["name"], "boluses", "{args}");
        assert_eq!(data["foreign_keys"][0]["referenced_table"], "devices");
        assert!(
            text_of(&described).starts_with("pump.main.boluses (table"),
            "{}",
            text_of(&described)
        );
    }
    let default_devices = call(
        &client,
        "describe_table",
        json!({ "table_name": "devices" }),
    )
    .await;
    assert_eq!(envelope_of(&default_devices)["data"]["database"], "cgm");
    let pump_devices = call(
        &client,
        "describe_table",
        json!({ "table_name": "devices", "database": "pump" }),
    )
    .await;
    assert_eq!(envelope_of(&pump_devices)["data"]["database"], "pump");
    assert_eq!(
        envelope_of(&pump_devices)["data"]["referenced_by"][0]["table"],
        "boluses"
    );
    // "Did you mean" spans both databases, each name as SQL must write it.
    let typo = call(
        &client,
        "describe_table",
        json!({ "table_name": "bolusses" }),
    )
    .await;
    let envelope = assert_failed(&typo, "error", "unknown_name");
    assert_eq!(
        envelope["error"]["recovery"]["fuzzy_matches"],
        json!(["pump.main.boluses"]),
        "{envelope}"
    );

    // Searched: a column of the second database, with its database.
    let found = call(&client, "search_schema", json!({ "query": "insulin" })).await;
    schemas.check("search_schema", &found);
    let first = &envelope_of(&found)["data"]["matches"][0];
    assert_eq!(first["database"], "pump", "{first}");
    assert_eq!(first["column"], "units", "{first}");
    assert!(
        text_of(&found).contains("column pump.boluses.units"),
        "{}",
        text_of(&found)
    );

    // Joined in one query; the default's tables need no prefix, as before.
    let joined = rows(
        &client,
        "SELECT r.glucose, b.units FROM readings r JOIN pump.boluses b USING (ts) ORDER BY ts",
    )
    .await;
    assert_eq!(joined, json!([[110, "4.50"], [185, "6.00"]]));
    for sql in [
        "SELECT count(*) FROM readings",
        "SELECT count(*) FROM main.readings",
        "SELECT count(*) FROM cgm.main.readings",
        "SELECT count(*) FROM cgm.readings",
    ] {
        assert_eq!(rows(&client, sql).await, json!([[3]]), "{sql}");
    }
    assert_eq!(
        rows(
            &client,
            "SELECT model FROM pump.devices UNION ALL SELECT model FROM devices ORDER BY 1"
        )
        .await,
        json!([["G7"], ["t:slim X2"]])
    );
    // The agent's misspelling of the second database's table: DuckDB's own error, with a
    // suggestion from the catalog of both.
    let wrong = call(
        &client,
        "query",
        json!({ "sql": "SELECT * FROM pump.boluss" }),
    )
    .await;
    assert_eq!(
        error_kind(&wrong),
        "unknown_name",
        "{}",
        envelope_of(&wrong)
    );
    let matches = envelope_of(&wrong)["error"]["recovery"]["fuzzy_matches"].to_string();
    assert!(
        matches.contains("pump.main.boluses"),
        "{}",
        envelope_of(&wrong)
    );

    // Sampled: the SQL names the second database's table with its database.
    let sampled = call(
        &client,
        "sample_rows",
        json!({ "table_name": "pump.boluses" }),
    )
    .await;
    schemas.check("sample_rows", &sampled);
    assert_eq!(status(&sampled), "success", "{}", envelope_of(&sampled));
    assert_eq!(
        envelope_of(&sampled)["data"]["sql"],
        "SELECT \"ts\", \"units\", \"device_id\", \"note\" FROM \"pump\".\"main\".\"boluses\" LIMIT 10"
    );

    // Relationships, plans and resources.
    let keys = call(&client, "list_relationships", json!({})).await;
    schemas.check("list_relationships", &keys);
    assert_eq!(
        envelope_of(&keys)["data"]["foreign_keys"][0]["database"],
        "pump"
    );
    assert!(
        text_of(&keys).contains("pump: boluses(device_id) → devices(device_id)"),
        "{}",
        text_of(&keys)
    );
    let plan = call(
        &client,
        "explain_query",
        json!({ "sql": "SELECT sum(units) FROM pump.boluses" }),
    )
    .await;
    assert_eq!(status(&plan), "success", "{}", envelope_of(&plan));
    let resource = client
        .read_resource("schema://table/pump.main.boluses")
        .await
        .unwrap();
    let text = serde_json::to_string(&resource).unwrap();
    assert!(text.contains("insulin units delivered"), "{text}");
    let snapshot = client.read_resource("schema://snapshot").await.unwrap();
    let text = serde_json::to_string(&snapshot).unwrap();
    assert!(
        text.contains(r#"\"databases\":[\"cgm\",\"pump\"]"#),
        "{text}"
    );

    // server_info: the databases by name, what a worker is granted of each, no host path.
    let info = call(&client, "server_info", json!({})).await;
    schemas.check("server_info", &info);
    assert_eq!(
        envelope_of(&info)["data"]["databases"],
        json!([
            { "name": "cgm", "default": true, "granted": ["file"] },
            { "name": "pump", "default": false, "granted": ["file"] }
        ])
    );
    let settings = envelope_of(&info)["data"]["posture"]["duckdb_settings"].to_string();
    assert!(
        settings.contains("<database cgm>") && settings.contains("<database pump>.wal"),
        "{settings}"
    );
    assert!(
        text_of(&info).contains("serving cgm (default), pump"),
        "{}",
        text_of(&info)
    );
    for (what, reply) in [
        ("list_tables", &listed),
        ("describe_table", &pump_devices),
        ("server_info", &info),
        ("query error", &wrong),
    ] {
        assert_no_host_path(what, reply, pair.dir.path());
    }
    client.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_config_files_databases_come_in_their_order_and_the_first_is_the_default() {
    let pair = Pair::new("config");
    let config = pair.dir.path().join("duckgate.toml");
    std::fs::write(
        &config,
        format!(
            "[databases]\npump = \"{}\"\ncgm = \"{}\"\n",
            pair.pump.display(),
            pair.cgm.display()
        ),
    )
    .unwrap();
    let client = serve(&["--config".into(), config.display().to_string()], "").await;
    // `pump` is the default now: its tables need no prefix, and the other's do.
    assert_eq!(
        rows(&client, "SELECT count(*) FROM boluses").await,
        json!([[2]])
    );
    assert_eq!(
        rows(&client, "SELECT count(*) FROM cgm.main.readings").await,
        json!([[3]])
    );
    let info = call(&client, "server_info", json!({})).await;
    assert_eq!(envelope_of(&info)["data"]["databases"][0]["name"], "pump");
    client.close().await.unwrap();
}

/// Rules for the second database only: its table, its serial numbers and its notes.
fn pump_rules() -> Vec<String> {
    [
        "--hide-table",
        "pump.raw_uploads",
        "--hide-column",
        "pump.*.serial_number",
        "--hide-column",
        "pump.boluses.note",
    ]
    .map(String::from)
    .to_vec()
}

/// [`PUMP`] with a table to hide.
const PUMP_WITH_UPLOADS: &str = "
CREATE TABLE raw_uploads (id INTEGER, body VARCHAR);
INSERT INTO raw_uploads VALUES (1, 'PLANTED upload');
";

#[tokio::test(flavor = "multi_thread")]
async fn a_rule_with_a_database_name_hides_in_that_database_only() {
    let pair = Pair::with("private", CGM, &format!("{PUMP}{PUMP_WITH_UPLOADS}"));
    let mut args = pair.flags();
    args.extend(pump_rules());
    let client = serve(&args, "").await;
    // The default's serial numbers stay; the pump's are gone, like a column never made.
    assert_eq!(
        rows(&client, "SELECT serial_number FROM devices").await,
        json!([["SN-CGM-0001"]])
    );
    for sql in [
        "SELECT serial_number FROM pump.devices",
        "SELECT note FROM pump.boluses",
        "SELECT * FROM pump.raw_uploads",
        "SELECT count(*) FROM pump.main.raw_uploads",
    ] {
        let result = call(&client, "query", json!({ "sql": sql })).await;
        assert_eq!(
            error_kind(&result),
            "unknown_name",
            "{sql}: {}",
            envelope_of(&result)
        );
    }
    assert_eq!(
        rows(&client, "SELECT * FROM pump.devices").await,
        json!([[7, "t:slim X2"]])
    );
    let listed = call(&client, "list_tables", json!({ "database": "pump" })).await;
    let names: Vec<&str> = envelope_of(&listed)["data"]["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["boluses", "devices"]);
    let reply = serde_json::to_string(&listed).unwrap().to_lowercase();
    assert!(
        !reply.contains("raw_uploads") && !reply.contains("planted"),
        "{reply}"
    );
    let described = call(
        &client,
        "describe_table",
        json!({ "table_name": "devices", "database": "pump" }),
    )
    .await;
    let columns: Vec<&str> = envelope_of(&described)["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(columns, ["device_id", "model"]);
    client.close().await.unwrap();
}

/// The second database as [`PUMP`] with its hidden data changed, its visible data kept.
fn pump_b() -> String {
    format!("{PUMP}{PUMP_WITH_UPLOADS}")
        .replace("SN-PUMP-0007", "SN-PUMP-OTHER-771")
        .replace("'breakfast'", "'a much longer note about breakfast'")
        .replace("PLANTED upload", "PLANTED other upload")
        + "INSERT INTO raw_uploads SELECT i, 'PLANTED row ' || i FROM range(2, 40) t(i);
           CREATE TABLE pump_meta (id INTEGER, tier ENUM('PLANTED_GOLD'),
                                   serial_number VARCHAR DEFAULT 'PLANTED default');"
}

/// [`PUMP`] with the same hidden table [`pump_b`] has, and its own hidden values.
fn pump_a() -> String {
    format!("{PUMP}{PUMP_WITH_UPLOADS}")
        + "CREATE TABLE pump_meta (id INTEGER, tier ENUM('PLANTED_GOLD'), serial_number VARCHAR);"
}

/// Each of `sqls` as a `query` call and as an `explain_query` call.
pub(crate) fn queried_and_explained<'s>(
    sqls: impl IntoIterator<Item = &'s str>,
) -> Vec<(&'static str, Value)> {
    sqls.into_iter()
        .flat_map(|sql| {
            [
                ("query", json!({ "sql": sql })),
                ("explain_query", json!({ "sql": sql })),
            ]
        })
        .collect()
}

/// A reply as bytes, durations taken out.
pub(crate) fn reply_bytes(result: &CallToolResult) -> String {
    let mut value = serde_json::to_value(result).unwrap();
    strip_durations(&mut value);
    value.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn two_second_databases_whose_hidden_data_differ_get_byte_identical_replies() {
    let a = Pair::with("oracle-a", CGM, &pump_a());
    let b = Pair::with("oracle-b", CGM, &pump_b());
    let mut rules = pump_rules();
    rules.extend(["--hide-column".into(), "pump.pump_meta.tier".into()]);
    let with = |pair: &Pair| {
        let mut args = pair.flags();
        args.extend(rules.clone());
        args
    };
    let (client_a, client_b) = (serve(&with(&a), "").await, serve(&with(&b), "").await);
    let mut probes = queried_and_explained([
        "SELECT * FROM pump.devices ORDER BY device_id",
        "SELECT d FROM pump.devices d",
        "SELECT * FROM pump.boluses ORDER BY ts",
        "SELECT serial_number FROM pump.devices",
        "SELECT serial_numbez FROM pump.devices",
        "SELECT note FROM pump.boluses",
        "SELECT * FROM pump.raw_uploads",
        "SELECT * FROM pump.raw_uploadz",
        "SELECT count(*) FROM pump.raw_uploads",
        "SELECT tier FROM pump.pump_meta",
        "SELECT * FROM pump.pump_meta",
        "DESCRIBE pump.devices",
        "DESCRIBE pump.pump_meta",
        "SUMMARIZE pump.boluses",
        "SELECT r.glucose, b.units FROM readings r JOIN pump.boluses b USING (ts) ORDER BY ts",
        "SELECT current_query_id() AS q",
        "SELECT * FROM duckdb_tables()",
    ]);
    probes.extend([
        ("list_tables", json!({})),
        ("list_tables", json!({ "database": "pump" })),
        ("list_relationships", json!({})),
        ("describe_table", json!({ "table_name": "pump.devices" })),
        (
            "describe_table",
            json!({ "table_name": "pump_meta", "database": "pump" }),
        ),
        (
            "describe_table",
            json!({ "table_name": "pump.raw_uploads" }),
        ),
        ("search_schema", json!({ "query": "serial" })),
        ("search_schema", json!({ "query": "note" })),
        ("search_schema", json!({ "query": "upload" })),
        ("sample_rows", json!({ "table_name": "pump.devices" })),
        ("sample_rows", json!({ "table_name": "pump.pump_meta" })),
    ]);
    let mut compared = 0;
    for (tool, args) in probes {
        let reply_a = call(&client_a, tool, args.clone()).await;
        let reply_b = call(&client_b, tool, args.clone()).await;
        assert_eq!(
            reply_bytes(&reply_a),
            reply_bytes(&reply_b),
            "{tool} {args} tells the two second databases apart"
        );
        let reply = reply_bytes(&reply_a).to_lowercase();
        assert!(!reply.contains("planted"), "{tool} {args}: {reply}");
        assert_no_host_path(tool, &reply_a, a.dir.path());
        compared += 1;
    }
    for uri in [
        "schema://snapshot",
        "schema://table/pump.main.devices",
        "schema://table/pump.main.pump_meta",
    ] {
        let read_a = client_a
            .read_resource(uri)
            .await
            .map(|r| serde_json::to_string(&r).unwrap());
        let read_b = client_b
            .read_resource(uri)
            .await
            .map(|r| serde_json::to_string(&r).unwrap());
        assert_eq!(read_a, read_b, "{uri} tells the two second databases apart");
        compared += 1;
    }
    assert!(compared >= 40, "{compared}");
    client_a.close().await.unwrap();
    client_b.close().await.unwrap();
}

/// `duckgate query ARGS… SQL` to completion, `bypass` switching layers off (empty: none).
pub(crate) fn query(args: &[String], sql: &str, bypass: &str) -> Output {
    let mut command: Command = duckgate_cli(["query"]);
    command.args(args).arg(sql);
    if bypass.is_empty() {
        command.env_remove(duckgate::sandbox::bypass::ENV_VAR);
    } else {
        command.env(duckgate::sandbox::bypass::ENV_VAR, bypass);
    }
    run_cli(command, None)
}

#[test]
fn a_second_database_that_is_missing_locked_or_not_duckdb_is_refused_at_start_up() {
    let pair = Pair::new("startup");
    let control = query(&pair.flags(), "SELECT count(*) FROM pump.boluses", "");
    let (code, out, err) = outcome(&control);
    assert_eq!(code, 0, "{out}{err}");

    let missing = pair.dir.path().join("typo.duckdb");
    let args = [
        "--db".to_owned(),
        pair.cgm.display().to_string(),
        "--db".into(),
        format!("pump={}", missing.display()),
    ];
    let (code, out, err) = outcome(&query(&args, "SELECT 1", ""));
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("\"pump\"") && err.contains("does not exist"),
        "{err}"
    );

    let not_duckdb = pair.dir.path().join("notes.duckdb");
    std::fs::write(&not_duckdb, "not a database at all\n".repeat(300)).unwrap();
    let args = [
        "--db".to_owned(),
        pair.cgm.display().to_string(),
        "--db".into(),
        format!("notes={}", not_duckdb.display()),
    ];
    let (code, out, err) = outcome(&query(&args, "SELECT 1", ""));
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        err.contains("\"notes\"") && err.contains("not a DuckDB database"),
        "{err}"
    );

    // A writer holds the second database: refused at start-up, as `serve` too.
    let writer = duckdb::Connection::open(&pair.pump).unwrap();
    writer
        .execute_batch("INSERT INTO devices VALUES (8, 'x', 'y')")
        .unwrap();
    let (code, out, err) = outcome(&query(&pair.flags(), "SELECT 1", ""));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("\"pump\"") && err.contains("locked"), "{err}");
    let mut serve = duckgate_cli(["serve"]);
    serve.args(pair.flags());
    let (code, out, err) = outcome(&run_cli(serve, None));
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("\"pump\"") && err.contains("locked"), "{err}");
    assert!(out.is_empty(), "stdout belongs to the protocol: {out}");
    writer.close().map_err(|(_, e)| e).unwrap();
    let (code, out, err) = outcome(&query(
        &pair.flags(),
        "SELECT count(*) FROM pump.devices",
        "",
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("2"), "{out}");
}

#[test]
fn names_duckdb_keeps_and_names_or_files_given_twice_are_refused_at_start_up() {
    let pair = Pair::new("names");
    let pump = pair.pump.display().to_string();
    let cgm = pair.cgm.display().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![format!("system={pump}")], "DuckDB's own"),
        (vec![format!("temp={pump}")], "DuckDB's own"),
        (vec![format!("MEMORY={pump}")], "DuckDB's own"),
        (vec![format!("main={pump}")], "DuckDB's own"),
        (
            vec![format!("duckgate_private_1={pump}")],
            "keeps for its own",
        ),
        (
            vec![format!("pump={pump}"), format!("PUMP={cgm}")],
            "two databases are named",
        ),
        // The plain path is named `cgm` after its file.
        (
            vec![cgm.clone(), format!("cgm={pump}")],
            "two databases are named",
        ),
        (vec![format!("a={pump}"), format!("b={pump}")], "same file"),
        // Only one database may go without a name (the default, whatever its place).
        (vec![cgm.clone(), pump.clone()], "has no name"),
    ];
    for (declared, expected) in cases {
        let mut args = Vec::new();
        for db in &declared {
            args.extend(["--db".to_owned(), db.clone()]);
        }
        let (code, out, err) = outcome(&query(&args, "SELECT 1", ""));
        assert_eq!(code, 2, "{declared:?}: {out}{err}");
        assert!(err.contains(expected), "{declared:?}: {err}");
    }
}

/// A DuckDB file and a secret beside the databases that no `--db` names.
fn undeclared(dir: &Path) -> (PathBuf, PathBuf) {
    let third = dir.join("third.duckdb");
    make_db(
        &third,
        "CREATE TABLE t AS SELECT 'TOKEN-THIRD-3b7' AS secret;",
    );
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "TOKEN-SECRET-9a1\n").unwrap();
    (third, secret)
}

#[test]
fn with_each_sql_check_off_in_turn_the_kernel_still_denies_every_file_the_databases_included() {
    let pair = Pair::new("kernel");
    let (third, secret) = undeclared(pair.dir.path());
    let attacks = [
        format!("SELECT * FROM read_blob('{}')", third.display()),
        format!("SELECT * FROM read_text('{}')", secret.display()),
        format!("ATTACH '{}' AS third (READ_ONLY)", third.display()),
        format!(
            "SELECT * FROM read_blob('{}')",
            third.display().to_string().replace("third", "*")
        ),
    ];
    let every_check = "validator,worker_walk,plan_check";
    for layers in ["", "validator", "worker_walk", "plan_check", every_check] {
        let control = query(&pair.flags(), "SELECT count(*) FROM pump.boluses", layers);
        assert_eq!(
            control.status.code(),
            Some(0),
            "{layers}: {}",
            outcome(&control).1
        );
        for sql in &attacks {
            let (code, out, err) = outcome(&query(&pair.flags(), sql, layers));
            assert_eq!(code, 1, "{layers}: {sql} was answered: {out}{err}");
            assert!(
                !out.contains("TOKEN-") && !err.contains("TOKEN-"),
                "{layers}: {sql} leaked: {out}{err}"
            );
        }
    }
    // With DuckDB's hardening off too, the kernel alone: neither database's file is readable by
    // its path (each worker opened them before it confined itself, and landlock grants no path
    // of them), nor the third file or the secret; both databases still answer through their
    // tables.
    let sandbox_only = "validator,worker_walk,plan_check,duckdb_hardening";
    for declared in [&pair.cgm, &pair.pump] {
        assert!(
            std::fs::read(declared).is_ok(),
            "this process reads {declared:?}"
        );
        let sql = format!(
            "SELECT octet_length(content) FROM read_blob('{}')",
            declared.display()
        );
        let (code, out, err) = outcome(&query(&pair.flags(), &sql, sandbox_only));
        assert_eq!(code, 1, "the kernel let {sql} through: {out}{err}");
        assert!(
            format!("{out}{err}").contains("Permission denied"),
            "{sql}: not the kernel's denial: {out}{err}"
        );
    }
    for sql in &attacks[..3] {
        let (code, out, err) = outcome(&query(&pair.flags(), sql, sandbox_only));
        assert_eq!(code, 1, "landlock let {sql} through: {out}{err}");
        assert!(!out.contains("TOKEN-"), "{sql} leaked: {out}");
    }
    for sql in [
        "SELECT count(*) FROM pump.boluses",
        "SELECT count(*) FROM readings",
    ] {
        let control = query(&pair.flags(), sql, sandbox_only);
        assert_eq!(
            control.status.code(),
            Some(0),
            "{sql}: {}",
            outcome(&control).1
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn under_privacy_rules_sql_opens_neither_database_file_by_path_with_every_check_off() {
    let pair = Pair::with("bytes", CGM, &format!("{PUMP}{PUMP_WITH_UPLOADS}"));
    let mut args = pair.flags();
    args.extend(pump_rules());
    for layers in [
        "validator",
        "worker_walk",
        "plan_check",
        "validator,worker_walk,plan_check",
    ] {
        let client = serve(&args, layers).await;
        for file in [&pair.cgm, &pair.pump] {
            let wal = duckgate::protocol::databases::wal_path(file);
            for sql in [
                format!("SELECT * FROM read_blob('{}')", file.display()),
                format!("SELECT content FROM read_text('{}')", file.display()),
                format!("SELECT * FROM read_blob('{}')", wal.display()),
            ] {
                let result = call(&client, "query", json!({ "sql": sql })).await;
                assert_ne!(
                    status(&result),
                    "success",
                    "{layers}: {sql}: {}",
                    envelope_of(&result)
                );
                let reply = serde_json::to_string(&result).unwrap().to_lowercase();
                assert!(!reply.contains("planted"), "{layers}: {sql}: {reply}");
            }
        }
        // Control: the server answers with these checks off.
        let ok = call(
            &client,
            "query",
            json!({ "sql": "SELECT count(*) AS n FROM pump.boluses" }),
        )
        .await;
        assert_eq!(status(&ok), "success", "{layers}: {}", envelope_of(&ok));
        client.close().await.unwrap();
    }
}

/// The SQL block of the README's "Two databases in one server", as written.
fn readme_query() -> String {
    readme_sql("### Two databases in one server")
}

/// The first SQL block after the README's heading `heading`, as written.
pub(crate) fn readme_sql(heading: &str) -> String {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read README.md");
    let section = readme
        .split(heading)
        .nth(1)
        .expect("the README has the section");
    let block = section.split("```sql\n").nth(1).expect("a SQL block");
    block.split("```").next().unwrap().trim().to_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readmes_query_over_two_databases_runs_as_written() {
    let pair = Pair::with(
        "readme",
        "CREATE TABLE cgm_readings (ts TIMESTAMP, glucose_mg_dl INTEGER);
         INSERT INTO cgm_readings VALUES ('2026-03-01 08:05', 120), ('2026-03-01 08:10', 130),
                                         ('2026-03-01 09:05', 150);",
        "CREATE TABLE insulin_boluses (ts TIMESTAMP, units DOUBLE);
         INSERT INTO insulin_boluses VALUES ('2026-03-01 08:02', 4.0);",
    );
    let client = serve(&pair.flags(), "").await;
    let sql = readme_query();
    let result = call(&client, "query", json!({ "sql": sql })).await;
    assert_eq!(
        status(&result),
        "success",
        "{sql}: {}",
        envelope_of(&result)
    );
    assert_eq!(
        envelope_of(&result)["data"]["rows"],
        // Each side aggregated before the join: the bolus counted once, not once per reading.
        json!([
            ["2026-03-01T08:00:00", 125.0, 4.0],
            ["2026-03-01T09:00:00", 150.0, 0.0]
        ]),
        "{sql}"
    );
    client.close().await.unwrap();
}
