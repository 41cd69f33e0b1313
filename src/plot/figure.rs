//! What a prepared chart is, whatever its kind: the figure it draws ([`Figure`]: points, bars,
//! bins, the AGP's curves or the TIR's ranges), its axes and its summary ([`Prepared`]), and the
//! few words every kind's summary uses. The kinds (`kinds`, `agp`, `tir`) make one; `draw`
//! draws it.

use serde_json::Value;

use super::ChartSummary;
use super::axes::Axis;
use super::stats::Histogram;

/// Microseconds in an hour and in a day: the x of a time axis is microseconds.
const MICROS_PER_HOUR: i64 = 3_600_000_000;
pub(super) const MICROS_PER_DAY: i64 = 24 * MICROS_PER_HOUR;

/// What a chart draws.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Figure {
    /// Points joined in x order.
    Line(Vec<(f64, f64)>),
    /// A long time series down-sampled to one entry per pixel column: (x, min, median, max),
    /// drawn as a min–max band with the median through it; runs split where columns are empty.
    Envelope(Vec<Vec<(f64, f64, f64, f64)>>),
    /// Markers.
    Scatter(Vec<(f64, f64)>),
    /// Bar `i` centred on x = i.
    Bars(Vec<f64>),
    /// Bins drawn edge to edge.
    Histogram(Histogram),
    /// The smoothed percentile curves and the header.
    Agp(AgpFigure),
    /// The five ranges, lowest first.
    Tir(Ranges),
}

/// A chart ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Prepared {
    pub(crate) figure: Figure,
    pub(crate) x: Axis,
    pub(crate) y: Axis,
    /// The y range to shade (line and AGP charts).
    pub(crate) target: Option<(f64, f64)>,
    pub(crate) summary: ChartSummary,
}

/// What the AGP draws.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgpFigure {
    /// Runs of the smoothed curves: (x in hours, the five percentiles), split where a stretch of
    /// the day has no readings.
    pub(crate) runs: Vec<Vec<(f64, [f64; 5])>>,
    /// The header line under the title: period, days, CGM active, mean, GMI, CV.
    pub(crate) header: String,
}

/// One of the five ranges.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Range {
    /// Its name, as the report prints it.
    pub(crate) name: &'static str,
    /// Its bounds in mg/dL, as the report prints them.
    pub(crate) bounds: String,
    /// Readings in it.
    pub(crate) n: usize,
    /// Their share of all readings, in percent.
    pub(crate) percent: f64,
    /// The consensus goal for it, in words.
    pub(crate) goal: String,
    /// Whether the share meets that goal.
    pub(crate) meets_goal: bool,
}

/// The five ranges, lowest first.
pub(crate) type Ranges = Vec<Range>;

/// A number for the summary table, to six significant digits (drops float noise such as
/// 112.30000000000001).
pub(crate) fn json_number(value: f64) -> Value {
    Value::from(format!("{value:.5e}").parse::<f64>().unwrap_or(value))
}

/// `part` as a share of `whole`, in percent with one decimal.
pub(super) fn percent(part: usize, whole: usize) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole.max(1) as f64)
}

/// What a chart's text says of the rows it could not draw.
pub(super) fn skipped_note(skipped: usize) -> String {
    match skipped {
        0 => String::new(),
        1 => " 1 row with a NULL or non-finite value was skipped.".to_string(),
        n => format!(" {n} rows with NULL or non-finite values were skipped."),
    }
}
