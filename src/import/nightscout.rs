//! Nightscout's `entries` and `treatments`, as its API returns them (a JSON array, or one JSON
//! object per line).
//!
//! Every record is an instant: `date` in epoch milliseconds, or an ISO 8601 string (`dateString`,
//! `created_at`) in UTC or with an offset. The uploaders also write `utcOffset`, and Loop and
//! Tomato write 0 there whatever the phone's zone, so it is never used to place a time: the
//! import places every instant in the person's zone (`--time-zone`, with its daylight-saving
//! rules) and only counts the records whose `utcOffset` disagrees, for the summary. Nightscout
//! itself shows times in the profile's or the browser's zone, never by `utcOffset`.
//!
//! `entries`: `sgv` readings in mg/dL (Nightscout stores mg/dL whatever it shows; below 39 an
//! `sgv` is a sensor error code, 39 is how Dexcom's uploaders send Low, above 400 High), `mbg`
//! finger sticks. `treatments`: an `eventType` and what it carries (`insulin`, `carbs`, a temp
//! basal's `absolute` rate and `duration`, a BG check's `glucose` in `units`, `notes`).
//! `enteredBy` (who entered it) and the uploader's `device` text beyond a sensor family are
//! never kept: they hold people's and phones' names.
//!
//! Pure code over bytes anyone can shape; the fuzz target `import_nightscout` drives it.

use std::io::Read;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::error::{ErrorKind, ImportError};
use super::rows::{
    BasalRate, CarbEntry, CgmReading, DeviceEvent, GlucoseCheck, InsulinBolus, Method, Row, When,
};
use super::time::instant_ms;
use super::values::{Glucose, OutOfRange, Unit, number};
use super::vendor::{Head, Parsed, Vendor};
use crate::clinical::METER;

/// Nightscout's `entries`.
pub struct NightscoutEntries;
/// Nightscout's `treatments`.
pub struct NightscoutTreatments;

const ENTRIES: &str = "Nightscout entries JSON";
const TREATMENTS: &str = "Nightscout treatments JSON";

/// A JSON value read loosely: uploaders write numbers as strings and strings as numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Scalar {
    /// Not in the record.
    #[default]
    Missing,
    /// `null`.
    Null,
    /// A number.
    Number(f64),
    /// A string.
    Text(String),
    /// `true`, `false`, an array or an object: nothing this reads.
    Other,
}

impl Scalar {
    /// As a number, from a number or a numeric string.
    pub fn number(&self) -> Option<f64> {
        match self {
            Scalar::Number(n) => Some(*n).filter(|n| n.is_finite()),
            Scalar::Text(t) => number(t),
            Scalar::Missing | Scalar::Null | Scalar::Other => None,
        }
    }

    /// As text, from a string or a number.
    pub fn text(&self) -> Option<String> {
        match self {
            Scalar::Text(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
            Scalar::Number(n) => Some(n.to_string()),
            Scalar::Text(_) | Scalar::Missing | Scalar::Null | Scalar::Other => None,
        }
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Scalar, D::Error> {
        struct Loose;
        impl<'de> Visitor<'de> for Loose {
            type Value = Scalar;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_bool<E>(self, _: bool) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_i64<E>(self, v: i64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v as f64))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v as f64))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Scalar, E> {
                Ok(Scalar::Number(v))
            }
            fn visit_str<E>(self, v: &str) -> Result<Scalar, E> {
                Ok(Scalar::Text(v.to_string()))
            }
            fn visit_unit<E>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
            fn visit_none<E>(self) -> Result<Scalar, E> {
                Ok(Scalar::Null)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        deserializer.deserialize_any(Loose)
    }
}

/// The fields of an `entries` record this reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Entry {
    #[serde(rename = "type")]
    kind: Scalar,
    sgv: Scalar,
    mbg: Scalar,
    date: Scalar,
    #[serde(rename = "dateString")]
    date_string: Scalar,
    #[serde(rename = "sysTime")]
    sys_time: Scalar,
    device: Scalar,
    #[serde(rename = "utcOffset")]
    utc_offset: Scalar,
}

/// The fields of a `treatments` record this reads.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Treatment {
    #[serde(rename = "eventType")]
    event_type: Scalar,
    created_at: Scalar,
    timestamp: Scalar,
    date: Scalar,
    mills: Scalar,
    #[serde(rename = "utcOffset")]
    utc_offset: Scalar,
    insulin: Scalar,
    carbs: Scalar,
    duration: Scalar,
    absolute: Scalar,
    rate: Scalar,
    glucose: Scalar,
    units: Scalar,
    notes: Scalar,
}

