//! The CLI's `query` and `check` commands: their output and their exit codes (0 ok/accepted,
//! 1 refused or failed, 2 usage or I/O error).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{duckgate_cli, run_cli, stderr_of, stdout_of};
use duckgate::protocol::databases::wal_path;

fn db(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("duckgate-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("cli.duckdb");
    let conn = duckdb::Connection::open(&path).expect("create db");
    conn.execute_batch(
        "CREATE TABLE readings AS SELECT i AS id, 100 + i AS glucose FROM range(5) t(i);",
    )
    .expect("fill db");
    path
}

/// `duckgate ARGS… [--db DB]`, with `stdin` on its stdin.
fn duckgate(args: &[&str], db: Option<&Path>, stdin: Option<&str>) -> Output {
    let mut command = duckgate_cli(args);
    if let Some(db) = db {
        command.arg("--db").arg(db);
    }
    run_cli(command, stdin)
}

#[test]
fn query_prints_an_aligned_table_and_exits_zero() {
    let db = db("query-ok");
    let out = duckgate(
        &[
            "query",
            "--limit",
            "2",
            "SELECT id, glucose FROM readings ORDER BY id",
        ],
        Some(&db),
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout_of(&out);
    assert!(text.starts_with("id | glucose\n"), "{text}");
    assert!(
        text.contains("2 rows returned (results truncated"),
        "{text}"
    );
}

#[test]
fn query_refusal_exits_one_with_the_seed_message() {
    let db = db("query-refused");
    let out = duckgate(&["query", "DELETE FROM readings"], Some(&db), None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout_of(&out).contains("Only read-only SELECT queries are allowed."),
        "{out:?}"
    );
}

#[test]
fn query_without_db_or_with_a_bad_limit_is_a_usage_error() {
    let out = duckgate(&["query", "SELECT 1"], None, None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let db = db("query-usage");
    let out = duckgate(&["query", "--limit", "0", "SELECT 1"], Some(&db), None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn check_accepts_and_refuses_with_exit_codes_and_reads_stdin() {
    let db = db("check");
    let accepted = duckgate(
        &["check", "SELECT avg(glucose) FROM readings"],
        Some(&db),
        None,
    );
    assert_eq!(accepted.status.code(), Some(0), "{accepted:?}");
    assert!(stdout_of(&accepted).starts_with("accepted"), "{accepted:?}");
    let refused = duckgate(
        &["check", "-"],
        Some(&db),
        Some("SELECT * FROM read_text('/etc/passwd')"),
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(stdout_of(&refused).contains("read_text"), "{refused:?}");
    let several = duckgate(&["check", "SELECT 1; SELECT 2"], None, None);
    assert_eq!(several.status.code(), Some(1));
    assert!(
        stdout_of(&several).contains("Only single SQL statements are allowed."),
        "{several:?}"
    );
    let missing = duckgate(
        &["check", "SELECT 1"],
        Some(Path::new("/nonexistent/x.duckdb")),
        None,
    );
    assert_eq!(missing.status.code(), Some(2), "{missing:?}");
}

#[test]
fn a_leading_tilde_in_a_path_flag_is_the_home_directory() {
    let path = db("tilde");
    let home = path.parent().expect("temp dir");
    let run = |db: &str| {
        let mut command = duckgate_cli(["query", "--db", db, "SELECT count(*) AS n FROM readings"]);
        command.env("HOME", home);
        run_cli(command, None)
    };
    // An MCP client starts duckgate without a shell: duckgate expands `~/` itself.
    let out = run("~/cli.duckdb");
    let stdout = stdout_of(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains('5'), "{stdout}");
    // Another user's home is not looked up: a usage error that says what to write instead.
    let out = run("~someone/cli.duckdb");
    assert_eq!(out.status.code(), Some(2));
    let stderr = stderr_of(&out);
    assert!(stderr.contains("write the full path"), "{stderr}");
}

#[test]
fn serve_on_a_missing_database_starts_and_says_so_in_one_line_on_stderr() {
    let dir = db("serve-missing");
    let missing = dir.with_file_name("not-yet.duckdb");
    // stdin is closed at once: the server starts, finds no client and stops.
    let out = duckgate(&["serve"], Some(&missing), None);
    let text = stderr_of(&out);
    let expected = format!(
        "duckgate: serving; the database does not exist yet: {} — calls answer \
         database_not_found until it is created",
        missing.display()
    );
    assert_eq!(text.matches(&expected).count(), 1, "{text}");
    // The workers confine without the file (no landlock grant of a missing path is tried).
    assert!(!text.contains("grant read access"), "{text}");
    assert!(text.contains("query workers confined"), "{text}");
    // An existing database gets no such line.
    let out = duckgate(&["serve"], Some(&dir), None);
    assert!(!stderr_of(&out).contains("does not exist yet"), "{out:?}");
}

#[test]
fn check_without_db_takes_table_names_on_trust_and_says_they_were_not_checked() {
    let out = duckgate(
        &[
            "check",
            "SELECT avg(glucose) FROM readings JOIN events USING (id)",
        ],
        None,
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = stdout_of(&out);
    assert!(text.starts_with("accepted (Query)"), "{text}");
    assert!(!text.contains("does not exist"), "{text}");
    assert!(
        text.contains(
            "table names were not checked (readings, events): pass --db to resolve them \
             against the database's catalog"
        ),
        "{text}"
    );
    // Every other rule still holds without the database.
    let refused = duckgate(
        &["check", "SELECT * FROM readings, read_text('/etc/passwd')"],
        None,
        None,
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(stdout_of(&refused).contains("read_text"), "{refused:?}");
    // With the database, a table it lacks is still refused as missing.
    let db = db("check-missing-table");
    let missing = duckgate(&["check", "SELECT * FROM events"], Some(&db), None);
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    assert!(
        stdout_of(&missing).contains("does not exist"),
        "{missing:?}"
    );
}

#[test]
fn query_without_db_asks_for_the_file_to_query_not_to_serve() {
    let out = duckgate(&["query", "SELECT 1"], None, None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = stderr_of(&out);
    assert!(
        text.contains("--db PATH is required: the DuckDB database file to query"),
        "{text}"
    );
    assert!(!text.contains("to serve"), "{text}");
}

#[test]
fn query_help_hides_the_worker_pool_flags_that_serve_keeps() {
    let query = stdout_of(&duckgate(&["query", "--help"], None, None));
    assert!(query.contains("--timeout"), "{query}");
    for flag in ["--warm-workers", "--max-concurrent <"] {
        assert!(!query.contains(flag), "query --help shows {flag}:\n{query}");
    }
    let serve = stdout_of(&duckgate(&["serve", "--help"], None, None));
    for flag in ["--warm-workers", "--max-concurrent <"] {
        assert!(serve.contains(flag), "serve --help lacks {flag}:\n{serve}");
    }
}

#[test]
fn the_readme_states_the_real_missing_db_hint_default() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
        .expect("read README.md");
    let row = readme
        .lines()
        .find(|line| line.starts_with("| `--missing-db-hint TEXT` |"))
        .expect("README has a --missing-db-hint row");
    // | flag | default | meaning |: the default is the second cell.
    let default = row.split(" | ").nth(1).expect("a default cell").trim();
    assert_eq!(default, duckgate::gateway::DEFAULT_MISSING_DB_HINT, "{row}");
}

#[test]
fn demo_refuses_an_existing_database_that_is_not_a_demo_one_and_leaves_it_untouched() {
    let mine = db("demo-not-demo");
    let before = std::fs::read(&mine).expect("read db");
    let modified = std::fs::metadata(&mine).and_then(|m| m.modified()).unwrap();
    let mut command = duckgate_cli(["demo", "--out"]);
    command.arg(&mine);
    let out = run_cli(command, None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = stderr_of(&out);
    assert!(
        text.contains(&format!(
            "{} exists and is not a demo database",
            mine.display()
        )),
        "{text}"
    );
    assert!(text.contains("cgm_readings"), "{text}");
    assert!(!text.contains("using the existing demo database"), "{text}");
    assert!(
        stdout_of(&out).is_empty(),
        "no session ran: {}",
        stdout_of(&out)
    );
    assert_eq!(std::fs::read(&mine).unwrap(), before, "the file changed");
    assert_eq!(
        std::fs::metadata(&mine).and_then(|m| m.modified()).unwrap(),
        modified
    );
    assert!(!wal_path(&mine).exists(), "a WAL appeared");
}

/// `duckgate import` turns a CSV that is no health export (dates, numbers, text) into a table
/// named after its first columns (never its file, which may carry a name), with detected column
/// types and a comment saying how it was read, and the result is served like any database: a
/// query through a confined worker reads it back.
#[test]
fn import_turns_a_csv_export_into_a_typed_table_that_query_reads() {
    let dir = std::env::temp_dir().join(format!("duckgate-cli-import-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("export")).unwrap();
    let csv = dir.join("export").join("Walks 2026.csv");
    std::fs::write(
        &csv,
        "Timestamp,Distance (km),Pace,Shoes\n\
         2026-11-20 08:00:00,5,Easy,Trail\n\
         2026-11-20 18:05:00,7,Tempo,Road\n\
         2026-11-21 08:10:00,131,Long,Road\n",
    )
    .unwrap();
    std::fs::write(dir.join("export").join("notes.txt"), "not a csv").unwrap();
    let out = dir.join("health.duckdb");
    let export = dir.join("export");
    let imported = duckgate(
        &[
            "import",
            "--out",
            out.to_str().unwrap(),
            export.to_str().unwrap(),
        ],
        None,
        None,
    );
    assert_eq!(imported.status.code(), Some(0), "{}", stderr_of(&imported));
    let said = stdout_of(&imported);
    assert!(
        said.contains("csv_timestamp_distance_km_pace (3 rows)"),
        "{said}"
    );
    assert!(said.contains("duckgate serve --db"), "{said}");

    let typed = duckgate(
        &[
            "query",
            "SELECT any_value(typeof(\"Timestamp\")) AS t, \
             any_value(typeof(\"Distance (km)\")) AS g, any_value(typeof(Pace)) AS tr, \
             max(\"Distance (km)\") AS top, \
             (SELECT comment FROM duckdb_tables() \
              WHERE table_name = 'csv_timestamp_distance_km_pace') AS c \
             FROM csv_timestamp_distance_km_pace",
        ],
        Some(&out),
        None,
    );
    let text = stdout_of(&typed);
    assert_eq!(typed.status.code(), Some(0), "{text}{}", stderr_of(&typed));
    assert!(text.contains("TIMESTAMP"), "{text}");
    assert!(
        text.contains("BIGINT") || text.contains("INTEGER"),
        "{text}"
    );
    assert!(text.contains("VARCHAR"), "{text}");
    assert!(text.contains("131"), "{text}");
    assert!(text.contains("Imported by duckgate import from"), "{text}");

    // A second import over the same file is refused (with the flags that would refresh it)
    // and leaves it as it was.
    let before = std::fs::read(&out).unwrap();
    let again = duckgate(
        &[
            "import",
            "--out",
            out.to_str().unwrap(),
            csv.to_str().unwrap(),
        ],
        None,
        None,
    );
    assert_eq!(again.status.code(), Some(2), "{}", stderr_of(&again));
    let refused = stderr_of(&again);
    assert!(refused.contains("already exists"), "{refused}");
    assert!(
        refused.contains("--append") && refused.contains("--replace"),
        "the next step names the flags: {refused}"
    );
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn query_and_plot_help_show_db_as_required_and_a_one_shot_query_prints_no_sandbox_line() {
    for command in ["query", "plot"] {
        let out = duckgate(&[command, "--help"], None, None);
        let help = stdout_of(&out);
        let usage = help
            .lines()
            .find(|line| line.starts_with("Usage:"))
            .unwrap_or_else(|| panic!("{help}"));
        assert!(
            usage.contains(" --db <DB>") && !usage.contains("[--db"),
            "{command}: {usage}"
        );
    }
    let db = db("query-quiet");
    let out = duckgate(&["query", "SELECT 1"], Some(&db), None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        !stderr_of(&out).contains("query workers confined"),
        "{}",
        stderr_of(&out)
    );
}
