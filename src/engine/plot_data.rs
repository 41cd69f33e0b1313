//! The two result columns a chart draws, read from DuckDB as typed values for
//! [`crate::plot::render`]: times as microseconds of local wall-clock time, numbers as `f64`,
//! text as categories.

use std::panic::{AssertUnwindSafe, catch_unwind};

use duckdb::types::Value;

use super::convert::ZoneOffsets;
use super::errors::worker_error;
use super::local_time::LocalTime;
use super::{Engine, sql_identifier};
use crate::plot::{self, ChartKind, PlotData, XValue};
use crate::protocol::Failure;
use duckgate_validate::error::ErrorKind;

/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;

impl Engine {
    /// Run `query` and read the columns named `x`
    /// and `y` (default: the first and second; a histogram's y defaults to the first), at most
    /// [`plot::MAX_ROWS`] rows. A `TIMESTAMP WITH TIME ZONE` x is read as local wall-clock time
    /// in the worker's `TimeZone`, which is what a CGM trace and an AGP are read in.
    pub fn plot_data(
        &mut self,
        query: &super::statement::CheckedQuery,
        kind: ChartKind,
        x: Option<&str>,
        y: Option<&str>,
    ) -> Result<PlotData, Failure> {
        self.ensure_lock_held()?;
        let memory = self.memory;
        let judge = self.judge.clone();
        let failed = |e: &duckdb::Error| memory.explain(judge.error_for(e));
        let mut stmt = self.prepare_checked(query).map_err(|e| memory.explain(e))?;
        // Streaming execution, as in `run_query`: names and types are known once it has
        // started, and rows are produced as they are read.
        drop(stmt.stream_arrow([]).map_err(|e| failed(&e))?);
        self.ensure_plan_judged()?;
        let names: Vec<String> = (0..stmt.column_count())
            .map(|i| stmt.column_name(i).cloned().unwrap_or_default())
            .collect();
        let (x_index, y_index) = pick_columns(&names, kind, x, y)?;
        // A zoned x is drawn in local wall-clock time: each instant moved by its offset in the
        // worker's zone, looked up on a second connection while this one streams (the query
        // itself runs once, as checked).
        let zoned_x =
            stmt.column_logical_type(x_index).id() == duckdb::core::LogicalTypeId::TimestampTZ;
        let mut zone = LocalTime::new(&self.time_zone, &self.conn);
        // `pick_columns` picks among `names`.
        let (Some(x_label), Some(y_label)) = (names.get(x_index), names.get(y_index)) else {
            return Err(worker_error(
                ErrorKind::InternalError,
                "the chart's columns are not among the result's".to_string(),
            ));
        };
        let mut data = PlotData {
            x_label: x_label.clone(),
            y_label: y_label.clone(),
            ..PlotData::default()
        };
        // The crate panics on a few Arrow shapes it does not know; that must become an error
        // for this call, not a dead worker (as in `run_query`).
        let read = catch_unwind(AssertUnwindSafe(|| -> Result<(), Failure> {
            let mut cursor = stmt.raw_query();
            while let Some(row) = cursor.next().map_err(|e| failed(&e))? {
                if data.y.len() >= plot::MAX_ROWS {
                    return Err(too_many_rows());
                }
                let x_value: Value = row.get(x_index).map_err(|e| failed(&e))?;
                let y_value: Value = row.get(y_index).map_err(|e| failed(&e))?;
                let x_value = if zoned_x {
                    local_x(x_value, &mut zone)
                } else {
                    x_value
                };
                let Some(x_value) = x_of(&x_value) else {
                    // A NULL x: the row has no place on the chart (a NULL y is skipped too).
                    data.x.push(XValue::Number(f64::NAN));
                    data.y.push(None);
                    continue;
                };
                let y_number = match &y_value {
                    Value::Null => None,
                    other => Some(number(other).ok_or_else(|| not_numeric(y_label, other))?),
                };
                data.x.push(x_value);
                data.y.push(y_number);
            }
            Ok(())
        }));
        match read {
            Ok(result) => result?,
            Err(_) => {
                return Err(worker_error(
                    ErrorKind::DatabaseError,
                    "A value of the x or y column could not be read. Cast it to DOUBLE, \
                     TIMESTAMP or VARCHAR in the query.",
                ));
            }
        }
        Ok(data)
    }
}

