//! Apple Health's `export.xml`: its blood-glucose, insulin-delivery and carbohydrate records.
//!
//! The file is often gigabytes of records `import` does not want (steps, heart rate), so it is
//! scanned once, tag by tag, keeping a few attributes of the records it wants. It never keeps
//! `sourceName` (usually "Jane's iPhone") nor the `device` text beyond its manufacturer and
//! model, nor the `<Me>` element (date of birth, sex).
//!
//! **Memory is bounded whatever the file holds.** The scanner reads through a 64 KiB buffer and
//! stores at most [`MAX_TAG_BYTES`] of one tag: a longer tag (an attribute of any size, a
//! DOCTYPE that never closes) is scanned to its end without being stored, and counted; text
//! between tags and comments are never stored. What grows with the file is only the rows kept
//! (a glucose, insulin or carbohydrate record each). Entities are never expanded beyond XML's
//! five and character references, and no external entity is ever read.
//!
//! Times are written with the device's offset (`2026-11-01 08:00:00 +0100`): the wall-clock part
//! is the device's local time. A glucose record from a CGM maker's app is a CGM reading, any
//! other a meter reading. Insulin's `HKInsulinDeliveryReason` is 1 for basal, 2 for bolus.
//!
//! Pure code over bytes anyone can shape; the fuzz target `import_apple_health` drives it.

use std::io::{BufRead, BufReader, Read};

use super::error::{ErrorKind, ImportError};
use super::rows::{
    BasalRate, CarbEntry, CgmReading, GlucoseCheck, InsulinBolus, LongActingDose, Method, Row, When,
};
use super::time::{self, DateOrder, LocalTime};
use super::values::{Glucose, Unit, number};
use super::vendor::{Head, Parsed, Vendor};
use crate::clinical::{DEXCOM, LIBRE, MEDTRONIC, METER, SensorRange};

/// Apple Health.
pub struct AppleHealth;

const LABEL: &str = "Apple Health export.xml";

/// The most of one tag the scanner stores: a record's tag is under 2 KiB, its longest (a
/// `device` description) a few hundred bytes.
pub const MAX_TAG_BYTES: usize = 64 * 1024;
/// The scanner's read buffer.
const READ_BUFFER_BYTES: usize = 64 * 1024;

const GLUCOSE: &str = "HKQuantityTypeIdentifierBloodGlucose";
const INSULIN: &str = "HKQuantityTypeIdentifierInsulinDelivery";
const CARBS: &str = "HKQuantityTypeIdentifierDietaryCarbohydrates";

/// One tag as the scanner found it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Scanned {
    /// A tag of at most [`MAX_TAG_BYTES`]: its bytes between `<` and `>`.
    Tag(Vec<u8>),
    /// A longer one: its first bytes (enough for its name) and its length.
    TooLong(Vec<u8>, u64),
}

/// The tags of an XML stream, in order, within bounded memory (see the module's doc).
struct Tags<R> {
    input: BufReader<R>,
}

impl<R: Read> Tags<R> {
    fn new(input: R) -> Tags<R> {
        Tags {
            input: BufReader::with_capacity(READ_BUFFER_BYTES, input),
        }
    }

    /// Skip to just after the next `<`; false at the end of the input.
    fn skip_to_tag(&mut self) -> std::io::Result<bool> {
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(false);
            }
            match buf.iter().position(|b| *b == b'<') {
                Some(at) => {
                    self.input.consume(at + 1);
                    return Ok(true);
                }
                None => {
                    let n = buf.len();
                    self.input.consume(n);
                }
            }
        }
    }

    /// The next tag, or `None` at the end of the input (a tag the input ends inside is dropped).
    fn next_tag(&mut self) -> std::io::Result<Option<Scanned>> {
        if !self.skip_to_tag()? {
            return Ok(None);
        }
        let mut kept: Vec<u8> = Vec::new();
        let mut length: u64 = 0;
        let mut quote: Option<u8> = None;
        // Inside a DOCTYPE's internal subset (or a CDATA section), `[` … `]` nest.
        let mut depth: u32 = 0;
        let mut comment = false;
        let mut last_two = [0u8; 2];
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let mut used = 0;
            let mut ended = false;
            for &b in buf {
                used += 1;
                let closes = if comment {
                    b == b'>' && last_two == [b'-', b'-'] && length >= 5
                } else if depth > 0 {
                    match b {
                        b'[' => depth += 1,
                        b']' => depth -= 1,
                        _ => {}
                    }
                    false
                } else {
                    match (quote, b) {
                        (Some(q), _) if b == q => {
                            quote = None;
                            false
                        }
                        (Some(_), _) => false,
                        (None, b'"' | b'\'') => {
                            quote = Some(b);
                            false
                        }
                        (None, b'[') => {
                            depth += 1;
                            false
                        }
                        (None, b'>') => true,
                        (None, _) => false,
                    }
                };
                if closes {
                    ended = true;
                    break;
                }
                last_two = [last_two[1], b];
                length += 1;
                if kept.len() < MAX_TAG_BYTES {
                    kept.push(b);
                    if kept.len() == 3 && kept == b"!--" {
                        comment = true;
                    }
                }
            }
            self.input.consume(used);
            if ended {
                return Ok(Some(if length > MAX_TAG_BYTES as u64 {
                    kept.truncate(64);
                    Scanned::TooLong(kept, length)
                } else {
                    Scanned::Tag(kept)
                }));
            }
        }
    }
}

