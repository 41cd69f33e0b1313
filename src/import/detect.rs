//! Which export a file is, from its first bytes: one of the [`VENDORS`] (each judging by the
//! export's structure), a CSV of something else, something that looks like a health export but
//! is none `import` knows (refused, never imported as a plain table without being asked), or a
//! file `import` does not read.

use super::text;
use super::vendor::{HEAD_BYTES, Head, Vendor};

/// Every vendor, in the order detection tries them.
pub static VENDORS: &[&dyn Vendor] = &[
    &super::clarity::Clarity,
    &super::libreview::LibreView,
    &super::tconnect::TConnect,
    &super::carelink::CareLink,
    &super::nightscout::NightscoutEntries,
    &super::nightscout::NightscoutTreatments,
    &super::apple_health::AppleHealth,
];

/// What a file is.
#[derive(Clone, Copy)]
pub enum Detected {
    /// A vendor's export.
    Vendor(&'static dyn Vendor),
    /// A CSV that is no health export: imported as DuckDB reads it, as a table of its own.
    Generic,
    /// It names glucose, insulin, carbohydrates or a vendor, but is no export `import` knows.
    HealthLike,
    /// Not an export `import` reads; the file is skipped, and the summary says why.
    Skip(&'static str),
}

impl std::fmt::Debug for Detected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Detected::Vendor(v) => write!(f, "Vendor({})", v.label()),
            Detected::Generic => f.write_str("Generic"),
            Detected::HealthLike => f.write_str("HealthLike"),
            Detected::Skip(why) => write!(f, "Skip({why})"),
        }
    }
}

/// Words that name glucose, insulin, carbohydrates or a diabetes device or app, in the
/// languages the vendors export (lower case; a field containing one counts).
const HEALTH_WORDS: &[&str] = &[
    // glucose
    "glucose",
    // German, Danish, Norwegian and Swedish
    "glukos",
    "glucosio",
    "glucosa",
    "glicose",
    "glycémie",
    "glycemie",
    "glykemi",
    "glukoosi",
    // Polish, in every case ending (glukoza, glukozy, glukozę)
    "glukoz",
    "glikemi",
    "glucemia",
    "glicemia",
    "blutzucker",
    "blood sugar",
    "blodsukker",
    "blodsocker",
    "bloedsuiker",
    "verensokeri",
    "mg/dl",
    "mmol/l",
    "sgv",
    // insulin (Finnish `insuliini` does not contain `insulin`)
    "insulin",
    "insuliin",
    "bolus",
    "basal",
    // carbohydrates
    "carb",
    "kohlenhydrat",
    "glucides",
    "koolhydrat",
    "kolhydrat",
    "kulhydrat",
    "karbohydrat",
    "hiilihydraat",
    "węglowodan",
    "weglowodan",
    // devices and apps
    "dexcom",
    "libre",
    "carelink",
    "minimed",
    "medtronic",
    "guardian",
    "tandem",
    "t:slim",
    "omnipod",
    "accu-chek",
    "contour",
    "eversense",
    "glooko",
    "diasend",
    "tidepool",
    "xdrip",
    "nightscout",
    "healthkit",
    "hkquantitytype",
];

/// Up to three fields of `head` that name a health word, as written (shortened).
pub fn health_words(head: &Head<'_>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let mut consider = |field: &str| {
        let lower = field.to_lowercase();
        if seen.len() < 3
            && HEALTH_WORDS.iter().any(|w| lower.contains(w))
            && !seen.iter().any(|s| s == field)
        {
            seen.push(field.chars().take(48).collect());
        }
    };
    if head.records.is_empty() || head.start().starts_with(['[', '{', '<']) {
        // JSON or XML: its keys and tag names within the first kilobytes.
        let start: String = head.text.chars().take(4096).collect();
        for token in start.split(|c: char| !(c.is_alphanumeric() || c == '/' || c == ':')) {
            if !token.is_empty() {
                consider(token);
            }
        }
    } else {
        for record in head.records.iter().take(40) {
            for field in &record.fields {
                let field = field.trim();
                if !field.is_empty() && super::values::number(field).is_none() {
                    consider(field);
                }
            }
        }
    }
    seen
}

