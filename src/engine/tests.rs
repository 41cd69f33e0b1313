//! Engine tests on real DuckDB files in a temporary directory.

use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use serde_json::json;

use super::*;
use crate::error::messages;

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

fn wal_of(db: &Path) -> PathBuf {
    let mut os = db.as_os_str().to_owned();
    os.push(".wal");
    PathBuf::from(os)
}

/// Create a database file with `sql` run on a plain read-write connection.
fn make_db(dir: &TempDir, name: &str, sql: &str) -> PathBuf {
    let path = dir.path().join(name);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(sql).unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    path
}

fn config(memory_limit: &str) -> EngineConfig {
    EngineConfig {
        memory_limit_bytes: crate::sandbox::budget::parse_size(memory_limit).unwrap(),
        memory_cap_bytes: None,
        spill: None,
        threads: 2,
        time_zone: "UTC".into(),
        harden: true,
        full_warm_up: true,
    }
}

fn attached(db: &Path, memory_limit: &str) -> Engine {
    let mut engine = Engine::open(&config(memory_limit), db, &wal_of(db)).unwrap();
    engine.attach(db).unwrap();
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
        .run_query(sql, 10, 1 << 20)
        .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    assert_eq!(result.row_count, 1, "{sql}");
    let types = result
        .columns
        .iter()
        .map(|c| (c.name.clone(), c.data_type.clone()))
        .collect();
    (types, result.rows.into_iter().next().unwrap())
}

