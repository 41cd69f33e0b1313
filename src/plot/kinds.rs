//! From rows to what each chart kind draws and says: the points, bars, bins or percentile bands,
//! the two axes, and the summary table and sentence.

use serde_json::Value;

use super::axes::{
    Axis, category_axis, clean_label, format_day, format_minute, format_timestamp, format_value,
    number_axis, time_axis,
};
use super::figure::{Figure, MICROS_PER_DAY, Prepared, json_number, percent, skipped_note};
use super::stats::{
    bin_counts, histogram, min_max, nice_ticks, padded, sorted, spread, thin_line, thin_scatter,
};
use super::{
    ChartKind, ChartOptions, ChartSummary, DEFAULT_BINS, MAX_CATEGORIES, PlotData, PlotError,
    XValue,
};

/// Scatters with more points than this are thinned to one marker per 2×2-pixel cell.
const SCATTER_THIN_ABOVE: usize = 10_000;
/// A line or scatter summary lists its points when it has at most this many, and otherwise
/// this many equal-width x buckets.
const SUMMARY_ROWS: usize = 20;

/// The plot area's size, roughly (the exact one depends on label widths): what thinning and
/// tick counts are planned for.
fn plot_size(options: &ChartOptions) -> (usize, usize) {
    (
        options.width.saturating_sub(130).max(50) as usize,
        options.height.saturating_sub(110).max(50) as usize,
    )
}

/// Read the data for `options.kind` and work out what to draw and say.
pub(crate) fn prepare(data: &PlotData, options: &ChartOptions) -> Result<Prepared, PlotError> {
    match options.kind {
        ChartKind::Line | ChartKind::Scatter => xy(data, options),
        ChartKind::Bar => bars(data, options),
        ChartKind::Histogram => histogram_chart(data, options),
        ChartKind::Agp => super::agp::agp(data, options),
        ChartKind::Tir => super::tir::tir(data),
    }
}

fn x_ticks(options: &ChartOptions) -> usize {
    (plot_size(options).0 / 110).clamp(2, 12)
}

pub(super) fn y_ticks(options: &ChartOptions) -> usize {
    (plot_size(options).1 / 50).clamp(2, 10)
}

pub(super) fn name(label: &str, fallback: &str) -> String {
    let label = clean_label(label, 60);
    if label.is_empty() {
        fallback.to_string()
    } else {
        label
    }
}

