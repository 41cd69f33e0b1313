//! Axis ticks and the words on them: calendar steps for time, 1-2-5 steps for numbers, and the
//! formatting of dates, hours, numbers and category names.
//!
//! Times arrive as microseconds since the Unix epoch with the local wall clock already applied by
//! the caller, so they are read as a naive calendar (no time zone here); the conversion is the
//! proleptic Gregorian one of Howard Hinnant's `civil_from_days`.

use super::stats::nice_ticks;
use crate::calendar::{civil_from_days, days_from_civil};

const MICROS_PER_SECOND: i64 = 1_000_000;
const SECONDS_PER_DAY: i64 = 86_400;
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// One axis as drawn: its value range, where the ticks sit and what each says.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    /// The values at the two ends of the axis.
    pub(crate) range: (f64, f64),
    /// Tick positions with their labels, in increasing order.
    pub(crate) ticks: Vec<(f64, String)>,
    /// The axis title.
    pub(crate) title: String,
}

impl Axis {
    /// The label of the tick at `value` (the formatter plotters calls gets back the very values
    /// it was given as key points, so the nearest tick is that tick).
    pub(crate) fn label_at(&self, value: f64) -> String {
        self.ticks
            .iter()
            .min_by(|a, b| (a.0 - value).abs().total_cmp(&(b.0 - value).abs()))
            .map(|(_, label)| label.clone())
            .unwrap_or_default()
    }

    /// Just the tick positions.
    pub(crate) fn positions(&self) -> Vec<f64> {
        self.ticks.iter().map(|(at, _)| *at).collect()
    }
}

/// A numeric axis over `range` with about `target` intervals.
pub(crate) fn number_axis(range: (f64, f64), target: usize, title: &str) -> Axis {
    let (positions, step) = nice_ticks(range.0, range.1, target);
    let ticks = positions
        .into_iter()
        .map(|at| (at, format_tick(at, step)))
        .collect();
    Axis {
        range,
        ticks,
        title: clean_label(title, 60),
    }
}

/// A number printed with as many decimals as the tick step needs (none for a step of 5, one for
/// 0.5), or in scientific notation when it is very large or very small.
pub(crate) fn format_tick(value: f64, step: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    let magnitude = value.abs().max(step.abs());
    if magnitude >= 1e7 || (step.abs() < 1e-4 && value != 0.0) {
        return format!("{value:.1e}");
    }
    let decimals = (-step.abs().log10().floor()).max(0.0) as usize;
    format!("{value:.decimals$}")
}

