//! Privacy rules over two databases and a declared folder in one server, through the real binary
//! over MCP stdio.
//!
//! - Every declared database's file and write-ahead log, not only the default's, is out of reach
//!   through the folder: a hard link to the second database or its WAL in the folder (as a backup
//!   made with hard links leaves it) and a symbolic link to it are refused by the plan check alone
//!   and by DuckDB's folder file system alone, and `list_files` and `schema://files` never list
//!   them; the kernel alone lets a worker read them (it must, to attach them), as SECURITY.md says.
//! - A rule with a database's name (`pump.boluses.note`), a rule on a file relation
//!   (`exports/*.parquet.meal`) and a rule hiding files (`exports/private/*`), together in one
//!   server: each hidden thing answers byte for byte as one never made, in every tool and
//!   resource, with the plan check on and off.

use std::path::{Path, PathBuf};

use crate::databases::{CGM, Pair, assert_no_host_path, call, queried_and_explained, rows, serve};
use crate::folders_hostile::{contains, decoded_blob};
use crate::support::folder_scene::{exports_folder, files_flag, write_files};
use crate::support::{leave_a_wal, status, strip_durations};
use duckgate::mcp_client::{McpClient, envelope_of};
use rmcp::model::ReadResourceResult;
use serde_json::{Value, json};

/// The second database: the bolus notes are hidden by the rules below.
const PUMP: &str = "
CREATE TABLE boluses (ts TIMESTAMP, units DECIMAL(5, 2), note VARCHAR);
INSERT INTO boluses VALUES ('2026-03-01 08:00', 4.5, 'PLANTED-PUMP-NOTE-1'),
                           ('2026-03-01 12:00', 6.0, 'PLANTED-PUMP-NOTE-2');
";

/// The same database as it would be had the notes never been written down.
const PUMP_WITHOUT_NOTE: &str = "
CREATE TABLE boluses (ts TIMESTAMP, units DECIMAL(5, 2));
INSERT INTO boluses VALUES ('2026-03-01 08:00', 4.5), ('2026-03-01 12:00', 6.0);
";

/// What the second database's WAL alone holds, in a hidden column.
const PLANTED_IN_WAL: &str = "PLANTED-PUMP-WAL-4d1f";

/// What the folder's hidden column and hidden file hold.
const PLANTED_IN_FILES: &str = "PLANTED-MEAL-b2c8";

/// Every hidden value: no reply may carry any of them.
const PLANTED: [&str; 4] = [
    "PLANTED-PUMP-NOTE-1",
    "PLANTED-PUMP-NOTE-2",
    PLANTED_IN_WAL,
    PLANTED_IN_FILES,
];

/// One rule naming the second database, one naming a column of the folder's Parquet files, one
/// hiding files of the folder.
const RULES: [&str; 6] = [
    "--hide-column",
    "pump.boluses.note",
    "--hide-column",
    "exports/*.parquet.meal",
    "--hide-table",
    "exports/private/*",
];

/// When every file of the folder was last modified: the same in both scenes, so that the
/// listings compare byte for byte.
const MODIFIED_UNIX: u64 = 1_772_352_000;

/// The folder beside `pair`: `meals.parquet`, with its `meal` column (which the rules hide) or
/// without it, and with or without a private diary (a file the rules hide).
fn folder(pair: &Pair, with_hidden: bool) -> PathBuf {
    let exports = exports_folder(pair.dir.path(), &["private"]);
    let meals = exports.join("meals.parquet");
    let diary = exports.join("private/diary.parquet");
    let meal_column = if with_hidden {
        format!(", '{PLANTED_IN_FILES} ' || carbs_g AS meal")
    } else {
        String::new()
    };
    write_files(
        &exports,
        &format!(
            "COPY (SELECT ts, carbs_g::DOUBLE AS carbs_g{meal_column}
                   FROM (VALUES (TIMESTAMP '2026-03-01 08:00', 45.5), (TIMESTAMP '2026-03-01 12:00', 62.5),
                                (TIMESTAMP '2026-03-01 15:30', 15.5)) t(ts, carbs_g))
             TO '{{exports}}/meals.parquet' (FORMAT parquet);"
        ),
    );
    if with_hidden {
        write_files(
            &exports,
            &format!(
                "COPY (SELECT '{PLANTED_IN_FILES}' AS entry) TO '{{exports}}/private/diary.parquet' (FORMAT parquet);"
            ),
        );
    }
    let modified = std::time::UNIX_EPOCH + std::time::Duration::from_secs(MODIFIED_UNIX);
    for file in [&meals, &diary].into_iter().filter(|file| file.exists()) {
        std::fs::File::options()
            .write(true)
            .open(file)
            .unwrap()
            .set_modified(modified)
            .unwrap();
    }
    exports
}