/// A start or end tag's name and attributes.
struct Element {
    /// Its name; `/Record` for an end tag.
    name: String,
    /// The tag's text after its name (attributes), still escaped.
    attributes: String,
    /// `<x … />`.
    self_closing: bool,
}

impl Element {
    fn of(tag: &[u8]) -> Option<Element> {
        if tag.first().is_some_and(|b| *b == b'?' || *b == b'!') {
            return None;
        }
        let text = String::from_utf8_lossy(tag);
        let self_closing = text.ends_with('/');
        let text = text.trim_end_matches('/');
        let (name, attributes) = match text.find(char::is_whitespace) {
            Some(at) => (&text[..at], &text[at..]),
            None => (text, ""),
        };
        Some(Element {
            name: name.to_string(),
            attributes: attributes.to_string(),
            self_closing,
        })
    }

    /// The unescaped value of attribute `key`.
    fn attribute(&self, key: &str) -> Option<String> {
        let mut rest = self.attributes.as_str();
        while let Some(eq) = rest.find('=') {
            let name = rest[..eq].trim();
            let after = rest[eq + 1..].trim_start();
            let quote = after.chars().next()?;
            if quote != '"' && quote != '\'' {
                return None;
            }
            let end = after[1..].find(quote)? + 1;
            if name == key {
                return Some(unescape(&after[1..end]));
            }
            rest = &after[end + 1..];
        }
        None
    }
}

/// XML's five entities and numeric character references; anything else is left as written.
fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let Some(semi) = after.find(';').filter(|s| *s <= 12) else {
            out.push('&');
            rest = &after[1..];
            continue;
        };
        let entity = &after[1..semi];
        let decoded = match entity {
            "lt" => Some('<'),
            "gt" => Some('>'),
            "amp" => Some('&'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|d| d.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => out.push(c),
            None => out.push_str(&after[..=semi]),
        }
        rest = &after[semi + 1..];
    }
    out.push_str(rest);
    out
}

/// The manufacturer and model of Apple's device description (`<<HKDevice: 0x…>, name:Jane's
/// iPhone, manufacturer:Dexcom, model:G7, …>`): the name, which people set to their own, is
/// left out.
fn device_kind(description: &str) -> String {
    let field = |key: &str| {
        description.split(", ").find_map(|part| {
            part.trim_start_matches('<')
                .strip_prefix(key)
                .map(|v| v.trim_end_matches('>').trim().to_string())
        })
    };
    match (field("manufacturer:"), field("model:")) {
        (Some(m), Some(model)) => format!("{m} {model}"),
        (Some(m), None) => m,
        (None, Some(model)) => model,
        (None, None) => String::new(),
    }
}

/// The CGM maker's range a device kind names, if it names a CGM maker.
fn cgm_range(device: &str) -> Option<SensorRange> {
    let lower = device.to_lowercase();
    if lower.contains("dexcom") || lower.contains("eversense") {
        Some(DEXCOM)
    } else if lower.contains("abbott") || lower.contains("libre") {
        Some(LIBRE)
    } else if lower.contains("medtronic") || lower.contains("guardian") {
        Some(MEDTRONIC)
    } else {
        None
    }
}

/// The wall-clock part of Apple's `2026-11-01 08:00:00 +0100`.
fn local(text: &str) -> Option<LocalTime> {
    time::parse(text.get(..19)?, DateOrder::YearMonthDay)
}

/// A record being read, waiting for its metadata until `</Record>`.
struct Open {
    kind: &'static str,
    unit: String,
    value: String,
    start: String,
    end: String,
    device: String,
    insulin_reason: Option<String>,
}

