//! The validator's case tables, shared by its tests, the differential tests against DuckDB and
//! the fuzz seed corpus (so none of them keeps a private copy).
//!
//! The catalog is a small continuous-glucose-monitoring database: [`SCHEMA_SQL`] creates it in
//! DuckDB, [`catalog`] is the validator's view of the same tables.

use duckgate_validate::error::ErrorKind;
use duckgate_validate::validate::{Catalog, CatalogRelation};

/// DuckDB DDL for the test database (used by the differential test).
pub const SCHEMA_SQL: &str = "
CREATE TABLE readings (ts TIMESTAMP, glucose INTEGER, device_id VARCHAR, trend VARCHAR, raw JSON);
CREATE TABLE pump_events (ts TIMESTAMP, event_type VARCHAR, units DOUBLE, payload JSON, serial_number VARCHAR);
CREATE TABLE devices (device_id VARCHAR, serial_number VARCHAR, model VARCHAR);
CREATE TABLE notes (ts TIMESTAMP, body VARCHAR);
CREATE VIEW daily_summary AS SELECT ts::DATE AS day, avg(glucose) AS avg_glucose FROM readings GROUP BY 1;
CREATE SCHEMA analytics;
CREATE TABLE analytics.hourly (hour TIMESTAMP, avg_glucose DOUBLE);
CREATE SCHEMA analytics.archive;
CREATE TABLE analytics.archive.daily (day DATE, avg_glucose DOUBLE);
CREATE TABLE \"export.csv\" (line VARCHAR);
";

/// The validator's view of [`SCHEMA_SQL`].
pub fn catalog() -> Catalog {
    let relation = |schema: &str, name: &str, columns: &[&str]| CatalogRelation {
        database: String::new(),
        schema: schema.into(),
        name: name.into(),
        columns: columns.iter().map(|c| c.to_string()).collect(),
    };
    Catalog {
        relations: vec![
            relation(
                "main",
                "readings",
                &["ts", "glucose", "device_id", "trend", "raw"],
            ),
            relation(
                "main",
                "pump_events",
                &["ts", "event_type", "units", "payload", "serial_number"],
            ),
            relation("main", "devices", &["device_id", "serial_number", "model"]),
            relation("main", "notes", &["ts", "body"]),
            relation("main", "daily_summary", &["day", "avg_glucose"]),
            relation("analytics", "hourly", &["hour", "avg_glucose"]),
            // A nested schema is listed by its own name (`analytics.archive` as `archive`).
            relation("archive", "daily", &["day", "avg_glucose"]),
            relation("main", "export.csv", &["line"]),
        ],
        restricted: false,
        database: "health".into(),
        other_databases: Vec::new(),
        table_macros: None,
        folders: Vec::new(),
    }
}