/// A value for a sentence: integers as integers, others with about four significant digits.
pub(crate) fn format_value(value: f64) -> String {
    let magnitude = value.abs();
    if value == value.trunc() && magnitude < 1e15 {
        format!("{value:.0}")
    } else if !(1e-3..1e6).contains(&magnitude) {
        format!("{value:.3e}")
    } else {
        let decimals = (3 - magnitude.log10().floor() as i32).clamp(0, 6) as usize;
        let text = format!("{value:.decimals$}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// A calendar date and wall-clock time, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) second_of_day: i64,
}

/// The calendar reading of a microsecond timestamp.
pub(crate) fn civil(micros: i64) -> Civil {
    let seconds = micros.div_euclid(MICROS_PER_SECOND);
    let (year, month, day) = civil_from_days(seconds.div_euclid(SECONDS_PER_DAY));
    Civil {
        year,
        month,
        day,
        second_of_day: seconds.rem_euclid(SECONDS_PER_DAY),
    }
}

/// `YYYY-MM-DD HH:MM:SS`, the form the summaries use for times.
pub(crate) fn format_timestamp(micros: i64) -> String {
    let c = civil(micros);
    format!(
        "{} {}",
        format_date(&c),
        format_clock(c.second_of_day, true)
    )
}

/// `YYYY-MM-DD` of a timestamp.
pub(crate) fn format_day(micros: i64) -> String {
    format_date(&civil(micros))
}

/// `YYYY-MM-DD HH:MM` of a timestamp.
pub(crate) fn format_minute(micros: i64) -> String {
    let c = civil(micros);
    format!(
        "{} {}",
        format_date(&c),
        format_clock(c.second_of_day, false)
    )
}

fn format_date(c: &Civil) -> String {
    format!("{:04}-{:02}-{:02}", c.year, c.month, c.day)
}

/// `HH:MM`, or `HH:MM:SS` with seconds.
pub(crate) fn format_clock(second_of_day: i64, seconds: bool) -> String {
    let (h, m, s) = (
        second_of_day / 3600,
        second_of_day / 60 % 60,
        second_of_day % 60,
    );
    if seconds {
        format!("{h:02}:{m:02}:{s:02}")
    } else {
        format!("{h:02}:{m:02}")
    }
}

/// How far apart time ticks are: a fixed number of seconds, or whole calendar months.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimeStep {
    Seconds(i64),
    Months(i64),
}

/// The steps a time axis may use, shortest first: round clock and calendar intervals only.
const TIME_STEPS: [TimeStep; 30] = [
    TimeStep::Seconds(1),
    TimeStep::Seconds(5),
    TimeStep::Seconds(15),
    TimeStep::Seconds(30),
    TimeStep::Seconds(60),
    TimeStep::Seconds(5 * 60),
    TimeStep::Seconds(15 * 60),
    TimeStep::Seconds(30 * 60),
    TimeStep::Seconds(3600),
    TimeStep::Seconds(3 * 3600),
    TimeStep::Seconds(6 * 3600),
    TimeStep::Seconds(12 * 3600),
    TimeStep::Seconds(SECONDS_PER_DAY),
    TimeStep::Seconds(2 * SECONDS_PER_DAY),
    TimeStep::Seconds(7 * SECONDS_PER_DAY),
    TimeStep::Months(1),
    TimeStep::Months(2),
    TimeStep::Months(3),
    TimeStep::Months(6),
    TimeStep::Months(12),
    TimeStep::Months(24),
    TimeStep::Months(60),
    TimeStep::Months(120),
    TimeStep::Months(240),
    TimeStep::Months(600),
    TimeStep::Months(1200),
    TimeStep::Months(12_000),
    TimeStep::Months(120_000),
    TimeStep::Months(1_200_000),
    TimeStep::Months(12_000_000),
];

impl TimeStep {
    /// Roughly how long the step is, to compare with the span of the data.
    fn approx_micros(self) -> f64 {
        let seconds = match self {
            TimeStep::Seconds(s) => s as f64,
            TimeStep::Months(m) => m as f64 * 30.436_875 * SECONDS_PER_DAY as f64,
        };
        seconds * MICROS_PER_SECOND as f64
    }
}

/// A time axis over `[lo, hi]` (microseconds) with at most `max_ticks` ticks on round clock or
/// calendar boundaries. Labels stay short (`06:00`, `Jan 02`, `Mar 2024`, `2024`); the part they
/// leave out, when the whole axis shares it, goes into the title (`time (2024-01-02)`).
pub(crate) fn time_axis(lo: i64, hi: i64, max_ticks: usize, title: &str) -> Axis {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else {
        let hour = 3600 * MICROS_PER_SECOND;
        (lo.saturating_sub(hour), hi.saturating_add(hour))
    };
    let span = hi as f64 - lo as f64;
    let step = TIME_STEPS
        .iter()
        .copied()
        .find(|s| span / s.approx_micros() <= max_ticks.max(1) as f64)
        .unwrap_or(TimeStep::Months(12_000_000));
    let positions = time_tick_positions(lo, hi, step);
    let (first, last) = (civil(lo), civil(hi));
    let same_day = (first.year, first.month, first.day) == (last.year, last.month, last.day);
    let same_year = first.year == last.year;
    let ticks = positions
        .into_iter()
        .map(|at| {
            let c = civil(at);
            let label = match step {
                TimeStep::Seconds(s) if s < 60 => format_clock(c.second_of_day, true),
                TimeStep::Seconds(s) if s < SECONDS_PER_DAY => {
                    if c.second_of_day == 0 && !same_day {
                        month_day(&c)
                    } else {
                        format_clock(c.second_of_day, false)
                    }
                }
                TimeStep::Seconds(_) if same_year => month_day(&c),
                TimeStep::Seconds(_) => format_date(&c),
                TimeStep::Months(m) if m < 12 => {
                    format!("{} {}", month_name(&c), c.year)
                }
                TimeStep::Months(_) => format!("{}", c.year),
            };
            (at as f64, label)
        })
        .collect();
    let context = if same_day {
        format!(" ({})", format_date(&first))
    } else if same_year && matches!(step, TimeStep::Seconds(_)) {
        format!(" ({})", first.year)
    } else {
        String::new()
    };
    Axis {
        range: (lo as f64, hi as f64),
        ticks,
        title: format!("{}{context}", clean_label(title, 48)),
    }
}

fn month_day(c: &Civil) -> String {
    format!("{} {:02}", month_name(c), c.day)
}

/// The month's short English name (`civil` gives months 1 to 12).
fn month_name(c: &Civil) -> &'static str {
    let index = (c.month as usize).wrapping_sub(1);
    MONTHS.get(index).copied().unwrap_or("?")
}

