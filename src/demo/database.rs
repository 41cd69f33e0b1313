//! A synthetic CGM/insulin-pump database for demos and tests (`duckgate demo`).
//!
//! This opens an ordinary read-write DuckDB connection: it is the operator's tool for making a
//! sample file, never on the agent's path. Everything is generated inside DuckDB with
//! `range()` and a seeded `random()` on one thread, so it takes about a second and gives the
//! same data every time.

use std::fmt;
use std::path::{Path, PathBuf};

use duckdb::{AccessMode, Config, Connection};
use serde::Serialize;

use crate::partial_file::write_beside_then_move;

/// What [`write_demo_database`] built.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DemoSummary {
    /// The database file written.
    pub path: PathBuf,
    /// (table, rows) for each table, in creation order.
    pub tables: Vec<(String, u64)>,
    /// Size of the file in bytes.
    pub bytes: u64,
}

/// Readings every 5 minutes for a year.
const READINGS: u64 = 365 * 288;

/// The build, one step per statement group, so `progress` can report between them.
const STEPS: [(&str, &str); 9] = [
    ("schema", SCHEMA),
    ("devices", DEVICES),
    ("cgm_readings", CGM_READINGS),
    ("basal_deliveries", BASAL_DELIVERIES),
    ("events", EVENTS),
    ("raw_events", RAW_EVENTS),
    ("nothing after now", UNTIL_NOW),
    ("indexes and views", INDEXES_AND_VIEWS),
    ("comments", COMMENTS),
];

const SCHEMA: &str = "
CREATE TYPE device_kind AS ENUM ('pump', 'cgm');
CREATE TYPE glucose_trend AS ENUM ('falling_fast', 'falling', 'flat', 'rising', 'rising_fast');
CREATE TABLE devices (
    device_id   INTEGER PRIMARY KEY,
    serial      VARCHAR NOT NULL UNIQUE,
    kind        device_kind NOT NULL,
    model       VARCHAR NOT NULL,
    started_at  TIMESTAMP NOT NULL,
    ended_at    TIMESTAMP
);
CREATE TABLE cgm_readings (
    reading_id     BIGINT PRIMARY KEY,
    device_id      INTEGER NOT NULL REFERENCES devices (device_id),
    read_at        TIMESTAMP NOT NULL,
    glucose_mg_dl  SMALLINT NOT NULL,
    trend          glucose_trend NOT NULL
);
CREATE TABLE basal_deliveries (
    delivery_id          INTEGER PRIMARY KEY,
    device_id            INTEGER NOT NULL REFERENCES devices (device_id),
    started_at           TIMESTAMP NOT NULL,
    duration_min         INTEGER NOT NULL,
    rate_units_per_hour  DECIMAL(5,3) NOT NULL,
    delivery_type        VARCHAR NOT NULL DEFAULT 'scheduled'
);
CREATE TABLE events (
    event_id       INTEGER PRIMARY KEY,
    device_id      INTEGER NOT NULL REFERENCES devices (device_id),
    occurred_at    TIMESTAMP NOT NULL,
    kind           VARCHAR NOT NULL,
    insulin_units  DECIMAL(5,2),
    carbs_g        SMALLINT,
    note           VARCHAR
);
CREATE TABLE raw_events (
    raw_id       INTEGER PRIMARY KEY,
    event_id     INTEGER NOT NULL REFERENCES events (event_id),
    received_at  TIMESTAMP NOT NULL,
    payload      JSON NOT NULL
);
";

const DEVICES: &str = "
INSERT INTO devices VALUES
    (1, 'TSX-1182734', 'pump', 't:slim X2', getvariable('demo_start') - INTERVAL 214 DAY + INTERVAL 9 HOUR, NULL);
INSERT INTO devices
SELECT 2 + s, 'G7-' || lpad((400000 + s * 37)::VARCHAR, 7, '0'), 'cgm', 'Dexcom G7',
       getvariable('demo_start') + s * INTERVAL 10 DAY,
       getvariable('demo_start') + (s + 1) * INTERVAL 10 DAY
FROM range(37) r(s);
";