fn too_many_rows() -> Failure {
    worker_error(
        ErrorKind::ResourceLimit,
        format!(
            "The query returned more than {} rows, more than a chart can use. Aggregate first \
             (for example one row per hour: GROUP BY time_bucket(INTERVAL 1 hour, ts)) or add a \
             WHERE filter.",
            plot::MAX_ROWS
        ),
    )
}

fn not_numeric(column: &str, value: &Value) -> Failure {
    worker_error(
        ErrorKind::InvalidArgument,
        format!(
            "The y column {column:?} holds {}, not numbers. Pick a numeric column as y, or cast \
             it (for example {}::DOUBLE).",
            type_name(value),
            sql_identifier(column)
        ),
    )
}

/// Which result columns are x and y: by name (exact, then ignoring case), else by position.
fn pick_columns(
    names: &[String],
    kind: ChartKind,
    x: Option<&str>,
    y: Option<&str>,
) -> Result<(usize, usize), Failure> {
    let find = |wanted: &str, role: &str| -> Result<usize, Failure> {
        names
            .iter()
            .position(|n| n == wanted)
            .or_else(|| names.iter().position(|n| n.eq_ignore_ascii_case(wanted)))
            .ok_or_else(|| {
                worker_error(
                    ErrorKind::InvalidArgument,
                    format!(
                        "The query has no result column {wanted:?} for {role}; its columns are {}. \
                         Name one of them, or alias a column in the SELECT (… AS {wanted}).",
                        names
                            .iter()
                            .map(|n| format!("{n:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
            })
    };
    let needed = if kind.draws_y_alone() { 1 } else { 2 };
    if names.len() < needed && (x.is_none() || y.is_none()) {
        return Err(worker_error(
            ErrorKind::InvalidArgument,
            format!(
                "A {kind} chart needs {needed} result columns (x, then y) and the query returns {}. \
                 Select the x column and the y column.",
                names.len()
            ),
        ));
    }
    let x_index = match x {
        Some(name) => find(name, "x")?,
        None => 0,
    };
    let y_index = match y {
        Some(name) => find(name, "y")?,
        None if kind.draws_y_alone() => 0,
        None => 1,
    };
    Ok((x_index, y_index))
}

/// A TIMESTAMPTZ x as local wall-clock microseconds (UTC when the zone gives no offset).
fn local_x(value: Value, zone: &mut LocalTime<'_>) -> Value {
    match value {
        Value::Timestamp(unit, v) => {
            let micros = unit.to_micros(v);
            let offset = zone.offset_seconds(micros).map_or(0, i64::from);
            Value::Timestamp(
                duckdb::types::TimeUnit::Microsecond,
                micros.saturating_add(offset * 1_000_000),
            )
        }
        other => other,
    }
}

/// An x value: times and dates as microseconds, numbers, anything else by its text. `None` for
/// NULL.
fn x_of(value: &Value) -> Option<XValue> {
    Some(match value {
        Value::Null => return None,
        Value::Timestamp(unit, v) => XValue::Time(unit.to_micros(*v)),
        Value::Date32(days) => XValue::Time(i64::from(*days) * DAY_MICROS),
        Value::Text(text) | Value::Enum(text) => XValue::Category(text.clone()),
        other => match number(other) {
            Some(n) => XValue::Number(n),
            None => XValue::Category(format!("{other:?}")),
        },
    })
}

/// A numeric value as `f64`; `None` for anything else.
fn number(value: &Value) -> Option<f64> {
    Some(match value {
        Value::Boolean(b) => f64::from(u8::from(*b)),
        Value::TinyInt(v) => f64::from(*v),
        Value::SmallInt(v) => f64::from(*v),
        Value::Int(v) => f64::from(*v),
        Value::BigInt(v) => *v as f64,
        Value::HugeInt(v) => *v as f64,
        Value::UTinyInt(v) => f64::from(*v),
        Value::USmallInt(v) => f64::from(*v),
        Value::UInt(v) => f64::from(*v),
        Value::UBigInt(v) => *v as f64,
        Value::UHugeInt(v) => *v as f64,
        Value::Float(v) => f64::from(*v),
        Value::Double(v) => *v,
        Value::Decimal(d) => d.to_string().parse().ok()?,
        _ => return None,
    })
}

/// A value's type in words, for messages.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Text(_) | Value::Enum(_) => "text",
        Value::Timestamp(..) | Value::Date32(_) | Value::Time64(..) => "dates or times",
        Value::Blob(_) => "binary data",
        Value::List(_) | Value::Array(_) => "lists",
        Value::Struct(_) | Value::Map(_) | Value::Union(_) => "nested values",
        _ => "values that are not numbers",
    }
}
