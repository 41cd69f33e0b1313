//! The everyday corpus over files: every question of `tests/it/everyday/corpus.sql`, asked of
//! Parquet and CSV copies of its tables in a declared folder, gets the same rows from duckgate
//! over MCP as from in-process DuckDB over the same files.
//!
//! The copies are written by in-process DuckDB from the corpus's own database
//! (`tests/it/everyday/schema.sql`), one file per table and view, into a folder declared as
//! `data`. Each entry's SQL is rewritten to read them: a table named where SQL names a relation
//! becomes the file `'data/<table>.parquet'` (or `.csv`), which DuckDB's replacement scan names
//! after the table, so `cgm_readings.glucose` still binds. The rewrite is test input, not
//! duckgate's: duckgate sees only the files. The server's database holds none of the tables, so
//! a table the rewrite missed fails on both sides rather than answering from the database.
//!
//! Entries that read no table (catalog listings), or name a table through its catalog
//! (`health.main.patients`, which names the database, not a file), are left out and counted.
//! Where in-process DuckDB cannot answer an entry over a copy (a CSV file keeps no LIST, STRUCT
//! or MAP type), duckgate must fail with DuckDB's error too, never refuse it or answer it; over
//! Parquet, which keeps every type, in-process DuckDB must answer every entry.

use std::collections::BTreeMap;
use std::path::Path;

use crate::everyday::{Entry, SCHEMA, entries};
use crate::everyday_corpus::compare_entry;
use crate::support::oracle::{JsonEncoding, Oracle, Reply, mcp_answer};
use crate::support::{TempDir, make_db};
use duckgate::mcp_client::McpClient;

/// The zone of the everyday corpus (its "today" and local hours).
const TIME_ZONE: &str = "America/New_York";
/// The corpus's tables and view, each copied to a file.
const TABLES: [&str; 8] = [
    "patients",
    "cgm_readings",
    "basal_rates",
    "boluses",
    "pump_events",
    "devices",
    "journal",
    "daily_glucose",
];
/// The words after which SQL names a relation (`SHOW` takes only a table's name, not a file's).
const RELATION_KEYWORDS: [&str; 6] = ["FROM", "JOIN", "DESCRIBE", "SUMMARIZE", "PIVOT", "UNPIVOT"];

/// A token of SQL, as far as the rewrite needs: words, and everything else as itself.
#[derive(Debug, PartialEq)]
enum Token<'a> {
    Word(&'a str),
    Other(&'a str),
}

/// `sql` cut into words, quoted text, comments, spaces and single characters, losslessly.
fn tokens(sql: &str) -> Vec<Token<'_>> {
    let bytes = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            out.push(Token::Word(&sql[start..i]));
            continue;
        }
        if c == b'\'' || c == b'"' {
            i += 1;
            while i < bytes.len() {
                if bytes[i] == c {
                    // A doubled quote is one quote inside the text.
                    if bytes.get(i + 1) == Some(&c) {
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                i += 1;
            }
        } else if sql[i..].starts_with("--") {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
        } else {
            // One character (UTF-8 aware).
            i += sql[i..].chars().next().map_or(1, char::len_utf8);
        }
        out.push(Token::Other(&sql[start..i]));
    }
    out
}

/// Why an entry is not asked of the files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum LeftOut {
    /// It reads no table: a catalog listing or a computation.
    ReadsNoTable,
    /// It names a table through its catalog or schema, which names the database.
    QualifiedName,
}

/// `sql` reading the copies `data/<table>.<extension>`: each table named right after a relation
/// keyword, unqualified, becomes the quoted file name.
fn over_files(sql: &str, extension: &str) -> Result<String, LeftOut> {
    let tokens = tokens(sql);
    let significant = |i: usize| -> Option<&Token<'_>> {
        tokens[..i].iter().rev().find(|t| match t {
            Token::Word(_) => true,
            Token::Other(text) => !text.trim().is_empty() && !text.starts_with("--"),
        })
    };
    let mut out = String::with_capacity(sql.len() + 64);
    let mut replaced = 0;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Word(word) if TABLES.contains(word) => {
                let after_keyword = matches!(
                    significant(i),
                    Some(Token::Word(w)) if RELATION_KEYWORDS.contains(&w.to_ascii_uppercase().as_str())
                );
                let qualified = matches!(significant(i), Some(Token::Other(".")));
                let next = tokens[i + 1..]
                    .iter()
                    .find(|t| !matches!(t, Token::Other(s) if s.trim().is_empty()));
                let followed_by_dot = matches!(next, Some(Token::Other(".")));
                if qualified && !followed_by_dot {
                    return Err(LeftOut::QualifiedName);
                }
                if after_keyword && !followed_by_dot {
                    out.push_str(&format!("'data/{word}.{extension}'"));
                    replaced += 1;
                } else {
                    out.push_str(word);
                }
            }
            Token::Word(text) | Token::Other(text) => out.push_str(text),
        }
    }
    if replaced == 0 {
        return Err(LeftOut::ReadsNoTable);
    }
    Ok(out)
}