// Glucose: a circadian wave, three meal peaks whose size varies by day, a nocturnal low on
// about one night in six, a weekly drift and sensor noise, clamped to the 40–400 mg/dL range a
// CGM reports; the trend arrow comes from the 5-minute change (±5 and ±10 mg/dL, about
// 1 and 2 mg/dL per minute, as CGM arrows use).
const CGM_READINGS: &str = "
INSERT INTO cgm_readings
WITH days AS (
    SELECT d,
           (hash(d * 3 + 1) % 1000) / 1000.0 AS f1,
           (hash(d * 3 + 2) % 1000) / 1000.0 AS f2,
           hash(d * 3 + 3) % 6 = 0 AS low_night
    FROM range(365) r(d)
), base AS (
    SELECT i,
           greatest(40, least(400, round(
               120
               + 20 * sin(2 * pi() * ((i % 288) / 288.0 - 0.3))
               + 60 * (0.7 + 0.6 * f1) * exp(-power(((i % 288) - 100) / 12.0, 2))
               + 45 * (0.6 + 0.8 * f2) * exp(-power(((i % 288) - 160) / 14.0, 2))
               + 75 * (0.6 + 0.9 * f2) * exp(-power(((i % 288) - 232) / 16.0, 2))
               - CASE WHEN low_night THEN 75 * exp(-power(((i % 288) - 40) / 10.0, 2)) ELSE 0 END
               + 15 * sin(2 * pi() * i / 2016.0)
               + (random() + random() - 1) * 4
           )))::SMALLINT AS glucose
    FROM range(105120) t(i) JOIN days ON d = i // 288
), with_delta AS (
    SELECT *, glucose - lag(glucose) OVER (ORDER BY i) AS delta FROM base
)
SELECT i + 1,
       2 + i // 2880,
       getvariable('demo_start') + i * INTERVAL 5 MINUTE,
       glucose,
       CASE WHEN delta >= 10 THEN 'rising_fast' WHEN delta >= 5 THEN 'rising'
            WHEN delta <= -10 THEN 'falling_fast' WHEN delta <= -5 THEN 'falling'
            ELSE 'flat' END
FROM with_delta
ORDER BY i;
";

// One segment per hour: a dawn-phenomenon basal profile, with a temporary rate now and then
// and a short suspension about once a week.
const BASAL_DELIVERIES: &str = "
INSERT INTO basal_deliveries
SELECT h + 1,
       1,
       getvariable('demo_start') + h * INTERVAL 1 HOUR,
       60,
       CASE WHEN r < 0.006 THEN 0
            ELSE round((CASE WHEN h % 24 BETWEEN 3 AND 7 THEN 1.05
                              WHEN h % 24 BETWEEN 8 AND 20 THEN 0.85 ELSE 0.7 END)
                       * (CASE WHEN r > 0.95 THEN 1.4 ELSE 1 END), 3) END,
       CASE WHEN r < 0.006 THEN 'suspended' WHEN r > 0.95 THEN 'temp' ELSE 'scheduled' END
FROM (SELECT h, random() AS r FROM range(365 * 24) t(h))
ORDER BY h;
";

// Three meals a day, each a carbs entry and a bolus a few minutes later, a correction bolus
// on some evenings, and a weekly exercise note.
const EVENTS: &str = "
INSERT INTO events
WITH meals AS (
    SELECT d, m,
           getvariable('demo_start') + d * INTERVAL 1 DAY
             + [INTERVAL 7 HOUR + INTERVAL 40 MINUTE, INTERVAL 12 HOUR + INTERVAL 45 MINUTE,
                INTERVAL 18 HOUR + INTERVAL 50 MINUTE][m + 1]
             + (random() * 30)::INTEGER * INTERVAL 1 MINUTE AS meal_at,
           ([35, 60, 70][m + 1] + (random() * 30)::INTEGER)::SMALLINT AS carbs
    FROM range(365) a(d), range(3) b(m)
), all_events AS (
    SELECT meal_at AS event_at, 'carbs' AS kind, NULL::DECIMAL(5,2) AS units, carbs, NULL AS note FROM meals
    UNION ALL
    SELECT meal_at + INTERVAL 3 MINUTE, 'bolus', round(carbs / 10.0, 2), NULL, 'meal bolus' FROM meals
    UNION ALL
    SELECT getvariable('demo_start') + INTERVAL 21 HOUR + INTERVAL 30 MINUTE + d * INTERVAL 1 DAY, 'bolus',
           round(0.5 + random() * 1.5, 2), NULL, 'correction'
    FROM range(365) c(d) WHERE random() < 0.3
    UNION ALL
    SELECT getvariable('demo_start') + INTERVAL 3 DAY + INTERVAL 17 HOUR + w * INTERVAL 7 DAY, 'note', NULL, NULL,
           'Exercise: ' || (20 + (random() * 40)::INTEGER) || ' min walk'
    FROM range(52) e(w)
)
SELECT row_number() OVER (ORDER BY event_at, kind)::INTEGER, 1, event_at, kind, units, carbs, note
FROM all_events;
";

