//! The numbers behind the pictures: percentiles, histogram bins, and the deterministic thinning
//! of series too long to draw point by point.

use std::cmp::Ordering;

/// The `q` quantile (0 ≤ q ≤ 1) of values sorted ascending, by linear interpolation between the
/// two nearest ranks: position `(n − 1)·q`, as DuckDB's `quantile_cont` and numpy's default
/// compute it, so an agent can reproduce every number of a summary with SQL.
/// `None` for no values.
pub(crate) fn quantile_cont(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let position = last as f64 * q.clamp(0.0, 1.0);
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let (low, high) = (*sorted.get(below)?, *sorted.get(above)?);
    Some(low + (high - low) * (position - below as f64))
}

/// The least, the median and the greatest of values sorted ascending; `None` for no values.
pub(crate) fn spread(sorted: &[f64]) -> Option<(f64, f64, f64)> {
    let (&least, &greatest) = (sorted.first()?, sorted.last()?);
    Some((least, quantile_cont(sorted, 0.5).unwrap_or(least), greatest))
}

/// Sort values ascending; the values reaching here are finite (NULLs and NaN are dropped when
/// the data is read), so `total_cmp` orders them as numbers.
pub(crate) fn sorted(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.into_iter().collect();
    values.sort_by(f64::total_cmp);
    values
}

/// Equal-width bins over `[min, max]` of the values.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Histogram {
    /// `bins + 1` increasing edges; bin `i` is `[edges[i], edges[i+1])`, the last one closed.
    pub(crate) edges: Vec<f64>,
    /// How many values fell in each bin.
    pub(crate) counts: Vec<u64>,
}

impl Histogram {
    /// Each bin as (from, to, count), in order.
    pub(crate) fn bins(&self) -> impl Iterator<Item = (f64, f64, u64)> + Clone + '_ {
        self.edges
            .windows(2)
            .zip(&self.counts)
            .filter_map(|(edges, &count)| match edges {
                [from, to] => Some((*from, *to, count)),
                _ => None,
            })
    }
}

/// Count finite values into `bins` equal-width bins spanning their range. A value on an inner
/// edge belongs to the bin that starts there; the maximum belongs to the last bin. When every
/// value is the same the range is widened to ±0.5 around it so the bins still have a width.
/// `None` for no values or zero bins.
pub(crate) fn histogram(values: &[f64], bins: usize) -> Option<Histogram> {
    if bins == 0 {
        return None;
    }
    let (mut min, mut max) = min_max(values.iter().copied())?;
    if min == max {
        min -= 0.5;
        max += 0.5;
    }
    // Divided before subtracting so values near ±f64::MAX cannot overflow to infinity.
    let width = max / bins as f64 - min / bins as f64;
    let edges: Vec<f64> = (0..=bins)
        .map(|i| {
            if i == bins {
                max
            } else {
                min + width * i as f64
            }
        })
        .collect();
    let counts = bin_counts(&edges, values);
    Some(Histogram { edges, counts })
}

/// How many of `values` fall in each bin of `edges` (bin `i` is `[edges[i], edges[i+1])`, the
/// last one closed). Compared against the edges themselves, so a value equal to an edge always
/// goes to the bin that edge opens; a value outside the edges counts in the nearest bin.
pub(crate) fn bin_counts(edges: &[f64], values: &[f64]) -> Vec<u64> {
    let bins = edges.len().saturating_sub(1);
    let inner = edges.get(1..bins).unwrap_or_default();
    let mut counts = vec![0u64; bins];
    for &value in values {
        let bin = inner.partition_point(|edge| *edge <= value);
        if let Some(count) = counts.get_mut(bin) {
            *count += 1;
        }
    }
    counts
}

/// The smallest and largest of some values; `None` for none.
pub(crate) fn min_max(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values.into_iter().fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
    })
}

/// Thin a series sorted by x for a line `columns` pixels wide: the x range is cut into `columns`
/// equal buckets and each bucket keeps its first, lowest, highest and last point, in x order
/// (the "M4" reduction). A line through those points covers the same pixels as the line
/// through all of them, so spikes and dips survive, and the result depends on the data alone.
/// Series of at most `4 × columns` points are returned unchanged.
pub(crate) fn thin_line(points: &[(f64, f64)], columns: usize) -> Vec<(f64, f64)> {
    let columns = columns.max(1);
    if points.len() <= 4 * columns {
        return points.to_vec();
    }
    let (Some(&(x0, _)), Some(&(x1, _))) = (points.first(), points.last()) else {
        return Vec::new();
    };
    let span = x1 - x0;
    let bucket_of = |x: f64| -> usize {
        if span > 0.0 {
            (((x - x0) / span * columns as f64) as usize).min(columns - 1)
        } else {
            0
        }
    };
    let mut kept = Vec::with_capacity(4 * columns);
    // The points are sorted by x, so the buckets come in order: each run of one bucket is a
    // chunk of consecutive points.
    for run in points.chunk_by(|a, b| bucket_of(a.0) == bucket_of(b.0)) {
        let lowest = index_by(run, |a, b| a.1.total_cmp(&b.1).then(Ordering::Greater));
        let highest = index_by(run, |a, b| b.1.total_cmp(&a.1).then(Ordering::Greater));
        let mut picks = [0, lowest, highest, run.len().saturating_sub(1)];
        picks.sort_unstable();
        let mut previous = None;
        for pick in picks {
            if previous != Some(pick)
                && let Some(&point) = run.get(pick)
            {
                kept.push(point);
                previous = Some(pick);
            }
        }
    }
    kept
}

