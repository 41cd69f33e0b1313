//! One DuckDB value to JSON, rendered by its column type.

use base64::Engine as _;
use duckdb::types::Value;
use serde_json::Value as Json;

use super::datetime::{
    Zone, date, interval, interval_from_duckdb_text, time_of_day, timestamp,
    zoned_timestamp_from_duckdb_text,
};
use super::types::{ColumnType, Kind, Rendering, Scalar};

/// Largest integer a JSON number holds exactly (2^53 − 1).
const MAX_SAFE_INTEGER: i128 = 9_007_199_254_740_991;

/// The UTC offset of an instant in the zone TIMESTAMPTZ values are shown in.
pub(crate) trait ZoneOffsets {
    /// Seconds east of UTC at `utc_micros` (microseconds since the epoch); `None` renders the
    /// instant in UTC with `Z`.
    fn offset_seconds(&mut self, utc_micros: i64) -> Option<i32>;
}

/// Convert one value; `ty` is its DuckDB type when known (inside a UNION it is not).
/// TIMESTAMPTZ values become local wall-clock time with their offset from `zone`
/// (`2026-11-26T22:10:00-05:00`), the time an agent should repeat to the user.
pub(crate) fn to_json_in(
    value: &Value,
    ty: Option<&ColumnType>,
    zone: &mut dyn ZoneOffsets,
) -> Json {
    // `Value` is `#[non_exhaustive]`: the compiler forces a wildcard arm, which renders variants
    // added by a later crate version as their debug text rather than guessing a shape.
    match value {
        Value::Null => Json::Null,
        Value::Boolean(b) => Json::Bool(*b),
        Value::TinyInt(i) => Json::from(*i),
        Value::SmallInt(i) => Json::from(*i),
        Value::Int(i) => Json::from(*i),
        Value::UTinyInt(i) => Json::from(*i),
        Value::USmallInt(i) => Json::from(*i),
        Value::UInt(i) => Json::from(*i),
        Value::BigInt(i) => integer(i128::from(*i)),
        Value::UBigInt(i) => integer(i128::from(*i)),
        // Arrow carries DECIMAL(38,0) like HUGEINT; inside containers only the type tells them apart.
        Value::HugeInt(i) if ty.is_some_and(|t| matches!(t.kind, Kind::Decimal { .. })) => {
            Json::String(i.to_string())
        }
        // Inside containers the crate reads UHUGEINT's 128 bits as signed; the bits are exact.
        Value::HugeInt(i) if ty.and_then(ColumnType::scalar) == Some(Scalar::UHugeInt) => {
            unsigned(*i as u128)
        }
        Value::HugeInt(i) => integer(*i),
        Value::UHugeInt(u) => unsigned(*u),
        Value::Float(f) => float(f.to_string().parse::<f64>().unwrap_or(f64::from(*f))),
        Value::Double(d) => float(*d),
        Value::Decimal(d) => Json::String(d.to_string()),
        Value::Text(s) => text(s, ty),
        Value::Blob(bytes) => blob(bytes, ty),
        Value::Geometry(wkb) => Json::String(base64::engine::general_purpose::STANDARD.encode(wkb)),
        Value::Enum(s) => Json::String(s.clone()),
        Value::Date32(days) => Json::String(date(*days)),
        Value::Time64(unit, v) => Json::String(time_of_day(*unit, *v)),
        Value::Timestamp(unit, v) => {
            let zoned = ty.and_then(ColumnType::scalar) == Some(Scalar::TimestampTz);
            let rendered = if zoned {
                zoned_timestamp(*unit, *v, zone)
            } else {
                timestamp(*unit, *v, Zone::None)
            };
            Json::String(rendered)
        }
        Value::Interval {
            months,
            days,
            nanos,
        } => Json::String(interval(*months, *days, i128::from(*nanos))),
        Value::List(items) => {
            let child = ty.and_then(|t| match &t.kind {
                Kind::List(c) => Some(c.as_ref()),
                _ => None,
            });
            Json::Array(items.iter().map(|v| to_json_in(v, child, zone)).collect())
        }
        Value::Array(items) => {
            let child = ty.and_then(|t| match &t.kind {
                Kind::Array { child, .. } => Some(child.as_ref()),
                _ => None,
            });
            Json::Array(items.iter().map(|v| to_json_in(v, child, zone)).collect())
        }
        // A tuple is positional: an array, whatever names the Arrow export made up.
        Value::Struct(fields) if ty.is_some_and(|t| matches!(t.kind, Kind::Tuple(_))) => {
            let member_types = ty.and_then(|t| match &t.kind {
                Kind::Tuple(m) => Some(m.as_slice()),
                _ => None,
            });
            Json::Array(
                fields
                    .iter()
                    .enumerate()
                    .map(|(i, (_, v))| to_json_in(v, member_types.and_then(|m| m.get(i)), zone))
                    .collect(),
            )
        }
        Value::Struct(fields) => {
            let member_types = ty.and_then(|t| match &t.kind {
                Kind::Struct(m) => Some(m.as_slice()),
                _ => None,
            });
            let mut object = serde_json::Map::new();
            for (i, (name, v)) in fields.iter().enumerate() {
                let member = member_types.and_then(|m| m.get(i)).map(|(_, t)| t);
                object.insert(name.clone(), to_json_in(v, member, zone));
            }
            Json::Object(object)
        }
        Value::Map(entries) => {
            let (key_ty, value_ty) = match ty.map(|t| &t.kind) {
                Some(Kind::Map { key, value }) => (Some(key.as_ref()), Some(value.as_ref())),
                _ => (None, None),
            };
            Json::Array(
                entries
                    .iter()
                    .map(|(k, v)| {
                        let mut pair = serde_json::Map::new();
                        pair.insert("key".into(), to_json_in(k, key_ty, zone));
                        pair.insert("value".into(), to_json_in(v, value_ty, zone));
                        Json::Object(pair)
                    })
                    .collect(),
            )
        }
        // Which member is set is not carried by the crate's value: the member whose type can
        // hold this value's shape, when that decides the rendering (see `union_member`).
        Value::Union(inner) => {
            let members = ty.and_then(|t| match &t.kind {
                Kind::Union(m) => Some(m.as_slice()),
                _ => None,
            });
            match members {
                Some(members) => union_member(inner, members, zone),
                None => to_json_in(inner, None, zone),
            }
        }
        other => Json::String(format!("{other:?}")),
    }
}