/// Everyday analytical DuckDB that must be accepted (and that DuckDB itself runs).
pub const ACCEPTED: &[&str] = &[
    "SELECT * FROM readings LIMIT 10",
    "SELECT count(*) FROM readings",
    "SELECT device_id, avg(glucose) AS mean_glucose FROM readings GROUP BY device_id ORDER BY mean_glucose DESC",
    "SELECT device_id, count(*) FROM readings GROUP BY ALL",
    "SELECT date_trunc('hour', ts) AS hour, avg(glucose) FROM readings WHERE ts >= TIMESTAMP '2024-01-01' GROUP BY 1 ORDER BY 1",
    "SELECT ts, glucose, avg(glucose) OVER (ORDER BY ts ROWS BETWEEN 11 PRECEDING AND CURRENT ROW) AS rolling FROM readings",
    "SELECT * FROM readings QUALIFY row_number() OVER (PARTITION BY device_id ORDER BY ts DESC) = 1",
    "WITH daily AS (SELECT ts::DATE AS day, avg(glucose) AS g FROM readings GROUP BY 1) SELECT * FROM daily WHERE g > 150",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10) SELECT i FROM n",
    "SELECT glucose FROM readings UNION ALL SELECT units::INTEGER FROM pump_events",
    "SELECT ts, glucose FROM readings UNION BY NAME SELECT ts, units AS glucose FROM pump_events",
    "SELECT 1 AS x INTERSECT SELECT 1 EXCEPT SELECT 2",
    "FROM readings SELECT ts, glucose",
    "FROM readings LIMIT 3",
    "FROM readings",
    "SELECT * EXCLUDE (raw) FROM readings",
    "SELECT * REPLACE (glucose / 18.0 AS glucose) FROM readings",
    "SELECT COLUMNS('gluc.*') FROM readings",
    "SELECT max(COLUMNS(*)) FROM readings",
    "SELECT list_transform([1, 2, 3], x -> x * 2) AS doubled",
    "SELECT list_filter([glucose, 100], x -> x > 90) FROM readings",
    "SELECT list_reduce([1, 2, 3], (a, b) -> a + b) AS total",
    "SELECT [1, 2, 3] AS l, {'a': 1, 'b': 'two'} AS s, MAP {'k': 1} AS m",
    "SELECT raw -> 'trend' AS t, raw ->> 'rate' AS r FROM readings",
    "SELECT json_extract(raw, '$.rate') FROM readings",
    "SELECT * FROM range(10)",
    "SELECT * FROM generate_series(TIMESTAMP '2024-01-01', TIMESTAMP '2024-01-02', INTERVAL 1 HOUR)",
    "SELECT unnest([1, 2, 3]) AS v",
    "SELECT * FROM readings, unnest([1, 2]) AS u(x)",
    "VALUES (1, 'a'), (2, 'b')",
    "SELECT * FROM (VALUES (1, 2)) AS v(a, b)",
    "DESCRIBE readings",
    "DESCRIBE SELECT * FROM readings",
    "SHOW TABLES",
    "SHOW ALL TABLES",
    "SUMMARIZE readings",
    "SUMMARIZE SELECT glucose FROM readings",
    "SELECT * FROM duckdb_tables()",
    "SELECT table_name, column_name FROM duckdb_columns() WHERE table_name = 'readings'",
    "SELECT table_name FROM information_schema.tables",
    "SELECT 'x; DROP TABLE readings' AS s",
    "SELECT 1 AS \"weird; DROP TABLE readings --\"",
    "SELECT /* ; DROP TABLE readings; */ glucose FROM readings -- trailing comment; DROP TABLE readings",
    "SELECT glucose FROM readings;",
    "SELECT glucose FROM readings ; -- done\n",
    "SELECT * FROM main.readings",
    "SELECT r.ts, d.model FROM readings r JOIN devices d ON r.device_id = d.device_id",
    "SELECT * FROM readings r LEFT JOIN devices d USING (device_id)",
    "SELECT * FROM readings WHERE device_id IN (SELECT device_id FROM devices WHERE model = 'G7')",
    "SELECT * FROM readings WHERE EXISTS (SELECT 1 FROM pump_events p WHERE p.ts = readings.ts)",
    "SELECT d.device_id, latest.glucose FROM devices d, LATERAL (SELECT glucose FROM readings r WHERE r.device_id = d.device_id ORDER BY ts DESC LIMIT 1) latest",
    "SELECT sum(units) FILTER (WHERE event_type = 'bolus') FROM pump_events",
    "SELECT quantile_cont(glucose, 0.9), median(glucose), stddev(glucose) FROM readings",
    "SELECT CASE WHEN glucose < 70 THEN 'low' WHEN glucose > 180 THEN 'high' ELSE 'in range' END AS band, count(*) FROM readings GROUP BY band",
    "SELECT strftime(ts, '%Y-%m-%d') FROM readings",
    "SELECT ts + INTERVAL '1 hour' FROM readings",
    "SELECT * FROM daily_summary",
    "SELECT * FROM analytics.hourly",
    "EXPLAIN SELECT * FROM readings",
    "SELECT * FROM readings ORDER BY ALL",
    "SELECT DISTINCT ON (device_id) device_id, ts FROM readings ORDER BY device_id, ts DESC",
    "SELECT device_id, count(*) FROM readings GROUP BY ROLLUP (device_id)",
    "SELECT struct_pack(a := 1, b := 2) AS s",
    "SELECT \"glucose\" FROM \"readings\"",
    "select Glucose from READINGS",
    "SELECT regexp_matches(body, 'insulin') FROM notes",
    "SELECT coalesce(glucose, 0) FROM readings",
    "SELECT * FROM readings WHERE ts BETWEEN '2024-01-01' AND '2024-02-01'",
    "SELECT TRY_CAST(trend AS INTEGER) FROM readings",
    "SELECT 'semi;colon' || ';' AS s FROM readings -- comment ; with ; semicolons",
    "SELECT * FROM readings WHERE trend ILIKE '%up%'",
    "SELECT ts, lag(glucose) OVER w FROM readings WINDOW w AS (PARTITION BY device_id ORDER BY ts)",
    "SELECT a.* FROM readings AS a",
    "SELECT * FROM (SELECT * FROM readings) sub WHERE sub.glucose > 100",
    "SELECT epoch_ms(ts) FROM readings",
    "SELECT generate_series(1, 3) AS s",
    "SELECT $$dollar; quoted$$ AS s",
    "SELECT count(*) FROM readings WHERE device_id NOT IN ('a', 'b') AND glucose IS NOT NULL",
    "SELECT upper(trend), length(trend), trend[1:2] FROM readings",
    "WITH a AS (SELECT 1 AS x), b AS (SELECT x + 1 AS y FROM a) SELECT * FROM a, b",
    "SELECT ts::DATE AS day, arg_max(glucose, ts) FROM readings GROUP BY day",
    "(SELECT 1 AS x)",
    "SELECT * FROM readings AS \"x.csv\"",
    "SELECT * FROM duckdb_tables",
    // PIVOT with its values listed and UNPIVOT are one SELECT for DuckDB.
    "SELECT * FROM readings PIVOT (avg(glucose) FOR device_id IN ('a', 'b'))",
    "SELECT * FROM readings UNPIVOT (v FOR k IN (device_id, trend))",
    // DuckDB's catalog views.
    "SELECT * FROM sqlite_master",
    "SELECT * FROM pg_catalog.pg_tables",
    // `SHOW t` is DuckDB's `DESCRIBE t`.
    "SHOW readings",
    "SHOW main.readings",
    // Catalog-qualified names of the attached database (the corpus catalog is attached as
    // `health`, as a file `health.duckdb` would be).
    "SELECT * FROM health.main.readings",
    "SELECT r.glucose FROM HEALTH.Main.Readings r",
    "SELECT * FROM health.analytics.hourly",
    "SELECT * FROM health.readings",
    // CTE scoping as DuckDB's: a CTE's own name inside its body is what it means outside, except
    // in the recursive term of a recursive UNION.
    "WITH readings AS (SELECT * FROM readings WHERE glucose > 100) SELECT count(*) FROM readings",
    "WITH RECURSIVE readings AS (SELECT * FROM readings) SELECT glucose FROM readings",
    "WITH RECURSIVE x(n) AS ((SELECT 1 UNION ALL SELECT n + 1 FROM x WHERE n < 3)) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM (SELECT * FROM x) WHERE n < 3) SELECT * FROM x",
    "WITH RECURSIVE x(n) AS (SELECT 1 UNION SELECT n + 1 FROM x WHERE n < 3), y AS (SELECT * FROM x) SELECT * FROM y",
    "SELECT list_transform([1, 2], lambda x: x * 2)",
    // Built-ins that read only their arguments, compiled-in data or the catalog.
    "SELECT * FROM pragma_table_info('readings')",
    "SELECT * FROM test_all_types()",
    "SELECT count(*) FROM repeat(0, 3)",
    "CALL pragma_version()",
];