/// Each case: (SQL expression, DuckDB type string, expected JSON).
fn conversion_cases() -> Vec<(&'static str, &'static str, Json)> {
    vec![
        ("true", "BOOLEAN", json!(true)),
        ("(-7)::TINYINT", "TINYINT", json!(-7)),
        ("300::SMALLINT", "SMALLINT", json!(300)),
        ("(-70000)::INTEGER", "INTEGER", json!(-70000)),
        (
            "9007199254740991::BIGINT",
            "BIGINT",
            json!(9007199254740991i64),
        ),
        (
            "9007199254740992::BIGINT",
            "BIGINT",
            json!("9007199254740992"),
        ),
        (
            "(-9223372036854775808)::BIGINT",
            "BIGINT",
            json!("-9223372036854775808"),
        ),
        ("255::UTINYINT", "UTINYINT", json!(255)),
        ("65535::USMALLINT", "USMALLINT", json!(65535)),
        ("4294967295::UINTEGER", "UINTEGER", json!(4294967295u32)),
        (
            "18446744073709551615::UBIGINT",
            "UBIGINT",
            json!("18446744073709551615"),
        ),
        ("42::UBIGINT", "UBIGINT", json!(42)),
        (
            "170141183460469231731687303715884105727::HUGEINT",
            "HUGEINT",
            json!("170141183460469231731687303715884105727"),
        ),
        ("(-5)::HUGEINT", "HUGEINT", json!(-5)),
        (
            "[340282366920938463463374607431768211455::UHUGEINT, 3::UHUGEINT]",
            "UHUGEINT[]",
            json!(["340282366920938463463374607431768211455", 3]),
        ),
        (
            "340282366920938463463374607431768211455::UHUGEINT",
            "UHUGEINT",
            json!("340282366920938463463374607431768211455"),
        ),
        ("1.5::FLOAT", "FLOAT", json!(1.5)),
        ("0.1::FLOAT", "FLOAT", json!(0.1)),
        ("0.1::DOUBLE", "DOUBLE", json!(0.1)),
        ("'NaN'::DOUBLE", "DOUBLE", json!("NaN")),
        ("'inf'::DOUBLE", "DOUBLE", json!("Infinity")),
        ("'-inf'::FLOAT", "FLOAT", json!("-Infinity")),
        ("123.45::DECIMAL(10,2)", "DECIMAL(10,2)", json!("123.45")),
        ("(-0.05)::DECIMAL(4,3)", "DECIMAL(4,3)", json!("-0.050")),
        (
            "12345678901234567890.123456789012345678::DECIMAL(38,18)",
            "DECIMAL(38,18)",
            json!("12345678901234567890.123456789012345678"),
        ),
        ("12345::DECIMAL(38,0)", "DECIMAL(38,0)", json!("12345")),
        (
            "[12345::DECIMAL(38,0)]",
            "DECIMAL(38,0)[]",
            json!(["12345"]),
        ),
        ("[7::HUGEINT]", "HUGEINT[]", json!([7])),
        ("'héllo'", "VARCHAR", json!("héllo")),
        ("'\\x00\\xFFab'::BLOB", "BLOB", json!("AP9hYg==")),
        ("DATE '2024-02-29'", "DATE", json!("2024-02-29")),
        (
            "DATE '0044-03-15' - INTERVAL 100 YEAR",
            "TIMESTAMP",
            json!("-0056-03-15T00:00:00"),
        ),
        ("'infinity'::DATE", "DATE", json!("infinity")),
        ("TIME '13:45:00.5'", "TIME", json!("13:45:00.5")),
        (
            "TIMESTAMP '2024-01-31 13:45:00.123456'",
            "TIMESTAMP",
            json!("2024-01-31T13:45:00.123456"),
        ),
        (
            "TIMESTAMP_S '2024-01-31 13:45:07'",
            "TIMESTAMP_S",
            json!("2024-01-31T13:45:07"),
        ),
        (
            "TIMESTAMP_MS '2024-01-31 13:45:07.25'",
            "TIMESTAMP_MS",
            json!("2024-01-31T13:45:07.25"),
        ),
        (
            "TIMESTAMP_NS '2024-01-31 13:45:07.123456789'",
            "TIMESTAMP_NS",
            json!("2024-01-31T13:45:07.123456789"),
        ),
        (
            "TIMESTAMPTZ '2024-01-31 13:45:00+02'",
            "TIMESTAMP WITH TIME ZONE",
            json!("2024-01-31T11:45:00Z"),
        ),
        ("'infinity'::TIMESTAMP", "TIMESTAMP", json!("infinity")),
        ("'-infinity'::TIMESTAMP", "TIMESTAMP", json!("-infinity")),
        (
            "INTERVAL '1 year 2 months 3 days 04:05:06.5'",
            "INTERVAL",
            json!("P1Y2M3DT4H5M6.5S"),
        ),
        ("INTERVAL '-1 month'", "INTERVAL", json!("P-1M")),
        (
            "'123e4567-e89b-12d3-a456-426614174000'::UUID",
            "UUID",
            json!("123e4567-e89b-12d3-a456-426614174000"),
        ),
        ("'b'::ENUM('a', 'b')", "ENUM", json!("b")),
        ("[1, 2, NULL]", "INTEGER[]", json!([1, 2, null])),
        ("[[1], []]", "INTEGER[][]", json!([[1], []])),
        ("[1, 2, 3]::INTEGER[3]", "INTEGER[3]", json!([1, 2, 3])),
        (
            "{'a': 1, 'B c': 'x', 'n': {'d': DATE '2024-01-01'}}",
            "STRUCT(a INTEGER, \"B c\" VARCHAR, n STRUCT(d DATE))",
            json!({"a": 1, "B c": "x", "n": {"d": "2024-01-01"}}),
        ),
        (
            "MAP {'k1': 1, 'k2': 2}",
            "MAP(VARCHAR, INTEGER)",
            json!([{"key": "k1", "value": 1}, {"key": "k2", "value": 2}]),
        ),
        (
            "MAP {[1, 2]: 'list key'}",
            "MAP(INTEGER[], VARCHAR)",
            json!([{"key": [1, 2], "value": "list key"}]),
        ),
        (
            "union_value(num := 2)::UNION(num INTEGER, str VARCHAR)",
            "UNION(num INTEGER, str VARCHAR)",
            json!(2),
        ),
        (
            "union_value(str := 'x')::UNION(num INTEGER, str VARCHAR)",
            "UNION(num INTEGER, str VARCHAR)",
            json!("x"),
        ),
        // The member's type decides the rendering where the value's shape fits one member.
        (
            "union_value(t := TIMESTAMPTZ '2024-01-01 00:00:00+00')::UNION(t TIMESTAMPTZ, s VARCHAR)",
            "UNION(t TIMESTAMP WITH TIME ZONE, s VARCHAR)",
            json!("2024-01-01T00:00:00Z"),
        ),
        (
            "union_value(j := '{\"a\": [1, 2]}'::JSON)::UNION(j JSON, n INTEGER)",
            "UNION(j JSON, n INTEGER)",
            json!({"a": [1, 2]}),
        ),
        (
            "union_value(b := '101'::BIT)::UNION(b BIT, n INTEGER)",
            "UNION(b BIT, n INTEGER)",
            json!("101"),
        ),
        (
            "union_value(d := 1.25::DECIMAL(10, 2))::UNION(d DECIMAL(10,2), s VARCHAR)",
            "UNION(d DECIMAL(10,2), s VARCHAR)",
            json!("1.25"),
        ),
        // Two members of one shape that render differently: the value cannot say which is set.
        (
            "union_value(tz := TIMESTAMPTZ '2024-01-01 00:00:00+00')::UNION(t TIMESTAMP, tz TIMESTAMPTZ)",
            "UNION(t TIMESTAMP, tz TIMESTAMP WITH TIME ZONE)",
            json!("2024-01-01T00:00:00"),
        ),
        (
            "'{\"a\": [1, 2.5, null], \"b\": {\"c\": \"d\"}}'::JSON",
            "JSON",
            json!({"a": [1, 2.5, null], "b": {"c": "d"}}),
        ),
        ("['{\"x\":1}'::JSON]", "JSON[]", json!([{"x": 1}])),
        // A number a double cannot hold exactly: the JSON comes back as its text.
        (
            "'{\"id\": 12345678901234567890, \"pi\": 3.14159265358979323846}'::JSON",
            "JSON",
            json!("{\"id\": 12345678901234567890, \"pi\": 3.14159265358979323846}"),
        ),
        (
            "'[1.5, 1e-7, 2.50, 9007199254740991, \"12345678901234567890\"]'::JSON",
            "JSON",
            json!([
                1.5,
                1e-7,
                2.5,
                9_007_199_254_740_991_i64,
                "12345678901234567890"
            ]),
        ),
        (
            "{'t': TIMESTAMPTZ '2024-01-01 00:00:00+00'}",
            "STRUCT(t TIMESTAMP WITH TIME ZONE)",
            json!({"t": "2024-01-01T00:00:00Z"}),
        ),
        ("NULL::INTEGER", "INTEGER", json!(null)),
        ("NULL", "\"NULL\"", json!(null)),
    ]
}