/// The tick instants in `[lo, hi]` for a step: multiples of the step counted from midnight of
/// 1970-01-01 (weeks from Monday 1970-01-05), or month starts whose month number is a multiple
/// of the step (so quarters start in January, April, …).
fn time_tick_positions(lo: i64, hi: i64, step: TimeStep) -> Vec<i64> {
    // In i128: near the ends of the i64 range the offsets and products below would overflow.
    let (lo, hi) = (i128::from(lo), i128::from(hi));
    let micros_per_day = i128::from(SECONDS_PER_DAY * MICROS_PER_SECOND);
    let ticks: Vec<i128> = match step {
        TimeStep::Seconds(seconds) => {
            let step = i128::from(seconds * MICROS_PER_SECOND);
            let offset = if seconds == 7 * SECONDS_PER_DAY {
                4 * micros_per_day
            } else {
                0
            };
            let first = (lo - offset).div_euclid(step) + i128::from((lo - offset) % step != 0);
            let last = (hi - offset).div_euclid(step);
            (first..=last).map(|k| k * step + offset).collect()
        }
        TimeStep::Months(months) => {
            let start = civil(lo as i64);
            let mut index = start.year * 12 + i64::from(start.month) - 1;
            index = index.div_euclid(months) * months;
            let mut ticks = Vec::new();
            loop {
                let (year, month) = (index.div_euclid(12), index.rem_euclid(12) as u32 + 1);
                let at = i128::from(days_from_civil(year, month, 1)) * micros_per_day;
                if at > hi {
                    break;
                }
                if at >= lo {
                    ticks.push(at);
                }
                index += months;
            }
            ticks
        }
    };
    ticks.into_iter().map(|at| at as i64).collect()
}

/// The time-of-day axis of an AGP, in hours: 00:00 to 24:00 every three hours.
pub(crate) fn day_axis(title: &str) -> Axis {
    Axis {
        range: (0.0, 24.0),
        ticks: (0..=8)
            .map(|i| (f64::from(i * 3), format!("{:02}:00", i * 3)))
            .collect(),
        title: clean_label(title, 60),
    }
}

/// A category axis: bar `i` is centred on `i`; only every k-th bar is labelled when the labels
/// would not fit side by side.
pub(crate) fn category_axis(labels: &[String], max_ticks: usize, title: &str) -> Axis {
    let every = labels.len().div_ceil(max_ticks.max(1)).max(1);
    Axis {
        range: (-0.5, labels.len() as f64 - 0.5),
        ticks: labels
            .iter()
            .enumerate()
            .step_by(every)
            .map(|(i, label)| (i as f64, shorten_middle(&clean_label(label, 200), 16)))
            .collect(),
        title: clean_label(title, 60),
    }
}

/// A category name cut to `max_chars` by dropping its middle, so names that differ only at the
/// end (`sensor 12`, `sensor 13`) stay apart.
pub(crate) fn shorten_middle(text: &str, max_chars: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= max_chars {
        return text.to_string();
    }
    let keep = max_chars.saturating_sub(1);
    let tail = keep / 2;
    let head = keep - tail;
    let mut cut: String = chars.iter().take(head).collect();
    cut.push('…');
    cut.extend(chars.iter().skip(chars.len() - tail));
    cut
}

/// Text fit for one line on a chart: control characters become spaces and anything past
/// `max_chars` is cut with an ellipsis, so a long name cannot push the plot off the image.
pub(crate) fn clean_label(text: &str, max_chars: usize) -> String {
    let cleaned: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let cleaned = cleaned.trim();
    if cleaned.chars().count() <= max_chars {
        cleaned.to_string()
    } else {
        let mut cut: String = cleaned.chars().take(max_chars.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: i64 = 60_000_000;
    const HOUR: i64 = 60 * MINUTE;
    const DAY: i64 = 24 * HOUR;
    /// 2024-03-04 00:00 (a Monday), in microseconds.
    const MONDAY: i64 = 1_709_510_400_000_000;

    #[test]
    fn civil_dates_and_clock_times_read_the_calendar() {
        assert_eq!(format_timestamp(0), "1970-01-01 00:00:00");
        assert_eq!(
            format_timestamp(MONDAY + 13 * HOUR + 5 * MINUTE),
            "2024-03-04 13:05:00"
        );
        let leap = civil(MONDAY - 4 * DAY);
        assert_eq!((leap.year, leap.month, leap.day), (2024, 2, 29));
        assert_eq!(format_timestamp(-1), "1969-12-31 23:59:59");
    }

    #[test]
    fn time_axis_within_a_day_labels_clock_times_and_names_the_date() {
        let axis = time_axis(MONDAY, MONDAY + DAY - 5 * MINUTE, 8, "time");
        let labels: Vec<&str> = axis.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "00:00", "03:00", "06:00", "09:00", "12:00", "15:00", "18:00", "21:00"
            ]
        );
        assert_eq!(axis.title, "time (2024-03-04)");
    }

    #[test]
    fn time_axis_over_weeks_and_years_uses_calendar_steps() {
        let weeks = time_axis(MONDAY, MONDAY + 27 * DAY, 6, "t");
        let labels: Vec<&str> = weeks.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(labels, ["Mar 04", "Mar 11", "Mar 18", "Mar 25"], "Mondays");
        let years = time_axis(MONDAY, MONDAY + 3 * 365 * DAY, 6, "t");
        let labels: Vec<&str> = years.ticks.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(
            labels,
            [
                "Jul 2024", "Jan 2025", "Jul 2025", "Jan 2026", "Jul 2026", "Jan 2027"
            ]
        );
        let day = day_axis("time of day");
        assert_eq!(day.ticks.first().map(|t| t.1.as_str()), Some("00:00"));
        assert_eq!(day.ticks.last().map(|t| t.1.as_str()), Some("24:00"));
    }
}
