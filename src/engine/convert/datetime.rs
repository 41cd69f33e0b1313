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
        out.extend(digits[..kept].iter().map(|&d| char::from(d)));
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
pub(super) fn interval(months: i32, days: i32, nanos: i64) -> String {
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
        let abs = i128::from(nanos).abs();
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
