//! Tests of the chart renderer: they decode the PNG and look at its pixels, and check the
//! numbers of the summaries against values worked out by hand. The percentile, binning,
//! thinning and calendar tests sit beside their code in `stats.rs` and `axes.rs`.

mod errors;
mod pictures;
mod summaries;

use std::io::Cursor;

use plotters::style::RGBColor;

use super::*;

use super::draw::{self, Layout};
use super::figure::Prepared;
use super::kinds;

const MINUTE: i64 = 60_000_000;
const HOUR: i64 = 60 * MINUTE;
const DAY: i64 = 24 * HOUR;
/// 2024-03-04 00:00 (a Monday), in microseconds.
const MONDAY: i64 = 1_709_510_400_000_000;

/// A decoded PNG.
struct Image {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Image {
    fn decode(png: &[u8]) -> Image {
        let decoder = png::Decoder::new(Cursor::new(png));
        let mut reader = decoder.read_info().expect("PNG header");
        let mut rgb = vec![0; reader.output_buffer_size().expect("buffer size")];
        let info = reader.next_frame(&mut rgb).expect("PNG data");
        assert_eq!(info.color_type, png::ColorType::Rgb);
        rgb.truncate(info.buffer_size());
        Image {
            width: info.width,
            height: info.height,
            rgb,
        }
    }

    fn pixel(&self, x: i32, y: i32) -> RGBColor {
        let i = (y as usize * self.width as usize + x as usize) * 3;
        RGBColor(self.rgb[i], self.rgb[i + 1], self.rgb[i + 2])
    }

    /// The rows of column `x` within `rows` whose pixel is exactly `colour`.
    fn rows_of(&self, colour: RGBColor, x: i32, rows: std::ops::Range<i32>) -> Vec<i32> {
        rows.filter(|&y| self.pixel(x, y) == colour).collect()
    }

    /// How many pixels in the whole image are exactly `colour`.
    fn count(&self, colour: RGBColor) -> usize {
        self.rgb
            .chunks_exact(3)
            .filter(|p| *p == [colour.0, colour.1, colour.2])
            .count()
    }
}

/// Render, and also return what was prepared and where the plot area landed, so a test can say
/// where a value must appear.
fn render_full(data: &PlotData, options: &ChartOptions) -> (Rendered, Prepared, Layout, Image) {
    let rendered = render(data, options).expect("render");
    let prepared = kinds::prepare(data, options).expect("prepare");
    let (_, layout) = draw::draw(&prepared, options).expect("draw");
    let image = Image::decode(&rendered.png);
    (rendered, prepared, layout, image)
}

/// The image row of y value `value`, from the axis range and the plot area alone.
fn row_of(prepared: &Prepared, layout: &Layout, value: f64) -> f64 {
    let (lo, hi) = prepared.y.range;
    let (top, bottom) = (f64::from(layout.y.start), f64::from(layout.y.end));
    bottom - (value - lo) / (hi - lo) * (bottom - top)
}

/// The image column of x value `value`.
fn column_of(prepared: &Prepared, layout: &Layout, value: f64) -> i32 {
    let (lo, hi) = prepared.x.range;
    let (left, right) = (f64::from(layout.x.start), f64::from(layout.x.end));
    (left + (value - lo) / (hi - lo) * (right - left)).round() as i32
}

fn times(data: &[(i64, f64)], y_label: &str) -> PlotData {
    PlotData {
        x_label: "time".into(),
        y_label: y_label.into(),
        x: data.iter().map(|&(t, _)| XValue::Time(t)).collect(),
        y: data.iter().map(|&(_, v)| Some(v)).collect(),
    }
}

fn numbers(y: &[f64]) -> PlotData {
    PlotData {
        x_label: "x".into(),
        y_label: "y".into(),
        x: (0..y.len()).map(|i| XValue::Number(i as f64)).collect(),
        y: y.iter().map(|&v| Some(v)).collect(),
    }
}

fn categories(bars: &[(&str, f64)]) -> PlotData {
    PlotData {
        x_label: "fruit".into(),
        y_label: "count".into(),
        x: bars
            .iter()
            .map(|(name, _)| XValue::Category(name.to_string()))
            .collect(),
        y: bars.iter().map(|&(_, v)| Some(v)).collect(),
    }
}

fn options(kind: ChartKind) -> ChartOptions {
    ChartOptions::new(kind)
}

/// A day of readings every five minutes, all `value`.
fn constant_day(value: f64) -> PlotData {
    let points: Vec<(i64, f64)> = (0..288).map(|i| (MONDAY + i * 5 * MINUTE, value)).collect();
    times(&points, "glucose")
}

/// 12 days of readings every 5 minutes. Each day's readings are the hour's base (100 + 5·hour)
/// plus that day's offset, one of twelve, so every hour's median is its base and every quarter
/// hour holds the same spread as its hour.
fn agp_profile() -> PlotData {
    const OFFSETS: [f64; 12] = [
        -50.0, -40.0, -30.0, -20.0, -10.0, -5.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0,
    ];
    let mut points = Vec::new();
    for day in 0..12 {
        for slot in 0..288 {
            let hour = slot / 12;
            let value = 100.0 + 5.0 * hour as f64 + OFFSETS[day as usize];
            points.push((MONDAY + day * DAY + slot * 5 * MINUTE, value));
        }
    }
    times(&points, "glucose")
}

/// Two weeks of made-up but lifelike CGM readings every 5 minutes: a daily rhythm, a
/// different level each day and deterministic noise.
fn cgm_weeks() -> PlotData {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut noise = move || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1);
        (state >> 33) as f64 / (1u64 << 31) as f64 - 0.5
    };
    let mut points = Vec::new();
    for day in 0..14 {
        let level = ((day * 37) % 50) as f64 - 25.0;
        for slot in 0..288 {
            let hour = slot as f64 / 12.0;
            let rhythm = 35.0 * (std::f64::consts::TAU * (hour - 9.0) / 24.0).sin();
            let meals: f64 = [7.5, 12.5, 19.0]
                .iter()
                .map(|meal| 45.0 * (-((hour - meal - 1.0) / 1.2).powi(2)).exp())
                .sum();
            let value = 125.0 + level + rhythm + meals + 50.0 * noise();
            points.push((MONDAY + day * DAY + slot * 5 * MINUTE, value));
        }
    }
    times(&points, "glucose (mg/dL)")
}
