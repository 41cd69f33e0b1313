//! Each vendor's export as SQL over DuckDB's reading of it: which rows are which kind of
//! record, how its times and numbers are written, and what its out-of-range readings mean.
//!
//! Every section is read with all columns as text (`all_varchar`), so a `Low` in a glucose
//! column can never turn the column to text or drop the row: each value is converted here, on
//! purpose, and a value that does not convert is reported with the row's `problem`, never
//! silently lost. Everything runs in the `import` command's own DuckDB, on the operator's files.

use std::path::Path;

use duckdb::Connection;

use super::apple;
use super::detect::Format;
use super::sections::{self, Scratch, Section, TConnectSection};
use super::shape::Kind;
use crate::engine::{sql_identifier, sql_string};

/// The glucose unit an export writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// mg/dL.
    MgDl,
    /// mmol/L, converted at import.
    MmolL,
}

impl Unit {
    /// As the `source_unit` column writes it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::MgDl => "mg/dL",
            Unit::MmolL => "mmol/L",
        }
    }

    /// As a SQL string literal.
    fn sql(self) -> String {
        sql_string(self.label())
    }

    /// The unit a column name states (`Glucose Value (mmol/L)`, `Historic Glucose mg/dL`).
    fn of_column(name: &str) -> Unit {
        if name.to_ascii_lowercase().contains("mmol") {
            Unit::MmolL
        } else {
            Unit::MgDl
        }
    }
}

/// The SQL every staging query may use, as temporary macros of the import's connection.
pub const MACROS: &str = "
CREATE OR REPLACE TEMP MACRO dg_num(x) AS TRY_CAST(replace(trim(x), ',', '.') AS DOUBLE);
CREATE OR REPLACE TEMP MACRO dg_text(x) AS nullif(trim(x), '');
CREATE OR REPLACE TEMP MACRO dg_minutes(x) AS
    TRY_CAST(split_part(trim(x), ':', 1) AS INTEGER) * 60
    + TRY_CAST(split_part(trim(x), ':', 2) AS INTEGER)
    + coalesce(TRY_CAST(split_part(trim(x), ':', 3) AS DOUBLE), 0) / 60;
";

/// A section DuckDB has read, as a temporary table of text columns.
pub struct Raw {
    /// The temporary table.
    pub table: String,
    /// Its columns, as the export's header names them.
    pub columns: Vec<String>,
}

impl Raw {
    /// The column `test` accepts, as a quoted identifier.
    fn find(&self, test: impl Fn(&str) -> bool) -> Option<(String, String)> {
        self.columns
            .iter()
            .find(|c| test(c))
            .map(|c| (sql_identifier(c), c.clone()))
    }

    /// The column named `name`, as a quoted identifier.
    fn named(&self, name: &str) -> Option<String> {
        self.find(|c| c == name).map(|(q, _)| q)
    }

    /// The column named `name`, which the format requires.
    fn need(&self, name: &str, format: Format) -> Result<String, String> {
        self.named(name)
            .ok_or_else(|| format!("a {} without its {name:?} column", format.label()))
    }
}

/// One staging query: rows of `kind`'s table, plus `problem` (NULL, or why the row was not
/// taken: a time or value that does not parse, quoted as the export wrote it).
pub struct Stage {
    /// The table the rows go to.
    pub kind: Kind,
    /// The SELECT.
    pub select: String,
}

/// What a file becomes: its staging queries and what of it is left out on purpose.
pub struct Plan {
    /// The glucose unit of the export, when it has glucose.
    pub unit: Option<Unit>,
    /// The staging queries.
    pub stages: Vec<Stage>,
    /// What the export holds that is not imported, and why: the summary says so.
    pub left_out: Vec<String>,
    /// The temporary tables to drop afterwards.
    pub raw_tables: Vec<String>,
}

/// What the vendor readers share: the connection, the scratch folder, the import's zone.
pub struct Ctx<'a> {
    /// The import's connection.
    pub conn: &'a Connection,
    /// Where sections are written for DuckDB to read.
    pub scratch: &'a Scratch,
    /// The zone of Nightscout times that carry no offset.
    pub time_zone: &'a str,
    /// The raw tables made so far (for unique names).
    pub made: std::cell::Cell<u32>,
}

impl Ctx<'_> {
    fn next_table(&self) -> String {
        let n = self.made.get();
        self.made.set(n + 1);
        format!("dg_raw_{n}")
    }

    /// Read `section` with DuckDB's CSV reader, every column as text.
    fn load_section<K>(&self, section: &Section<K>) -> Result<Raw, String> {
        let path = self
            .scratch
            .write(section)
            .map_err(|e| format!("could not write a scratch file: {e}"))?;
        let delim = sections::delimiter(&section.header);
        self.load_csv(&path, delim, Some(section.line))
    }

    /// Read the CSV at `path` (header row first) into a temporary table of text columns. When
    /// it is a section cut out of an export, `header_line` is its header row's line there, so
    /// an error names the line of the user's file.
    fn load_csv(
        &self,
        path: &Path,
        delim: char,
        header_line: Option<usize>,
    ) -> Result<Raw, String> {
        let table = self.next_table();
        let path_text = path.to_string_lossy();
        self.conn
            .execute_batch(&format!(
                "CREATE TEMP TABLE {table} AS SELECT * FROM read_csv({}, header = true, \
                 all_varchar = true, delim = {}, quote = '\"', escape = '\"', null_padding = true)",
                sql_string(&path_text),
                sql_string(&delim.to_string())
            ))
            .map_err(|e| csv_error(&e.to_string(), header_line))?;
        self.columns_of(table)
    }

    /// Read a Nightscout JSON array (or newline-delimited JSON) with the fields `columns`, each
    /// as text; a record without a field has NULL there.
    fn load_json(&self, path: &Path, columns: &[&str]) -> Result<Raw, String> {
        let table = self.next_table();
        let spec: Vec<String> = columns
            .iter()
            .map(|c| format!("{}: 'VARCHAR'", sql_string(c)))
            .collect();
        self.conn
            .execute_batch(&format!(
                "CREATE TEMP TABLE {table} AS SELECT * FROM read_json({}, format = 'auto', \
                 columns = {{{}}})",
                sql_string(&path.to_string_lossy()),
                spec.join(", ")
            ))
            .map_err(|e| format!("it is not valid JSON: {}", first_line(&e.to_string())))?;
        self.columns_of(table)
    }

    fn columns_of(&self, table: String) -> Result<Raw, String> {
        let mut statement = self
            .conn
            .prepare(&format!("SELECT column_name FROM (DESCRIBE {table})"))
            .map_err(|e| format!("listing its columns: {e}"))?;
        let columns = statement
            .query_map([], |row| row.get::<_, String>(0))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| format!("listing its columns: {e}"))?;
        Ok(Raw { table, columns })
    }

    /// The strptime format that reads the most of `raw_expr`'s values over `raw` (rows
    /// `filter` keeps) as a plausible date (1990–2100); on a tie, the one whose dates span the
    /// least time (a day read as a month spreads them over the year), then the first listed.
    fn time_format(&self, raw: &Raw, raw_expr: &str, filter: &str) -> Result<&'static str, String> {
        let mut columns = Vec::new();
        for format in TIME_FORMATS {
            let parsed = format!("try_strptime({raw_expr}, {})", sql_string(format));
            columns.push(format!(
                "count(*) FILTER (WHERE year({parsed}) BETWEEN 1990 AND 2100)"
            ));
            columns.push(format!(
                "coalesce(date_diff('minute', min({parsed}), max({parsed})), 0)"
            ));
        }
        let sql = format!(
            "SELECT {} FROM {} WHERE ({filter}) AND dg_text({raw_expr}) IS NOT NULL",
            columns.join(", "),
            raw.table
        );
        let scores: Vec<(i64, i64)> = self
            .conn
            .query_row(&sql, [], |row| {
                (0..TIME_FORMATS.len())
                    .map(|i| Ok((row.get(2 * i)?, row.get(2 * i + 1)?)))
                    .collect()
            })
            .map_err(|e| format!("reading its times: {e}"))?;
        let best = scores
            .iter()
            .enumerate()
            .max_by(|(ia, (ca, sa)), (ib, (cb, sb))| ca.cmp(cb).then(sb.cmp(sa)).then(ib.cmp(ia)))
            .map(|(i, _)| i)
            .unwrap_or(0);
        Ok(TIME_FORMATS[best])
    }
}

