//! The SVG renderer: the same layout and colours as the PNG, with text kept as `<text>` so it stays
//! searchable and selectable. Lines and blocks are the same procedural shapes the PNG draws, written as
//! SVG elements, so frames join exactly whatever font the viewer has.
//!
//! Output is deterministic: the same grid and options give the same bytes.

use std::fmt::Write;

use crate::color::Rgb;
use crate::grid::{Cell, CellGrid, CellWidth};

use super::boxdraw;
use super::faces::Face;
use super::metrics::{BoxMetrics, Metrics};
use super::shapes::{self, Decoration, Shape};
use super::style::{self, Colors, CursorMark, Paint};
use super::svg_elements::{escape_into, num, write_shape};
use super::{FrameDecor, Layout, RenderOptions};

/// The font stack: the embedded PNG font first, so viewers that have it show the same glyphs.
const FONT_FAMILY: &str = "DejaVu Sans Mono, monospace";

/// Render `grid` as an SVG document. The font size is clamped into range rather than rejected (call
/// [`RenderOptions::validate`] first to refuse bad input); every grid renders.
pub fn render_svg(grid: &CellGrid, opts: &RenderOptions) -> String {
    let metrics = Metrics::new(opts.effective_font_px());
    let layout = Layout::with_metrics(grid.size, &metrics, opts.frame);
    let colors = Colors::new(opts.theme, &grid.palette_overrides);
    let (w, h) = (layout.image.width, layout.image.height);
    let mut svg = Svg::default();
    let _ = write!(
        svg.out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT_FAMILY}" font-size="{}" xml:space="preserve">"#,
        num(metrics.font_px)
    );
    svg.out.push('\n');
    if let Some(title) = grid.title.as_deref().filter(|t| !t.is_empty()) {
        svg.out.push_str("<title>");
        escape_into(&mut svg.out, title);
        svg.out.push_str("</title>\n");
    }
    svg.shape(
        &Shape::rect(0.0, 0.0, w as f32, h as f32),
        0.0,
        0.0,
        colors.default_bg(),
    );
    if opts.frame {
        let decor = FrameDecor::new(&layout, &metrics, opts.theme, grid.title.as_deref());
        svg.frame(&layout, &metrics, &decor);
    }
    svg.cells(grid, &layout, &metrics, &colors);
    svg.out.push_str("</svg>\n");
    svg.out
}

#[derive(Default)]
struct Svg {
    out: String,
}

/// One row of cells being written, with what they look like.
struct Row<'a> {
    cells: &'a [&'a Cell],
    paints: &'a [Paint],
    /// Top-left pixel of the row's first cell.
    origin: (f32, f32),
    metrics: &'a Metrics,
}

/// A run of cells whose text goes into one `<text>` element.
struct TextRun {
    col: u16,
    fg: Rgb,
    face: Face,
    /// Runs hold either only narrow or only wide characters, so each can be spaced evenly.
    wide: bool,
    text: String,
    cells: u32,
    /// Length of `text` and cell count up to the last character that is not a space, so trailing
    /// spaces can be dropped.
    kept: (usize, u32),
}

impl Svg {
    fn shape(&mut self, shape: &Shape, dx: f32, dy: f32, colour: Rgb) {
        write_shape(&mut self.out, shape, dx, dy, colour);
    }

