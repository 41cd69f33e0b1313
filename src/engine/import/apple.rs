//! Apple Health's `export.xml`: the blood-glucose, insulin-delivery and carbohydrate records,
//! copied into a CSV that DuckDB then types like any other export.
//!
//! DuckDB reads no XML, and the file is often gigabytes of records `import` does not want
//! (steps, heart rate), so this scans it once, element by element, and keeps the few
//! attributes it needs. It never keeps `sourceName` (usually "Jane's iPhone") nor the
//! `device` text beyond its manufacturer and model, nor the `<Me>` element (date of birth, sex).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

/// The record types kept.
const GLUCOSE: &str = "HKQuantityTypeIdentifierBloodGlucose";
const INSULIN: &str = "HKQuantityTypeIdentifierInsulinDelivery";
const CARBS: &str = "HKQuantityTypeIdentifierDietaryCarbohydrates";

/// The header of the CSV [`extract`] writes.
pub const HEADER: &str = "type,unit,value,start,end,device,insulin_reason";

/// What [`extract`] found.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Extracted {
    /// Records kept.
    pub records: u64,
    /// Records of other types, skipped.
    pub other_records: u64,
}

/// Copy the kept records of the export at `xml` into a CSV at `csv` ([`HEADER`]'s columns).
pub fn extract(xml: &Path, csv: &Path) -> std::io::Result<Extracted> {
    let input = BufReader::with_capacity(1 << 20, std::fs::File::open(xml)?);
    let mut out = std::io::BufWriter::new(std::fs::File::create(csv)?);
    writeln!(out, "{HEADER}")?;
    let mut found = Extracted::default();
    // The record being read, waiting for its metadata children until `</Record>`.
    let mut open: Option<Vec<String>> = None;
    for element in Elements::new(input) {
        let element = element?;
        match element.name.as_str() {
            "Record" => {
                if let Some(done) = open.take() {
                    write_row(&mut out, &done)?;
                }
                let kind = element.attribute("type").unwrap_or_default();
                if ![GLUCOSE, INSULIN, CARBS].contains(&kind.as_str()) {
                    found.other_records += 1;
                    continue;
                }
                found.records += 1;
                let row = vec![
                    kind,
                    element.attribute("unit").unwrap_or_default(),
                    element.attribute("value").unwrap_or_default(),
                    element.attribute("startDate").unwrap_or_default(),
                    element.attribute("endDate").unwrap_or_default(),
                    element
                        .attribute("device")
                        .map(|d| device_kind(&d))
                        .unwrap_or_default(),
                    String::new(),
                ];
                if element.self_closing {
                    write_row(&mut out, &row)?;
                } else {
                    open = Some(row);
                }
            }
            "MetadataEntry" => {
                if let Some(row) = open.as_mut()
                    && element.attribute("key").as_deref() == Some("HKInsulinDeliveryReason")
                {
                    row[6] = element.attribute("value").unwrap_or_default();
                }
            }
            "/Record" => {
                if let Some(done) = open.take() {
                    write_row(&mut out, &done)?;
                }
            }
            _ => {}
        }
    }
    if let Some(done) = open.take() {
        write_row(&mut out, &done)?;
    }
    out.flush()?;
    Ok(found)
}

fn write_row(out: &mut impl Write, fields: &[String]) -> std::io::Result<()> {
    let quoted: Vec<String> = fields
        .iter()
        .map(|f| format!("\"{}\"", f.replace('"', "\"\"")))
        .collect();
    writeln!(out, "{}", quoted.join(","))
}

/// The manufacturer and model of Apple's device description
/// (`<<HKDevice: 0x…>, name:Jane's iPhone, manufacturer:Dexcom, model:G7, …>`): the name,
/// which people set to their own, is left out.
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

/// One start or end tag.
struct Element {
    /// Its name; `/Record` for an end tag.
    name: String,
    /// The tag's text after its name (attributes), still escaped.
    attributes: String,
    /// `<x … />`.
    self_closing: bool,
}