/// DuckDB's CSV error for the user: the reason and the line of their file, without DuckDB's
/// suggestions (options `import` does not have), the reader's settings or the scratch path.
/// `header_line` is where the section's header row sits in the user's file; DuckDB counts the
/// lines of the section's own file, whose line 1 is that header.
pub fn csv_error(message: &str, header_line: Option<usize>) -> String {
    let mut line = None;
    let mut reason = None;
    for text in message.lines().map(str::trim) {
        if text.is_empty() || text.starts_with("Possible fixes") {
            break;
        }
        if text.contains("Error when sniffing file") {
            // DuckDB found no consistent layout; its own words name the scratch file and the
            // dialects it tried.
            reason = Some(
                "no row layout fits its header row (a quote that is never closed, or rows with \
                 other fields than the header names)",
            );
            break;
        }
        if let Some(n) = text
            .split("CSV Error on Line:")
            .nth(1)
            .and_then(|n| n.trim().parse::<usize>().ok())
        {
            line = Some(n);
        } else if !text.starts_with("Original Line:") && reason.is_none() {
            reason = Some(strip_error_class(text));
        }
    }
    let reason = reason
        .unwrap_or_else(|| strip_error_class(first_line(message)))
        .trim_end_matches('.');
    match (line, header_line) {
        (Some(n), Some(header)) => {
            format!(
                "it is not valid CSV: {reason} (line {} of the file)",
                header + n - 1
            )
        }
        (Some(n), None) => format!("it is not valid CSV: {reason} (line {n})"),
        _ => format!("it is not valid CSV: {reason}"),
    }
}

/// DuckDB's message without its class (`Invalid Input Error: `).
fn strip_error_class(text: &str) -> &str {
    match text.split_once(" Error: ") {
        Some((class, rest)) if class.split(' ').count() <= 3 => rest,
        _ => text,
    }
}

/// The first line of a message.
fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or(message)
}

/// The ways the vendors write a local date and time, the two-digit years before the four-digit
/// ones (DuckDB's `%Y` would read `26` as the year 26).
const TIME_FORMATS: &[&str] = &[
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d %H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
    "%m/%d/%y %H:%M:%S",
    "%d/%m/%y %H:%M:%S",
    "%d.%m.%y %H:%M:%S",
    "%m/%d/%y %H:%M",
    "%d/%m/%y %H:%M",
    "%d.%m.%y %H:%M",
    "%m-%d-%Y %H:%M",
    "%d-%m-%Y %H:%M",
    "%m-%d-%Y %H:%M:%S",
    "%d-%m-%Y %H:%M:%S",
    "%m/%d/%Y %H:%M:%S",
    "%d/%m/%Y %H:%M:%S",
    "%d.%m.%Y %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%d/%m/%Y %H:%M",
    "%d.%m.%Y %H:%M",
    "%m/%d/%Y %I:%M %p",
    "%m-%d-%Y %I:%M %p",
    "%m/%d/%Y %I:%M:%S %p",
    "%Y-%m-%dT%H:%M:%S.%f",
];

/// The four glucose columns from a text value: Low/LO and High/HI become one below `low` and
/// one above `high` (the sensor's limits) with `out_of_range` set; a number in `unit_sql`'s
/// unit (a SQL expression giving 'mg/dL' or 'mmol/L') becomes whole mg/dL.
fn glucose_columns(raw: &str, unit_sql: &str, low: i32, high: i32) -> String {
    let word = format!("lower(trim({raw}))");
    format!(
        "CASE WHEN {word} IN ('low', 'lo') THEN {below} WHEN {word} IN ('high', 'hi') THEN {above} \
         ELSE CAST(round(CASE WHEN {unit_sql} = 'mmol/L' THEN dg_num({raw}) * 18.016 \
         ELSE dg_num({raw}) END) AS INTEGER) END AS glucose_mg_dl, \
         CASE WHEN {word} IN ('low', 'lo') THEN 'low' WHEN {word} IN ('high', 'hi') THEN 'high' END \
         AS out_of_range, \
         CASE WHEN {word} NOT IN ('low', 'lo', 'high', 'hi') THEN dg_num({raw}) END AS source_value, \
         {unit_sql} AS source_unit",
        below = low - 1,
        above = high + 1,
    )
}

/// One staging query's parts.
struct Spec<'a> {
    kind: Kind,
    raw: &'a Raw,
    /// Which rows of the section are this kind of record.
    filter: String,
    /// The time as written, its label for problems, and the TIMESTAMP read from it.
    ts_raw: String,
    ts_label: String,
    ts: String,
    /// `expr AS column` for every column of the table but `ts`.
    columns: Vec<String>,
    /// Columns a row needs, with the label and raw text to report when they come out NULL.
    required: Vec<(&'static str, String, String)>,
}

