//! Rendering a [`CellGrid`] the way a terminal window shows it: PNG for models that look at images, SVG
//! for documents (its text stays searchable).
//!
//! Both formats share one geometry ([`Layout`]), one colour resolution and one set of procedural shapes for
//! box drawing, blocks and braille, so an SVG and a PNG of the same screen line up pixel for pixel. The
//! glyphs come from DejaVu Sans Mono, embedded in the binary so screenshots look the same on every machine;
//! only characters it lacks (CJK, mostly) are looked up in fonts installed on the system.

mod blend;
mod blocks;
mod boxdraw;
mod faces;
mod fallback;
mod font;
mod metrics;
mod png;
mod shapes;
mod style;
mod svg;
mod svg_elements;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::color::Rgb;
use crate::geometry::{CellPos, PixelSize, Size};
use crate::palette::ThemeName;

use self::metrics::Metrics;

pub use self::png::{render_pixels, render_png};
pub use self::svg::render_svg;

/// The font size used when none is given: 16 px gives 10x20 px cells, the size the emulator reports to
/// applications that ask (see [`crate::emulator::NOMINAL_CELL_PIXELS`]).
pub const DEFAULT_FONT_PX: f32 = 16.0;
/// Smallest accepted font size: below it glyphs are unreadable smudges.
pub const MIN_FONT_PX: f32 = 6.0;
/// Largest accepted font size: above it an ordinary screen makes an image of hundreds of megabytes.
pub const MAX_FONT_PX: f32 = 96.0;
/// Largest PNG we agree to produce, in pixels (about 36 MB of RGB while rendering): a 1000-column
/// screen fits at a small font_px, and a handful of screenshots at once cannot take gigabytes.
pub const MAX_IMAGE_PIXELS: u64 = 12_000_000;

/// How to draw a screen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RenderOptions {
    /// The font size in pixels per em; a cell is about 0.6 em wide and 1.25 em high.
    pub font_px: f32,
    pub theme: ThemeName,
    /// Draw a window frame with a title bar (showing the title the application set) around the cells.
    pub frame: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        Self {
            font_px: DEFAULT_FONT_PX,
            theme: ThemeName::Dark,
            frame: false,
        }
    }
}

/// A font size as a caller gives it (a JSON number is an f64), as the renderer takes it; refused
/// outside [`MIN_FONT_PX`, `MAX_FONT_PX`] (or not a number). Checked before narrowing: as an f32,
/// 1e39 would already be infinity and 1e-300 zero.
pub fn checked_font_px(font_px: f64) -> Result<f32, RenderError> {
    if (f64::from(MIN_FONT_PX)..=f64::from(MAX_FONT_PX)).contains(&font_px) {
        Ok(font_px as f32)
    } else {
        Err(RenderError::InvalidFontPx { font_px })
    }
}

impl RenderOptions {
    /// Reject a font size outside [`MIN_FONT_PX`, `MAX_FONT_PX`] (or not a number).
    pub fn validate(&self) -> Result<(), RenderError> {
        checked_font_px(f64::from(self.font_px)).map(|_| ())
    }

    /// The font size actually used: clamped into range, the default when not a number.
    pub(crate) fn effective_font_px(&self) -> f32 {
        if self.font_px.is_nan() {
            DEFAULT_FONT_PX
        } else {
            self.font_px.clamp(MIN_FONT_PX, MAX_FONT_PX)
        }
    }
}

/// Why a screen could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{font_px:?} is outside the font sizes drawn, {MIN_FONT_PX}-{MAX_FONT_PX} px (default {DEFAULT_FONT_PX})")]
    InvalidFontPx { font_px: f64 },
    #[error("the image would be {width}x{height} pixels, more than the limit of {MAX_IMAGE_PIXELS}; use a smaller font_px")]
    TooLarge { width: u32, height: u32 },
    #[error("the screen is {cols}x{rows} cells, so there is nothing to draw")]
    Empty { cols: u16, rows: u16 },
    #[error("PNG encoding failed: {0}")]
    Encode(#[from] ::png::EncodingError),
}

/// Where everything goes in the image: the size of a cell, of the whole image and where the cells start.
///
/// Computer use on terminals goes through it: a click at pixel (x, y) of a screenshot lands on
/// [`Layout::cell_at`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Layout {
    /// The screen size in cells.
    pub size: Size,
    /// One cell, in pixels.
    pub cell: PixelSize,
    /// The whole image, frame included.
    pub image: PixelSize,
    /// The pixel where the top-left cell starts: (0, 0) without a frame.
    pub origin: (u32, u32),
    /// Height of the title bar, 0 without a frame.
    pub title_bar: u32,
}