/// The index of the first element that `better` ranks first (`Less` means "a is better").
fn index_by(run: &[(f64, f64)], better: impl Fn(&(f64, f64), &(f64, f64)) -> Ordering) -> usize {
    let mut best = 0;
    let Some(mut best_point) = run.first() else {
        return best;
    };
    for (i, point) in run.iter().enumerate().skip(1) {
        if better(point, best_point) == Ordering::Less {
            best = i;
            best_point = point;
        }
    }
    best
}

/// Thin a scatter to one marker per `cell`-pixel square of a `columns × rows` plot: markers
/// drawn on the same few pixels hide each other anyway, so the picture keeps its shape while
/// the drawing stays bounded. The first point of each cell, in input order, is kept.
pub(crate) fn thin_scatter(
    points: &[(f64, f64)],
    x_range: (f64, f64),
    y_range: (f64, f64),
    (columns, rows): (usize, usize),
) -> Vec<(f64, f64)> {
    let cell = |value: f64, (lo, hi): (f64, f64), cells: usize| -> usize {
        if hi > lo {
            (((value - lo) / (hi - lo) * cells as f64) as usize).min(cells - 1)
        } else {
            0
        }
    };
    let (columns, rows) = (columns.max(1), rows.max(1));
    let mut seen = vec![false; columns * rows];
    let mut kept = Vec::new();
    for &(x, y) in points {
        let index = cell(y, y_range, rows) * columns + cell(x, x_range, columns);
        if let Some(seen) = seen.get_mut(index)
            && !*seen
        {
            *seen = true;
            kept.push((x, y));
        }
    }
    kept
}

/// "Nice" tick positions (1, 2 or 5 × 10ⁿ apart) covering `[lo, hi]` with at most about
/// `target` intervals, and the step between them (which decides how many decimals to print).
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize) -> (Vec<f64>, f64) {
    let target = target.max(1) as f64;
    let rough = (hi / target - lo / target).abs();
    let magnitude = 10f64.powf(rough.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= rough)
        .unwrap_or(10.0 * magnitude);
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    // A degenerate range (no width, or so wide or narrow that the step under- or overflows)
    // gets no ticks rather than a runaway loop.
    if !(step.is_normal() && first.is_finite() && last.is_finite() && last - first <= 100.0) {
        return (Vec::new(), 1.0);
    }
    let ticks = (first as i64..=last as i64)
        .map(|i| {
            let t = i as f64 * step;
            if t == 0.0 { 0.0 } else { t }
        })
        .collect();
    (ticks, step)
}

/// A value range padded by 5% on each side so nothing sits on the frame; a single value gets a
/// range around it.
pub(crate) fn padded((lo, hi): (f64, f64)) -> (f64, f64) {
    if hi > lo {
        let pad = hi * 0.05 - lo * 0.05;
        (lo - pad, hi + pad)
    } else {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantile_cont_interpolates_between_ranks_like_duckdb() {
        // SELECT quantile_cont(x, q) FROM (VALUES (1), (2), (3), (4)) t(x)
        let values = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_cont(&values, 0.25), Some(1.75));
        assert_eq!(quantile_cont(&values, 0.5), Some(2.5));
        let p95 = quantile_cont(&values, 0.95).expect("p95");
        assert!((p95 - 3.85).abs() < 1e-12, "{p95}");
        assert_eq!(quantile_cont(&values, 0.0), Some(1.0));
        assert_eq!(quantile_cont(&values, 1.0), Some(4.0));
        assert_eq!(quantile_cont(&[7.0], 0.05), Some(7.0));
        assert_eq!(quantile_cont(&[], 0.5), None);
    }

    #[test]
    fn histogram_puts_an_edge_value_in_the_bin_it_opens() {
        let values: Vec<f64> = (0..=10).map(f64::from).collect();
        let hist = histogram(&values, 5).expect("bins");
        assert_eq!(hist.edges, [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(hist.counts, [2, 2, 2, 2, 3], "10 closes the last bin");
        let flat = histogram(&[3.0, 3.0], 2).expect("bins");
        assert_eq!(flat.edges, [2.5, 3.0, 3.5]);
        assert_eq!(flat.counts, [0, 2]);
        assert_eq!(histogram(&[], 3), None);
    }

    #[test]
    fn thinning_keeps_each_columns_first_highest_lowest_and_last() {
        // 100 points in 5 columns: 20 a column; within each the values are (7·i + 3) mod 20, so a
        // column starts at 3, peaks (19) at its 8th point, bottoms (0) at its 11th, ends at 16.
        let points: Vec<(f64, f64)> = (0..100)
            .map(|i| (f64::from(i), f64::from((i * 7 + 3) % 20)))
            .collect();
        let expected: Vec<(f64, f64)> = (0..5)
            .flat_map(|c| {
                let x = f64::from(20 * c);
                [(x, 3.0), (x + 8.0, 19.0), (x + 11.0, 0.0), (x + 19.0, 16.0)]
            })
            .collect();
        assert_eq!(thin_line(&points, 5), expected);
        assert_eq!(
            thin_line(&points, 25),
            points,
            "100 points fit 25 columns untouched"
        );
    }
}
