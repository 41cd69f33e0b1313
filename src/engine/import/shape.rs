//! The one shape every export becomes: a table per kind of record, typed, with comments the
//! agent reads in `list_tables` and `describe_table`, and the consensus CGM metrics as views.
//!
//! The conventions, stated in the comments themselves so the agent sees them:
//! - `ts` is the device's local wall-clock time as TIMESTAMP (no zone), as the device showed
//!   it; a day is the device's local day, 23 or 25 hours long across a DST change.
//! - Glucose is a whole mg/dL. mmol/L is converted × 18.016 (glucose's molar mass, 180.16 g/mol,
//!   over 10) and rounded to the whole mg/dL: every reading written with one decimal in mmol/L
//!   then falls on the same side of the consensus cut-offs (3.0, 3.9, 10.0, 13.9 mmol/L) as of
//!   54, 70, 180, 250 mg/dL. The value as exported stays in `source_value` and `source_unit`.
//! - A reading beyond the sensor's range (Dexcom's `Low`/`High`, Libre's `LO`/`HI`) is stored as
//!   one below its lower limit or one above its upper limit, with `out_of_range` = 'low' or
//!   'high': `< 54`, `< 70`, `> 180` and `> 250` count it, and the mean uses the limit.

/// The tables the vendor formats fill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The CGM's regular readings.
    Cgm,
    /// Other glucose values: finger sticks, calibrations, Libre scans.
    Checks,
    /// Rapid-acting insulin: pump boluses and pen doses.
    Boluses,
    /// Pump basal rates.
    Basal,
    /// Long-acting insulin doses (injections).
    LongActing,
    /// Carbohydrates entered.
    Carbs,
    /// Everything else with a time: alarms, site and sensor changes, notes, exercise.
    Events,
}

impl Kind {
    /// Every kind, in the order the summary lists them.
    pub const ALL: [Kind; 7] = [
        Kind::Cgm,
        Kind::Checks,
        Kind::Boluses,
        Kind::Basal,
        Kind::LongActing,
        Kind::Carbs,
        Kind::Events,
    ];

    /// The table's name.
    pub fn table(self) -> &'static str {
        match self {
            Kind::Cgm => "cgm_readings",
            Kind::Checks => "glucose_checks",
            Kind::Boluses => "insulin_boluses",
            Kind::Basal => "basal",
            Kind::LongActing => "long_acting_insulin",
            Kind::Carbs => "carbs",
            Kind::Events => "device_events",
        }
    }

    /// The columns after `ts`, with their types, each with its comment; `device` and `source`
    /// end every table.
    pub fn columns(self) -> &'static [(&'static str, &'static str, &'static str)] {
        const GLUCOSE: &str = "Glucose in mg/dL, a whole number (mmol/L exports converted x 18.016 and \
             rounded). A Low/High reading holds one below/above the sensor's limit (see out_of_range).";
        const OUT_OF_RANGE: &str = "'low' or 'high' when the device reported the reading only as \
             below or above its range (Dexcom Low/High: below 40 / above 400; Libre LO/HI: below 40 / \
             above 500 mg/dL); glucose_mg_dl then holds 39, 401 or 501. NULL for a measured value.";
        const SOURCE_VALUE: &str =
            "The value as the export wrote it, in source_unit; NULL for Low/High.";
        const SOURCE_UNIT: &str = "The export's glucose unit: 'mg/dL' or 'mmol/L'.";
        match self {
            Kind::Cgm => &[
                ("glucose_mg_dl", "INTEGER NOT NULL", GLUCOSE),
                ("out_of_range", "VARCHAR", OUT_OF_RANGE),
                ("source_value", "DOUBLE", SOURCE_VALUE),
                ("source_unit", "VARCHAR NOT NULL", SOURCE_UNIT),
            ],
            Kind::Checks => &[
                ("glucose_mg_dl", "INTEGER NOT NULL", GLUCOSE),
                ("out_of_range", "VARCHAR", OUT_OF_RANGE),
                ("source_value", "DOUBLE", SOURCE_VALUE),
                ("source_unit", "VARCHAR NOT NULL", SOURCE_UNIT),
                (
                    "method",
                    "VARCHAR NOT NULL",
                    "'fingerstick', 'calibration' (a finger stick entered to calibrate the CGM) \
                     or 'sensor scan' (a Libre scan, beside its 15-minute history in cgm_readings).",
                ),
            ],
            Kind::Boluses => &[
                ("units", "DOUBLE NOT NULL", "Insulin units delivered."),
                (
                    "bolus_type",
                    "VARCHAR",
                    "The bolus kind as the device names it (e.g. Normal, Square, Standard/Correction, \
                     Meal Bolus, fast-acting pen dose).",
                ),
                (
                    "duration_minutes",
                    "DOUBLE",
                    "Minutes over which an extended (square) bolus was delivered; NULL or 0 for a normal one.",
                ),
            ],
            Kind::Basal => &[
                (
                    "rate_u_per_h",
                    "DOUBLE",
                    "Basal rate in units per hour from ts on; NULL for a temporary basal given only as a percent.",
                ),
                (
                    "duration_minutes",
                    "DOUBLE",
                    "Minutes a temporary basal was set for; NULL for a scheduled rate (it lasts until the next row).",
                ),
                (
                    "basal_type",
                    "VARCHAR",
                    "scheduled, temp (with the device's temp type) or delivered (Apple Health: units delivered over a span).",
                ),
            ],
            Kind::LongActing => &[(
                "units",
                "DOUBLE NOT NULL",
                "Units of long-acting (basal) insulin injected.",
            )],
            Kind::Carbs => &[("grams", "DOUBLE NOT NULL", "Carbohydrates in grams.")],
            Kind::Events => &[
                (
                    "event",
                    "VARCHAR NOT NULL",
                    "What happened, as the device names it (alarm, suspend, rewind, site change, exercise, note, ...).",
                ),
                (
                    "detail",
                    "VARCHAR",
                    "The device's detail for it (an alarm's text, a note as the user wrote it).",
                ),
            ],
        }
    }

    /// What the table holds, for its comment (the sources and dates are added from the data).
    pub fn description(self) -> &'static str {
        match self {
            Kind::Cgm => {
                "CGM sensor glucose readings, one row per reading (every 5 minutes for Dexcom and \
                 Medtronic, every 15 for a Libre's history). Low/High readings are kept as 39/401 \
                 (Libre HI: 501) with out_of_range set, so glucose_mg_dl < 54 and > 250 count them."
            }
            Kind::Checks => {
                "Glucose values that are not the CGM's regular readings: finger sticks, calibrations \
                 and Libre scans, in mg/dL (method says which)."
            }
            Kind::Boluses => "Rapid-acting insulin: pump boluses and pen doses, in units.",
            Kind::Basal => "Pump basal insulin: scheduled and temporary rates in units per hour.",
            Kind::LongActing => "Long-acting (basal) insulin injections, in units.",
            Kind::Carbs => "Carbohydrates entered on the pump, app or meter, in grams.",
            Kind::Events => {
                "Device events with a time: alarms, suspends, site and sensor changes, exercise, \
                 notes."
            }
        }
    }
}

