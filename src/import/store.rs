//! The typed rows into DuckDB: the tables, Nightscout's instants placed in the person's zone,
//! refreshes without duplicates, the comments the agent reads, and the consensus metric views.

use duckdb::Connection;
use duckdb::types::{TimeUnit, Value};

use super::error::{ErrorKind, ImportError};
use super::rows::{DEVICE_COMMENT, SOURCE_COMMENT, Staged, TS_COMMENT, Table, When};
use super::vendor::{Parsed, Unparsed};
use super::{Load, TableSummary};
use crate::clinical::{
    GMI_INTERCEPT, GMI_SLOPE, HIGH_ABOVE, LOW_BELOW, VERY_HIGH_ABOVE, VERY_LOW_BELOW, goals,
};
use crate::sql_text::{quote_identifier, quote_literal};

/// The metric views' names.
pub(super) const METRIC_VIEWS: [&str; 2] = ["cgm_daily_metrics", "cgm_14_day_metrics"];

fn database(e: duckdb::Error) -> ImportError {
    ImportError::new(ErrorKind::Database, e.to_string())
}

/// `CREATE TABLE IF NOT EXISTS` for each table, and the columns a database written by an older
/// duckgate lacks (an `--append` to it then works).
pub(super) fn create_tables(conn: &Connection) -> Result<(), ImportError> {
    let mut sql = String::new();
    for table in Table::ALL {
        let mut columns = vec!["ts TIMESTAMP NOT NULL".to_string()];
        for c in table.columns() {
            let null = if c.nullable { "" } else { " NOT NULL" };
            columns.push(format!("{} {}{null}", c.name, c.sql_type));
        }
        columns.push("device VARCHAR NOT NULL".into());
        columns.push("source VARCHAR NOT NULL".into());
        sql.push_str(&format!(
            "CREATE TABLE IF NOT EXISTS {} ({});\n",
            table.name(),
            columns.join(", ")
        ));
        for c in table.columns() {
            sql.push_str(&format!(
                "ALTER TABLE {} ADD COLUMN IF NOT EXISTS {} {};\n",
                table.name(),
                c.name,
                c.sql_type
            ));
        }
    }
    conn.execute_batch(&sql).map_err(database)
}

/// Whether DuckDB's ICU knows `zone`.
pub(super) fn check_zone(conn: &Connection, zone: &str) -> Result<(), ImportError> {
    conn.query_row(
        "SELECT timezone(?, TIMESTAMPTZ '2000-01-01 00:00:00+00')",
        [zone],
        |_| Ok(()),
    )
    .map_err(|_| {
        ImportError::new(
            ErrorKind::TimeZone,
            format!("--time-zone {}: no such zone", super::text::shown(zone)),
        )
    })
}

/// How the instants of a file were placed: records with a `utcOffset`, and how many of those
/// disagreed with the zone.
#[derive(Debug, Default, Clone, Copy)]
struct Placed {
    instants: u64,
    with_offset: u64,
    disagreeing: u64,
}

/// A file's rows into the tables (only those the tables lack); what each table got.
pub(super) fn load(
    conn: &Connection,
    parsed: &Parsed,
    source: &str,
    zone: &str,
) -> Result<(Vec<Load>, Vec<String>), ImportError> {
    let mut loads = Vec::new();
    let mut placed = Placed::default();
    for (table, rows) in parsed.rows.tables() {
        let unparsed = parsed.unparsed.get(&table).cloned().unwrap_or_default();
        if rows.count() == 0 && unparsed.count == 0 {
            continue;
        }
        let (added, staged, table_placed) = stage_and_insert(conn, table, rows, source, zone)?;
        placed.instants += table_placed.instants;
        placed.with_offset += table_placed.with_offset;
        placed.disagreeing += table_placed.disagreeing;
        loads.push(Load {
            table: table.name().to_string(),
            added,
            already_there: staged.saturating_sub(added),
            unparsed,
        });
    }
    let mut notes = Vec::new();
    if placed.instants > 0 {
        notes.push(match (placed.with_offset, placed.disagreeing) {
            (0, _) => format!(
                "times placed in {zone} with its daylight-saving rules (the records carry no \
                 utcOffset)"
            ),
            (with, 0) => format!(
                "times placed in {zone} with its daylight-saving rules; the utcOffset of the \
                 {with} records that have one agrees with it"
            ),
            (with, off) => format!(
                "times placed in {zone} with its daylight-saving rules; the utcOffset of {off} \
                 of {with} records disagreed with it and was not used (Loop and Tomato write 0; \
                 pass --time-zone if {zone} is not where the readings were taken)"
            ),
        });
    }
    Ok((loads, notes))
}

