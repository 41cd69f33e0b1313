//! Time in ranges: the consensus stacked bar (Battelino et al., Diabetes Care 2019) of the
//! share of readings very low (< 54 mg/dL), low (54–69), in range (70–180), high (181–250) and
//! very high (> 250), each with its percentage, and the consensus goals for each.

use serde_json::Value;

use super::axes::Axis;
use super::figure::{Figure, Prepared, Range, Ranges, json_number, skipped_note};
use super::glucose::{TARGET, VERY_HIGH, VERY_LOW, glucose_axis, in_mg_dl, mmol_l_note};
use super::{ChartSummary, PlotData, PlotError};
use crate::clinical::{HIGH_ABOVE, LOW_BELOW, VERY_HIGH_ABOVE, VERY_LOW_BELOW, goals};

/// A range as the report states it: its name, its bounds, its goal, and whether the readings
/// meet that goal.
type RangeSpec = (&'static str, String, String, bool);

/// Which range a reading in mg/dL falls in, 0 (very low) to 4 (very high). Readings are
/// compared as the report does: below 54, below 70, up to 180, up to 250, above.
pub(crate) fn range_of(mg_dl: f64) -> usize {
    if mg_dl < VERY_LOW {
        0
    } else if mg_dl < TARGET.0 {
        1
    } else if mg_dl <= TARGET.1 {
        2
    } else if mg_dl <= VERY_HIGH {
        3
    } else {
        4
    }
}

/// The stacked time-in-ranges bar of the y values (x is not used).
pub(super) fn tir(data: &PlotData) -> Result<Prepared, PlotError> {
    let values: Vec<f64> = data
        .y
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    if values.is_empty() {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    }
    let skipped = data.y.len() - values.len();
    let (values, converted) = in_mg_dl(values);
    let mut counts = [0usize; 5];
    for v in &values {
        // `range_of` is one of the five ranges.
        if let Some(count) = counts.get_mut(range_of(*v)) {
            *count += 1;
        }
    }
    let total = values.len();
    let share = |n: usize| n as f64 * 100.0 / total as f64;
    // The goals for "low" and "high" count their range together with the one beyond it.
    let below_70 = share(counts[0] + counts[1]);
    let above_180 = share(counts[3] + counts[4]);
    // The consensus goals for most adults with type 1 or type 2 diabetes.
    let specs: [RangeSpec; 5] = [
        (
            "very low",
            format!("<{VERY_LOW_BELOW}"),
            format!("<{}%", goals::BELOW_VERY_LOW_UNDER),
            share(counts[0]) < goals::BELOW_VERY_LOW_UNDER,
        ),
        (
            "low",
            format!("{VERY_LOW_BELOW}–{}", LOW_BELOW - 1),
            format!("<{}% below {LOW_BELOW}", goals::BELOW_LOW_UNDER),
            below_70 < goals::BELOW_LOW_UNDER,
        ),
        (
            "in range",
            format!("{LOW_BELOW}–{HIGH_ABOVE}"),
            format!(">{}%", goals::IN_RANGE_OVER),
            share(counts[2]) > goals::IN_RANGE_OVER,
        ),
        (
            "high",
            format!("{}–{VERY_HIGH_ABOVE}", HIGH_ABOVE + 1),
            format!("<{}% above {HIGH_ABOVE}", goals::ABOVE_HIGH_UNDER),
            above_180 < goals::ABOVE_HIGH_UNDER,
        ),
        (
            "very high",
            format!(">{VERY_HIGH_ABOVE}"),
            format!("<{}%", goals::ABOVE_VERY_HIGH_UNDER),
            share(counts[4]) < goals::ABOVE_VERY_HIGH_UNDER,
        ),
    ];
    let ranges: Ranges = specs
        .into_iter()
        .zip(counts)
        .map(|((name, bounds, goal, meets_goal), n)| Range {
            name,
            bounds,
            n,
            percent: share(n),
            goal,
            meets_goal,
        })
        .collect();
    let parts: Vec<String> = ranges
        .iter()
        .map(|r| format!("{} {} mg/dL {:.1}%", r.name, r.bounds, r.percent))
        .collect();
    let missed: Vec<String> = ranges
        .iter()
        .filter(|r| !r.meets_goal)
        .map(|r| format!("{} (goal {})", r.name, r.goal))
        .collect();
    let mut text = format!(
        "Time in ranges over {total} glucose readings: {}. Below {LOW_BELOW}: {:.1}%, above \
         {HIGH_ABOVE}: {:.1}%.",
        parts.join(", "),
        below_70,
        above_180,
    );
    if missed.is_empty() {
        text.push_str(" Every consensus goal is met.");
    } else {
        text.push_str(&format!(" Consensus goals not met: {}.", missed.join(", ")));
    }
    text.push_str(" Percentages are shares of readings, which equal shares of time when the CGM reads at a steady interval.");
    if converted {
        text.push_str(&mmol_l_note("counted"));
    }
    text.push_str(&skipped_note(skipped));
    let rows = ranges
        .iter()
        .rev()
        .map(|r| {
            vec![
                Value::from(r.name),
                Value::from(r.bounds.as_str()),
                Value::from(r.n),
                json_number((r.percent * 10.0).round() / 10.0),
                Value::from(r.goal.as_str()),
                Value::from(r.meets_goal),
            ]
        })
        .collect();
    let highest = values.iter().copied().fold(0.0_f64, f64::max);
    Ok(Prepared {
        figure: Figure::Tir(ranges),
        x: Axis {
            range: (0.0, 1.0),
            ticks: Vec::new(),
            title: String::new(),
        },
        y: glucose_axis(highest),
        target: None,
        summary: ChartSummary {
            columns: ["range", "mg_dl", "n", "percent", "goal", "meets_goal"]
                .iter()
                .map(|c| c.to_string())
                .collect(),
            rows,
            text,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_on_a_threshold_fall_in_the_range_the_report_gives_them() {
        assert_eq!(range_of(53.9), 0);
        assert_eq!(range_of(54.0), 1);
        assert_eq!(range_of(69.9), 1);
        assert_eq!(range_of(70.0), 2);
        assert_eq!(range_of(180.0), 2);
        assert_eq!(range_of(180.5), 3);
        assert_eq!(range_of(250.0), 3);
        assert_eq!(range_of(251.0), 4);
    }
}