const RAW_EVENTS: &str = "
INSERT INTO raw_events
SELECT event_id,
       event_id,
       occurred_at + INTERVAL 2 MINUTE,
       json_object(
           'type', kind,
           'timestamp', strftime(occurred_at, '%Y-%m-%dT%H:%M:%S'),
           'units', insulin_units,
           'carbs_g', carbs_g,
           'note', note,
           'source', json_object('device', 'TSX-1182734', 'firmware', '7.8.1')
       )::JSON
FROM events
ORDER BY event_id;
";

// The year ends today, in the local time zone (`demo_start`, set in `build`): so "yesterday",
// "last week" and "today so far" have answers. Nothing is recorded after the moment the demo is
// built; the sensor in use has not ended yet.
const UNTIL_NOW: &str = "
DELETE FROM raw_events WHERE received_at > now()::TIMESTAMP;
DELETE FROM events WHERE occurred_at > now()::TIMESTAMP;
DELETE FROM cgm_readings WHERE read_at > now()::TIMESTAMP;
DELETE FROM basal_deliveries WHERE started_at > now()::TIMESTAMP;
DELETE FROM devices WHERE started_at > now()::TIMESTAMP;
UPDATE devices SET ended_at = NULL WHERE ended_at > now()::TIMESTAMP;
";

const INDEXES_AND_VIEWS: &str = "
CREATE INDEX cgm_readings_read_at ON cgm_readings (read_at);
CREATE INDEX events_occurred_at ON events (occurred_at);
CREATE VIEW daily_glucose AS
SELECT read_at::DATE AS day,
       round(avg(glucose_mg_dl), 1) AS mean_mg_dl,
       min(glucose_mg_dl) AS min_mg_dl,
       max(glucose_mg_dl) AS max_mg_dl,
       round(100.0 * avg(CASE WHEN glucose_mg_dl BETWEEN 70 AND 180 THEN 1 ELSE 0 END), 1)
           AS time_in_range_pct
FROM cgm_readings
GROUP BY ALL;
";