/// Line and scatter charts.
fn xy(data: &PlotData, options: &ChartOptions) -> Result<Prepared, PlotError> {
    let kind = options.kind;
    let mut first_type: Option<&'static str> = None;
    let mut points = Vec::with_capacity(data.y.len());
    for (x, y) in data.x.iter().zip(&data.y) {
        let x_value = match x {
            XValue::Time(micros) => *micros as f64,
            XValue::Number(number) => *number,
            XValue::Category(_) => {
                return Err(PlotError::WrongXType {
                    kind,
                    found: x.type_name(),
                    expected: "timestamps or numbers",
                });
            }
        };
        match first_type {
            None => first_type = Some(x.type_name()),
            Some(first) if first != x.type_name() => {
                return Err(PlotError::MixedXTypes {
                    first,
                    other: x.type_name(),
                });
            }
            Some(_) => {}
        }
        if let Some(y) = y
            && y.is_finite()
            && x_value.is_finite()
        {
            points.push((x_value, *y));
        }
    }
    let skipped = data.y.len() - points.len();
    let is_time = first_type == Some("timestamp");
    let mut by_x = points.clone();
    by_x.sort_by(|a, b| a.0.total_cmp(&b.0));
    let ys = sorted(points.iter().map(|p| p.1));
    let (Some(&(x_lo, _)), Some(&(x_hi, _)), Some((y_min, median, y_max))) =
        (by_x.first(), by_x.last(), spread(&ys))
    else {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    };
    let (x_lo_drawn, x_hi_drawn) = match kind {
        ChartKind::Scatter => padded((x_lo, x_hi)),
        _ => (x_lo, x_hi),
    };
    let x_name = name(&data.x_label, "x");
    let y_name = name(&data.y_label, "y");
    let x_axis = if is_time {
        time_axis(
            x_lo_drawn as i64,
            x_hi_drawn as i64,
            x_ticks(options),
            &x_name,
        )
    } else {
        number_axis(
            padded_if_flat(x_lo_drawn, x_hi_drawn),
            x_ticks(options),
            &x_name,
        )
    };
    let target = match kind {
        ChartKind::Line => options.target_range,
        _ => None,
    };
    let (lo, hi) = match target {
        Some((t_lo, t_hi)) => (y_min.min(t_lo), y_max.max(t_hi)),
        None => (y_min, y_max),
    };
    let y_axis = number_axis(padded((lo, hi)), y_ticks(options), &y_name);
    let (columns, rows) = plot_size(options);
    let (figure, drawn) = match kind {
        ChartKind::Scatter if points.len() > SCATTER_THIN_ABOVE => {
            let kept = thin_scatter(&points, x_axis.range, y_axis.range, (columns / 2, rows / 2));
            let n = kept.len();
            (Figure::Scatter(kept), n)
        }
        ChartKind::Scatter => (Figure::Scatter(points.clone()), points.len()),
        _ if is_time
            && x_hi - x_lo > ENVELOPE_ABOVE_DAYS * MICROS_PER_DAY as f64
            && by_x.len() > columns =>
        {
            let runs = envelope(&by_x, columns);
            let n = runs.iter().map(Vec::len).sum();
            (Figure::Envelope(runs), n)
        }
        _ => {
            let kept = thin_line(&by_x, columns);
            let n = kept.len();
            (Figure::Line(kept), n)
        }
    };
    let x_text = |x: f64| {
        if is_time {
            format_timestamp(x as i64)
        } else {
            format_value(x)
        }
    };
    let x_json = |x: f64| {
        if is_time {
            Value::from(format_timestamp(x as i64))
        } else {
            json_number(x)
        }
    };
    let summary_table = xy_table(&by_x, &x_json);
    let picture = match kind {
        ChartKind::Scatter => "Scatter plot",
        _ => "Line chart",
    };
    let mut text = format!(
        "{picture} of {y_name} by {x_name}: {n} points, {x_name} from {} to {}; {y_name} min {}, \
         median {}, max {}.",
        x_text(x_lo),
        x_text(x_hi),
        format_value(y_min),
        format_value(median),
        format_value(y_max),
        n = points.len(),
    );
    text.push_str(&skipped_note(skipped));
    if matches!(figure, Figure::Envelope(_)) {
        text.push_str(&format!(
            " Over {:.0} days a line of every point is unreadable, so it is down-sampled with \
             min/max: each of {drawn} pixel columns is drawn as the band from its lowest to its \
             highest value, with its median as the line (every low and high stays in the band). \
             For the shape of a typical day, plot kind agp.",
            (x_hi - x_lo) / MICROS_PER_DAY as f64
        ));
    } else if drawn < points.len() {
        text.push_str(&match kind {
            ChartKind::Scatter => format!(
                " Drawn as {drawn} markers, one per 2×2-pixel cell (markers there would overlap)."
            ),
            _ => format!(
                " Down-sampled with min/max to fit {columns} pixel columns: drawn through \
                 {drawn} points, the first, lowest, highest and last of each column, which \
                 trace the same line and keep every low and high.{}",
                if is_time && x_hi - x_lo > 3.0 * MICROS_PER_DAY as f64 {
                    " For the shape of a typical day over many days, plot kind agp."
                } else {
                    ""
                }
            ),
        });
    }
    if let Some((t_lo, t_hi)) = target {
        let inside = ys.iter().filter(|&&v| v >= t_lo && v <= t_hi).count();
        text.push_str(&format!(
            " {} of points are within the target range {}–{}.",
            percent(inside, ys.len()),
            format_value(t_lo),
            format_value(t_hi)
        ));
    }
    Ok(Prepared {
        figure,
        x: x_axis,
        y: y_axis,
        target,
        summary: ChartSummary {
            columns: summary_table.0,
            rows: summary_table.1,
            text,
        },
    })
}

/// The span past which a line over time becomes a min–max envelope (when it has more points
/// than pixel columns): a few days of CGM readings still read as a line, weeks do not.
const ENVELOPE_ABOVE_DAYS: f64 = 3.0;

/// Points sorted by x as one (x, min, median, max) per pixel column with points, x at the
/// column's middle; a run ends at an empty column, so a gap in the data stays a gap.
fn envelope(by_x: &[(f64, f64)], columns: usize) -> Vec<Vec<(f64, f64, f64, f64)>> {
    let columns = columns.max(1);
    let (Some(&(x0, _)), Some(&(x1, _))) = (by_x.first(), by_x.last()) else {
        return Vec::new();
    };
    let width = (x1 - x0) / columns as f64;
    let column_of = |x: f64| -> usize {
        if width > 0.0 {
            (((x - x0) / width) as usize).min(columns - 1)
        } else {
            0
        }
    };
    let mut runs: Vec<Vec<(f64, f64, f64, f64)>> = Vec::new();
    let mut run = Vec::new();
    let mut previous: Option<usize> = None;
    // Sorted by x, so the columns come in order: each column's points are one chunk.
    for in_column in by_x.chunk_by(|a, b| column_of(a.0) == column_of(b.0)) {
        let ys = sorted(in_column.iter().map(|p| p.1));
        let (Some(&(x, _)), Some((least, median, greatest))) = (in_column.first(), spread(&ys))
        else {
            continue;
        };
        let column = column_of(x);
        if previous.is_some_and(|p| column > p + 1) {
            runs.push(std::mem::take(&mut run));
        }
        let middle = x0 + width * (column as f64 + 0.5);
        run.push((middle, least, median, greatest));
        previous = Some(column);
    }
    runs.push(run);
    runs.retain(|run| !run.is_empty());
    runs
}

