//! Engine tests on real DuckDB files in a temporary directory: here what the hardening, the
//! statement check, the result caps and the file lock guarantee (the tests SECURITY.md cites),
//! with the helpers every topic shares; the row conversion, the catalog and error reporting
//! each in a file of their own under `tests/`.

mod catalog;
mod conversion;
mod errors;

use crate::protocol::databases::Databases;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use serde_json::json;

use super::*;
use crate::protocol::databases::wal_path;
use duckgate_validate::error::messages;

/// A directory removed when dropped (no extra dependency for one helper).
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("duckgate-engine-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Create a database file with `sql` run on a plain read-write connection.
pub(crate) fn make_db(dir: &TempDir, name: &str, sql: &str) -> PathBuf {
    let path = dir.path().join(name);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    path
}

/// A worker's engine settings (hardened, fully warmed up, 2 threads, UTC) with `memory_limit`
/// (`parse_size`'s syntax).
pub(crate) fn config(memory_limit: &str) -> EngineConfig {
    EngineConfig {
        memory_limit_bytes: crate::size::parse_size(memory_limit).unwrap(),
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "UTC".into(),
        harden: true,
        full_warm_up: true,
        folders: Default::default(),
    }
}

fn attached(db: &Path, memory_limit: &str) -> Engine {
    let mut engine = Engine::open(&config(memory_limit), &Databases::single(db)).unwrap();
    engine.attach().unwrap();
    engine
}

fn small_db(dir: &TempDir) -> PathBuf {
    make_db(
        dir,
        "small.duckdb",
        "CREATE TABLE t AS SELECT i, 'row ' || i AS label FROM range(10) r(i);",
    )
}

/// Run `sql`, expect one row, return (column types, row).
fn one_row(engine: &mut Engine, sql: &str) -> (Vec<(String, String)>, Vec<Json>) {
    let result = engine
        .run_query(&CheckedQuery::with_checks_off(sql), 10, 1 << 20)
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    assert_eq!(result.row_count, 1, "{sql}");
    let types = result
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.data_type.clone()))
        .collect();
    (types, result.rows.into_iter().next().unwrap())
}

#[test]
fn truncation_by_rows_reads_one_row_past_the_limit() {
    let dir = TempDir::new("rows");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT i FROM t ORDER BY i"),
            3,
            1 << 20,
        )
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (3, true));
    assert_eq!(r.rows, vec![vec![json!(0)], vec![json!(1)], vec![json!(2)]]);
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT i FROM t"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (10, false));
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT i FROM t"),
            11,
            1 << 20,
        )
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (10, false));
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT i FROM t WHERE i < 0"),
            5,
            1 << 20,
        )
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (0, false));
    assert_eq!(r.columns[0].name, "i");
}

#[test]
fn truncation_by_bytes_stops_before_the_cap() {
    let dir = TempDir::new("bytes");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    // Each row is ["xxxxxxxxxx"] = 14 bytes, plus a comma between rows.
    let sql = "SELECT repeat('x', 10) FROM range(100)";
    let r = engine
        .run_query(&CheckedQuery::with_checks_off(sql), 1000, 14 * 3 + 2)
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (3, true));
    let r = engine
        .run_query(&CheckedQuery::with_checks_off(sql), 1000, 14 * 3 + 1)
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (2, true));
    let all = engine
        .run_query(&CheckedQuery::with_checks_off(sql), 1000, 1 << 20)
        .unwrap();
    assert_eq!((all.row_count, all.truncated), (100, false));
    assert_eq!(
        serde_json::to_string(&all.rows).unwrap().len(),
        100 * 14 + 99 + 2
    );
}

#[test]
fn results_stream_so_a_huge_result_with_a_small_limit_is_cheap() {
    // Materialising 10^9 BIGINTs needs ~8 GB; with a 64 MB memory_limit only streaming can
    // answer at all.
    let dir = TempDir::new("stream");
    let db = small_db(&dir);
    let mut engine = attached(&db, "64MB");
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT i, i * 2 AS j FROM range(1000000000) r(i)"),
            5,
            1 << 20,
        )
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (5, true));
}

/// Environment variable that turns [`lock_holder_child`] into a lock holder.
const LOCK_HOLDER_ENV: &str = "DUCKGATE_TEST_HOLD_WRITE_LOCK";

