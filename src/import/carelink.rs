//! Medtronic CareLink's CSV export: MiniMed pumps (Paradigm to 780G) and Guardian sensors,
//! including the CGM-only Guardian Connect.
//!
//! A preamble (last and first name, patient ID, date of birth, the devices' serial numbers,
//! "Device data shown may exceed selected date range."), then per device a marker row
//! (`-------;MiniMed 780G MMT-1886;Pump;NG…;-------`; Guardian Connect calls itself a
//! `Pump` there too) and a table with one wide header (`Index;Date;Time;…`). Newer exports are
//! semicolon-separated with decimal commas in many locales (even the index: `1,00000`), dates
//! `2021/07/25` or `25.07.2021`; older (Paradigm-era) ones are comma-separated, dates
//! `1/02/06`, with `Temp Basal Amount (U/h)` and `Programmed Bolus Duration (hh:mm:ss)`
//! columns and the pump's raw records (`Raw-Type`, `Raw-Values`).
//!
//! Recognised by structure: a header row `Index`, then a date and a time column, over rows
//! whose second and third fields are a date and a time. A Guardian Connect user logs pen
//! insulin and meals as event markers (`Insulin: 27,00`, `Meal: 60,00grams`): those become
//! pen doses and carbs, not text.

use std::io::Read;

use super::csv::{self, Columns, Record};
use super::error::ImportError;
use super::rows::{
    BasalRate, CarbEntry, CgmReading, Delivery, DeviceEvent, GlucoseCheck, InsulinBolus, Method,
    Row, Table, When,
};
use super::time::{self, OrderVote};
use super::values::{Glucose, Unit, duration_minutes, leading_number, number};
use super::vendor::{Head, Parsed, Vendor, each_record, read_text};
use crate::clinical::{MEDTRONIC, METER};

/// Medtronic CareLink.
pub struct CareLink;

const LABEL: &str = "Medtronic CareLink CSV";

/// Names of the date column in the languages CareLink writes it.
const DATE_NAMES: &[&str] = &["date", "datum", "fecha", "data", "dato", "päivämäärä"];
/// Names of the time column.
const TIME_NAMES: &[&str] = &[
    "time", "zeit", "uhrzeit", "hora", "ora", "heure", "tid", "tijd", "aika", "czas",
];

/// A CareLink data header: `Index`, then the date and time columns.
fn is_header(record: &Record<'_>) -> bool {
    record.fields.len() >= 4
        && record.first().eq_ignore_ascii_case("index")
        && DATE_NAMES.contains(&record.get(1).to_lowercase().as_str())
        && TIME_NAMES.contains(&record.get(2).to_lowercase().as_str())
}

/// A marker row (`-------;<model>;<what>;<serial>;-------`): the device model.
fn marker_device(record: &Record<'_>) -> Option<Option<String>> {
    if !record.first().starts_with("-------") {
        return None;
    }
    let model = record.get(1);
    Some((!model.is_empty() && !model.starts_with("---")).then(|| model.to_string()))
}

/// The event markers a person logs, by their word in the languages CareLink writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Insulin,
    Meal,
    BloodGlucose,
    Exercise,
}

fn marker(text: &str) -> Option<(Marker, &str)> {
    let (word, value) = text.split_once(':')?;
    let word = word.trim().to_lowercase();
    let kind = match word.as_str() {
        "insulin" | "insuline" | "insulina" => Marker::Insulin,
        "meal" | "mahlzeit" | "repas" | "pasto" | "comida" | "maaltijd" | "måltid" => Marker::Meal,
        "bg" | "blood glucose" | "bz" | "glycémie" | "glicemia" => Marker::BloodGlucose,
        "exercise" | "sport" | "bewegung" | "exercice" | "esercizio" | "ejercicio" => {
            Marker::Exercise
        }
        _ => return None,
    };
    Some((kind, value.trim()))
}

