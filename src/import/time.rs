//! Times as the vendors write them.
//!
//! A CSV export writes the device's local wall-clock time in the order of the account's locale:
//! `2026-10-24T08:15:00` (Clarity), `10-24-2026 08:15` (LibreView in the US), `24-10-2026 08:15`
//! (LibreView in Germany or France), `24.10.2026 08:15:00` (CareLink in Germany), `10/24/26
//! 8:15:00` (older CareLink), with 12-hour clocks (`8:15 PM`) in some. The year position is
//! plain from a four-digit group; whether the day or the month comes first is decided for the
//! whole column ([`OrderVote`]): the order that reads the most values as dates from 1990 to
//! 2100, and on a tie the one whose dates span the least time (a day read as a month spreads the
//! dates over the year).
//!
//! Nightscout's instants are ISO 8601 with an offset or epoch milliseconds ([`instant_ms`]).

use crate::calendar::{civil_from_days, days_from_civil};

/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;

/// A local wall-clock time without zone: microseconds since 1970-01-01 00:00 of that clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LocalTime(i64);

impl LocalTime {
    /// The time from its parts, if they name one (a real day of a real month).
    pub fn new(
        year: i64,
        month: u32,
        day: u32,
        hour: u32,
        minute: u32,
        second: u32,
        micros: u32,
    ) -> Option<LocalTime> {
        if !(1..=12).contains(&month)
            || day == 0
            || day > days_in_month(year, month)
            || hour > 23
            || minute > 59
            || second > 59
            || micros > 999_999
        {
            return None;
        }
        let days = days_from_civil(year, month, day);
        let micros_of_day = ((i64::from(hour) * 60 + i64::from(minute)) * 60 + i64::from(second))
            * 1_000_000
            + i64::from(micros);
        days.checked_mul(DAY_MICROS)?
            .checked_add(micros_of_day)
            .map(LocalTime)
    }

    /// Microseconds since 1970-01-01 00:00 of the same clock.
    pub fn micros(self) -> i64 {
        self.0
    }

    /// The year.
    pub fn year(self) -> i64 {
        civil_from_days(self.0.div_euclid(DAY_MICROS)).0
    }
}

impl std::fmt::Display for LocalTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (y, m, d) = civil_from_days(self.0.div_euclid(DAY_MICROS));
        let of_day = self.0.rem_euclid(DAY_MICROS) / 1_000_000;
        write!(
            f,
            "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
            of_day / 3600,
            of_day / 60 % 60,
            of_day % 60
        )
    }
}

fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Which of a date's three groups is the year, the month and the day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateOrder {
    /// 2026-10-24, 2026/10/24.
    YearMonthDay,
    /// 10-24-2026, 10/24/26 (the United States).
    MonthDayYear,
    /// 24-10-2026, 24.10.2026, 24/10/26 (most of the world).
    DayMonthYear,
}

impl DateOrder {
    const ALL: [DateOrder; 3] = [
        DateOrder::YearMonthDay,
        DateOrder::MonthDayYear,
        DateOrder::DayMonthYear,
    ];
}

/// A date and time split into numbers, before the order of the date's groups is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parts {
    /// The date's groups, each with its number of digits.
    date: [(u32, usize); 3],
    hour: u32,
    minute: u32,
    second: u32,
    micros: u32,
}

/// Split `text` (`<date> <time>` or `<date>T<time>`): a date of three groups of digits joined by
/// `-`, `/` or `.`, then `H:MM`, `H:MM:SS` or `H:MM:SS.ffffff`, then optionally `AM`/`PM`.
fn split(text: &str) -> Option<Parts> {
    let text = text.trim();
    let (date, time) = text.split_once([' ', 'T'])?;
    let time = time.trim();
    let mut groups = date.split(['-', '/', '.']);
    let mut date_parts = [(0u32, 0usize); 3];
    for part in &mut date_parts {
        let group = groups.next()?;
        if group.is_empty() || group.len() > 4 || !group.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *part = (group.parse().ok()?, group.len());
    }
    if groups.next().is_some() {
        return None;
    }
    let lower = time.to_ascii_lowercase();
    let (clock, pm) = if let Some(rest) = lower
        .strip_suffix("pm")
        .or_else(|| lower.strip_suffix("p.m."))
    {
        (rest.trim_end().to_string(), Some(true))
    } else if let Some(rest) = lower
        .strip_suffix("am")
        .or_else(|| lower.strip_suffix("a.m."))
    {
        (rest.trim_end().to_string(), Some(false))
    } else {
        (lower, None)
    };
    let mut fields = clock.split(':');
    let hour: u32 = digits(fields.next()?, 1, 2)?;
    let minute: u32 = digits(fields.next()?, 2, 2)?;
    let (second, micros) = match fields.next() {
        None => (0, 0),
        Some(rest) => {
            let (whole, fraction) = rest.split_once('.').unwrap_or((rest, ""));
            let second = digits(whole, 2, 2)?;
            let micros = if fraction.is_empty() {
                0
            } else {
                if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let six: String = fraction.chars().chain("000000".chars()).take(6).collect();
                six.parse().ok()?
            };
            (second, micros)
        }
    };
    if fields.next().is_some() {
        return None;
    }
    let hour = match pm {
        None => hour,
        Some(_) if hour == 0 || hour > 12 => return None,
        Some(true) => hour % 12 + 12,
        Some(false) => hour % 12,
    };
    Some(Parts {
        date: date_parts,
        hour,
        minute,
        second,
        micros,
    })
}