impl Spec<'_> {
    fn stage(self) -> Stage {
        let mut raws = vec![format!("{} AS dg_raw_ts", self.ts_raw)];
        let mut excluded = vec!["dg_raw_ts".to_string()];
        let mut problem = format!(
            "CASE WHEN ts IS NULL THEN {} || ' ' || coalesce('\"' || dg_raw_ts || '\"', '(empty)')",
            sql_string(&self.ts_label)
        );
        for (i, (column, label, raw)) in self.required.iter().enumerate() {
            raws.push(format!("{raw} AS dg_raw_{i}"));
            excluded.push(format!("dg_raw_{i}"));
            problem.push_str(&format!(
                " WHEN {column} IS NULL THEN {} || ' \"' || coalesce(dg_raw_{i}, '') || '\"'",
                sql_string(label)
            ));
        }
        problem.push_str(" END");
        Stage {
            kind: self.kind,
            select: format!(
                "SELECT * EXCLUDE ({}), {problem} AS problem FROM (SELECT {} AS ts, {}, {} FROM {} WHERE {})",
                excluded.join(", "),
                self.ts,
                self.columns.join(", "),
                raws.join(", "),
                self.raw.table,
                self.filter
            ),
        }
    }
}

/// `'text' AS source` and the device column.
fn provenance(format: Format, device_sql: &str) -> [String; 2] {
    [
        format!("coalesce(dg_text({device_sql}), 'unknown') AS device"),
        format!("{} AS source", sql_string(format.label())),
    ]
}

/// The plan for `file`, recognised as `format` (not [`Format::GenericCsv`]).
pub fn plan(ctx: &Ctx<'_>, format: Format, file: &Path) -> Result<Plan, String> {
    match format {
        Format::Clarity => clarity(ctx, file),
        Format::LibreView => libreview(ctx, file),
        Format::TConnect => tconnect(ctx, file),
        Format::CareLink => carelink(ctx, file),
        Format::NightscoutEntries => nightscout_entries(ctx, file),
        Format::NightscoutTreatments => nightscout_treatments(ctx, file),
        Format::AppleHealth => apple_health(ctx, file),
        Format::GenericCsv => Err("a generic CSV has no vendor plan".into()),
    }
}

fn read_text(file: &Path) -> Result<String, String> {
    std::fs::read(file)
        .map(|bytes| sections::text_of(&bytes))
        .map_err(|e| format!("cannot read it: {e}"))
}

/// Dexcom Clarity: one table whose first rows are the patient's first and last name and date
/// of birth, then the device and alert settings, then the events (`EGV` readings, calibrations,
/// insulin, carbs, exercise, health). Glucose is a number or `Low` (below 40 mg/dL) or `High`
/// (above 400).
fn clarity(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::Clarity;
    let text = read_text(file)?;
    let section = sections::single(&text, |l| {
        l.contains("Timestamp (YYYY-MM-DDThh:mm:ss)") && l.contains("Event Type")
    })
    .ok_or("no Clarity header row")?;
    let raw = ctx.load_section(&section)?;
    let (ts_col, ts_name) = raw
        .find(|c| c.starts_with("Timestamp"))
        .ok_or("a Clarity export without its Timestamp column")?;
    let event = raw.need("Event Type", F)?;
    let subtype = raw.named("Event Subtype").unwrap_or("NULL".into());
    let (glucose, glucose_name) = raw
        .find(|c| c.starts_with("Glucose Value"))
        .ok_or("a Clarity export without its Glucose Value column")?;
    let unit = Unit::of_column(&glucose_name);
    let source_device = raw.named("Source Device ID").unwrap_or("NULL".into());
    let model = format!("regexp_extract({source_device}, '(G[4-7]|ONE\\+?|Stelo)', 1)");
    let device = format!("CASE WHEN {model} <> '' THEN 'Dexcom ' || {model} ELSE 'Dexcom' END");
    let timed = format!("dg_text({ts_col}) IS NOT NULL");
    let format = ctx.time_format(&raw, &ts_col, &timed)?;
    let ts = format!("try_strptime({ts_col}, {})", sql_string(format));
    let base = |kind, filter: String, columns: Vec<String>, required| Spec {
        kind,
        raw: &raw,
        filter,
        ts_raw: ts_col.clone(),
        ts_label: ts_name.clone(),
        ts: ts.clone(),
        columns,
        required,
    };
    let with_provenance = |mut columns: Vec<String>| {
        columns.extend(provenance(F, &device));
        columns
    };
    let mut stages = vec![
        base(
            Kind::Cgm,
            format!("{event} = 'EGV' AND {timed}"),
            with_provenance(vec![glucose_columns(&glucose, &unit.sql(), 40, 400)]),
            vec![("glucose_mg_dl", glucose_name.clone(), glucose.clone())],
        )
        .stage(),
        base(
            Kind::Checks,
            format!("{event} IN ('Calibration', 'SMBG') AND {timed}"),
            with_provenance(vec![
                glucose_columns(&glucose, &unit.sql(), 40, 400),
                "'calibration' AS method".into(),
            ]),
            vec![("glucose_mg_dl", glucose_name.clone(), glucose.clone())],
        )
        .stage(),
    ];
    if let Some((insulin, insulin_name)) = raw.find(|c| c.starts_with("Insulin Value")) {
        stages.push(
            base(
                Kind::Boluses,
                format!(
                    "{event} = 'Insulin' AND coalesce({subtype}, '') NOT ILIKE 'Long%' AND {timed}"
                ),
                with_provenance(vec![
                    format!("dg_num({insulin}) AS units"),
                    format!("coalesce(dg_text({subtype}), 'Insulin') AS bolus_type"),
                    "CAST(NULL AS DOUBLE) AS duration_minutes".into(),
                ]),
                vec![("units", insulin_name.clone(), insulin.clone())],
            )
            .stage(),
        );
        stages.push(
            base(
                Kind::LongActing,
                format!(
                    "{event} = 'Insulin' AND coalesce({subtype}, '') ILIKE 'Long%' AND {timed}"
                ),
                with_provenance(vec![format!("dg_num({insulin}) AS units")]),
                vec![("units", insulin_name, insulin.clone())],
            )
            .stage(),
        );
    }
    if let Some((carbs, carbs_name)) = raw.find(|c| c.starts_with("Carb Value")) {
        stages.push(
            base(
                Kind::Carbs,
                format!("{event} = 'Carbs' AND {timed}"),
                with_provenance(vec![format!("dg_num({carbs}) AS grams")]),
                vec![("grams", carbs_name, carbs)],
            )
            .stage(),
        );
    }
    let duration = raw.named("Duration (hh:mm:ss)").unwrap_or("NULL".into());
    stages.push(
        base(
            Kind::Events,
            format!(
                "{event} NOT IN ('EGV', 'Calibration', 'SMBG', 'Insulin', 'Carbs', 'FirstName', \
                 'LastName', 'DateOfBirth', 'Device', 'Alert') AND {timed}"
            ),
            with_provenance(vec![
                format!("{event} || coalesce(': ' || dg_text({subtype}), '') AS event"),
                format!("CASE WHEN dg_text({duration}) IS NOT NULL THEN 'duration ' || trim({duration}) END AS detail"),
            ]),
            vec![],
        )
        .stage(),
    );
    Ok(Plan {
        unit: Some(unit),
        stages,
        left_out: vec![
            "the patient's name and date of birth (the FirstName, LastName and DateOfBirth rows)"
                .into(),
            "serial numbers (Transmitter ID) and the device and alert settings rows".into(),
        ],
        raw_tables: vec![raw.table.clone()],
    })
}

