//! Privacy rules reach the declared folders' files, through the real binary: a hidden file is a
//! missing one, and a hidden column of a Parquet file is a column the file does not have. The
//! oracle: two folders whose visible data are equal and whose hidden data differ (hidden values,
//! a hidden column's type, a hidden column only one of them has, a hidden file only one of them
//! has, a CSV file a column rule names with and without that column) give byte-identical replies
//! to every probe; and a hidden name gets the reply a made-up name of the same length gets.
//!
//! The rules: `exports/private/*` hides files; `exports/people/*.parquet.patient_name` and
//! `….ssn` hide columns of the Parquet files; `exports/notes.csv.patient_name` names a CSV file,
//! which a column rule cannot hide a column of, so it is refused whatever its header holds.

use crate::support::folder_scene::FolderScene;
use crate::support::strip_durations;
use duckgate::mcp_client::McpClient;
use rmcp::model::CallToolResult;
use serde_json::{Value as Json, json};

/// What every hidden value of fixture A holds; no reply may carry it.
const PLANTED_A: &str = "Planted-Alice-3c9d";
/// The same for fixture B.
const PLANTED_B: &str = "Planted-Bob-e71a";

const RULES: [&str; 8] = [
    "--hide-table",
    "exports/private/*",
    "--hide-column",
    "exports/people/*.parquet.patient_name",
    "--hide-column",
    "exports/people/*.parquet.ssn",
    "--hide-column",
    "exports/notes.csv.patient_name",
];

/// Fixture A or B: the same visible data, different hidden data.
fn fixture(tag: &str, a: bool) -> FolderScene {
    let fixture = FolderScene::new(
        tag,
        "health.duckdb",
        "CREATE TABLE notes (id INTEGER, note VARCHAR); INSERT INTO notes VALUES (1, 'x');",
        &["people", "private", "visible"],
    );
    // A: the hidden name among the visible columns, as text. B: after them, as a number, with a
    // second hidden column A lacks.
    let people = |month: u32| {
        if a {
            format!(
                "SELECT i AS id, '{PLANTED_A} ' || i AS patient_name, 70 + i * {month} AS glucose
                 FROM range(1, 6) t(i)"
            )
        } else {
            format!(
                "SELECT i AS id, 70 + i * {month} AS glucose, 900000 + i AS patient_name,
                        '{PLANTED_B}' AS ssn
                 FROM range(1, 6) t(i)"
            )
        }
    };
    let mut sql = format!(
        "COPY ({}) TO '{{exports}}/people/2026-01.parquet' (FORMAT parquet);
         COPY ({}) TO '{{exports}}/people/2026-02.parquet' (FORMAT parquet);
         COPY (SELECT i AS n, 'visible ' || i AS line FROM range(3) t(i)) TO '{{exports}}/visible/log.csv' (FORMAT csv, HEADER);",
        people(1),
        people(2),
    );
    if a {
        sql.push_str(&format!(
            "COPY (SELECT '{PLANTED_A}' AS secret) TO '{{exports}}/private/secret.parquet' (FORMAT parquet);
             COPY (SELECT 1 AS id, '{PLANTED_A}' AS patient_name) TO '{{exports}}/notes.csv' (FORMAT csv, HEADER);"
        ));
    } else {
        sql.push_str(
            "COPY (SELECT 1 AS id, 'nothing hidden' AS remark) TO '{exports}/notes.csv' (FORMAT csv, HEADER);",
        );
    }
    fixture.write_files(&sql);
    fixture
}

async fn server(fixture: &FolderScene, bypass: &str) -> McpClient {
    // One thread: a sum of floats over two files read in parallel may differ in its last digit
    // from run to run, which is not what these probes look for.
    let mut args = vec!["--time-zone", "UTC", "--threads", "1"];
    args.extend(RULES);
    fixture.serve(bypass, &args).await
}

/// A reply as it travels, without what differs between any two calls: durations, and the
/// files' modification times (`list_files`; the fixtures are written a moment apart).
pub(crate) fn reply_bytes(result: &CallToolResult) -> String {
    let mut value = serde_json::to_value(result).unwrap();
    strip_durations(&mut value);
    without_times(&value.to_string())
}

