//! Charts of query results as PNG images, drawn in memory.
//!
//! [`render`] turns typed columns ([`PlotData`]) into a picture ([`ChartKind`]) and returns the
//! PNG together with a [`ChartSummary`]: the numbers that were drawn, as a table and a sentence,
//! so an agent that cannot see the image still gets what it shows. It opens no file and makes no
//! system call beyond memory allocation (the font is compiled in, see `text.rs`), so it can run
//! inside a confined worker.
//!
//! Bounds that hold whatever the input: the image is at most [`MAX_WIDTH`] × [`MAX_HEIGHT`],
//! at most [`MAX_ROWS`] rows are read, a line or scatter is thinned to what its pixels can show
//! (`stats::thin_line`, `stats::thin_scatter`), and a PNG over [`MAX_PNG_BYTES`] is refused.
//!
//! One file per job: `kinds.rs` reads the data and works out what each kind shows and says
//! (`agp.rs` for the glucose profile), `stats.rs` the percentiles, bins and thinning, `axes.rs`
//! the ticks and labels, `draw.rs` the drawing with plotters, `text.rs` the text.

mod agp;
mod axes;
mod draw;
mod figure;
mod glucose;
mod kinds;
mod stats;
mod text;
mod tir;

#[cfg(test)]
mod tests;

use std::fmt;

use duckgate_validate::error::ErrorKind;

/// The widest image [`render`] draws, in pixels.
pub const MAX_WIDTH: u32 = 2000;
/// The tallest image [`render`] draws, in pixels.
pub const MAX_HEIGHT: u32 = 1200;
/// The smallest width or height: below it the axes leave no room for a plot.
pub const MIN_SIDE: u32 = 200;
/// The width used when the caller has no preference.
pub const DEFAULT_WIDTH: u32 = 900;
/// The height used when the caller has no preference.
pub const DEFAULT_HEIGHT: u32 = 500;
/// The largest PNG [`render`] returns (2 MiB). Charts are mostly flat colour and compress to far
/// less; this bounds what a tool result can carry.
pub const MAX_PNG_BYTES: usize = 2 * 1024 * 1024;
/// The most bars a bar chart draws: past this the labels are unreadable.
pub const MAX_CATEGORIES: usize = 200;
/// The most bins a histogram may ask for.
pub const MAX_BINS: u32 = 200;
/// Histogram bins when the caller does not say.
pub const DEFAULT_BINS: u32 = 30;
/// The most input rows [`render`] reads (a bound on its time and memory).
pub const MAX_ROWS: usize = 1_000_000;

/// Which picture to draw: a wire type of the worker protocol, defined there.
pub use crate::protocol::ChartKind;

/// One x value as the query returned it.
#[derive(Debug, Clone, PartialEq)]
pub enum XValue {
    /// A timestamp: microseconds since the Unix epoch, with the local wall clock already applied
    /// by the caller (it is drawn as-is, with no time zone).
    Time(i64),
    /// A number.
    Number(f64),
    /// Text, or anything else shown by its name (bar charts only).
    Category(String),
}

impl XValue {
    /// The type's name for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            XValue::Time(_) => "timestamp",
            XValue::Number(_) => "number",
            XValue::Category(_) => "text",
        }
    }
}

/// The columns to plot: `x` and `y` have one entry per row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PlotData {
    /// The x column's name (the x axis title).
    pub x_label: String,
    /// The y column's name (the y axis title).
    pub y_label: String,
    /// The x values.
    pub x: Vec<XValue>,
    /// The y values; `None` (SQL NULL) and non-finite values are skipped, with their row.
    pub y: Vec<Option<f64>>,
}

/// How to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartOptions {
    /// Which picture.
    pub kind: ChartKind,
    /// A title above the chart.
    pub title: Option<String>,
    /// Image width in pixels, [`MIN_SIDE`]..=[`MAX_WIDTH`].
    pub width: u32,
    /// Image height in pixels, [`MIN_SIDE`]..=[`MAX_HEIGHT`].
    pub height: u32,
    /// Histogram bins, 1..=[`MAX_BINS`] ([`DEFAULT_BINS`] when `None`); other kinds ignore it.
    pub bins: Option<u32>,
    /// A y range to shade as the target (e.g. 70–180 mg/dL) on line and AGP charts, and to count
    /// readings in for the AGP's summary; other kinds ignore it.
    pub target_range: Option<(f64, f64)>,
}

impl ChartOptions {
    /// A chart of `kind` at the default size, with no title, bins or target.
    pub fn new(kind: ChartKind) -> Self {
        ChartOptions {
            kind,
            title: None,
            width: DEFAULT_WIDTH,
            height: DEFAULT_HEIGHT,
            bins: None,
            target_range: None,
        }
    }
}

/// A drawn chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// The PNG file's bytes (8-bit RGB).
    pub png: Vec<u8>,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// What it shows, as data.
    pub summary: ChartSummary,
}