/// LibreView: a first line naming who generated the report (the patient's name), then one
/// table. `Record Type` 0 is the sensor's 15-minute history, 1 a scan, 2 a strip reading, 4
/// insulin, 5 food, 6 a note. Times are the reader's local time in the locale's order
/// (`11-12-2026 20:30` in the US). Glucose is in the unit the column names, with LO/HI beyond
/// 40 and 500 mg/dL.
fn libreview(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::LibreView;
    let text = read_text(file)?;
    let section = sections::single(&text, |l| {
        l.contains("Device Timestamp") && l.contains("Record Type")
    })
    .ok_or("no LibreView header row")?;
    let raw = ctx.load_section(&section)?;
    let ts_col = raw.need("Device Timestamp", F)?;
    let record = raw.need("Record Type", F)?;
    let device = raw
        .named("Device")
        .map(|d| format!("CASE WHEN {d} ILIKE '%libre%' THEN trim({d}) ELSE 'FreeStyle Libre' END"))
        .unwrap_or("'FreeStyle Libre'".into());
    let timed = format!("dg_text({ts_col}) IS NOT NULL");
    let format = ctx.time_format(&raw, &ts_col, &timed)?;
    let ts = format!("try_strptime({ts_col}, {})", sql_string(format));
    let base = |kind, filter: String, mut columns: Vec<String>, required| {
        columns.extend(provenance(F, &device));
        Spec {
            kind,
            raw: &raw,
            filter: format!("({filter}) AND {timed}"),
            ts_raw: ts_col.clone(),
            ts_label: "Device Timestamp".into(),
            ts: ts.clone(),
            columns,
            required,
        }
        .stage()
    };
    let mut stages = Vec::new();
    let mut unit = None;
    let glucose_kinds = [
        ("Historic Glucose", "0", None),
        ("Scan Glucose", "1", Some("sensor scan")),
        ("Strip Glucose", "2", Some("fingerstick")),
    ];
    for (prefix, record_type, method) in glucose_kinds {
        let Some((column, name)) = raw.find(|c| c.starts_with(prefix)) else {
            continue;
        };
        let column_unit = Unit::of_column(&name);
        unit.get_or_insert(column_unit);
        let mut columns = vec![glucose_columns(&column, &column_unit.sql(), 40, 500)];
        let kind = match method {
            None => Kind::Cgm,
            Some(method) => {
                columns.push(format!("{} AS method", sql_string(method)));
                Kind::Checks
            }
        };
        stages.push(base(
            kind,
            format!("trim({record}) = '{record_type}' AND dg_text({column}) IS NOT NULL"),
            columns,
            vec![("glucose_mg_dl", name, column)],
        ));
    }
    if let Some((rapid, name)) = raw.find(|c| c.starts_with("Rapid-Acting Insulin")) {
        stages.push(base(
            Kind::Boluses,
            format!("dg_text({rapid}) IS NOT NULL"),
            vec![
                format!("dg_num({rapid}) AS units"),
                "'rapid-acting' AS bolus_type".into(),
                "CAST(NULL AS DOUBLE) AS duration_minutes".into(),
            ],
            vec![("units", name, rapid)],
        ));
    }
    if let Some((long, name)) = raw.find(|c| c.starts_with("Long-Acting Insulin")) {
        stages.push(base(
            Kind::LongActing,
            format!("dg_text({long}) IS NOT NULL"),
            vec![format!("dg_num({long}) AS units")],
            vec![("units", name, long)],
        ));
    }
    if let Some((carbs, name)) = raw.find(|c| c == "Carbohydrates (grams)") {
        stages.push(base(
            Kind::Carbs,
            format!("dg_text({carbs}) IS NOT NULL"),
            vec![format!("dg_num({carbs}) AS grams")],
            vec![("grams", name, carbs)],
        ));
    }
    if let Some(notes) = raw.named("Notes") {
        stages.push(base(
            Kind::Events,
            format!("dg_text({notes}) IS NOT NULL"),
            vec!["'note' AS event".into(), format!("trim({notes}) AS detail")],
            vec![],
        ));
    }
    Ok(Plan {
        unit,
        stages,
        left_out: vec![
            "the line above the header (it names who generated the report)".into(),
            "serial numbers (Serial Number)".into(),
        ],
        raw_tables: vec![raw.table.clone()],
    })
}