fn padded_if_flat(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo { (lo, hi) } else { padded((lo, hi)) }
}

/// The points themselves when there are few, else per equal-width x bucket the count and the y
/// minimum, median and maximum (empty buckets left out).
fn xy_table(by_x: &[(f64, f64)], x_json: &dyn Fn(f64) -> Value) -> (Vec<String>, Vec<Vec<Value>>) {
    if by_x.len() <= SUMMARY_ROWS {
        let rows = by_x
            .iter()
            .map(|&(x, y)| vec![x_json(x), json_number(y)])
            .collect();
        return (vec!["x".into(), "y".into()], rows);
    }
    let columns = ["x_from", "x_to", "n", "y_min", "y_median", "y_max"];
    let columns = columns.iter().map(|c| c.to_string()).collect();
    let (Some(&(lo, _)), Some(&(hi, _))) = (by_x.first(), by_x.last()) else {
        return (columns, Vec::new());
    };
    let width = (hi - lo) / SUMMARY_ROWS as f64;
    let mut rows = Vec::new();
    let mut rest = by_x;
    for bucket in 0..SUMMARY_ROWS {
        let bucket_hi = if bucket + 1 == SUMMARY_ROWS {
            f64::INFINITY
        } else {
            lo + width * (bucket + 1) as f64
        };
        let (in_bucket, after) = rest.split_at(rest.iter().take_while(|p| p.0 < bucket_hi).count());
        let ys = sorted(in_bucket.iter().map(|p| p.1));
        if let (Some(&(from, _)), Some(&(to, _)), Some((least, median, greatest))) =
            (in_bucket.first(), in_bucket.last(), spread(&ys))
        {
            rows.push(vec![
                x_json(from),
                x_json(to),
                Value::from(in_bucket.len()),
                json_number(least),
                json_number(median),
                json_number(greatest),
            ]);
        }
        rest = after;
    }
    (columns, rows)
}

/// Bar charts: one bar per row, in the query's order.
fn bars(data: &PlotData, options: &ChartOptions) -> Result<Prepared, PlotError> {
    let all_midnight = data.x.iter().all(|x| match x {
        XValue::Time(micros) => micros.rem_euclid(MICROS_PER_DAY) == 0,
        XValue::Number(_) | XValue::Category(_) => true,
    });
    let mut labels = Vec::new();
    let mut values = Vec::new();
    for (x, y) in data.x.iter().zip(&data.y) {
        let Some(y) = y.filter(|y| y.is_finite()) else {
            continue;
        };
        labels.push(match x {
            XValue::Category(text) => text.clone(),
            XValue::Number(number) => format_value(*number),
            XValue::Time(micros) if all_midnight => format_day(*micros),
            XValue::Time(micros) => format_minute(*micros),
        });
        values.push(y);
    }
    if values.len() > MAX_CATEGORIES {
        return Err(PlotError::TooManyCategories {
            found: values.len(),
            max: MAX_CATEGORIES,
        });
    }
    // No total: bars of means, percentages or rates do not add up to anything, and the chart
    // cannot tell them from counts. The median bar describes any of them.
    let bars = || labels.iter().zip(values.iter().copied());
    let (Some((highest_label, highest)), Some((lowest_label, lowest)), Some((_, median, _))) = (
        first_best(bars(), |a, b| a > b),
        first_best(bars(), |a, b| a < b),
        spread(&sorted(values.iter().copied())),
    ) else {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    };
    let skipped = data.y.len() - values.len();
    let x_name = name(&data.x_label, "category");
    let y_name = name(&data.y_label, "value");
    let longest = labels
        .iter()
        .map(|l| clean_label(l, 16).chars().count())
        .max()
        .unwrap_or(1);
    let per_label = longest * 8 + 16;
    let x_axis = category_axis(&labels, plot_size(options).0 / per_label, &x_name);
    let (lo, hi) = min_max(values.iter().copied()).unwrap_or((0.0, 0.0));
    let y_axis = number_axis(
        zero_based(lo.min(0.0), hi.max(0.0)),
        y_ticks(options),
        &y_name,
    );
    let mut text = format!(
        "Bar chart of {y_name} by {x_name}: {n} bars; highest {} ({}), lowest {} ({}); median \
         bar {}.",
        highest_label,
        format_value(highest),
        lowest_label,
        format_value(lowest),
        format_value(median),
        n = values.len(),
    );
    text.push_str(&skipped_note(skipped));
    let rows = labels
        .iter()
        .zip(&values)
        .map(|(label, value)| vec![Value::from(label.clone()), json_number(*value)])
        .collect();
    Ok(Prepared {
        figure: Figure::Bars(values),
        x: x_axis,
        y: y_axis,
        target: None,
        summary: ChartSummary {
            columns: vec![x_name, y_name],
            rows,
            text,
        },
    })
}

