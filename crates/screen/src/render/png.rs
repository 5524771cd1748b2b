//! The PNG renderer: cells drawn into an RGB buffer, then encoded with the `png` crate.
//!
//! The hot path is built for the 5 ms budget of an 80x24 screenshot: backgrounds are filled a pixel row
//! at a time, glyph coverage comes from the per-thread cache, and only partly covered pixels go through
//! the gamma-correct blend.

use crate::color::Rgb;
use crate::grid::{Cell, CellGrid, CellWidth};
use crate::images::CELL_PX;

use super::blend::{Blender, RgbImage};
use super::faces::Face;
use super::font::{self, GlyphCache, GlyphKey};
use super::metrics::Metrics;
use super::shapes::{self, Shape};
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

/// Render `grid` as raw 8-bit RGB pixels, rows top to bottom: (width, height, pixels). For callers that
/// crop or scale before encoding (a zoomed computer-use screenshot) instead of decoding a PNG again.
pub fn render_pixels(
    grid: &CellGrid,
    opts: &RenderOptions,
) -> Result<(u32, u32, Vec<u8>), RenderError> {
    opts.validate()?;
    let (_, image) = render_rgb(grid, opts)?;
    Ok((image.width, image.height, image.data))
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
        painter.images(grid);
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

/// Everything one PNG render draws with.
struct Painter<'a> {
    canvas: RgbImage,
    blender: Blender,
    cache: &'a mut GlyphCache,
    metrics: Metrics,
    layout: Layout,
}

impl Painter<'_> {
    /// Draw the pictures programs placed, over the cells, each scaled (nearest pixel) from the
    /// nominal cell size programs are told to the cell size drawn at, and clipped to the cells.
    fn images(&mut self, grid: &CellGrid) {
        let (cell_w, cell_h) = (
            i64::from(self.metrics.cell_w),
            i64::from(self.metrics.cell_h),
        );
        let (nominal_w, nominal_h) = (i64::from(CELL_PX.0), i64::from(CELL_PX.1));
        let (ox, oy) = (
            i64::from(self.layout.origin.0),
            i64::from(self.layout.origin.1),
        );
        let right = ox + i64::from(grid.size.cols) * cell_w;
        let bottom = oy + i64::from(grid.size.rows) * cell_h;
        let stride = self.canvas.width as usize * 3;
        for image in &grid.images {
            let bitmap = &image.bitmap;
            let (bw, bh) = (i64::from(bitmap.width), i64::from(bitmap.height));
            let w = i64::from(image.area_px.0) * cell_w / nominal_w;
            let h = i64::from(image.area_px.1) * cell_h / nominal_h;
            if w <= 0 || h <= 0 || bw == 0 || bh == 0 {
                continue;
            }
            let x0 = ox + i64::from(image.col) * cell_w;
            let y0 = oy + i64::from(image.row) * cell_h;
            let (x_start, x_end) = (x0.max(ox), (x0 + w).min(right));
            let (y_start, y_end) = (y0.max(oy), (y0 + h).min(bottom));
            for y in y_start..y_end {
                let sy = ((y - y0) * bh / h) as usize;
                let source = &bitmap.rgba[sy * bitmap.width as usize * 4..];
                let row = &mut self.canvas.data[y as usize * stride..];
                for x in x_start..x_end {
                    let sx = ((x - x0) * bw / w) as usize;
                    let [r, g, b, a] = [
                        source[sx * 4],
                        source[sx * 4 + 1],
                        source[sx * 4 + 2],
                        source[sx * 4 + 3],
                    ];
                    let px = &mut row[x as usize * 3..x as usize * 3 + 3];
                    if a == 255 {
                        px.copy_from_slice(&[r, g, b]);
                    } else if a != 0 {
                        let mix = |src: u8, dst: u8| {
                            ((u32::from(src) * u32::from(a)
                                + u32::from(dst) * (255 - u32::from(a)))
                                / 255) as u8
                        };
                        px.copy_from_slice(&[mix(r, px[0]), mix(g, px[1]), mix(b, px[2])]);
                    }
                }
            }
        }
    }

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
                    face: Face::Regular,
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