impl Layout {
    /// The layout of a screen of `size` drawn with `opts`.
    pub fn new(size: Size, opts: &RenderOptions) -> Layout {
        let metrics = Metrics::new(opts.effective_font_px());
        Layout::with_metrics(size, &metrics, opts.frame)
    }

    pub(crate) fn with_metrics(size: Size, metrics: &Metrics, frame: bool) -> Layout {
        let cell = PixelSize {
            width: metrics.cell_w,
            height: metrics.cell_h,
        };
        let cells_w = u32::from(size.cols).saturating_mul(cell.width);
        let cells_h = u32::from(size.rows).saturating_mul(cell.height);
        let (origin, title_bar, image) = if frame {
            // Padding in the terminal's background around the cells, as real terminal windows have.
            let pad = cell.width;
            let title_bar = (cell.height as f32 * 1.6).round() as u32;
            let image = PixelSize {
                width: cells_w.saturating_add(2 * pad),
                height: cells_h.saturating_add(title_bar + 2 * pad),
            };
            ((pad, title_bar + pad), title_bar, image)
        } else {
            let image = PixelSize {
                width: cells_w,
                height: cells_h,
            };
            ((0, 0), 0, image)
        };
        Layout {
            size,
            cell,
            image,
            origin,
            title_bar,
        }
    }

    /// The cell under pixel (x, y) of the image, or `None` when the pixel is outside the cells (on the
    /// frame, the padding or past the image).
    pub fn cell_at(&self, x: u32, y: u32) -> Option<CellPos> {
        let dx = x.checked_sub(self.origin.0)?;
        let dy = y.checked_sub(self.origin.1)?;
        let col = dx / self.cell.width.max(1);
        let row = dy / self.cell.height.max(1);
        let pos = CellPos::new(u16::try_from(col).ok()?, u16::try_from(row).ok()?);
        self.size.contains(pos).then_some(pos)
    }

    /// The top-left pixel of a cell. Positions past the screen give pixels past the cells.
    pub fn cell_origin(&self, pos: CellPos) -> (u32, u32) {
        (
            self.origin
                .0
                .saturating_add(u32::from(pos.col.0).saturating_mul(self.cell.width)),
            self.origin
                .1
                .saturating_add(u32::from(pos.row.0).saturating_mul(self.cell.height)),
        )
    }

    /// The pixel at the centre of a cell: where to click to hit it.
    pub fn cell_center(&self, pos: CellPos) -> (u32, u32) {
        let (x, y) = self.cell_origin(pos);
        (
            x.saturating_add(self.cell.width / 2),
            y.saturating_add(self.cell.height / 2),
        )
    }

    /// Refuse images that are empty or too large to allocate safely.
    pub fn check_drawable(&self) -> Result<(), RenderError> {
        if self.image.width == 0 || self.image.height == 0 {
            return Err(RenderError::Empty {
                cols: self.size.cols,
                rows: self.size.rows,
            });
        }
        if u64::from(self.image.width) * u64::from(self.image.height) > MAX_IMAGE_PIXELS {
            return Err(RenderError::TooLarge {
                width: self.image.width,
                height: self.image.height,
            });
        }
        Ok(())
    }
}

/// The window decoration drawn when [`RenderOptions::frame`] is set, computed once for both formats.
pub(crate) struct FrameDecor {
    pub bar: Rgb,
    pub border: Rgb,
    pub title_fg: Rgb,
    /// The three window buttons: centre x, centre y, radius, colour.
    pub dots: [(f32, f32, f32, Rgb); 3],
    /// The title as drawn (control characters removed, shortened with an ellipsis to fit), its left x
    /// and baseline y, and its width in cells.
    pub title: Option<(String, u32, u32, u32)>,
}