const COMMENTS: &str = "
COMMENT ON TABLE devices IS 'Insulin pump and CGM sensors; each CGM sensor lasts 10 days.';
COMMENT ON COLUMN devices.device_id IS 'Device identifier.';
COMMENT ON COLUMN devices.serial IS 'Serial number printed on the device.';
COMMENT ON COLUMN devices.kind IS 'pump or cgm.';
COMMENT ON COLUMN devices.model IS 'Manufacturer model name.';
COMMENT ON COLUMN devices.started_at IS 'When the device went into use (local time).';
COMMENT ON COLUMN devices.ended_at IS 'When the device was retired; NULL while in use.';
COMMENT ON TABLE cgm_readings IS 'Continuous glucose monitor readings, one every 5 minutes.';
COMMENT ON COLUMN cgm_readings.reading_id IS 'Reading identifier, in time order.';
COMMENT ON COLUMN cgm_readings.device_id IS 'The CGM sensor that took the reading.';
COMMENT ON COLUMN cgm_readings.read_at IS 'Time of the reading (local time).';
COMMENT ON COLUMN cgm_readings.glucose_mg_dl IS 'Sensor glucose in mg/dL (40-400).';
COMMENT ON COLUMN cgm_readings.trend IS 'Trend arrow from the change since the previous reading.';
COMMENT ON TABLE basal_deliveries IS 'Basal insulin delivered by the pump, one row per hour.';
COMMENT ON COLUMN basal_deliveries.delivery_id IS 'Segment identifier.';
COMMENT ON COLUMN basal_deliveries.device_id IS 'The pump.';
COMMENT ON COLUMN basal_deliveries.started_at IS 'Start of the segment (local time).';
COMMENT ON COLUMN basal_deliveries.duration_min IS 'Length of the segment in minutes.';
COMMENT ON COLUMN basal_deliveries.rate_units_per_hour IS 'Basal rate in units per hour.';
COMMENT ON COLUMN basal_deliveries.delivery_type IS 'scheduled, temp or suspended.';
COMMENT ON TABLE events IS 'Boluses, carbohydrate entries and notes logged on the pump.';
COMMENT ON COLUMN events.event_id IS 'Event identifier, in time order.';
COMMENT ON COLUMN events.device_id IS 'The pump that logged the event.';
COMMENT ON COLUMN events.occurred_at IS 'When it happened (local time).';
COMMENT ON COLUMN events.kind IS 'bolus, carbs or note.';
COMMENT ON COLUMN events.insulin_units IS 'Bolus insulin in units (bolus events only).';
COMMENT ON COLUMN events.carbs_g IS 'Carbohydrates in grams (carbs events only).';
COMMENT ON COLUMN events.note IS 'Free text: bolus reason or a user note.';
COMMENT ON TABLE raw_events IS 'The pump''s raw upload payload for each event, as JSON.';
COMMENT ON COLUMN raw_events.raw_id IS 'Raw record identifier.';
COMMENT ON COLUMN raw_events.event_id IS 'The parsed event this payload produced.';
COMMENT ON COLUMN raw_events.received_at IS 'When the upload arrived.';
COMMENT ON COLUMN raw_events.payload IS 'The payload exactly as uploaded (JSON).';
COMMENT ON VIEW daily_glucose IS 'Per-day glucose mean, range and time in range (70-180 mg/dL).';
";

/// Build the demo database at `path`, which must not exist yet. `progress(done, total)` is
/// called after each step.
pub fn write_demo_database(
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<DemoSummary, DemoBuildError> {
    if path.exists() {
        return Err(DemoBuildError::Exists(path.to_path_buf()));
    }
    let tables = write_beside_then_move(
        path,
        |partial| build(partial, progress),
        DemoBuildError::MoveIntoPlace,
    )?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    Ok(DemoSummary {
        path: path.to_path_buf(),
        tables,
        bytes,
    })
}

/// Why the demo database could not be built: the step that failed.
#[derive(Debug)]
pub enum DemoBuildError {
    /// Something is at the path already.
    Exists(PathBuf),
    /// DuckDB's configuration was refused.
    Configure(duckdb::Error),
    /// The file could not be created.
    Create {
        /// The file (the `.partial` one beside the target).
        path: PathBuf,
        /// DuckDB's error.
        error: duckdb::Error,
    },
    /// Seeding `random()` failed.
    Seed(duckdb::Error),
    /// Setting the first day of the year of data failed.
    FirstDay(duckdb::Error),
    /// One step of the build (`STEPS`) failed.
    Step {
        /// The step's name.
        step: &'static str,
        /// DuckDB's error.
        error: duckdb::Error,
    },
    /// The final checkpoint failed.
    Checkpoint(duckdb::Error),
    /// Counting a table's rows failed.
    Count {
        /// The table.
        table: &'static str,
        /// DuckDB's error.
        error: duckdb::Error,
    },
    /// The readings are not a year's worth (a bug in the generator).
    WrongReadings {
        /// The rows found.
        rows: u64,
    },
    /// Closing the database failed.
    Close(duckdb::Error),
    /// Renaming the built file into place failed.
    MoveIntoPlace(std::io::Error),
}

impl fmt::Display for DemoBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DemoBuildError::Exists(path) => write!(
                f,
                "{} already exists; remove it or choose another path.",
                path.display()
            ),
            DemoBuildError::Configure(e) => write!(f, "could not configure DuckDB: {e}"),
            DemoBuildError::Create { path, error } => {
                write!(f, "could not create {}: {error}", path.display())
            }
            DemoBuildError::Seed(e) => write!(f, "setseed: {e}"),
            DemoBuildError::FirstDay(e) => write!(f, "the demo's first day: {e}"),
            DemoBuildError::Step { step, error } => write!(f, "building {step}: {error}"),
            DemoBuildError::Checkpoint(e) => write!(f, "checkpoint: {e}"),
            DemoBuildError::Count { table, error } => write!(f, "counting {table}: {error}"),
            DemoBuildError::WrongReadings { rows } => write!(
                f,
                "cgm_readings has {rows} rows, expected {} to {READINGS}",
                READINGS - 288
            ),
            DemoBuildError::Close(e) => write!(f, "closing the database: {e}"),
            DemoBuildError::MoveIntoPlace(e) => {
                write!(f, "could not move the database into place: {e}")
            }
        }
    }
}

