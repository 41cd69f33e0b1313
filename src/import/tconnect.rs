//! Tandem t:connect's CSV export: one file of sections, or one file per section.
//!
//! A few lines about the patient (name, date of birth) come first; then sections, each with its
//! own header row, separated by blank lines: CGM and meter readings (`EventDateTime`, `Readings
//! (CGM / BGM)`), insulin on board (the pump's estimate: left out), basal rates (`BasalRate`),
//! boluses (`InsulinDelivered`, `CompletionDateTime`, with the carbs entered for them). Every
//! data row ends with a comma. Recognised by those header rows.

use std::collections::HashMap;
use std::io::Read;

use super::csv::{self, Columns, Record};
use super::error::ImportError;
use super::rows::{
    BasalRate, CarbEntry, CgmReading, Delivery, GlucoseCheck, InsulinBolus, Method, Row, Table,
    When,
};
use super::time::{self, OrderVote};
use super::values::{Glucose, Unit, number};
use super::vendor::{Head, Parsed, Vendor, each_record, read_text};
use crate::clinical::{DEXCOM, METER};

/// Tandem t:connect.
pub struct TConnect;

const LABEL: &str = "Tandem t:connect CSV";

/// What one section of a t:connect export holds, from its header row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// CGM (`EGV`) and meter (`BG`) readings.
    Readings,
    /// Boluses, with the carbs entered for them.
    Boluses,
    /// Basal rate changes.
    Basal,
    /// The pump's own insulin-on-board estimate: derived, not imported.
    InsulinOnBoard,
}

/// The section whose header row `record` is, if it is one.
fn section(record: &Record<'_>) -> Option<Section> {
    let has = |name: &str| record.fields.iter().any(|f| f.trim() == name);
    if !has("EventDateTime") && !has("CompletionDateTime") {
        return None;
    }
    if has("Readings (CGM / BGM)") {
        Some(Section::Readings)
    } else if has("InsulinDelivered") && has("BolusType") {
        Some(Section::Boluses)
    } else if has("BasalRate") {
        Some(Section::Basal)
    } else if has("EventID") && has("IOB") {
        Some(Section::InsulinOnBoard)
    } else {
        None
    }
}

/// Call `each` with every data row of every section: the section's number, kind and columns,
/// and the row. Rows outside a section (the patient lines, blank lines) are not passed.
fn each_row<'a>(
    text: &'a str,
    delimiter: u8,
    mut each: impl FnMut(usize, Section, &Columns, &Record<'a>),
) -> Result<usize, ImportError> {
    let mut current: Option<(usize, Section, Columns)> = None;
    let mut sections = 0usize;
    each_record(text, delimiter, |record| {
        if let Some(kind) = section(record) {
            sections += 1;
            current = Some((sections, kind, Columns::of(record)));
        } else if record.is_blank() {
            current = None;
        } else if let Some((id, kind, columns)) = &current {
            each(*id, *kind, columns, record);
        }
    })?;
    Ok(sections)
}

