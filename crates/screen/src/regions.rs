//! Areas of one background colour, and which parts of them a person reads as highlighted.
//!
//! A screen is painted in areas: the backdrop, a dialog box, a panel, a selection bar, a search hit.
//! An area here is a 4-connected set of cells showing one background (reverse video shows the
//! foreground colour there). Each area has a usual style, the most common style of its text (on the
//! terminal's default background, the terminal's default style), so a white box on a blue backdrop
//! is simply "the box" and costs no markup. A segment is an area's run of cells on one row.
//!
//! Highlights are found in areas that hold text, cover at most a quarter of the screen (more is a
//! panel or a dialog) and are not on the last row alone (status lines, key hints, prompts):
//! - a whole area with the same colour above and below it (left and right, on the top row) is one:
//!   a selected item in a list or box, a focused button, a search hit, a selection over several
//!   lines; of two such areas on top of each other, the one in the colour covering less of the
//!   screen;
//! - so is a segment one row thick (a different colour right above and right below it), other than
//!   a bar across the whole first row (menu and title bars) and a row whose neighbour above or
//!   below is a highlight of the first kind (the list item left between a header and the selected
//!   item): the selected row right under a list's header, a focused panel's title;
//! - a segment walled in by highlights alone (the word between two search hits) is not one.
//!
//! A highlight is told against the area around it: Banana's bar is `bold white on blue` next to the
//! box's `black on white`.

use std::collections::HashMap;

use crate::color::Color;
use crate::geometry::Size;
use crate::grid::{Attrs, Cell, CellGrid, CellWidth};
use crate::style::Style;

/// The colour a person sees behind a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shade {
    /// The terminal's default background.
    DefaultBackground,
    /// The terminal's default foreground, seen as a background through reverse video.
    DefaultForeground,
    /// A palette or truecolour colour (never `Color::Default`).
    Color(Color),
}

impl Shade {
    fn of(color: Color, is_foreground: bool) -> Shade {
        match (color, is_foreground) {
            (Color::Default, false) => Shade::DefaultBackground,
            (Color::Default, true) => Shade::DefaultForeground,
            (color, _) => Shade::Color(color),
        }
    }

    /// What shows behind the cell's text.
    pub fn behind(cell: &Cell) -> Shade {
        if cell.attrs.has(Attrs::INVERSE) {
            Shade::of(cell.fg, true)
        } else {
            Shade::of(cell.bg, false)
        }
    }

    /// The colour the cell's text is drawn in.
    fn ink(cell: &Cell) -> Shade {
        if cell.attrs.has(Attrs::INVERSE) {
            Shade::of(cell.bg, false)
        } else {
            Shade::of(cell.fg, true)
        }
    }
}

/// Does the cell show text a person reads? Blanks, the second half of wide characters, box-drawing
/// lines and block elements (borders, bars, shadows), hidden text and text drawn in its own
/// background colour do not: only their background counts.
pub fn is_text(cell: &Cell) -> bool {
    let Some(ch) = cell.text.chars().next() else {
        return false;
    };
    cell.width != CellWidth::Spacer
        && ch != ' '
        && !('\u{2500}'..='\u{259F}').contains(&ch)
        && !cell.attrs.has(Attrs::HIDDEN)
        && Shade::ink(cell) != Shade::behind(cell)
}

/// One area of one background.
#[derive(Debug, Clone)]
pub struct Region {
    pub shade: Shade,
    /// Cells in the area.
    pub area: usize,
    pub top: u16,
    pub bottom: u16,
    pub left: u16,
    pub right: u16,
    /// Cells of text in it ([`is_text`]).
    pub text_cells: usize,
    /// The style its text is told against: the terminal's default style on the default
    /// background; elsewhere the most common style of its text (without text, its background and
    /// no attributes).
    pub usual: Style,
    /// The whole area is a highlight: the same colour above and below it.
    pub inside: bool,
}