impl Element {
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

/// XML's five entities and numeric character references.
fn unescape(text: &str) -> String {
    if !text.contains('&') {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp..];
        let Some(semi) = after.find(';') else {
            out.push_str(after);
            return out;
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

/// The tags of an XML stream, in order: text, comments and the DOCTYPE (Apple's has an
/// internal subset) are skipped. Quotes are honoured, so a `>` inside an attribute value does
/// not end its tag.
struct Elements<R> {
    input: BufReader<R>,
    done: bool,
}

impl<R: Read> Elements<R> {
    fn new(input: BufReader<R>) -> Self {
        Elements { input, done: false }
    }

    fn next_tag(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        let mut skipped = Vec::new();
        if self.input.read_until(b'<', &mut skipped)? == 0 || skipped.last() != Some(&b'<') {
            return Ok(None);
        }
        let mut tag = Vec::new();
        let mut quote: Option<u8> = None;
        let mut depth = 0u32;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(None);
            }
            let mut used = 0;
            let mut end = false;
            for &b in buf {
                used += 1;
                match (quote, depth) {
                    // Inside the DOCTYPE's internal subset, which nests `<!ELEMENT …>`
                    // declarations (and comments whose apostrophes are not quotes).
                    (_, d) if d > 0 => {
                        if b == b'[' {
                            depth += 1;
                        } else if b == b']' {
                            depth -= 1;
                        }
                    }
                    (Some(q), _) if b == q => quote = None,
                    (Some(_), _) => {}
                    (None, _) if b == b'"' || b == b'\'' => quote = Some(b),
                    (None, _) if b == b'[' => depth += 1,
                    (None, _) if b == b'>' => {
                        end = true;
                        break;
                    }
                    (None, _) => {}
                }
                tag.push(b);
            }
            self.input.consume(used);
            if end {
                return Ok(Some(tag));
            }
        }
    }
}

impl<R: Read> Iterator for Elements<R> {
    type Item = std::io::Result<Element>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let tag = match self.next_tag() {
                Ok(Some(tag)) => tag,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            };
            if tag.first().is_some_and(|b| *b == b'?' || *b == b'!') {
                continue;
            }
            let text = String::from_utf8_lossy(&tag);
            let self_closing = text.ends_with('/');
            let text = text.trim_end_matches('/');
            let (name, attributes) = match text.find(|c: char| c.is_whitespace()) {
                Some(at) => (&text[..at], &text[at..]),
                None => (text, ""),
            };
            return Some(Ok(Element {
                name: name.to_string(),
                attributes: attributes.to_string(),
                self_closing,
            }));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glucose_and_insulin_records_are_kept_without_the_owner_s_name() {
        let dir = crate::engine::tests::TempDir::new("apple-extract");
        let xml = dir.path().join("export.xml");
        std::fs::write(
            &xml,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE HealthData [\n<!ELEMENT HealthData (Record)*>\n]>\n\
             <HealthData locale=\"en_US\">\n <ExportDate value=\"2026-11-27 10:00:00 +0100\"/>\n\
             <Me HKCharacteristicTypeIdentifierDateOfBirth=\"1980-04-01\"/>\n\
             <Record type=\"HKQuantityTypeIdentifierStepCount\" sourceName=\"Jane&apos;s iPhone\" unit=\"count\" value=\"12\"/>\n\
             <Record type=\"HKQuantityTypeIdentifierBloodGlucose\" sourceName=\"Jane&apos;s iPhone\" device=\"&lt;&lt;HKDevice: 0x1&gt;, name:Jane&apos;s CGM, manufacturer:Dexcom, model:G7&gt;\" unit=\"mg/dL\" startDate=\"2026-11-01 08:00:00 +0100\" endDate=\"2026-11-01 08:00:00 +0100\" value=\"123\"/>\n\
             <Record type=\"HKQuantityTypeIdentifierInsulinDelivery\" unit=\"IU\" startDate=\"2026-11-01 08:10:00 +0100\" endDate=\"2026-11-01 08:10:00 +0100\" value=\"4.5\">\n\
              <MetadataEntry key=\"HKInsulinDeliveryReason\" value=\"2\"/>\n </Record>\n</HealthData>\n",
        )
        .unwrap();
        let csv = dir.path().join("out.csv");
        let found = extract(&xml, &csv).unwrap();
        assert_eq!(
            found,
            Extracted {
                records: 2,
                other_records: 1
            }
        );
        let text = std::fs::read_to_string(&csv).unwrap();
        assert!(text.contains("\"Dexcom G7\""), "{text}");
        assert!(
            text.contains("\"4.5\",\"2026-11-01 08:10:00 +0100\""),
            "{text}"
        );
        assert!(text.trim_end().ends_with("\"2\""), "{text}");
        assert!(!text.contains("Jane"), "{text}");
        assert!(!text.contains("1980"), "{text}");
    }
}
