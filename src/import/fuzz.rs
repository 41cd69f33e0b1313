//! The import parsers' fuzz entry points: bytes anyone can shape (a file in a downloads folder)
//! through the code that reads them, without DuckDB. Each checks what must hold for every
//! input, and panics otherwise; the targets in `fuzz/` call them.

use super::csv::Records;
use super::detect::VENDORS;
use super::detect::{Detected, detect};
use super::rows::When;
use super::vendor::{Parsed, Vendor};

/// Detection and every CSV vendor over `data` as a CSV file: records never panic and every
/// record starts on a line of the text; a vendor's rows, when it reads the file, are well
/// formed (see [`check_rows`]); detection never panics.
pub fn csv(data: &[u8]) {
    let text = super::text::decode(data);
    for delimiter in [b',', b';', b'\t'] {
        let lines = text.bytes().filter(|b| *b == b'\n' || *b == b'\r').count() + 1;
        let mut last = 0;
        for record in Records::new(&text, delimiter) {
            match record {
                Ok(record) => {
                    assert!(
                        record.line >= last && record.line <= lines,
                        "line {}",
                        record.line
                    );
                    last = record.line;
                }
                Err(e) => assert!(e.line <= lines),
            }
        }
    }
    let _ = detect(data, "csv");
    for vendor in VENDORS.iter().take(4) {
        if let Ok(parsed) = vendor.read(&mut &data[..]) {
            check_rows(*vendor, &parsed);
        }
    }
}

/// Both Nightscout readers over `data`: no panic; rows well formed; every instant is one.
pub fn nightscout(data: &[u8]) {
    for vendor in [
        &super::nightscout::NightscoutEntries as &dyn Vendor,
        &super::nightscout::NightscoutTreatments,
    ] {
        if let Ok(parsed) = vendor.read(&mut &data[..]) {
            check_rows(vendor, &parsed);
        }
    }
    let _ = detect(data, "json");
}

/// The Apple Health reader over `data`: no panic; rows well formed; no tag kept beyond the
/// bound (the reader's own tests hold it to that; here, whatever the bytes, it ends).
pub fn apple_health(data: &[u8]) {
    if let Ok(parsed) = super::apple_health::AppleHealth.read(&mut &data[..]) {
        check_rows(&super::apple_health::AppleHealth, &parsed);
    }
    if let (Detected::Vendor(vendor), _) = detect(data, "xml") {
        let _ = vendor.read(&mut &data[..]);
    }
}

/// What every parsed file holds: glucose positive and whole, units of insulin and grams of
/// carbs finite, and no more examples of unparsed values than three per table.
fn check_rows(vendor: &dyn Vendor, parsed: &Parsed) {
    for reading in &parsed.rows.cgm {
        assert!(reading.glucose_mg_dl > 0, "{}: {reading:?}", vendor.label());
    }
    for check in &parsed.rows.checks {
        assert!(check.glucose_mg_dl > 0, "{}: {check:?}", vendor.label());
    }
    for bolus in &parsed.rows.boluses {
        assert!(bolus.units.is_finite(), "{}: {bolus:?}", vendor.label());
    }
    for carbs in &parsed.rows.carbs {
        assert!(carbs.grams.is_finite(), "{}: {carbs:?}", vendor.label());
    }
    for (_, rows) in parsed.rows.tables() {
        for i in 0..rows.count() {
            if let Some((
                When::Instant {
                    utc_offset_minutes: Some(m),
                    ..
                },
                _,
            )) = rows.when_and_device(i)
            {
                assert!(m.abs() <= 24 * 60);
            }
        }
    }
    for unparsed in parsed.unparsed.values() {
        assert!(unparsed.examples.len() <= 3 && unparsed.count >= unparsed.examples.len() as u64);
    }
}