impl Vendor for CareLink {
    fn label(&self) -> &'static str {
        LABEL
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        head.records.iter().any(is_header)
    }

    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError> {
        let text = read_text(input)?;
        let delimiter = csv::sniff_delimiter(&text);
        let mut vote = OrderVote::default();
        let mut date_time: Option<(usize, usize)> = None;
        let mut open = false;
        each_record(&text, delimiter, |record| {
            if is_header(record) {
                date_time = Some((1, 2));
                open = true;
            } else if record.is_blank() || marker_device(record).is_some() {
                open = false;
            } else if open && let Some((d, t)) = date_time {
                vote.add(&format!("{} {}", record.get(d), record.get(t)));
            }
        })?;
        if date_time.is_none() {
            return Err(ImportError::missing_column(LABEL, "Index;Date;Time"));
        }
        let order = vote.decide();
        let mut parsed = Parsed {
            left_out: vec![
                "the preamble: name, patient ID, date of birth and the devices' serial numbers"
                    .into(),
                "ISIG values, bolus wizard settings and the pump's raw records".into(),
            ],
            ..Parsed::default()
        };
        let mut device: Option<String> = None;
        let mut columns: Option<Columns> = None;
        let mut markers = 0u64;
        each_record(&text, delimiter, |record| {
            if let Some(model) = marker_device(record) {
                device = model;
                columns = None;
            } else if is_header(record) {
                columns = Some(Columns::of(record));
            } else if record.is_blank() {
                columns = None;
            } else if let Some(columns) = &columns {
                let device = device.as_deref().unwrap_or("Medtronic");
                markers += section_row(&mut parsed, columns, record, order, device);
            }
        })?;
        if markers > 0 {
            parsed.notes.push(format!(
                "{markers} event markers the person logged (pen insulin, meals, BG, exercise) \
                 became rows of insulin_boluses (delivery 'pen'), carbs, glucose_checks and \
                 device_events"
            ));
        }
        parsed.or_no_records(LABEL)
    }
}