/// DuckDB's grammar that sqlparser misreads or cannot read, a few cases of each kind (over
/// [`SCHEMA_SQL`]): every one is accepted, walked or left to the worker, never refused, and
/// DuckDB runs every one as one read-only statement.
pub const DUCKDB_GRAMMAR: &[&str] = &[
    // Escape strings.
    "SELECT E'it\\'s' AS s",
    "SELECT body FROM notes WHERE body = E'a\\tb'",
    // Hex literals.
    "SELECT X'4142'::VARCHAR AS s",
    "SELECT octet_length(x'00ff') AS n",
    // Tagged dollar quotes.
    "SELECT $tag$it's$tag$ AS s",
    "SELECT $🦆$duck$🦆$ AS s",
    // List slices with a step.
    "SELECT [1, 2, 3, 4][:-:2] AS s",
    "SELECT (list(glucose))[1:-:3] AS s FROM readings",
    // `JOIN BY (TYPE …)`.
    "SELECT * FROM readings r JOIN BY (TYPE semi) devices d ON r.device_id = d.device_id",
    "SELECT * FROM readings r JOIN BY (TYPE left) devices d ON r.device_id = d.device_id",
    // `FROM values(…)`.
    "SELECT * FROM values(1, 'a')",
    "FROM values(1), (2) t(x)",
    // Recursive CTEs with `USING KEY`.
    "WITH RECURSIVE c(k, v) USING KEY (k) AS (SELECT 1, 0 UNION SELECT k, v + 1 FROM c WHERE v < 4) SELECT * FROM c",
    // Nested schemas.
    "SELECT count(*) FROM analytics.archive.daily",
    "SELECT d.day FROM health.analytics.archive.daily d",
    "DESCRIBE analytics.archive.daily",
    // Qualified and quoted names that look like files but are tables.
    "DESCRIBE analytics.hourly",
    "DESCRIBE \"export.csv\"",
    "SELECT count(*) FROM \"export.csv\"",
    // `DESCRIBE TABLES` lists the tables.
    "DESCRIBE TABLES",
    "describe \"tables\"",
    // A number followed by an underscored name: `1` named `__2`.
    "SELECT 1__2",
    "SELECT 1_000__n",
    // `CALL` of a table function.
    "CALL range(10)",
    "CALL pragma_table_info('readings')",
    // Method calls: `x.f(args)` is `f(x, args)`, on a column, a qualified column, a literal or
    // a chain.
    "SELECT model.upper() FROM devices",
    "SELECT d.model.upper() FROM devices d",
    "SELECT devices.model.lower().length() FROM devices",
    "SELECT 'Hello'.lower() AS s",
    "SELECT [1, 2, 3].list_transform(x -> x + 1) AS s",
    "SELECT r.trend.replace('up', 'rising') FROM readings r",
];

