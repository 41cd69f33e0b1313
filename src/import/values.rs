//! Values as the exports write them: numbers with a decimal point or comma, durations, and
//! glucose with its unit and the sensors' "Low" and "High" in the languages the vendors write.

use crate::clinical::{SensorRange, mg_dl_from_mmol_l};

/// A number with a decimal point or a decimal comma (`27,00`, `5.5`, `1,00000`), trimmed; no
/// thousands separators, no infinities or NaN.
pub fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.is_empty() || text.len() > 32 {
        return None;
    }
    let separators = text.bytes().filter(|b| *b == b',' || *b == b'.').count();
    if separators > 1 {
        return None;
    }
    let body = text.strip_prefix(['+', '-']).unwrap_or(text);
    if body.is_empty()
        || !body
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b',' || b == b'.')
    {
        return None;
    }
    let value: f64 = text.replace(',', ".").parse().ok()?;
    value.is_finite().then_some(value)
}

/// The number a text starts with (`60,00grams` → 60.0; `30 min` → 30.0).
pub fn leading_number(text: &str) -> Option<f64> {
    let text = text.trim();
    let end = text
        .char_indices()
        .find(|(i, c)| !(c.is_ascii_digit() || *c == ',' || *c == '.' || (*i == 0 && *c == '-')))
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    number(text[..end].trim_end_matches([',', '.']))
}

/// A duration written `h:mm:ss`, `hh:mm:ss` or `h:mm`, in minutes.
pub fn duration_minutes(text: &str) -> Option<f64> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut parts = text.split(':');
    let hours: f64 = parts.next()?.trim().parse::<u32>().ok()?.into();
    let minutes: f64 = parts.next()?.trim().parse::<u32>().ok()?.into();
    let seconds: f64 = match parts.next() {
        Some(s) => number(s)?,
        None => 0.0,
    };
    if parts.next().is_some() || minutes >= 60.0 || !(0.0..60.0).contains(&seconds) {
        return None;
    }
    Some(hours * 60.0 + minutes + seconds / 60.0)
}

/// A glucose unit as an export writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// mg/dL.
    MgDl,
    /// mmol/L, converted at import.
    MmolL,
}

impl Unit {
    /// As the `source_unit` column and the summary write it.
    pub fn label(self) -> &'static str {
        match self {
            Unit::MgDl => "mg/dL",
            Unit::MmolL => "mmol/L",
        }
    }

    /// The unit a column name or unit text states (`Glucose Value (mmol/L)`, `Historic Glucose
    /// mg/dL`, Apple's `mmol<180.1558800000541>/L`), if it states one.
    pub fn named_in(text: &str) -> Option<Unit> {
        let lower = text.to_lowercase();
        if lower.contains("mmol") {
            Some(Unit::MmolL)
        } else if lower.contains("mg/dl") || lower.contains("mg/100") || lower.contains("mg dl") {
            Some(Unit::MgDl)
        } else {
            None
        }
    }
}

/// Whether a reading beyond the device's range was below or above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfRange {
    /// "Low", "LO", "Niedrig", …
    Low,
    /// "High", "HI", "Hoch", …
    High,
}

impl OutOfRange {
    /// As the `out_of_range` column writes it.
    pub fn label(self) -> &'static str {
        match self {
            OutOfRange::Low => "low",
            OutOfRange::High => "high",
        }
    }
}

/// The words the vendors write for a reading below the sensor's range, in the languages of
/// their exports (English, German, French, Italian, Spanish, Dutch, Swedish, Danish,
/// Norwegian, Finnish, Portuguese, Polish), lower case.
const LOW_WORDS: &[&str] = &[
    "low", "lo", "niedrig", "bas", "basso", "bajo", "laag", "låg", "lav", "matala", "baixo",
    "niski",
];
/// The same for above its range.
const HIGH_WORDS: &[&str] = &[
    "high", "hi", "hoch", "élevé", "eleve", "haut", "alto", "hoog", "hög", "høj", "høy", "korkea",
    "wysoki",
];