/// `--db CGM --db pump=PUMP --files exports=DIR`, the rules, one thread (a sum read in parallel
/// may differ in its last digit between two servers, which is not what these tests look for).
fn flags(pair: &Pair, exports: &Path) -> Vec<String> {
    let mut args = pair.flags();
    args.extend(files_flag(exports));
    args.extend([
        "--time-zone".into(),
        "UTC".into(),
        "--threads".into(),
        "1".into(),
        "--max-reply-bytes".into(),
        "67108864".into(),
    ]);
    args.extend(RULES.iter().map(|s| (*s).to_owned()));
    args
}

/// A reply, durations taken out, with none of the hidden values and no host path.
fn checked_bytes(what: &str, reply: &impl serde::Serialize, dir: &Path) -> String {
    let mut value = serde_json::to_value(reply).unwrap();
    strip_durations(&mut value);
    let bytes = value.to_string();
    for planted in PLANTED {
        assert!(
            !bytes.contains(planted),
            "{what}: carries {planted}: {bytes}"
        );
    }
    assert_no_host_path(what, reply, dir);
    bytes
}

/// The paths `list_files` (or `schema://files`) shows.
fn listed_paths(data: &Value) -> Vec<String> {
    data["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files: {data}"))
        .iter()
        .map(|file| file["path"].as_str().unwrap().to_owned())
        .collect()
}

/// A resource's JSON text.
fn resource_json(result: &ReadResourceResult) -> Value {
    match &result.contents[0] {
        rmcp::model::ResourceContents::TextResourceContents { text, .. } => {
            serde_json::from_str(text).unwrap()
        }
        other => panic!("not text: {other:?}"),
    }
}

/// The second database's file and its WAL under other names in the folder, each as a hard link
/// (a backup made with hard links) and the file as a symbolic link too, beside the default
/// database's hard link.
fn databases_in_the_folder(pair: &Pair, exports: &Path) {
    let wal = leave_a_wal(
        &pair.pump,
        &format!("INSERT INTO boluses VALUES ('2026-03-02 08:00', 3.0, '{PLANTED_IN_WAL}');"),
    );
    assert!(
        contains(&std::fs::read(&wal).unwrap(), PLANTED_IN_WAL.as_bytes()),
        "the WAL holds the row in plain bytes"
    );
    std::fs::hard_link(&pair.pump, exports.join("pump_backup.csv")).unwrap();
    std::fs::hard_link(&wal, exports.join("pump_wal.csv")).unwrap();
    std::os::unix::fs::symlink(&pair.pump, exports.join("pump_link.csv")).unwrap();
    std::fs::hard_link(&pair.cgm, exports.join("cgm_backup.csv")).unwrap();
}

/// Reads of the databases' bytes through the folder, by every name they have there.
const DATABASE_READS: [&str; 9] = [
    "SELECT content FROM read_blob('exports/pump_backup.csv')",
    "SELECT content FROM read_blob('exports/pump_wal.csv')",
    "SELECT content FROM read_blob('exports/pump_link.csv')",
    "SELECT content FROM read_blob('exports/cgm_backup.csv')",
    "SELECT content FROM read_blob('exports/*.csv')",
    "SELECT * FROM read_text('exports/pump_wal.csv')",
    "SELECT * FROM read_csv('exports/pump_backup.csv', all_varchar = true, header = false, sep = '|')",
    "SELECT * FROM read_csv('exports/pump_wal.csv', all_varchar = true, header = false, sep = '|')",
    "SELECT * FROM 'exports/pump_wal.csv'",
];

