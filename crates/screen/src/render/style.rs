//! What each cell looks like once attributes are applied: colours resolved through the theme and the
//! application's palette, the face, underline and strikeout, and where the cursor is drawn. Both the PNG
//! and the SVG renderer read cells only through here, so they cannot disagree.

use crate::color::{Color, Rgb};
use crate::geometry::CellPos;
use crate::grid::{Attrs, Cell, CellGrid, CellWidth, CursorShape};
use crate::palette::{Theme, ThemeName};

use super::faces::Face;
use super::metrics::Metrics;
use super::shapes::{Decoration, Shape};

/// The theme plus the palette entries the application changed.
pub(crate) struct Colors<'a> {
    theme: Theme,
    overrides: &'a [(u16, Rgb)],
}

impl<'a> Colors<'a> {
    pub fn new(theme: ThemeName, overrides: &'a [(u16, Rgb)]) -> Self {
        Colors {
            theme: Theme::named(theme),
            overrides,
        }
    }

    /// The background of cells that set none, also used for the padding around them.
    pub fn default_bg(&self) -> Rgb {
        self.theme.resolve(Color::Default, false, self.overrides)
    }
}

/// How one cell is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Paint {
    pub fg: Rgb,
    pub bg: Rgb,
    pub face: Face,
    pub underline: Option<Decoration>,
    pub strike: bool,
    /// Concealed text (SGR 8): the background is drawn, the glyph and its lines are not.
    pub hidden: bool,
}

impl Paint {
    /// The lines to draw over the cell, in drawing order.
    pub fn decorations(&self) -> impl Iterator<Item = Decoration> {
        let visible = !self.hidden;
        self.underline
            .filter(|_| visible)
            .into_iter()
            .chain((visible && self.strike).then_some(Decoration::Strikeout))
    }
}

/// Resolve a cell's attributes. `under_block_cursor` shows the cell inverted, as a block cursor does.
pub(crate) fn paint(cell: &Cell, colors: &Colors, under_block_cursor: bool) -> Paint {
    let attrs = cell.attrs;
    let mut fg = colors.theme.resolve(cell.fg, true, colors.overrides);
    let mut bg = colors.theme.resolve(cell.bg, false, colors.overrides);
    if attrs.has(Attrs::INVERSE) {
        std::mem::swap(&mut fg, &mut bg);
    }
    if attrs.has(Attrs::DIM) {
        fg = fg.blend(bg, 0.5);
    }
    if under_block_cursor {
        std::mem::swap(&mut fg, &mut bg);
    }
    // When several underline flags are set the most distinctive wins; emulators set only one.
    let underline = [
        (Attrs::DOUBLE_UNDERLINE, Decoration::DoubleUnderline),
        (Attrs::UNDERCURL, Decoration::CurlyUnderline),
        (Attrs::DOTTED_UNDERLINE, Decoration::DottedUnderline),
        (Attrs::DASHED_UNDERLINE, Decoration::DashedUnderline),
        (Attrs::UNDERLINE, Decoration::Underline),
    ]
    .into_iter()
    .find(|(flag, _)| attrs.has(*flag))
    .map(|(_, decoration)| decoration);
    Paint {
        fg,
        bg,
        face: Face::new(attrs.has(Attrs::BOLD), attrs.has(Attrs::ITALIC)),
        underline,
        strike: attrs.has(Attrs::STRIKEOUT),
        hidden: attrs.has(Attrs::HIDDEN),
    }
}

/// The cell at (col, row), or `blank` where the grid's rows are shorter than its size says (a grid
/// built by hand may be).
pub(crate) fn cell_at<'a>(grid: &'a CellGrid, col: u16, row: u16, blank: &'a Cell) -> &'a Cell {
    grid.cell(CellPos::new(col, row)).unwrap_or(blank)
}

/// Where and how the cursor is drawn, when it is visible and on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CursorMark {
    /// The first cell under the cursor.
    pub pos: CellPos,
    /// Over a wide character the cursor covers both its cells.
    pub wide: bool,
    pub shape: CursorShape,
}