#[test]
fn every_duckdb_type_converts_to_faithful_json() {
    let dir = TempDir::new("types");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let mut failures = Vec::new();
    for (expr, want_type, want_json) in conversion_cases() {
        let sql = format!("SELECT {expr} AS v");
        match engine.run_query(&sql, 10, 1 << 20) {
            Ok(result) => {
                let got_type = &result.columns[0].data_type;
                let got = &result.rows[0][0];
                if got_type != want_type || got != &want_json {
                    failures.push(format!(
                        "{expr}: got {got_type} {got}, want {want_type} {want_json}"
                    ));
                }
            }
            Err(e) => failures.push(format!("{expr}: error {e:?}")),
        }
    }
    assert!(
        failures.is_empty(),
        "conversion mismatches:\n{}",
        failures.join("\n")
    );
}

#[test]
fn bit_and_bignum_come_back_as_text() {
    let dir = TempDir::new("bits");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let (types, row) = one_row(
        &mut engine,
        "SELECT '0101'::BIT AS b, 123456789012345678901234567890123456789012::BIGNUM AS n",
    );
    assert_eq!(types[0].1, "BIT");
    assert_eq!(row[0], json!("0101"));
    assert_eq!(types[1].1, "BIGNUM");
    assert_eq!(row[1], json!("123456789012345678901234567890123456789012"));
}

#[test]
fn user_defined_enum_values_come_back_as_their_text() {
    let dir = TempDir::new("enum");
    let db = make_db(
        &dir,
        "enum.duckdb",
        "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); \
         CREATE TABLE m (v mood); INSERT INTO m VALUES ('happy'), (NULL);",
    );
    let mut engine = attached(&db, "256MB");
    let result = engine.run_query("SELECT v FROM m", 10, 1 << 20).unwrap();
    // The C API exposes neither a user type's name nor its members for a result column.
    assert_eq!(result.columns[0].data_type, "ENUM");
    assert_eq!(result.rows, vec![vec![json!("happy")], vec![json!(null)]]);
}

