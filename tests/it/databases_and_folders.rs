//! Two databases and a declared folder in one server, through the real binary over MCP stdio:
//! the relations of both databases and the folder's Parquet file listed and described, and one
//! query joining a table of each database with the file; privacy rules with a database's name
//! hiding a column of the second database, which then answers exactly as a column never made
//! does, in a query beside the file too; under those rules, no path through the folder reaching
//! either database's bytes with the SQL checks off; and a folder holding the second database
//! refused at start-up.

use std::path::{Path, PathBuf};

use crate::databases::{
    CGM, PUMP, Pair, assert_no_host_path, call, queried_and_explained, query, readme_sql,
    reply_bytes, rows, serve,
};
use crate::support::folder_scene::{exports_folder, files_flag, write_files};
use crate::support::{error_kind, field_pairs, outcome, status};
use duckgate::mcp_client::{McpClient, envelope_of, text_of};
use serde_json::{Value, json};

/// A carb-counting app's export beside the databases: one row per meal, grams of carbohydrate
/// as a DOUBLE (the app allows halves), the meal's local time to the minute. Breakfast and lunch
/// were bolused for (the pump's 08:00 and 12:00); the afternoon apple was not.
fn meals_folder(pair: &Pair) -> PathBuf {
    let exports = exports_folder(pair.dir.path(), &[]);
    write_files(
        &exports,
        "CREATE TABLE meals (ts TIMESTAMP, carbs_g DOUBLE, meal VARCHAR);
         INSERT INTO meals VALUES ('2026-03-01 08:00', 45.5, 'porridge'),
                                  ('2026-03-01 12:00', 62.5, 'pasta'),
                                  ('2026-03-01 15:30', 15.5, 'apple');
         COPY meals TO '{exports}/meals.parquet' (FORMAT parquet);",
    );
    exports
}