/// An area's cells on one row, `[from, to)`.
#[derive(Debug, Clone)]
pub struct Segment {
    pub row: u16,
    pub from: u16,
    pub to: u16,
    pub region: usize,
    /// Read as selected or focused (see the module comment).
    pub highlight: bool,
    /// For a highlight, the area around it that it is told against.
    pub around: Option<usize>,
}

/// Every area and segment of a screen.
#[derive(Debug, Clone)]
pub struct Regions {
    size: Size,
    /// The area of every cell, row-major.
    of_cell: Vec<usize>,
    /// The segment of every cell, row-major.
    segment_of_cell: Vec<usize>,
    text: Vec<bool>,
    pub regions: Vec<Region>,
    pub segments: Vec<Segment>,
}

impl Regions {
    /// Find the areas of `grid` and its highlights.
    pub fn of(grid: &CellGrid) -> Regions {
        let size = grid.size;
        let (cols, rows) = (size.cols as usize, size.rows as usize);
        let cells: Vec<&Cell> = grid
            .rows
            .iter()
            .take(rows)
            .flat_map(|row| row.iter().take(cols))
            .collect();
        if cells.len() != cols * rows || cells.is_empty() {
            // A grid whose rows are shorter than its size says: no areas rather than a panic.
            return Regions {
                size: Size::new(0, 0),
                of_cell: Vec::new(),
                segment_of_cell: Vec::new(),
                text: Vec::new(),
                regions: Vec::new(),
                segments: Vec::new(),
            };
        }
        let shades: Vec<Shade> = cells.iter().map(|c| Shade::behind(c)).collect();
        let text: Vec<bool> = cells.iter().map(|c| is_text(c)).collect();
        let of_cell = label_areas(&shades, cols, rows);
        let regions = describe_areas(&cells, &shades, &text, &of_cell, cols);
        let mut found = Regions {
            size,
            of_cell,
            segment_of_cell: Vec::new(),
            text,
            regions,
            segments: Vec::new(),
        };
        found.find_highlights(&shades);
        found
    }

    fn index(&self, row: usize, col: usize) -> Option<usize> {
        (row < self.size.rows as usize && col < self.size.cols as usize)
            .then(|| row * self.size.cols as usize + col)
    }

    /// The area a cell belongs to, by number.
    pub fn id_at(&self, row: usize, col: usize) -> Option<usize> {
        self.of_cell.get(self.index(row, col)?).copied()
    }

    /// The segment a cell belongs to.
    pub fn segment_at(&self, row: usize, col: usize) -> Option<&Segment> {
        let i = *self.segment_of_cell.get(self.index(row, col)?)?;
        self.segments.get(i)
    }

    /// Is the cell text ([`is_text`])?
    pub fn is_text_at(&self, row: usize, col: usize) -> bool {
        self.index(row, col)
            .and_then(|i| self.text.get(i).copied())
            .unwrap_or(false)
    }

    /// Is the cell part of a highlight?
    pub fn is_highlight_at(&self, row: usize, col: usize) -> bool {
        self.segment_at(row, col).is_some_and(|s| s.highlight)
    }

    /// The style a cell is told against: its area's usual style, or for a highlight the usual style
    /// of the area around it.
    pub fn base_at(&self, row: usize, col: usize) -> Style {
        let Some(segment) = self.segment_at(row, col) else {
            return Style::default();
        };
        let id = if segment.highlight {
            segment.around
        } else {
            Some(segment.region)
        };
        id.and_then(|id| self.regions.get(id))
            .map_or_else(Style::default, |region| region.usual)
    }