#[test]
fn the_rewrite_names_files_only_where_sql_names_relations() {
    assert_eq!(
        over_files(
            "SELECT cgm_readings.glucose, boluses FROM cgm_readings JOIN boluses b USING (x) -- FROM patients\nWHERE note = 'FROM devices'",
            "csv"
        ),
        Ok("SELECT cgm_readings.glucose, boluses FROM 'data/cgm_readings.csv' JOIN 'data/boluses.csv' b USING (x) -- FROM patients\nWHERE note = 'FROM devices'".into())
    );
    assert_eq!(
        over_files("DESCRIBE devices", "parquet"),
        Ok("DESCRIBE 'data/devices.parquet'".into())
    );
    assert_eq!(
        over_files("SELECT * FROM health.main.patients", "csv"),
        Err(LeftOut::QualifiedName)
    );
    assert_eq!(
        over_files("SELECT * FROM duckdb_tables()", "csv"),
        Err(LeftOut::ReadsNoTable)
    );
}

/// The corpus's database, and a copy of each table as Parquet and CSV in `root/data`.
fn build_copies(dir: &TempDir) -> (std::path::PathBuf, std::path::PathBuf) {
    let db = dir.path().join("health.duckdb");
    make_db(&db, SCHEMA);
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let conn = duckdb::Connection::open(&db).unwrap();
    conn.execute_batch(&format!("SET TimeZone = '{TIME_ZONE}';"))
        .unwrap();
    for table in TABLES {
        for format in ["parquet", "csv"] {
            let header = if format == "csv" { ", HEADER" } else { "" };
            conn.execute_batch(&format!(
                "COPY (SELECT * FROM {table}) TO '{}' (FORMAT {format}{header});",
                data.join(format!("{table}.{format}")).display()
            ))
            .unwrap_or_else(|e| panic!("copy {table} to {format}: {e}"));
        }
    }
    drop(conn);
    // The server's database holds none of the tables.
    let empty = dir.path().join("empty.duckdb");
    make_db(&empty, "CREATE TABLE unrelated (x INTEGER);");
    (empty, data)
}

/// How the entries of one format went.
#[derive(Default, Debug)]
struct Tally {
    compared: usize,
    both_fail: usize,
    left_out: BTreeMap<LeftOut, usize>,
    failures: Vec<String>,
}

async fn ask_over(
    client: &McpClient,
    oracle: &Oracle,
    entries: &[Entry],
    extension: &str,
) -> Tally {
    let mut tally = Tally::default();
    for entry in entries {
        let sql = match over_files(&entry.sql, extension) {
            Ok(sql) => sql,
            Err(why) => {
                *tally.left_out.entry(why).or_default() += 1;
                continue;
            }
        };
        let rewritten = Entry {
            sql: sql.clone(),
            ..entry.clone()
        };
        let place = format!(
            "{} [{}] over {extension} (tests/it/everyday/corpus.sql line {})",
            entry.name, entry.category, entry.line
        );
        match oracle.answer(&sql) {
            Err(duckdb_error) => {
                // DuckDB cannot answer it over this copy: duckgate must fail in DuckDB's words.
                tally.both_fail += 1;
                if extension == "parquet" {
                    tally.failures.push(format!(
                        "{place}: in-process DuckDB failed over Parquet: {duckdb_error}\n    SQL: {sql}"
                    ));
                    continue;
                }
                match mcp_answer(client, &sql).await {
                    Reply::Failed { status, .. } if status == "error" => {}
                    Reply::Failed { status, envelope } => tally.failures.push(format!(
                        "{place}: DuckDB fails ({duckdb_error}), duckgate said {status}: {}",
                        envelope["error"]
                    )),
                    Reply::Answered(_) => tally.failures.push(format!(
                        "{place}: DuckDB fails ({duckdb_error}), duckgate answered"
                    )),
                }
            }
            Ok(_) => {
                tally.compared += 1;
                if let Some(problem) = compare_entry(oracle, client, &rewritten).await {
                    tally
                        .failures
                        .push(format!("{place}: {problem}\n    SQL: {sql}"));
                }
            }
        }
    }
    tally
}

fn serve_args(data: &Path) -> Vec<String> {
    vec![
        "--files".into(),
        format!("data={}", data.display()),
        "--time-zone".into(),
        TIME_ZONE.into(),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn every_everyday_question_over_parquet_and_csv_copies_gets_duckdbs_rows() {
    let entries = entries();
    let dir = TempDir::new("folders-corpus");
    let (empty_db, data) = build_copies(&dir);
    let args = serve_args(&data);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let client = crate::support::serve_whole(&empty_db, &args).await;
    let oracle = Oracle::in_folder_root(dir.path(), TIME_ZONE, JsonEncoding::Text);
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for extension in ["parquet", "csv"] {
        let tally = ask_over(&client, &oracle, &entries, extension).await;
        report.push(format!(
            "{extension}: {} compared, {} that DuckDB itself cannot answer over the copy, left out {:?}",
            tally.compared, tally.both_fail, tally.left_out
        ));
        // The rewrite must leave most of the corpus to compare.
        assert!(
            tally.compared * 10 >= entries.len() * 8,
            "{extension}: only {} of {} entries compared: {tally:?}",
            tally.compared,
            entries.len()
        );
        failures.extend(tally.failures);
    }
    client.close().await.unwrap();
    eprintln!("{}", report.join("\n"));
    assert!(
        failures.is_empty(),
        "{} everyday questions over files were not answered like in-process DuckDB:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
