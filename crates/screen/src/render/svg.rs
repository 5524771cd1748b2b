//! The SVG renderer: the same layout and colours as the PNG, with text kept as `<text>` so it stays
//! searchable and selectable. Lines and blocks are the same procedural shapes the PNG draws, written as
//! SVG elements, so frames join exactly whatever font the viewer has.
//!
//! Output is deterministic: the same grid and options give the same bytes.

use std::fmt::Write;

use crate::grid::{Cell, CellGrid, CellWidth};
use crate::palette::Rgb;

use super::boxdraw::{self, BoxMetrics};
use super::font::{Face, Metrics};
use super::shapes::{self, Shape};
use super::style::{self, Colors, CursorMark, Decoration, Paint};
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
        let (cols, rows) = (grid.size.cols, grid.size.rows);
        let blank = Cell::default();
        let cursor = CursorMark::of(grid);
        let default_bg = colors.default_bg();
        let (cw, ch) = (metrics.cell_w as f32, metrics.cell_h as f32);
        let (ox, oy) = (layout.origin.0 as f32, layout.origin.1 as f32);
        let mut paints: Vec<Paint> = Vec::with_capacity(cols as usize);
        let mut foreground = Svg::default();
        let mut cursor_colour = default_bg;

        for row in 0..rows {
            paints.clear();
            paints.extend((0..cols).map(|col| {
                let inverted = cursor.is_some_and(|c| c.inverts(col, row));
                style::paint(style::cell_at(grid, col, row, &blank), colors, inverted)
            }));
            if let Some(mark) = cursor.filter(|m| m.pos.row.0 == row) {
                cursor_colour = paints
                    .get(mark.pos.col.0 as usize)
                    .map_or(default_bg, |p| p.fg);
            }
            let y = oy + row as f32 * ch;

            // Backgrounds: one rectangle per run of cells sharing a colour other than the default.
            let mut col = 0usize;
            while col < paints.len() {
                let bg = paints[col].bg;
                let start = col;
                while col < paints.len() && paints[col].bg == bg {
                    col += 1;
                }
                if bg != default_bg {
                    let rect =
                        Shape::rect(ox + start as f32 * cw, y, (col - start) as f32 * cw, ch);
                    self.shape(&rect, 0.0, 0.0, bg);
                }
            }

            // Text, and the shapes that replace box-drawing glyphs.
            let mut run: Option<TextRun> = None;
            for col in 0..cols {
                let cell = style::cell_at(grid, col, row, &blank);
                let paint = &paints[col as usize];
                let x = ox + col as f32 * cw;
                if cell.width == CellWidth::Spacer {
                    continue;
                }
                let wide = cell.width == CellWidth::Wide;
                let text = if paint.hidden {
                    " "
                } else {
                    cell.text.as_str()
                };
                let procedural = text.chars().next().and_then(|c| {
                    boxdraw::shapes(c, &BoxMetrics::new(metrics, metrics.span_w(wide)))
                });
                if let Some(shapes) = procedural {
                    foreground.flush(run.take(), y, metrics, ox);
                    for shape in &shapes {
                        foreground.shape(shape, x, y, paint.fg);
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
                        if r.fg == paint.fg
                            && r.face == paint.face
                            && r.wide == wide
                            && !is_space =>
                    {
                        r.text.push_str(text);
                        r.cells += cells;
                        r.kept = (r.text.len(), r.cells);
                    }
                    _ if is_space => foreground.flush(run.take(), y, metrics, ox),
                    _ => {
                        foreground.flush(run.take(), y, metrics, ox);
                        run = Some(TextRun {
                            col,
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
            foreground.flush(run.take(), y, metrics, ox);

            // Underlines and strikeouts, merged over runs of cells drawn alike. The second cell of a wide
            // character carries the first one's lines.
            let mut lines: Vec<Option<(Decoration, Rgb)>> = Vec::with_capacity(paints.len());
            for pass in 0..2 {
                lines.clear();
                for (col, paint) in paints.iter().enumerate() {
                    let spacer =
                        style::cell_at(grid, col as u16, row, &blank).width == CellWidth::Spacer;
                    let inherited = lines
                        .last()
                        .copied()
                        .flatten()
                        .filter(|_| spacer && col > 0);
                    let own = paint
                        .decorations()
                        .find(|d| (*d == Decoration::Strikeout) == (pass == 1))
                        .map(|d| (d, paint.fg));
                    lines.push(if spacer { inherited } else { own });
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
                    let x = ox + start as f32 * cw;
                    for shape in shapes::decoration(line.0, 0.0, (col - start) as f32 * cw, metrics)
                    {
                        foreground.shape(&shape, x, y, line.1);
                    }
                }
            }
        }
        self.out.push_str(&foreground.out);

        if let Some(mark) = cursor {
            let (x, y) = layout.cell_origin(mark.pos);
            for shape in mark.shapes(metrics) {
                self.shape(&shape, x as f32, y as f32, cursor_colour);
            }
        }
    }

    /// Write a run's text, without its leading and trailing spaces.
    fn flush(&mut self, run: Option<TextRun>, y: f32, metrics: &Metrics, ox: f32) {
        let Some(mut run) = run else {
            return;
        };
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

    /// Write one shape, offset by (dx, dy), in `colour`.
    fn shape(&mut self, shape: &Shape, dx: f32, dy: f32, colour: Rgb) {
        let c = colour.hex();
        let o = &mut self.out;
        let _ = match *shape {
            Shape::Rect { x, y, w, h, alpha } => {
                if w <= 0.0 || h <= 0.0 {
                    return;
                }
                let _ = write!(
                    o,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{c}""#,
                    num(x + dx),
                    num(y + dy),
                    num(w),
                    num(h)
                );
                if alpha < 1.0 {
                    let _ = write!(o, r#" fill-opacity="{}""#, num(alpha));
                }
                writeln!(o, "/>")
            }
            Shape::Line {
                x0,
                y0,
                x1,
                y1,
                width,
            } => writeln!(
                o,
                r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{c}" stroke-width="{}" stroke-linecap="round"/>"#,
                num(x0 + dx),
                num(y0 + dy),
                num(x1 + dx),
                num(y1 + dy),
                num(width)
            ),
            Shape::Arc {
                cx,
                cy,
                r,
                x0,
                y0,
                x1,
                y1,
                width,
            } => {
                // Sweep clockwise (on screen, y down) when the turn from start to end is clockwise.
                let cross = (x0 - cx) * (y1 - cy) - (y0 - cy) * (x1 - cx);
                writeln!(
                    o,
                    r#"<path d="M{} {} A{} {} 0 0 {} {} {}" fill="none" stroke="{c}" stroke-width="{}"/>"#,
                    num(x0 + dx),
                    num(y0 + dy),
                    num(r),
                    num(r),
                    u8::from(cross > 0.0),
                    num(x1 + dx),
                    num(y1 + dy),
                    num(width)
                )
            }
            Shape::Disc { cx, cy, r } => writeln!(
                o,
                r#"<circle cx="{}" cy="{}" r="{}" fill="{c}"/>"#,
                num(cx + dx),
                num(cy + dy),
                num(r)
            ),
            Shape::Triangle { points } => {
                let [a, b, t] = points.map(|(x, y)| format!("{},{}", num(x + dx), num(y + dy)));
                writeln!(o, r#"<polygon points="{a} {b} {t}" fill="{c}"/>"#)
            }
            Shape::Wave {
                x0,
                x1,
                y,
                amplitude,
                period,
                width,
            } => {
                // Eight points per period trace the sine closely enough at underline sizes.
                let step = (period / 8.0).max(0.5);
                let mut points = String::new();
                let mut x = x0;
                loop {
                    let wy =
                        y + amplitude * (std::f32::consts::TAU * (x - x0) / period.max(1.0)).sin();
                    let _ = write!(
                        points,
                        "{}{},{}",
                        if points.is_empty() { "" } else { " " },
                        num(x + dx),
                        num(wy + dy)
                    );
                    if x >= x1 {
                        break;
                    }
                    x = (x + step).min(x1);
                }
                writeln!(
                    o,
                    r#"<polyline points="{points}" fill="none" stroke="{c}" stroke-width="{}"/>"#,
                    num(width)
                )
            }
        };
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

/// A coordinate with at most two decimals and no trailing zeros, so output is compact and stable.
fn num(v: f32) -> String {
    let rounded = (v * 100.0).round() / 100.0;
    if rounded.fract() == 0.0 {
        format!("{}", rounded as i64)
    } else {
        let s = format!("{rounded:.2}");
        s.trim_end_matches('0').to_owned()
    }
}

/// Append text escaped for XML. Characters XML cannot carry (controls) become U+FFFD so the document
/// always parses.
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
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

    #[test]
    fn numbers_are_compact() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(0.185), "0.19");
        assert_eq!(num(-2.5), "-2.5");
    }
}