/// What the file whose first bytes are `head_bytes` is; `extension` is its name's extension
/// (never its name: vendors put the patient's name there).
pub fn detect(head_bytes: &[u8], extension: &str) -> (Detected, Vec<String>) {
    let head_bytes = head_bytes.get(..HEAD_BYTES).unwrap_or(head_bytes);
    if head_bytes.starts_with(b"PK\x03\x04") {
        return (
            Detected::Skip(
                "a ZIP archive: unzip it first (Apple Health's export.zip holds export.xml)",
            ),
            Vec::new(),
        );
    }
    if head_bytes.starts_with(b"%PDF") {
        return (Detected::Skip("a PDF report, not an export"), Vec::new());
    }
    let text = text::decode_prefix(head_bytes);
    let text = text.trim_start_matches('\u{feff}');
    if text.contains('\0') {
        return (Detected::Skip("not a CSV, JSON or XML export"), Vec::new());
    }
    let head = Head::new(text, extension);
    if let Some(vendor) = VENDORS.iter().find(|v| v.detect(&head)) {
        return (Detected::Vendor(*vendor), Vec::new());
    }
    let words = health_words(&head);
    if !words.is_empty() {
        return (Detected::HealthLike, words);
    }
    let start = head.start();
    let detected = if start.starts_with('[') || start.starts_with('{') {
        Detected::Skip("JSON, but not Nightscout entries or treatments")
    } else if start.starts_with('<') {
        Detected::Skip("XML, but not an Apple Health export.xml")
    } else {
        match head.extension.as_str() {
            "csv" | "tsv" if text.trim().is_empty() => Detected::Skip("an empty CSV file"),
            "csv" | "tsv" => Detected::Generic,
            _ => Detected::Skip("not a CSV, JSON or XML export"),
        }
    };
    (detected, Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(text: &str, extension: &str) -> String {
        format!("{:?}", detect(text.as_bytes(), extension).0)
    }

    #[test]
    fn each_vendor_is_recognised_by_its_structure_not_its_file_name() {
        let clarity = "Index,Timestamp (YYYY-MM-DDThh:mm:ss),Event Type,Event Subtype,Patient Info,Device Info,Source Device ID,Glucose Value (mg/dL)\n1,,FirstName,,Jane,,,\n";
        assert_eq!(what(clarity, "csv"), "Vendor(Dexcom Clarity CSV)");
        let libre = "Glucose Data,Generated on,11-27-2026 09:15 UTC,Generated by,Jane Doe\nDevice,Serial Number,Device Timestamp,Record Type,Historic Glucose mg/dL,Scan Glucose mg/dL,a,b,c,d,e,f,g,Notes,Strip Glucose mg/dL\nFreeStyle Libre 3,X,11-20-2026 08:00,0,120,,,,,,,,,,\n";
        assert_eq!(what(libre, "csv"), "Vendor(LibreView CSV)");
        let french = "Glucose Data,Généré le,27-11-2026 09:15 UTC,Généré par,Jeanne\nAppareil,Numéro de série,Horodatage de l'appareil,Type d'enregistrement,Historique de la glycémie mmol/L,Numérisation de la glycémie mmol/L,a,b,c,d,e,f,g,Remarques,Glycémie par bandelette mmol/L\nFreeStyle LibreLink,X,20-11-2026 08:00,0,\"6,1\",,,,,,,,,,\n";
        assert_eq!(what(french, "txt"), "Vendor(LibreView CSV)");
        let tandem = "Tandem Diabetes Care Inc.\nt:connect Therapy Timeline Data Export\n";
        assert_eq!(what(tandem, "csv"), "Vendor(Tandem t:connect CSV)");
        let carelink = "Last Name;First Name;Patient ID\nDoe;Jane;\n\n-------;MiniMed 780G;Pump;NG1;-------\nIndex;Date;Time;New Device Time;BG Source;BG Reading (mg/dL)\n";
        assert_eq!(what(carelink, "csv"), "Vendor(Medtronic CareLink CSV)");
        assert_eq!(
            what(
                "[{\"_id\":\"a\",\"sgv\":120,\"date\":1,\"type\":\"sgv\"}]",
                "json"
            ),
            "Vendor(Nightscout entries JSON)"
        );
        assert_eq!(
            what(
                "[ {\"eventType\" : \"Meal Bolus\", \"insulin\": 2} ]",
                "json"
            ),
            "Vendor(Nightscout treatments JSON)"
        );
        assert_eq!(
            what(
                "<?xml version=\"1.0\"?>\n<HealthData locale=\"en_US\">",
                "xml"
            ),
            "Vendor(Apple Health export.xml)"
        );
    }

    #[test]
    fn a_health_export_nobody_knows_is_never_a_plain_table() {
        let (detected, words) = detect(
            "Zeit,Blutzucker (mg/dL),Omnipod Bolus\n2026-01-01 08:00,120,\n".as_bytes(),
            "csv",
        );
        assert_eq!(format!("{detected:?}"), "HealthLike");
        assert_eq!(words, vec!["Blutzucker (mg/dL)", "Omnipod Bolus"]);
        // The Nordic, Finnish and Polish words, in which the German and English ones are not
        // contained.
        for header in [
            "Tid,Glukos,Anteckning\n2026-01-01 08:00,6.1,\n",
            "Tid,Blodsukker,Karbohydrater\n2026-01-01 08:00,6.1,40\n",
            "Aika,Verensokeri,Muistiinpano\n2026-01-01 08:00,6.1,\n",
            "Aika,Insuliini,Muistiinpano\n2026-01-01 08:00,4,\n",
            "Czas,Poziom glukozy,Uwagi\n2026-01-01 08:00,110,\n",
            "Czas,Glikemia,Uwagi\n2026-01-01 08:00,110,\n",
        ] {
            assert_eq!(what(header, "csv"), "HealthLike", "{header}");
        }
        assert_eq!(what("date,steps\n2026-01-01,5000\n", "csv"), "Generic");
        assert_eq!(
            what("a,b\n1,2\n", "txt"),
            "Skip(not a CSV, JSON or XML export)"
        );
        assert_eq!(
            what("{\"readings\":[{\"glucose\":5.5}]}", "json"),
            "HealthLike"
        );
        assert!(what("PK\u{3}\u{4}rest", "zip").contains("unzip"));
        assert_eq!(what("", "csv"), "Skip(an empty CSV file)");
    }
}