/// The pair's `--db` flags, the folder declared as `exports`, and `extra`.
fn flags(pair: &Pair, exports: &Path, extra: &[&str]) -> Vec<String> {
    let mut args = pair.flags();
    args.extend(files_flag(exports));
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The names of a `describe_table` reply's columns.
fn column_names(reply: &Value) -> Vec<String> {
    reply["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The joined meals: glucose (cgm), insulin (pump) and carbohydrate (the file) at each bolused
/// meal.
const JOINED: &str = "SELECT r.glucose, b.units, m.carbs_g, m.meal \
     FROM readings r JOIN pump.boluses b USING (ts) JOIN 'exports/meals.parquet' m USING (ts) \
     ORDER BY r.ts";

#[tokio::test(flavor = "multi_thread")]
async fn two_databases_and_a_folder_are_listed_described_and_joined_in_one_query() {
    let pair = Pair::new("dbs-folder");
    let exports = meals_folder(&pair);
    let client = serve(&flags(&pair, &exports, &[]), "").await;

    // Listed: each database's relations with its name, and the folder's file by the folder's.
    let listed = call(&client, "list_tables", json!({})).await;
    assert_eq!(
        field_pairs(&envelope_of(&listed)["data"]["tables"], "database", "name"),
        [
            ("cgm", "devices"),
            ("cgm", "readings"),
            ("pump", "boluses"),
            ("pump", "devices"),
        ]
    );
    assert_eq!(
        rows(&client, "SELECT file FROM glob('exports/*') ORDER BY 1").await,
        json!([["exports/meals.parquet"]])
    );

    // Described: a table of each database, and the file's columns as DuckDB reads them.
    let readings = call(
        &client,
        "describe_table",
        json!({ "table_name": "readings" }),
    )
    .await;
    assert_eq!(envelope_of(&readings)["data"]["database"], "cgm");
    assert_eq!(
        column_names(envelope_of(&readings)),
        ["ts", "glucose", "device_id"]
    );
    let boluses = call(
        &client,
        "describe_table",
        json!({ "table_name": "pump.boluses" }),
    )
    .await;
    assert_eq!(envelope_of(&boluses)["data"]["database"], "pump");
    assert_eq!(
        column_names(envelope_of(&boluses)),
        ["ts", "units", "device_id", "note"]
    );
    let described = rows(&client, "DESCRIBE SELECT * FROM 'exports/meals.parquet'").await;
    let file_columns: Vec<(&str, &str)> = described
        .as_array()
        .unwrap()
        .iter()
        .map(|row| (row[0].as_str().unwrap(), row[1].as_str().unwrap()))
        .collect();
    assert_eq!(
        file_columns,
        [
            ("ts", "TIMESTAMP"),
            ("carbs_g", "DOUBLE"),
            ("meal", "VARCHAR")
        ]
    );

    // Joined in one query: the default's table without a prefix, the pump's with its name, the
    // file by its folder; the snack without a bolus drops out.
    assert_eq!(
        rows(&client, JOINED).await,
        json!([
            [110, "4.50", 45.5, "porridge"],
            [185, "6.00", 62.5, "pasta"]
        ])
    );
    // The same, every database named, the file read by a pattern.
    assert_eq!(
        rows(
            &client,
            "SELECT count(*), sum(b.units), max(m.meal) FROM cgm.main.readings r \
             JOIN pump.main.boluses b USING (ts) \
             JOIN read_parquet('exports/*.parquet') m USING (ts)"
        )
        .await,
        json!([[2, "10.50", "porridge"]])
    );
    let plan = call(&client, "explain_query", json!({ "sql": JOINED })).await;
    assert_eq!(status(&plan), "success", "{}", envelope_of(&plan));

    // server_info: what a worker may read, by name: each database's file, each folder.
    let info = call(&client, "server_info", json!({})).await;
    let data = &envelope_of(&info)["data"];
    assert_eq!(
        data["databases"],
        json!([
            { "name": "cgm", "default": true, "granted": ["file"] },
            { "name": "pump", "default": false, "granted": ["file"] }
        ])
    );
    assert_eq!(data["folders"]["names"], json!(["exports"]));
    assert_eq!(
        data["folders"]["granted"],
        json!(["read files", "list directories"])
    );
    assert!(
        text_of(&info).contains(
            "Folders of data files (read-only; landlock lets workers read and list beneath each): exports;"
        ),
        "{}",
        text_of(&info)
    );
    for (what, reply) in [
        ("list_tables", &listed),
        ("describe_table", &boluses),
        ("explain_query", &plan),
        ("server_info", &info),
    ] {
        assert_no_host_path(what, reply, pair.dir.path());
    }
    client.close().await.unwrap();
}

/// [`PUMP`] as it would be had its boluses never had a `note` column.
const PUMP_WITHOUT_NOTE: &str = "
CREATE TABLE devices (device_id INTEGER PRIMARY KEY, model VARCHAR, serial_number VARCHAR);
INSERT INTO devices VALUES (7, 't:slim X2', 'SN-PUMP-0007');
CREATE TABLE boluses (ts TIMESTAMP, units DECIMAL(5, 2),
                      device_id INTEGER REFERENCES devices (device_id));
INSERT INTO boluses VALUES ('2026-03-01 08:00', 4.5, 7), ('2026-03-01 12:00', 6.0, 7);
COMMENT ON COLUMN boluses.units IS 'insulin units delivered';
";

/// The rule: the second database's bolus notes, named with the database.
const HIDE_NOTE: [&str; 2] = ["--hide-column", "pump.boluses.note"];

#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_column_of_the_second_database_answers_as_a_missing_one_beside_a_folders_file() {
    let hidden = Pair::new("note-hidden");
    let missing = Pair::with("note-missing", CGM, PUMP_WITHOUT_NOTE);
    let (hidden_exports, missing_exports) = (meals_folder(&hidden), meals_folder(&missing));
    let with_rule = serve(&flags(&hidden, &hidden_exports, &HIDE_NOTE), "").await;
    let without_column = serve(&flags(&missing, &missing_exports, &HIDE_NOTE), "").await;

    // What the agent sees of the hidden column is what it would see were it never made.
    let mut probes = queried_and_explained([
        "SELECT note FROM pump.boluses",
        "SELECT count(note) FROM pump.main.boluses",
        "SELECT b.note, m.meal FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts)",
        "SELECT r.glucose, b.note, m.carbs_g FROM readings r JOIN pump.boluses b USING (ts) \
         JOIN read_parquet('exports/*.parquet') m USING (ts)",
        "SELECT * FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts) ORDER BY ts",
        "SELECT b FROM pump.boluses b ORDER BY b.ts",
        JOINED,
    ]);
    probes.extend([
        ("list_tables", json!({ "database": "pump" })),
        ("describe_table", json!({ "table_name": "pump.boluses" })),
        ("search_schema", json!({ "query": "note" })),
        ("sample_rows", json!({ "table_name": "pump.boluses" })),
    ]);
    for (tool, args) in &probes {
        let reply_hidden = call(&with_rule, tool, args.clone()).await;
        let reply_missing = call(&without_column, tool, args.clone()).await;
        assert_eq!(
            reply_bytes(&reply_hidden),
            reply_bytes(&reply_missing),
            "{tool} {args}: a hidden column answers unlike a missing one"
        );
        let text = reply_bytes(&reply_hidden).to_lowercase();
        assert!(
            !text.contains("breakfast") && !text.contains("lunch"),
            "{tool} {args}: {text}"
        );
        assert_no_host_path(tool, &reply_hidden, hidden.dir.path());
    }

    // What those identical replies say: the column is unknown, alone or beside the file; the
    // rest of the second database and the file answer with their rows.
    for sql in [
        "SELECT note FROM pump.boluses",
        "SELECT b.note, m.meal FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts)",
    ] {
        let reply = call(&with_rule, "query", json!({ "sql": sql })).await;
        assert_eq!(
            error_kind(&reply),
            "unknown_name",
            "{sql}: {}",
            envelope_of(&reply)
        );
    }
    assert_eq!(
        rows(&with_rule, JOINED).await,
        json!([
            [110, "4.50", 45.5, "porridge"],
            [185, "6.00", 62.5, "pasta"]
        ])
    );
    let star = call(
        &with_rule,
        "query",
        json!({ "sql": "SELECT * FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts) ORDER BY ts" }),
    )
    .await;
    let names: Vec<&str> = envelope_of(&star)["data"]["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["ts", "units", "device_id", "carbs_g", "meal"]);
    let described = call(
        &with_rule,
        "describe_table",
        json!({ "table_name": "pump.boluses" }),
    )
    .await;
    assert_eq!(
        column_names(envelope_of(&described)),
        ["ts", "units", "device_id"]
    );
    with_rule.close().await.unwrap();
    without_column.close().await.unwrap();
}

/// Links in the folder to each database file, as a careless sync tool leaves them.
fn links_to_the_databases(pair: &Pair, exports: &Path) {
    std::os::unix::fs::symlink(&pair.cgm, exports.join("cgm_backup.parquet")).unwrap();
    std::os::unix::fs::symlink(&pair.pump, exports.join("pump_backup.csv")).unwrap();
}

/// A query that must be refused, and whose reply must carry none of the hidden notes.
async fn assert_refused_without_the_notes(client: &McpClient, layers: &str, sql: &str) {
    let result = call(client, "query", json!({ "sql": sql })).await;
    assert_ne!(
        status(&result),
        "success",
        "{layers}: {sql}: {}",
        envelope_of(&result)
    );
    let reply = serde_json::to_string(&result).unwrap().to_lowercase();
    assert!(
        !reply.contains("breakfast") && !reply.contains("lunch"),
        "{layers}: {sql}: {reply}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn under_privacy_rules_no_path_through_the_folder_reaches_either_database_with_checks_off() {
    let pair = Pair::new("folder-bytes");
    let exports = meals_folder(&pair);
    links_to_the_databases(&pair, &exports);
    let attacks = [
        "SELECT * FROM read_parquet('exports/cgm_backup.parquet')",
        "SELECT * FROM read_csv('exports/pump_backup.csv', all_varchar = true, header = false)",
        "SELECT * FROM 'exports/pump_backup.csv'",
        "SELECT * FROM read_csv('exports/*_backup.*', all_varchar = true)",
        "SELECT * FROM read_csv('exports/../pump-2026.duckdb', all_varchar = true)",
        "SELECT * FROM read_json('exports/../cgm.duckdb')",
        // `read_blob` reads any bytes: with the checks off, only the folders' file system
        // stands between it and the database files.
        "SELECT * FROM read_blob('exports/pump_backup.csv')",
        "SELECT size, content FROM read_blob('exports/cgm_backup.parquet')",
        "SELECT size, content FROM read_blob('exports/../pump-2026.duckdb')",
        "SELECT size, content FROM read_blob('exports/*_backup.*')",
    ];
    for layers in [
        "",
        "validator",
        "worker_walk",
        "plan_check",
        "validator,worker_walk,plan_check",
    ] {
        let client = serve(&flags(&pair, &exports, &HIDE_NOTE), layers).await;
        for sql in attacks {
            assert_refused_without_the_notes(&client, layers, sql).await;
        }
        // Control: the folder's own file and both databases answer with these checks off.
        assert_eq!(
            rows(
                &client,
                "SELECT count(*) FROM 'exports/meals.parquet' m JOIN pump.boluses USING (ts)"
            )
            .await,
            json!([[2]]),
            "{layers}"
        );
        client.close().await.unwrap();
    }
}

#[test]
fn a_folder_holding_the_second_database_is_refused_at_start_up() {
    let pair = Pair::new("folder-holds-pump");
    // The pump's file alone in a folder of its own, declared as a folder of data files.
    let pump_dir = pair.dir.path().join("pump");
    std::fs::create_dir_all(&pump_dir).unwrap();
    let pump = pump_dir.join("pump.duckdb");
    crate::support::make_db(&pump, PUMP);
    let args = |files: &Path| {
        vec![
            "--db".to_owned(),
            pair.cgm.display().to_string(),
            "--db".into(),
            format!("pump={}", pump.display()),
            "--files".into(),
            format!("uploads={}", files.display()),
        ]
    };
    let (code, out, err) = outcome(&query(&args(&pump_dir), "SELECT 1", ""));
    assert_ne!(code, 0, "{out}{err}");
    assert!(
        err.contains("holds the database file of pump"),
        "{out}{err}"
    );
    // Control: the same server with a folder beside it starts and answers.
    let exports = meals_folder(&pair);
    let (code, out, err) = outcome(&query(
        &args(&exports),
        "SELECT count(*) FROM 'uploads/meals.parquet'",
        "",
    ));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains('3'), "{out}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readmes_query_over_two_databases_and_a_folder_runs_as_written() {
    let pair = Pair::with(
        "readme-folder",
        "CREATE TABLE cgm_readings (ts TIMESTAMP, glucose_mg_dl INTEGER);
         INSERT INTO cgm_readings VALUES ('2026-03-01 07:55', 98), ('2026-03-01 08:30', 160),
                                         ('2026-03-01 09:00', 182), ('2026-03-01 09:55', 141),
                                         ('2026-03-01 10:30', 120);",
        "CREATE TABLE insulin_boluses (ts TIMESTAMP, units DOUBLE);
         INSERT INTO insulin_boluses VALUES ('2026-03-01 08:04', 4.5);",
    );
    let exports = meals_folder(&pair);
    let client = serve(&flags(&pair, &exports, &[]), "").await;
    let sql = readme_sql("### Two databases and a folder together");
    let result = call(&client, "query", json!({ "sql": sql })).await;
    assert_eq!(
        status(&result),
        "success",
        "{sql}: {}",
        envelope_of(&result)
    );
    // Breakfast only: lunch and the apple had no bolus. The readings of 08:30, 09:00 and 09:55
    // fall in the two hours after it; 07:55 before, 10:30 after.
    assert_eq!(
        envelope_of(&result)["data"]["rows"],
        json!([["2026-03-01T08:00:00", 45.5, 4.5, 161.0]]),
        "{sql}"
    );
    client.close().await.unwrap();
}