/// A UNION value converted as its member: every member whose type could hold the value's
/// shape is tried, and if they all render it alike, that is the answer (e.g. the one
/// `TIMESTAMPTZ` member of `UNION(t TIMESTAMPTZ, s VARCHAR)` gives the value its `Z`). If
/// members of the same shape render it differently (`UNION(a TIMESTAMP, b TIMESTAMPTZ)`), the
/// value cannot say which is set and is converted untyped.
fn union_member(
    inner: &Value,
    members: &[(String, ColumnType)],
    zone: &mut dyn ZoneOffsets,
) -> Json {
    let renderings: Vec<Json> = members
        .iter()
        .filter(|(_, member)| could_hold(member, inner))
        .map(|(_, member)| to_json_in(inner, Some(member), zone))
        .collect();
    match renderings.split_first() {
        Some((first, rest)) if rest.iter().all(|other| other == first) => first.clone(),
        _ => to_json_in(inner, None, zone),
    }
}

/// A TIMESTAMPTZ in the zone's local time with its offset, or in UTC with `Z` when the zone
/// gives none (UTC itself, or an instant its lookup cannot place).
fn zoned_timestamp(unit: duckdb::types::TimeUnit, v: i64, zone: &mut dyn ZoneOffsets) -> String {
    let micros = (i128::from(v) * unit_nanos(unit)).div_euclid(1000);
    let offset = i64::try_from(micros)
        .ok()
        .and_then(|micros| zone.offset_seconds(micros));
    match offset {
        Some(seconds) => timestamp(unit, v, Zone::Offset(seconds)),
        None => timestamp(unit, v, Zone::Utc),
    }
}