/// Not a test of its own (hence ignored): run as a child process by
/// `a_database_locked_by_another_process_is_database_locked`, it opens the database
/// read-write (taking DuckDB's exclusive lock), says so, and holds it until stdin closes.
#[test]
#[ignore]
fn lock_holder_child() {
    let Ok(path) = std::env::var(LOCK_HOLDER_ENV) else {
        return;
    };
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch("INSERT INTO t VALUES (99, 'held')")
        .unwrap();
    eprintln!("LOCKED");
    let mut sink = String::new();
    let _ = std::io::stdin().read_line(&mut sink);
    drop(conn);
}

#[test]
fn a_database_locked_by_another_process_is_database_locked() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = TempDir::new("locked");
    let db = small_db(&dir);
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "engine::tests::lock_holder_child",
            "--ignored",
            "--nocapture",
        ])
        .env(LOCK_HOLDER_ENV, &db)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        let ready = line.contains("LOCKED");
        seen.push(line);
        if ready {
            break;
        }
    }
    assert!(
        seen.last().is_some_and(|l| l.contains("LOCKED")),
        "the lock-holder child did not start:\n{}",
        seen.join("\n")
    );

    let mut engine = Engine::open(&config("256MB"), &Databases::single(&db)).unwrap();
    let err = engine.attach().unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseLocked, "{}", err.message);
    eprintln!("locked message: {}", err.message);

    // Once the writer is gone, a fresh engine attaches and sees the writer's row.
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let mut engine = attached(&db, "256MB");
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT label FROM t WHERE i = 99"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![json!("held")]]);
}

#[test]
fn duckdbs_parser_accepts_one_read_only_statement() {
    let dir = TempDir::new("check");
    let db = small_db(&dir);
    let engine = attached(&db, "256MB");
    for sql in [
        "SELECT 1",
        "SELECT 1;",
        "  select i from t where i > 3 order by i  ",
        "WITH x AS (SELECT 1 AS a) SELECT * FROM x",
        "FROM t",
        "VALUES (1), (2)",
        "SELECT 1 UNION ALL SELECT 2",
        "DESCRIBE t",
        "DESCRIBE SELECT * FROM t",
        "SHOW t",
        "SUMMARIZE t",
        "EXPLAIN SELECT * FROM t",
        "EXPLAIN ANALYZE SELECT * FROM t",
    ] {
        assert!(engine.check_statement(sql).is_ok(), "{sql}");
    }
}

#[test]
fn duckdbs_parser_refuses_writes_and_several_statements() {
    let dir = TempDir::new("refuse");
    let db = small_db(&dir);
    let engine = attached(&db, "256MB");
    for sql in [
        "INSERT INTO t VALUES (1, 'x')",
        "UPDATE t SET i = 0",
        "DELETE FROM t",
        "DROP TABLE t",
        "CREATE TABLE u (a INTEGER)",
        "COPY t TO 'x.csv'",
        "ATTACH 'other.duckdb'",
        "DETACH small",
        "SET threads = 1",
        "RESET memory_limit",
        "PRAGMA show_tables",
        "INSTALL httpfs",
        "LOAD httpfs",
        "BEGIN TRANSACTION",
        "CHECKPOINT",
        "EXPORT DATABASE 'x'",
        "USE memory",
        "EXPLAIN DELETE FROM t",
        "EXPLAIN ANALYZE INSERT INTO t VALUES (1, 'x')",
        "PIVOT t ON label USING sum(i)",
    ] {
        let err = engine.check_statement(sql).unwrap_err();
        assert_eq!(err.kind, ErrorKind::PolicyBlocked, "{sql}: {err:?}");
        assert_eq!(err.message, messages::WRITE_REFUSED, "{sql}");
    }
    for sql in [
        "SELECT 1; SELECT 2",
        "SELECT 1; SELECT 2;",
        "EXPLAIN SELECT 1; SELECT 2",
    ] {
        let err = engine.check_statement(sql).unwrap_err();
        assert_eq!(err.kind, ErrorKind::MultipleStatements, "{sql}: {err:?}");
        assert_eq!(err.message, messages::MULTIPLE_STATEMENTS);
    }
    // A write hidden after a read is refused too (as a write: DuckDB cannot count it).
    let err = engine
        .check_statement("SELECT 1; DROP TABLE t")
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::PolicyBlocked);
}