/// Valid DuckDB (against [`SCHEMA_SQL`]) that sqlparser cannot parse: accepted as
/// [`StatementKind::Unparsed`](duckgate_validate::validate::StatementKind::Unparsed), left to the worker's check of
/// DuckDB's own syntax tree.
pub const UNPARSED: &[&str] = &[
    // A listing of one schema: DuckDB resolves the schema, the worker's checks decide.
    "SHOW TABLES FROM analytics",
    "SELECT count(*) FILTER (glucose < 70) FROM readings",
    "FROM readings r ASOF JOIN pump_events p ON r.ts >= p.ts",
    "FROM readings r ASOF LEFT JOIN pump_events p ON r.device_id = p.serial_number AND r.ts >= p.ts",
    "SELECT * FROM readings USING SAMPLE 5 ROWS",
    "SELECT * FROM readings USING SAMPLE 10%",
    "SELECT * FROM readings TABLESAMPLE 10%",
    "SELECT * FROM readings WHERE glucose > 100 USING SAMPLE 10% (bernoulli)",
    "FROM (SUMMARIZE readings)",
    "SELECT column_name, null_percentage FROM (SUMMARIZE SELECT glucose, trend FROM readings)",
    "SELECT * FROM (PIVOT readings ON device_id IN ('a', 'b') USING avg(glucose))",
    "PIVOT readings ON device_id IN ('a', 'b') USING avg(glucose) GROUP BY trend",
    "PIVOT readings ON device_id IN ('a'), trend IN ('up') USING count(*)",
    "WITH p AS (PIVOT readings ON trend IN ('up', 'down') USING max(glucose) GROUP BY device_id) SELECT * FROM p",
    "UNPIVOT readings ON device_id, trend INTO NAME k VALUE v",
    "SELECT x: 42",
    "SELECT * RENAME (glucose AS g) FROM readings",
    "SELECT #2 FROM readings",
    "SUMMARIZE SELECT * FROM readings USING SAMPLE 10 ROWS",
    "DESCRIBE SELECT * FROM readings USING SAMPLE 1 ROWS",
    "SHOW SELECT glucose FROM readings",
    "SHOW FROM readings",
    "SELECT [x * 2 FOR x IN [1, 2]]",
    "SELECT * FROM notes WHERE body GLOB '*x*'",
    "SELECT * FROM readings LIMIT 10%",
    "FROM readings SELECT glucose QUALIFY row_number() OVER () = 1",
    "SELECT (FROM readings SELECT max(glucose))",
    "WITH RECURSIVE x(n) USING KEY (n) AS (SELECT 1 UNION SELECT n + 1 FROM x WHERE n < 3) SELECT * FROM x",
    "SELECT extract(year FROM ts) AS y, trim(both 'x' FROM 'x.csv') FROM readings USING SAMPLE 3 ROWS",
    "SELECT glucose IS DISTINCT FROM 5, count(*) FILTER (glucose > 1) FROM readings GROUP BY ALL",
    "EXPLAIN SELECT * FROM readings USING SAMPLE 5 ROWS",
    // Text sqlparser's lexer cuts differently from DuckDB's: the parent cannot read it at all.
    "SELECT e'line\\nbreak'",
    "SELECT 1 /* outer /* inner */ still comment */",
    "SELECT X'41'::VARCHAR",
];

/// `PIVOT`s whose values DuckDB takes from the data (over [`SCHEMA_SQL`]): DuckDB's parser makes
/// each several statements (a `CREATE TEMPORARY TYPE … AS ENUM (<value query>)` per such `ON`
/// column, then the pivot), which the worker answers as DuckDB does without creating anything
/// (`src/engine/pivot.rs`). The parent accepts them as SQL it cannot parse and checks what the
/// tokens show, like any other.
pub const PIVOT_FROM_DATA: &[&str] = &[
    "PIVOT readings ON device_id USING avg(glucose)",
    "SELECT * FROM (PIVOT readings ON device_id USING avg(glucose))",
    "PIVOT readings ON device_id IN ('a'), trend USING avg(glucose)",
    "PIVOT readings ON device_id NOT IN ('a') USING count(*)",
    "PIVOT readings ON device_id IN (SELECT device_id FROM devices) USING avg(glucose)",
    "PIVOT readings ON device_id IN ((FROM devices SELECT device_id)) USING count(*)",
    "WITH p AS (PIVOT readings ON trend USING count(*)) SELECT * FROM p",
    "PIVOT readings r JOIN devices d ON r.device_id = d.device_id ON d.model USING count(*)",
    "EXPLAIN PIVOT_WIDER readings ON device_id USING avg(glucose)",
];

/// Text sqlparser's lexer cuts differently from DuckDB's (comments, quotes, escape and hex
/// strings), most of it hiding a second statement from sqlparser: the parent cannot read it, so
/// it never accepts it as a query it walked, and leaves it to the worker, where DuckDB's parser
/// sees what is really there (`tests/it/worker_checks.rs`).
pub const LEFT_TO_THE_WORKER: &[&str] = &[
    "SELECT 1 --x\r; DROP TABLE readings",
    "SELECT 1 /* /* */ ; DROP TABLE readings; */",
    "SELECT /* /* */ 2 */* ; DROP TABLE readings; -- */ 3",
    "SELECT 1 AS `x; DROP TABLE readings; --`",
    "SELECT e'\\' , ' ; DROP TABLE readings; --'",
    "SELECT E'\\'' AS x",
    "SELECT x'41'",
    // Parameters bind nothing here; DuckDB answers them with its own error.
    "SELECT $1",
    "SELECT ?",
];

/// What a refused case must produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// `policy_blocked` with `error::messages::WRITE_REFUSED`, word for word.
    Write,
    /// `multiple_statements` with `error::messages::MULTIPLE_STATEMENTS`, word for word.
    Multiple,
    /// `policy_blocked` with a message of its own that names the construct.
    Blocked,
    /// `unknown_name`.
    Unknown,
    /// `syntax_error`.
    Syntax,
    /// `invalid_argument` (caps).
    Invalid,
}

impl Expect {
    /// The error kind this expectation requires.
    pub fn kind(self) -> ErrorKind {
        match self {
            Expect::Write | Expect::Blocked => ErrorKind::PolicyBlocked,
            Expect::Multiple => ErrorKind::MultipleStatements,
            Expect::Unknown => ErrorKind::UnknownName,
            Expect::Syntax => ErrorKind::SyntaxError,
            Expect::Invalid => ErrorKind::InvalidArgument,
        }
    }
}

