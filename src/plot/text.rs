//! Text on the charts, from a font compiled into the binary.
//!
//! plotters draws everything else; its own text needs either system fonts (`ttf`, which opens
//! files a confined worker may not) or ab_glyph (which pulls the unmaintained ttf-parser). So
//! [`ChartBackend`] wraps plotters' in-memory bitmap backend and answers its two text calls
//! itself: skrifa reads the glyph outlines and metrics of the embedded font and
//! ab_glyph_rasterizer turns them into anti-aliased coverage. Nothing is read at run time.
//!
//! The font is DejaVu Sans (fonts-dejavu-core 2.37), cut down to Latin, Greek and basic Cyrillic
//! letters and common punctuation so it adds about 60 KiB to the binary:
//! `pyftsubset DejaVuSans.ttf --unicodes=U+0020-007E,U+00A0-017F,U+0370-03FF,U+0400-045F,
//! U+2010-2027,U+2030,U+2032-2033,U+2190-2193,U+2212,U+2264-2265,U+20AC --no-hinting
//! --legacy-kern --layout-features='' --notdef-outline --drop-tables+=MATH,FFTM --name-IDs='*'`
//! (fonttools 4.68). A character outside the subset is drawn as the font's empty box. Its licence (Bitstream Vera
//! and Arev, permissive) is `assets/fonts/LICENSE-DejaVu.txt`.

use ab_glyph_rasterizer::{Rasterizer, point};
use plotters::backend::BitMapBackend;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};
use skrifa::instance::{LocationRef, Size};
use skrifa::outline::{DrawSettings, OutlinePen};
use skrifa::{FontRef, GlyphId, MetadataProvider};

/// The embedded font file.
pub(crate) static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans-subset.ttf");

/// The font, parsed (parsing only reads the table directory of the static bytes).
pub(crate) fn font() -> Result<FontRef<'static>, FontUnreadable> {
    FontRef::new(FONT).map_err(FontUnreadable)
}

/// The embedded font did not parse (a broken build, never the user's input).
#[derive(Debug)]
pub(crate) struct FontUnreadable(skrifa::raw::ReadError);

impl std::fmt::Display for FontUnreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the embedded chart font is unreadable: {}", self.0)
    }
}

/// A line of text laid out at one size: each glyph with its pen position, and the box.
struct Layout {
    glyphs: Vec<(GlyphId, f32)>,
    width: f32,
    ascent: f32,
    descent: f32,
}

fn layout(font: &FontRef<'static>, text: &str, size: f32) -> Layout {
    let charmap = font.charmap();
    let size = Size::new(size);
    let advances = font.glyph_metrics(size, LocationRef::default());
    let metrics = font.metrics(size, LocationRef::default());
    let mut pen = 0.0f32;
    let glyphs = text
        .chars()
        .map(|c| {
            let glyph = charmap.map(c).unwrap_or(GlyphId::NOTDEF);
            let at = pen;
            pen += advances.advance_width(glyph).unwrap_or(0.0);
            (glyph, at)
        })
        .collect();
    Layout {
        glyphs,
        width: pen,
        ascent: metrics.ascent,
        descent: metrics.descent.min(0.0),
    }
}

/// The width and height in pixels of `text` at `size` pixels per em.
pub(crate) fn measure(font: &FontRef<'static>, text: &str, size: f32) -> (u32, u32) {
    let line = layout(font, text, size);
    (
        line.width.ceil() as u32,
        (line.ascent - line.descent).ceil() as u32,
    )
}

/// Feeds a glyph outline (y up, origin on the baseline) into a rasterizer (y down), shifted to
/// the glyph's pen position.
struct RasterPen<'r> {
    raster: &'r mut Rasterizer,
    origin: (f32, f32),
    start: (f32, f32),
    current: (f32, f32),
}

impl RasterPen<'_> {
    fn at(&self, x: f32, y: f32) -> ab_glyph_rasterizer::Point {
        point(self.origin.0 + x, self.origin.1 - y)
    }
}

impl OutlinePen for RasterPen<'_> {
    fn move_to(&mut self, x: f32, y: f32) {
        self.start = (x, y);
        self.current = (x, y);
    }

    fn line_to(&mut self, x: f32, y: f32) {
        let from = self.at(self.current.0, self.current.1);
        let to = self.at(x, y);
        self.raster.draw_line(from, to);
        self.current = (x, y);
    }

    fn quad_to(&mut self, cx0: f32, cy0: f32, x: f32, y: f32) {
        let from = self.at(self.current.0, self.current.1);
        let (control, to) = (self.at(cx0, cy0), self.at(x, y));
        self.raster.draw_quad(from, control, to);
        self.current = (x, y);
    }

    fn curve_to(&mut self, cx0: f32, cy0: f32, cx1: f32, cy1: f32, x: f32, y: f32) {
        let from = self.at(self.current.0, self.current.1);
        let (c0, c1, to) = (self.at(cx0, cy0), self.at(cx1, cy1), self.at(x, y));
        self.raster.draw_cubic(from, c0, c1, to);
        self.current = (x, y);
    }

    fn close(&mut self) {
        if self.current != self.start {
            let (x, y) = self.start;
            self.line_to(x, y);
        }
    }
}

