//! The kind of each DuckDB error an agent meets is decided from DuckDB's typed error (its
//! `ExceptionType` and extra information, `src/engine/errors.rs`), through the real binary. The
//! parent's validator, which answers unknown names from its own catalog, is switched off (the
//! test-only bypass), so each failure below is DuckDB's own and its kind the worker's mapping.

use std::path::{Path, PathBuf};

use crate::support::{TempDir, duckgate_cli, outcome, run_cli};

fn build_db(dir: &Path) -> PathBuf {
    let path = dir.join("typed.duckdb");
    let conn = duckdb::Connection::open(&path).expect("create db");
    conn.execute_batch(
        "CREATE TABLE readings AS SELECT i AS id, 100 + i % 50 AS glucose FROM range(1000) t(i);",
    )
    .expect("fill db");
    path
}

/// `duckgate query --db DB [flags] SQL` with `layers` switched off: (exit code, stdout).
fn query(db: &Path, layers: &str, flags: &[&str], sql: &str) -> (i32, String) {
    let mut command = duckgate_cli(["query", "--db"]);
    command
        .arg(db)
        .args(flags)
        .arg(sql)
        .env(duckgate::sandbox::bypass::ENV_VAR, layers);
    let (code, stdout, _) = outcome(&run_cli(command, None));
    (code, stdout)
}

#[test]
fn duckdbs_binder_catalog_conversion_and_memory_errors_get_the_kind_of_their_type() {
    let dir = TempDir::new("typed-errors");
    let db = build_db(dir.path());
    let layers = "validator";
    let (code, out) = query(&db, layers, &[], "SELECT count(*) FROM readings");
    assert_eq!(code, 0, "control: {out}");

    // A binder error (COLUMN_NOT_FOUND, its `name`): the missing column is named.
    let (code, out) = query(&db, layers, &[], "SELECT glucos FROM readings");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("unknown_name"), "{out}");
    assert!(out.contains("glucos"), "{out}");

    // A catalog error (MISSING_ENTRY).
    let (code, out) = query(&db, layers, &[], "SELECT * FROM readngs");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("unknown_name"), "{out}");

    // A binder error that is not a missing name (NO_MATCHING_FUNCTION).
    let (code, out) = query(&db, layers, &[], "SELECT glucose + 'x' FROM readings");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("database_error"), "{out}");

    // A conversion error met while the result streams: the first 900 rows convert.
    let (code, out) = query(
        &db,
        layers,
        &[],
        "SELECT sum(CAST(CASE WHEN id < 900 THEN '1' ELSE 'x' END AS INTEGER)) FROM readings",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("database_error"), "{out}");
    assert!(out.contains("Conversion Error"), "{out}");

    // Out of memory, with spilling off: the memory wall's kind and its explanation.
    let (code, out) = query(
        &db,
        layers,
        &[
            "--memory-limit",
            "64MB",
            "--threads",
            "1",
            "--max-temp-size",
            "0",
        ],
        "SELECT count(DISTINCT s) FROM (SELECT repeat(range::VARCHAR, 20) AS s FROM range(20000000))",
    );
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("resource_limit"), "{out}");
    assert!(out.contains("--max-temp-size"), "{out}");
}

#[test]
fn with_every_sql_check_off_duckdbs_own_refusals_are_policy_blocked_by_their_type() {
    let dir = TempDir::in_system_temp("typed-refusals");
    let db = build_db(dir.path());
    let before = std::fs::read(&db).expect("read db");
    let layers = "validator,worker_walk,plan_check";
    // The read-only attach refuses the write (INVALID_INPUT, DuckDB's only marker its words).
    let (code, out) = query(&db, layers, &[], "INSERT INTO readings VALUES (5000, 1)");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("policy_blocked"), "{out}");
    assert!(out.contains("read-only"), "{out}");
    // DuckDB's hardening refuses the file (PERMISSION).
    let (code, out) = query(&db, layers, &[], "SELECT * FROM read_text('/etc/passwd')");
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("policy_blocked"), "{out}");
    assert!(!out.contains("root:"), "{out}");
    assert_eq!(std::fs::read(&db).expect("read db"), before);
}
