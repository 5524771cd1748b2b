//! The PNG renderer: cells drawn into an RGB buffer, then encoded with the `png` crate.
//!
//! The hot path is built for the 5 ms budget of an 80x24 screenshot: backgrounds are filled a pixel row
//! at a time, glyph coverage comes from the per-thread cache, and only partly covered pixels go through
//! the gamma-correct blend.

use std::sync::OnceLock;

use crate::grid::{Cell, CellGrid, CellWidth};
use crate::palette::Rgb;

use super::font::{self, GlyphCache, GlyphKey, Metrics};
use super::shapes::{self, Coverage, Shape};
use super::style::{self, Colors, CursorMark, Paint};
use super::{FrameDecor, Layout, RenderError, RenderOptions};

/// Render `grid` as a PNG image (8-bit RGB).
///
/// Fails on a font size out of range ([`RenderOptions::validate`]), an empty screen or an image over
/// [`super::MAX_IMAGE_PIXELS`]. Any cell content renders; characters no font has show as a box.
pub fn render_png(grid: &CellGrid, opts: &RenderOptions) -> Result<Vec<u8>, RenderError> {
    opts.validate()?;
    let (_, image) = render_rgb(grid, opts)?;
    encode(&image)
}

/// An 8-bit RGB image, rows top to bottom.
pub(crate) struct RgbImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

/// Draw `grid` into an RGB buffer (the font size is clamped into range, not checked).
pub(crate) fn render_rgb(
    grid: &CellGrid,
    opts: &RenderOptions,
) -> Result<(Layout, RgbImage), RenderError> {
    let metrics = Metrics::new(opts.effective_font_px());
    let layout = Layout::with_metrics(grid.size, &metrics, opts.frame);
    layout.check_drawable()?;
    let colors = Colors::new(opts.theme, &grid.palette_overrides);
    let canvas = RgbImage {
        width: layout.image.width,
        height: layout.image.height,
        data: Vec::new(),
    };
    let image = font::with_glyph_cache(|cache| {
        let mut painter = Painter {
            canvas,
            blender: Blender::new(),
            cache,
            metrics,
            layout,
        };
        painter.fill_all(colors.default_bg());
        if opts.frame {
            let decor = FrameDecor::new(&layout, &metrics, opts.theme, grid.title.as_deref());
            painter.frame(&decor);
        }
        painter.cells(grid, &colors);
        painter.canvas
    });
    Ok((layout, image))
}

fn encode(image: &RgbImage) -> Result<Vec<u8>, RenderError> {
    // Terminal screenshots are mostly flat colour and compress ~20:1, so this is plenty to start with.
    let mut out = Vec::with_capacity(image.data.len() / 16);
    let mut encoder = ::png::Encoder::new(&mut out, image.width, image.height);
    encoder.set_color(::png::ColorType::Rgb);
    encoder.set_depth(::png::BitDepth::Eight);
    encoder.set_compression(::png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&image.data)?;
    writer.finish()?;
    Ok(out)
}

/// sRGB <-> linear tables for blending anti-aliased edges (see [`Blender::mix`]).
struct Gamma {
    to_linear: [u16; 256],
    to_srgb: Vec<u8>,
}

const LINEAR_MAX: usize = 4095;

fn gamma() -> &'static Gamma {
    static GAMMA: OnceLock<Gamma> = OnceLock::new();
    GAMMA.get_or_init(|| {
        let mut to_linear = [0u16; 256];
        for (i, v) in to_linear.iter_mut().enumerate() {
            let s = i as f64 / 255.0;
            let l = if s <= 0.04045 {
                s / 12.92
            } else {
                ((s + 0.055) / 1.055).powf(2.4)
            };
            *v = (l * LINEAR_MAX as f64).round() as u16;
        }
        let to_srgb = (0..=LINEAR_MAX)
            .map(|i| {
                let l = i as f64 / LINEAR_MAX as f64;
                let s = if l <= 0.003_130_8 {
                    l * 12.92
                } else {
                    1.055 * l.powf(1.0 / 2.4) - 0.055
                };
                (s * 255.0).round().clamp(0.0, 255.0) as u8
            })
            .collect();
        Gamma { to_linear, to_srgb }
    })
}

/// Blends ink over the image through coverage, in linear light.
///
/// Nearly every partly covered pixel lies on its own cell's background, so the blend for each coverage
/// value is looked up in a table per (ink, background) pair; neighbouring cells share colours, so a few
/// tables serve a whole screen. Pixels on another colour (overlapping glyphs) take the slow path.
struct Blender {
    gamma: &'static Gamma,
    tables: Vec<(Rgb, Rgb, Box<BlendTable>)>,
}