/// One element of the array: a record, or something that is not an object.
enum Element<T> {
    Record(T),
    NotARecord,
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Element<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Element<T>, D::Error> {
        struct Any<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Any<T> {
            type Value = Element<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a Nightscout record")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Element<T>, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Element::Record)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Element<T>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Element::NotARecord)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Element<T>, E> {
                Ok(Element::NotARecord)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Element<T>, E> {
                Ok(Element::NotARecord)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Element<T>, E> {
                Ok(Element::NotARecord)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Element<T>, E> {
                Ok(Element::NotARecord)
            }
            fn visit_str<E>(self, _: &str) -> Result<Element<T>, E> {
                Ok(Element::NotARecord)
            }
            fn visit_unit<E>(self) -> Result<Element<T>, E> {
                Ok(Element::NotARecord)
            }
        }
        deserializer.deserialize_any(Any(std::marker::PhantomData))
    }
}

/// Call `each` with every record of a JSON array (streamed: the array is never held whole) or of
/// one object per line; returns how many elements were not records.
fn each_record<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
    mut each: impl FnMut(T),
) -> Result<u64, ImportError> {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let mut skipped = 0u64;
    let broken = |e: serde_json::Error| {
        ImportError::new(
            ErrorKind::BrokenJson,
            format!(
                "it is not valid JSON: {} (line {}, column {})",
                e.to_string().split(" at line ").next().unwrap_or(""),
                e.line(),
                e.column()
            ),
        )
    };
    if bytes.get(start) == Some(&b'[') {
        struct Array<'f, T, F: FnMut(T)>(&'f mut F, &'f mut u64, std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>, F: FnMut(T)> Visitor<'de> for Array<'_, T, F> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of Nightscout records")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while let Some(element) = seq.next_element::<Element<T>>()? {
                    match element {
                        Element::Record(record) => (*self.0)(record),
                        Element::NotARecord => *self.1 += 1,
                    }
                }
                Ok(())
            }
        }
        let mut de = serde_json::Deserializer::from_slice(bytes);
        (&mut de)
            .deserialize_seq(Array(&mut each, &mut skipped, std::marker::PhantomData))
            .map_err(broken)?;
        de.end().map_err(broken)?;
    } else {
        for element in serde_json::Deserializer::from_slice(bytes).into_iter::<Element<T>>() {
            match element.map_err(broken)? {
                Element::Record(record) => each(record),
                Element::NotARecord => skipped += 1,
            }
        }
    }
    Ok(skipped)
}

/// A record's instant from an epoch-milliseconds number (seconds, when it is too small to be
/// milliseconds) or an ISO 8601 string.
fn instant(epoch: &[&Scalar], iso: &[&Scalar]) -> Option<i64> {
    for value in epoch {
        if let Some(n) = value.number() {
            let ms = if n.abs() < 1e11 { n * 1000.0 } else { n };
            if (0.0..4.1e12).contains(&ms) {
                return Some(ms as i64);
            }
        }
        if let Scalar::Text(text) = value
            && let Some(ms) = instant_ms(text)
        {
            return Some(ms);
        }
    }
    iso.iter()
        .filter_map(|v| match v {
            Scalar::Text(text) => instant_ms(text),
            _ => None,
        })
        .next()
}

fn when(utc_ms: i64, offset: &Scalar) -> When {
    When::Instant {
        utc_ms,
        utc_offset_minutes: offset
            .number()
            .filter(|m| m.abs() <= 24.0 * 60.0)
            .map(|m| m as i32),
    }
}

/// A Nightscout `device` as a device kind: the uploader's free text (`xDrip-DexcomG6`,
/// `loop://Jane's iPhone`) can carry a person's name, so only a known sensor family is kept.
pub fn device_kind(device: &str) -> &'static str {
    if let Some(dexcom) = super::clarity::dexcom_device(device) {
        return dexcom;
    }
    let lower = device.to_lowercase();
    let has = |needle: &str| lower.contains(needle);
    let families: [(&[&str], &'static str); 7] = [
        (&["dexcom", "share"], "Dexcom"),
        (&["libre3", "libre 3"], "FreeStyle Libre 3"),
        (&["libre2", "libre 2"], "FreeStyle Libre 2"),
        (&["libre"], "FreeStyle Libre"),
        (&["medtronic", "minimed", "guardian"], "Medtronic"),
        (&["tomato"], "CGM (via Tomato)"),
        (&["loop"], "CGM (via Loop)"),
    ];
    families
        .iter()
        .find(|(needles, _)| needles.iter().any(|n| has(n)))
        .map_or("CGM (via Nightscout)", |(_, kind)| kind)
}

