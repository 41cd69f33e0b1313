//! The ambulatory glucose profile: all days folded onto one, readings grouped by hour of day,
//! each hour's spread drawn as percentile bands around its median.

use std::collections::BTreeSet;

use serde_json::Value;

use super::axes::{civil, day_axis, format_day, format_value, number_axis};
use super::kinds::{
    Figure, MICROS_PER_DAY, Prepared, json_number, name, percent, skipped_note, y_ticks,
};
use super::stats::{min_max, padded, quantile_cont, sorted};
use super::{ChartKind, ChartOptions, ChartSummary, PlotData, PlotError, XValue};

/// The AGP groups readings by hour of day: 24 bins make a summary table an agent can read
/// whole, and with CGM readings every 5 minutes each bin gets 12 readings a day, so even a few
/// days give the 5th and 95th percentiles enough readings to mean something (15-minute bins
/// would need about four times as many days for the same).
pub(crate) const AGP_BINS: usize = 24;

/// The readings of one hour of day across all days.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgpBin {
    /// How many readings.
    pub(crate) n: usize,
    /// The 5th, 25th, 50th, 75th and 95th percentiles (`None` without readings).
    pub(crate) percentiles: Option<[f64; 5]>,
}

/// The AGP's percentiles, in the order of [`AgpBin::percentiles`].
pub(crate) const AGP_QUANTILES: [f64; 5] = [0.05, 0.25, 0.5, 0.75, 0.95];

/// The ambulatory glucose profile: readings grouped by hour of day across all days.
pub(super) fn agp(data: &PlotData, options: &ChartOptions) -> Result<Prepared, PlotError> {
    let mut by_hour: Vec<Vec<f64>> = vec![Vec::new(); AGP_BINS];
    let mut days = BTreeSet::new();
    let mut all = Vec::new();
    for (x, y) in data.x.iter().zip(&data.y) {
        let micros = match x {
            XValue::Time(micros) => *micros,
            XValue::Number(_) | XValue::Category(_) => {
                return Err(PlotError::WrongXType {
                    kind: ChartKind::Agp,
                    found: x.type_name(),
                    expected: "timestamps",
                });
            }
        };
        if let Some(y) = y.filter(|y| y.is_finite()) {
            by_hour[(civil(micros).second_of_day / 3600) as usize].push(y);
            days.insert(micros.div_euclid(MICROS_PER_DAY));
            all.push(y);
        }
    }
    if all.is_empty() {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    }
    let skipped = data.y.len() - all.len();
    let bins: Vec<AgpBin> = by_hour
        .into_iter()
        .map(|values| {
            let values = sorted(values);
            AgpBin {
                n: values.len(),
                percentiles: (!values.is_empty())
                    .then(|| AGP_QUANTILES.map(|q| quantile_cont(&values, q).unwrap_or(values[0]))),
            }
        })
        .collect();
    let y_name = name(&data.y_label, "glucose");
    let target = options.target_range;
    let low = bins.iter().flat_map(|b| b.percentiles.map(|p| p[0]));
    let high = bins.iter().flat_map(|b| b.percentiles.map(|p| p[4]));
    let (mut lo, _) = min_max(low).unwrap_or((0.0, 0.0));
    let (_, mut hi) = min_max(high).unwrap_or((0.0, 0.0));
    if let Some((t_lo, t_hi)) = target {
        (lo, hi) = (lo.min(t_lo), hi.max(t_hi));
    }
    let x_axis = day_axis("time of day");
    let y_axis = number_axis(padded((lo, hi)), y_ticks(options), &y_name);
    let medians: Vec<(usize, f64)> = bins
        .iter()
        .enumerate()
        .filter_map(|(hour, b)| b.percentiles.map(|p| (hour, p[2])))
        .collect();
    let lowest = medians.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let highest = medians.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let all = sorted(all);
    let first = days.first().copied().unwrap_or(0) * MICROS_PER_DAY;
    let last = days.last().copied().unwrap_or(0) * MICROS_PER_DAY;
    let mut text = format!(
        "AGP of {n} {y_name} readings on {d} days ({} to {}), by hour of day: overall median {}",
        format_day(first),
        format_day(last),
        format_value(quantile_cont(&all, 0.5).unwrap_or(all[0])),
        n = all.len(),
        d = days.len(),
    );
    if let (Some(&(lo_hour, lo_value)), Some(&(hi_hour, hi_value))) = (lowest, highest) {
        text.push_str(&format!(
            "; the hourly median is lowest at {lo_hour:02}:00 ({}) and highest at {hi_hour:02}:00 ({}).",
            format_value(lo_value),
            format_value(hi_value)
        ));
    }
    if let Some((t_lo, t_hi)) = target {
        let below = all.iter().filter(|&&v| v < t_lo).count();
        let above = all.iter().filter(|&&v| v > t_hi).count();
        text.push_str(&format!(
            " {} of readings are within the target range {}–{} ({} below, {} above).",
            percent(all.len() - below - above, all.len()),
            format_value(t_lo),
            format_value(t_hi),
            percent(below, all.len()),
            percent(above, all.len()),
        ));
    }
    if days.len() < 5 {
        text.push_str(" With fewer than 5 days of data the bands mostly show the spread within each hour, not between days.");
    }
    text.push_str(&skipped_note(skipped));
    let rows = bins
        .iter()
        .enumerate()
        .map(|(hour, bin)| {
            let mut row = vec![Value::from(format!("{hour:02}:00")), Value::from(bin.n)];
            row.extend((0..5).map(|i| bin.percentiles.map_or(Value::Null, |p| json_number(p[i]))));
            row
        })
        .collect();
    Ok(Prepared {
        figure: Figure::Agp(bins),
        x: x_axis,
        y: y_axis,
        target,
        summary: ChartSummary {
            columns: ["hour", "n", "p5", "p25", "p50", "p75", "p95"]
                .iter()
                .map(|c| c.to_string())
                .collect(),
            rows,
            text,
        },
    })
}

/// The AGP's hours with readings as runs of consecutive hours, each a list of
/// (x in hours, percentiles). Points sit at the middle of their hour. When both 00:00 and 23:00
/// have readings the profile wraps around midnight, so both ends get a point at the midnight
/// edge with the mean of the two hours; a lone hour is drawn across its middle half.
pub(super) fn agp_runs(bins: &[AgpBin]) -> Vec<Vec<(f64, [f64; 5])>> {
    let last = bins.len() - 1;
    let wrap = match (&bins[0].percentiles, &bins[last].percentiles) {
        (Some(first), Some(end)) => Some(std::array::from_fn::<f64, 5, _>(|i| {
            (first[i] + end[i]) / 2.0
        })),
        _ => None,
    };
    let mut runs = Vec::new();
    let mut run: Vec<(f64, [f64; 5])> = Vec::new();
    for (hour, bin) in bins.iter().enumerate() {
        match bin.percentiles {
            Some(p) => {
                if hour == 0
                    && let Some(edge) = wrap
                {
                    run.push((0.0, edge));
                }
                run.push((hour as f64 + 0.5, p));
                if hour == last
                    && let Some(edge) = wrap
                {
                    run.push((bins.len() as f64, edge));
                }
            }
            None => runs.push(std::mem::take(&mut run)),
        }
    }
    runs.push(run);
    runs.retain(|run| !run.is_empty());
    for run in &mut runs {
        if let [(x, p)] = run.as_slice() {
            let (x, p) = (*x, *p);
            *run = vec![(x - 0.25, p), (x + 0.25, p)];
        }
    }
    runs
}