impl FrameDecor {
    pub fn new(layout: &Layout, metrics: &Metrics, theme: ThemeName, title: Option<&str>) -> Self {
        let (bar, border, title_fg) = match theme {
            ThemeName::Dark => (
                Rgb::new(0x2b, 0x2b, 0x33),
                Rgb::new(0x0c, 0x0c, 0x10),
                Rgb::new(0xb4, 0xb4, 0xbc),
            ),
            ThemeName::Light => (
                Rgb::new(0xe4, 0xe4, 0xe0),
                Rgb::new(0xb8, 0xb8, 0xb4),
                Rgb::new(0x4a, 0x4a, 0x4a),
            ),
        };
        let bar_h = layout.title_bar as f32;
        let r = (bar_h * 0.19).max(2.0).round();
        let first_x = layout.origin.0 as f32 + r;
        let colours = [
            Rgb::new(0xff, 0x5f, 0x57),
            Rgb::new(0xfe, 0xbc, 0x2e),
            Rgb::new(0x28, 0xc8, 0x40),
        ];
        let mut dots = [(0.0, 0.0, 0.0, Rgb::new(0, 0, 0)); 3];
        for (i, (dot, colour)) in dots.iter_mut().zip(colours).enumerate() {
            *dot = (first_x + i as f32 * r * 3.2, bar_h / 2.0, r, colour);
        }
        // The title is centred on the window but never overlaps the buttons.
        let dots_end = (first_x + 2.0 * r * 3.2 + r).ceil() as u32 + metrics.cell_w;
        let available = layout.image.width.saturating_sub(2 * dots_end) / metrics.cell_w.max(1);
        let title = title
            .map(|t| fit_title(t, available as usize))
            .filter(|(t, _)| !t.is_empty())
            .map(|(text, cells)| {
                let width = cells as u32 * metrics.cell_w;
                let x = layout.image.width.saturating_sub(width) / 2;
                let baseline =
                    (layout.title_bar.saturating_sub(metrics.cell_h)) / 2 + metrics.baseline;
                (text, x, baseline, cells as u32)
            });
        FrameDecor {
            bar,
            border,
            title_fg,
            dots,
            title,
        }
    }
}