fn looks_like(head: &Head<'_>, keys: &[&str]) -> bool {
    let start = head.start();
    if !(start.starts_with('[') || start.starts_with('{')) {
        return false;
    }
    let compact: String = head.text.chars().filter(|c| !c.is_whitespace()).collect();
    keys.iter().any(|key| compact.contains(key))
}

/// The file's rows, saying how many array elements were not records.
fn finish(mut parsed: Parsed, skipped: u64, label: &str) -> Result<Parsed, ImportError> {
    if skipped > 0 {
        parsed.notes.push(format!(
            "{skipped} array elements that are not records were skipped"
        ));
    }
    parsed.or_no_records(label)
}

fn read_all(input: &mut dyn Read) -> Result<Vec<u8>, ImportError> {
    let mut bytes = Vec::new();
    input
        .read_to_end(&mut bytes)
        .map_err(ImportError::unreadable)?;
    Ok(bytes)
}

impl Vendor for NightscoutEntries {
    fn label(&self) -> &'static str {
        ENTRIES
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        !looks_like(head, &["\"eventType\":"])
            && looks_like(head, &["\"sgv\":", "\"type\":\"sgv\"", "\"type\":\"mbg\""])
    }

    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError> {
        let bytes = read_all(input)?;
        let mut parsed = Parsed {
            unit: Some(Unit::MgDl),
            left_out: vec![
                "uploader and phone names in `device` (only the sensor family is kept)".into(),
                "raw sensor values (filtered, unfiltered, noise, rssi) and calibration records"
                    .into(),
            ],
            ..Parsed::default()
        };
        let skipped = each_record(&bytes, |entry: Entry| {
            let kind = entry.kind.text().unwrap_or_else(|| "sgv".into());
            let device = device_kind(&entry.device.text().unwrap_or_default());
            let dexcom = device.starts_with("Dexcom");
            let utc = instant(&[&entry.date], &[&entry.date_string, &entry.sys_time]);
            match kind.as_str() {
                "sgv" if entry.sgv != Scalar::Missing => {
                    let Some(utc_ms) = utc else {
                        parsed.unparsed(
                            CgmReading::TABLE,
                            "date",
                            &entry.date_string.text().unwrap_or_default(),
                        );
                        return;
                    };
                    match entry.sgv.number().filter(|v| *v >= 39.0 && *v <= 1000.0) {
                        Some(v) => {
                            let out_of_range = if !dexcom {
                                None
                            } else if v < 40.0 {
                                Some(OutOfRange::Low)
                            } else if v > 400.0 {
                                Some(OutOfRange::High)
                            } else {
                                None
                            };
                            parsed.rows.push(CgmReading {
                                ts: when(utc_ms, &entry.utc_offset),
                                glucose_mg_dl: v.round() as i32,
                                out_of_range,
                                source_value: Some(v),
                                source_unit: Unit::MgDl,
                                device: device.into(),
                            });
                        }
                        None => parsed.unparsed(
                            CgmReading::TABLE,
                            "sgv (below 39: a sensor error code)",
                            &entry.sgv.text().unwrap_or_default(),
                        ),
                    }
                }
                "mbg" if entry.mbg != Scalar::Missing => {
                    let Some(utc_ms) = utc else {
                        parsed.unparsed(GlucoseCheck::TABLE, "date", "");
                        return;
                    };
                    let text = entry.mbg.text().unwrap_or_default();
                    match Glucose::read(&text, Unit::MgDl, METER) {
                        Some(g) => parsed.rows.push(GlucoseCheck::of(
                            when(utc_ms, &entry.utc_offset),
                            g,
                            Method::Fingerstick,
                            device,
                        )),
                        None => parsed.unparsed(GlucoseCheck::TABLE, "mbg", &text),
                    }
                }
                _ => {}
            }
        })?;
        finish(parsed, skipped, ENTRIES)
    }
}

