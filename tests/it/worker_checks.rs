//! The worker's own checks, each holding alone: the real binary (`duckgate query`) with the
//! parent's validator switched off by the test-only bypass.
//!
//! - With only the validator off, the worker's walk of DuckDB's parse tree and its plan check
//!   refuse every file, setting and catalog route, and the shapes where sqlparser's scoping or
//!   case folding differed from DuckDB's (a `WITH RECURSIVE` without UNION, a KELVIN SIGN), with
//!   the parent's wording: the reason and a next step.
//! - With DuckDB's hardening off as well as one of the two checks, the other still refuses. A
//!   refusal then cannot be the hardening's: the control query shows the unhardened engine would
//!   have read the file.

use crate::support::{TempDir, query_with_bypass as query};

use std::path::{Path, PathBuf};

/// A database, a secret file beside it, and a CSV file elsewhere.
struct Scene {
    _dir: TempDir,
    db: PathBuf,
    csv: PathBuf,
}

fn scene(tag: &str) -> Scene {
    let dir = TempDir::in_system_temp(tag);
    let db = dir.path().join("health.duckdb");
    let conn = duckdb::Connection::open(&db).expect("create db");
    conn.execute_batch(
        "CREATE TABLE readings AS SELECT i AS id, 100 + i AS glucose FROM range(5) t(i);
         CREATE TABLE k AS SELECT 7 AS v;",
    )
    .expect("fill db");
    drop(conn);
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    let csv = elsewhere.join("data.csv");
    std::fs::write(&csv, "a,b\nTOKEN-8d2e41,2\n").expect("write csv");
    Scene { _dir: dir, db, csv }
}

/// Asserts `sql` is refused by a check (policy_blocked or unknown_name, with a next step),
/// reveals nothing, and returns the output.
fn assert_refused(db: &Path, layers: &str, sql: &str) -> String {
    let (code, out) = query(db, layers, sql);
    assert_eq!(code, 1, "[{layers}] {sql} was answered: {out}");
    assert!(
        out.starts_with("policy_blocked:") || out.starts_with("unknown_name:"),
        "[{layers}] {sql}: not a refusal: {out}"
    );
    assert!(
        out.contains("\nnext step: "),
        "[{layers}] {sql}: the refusal names no next step: {out}"
    );
    assert!(
        !out.contains("TOKEN-8d2e41"),
        "[{layers}] {sql} leaked: {out}"
    );
    out
}

/// Routes to files, settings and other databases, as a prompt-injected agent writes them.
fn escape_routes(s: &Scene) -> Vec<String> {
    let csv = s.csv.display();
    let db = s.db.display();
    vec![
        format!("SELECT * FROM read_csv('{csv}')"),
        format!("SELECT * FROM '{csv}'"),
        format!("SELECT * FROM read_blob('{db}')"),
        format!("SELECT * FROM glob('{}/*')", s.csv.parent().unwrap().display()),
        format!("SELECT * FROM sniff_csv('{csv}')"),
        "SELECT * FROM duckdb_settings()".into(),
        "SELECT name, setting FROM pg_settings".into(),
        "SELECT * FROM pg_catalog.pg_settings".into(),
        "SELECT * FROM duckdb_databases()".into(),
        "SELECT * FROM duckdb_databases".into(),
        "SELECT * FROM system.main.duckdb_settings()".into(),
        "SELECT current_setting('threads')".into(),
        "SELECT getenv('HOME')".into(),
        "SELECT * FROM query_table('readings')".into(),
        "SELECT * FROM query('SELECT 1')".into(),
        "SELECT * FROM system.main.readings".into(),
        "SHOW DATABASES".into(),
        // sqlparser thought these inner names were the CTE and checked nothing; in DuckDB a CTE
        // without UNION does not see itself.
        format!("WITH RECURSIVE \"{csv}\" AS (SELECT * FROM \"{csv}\") SELECT * FROM \"{csv}\""),
        "WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings"
            .into(),
        "WITH RECURSIVE duckdb_databases AS (SELECT * FROM duckdb_databases) SELECT * FROM duckdb_databases"
            .into(),
        "WITH x AS (SELECT * FROM pg_settings) SELECT * FROM x".into(),
        // KELVIN SIGN: Rust lowercases it to `k`, DuckDB folds ASCII only.
        "WITH \"pg_settin\u{212A}s\" AS (SELECT 1 AS v) SELECT * FROM pg_settings".into(),
    ]
    .into_iter()
    .chain(text_rewritten_routes(s))
    .collect()
}