/// Stage one table's rows, place instants, and insert those the table lacks: (added, staged).
fn stage_and_insert(
    conn: &Connection,
    table: Table,
    rows: &dyn Staged,
    source: &str,
    zone: &str,
) -> Result<(u64, u64, Placed), ImportError> {
    let mut columns = vec![
        "ts TIMESTAMP".to_string(),
        "instant_ms BIGINT".into(),
        "utc_offset INTEGER".into(),
    ];
    columns.extend(
        table
            .columns()
            .iter()
            .map(|c| format!("{} {}", c.name, c.sql_type)),
    );
    columns.push("device VARCHAR".into());
    columns.push("source VARCHAR".into());
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TABLE dg_stage ({})",
        columns.join(", ")
    ))
    .map_err(database)?;
    {
        let mut appender = conn.appender("dg_stage").map_err(database)?;
        for i in 0..rows.count() {
            let (Some((when, device)), Some(row_values)) =
                (rows.when_and_device(i), rows.values(i))
            else {
                break;
            };
            let mut values = match when {
                When::Local(t) => vec![
                    Value::Timestamp(TimeUnit::Microsecond, t.micros()),
                    Value::Null,
                    Value::Null,
                ],
                When::Instant {
                    utc_ms,
                    utc_offset_minutes,
                } => vec![
                    Value::Null,
                    Value::BigInt(utc_ms),
                    utc_offset_minutes.map_or(Value::Null, Value::Int),
                ],
            };
            values.extend(row_values);
            values.push(Value::Text(device.to_string()));
            values.push(Value::Text(source.to_string()));
            appender
                .append_row(duckdb::appender_params_from_iter(values))
                .map_err(database)?;
        }
        appender.flush().map_err(database)?;
    }
    let zone_sql = quote_literal(zone);
    conn.execute_batch(&format!(
        "UPDATE dg_stage SET ts = timezone({zone_sql}, timezone('UTC', epoch_ms(instant_ms))) \
         WHERE instant_ms IS NOT NULL"
    ))
    .map_err(database)?;
    let placed = conn
        .query_row(
            "SELECT count(instant_ms), count(utc_offset), \
             count(*) FILTER (WHERE utc_offset <> date_diff('minute', epoch_ms(instant_ms), ts)) \
             FROM dg_stage",
            [],
            |r| {
                Ok(Placed {
                    instants: r.get::<_, i64>(0)? as u64,
                    with_offset: r.get::<_, i64>(1)? as u64,
                    disagreeing: r.get::<_, i64>(2)? as u64,
                })
            },
        )
        .map_err(database)?;
    let name = table.name();
    // A repeated (device, time) is kept as often as the file has it (the hour a DST change
    // repeats holds two readings at each local time), and an append adds only the occurrences
    // the table lacks.
    let added = conn
        .execute(
            &format!(
                "INSERT INTO {name} BY NAME \
                 SELECT n.* EXCLUDE (occurrence, instant_ms, utc_offset) FROM \
                   (SELECT *, row_number() OVER (PARTITION BY source, device, ts) AS occurrence \
                    FROM dg_stage) n \
                 ANTI JOIN \
                   (SELECT source, device, ts, \
                           row_number() OVER (PARTITION BY source, device, ts) AS occurrence \
                    FROM {name}) o \
                 ON n.source = o.source AND n.device = o.device AND n.ts = o.ts \
                    AND n.occurrence = o.occurrence"
            ),
            [],
        )
        .map_err(database)?;
    conn.execute_batch("DROP TABLE dg_stage")
        .map_err(database)?;
    Ok((added as u64, rows.count() as u64, placed))
}