/// The first item whose value `better` prefers to every earlier one; `None` for no items.
fn first_best<T>(
    items: impl IntoIterator<Item = (T, f64)>,
    better: impl Fn(f64, f64) -> bool,
) -> Option<(T, f64)> {
    items
        .into_iter()
        .reduce(|best, item| if better(item.1, best.1) { item } else { best })
}

/// A y range for bars: padded away from zero, but starting exactly at zero on the side where
/// the bars start, so bar heights compare honestly.
fn zero_based(lo: f64, hi: f64) -> (f64, f64) {
    let (padded_lo, padded_hi) = padded((lo, hi));
    (
        if lo == 0.0 { 0.0 } else { padded_lo },
        if hi == 0.0 { 0.0 } else { padded_hi },
    )
}

/// Histograms of the y values.
fn histogram_chart(data: &PlotData, options: &ChartOptions) -> Result<Prepared, PlotError> {
    let values: Vec<f64> = data
        .y
        .iter()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let bins = options.bins.unwrap_or(DEFAULT_BINS) as usize;
    // The target range is on the x axis here: bins span it too, so it is drawn whole.
    let mut spanned = values.clone();
    if let Some((t_lo, t_hi)) = options.target_range {
        spanned.extend([t_lo, t_hi]);
    }
    let Some(mut hist) = histogram(&spanned, bins) else {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    };
    if spanned.len() > values.len() {
        // The target's ends widened the bins; they are not values.
        hist.counts = bin_counts(&hist.edges, &values);
    }
    let skipped = data.y.len() - values.len();
    let y_name = name(&data.y_label, "value");
    let ys = sorted(values.iter().copied());
    let fullest_bin = first_best(hist.bins().map(|bin| (bin, bin.2 as f64)), |a, b| a > b);
    let (
        Some(&lo),
        Some(&hi),
        Some(((fullest_from, fullest_to, fullest_count), _)),
        Some((least, median, greatest)),
    ) = (
        hist.edges.first(),
        hist.edges.last(),
        fullest_bin,
        spread(&ys),
    )
    else {
        return Err(PlotError::NothingToDraw { rows: data.y.len() });
    };
    let x_axis = number_axis((lo, hi), x_ticks(options), &y_name);
    let max_count = fullest_count as f64;
    let (ticks, _) = nice_ticks(0.0, max_count, y_ticks(options));
    let y_axis = Axis {
        range: (0.0, max_count * 1.05),
        ticks: ticks
            .into_iter()
            .filter(|t| t.fract() == 0.0)
            .map(|t| (t, format!("{t:.0}")))
            .collect(),
        title: "count".to_string(),
    };
    let mut text = format!(
        "Histogram of {y_name}: {n} values from {} to {} in {bins} bins of width {}; median {}; \
         the fullest bin, {}–{}, holds {} values.",
        format_value(least),
        format_value(greatest),
        format_value((hi - lo) / bins as f64),
        format_value(median),
        format_value(fullest_from),
        format_value(fullest_to),
        fullest_count,
        n = values.len(),
    );
    let target = options.target_range;
    match target {
        Some((t_lo, t_hi)) => {
            let inside = ys.iter().filter(|&&v| v >= t_lo && v <= t_hi).count();
            text.push_str(&format!(
                " The target range {}–{} is shaded: {} of values are within it ({} below, {} \
                 above).",
                format_value(t_lo),
                format_value(t_hi),
                percent(inside, ys.len()),
                percent(ys.iter().filter(|&&v| v < t_lo).count(), ys.len()),
                percent(ys.iter().filter(|&&v| v > t_hi).count(), ys.len()),
            ));
        }
        None => text.push_str(
            " No target range is drawn (give target_low and target_high to shade one, or use \
             kind tir for the consensus time in ranges).",
        ),
    }
    text.push_str(&skipped_note(skipped));
    let rows = hist
        .bins()
        .map(|(from, to, count)| vec![json_number(from), json_number(to), Value::from(count)])
        .collect();
    Ok(Prepared {
        figure: Figure::Histogram(hist),
        x: x_axis,
        y: y_axis,
        target,
        summary: ChartSummary {
            columns: vec!["bin_from".into(), "bin_to".into(), "count".into()],
            rows,
            text,
        },
    })
}