/// What a chart shows, for a reader who cannot see it: a small table and a sentence.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartSummary {
    /// The table's column names.
    pub columns: Vec<String>,
    /// The table's rows (numbers as JSON numbers, times as `YYYY-MM-DD HH:MM:SS` strings).
    pub rows: Vec<Vec<serde_json::Value>>,
    /// One or two plain sentences: how many points, the x range, the y minimum, median and
    /// maximum, and for an AGP the share of readings in the target range.
    pub text: String,
}

/// Why a chart could not be drawn. Each message says what to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum PlotError {
    /// The query returned no rows.
    EmptyData,
    /// Every row had a NULL or non-finite y (or x), so nothing is left to draw.
    NothingToDraw {
        /// The rows that were read.
        rows: usize,
    },
    /// `x` and `y` have different lengths (a bug in the caller).
    LengthMismatch {
        /// Entries in `x`.
        x: usize,
        /// Entries in `y`.
        y: usize,
    },
    /// More rows than [`MAX_ROWS`].
    TooManyRows {
        /// The rows given.
        rows: usize,
        /// [`MAX_ROWS`].
        max: usize,
    },
    /// The x column's type does not suit the chart kind.
    WrongXType {
        /// The chart kind.
        kind: ChartKind,
        /// The type found (`timestamp`, `number`, `text`).
        found: &'static str,
        /// What the kind takes.
        expected: &'static str,
    },
    /// The x column mixes timestamps and numbers.
    MixedXTypes {
        /// The type of the first row.
        first: &'static str,
        /// The other type met.
        other: &'static str,
    },
    /// The y column is not numeric. [`render`] never returns this (its `y` is numeric by type):
    /// it is for the code that turns a result set into [`PlotData`], so the tool reports every
    /// plotting failure the same way.
    NonNumericY {
        /// The y column.
        column: String,
        /// Its SQL type.
        found: String,
    },
    /// A bar chart with more than [`MAX_CATEGORIES`] bars.
    TooManyCategories {
        /// The bars asked for.
        found: usize,
        /// [`MAX_CATEGORIES`].
        max: usize,
    },
    /// Histogram bins outside 1..=[`MAX_BINS`].
    BinsOutOfRange {
        /// The bins asked for.
        bins: u32,
        /// [`MAX_BINS`].
        max: u32,
    },
    /// Width or height outside [`MIN_SIDE`]..=[`MAX_WIDTH`] / [`MAX_HEIGHT`].
    SizeOutOfRange {
        /// The width asked for.
        width: u32,
        /// The height asked for.
        height: u32,
    },
    /// The target range is not two finite numbers, low below high.
    InvalidTargetRange {
        /// Its low end.
        low: f64,
        /// Its high end.
        high: f64,
    },
    /// The encoded PNG is larger than [`MAX_PNG_BYTES`].
    PngTooLarge {
        /// Its size.
        bytes: usize,
        /// [`MAX_PNG_BYTES`].
        max: usize,
    },
    /// Drawing failed inside plotters or the font (a bug: nothing the caller did).
    Render(String),
    /// PNG encoding failed (a bug: nothing the caller did).
    Encode(String),
}