/// The title with control characters dropped, cut to at most `max_cells` cells (wide characters take
/// two), ending in an ellipsis when cut. Returns the text and its width in cells.
fn fit_title(title: &str, max_cells: usize) -> (String, usize) {
    let chars: Vec<char> = title.chars().filter(|c| !c.is_control()).collect();
    let total: usize = chars.iter().map(|c| font::char_cells(*c)).sum();
    if total <= max_cells {
        return (chars.into_iter().collect(), total);
    }
    let mut out = String::new();
    let mut used = 0;
    for c in chars {
        let w = font::char_cells(c);
        if used + w + 1 > max_cells {
            break;
        }
        out.push(c);
        used += w;
    }
    if max_cells == 0 {
        return (String::new(), 0);
    }
    out.push('…');
    (out, used + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::NOMINAL_CELL_PIXELS;

    #[test]
    fn default_cell_matches_what_the_emulator_reports() {
        let layout = Layout::new(Size::new(80, 24), &RenderOptions::default());
        assert_eq!(
            (layout.cell.width, layout.cell.height),
            (
                u32::from(NOMINAL_CELL_PIXELS.0),
                u32::from(NOMINAL_CELL_PIXELS.1)
            )
        );
        assert_eq!((layout.image.width, layout.image.height), (800, 480));
    }

    #[test]
    fn cell_at_and_cell_origin_round_trip() {
        for frame in [false, true] {
            let opts = RenderOptions {
                frame,
                ..RenderOptions::default()
            };
            let layout = Layout::new(Size::new(7, 5), &opts);
            for row in 0..5 {
                for col in 0..7 {
                    let pos = CellPos::new(col, row);
                    let (x, y) = layout.cell_origin(pos);
                    assert_eq!(layout.cell_at(x, y), Some(pos));
                    let (x2, y2) = (x + layout.cell.width - 1, y + layout.cell.height - 1);
                    assert_eq!(layout.cell_at(x2, y2), Some(pos), "last pixel of {pos:?}");
                    let (cx, cy) = layout.cell_center(pos);
                    assert_eq!(layout.cell_at(cx, cy), Some(pos));
                }
            }
            let (end_x, end_y) = layout.cell_origin(CellPos::new(7, 5));
            assert_eq!(layout.cell_at(end_x, 0), None, "right of the cells");
            assert_eq!(layout.cell_at(0, end_y), None, "below the cells");
            assert_eq!(layout.cell_at(u32::MAX, u32::MAX), None);
        }
    }

    #[test]
    fn frame_pixels_are_not_cells() {
        let opts = RenderOptions {
            frame: true,
            ..RenderOptions::default()
        };
        let layout = Layout::new(Size::new(10, 3), &opts);
        assert!(layout.title_bar > 0);
        assert_eq!(layout.cell_at(layout.origin.0 + 1, 1), None, "title bar");
        assert_eq!(layout.cell_at(0, layout.origin.1), None, "left padding");
        assert_eq!(
            layout.cell_at(layout.origin.0, layout.origin.1),
            Some(CellPos::new(0, 0))
        );
    }

    #[test]
    fn font_size_is_validated_and_clamped() {
        let bad = RenderOptions {
            font_px: f32::NAN,
            ..RenderOptions::default()
        };
        assert!(matches!(
            bad.validate(),
            Err(RenderError::InvalidFontPx { .. })
        ));
        assert_eq!(bad.effective_font_px(), DEFAULT_FONT_PX);
        let huge = RenderOptions {
            font_px: 1e9,
            ..RenderOptions::default()
        };
        assert!(huge.validate().is_err());
        assert_eq!(huge.effective_font_px(), MAX_FONT_PX);
        assert!(RenderOptions::default().validate().is_ok());
    }

    #[test]
    fn a_font_size_is_checked_as_given_before_it_is_narrowed() {
        for bad in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -1.0,
            5.99,
            96.01,
            1e6,
            1e308,
            1e-300,
            3.5e38,
        ] {
            let error = checked_font_px(bad).expect_err("out of range");
            assert_eq!(
                error.to_string(),
                format!("{bad:?} is outside the font sizes drawn, 6-96 px (default 16)")
            );
        }
        assert_eq!(checked_font_px(6.0).ok(), Some(6.0));
        assert_eq!(checked_font_px(12.5).ok(), Some(12.5));
        assert_eq!(checked_font_px(96.0).ok(), Some(96.0));
    }

    #[test]
    fn long_titles_are_cut_with_an_ellipsis() {
        assert_eq!(fit_title("vim\u{7}", 10), ("vim".to_owned(), 3));
        let (text, cells) = fit_title("a very long window title", 10);
        assert_eq!(text, "a very lo…");
        assert_eq!(cells, 10);
        assert_eq!(fit_title("中文标题", 5), ("中文…".to_owned(), 5));
        assert_eq!(fit_title("abc", 0).1, 0);
        assert_eq!(
            fit_title("e\u{301}t\u{e9}", 3).1,
            3,
            "combining marks take no cell"
        );
    }

    /// Arbitrary bytes (escape fragments, wide and combining characters, lines, emoji, garbage) on
    /// screens of every small size, in both formats and themes, with and without the frame: nothing
    /// panics and every PNG is valid.
    #[test]
    fn arbitrary_screens_always_render() {
        const PIECES: [&str; 24] = [
            "\x1b[",
            "38;2;",
            "48;5;",
            ";",
            "1",
            "7",
            "4:3",
            "m",
            "\x1b[?1049h",
            "\x1b]4;3;rgb:12/34/56\x07",
            "中文",
            "e\u{301}",
            "─┼╬",
            "▒█",
            "⣿",
            "😀\u{200d}👍",
            "\u{e0b0}",
            "\r\n",
            "\x1b]2;t\x07",
            "\x1b[2 q",
            "\x1b[5 q",
            "\x1b[?25l",
            "\t",
            "\u{10FFFD}",
        ];
        let mut seed: u64 = 0x5eed;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..150 {
            // At least two columns: alacritty_terminal itself panics on a wide character in a
            // one-column terminal (reported; the emulator wrapper should refuse that size).
            let size = Size::new(2 + next(30) as u16, 1 + next(8) as u16);
            let mut screen = crate::Screen::new(size, 10);
            let mut bytes = Vec::new();
            for _ in 0..next(80) {
                if next(4) == 0 {
                    bytes.push(next(256) as u8);
                } else {
                    bytes.extend_from_slice(PIECES[next(PIECES.len() as u64) as usize].as_bytes());
                }
            }
            screen.feed(&bytes);
            let opts = RenderOptions {
                font_px: MIN_FONT_PX + next(30) as f32 * 0.7,
                theme: if round % 2 == 0 {
                    ThemeName::Dark
                } else {
                    ThemeName::Light
                },
                frame: next(2) == 0,
            };
            let grid = screen.cells();
            let png = render_png(&grid, &opts).expect("renders");
            let reader = ::png::Decoder::new(std::io::Cursor::new(png))
                .read_info()
                .expect("valid PNG");
            let layout = Layout::new(grid.size, &opts);
            assert_eq!(reader.info().width, layout.image.width);
            let svg = render_svg(&grid, &opts);
            assert!(svg.ends_with("</svg>\n"));
            assert!(!svg.chars().any(|c| c.is_control() && c != '\n'), "{svg}");
        }
    }
}