impl std::error::Error for DemoBuildError {}

/// Whether the existing file at `path` is a demo database `duckgate demo` can run its session
/// against: every table and column the demo's schema creates is there. Opened read-only, so
/// the file is left as it is; `Err` says why it is not one (or why it cannot be read).
pub fn check_demo_database(path: &Path) -> Result<(), NotADemoDatabase> {
    let expected = demo_columns()?;
    let config = Config::default()
        .access_mode(AccessMode::ReadOnly)
        .and_then(|c| c.with("autoinstall_known_extensions", "false"))
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(NotADemoDatabase::Configure)?;
    let conn = Connection::open_with_flags(path, config).map_err(NotADemoDatabase::Open)?;
    let found = main_columns(&conn)?;
    let _ = conn.close();
    let mut missing_tables: Vec<String> = Vec::new();
    let mut missing_columns: Vec<String> = Vec::new();
    for (table, column) in &expected {
        if !found.iter().any(|(t, _)| t == table) {
            if !missing_tables.contains(table) {
                missing_tables.push(table.clone());
            }
        } else if !found.contains(&(table.clone(), column.clone())) {
            missing_columns.push(format!("{table}.{column}"));
        }
    }
    if !missing_tables.is_empty() {
        return Err(NotADemoDatabase::MissingTables(missing_tables));
    }
    if !missing_columns.is_empty() {
        return Err(NotADemoDatabase::MissingColumns(missing_columns));
    }
    Ok(())
}

/// Why a file is not a demo database (or cannot be checked).
#[derive(Debug)]
pub enum NotADemoDatabase {
    /// DuckDB's configuration was refused.
    Configure(duckdb::Error),
    /// The in-memory database the demo's schema is read from could not be opened.
    OpenInMemory(duckdb::Error),
    /// The demo's own schema failed (a bug).
    DemoSchema(duckdb::Error),
    /// DuckDB cannot open the file read-only (not a DuckDB file, or unreadable).
    Open(duckdb::Error),
    /// Listing a database's tables failed.
    ListTables(duckdb::Error),
    /// Tables of the demo's that the file lacks.
    MissingTables(Vec<String>),
    /// Columns (`table.column`) of the demo's that the file's tables lack.
    MissingColumns(Vec<String>),
}

impl fmt::Display for NotADemoDatabase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotADemoDatabase::Configure(e) => write!(f, "could not configure DuckDB: {e}"),
            NotADemoDatabase::OpenInMemory(e) => write!(f, "could not open DuckDB: {e}"),
            NotADemoDatabase::DemoSchema(e) => write!(f, "the demo's schema: {e}"),
            NotADemoDatabase::Open(e) => write!(f, "DuckDB cannot open it read-only: {e}"),
            NotADemoDatabase::ListTables(e) => write!(f, "cannot list its tables: {e}"),
            NotADemoDatabase::MissingTables(tables) => {
                write!(f, "it has no table {} of the demo's", tables.join(", "))
            }
            NotADemoDatabase::MissingColumns(columns) => write!(
                f,
                "its tables lack the demo's columns {}",
                columns.join(", ")
            ),
        }
    }
}

impl std::error::Error for NotADemoDatabase {}

/// (table, column) of every table the demo's schema creates, read from DuckDB itself.
fn demo_columns() -> Result<Vec<(String, String)>, NotADemoDatabase> {
    let config = Config::default()
        .with("autoinstall_known_extensions", "false")
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(NotADemoDatabase::Configure)?;
    let conn =
        Connection::open_in_memory_with_flags(config).map_err(NotADemoDatabase::OpenInMemory)?;
    conn.execute_batch(SCHEMA)
        .map_err(NotADemoDatabase::DemoSchema)?;
    main_columns(&conn)
}