/// The blended colour for every coverage value, for one (ink, background) pair.
type BlendTable = [[u8; 3]; 256];

/// Tables kept per render; a screen with more colour pairs than this just rebuilds some.
const MAX_BLEND_TABLES: usize = 64;

impl Blender {
    fn new() -> Blender {
        Blender {
            gamma: gamma(),
            tables: Vec::new(),
        }
    }

    /// The colour of a pixel `a`/255 covered by `ink` over `under`.
    ///
    /// Light ink on a darker background blends in linear light, dark ink on a lighter one in sRGB:
    /// each choice gives the heavier of the two results, so text keeps its weight in both dark and
    /// light themes instead of looking thin and grey in one of them.
    fn mix(g: &Gamma, ink: [u8; 3], under: [u8; 3], a: u8) -> [u8; 3] {
        let a = i32::from(a);
        let luma = |c: [u8; 3]| 2 * u32::from(c[0]) + 5 * u32::from(c[1]) + u32::from(c[2]);
        let linear = luma(ink) >= luma(under);
        let mut out = [0u8; 3];
        for ((o, f), b) in out.iter_mut().zip(ink).zip(under) {
            *o = if linear {
                let (fl, bl) = (
                    i32::from(g.to_linear[f as usize]),
                    i32::from(g.to_linear[b as usize]),
                );
                let mixed = bl + ((fl - bl) * a + 127) / 255;
                g.to_srgb[mixed.clamp(0, LINEAR_MAX as i32) as usize]
            } else {
                let (f, b) = (i32::from(f), i32::from(b));
                (b + ((f - b) * a + 127) / 255).clamp(0, 255) as u8
            };
        }
        out
    }

    fn table(&mut self, ink: Rgb, under: Rgb) -> usize {
        if let Some(i) = self.tables.iter().position(|t| t.0 == ink && t.1 == under) {
            return i;
        }
        if self.tables.len() >= MAX_BLEND_TABLES {
            self.tables.clear();
        }
        let mut table: Box<BlendTable> = Box::new([[0u8; 3]; 256]);
        for (a, entry) in table.iter_mut().enumerate() {
            *entry = Blender::mix(
                self.gamma,
                [ink.r, ink.g, ink.b],
                [under.r, under.g, under.b],
                a as u8,
            );
        }
        self.tables.push((ink, under, table));
        self.tables.len() - 1
    }

    /// Blend `ink` through `coverage`, whose box starts at (x, y) plus its own offset; `under` is the
    /// colour most of the covered pixels have.
    fn blend(
        &mut self,
        canvas: &mut RgbImage,
        x: i64,
        y: i64,
        coverage: &Coverage,
        ink: Rgb,
        under: Rgb,
    ) {
        let index = self.table(ink, under);
        let table = &self.tables[index].2;
        let g = self.gamma;
        let ink_bytes = [ink.r, ink.g, ink.b];
        let under_bytes = [under.r, under.g, under.b];
        let (width, height) = (canvas.width as i64, canvas.height as i64);
        let stride = canvas.width as usize * 3;
        let left = x + i64::from(coverage.left);
        let top = y + i64::from(coverage.top);
        // Clip the coverage box to the image once, rather than per pixel.
        let gx0 = (-left).clamp(0, coverage.width as i64) as usize;
        let gx1 = (width - left).clamp(0, coverage.width as i64) as usize;
        if gx0 >= gx1 {
            return;
        }
        for gy in 0..coverage.height as i64 {
            let py = top + gy;
            if py < 0 || py >= height {
                continue;
            }
            let row_start = gy as usize * coverage.width as usize;
            let src = &coverage.alpha[row_start + gx0..row_start + gx1];
            let at = py as usize * stride + (left + gx0 as i64) as usize * 3;
            let dst = &mut canvas.data[at..at + src.len() * 3];
            for (&a, pixel) in src.iter().zip(dst.chunks_exact_mut(3)) {
                match a {
                    0 => {}
                    255 => pixel.copy_from_slice(&ink_bytes),
                    _ if *pixel == under_bytes => pixel.copy_from_slice(&table[a as usize]),
                    _ => {
                        let under = [pixel[0], pixel[1], pixel[2]];
                        pixel.copy_from_slice(&Blender::mix(g, ink_bytes, under, a));
                    }
                }
            }
        }
    }
}