/// The comment of `ts` in every table.
pub const TS_COMMENT: &str = "The device's local wall-clock time (TIMESTAMP without zone), as the \
     device showed it; Nightscout times are converted to it with the reading's utcOffset, or the \
     import's --time-zone when it has none.";
/// The comment of `device` in every table.
pub const DEVICE_COMMENT: &str =
    "The device kind (e.g. Dexcom G7, MiniMed 780G); never a serial number.";
/// The comment of `source` in every table.
pub const SOURCE_COMMENT: &str = "The export format the row came from (e.g. Dexcom Clarity CSV).";

/// `CREATE TABLE IF NOT EXISTS` for `kind`.
pub fn create_table(kind: Kind) -> String {
    let mut columns = vec!["ts TIMESTAMP NOT NULL".to_string()];
    columns.extend(kind.columns().iter().map(|(n, t, _)| format!("{n} {t}")));
    columns.push("device VARCHAR NOT NULL".into());
    columns.push("source VARCHAR NOT NULL".into());
    format!(
        "CREATE TABLE IF NOT EXISTS {} ({})",
        kind.table(),
        columns.join(", ")
    )
}

/// The views of the consensus CGM metrics (International Consensus on Time in Range, 2019):
/// per local day and per 14 days, for each source, over `cgm_readings`.
pub const METRIC_VIEWS: &str = r#"
CREATE OR REPLACE VIEW cgm_daily_metrics AS
WITH r AS (
    SELECT source, device, ts, glucose_mg_dl AS g,
           date_diff('second', lag(ts) OVER (PARTITION BY source, device ORDER BY ts), ts) / 60.0 AS gap
    FROM cgm_readings),
intervals AS (
    SELECT source, device, coalesce(median(gap) FILTER (WHERE gap > 0), 5) AS interval_minutes
    FROM r GROUP BY source, device)
SELECT r.source, CAST(r.ts AS DATE) AS day, count(*) AS readings,
    round(least(100, 100 * sum(i.interval_minutes) / 1440), 1) AS sensor_wear_pct,
    round(avg(g), 1) AS mean_mg_dl,
    round(stddev_samp(g), 1) AS sd_mg_dl,
    round(100 * stddev_samp(g) / avg(g), 1) AS cv_pct,
    round(3.31 + 0.02392 * avg(g), 2) AS gmi_pct,
    count(*) FILTER (WHERE g < 54) AS readings_below_54,
    count(*) FILTER (WHERE g > 250) AS readings_above_250,
    round(100 * (count(*) FILTER (WHERE g < 54))::DOUBLE / count(*), 1) AS pct_below_54,
    round(100 * (count(*) FILTER (WHERE g BETWEEN 54 AND 69))::DOUBLE / count(*), 1) AS pct_54_69,
    round(100 * (count(*) FILTER (WHERE g BETWEEN 70 AND 180))::DOUBLE / count(*), 1) AS pct_70_180,
    round(100 * (count(*) FILTER (WHERE g BETWEEN 181 AND 250))::DOUBLE / count(*), 1) AS pct_181_250,
    round(100 * (count(*) FILTER (WHERE g > 250))::DOUBLE / count(*), 1) AS pct_above_250
