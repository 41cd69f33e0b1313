//! DuckDB's hardening layer on its own: no validator, no statement check, no sandbox.
//!
//! Every attack runs through `Engine::run_query` exactly as a worker would run it with the
//! validator bypassed, against real database files in a temporary directory. With
//! `harden: true` each one must fail; the positive controls run the same statements with
//! `harden: false` and see them succeed, which proves it is the hardening that denies.
use crate::support::{TempDir, make_db};
use duckgate::protocol::databases::Databases;

use duckgate::engine::CheckedQuery;

use std::path::{Path, PathBuf};

use duckgate::engine::{Engine, EngineConfig};
use duckgate::protocol::databases::wal_path;
use duckgate::protocol::{Failure, QueryResult};
use duckgate_validate::error::ErrorKind;

/// The files an attack aims at: the served database, a secret CSV beside it, another database.
struct Scene {
    dir: TempDir,
    db: PathBuf,
    secret_csv: PathBuf,
    other_db: PathBuf,
}

fn scene(tag: &str) -> Scene {
    let dir = TempDir::in_system_temp(tag);
    let db = dir.path().join("served.duckdb");
    make_db(
        &db,
        "CREATE TABLE readings AS SELECT i AS id, 100 + i AS glucose FROM range(5) r(i);",
    );
    let other_db = dir.path().join("other.duckdb");
    make_db(
        &other_db,
        "CREATE TABLE secrets AS SELECT 'hunter2' AS password;",
    );
    let secret_csv = dir.path().join("secret.csv");
    std::fs::write(&secret_csv, "name,token\nalice,s3cr3t-token\n").unwrap();
    Scene {
        dir,
        db,
        secret_csv,
        other_db,
    }
}

fn engine(scene: &Scene, harden: bool) -> Engine {
    let cfg = EngineConfig {
        memory_limit_bytes: 256 << 20,
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "UTC".into(),
        harden,
        // As a spare runs: the warm-up's own ATTACH must leave the hardening as it was.
        full_warm_up: true,
        folders: Default::default(),
    };
    let mut engine = Engine::open(&cfg, &Databases::single(&scene.db)).unwrap();
    engine.attach().unwrap();
    engine
}

/// Run one statement on a fresh hardened engine; it must fail as a policy refusal (not, say,
/// a syntax error that would deny it for the wrong reason). Returns the error.
fn denied(scene: &Scene, sql: &str) -> Failure {
    let mut engine = engine(scene, true);
    match engine.run_query(&CheckedQuery::with_checks_off(sql), 100, 1 << 20) {
        Ok(result) => panic!("hardened DuckDB ran {sql:?}: {result:?}"),
        Err(err) => {
            eprintln!("DENIED  {sql}\n        -> {:?}: {}", err.kind, err.message);
            assert_eq!(err.kind, ErrorKind::PolicyBlocked, "{sql}: {}", err.message);
            err
        }
    }
}

/// Run one statement on a fresh engine *without* hardening; it must succeed.
fn allowed_unhardened(scene: &Scene, sql: &str) -> QueryResult {
    let mut engine = engine(scene, false);
    engine
        .run_query(&CheckedQuery::with_checks_off(sql), 100, 1 << 20)
        .unwrap_or_else(|e| panic!("control: unhardened DuckDB refused {sql:?}: {e:?}"))
}

fn quoted(path: &Path) -> String {
    format!("'{}'", path.to_str().unwrap().replace('\'', "''"))
}

fn all_text(result: &QueryResult) -> String {
    serde_json::to_string(&result.rows).unwrap()
}

#[test]
fn read_text_of_etc_passwd_is_denied() {
    let s = scene("read-text");
    let sql = "SELECT content FROM read_text('/etc/passwd')";
    let err = denied(&s, sql);
    assert!(!err.message.contains("root:"), "{}", err.message);
    assert!(all_text(&allowed_unhardened(&s, sql)).contains("root:"));
}

#[test]
fn read_csv_of_a_file_beside_the_database_is_denied() {
    let s = scene("read-csv");
    let sql = format!("SELECT * FROM read_csv({})", quoted(&s.secret_csv));
    let err = denied(&s, &sql);
    assert!(!err.message.contains("s3cr3t"), "{}", err.message);
    assert!(all_text(&allowed_unhardened(&s, &sql)).contains("s3cr3t-token"));
}

#[test]
fn replacement_scan_of_a_file_path_is_denied() {
    let s = scene("replacement");
    let sql = format!("SELECT * FROM {}", quoted(&s.secret_csv));
    denied(&s, &sql);
    assert!(all_text(&allowed_unhardened(&s, &sql)).contains("s3cr3t-token"));
}