#[test]
fn truncation_by_rows_reads_one_row_past_the_limit() {
    let dir = TempDir::new("rows");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let r = engine
        .run_query("SELECT i FROM t ORDER BY i", 3, 1 << 20)
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (3, true));
    assert_eq!(r.rows, vec![vec![json!(0)], vec![json!(1)], vec![json!(2)]]);
    let r = engine.run_query("SELECT i FROM t", 10, 1 << 20).unwrap();
    assert_eq!((r.row_count, r.truncated), (10, false));
    let r = engine.run_query("SELECT i FROM t", 11, 1 << 20).unwrap();
    assert_eq!((r.row_count, r.truncated), (10, false));
    let r = engine
        .run_query("SELECT i FROM t WHERE i < 0", 5, 1 << 20)
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
    let r = engine.run_query(sql, 1000, 14 * 3 + 2).unwrap();
    assert_eq!((r.row_count, r.truncated), (3, true));
    let r = engine.run_query(sql, 1000, 14 * 3 + 1).unwrap();
    assert_eq!((r.row_count, r.truncated), (2, true));
    let all = engine.run_query(sql, 1000, 1 << 20).unwrap();
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
            "SELECT i, i * 2 AS j FROM range(1000000000) r(i)",
            5,
            1 << 20,
        )
        .unwrap();
    assert_eq!((r.row_count, r.truncated), (5, true));
}

#[test]
fn catalog_reports_comments_keys_indexes_and_views() {
    let dir = TempDir::new("catalog");
    let db = make_db(
        &dir,
        "clinic.duckdb",
        "CREATE TABLE patients (id INTEGER PRIMARY KEY, email VARCHAR UNIQUE, \
                                name VARCHAR NOT NULL, ward VARCHAR DEFAULT 'general');
         CREATE TABLE visits (visit_id INTEGER, patient_id INTEGER REFERENCES patients (id), \
                              visited_at TIMESTAMP, PRIMARY KEY (visit_id));
         CREATE INDEX visits_at ON visits (visited_at);
         CREATE VIEW recent AS SELECT * FROM visits WHERE visited_at > TIMESTAMP '2024-01-01';
         COMMENT ON TABLE patients IS 'People we treat';
         COMMENT ON COLUMN patients.email IS 'Contact address';
         COMMENT ON VIEW recent IS 'Visits this year';
         INSERT INTO patients VALUES (1, 'a@x', 'A', DEFAULT), (2, 'b@x', 'B', 'icu');
         INSERT INTO visits VALUES (10, 1, TIMESTAMP '2024-02-01'), (11, 2, TIMESTAMP '2023-02-01');",
    );
    let mut engine = attached(&db, "256MB");
    assert_eq!(engine.alias(), Some("clinic"));
    let cat = engine.catalog().unwrap();
    let names: Vec<(&str, &str)> = cat
        .tables
        .iter()
        .map(|t| (t.name.as_str(), t.kind.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("patients", "table"),
            ("visits", "table"),
            ("recent", "view")
        ]
    );

    let patients = &cat.tables[0];
    assert_eq!(patients.schema, "main");
    assert_eq!(patients.description.as_deref(), Some("People we treat"));
    assert_eq!(patients.estimated_rows, Some(2));
    let cols: Vec<&str> = patients.columns.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(cols, vec!["id", "email", "name", "ward"]);
    let id = &patients.columns[0];
    assert!(id.primary_key && id.unique && !id.nullable, "{id:?}");
    assert_eq!(id.data_type, "INTEGER");
    let email = &patients.columns[1];
    assert!(
        email.unique && !email.primary_key && email.nullable,
        "{email:?}"
    );
    assert_eq!(email.comment.as_deref(), Some("Contact address"));
    assert!(!patients.columns[2].nullable);
    assert_eq!(patients.columns[3].default.as_deref(), Some("'general'"));

    let visits = &cat.tables[1];
    let patient_id = visits
        .columns
        .iter()
        .find(|c| c.name == "patient_id")
        .unwrap();
    assert_eq!(
        patient_id.references,
        Some(crate::protocol::ColumnReference {
            table: "patients".into(),
            column: "id".into()
        })
    );
    assert!(visits.columns[0].primary_key);
    assert_eq!(visits.indexes.len(), 1);
    assert_eq!(visits.indexes[0].name, "visits_at");
    assert!(!visits.indexes[0].unique);
    assert!(
        visits.indexes[0]
            .sql
            .as_deref()
            .unwrap_or("")
            .contains("CREATE INDEX")
    );

    let recent = &cat.tables[2];
    assert_eq!(recent.description.as_deref(), Some("Visits this year"));
    assert_eq!(recent.estimated_rows, None);
    assert_eq!(recent.columns.len(), 3);

    assert_eq!(cat.foreign_keys.len(), 1);
    let fk = &cat.foreign_keys[0];
    assert_eq!(
        (
            fk.table.as_str(),
            fk.columns.clone(),
            fk.referenced_table.as_str(),
            fk.referenced_columns.clone()
        ),
        (
            "visits",
            vec!["patient_id".to_string()],
            "patients",
            vec!["id".to_string()]
        )
    );
}