FROM r JOIN intervals i ON i.source = r.source AND i.device = r.device
GROUP BY r.source, CAST(r.ts AS DATE);

CREATE OR REPLACE VIEW cgm_14_day_metrics AS
WITH r AS (
    SELECT source, device, ts, glucose_mg_dl AS g,
           date_diff('second', lag(ts) OVER (PARTITION BY source, device ORDER BY ts), ts) / 60.0 AS gap
    FROM cgm_readings),
intervals AS (
    SELECT source, device, coalesce(median(gap) FILTER (WHERE gap > 0), 5) AS interval_minutes
    FROM r GROUP BY source, device),
last_days AS (SELECT source, max(CAST(ts AS DATE)) AS last_day FROM cgm_readings GROUP BY source),
p AS (
    SELECT r.*, i.interval_minutes, l.last_day,
           CAST(floor(date_diff('day', CAST(r.ts AS DATE), l.last_day) / 14) AS INTEGER) AS period
    FROM r JOIN intervals i ON i.source = r.source AND i.device = r.device
           JOIN last_days l ON l.source = r.source)
SELECT source, last_day - (14 * period + 13) AS period_start, last_day - 14 * period AS period_end,
    count(DISTINCT CAST(ts AS DATE)) AS days_with_readings, count(*) AS readings,
    round(least(100, 100 * sum(interval_minutes) / (14 * 1440)), 1) AS sensor_wear_pct,
    round(avg(g), 1) AS mean_mg_dl,
    round(stddev_samp(g), 1) AS sd_mg_dl,
    round(100 * stddev_samp(g) / avg(g), 1) AS cv_pct,
    round(3.31 + 0.02392 * avg(g), 2) AS gmi_pct,
    count(*) FILTER (WHERE g < 54) AS readings_below_54,
    count(*) FILTER (WHERE g > 250) AS readings_above_250,
    round(100 * (count(*) FILTER (WHERE g < 54))::DOUBLE / count(*), 1) AS pct_below_54,
    round(100 * (count(*) FILTER (WHERE g BETWEEN 54 AND 69))::DOUBLE / count(*), 1) AS pct_54_69,
    round(100 * (count(*) FILTER (WHERE g BETWEEN 70 AND 180))::DOUBLE / count(*), 1) AS pct_70_180,
    round(100 * (count(*) FILTER (WHERE g BETWEEN 181 AND 250))::DOUBLE / count(*), 1) AS pct_181_250,
    round(100 * (count(*) FILTER (WHERE g > 250))::DOUBLE / count(*), 1) AS pct_above_250
FROM p
GROUP BY source, last_day, period;
"#;

/// What the metric views' columns mean, for their comments.
pub const METRIC_COLUMNS: &[(&str, &str)] = &[
    (
        "readings",
        "CGM readings counted (Low/High included at their stored values).",
    ),
    (
        "sensor_wear_pct",
        "Percent of the time covered by readings: readings x the device's usual interval (the median gap) over 24 hours (over 14 days for the 14-day view); a DST day has 23 or 25 hours.",
    ),
    (
        "mean_mg_dl",
        "Mean glucose (mg/dL); Low/High counted at 39/401 (501).",
    ),
    ("sd_mg_dl", "Standard deviation of glucose (sample)."),
    (
        "cv_pct",
        "Coefficient of variation, 100 x SD / mean; the consensus target is 36 or less.",
    ),
    (
        "gmi_pct",
        "Glucose management indicator, 3.31 + 0.02392 x mean mg/dL (an estimate of HbA1c, %).",
    ),
    (
        "readings_below_54",
        "Readings below 54 mg/dL (level 2 hypoglycaemia), Low readings included.",
    ),
    (
        "readings_above_250",
        "Readings above 250 mg/dL (level 2 hyperglycaemia), High readings included.",
    ),
    (
        "pct_below_54",
        "Time below range, level 2: percent of readings below 54 mg/dL (target under 1).",
    ),
    (
        "pct_54_69",
        "Time below range, level 1: percent of readings 54-69 mg/dL (below 70 in all: target under 4).",
    ),
    (
        "pct_70_180",
        "Time in range: percent of readings 70-180 mg/dL (target over 70).",
    ),
    (
        "pct_181_250",
        "Time above range, level 1: percent of readings 181-250 mg/dL.",
    ),
    (
        "pct_above_250",
        "Time above range, level 2: percent of readings above 250 mg/dL (target under 5; above 180 in all: under 25).",
    ),
];

/// The metric views' own comments.
pub const METRIC_VIEW_COMMENTS: &[(&str, &str)] = &[
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
