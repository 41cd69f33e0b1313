//! The real binary with every check of the SQL switched off (test-only bypass: the parent's
//! validator, the worker's walk of DuckDB's parse tree and its plan check): DuckDB's hardening
//! and the confined worker still deny every file, extension and configuration escape. And with
//! the hardening off too, the worker's sandbox alone still denies the file routes.
//! (tests/it/worker_checks.rs shows the worker's checks with the parent's validator off.)

use crate::support::{TempDir, query_with_bypass};

use std::path::{Path, PathBuf};

fn build_db(dir: &Path) -> PathBuf {
    let path = dir.join("bypass.duckdb");
    let conn = duckdb::Connection::open(&path).expect("create db");
    conn.execute_batch("CREATE TABLE t AS SELECT 1 AS x;")
        .expect("fill db");
    path
}

/// A secret outside the database's directory, and the routes that would read or write files.
struct Attack {
    secret: PathBuf,
    csv: PathBuf,
    out: PathBuf,
}

fn attack_files(dir: &Path) -> Attack {
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let secret = elsewhere.join("secret.txt");
    std::fs::write(&secret, "TOKEN-5f1c9a\n").expect("write secret");
    let csv = elsewhere.join("data.csv");
    std::fs::write(&csv, "a,b\nTOKEN-5f1c9a,2\n").expect("write csv");
    Attack {
        secret,
        csv,
        out: elsewhere.join("written.csv"),
    }
}

fn escape_statements(a: &Attack, db: &Path) -> Vec<String> {
    vec![
        format!("SELECT * FROM read_text('{}')", a.secret.display()),
        format!("SELECT * FROM read_csv('{}')", a.csv.display()),
        format!("SELECT * FROM '{}'", a.csv.display()),
        format!(
            "SELECT * FROM glob('{}/*')",
            a.secret.parent().unwrap().display()
        ),
        format!("COPY (SELECT 42) TO '{}'", a.out.display()),
        format!(
            "COPY (SELECT 42) TO '{}' (FORMAT csv, USE_TMP_FILE false)",
            db.display()
        ),
        format!("ATTACH '{}' AS other", a.secret.display()),
        "INSTALL httpfs".to_string(),
        "LOAD httpfs".to_string(),
        "SET enable_external_access = true".to_string(),
        "SET lock_configuration = false".to_string(),
    ]
}

#[test]
fn with_every_sql_check_off_duckdb_hardening_and_the_sandbox_deny_every_escape() {
    let dir = TempDir::in_system_temp("hardening");
    let db = build_db(dir.path());
    let before = std::fs::read(&db).expect("read db");
    let attack = attack_files(dir.path());
    // Control: with the bypass on, a plain query still runs, so failures below are denials and
    // not a broken worker.
    let layers = "validator,worker_walk,plan_check";
    let (code, out) = query_with_bypass(&db, layers, "SELECT x FROM t");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1 row returned."), "{out}");
    for sql in escape_statements(&attack, &db) {
        let (code, out) = query_with_bypass(&db, layers, &sql);
        assert_eq!(code, 1, "{sql} was not refused: {out}");
        assert!(
            !out.contains("TOKEN-5f1c9a"),
            "{sql} leaked the secret: {out}"
        );
        assert!(
            out.starts_with("policy_blocked")
                || out.starts_with("database_error")
                || out.starts_with("unknown_name"),
            "{sql}: {out}"
        );
    }
    assert!(!attack.out.exists(), "COPY wrote a file");
    assert_eq!(
        std::fs::read(&db).expect("read db"),
        before,
        "the database changed"
    );
}

#[test]
fn with_every_sql_check_and_the_hardening_off_the_sandbox_alone_denies_files() {
    let dir = TempDir::in_system_temp("sandbox");
    let db = build_db(dir.path());
    let before = std::fs::read(&db).expect("read db");
    let attack = attack_files(dir.path());
    let layers = "validator,worker_walk,plan_check,duckdb_hardening";
    let (code, out) = query_with_bypass(&db, layers, "SELECT x FROM t");
    assert_eq!(code, 0, "{out}");
    // Control: with the hardening off, DuckDB's file readers do work — on the one file landlock
    // allows. So the denials below are the sandbox's, not a reader that is switched off.
    let (code, out) = query_with_bypass(
        &db,
        layers,
        &format!(
            "SELECT size > 0 AS readable FROM read_blob('{}')",
            db.display()
        ),
    );
    assert_eq!(
        code, 0,
        "read_blob of the database itself should work unhardened: {out}"
    );
    assert!(out.contains("true"), "{out}");
    let routes = [
        format!("SELECT * FROM read_text('{}')", attack.secret.display()),
        format!("SELECT * FROM read_csv('{}')", attack.csv.display()),
        format!("SELECT * FROM '{}'", attack.csv.display()),
        format!("COPY (SELECT 42) TO '{}'", attack.out.display()),
        format!(
            "COPY (SELECT 42) TO '{}' (FORMAT csv, USE_TMP_FILE false)",
            db.display()
        ),
        "SELECT * FROM read_text('/etc/passwd')".to_string(),
    ];
    for sql in routes {
        let (code, out) = query_with_bypass(&db, layers, &sql);
        assert_eq!(code, 1, "{sql} succeeded with only the sandbox on: {out}");
        assert!(
            !out.contains("TOKEN-5f1c9a") && !out.contains("root:"),
            "{sql} leaked: {out}"
        );
    }
    assert!(!attack.out.exists(), "COPY wrote a file past the sandbox");
    assert_eq!(
        std::fs::read(&db).expect("read db"),
        before,
        "the database changed"
    );
}
