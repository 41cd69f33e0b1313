//! Dexcom Clarity's CSV export.
//!
//! One table: `Index`, the timestamp (`Timestamp (YYYY-MM-DDThh:mm:ss)`; in German `Zeitstempel
//! (JJJJ-MM-TTThh:mm:ss)`), event type and subtype, patient info, device info, source device,
//! glucose (its unit in the header), insulin, carbs, duration, rate of change, transmitter time
//! and ID, in that order in every language Clarity exports (comma- or semicolon-separated,
//! ISO-8859-1 in some). The first rows carry the patient's name and date of birth, then the
//! device and alert settings, all without a time; then the events, each with its time.
//!
//! Recognised by that structure: an `Index` column followed by a timestamp column whose name
//! ends in its `hh:mm:ss)` pattern. Which rows are readings is read from the values, not the
//! event type's word: a row with glucose only is a reading if its event type is the one most
//! rows with glucose have (`EGV`, `EGW`, …), else a calibration or meter value; a row with
//! insulin is insulin, one with carbs is carbs. The patient info and transmitter columns are
//! never read.

use std::collections::HashMap;
use std::io::Read;

use super::csv::{self, Record};
use super::error::ImportError;
use super::rows::{
    CarbEntry, CgmReading, Delivery, DeviceEvent, GlucoseCheck, InsulinBolus, LongActingDose,
    Method, Row, When,
};
use super::time::{self, OrderVote};
use super::values::{Glucose, Unit, duration_minutes, number};
use super::vendor::{Head, Parsed, Vendor, each_record, read_text};
use crate::clinical::DEXCOM;

/// Dexcom Clarity.
pub struct Clarity;

const LABEL: &str = "Dexcom Clarity CSV";

/// A row's fields by position, the same in every language: `Index` first, then these, then
/// the rate of change and the transmitter's time and ID, which are never read.
struct Fields<'r> {
    timestamp: &'r str,
    event: &'r str,
    subtype: &'r str,
    patient_info: &'r str,
    device_info: &'r str,
    source_device: &'r str,
    glucose: &'r str,
    insulin: &'r str,
    carbs: &'r str,
    duration: &'r str,
}

impl<'r> Fields<'r> {
    fn of(record: &'r Record<'_>) -> Fields<'r> {
        Fields {
            timestamp: record.get(1),
            event: record.get(2),
            subtype: record.get(3),
            patient_info: record.get(4),
            device_info: record.get(5),
            source_device: record.get(6),
            glucose: record.get(7),
            insulin: record.get(8),
            carbs: record.get(9),
            duration: record.get(10),
        }
    }
}

/// The header's names of the columns a message about a value names.
struct Labels {
    timestamp: String,
    glucose: String,
    insulin: String,
    carbs: String,
}

fn is_header(record: &Record<'_>) -> bool {
    record.fields.len() >= 8
        && record.first().eq_ignore_ascii_case("index")
        && Fields::of(record)
            .timestamp
            .to_ascii_lowercase()
            .ends_with("hh:mm:ss)")
}

/// The rows that name the patient, whatever else they hold.
fn is_personal(row: &Fields<'_>) -> bool {
    const PERSONAL: &[&str] = &[
        "firstname",
        "lastname",
        "dateofbirth",
        "vorname",
        "nachname",
        "geburtsdatum",
        "prénom",
        "nom",
    ];
    !row.patient_info.is_empty() || PERSONAL.contains(&row.event.to_lowercase().as_str())
}