#[test]
fn read_blob_and_glob_are_denied() {
    let s = scene("blob-glob");
    let blob = format!("SELECT content FROM read_blob({})", quoted(&s.secret_csv));
    denied(&s, &blob);
    allowed_unhardened(&s, &blob);
    let glob = format!("SELECT * FROM glob({})", quoted(&s.dir.path().join("*")));
    denied(&s, &glob);
    assert!(all_text(&allowed_unhardened(&s, &glob)).contains("secret.csv"));
}

#[test]
fn copy_to_a_file_is_denied_and_creates_nothing() {
    let s = scene("copy");
    let target = s.dir.path().join("x.csv");
    let sql = format!("COPY (SELECT 1 AS one) TO {}", quoted(&target));
    denied(&s, &sql);
    assert!(!target.exists(), "COPY created {}", target.display());
    allowed_unhardened(&s, &sql);
    assert!(target.exists(), "control: unhardened COPY did not write");
}

#[test]
fn copy_over_the_allowed_database_file_or_its_wal_is_denied() {
    // allowed_paths lets DuckDB open the database and its WAL, for writing too: without the
    // file system switched off after ATTACH, `USE_TMP_FILE false` overwrote the database.
    let s = scene("copy-db");
    let before = std::fs::read(&s.db).unwrap();
    for options in ["(FORMAT csv)", "(FORMAT csv, USE_TMP_FILE false)"] {
        denied(
            &s,
            &format!("COPY (SELECT 1 AS one) TO {} {options}", quoted(&s.db)),
        );
        assert_eq!(
            std::fs::read(&s.db).unwrap(),
            before,
            "the database file changed"
        );
    }
    let wal = wal_path(&s.db);
    denied(
        &s,
        &format!("COPY (SELECT 1 AS one) TO {} (FORMAT csv)", quoted(&wal)),
    );
    assert!(!wal.exists(), "COPY created the WAL file");
    denied(&s, &format!("SELECT * FROM read_blob({})", quoted(&s.db)));
    // Control: without the hardening the same COPY destroys the database file.
    allowed_unhardened(
        &s,
        &format!(
            "COPY (SELECT 1 AS one) TO {} (FORMAT csv, USE_TMP_FILE false)",
            quoted(&s.db)
        ),
    );
    assert_ne!(
        std::fs::read(&s.db).unwrap(),
        before,
        "control: unhardened COPY did not write"
    );
}

#[test]
fn the_file_system_stays_off_and_the_database_stays_readable() {
    let s = scene("fs-off");
    let mut engine = engine(&s, true);
    for sql in [
        "SET disabled_filesystems = ''",
        "RESET disabled_filesystems",
    ] {
        let err = engine
            .run_query(&CheckedQuery::with_checks_off(sql), 10, 1 << 20)
            .unwrap_err();
        eprintln!("DENIED  {sql}\n        -> {:?}: {}", err.kind, err.message);
        assert_eq!(err.kind, ErrorKind::PolicyBlocked, "{sql}: {}", err.message);
    }
    // Still answering from the attached file after the denials, through its open handle.
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT count(*) FROM readings"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![serde_json::json!(5)]]);
}

#[test]
fn attach_of_another_database_is_denied() {
    let s = scene("attach");
    let sql = format!("ATTACH {} AS other", quoted(&s.other_db));
    denied(&s, &sql);
    allowed_unhardened(&s, &sql);
}

#[test]
fn attach_of_the_served_database_read_write_is_denied() {
    let s = scene("attach-rw");
    denied(&s, &format!("ATTACH {} AS rw (READ_WRITE)", quoted(&s.db)));
}

#[test]
fn writes_to_the_attached_database_are_denied() {
    let s = scene("write");
    for sql in [
        "INSERT INTO readings VALUES (9, 1)",
        "UPDATE readings SET glucose = 0",
        "DELETE FROM readings",
        "DROP TABLE readings",
        "CREATE TABLE evil (a INTEGER)",
    ] {
        denied(&s, sql);
    }
}

#[test]
fn installing_or_loading_an_extension_is_denied() {
    // json is built in; httpfs is not, and would need the network or a file to load.
    let s = scene("extensions");
    denied(&s, "INSTALL httpfs");
    denied(&s, "LOAD httpfs");
    denied(&s, "FORCE INSTALL httpfs FROM community");
    denied(&s, &format!("LOAD {}", quoted(&s.secret_csv)));
}

#[test]
fn reopening_external_access_or_unlocking_the_configuration_is_denied() {
    let s = scene("settings");
    for sql in [
        "SET enable_external_access = true",
        "SET lock_configuration = false",
        "RESET lock_configuration",
        "RESET allowed_paths",
        "SET allowed_paths = ['/etc/passwd']",
        "SET allowed_directories = ['/']",
        "SET autoload_known_extensions = true",
        "SET allow_community_extensions = true",
        "SET memory_limit = '100GB'",
        "SET threads = 64",
        "SET temp_directory = '/tmp'",
    ] {
        denied(&s, sql);
    }
    // Controls. (DuckDB refuses `SET enable_external_access = true` on a running instance
    // whatever the configuration, so that one has no positive control.)
    for sql in [
        "SET lock_configuration = false",
        "RESET allowed_paths",
        "SET threads = 3",
    ] {
        allowed_unhardened(&s, sql);
    }
}