    fn find_highlights(&mut self, shades: &[Shade]) {
        let (cols, rows) = (self.size.cols as usize, self.size.rows as usize);
        if self.regions.len() == 1 {
            // One background everywhere (a shell, most line-mode programs): one segment per row,
            // and nothing set off from anything.
            self.segment_of_cell = (0..rows * cols).map(|i| i / cols).collect();
            self.segments = (0..rows)
                .map(|row| Segment {
                    row: row as u16,
                    from: 0,
                    to: cols as u16,
                    region: 0,
                    highlight: false,
                    around: None,
                })
                .collect();
            return;
        }
        let borders = self.area_borders(shades);
        let total = cols * rows;
        let last_row = rows.saturating_sub(1) as u16;
        let eligible: Vec<bool> = self
            .regions
            .iter()
            .map(|r| r.text_cells > 0 && r.area * 4 <= total && r.top != last_row)
            .collect();
        let mut inside: Vec<bool> = borders
            .iter()
            .enumerate()
            .map(|(id, border)| eligible[id] && border.same_on_opposite_sides())
            .collect();
        // Two such areas on top of each other (a list row between a menu bar and the selection bar
        // is "inside" them too): the one in the rarer colour is the highlight.
        let mut shade_area: HashMap<Shade, usize> = HashMap::new();
        for region in &self.regions {
            *shade_area.entry(region.shade).or_default() += region.area;
        }
        let area_of = |id: usize| shade_area[&self.regions[id].shade];
        let outranked: Vec<bool> = (0..self.regions.len())
            .map(|id| {
                inside[id]
                    && borders[id]
                        .vertical
                        .counts
                        .iter()
                        .any(|&(other, _)| inside[other] && area_of(other) < area_of(id))
            })
            .collect();
        for (id, out) in outranked.into_iter().enumerate() {
            inside[id] &= !out;
            self.regions[id].inside = inside[id];
        }

        // Segments, each judged on its own when its area is not a highlight as a whole.
        self.segment_of_cell = vec![0; total];
        for row in 0..rows {
            let mut col = 0;
            while col < cols {
                let id = self.of_cell[row * cols + col];
                let mut end = col + 1;
                while end < cols && self.of_cell[row * cols + end] == id {
                    end += 1;
                }
                let n = self.segments.len();
                self.segment_of_cell[row * cols + col..row * cols + end].fill(n);
                let highlight = inside[id]
                    || (eligible[id] && self.one_row_thick(shades, row, col, end, &inside));
                self.segments.push(Segment {
                    row: row as u16,
                    from: col as u16,
                    to: end as u16,
                    region: id,
                    highlight,
                    around: None,
                });
                col = end;
            }
        }

        // A segment walled in by other highlights only is what is left around them.
        let walled: Vec<bool> = (0..self.segments.len())
            .map(|n| {
                let segment = &self.segments[n];
                let mut around = self.bordering(segment).peekable();
                segment.highlight
                    && around.peek().is_some()
                    && around.all(|i| self.segments[self.segment_of_cell[i]].highlight)
            })
            .collect();
        for (segment, walled) in self.segments.iter_mut().zip(walled) {
            segment.highlight &= !walled;
        }
        for n in 0..self.segments.len() {
            if !self.segments[n].highlight {
                continue;
            }
            let mut plain = Tally::default();
            let mut any = Tally::default();
            for i in self.bordering(&self.segments[n]) {
                any.add(self.of_cell[i], 1);
                if !self.segments[self.segment_of_cell[i]].highlight {
                    plain.add(self.of_cell[i], 1);
                }
            }
            let region = self.segments[n].region;
            self.segments[n].around = plain
                .most()
                .or_else(|| any.most())
                .or_else(|| borders[region].neighbours.most());
        }
    }

    /// The cells of `[from, to)` on `row` that have a different colour right above and right below
    /// them (most of them), and that a person reads as a highlight rather than chrome or a piece of
    /// a list left between highlights (see the module comment).
    fn one_row_thick(
        &self,
        shades: &[Shade],
        row: usize,
        from: usize,
        to: usize,
        inside: &[bool],
    ) -> bool {
        let (cols, rows) = (self.size.cols as usize, self.size.rows as usize);
        let shade = shades[row * cols + from];
        let has_text = (from..to).any(|c| self.text[row * cols + c]);
        let across_first_row = row == 0 && from == 0 && to == cols;
        if !has_text || across_first_row || row + 1 == rows {
            return false;
        }
        let neighbour = |r: usize| {
            let mut by_shade = Tally::default();
            let mut by_area = Tally::default();
            for c in from..to {
                by_shade.add(shades[r * cols + c], 1);
                by_area.add(self.of_cell[r * cols + c], 1);
            }
            (by_shade.most(), by_area.most())
        };
        for r in [row.checked_sub(1), Some(row + 1)].into_iter().flatten() {
            let (most_shade, most_area) = neighbour(r);
            if most_shade == Some(shade) || most_area.is_some_and(|id| inside[id]) {
                return false;
            }
        }
        true
    }