/// `text` with every `YYYY-MM-DDTHH:MM:SSZ` replaced by `TIME`.
fn without_times(text: &str) -> String {
    const SHAPE: &[u8] = b"dddd-dd-ddTdd:dd:ddZ";
    let bytes = text.as_bytes();
    let fits = |at: usize| {
        bytes.get(at..at + SHAPE.len()).is_some_and(|window| {
            window.iter().zip(SHAPE).all(|(b, s)| match s {
                b'd' => b.is_ascii_digit(),
                other => b == other,
            })
        })
    };
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while at < bytes.len() {
        if fits(at) {
            out.push_str("TIME");
            at += SHAPE.len();
        } else {
            let next = text[at..].chars().next().map_or(1, char::len_utf8);
            out.push_str(&text[at..at + next]);
            at += next;
        }
    }
    out
}

/// The probes: every way to ask about the files that a hidden file or column could change.
fn probes() -> Vec<(&'static str, Json)> {
    let people = "'exports/people/*.parquet'";
    let mut sql: Vec<String> = vec![
        format!("SELECT * FROM {people} ORDER BY id, glucose"),
        format!("SELECT count(*), sum(glucose) FROM {people}"),
        format!("SELECT patient_name FROM {people}"),
        format!("SELECT ssn FROM {people}"),
        format!("SELECT id FROM {people} WHERE patient_name IS NOT NULL"),
        format!("SELECT * EXCLUDE (patient_name) FROM {people}"),
        format!("SELECT COLUMNS('.*name.*|ssn') FROM {people}"),
        format!("SELECT to_json(p) FROM {people} p ORDER BY id, glucose"),
        format!("SELECT p FROM {people} p ORDER BY id, glucose"),
        format!("DESCRIBE SELECT * FROM {people}"),
        format!("SUMMARIZE SELECT * FROM {people}"),
        format!("SELECT * FROM read_parquet({people}, union_by_name = true) ORDER BY id, glucose"),
        format!("SELECT * FROM read_parquet({people}, filename = 'patient_name') ORDER BY id, glucose"),
        format!("SELECT * FROM read_parquet({people}, filename = 'ssn') ORDER BY id, glucose"),
        format!("SELECT * FROM read_parquet({people}, binary_as_string = true) ORDER BY id, glucose"),
        format!("SELECT * FROM read_parquet({people}, file_row_number = true)"),
        format!("SELECT * FROM read_parquet({people}, schema = MAP {{1: {{name: 'a', type: 'VARCHAR', default_value: NULL}}}})"),
        "SELECT * FROM parquet_schema('exports/people/2026-01.parquet')".into(),
        "SELECT * FROM parquet_metadata('exports/people/2026-01.parquet')".into(),
        "SELECT * FROM parquet_kv_metadata('exports/people/2026-01.parquet')".into(),
        "SELECT * FROM parquet_file_metadata('exports/people/2026-01.parquet')".into(),
        "SELECT * FROM 'exports/private/secret.parquet'".into(),
        "SELECT * FROM read_parquet('exports/private/*.parquet')".into(),
        "SELECT count(*) FROM glob('exports/private/*')".into(),
        "SELECT file FROM glob('exports/**') ORDER BY file".into(),
        "SELECT * FROM read_csv('exports/notes.csv')".into(),
        "SELECT * FROM 'exports/notes.csv'".into(),
        "SELECT * FROM read_csv('exports/notes.csv', header = false)".into(),
        "SELECT * FROM read_csv('exports/visible/log.csv') ORDER BY n".into(),
        "SELECT * FROM read_parquet('exports/**/*.parquet', union_by_name = true) ORDER BY id, glucose".into(),
    ];
    sql.push(format!("SELECT count(*) FROM {people} WHERE glucose > 75"));
    let mut probes: Vec<(&'static str, Json)> = sql
        .iter()
        .map(|sql| ("query", json!({ "sql": sql, "limit": 100 })))
        .collect();
    probes.push((
        "explain_query",
        json!({ "sql": format!("SELECT * FROM {people}") }),
    ));
    let file = "exports/people/2026-01.parquet";
    probes.push(("describe_table", json!({ "table_name": file })));
    probes.push(("sample_rows", json!({ "table_name": file, "limit": 5 })));
    probes.push((
        "sample_rows",
        json!({ "table_name": file, "columns": ["patient_name"] }),
    ));
    probes.push(("list_files", json!({ "pattern": "exports/**" })));
    probes.push(("list_files", json!({ "folder": "exports", "limit": 3 })));
    probes.push((
        "plot",
        json!({ "sql": format!("SELECT id, glucose FROM {people} ORDER BY id"), "kind": "scatter" }),
    ));
    probes
}

/// The Parquet metadata functions, which only the plan check refuses on files a column rule
/// names: DuckDB's side does not hand them the folders' reader.
fn reads_parquet_metadata(args: &Json) -> bool {
    args["sql"]
        .as_str()
        .is_some_and(|sql| sql.contains("FROM parquet_"))
}

async fn assert_identical_replies(layers: &str) -> usize {
    let a = fixture("files-privacy-a", true);
    let b = fixture("files-privacy-b", false);
    let (client_a, client_b) = (server(&a, layers).await, server(&b, layers).await);
    let mut differences = Vec::new();
    let mut answered = 0;
    let plan_check_off = layers.split(',').any(|layer| layer == "plan_check");
    for (tool, args) in probes()
        .into_iter()
        .filter(|(_, args)| !(plan_check_off && reads_parquet_metadata(args)))
    {
        let reply_a = client_a.call(tool, args.clone()).await.unwrap();
        let reply_b = client_b.call(tool, args.clone()).await.unwrap();
        let (bytes_a, bytes_b) = (reply_bytes(&reply_a), reply_bytes(&reply_b));
        if bytes_a != bytes_b {
            differences.push(format!("{tool} {args}:\n  A: {bytes_a}\n  B: {bytes_b}"));
        }
        for bytes in [&bytes_a, &bytes_b] {
            for planted in [PLANTED_A, PLANTED_B] {
                assert!(
                    !bytes.contains(planted),
                    "{tool} {args} (off: {layers:?}): {bytes}"
                );
            }
            for host in [&a.exports, &b.exports] {
                assert!(!bytes.contains(&host.display().to_string()), "{bytes}");
            }
        }
        if duckgate::mcp_client::envelope_of(&reply_a)["status"] == "success" {
            answered += 1;
        }
    }
    client_a.close().await.unwrap();
    client_b.close().await.unwrap();
    assert!(
        differences.is_empty(),
        "off: {layers:?}: {} probes tell the two folders apart:\n{}",
        differences.len(),
        differences.join("\n")
    );
    answered
}

#[tokio::test(flavor = "multi_thread")]
async fn two_folders_whose_hidden_data_differ_get_byte_identical_replies_to_every_probe() {
    let answered = assert_identical_replies("").await;
    // The visible data still answer: the probes are not all refusals.
    assert!(answered >= 12, "only {answered} probes answered");
}

/// DuckDB's side alone: with the plan check switched off, the folders' file system (a hidden
/// file is a missing one) and the readers (a hidden Parquet column is unbound; the readers and
/// options that cannot hide one are refused) keep the two folders alike.
#[tokio::test(flavor = "multi_thread")]
async fn with_the_plan_check_off_duckdbs_side_alone_keeps_the_folders_alike() {
    let answered = assert_identical_replies("plan_check").await;
    assert!(answered >= 12, "only {answered} probes answered");
}

/// A hidden file and a hidden column get, byte for byte, the reply a made-up name of the same
/// length gets.
#[tokio::test(flavor = "multi_thread")]
async fn a_hidden_file_or_column_is_answered_like_a_made_up_one() {
    let a = fixture("files-privacy-names", true);
    let client = server(&a, "").await;
    let pairs = [
        (
            "SELECT patient_name FROM 'exports/people/*.parquet'",
            "patient_name",
            "patient_nbme",
        ),
        (
            "SELECT * FROM 'exports/people/*.parquet' ORDER BY patient_name",
            "patient_name",
            "patient_nbme",
        ),
        (
            "SELECT * FROM 'exports/private/secret.parquet'",
            "secret",
            "sekret",
        ),
        (
            "SELECT * FROM read_parquet(['exports/private/secret.parquet'])",
            "secret",
            "sekret",
        ),
    ];
    for (sql, hidden, made_up) in pairs {
        let call = |sql: String| {
            let client = &client;
            async move {
                let result = client.call("query", json!({ "sql": sql })).await.unwrap();
                reply_bytes(&result)
            }
        };
        let with_hidden = call(sql.to_owned()).await.replace(hidden, "NAME");
        let with_made_up = call(sql.replace(hidden, made_up))
            .await
            .replace(made_up, "NAME");
        assert_eq!(with_hidden, with_made_up, "{sql}");
        assert!(!with_hidden.contains(PLANTED_A), "{with_hidden}");
    }
    client.close().await.unwrap();
}