#[test]
fn profiling_output_to_a_file_is_denied() {
    let s = scene("profiling");
    let target = s.dir.path().join("profile.json");
    denied(&s, &format!("SET profiling_output = {}", quoted(&target)));
    denied(&s, "PRAGMA enable_profiling = 'json'");
    assert!(!target.exists());
}

#[test]
fn export_database_is_denied() {
    let s = scene("export");
    let target = s.dir.path().join("export");
    denied(&s, &format!("EXPORT DATABASE {}", quoted(&target)));
    assert!(!target.exists());
}

#[test]
fn ordinary_queries_still_work_when_hardened() {
    let s = scene("positive");
    let mut engine = engine(&s, true);
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT sum(glucose) AS total FROM readings"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![serde_json::json!(510)]]);
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT count(*) FROM served.main.readings"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![serde_json::json!(5)]]);
}

#[test]
fn timings_of_open_attach_and_first_query() {
    // Printed for the report; no timing is asserted.
    let s = scene("timings");
    let cfg = EngineConfig {
        memory_limit_bytes: 2 << 30,
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "UTC".into(),
        harden: true,
        full_warm_up: false,
        folders: Default::default(),
    };
    for _ in 0..3 {
        let t0 = std::time::Instant::now();
        let mut engine = Engine::open(&cfg, &Databases::single(&s.db)).unwrap();
        let t1 = std::time::Instant::now();
        engine.attach().unwrap();
        let t2 = std::time::Instant::now();
        let query = engine
            .check_statement("SELECT avg(glucose) FROM readings")
            .unwrap();
        let t3 = std::time::Instant::now();
        let r = engine.run_query(&query, 10, 1 << 20).unwrap();
        let t4 = std::time::Instant::now();
        assert_eq!(r.row_count, 1);
        let ms = |a: std::time::Instant, b: std::time::Instant| (b - a).as_secs_f64() * 1e3;
        eprintln!(
            "TIMING open {:.2} ms | attach {:.2} ms | check_statement {:.2} ms | first query {:.2} ms",
            ms(t0, t1),
            ms(t1, t2),
            ms(t2, t3),
            ms(t3, t4)
        );
    }
}

/// With spilling on, DuckDB keeps its local file system (its spill files need it), and its
/// hardening still denies every file outside the database and its own temporary directory.
/// What it does not deny, and cannot be configured to: SQL reaching that temporary directory,
/// which DuckDB adds to the paths SQL may name (shown here, so a DuckDB upgrade that changes it
/// is noticed). The worker's checks and landlock cover that (tests/it/sandbox_denial.rs).
#[test]
fn with_spilling_on_the_hardening_still_denies_files_outside_its_temporary_directory() {
    let s = scene("spill-hardening");
    let temp = s.dir.path().join("w-0");
    std::fs::create_dir(&temp).unwrap();
    let spilling = |sql: &str| {
        let cfg = EngineConfig {
            memory_limit_bytes: 256 << 20,
            memory_cap_bytes: None,
            spill: Some(duckgate::engine::Spill {
                dir: temp.clone(),
                max_bytes: 64 << 20,
            }),
            threads: 2,
            time_zone: "UTC".into(),
            harden: true,
            full_warm_up: true,
            folders: Default::default(),
        };
        let mut engine = Engine::open(&cfg, &Databases::single(&s.db)).unwrap();
        engine.attach().unwrap();
        engine.run_query(&CheckedQuery::with_checks_off(sql), 100, 1 << 20)
    };
    let outside = s.dir.path().join("outside.csv");
    for sql in [
        "SELECT content FROM read_text('/etc/passwd')".to_string(),
        format!("SELECT * FROM read_csv({})", quoted(&s.secret_csv)),
        format!("SELECT * FROM {}", quoted(&s.secret_csv)),
        format!("COPY (SELECT 42) TO {}", quoted(&outside)),
        format!("ATTACH {} AS other", quoted(&s.other_db)),
        "SET enable_external_access = true".to_string(),
    ] {
        match spilling(&sql) {
            Ok(result) => panic!("hardened, spilling DuckDB ran {sql:?}: {result:?}"),
            Err(err) => assert_eq!(err.kind, ErrorKind::PolicyBlocked, "{sql}: {}", err.message),
        }
    }
    assert!(!outside.exists());
    let inside = temp.join("inside.csv");
    spilling(&format!("COPY (SELECT 42 AS x) TO {}", quoted(&inside)))
        .expect("DuckDB lets SQL write its own temp_directory");
    assert!(inside.exists());
}
