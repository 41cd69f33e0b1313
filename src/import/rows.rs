//! The one shape every export becomes: a table per kind of record, each row a typed struct.
//!
//! Each table is declared once, below, in [`tables!`]: its row struct, its columns' names, SQL
//! types and comments, and the values a row appends all come from that one declaration, so a
//! vendor that builds a row without a column, or with a value of the wrong type, does not
//! compile, and the table DuckDB creates cannot disagree with the rows written to it.
//!
//! The conventions, stated in the columns' comments so the agent reads them:
//! - `ts` is the device's local wall-clock time as TIMESTAMP (no zone), as the device showed
//!   it; a day is the device's local day, 23 or 25 hours long across a DST change.
//! - Glucose is a whole mg/dL (mmol/L converted by `clinical::mg_dl_from_mmol_l`); the value
//!   as exported stays in `source_value` and `source_unit`.
//! - A reading beyond the sensor's range (Dexcom's `Low`/`High`, Libre's `LO`/`HI`) is stored
//!   as one below its lower limit or one above its upper limit, with `out_of_range` set.

use super::time::LocalTime;
use super::values::{Glucose, OutOfRange, Unit};

/// When a row happened: the device's local time as the export wrote it, or an instant (epoch
/// milliseconds, UTC) the import places in the person's zone (Nightscout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// The device's wall-clock time.
    Local(LocalTime),
    /// An instant, and the offset the uploader wrote beside it (only cross-checked).
    Instant {
        /// Milliseconds since the epoch, UTC.
        utc_ms: i64,
        /// The record's `utcOffset` in minutes, when it has one.
        utc_offset_minutes: Option<i32>,
    },
}

/// How a glucose value that is not a CGM reading was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// A finger stick on a meter.
    Fingerstick,
    /// A finger stick entered to calibrate the CGM.
    Calibration,
    /// A Libre sensor scanned on demand.
    SensorScan,
    /// A sensor's own reading (a Libre's ketone history).
    Sensor,
}

impl Method {
    /// As the `method` column writes it.
    pub fn label(self) -> &'static str {
        match self {
            Method::Fingerstick => "fingerstick",
            Method::Calibration => "calibration",
            Method::SensorScan => "sensor scan",
            Method::Sensor => "sensor",
        }
    }
}

/// How a dose of insulin was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered by an insulin pump, which recorded it.
    Pump,
    /// Injected with a pen or syringe and logged by the person (an app's or CGM's log entry).
    Pen,
}

impl Delivery {
    /// As the `delivery` column writes it.
    pub fn label(self) -> &'static str {
        match self {
            Delivery::Pump => "pump",
            Delivery::Pen => "pen",
        }
    }
}

/// A Rust type a column holds: its SQL type, and whether it may be NULL.
pub trait ColumnType {
    /// The column's SQL type.
    const SQL: &'static str;
    /// Whether the column takes NULL (the type is an `Option`).
    const NULLABLE: bool = false;
    /// The value DuckDB's appender writes.
    #[cfg(feature = "engine")]
    fn value(&self) -> duckdb::types::Value;
}

impl ColumnType for i32 {
    const SQL: &'static str = "INTEGER";
    #[cfg(feature = "engine")]
    fn value(&self) -> duckdb::types::Value {
        duckdb::types::Value::Int(*self)
    }
}

impl ColumnType for f64 {
    const SQL: &'static str = "DOUBLE";
    #[cfg(feature = "engine")]
    fn value(&self) -> duckdb::types::Value {
        duckdb::types::Value::Double(*self)
    }
}

impl ColumnType for String {
    const SQL: &'static str = "VARCHAR";
    #[cfg(feature = "engine")]
    fn value(&self) -> duckdb::types::Value {
        duckdb::types::Value::Text(self.clone())
    }
}

/// A column of one of a few fixed words.
macro_rules! word_column {
    ($($t:ty),*) => {$(
        impl ColumnType for $t {
            const SQL: &'static str = "VARCHAR";
            #[cfg(feature = "engine")]
            fn value(&self) -> duckdb::types::Value {
                duckdb::types::Value::Text(self.label().to_string())
            }
        }
    )*};
}
word_column!(Unit, OutOfRange, Method, Delivery);

impl<T: ColumnType> ColumnType for Option<T> {
    const SQL: &'static str = T::SQL;
    const NULLABLE: bool = true;
    #[cfg(feature = "engine")]
    fn value(&self) -> duckdb::types::Value {
        match self {
            Some(v) => v.value(),
            None => duckdb::types::Value::Null,
        }
    }
}

/// One column of a table: its name, SQL type, whether it takes NULL, and its comment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Its name.
    pub name: &'static str,
    /// Its SQL type.
    pub sql_type: &'static str,
    /// Whether it takes NULL.
    pub nullable: bool,
    /// What it holds, for the agent.
    pub comment: &'static str,
}