impl Vendor for NightscoutTreatments {
    fn label(&self) -> &'static str {
        TREATMENTS
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        looks_like(head, &["\"eventType\":"])
    }

    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError> {
        let bytes = read_all(input)?;
        let mut parsed = Parsed {
            left_out: vec!["enteredBy (who entered each treatment)".into()],
            ..Parsed::default()
        };
        let device = "Nightscout";
        let skipped = each_record(&bytes, |t: Treatment| {
            let event = t.event_type.text();
            let Some(utc_ms) = instant(
                &[&t.date, &t.mills, &t.timestamp],
                &[&t.created_at, &t.timestamp],
            ) else {
                let table = if t.insulin.number().is_some() {
                    InsulinBolus::TABLE
                } else if t.carbs.number().is_some() {
                    CarbEntry::TABLE
                } else {
                    DeviceEvent::TABLE
                };
                parsed.unparsed(
                    table,
                    "created_at",
                    &t.created_at.text().unwrap_or_default(),
                );
                return;
            };
            let ts = when(utc_ms, &t.utc_offset);
            let insulin = t.insulin.number().filter(|u| *u > 0.0);
            let carbs = t.carbs.number().filter(|g| *g > 0.0);
            if let Some(units) = insulin {
                let kind = Some(event.clone().unwrap_or_else(|| "Bolus".into()));
                let extended = (event.as_deref() == Some("Combo Bolus"))
                    .then(|| t.duration.number())
                    .flatten();
                parsed
                    .rows
                    .push(InsulinBolus::of(ts, units, kind, extended, None, device));
            }
            if let Some(grams) = carbs {
                parsed.rows.push(CarbEntry {
                    ts,
                    grams,
                    device: device.into(),
                });
            }
            match event.as_deref() {
                Some("Temp Basal") => parsed.rows.push(BasalRate {
                    ts,
                    rate_u_per_h: t.absolute.number().or_else(|| t.rate.number()),
                    duration_minutes: t.duration.number(),
                    basal_type: Some("temp".into()),
                    device: device.into(),
                }),
                Some("BG Check") => {
                    let unit = match t.units.text() {
                        Some(u) if u.to_lowercase().starts_with("mmol") => Unit::MmolL,
                        _ => Unit::MgDl,
                    };
                    let text = t.glucose.text().unwrap_or_default();
                    if !text.is_empty() {
                        match Glucose::read(&text, unit, METER) {
                            Some(g) => parsed.rows.push(GlucoseCheck::of(
                                ts,
                                g,
                                Method::Fingerstick,
                                device,
                            )),
                            None => parsed.unparsed(GlucoseCheck::TABLE, "glucose", &text),
                        }
                    }
                }
                Some(event) if insulin.is_none() && carbs.is_none() => {
                    let lasted = t.duration.number().filter(|m| *m > 0.0);
                    parsed
                        .rows
                        .push(DeviceEvent::of(ts, event, t.notes.text(), lasted, device))
                }
                Some(_) | None => {}
            }
        })?;
        finish(parsed, skipped, TREATMENTS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_treatments_keep_their_instant_and_their_offset_only_for_the_cross_check() {
        let json = br#"[{"eventType":"Correction Bolus","insulin":"1.5","created_at":"2026-06-01T22:28:00Z","utcOffset":0,"enteredBy":"loop://Erika's iPhone"},
            {"eventType":"Site Change","created_at":"2026-06-01T23:00:00.000Z","notes":"belly"}, 7]"#;
        let parsed = NightscoutTreatments.read(&mut &json[..]).unwrap();
        assert_eq!(parsed.rows.boluses.len(), 1);
        assert_eq!(
            parsed.rows.boluses[0].ts,
            When::Instant {
                utc_ms: instant_ms("2026-06-01T22:28:00Z").unwrap(),
                utc_offset_minutes: Some(0)
            }
        );
        assert_eq!(parsed.rows.events[0].detail.as_deref(), Some("belly"));
        assert_eq!(parsed.notes.len(), 1);
        assert!(!format!("{parsed:?}").contains("Erika"));
    }

    #[test]
    fn entries_as_lines_and_broken_json() {
        let lines = b"{\"sgv\":120,\"date\":1780000000000,\"type\":\"sgv\",\"device\":\"xDrip-DexcomG6\"}\n{\"sgv\":5,\"date\":1780000300000,\"type\":\"sgv\"}\n";
        let parsed = NightscoutEntries.read(&mut &lines[..]).unwrap();
        assert_eq!(parsed.rows.cgm.len(), 1);
        assert_eq!(parsed.rows.cgm[0].device, "Dexcom G6");
        assert_eq!(parsed.unparsed.values().map(|u| u.count).sum::<u64>(), 1);
        let error = NightscoutEntries
            .read(&mut &b"[{\"sgv\": 120,"[..])
            .unwrap_err();
        assert_eq!(error.kind(), ErrorKind::BrokenJson);
    }
}