/// SQL that must be refused, by category.
pub const REFUSED: &[(&str, Expect)] = &[
    // Writes and DDL, also inside CTEs.
    (
        "INSERT INTO readings VALUES (now(), 100, 'a', 'flat', '{}')",
        Expect::Write,
    ),
    (
        "INSERT OR REPLACE INTO readings SELECT * FROM readings",
        Expect::Write,
    ),
    ("UPDATE readings SET glucose = 0", Expect::Write),
    ("DELETE FROM readings", Expect::Write),
    ("DROP TABLE readings", Expect::Write),
    ("DROP VIEW daily_summary", Expect::Write),
    ("CREATE TABLE x AS SELECT 1", Expect::Write),
    ("CREATE VIEW v AS SELECT * FROM readings", Expect::Write),
    ("CREATE INDEX i ON readings (ts)", Expect::Write),
    ("CREATE SCHEMA s", Expect::Write),
    ("CREATE SEQUENCE s", Expect::Write),
    ("CREATE MACRO m(x) AS x + 1", Expect::Write),
    (
        "CREATE SECRET (TYPE S3, KEY_ID 'x', SECRET 'y')",
        Expect::Write,
    ),
    ("CREATE TYPE mood AS ENUM ('a', 'b')", Expect::Write),
    ("ALTER TABLE readings ADD COLUMN x INTEGER", Expect::Write),
    ("TRUNCATE readings", Expect::Write),
    ("COMMENT ON TABLE readings IS 'x'", Expect::Write),
    (
        "MERGE INTO readings USING devices ON true WHEN MATCHED THEN DELETE",
        Expect::Write,
    ),
    (
        "WITH x AS (SELECT 1) INSERT INTO readings SELECT * FROM x",
        Expect::Write,
    ),
    ("WITH x AS (SELECT 1) DELETE FROM readings", Expect::Write),
    ("EXPLAIN DELETE FROM readings", Expect::Write),
    (
        "EXPLAIN ANALYZE INSERT INTO readings SELECT * FROM readings",
        Expect::Write,
    ),
    (
        "DESCRIBE INSERT INTO readings SELECT * FROM readings",
        Expect::Write,
    ),
    ("SUMMARIZE DELETE FROM readings", Expect::Write),
    // Settings and procedures.
    ("SET memory_limit = '10GB'", Expect::Write),
    ("SET enable_external_access = true", Expect::Write),
    ("SET GLOBAL threads = 1", Expect::Write),
    ("SET VARIABLE x = 1", Expect::Write),
    ("RESET memory_limit", Expect::Write),
    ("PRAGMA enable_profiling", Expect::Write),
    ("PRAGMA table_info('readings')", Expect::Write),
    // `CALL` is `SELECT * FROM` its table function, refused as that would be.
    ("CALL read_csv('x.csv')", Expect::Blocked),
    ("CALL query('SELECT 1')", Expect::Blocked),
    // `SHOW name` shows DuckDB's setting of that name when no relation has it.
    ("SHOW memory_limit", Expect::Blocked),
    ("SHOW threads", Expect::Blocked),
    // Transactions, prepared statements, maintenance, databases, extensions.
    ("BEGIN TRANSACTION", Expect::Write),
    ("START TRANSACTION", Expect::Write),
    ("COMMIT", Expect::Write),
    ("ROLLBACK", Expect::Write),
    ("PREPARE p AS SELECT 1", Expect::Write),
    ("EXECUTE p", Expect::Write),
    ("DEALLOCATE p", Expect::Write),
    ("CHECKPOINT", Expect::Write),
    ("FORCE CHECKPOINT", Expect::Write),
    ("VACUUM", Expect::Write),
    ("ANALYZE", Expect::Write),
    ("USE memory", Expect::Write),
    ("ATTACH '/tmp/x.db' AS x", Expect::Write),
    (
        "ATTACH 'https://example.com/x.db' AS x (READ_ONLY)",
        Expect::Write,
    ),
    ("DETACH x", Expect::Write),
    ("INSTALL httpfs", Expect::Write),
    ("FORCE INSTALL httpfs", Expect::Write),
    ("LOAD httpfs", Expect::Write),
    ("COPY readings TO '/tmp/out.csv'", Expect::Write),
    ("COPY readings FROM '/tmp/in.csv'", Expect::Write),
    (
        "COPY (SELECT 1) TO '/tmp/x.parquet' (FORMAT parquet)",
        Expect::Write,
    ),
    ("EXPORT DATABASE '/tmp/dump'", Expect::Write),
    ("IMPORT DATABASE '/tmp/dump'", Expect::Write),
    // Several statements, hidden behind comments and strings.
    ("SELECT 1; SELECT 2", Expect::Multiple),
    ("SELECT 1; DROP TABLE readings", Expect::Multiple),
    ("SELECT 1;DROP TABLE readings--", Expect::Multiple),
    (
        "SELECT 1 /* x */ ; /* y */ DELETE FROM readings",
        Expect::Multiple,
    ),
    ("SELECT ';' ; DELETE FROM readings", Expect::Multiple),
    (
        "SELECT \"a;\" FROM readings; DELETE FROM readings",
        Expect::Multiple,
    ),
    ("FROM readings; DROP TABLE readings", Expect::Multiple),
    (
        "SELECT 1; -- comment\nDROP TABLE readings",
        Expect::Multiple,
    ),
    ("SELECT 1 END; DROP TABLE readings", Expect::Multiple),
    ("DROP TABLE readings; SELECT 1", Expect::Multiple),
    // File and network readers, replacement scans, URLs.
    ("SELECT * FROM read_csv('/etc/passwd')", Expect::Blocked),
    ("SELECT * FROM read_csv_auto('x.csv')", Expect::Blocked),
    ("SELECT * FROM READ_CSV('x.csv')", Expect::Blocked),
    (
        "SELECT * FROM read_parquet('s3://bucket/x.parquet')",
        Expect::Blocked,
    ),
    ("SELECT * FROM read_json('x.json')", Expect::Blocked),
    ("SELECT * FROM read_json_objects('x.json')", Expect::Blocked),
    ("SELECT * FROM read_text('/etc/passwd')", Expect::Blocked),
    ("SELECT * FROM read_blob('/etc/shadow')", Expect::Blocked),
    ("SELECT * FROM parquet_scan('x.parquet')", Expect::Blocked),
    ("SELECT * FROM glob('/home/*')", Expect::Blocked),
    ("SELECT * FROM sniff_csv('x.csv')", Expect::Blocked),
    (
        "SELECT * FROM parquet_metadata('x.parquet')",
        Expect::Blocked,
    ),
    ("SELECT * FROM parquet_schema('x.parquet')", Expect::Blocked),
    ("SELECT * FROM iceberg_scan('x')", Expect::Blocked),
    ("SELECT * FROM sqlite_scan('x.db', 't')", Expect::Blocked),
    ("SELECT * FROM LATERAL read_csv('x.csv')", Expect::Blocked),
    ("SELECT * FROM 'x.csv'", Expect::Blocked),
    ("FROM 'data/readings.parquet'", Expect::Blocked),
    ("SELECT * FROM \"x.csv\"", Expect::Blocked),
    ("SELECT * FROM \"/etc/passwd\"", Expect::Blocked),
    (
        "SELECT * FROM 'https://example.com/data.csv'",
        Expect::Blocked,
    ),
    ("SELECT * FROM \"s3://bucket/key.parquet\"", Expect::Blocked),
    ("SELECT * FROM \"~/.ssh/id_rsa\"", Expect::Blocked),
    ("SELECT * FROM main.\"x.csv\"", Expect::Blocked),
    ("DESCRIBE 'x.csv'", Expect::Blocked),
    ("DESCRIBE \"x.csv\"", Expect::Blocked),
    ("SUMMARIZE 'x.csv'", Expect::Blocked),
    ("SUMMARIZE \"x.csv\"", Expect::Blocked),
    ("SUMMARIZE SELECT * FROM read_csv('x.csv')", Expect::Blocked),
    // SQL from strings, state, environment, settings.
    ("SELECT * FROM query('SELECT 1')", Expect::Blocked),
    ("SELECT * FROM query_table('readings')", Expect::Blocked),
    (
        "SELECT * FROM json_execute_serialized_sql('x')",
        Expect::Blocked,
    ),
    ("SELECT * FROM duckdb_secrets()", Expect::Blocked),
    ("SELECT * FROM duckdb_settings()", Expect::Blocked),
    ("SELECT * FROM duckdb_databases()", Expect::Blocked),
    (
        "SELECT * FROM which_secret('s3://x', 's3')",
        Expect::Blocked,
    ),
    ("SELECT * FROM checkpoint()", Expect::Blocked),
    ("SELECT nextval('s')", Expect::Blocked),
    ("SELECT currval('s')", Expect::Blocked),
    ("SELECT setseed(0.5)", Expect::Blocked),
    ("SELECT getenv('HOME')", Expect::Blocked),
    ("SELECT current_setting('memory_limit')", Expect::Blocked),
    ("SELECT getvariable('x')", Expect::Blocked),
    ("SELECT read_text('/etc/passwd')", Expect::Blocked),
    ("SELECT \"getenv\"('HOME')", Expect::Blocked),
    ("SELECT main.getenv('HOME')", Expect::Blocked),
    // SELECT INTO, parameters, locking.
    ("SELECT * INTO newtable FROM readings", Expect::Blocked),
    ("SELECT * FROM readings FOR UPDATE", Expect::Blocked),
    // Everything above, nested: subqueries, CTEs, LATERAL, set operations, arguments, lambdas.
    (
        "SELECT * FROM (SELECT * FROM read_csv('x.csv'))",
        Expect::Blocked,
    ),
    (
        "WITH x AS (SELECT * FROM read_csv('x.csv')) SELECT * FROM x",
        Expect::Blocked,
    ),
    (
        "WITH RECURSIVE r AS (SELECT 1 UNION ALL SELECT * FROM read_csv('x')) SELECT * FROM r",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings WHERE glucose IN (SELECT * FROM read_csv('x.csv'))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings UNION ALL SELECT * FROM 'x.csv'",
        Expect::Blocked,
    ),
    (
        "SELECT 1 UNION SELECT 2 UNION SELECT getenv('HOME')",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings, LATERAL (SELECT * FROM read_csv('x.csv'))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings JOIN read_csv('x.csv') ON true",
        Expect::Blocked,
    ),
    ("SELECT (SELECT count(*) FROM 'x.csv')", Expect::Blocked),
    ("SELECT upper(getenv('HOME'))", Expect::Blocked),
    (
        "SELECT list_transform([1], x -> getenv('HOME'))",
        Expect::Blocked,
    ),
    (
        "SELECT list_filter([1], x -> x IN (SELECT 1 FROM glob('*')))",
        Expect::Blocked,
    ),
    (
        "SELECT coalesce(NULL, (SELECT nextval('s')))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings WHERE EXISTS (SELECT 1 FROM glob('*'))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings ORDER BY (SELECT 1 FROM read_csv('x'))",
        Expect::Blocked,
    ),
    (
        "SELECT sum(glucose) OVER (PARTITION BY getenv('X')) FROM readings",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings QUALIFY setseed(0.1) IS NULL",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM range((SELECT count(*) FROM read_csv('x.csv')))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM unnest((SELECT list(x) FROM 'x.csv'))",
        Expect::Blocked,
    ),
    ("SELECT {'a': getenv('HOME')}", Expect::Blocked),
    ("SELECT [getenv('HOME')]", Expect::Blocked),
    (
        "SELECT MAP {'k': current_setting('threads')}",
        Expect::Blocked,
    ),
    (
        "SELECT CASE WHEN true THEN getenv('X') END",
        Expect::Blocked,
    ),
    (
        "SELECT glucose FROM readings GROUP BY glucose HAVING max(nextval('s')) > 0",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings LIMIT (SELECT count(*) FROM read_csv('x'))",
        Expect::Blocked,
    ),
    (
        "SELECT count(*) FILTER (WHERE getenv('X') IS NULL) FROM readings",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM (SELECT * FROM readings) AS s, (SELECT * INTO t2 FROM readings) AS u",
        Expect::Blocked,
    ),
    ("EXPLAIN SELECT * FROM read_csv('x.csv')", Expect::Blocked),
    ("DESCRIBE SELECT getenv('HOME')", Expect::Blocked),
    ("SELECT * FROM (FROM 'x.csv')", Expect::Blocked),
    (
        "SELECT * FROM readings WHERE trend IN (FROM 'x.csv')",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM range(3) t(x), LATERAL (SELECT * FROM 'x.csv')",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM unnest(['x.csv']) AS t(f), read_csv(t.f)",
        Expect::Blocked,
    ),
    (
        "SELECT list_transform(['a'], x -> (SELECT count(*) FROM read_csv(x)))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings ORDER BY getenv('x')",
        Expect::Blocked,
    ),
    ("SELECT * FROM readings LIMIT nextval('s')", Expect::Blocked),
    ("SELECT COLUMNS(getenv('X')) FROM readings", Expect::Blocked),
    (
        "SELECT * EXCLUDE (x) REPLACE (getenv('x') AS y) FROM readings",
        Expect::Blocked,
    ),
    (
        "SELECT sum(glucose ORDER BY getenv('x')) FROM readings",
        Expect::Blocked,
    ),
    (
        "SELECT string_agg(trend, getenv('x')) FROM readings",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings WINDOW w AS (ORDER BY getenv('x'))",
        Expect::Blocked,
    ),
    (
        "SELECT * FROM readings TABLESAMPLE BERNOULLI ((SELECT count(*) FROM 'x.csv'))",
        Expect::Blocked,
    ),
    ("VALUES (getenv('x'))", Expect::Blocked),
    (
        "SELECT * FROM (VALUES ((SELECT 1 FROM 'x.csv')))",
        Expect::Blocked,
    ),
    ("SUMMARIZE FROM 'x.csv'", Expect::Blocked),
    ("DESCRIBE FROM 'x.csv'", Expect::Blocked),
    ("EXPLAIN ANALYZE SELECT * FROM 'x.csv'", Expect::Blocked),
    (
        "SELECT * FROM information_schema.\"x.csv\"",
        Expect::Blocked,
    ),
    ("SHOW 'x.csv'", Expect::Blocked),
    ("FROM read_csv", Expect::Unknown),
    ("FROM duckdb_settings", Expect::Unknown),
    ("FROM duckdb_databases", Expect::Blocked),
    ("SELECT * FROM pg_settings", Expect::Blocked),
    ("SELECT * FROM pg_catalog.pg_settings", Expect::Blocked),
    // Unquoted, still a file to DuckDB's replacement scan (`x.csv` is schema `x`, table `csv`).
    ("SELECT * FROM x.csv", Expect::Blocked),
    ("SELECT * FROM data.parquet", Expect::Blocked),
    // Unknown relations (the MCP layer adds fuzzy matches).
    ("SELECT * FROM secrets_table", Expect::Unknown),
    ("SELECT * FROM other_schema.readings", Expect::Unknown),
    ("SELECT * FROM memory.main.readings", Expect::Unknown),
    ("SELECT * FROM system.main.readings", Expect::Unknown),
    ("SELECT * FROM temp.main.readings", Expect::Unknown),
    ("SELECT * FROM health.main.nosuchtable", Expect::Unknown),
    ("SELECT * FROM health.analytics.readings", Expect::Unknown),
    ("SELECT * FROM system.main.duckdb_settings", Expect::Unknown),
    ("SELECT * FROM analytics.readings", Expect::Unknown),
    (
        "WITH a AS (SELECT * FROM a) SELECT * FROM a",
        Expect::Unknown,
    ),
    (
        "WITH a AS (SELECT * FROM b), b AS (SELECT 1) SELECT * FROM a",
        Expect::Unknown,
    ),
    // A recursive CTE sees its own name only in the recursive term of a UNION body (DuckDB's
    // rule); anywhere else the name is checked as what it means outside the CTE.
    (
        "WITH RECURSIVE x AS (SELECT * FROM x) SELECT * FROM x",
        Expect::Unknown,
    ),
    (
        "WITH RECURSIVE \"a.csv\" AS (SELECT * FROM \"a.csv\") SELECT * FROM \"a.csv\"",
        Expect::Blocked,
    ),
    (
        "WITH RECURSIVE pg_settings AS (SELECT * FROM pg_settings) SELECT * FROM pg_settings",
        Expect::Blocked,
    ),
    (
        "WITH RECURSIVE duckdb_databases AS (SELECT * FROM duckdb_databases) SELECT 1",
        Expect::Blocked,
    ),
    (
        "WITH RECURSIVE duckdb_settings AS (SELECT * FROM duckdb_settings) SELECT 1",
        Expect::Unknown,
    ),
    (
        "WITH RECURSIVE x(n) AS (SELECT * FROM x UNION ALL SELECT 1) SELECT * FROM x",
        Expect::Unknown,
    ),
    (
        "WITH RECURSIVE \"x.csv\"(n) AS (SELECT * FROM \"x.csv\" UNION ALL SELECT n FROM \"x.csv\") SELECT 1",
        Expect::Blocked,
    ),
    (
        "WITH RECURSIVE x(n) AS (SELECT 1 UNION ALL SELECT n FROM x UNION ALL SELECT * FROM x) SELECT 1",
        Expect::Unknown,
    ),
    (
        "WITH RECURSIVE x(n) AS (SELECT 1 EXCEPT SELECT n FROM x) SELECT * FROM x",
        Expect::Unknown,
    ),
    (
        "WITH RECURSIVE x(n) AS (SELECT 1 INTERSECT SELECT n FROM x) SELECT * FROM x",
        Expect::Unknown,
    ),
    (
        "WITH RECURSIVE x(n) AS (SELECT 1 AS n UNION ALL BY NAME SELECT n FROM x) SELECT * FROM x",
        Expect::Unknown,
    ),
    (
        "WITH x AS (SELECT 1 AS n UNION ALL SELECT n FROM x) SELECT * FROM x",
        Expect::Unknown,
    ),
    // Names fold ASCII-only, as DuckDB's: a CTE named with U+212A KELVIN SIGN is not `k`.
    (
        "WITH \u{212A} AS (SELECT 1 AS x) SELECT * FROM k",
        Expect::Unknown,
    ),
    (
        "WITH \"\u{212A}.csv\" AS (SELECT 1 AS x) SELECT * FROM \"k.csv\"",
        Expect::Blocked,
    ),
    (
        "WITH RECURSIVE \"\u{212A}.csv\"(n) AS (SELECT 1 UNION ALL SELECT n FROM \"k.csv\") SELECT 1",
        Expect::Blocked,
    ),
    ("SELECT * FROM (SELECT 1) AS sub, sub", Expect::Unknown),
    ("DESCRIBE nosuchtable", Expect::Unknown),
    ("SUMMARIZE nosuchtable", Expect::Unknown),
    // SQL sqlparser cannot parse, refused on what its tokens show.
    (
        "SELECT count(*) FILTER (getenv('X') IS NULL) FROM readings",
        Expect::Blocked,
    ),
    ("SELECT x: getenv('HOME')", Expect::Blocked),
    ("SELECT #1 FROM read_csv('x.csv')", Expect::Blocked),
    ("FROM 'x.csv' USING SAMPLE 5", Expect::Blocked),
    ("SELECT * FROM \"x.csv\" TABLESAMPLE 10%", Expect::Blocked),
    (
        "FROM readings, read_csv('x.csv') USING SAMPLE 5",
        Expect::Blocked,
    ),
    (
        "FROM readings r ASOF JOIN 'x.csv' p ON r.ts >= p.ts",
        Expect::Blocked,
    ),
    ("FROM (SUMMARIZE 'x.csv')", Expect::Blocked),
    ("SELECT * FROM (DESCRIBE 'x.csv')", Expect::Blocked),
    ("SELECT * RENAME (a AS b) FROM 'x.csv'", Expect::Blocked),
    ("SHOW SELECT * FROM read_csv('x.csv')", Expect::Blocked),
    (
        "SELECT * FROM readings USING SAMPLE 5 ROWS WHERE trend IN (FROM pg_settings)",
        Expect::Blocked,
    ),
    (
        "WITH x AS (SELECT 1 USING SAMPLE 1) DELETE FROM readings",
        Expect::Write,
    ),
    (
        "EXPLAIN ANALYZE (FORMAT json) UPDATE readings SET glucose = 0 USING SAMPLE 1",
        Expect::Write,
    ),
    (
        "SUMMARIZE INSERT INTO readings DEFAULT VALUES USING x",
        Expect::Write,
    ),
    // Syntax.
    ("", Expect::Syntax),
    ("   -- just a comment", Expect::Syntax),
    (";", Expect::Syntax),
    ("SELEC 1", Expect::Syntax),
    ("\"SELECT\" 1", Expect::Syntax),
    // Caps (more in the validator's tests, which build long inputs).
    ("SELECT 1 AS x\u{0}", Expect::Invalid),
];
