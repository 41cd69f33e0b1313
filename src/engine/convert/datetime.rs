//! DATE, TIME, TIMESTAMP and INTERVAL values as ISO 8601 text.

use std::fmt::Write as _;

use duckdb::types::TimeUnit;

use crate::calendar::civil_from_days;

/// DuckDB's encodings of `infinity` and `-infinity` for DATE and TIMESTAMP.
const DATE_INFINITY: i32 = i32::MAX;
const DATE_NEG_INFINITY: i32 = -i32::MAX;
const TIMESTAMP_INFINITY: i64 = i64::MAX;
const TIMESTAMP_NEG_INFINITY: i64 = -i64::MAX;

/// ISO 8601 year: at least four digits, astronomical numbering (year 0 is 1 BC).
///
/// The date and time renderers write into one buffer each: a 1,000-row result with a
/// timestamp column formats a thousand of them, and an allocation per part showed up there.
fn push_iso_year(out: &mut String, y: i64) {
    let _ = if y < 0 {
        write!(out, "-{:04}", -y)
    } else {
        write!(out, "{y:04}")
    };
}

/// `YYYY-MM-DD` of a day number.
fn push_date(out: &mut String, days: i64) {
    let (y, m, d) = civil_from_days(days);
    push_iso_year(out, y);
    let _ = write!(out, "-{m:02}-{d:02}");
}

pub(super) fn date(days: i32) -> String {
    match days {
        DATE_INFINITY => "infinity".into(),
        DATE_NEG_INFINITY => "-infinity".into(),
        _ => {
            let mut out = String::with_capacity(10);
            push_date(&mut out, i64::from(days));
            out
        }
    }
}

/// Nanoseconds per unit.
fn nanos_per(unit: TimeUnit) -> i128 {
    match unit {
        TimeUnit::Second => 1_000_000_000,
        TimeUnit::Millisecond => 1_000_000,
        TimeUnit::Microsecond => 1_000,
        TimeUnit::Nanosecond => 1,
    }
}

/// `HH:MM:SS` plus the fraction without trailing zeros.
fn push_clock(out: &mut String, nanos_of_day: i128) {
    let secs = nanos_of_day / 1_000_000_000;
    let frac = nanos_of_day % 1_000_000_000;
    let _ = write!(
        out,
        "{:02}:{:02}:{:02}",
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    );
    if frac != 0 {
        let mut digits = [b'0'; 9];
        let mut rest = frac.unsigned_abs();
        for digit in digits.iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let kept = digits.iter().rposition(|&d| d != b'0').map_or(0, |i| i + 1);
        out.push('.');
        // ASCII digits, so each byte is a char.
        out.extend(digits.iter().take(kept).map(|&d| char::from(d)));
    }
}

pub(super) fn time_of_day(unit: TimeUnit, v: i64) -> String {
    let mut out = String::with_capacity(18);
    push_clock(&mut out, i128::from(v) * nanos_per(unit));
    out
}

/// How a timestamp carries its zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Zone {
    /// A TIMESTAMP: wall-clock time with no zone.
    None,
    /// A TIMESTAMPTZ in UTC: `Z`.
    Utc,
    /// A TIMESTAMPTZ as local time this many seconds east of UTC: `+01:00`, `-04:56:02`.
    Offset(i32),
}

pub(super) fn timestamp(unit: TimeUnit, v: i64, zone: Zone) -> String {
    match v {
        TIMESTAMP_INFINITY => return "infinity".into(),
        TIMESTAMP_NEG_INFINITY => return "-infinity".into(),
        _ => {}
    }
    let shift = match zone {
        Zone::Offset(seconds) => i128::from(seconds) * 1_000_000_000,
        Zone::None | Zone::Utc => 0,
    };
    let total = i128::from(v) * nanos_per(unit) + shift;
    let day_nanos: i128 = 86_400 * 1_000_000_000;
    let days = total.div_euclid(day_nanos);
    let of_day = total.rem_euclid(day_nanos);
    let mut out = String::with_capacity(32);
    // |days| < 2^63 / 86400, so it fits an i64.
    push_date(&mut out, days as i64);
    out.push('T');
    push_clock(&mut out, of_day);
    match zone {
        Zone::None => {}
        Zone::Utc => out.push('Z'),
        Zone::Offset(seconds) => push_offset(&mut out, seconds),
    }
    out
}

/// `+HH:MM`, or `+HH:MM:SS` for the odd historical offset with seconds.
fn push_offset(out: &mut String, seconds: i32) {
    let sign = if seconds < 0 { '-' } else { '+' };
    let abs = seconds.unsigned_abs();
    let _ = write!(out, "{sign}{:02}:{:02}", abs / 3600, (abs / 60) % 60);
    if !abs.is_multiple_of(60) {
        let _ = write!(out, ":{:02}", abs % 60);
    }
}