    fn frame(&mut self, layout: &Layout, metrics: &Metrics, decor: &FrameDecor) {
        let (w, h) = (layout.image.width as f32, layout.image.height as f32);
        let bar = layout.title_bar as f32;
        self.shape(&Shape::rect(0.0, 0.0, w, bar), 0.0, 0.0, decor.bar);
        for (x, y, rw, rh) in [
            (0.0, 0.0, w, 1.0),
            (0.0, h - 1.0, w, 1.0),
            (0.0, 0.0, 1.0, h),
            (w - 1.0, 0.0, 1.0, h),
        ] {
            self.shape(&Shape::rect(x, y, rw, rh), 0.0, 0.0, decor.border);
        }
        self.shape(&Shape::rect(0.0, bar - 1.0, w, 1.0), 0.0, 0.0, decor.border);
        for (cx, cy, r, colour) in decor.dots {
            self.shape(&Shape::Disc { cx, cy, r }, 0.0, 0.0, colour);
        }
        if let Some((text, x, baseline, cells)) = &decor.title {
            let x = *x as f32 + metrics.glyph_x;
            let _ = write!(
                self.out,
                r#"<text x="{}" y="{baseline}" fill="{}""#,
                num(x),
                decor.title_fg.hex()
            );
            if *cells > 1 {
                let _ = write!(self.out, r#" textLength="{}""#, cells * metrics.cell_w);
            }
            self.out.push('>');
            escape_into(&mut self.out, text);
            self.out.push_str("</text>\n");
        }
    }

    fn cells(&mut self, grid: &CellGrid, layout: &Layout, metrics: &Metrics, colors: &Colors) {
        let blank = Cell::default();
        let cursor = CursorMark::of(grid);
        let default_bg = colors.default_bg();
        // Text and lines go after every background, as in the PNG, so they are written to their own
        // buffer and appended at the end.
        let mut foreground = Svg::default();
        let mut cursor_colour = default_bg;
        for row in 0..grid.size.rows {
            let cells: Vec<&Cell> = (0..grid.size.cols)
                .map(|col| style::cell_at(grid, col, row, &blank))
                .collect();
            let paints: Vec<Paint> = cells
                .iter()
                .enumerate()
                .map(|(col, cell)| {
                    let inverted = cursor.is_some_and(|c| c.inverts(col as u16, row));
                    style::paint(cell, colors, inverted)
                })
                .collect();
            if let Some(mark) = cursor.filter(|m| m.pos.row.0 == row) {
                cursor_colour = paints
                    .get(mark.pos.col.0 as usize)
                    .map_or(default_bg, |p| p.fg);
            }
            let row = Row {
                cells: &cells,
                paints: &paints,
                origin: (
                    layout.origin.0 as f32,
                    layout.origin.1 as f32 + f32::from(row) * metrics.cell_h as f32,
                ),
                metrics,
            };
            self.backgrounds(&row, default_bg);
            foreground.text(&row);
            foreground.lines(&row);
        }
        self.out.push_str(&foreground.out);

        if let Some(mark) = cursor {
            let (x, y) = layout.cell_origin(mark.pos);
            for shape in mark.shapes(metrics) {
                self.shape(&shape, x as f32, y as f32, cursor_colour);
            }
        }
    }

    /// One rectangle per run of cells sharing a background other than the default.
    fn backgrounds(&mut self, row: &Row, default_bg: Rgb) {
        let (cw, ch) = (row.metrics.cell_w as f32, row.metrics.cell_h as f32);
        let paints = row.paints;
        let mut col = 0usize;
        while col < paints.len() {
            let bg = paints[col].bg;
            let start = col;
            while col < paints.len() && paints[col].bg == bg {
                col += 1;
            }
            if bg != default_bg {
                let rect = Shape::rect(start as f32 * cw, 0.0, (col - start) as f32 * cw, ch);
                self.shape(&rect, row.origin.0, row.origin.1, bg);
            }
        }
    }

    /// The row's text as runs, and the shapes that replace box-drawing characters.
    fn text(&mut self, row: &Row) {
        let metrics = row.metrics;
        let mut run: Option<TextRun> = None;
        for (col, (cell, paint)) in row.cells.iter().zip(row.paints).enumerate() {
            if cell.width == CellWidth::Spacer {
                continue;
            }
            let wide = cell.width == CellWidth::Wide;
            let text = if paint.hidden {
                " "
            } else {
                cell.text.as_str()
            };
            let procedural = text
                .chars()
                .next()
                .and_then(|c| boxdraw::shapes(c, &BoxMetrics::new(metrics, metrics.span_w(wide))));
            if let Some(shapes) = procedural {
                self.flush(run.take(), row);
                let x = row.origin.0 + col as f32 * metrics.cell_w as f32;
                for shape in &shapes {
                    self.shape(shape, x, row.origin.1, paint.fg);
                }
                continue;
            }
            let is_space = text == " ";
            let cells = if wide { 2 } else { 1 };
            match &mut run {
                // A space joins any run of narrow characters: it draws nothing, whatever its colour.
                Some(r) if !r.wide && is_space && !wide => {
                    r.text.push_str(text);
                    r.cells += 1;
                }
                Some(r)
                    if r.fg == paint.fg && r.face == paint.face && r.wide == wide && !is_space =>
                {
                    r.text.push_str(text);
                    r.cells += cells;
                    r.kept = (r.text.len(), r.cells);
                }
                _ if is_space => self.flush(run.take(), row),
                _ => {
                    self.flush(run.take(), row);
                    run = Some(TextRun {
                        col: col as u16,
                        fg: paint.fg,
                        face: paint.face,
                        wide,
                        text: text.to_owned(),
                        cells,
                        kept: (text.len(), cells),
                    });
                }
            }
        }
        self.flush(run.take(), row);
    }

    /// Underlines, then strikeouts, each merged over runs of cells drawn alike. The second cell of a
    /// wide character carries the first one's lines.
    fn lines(&mut self, row: &Row) {
        let cw = row.metrics.cell_w as f32;
        let mut lines: Vec<Option<(Decoration, Rgb)>> = Vec::with_capacity(row.paints.len());
        for strikeouts in [false, true] {
            lines.clear();
            for (cell, paint) in row.cells.iter().zip(row.paints) {
                let line = if cell.width == CellWidth::Spacer {
                    lines.last().copied().flatten()
                } else {
                    paint
                        .decorations()
                        .find(|d| (*d == Decoration::Strikeout) == strikeouts)
                        .map(|d| (d, paint.fg))
                };
                lines.push(line);
            }
            let mut col = 0usize;
            while col < lines.len() {
                let Some(line) = lines[col] else {
                    col += 1;
                    continue;
                };
                let start = col;
                while col < lines.len() && lines[col] == Some(line) {
                    col += 1;
                }
                let x = row.origin.0 + start as f32 * cw;
                let width = (col - start) as f32 * cw;
                for shape in shapes::decoration(line.0, 0.0, width, row.metrics) {
                    self.shape(&shape, x, row.origin.1, line.1);
                }
            }
        }
    }

    /// Write a run's text, without its leading and trailing spaces.
    fn flush(&mut self, run: Option<TextRun>, row: &Row) {
        let Some(mut run) = run else {
            return;
        };
        let metrics = row.metrics;
        let (ox, y) = row.origin;
        run.text.truncate(run.kept.0);
        let cells = run.kept.1;
        // Narrow glyphs are centred in their cell as in the PNG; wide ones (about one em in CJK fonts)
        // in their two cells.
        let inset = if run.wide {
            ((2 * metrics.cell_w) as f32 - metrics.font_px).max(0.0) / 2.0
        } else {
            metrics.glyph_x
        };
        let x = ox + run.col as f32 * metrics.cell_w as f32 + inset;
        let _ = write!(
            self.out,
            r#"<text x="{}" y="{}" fill="{}"{}"#,
            num(x),
            num(y + metrics.baseline as f32),
            run.fg.hex(),
            face_attrs(run.face)
        );
        // The font's advance is not a whole pixel but cells are: stretch the spacing so every character
        // sits on its cell, as in the PNG.
        if run.text.chars().nth(1).is_some() {
            let _ = write!(self.out, r#" textLength="{}""#, cells * metrics.cell_w);
        }
        self.out.push('>');
        escape_into(&mut self.out, &run.text);
        self.out.push_str("</text>\n");
    }
}

fn face_attrs(face: Face) -> &'static str {
    match (face.is_bold(), face.is_italic()) {
        (false, false) => "",
        (true, false) => r#" font-weight="bold""#,
        (false, true) => r#" font-style="italic""#,
        (true, true) => r#" font-weight="bold" font-style="italic""#,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Size;
    use crate::Screen;

    fn svg_of(bytes: &[u8], opts: &RenderOptions) -> String {
        let mut screen = Screen::new(Size::new(20, 3), 0);
        screen.feed(bytes);
        render_svg(&screen.cells(), opts)
    }

    #[test]
    fn text_is_escaped_and_searchable() {
        let svg = svg_of(b"a<b & \"c\" 'd'", &RenderOptions::default());
        assert!(
            svg.contains(">a&lt;b &amp; &quot;c&quot; &apos;d&apos;</text>"),
            "{svg}"
        );
        assert!(svg
            .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"60\""));
        assert!(svg.ends_with("</svg>\n"));
    }

    #[test]
    fn runs_share_one_text_element_and_spaces_are_trimmed() {
        let svg = svg_of(b"  hello world  ", &RenderOptions::default());
        assert_eq!(svg.matches("<text").count(), 1, "{svg}");
        assert!(
            svg.contains(r#"textLength="110">hello world</text>"#),
            "{svg}"
        );
    }

    #[test]
    fn colours_and_styles_split_runs() {
        let svg = svg_of(
            b"\x1b[1;31mred\x1b[0m \x1b[3mit\x1b[0m\x1b[8mhide",
            &RenderOptions::default(),
        );
        assert!(
            svg.contains(r##"fill="#cd3131" font-weight="bold""##),
            "{svg}"
        );
        assert!(svg.contains(r#"font-style="italic""#), "{svg}");
        assert!(!svg.contains("hide"), "hidden text is not written");
    }

    #[test]
    fn backgrounds_are_merged_per_run() {
        let svg = svg_of(b"\x1b[44m    \x1b[0m", &RenderOptions::default());
        assert_eq!(svg.matches(r##"fill="#2472c8""##).count(), 1, "{svg}");
        assert!(svg.contains(r#"width="40" height="20""#));
    }

    #[test]
    fn output_is_deterministic_and_control_characters_are_replaced() {
        let mut grid = Screen::new(Size::new(4, 1), 0).cells();
        grid.rows[0][0].text = "\u{1}".to_owned();
        grid.title = Some("t\u{7}<x>".to_owned());
        let opts = RenderOptions {
            frame: true,
            ..RenderOptions::default()
        };
        let a = render_svg(&grid, &opts);
        assert_eq!(a, render_svg(&grid, &opts));
        assert!(a.contains("\u{FFFD}"));
        assert!(a.contains("<title>t\u{FFFD}&lt;x&gt;</title>"), "{a}");
    }
}
