//! The ambulatory glucose profile, laid out as the international consensus AGP report draws it
//! (Battelino et al., Diabetes Care 2019; Danne et al., Diabetes Care 2017): all days folded
//! onto one, the median with the 25–75 % and 5–95 % bands, the target range 70–180 mg/dL
//! shaded, reference lines at 54 and 250 mg/dL, the percentiles labelled at the right, and a
//! header with the period, the days, the time the CGM was active, the mean, GMI and CV.
//!
//! The curves come from 15-minute bins of the time of day, each percentile then smoothed over
//! the neighbouring bins (weights 1-2-3-2-1, an hour and a quarter, wrapping at midnight):
//! finer than hourly bins and as smooth as the printed report. The summary table an agent reads
//! stays hourly, from the raw readings, so every number in it can be reproduced with SQL
//! (`quantile_cont(glucose, 0.05) … GROUP BY hour(ts)`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::axes::{civil, day_axis, format_day, format_value};
use super::figure::{
    AgpFigure, Figure, MICROS_PER_DAY, Prepared, json_number, percent, skipped_note,
};
use super::glucose::{TARGET, glucose_axis, in_mg_dl, mmol_l_note};
use super::stats::{quantile_cont, sorted, spread};
use crate::clinical::gmi;

use super::{ChartKind, ChartOptions, ChartSummary, PlotData, PlotError, XValue};

/// The summary table's bins: hours of the day.
pub(crate) const AGP_BINS: usize = 24;
/// The drawn curves' bins: quarter hours of the day.
pub(crate) const CURVE_BINS: usize = 96;
/// Weights of the smoothing over neighbouring curve bins, centred.
const SMOOTHING: [f64; 5] = [1.0, 2.0, 3.0, 2.0, 1.0];

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

/// The labels of the five curves at the right edge.
pub(crate) const AGP_LABELS: [&str; 5] = ["5%", "25%", "50%", "75%", "95%"];

/// The consensus metrics of a set of readings, in mg/dL.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Metrics {
    /// Days of data: the time from the first reading to the last (plus one interval), in
    /// whole days (14 days of readings every 5 minutes are 14, though they touch 15 dates).
    pub(crate) days: i64,
    /// The share of that time covered by readings, in percent.
    pub(crate) active_percent: f64,
    /// Mean glucose.
    pub(crate) mean: f64,
    /// Glucose management indicator, percent: 3.31 + 0.02392 × mean (Bergenstal et al. 2018).
    pub(crate) gmi: f64,
    /// Coefficient of variation, percent: sample SD / mean.
    pub(crate) cv: f64,
    /// The usual interval between readings, in microseconds.
    pub(crate) interval: i64,
}