impl CursorMark {
    pub fn of(grid: &CellGrid) -> Option<CursorMark> {
        let cursor = grid.cursor;
        let mut pos = cursor.pos();
        if !cursor.visible || !grid.size.contains(pos) {
            return None;
        }
        let mut wide = false;
        match grid.cell(pos).map(|c| c.width) {
            Some(CellWidth::Wide) => wide = true,
            Some(CellWidth::Spacer) if pos.col.0 > 0 => {
                pos = CellPos::new(pos.col.0 - 1, pos.row.0);
                wide = grid.cell(pos).is_some_and(|c| c.width == CellWidth::Wide);
                if !wide {
                    pos = cursor.pos();
                }
            }
            _ => {}
        }
        Some(CursorMark {
            pos,
            wide,
            shape: cursor.shape,
        })
    }

    /// True when the cell at (col, row) is shown inverted by a block cursor.
    pub fn inverts(&self, col: u16, row: u16) -> bool {
        self.shape == CursorShape::Block
            && row == self.pos.row.0
            && (col == self.pos.col.0 || (self.wide && col == self.pos.col.0 + 1))
    }

    /// The shapes of an underline, beam or hollow cursor relative to its cell (a block cursor is drawn
    /// by inverting the cell instead, so it returns none).
    pub fn shapes(&self, metrics: &Metrics) -> Vec<Shape> {
        let w = metrics.span_w(self.wide) as f32;
        let h = metrics.cell_h as f32;
        let t = metrics.line as f32;
        let bar = (2.0 * t).min(w).min(h);
        match self.shape {
            CursorShape::Block => Vec::new(),
            CursorShape::Underline => vec![Shape::rect(0.0, h - bar, w, bar)],
            CursorShape::Beam => vec![Shape::rect(0.0, 0.0, bar, h)],
            CursorShape::HollowBlock => vec![
                Shape::rect(0.0, 0.0, w, t),
                Shape::rect(0.0, h - t, w, t),
                Shape::rect(0.0, 0.0, t, h),
                Shape::rect(w - t, 0.0, t, h),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(attrs: u16) -> Cell {
        Cell {
            text: "x".to_owned(),
            fg: Color::Indexed(1),
            bg: Color::Indexed(4),
            attrs: Attrs(attrs),
            width: CellWidth::Single,
        }
    }

    #[test]
    fn inverse_swaps_colours() {
        let colors = Colors::new(ThemeName::Dark, &[]);
        let theme = Theme::dark();
        let plain = paint(&cell(0), &colors, false);
        assert_eq!((plain.fg, plain.bg), (theme.ansi[1], theme.ansi[4]));
        let inverse = paint(&cell(Attrs::INVERSE), &colors, false);
        assert_eq!((inverse.fg, inverse.bg), (theme.ansi[4], theme.ansi[1]));
        let under_cursor = paint(&cell(Attrs::INVERSE), &colors, true);
        assert_eq!((under_cursor.fg, under_cursor.bg), (plain.fg, plain.bg));
    }

    #[test]
    fn dim_moves_towards_the_background() {
        let colors = Colors::new(ThemeName::Dark, &[]);
        let dim = paint(&cell(Attrs::DIM), &colors, false);
        let theme = Theme::dark();
        assert_eq!(dim.fg, theme.ansi[1].blend(theme.ansi[4], 0.5));
    }

    #[test]
    fn palette_overrides_apply() {
        let overrides = [(1u16, Rgb::new(1, 2, 3))];
        let colors = Colors::new(ThemeName::Light, &overrides);
        assert_eq!(paint(&cell(0), &colors, false).fg, Rgb::new(1, 2, 3));
    }

    #[test]
    fn hidden_cells_have_no_decorations() {
        let colors = Colors::new(ThemeName::Dark, &[]);
        let p = paint(
            &cell(Attrs::HIDDEN | Attrs::UNDERLINE | Attrs::STRIKEOUT),
            &colors,
            false,
        );
        assert_eq!(p.decorations().count(), 0);
        let p = paint(&cell(Attrs::UNDERCURL | Attrs::STRIKEOUT), &colors, false);
        let found: Vec<_> = p.decorations().collect();
        assert_eq!(found, [Decoration::CurlyUnderline, Decoration::Strikeout]);
    }
}