/// After the files: drop the tables nothing went into, write the comments from what the tables
/// hold, and (re)create the metric views with the lengths of `zone`'s local days.
pub(super) fn finish(conn: &Connection, zone: &str) -> Result<(), ImportError> {
    for table in Table::ALL {
        let name = table.name();
        let rows: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {name}"), [], |r| r.get(0))
            .map_err(database)?;
        if rows == 0 {
            conn.execute_batch(&format!("DROP TABLE {name}"))
                .map_err(database)?;
            continue;
        }
        let sources: String = conn
            .query_row(
                &format!(
                    "SELECT string_agg(s, '; ' ORDER BY s) FROM ( \
                       SELECT source || ' (' || string_agg(DISTINCT device, ', ' ORDER BY device) \
                              || '), ' || strftime(min(ts), '%Y-%m-%d') || ' to ' \
                              || strftime(max(ts), '%Y-%m-%d') AS s \
                       FROM {name} GROUP BY source)"
                ),
                [],
                |r| r.get(0),
            )
            .map_err(database)?;
        let mut sql = format!(
            "COMMENT ON TABLE {name} IS {};\n",
            quote_literal(&format!(
                "{} From {sources}. Times are the device's local wall-clock time (TIMESTAMP, no \
                 zone). Imported by duckgate import.",
                table.description()
            ))
        );
        let mut columns: Vec<(&str, &str)> = vec![("ts", TS_COMMENT)];
        columns.extend(table.columns().iter().map(|c| (c.name, c.comment)));
        columns.push(("device", DEVICE_COMMENT));
        columns.push(("source", SOURCE_COMMENT));
        for (column, comment) in columns {
            sql.push_str(&format!(
                "COMMENT ON COLUMN {name}.{column} IS {};\n",
                quote_literal(comment)
            ));
        }
        conn.execute_batch(&sql).map_err(database)?;
    }
    let has_cgm: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM duckdb_tables() WHERE database_name = current_database() \
             AND schema_name = 'main' AND table_name = 'cgm_readings'",
            [],
            |r| r.get(0),
        )
        .map_err(database)?;
    if !has_cgm {
        for view in METRIC_VIEWS {
            conn.execute_batch(&format!("DROP VIEW IF EXISTS {view}"))
                .map_err(database)?;
        }
        return Ok(());
    }
    let day_lengths = day_lengths(conn, zone)?;
    conn.execute_batch(&metric_views(&day_lengths))
        .map_err(database)?;
    let mut sql = String::new();
    for (view, comment) in METRIC_VIEW_COMMENTS {
        sql.push_str(&format!(
            "COMMENT ON VIEW {view} IS {};\n",
            quote_literal(comment)
        ));
        for (column, comment) in metric_columns() {
            sql.push_str(&format!(
                "COMMENT ON COLUMN {view}.{column} IS {};\n",
                quote_literal(&comment)
            ));
        }
    }
    conn.execute_batch(&sql).map_err(database)
}