/// A glucose value: `mg_dl`, whole (mmol/L converted and rounded, Low/High one beyond the
/// device's range); `out_of_range`, set for a reading the device gave only as below or above
/// its range; `source_value`, the number as written in `unit` (`None` for Low/High); and the
/// export's `unit`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glucose {
    pub(crate) mg_dl: i32,
    pub(crate) out_of_range: Option<OutOfRange>,
    pub(crate) source_value: Option<f64>,
    pub(crate) unit: Unit,
}

impl Glucose {
    /// `text` in `unit` from a device measuring `range`: a number, or a Low/High word.
    pub fn read(text: &str, unit: Unit, range: SensorRange) -> Option<Glucose> {
        let word = text.trim().to_lowercase();
        let beyond = if LOW_WORDS.contains(&word.as_str()) {
            Some((OutOfRange::Low, range.below()))
        } else if HIGH_WORDS.contains(&word.as_str()) {
            Some((OutOfRange::High, range.above()))
        } else {
            None
        };
        match beyond {
            Some((side, mg_dl)) => Some(Glucose {
                mg_dl,
                out_of_range: Some(side),
                source_value: None,
                unit,
            }),
            None => Glucose::of_number(number(text)?, unit),
        }
    }

    /// A measured value in `unit`; `None` when it is not a positive glucose.
    pub fn of_number(value: f64, unit: Unit) -> Option<Glucose> {
        let mg_dl = match unit {
            Unit::MgDl => value.round(),
            Unit::MmolL => mg_dl_from_mmol_l(value),
        };
        if !(1.0..=5000.0).contains(&mg_dl) {
            return None;
        }
        Some(Glucose {
            mg_dl: mg_dl as i32,
            out_of_range: None,
            source_value: Some(value),
            unit,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clinical::{DEXCOM, LIBRE};

    #[test]
    fn numbers_with_points_and_commas() {
        assert_eq!(number(" 27,00 "), Some(27.0));
        assert_eq!(number("5.5"), Some(5.5));
        assert_eq!(number("1,00000"), Some(1.0));
        assert_eq!(number("-0,5"), Some(-0.5));
        for bad in ["", "1.234,5", "NaN", "inf", "1e5", "12 U", "x"] {
            assert_eq!(number(bad), None, "{bad}");
        }
        assert_eq!(leading_number("60,00grams"), Some(60.0));
        assert_eq!(leading_number("27,00"), Some(27.0));
        assert_eq!(leading_number("grams"), None);
    }

    #[test]
    fn durations() {
        assert_eq!(duration_minutes("1:30:00"), Some(90.0));
        assert_eq!(duration_minutes("00:30:00"), Some(30.0));
        assert_eq!(duration_minutes("0:45"), Some(45.0));
        assert_eq!(duration_minutes("1:75:00"), None);
        assert_eq!(duration_minutes(""), None);
    }

    #[test]
    fn glucose_words_and_units() {
        let low = Glucose::read("Niedrig", Unit::MmolL, DEXCOM).unwrap();
        assert_eq!((low.mg_dl, low.out_of_range), (39, Some(OutOfRange::Low)));
        let hi = Glucose::read(" HI ", Unit::MgDl, LIBRE).unwrap();
        assert_eq!((hi.mg_dl, hi.source_value), (501, None));
        let mmol = Glucose::read("10,0", Unit::MmolL, LIBRE).unwrap();
        assert_eq!((mmol.mg_dl, mmol.source_value), (180, Some(10.0)));
        assert_eq!(Glucose::read("???", Unit::MgDl, DEXCOM), None);
        assert_eq!(Glucose::read("0", Unit::MgDl, DEXCOM), None);
        assert_eq!(
            Unit::named_in("Glukosewert-Verlauf mmol/L"),
            Some(Unit::MmolL)
        );
        assert_eq!(
            Unit::named_in("Historique de la glycémie mg/dL"),
            Some(Unit::MgDl)
        );
        assert_eq!(Unit::named_in("Notes"), None);
    }
}