/// Tandem t:connect: a few lines about the patient (name, date of birth), then sections each
/// with its own header row (readings, insulin on board, basal, boluses), separated by blank
/// lines; every data row ends with a comma. A download may also come as one section per file.
fn tconnect(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::TConnect;
    let text = read_text(file)?;
    let found = sections::tconnect(&text);
    if found.is_empty() {
        return Err("no t:connect section header found".into());
    }
    let mut plan = Plan {
        unit: None,
        stages: Vec::new(),
        left_out: vec![
            "the patient's name and date of birth (the lines above the first section)".into(),
            "serial numbers (SerialNumber)".into(),
        ],
        raw_tables: Vec::new(),
    };
    for section in found.iter().filter(|s| !s.rows.is_empty()) {
        if section.kind == TConnectSection::InsulinOnBoard {
            plan.left_out
                .push("insulin on board (the pump's own estimate, derived from boluses)".into());
            continue;
        }
        let raw = ctx.load_section(section)?;
        plan.raw_tables.push(raw.table.clone());
        let device = raw
            .named("DeviceType")
            .unwrap_or("'t:slim X2 Insulin Pump'".into());
        let event_time = raw.need("EventDateTime", F)?;
        match section.kind {
            TConnectSection::Readings => {
                let reading = raw.need("Readings (CGM / BGM)", F)?;
                let description = raw.need("Description", F)?;
                let timed = format!("dg_text({event_time}) IS NOT NULL");
                let format = ctx.time_format(&raw, &event_time, &timed)?;
                plan.unit = Some(Unit::MgDl);
                for (kind, filter, method) in [
                    (Kind::Cgm, "EGV", None),
                    (Kind::Checks, "BG", Some("fingerstick")),
                ] {
                    let mut columns = vec![glucose_columns(&reading, &Unit::MgDl.sql(), 40, 400)];
                    if let Some(method) = method {
                        columns.push(format!("{} AS method", sql_string(method)));
                    }
                    columns.extend(provenance(F, &device));
                    plan.stages.push(
                        Spec {
                            kind,
                            raw: &raw,
                            filter: format!("trim({description}) = '{filter}' AND {timed}"),
                            ts_raw: event_time.clone(),
                            ts_label: "EventDateTime".into(),
                            ts: format!("try_strptime({event_time}, {})", sql_string(format)),
                            columns,
                            required: vec![(
                                "glucose_mg_dl",
                                "Readings (CGM / BGM)".into(),
                                reading.clone(),
                            )],
                        }
                        .stage(),
                    );
                }
            }
            TConnectSection::Boluses => {
                let delivered = raw.need("InsulinDelivered", F)?;
                let completion = raw.named("CompletionDateTime").unwrap_or("NULL".into());
                let request = raw.named("RequestDateTime").unwrap_or("NULL".into());
                let when = format!("coalesce(dg_text({completion}), dg_text({event_time}))");
                let asked = format!("coalesce(dg_text({request}), dg_text({event_time}))");
                let format = ctx.time_format(&raw, &when, "true")?;
                let description = raw.named("Description").unwrap_or("NULL".into());
                let duration = raw.named("Duration").unwrap_or("NULL".into());
                let mut columns = vec![
                    format!("dg_num({delivered}) AS units"),
                    format!("dg_text({description}) AS bolus_type"),
                    format!("dg_num({duration}) AS duration_minutes"),
                ];
                columns.extend(provenance(F, &device));
                plan.stages.push(
                    Spec {
                        kind: Kind::Boluses,
                        raw: &raw,
                        filter: format!("{when} IS NOT NULL AND dg_text({delivered}) IS NOT NULL"),
                        ts_raw: when.clone(),
                        ts_label: "CompletionDateTime".into(),
                        ts: format!("try_strptime({when}, {})", sql_string(format)),
                        columns,
                        required: vec![("units", "InsulinDelivered".into(), delivered.clone())],
                    }
                    .stage(),
                );
                if let Some(carbs) = raw.named("CarbSize") {
                    let mut columns = vec![format!("dg_num({carbs}) AS grams")];
                    columns.extend(provenance(F, &device));
                    plan.stages.push(
                        Spec {
                            kind: Kind::Carbs,
                            raw: &raw,
                            filter: format!("{asked} IS NOT NULL AND dg_num({carbs}) > 0"),
                            ts_raw: asked.clone(),
                            ts_label: "RequestDateTime".into(),
                            ts: format!("try_strptime({asked}, {})", sql_string(format)),
                            columns,
                            required: vec![],
                        }
                        .stage(),
                    );
                }
            }
            TConnectSection::Basal => {
                let rate = raw.need("BasalRate", F)?;
                let timed = format!("dg_text({event_time}) IS NOT NULL");
                let format = ctx.time_format(&raw, &event_time, &timed)?;
                let kind_col = raw.named("Type").unwrap_or("NULL".into());
                let mut columns = vec![
                    format!("dg_num({rate}) AS rate_u_per_h"),
                    "CAST(NULL AS DOUBLE) AS duration_minutes".into(),
                    format!("coalesce(dg_text({kind_col}), 'Basal') AS basal_type"),
                ];
                columns.extend(provenance(F, &device));
                plan.stages.push(
                    Spec {
                        kind: Kind::Basal,
                        raw: &raw,
                        filter: format!("{timed} AND dg_text({rate}) IS NOT NULL"),
                        ts_raw: event_time.clone(),
                        ts_label: "EventDateTime".into(),
                        ts: format!("try_strptime({event_time}, {})", sql_string(format)),
                        columns,
                        required: vec![("rate_u_per_h", "BasalRate".into(), rate.clone())],
                    }
                    .stage(),
                );
            }
            TConnectSection::InsulinOnBoard => {}
        }
    }
    Ok(plan)
}

