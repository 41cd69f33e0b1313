//! How DuckDB's failures reach the agent: each with its registry kind and DuckDB's own words.

use super::*;
use crate::protocol::databases::Databases;

#[test]
fn missing_database_is_database_not_found_and_names_the_database_not_its_path() {
    let dir = TempDir::new("missing");
    let db = dir.path().join("nope.duckdb");
    let mut engine = Engine::open(&config("256MB"), &Databases::single(&db)).unwrap();
    let err = engine.attach().unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseNotFound);
    assert!(err.message.contains("\"nope\""), "{}", err.message);
    assert!(
        !err.message.contains(dir.path().to_str().unwrap()),
        "{}",
        err.message
    );
    assert_eq!(err.construct.as_deref(), Some("nope"));
}

#[test]
fn a_file_that_is_not_duckdb_is_a_clear_database_error() {
    let dir = TempDir::new("notduck");
    let db = dir.path().join("notes.duckdb");
    std::fs::write(&db, "this is not a database, just some text\n".repeat(200)).unwrap();
    let mut engine = Engine::open(&config("256MB"), &Databases::single(&db)).unwrap();
    let err = engine.attach().unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseError);
    assert!(
        err.message.contains("is not a DuckDB database"),
        "{}",
        err.message
    );
    // DuckDB's words pass on without the file's host path.
    assert!(
        !err.message.contains(dir.path().to_str().unwrap()),
        "{}",
        err.message
    );
}

#[test]
fn syntax_errors_carry_duckdbs_message() {
    let dir = TempDir::new("syntax");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let err = engine
        .run_query(&CheckedQuery::with_checks_off("SELEC 1"), 10, 1 << 20)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::SyntaxError);
    assert!(err.message.starts_with("Parser Error:"), "{}", err.message);
    let err = engine.check_statement("SELECT FROM WHERE").unwrap_err();
    assert_eq!(err.kind, ErrorKind::SyntaxError, "{}", err.message);
}

#[test]
fn unknown_tables_and_columns_are_unknown_name_with_duckdbs_message() {
    let dir = TempDir::new("binder");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let err = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT * FROM missing_table"),
            10,
            1 << 20,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnknownName, "{}", err.message);
    assert!(err.message.contains("missing_table"), "{}", err.message);
    let err = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT no_such_column FROM t"),
            10,
            1 << 20,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnknownName, "{}", err.message);
    assert!(err.message.contains("no_such_column"), "{}", err.message);
    let err = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT 'a' + 1"),
            10,
            1 << 20,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseError, "{}", err.message);
}

#[test]
fn running_out_of_memory_is_a_resource_limit() {
    let dir = TempDir::new("oom");
    let db = small_db(&dir);
    let mut engine = attached(&db, "32MB");
    let err = engine
        .run_query(
            &CheckedQuery::with_checks_off(
                "SELECT count(DISTINCT i), list(i)[1] FROM range(100000000) r(i)",
            ),
            10,
            1 << 20,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ResourceLimit, "{}", err.message);
    eprintln!("oom message: {}", err.message);
}