#[tokio::test(flavor = "multi_thread")]
async fn the_second_databases_file_and_wal_in_a_folder_are_refused_by_each_check_and_never_listed()
{
    let pair = Pair::with("second-db-linked", CGM, PUMP);
    let exports = folder(&pair, true);
    databases_in_the_folder(&pair, &exports);

    // All the checks; DuckDB's folder file system alone; the plan check alone. The walks of the
    // SQL see only a name of the folder: they cannot tell.
    for layers in [
        "",
        "validator,worker_walk,plan_check",
        "validator,worker_walk,duckdb_hardening",
    ] {
        let client = serve(&flags(&pair, &exports), layers).await;
        for sql in DATABASE_READS {
            let what = format!("{sql} (off: {layers:?})");
            let reply = call(&client, "query", json!({ "sql": sql })).await;
            let envelope = envelope_of(&reply);
            assert!(
                matches!(status(&reply), "error" | "refused"),
                "{what}: read: {envelope}"
            );
            assert!(
                envelope["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty()),
                "{what}: no message: {envelope}"
            );
            checked_bytes(&what, &reply, pair.dir.path());
        }
        // The rest of the folder and both databases still answer through the same layers; the
        // WAL's row is the second database's, read through its table.
        assert_eq!(
            rows(
                &client,
                "SELECT count(*), sum(b.units), sum(m.carbs_g) FROM pump.boluses b \
                 JOIN 'exports/meals.parquet' m USING (ts) JOIN readings r USING (ts)"
            )
            .await,
            json!([[2, "10.50", 108.0]]),
            "off: {layers:?}"
        );
        assert_eq!(
            rows(&client, "SELECT count(*) FROM pump.boluses").await,
            json!([[3]]),
            "off: {layers:?}"
        );
        client.close().await.unwrap();
    }

    // Discovery, which the parent does with the rules the workers judge by: neither database's
    // file nor WAL under any name, the hidden diary neither.
    let client = serve(&flags(&pair, &exports), "").await;
    let listed = call(&client, "list_files", json!({})).await;
    checked_bytes("list_files", &listed, pair.dir.path());
    assert_eq!(
        listed_paths(&envelope_of(&listed)["data"]),
        ["exports/meals.parquet"],
        "{}",
        envelope_of(&listed)
    );
    let resource = client.read_resource("schema://files").await.unwrap();
    let files = resource_json(&resource);
    checked_bytes("schema://files", &files, pair.dir.path());
    assert_eq!(listed_paths(&files), ["exports/meals.parquet"], "{files}");
    for name in ["pump_backup.csv", "pump_wal.csv", "pump_link.csv"] {
        let described = call(
            &client,
            "describe_table",
            json!({ "table_name": format!("exports/{name}") }),
        )
        .await;
        assert_ne!(
            status(&described),
            "success",
            "{name}: {}",
            envelope_of(&described)
        );
        checked_bytes(name, &described, pair.dir.path());
        assert!(
            client
                .read_resource(&format!("schema://file/exports%2F{name}"))
                .await
                .is_err(),
            "schema://file/exports/{name} is served"
        );
    }
    client.close().await.unwrap();

    // The kernel alone. A worker reads the databases through descriptors it opened before it
    // confined itself, and landlock grants no path of them: the symbolic link, which leads to the
    // second database's own path, is denied. Landlock grants by path, so a hard link to the file
    // or its WAL is a name beneath the declared folder, which it lets through. This is the
    // trade-off SECURITY.md states; the two checks above are what hold there, each alone.
    let client = serve(
        &flags(&pair, &exports),
        "validator,worker_walk,plan_check,duckdb_hardening",
    )
    .await;
    for (name, holds) in [
        ("pump_backup.csv", &b"DUCK"[..]),
        ("pump_wal.csv", PLANTED_IN_WAL.as_bytes()),
    ] {
        let reply = call(
            &client,
            "query",
            json!({ "sql": format!("SELECT content FROM read_blob('exports/{name}')") }),
        )
        .await;
        assert!(
            contains(&decoded_blob(envelope_of(&reply)), holds),
            "{name}: not the second database's bytes: {}",
            envelope_of(&reply)
        );
    }
    let linked = call(
        &client,
        "query",
        json!({ "sql": "SELECT content FROM read_blob('exports/pump_link.csv')" }),
    )
    .await;
    // Under privacy rules DuckDB's words about files are reworded whole, so the kernel's own
    // words are shown by `tests/it/folders.rs`, without rules; here: an error, nothing read.
    assert_eq!(
        status(&linked),
        "error",
        "the symbolic link to the second database: {}",
        envelope_of(&linked)
    );
    checked_bytes("pump_link.csv", &linked, pair.dir.path());
    client.close().await.unwrap();
}

/// Every way to ask about the hidden things: the second database's hidden column, the file's
/// hidden column, the hidden file.
fn probes() -> Vec<(&'static str, Value)> {
    let mut probes = queried_and_explained([
        "SELECT note FROM pump.boluses",
        "SELECT meal FROM 'exports/meals.parquet'",
        "SELECT b.note, m.meal FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts)",
        "SELECT * FROM pump.boluses b JOIN read_parquet('exports/*.parquet') m USING (ts) ORDER BY ts",
        "SELECT b, m FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts) ORDER BY ts",
        "SELECT r.glucose, b.units, m.carbs_g FROM readings r JOIN pump.main.boluses b USING (ts) \
         JOIN 'exports/meals.parquet' m USING (ts) ORDER BY r.ts",
        "SELECT * FROM 'exports/private/diary.parquet'",
        "SELECT * FROM read_parquet('exports/**/*.parquet') ORDER BY ts",
        "SELECT file FROM glob('exports/**') ORDER BY file",
        "DESCRIBE SELECT * FROM 'exports/meals.parquet'",
        "DESCRIBE pump.boluses",
    ]);
    probes.extend([
        ("list_tables", json!({})),
        ("list_tables", json!({ "database": "pump" })),
        ("describe_table", json!({ "table_name": "pump.boluses" })),
        (
            "describe_table",
            json!({ "table_name": "exports/meals.parquet" }),
        ),
        (
            "describe_table",
            json!({ "table_name": "exports/private/diary.parquet" }),
        ),
        ("sample_rows", json!({ "table_name": "pump.boluses" })),
        (
            "sample_rows",
            json!({ "table_name": "exports/meals.parquet" }),
        ),
        (
            "sample_rows",
            json!({ "table_name": "exports/meals.parquet", "columns": ["meal"] }),
        ),
        ("search_schema", json!({ "query": "note" })),
        ("search_schema", json!({ "query": "meal" })),
        ("list_files", json!({})),
        ("list_files", json!({ "pattern": "exports/**" })),
    ]);
    probes
}

/// The resources the same rules shape.
const RESOURCES: [&str; 5] = [
    "schema://snapshot",
    "schema://files",
    "schema://file/exports%2Fmeals.parquet",
    "schema://file/exports%2Fprivate%2Fdiary.parquet",
    "schema://table/pump.main.boluses",
];

/// A resource as bytes, or its error's message.
async fn resource_bytes(client: &McpClient, uri: &str, dir: &Path) -> String {
    match client.read_resource(uri).await {
        Ok(result) => checked_bytes(uri, &resource_json(&result), dir),
        Err(e) => {
            let text = e.to_string();
            for planted in PLANTED {
                assert!(!text.contains(planted), "{uri}: {text}");
            }
            assert!(!text.contains(&dir.display().to_string()), "{uri}: {text}");
            format!("error: {text}")
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_database_rule_and_a_file_rule_in_one_server_each_answer_as_what_was_never_made() {
    let hidden = Pair::with("rules-hidden", CGM, PUMP);
    let missing = Pair::with("rules-missing", CGM, PUMP_WITHOUT_NOTE);
    let (hidden_exports, missing_exports) = (folder(&hidden, true), folder(&missing, false));
    // With the plan check, and with DuckDB's side alone (the shadow catalogs, the folders' file
    // system and the Parquet readers' own reader).
    for layers in ["", "plan_check"] {
        let with_rules = serve(&flags(&hidden, &hidden_exports), layers).await;
        let never_made = serve(&flags(&missing, &missing_exports), layers).await;
        let mut differences = Vec::new();
        for (tool, args) in probes() {
            let what = format!("{tool} {args} (off: {layers:?})");
            let a = checked_bytes(
                &what,
                &call(&with_rules, tool, args.clone()).await,
                hidden.dir.path(),
            );
            let b = checked_bytes(
                &what,
                &call(&never_made, tool, args.clone()).await,
                missing.dir.path(),
            );
            if a != b {
                differences.push(format!("{what}:\n  hidden: {a}\n  never made: {b}"));
            }
        }
        for uri in RESOURCES {
            let a = resource_bytes(&with_rules, uri, hidden.dir.path()).await;
            let b = resource_bytes(&never_made, uri, missing.dir.path()).await;
            if a != b {
                differences.push(format!(
                    "{uri} (off: {layers:?}):\n  hidden: {a}\n  never made: {b}"
                ));
            }
        }
        assert!(differences.is_empty(), "{}", differences.join("\n"));

        // What those identical replies say: each hidden column is unknown, the hidden file is
        // missing, and the rest answers with its rows.
        for sql in [
            "SELECT note FROM pump.boluses",
            "SELECT meal FROM 'exports/meals.parquet'",
            "SELECT * FROM 'exports/private/diary.parquet'",
        ] {
            let reply = call(&with_rules, "query", json!({ "sql": sql })).await;
            assert_ne!(
                status(&reply),
                "success",
                "{sql} (off: {layers:?}): {}",
                envelope_of(&reply)
            );
        }
        let star = call(
            &with_rules,
            "query",
            json!({ "sql": "SELECT * FROM pump.boluses b JOIN 'exports/meals.parquet' m USING (ts) ORDER BY ts" }),
        )
        .await;
        let envelope = envelope_of(&star);
        let names: Vec<&str> = envelope["data"]["columns"]
            .as_array()
            .unwrap_or_else(|| panic!("off: {layers:?}: {envelope}"))
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["ts", "units", "carbs_g"], "off: {layers:?}");
        assert_eq!(
            envelope["data"]["rows"],
            json!([
                ["2026-03-01T08:00:00", "4.50", 45.5],
                ["2026-03-01T12:00:00", "6.00", 62.5]
            ]),
            "off: {layers:?}"
        );
        with_rules.close().await.unwrap();
        never_made.close().await.unwrap();
    }
}