/// The coverage (0–1) of `text` at `size`, in a `width × height` box whose top-left is the top of
/// the line's ascent at the pen's start.
fn rasterize(font: &FontRef<'static>, text: &str, size: f32) -> (Rasterizer, usize, usize) {
    let line = layout(font, text, size);
    let width = line.width.ceil() as usize + 1;
    let height = (line.ascent - line.descent).ceil() as usize + 1;
    let mut raster = Rasterizer::new(width, height);
    let outlines = font.outline_glyphs();
    for (glyph, x) in line.glyphs {
        if let Some(outline) = outlines.get(glyph) {
            let mut pen = RasterPen {
                raster: &mut raster,
                origin: (x, line.ascent),
                start: (0.0, 0.0),
                current: (0.0, 0.0),
            };
            // A glyph that fails to draw is left out rather than failing the chart.
            let settings = DrawSettings::unhinted(Size::new(size), LocationRef::default());
            let _ = outline.draw(settings, &mut pen);
        }
    }
    (raster, width, height)
}

/// plotters' bitmap backend with text drawn from the embedded font.
pub(crate) struct ChartBackend<'a> {
    inner: BitMapBackend<'a>,
    font: FontRef<'static>,
}

impl<'a> ChartBackend<'a> {
    /// Draw into an RGB buffer of `width × height × 3` bytes.
    pub(crate) fn new(buffer: &'a mut [u8], size: (u32, u32)) -> Result<Self, FontUnreadable> {
        Ok(ChartBackend {
            inner: BitMapBackend::with_buffer(buffer, size),
            font: font()?,
        })
    }
}

type BackendResult<E> = Result<(), DrawingErrorKind<E>>;
type Inner<'a> = BitMapBackend<'a>;

impl<'a> DrawingBackend for ChartBackend<'a> {
    type ErrorType = <Inner<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.inner.get_size()
    }

    fn ensure_prepared(&mut self) -> BackendResult<Self::ErrorType> {
        self.inner.ensure_prepared()
    }

    fn present(&mut self) -> BackendResult<Self::ErrorType> {
        self.inner.present()
    }

    fn draw_pixel(
        &mut self,
        at: BackendCoord,
        color: BackendColor,
    ) -> BackendResult<Self::ErrorType> {
        self.inner.draw_pixel(at, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> BackendResult<Self::ErrorType> {
        self.inner.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> BackendResult<Self::ErrorType> {
        self.inner.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> BackendResult<Self::ErrorType> {
        self.inner.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> BackendResult<Self::ErrorType> {
        self.inner.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vertices: I,
        style: &S,
    ) -> BackendResult<Self::ErrorType> {
        self.inner.fill_polygon(vertices, style)
    }

    fn blit_bitmap(
        &mut self,
        at: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> BackendResult<Self::ErrorType> {
        self.inner.blit_bitmap(at, size, src)
    }

    /// The same placement rule as plotters' default (anchor on the unrotated box, then rotate
    /// about the anchor), with the glyphs from the embedded font.
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        at: BackendCoord,
    ) -> BackendResult<Self::ErrorType> {
        let color = style.color();
        if color.alpha == 0.0 || text.is_empty() {
            return Ok(());
        }
        let (raster, width, height) = rasterize(&self.font, text, style.size() as f32);
        let (width, height) = (width as i32, height as i32);
        let anchor = style.anchor();
        let dx = match anchor.h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match anchor.v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.inner.get_size();
        let mut result = Ok(());
        raster.for_each_pixel_2d(|x, y, coverage| {
            let coverage = coverage.min(1.0);
            if coverage <= 0.0 || result.is_err() {
                return;
            }
            let (x, y) = transform.transform(x as i32 + dx, y as i32 + dy);
            let (x, y) = (at.0 + x, at.1 + y);
            if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 {
                let pixel = BackendColor {
                    alpha: color.alpha * f64::from(coverage),
                    rgb: color.rgb,
                };
                result = self.inner.draw_pixel((x, y), pixel);
            }
        });
        result
    }

    fn estimate_text_size<S: BackendTextStyle>(
        &self,
        text: &str,
        style: &S,
    ) -> Result<(u32, u32), DrawingErrorKind<Self::ErrorType>> {
        Ok(measure(&self.font, text, style.size() as f32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_font_has_the_glyphs_labels_use() {
        let font = font().expect("font parses");
        let charmap = font.charmap();
        for c in "AZaz09:–—…°µ±×éßΩжЖ€≤≥−".chars() {
            assert!(charmap.map(c).is_some(), "no glyph for {c:?}");
        }
        assert_eq!(charmap.map('日'), None, "outside the subset");
    }

    #[test]
    fn text_is_measured_wider_for_more_characters_and_taller_for_larger_sizes() {
        let font = font().expect("font parses");
        let (short, height) = measure(&font, "12", 13.0);
        let (long, _) = measure(&font, "1234", 13.0);
        let (_, taller) = measure(&font, "12", 26.0);
        assert!(short > 5 && long > short * 3 / 2, "{short} {long}");
        assert!(
            height >= 13 && taller >= 2 * height - 1,
            "{height} {taller}"
        );
    }
}