/// Routes through the two places the worker checks a text other than the one it received:
/// `CALL f(…)`, checked as the `SELECT * FROM f(…)` DuckDB binds it as, and a recursive CTE
/// with `USING KEY`, whose plan the plan check reads with the key lists blanked out (DuckDB
/// cannot serialise it with them).
fn text_rewritten_routes(s: &Scene) -> Vec<String> {
    let csv = s.csv.display();
    let keyed = "WITH RECURSIVE t(k, v) USING KEY (k) AS \
                 (SELECT 1, 1 UNION SELECT k, v + 1 FROM t WHERE v < 3)";
    vec![
        format!("CALL read_csv('{csv}')"),
        format!("  call read_blob('{}')", s.db.display()),
        "CALL duckdb_settings()".into(),
        format!("{keyed} SELECT * FROM t, read_csv('{csv}') c"),
        format!("{keyed} SELECT * FROM t WHERE (SELECT count(*) FROM read_text('{csv}')) > 0"),
        format!(
            "WITH RECURSIVE t(k, v) USING KEY (\"k)\") AS (SELECT 1, 1 UNION SELECT k, v + 1 FROM t \
             WHERE v < 3) SELECT * FROM t, read_csv('{csv}') c"
        ),
        format!("{keyed} SELECT 'USING KEY (x)' AS s, * FROM t, duckdb_settings()"),
    ]
}

/// The `USING KEY` query the routes above build on: answered whatever layers are off, so a
/// refusal of a route is the route's, not the rewrite's.
const KEYED_CONTROL: &str = "WITH RECURSIVE t(k, v) USING KEY (k) AS \
    (SELECT 1, 1 UNION SELECT k, v + 1 FROM t WHERE v < 3) SELECT max(v) AS top FROM t";

#[test]
fn with_the_parent_validator_off_the_worker_refuses_every_file_setting_and_catalog_route() {
    let s = scene("worker-checks");
    // Control: the worker still answers, and DuckDB's own resolution is what it follows.
    let (code, out) = query(&s.db, "validator", "SELECT sum(glucose) FROM readings");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("510"), "{out}");
    let (code, out) = query(
        &s.db,
        "validator",
        "WITH \u{212A} AS (SELECT 1 AS v) SELECT v FROM k",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains('7'), "`k` is the table, not the CTE: {out}");
    for sql in escape_routes(&s) {
        assert_refused(&s.db, "validator", &sql);
    }
    // The parent's wording for a denied function: its reason and a next step.
    let out = assert_refused(&s.db, "validator", "SELECT * FROM pg_settings");
    assert!(
        out.contains("reads DuckDB's configuration or secrets"),
        "{out}"
    );
}

#[test]
fn the_parse_tree_walk_alone_refuses_files_settings_and_functions() {
    let s = scene("walk-alone");
    let layers = "validator,plan_check,duckdb_hardening";
    // Control: unhardened and without the plan check, DuckDB reads the one file landlock allows.
    let blob = format!(
        "SELECT size > 0 AS readable FROM read_blob('{}')",
        s.db.display()
    );
    let (code, out) = query(
        &s.db,
        "validator,worker_walk,plan_check,duckdb_hardening",
        &blob,
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("true"), "{out}");
    assert_refused(&s.db, layers, &blob);
    for sql in escape_routes(&s) {
        assert_refused(&s.db, layers, &sql);
    }
}