/// Medtronic CareLink: a preamble (last and first name, patient ID, date of birth, the pump's
/// serial number), then per device a marker row (`-------;MiniMed 780G MMT-1886;Pump;NG…;
/// -------`) and a table with one wide header (`Index;Date;Time;…;Sensor Glucose (mg/dL);…`),
/// semicolon-separated with decimal commas in many locales. Dates follow the locale.
fn carelink(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::CareLink;
    let text = read_text(file)?;
    let found = sections::carelink(&text);
    if found.is_empty() {
        return Err("no CareLink data header (Index;Date;Time;…) found".into());
    }
    let mut plan = Plan {
        unit: None,
        stages: Vec::new(),
        left_out: vec![
            "the preamble: name, patient ID, date of birth and the devices' serial numbers".into(),
            "ISIG values and bolus wizard settings".into(),
        ],
        raw_tables: Vec::new(),
    };
    for section in found.iter().filter(|s| !s.rows.is_empty()) {
        let raw = ctx.load_section(section)?;
        plan.raw_tables.push(raw.table.clone());
        let device = match &section.device {
            Some((model, _)) => sql_string(model),
            None => "'Medtronic'".into(),
        };
        let date = raw.need("Date", F)?;
        let time = raw.need("Time", F)?;
        let when = format!("dg_text(trim({date}) || ' ' || trim({time}))");
        let timed = format!("dg_text({date}) IS NOT NULL AND dg_text({time}) IS NOT NULL");
        let format = ctx.time_format(&raw, &when, &timed)?;
        let ts = format!("try_strptime({when}, {})", sql_string(format));
        let spec = |kind, filter: String, mut columns: Vec<String>, required| {
            columns.extend(provenance(F, &device));
            Spec {
                kind,
                raw: &raw,
                filter: format!("{timed} AND ({filter})"),
                ts_raw: when.clone(),
                ts_label: "Date and Time".into(),
                ts: ts.clone(),
                columns,
                required,
            }
            .stage()
        };
        let glucose_kinds = [
            ("Sensor Glucose (", None),
            ("BG Reading (", Some("fingerstick")),
            ("Sensor Calibration BG (", Some("calibration")),
        ];
        for (prefix, method) in glucose_kinds {
            let Some((column, name)) = raw.find(|c| c.starts_with(prefix)) else {
                continue;
            };
            let column_unit = Unit::of_column(&name);
            plan.unit.get_or_insert(column_unit);
            let mut columns = vec![glucose_columns(&column, &column_unit.sql(), 40, 400)];
            let kind = match method {
                None => Kind::Cgm,
                Some(method) => {
                    columns.push(format!("{} AS method", sql_string(method)));
                    Kind::Checks
                }
            };
            plan.stages.push(spec(
                kind,
                format!("dg_text({column}) IS NOT NULL"),
                columns,
                vec![("glucose_mg_dl", name, column)],
            ));
        }
        if let Some(delivered) = raw.named("Bolus Volume Delivered (U)") {
            let bolus_type = raw.named("Bolus Type").unwrap_or("NULL".into());
            let bolus_source = raw.named("Bolus Source").unwrap_or("NULL".into());
            let duration = raw
                .named("Bolus Duration (h:mm:ss)")
                .unwrap_or("NULL".into());
            plan.stages.push(spec(
                Kind::Boluses,
                format!("dg_text({delivered}) IS NOT NULL"),
                vec![
                    format!("dg_num({delivered}) AS units"),
                    format!(
                        "concat_ws(' ', dg_text({bolus_type}), '(' || dg_text({bolus_source}) || ')') AS bolus_type"
                    ),
                    format!("dg_minutes({duration}) AS duration_minutes"),
                ],
                vec![(
                    "units",
                    "Bolus Volume Delivered (U)".into(),
                    delivered.clone(),
                )],
            ));
        }
        if let Some(rate) = raw.named("Basal Rate (U/h)") {
            plan.stages.push(spec(
                Kind::Basal,
                format!("dg_text({rate}) IS NOT NULL"),
                vec![
                    format!("dg_num({rate}) AS rate_u_per_h"),
                    "CAST(NULL AS DOUBLE) AS duration_minutes".into(),
                    "'scheduled' AS basal_type".into(),
                ],
                vec![("rate_u_per_h", "Basal Rate (U/h)".into(), rate.clone())],
            ));
        }
        if let Some(amount) = raw.named("Temp Basal Amount") {
            let temp_type = raw.named("Temp Basal Type").unwrap_or("NULL".into());
            let duration = raw
                .named("Temp Basal Duration (h:mm:ss)")
                .unwrap_or("NULL".into());
            plan.stages.push(spec(
                Kind::Basal,
                format!("dg_text({amount}) IS NOT NULL"),
                vec![
                    format!(
                        "CASE WHEN {temp_type} ILIKE '%percent%' THEN NULL ELSE dg_num({amount}) END AS rate_u_per_h"
                    ),
                    format!("dg_minutes({duration}) AS duration_minutes"),
                    format!(
                        "'temp' || coalesce(' ' || dg_text({temp_type}), '') || CASE WHEN {temp_type} ILIKE '%percent%' THEN ' ' || trim({amount}) || '%' ELSE '' END AS basal_type"
                    ),
                ],
                vec![],
            ));
        }
        if let Some(carbs) = raw.named("BWZ Carb Input (grams)") {
            plan.stages.push(spec(
                Kind::Carbs,
                format!("dg_num({carbs}) > 0"),
                vec![format!("dg_num({carbs}) AS grams")],
                vec![],
            ));
        }
        for event in ["Alarm", "Suspend", "Rewind", "Prime Type", "Event Marker"] {
            if let Some(column) = raw.named(event) {
                plan.stages.push(spec(
                    Kind::Events,
                    format!("dg_text({column}) IS NOT NULL"),
                    vec![
                        format!("{} AS event", sql_string(event)),
                        format!("trim({column}) AS detail"),
                    ],
                    vec![],
                ));
            }
        }
    }
    Ok(plan)
}

/// A Nightscout record's local time: its `utcOffset` (minutes) when it has one, else the
/// wall-clock part of a date string written with an offset, else the UTC instant (epoch
/// milliseconds or an ISO string) in the import's zone.
fn nightscout_time(epoch: &str, text: &str, offset: &str, zone: &str) -> String {
    let utc = format!(
        "CASE WHEN dg_num({epoch}) IS NOT NULL THEN epoch_ms(CAST(dg_num({epoch}) AS BIGINT)) \
         ELSE CAST(timezone('UTC', TRY_CAST({text} AS TIMESTAMPTZ)) AS TIMESTAMP) END"
    );
    format!(
        "CASE WHEN TRY_CAST({offset} AS INTEGER) IS NOT NULL \
              THEN ({utc}) + to_minutes(TRY_CAST({offset} AS INTEGER)) \
         WHEN regexp_matches({text}, '[+-][0-9][0-9]:?[0-9][0-9]$') \
              THEN try_strptime(substr({text}, 1, 19), '%Y-%m-%dT%H:%M:%S') \
         ELSE timezone({}, timezone('UTC', ({utc}))) END",
        sql_string(zone)
    )
}

/// A Nightscout `device` as a device kind: the uploader's free text (`xDrip-DexcomG6`,
/// `loop://Jane's iPhone`) can carry a person's name, so only a known sensor family is kept.
fn nightscout_device(device: &str) -> String {
    format!(
        "CASE WHEN {device} ILIKE '%g7%' THEN 'Dexcom G7' WHEN {device} ILIKE '%g6%' THEN 'Dexcom G6' \
         WHEN {device} ILIKE '%dexcom%' OR {device} ILIKE '%share%' THEN 'Dexcom' \
         WHEN {device} ILIKE '%libre%' THEN 'FreeStyle Libre' \
         WHEN {device} ILIKE '%medtronic%' OR {device} ILIKE '%minimed%' THEN 'Medtronic' \
         ELSE 'CGM (via Nightscout)' END"
    )
}