/// A Dexcom device kind from what Clarity writes of it (`iOS G7`, `Android G6`, `iOS D1G7` for
/// a Dexcom ONE+, `G7 Mobile App`, `Stelo`).
pub fn dexcom_device(text: &str) -> Option<&'static str> {
    let compact: String = text
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_uppercase();
    let has = |needle: &str| compact.contains(needle);
    Some(if has("D1G7") || has("ONE+") || has("ONEPLUS") {
        "Dexcom ONE+"
    } else if has("D1G6") || has("DEXCOMONE") {
        "Dexcom ONE"
    } else if has("STELO") {
        "Dexcom Stelo"
    } else if has("G7") {
        "Dexcom G7"
    } else if has("G6") {
        "Dexcom G6"
    } else if has("G5") {
        "Dexcom G5"
    } else if has("G4") {
        "Dexcom G4"
    } else {
        return None;
    })
}

/// Whether an insulin subtype is long-acting, in the languages Clarity writes.
fn is_long_acting(subtype: &str) -> bool {
    let lower = subtype.to_lowercase();
    ["long", "lang", "lent", "lunga", "larga", "depot", "basal"]
        .iter()
        .any(|w| lower.contains(w))
}

fn is_calibration(event: &str) -> bool {
    let lower = event.to_lowercase();
    ["calib", "kalib", "étalon", "etalon", "kalibr"]
        .iter()
        .any(|w| lower.contains(w))
}