/// One data row of a section; returns how many event markers it turned into typed rows.
fn section_row(
    parsed: &mut Parsed,
    columns: &Columns,
    record: &Record<'_>,
    order: time::DateOrder,
    device: &str,
) -> u64 {
    let when_text = format!("{} {}", record.get(1), record.get(2));
    let ts = time::parse(&when_text, order).map(When::Local);
    // Each value the row holds, with the table it goes to.
    let mut values: Vec<(Table, &str, &str)> = Vec::new();
    let mut put = |table: Table, name: &str| {
        if let Some((at, full)) = columns.find(name)
            && !record.get(at).is_empty()
        {
            values.push((table, full, record.get(at)));
        }
    };
    put(CgmReading::TABLE, "Sensor Glucose (*");
    put(GlucoseCheck::TABLE, "BG Reading (*");
    put(GlucoseCheck::TABLE, "Sensor Calibration BG (*");
    put(InsulinBolus::TABLE, "Bolus Volume Delivered (U)");
    put(BasalRate::TABLE, "Basal Rate (U/h)");
    put(BasalRate::TABLE, "Temp Basal Amount*");
    put(CarbEntry::TABLE, "BWZ Carb Input (grams)");
    put(BasalRate::TABLE, "Raw-Type");
    for event in ["Alarm", "Suspend", "Rewind", "Prime Type", "Event Marker"] {
        put(DeviceEvent::TABLE, event);
    }
    if values.is_empty() {
        return 0;
    }
    let Some(ts) = ts else {
        if let Some((table, _, _)) = values.first() {
            parsed.unparsed(*table, "Date and Time", &when_text);
        }
        return 0;
    };
    let mut markers = 0;
    for (table, name, value) in values {
        let unit = Unit::named_in(name).unwrap_or(Unit::MgDl);
        match name {
            _ if name.starts_with("Sensor Glucose (") => {
                parsed.unit.get_or_insert(unit);
                match Glucose::read(value, unit, MEDTRONIC) {
                    Some(g) => parsed.rows.push(CgmReading::of(ts, g, device)),
                    None => parsed.unparsed(table, name, value),
                }
            }
            _ if name.starts_with("BG Reading (")
                || name.starts_with("Sensor Calibration BG (") =>
            {
                parsed.unit.get_or_insert(unit);
                let method = if name.starts_with("BG Reading") {
                    Method::Fingerstick
                } else {
                    Method::Calibration
                };
                match Glucose::read(value, unit, METER) {
                    Some(g) => parsed.rows.push(GlucoseCheck::of(ts, g, method, device)),
                    None => parsed.unparsed(table, name, value),
                }
            }
            "Bolus Volume Delivered (U)" => {
                let Some(units) = number(value) else {
                    parsed.unparsed(table, name, value);
                    continue;
                };
                let kind = columns.get(record, "Bolus Type");
                let source = columns.get(record, "Bolus Source");
                let bolus_type = match (kind.is_empty(), source.is_empty()) {
                    (true, true) => None,
                    (false, true) => Some(kind.to_string()),
                    (true, false) => Some(format!("({source})")),
                    (false, false) => Some(format!("{kind} ({source})")),
                };
                let duration = duration_minutes(columns.get(record, "Bolus Duration (h:mm:ss)"))
                    .or_else(|| {
                        duration_minutes(
                            columns.get(record, "Programmed Bolus Duration (hh:mm:ss)"),
                        )
                    });
                let pump = Some(Delivery::Pump);
                parsed.rows.push(InsulinBolus::of(
                    ts, units, bolus_type, duration, pump, device,
                ));
            }
            "Basal Rate (U/h)" => match number(value) {
                Some(rate) => parsed.rows.push(BasalRate::scheduled(ts, rate, device)),
                None => parsed.unparsed(table, name, value),
            },
            _ if name.starts_with("Temp Basal Amount") => {
                let Some(amount) = number(value) else {
                    parsed.unparsed(table, name, value);
                    continue;
                };
                let temp_type = columns.get(record, "Temp Basal Type");
                let percent = temp_type.to_lowercase().contains("percent");
                let duration =
                    duration_minutes(columns.get(record, "Temp Basal Duration (h:mm:ss)")).or_else(
                        || duration_minutes(columns.get(record, "Temp Basal Duration (hh:mm:ss)")),
                    );
                let mut basal_type = "temp".to_string();
                if !temp_type.is_empty() {
                    basal_type.push(' ');
                    basal_type.push_str(temp_type);
                }
                if percent {
                    basal_type.push_str(&format!(" {value}%"));
                }
                parsed.rows.push(BasalRate {
                    ts,
                    rate_u_per_h: (!percent).then_some(amount),
                    duration_minutes: duration,
                    basal_type: Some(basal_type),
                    device: device.into(),
                });
            }
            "BWZ Carb Input (grams)" => {
                if let Some(grams) = number(value).filter(|g| *g > 0.0) {
                    parsed.rows.push(CarbEntry {
                        ts,
                        grams,
                        device: device.into(),
                    });
                }
            }
            "Raw-Type" => {
                // A Paradigm pump's scheduled rate: `BasalProfileStart` with `RATE=0.85` among
                // its raw values.
                if value == "BasalProfileStart" {
                    let raw = columns.get(record, "Raw-Values");
                    let rate = raw
                        .split(',')
                        .find_map(|part| part.trim().strip_prefix("RATE="))
                        .and_then(number);
                    match rate {
                        Some(rate) => parsed.rows.push(BasalRate::scheduled(ts, rate, device)),
                        None => parsed.unparsed(table, "Raw-Values", raw),
                    }
                }
            }
            "Event Marker" => match marker(value) {
                Some((kind, amount)) => {
                    markers += 1;
                    event_marker(parsed, kind, value, amount, ts, device)
                }
                None => {
                    let detail = Some(value.to_string());
                    parsed
                        .rows
                        .push(DeviceEvent::of(ts, "Event Marker", detail, None, device))
                }
            },
            _ => {
                let detail = Some(value.to_string());
                parsed
                    .rows
                    .push(DeviceEvent::of(ts, name, detail, None, device))
            }
        }
    }
    markers
}