/// Nightscout `entries`: `sgv` readings in mg/dL (Nightscout stores mg/dL whatever it shows),
/// `mbg` finger sticks. Below 39 an `sgv` is a sensor error code, not glucose; 39 is how
/// Dexcom's uploaders send `Low`, above 400 how they send `High`.
fn nightscout_entries(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::NightscoutEntries;
    let raw = ctx.load_json(
        file,
        &[
            "type",
            "sgv",
            "mbg",
            "date",
            "dateString",
            "device",
            "utcOffset",
        ],
    )?;
    let ts = nightscout_time("\"date\"", "\"dateString\"", "\"utcOffset\"", ctx.time_zone);
    let device = nightscout_device("device");
    let ts_raw = "coalesce(\"dateString\", \"date\")".to_string();
    let dexcom = format!("({device}) LIKE 'Dexcom%'");
    let sgv_columns = format!(
        "CASE WHEN dg_num(sgv) >= 39 THEN CAST(round(dg_num(sgv)) AS INTEGER) END AS glucose_mg_dl, \
         CASE WHEN dg_num(sgv) = 39 AND {dexcom} THEN 'low' WHEN dg_num(sgv) > 400 AND {dexcom} THEN 'high' END AS out_of_range, \
         dg_num(sgv) AS source_value, 'mg/dL' AS source_unit"
    );
    let mut cgm_columns = vec![sgv_columns];
    cgm_columns.extend(provenance(F, &device));
    let mut check_columns = vec![
        glucose_columns("mbg", "'mg/dL'", 20, 600),
        "'fingerstick' AS method".into(),
    ];
    check_columns.extend(provenance(F, &device));
    let stages = vec![
        Spec {
            kind: Kind::Cgm,
            raw: &raw,
            filter: "coalesce(\"type\", 'sgv') = 'sgv' AND sgv IS NOT NULL".into(),
            ts_raw: ts_raw.clone(),
            ts_label: "date".into(),
            ts: ts.clone(),
            columns: cgm_columns,
            required: vec![(
                "glucose_mg_dl",
                "sgv (below 39: a sensor error code)".into(),
                "sgv".into(),
            )],
        }
        .stage(),
        Spec {
            kind: Kind::Checks,
            raw: &raw,
            filter: "\"type\" = 'mbg' AND mbg IS NOT NULL".into(),
            ts_raw,
            ts_label: "date".into(),
            ts,
            columns: check_columns,
            required: vec![("glucose_mg_dl", "mbg".into(), "mbg".into())],
        }
        .stage(),
    ];
    Ok(Plan {
        unit: Some(Unit::MgDl),
        stages,
        left_out: vec![
            "uploader and phone names in `device` (only the sensor family is kept)".into(),
            "raw sensor values (filtered, unfiltered, noise, rssi) and calibration records".into(),
        ],
        raw_tables: vec![raw.table.clone()],
    })
}

/// Nightscout `treatments`: each with an `eventType` and what it carries (`insulin`, `carbs`,
/// a temp basal's `absolute` rate and `duration`, a BG check's `glucose` in `units`), its time
/// in `created_at`. `enteredBy` (who entered it) is never read.
fn nightscout_treatments(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::NightscoutTreatments;
    let raw = ctx.load_json(
        file,
        &[
            "eventType",
            "created_at",
            "timestamp",
            "utcOffset",
            "insulin",
            "carbs",
            "duration",
            "absolute",
            "rate",
            "glucose",
            "units",
            "notes",
        ],
    )?;
    let text_time = "coalesce(created_at, \"timestamp\")";
    let ts = nightscout_time("\"timestamp\"", text_time, "\"utcOffset\"", ctx.time_zone);
    let device = "'Nightscout'";
    let event = "\"eventType\"";
    let spec = |kind, filter: String, mut columns: Vec<String>, required| {
        columns.extend(provenance(F, device));
        Spec {
            kind,
            raw: &raw,
            filter,
            ts_raw: text_time.into(),
            ts_label: "created_at".into(),
            ts: ts.clone(),
            columns,
            required,
        }
        .stage()
    };
    let unit = "CASE WHEN units ILIKE 'mmol%' THEN 'mmol/L' ELSE 'mg/dL' END";
    let stages = vec![
        spec(
            Kind::Boluses,
            "dg_num(insulin) > 0".into(),
            vec![
                "dg_num(insulin) AS units".into(),
                format!("coalesce({event}, 'Bolus') AS bolus_type"),
                format!(
                    "CASE WHEN {event} = 'Combo Bolus' THEN dg_num(duration) END AS duration_minutes"
                ),
            ],
            vec![],
        ),
        spec(
            Kind::Carbs,
            "dg_num(carbs) > 0".into(),
            vec!["dg_num(carbs) AS grams".into()],
            vec![],
        ),
        spec(
            Kind::Basal,
            format!("{event} = 'Temp Basal'"),
            vec![
                "coalesce(dg_num(absolute), dg_num(rate)) AS rate_u_per_h".into(),
                "dg_num(duration) AS duration_minutes".into(),
                "'temp' AS basal_type".into(),
            ],
            vec![],
        ),
        spec(
            Kind::Checks,
            format!("{event} = 'BG Check' AND dg_text(glucose) IS NOT NULL"),
            vec![
                glucose_columns("glucose", unit, 20, 600),
                "'fingerstick' AS method".into(),
            ],
            vec![("glucose_mg_dl", "glucose".into(), "glucose".into())],
        ),
        spec(
            Kind::Events,
            format!(
                "{event} IS NOT NULL AND {event} NOT IN ('Temp Basal', 'BG Check') \
                 AND coalesce(dg_num(insulin), 0) = 0 AND coalesce(dg_num(carbs), 0) = 0"
            ),
            vec![
                format!("{event} AS event"),
                "dg_text(notes) AS detail".into(),
            ],
            vec![],
        ),
    ];
    Ok(Plan {
        unit: None,
        stages,
        left_out: vec!["enteredBy (who entered each treatment)".into()],
        raw_tables: vec![raw.table.clone()],
    })
}