    /// The cells bordering a segment that lie outside its own area: above, below, left and right.
    fn bordering<'a>(&'a self, segment: &Segment) -> impl Iterator<Item = usize> + 'a {
        let (cols, rows) = (self.size.cols as usize, self.size.rows as usize);
        let (row, from, to, region) = (
            segment.row as usize,
            segment.from as usize,
            segment.to as usize,
            segment.region,
        );
        let above = row
            .checked_sub(1)
            .map(|r| (from..to).map(move |c| r * cols + c));
        let below = (row + 1 < rows).then(|| (from..to).map(move |c| (row + 1) * cols + c));
        let left = from.checked_sub(1).map(|c| row * cols + c);
        let right = (to < cols).then_some(row * cols + to);
        above
            .into_iter()
            .flatten()
            .chain(below.into_iter().flatten())
            .chain(left)
            .chain(right)
            .filter(move |&i| self.of_cell[i] != region)
    }

    /// What borders each area: colours on each side, the areas next to it, those above and below.
    fn area_borders(&self, shades: &[Shade]) -> Vec<Borders> {
        let (cols, rows) = (self.size.cols as usize, self.size.rows as usize);
        let mut borders: Vec<Borders> = vec![Borders::default(); self.regions.len()];
        for row in 0..rows {
            for col in 0..cols {
                let i = row * cols + col;
                let id = self.of_cell[i];
                let border = &mut borders[id];
                let sides = [
                    (row > 0).then(|| (i - cols, Side::Above)),
                    (row + 1 < rows).then(|| (i + cols, Side::Below)),
                    (col > 0).then(|| (i - 1, Side::Left)),
                    (col + 1 < cols).then(|| (i + 1, Side::Right)),
                ];
                for (j, side) in sides.into_iter().flatten() {
                    if self.of_cell[j] != id {
                        border.side(side).add(shades[j], 1);
                        border.neighbours.add(self.of_cell[j], 1);
                        if matches!(side, Side::Above | Side::Below) {
                            border.vertical.add(self.of_cell[j], 1);
                        }
                    }
                }
            }
        }
        borders
    }
}

/// Each area's colour, extent, text and usual style.
fn describe_areas(
    cells: &[&Cell],
    shades: &[Shade],
    text: &[bool],
    of_cell: &[usize],
    cols: usize,
) -> Vec<Region> {
    let mut regions: Vec<Region> = Vec::new();
    let mut styles: Vec<Tally<Style>> = Vec::new();
    for (i, &id) in of_cell.iter().enumerate() {
        let (row, col) = ((i / cols) as u16, (i % cols) as u16);
        if id == regions.len() {
            regions.push(Region {
                shade: shades[i],
                area: 0,
                top: row,
                bottom: row,
                left: col,
                right: col,
                text_cells: 0,
                usual: Style {
                    fg: Color::Default,
                    bg: cells[i].bg,
                    attrs: Attrs(cells[i].attrs.0 & Attrs::INVERSE),
                },
                inside: false,
            });
            styles.push(Tally::default());
        }
        let region = &mut regions[id];
        region.area += 1;
        region.bottom = row;
        region.left = region.left.min(col);
        region.right = region.right.max(col);
        if text[i] {
            region.text_cells += 1;
            styles[id].add(Style::of(cells[i]), 1);
        }
    }
    for (region, counts) in regions.iter_mut().zip(&styles) {
        // On the terminal's own background the usual style is the terminal's own: a shell's
        // coloured output is what differs from it, however much of it there is.
        if region.shade == Shade::DefaultBackground {
            region.usual = Style::default();
        } else if let Some(style) = counts.most() {
            region.usual = style;
        }
    }
    regions
}