/// Nanoseconds per `unit`.
fn unit_nanos(unit: duckdb::types::TimeUnit) -> i128 {
    use duckdb::types::TimeUnit;
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// Whether a value of `member`'s type arrives from the crate as `value`'s variant.
fn could_hold(member: &ColumnType, value: &Value) -> bool {
    use Scalar as S;
    let scalar = member.scalar();
    match value {
        Value::Null => true,
        Value::Boolean(_) => scalar == Some(S::Boolean),
        Value::TinyInt(_)
        | Value::SmallInt(_)
        | Value::Int(_)
        | Value::BigInt(_)
        | Value::UTinyInt(_)
        | Value::USmallInt(_)
        | Value::UInt(_)
        | Value::UBigInt(_) => matches!(
            scalar,
            Some(
                S::TinyInt
                    | S::SmallInt
                    | S::Integer
                    | S::BigInt
                    | S::UTinyInt
                    | S::USmallInt
                    | S::UInteger
                    | S::UBigInt
            )
        ),
        Value::HugeInt(_) => {
            matches!(scalar, Some(S::HugeInt | S::UHugeInt))
                || matches!(member.kind, Kind::Decimal { .. })
        }
        Value::UHugeInt(_) => scalar == Some(S::UHugeInt),
        Value::Float(_) | Value::Double(_) => matches!(scalar, Some(S::Float | S::Double)),
        Value::Decimal(_) => matches!(member.kind, Kind::Decimal { .. }),
        Value::Text(_) => matches!(
            scalar,
            Some(S::Varchar | S::Uuid | S::Enum | S::Rendered(_))
        ),
        Value::Blob(_) => matches!(
            scalar,
            Some(S::Blob | S::Bit | S::Bignum | S::Uuid | S::Geometry)
        ),
        Value::Geometry(_) => scalar == Some(S::Geometry),
        Value::Enum(_) => scalar == Some(S::Enum),
        Value::Date32(_) => scalar == Some(S::Date),
        Value::Time64(..) => matches!(scalar, Some(S::Time | S::TimeNs | S::TimeTz)),
        Value::Timestamp(..) => matches!(
            scalar,
            Some(S::Timestamp | S::TimestampS | S::TimestampMs | S::TimestampNs | S::TimestampTz)
        ),
        Value::Interval { .. } => scalar == Some(S::Interval),
        Value::List(_) => matches!(member.kind, Kind::List(_)),
        Value::Array(_) => matches!(member.kind, Kind::Array { .. }),
        Value::Struct(_) => matches!(member.kind, Kind::Struct(_) | Kind::Tuple(_)),
        Value::Map(_) => matches!(member.kind, Kind::Map { .. }),
        Value::Union(_) => matches!(member.kind, Kind::Union(_)),
        // `Value` is non-exhaustive: a variant added later matches no member, so it converts
        // untyped, as before.
        _ => false,
    }
}

fn integer(i: i128) -> Json {
    if (-MAX_SAFE_INTEGER..=MAX_SAFE_INTEGER).contains(&i) {
        // In range, so the conversion is exact.
        Json::from(i as i64)
    } else {
        Json::String(i.to_string())
    }
}

fn unsigned(u: u128) -> Json {
    match i128::try_from(u) {
        Ok(i) => integer(i),
        Err(_) => Json::String(u.to_string()),
    }
}

fn float(f: f64) -> Json {
    if f.is_nan() {
        Json::String("NaN".into())
    } else if f.is_infinite() {
        Json::String(if f > 0.0 { "Infinity" } else { "-Infinity" }.into())
    } else {
        serde_json::Number::from_f64(f).map_or(Json::Null, Json::Number)
    }
}

fn text(s: &str, ty: Option<&ColumnType>) -> Json {
    match ty.and_then(ColumnType::scalar) {
        Some(Scalar::Rendered(rendering)) => rendered(s, rendering),
        // JSON is returned as its text, as DuckDB's clients return it: a JSON `null` is then the
        // text `null`, distinct from SQL NULL, and no number loses digits.
        _ => Json::String(s.to_string()),
    }
}

/// A value DuckDB rendered in the worker (see [`Rendering`]), read back. Text DuckDB wrote
/// that does not read back is returned as DuckDB wrote it, never guessed at.
fn rendered(s: &str, rendering: Rendering) -> Json {
    match rendering {
        Rendering::VariantAsJson => {
            if numbers_survive_doubles(s)
                && let Ok(parsed) = serde_json::from_str::<Json>(s)
            {
                return parsed;
            }
            Json::String(s.to_string())
        }
        Rendering::Interval => Json::String(
            interval_from_duckdb_text(s)
                .map(|(months, days, micros)| interval(months, days, i128::from(micros) * 1000))
                .unwrap_or_else(|| s.to_string()),
        ),
        Rendering::ZonedTimestamp => {
            Json::String(zoned_timestamp_from_duckdb_text(s).unwrap_or_else(|| s.to_string()))
        }
        Rendering::Text => Json::String(s.to_string()),
    }
}

/// Whether every number in the JSON text `s` keeps its exact value when read as an IEEE
/// double, as JSON consumers commonly hold numbers (and `serde_json` parses fractions): an
/// integer within ±(2^53 − 1), or a number whose double has the same decimal value. A JSON
/// value with any other number is returned as its text, so no digit is silently lost.
fn numbers_survive_doubles(s: &str) -> bool {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while let Some(&b) = bytes.get(i) {
        if in_string {
            match b {
                // The escaped character cannot end the string.
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'-' | b'0'..=b'9' => {
                let start = i;
                while bytes
                    .get(i)
                    .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    i += 1;
                }
                if !number_survives_double(&s[start..i]) {
                    return false;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

fn number_survives_double(token: &str) -> bool {
    let Ok(value) = token.parse::<f64>() else {
        // Not a JSON number after all: serde_json decides whether the text parses.
        return true;
    };
    if !value.is_finite() {
        return false;
    }
    let integral = !token.contains(['.', 'e', 'E']);
    if integral && value.abs() > MAX_SAFE_INTEGER as f64 {
        return false;
    }
    decimal_value(token).is_some_and(|v| Some(v) == decimal_value(&format!("{value:e}")))
}

/// The decimal value of a JSON number's text as (negative, significant digits, power of ten),
/// with no leading or trailing zero digit, so equal values compare equal.
fn decimal_value(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let significant = digits.trim_start_matches('0');
    let trimmed = significant.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some((false, String::new(), 0));
    }
    let fraction_len = i64::try_from(fraction.len()).ok()?;
    let trailing = i64::try_from(significant.len() - trimmed.len()).ok()?;
    Some((
        negative,
        trimmed.to_string(),
        exponent - fraction_len + trailing,
    ))
}

fn blob(bytes: &[u8], ty: Option<&ColumnType>) -> Json {
    let decoded = match ty.and_then(ColumnType::scalar) {
        // The Arrow export carries DuckDB's internal encodings of these as binary.
        Some(Scalar::Bit) => bit_string(bytes),
        Some(Scalar::Bignum) => bignum_string(bytes),
        _ => None,
    };
    Json::String(decoded.unwrap_or_else(|| base64::engine::general_purpose::STANDARD.encode(bytes)))
}

/// DuckDB's BIT: one byte giving the number of padding bits, then the bits, most significant
/// first, the padding at the start of the first data byte.
fn bit_string(bytes: &[u8]) -> Option<String> {
    let (&padding, data) = bytes.split_first()?;
    let padding = usize::from(padding);
    if padding > 7 || (data.is_empty() && padding > 0) {
        return None;
    }
    let bits = data
        .iter()
        .flat_map(|byte| (0..8).rev().map(move |i| (byte >> i) & 1));
    Some(
        bits.skip(padding)
            .map(|b| if b == 1 { '1' } else { '0' })
            .collect(),
    )
}

/// Magnitudes up to this many bytes (~9,900 digits) are printed in decimal; larger ones in
/// hexadecimal, which is exact and linear-time where decimal conversion is quadratic.
const BIGNUM_DECIMAL_MAX_BYTES: usize = 4096;

/// DuckDB's BIGNUM: a 3-byte big-endian header whose top bit is set for non-negative numbers
/// and whose other 23 bits count the data bytes, then the big-endian magnitude; a negative
/// number has every byte (header and data) inverted.
fn bignum_string(bytes: &[u8]) -> Option<String> {
    let [first, second, third, magnitude @ ..] = bytes else {
        return None;
    };
    let negative = first & 0x80 == 0;
    let byte = |b: u8| if negative { !b } else { b };
    let len = (usize::from(byte(*first) & 0x7f) << 16)
        | (usize::from(byte(*second)) << 8)
        | usize::from(byte(*third));
    let data: Vec<u8> = magnitude.iter().map(|&b| byte(b)).collect();
    if data.len() != len {
        return None;
    }
    let sign = if negative { "-" } else { "" };
    if data.len() > BIGNUM_DECIMAL_MAX_BYTES {
        let hex: String = data.iter().map(|b| format!("{b:02x}")).collect();
        let hex = hex.trim_start_matches('0');
        return Some(format!(
            "{sign}0x{}",
            if hex.is_empty() { "0" } else { hex }
        ));
    }
    // Little-endian limbs in base 10^9.
    let mut limbs: Vec<u64> = vec![0];
    for &b in &data {
        let mut carry = u64::from(b);
        for limb in limbs.iter_mut() {
            let v = *limb * 256 + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::from(sign);
    let mut iter = limbs.iter().rev();
    if let Some(top) = iter.next() {
        out.push_str(&top.to_string());
    }
    for limb in iter {
        out.push_str(&format!("{limb:09}"));
    }
    if out == "-0" {
        Some("0".into())
    } else {
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_numbers_that_a_double_cannot_hold_are_detected() {
        for exact in [
            "0",
            "-0",
            "1",
            "-17",
            "2.5",
            "2.50",
            "0.1",
            "1e-7",
            "1.5E+3",
            "123.456",
            "9007199254740991",
            "-9007199254740991",
            "1.7976931348623157e308",
        ] {
            assert!(number_survives_double(exact), "{exact}");
        }
        for lossy in [
            "9007199254740992",
            "12345678901234567890",
            "3.14159265358979323846",
            "0.10000000000000000001",
            "1e400",
            "-1e400",
        ] {
            assert!(!number_survives_double(lossy), "{lossy}");
        }
        // Digits inside strings, escaped quotes included, are text, not numbers.
        assert!(numbers_survive_doubles(
            r#"{"s": "12345678901234567890 \" 98765432109876543210", "n": [1, 2.5]}"#
        ));
        assert!(!numbers_survive_doubles(
            r#"{"s": "x", "n": [1, 12345678901234567890]}"#
        ));
    }

    #[test]
    fn integers_beyond_two_to_the_53_become_strings() {
        assert_eq!(
            integer(MAX_SAFE_INTEGER),
            Json::from(MAX_SAFE_INTEGER as i64)
        );
        assert_eq!(
            integer(MAX_SAFE_INTEGER + 1),
            Json::String("9007199254740992".into())
        );
        assert_eq!(
            integer(-MAX_SAFE_INTEGER - 1),
            Json::String("-9007199254740992".into())
        );
    }
}
