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

use super::agp::AGP_LABELS;
use super::axes::{Axis, clean_label};
use super::figure::{self, AgpFigure, Figure, Prepared};
use super::glucose::{TARGET, VERY_HIGH, VERY_LOW};
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
/// The AGP's line at 54 mg/dL (level 2 hypoglycaemia).
pub(crate) const VERY_LOW_LINE: RGBColor = RGBColor(213, 94, 0);
/// The AGP's line at 250 mg/dL (level 2 hyperglycaemia).
pub(crate) const VERY_HIGH_LINE: RGBColor = RGBColor(230, 159, 0);
/// The time-in-ranges segments, very low to very high, in the colours of the consensus report.
pub(crate) const TIR_COLOURS: [RGBColor; 5] = [
    RGBColor(139, 0, 0),
    RGBColor(227, 30, 36),
    RGBColor(59, 181, 74),
    RGBColor(255, 210, 0),
    RGBColor(245, 130, 32),
];
/// Labels, titles.
const TEXT: RGBColor = RGBColor(34, 34, 34);
/// The axis lines and ticks.
const AXIS: RGBColor = RGBColor(96, 96, 96);
/// Grid lines at the ticks.
const GRID: RGBColor = RGBColor(232, 232, 232);

/// The body text's size in pixels at the default image size: tick labels, legends, the AGP's
/// header. Every other size is this times its role's ratio, so the hierarchy keeps its
/// proportions when the body size or the image changes (see [`TextSizes`]).
const BODY_SIZE: f64 = 13.0;
/// Axis titles and the time-in-ranges labels: a step above the body, so an axis title reads as
/// the name of what its ticks count.
const DESCRIPTION_RATIO: f64 = 1.1;
/// Chart titles: the largest step, a heading at a glance.
const TITLE_RATIO: f64 = 1.4;

/// The text sizes of one image, in pixels: one scale from [`BODY_SIZE`], grown with the image.
#[derive(Debug, Clone, Copy)]
struct TextSizes {
    label: f64,
    description: f64,
    title: f64,
}

impl TextSizes {
    fn of(options: &ChartOptions) -> TextSizes {
        let body = BODY_SIZE * text_scale(options);
        TextSizes {
            label: body,
            description: body * DESCRIPTION_RATIO,
            title: body * TITLE_RATIO,
        }
    }
}

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
        let layout = match &prepared.figure {
            Figure::Tir(ranges) => draw_tir(&root, ranges, options)?,
            Figure::Agp(figure) => {
                let header = draw_agp_header(&root, figure, prepared.target, options)?;
                let (_, chart) = root.split_vertically(header);
                draw_chart(&chart, prepared, options, false)?
            }
            Figure::Line(_)
            | Figure::Envelope(_)
            | Figure::Scatter(_)
            | Figure::Bars(_)
            | Figure::Histogram(_) => draw_chart(&root, prepared, options, true)?,
        };
        root.present().map_err(render_error)?;
        layout
    };
    Ok((buffer, layout))
}

fn style(size: f64) -> TextStyle<'static> {
    TextStyle::from((FontFamily::SansSerif, size)).color(&TEXT)
}

/// Text grows with the image (up to 1.6×) so a 2000-pixel chart stays readable when shown
/// smaller; it never shrinks below the default size.
fn text_scale(options: &ChartOptions) -> f64 {
    (f64::from(options.width) / f64::from(super::DEFAULT_WIDTH))
        .min(f64::from(options.height) / f64::from(super::DEFAULT_HEIGHT))
        .clamp(1.0, 1.6)
}