/// The local days of `cgm_readings` that are not 24 hours long in `zone` (the days its clocks
/// change), with their minutes, as DuckDB's ICU knows the zone's rules.
fn day_lengths(conn: &Connection, zone: &str) -> Result<Vec<(String, i64)>, ImportError> {
    let mut statement = conn
        .prepare(
            "SELECT strftime(day, '%Y-%m-%d'), minutes FROM ( \
               SELECT day, date_diff('minute', timezone($1, day::TIMESTAMP), \
                                     timezone($1, (day + 1)::TIMESTAMP)) AS minutes \
               FROM (SELECT DISTINCT CAST(ts AS DATE) AS day FROM cgm_readings)) \
             WHERE minutes <> 1440 ORDER BY day",
        )
        .map_err(database)?;
    statement
        .query_map([zone], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(database)
}

/// The views of the consensus CGM metrics (International Consensus on Time in Range, 2019),
/// per local day and per 14 days, for each source, over `cgm_readings`. `day_lengths` are the
/// days that are not 1,440 minutes long.
fn metric_views(day_lengths: &[(String, i64)]) -> String {
    let lengths = if day_lengths.is_empty() {
        "SELECT CAST(NULL AS DATE) AS day, CAST(NULL AS BIGINT) AS minutes WHERE false".to_string()
    } else {
        let values: Vec<String> = day_lengths
            .iter()
            .map(|(day, minutes)| format!("(DATE {}, {minutes})", quote_literal(day)))
            .collect();
        format!(
            "SELECT * FROM (VALUES {}) AS t(day, minutes)",
            values.join(", ")
        )
    };
    let (lo2, lo, hi, hi2) = (VERY_LOW_BELOW, LOW_BELOW, HIGH_ABOVE, VERY_HIGH_ABOVE);
    let shares = format!(
        "count(*) FILTER (WHERE g < {lo2}) AS readings_below_{lo2},
    count(*) FILTER (WHERE g > {hi2}) AS readings_above_{hi2},
    round(100 * (count(*) FILTER (WHERE g < {lo2}))::DOUBLE / count(*), 1) AS pct_below_{lo2},
    round(100 * (count(*) FILTER (WHERE g BETWEEN {lo2} AND {lo} - 1))::DOUBLE / count(*), 1) AS pct_{lo2}_{lo_1},
    round(100 * (count(*) FILTER (WHERE g BETWEEN {lo} AND {hi}))::DOUBLE / count(*), 1) AS pct_{lo}_{hi},
    round(100 * (count(*) FILTER (WHERE g BETWEEN {hi} + 1 AND {hi2}))::DOUBLE / count(*), 1) AS pct_{hi_1}_{hi2},
    round(100 * (count(*) FILTER (WHERE g > {hi2}))::DOUBLE / count(*), 1) AS pct_above_{hi2}",
        lo_1 = lo - 1,
        hi_1 = hi + 1,
    );
    let stats = format!(
        "round(avg(g), 1) AS mean_mg_dl,
    round(stddev_samp(g), 1) AS sd_mg_dl,
    round(100 * stddev_samp(g) / avg(g), 1) AS cv_pct,
    round({GMI_INTERCEPT} + {GMI_SLOPE} * avg(g), 2) AS gmi_pct"
    );
    let readings = "r AS (
    SELECT source, device, ts, glucose_mg_dl AS g,
           date_diff('second', lag(ts) OVER (PARTITION BY source, device ORDER BY ts), ts) / 60.0 AS gap
    FROM cgm_readings),
intervals AS (
    SELECT source, device, coalesce(median(gap) FILTER (WHERE gap > 0), 5) AS interval_minutes
    FROM r GROUP BY source, device)";
    format!(
        "CREATE OR REPLACE VIEW cgm_daily_metrics AS
WITH {readings},
day_lengths AS ({lengths})
SELECT r.source, CAST(r.ts AS DATE) AS day, count(*) AS readings,
    round(least(100, 100 * sum(i.interval_minutes) / any_value(coalesce(d.minutes, 1440))), 1) AS sensor_wear_pct,
    {stats},
    {shares}
FROM r JOIN intervals i ON i.source = r.source AND i.device = r.device
     LEFT JOIN day_lengths d ON d.day = CAST(r.ts AS DATE)
GROUP BY r.source, CAST(r.ts AS DATE);

CREATE OR REPLACE VIEW cgm_14_day_metrics AS
WITH {readings},
day_lengths AS ({lengths}),
last_days AS (SELECT source, max(CAST(ts AS DATE)) AS last_day FROM cgm_readings GROUP BY source),
p AS (
    SELECT r.*, i.interval_minutes, l.last_day,
           CAST(floor(date_diff('day', CAST(r.ts AS DATE), l.last_day) / 14) AS INTEGER) AS period
    FROM r JOIN intervals i ON i.source = r.source AND i.device = r.device
           JOIN last_days l ON l.source = r.source),
period_minutes AS (
    SELECT k.source, k.period, 14 * 1440 + coalesce(sum(d.minutes - 1440), 0) AS minutes
    FROM (SELECT DISTINCT source, last_day, period FROM p) k
    LEFT JOIN day_lengths d
      ON d.day BETWEEN k.last_day - (14 * k.period + 13) AND k.last_day - 14 * k.period
    GROUP BY k.source, k.period)
SELECT p.source, last_day - (14 * p.period + 13) AS period_start, last_day - 14 * p.period AS period_end,
    count(DISTINCT CAST(ts AS DATE)) AS days_with_readings, count(*) AS readings,
    round(least(100, 100 * sum(interval_minutes) / any_value(m.minutes)), 1) AS sensor_wear_pct,
    {stats},
    {shares}
FROM p JOIN period_minutes m ON m.source = p.source AND m.period = p.period
GROUP BY p.source, last_day, p.period;
"
    )
}