#[test]
fn the_plan_check_alone_refuses_every_relation_that_is_not_the_databases_own() {
    let s = scene("plan-alone");
    let layers = "validator,worker_walk,duckdb_hardening";
    let routes = [
        format!(
            "SELECT size > 0 AS readable FROM read_blob('{}')",
            s.db.display()
        ),
        format!("SELECT content FROM read_text('{}')", s.db.display()),
        "SELECT * FROM duckdb_settings()".into(),
        "SELECT name, setting FROM pg_settings".into(),
        "SELECT * FROM duckdb_databases".into(),
        "SELECT * FROM system.main.duckdb_settings()".into(),
        "WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings"
            .into(),
        "WITH \"pg_settin\u{212A}s\" AS (SELECT 1 AS v) SELECT * FROM pg_settings".into(),
        "SHOW DATABASES".into(),
    ];
    // (`query_table('readings')` binds to a scan of the database's own table, which this check
    // rightly allows; the walk refuses it as SQL built from a string.)
    for sql in routes {
        assert_refused(&s.db, layers, &sql);
    }
    // Refused for what the rewritten text reads, which the refusal names: the plan check saw
    // through the rewrite (not a plan it could not read).
    for sql in text_rewritten_routes(&s) {
        let out = assert_refused(&s.db, layers, &sql);
        let read = ["read_csv", "read_blob", "read_text", "duckdb_settings"]
            .into_iter()
            .find(|function| sql.to_ascii_lowercase().contains(function))
            .expect("every route reads something");
        assert!(out.contains(read), "{sql}: {out}");
    }
    // Everything the plan check allows still runs on its own, the rewritten texts included.
    let (code, out) = query(
        &s.db,
        layers,
        "SELECT count(*) FROM readings, range(2) r, duckdb_tables() d WHERE d.table_name = 'k'",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("10"), "{out}");
    let (code, out) = query(&s.db, layers, KEYED_CONTROL);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains('3'), "{out}");
    let (code, out) = query(&s.db, layers, "CALL range(4)");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains('3'), "{out}");
}

#[test]
fn text_the_parent_cannot_parse_is_decided_by_the_worker() {
    let s = scene("unparsed");
    let answered = [
        "SELECT count(*) FILTER (glucose < 103) AS low FROM readings",
        "SELECT x: 42",
        "FROM readings SELECT #2 ORDER BY #1 DESC LIMIT 1",
        "SELECT list_transform([1, 2], x -> x * 2) AS doubled",
        "SELECT list_transform([1, 2], lambda x: x * 2) AS doubled",
        "SELECT count(*) FROM health.main.readings",
        "FROM (SUMMARIZE readings) SELECT count(*)",
    ];
    for sql in answered {
        let (code, out) = query(&s.db, "", sql);
        assert_eq!(code, 0, "{sql}: {out}");
    }
    // A mistake in such SQL gets DuckDB's own error, quoting the SQL as written (not the plan
    // check's EXPLAIN around it).
    let (code, out) = query(&s.db, "", "FROM readings SELECT #2 ORDER BY #2");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ORDER term out of range"), "{out}");
    assert!(!out.contains("EXPLAIN"), "{out}");
    // Unparseable by sqlparser, refused by the worker's walk with the parent's wording.
    let out = assert_refused(
        &s.db,
        "",
        "SELECT count(*) FILTER (glucose < 103) FROM readings, read_csv('x.csv')",
    );
    assert!(out.contains("read_csv"), "{out}");
}

/// Text whose quoting or comments sqlparser cuts differently from DuckDB hides a second
/// statement from the parent, which therefore cannot read it and leaves it to the worker:
/// DuckDB's own parser sees both statements, and the worker refuses them, with and without the
/// parent's validator.
#[test]
fn lexical_tricks_the_parent_cannot_read_are_refused_by_the_worker() {
    let s = scene("lexical-tricks");
    for layers in ["", "validator"] {
        for sql in [
            "SELECT 1 --x\r; DROP TABLE readings",
            "SELECT /* /* */ 2 */* ; DROP TABLE readings; -- */ 3",
            "SELECT e'\\' , ' ; DROP TABLE readings; --'",
        ] {
            let (code, out) = query(&s.db, layers, sql);
            assert_eq!(code, 1, "[{layers}] {sql:?} was answered: {out}");
            // DuckDB's parser sees the second statement: several statements, one of them a
            // write, refused either way.
            assert!(
                out.starts_with("multiple_statements:") || out.starts_with("policy_blocked:"),
                "[{layers}] {sql:?}: {out}"
            );
        }
    }
    let (code, out) = query(&s.db, "", "SELECT count(*) FROM readings");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains('5'), "{out}");
}