/// The AGP's title, its header of consensus metrics and its legend, across the top; returns
/// the height they take.
fn draw_agp_header(
    root: &DrawingArea<ChartBackend<'_>, Shift>,
    figure: &AgpFigure,
    target: Option<(f64, f64)>,
    options: &ChartOptions,
) -> Result<u32, PlotError> {
    let font = font().map_err(render_error)?;
    let scale = text_scale(options);
    let sizes = TextSizes::of(options);
    let (title_size, label_size) = (sizes.title, sizes.label);
    let width = options.width as i32;
    let title = options.title.as_deref().map_or_else(
        || "Ambulatory Glucose Profile (AGP)".to_string(),
        |t| clean_label(t, 100),
    );
    let centred = |text: &str, size: f64, y: i32| -> Result<(), PlotError> {
        let (w, _) = measure(&font, text, size as f32);
        root.draw_text(text, &style(size), ((width - w as i32) / 2, y))
            .map_err(render_error)
    };
    let (_, title_h) = measure(&font, "Ag", title_size as f32);
    let (_, label_h) = measure(&font, "Ag", label_size as f32);
    let mut y = 8;
    centred(&title, title_size, y)?;
    y += title_h as i32 + 6;
    let header = clean_label(&figure.header, 160);
    centred(&header, label_size, y)?;
    y += label_h as i32 + 6;
    // The legend: a swatch and its words per element, centred as one line.
    let (t_lo, t_hi) = target.unwrap_or(TARGET);
    let entries: [(RGBColor, bool, String); 5] = [
        (BAND_OUTER, true, "5–95%".into()),
        (BAND_INNER, true, "25–75%".into()),
        (MEDIAN, false, "median".into()),
        (TARGET_FILL, true, format!("target {}–{}", t_lo, t_hi)),
        (
            VERY_LOW_LINE,
            false,
            format!("{VERY_LOW} and {VERY_HIGH} mg/dL"),
        ),
    ];
    let swatch = (label_h as i32).max(8);
    let gap = (12.0 * scale) as i32;
    let total: i32 = entries
        .iter()
        .map(|(_, _, text)| swatch + 4 + measure(&font, text, label_size as f32).0 as i32)
        .sum::<i32>()
        + gap * (entries.len() as i32 - 1);
    let mut x = (width - total) / 2;
    for (colour, filled, text) in &entries {
        if *filled {
            root.draw(&Rectangle::new(
                [(x, y), (x + swatch, y + swatch)],
                colour.filled(),
            ))
            .map_err(render_error)?;
        } else if *colour == VERY_LOW_LINE {
            // The two reference lines, one above the other.
            for (row, line) in [
                (y + swatch / 3, VERY_HIGH_LINE),
                (y + 2 * swatch / 3, VERY_LOW_LINE),
            ] {
                root.draw(&PathElement::new(
                    vec![(x, row), (x + swatch, row)],
                    line.stroke_width(2),
                ))
                .map_err(render_error)?;
            }
        } else {
            let row = y + swatch / 2;
            root.draw(&PathElement::new(
                vec![(x, row), (x + swatch, row)],
                colour.stroke_width(3),
            ))
            .map_err(render_error)?;
        }
        x += swatch + 4;
        root.draw_text(text, &style(label_size), (x, y))
            .map_err(render_error)?;
        x += measure(&font, text, label_size as f32).0 as i32 + gap;
    }
    Ok((y + swatch + 4) as u32)
}

/// The time-in-ranges bar: five stacked segments, very low at the bottom, each labelled with
/// its range, its percentage and the consensus goal.
fn draw_tir(
    root: &DrawingArea<ChartBackend<'_>, Shift>,
    ranges: &[figure::Range],
    options: &ChartOptions,
) -> Result<Layout, PlotError> {
    let font = font().map_err(render_error)?;
    let scale = text_scale(options);
    let sizes = TextSizes::of(options);
    let (title_size, label_size) = (sizes.title, sizes.description);
    let (width, height) = (options.width as i32, options.height as i32);
    let title = options
        .title
        .as_deref()
        .map_or_else(|| "Time in ranges".to_string(), |t| clean_label(t, 100));
    let (title_w, title_h) = measure(&font, &title, title_size as f32);
    root.draw_text(
        &title,
        &style(title_size),
        ((width - title_w as i32) / 2, 8),
    )
    .map_err(render_error)?;
    let (_, label_h) = measure(&font, "Ag", label_size as f32);
    // Under the title, what the report prints beside the bar: the readings and the two sums
    // the goals for lows and highs are stated in.
    let total: usize = ranges.iter().map(|r| r.n).sum();
    let share = |parts: &[usize]| {
        parts
            .iter()
            .map(|&i| ranges.get(i).map_or(0, |r| r.n))
            .sum::<usize>() as f64
            * 100.0
            / total.max(1) as f64
    };
    let subtitle = format!(
        "{total} readings · below 70 mg/dL: {:.1}% · above 180 mg/dL: {:.1}%",
        share(&[0, 1]),
        share(&[3, 4])
    );
    let (subtitle_w, _) = measure(&font, &subtitle, label_size as f32);
    let subtitle_y = 8 + title_h as i32 + 6;
    root.draw_text(
        &subtitle,
        &style(label_size),
        ((width - subtitle_w as i32) / 2, subtitle_y),
    )
    .map_err(render_error)?;
    let top = subtitle_y + label_h as i32 + 16;
    let bottom = height - 16;
    let bar_width = (width / 8).max(30);
    let left = width / 3 - bar_width / 2;
    let right = left + bar_width;
    let span = f64::from(bottom - top);
    // Segments from the bottom; the last one ends exactly at the top.
    let mut edge = f64::from(bottom);
    let mut middles = Vec::with_capacity(ranges.len());
    for (i, (range, colour)) in ranges.iter().zip(TIR_COLOURS).enumerate() {
        let next = if i + 1 == ranges.len() {
            f64::from(top)
        } else {
            edge - span * range.percent / 100.0
        };
        let (lower, upper) = (edge.round() as i32, next.round() as i32);
        if lower > upper {
            root.draw(&Rectangle::new(
                [(left, upper), (right, lower)],
                colour.filled(),
            ))
            .map_err(render_error)?;
        }
        middles.push((edge + next) / 2.0);
        edge = next;
    }
    // Labels beside their segment's middle, pushed apart where segments are thin: first up
    // from the bottom, then down from the top so none leaves the bar's height.
    let spacing = f64::from(label_h) + 6.0;
    let mut rows = middles.clone();
    keep_apart(rows.iter_mut(), -spacing, f64::min);
    let lowest_top = f64::from(top) + f64::from(label_h) / 2.0;
    if let Some(last) = rows.last_mut() {
        *last = last.max(lowest_top);
    }
    keep_apart(rows.iter_mut().rev(), spacing, f64::max);
    let text_x = right + (24.0 * scale) as i32;
    for ((range, row), middle) in ranges.iter().zip(&rows).zip(&middles) {
        let y = (*row - f64::from(label_h) / 2.0).round() as i32;
        let (name, bounds) = (range.name, &range.bounds);
        let label = format!(
            "{:.1}%  {name} ({bounds} mg/dL), goal {}",
            range.percent, range.goal
        );
        // A short leader from the segment to its label.
        let middle = middle.round() as i32;
        root.draw(&PathElement::new(
            vec![(right + 2, middle), (text_x - 4, *row as i32)],
            AXIS.stroke_width(1),
        ))
        .map_err(render_error)?;
        root.draw_text(&label, &style(label_size), (text_x, y))
            .map_err(render_error)?;
    }
    Ok(Layout {
        x: left..right,
        y: top..bottom,
    })
}