/// What the metric views' columns mean, for their comments.
fn metric_columns() -> Vec<(String, String)> {
    let (lo2, lo, hi, hi2) = (VERY_LOW_BELOW, LOW_BELOW, HIGH_ABOVE, VERY_HIGH_ABOVE);
    vec![
        (
            "readings".into(),
            "CGM readings counted (Low/High included at their stored values).".into(),
        ),
        (
            "sensor_wear_pct".into(),
            "Percent of the time covered by readings: readings x the device's usual interval \
             (the median gap) over the local day's real length (23, 24 or 25 hours across a \
             daylight-saving change; over the 14 days' for the 14-day view)."
                .into(),
        ),
        (
            "mean_mg_dl".into(),
            "Mean glucose (mg/dL); Low/High counted at 39/401 (501).".into(),
        ),
        (
            "sd_mg_dl".into(),
            "Standard deviation of glucose (sample).".into(),
        ),
        (
            "cv_pct".into(),
            format!(
                "Coefficient of variation, 100 x SD / mean; the consensus target is {} or less.",
                goals::CV_AT_MOST
            ),
        ),
        (
            "gmi_pct".into(),
            format!(
                "Glucose management indicator, {GMI_INTERCEPT} + {GMI_SLOPE} x mean mg/dL (an \
                 estimate of HbA1c, %)."
            ),
        ),
        (
            format!("readings_below_{lo2}"),
            format!("Readings below {lo2} mg/dL (level 2 hypoglycaemia), Low readings included."),
        ),
        (
            format!("readings_above_{hi2}"),
            format!("Readings above {hi2} mg/dL (level 2 hyperglycaemia), High readings included."),
        ),
        (
            format!("pct_below_{lo2}"),
            format!(
                "Time below range, level 2: percent of readings below {lo2} mg/dL (target under \
                 {}).",
                goals::BELOW_VERY_LOW_UNDER
            ),
        ),
        (
            format!("pct_{lo2}_{}", lo - 1),
            format!(
                "Time below range, level 1: percent of readings {lo2}-{} mg/dL (below {lo} in \
                 all: target under {}).",
                lo - 1,
                goals::BELOW_LOW_UNDER
            ),
        ),
        (
            format!("pct_{lo}_{hi}"),
            format!(
                "Time in range: percent of readings {lo}-{hi} mg/dL (target over {}).",
                goals::IN_RANGE_OVER
            ),
        ),
        (
            format!("pct_{}_{hi2}", hi + 1),
            format!(
                "Time above range, level 1: percent of readings {}-{hi2} mg/dL.",
                hi + 1
            ),
        ),
        (
            format!("pct_above_{hi2}"),
            format!(
                "Time above range, level 2: percent of readings above {hi2} mg/dL (target under \
                 {}; above {hi} in all: under {}).",
                goals::ABOVE_VERY_HIGH_UNDER,
                goals::ABOVE_HIGH_UNDER
            ),
        ),
    ]
}