#[test]
fn catalog_leaves_out_the_in_memory_and_system_catalogs() {
    let dir = TempDir::new("catalog-scope");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let cat = engine.catalog().unwrap();
    assert_eq!(cat.tables.len(), 1);
    assert_eq!(cat.tables[0].name, "t");
}

#[test]
fn missing_database_is_database_not_found_and_says_where() {
    let dir = TempDir::new("missing");
    let db = dir.path().join("nope.duckdb");
    let mut engine = Engine::open(&config("256MB"), &db, &wal_of(&db)).unwrap();
    let err = engine.attach(&db).unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseNotFound);
    assert!(
        err.message.contains(db.to_str().unwrap()),
        "{}",
        err.message
    );
}

#[test]
fn a_file_that_is_not_duckdb_is_a_clear_database_error() {
    let dir = TempDir::new("notduck");
    let db = dir.path().join("notes.duckdb");
    std::fs::write(&db, "this is not a database, just some text\n".repeat(200)).unwrap();
    let mut engine = Engine::open(&config("256MB"), &db, &wal_of(&db)).unwrap();
    let err = engine.attach(&db).unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseError);
    assert!(
        err.message.contains("is not a DuckDB database"),
        "{}",
        err.message
    );
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

    let mut engine = Engine::open(&config("256MB"), &db, &wal_of(&db)).unwrap();
    let err = engine.attach(&db).unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseLocked, "{}", err.message);
    eprintln!("locked message: {}", err.message);

    // Once the writer is gone, a fresh engine attaches and sees the writer's row.
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let mut engine = attached(&db, "256MB");
    let r = engine
        .run_query("SELECT label FROM t WHERE i = 99", 10, 1 << 20)
        .unwrap();
    assert_eq!(r.rows, vec![vec![json!("held")]]);
}

#[test]
fn syntax_errors_carry_duckdbs_message() {
    let dir = TempDir::new("syntax");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    let err = engine.run_query("SELEC 1", 10, 1 << 20).unwrap_err();
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
        .run_query("SELECT * FROM missing_table", 10, 1 << 20)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnknownName, "{}", err.message);
    assert!(err.message.contains("missing_table"), "{}", err.message);
    let err = engine
        .run_query("SELECT no_such_column FROM t", 10, 1 << 20)
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::UnknownName, "{}", err.message);
    assert!(err.message.contains("no_such_column"), "{}", err.message);
    let err = engine.run_query("SELECT 'a' + 1", 10, 1 << 20).unwrap_err();
    assert_eq!(err.kind, ErrorKind::DatabaseError, "{}", err.message);
}

#[test]
fn running_out_of_memory_is_a_resource_limit() {
    let dir = TempDir::new("oom");
    let db = small_db(&dir);
    let mut engine = attached(&db, "32MB");
    let err = engine
        .run_query(
            "SELECT count(DISTINCT i), list(i)[1] FROM range(100000000) r(i)",
            10,
            1 << 20,
        )
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::ResourceLimit, "{}", err.message);
    eprintln!("oom message: {}", err.message);
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
        assert_eq!(engine.check_statement(sql), Ok(()), "{sql}");
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
        "CALL duckdb_tables()",
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
    let plan = engine
        .explain("SELECT label FROM t WHERE i > 3")
        .unwrap()
        .plan;
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
    let engine = Engine::open(&config("256MB"), &db, &wal_of(&db)).unwrap();
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
    assert!(
        settings["allowed_paths"].contains(db.to_str().unwrap()),
        "{settings:?}"
    );
    assert!(settings["memory_limit"].contains("MiB") || settings["memory_limit"].contains("MB"));
}

#[test]
fn database_alias_is_the_file_stem_when_plain() {
    assert_eq!(database_alias(Path::new("/x/tandem.duckdb")), "tandem");
    assert_eq!(database_alias(Path::new("/x/my data.duckdb")), "db");
    assert_eq!(database_alias(Path::new("/x/memory.duckdb")), "db");
    assert_eq!(database_alias(Path::new("/x/1st.db")), "db");
}