impl Vendor for TConnect {
    fn label(&self) -> &'static str {
        LABEL
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        head.text
            .lines()
            .next()
            .is_some_and(|l| l.contains("Tandem Diabetes Care"))
            || head.records.iter().any(|r| section(r).is_some())
    }

    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError> {
        let text = read_text(input)?;
        let delimiter = csv::sniff_delimiter(&text);
        // First pass: each section's date order.
        let mut votes: HashMap<usize, OrderVote> = HashMap::new();
        let sections = each_row(&text, delimiter, |id, _, columns, record| {
            let vote = votes.entry(id).or_default();
            for name in ["EventDateTime", "CompletionDateTime", "RequestDateTime"] {
                let value = columns.get(record, name);
                if !value.is_empty() {
                    vote.add(value);
                }
            }
        })?;
        if sections == 0 {
            return Err(ImportError::missing_column(LABEL, "EventDateTime"));
        }
        let mut parsed = Parsed {
            left_out: vec![
                "the patient's name and date of birth (the lines above the first section)".into(),
                "serial numbers (SerialNumber)".into(),
                "the BG entered with each bolus (the reading it repeats is imported)".into(),
            ],
            ..Parsed::default()
        };
        let mut iob_left_out = false;
        each_row(&text, delimiter, |id, kind, columns, record| {
            let order = votes
                .get(&id)
                .map(OrderVote::decide)
                .unwrap_or(time::DateOrder::YearMonthDay);
            let device = Some(columns.get(record, "DeviceType"))
                .filter(|d| !d.is_empty())
                .unwrap_or("t:slim X2 Insulin Pump")
                .to_string();
            let at = |name: &str| time::parse(columns.get(record, name), order).map(When::Local);
            // The row's EventDateTime, or the row counted as not parsed in `table`.
            let event_time = |parsed: &mut Parsed, table: Table| {
                let ts = at("EventDateTime");
                if ts.is_none() {
                    let written = columns.get(record, "EventDateTime");
                    parsed.unparsed(table, "EventDateTime", written);
                }
                ts
            };
            match kind {
                Section::InsulinOnBoard => iob_left_out = true,
                Section::Readings => {
                    parsed.unit = Some(Unit::MgDl);
                    let description = columns.get(record, "Description");
                    let (table, method) = match description {
                        "EGV" => (CgmReading::TABLE, None),
                        "BG" => (GlucoseCheck::TABLE, Some(Method::Fingerstick)),
                        _ => return,
                    };
                    let Some(ts) = event_time(&mut parsed, table) else {
                        return;
                    };
                    let reading = columns.get(record, "Readings (CGM / BGM)");
                    let range = if method.is_some() { METER } else { DEXCOM };
                    let Some(value) = Glucose::read(reading, Unit::MgDl, range) else {
                        parsed.unparsed(table, "Readings (CGM / BGM)", reading);
                        return;
                    };
                    match method {
                        None => parsed.rows.push(CgmReading::of(ts, value, &device)),
                        Some(method) => parsed
                            .rows
                            .push(GlucoseCheck::of(ts, value, method, &device)),
                    }
                }
                Section::Boluses => {
                    let delivered = columns.get(record, "InsulinDelivered");
                    if delivered.is_empty() {
                        return;
                    }
                    let Some(ts) = at("CompletionDateTime").or_else(|| at("EventDateTime")) else {
                        parsed.unparsed(
                            InsulinBolus::TABLE,
                            "CompletionDateTime",
                            columns.get(record, "CompletionDateTime"),
                        );
                        return;
                    };
                    let Some(units) = number(delivered) else {
                        parsed.unparsed(InsulinBolus::TABLE, "InsulinDelivered", delivered);
                        return;
                    };
                    let description = columns.get(record, "Description");
                    let kind = (!description.is_empty()).then(|| description.to_string());
                    let lasted = number(columns.get(record, "Duration"));
                    let pump = Some(Delivery::Pump);
                    parsed
                        .rows
                        .push(InsulinBolus::of(ts, units, kind, lasted, pump, &device));
                    if let Some(grams) =
                        number(columns.get(record, "CarbSize")).filter(|g| *g > 0.0)
                        && let Some(asked) = at("RequestDateTime").or_else(|| at("EventDateTime"))
                    {
                        parsed.rows.push(CarbEntry {
                            ts: asked,
                            grams,
                            device,
                        });
                    }
                }
                Section::Basal => {
                    let rate = columns.get(record, "BasalRate");
                    if rate.is_empty() {
                        return;
                    }
                    let table: Table = BasalRate::TABLE;
                    let Some(ts) = event_time(&mut parsed, table) else {
                        return;
                    };
                    let Some(rate_u_per_h) = number(rate) else {
                        parsed.unparsed(table, "BasalRate", rate);
                        return;
                    };
                    let kind = columns.get(record, "Type");
                    parsed.rows.push(BasalRate {
                        ts,
                        rate_u_per_h: Some(rate_u_per_h),
                        duration_minutes: None,
                        basal_type: Some(if kind.is_empty() { "Basal" } else { kind }.to_string()),
                        device,
                    });
                }
            }
        })?;
        if iob_left_out {
            parsed
                .left_out
                .push("insulin on board (the pump's own estimate, derived from boluses)".into());
        }
        parsed.or_no_records(LABEL)
    }
}
