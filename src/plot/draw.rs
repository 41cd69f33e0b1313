//! Drawing a prepared chart into an RGB buffer with plotters.
//!
//! The colours are fixed: white background, series in the blue of the Okabe–Ito palette (told
//! apart by people with colour-vision deficiencies), the AGP's bands as lighter tints of it and
//! the target range in its bluish green. Shapes are drawn without transparency so every colour
//! in the image is one of these, or text anti-aliasing.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;

use super::agp::agp_runs;
use super::axes::Axis;
use super::kinds::{Figure, Prepared};
use super::text::{ChartBackend, font, measure};
use super::{ChartOptions, PlotError};

/// The series: lines, markers, bars.
pub(crate) const SERIES: RGBColor = RGBColor(0, 114, 178);
/// The AGP's 5–95% band.
pub(crate) const BAND_OUTER: RGBColor = RGBColor(204, 226, 242);
/// The AGP's 25–75% band.
pub(crate) const BAND_INNER: RGBColor = RGBColor(120, 174, 214);
/// The AGP's median line: darker than the inner band it runs through.
pub(crate) const MEDIAN: RGBColor = RGBColor(0, 62, 122);
/// The target range's fill.
pub(crate) const TARGET_FILL: RGBColor = RGBColor(224, 242, 233);
/// The target range's two boundary lines.
pub(crate) const TARGET_LINE: RGBColor = RGBColor(0, 158, 115);
/// Labels, titles.
const TEXT: RGBColor = RGBColor(34, 34, 34);
/// The axis lines and ticks.
const AXIS: RGBColor = RGBColor(96, 96, 96);
/// Grid lines at the ticks.
const GRID: RGBColor = RGBColor(232, 232, 232);

/// Text sizes in pixels at the default image size; larger images scale them up (see `scale`).
const LABEL_SIZE: f64 = 13.0;
const DESC_SIZE: f64 = 14.0;
const TITLE_SIZE: f64 = 18.0;

/// Where the plot area landed, in image pixels (for tests that look at the picture).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Columns of the plot area.
    pub(crate) x: Range<i32>,
    /// Rows of the plot area (top first).
    pub(crate) y: Range<i32>,
}

/// An axis as plotters maps it: linear over the axis range, with our ticks as its only key
/// points (plotters' own would be chosen without knowing about dates or categories).
struct Scale {
    range: (f64, f64),
    ticks: Vec<f64>,
}

impl Scale {
    fn new(axis: &Axis) -> Self {
        Scale {
            range: axis.range,
            ticks: axis.positions(),
        }
    }
}

impl Ranged for Scale {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    /// The same rounding as plotters' own f64 coordinates.
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = self.range;
        let span = limit.1 - limit.0;
        if hi == lo || span == 0 {
            return limit.0 + span / 2;
        }
        let share = ((value - lo) / (hi - lo)).clamp(-1.0, 2.0);
        if span > 0 {
            limit.0 + (f64::from(span) * share + 1e-3).floor() as i32
        } else {
            limit.0 + (f64::from(span) * share - 1e-3).ceil() as i32
        }
    }

    /// The ticks for labels and grid lines; no light (minor) grid lines.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.0..self.range.1
    }
}

fn render_error(error: impl std::fmt::Display) -> PlotError {
    PlotError::Render(error.to_string())
}

/// Draw `prepared` into a fresh `width × height` RGB buffer.
pub(crate) fn draw(
    prepared: &Prepared,
    options: &ChartOptions,
) -> Result<(Vec<u8>, Layout), PlotError> {
    let (width, height) = (options.width, options.height);
    let mut buffer = vec![255u8; width as usize * height as usize * 3];
    let layout = {
        let backend = ChartBackend::new(&mut buffer, (width, height)).map_err(render_error)?;
        let root = backend.into_drawing_area();
        root.fill(&WHITE).map_err(render_error)?;
        let layout = draw_chart(&root, prepared, options)?;
        root.present().map_err(render_error)?;
        layout
    };
    Ok((buffer, layout))
}

fn style(size: f64) -> TextStyle<'static> {
    TextStyle::from((FontFamily::SansSerif, size)).color(&TEXT)
}