impl Vendor for AppleHealth {
    fn label(&self) -> &'static str {
        LABEL
    }

    fn detect(&self, head: &Head<'_>) -> bool {
        head.start().starts_with('<')
            && (head.text.contains("<HealthData") || head.text.contains("<!DOCTYPE HealthData"))
    }

    fn read(&self, input: &mut dyn Read) -> Result<Parsed, ImportError> {
        let mut parsed = Parsed {
            left_out: vec![
                "sourceName and device names (often the owner's name): only the manufacturer \
                 and model are kept"
                    .into(),
                "the <Me> element (date of birth, sex) and every other record type".into(),
            ],
            ..Parsed::default()
        };
        let mut tags = Tags::new(input);
        let mut open: Option<Open> = None;
        let mut other_records = 0u64;
        let mut too_long = 0u64;
        let broken = |e: std::io::Error| {
            ImportError::new(ErrorKind::BrokenXml, format!("cannot read it: {e}"))
        };
        while let Some(scanned) = tags.next_tag().map_err(broken)? {
            let tag = match scanned {
                Scanned::Tag(tag) => tag,
                Scanned::TooLong(start, _) => {
                    if start.starts_with(b"Record") {
                        too_long += 1;
                    }
                    continue;
                }
            };
            let Some(element) = Element::of(&tag) else {
                continue;
            };
            match element.name.as_str() {
                "Record" => {
                    if let Some(done) = open.take() {
                        keep(&mut parsed, done);
                    }
                    let kind = match element.attribute("type").as_deref() {
                        Some(GLUCOSE) => GLUCOSE,
                        Some(INSULIN) => INSULIN,
                        Some(CARBS) => CARBS,
                        _ => {
                            other_records += 1;
                            continue;
                        }
                    };
                    let record = Open {
                        kind,
                        unit: element.attribute("unit").unwrap_or_default(),
                        value: element.attribute("value").unwrap_or_default(),
                        start: element.attribute("startDate").unwrap_or_default(),
                        end: element.attribute("endDate").unwrap_or_default(),
                        device: element
                            .attribute("device")
                            .map(|d| device_kind(&d))
                            .unwrap_or_default(),
                        insulin_reason: None,
                    };
                    if element.self_closing {
                        keep(&mut parsed, record);
                    } else {
                        open = Some(record);
                    }
                }
                "MetadataEntry" => {
                    if let Some(record) = open.as_mut()
                        && element.attribute("key").as_deref() == Some("HKInsulinDeliveryReason")
                    {
                        record.insulin_reason = element.attribute("value");
                    }
                }
                "/Record" => {
                    if let Some(done) = open.take() {
                        keep(&mut parsed, done);
                    }
                }
                _ => {}
            }
        }
        if let Some(done) = open.take() {
            keep(&mut parsed, done);
        }
        if too_long > 0 {
            parsed.notes.push(format!(
                "{too_long} record tags longer than {} KiB were skipped unread",
                MAX_TAG_BYTES / 1024
            ));
        }
        if parsed.rows.is_empty() && parsed.unparsed.is_empty() {
            return Err(ImportError::new(
                ErrorKind::NoRecords,
                format!(
                    "no blood glucose, insulin or carbohydrate records among its {other_records} \
                     records"
                ),
            ));
        }
        Ok(parsed)
    }
}