impl Vendor for Clarity {
    fn label(&self) -> &'static str {
        LABEL
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        head.records.iter().take(20).any(is_header)
    }

    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError> {
        let text = read_text(input)?;
        let delimiter = csv::sniff_delimiter(&text);
        // First pass: the header, the date order, the readings' event type, the device.
        let mut labels: Option<Labels> = None;
        let mut vote = OrderVote::default();
        let mut glucose_events: HashMap<String, u64> = HashMap::new();
        let mut file_device: Option<&'static str> = None;
        each_record(&text, delimiter, |record| {
            let row = Fields::of(record);
            if labels.is_none() {
                if is_header(record) {
                    labels = Some(Labels {
                        timestamp: row.timestamp.into(),
                        glucose: row.glucose.into(),
                        insulin: row.insulin.into(),
                        carbs: row.carbs.into(),
                    });
                }
                return;
            }
            if is_personal(&row) {
                return;
            }
            if file_device.is_none() {
                file_device =
                    dexcom_device(row.device_info).or_else(|| dexcom_device(row.source_device));
            }
            if row.timestamp.is_empty() {
                return;
            }
            vote.add(row.timestamp);
            if !row.glucose.is_empty() && row.insulin.is_empty() && row.carbs.is_empty() {
                *glucose_events.entry(row.event.to_string()).or_default() += 1;
            }
        })?;
        let labels = labels.ok_or_else(|| ImportError::missing_column(LABEL, "Timestamp"))?;
        let unit = Unit::named_in(&labels.glucose).unwrap_or(Unit::MgDl);
        let order = vote.decide();
        let readings_event = glucose_events
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(event, _)| event.clone())
            .unwrap_or_else(|| "EGV".to_string());
        let mut parsed = Parsed {
            unit: Some(unit),
            left_out: vec![
                "the patient's name and date of birth (the FirstName, LastName and DateOfBirth \
                 rows)"
                    .into(),
                "serial numbers (Transmitter ID) and the device and alert settings rows".into(),
            ],
            ..Parsed::default()
        };
        let mut in_table = false;
        each_record(&text, delimiter, |record| {
            if !in_table {
                in_table = is_header(record);
                return;
            }
            let row = Fields::of(record);
            let ts_text = row.timestamp;
            if ts_text.is_empty() || is_personal(&row) {
                return;
            }
            let device = dexcom_device(row.source_device)
                .or(file_device)
                .unwrap_or("Dexcom");
            let (event, subtype) = (row.event, row.subtype);
            let (glucose, insulin, carbs) = (row.glucose, row.insulin, row.carbs);
            let ts = time::parse(ts_text, order).map(When::Local);
            let table = if !insulin.is_empty() {
                if is_long_acting(subtype) {
                    LongActingDose::TABLE
                } else {
                    InsulinBolus::TABLE
                }
            } else if !carbs.is_empty() {
                CarbEntry::TABLE
            } else if !glucose.is_empty() {
                if event == readings_event {
                    CgmReading::TABLE
                } else {
                    GlucoseCheck::TABLE
                }
            } else {
                DeviceEvent::TABLE
            };
            let Some(ts) = ts else {
                parsed.unparsed(table, &labels.timestamp, ts_text);
                return;
            };
            if !insulin.is_empty() {
                let Some(units) = number(insulin) else {
                    parsed.unparsed(table, &labels.insulin, insulin);
                    return;
                };
                if is_long_acting(subtype) {
                    parsed.rows.push(LongActingDose {
                        ts,
                        units,
                        device: device.into(),
                    });
                } else {
                    let kind = if subtype.is_empty() { event } else { subtype };
                    parsed.rows.push(InsulinBolus::of(
                        ts,
                        units,
                        Some(kind.into()),
                        None,
                        Some(Delivery::Pen),
                        device,
                    ));
                }
            } else if !carbs.is_empty() {
                let Some(grams) = number(carbs) else {
                    parsed.unparsed(table, &labels.carbs, carbs);
                    return;
                };
                parsed.rows.push(CarbEntry {
                    ts,
                    grams,
                    device: device.into(),
                });
            } else if !glucose.is_empty() {
                let Some(value) = Glucose::read(glucose, unit, DEXCOM) else {
                    parsed.unparsed(table, &labels.glucose, glucose);
                    return;
                };
                if event == readings_event {
                    parsed.rows.push(CgmReading::of(ts, value, device));
                } else {
                    let method = if is_calibration(event) {
                        Method::Calibration
                    } else {
                        Method::Fingerstick
                    };
                    parsed
                        .rows
                        .push(GlucoseCheck::of(ts, value, method, device));
                }
            } else {
                let what = if subtype.is_empty() {
                    event.to_string()
                } else {
                    format!("{event}: {subtype}")
                };
                let lasted = duration_minutes(row.duration);
                parsed
                    .rows
                    .push(DeviceEvent::of(ts, what, None, lasted, device));
            }
        })?;
        parsed.or_no_records(LABEL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_kinds_from_what_clarity_writes() {
        assert_eq!(dexcom_device("iOS D1G7"), Some("Dexcom ONE+"));
        assert_eq!(dexcom_device("Android G6"), Some("Dexcom G6"));
        assert_eq!(dexcom_device("iOS G7"), Some("Dexcom G7"));
        assert_eq!(dexcom_device("Stelo"), Some("Dexcom Stelo"));
        assert_eq!(dexcom_device("iPhone"), None);
    }

    #[test]
    fn a_german_export_reads_like_an_english_one() {
        let text = "Index;Zeitstempel (JJJJ-MM-TTThh:mm:ss);Ereignistyp;Ereignisuntertyp;\
            Patienteninfo;Geräteinfo;Quellgeräte-ID;Glukosewert (mmol/l);Insulinwert (IE);\
            Kohlenhydratwert (Gramm);Dauer (hh:mm:ss)\n\
            1;;Vorname;;Erika;;;;;;\n\
            10;2026-06-02T00:00:00;EGW;;;;iOS G7;5,8;;;\n\
            11;2026-06-02T00:05:00;EGW;;;;iOS G7;Niedrig;;;\n\
            12;2026-06-02T07:30:00;Insulin;Schnell wirkend;;;iOS G7;;4,5;;\n";
        let head = Head::new(text, "csv");
        assert!(Clarity.detect(&head));
        let parsed = Clarity.read(&mut text.as_bytes()).unwrap();
        let mg: Vec<i32> = parsed.rows.cgm.iter().map(|r| r.glucose_mg_dl).collect();
        assert_eq!(mg, vec![104, 39]);
        assert_eq!(parsed.rows.boluses.len(), 1);
        assert_eq!(parsed.unit, Some(Unit::MmolL));
        assert!(!format!("{parsed:?}").contains("Erika"));
    }
}