/// Everything one PNG render draws with.
struct Painter<'a> {
    canvas: RgbImage,
    blender: Blender,
    cache: &'a mut GlyphCache,
    metrics: Metrics,
    layout: Layout,
}

impl Painter<'_> {
    fn fill_all(&mut self, colour: Rgb) {
        let pixels = self.canvas.width as usize * self.canvas.height as usize;
        self.canvas.data = [colour.r, colour.g, colour.b].repeat(pixels);
    }

    /// Fill a rectangle, clipped to the image.
    fn fill_rect(&mut self, (x, y): (i64, i64), (w, h): (i64, i64), colour: Rgb) {
        let canvas = &mut self.canvas;
        let x0 = x.clamp(0, canvas.width as i64) as usize;
        let x1 = (x + w).clamp(0, canvas.width as i64) as usize;
        let y0 = y.clamp(0, canvas.height as i64) as usize;
        let y1 = (y + h).clamp(0, canvas.height as i64) as usize;
        if x0 >= x1 {
            return;
        }
        let stride = canvas.width as usize * 3;
        let run = [colour.r, colour.g, colour.b].repeat(x1 - x0);
        for row in y0..y1 {
            let start = row * stride + x0 * 3;
            canvas.data[start..start + run.len()].copy_from_slice(&run);
        }
    }

    /// Blend the cached glyph (or line) `key` with its cell's top-left corner at (x, y).
    fn glyph(&mut self, key: GlyphKey, (x, y): (i64, i64), ink: Rgb, under: Rgb) {
        if let Some(coverage) = self.cache.get(key, &self.metrics) {
            self.blender
                .blend(&mut self.canvas, x, y, coverage, ink, under);
        }
    }

    /// Rasterise shapes given relative to (x, y) in a `w` x `h` box and blend them.
    fn shapes(
        &mut self,
        (x, y): (i64, i64),
        (w, h): (u32, u32),
        shapes: &[Shape],
        ink: Rgb,
        under: Rgb,
    ) {
        if let Some(coverage) = shapes::rasterise(shapes, w, h) {
            self.blender
                .blend(&mut self.canvas, x, y, &coverage, ink, under);
        }
    }

    fn frame(&mut self, decor: &FrameDecor) {
        let (w, h) = (
            i64::from(self.layout.image.width),
            i64::from(self.layout.image.height),
        );
        let bar = i64::from(self.layout.title_bar);
        self.fill_rect((0, 0), (w, bar), decor.bar);
        // A one-pixel border around the window and under the title bar.
        for (at, size) in [
            ((0, 0), (w, 1)),
            ((0, h - 1), (w, 1)),
            ((0, 0), (1, h)),
            ((w - 1, 0), (1, h)),
            ((0, bar - 1), (w, 1)),
        ] {
            self.fill_rect(at, size, decor.border);
        }
        for (cx, cy, r, colour) in decor.dots {
            let x0 = (cx - r - 1.0).floor();
            let y0 = (cy - r - 1.0).floor();
            let size = (2.0 * r + 3.0).ceil() as u32;
            let disc = Shape::Disc {
                cx: cx - x0,
                cy: cy - y0,
                r,
            };
            self.shapes(
                (x0 as i64, y0 as i64),
                (size, size),
                &[disc],
                colour,
                decor.bar,
            );
        }
        if let Some((text, x, baseline, _)) = &decor.title {
            let top = i64::from(*baseline) - i64::from(self.metrics.baseline);
            let mut x = i64::from(*x);
            let mut previous = x;
            for ch in text.chars() {
                let cells = font::char_cells(ch);
                let wide = cells == 2;
                // A combining mark goes over the character before it, as in a cell.
                let at = if cells == 0 { previous } else { x };
                let key = GlyphKey::Char {
                    ch,
                    face: font::Face::Regular,
                    wide,
                };
                self.glyph(key, (at, top), decor.title_fg, decor.bar);
                if cells > 0 {
                    previous = x;
                    x += i64::from(self.metrics.span_w(wide));
                }
            }
        }
    }

    fn cells(&mut self, grid: &CellGrid, colors: &Colors) {
        let (cols, rows) = (grid.size.cols, grid.size.rows);
        let blank = Cell::default();
        let cursor = CursorMark::of(grid);
        let paints: Vec<Paint> = (0..rows)
            .flat_map(|row| (0..cols).map(move |col| (col, row)))
            .map(|(col, row)| {
                let inverted = cursor.is_some_and(|c| c.inverts(col, row));
                style::paint(style::cell_at(grid, col, row, &blank), colors, inverted)
            })
            .collect();
        let (cell_w, cell_h) = (self.metrics.cell_w as usize, self.metrics.cell_h as usize);
        let stride = self.canvas.width as usize * 3;
        let (ox, oy) = (self.layout.origin.0 as usize, self.layout.origin.1 as usize);
        let default_bg = colors.default_bg();

        // Backgrounds first, for every row, so glyphs reaching into the next row are not painted
        // over. Each row is built once as one line of pixels and copied down the cell height.
        let mut line = vec![0u8; cols as usize * cell_w * 3];
        for (row, row_paints) in paints.chunks(cols.max(1) as usize).enumerate() {
            if row_paints.iter().all(|p| p.bg == default_bg) {
                continue;
            }
            for (pixels, paint) in line.chunks_mut(cell_w * 3).zip(row_paints) {
                for pixel in pixels.chunks_mut(3) {
                    pixel.copy_from_slice(&[paint.bg.r, paint.bg.g, paint.bg.b]);
                }
            }
            for py in 0..cell_h {
                let start = (oy + row * cell_h + py) * stride + ox * 3;
                self.canvas.data[start..start + line.len()].copy_from_slice(&line);
            }
        }

        for row in 0..rows {
            for col in 0..cols {
                let cell = style::cell_at(grid, col, row, &blank);
                if cell.width == CellWidth::Spacer {
                    continue;
                }
                let paint = paints[row as usize * cols as usize + col as usize];
                let wide = cell.width == CellWidth::Wide;
                let at = (
                    (ox + col as usize * cell_w) as i64,
                    (oy + row as usize * cell_h) as i64,
                );
                if !paint.hidden {
                    for ch in cell.text.chars().filter(|&c| c != ' ') {
                        let key = GlyphKey::Char {
                            ch,
                            face: paint.face,
                            wide,
                        };
                        self.glyph(key, at, paint.fg, paint.bg);
                    }
                }
                for decoration in paint.decorations() {
                    let key = GlyphKey::Decoration { decoration, wide };
                    self.glyph(key, at, paint.fg, paint.bg);
                }
            }
        }

        if let Some(mark) = cursor {
            let shapes = mark.shapes(&self.metrics);
            let index = mark.pos.row.0 as usize * cols as usize + mark.pos.col.0 as usize;
            if let (false, Some(paint)) = (shapes.is_empty(), paints.get(index)) {
                let (x, y) = self.layout.cell_origin(mark.pos);
                let size = (self.metrics.span_w(mark.wide), self.metrics.cell_h);
                self.shapes((x.into(), y.into()), size, &shapes, paint.fg, paint.bg);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::{CellPos, Size};
    use crate::palette::{Theme, ThemeName};
    use crate::Screen;

    fn render(size: Size, bytes: &[u8]) -> (Layout, RgbImage) {
        let mut screen = Screen::new(size, 0);
        screen.feed(bytes);
        render_rgb(&screen.cells(), &RenderOptions::default()).expect("renders")
    }

    fn pixel(image: &RgbImage, x: u32, y: u32) -> Rgb {
        let at = (y * image.width + x) as usize * 3;
        Rgb::new(image.data[at], image.data[at + 1], image.data[at + 2])
    }

    /// Every distinct colour in a cell's pixels.
    fn cell_colours(image: &RgbImage, layout: &Layout, pos: CellPos) -> Vec<Rgb> {
        let (x0, y0) = layout.cell_origin(pos);
        let mut found: Vec<Rgb> = Vec::new();
        for y in y0..y0 + layout.cell.height {
            for x in x0..x0 + layout.cell.width {
                let p = pixel(image, x, y);
                if !found.contains(&p) {
                    found.push(p);
                }
            }
        }
        found
    }

    #[test]
    fn the_png_decodes_to_the_layout_size() {
        let mut screen = Screen::new(Size::new(12, 3), 0);
        screen.feed(b"hello");
        let png = render_png(&screen.cells(), &RenderOptions::default()).expect("png");
        let decoder = ::png::Decoder::new(std::io::Cursor::new(png));
        let reader = decoder.read_info().expect("valid png");
        let info = reader.info();
        assert_eq!((info.width, info.height), (120, 60));
        assert_eq!(info.color_type, ::png::ColorType::Rgb);
    }

    #[test]
    fn inverse_swaps_colours_in_pixels() {
        let theme = Theme::dark();
        let (layout, image) = render(Size::new(4, 1), b"\x1b[31;44mA\x1b[7mB");
        let normal = cell_colours(&image, &layout, CellPos::new(0, 0));
        let inverse = cell_colours(&image, &layout, CellPos::new(1, 0));
        // The corner pixel is background; the brightest ink is the foreground.
        assert_eq!(pixel(&image, 0, 0), theme.ansi[4]);
        assert!(normal.contains(&theme.ansi[1]), "red glyph on blue");
        assert_eq!(
            pixel(&image, layout.cell.width, 0),
            theme.ansi[1],
            "inverse background is red"
        );
        assert!(inverse.contains(&theme.ansi[4]), "blue glyph on red");
    }

    #[test]
    fn hidden_text_draws_nothing() {
        let theme = Theme::dark();
        let (layout, image) = render(Size::new(7, 1), b"\x1b[8;4mSECRET");
        for col in 0..6 {
            assert_eq!(
                cell_colours(&image, &layout, CellPos::new(col, 0)),
                [theme.background],
                "cell {col} is plain background"
            );
        }
    }

    #[test]
    fn box_drawing_lines_join_across_cells() {
        let (layout, image) = render(Size::new(3, 2), "─┬─\r\n ╵".as_bytes());
        let fg = Theme::dark().foreground;
        let line_y = (0..layout.cell.height)
            .find(|&y| pixel(&image, 0, y) == fg)
            .expect("the line is drawn");
        for x in 0..layout.image.width {
            assert_eq!(pixel(&image, x, line_y), fg, "gap at x={x}");
        }
        // The tee's stem runs down to the bottom edge and meets the half line below it.
        let stem_x = (layout.cell.width..2 * layout.cell.width)
            .find(|&x| pixel(&image, x, layout.cell.height - 1) == fg)
            .expect("stem reaches the bottom");
        assert_eq!(
            pixel(&image, stem_x, layout.cell.height),
            fg,
            "the next row continues it"
        );
    }

    #[test]
    fn block_cursor_inverts_its_cell() {
        let theme = Theme::dark();
        let (layout, image) = render(Size::new(3, 1), b"ab\x1b[1D");
        let (x, y) = layout.cell_origin(CellPos::new(1, 0));
        assert_eq!(pixel(&image, x, y), theme.foreground, "cursor block");
        assert_eq!(pixel(&image, 0, 0), theme.background);
        let hidden_cursor = {
            let mut screen = Screen::new(Size::new(3, 1), 0);
            screen.feed(b"ab\x1b[1D\x1b[?25l");
            render_rgb(&screen.cells(), &RenderOptions::default())
                .expect("renders")
                .1
        };
        assert_eq!(pixel(&hidden_cursor, x, y), theme.background);
    }

    #[test]
    fn frame_adds_a_title_bar() {
        let mut screen = Screen::new(Size::new(20, 2), 0);
        screen.feed(b"\x1b]2;my title\x07hi");
        let opts = RenderOptions {
            frame: true,
            theme: ThemeName::Light,
            ..RenderOptions::default()
        };
        let (layout, image) = render_rgb(&screen.cells(), &opts).expect("renders");
        assert!(layout.title_bar > 0);
        assert_eq!(
            (image.width, image.height),
            (layout.image.width, layout.image.height)
        );
        let bar_colours: std::collections::HashSet<Rgb> = (0..layout.image.width)
            .map(|x| pixel(&image, x, layout.title_bar / 2))
            .collect();
        assert!(
            bar_colours.contains(&Rgb::new(0xff, 0x5f, 0x57)),
            "the red button"
        );
        assert!(bar_colours.len() > 5, "buttons and title text");
    }

    #[test]
    fn odd_grids_never_panic() {
        let opts = RenderOptions::default();
        let mut grid = Screen::new(Size::new(3, 2), 0).cells();
        grid.rows.truncate(1);
        grid.rows[0].truncate(1);
        grid.rows[0][0].text = "\u{0}\u{301}\u{10FFFF}x".to_owned();
        grid.rows[0][0].width = CellWidth::Spacer;
        grid.cursor.row = 40;
        assert!(render_png(&grid, &opts).is_ok());
        grid.size = Size::new(0, 5);
        assert!(matches!(
            render_png(&grid, &opts),
            Err(RenderError::Empty { .. })
        ));
        grid.size = Size::new(u16::MAX, u16::MAX);
        assert!(matches!(
            render_png(&grid, &opts),
            Err(RenderError::TooLarge { .. })
        ));
        let bad = RenderOptions {
            font_px: -1.0,
            ..opts
        };
        assert!(matches!(
            render_png(&grid, &bad),
            Err(RenderError::InvalidFontPx { .. })
        ));
    }
}