impl PlotError {
    /// The registry kind the MCP envelope reports for this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            PlotError::EmptyData
            | PlotError::NothingToDraw { .. }
            | PlotError::WrongXType { .. }
            | PlotError::MixedXTypes { .. }
            | PlotError::NonNumericY { .. }
            | PlotError::TooManyCategories { .. }
            | PlotError::BinsOutOfRange { .. }
            | PlotError::SizeOutOfRange { .. }
            | PlotError::InvalidTargetRange { .. } => ErrorKind::InvalidArgument,
            PlotError::TooManyRows { .. } | PlotError::PngTooLarge { .. } => {
                ErrorKind::ResourceLimit
            }
            PlotError::LengthMismatch { .. } | PlotError::Render(_) | PlotError::Encode(_) => {
                ErrorKind::InternalError
            }
        }
    }
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlotError::EmptyData => write!(
                f,
                "the query returned no rows, so there is nothing to plot; run it with the query \
                 tool to check its WHERE clause and time range"
            ),
            PlotError::NothingToDraw { rows } => write!(
                f,
                "all {rows} rows have a NULL or non-finite value in a plotted column; filter them \
                 out (WHERE y IS NOT NULL) or plot another column"
            ),
            PlotError::LengthMismatch { x, y } => write!(
                f,
                "internal error: {x} x values but {y} y values; please report this"
            ),
            PlotError::TooManyRows { rows, max } => write!(
                f,
                "{rows} rows is more than the {max} a chart reads; aggregate in SQL first (e.g. \
                 GROUP BY time_bucket(INTERVAL '5 minutes', ts)) or narrow the time range"
            ),
            PlotError::WrongXType {
                kind,
                found,
                expected,
            } => write!(
                f,
                "the {kind} chart needs {expected} in the x column, but it holds {found} values; \
                 cast it in SQL (e.g. CAST(x AS TIMESTAMP)) or pick another chart kind"
            ),
            PlotError::MixedXTypes { first, other } => write!(
                f,
                "the x column mixes {first} and {other} values; cast it to one type in SQL"
            ),
            PlotError::NonNumericY { column, found } => write!(
                f,
                "the y column {column:?} is {found}, not a number; cast it (CAST(y AS DOUBLE)) \
                 or count rows instead (count(*))"
            ),
            PlotError::TooManyCategories { found, max } => write!(
                f,
                "{found} bars is more than the {max} a bar chart can label; keep the top ones \
                 (ORDER BY y DESC LIMIT {max}) or group them in SQL"
            ),
            PlotError::BinsOutOfRange { bins, max } => {
                write!(f, "bins must be between 1 and {max}, not {bins}")
            }
            PlotError::SizeOutOfRange { width, height } => write!(
                f,
                "an image of {width}×{height} pixels is outside the allowed \
                 {MIN_SIDE}×{MIN_SIDE} to {MAX_WIDTH}×{MAX_HEIGHT}; ask for a size in that range \
                 (the default is {DEFAULT_WIDTH}×{DEFAULT_HEIGHT})"
            ),
            PlotError::InvalidTargetRange { low, high } => write!(
                f,
                "the target range {low}–{high} must be two finite numbers with the low one first \
                 (e.g. 70 and 180)"
            ),
            PlotError::PngTooLarge { bytes, max } => write!(
                f,
                "the chart image is {bytes} bytes, over the {max}-byte limit; ask for a smaller \
                 width and height or aggregate the data in SQL"
            ),
            PlotError::Render(message) => {
                write!(f, "internal error while drawing the chart: {message}")
            }
            PlotError::Encode(message) => {
                write!(
                    f,
                    "internal error while encoding the chart as PNG: {message}"
                )
            }
        }
    }
}

impl std::error::Error for PlotError {}

/// Draw `data` as `options` say and encode it as PNG, with a summary of what was drawn.
///
/// The arguments are checked first (size, bins, target range, row count), then the data for the
/// kind, then the picture is drawn and encoded; the first failing step's error is returned.
/// Rendering is deterministic: the same input gives the same bytes.
pub fn render(data: &PlotData, options: &ChartOptions) -> Result<Rendered, PlotError> {
    check_options(data, options)?;
    let prepared = kinds::prepare(data, options)?;
    let (rgb, _layout) = draw::draw(&prepared, options)?;
    let png = encode_png(&rgb, options.width, options.height)?;
    check_png_size(png.len(), MAX_PNG_BYTES)?;
    Ok(Rendered {
        png,
        width: options.width,
        height: options.height,
        summary: prepared.summary,
    })
}

fn check_options(data: &PlotData, options: &ChartOptions) -> Result<(), PlotError> {
    let (width, height) = (options.width, options.height);
    if !(MIN_SIDE..=MAX_WIDTH).contains(&width) || !(MIN_SIDE..=MAX_HEIGHT).contains(&height) {
        return Err(PlotError::SizeOutOfRange { width, height });
    }
    if let Some(bins) = options.bins
        && !(1..=MAX_BINS).contains(&bins)
    {
        return Err(PlotError::BinsOutOfRange {
            bins,
            max: MAX_BINS,
        });
    }
    if let Some((low, high)) = options.target_range
        && !(low.is_finite() && high.is_finite() && low < high)
    {
        return Err(PlotError::InvalidTargetRange { low, high });
    }
    if data.x.len() != data.y.len() {
        return Err(PlotError::LengthMismatch {
            x: data.x.len(),
            y: data.y.len(),
        });
    }
    if data.y.len() > MAX_ROWS {
        return Err(PlotError::TooManyRows {
            rows: data.y.len(),
            max: MAX_ROWS,
        });
    }
    if data.y.is_empty() {
        return Err(PlotError::EmptyData);
    }
    Ok(())
}

/// 8-bit RGB PNG, best compression: charts are large flat areas, which it shrinks well, and the
/// time it takes is small next to drawing.
fn encode_png(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, PlotError> {
    let mut png = Vec::new();
    let mut encoder = png::Encoder::new(&mut png, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::High);
    let mut writer = encoder
        .write_header()
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    writer
        .write_image_data(rgb)
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    writer
        .finish()
        .map_err(|e| PlotError::Encode(e.to_string()))?;
    Ok(png)
}

fn check_png_size(bytes: usize, max: usize) -> Result<(), PlotError> {
    if bytes > max {
        Err(PlotError::PngTooLarge { bytes, max })
    } else {
        Ok(())
    }
}