/// A record as the typed row it is.
fn keep(parsed: &mut Parsed, record: Open) {
    let device = if record.device.is_empty() {
        "Apple Health".to_string()
    } else {
        record.device.clone()
    };
    let table = match record.kind {
        GLUCOSE if cgm_range(&device).is_some() => CgmReading::TABLE,
        GLUCOSE => GlucoseCheck::TABLE,
        CARBS => CarbEntry::TABLE,
        _ => InsulinBolus::TABLE,
    };
    let Some(start) = local(&record.start) else {
        parsed.unparsed(table, "startDate", &record.start);
        return;
    };
    let ts = When::Local(start);
    match record.kind {
        GLUCOSE => {
            let unit = Unit::named_in(&record.unit).unwrap_or(Unit::MgDl);
            let range = cgm_range(&device);
            match Glucose::read(&record.value, unit, range.unwrap_or(METER)) {
                Some(g) if range.is_some() => parsed.rows.push(CgmReading::of(ts, g, &device)),
                Some(g) => parsed
                    .rows
                    .push(GlucoseCheck::of(ts, g, Method::Fingerstick, &device)),
                None => parsed.unparsed(table, "value", &record.value),
            }
        }
        CARBS => match number(&record.value) {
            Some(grams) => parsed.rows.push(CarbEntry { ts, grams, device }),
            None => parsed.unparsed(table, "value", &record.value),
        },
        _ => {
            let Some(units) = number(&record.value) else {
                parsed.unparsed(table, "value", &record.value);
                return;
            };
            let span = local(&record.end)
                .map(|end| (end.micros() - start.micros()) as f64 / 60_000_000.0)
                .filter(|m| *m > 0.0);
            match (record.insulin_reason.as_deref().map(str::trim), span) {
                (Some("1"), Some(minutes)) => parsed.rows.push(BasalRate {
                    ts,
                    rate_u_per_h: Some(units / (minutes / 60.0)),
                    duration_minutes: Some(minutes),
                    basal_type: Some("delivered".into()),
                    device,
                }),
                (Some("1"), None) => parsed.rows.push(LongActingDose { ts, units, device }),
                (_, span) => {
                    let kind = Some("bolus".to_string());
                    parsed
                        .rows
                        .push(InsulinBolus::of(ts, units, kind, span, None, &device))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXPORT: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE HealthData [\n\
        <!-- HealthKit Export Version: 13 -->\n<!ELEMENT HealthData (Record)*>\n]>\n\
        <HealthData locale=\"en_US\">\n <!-- Erika's export > notes -->\n\
        <ExportDate value=\"2026-11-27 10:00:00 +0100\"/>\n\
        <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1980-04-01\"/>\n\
        <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Erika&apos;s iPhone\" unit=\"count\" value=\"12\"/>\n\
        <Record type=\"HKQuantityTypeIdentifierBloodGlucose\" sourceName=\"Erika&apos;s iPhone\" device=\"&lt;&lt;HKDevice: 0x1&gt;, name:Erika&apos;s CGM, manufacturer:Dexcom, model:G7&gt;\" unit=\"mg/dL\" startDate=\"2026-11-01 08:00:00 +0100\" endDate=\"2026-11-01 08:00:00 +0100\" value=\"123\"/>\n\
        <Record type=\"HKQuantityTypeIdentifierInsulinDelivery\" unit=\"IU\" startDate=\"2026-11-01 08:10:00 +0100\" endDate=\"2026-11-01 08:10:00 +0100\" value=\"4.5\">\n\
         <MetadataEntry key=\"HKInsulinDeliveryReason\" value=\"2\"/>\n </Record>\n</HealthData>\n";

    #[test]
    fn glucose_and_insulin_records_are_kept_without_the_owner_s_name() {
        let parsed = AppleHealth.read(&mut EXPORT.as_bytes()).unwrap();
        assert_eq!(parsed.rows.cgm.len(), 1);
        assert_eq!(parsed.rows.cgm[0].device, "Dexcom G7");
        assert_eq!(parsed.rows.boluses[0].units, 4.5);
        let all = format!("{parsed:?}");
        assert!(!all.contains("Erika") && !all.contains("1980"), "{all}");
    }

    #[test]
    fn a_huge_attribute_is_skipped_unstored_and_the_rest_still_read() {
        let huge = "x".repeat(3 * MAX_TAG_BYTES);
        let text = EXPORT.replace(
            "<Record type=\"HKQuantityTypeIdentifierStepCount\"",
            &format!(
                "<Record type=\"{GLUCOSE}\" value=\"{huge}\"/>\n<Record type=\"HKQuantityTypeIdentifierStepCount\""
            ),
        );
        let parsed = AppleHealth.read(&mut text.as_bytes()).unwrap();
        assert_eq!(parsed.rows.cgm.len(), 1);
        assert!(
            parsed.notes[0].contains("1 record tags longer than 64 KiB"),
            "{:?}",
            parsed.notes
        );
        let mut tags = Tags::new(text.as_bytes());
        while let Some(tag) = tags.next_tag().unwrap() {
            let (Scanned::Tag(kept) | Scanned::TooLong(kept, _)) = tag;
            assert!(kept.len() <= MAX_TAG_BYTES);
        }
    }

    #[test]
    fn an_unclosed_doctype_ends_the_scan_without_storing_it() {
        let text = format!(
            "<?xml version=\"1.0\"?><!DOCTYPE HealthData [ {}",
            "<!ELEMENT x>".repeat(20_000)
        );
        let mut tags = Tags::new(text.as_bytes());
        assert_eq!(
            tags.next_tag()
                .unwrap()
                .map(|t| matches!(t, Scanned::Tag(_))),
            Some(true)
        );
        assert_eq!(tags.next_tag().unwrap(), None);
        let error = AppleHealth.read(&mut text.as_bytes()).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::NoRecords);
    }
}