#[test]
fn explain_returns_duckdbs_json_plan() {
    let dir = TempDir::new("explain");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let query = engine
        .check_statement("SELECT label FROM t WHERE i > 3")
        .unwrap();
    let plan = engine.explain(&query).unwrap().plan;
    let text = plan.to_string();
    assert!(plan.is_array() || plan.is_object(), "{text}");
    assert!(
        text.contains("SEQ_SCAN") || text.contains("TABLE_SCAN"),
        "{text}"
    );
}

#[test]
fn settings_before_attach_show_external_access_off_and_the_file_system_on() {
    let dir = TempDir::new("settings-open");
    let db = small_db(&dir);
    let engine = Engine::open(&config("256MB"), &Databases::single(&db)).unwrap();
    let settings: std::collections::HashMap<String, String> =
        engine.settings_readback().into_iter().collect();
    assert_eq!(settings["enable_external_access"], "false");
    assert_eq!(settings["lock_configuration"], "false");
    assert!(
        settings["local_file_system"].starts_with("enabled (file access denied"),
        "{settings:?}"
    );
}

#[test]
fn settings_read_back_show_the_hardening() {
    let dir = TempDir::new("settings");
    let db = small_db(&dir);
    let engine = attached(&db, "256MB");
    let settings: std::collections::HashMap<String, String> =
        engine.settings_readback().into_iter().collect();
    assert_eq!(settings["enable_external_access"], "false");
    assert_eq!(settings["lock_configuration"], "true");
    assert_eq!(settings["autoload_known_extensions"], "false");
    assert_eq!(settings["autoinstall_known_extensions"], "false");
    assert_eq!(settings["allow_community_extensions"], "false");
    assert_eq!(settings["allow_unsigned_extensions"], "false");
    assert_eq!(settings["threads"], "2");
    assert_eq!(settings["temp_directory"], "");
    assert_eq!(settings["local_file_system"], "disabled");
    // The databases are allowed by the names only the held descriptors serve, never by a path.
    assert!(
        settings["allowed_paths"].contains("duckgate-database:"),
        "{settings:?}"
    );
    assert!(
        !settings["allowed_paths"].contains(db.to_str().unwrap()),
        "{settings:?}"
    );
    assert!(settings["memory_limit"].contains("MiB") || settings["memory_limit"].contains("MB"));
}

/// Run `write` on `db` as a writer that stops without checkpointing, so that its rows are only
/// in `<db>.wal`.
fn leave_in_a_wal(db: &Path, write: &str) {
    let conn = Connection::open(db).unwrap();
    conn.execute_batch(&format!(
        "SET checkpoint_threshold = '1TB'; PRAGMA disable_checkpoint_on_shutdown; {write};"
    ))
    .unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    assert!(wal_path(db).exists(), "the writer left no WAL");
}

#[test]
fn a_leftover_wal_is_replayed_by_the_read_only_attach() {
    // A writer that stopped without checkpointing leaves its last rows only in `<db>.wal`;
    // the read-only attach must read them (through the WAL's held descriptor).
    let dir = TempDir::new("wal");
    let db = small_db(&dir);
    leave_in_a_wal(&db, "INSERT INTO t VALUES (42, 'only in the wal')");

    let mut engine = attached(&db, "256MB");
    let r = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT label FROM t WHERE i = 42"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(r.rows, vec![vec![json!("only in the wal")]]);
}

/// A process holds the WAL as it was when it opened its files (a template, for its whole life);
/// the writer then checkpoints that WAL into the database file and removes it. The descriptor
/// still reads the old entries: replayed over the checkpointed file they would be applied twice
/// or refer to a checkpoint the file no longer has. The attach must read the database as it is
/// now, as opening the WAL by its path would.
#[test]
fn a_wal_checkpointed_away_after_it_was_held_is_not_replayed() {
    let dir = TempDir::new("stale-wal");
    let db = small_db(&dir);
    leave_in_a_wal(&db, "INSERT INTO t VALUES (42, 'was in the wal')");
    let databases = Databases::single(&db);
    let held = HeldDatabases::open(&databases);

    // The writer comes back: its rows move into the file, the WAL is removed, and it writes on.
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "CHECKPOINT; INSERT INTO t VALUES (43, 'after the checkpoint'); CHECKPOINT;",
    )
    .unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    assert!(
        !wal_path(&db).exists(),
        "the writer's checkpoint left a WAL"
    );

    let mut engine = Engine::open_holding(&config("256MB"), &databases, held).unwrap();
    engine
        .attach()
        .unwrap_or_else(|e| panic!("the attach over a removed WAL failed: {e:?}"));
    let (_, row) = one_row(
        &mut engine,
        "SELECT count(*), count(*) FILTER (WHERE i = 42), count(*) FILTER (WHERE i = 43) FROM t",
    );
    assert_eq!(row, vec![json!(12), json!(1), json!(1)]);
}