#[test]
fn types_that_cannot_be_returned_faithfully_are_refused_with_a_cast_hint() {
    let dir = TempDir::new("unsupported");
    let db = small_db(&dir);
    let mut engine = attached(&db, "256MB");
    for (sql, type_name) in [
        ("SELECT TIMETZ '13:45:00+02' AS t", "TIME WITH TIME ZONE"),
        ("SELECT TIME_NS '13:45:00.123456789' AS t", "TIME_NS"),
        ("SELECT 1::VARIANT AS v", "VARIANT"),
        ("SELECT 1 AS ok, [NULL] AS l", "\"NULL\"[]"),
        ("SELECT {'a': NULL} AS s", "STRUCT(a \"NULL\")"),
    ] {
        let err = engine.run_query(sql, 10, 1 << 20).unwrap_err();
        assert_eq!(err.kind, ErrorKind::DatabaseError, "{sql}");
        assert!(err.message.contains(type_name), "{sql}: {}", err.message);
        assert!(err.message.contains("::VARCHAR"), "{sql}: {}", err.message);
    }
    // The hint works: cast to text, the value comes back with its offset.
    let (_, row) = one_row(&mut engine, "SELECT TIMETZ '13:45:00+02'::VARCHAR AS t");
    assert_eq!(row[0], json!("13:45:00+02"));
}

#[test]
fn a_leftover_wal_is_replayed_by_the_read_only_attach() {
    // A writer that stopped without checkpointing leaves its last rows only in `<db>.wal`;
    // the read-only attach must read them (the WAL is in allowed_paths for this).
    let dir = TempDir::new("wal");
    let db = small_db(&dir);
    let conn = Connection::open(&db).unwrap();
    conn.execute_batch(
        "SET checkpoint_threshold = '1TB'; PRAGMA disable_checkpoint_on_shutdown; \
         INSERT INTO t VALUES (42, 'only in the wal');",
    )
    .unwrap();
    conn.close().map_err(|(_, e)| e).unwrap();
    assert!(wal_of(&db).exists(), "the writer left no WAL to test with");

    let mut engine = attached(&db, "256MB");
    let r = engine
        .run_query("SELECT label FROM t WHERE i = 42", 10, 1 << 20)
        .unwrap();
    assert_eq!(r.rows, vec![vec![json!("only in the wal")]]);
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
        engine
            .check_statement(sql)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        let r = engine
            .run_query(sql, 100, 1 << 20)
            .unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        assert!(r.row_count > 0, "{sql}");
        assert!(
            serde_json::to_string(&r.rows).unwrap().contains('"'),
            "{sql}"
        );
    }
    let r = engine.run_query("SHOW TABLES", 100, 1 << 20).unwrap();
    assert_eq!(r.rows, vec![vec![json!("t")]]);
}

#[test]
fn the_warm_up_database_is_detached_before_any_request() {
    let dir = TempDir::new("warm-up-gone");
    let db = small_db(&dir);
    for full_warm_up in [true, false] {
        let cfg = EngineConfig {
            full_warm_up,
            ..config("1GB")
        };
        let mut engine = Engine::open(&cfg, &db, &wal_of(&db)).unwrap();
        engine.attach(&db).unwrap();
        let listed = engine
            .run_query(
                "SELECT database_name FROM duckdb_databases() ORDER BY database_name",
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
                "SELECT count(*) FROM duckgate_warm_up.readings",
                10,
                1 << 20,
            )
            .unwrap_err();
        assert!(err.message.contains("duckgate_warm_up"), "{}", err.message);
        // The paths it warmed still give the right answer on the real database.
        let rows = engine
            .run_query("SELECT count(*) AS n FROM t", 10, 1 << 20)
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
        .run_query("SELECT count(*) FROM t", 10, 1 << 20)
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
            .run_query("SELECT count(*) FROM t", 10, 1 << 20)
            .unwrap_err(),
        engine.catalog().unwrap_err(),
        engine.attach(&db).unwrap_err(),
    ] {
        assert_eq!(err.kind, ErrorKind::InternalError, "{}", err.message);
        assert!(err.message.contains("released its lock"), "{}", err.message);
    }
}