/// Apple Health: the records [`apple::extract`] keeps. Times are written with the device's
/// offset (`2026-11-01 08:00:00 +0100`); the wall-clock part is the device's local time. A
/// glucose record from a CGM maker's app is a CGM reading, any other a meter reading.
/// Insulin's `HKInsulinDeliveryReason` is 1 for basal, 2 for bolus.
fn apple_health(ctx: &Ctx<'_>, file: &Path) -> Result<Plan, String> {
    const F: Format = Format::AppleHealth;
    let csv = ctx.scratch.path("csv");
    let found = apple::extract(file, &csv).map_err(|e| format!("cannot read it: {e}"))?;
    if found.records == 0 {
        return Err(format!(
            "no blood glucose, insulin or carbohydrate records among its {} records",
            found.other_records
        ));
    }
    let raw = ctx.load_csv(&csv, ',', None)?;
    let ts = "try_strptime(substr(start, 1, 19), '%Y-%m-%d %H:%M:%S')".to_string();
    let end = "try_strptime(substr(\"end\", 1, 19), '%Y-%m-%d %H:%M:%S')";
    let device = "coalesce(dg_text(device), 'Apple Health')";
    let maker = "coalesce(device, '')";
    let cgm_maker = format!(
        "({maker} ILIKE '%dexcom%' OR {maker} ILIKE '%abbott%' OR {maker} ILIKE '%libre%' \
         OR {maker} ILIKE '%medtronic%' OR {maker} ILIKE '%guardian%' OR {maker} ILIKE '%eversense%')"
    );
    let unit = "CASE WHEN unit ILIKE 'mmol%' THEN 'mmol/L' ELSE 'mg/dL' END";
    let spec = |kind, filter: String, mut columns: Vec<String>, required| {
        columns.extend(provenance(F, device));
        Spec {
            kind,
            raw: &raw,
            filter,
            ts_raw: "start".into(),
            ts_label: "startDate".into(),
            ts: ts.clone(),
            columns,
            required,
        }
        .stage()
    };
    let glucose = "\"type\" = 'HKQuantityTypeIdentifierBloodGlucose'";
    let insulin = "\"type\" = 'HKQuantityTypeIdentifierInsulinDelivery'";
    let span = format!("date_diff('second', {ts}, {end}) / 60.0");
    let stages = vec![
        spec(
            Kind::Cgm,
            format!("{glucose} AND {cgm_maker}"),
            vec![glucose_columns("value", unit, 40, 400)],
            vec![("glucose_mg_dl", "value".into(), "value".into())],
        ),
        spec(
            Kind::Checks,
            format!("{glucose} AND NOT {cgm_maker}"),
            vec![
                glucose_columns("value", unit, 20, 600),
                "'fingerstick' AS method".into(),
            ],
            vec![("glucose_mg_dl", "value".into(), "value".into())],
        ),
        spec(
            Kind::Boluses,
            format!("{insulin} AND coalesce(trim(insulin_reason), '') <> '1'"),
            vec![
                "dg_num(value) AS units".into(),
                "'bolus' AS bolus_type".into(),
                format!("nullif({span}, 0) AS duration_minutes"),
            ],
            vec![("units", "value".into(), "value".into())],
        ),
        spec(
            Kind::Basal,
            format!("{insulin} AND trim(insulin_reason) = '1' AND {span} > 0"),
            vec![
                format!("dg_num(value) / ({span} / 60) AS rate_u_per_h"),
                format!("{span} AS duration_minutes"),
                "'delivered' AS basal_type".into(),
            ],
            vec![("rate_u_per_h", "value".into(), "value".into())],
        ),
        spec(
            Kind::LongActing,
            format!("{insulin} AND trim(insulin_reason) = '1' AND coalesce({span}, 0) = 0"),
            vec!["dg_num(value) AS units".into()],
            vec![("units", "value".into(), "value".into())],
        ),
        spec(
            Kind::Carbs,
            "\"type\" = 'HKQuantityTypeIdentifierDietaryCarbohydrates'".into(),
            vec!["dg_num(value) AS grams".into()],
            vec![("grams", "value".into(), "value".into())],
        ),
    ];
    Ok(Plan {
        unit: None,
        stages,
        left_out: vec![
            "sourceName and device names (often the owner's name): only the manufacturer and model are kept".into(),
            "the <Me> element (date of birth, sex) and every other record type".into(),
        ],
        raw_tables: vec![raw.table.clone()],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(MACROS).unwrap();
        conn
    }

    #[test]
    fn every_one_decimal_mmol_value_keeps_its_side_of_the_consensus_cut_offs() {
        let conn = connection();
        let sql = format!(
            "SELECT x, glucose_mg_dl FROM (SELECT x, {} FROM \
             (SELECT printf('%.1f', i / 10) AS x FROM range(10, 400) t(i)))",
            glucose_columns("x", "'mmol/L'", 40, 400)
        );
        let mut statement = conn.prepare(&sql).unwrap();
        let values: Vec<(String, i32)> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(values.len(), 390);
        for (text, mg) in values {
            let mmol: f64 = text.parse().unwrap();
            for (cut_mmol, cut_mg) in [(3.0, 54), (3.9, 70), (10.0, 180), (13.9, 250)] {
                assert_eq!(mmol < cut_mmol, mg < cut_mg, "{text} mmol/L = {mg} mg/dL");
                assert_eq!(mmol > cut_mmol, mg > cut_mg, "{text} mmol/L = {mg} mg/dL");
            }
        }
    }

    #[test]
    fn a_csv_error_names_the_line_of_the_users_file_without_duckdbs_options() {
        let message = "Invalid Input Error: CSV Error on Line: 2\n\
            Original Line: \"FreeStyle Libre,1,10-24-2026 00:00,0,100\n\
            Value with unterminated quote found.\n\
            \n\
            Possible fixes:\n\
            * Disable the parser's strict mode (strict_mode=false) to allow reading rows that do not comply with the CSV standard.\n\
            * Enable ignore errors (ignore_errors=true) to skip this row\n\
            \n\
              file = /home/jane/health/.cgm.duckdb.import-7/section-0.csv\n";
        assert_eq!(
            csv_error(message, Some(2)),
            "it is not valid CSV: Value with unterminated quote found (line 3 of the file)"
        );
        assert_eq!(
            csv_error(message, None),
            "it is not valid CSV: Value with unterminated quote found (line 2)"
        );
        let sniffing = "Invalid Input Error: Error when sniffing file \"/home/jane/.cgm.duckdb.import-7/section-1.csv\".\n\
            It was not possible to automatically detect the CSV parsing dialect\n\
            The search space used was:\n\
            Delimiter Candidates: ','\n\
            Possible fixes:\n\
            * Disable the parser's strict mode (strict_mode=false)\n";
        let said = csv_error(sniffing, Some(2));
        assert!(
            said.starts_with("it is not valid CSV: no row layout fits"),
            "{said}"
        );
        assert!(
            !said.contains("import-7") && !said.contains("strict"),
            "{said}"
        );
        assert_eq!(
            csv_error(
                "IO Error: No files found that match the pattern \"x\"",
                None
            ),
            "it is not valid CSV: No files found that match the pattern \"x\""
        );
    }

    #[test]
    fn low_and_high_become_one_beyond_the_limits_with_a_flag() {
        let conn = connection();
        let sql = format!(
            "SELECT x, glucose_mg_dl, out_of_range, source_value FROM (SELECT x, {} FROM \
             (VALUES ('Low'), (' HI '), ('123'), ('7,5'), ('n/a')) t(x)) ORDER BY x",
            glucose_columns("x", "'mg/dL'", 40, 500)
        );
        let mut statement = conn.prepare(&sql).unwrap();
        /// A value as written, and its glucose, flag and source value.
        type Row = (String, Option<i32>, Option<String>, Option<f64>);
        let rows: Vec<Row> = statement
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            vec![
                (" HI ".into(), Some(501), Some("high".into()), None),
                ("123".into(), Some(123), None, Some(123.0)),
                ("7,5".into(), Some(8), None, Some(7.5)),
                ("Low".into(), Some(39), Some("low".into()), None),
                ("n/a".into(), None, None, None),
            ]
        );
    }
}