/// ISO 8601 duration with a sign per component, as PostgreSQL's `iso_8601` style prints it.
pub(super) fn interval(months: i32, days: i32, nanos: i128) -> String {
    let mut out = String::from("P");
    let (years, months) = (months / 12, months % 12);
    if years != 0 {
        out.push_str(&format!("{years}Y"));
    }
    if months != 0 {
        out.push_str(&format!("{months}M"));
    }
    if days != 0 {
        out.push_str(&format!("{days}D"));
    }
    if nanos != 0 {
        out.push('T');
        let negative = nanos < 0;
        let abs = nanos.abs();
        let sign = if negative { "-" } else { "" };
        let hours = abs / 3_600_000_000_000;
        let minutes = (abs / 60_000_000_000) % 60;
        let secs = (abs / 1_000_000_000) % 60;
        let frac = abs % 1_000_000_000;
        if hours != 0 {
            out.push_str(&format!("{sign}{hours}H"));
        }
        if minutes != 0 {
            out.push_str(&format!("{sign}{minutes}M"));
        }
        if secs != 0 || frac != 0 {
            if frac == 0 {
                out.push_str(&format!("{sign}{secs}S"));
            } else {
                let digits = format!("{frac:09}");
                out.push_str(&format!("{sign}{secs}.{}S", digits.trim_end_matches('0')));
            }
        }
    }
    if out == "P" { "PT0S".into() } else { out }
}

/// DuckDB's text for an INTERVAL (`1 year 2 months -3 days -04:05:06.5`, `2562047788:00:00`,
/// `00:00:00`) as (months, days, microseconds), the three numbers DuckDB keeps.
pub(super) fn interval_from_duckdb_text(text: &str) -> Option<(i32, i32, i64)> {
    if text.trim().is_empty() {
        return None;
    }
    let mut months: i64 = 0;
    let mut days: i64 = 0;
    let mut micros: i64 = 0;
    let mut words = text.split_whitespace().peekable();
    while let Some(word) = words.next() {
        if word.contains(':') {
            micros = clock_micros(word)?;
            if words.peek().is_some() {
                return None;
            }
            break;
        }
        let count: i64 = word.parse().ok()?;
        let unit = words.next()?;
        match unit.trim_end_matches('s') {
            "year" => months = months.checked_add(count.checked_mul(12)?)?,
            "month" => months = months.checked_add(count)?,
            "day" => days = days.checked_add(count)?,
            _ => return None,
        }
    }
    Some((
        i32::try_from(months).ok()?,
        i32::try_from(days).ok()?,
        micros,
    ))
}

/// `[-]H…H:MM:SS[.ffffff]` as microseconds.
fn clock_micros(clock: &str) -> Option<i64> {
    let (negative, clock) = match clock.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, clock),
    };
    let mut parts = clock.split(':');
    let hours: i128 = parts.next()?.parse().ok()?;
    let minutes: i128 = parts.next()?.parse().ok()?;
    let seconds = parts.next()?;
    if parts.next().is_some() || !(0..60).contains(&minutes) {
        return None;
    }
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let whole: i128 = whole.parse().ok()?;
    if !(0..60).contains(&whole)
        || fraction.len() > 6
        || !fraction.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let fraction: i128 = format!("{fraction:0<6}").parse().ok()?;
    let total = ((hours * 60 + minutes) * 60 + whole) * 1_000_000 + fraction;
    i64::try_from(if negative { -total } else { total }).ok()
}