/// A logged event marker as the typed row it is.
fn event_marker(
    parsed: &mut Parsed,
    kind: Marker,
    text: &str,
    amount: &str,
    ts: When,
    device: &str,
) {
    let value = leading_number(amount);
    match (kind, value) {
        (Marker::Insulin, Some(units)) => {
            let kind = Some("Insulin (event marker)".to_string());
            let pen = Some(Delivery::Pen);
            parsed
                .rows
                .push(InsulinBolus::of(ts, units, kind, None, pen, device))
        }
        (Marker::Meal, Some(grams)) => parsed.rows.push(CarbEntry {
            ts,
            grams,
            device: device.into(),
        }),
        (Marker::BloodGlucose, Some(v)) => {
            let unit = parsed.unit.unwrap_or(Unit::MgDl);
            match Glucose::of_number(v, unit) {
                Some(g) => parsed
                    .rows
                    .push(GlucoseCheck::of(ts, g, Method::Fingerstick, device)),
                None => parsed.unparsed(GlucoseCheck::TABLE, "Event Marker", text),
            }
        }
        (Marker::Exercise, minutes) => {
            let what = "Exercise (event marker)";
            let detail = Some(text.to_string());
            parsed
                .rows
                .push(DeviceEvent::of(ts, what, detail, minutes, device))
        }
        (Marker::Insulin, None) => parsed.unparsed(InsulinBolus::TABLE, "Event Marker", text),
        (Marker::Meal, None) => parsed.unparsed(CarbEntry::TABLE, "Event Marker", text),
        (Marker::BloodGlucose, None) => parsed.unparsed(GlucoseCheck::TABLE, "Event Marker", text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guardian_connect_event_markers_become_pen_doses_and_meals() {
        let text = "Last Name;First Name;Patient ID;System ID;Start Date;End Date;Device;Guardian Connect\n\
            \"Erika\";\"Muster\";\"\";\"\";\"01.05.2021 00:00:00\";\"25.07.2021 23:59:59\";\"Serial Number\";GC-1\n\
            \n\
            Device data shown may exceed selected date range.\n\
            \n\
            -------;Guardian Connect;Pump;GC-1;------- \n\
            Index;Date;Time;New Device Time;BG Reading (mg/dL);Sensor Glucose (mg/dL);Event Marker;Alarm\n\
            0,0;2021/07/25;09:35:28;;;;Insulin: 27,00;\n\
            1,00000;2021/07/25;09:05:09;;;;Meal: 45,00grams;\n\
            2,00000;2021/07/25;08:52:53;;70;;;\n\
            3,00000;2021/07/25;08:47:53;;;;;CAL NOW\n\
            4,00000;2021/07/25;08:45:00;;;112;;\n";
        assert!(CareLink.detect(&Head::new(text, "csv")));
        let parsed = CareLink.read(&mut text.as_bytes()).unwrap();
        assert_eq!(parsed.rows.boluses.len(), 1);
        assert_eq!(parsed.rows.boluses[0].units, 27.0);
        assert_eq!(parsed.rows.boluses[0].delivery, Some(Delivery::Pen));
        assert_eq!(parsed.rows.carbs[0].grams, 45.0);
        assert_eq!(parsed.rows.checks[0].glucose_mg_dl, 70);
        assert_eq!(parsed.rows.cgm[0].glucose_mg_dl, 112);
        assert_eq!(parsed.rows.events[0].detail.as_deref(), Some("CAL NOW"));
        assert_eq!(parsed.rows.cgm[0].device, "Guardian Connect");
        assert!(!format!("{parsed:?}").contains("Erika"));
        assert!(!format!("{parsed:?}").contains("GC-1"));
    }
}