#[derive(Debug, Clone, Copy)]
enum Side {
    Above,
    Below,
    Left,
    Right,
}

/// What borders an area on each side (by colour), and which areas border it (by cell count).
#[derive(Debug, Clone, Default)]
struct Borders {
    above: Tally<Shade>,
    below: Tally<Shade>,
    left: Tally<Shade>,
    right: Tally<Shade>,
    neighbours: Tally<usize>,
    /// The areas directly above and below.
    vertical: Tally<usize>,
}

impl Borders {
    fn side(&mut self, side: Side) -> &mut Tally<Shade> {
        match side {
            Side::Above => &mut self.above,
            Side::Below => &mut self.below,
            Side::Left => &mut self.left,
            Side::Right => &mut self.right,
        }
    }

    /// The most common colour above is the most common below (or, with nothing above or below, the
    /// same left and right): the area sits inside one surrounding, rather than between two.
    fn same_on_opposite_sides(&self) -> bool {
        let pair = |a: &Tally<Shade>, b: &Tally<Shade>| match (a.most(), b.most()) {
            (Some(a), Some(b)) => Some(a == b),
            _ => None,
        };
        pair(&self.above, &self.below)
            .or_else(|| pair(&self.left, &self.right))
            .unwrap_or(false)
    }
}

/// Counts of things in the order first seen, so that ties go to the first seen (reading order) and
/// never depend on hash order. Most tallies hold a handful of keys, found by a scan; a map takes
/// over past [`Tally::SCAN`].
#[derive(Debug, Clone)]
struct Tally<K> {
    counts: Vec<(K, usize)>,
    index: Option<HashMap<K, usize>>,
}

impl<K> Default for Tally<K> {
    fn default() -> Self {
        Tally {
            counts: Vec::new(),
            index: None,
        }
    }
}

impl<K: Copy + Eq + std::hash::Hash> Tally<K> {
    const SCAN: usize = 16;

    fn add(&mut self, key: K, n: usize) {
        let found = match &self.index {
            Some(index) => index.get(&key).copied(),
            None => self.counts.iter().position(|(k, _)| *k == key),
        };
        match found {
            Some(i) => self.counts[i].1 += n,
            None => {
                if let Some(index) = self.index.as_mut() {
                    index.insert(key, self.counts.len());
                }
                self.counts.push((key, n));
                if self.index.is_none() && self.counts.len() > Self::SCAN {
                    let index = self.counts.iter().enumerate().map(|(i, (k, _))| (*k, i));
                    self.index = Some(index.collect());
                }
            }
        }
    }

    /// The most frequent key; the first seen among equals.
    fn most(&self) -> Option<K> {
        let mut best: Option<(K, usize)> = None;
        for &(key, n) in &self.counts {
            if best.is_none_or(|(_, m)| n > m) {
                best = Some((key, n));
            }
        }
        best.map(|(key, _)| key)
    }
}

/// Label the 4-connected areas of equal shade, numbered in reading order of their first cell.
fn label_areas(shades: &[Shade], cols: usize, rows: usize) -> Vec<usize> {
    if shades.iter().all(|s| *s == shades[0]) {
        return vec![0; shades.len()];
    }
    let mut parent: Vec<usize> = (0..shades.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    for row in 0..rows {
        for col in 0..cols {
            let i = row * cols + col;
            let right = (col + 1 < cols).then_some(i + 1);
            let down = (row + 1 < rows).then_some(i + cols);
            for j in [right, down].into_iter().flatten() {
                if shades[i] == shades[j] {
                    let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                    if a != b {
                        parent[a.max(b)] = a.min(b);
                    }
                }
            }
        }
    }
    let mut number: Vec<usize> = vec![usize::MAX; shades.len()];
    let mut next = 0;
    (0..shades.len())
        .map(|i| {
            let r = root(&mut parent, i);
            if number[r] == usize::MAX {
                number[r] = next;
                next += 1;
            }
            number[r]
        })
        .collect()
}