fn draw_chart(
    root: &DrawingArea<ChartBackend<'_>, Shift>,
    prepared: &Prepared,
    options: &ChartOptions,
    caption: bool,
) -> Result<Layout, PlotError> {
    let font = font().map_err(render_error)?;
    let (x, y) = (&prepared.x, &prepared.y);
    // Text grows with the image (up to 1.6×) so a 2000-pixel chart stays readable when shown
    // smaller; it never shrinks below the default size.
    let scale = text_scale(options);
    let sizes = TextSizes::of(options);
    let (label_size, desc_size, title_size) = (sizes.label, sizes.description, sizes.title);
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
    // The AGP labels its percentile curves to the right of the plot.
    let right = if matches!(prepared.figure, Figure::Agp(_)) {
        measure(&font, "95%", label_size as f32).0 + 16
    } else {
        (24.0 * scale) as u32
    };
    builder
        .margin(10)
        .margin_right(right)
        .x_label_area_size(x_area)
        .y_label_area_size(y_area);
    if let Some(title) = options.title.as_ref().filter(|_| caption) {
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
    // A histogram's values are on x, so its target range is a vertical band.
    let across = matches!(prepared.figure, Figure::Histogram(_));
    if let Some((low, high)) = target {
        let corners = if across {
            [(low, y.range.0), (high, y.range.1)]
        } else {
            [(x.range.0, low), (x.range.1, high)]
        };
        let band = Rectangle::new(corners, TARGET_FILL.filled());
        chart.draw_series([band]).map_err(render_error)?;
    }
    match &prepared.figure {
        Figure::Line(points) => {
            chart
                .draw_series(segments(points, SERIES.stroke_width(line_width)))
                .map_err(render_error)?;
            if let [point] = points.as_slice() {
                let dot = Circle::new(*point, 3, SERIES.filled());
                chart.draw_series([dot]).map_err(render_error)?;
            }
        }
        Figure::Envelope(runs) => {
            for run in runs {
                let mut outline: Vec<(f64, f64)> = run.iter().map(|p| (p.0, p.3)).collect();
                outline.extend(run.iter().rev().map(|p| (p.0, p.1)));
                if let [(x, lo, _, hi)] = run.as_slice() {
                    // A lone column: its band as a vertical stroke.
                    let stroke = PathElement::new(vec![(*x, *lo), (*x, *hi)], BAND_INNER);
                    chart.draw_series([stroke]).map_err(render_error)?;
                } else {
                    chart
                        .draw_series([Polygon::new(outline, BAND_INNER.filled())])
                        .map_err(render_error)?;
                }
            }
            for run in runs {
                let median: Vec<(f64, f64)> = run.iter().map(|p| (p.0, p.2)).collect();
                chart
                    .draw_series(segments(&median, SERIES.stroke_width(line_width)))
                    .map_err(render_error)?;
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
                .bins()
                .filter(|&(_, _, count)| count > 0)
                .map(|(from, to, count)| [(from, 0.0), (to, count as f64)]);
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
        Figure::Tir(_) => {}
        Figure::Agp(figure) => {
            let runs = &figure.runs;
            // Each band by its lower and upper percentile: 5–95 %, then 25–75 % over it.
            let bands: [(BandEdges, RGBColor); 2] = [
                (|p| (p[0], p[4]), BAND_OUTER),
                (|p| (p[1], p[3]), BAND_INNER),
            ];
            for (edges, colour) in bands {
                for run in runs {
                    let mut outline: Vec<(f64, f64)> =
                        run.iter().map(|(hour, p)| (*hour, edges(p).1)).collect();
                    outline.extend(run.iter().rev().map(|(hour, p)| (*hour, edges(p).0)));
                    chart
                        .draw_series([Polygon::new(outline, colour.filled())])
                        .map_err(render_error)?;
                }
            }
            for run in runs {
                let median: Vec<(f64, f64)> = run.iter().map(|(hour, p)| (*hour, p[2])).collect();
                chart
                    .draw_series(segments(&median, MEDIAN.stroke_width(line_width)))
                    .map_err(render_error)?;
            }
        }
    }
    if let Some((low, high)) = target {
        for level in [low, high] {
            let ends = if across {
                vec![(level, y.range.0), (level, y.range.1)]
            } else {
                vec![(x.range.0, level), (x.range.1, level)]
            };
            let line = PathElement::new(ends, TARGET_LINE.stroke_width(1));
            chart.draw_series([line]).map_err(render_error)?;
        }
    }
    if let Figure::Agp(figure) = &prepared.figure {
        for (level, colour) in [(VERY_LOW, VERY_LOW_LINE), (VERY_HIGH, VERY_HIGH_LINE)] {
            let line = PathElement::new(
                vec![(x.range.0, level), (x.range.1, level)],
                colour.stroke_width(1),
            );
            chart.draw_series([line]).map_err(render_error)?;
        }
        // Each curve labelled at its right end, the labels kept a line apart.
        if let Some(&(end, p)) = figure.runs.last().and_then(|run| run.last()) {
            let (_, rows) = chart.plotting_area().get_pixel_range();
            let per_pixel = (y.range.1 - y.range.0) / f64::from((rows.end - rows.start).max(1));
            let spacing = (f64::from(label_height) + 2.0) * per_pixel;
            let mut at = p;
            keep_apart(at.iter_mut(), spacing, f64::max);
            for (label, value) in AGP_LABELS.iter().zip(at) {
                let text = EmptyElement::at((end, value))
                    + Text::new(
                        label.to_string(),
                        (6, -(label_height as i32) / 2),
                        style(label_size),
                    );
                chart.draw_series([text]).map_err(render_error)?;
            }
        }
    }
    let (columns, rows) = chart.plotting_area().get_pixel_range();
    Ok(Layout {
        x: columns,
        y: rows,
    })
}

/// A band of the AGP by its lower and upper percentile, read from the five.
type BandEdges = fn(&[f64; 5]) -> (f64, f64);

/// A polyline as separate two-point segments. plotters draws a wide path as one polygon with
/// mitred corners, and a sharp zigzag (a noisy sensor) turns those corners into long spikes
/// that shoot past the data and out of the plot; segments have no corners.
fn segments(
    points: &[(f64, f64)],
    style: ShapeStyle,
) -> impl Iterator<Item = PathElement<(f64, f64)>> + '_ {
    points.windows(2).filter_map(move |pair| match pair {
        [from, to] => Some(PathElement::new(vec![*from, *to], style)),
        _ => None,
    })
}

/// Move each of `values`, in the order given, to `limit(value, previous + gap)` (`f64::max`
/// keeps it at least `gap` above the one before it, `f64::min` with a negative `gap` below), so
/// labels stay apart and keep their order.
fn keep_apart<'a>(values: impl Iterator<Item = &'a mut f64>, gap: f64, limit: fn(f64, f64) -> f64) {
    let mut previous: Option<f64> = None;
    for value in values {
        if let Some(previous) = previous {
            *value = limit(*value, previous + gap);
        }
        previous = Some(*value);
    }
}