/// DuckDB's text for a TIMESTAMPTZ_NS in the session's zone
/// (`2024-07-01 08:00:00.123456789-04`, `infinity`) as ISO 8601 with the offset
/// (`2024-07-01T08:00:00.123456789-04:00`).
pub(super) fn zoned_timestamp_from_duckdb_text(text: &str) -> Option<String> {
    if matches!(text, "infinity" | "-infinity") {
        return Some(text.to_string());
    }
    let (date, rest) = text.split_once(' ')?;
    // The offset starts at the last sign after the clock: `+HH`, `-HH:MM` or `+HH:MM:SS`.
    let sign_at = rest.rfind(['+', '-'])?;
    let (clock, offset) = rest.split_at(sign_at);
    let (sign, offset) = offset.split_at(1);
    let mut fields = offset.split(':');
    let hours = fields.next()?;
    let minutes = fields.next().unwrap_or("00");
    let seconds = fields.next();
    let two_digits = |f: &str| f.len() == 2 && f.bytes().all(|b| b.is_ascii_digit());
    if !two_digits(hours) || !two_digits(minutes) || !seconds.is_none_or(two_digits) {
        return None;
    }
    let mut out = format!("{date}T{clock}{sign}{hours}:{minutes}");
    if let Some(seconds) = seconds.filter(|s| *s != "00") {
        out.push(':');
        out.push_str(seconds);
    }
    // BC dates are written `… (BC)` by DuckDB; they are not ISO 8601 and stay as written.
    (!text.contains('(') && clock.contains(':')).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(-1), "1969-12-31");
        assert_eq!(date(19_723), "2024-01-01");
        assert_eq!(date(11_016), "2000-02-29");
        assert_eq!(date(-719_528), "0000-01-01");
        assert_eq!(date(-719_529), "-0001-12-31");
    }

    #[test]
    fn duckdb_interval_text_reads_back_exactly_across_the_whole_range() {
        let cases = [
            ("00:00:00", (0, 0, 0)),
            ("1 year 2 months 3 days 04:05:06.5", (14, 3, 14_706_500_000)),
            (
                "-1 year -2 months -3 days -04:05:06.5",
                (-14, -3, -14_706_500_000),
            ),
            ("-1 day 02:00:00", (0, -1, 7_200_000_000)),
            ("1 month -1 day", (1, -1, 0)),
            ("-00:00:00.5", (0, 0, -500_000)),
            ("00:00:00.000001", (0, 0, 1)),
            ("2562047788:00:00", (0, 0, 9_223_372_036_800_000_000)),
            ("178956970 years 7 months", (i32::MAX, 0, 0)),
        ];
        for (text, expected) in cases {
            assert_eq!(interval_from_duckdb_text(text), Some(expected), "{text}");
        }
        for unreadable in [
            "",
            "1 fortnight",
            "1:2",
            "00:60:00",
            "00:00:00.1234567",
            "x",
        ] {
            assert_eq!(interval_from_duckdb_text(unreadable), None, "{unreadable}");
        }
        // Beyond what 64-bit nanoseconds hold, the ISO rendering is still exact.
        assert_eq!(
            interval(0, 0, 9_223_372_036_800_000_000_i128 * 1000),
            "PT2562047788H"
        );
    }

    #[test]
    fn duckdb_zoned_timestamp_text_becomes_iso_8601_with_its_offset() {
        let cases = [
            (
                "2024-07-01 08:00:00.123456789-04",
                "2024-07-01T08:00:00.123456789-04:00",
            ),
            ("2024-01-01 10:00:00+00", "2024-01-01T10:00:00+00:00"),
            ("2024-01-01 15:45:00+05:45", "2024-01-01T15:45:00+05:45"),
            (
                "1900-01-01 00:00:00-04:56:02",
                "1900-01-01T00:00:00-04:56:02",
            ),
            ("infinity", "infinity"),
        ];
        for (text, expected) in cases {
            assert_eq!(
                zoned_timestamp_from_duckdb_text(text).as_deref(),
                Some(expected),
                "{text}"
            );
        }
        assert_eq!(
            zoned_timestamp_from_duckdb_text("0044-03-15 12:00:00+00 (BC)"),
            None
        );
    }

    #[test]
    fn zoned_timestamps_show_local_wall_clock_time_and_their_offset() {
        // 2026-11-27 03:10 UTC.
        let utc = 1_795_749_000_000_000;
        assert_eq!(
            timestamp(TimeUnit::Microsecond, utc, Zone::Utc),
            "2026-11-27T03:10:00Z"
        );
        assert_eq!(
            timestamp(TimeUnit::Microsecond, utc, Zone::Offset(-5 * 3600)),
            "2026-11-26T22:10:00-05:00"
        );
        assert_eq!(
            timestamp(
                TimeUnit::Microsecond,
                utc + 500_000,
                Zone::Offset(5 * 3600 + 45 * 60)
            ),
            "2026-11-27T08:55:00.5+05:45"
        );
        assert_eq!(
            timestamp(TimeUnit::Microsecond, utc, Zone::Offset(0)),
            "2026-11-27T03:10:00+00:00"
        );
        assert_eq!(
            timestamp(
                TimeUnit::Microsecond,
                utc,
                Zone::Offset(-(4 * 3600 + 56 * 60 + 2))
            ),
            "2026-11-26T22:13:58-04:56:02"
        );
        assert_eq!(
            timestamp(TimeUnit::Microsecond, utc, Zone::None),
            "2026-11-27T03:10:00"
        );
    }

    #[test]
    fn intervals_render_as_iso_durations() {
        assert_eq!(interval(0, 0, 0), "PT0S");
        assert_eq!(interval(14, 3, 3_723_500_000_000), "P1Y2M3DT1H2M3.5S");
        assert_eq!(interval(-1, 0, -1_000_000_000), "P-1MT-1S");
    }
}