/// A row of one of the tables.
pub trait Row: Sized {
    /// Its table.
    const TABLE: Table;
    /// Its table's list in [`Rows`].
    fn list(rows: &mut Rows) -> &mut Vec<Self>;
}

/// A table's rows as the database writer reads them, whatever the row type.
pub trait Staged {
    /// How many.
    fn count(&self) -> usize;
    /// Row `i`'s time and device; `None` past the last row.
    fn when_and_device(&self, i: usize) -> Option<(When, &str)>;
    /// Row `i`'s values, in its table's column order (after `ts`, before `device`); `None` past
    /// the last row.
    #[cfg(feature = "engine")]
    fn values(&self, i: usize) -> Option<Vec<duckdb::types::Value>>;
}

/// Declares the tables: for each, its [`Table`] variant, row struct, field in [`Rows`], name,
/// description, and columns (between `ts` and `device`) with their Rust types and comments.
macro_rules! tables {
    ($(
        $(#[$meta:meta])*
        $variant:ident => $row:ident in $list:ident, $name:literal, $description:expr, {
            $( $(#[$field_meta:meta])* $field:ident : $ty:ty = $comment:expr ),* $(,)?
        }
    )*) => {
        /// The tables the vendor formats fill.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Table {
            $( $(#[$meta])* $variant, )*
        }

        impl Table {
            /// Every table, in the order the summary lists them.
            pub const ALL: &'static [Table] = &[ $( Table::$variant, )* ];

            /// Its name in the database.
            pub fn name(self) -> &'static str {
                match self { $( Table::$variant => $name, )* }
            }

            /// What it holds, for its comment (the sources and dates are added from the data).
            pub fn description(self) -> &'static str {
                match self { $( Table::$variant => $description, )* }
            }

            /// Its columns between `ts` and `device`.
            pub fn columns(self) -> &'static [Column] {
                match self { $( Table::$variant => $row::COLUMNS, )* }
            }
        }

        $(
            $(#[$meta])*
            #[derive(Debug, Clone, PartialEq)]
            pub struct $row {
                /// When it happened.
                pub ts: When,
                $( $(#[$field_meta])* pub $field: $ty, )*
                /// The device kind (never a serial number).
                pub device: String,
            }

            impl $row {
                /// Its columns between `ts` and `device`.
                pub const COLUMNS: &'static [Column] = &[ $(
                    Column {
                        name: stringify!($field),
                        sql_type: <$ty as ColumnType>::SQL,
                        nullable: <$ty as ColumnType>::NULLABLE,
                        comment: $comment,
                    },
                )* ];
            }

            impl Row for $row {
                const TABLE: Table = Table::$variant;
                fn list(rows: &mut Rows) -> &mut Vec<Self> {
                    &mut rows.$list
                }
            }

            impl Staged for Vec<$row> {
                fn count(&self) -> usize {
                    self.len()
                }
                fn when_and_device(&self, i: usize) -> Option<(When, &str)> {
                    self.get(i).map(|row| (row.ts, row.device.as_str()))
                }
                #[cfg(feature = "engine")]
                fn values(&self, i: usize) -> Option<Vec<duckdb::types::Value>> {
                    let row = self.get(i)?;
                    Some(vec![ $( ColumnType::value(&row.$field), )* ])
                }
            }
        )*

        /// One file's rows, a list per table.
        #[derive(Debug, Clone, Default, PartialEq)]
        pub struct Rows {
            $( #[doc = concat!("Rows of `", $name, "`.")] pub $list: Vec<$row>, )*
        }

        impl Rows {
            /// Each table's rows, in [`Table::ALL`]'s order.
            pub fn tables(&self) -> Vec<(Table, &dyn Staged)> {
                vec![ $( (Table::$variant, &self.$list as &dyn Staged), )* ]
            }
        }
    };
}

const GLUCOSE: &str = "Glucose in mg/dL, a whole number (mmol/L exports converted and rounded, \
     so each one-decimal mmol/L value keeps its side of the consensus cut-offs). A Low/High \
     reading holds one below/above the sensor's limit (see out_of_range).";
const OUT_OF_RANGE: &str = "'low' or 'high' when the device reported the reading only as below \
     or above its range (Dexcom Low/High: below 40 / above 400; Libre LO/HI: below 40 / above 500 \
     mg/dL); glucose_mg_dl then holds 39, 401 or 501. NULL for a measured value.";
const SOURCE_VALUE: &str = "The value as the export wrote it, in source_unit; NULL for Low/High.";
const SOURCE_UNIT: &str = "The export's glucose unit: 'mg/dL' or 'mmol/L'.";

tables! {
    /// The CGM's regular readings.
    Cgm => CgmReading in cgm, "cgm_readings",
        "CGM sensor glucose readings, one row per reading (every 5 minutes for Dexcom and \
         Medtronic, every 15 for a Libre's history). Low/High readings are kept as 39/401 \
         (Libre HI: 501) with out_of_range set, so glucose_mg_dl < 54 and > 250 count them.",
    {
        /// Whole mg/dL.
        glucose_mg_dl: i32 = GLUCOSE,
        /// Low or high beyond the sensor's range.
        out_of_range: Option<OutOfRange> = OUT_OF_RANGE,
        /// As written.
        source_value: Option<f64> = SOURCE_VALUE,
        /// The export's unit.
        source_unit: Unit = SOURCE_UNIT,
    }
    /// Other glucose values: finger sticks, calibrations, Libre scans.
    Checks => GlucoseCheck in checks, "glucose_checks",
        "Glucose values that are not the CGM's regular readings: finger sticks, calibrations \
         and Libre scans, in mg/dL (method says which).",
    {
        /// Whole mg/dL.
        glucose_mg_dl: i32 = GLUCOSE,
        /// Low or high beyond the meter's range.
        out_of_range: Option<OutOfRange> = OUT_OF_RANGE,
        /// As written.
        source_value: Option<f64> = SOURCE_VALUE,
        /// The export's unit.
        source_unit: Unit = SOURCE_UNIT,
        /// How it was measured.
        method: Method = "'fingerstick', 'calibration' (a finger stick entered to calibrate the \
             CGM) or 'sensor scan' (a Libre scan, beside its 15-minute history in cgm_readings).",
    }
    /// Rapid-acting insulin: pump boluses and pen doses.
    Boluses => InsulinBolus in boluses, "insulin_boluses",
        "Rapid-acting insulin: pump boluses and pen doses, in units (delivery says which).",
    {
        /// Units delivered.
        units: f64 = "Insulin units delivered.",
        /// The kind, as the device names it.
        bolus_type: Option<String> = "The bolus kind as the device names it (e.g. Normal, \
             Square, Standard/Correction, Meal Bolus, rapid-acting, Insulin (event marker)).",
        /// Minutes of an extended bolus.
        duration_minutes: Option<f64> = "Minutes over which an extended (square) bolus was \
             delivered; NULL or 0 for a normal one.",
        /// Pump or pen.
        delivery: Option<Delivery> = "'pump' for a dose an insulin pump delivered and \
             recorded; 'pen' for a dose injected with a pen or syringe and logged by hand (in a \
             CGM's or app's log: a CareLink event marker, a Clarity or LibreView insulin entry); \
             NULL when the export does not say.",
    }
    /// Pump basal rates.
    Basal => BasalRate in basal, "basal",
        "Pump basal insulin: scheduled and temporary rates in units per hour.",
    {
        /// Units per hour.
        rate_u_per_h: Option<f64> = "Basal rate in units per hour from ts on; NULL for a \
             temporary basal given only as a percent.",
        /// Minutes of a temporary basal.
        duration_minutes: Option<f64> = "Minutes a temporary basal was set for; NULL for a \
             scheduled rate (it lasts until the next row).",
        /// Scheduled, temp or delivered.
        basal_type: Option<String> = "scheduled, temp (with the device's temp type) or \
             delivered (Apple Health: units delivered over a span).",
    }
    /// Long-acting insulin doses (injections).
    LongActing => LongActingDose in long_acting, "long_acting_insulin",
        "Long-acting (basal) insulin injections, in units.",
    {
        /// Units injected.
        units: f64 = "Units of long-acting (basal) insulin injected.",
    }
    /// Carbohydrates entered.
    Carbs => CarbEntry in carbs, "carbs",
        "Carbohydrates entered on the pump, app or meter, or logged as a meal marker, in grams.",
    {
        /// Grams.
        grams: f64 = "Carbohydrates in grams.",
    }
    /// Blood or sensor ketones.
    Ketones => KetoneReading in ketones, "ketones",
        "Ketone (beta-hydroxybutyrate) readings in mmol/L: strip measurements on a meter and a \
         sensor's own ketone readings.",
    {
        /// mmol/L.
        mmol_l: f64 = "Ketones in mmol/L.",
        /// Strip or sensor.
        method: Method = "'fingerstick' (a ketone strip), 'sensor scan' or 'sensor' (a \
             sensor's ketone reading).",
    }
    /// Everything else with a time: alarms, site and sensor changes, notes, exercise.
    Events => DeviceEvent in events, "device_events",
        "Device events with a time: alarms, suspends, site and sensor changes, exercise, \
         notes.",
    {
        /// What happened.
        event: String = "What happened, as the device names it (alarm, suspend, rewind, site \
             change, exercise, note, ...).",
        /// The device's detail.
        detail: Option<String> = "The device's detail for it (an alarm's text, a note as the \
             user wrote it).",
        /// Minutes it lasted.
        duration_minutes: Option<f64> = "Minutes it lasted (exercise), when the export says.",
    }
}

impl Rows {
    /// Add a row to its table's list.
    pub fn push<R: Row>(&mut self, row: R) {
        R::list(self).push(row);
    }

    /// How many rows `table` has.
    pub fn count(&self, table: Table) -> usize {
        self.tables()
            .into_iter()
            .find(|(t, _)| *t == table)
            .map_or(0, |(_, rows)| rows.count())
    }

    /// Whether no table has a row.
    pub fn is_empty(&self) -> bool {
        self.tables().iter().all(|(_, rows)| rows.count() == 0)
    }
}

impl CgmReading {
    /// A CGM reading of `glucose`.
    pub fn of(ts: When, glucose: Glucose, device: &str) -> CgmReading {
        CgmReading {
            ts,
            glucose_mg_dl: glucose.mg_dl,
            out_of_range: glucose.out_of_range,
            source_value: glucose.source_value,
            source_unit: glucose.unit,
            device: device.to_string(),
        }
    }
}

impl InsulinBolus {
    /// A dose of `units`, of `bolus_type` as the device names it.
    pub fn of(
        ts: When,
        units: f64,
        bolus_type: Option<String>,
        duration_minutes: Option<f64>,
        delivery: Option<Delivery>,
        device: &str,
    ) -> InsulinBolus {
        InsulinBolus {
            ts,
            units,
            bolus_type,
            duration_minutes,
            delivery,
            device: device.to_string(),
        }
    }
}

impl BasalRate {
    /// A scheduled rate from `ts` on.
    pub fn scheduled(ts: When, rate_u_per_h: f64, device: &str) -> BasalRate {
        BasalRate {
            ts,
            rate_u_per_h: Some(rate_u_per_h),
            duration_minutes: None,
            basal_type: Some("scheduled".into()),
            device: device.to_string(),
        }
    }
}

impl DeviceEvent {
    /// An event, its detail and how long it lasted.
    pub fn of(
        ts: When,
        event: impl Into<String>,
        detail: Option<String>,
        duration_minutes: Option<f64>,
        device: &str,
    ) -> DeviceEvent {
        DeviceEvent {
            ts,
            event: event.into(),
            detail,
            duration_minutes,
            device: device.to_string(),
        }
    }
}

impl GlucoseCheck {
    /// A glucose value measured by `method`.
    pub fn of(ts: When, glucose: Glucose, method: Method, device: &str) -> GlucoseCheck {
        GlucoseCheck {
            ts,
            glucose_mg_dl: glucose.mg_dl,
            out_of_range: glucose.out_of_range,
            source_value: glucose.source_value,
            source_unit: glucose.unit,
            method,
            device: device.to_string(),
        }
    }
}

/// The comment of `ts` in every table.
pub const TS_COMMENT: &str = "The device's local wall-clock time (TIMESTAMP without zone), as \
     the device showed it; Nightscout's instants are placed in the import's --time-zone (with \
     its daylight-saving rules), never by the uploader's utcOffset.";
/// The comment of `device` in every table.
pub const DEVICE_COMMENT: &str =
    "The device kind (e.g. Dexcom G7, MiniMed 780G); never a serial number.";
/// The comment of `source` in every table.
pub const SOURCE_COMMENT: &str = "The export format the row came from (e.g. Dexcom Clarity CSV).";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_declares_its_columns_once() {
        let names: Vec<&str> = Table::ALL.iter().map(|t| t.name()).collect();
        assert_eq!(
            names,
            [
                "cgm_readings",
                "glucose_checks",
                "insulin_boluses",
                "basal",
                "long_acting_insulin",
                "carbs",
                "ketones",
                "device_events"
            ]
        );
        let cgm: Vec<(&str, &str, bool)> = Table::Cgm
            .columns()
            .iter()
            .map(|c| (c.name, c.sql_type, c.nullable))
            .collect();
        assert_eq!(
            cgm,
            [
                ("glucose_mg_dl", "INTEGER", false),
                ("out_of_range", "VARCHAR", true),
                ("source_value", "DOUBLE", true),
                ("source_unit", "VARCHAR", false),
            ]
        );
        let mut rows = Rows::default();
        rows.push(CarbEntry {
            ts: When::Instant {
                utc_ms: 0,
                utc_offset_minutes: None,
            },
            grams: 45.0,
            device: "Nightscout".into(),
        });
        assert_eq!(rows.count(Table::Carbs), 1);
        assert_eq!(rows.count(Table::Cgm), 0);
    }
}