fn draw_chart(
    root: &DrawingArea<ChartBackend<'_>, Shift>,
    prepared: &Prepared,
    options: &ChartOptions,
) -> Result<Layout, PlotError> {
    let font = font().map_err(render_error)?;
    let (x, y) = (&prepared.x, &prepared.y);
    // Text grows with the image (up to 1.6×) so a 2000-pixel chart stays readable when shown
    // smaller; it never shrinks below the default size.
    let scale = (f64::from(options.width) / f64::from(super::DEFAULT_WIDTH))
        .min(f64::from(options.height) / f64::from(super::DEFAULT_HEIGHT))
        .clamp(1.0, 1.6);
    let (label_size, desc_size, title_size) =
        (LABEL_SIZE * scale, DESC_SIZE * scale, TITLE_SIZE * scale);
    let line_width = if scale > 1.3 { 3 } else { 2 };
    let widest_y_label = y
        .ticks
        .iter()
        .map(|(_, label)| measure(&font, label, label_size as f32).0)
        .max()
        .unwrap_or(0);
    let (_, label_height) = measure(&font, "0", label_size as f32);
    let (_, desc_height) = measure(&font, "0", desc_size as f32);
    // plotters puts the labels 10 px (twice the tick length) from the axis and the axis title
    // against the far edge of the label area; these sizes leave a small gap between the two.
    let y_area = widest_y_label + 10 + desc_height + 10;
    let x_area = label_height + 10 + desc_height + 8;

    let mut builder = ChartBuilder::on(root);
    builder
        .margin(10)
        .margin_right((24.0 * scale) as u32)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area);
    if let Some(title) = &options.title {
        let title = super::axes::clean_label(title, 100);
        builder.caption(title, style(title_size));
    }
    let mut chart = builder
        .build_cartesian_2d(Scale::new(x), Scale::new(y))
        .map_err(render_error)?;

    let x_label = |value: &f64| x.label_at(*value);
    let y_label = |value: &f64| y.label_at(*value);
    let mut mesh = chart.configure_mesh();
    mesh.x_label_formatter(&x_label)
        .y_label_formatter(&y_label)
        .x_desc(x.title.as_str())
        .y_desc(y.title.as_str())
        .label_style(style(label_size))
        .axis_desc_style(style(desc_size))
        .bold_line_style(GRID)
        .axis_style(AXIS);
    if matches!(prepared.figure, Figure::Bars(_) | Figure::Histogram(_)) {
        // Vertical grid lines would cut through bars.
        mesh.disable_x_mesh();
    }
    mesh.draw().map_err(render_error)?;

    let target = prepared.target;
    if let Some((low, high)) = target {
        let band = Rectangle::new([(x.range.0, low), (x.range.1, high)], TARGET_FILL.filled());
        chart.draw_series([band]).map_err(render_error)?;
    }
    match &prepared.figure {
        Figure::Line(points) => {
            chart
                .draw_series(segments(points, SERIES.stroke_width(line_width)))
                .map_err(render_error)?;
            if points.len() == 1 {
                let dot = Circle::new(points[0], 3, SERIES.filled());
                chart.draw_series([dot]).map_err(render_error)?;
            }
        }
        Figure::Scatter(points) => {
            let radius = if points.len() > 2_000 { 2 } else { 3 };
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&p| Circle::new(p, radius, SERIES.filled())),
                )
                .map_err(render_error)?;
        }
        Figure::Bars(values) => {
            chart
                .draw_series(values.iter().enumerate().map(|(i, &v)| {
                    let i = i as f64;
                    Rectangle::new([(i - 0.4, 0.0), (i + 0.4, v)], SERIES.filled())
                }))
                .map_err(render_error)?;
        }
        Figure::Histogram(hist) => {
            let bars = hist
                .counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(i, &c)| [(hist.edges[i], 0.0), (hist.edges[i + 1], c as f64)]);
            chart
                .draw_series(
                    bars.clone()
                        .map(|corners| Rectangle::new(corners, SERIES.filled())),
                )
                .map_err(render_error)?;
            // A white outline keeps neighbouring bins apart.
            chart
                .draw_series(bars.map(|corners| Rectangle::new(corners, WHITE.stroke_width(1))))
                .map_err(render_error)?;
        }
        Figure::Agp(bins) => {
            for (band, colour) in [((0, 4), BAND_OUTER), ((1, 3), BAND_INNER)] {
                for run in agp_runs(bins) {
                    let mut outline: Vec<(f64, f64)> =
                        run.iter().map(|(hour, p)| (*hour, p[band.1])).collect();
                    outline.extend(run.iter().rev().map(|(hour, p)| (*hour, p[band.0])));
                    chart
                        .draw_series([Polygon::new(outline, colour.filled())])
                        .map_err(render_error)?;
                }
            }
            for run in agp_runs(bins) {
                let median: Vec<(f64, f64)> = run.iter().map(|(hour, p)| (*hour, p[2])).collect();
                chart
                    .draw_series(segments(&median, MEDIAN.stroke_width(line_width)))
                    .map_err(render_error)?;
            }
        }
    }
    if let Some((low, high)) = target {
        for level in [low, high] {
            let line = PathElement::new(
                vec![(x.range.0, level), (x.range.1, level)],
                TARGET_LINE.stroke_width(1),
            );
            chart.draw_series([line]).map_err(render_error)?;
        }
    }
    let (columns, rows) = chart.plotting_area().get_pixel_range();
    Ok(Layout {
        x: columns,
        y: rows,
    })
}

/// A polyline as separate two-point segments. plotters draws a wide path as one polygon with
/// mitred corners, and a sharp zigzag (a noisy sensor) turns those corners into long spikes
/// that shoot past the data and out of the plot; segments have no corners.
fn segments(
    points: &[(f64, f64)],
    style: ShapeStyle,
) -> impl Iterator<Item = PathElement<(f64, f64)>> + '_ {
    points
        .windows(2)
        .map(move |pair| PathElement::new(vec![pair[0], pair[1]], style))
}
