//! Which export a file is, from its first bytes: the vendors' header rows are fixed English
//! column names, so a few of them identify the format before anything is parsed.

use std::io::Read;
use std::path::Path;

/// How much of a file is read to recognise it: the longest preamble seen (CareLink's) is a few
/// hundred bytes, and an Apple Health export names `<HealthData` within its first kilobytes.
const SNIFF_BYTES: usize = 64 * 1024;

/// The exports `duckgate import` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Dexcom Clarity's CSV export.
    Clarity,
    /// Abbott LibreView's CSV export (FreeStyle Libre).
    LibreView,
    /// Tandem t:connect's CSV export (one file of sections, or one section per file).
    TConnect,
    /// Medtronic CareLink's CSV export (a preamble, then a section per device).
    CareLink,
    /// Nightscout's `entries` as its API returns them (JSON).
    NightscoutEntries,
    /// Nightscout's `treatments` as its API returns them (JSON).
    NightscoutTreatments,
    /// Apple Health's `export.xml`.
    AppleHealth,
    /// Any other CSV: imported as DuckDB reads it, one table per file.
    GenericCsv,
}

impl Format {
    /// The name the summary and the tables' `source` column use.
    pub fn label(self) -> &'static str {
        match self {
            Format::Clarity => "Dexcom Clarity CSV",
            Format::LibreView => "LibreView CSV",
            Format::TConnect => "Tandem t:connect CSV",
            Format::CareLink => "Medtronic CareLink CSV",
            Format::NightscoutEntries => "Nightscout entries JSON",
            Format::NightscoutTreatments => "Nightscout treatments JSON",
            Format::AppleHealth => "Apple Health export.xml",
            Format::GenericCsv => "CSV (generic)",
        }
    }
}

/// What a file is: a known format, or something `import` does not read (with the reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detected {
    /// A format `import` reads.
    Format(Format),
    /// Not an export `import` reads; the file is skipped, and the summary says why.
    Skip(&'static str),
}

/// Recognise `file` from its first [`SNIFF_BYTES`].
pub fn detect(file: &Path) -> std::io::Result<Detected> {
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    std::fs::File::open(file)?
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)?;
    let extension = file
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    Ok(detect_text(&String::from_utf8_lossy(&head), &extension))
}

/// [`detect`] on the text of a file's head and its extension (lower case, no dot).
pub fn detect_text(head: &str, extension: &str) -> Detected {
    let head = head.trim_start_matches('\u{feff}');
    let start = head.trim_start();
    if start.starts_with('[') || start.starts_with('{') {
        let compact: String = head.chars().filter(|c| !c.is_whitespace()).collect();
        if compact.contains("\"eventType\":") {
            return Detected::Format(Format::NightscoutTreatments);
        }
        if compact.contains("\"sgv\":")
            || compact.contains("\"type\":\"sgv\"")
            || compact.contains("\"type\":\"mbg\"")
        {
            return Detected::Format(Format::NightscoutEntries);
        }
        return Detected::Skip("JSON, but not Nightscout entries or treatments");
    }
    if start.starts_with('<') {
        if head.contains("<HealthData") {
            return Detected::Format(Format::AppleHealth);
        }
        return Detected::Skip("XML, but not an Apple Health export.xml");
    }
    let lines: Vec<&str> = head.lines().collect();
    let first = |n: usize, test: &dyn Fn(&str) -> bool| lines.iter().take(n).any(|l| test(l));
    if first(5, &|l| {
        l.contains("Timestamp (YYYY-MM-DDThh:mm:ss)") && l.contains("Event Type")
    }) {
        return Detected::Format(Format::Clarity);
    }
    if first(5, &|l| {
        l.contains("Device Timestamp") && l.contains("Record Type")
    }) {
        return Detected::Format(Format::LibreView);
    }
    if lines
        .first()
        .is_some_and(|l| l.contains("Tandem Diabetes Care"))
        || lines
            .iter()
            .any(|l| crate::engine::import::sections::tconnect_section(l).is_some())
    {
        return Detected::Format(Format::TConnect);
    }
    if lines
        .iter()
        .any(|l| crate::engine::import::sections::is_carelink_header(l))
    {
        return Detected::Format(Format::CareLink);
    }
    match extension {
        "csv" if head.trim().is_empty() => Detected::Skip("an empty CSV file"),
        "csv" => Detected::Format(Format::GenericCsv),
        _ => Detected::Skip("not a CSV, JSON or XML export"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_vendor_is_recognised_by_its_header_rows_not_its_file_name() {
        let clarity = "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info\n1,,FirstName,,Jane\n";
        assert_eq!(
            detect_text(clarity, "csv"),
            Detected::Format(Format::Clarity)
        );
        let libre = "Glucose Data,Generated on,11-27-2026 09:15 UTC,Generated by,Jane Doe\nDevice,Serial Number,Device Timestamp,Record Type,Historic Glucose mg/dL\n";
        assert_eq!(
            detect_text(libre, "csv"),
            Detected::Format(Format::LibreView)
        );
        let tandem = "Tandem Diabetes Care Inc.\nt:connect Therapy Timeline Data Export\n";
        assert_eq!(
            detect_text(tandem, "csv"),
            Detected::Format(Format::TConnect)
        );
        let tandem_part =
            "DeviceType,SerialNumber,Description,EventDateTime,Readings (CGM / BGM)\n";
        assert_eq!(
            detect_text(tandem_part, "csv"),
            Detected::Format(Format::TConnect)
        );
        let carelink = "Last Name;First Name;Patient ID\nDoe;Jane;\n\n-------;MiniMed 780G;Pump;NG1;-------\nIndex;Date;Time;New Device Time;BG Source;BG Reading (mg/dL);Sensor Glucose (mg/dL)\n";
        assert_eq!(
            detect_text(carelink, "csv"),
            Detected::Format(Format::CareLink)
        );
        assert_eq!(
            detect_text(
                "[{\"_id\":\"a\",\"sgv\":120,\"date\":1,\"type\":\"sgv\"}]",
                "json"
            ),
            Detected::Format(Format::NightscoutEntries)
        );
        assert_eq!(
            detect_text(
                "[ {\"eventType\" : \"Meal Bolus\", \"insulin\": 2} ]",
                "json"
            ),
            Detected::Format(Format::NightscoutTreatments)
        );
        assert_eq!(
            detect_text(
                "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">",
                "xml"
            ),
            Detected::Format(Format::AppleHealth)
        );
        assert_eq!(
            detect_text("a,b\n1,2\n", "csv"),
            Detected::Format(Format::GenericCsv)
        );
        assert!(matches!(
            detect_text("a,b\n1,2\n", "txt"),
            Detected::Skip(_)
        ));
    }
}