/// (table, column) of the base tables in the `main` schema of the connection's database.
fn main_columns(conn: &Connection) -> Result<Vec<(String, String)>, NotADemoDatabase> {
    let mut statement = conn
        .prepare(
            "SELECT c.table_name, c.column_name FROM duckdb_columns() c \
             JOIN duckdb_tables() t USING (database_name, schema_name, table_name) \
             WHERE c.database_name = current_database() AND c.schema_name = 'main' \
             ORDER BY c.table_name, c.column_index",
        )
        .map_err(NotADemoDatabase::ListTables)?;
    let rows = statement
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .map_err(NotADemoDatabase::ListTables)?;
    rows.collect::<Result<Vec<_>, _>>()
        .map_err(NotADemoDatabase::ListTables)
}

fn build(
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<Vec<(String, u64)>, DemoBuildError> {
    let config = Config::default()
        // One thread keeps the seeded random() sequence, and so the data, reproducible.
        .with("threads", "1")
        .and_then(|c| c.with("autoinstall_known_extensions", "false"))
        .and_then(|c| c.with("autoload_known_extensions", "false"))
        .map_err(DemoBuildError::Configure)?;
    let conn =
        Connection::open_with_flags(path, config).map_err(|error| DemoBuildError::Create {
            path: path.to_path_buf(),
            error,
        })?;
    conn.execute_batch("SELECT setseed(0.42)")
        .map_err(DemoBuildError::Seed)?;
    // The year of data ends today in the local time zone (DuckDB's ICU reads the machine's).
    conn.execute_batch("SET VARIABLE demo_start = (current_date - INTERVAL 364 DAY)::TIMESTAMP")
        .map_err(DemoBuildError::FirstDay)?;
    let total = STEPS.len() as u64;
    for (done, &(step, sql)) in STEPS.iter().enumerate() {
        conn.execute_batch(sql)
            .map_err(|error| DemoBuildError::Step { step, error })?;
        progress(done as u64 + 1, total);
    }
    conn.execute_batch("CHECKPOINT")
        .map_err(DemoBuildError::Checkpoint)?;
    let mut tables = Vec::new();
    for table in [
        "devices",
        "cgm_readings",
        "basal_deliveries",
        "events",
        "raw_events",
    ] {
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .map_err(|error| DemoBuildError::Count { table, error })?;
        tables.push((table.to_string(), rows.max(0) as u64));
    }
    // A year of 5-minute readings, less what today has not reached yet.
    let readings = tables
        .iter()
        .find(|(table, _)| table == "cgm_readings")
        .map_or(0, |(_, rows)| *rows);
    if !(READINGS - 288..=READINGS).contains(&readings) {
        return Err(DemoBuildError::WrongReadings { rows: readings });
    }
    conn.close().map_err(|(_, e)| DemoBuildError::Close(e))?;
    Ok(tables)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_database_has_a_year_of_readings_and_documented_tables() {
        let dir = crate::engine::tests::TempDir::new("demo");
        let path = dir.path().join("demo.duckdb");
        let mut calls = Vec::new();
        let summary = write_demo_database(&path, &mut |d, t| calls.push((d, t))).unwrap();
        assert_eq!(
            calls.last(),
            Some(&(STEPS.len() as u64, STEPS.len() as u64))
        );
        let readings = summary.tables[1].1;
        assert!(
            (READINGS - 288..=READINGS).contains(&readings),
            "{summary:?}"
        );
        assert!(
            summary.tables.iter().all(|(_, rows)| *rows > 0),
            "{summary:?}"
        );
        assert!(summary.bytes > 0);
        assert!(!dir.path().join("demo.duckdb.partial").exists());

        let conn = Connection::open(&path).unwrap();
        let (min, max, avg): (i16, i16, f64) = conn
            .query_row(
                "SELECT min(glucose_mg_dl), max(glucose_mg_dl), avg(glucose_mg_dl) FROM cgm_readings",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert!(
            (40..=70).contains(&min) && (200..=400).contains(&max),
            "{min} {max}"
        );
        assert!((110.0..=180.0).contains(&avg), "{avg}");
        let flat_share: f64 = conn
            .query_row(
                "SELECT avg(CASE WHEN trend = 'flat' THEN 1 ELSE 0 END) FROM cgm_readings",
                [],
                |r| r.get(0),
            )
            .unwrap();
        // Most of a day is steady; arrows show around meals and lows.
        assert!((0.6..0.95).contains(&flat_share), "{flat_share}");
        // The year ends now, in local time: yesterday and last week have readings, nothing is
        // in the future, and the last reading is at most five minutes old.
        let (yesterday, last_week, future, minutes_old): (i64, i64, i64, i64) = conn
            .query_row(
                "SELECT count(*) FILTER (WHERE read_at::DATE = current_date - 1),
                        count(*) FILTER (WHERE read_at >= now()::TIMESTAMP - INTERVAL 7 DAY),
                        count(*) FILTER (WHERE read_at > now()::TIMESTAMP),
                        date_diff('minute', max(read_at), now()::TIMESTAMP)
                 FROM cgm_readings",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert_eq!(yesterday, 288);
        assert!(
            (7 * 288 - 288..=7 * 288 + 1).contains(&last_week),
            "{last_week}"
        );
        assert_eq!(future, 0);
        assert!((0..=5).contains(&minutes_old), "{minutes_old}");
        let undocumented: i64 = conn
            .query_row(
                "SELECT count(*) FROM duckdb_columns() WHERE database_name = 'demo' \
                 AND NOT internal AND comment IS NULL AND table_name <> 'daily_glucose'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(undocumented, 0);
        let payload_type: String = conn
            .query_row("SELECT typeof(payload) FROM raw_events LIMIT 1", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(payload_type, "JSON");

        // A second run refuses to clobber the file.
        assert!(write_demo_database(&path, &mut |_, _| {}).is_err());
        drop(conn);
        // What `duckgate demo` checks before it reuses a file: this one is a demo database.
        check_demo_database(&path).unwrap();
    }

    #[test]
    fn a_database_without_the_demos_tables_is_not_a_demo_database_and_is_left_as_it_was() {
        let dir = crate::engine::tests::TempDir::new("not-demo");
        let path = dir.path().join("mine.duckdb");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE readings AS SELECT 1 AS id")
            .unwrap();
        conn.close().map_err(|(_, e)| e).unwrap();
        let before = std::fs::read(&path).unwrap();
        let reason = check_demo_database(&path).unwrap_err();
        assert!(
            matches!(&reason, NotADemoDatabase::MissingTables(tables)
                if tables.iter().any(|t| t == "cgm_readings")),
            "{reason}"
        );
        assert!(reason.to_string().contains("cgm_readings"), "{reason}");
        assert_eq!(std::fs::read(&path).unwrap(), before, "the file changed");
        assert!(!dir.path().join("mine.duckdb.wal").exists());

        // Same table names, other columns: still not the demo's.
        let other = dir.path().join("other.duckdb");
        let conn = Connection::open(&other).unwrap();
        conn.execute_batch(
            "CREATE TABLE devices (x INTEGER); CREATE TABLE cgm_readings (x INTEGER); \
             CREATE TABLE basal_deliveries (x INTEGER); CREATE TABLE events (x INTEGER); \
             CREATE TABLE raw_events (x INTEGER);",
        )
        .unwrap();
        conn.close().map_err(|(_, e)| e).unwrap();
        let reason = check_demo_database(&other).unwrap_err();
        assert!(
            matches!(&reason, NotADemoDatabase::MissingColumns(columns)
                if columns.iter().any(|c| c == "cgm_readings.glucose_mg_dl")),
            "{reason}"
        );
        assert!(
            reason.to_string().contains("cgm_readings.glucose_mg_dl"),
            "{reason}"
        );

        // Not DuckDB at all.
        let text = dir.path().join("notes.txt");
        std::fs::write(&text, "just some notes\n").unwrap();
        let reason = check_demo_database(&text).unwrap_err();
        assert!(matches!(reason, NotADemoDatabase::Open(_)), "{reason}");
        assert!(reason.to_string().contains("cannot open"), "{reason}");
        assert_eq!(std::fs::read(&text).unwrap(), b"just some notes\n");
    }
}