/// The metric views' own comments.
const METRIC_VIEW_COMMENTS: [(&str, &str); 2] = [
    (
        "cgm_daily_metrics",
        "Consensus CGM metrics (International Consensus on Time in Range, 2019) per local day and \
         source, over cgm_readings: time below, in and above range (<54, 54-69, 70-180, 181-250, \
         >250 mg/dL), mean, SD, CV, GMI and sensor wear. Filter by source when two exports cover \
         the same days.",
    ),
    (
        "cgm_14_day_metrics",
        "Consensus CGM metrics (International Consensus on Time in Range, 2019) per 14-day period \
         and source, over cgm_readings: time below, in and above range (<54, 54-69, 70-180, \
         181-250, >250 mg/dL), mean, SD, CV, GMI and sensor wear. Periods are counted back from \
         the source's last day with readings (period_start to period_end, local days); the \
         consensus asks for 14 days with at least 70% sensor wear.",
    ),
];

/// The database's tables and views: rows, first and last time, columns and types.
pub(super) fn summarise(conn: &Connection) -> Result<Vec<TableSummary>, ImportError> {
    let names: Vec<(String, bool)> = conn
        .prepare(
            "SELECT table_name, false FROM duckdb_tables() \
             WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal \
             UNION ALL \
             SELECT view_name, true FROM duckdb_views() \
             WHERE database_name = current_database() AND schema_name = 'main' AND NOT internal \
             ORDER BY 2, 1",
        )
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<Result<_, _>>()
        })
        .map_err(database)?;
    let mut tables = Vec::new();
    for (name, view) in names {
        let columns: Vec<(String, String)> = conn
            .prepare(
                "SELECT column_name, data_type FROM duckdb_columns() \
                 WHERE database_name = current_database() AND schema_name = 'main' \
                 AND table_name = ? ORDER BY column_index",
            )
            .and_then(|mut s| {
                s.query_map([&name], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<Result<_, _>>()
            })
            .map_err(database)?;
        let quoted = quote_identifier(&name);
        let (rows, range) = if view {
            (0, None)
        } else if columns.iter().any(|(c, t)| c == "ts" && t == "TIMESTAMP") {
            conn.query_row(
                &format!(
                    "SELECT count(*), strftime(min(ts), '%Y-%m-%d %H:%M'), \
                     strftime(max(ts), '%Y-%m-%d %H:%M') FROM {quoted}"
                ),
                [],
                |r| {
                    let first: Option<String> = r.get(1)?;
                    let last: Option<String> = r.get(2)?;
                    Ok((r.get::<_, i64>(0)? as u64, first.zip(last)))
                },
            )
            .map_err(database)?
        } else {
            let rows: i64 = conn
                .query_row(&format!("SELECT count(*) FROM {quoted}"), [], |r| r.get(0))
                .map_err(database)?;
            (rows as u64, None)
        };
        tables.push(TableSummary {
            name,
            view,
            rows,
            range,
            columns,
        });
    }
    Ok(tables)
}

/// Unparsed counts of a file, all tables together.
pub(super) fn total_unparsed(parsed: &Parsed) -> Unparsed {
    let mut all = Unparsed::default();
    for unparsed in parsed.unparsed.values() {
        all.merge(unparsed);
    }
    all
}