/// `sql` through a fresh worker's path: DuckDB's statement check beside the attach, the plan
/// check, then the query.
fn checked_run(db: &Path, sql: &str) -> Result<crate::protocol::QueryResult, Failure> {
    let mut engine = Engine::open(&config("256MB"), &Databases::single(db)).unwrap();
    let query = engine
        .attach_checking(Some(sql))?
        .expect("a checked statement for the SQL given");
    engine.check_plan(&query)?;
    engine.run_query(&query, 100, 1 << 20)
}

#[test]
fn grammar_and_names_duckdb_reads_its_own_way_are_checked_and_answered() {
    let dir = TempDir::new("grammar");
    let db = make_db(
        &dir,
        "own.duckdb",
        r#"CREATE TABLE "a.b.c" (x INTEGER); INSERT INTO "a.b.c" VALUES (7);
           CREATE SCHEMA exports; CREATE TABLE exports.csv (line VARCHAR);
           INSERT INTO exports.csv VALUES ('a,b');
           CREATE SCHEMA clinic; CREATE SCHEMA clinic.archive;
           CREATE TABLE clinic.archive.visits (id INTEGER); INSERT INTO clinic.archive.visits VALUES (1), (2);"#,
    );
    for (sql, rows) in [
        (r#"SELECT * FROM "a.b.c""#, 1),
        (r#"DESCRIBE "a.b.c""#, 1),
        // Named like a data file, but a table of the database: DuckDB's binder takes the table.
        ("SELECT * FROM exports.csv", 1),
        ("DESCRIBE exports.csv", 1),
        ("SELECT * FROM clinic.archive.visits", 2),
        ("SELECT * FROM own.clinic.archive.visits", 2),
        ("CALL range(3)", 3),
        ("CALL pragma_table_info('clinic.archive.visits')", 1),
        (
            "WITH RECURSIVE t(k, v) USING KEY (k) AS (SELECT 1, 1 UNION SELECT k, v + 1 FROM t WHERE v < 5) SELECT * FROM t",
            1,
        ),
    ] {
        let result = checked_run(&db, sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert_eq!(result.row_count, rows, "{sql}");
    }
    // A name like a file that is no relation of the database is refused before DuckDB binds
    // it (binding would try the file); so are other catalogs and refused table functions.
    for (sql, kind) in [
        (r#"SELECT * FROM "other.csv""#, ErrorKind::PolicyBlocked),
        ("SELECT * FROM exports.parquet", ErrorKind::PolicyBlocked),
        (r#"DESCRIBE "x/y.json""#, ErrorKind::PolicyBlocked),
        ("SELECT * FROM memory.main.t", ErrorKind::UnknownName),
        (
            "SELECT * FROM system.clinic.archive",
            ErrorKind::UnknownName,
        ),
        ("CALL read_csv('x.csv')", ErrorKind::PolicyBlocked),
        (
            "CALL range(3); DROP TABLE exports.csv",
            ErrorKind::PolicyBlocked,
        ),
    ] {
        let error = checked_run(&db, sql).expect_err(sql);
        assert_eq!(error.kind, kind, "{sql}: {error:?}");
    }
}

#[test]
fn introspection_statements_run_under_the_hardening() {
    let dir = TempDir::new("introspect");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    for sql in [
        "SHOW TABLES",
        "SHOW ALL TABLES",
        "DESCRIBE t",
        "SUMMARIZE t",
        "SHOW t",
    ] {
        let query = engine
            .check_statement(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        let r = engine
            .run_query(&query, 100, 1 << 20)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert!(r.row_count > 0, "{sql}");
        assert!(
            serde_json::to_string(&r.rows).unwrap().contains('"'),
            "{sql}"
        );
    }
    let r = engine
        .run_query(&CheckedQuery::with_checks_off("SHOW TABLES"), 100, 1 << 20)
        .unwrap();
    assert_eq!(r.rows, vec![vec![json!("t")]]);
}

#[test]
fn the_warm_up_database_is_detached_before_any_request() {
    let dir = TempDir::new("warm-up-gone");
    let db = small_db(&dir);
    for full_warm_up in [true, false] {
        let cfg = EngineConfig {
            full_warm_up,
            folders: Default::default(),
            ..config("1GB")
        };
        let mut engine = Engine::open(&cfg, &Databases::single(&db)).unwrap();
        engine.attach().unwrap();
        let listed = engine
            .run_query(
                &CheckedQuery::with_checks_off(
                    "SELECT database_name FROM duckdb_databases() ORDER BY database_name",
                ),
                100,
                1 << 20,
            )
            .unwrap();
        let names: Vec<String> = listed
            .rows
            .iter()
            .map(|r| r[0].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(
            names,
            ["memory", "small", "system", "temp"],
            "full_warm_up={full_warm_up}"
        );
        let err = engine
            .run_query(
                &CheckedQuery::with_checks_off("SELECT count(*) FROM duckgate_warm_up.readings"),
                10,
                1 << 20,
            )
            .unwrap_err();
        assert!(err.message.contains("duckgate_warm_up"), "{}", err.message);
        // The paths it warmed still give the right answer on the real database.
        let rows = engine
            .run_query(
                &CheckedQuery::with_checks_off("SELECT count(*) AS n FROM t"),
                10,
                1 << 20,
            )
            .unwrap();
        assert_eq!(rows.rows[0][0], serde_json::json!(10));
    }
}

/// This process's locks on `file` in the kernel's lock table (`/proc/locks`): the lines
/// naming our pid and the file's inode.
fn kernel_locks_on(file: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let inode = std::fs::metadata(file).unwrap().ino();
    let pid = std::process::id().to_string();
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // "1: POSIX  ADVISORY  READ 31892 fe:00:10231840 0 EOF"
            fields.len() >= 6
                && fields[4] == pid
                && fields[5].rsplit(':').next() == Some(inode.to_string().as_str())
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn releasing_the_file_lock_ends_duckdbs_lock_and_refuses_further_reads() {
    let dir = TempDir::new("release");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let held = kernel_locks_on(&db);
    assert!(
        held.iter()
            .any(|l| l.contains("POSIX") && l.contains("READ")),
        "an attached database holds DuckDB's POSIX read lock: {held:?}"
    );
    let rows = engine
        .run_query(
            &CheckedQuery::with_checks_off("SELECT count(*) FROM t"),
            10,
            1 << 20,
        )
        .unwrap();
    assert_eq!(rows.rows, vec![vec![json!(10)]]);

    engine.release_file_lock().unwrap();
    assert_eq!(
        kernel_locks_on(&db),
        Vec::<String>::new(),
        "lock still held"
    );
    // Without its lock the file may be changing under DuckDB: nothing reads it any more.
    for err in [
        engine
            .run_query(
                &CheckedQuery::with_checks_off("SELECT count(*) FROM t"),
                10,
                1 << 20,
            )
            .unwrap_err(),
        engine.catalog().unwrap_err(),
        engine.attach().unwrap_err(),
    ] {
        assert_eq!(err.kind, ErrorKind::InternalError, "{}", err.message);
        assert!(err.message.contains("released its lock"), "{}", err.message);
    }
}

/// A STRUCT's fields keep DuckDB's order in the JSON text of the row (DuckDB's own rendering
/// lists them as declared), nested structs too; sorted keys would answer a different value.
#[test]
fn struct_fields_keep_duckdbs_order_in_the_reply_text() {
    let dir = TempDir::new("struct-order");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let (_, row) = one_row(
        &mut engine,
        "SELECT {'zeta': 1, 'alpha': {'y': 2, 'b': 3}, 'mid': 'x'} AS s",
    );
    assert_eq!(
        serde_json::to_string(&row).unwrap(),
        r#"[{"zeta":1,"alpha":{"y":2,"b":3},"mid":"x"}]"#
    );
}