/// The consensus metrics of readings at `times` (sorted or not) with `values` in mg/dL.
pub(crate) fn metrics(times: &[i64], values: &[f64]) -> Metrics {
    let mut times = times.to_vec();
    times.sort_unstable();
    times.dedup();
    let mut gaps: Vec<i64> = times
        .windows(2)
        .filter_map(|pair| match pair {
            [earlier, later] => Some(later - earlier),
            _ => None,
        })
        .collect();
    gaps.sort_unstable();
    // The usual interval: the median gap, between one and fifteen minutes (CGMs read every 1,
    // 5 or 15 minutes; a median outside that is a sparse series, counted as 5 minutes).
    let minute = 60_000_000;
    let interval = match gaps.get(gaps.len() / 2) {
        Some(&gap) if (minute..=15 * minute).contains(&gap) => gap,
        _ => 5 * minute,
    };
    let (first, last) = (
        times.first().copied().unwrap_or(0),
        times.last().copied().unwrap_or(0),
    );
    let covered = (last - first).saturating_add(interval).max(1) as f64;
    let active_percent = (times.len() as f64 * interval as f64 / covered * 100.0).min(100.0);
    let n = values.len().max(1) as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = if values.len() > 1 {
        values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    Metrics {
        days: ((covered / MICROS_PER_DAY as f64).round() as i64).max(1),
        active_percent,
        mean,
        gmi: gmi(mean),
        cv: if mean > 0.0 {
            variance.sqrt() / mean * 100.0
        } else {
            0.0
        },
        interval,
    }
}

/// The ambulatory glucose profile.
pub(super) fn agp(data: &PlotData, options: &ChartOptions) -> Result<Prepared, PlotError> {
    let mut times = Vec::new();
    let mut values = Vec::new();
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
            times.push(micros);
            values.push(y);
        }
    }
    if values.is_empty() {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    }
    let skipped = data.y.len() - values.len();
    let (values, converted) = in_mg_dl(values);
    let mut by_hour: Vec<Vec<f64>> = vec![Vec::new(); AGP_BINS];
    let mut by_quarter: Vec<Vec<f64>> = vec![Vec::new(); CURVE_BINS];
    let mut days = BTreeSet::new();
    for (&micros, &y) in times.iter().zip(&values) {
        let second = civil(micros).second_of_day as usize;
        // A second of the day is under 86,400: every reading has its hour and its quarter.
        if let Some(hour) = by_hour.get_mut(second / 3600) {
            hour.push(y);
        }
        if let Some(quarter) = by_quarter.get_mut(second / 900) {
            quarter.push(y);
        }
        days.insert(micros.div_euclid(MICROS_PER_DAY));
    }
    let bins: Vec<AgpBin> = by_hour.into_iter().map(percentile_bin).collect();
    let quarters: Vec<Option<[f64; 5]>> = by_quarter
        .into_iter()
        .map(|values| percentile_bin(values).percentiles)
        .collect();
    let runs = curve_runs(&smoothed(&quarters));
    let m = metrics(&times, &values);
    let target = Some(options.target_range.unwrap_or(TARGET));
    let highest = runs
        .iter()
        .flatten()
        .map(|(_, p)| p[4])
        .fold(0.0_f64, f64::max);
    let x_axis = day_axis("time of day");
    let y_axis = glucose_axis(highest);
    let first = days.first().copied().unwrap_or(0) * MICROS_PER_DAY;
    let last = days.last().copied().unwrap_or(0) * MICROS_PER_DAY;
    let header = format!(
        "{} – {} ({}) · CGM active {:.1}% · mean {} mg/dL · GMI {:.1}% · CV {:.1}%",
        format_day(first),
        format_day(last),
        days_text(m.days),
        m.active_percent,
        format_value(m.mean.round()),
        m.gmi,
        m.cv,
    );
    let medians: Vec<(usize, f64)> = bins
        .iter()
        .enumerate()
        .filter_map(|(hour, b)| b.percentiles.map(|p| (hour, p[2])))
        .collect();
    let lowest = medians.iter().min_by(|a, b| a.1.total_cmp(&b.1));
    let highest_median = medians.iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let all = sorted(values.iter().copied());
    let Some((_, median, _)) = spread(&all) else {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    };
    let mut text = format!(
        "AGP of {n} glucose readings (mg/dL) over {d} ({} to {}), by time of day: overall \
         median {}; {header}.",
        format_day(first),
        format_day(last),
        format_value(median),
        n = all.len(),
        d = days_text(m.days),
    );
    if let (Some(&(lo_hour, lo_value)), Some(&(hi_hour, hi_value))) = (lowest, highest_median) {
        text.push_str(&format!(
            " The hourly median is lowest at {lo_hour:02}:00 ({}) and highest at {hi_hour:02}:00 ({}).",
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
    text.push_str(
        " Drawn as the consensus AGP: median, 25–75% and 5–95% bands from 15-minute bins \
         smoothed over an hour and a quarter, target range shaded, lines at 54 and 250 mg/dL.",
    );
    if converted {
        text.push_str(&mmol_l_note("drawn"));
    }
    if m.days < 14 {
        text.push_str(" The consensus asks for 14 days of data with the CGM active at least 70% of the time; with fewer days the bands say less about a typical day.");
    }
    text.push_str(&skipped_note(skipped));
    let rows = bins
        .iter()
        .enumerate()
        .map(|(hour, bin)| {
            let mut row = vec![Value::from(format!("{hour:02}:00")), Value::from(bin.n)];
            match bin.percentiles {
                Some(percentiles) => row.extend(percentiles.map(json_number)),
                None => row.extend(std::iter::repeat_n(Value::Null, AGP_QUANTILES.len())),
            }
            row
        })
        .collect();
    Ok(Prepared {
        figure: Figure::Agp(AgpFigure { runs, header }),
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

/// `1 day`, `14 days`.
fn days_text(days: i64) -> String {
    if days == 1 {
        "1 day".to_string()
    } else {
        format!("{days} days")
    }
}

fn percentile_bin(values: Vec<f64>) -> AgpBin {
    let values = sorted(values);
    AgpBin {
        n: values.len(),
        percentiles: values
            .first()
            .map(|&least| AGP_QUANTILES.map(|q| quantile_cont(&values, q).unwrap_or(least))),
    }
}

/// Each bin's percentiles as the weighted mean of its own and its neighbours' (those with
/// readings), wrapping around midnight; bins without readings stay empty.
pub(crate) fn smoothed(bins: &[Option<[f64; 5]>]) -> Vec<Option<[f64; 5]>> {
    let n = bins.len() as isize;
    let half = (SMOOTHING.len() / 2) as isize;
    (0..n)
        .zip(bins)
        .map(|(i, bin)| {
            (*bin)?;
            let mut sum = [0.0; 5];
            let mut weight = 0.0;
            for (k, w) in SMOOTHING.iter().enumerate() {
                let j = (i + k as isize - half).rem_euclid(n) as usize;
                if let Some(Some(p)) = bins.get(j) {
                    for (s, v) in sum.iter_mut().zip(p) {
                        *s += w * v;
                    }
                    weight += w;
                }
            }
            Some(sum.map(|s| s / weight))
        })
        .collect()
}

/// The bins with readings as runs of consecutive bins, each a list of (x in hours,
/// percentiles), points at the middle of their bin. When the first and the last bin both have
/// readings the profile wraps around midnight, so both ends get a point at the midnight edge
/// with the mean of the two; a lone bin is drawn across its middle half.
pub(super) fn curve_runs(bins: &[Option<[f64; 5]>]) -> Vec<Vec<(f64, [f64; 5])>> {
    let count = bins.len();
    let hours_per_bin = 24.0 / count as f64;
    let wrap = match (bins.first(), bins.last()) {
        (Some(Some(first)), Some(Some(end))) => {
            let mut mean = *first;
            for (value, at_end) in mean.iter_mut().zip(end) {
                *value = (*value + at_end) / 2.0;
            }
            Some(mean)
        }
        _ => None,
    };
    let mut runs = Vec::new();
    let mut run: Vec<(f64, [f64; 5])> = Vec::new();
    for (bin, percentiles) in bins.iter().enumerate() {
        match percentiles {
            Some(p) => {
                if bin == 0
                    && let Some(edge) = wrap
                {
                    run.push((0.0, edge));
                }
                run.push(((bin as f64 + 0.5) * hours_per_bin, *p));
                if bin + 1 == count
                    && let Some(edge) = wrap
                {
                    run.push((24.0, edge));
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
            let quarter = hours_per_bin / 4.0;
            *run = vec![(x - quarter, p), (x + quarter, p)];
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gmi_and_cv_follow_the_consensus_formulas() {
        let minute = 60_000_000;
        let times: Vec<i64> = (0..4).map(|i| i * 5 * minute).collect();
        let m = metrics(&times, &[100.0, 150.0, 150.0, 200.0]);
        assert_eq!(m.mean, 150.0);
        assert!((m.gmi - (3.31 + 0.02392 * 150.0)).abs() < 1e-9);
        // Sample SD of 100, 150, 150, 200 is sqrt(5000/3) = 40.82.
        assert!((m.cv - 40.824_829 / 150.0 * 100.0).abs() < 1e-3, "{}", m.cv);
        assert_eq!(m.interval, 5 * minute);
        assert_eq!(m.active_percent, 100.0);
        assert_eq!(m.days, 1);
    }

    #[test]
    fn a_gap_lowers_the_time_the_cgm_was_active() {
        let minute = 60_000_000;
        // 12 readings, 5 minutes apart, then nothing for 55 minutes, then one: 13 readings
        // over two hours of 24 five-minute slots.
        let mut times: Vec<i64> = (0..12).map(|i| i * 5 * minute).collect();
        times.push(115 * minute);
        let m = metrics(&times, &[100.0; 13]);
        assert!((m.active_percent - 13.0 / 24.0 * 100.0).abs() < 1e-9);
    }

    #[test]
    fn smoothing_flattens_a_spike_and_keeps_a_flat_curve_flat() {
        let mut bins = vec![Some([100.0; 5]); 8];
        assert_eq!(smoothed(&bins), bins);
        bins[3] = Some([190.0; 5]);
        let smooth = smoothed(&bins);
        let spike = smooth[3].unwrap()[2];
        assert!((spike - (100.0 + 90.0 * 3.0 / 9.0)).abs() < 1e-9, "{spike}");
        assert!(smooth[2].unwrap()[2] > 100.0 && smooth[6].unwrap()[2] == 100.0);
        // Empty bins stay empty and do not count.
        bins[5] = None;
        assert_eq!(smoothed(&bins)[5], None);
    }
}
