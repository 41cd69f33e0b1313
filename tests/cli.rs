//! The CLI's `query` and `check` commands: their output and their exit codes (0 ok/accepted,
//! 1 refused or failed, 2 usage or I/O error).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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

fn duckgate(args: &[&str], db: Option<&Path>, stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_duckgate"));
    cmd.args(args);
    if let Some(db) = db {
        cmd.arg("--db").arg(db);
    }
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn duckgate");
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        use std::io::Write;
        pipe.write_all(text.as_bytes()).expect("write stdin");
    }
    child.wait_with_output().expect("wait duckgate")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
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
    let text = stdout(&out);
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
        stdout(&out).contains("Only read-only SELECT queries are allowed."),
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
    assert!(stdout(&accepted).starts_with("accepted"), "{accepted:?}");
    let refused = duckgate(
        &["check", "-"],
        Some(&db),
        Some("SELECT * FROM read_text('/etc/passwd')"),
    );
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(stdout(&refused).contains("read_text"), "{refused:?}");
    let several = duckgate(&["check", "SELECT 1; SELECT 2"], None, None);
    assert_eq!(several.status.code(), Some(1));
    assert!(
        stdout(&several).contains("Only single SQL statements are allowed."),
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
        Command::new(env!("CARGO_BIN_EXE_duckgate"))
            .args(["query", "--db", db, "SELECT count(*) AS n FROM readings"])
            .env("HOME", home)
            .stdin(Stdio::null())
            .output()
            .expect("run duckgate")
    };
    // An MCP client starts duckgate without a shell: duckgate expands `~/` itself.
    let out = run("~/cli.duckdb");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains('5'), "{stdout}");
    // Another user's home is not looked up: a usage error that says what to write instead.
    let out = run("~someone/cli.duckdb");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("write the full path"), "{stderr}");
}