/// `text` as a number of `min`–`max` ASCII digits.
fn digits(text: &str, min: usize, max: usize) -> Option<u32> {
    if text.len() < min || text.len() > max || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn year_of((value, digits): (u32, usize)) -> Option<i64> {
    match digits {
        4 => Some(i64::from(value)),
        // Two-digit years are of this century: no CGM wrote a date before 2000 that way.
        2 => Some(2000 + i64::from(value)),
        _ => None,
    }
}

fn assemble(parts: Parts, order: DateOrder) -> Option<LocalTime> {
    let [a, b, c] = parts.date;
    let year_last = a.1 <= 2 && b.1 <= 2;
    let (year, month, day) = match order {
        DateOrder::YearMonthDay if a.1 == 4 && b.1 <= 2 && c.1 <= 2 => (year_of(a)?, b.0, c.0),
        DateOrder::MonthDayYear if year_last => (year_of(c)?, a.0, b.0),
        DateOrder::DayMonthYear if year_last => (year_of(c)?, b.0, a.0),
        DateOrder::YearMonthDay | DateOrder::MonthDayYear | DateOrder::DayMonthYear => {
            return None;
        }
    };
    LocalTime::new(
        year,
        month,
        day,
        parts.hour,
        parts.minute,
        parts.second,
        parts.micros,
    )
}

/// `text` as a local time with its date groups in `order`.
pub fn parse(text: &str, order: DateOrder) -> Option<LocalTime> {
    assemble(split(text)?, order)
}

/// Counts, for each [`DateOrder`], how many of a column's values it reads as a plausible date
/// (1990 to 2100) and the earliest and latest it reads; [`OrderVote::decide`] then picks one.
#[derive(Debug, Clone, Default)]
pub struct OrderVote {
    /// One per order of [`DateOrder::ALL`], in its order.
    tallies: [Tally; 3],
}

/// What one [`DateOrder`] read of a column.
#[derive(Debug, Clone, Copy, Default)]
struct Tally {
    read: u64,
    earliest: Option<LocalTime>,
    latest: Option<LocalTime>,
}

impl Tally {
    /// The time between the earliest and the latest date read; the most there is for none.
    fn span(&self) -> i64 {
        match (self.earliest, self.latest) {
            (Some(e), Some(l)) => l.micros() - e.micros(),
            _ => i64::MAX,
        }
    }
}

impl OrderVote {
    /// Count one value.
    pub fn add(&mut self, text: &str) {
        let Some(parts) = split(text) else {
            return;
        };
        for (order, tally) in DateOrder::ALL.into_iter().zip(&mut self.tallies) {
            if let Some(time) = assemble(parts, order)
                && (1990..=2100).contains(&time.year())
            {
                tally.read += 1;
                tally.earliest = Some(tally.earliest.map_or(time, |e| e.min(time)));
                tally.latest = Some(tally.latest.map_or(time, |l| l.max(time)));
            }
        }
    }

    /// The order that read the most values; on a tie the one whose dates span the least time;
    /// then year-month-day, month-day-year, day-month-year.
    pub fn decide(&self) -> DateOrder {
        DateOrder::ALL
            .into_iter()
            .zip(&self.tallies)
            .enumerate()
            .max_by(|(a, (_, of_a)), (b, (_, of_b))| {
                of_a.read
                    .cmp(&of_b.read)
                    .then(of_b.span().cmp(&of_a.span()))
                    .then(b.cmp(a))
            })
            .map_or(DateOrder::ALL[0], |(_, (order, _))| order)
    }
}

/// An instant written in ISO 8601 (`2026-10-24T06:30:00.000Z`, `…+10:00`, `…+1000`, or without
/// an offset, which Nightscout means as UTC) as milliseconds since the epoch.
pub fn instant_ms(text: &str) -> Option<i64> {
    let text = text.trim();
    let body_end = text
        .char_indices()
        .skip(10)
        .find(|(_, c)| matches!(c, 'Z' | 'z' | '+') || (*c == '-'))
        .map(|(i, _)| i)
        .unwrap_or(text.len());
    let (body, zone) = text.split_at(body_end);
    let local = parse(body, DateOrder::YearMonthDay)?;
    let offset_minutes: i64 = match zone {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = if zone.starts_with('-') { -1 } else { 1 };
            let digits: String = zone.get(1..)?.chars().filter(|c| *c != ':').collect();
            if digits.len() != 4 && digits.len() != 2 {
                return None;
            }
            let hours: i64 = digits.get(0..2)?.parse().ok()?;
            let minutes: i64 = digits
                .get(2..)
                .filter(|m| !m.is_empty())
                .map_or(Some(0), |m| m.parse().ok())?;
            if hours > 18 || minutes > 59 {
                return None;
            }
            sign * (hours * 60 + minutes)
        }
    };
    Some(local.micros().div_euclid(1000) - offset_minutes * 60_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, order: DateOrder) -> Option<String> {
        parse(text, order).map(|t| t.to_string())
    }

    #[test]
    fn the_vendors_ways_of_writing_a_local_time() {
        use DateOrder::*;
        for (text, order, want) in [
            ("2026-10-24T08:15:00", YearMonthDay, "2026-10-24 08:15:00"),
            ("2026/07/25 09:35:28", YearMonthDay, "2026-07-25 09:35:28"),
            ("10-24-2026 08:15", MonthDayYear, "2026-10-24 08:15:00"),
            ("24-10-2026 08:15", DayMonthYear, "2026-10-24 08:15:00"),
            ("24.10.2026 08:15:30", DayMonthYear, "2026-10-24 08:15:30"),
            ("1/02/06 15:04:05", MonthDayYear, "2006-01-02 15:04:05"),
            ("10/24/2026 8:15 PM", MonthDayYear, "2026-10-24 20:15:00"),
            ("10/24/2026 12:05 AM", MonthDayYear, "2026-10-24 00:05:00"),
            (
                "2026-10-24 08:15:00.123",
                YearMonthDay,
                "2026-10-24 08:15:00",
            ),
        ] {
            assert_eq!(at(text, order).as_deref(), Some(want), "{text}");
        }
        assert_eq!(at("24-10-2026 08:15", MonthDayYear), None);
        assert_eq!(at("2026-02-30 08:15", YearMonthDay), None);
        assert_eq!(at("2026-10-24 25:00", YearMonthDay), None);
        assert_eq!(at("10/24/2026 13:05 PM", MonthDayYear), None);
        assert_eq!(at("yesterday", DayMonthYear), None);
    }

    #[test]
    fn the_order_is_decided_for_the_whole_column() {
        let mut us = OrderVote::default();
        for text in ["10-24-2026 08:15", "10-25-2026 08:15", "11-01-2026 08:15"] {
            us.add(text);
        }
        assert_eq!(us.decide(), DateOrder::MonthDayYear);
        let mut eu = OrderVote::default();
        for text in ["24-10-2026 08:15", "01-11-2026 08:15"] {
            eu.add(text);
        }
        assert_eq!(eu.decide(), DateOrder::DayMonthYear);
        // Days 1 to 12 only: both read them, and day-first spreads them over months.
        let mut ambiguous = OrderVote::default();
        for text in ["01-11-2026 08:15", "02-11-2026 08:15", "03-11-2026 08:15"] {
            ambiguous.add(text);
        }
        assert_eq!(ambiguous.decide(), DateOrder::DayMonthYear);
    }

    #[test]
    fn iso_instants_with_and_without_offsets() {
        let utc = instant_ms("2026-10-24T06:30:00.000Z").unwrap();
        assert_eq!(
            utc,
            (days_from_civil(2026, 10, 24) * 86_400 + 6 * 3600 + 1800) * 1000
        );
        assert_eq!(instant_ms("2026-10-24T16:30:00+10:00"), Some(utc));
        assert_eq!(instant_ms("2026-10-24T16:30:00+1000"), Some(utc));
        assert_eq!(instant_ms("2026-10-24T04:30:00-02:00"), Some(utc));
        assert_eq!(instant_ms("2026-10-24T06:30:00"), Some(utc));
        assert_eq!(instant_ms("2026-10-24T06:30:00+99:00"), None);
        assert_eq!(instant_ms("x"), None);
    }
}
