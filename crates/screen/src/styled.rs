//! Styled text: the screen's text with its styles marked in a small markup a model reads cold.
//!
//! ```text
//! [bold red]error[/] in [reverse]main.rs[/]   [[x] is a literal "[x]"   $ ls[cursor/]
//! ```
//!
//! - `[words]text[/]` marks a run: the words say how it differs from the text around it — attributes
//!   (`bold`, `dim`, `italic`, `underline`, `strike`, `reverse`, `not bold`, ...), then the text
//!   colour, then `on` and the background (`default`, `red`, `bright_red`, `color(242)`, `#0178d4`).
//!   Tags never nest: every `[/]` closes the one tag before it.
//! - `[[` is a literal `[`; `]` is always literal.
//! - `[cursor/]` stands just before the cell the (visible) cursor is on; it opens nothing.
//!
//! Which runs are marked (see [`crate::regions`] for areas and highlights):
//! - text is told against the usual style of its area (the cells of one background around it): on
//!   the terminal's default background the default style, elsewhere the area's most common style,
//!   so a box or panel painted on a backdrop costs nothing and only what differs inside it is marked;
//! - a highlight (a selection bar, a focused button, a search hit) is always marked, against the
//!   area around it;
//! - other differences are marked only where they are rare: a style that would be marked in more
//!   than [`RECURRING_RUNS`] runs is theme or syntax colouring (htop's columns, vim's `~` lines) and
//!   left unmarked;
//! - blanks, borders and bars between two texts of the same mark belong to their run; blanks at
//!   either end of a run stay outside its tag.
//!
//! Removing the markup (`[[` to `[`, every other tag to nothing) gives back the plain text exactly:
//! the same lines, no trailing padding, the cursor's row running up to the cursor.

use std::collections::HashMap;

use crate::grid::{CellGrid, CellWidth};
use crate::regions::Regions;
use crate::style::Style;

/// A style marked in more runs than this (outside highlights) is theme colouring, left unmarked.
pub const RECURRING_RUNS: usize = 3;

/// The marker for the cursor's cell.
pub const CURSOR_MARK: &str = "[cursor/]";

/// The screen as styled text (see the module comment).
pub fn styled_text(grid: &CellGrid, regions: &Regions) -> String {
    let mut tags = Tags::default();
    let mut marks: Vec<Vec<Option<usize>>> = grid
        .rows
        .iter()
        .enumerate()
        .map(|(r, cells)| row_marks(grid, regions, r, cells.len(), &mut tags))
        .collect();
    drop_recurring(&mut marks, regions, tags.names.len());
    let cursor = grid
        .cursor
        .visible
        .then_some((grid.cursor.row as usize, grid.cursor.col as usize));
    let mut out = String::with_capacity(grid.size.cells() + grid.size.rows as usize * 8);
    for (r, cells) in grid.rows.iter().enumerate() {
        if r > 0 {
            out.push('\n');
        }
        let start = out.len();
        let cursor_col = cursor.filter(|(row, _)| *row == r).map(|(_, col)| col);
        let line = Line {
            grid,
            row: r,
            cursor_col,
        };
        let mut col = 0;
        while col < cells.len() {
            let mark = marks[r][col];
            let mut end = col + 1;
            while end < cells.len() && marks[r][end] == mark {
                end += 1;
            }
            match mark {
                Some(tag) => line.tagged(&mut out, col, end, &tags.names[tag]),
                None => line.plain(&mut out, col, end),
            }
            col = end;
        }
        let kept = out[start..].trim_end_matches(' ').len();
        out.truncate(start + kept);
    }
    out
}

/// Tag words, each stored once, and the tag of each (style, base) pair met so far.
#[derive(Default)]
struct Tags {
    names: Vec<String>,
    index: HashMap<String, usize>,
    of_pair: HashMap<(Style, Style), Option<usize>>,
}

impl Tags {
    /// The tag marking `style` against `base`; none when they look the same.
    fn mark(&mut self, style: Style, base: Style) -> Option<usize> {
        if let Some(&mark) = self.of_pair.get(&(style, base)) {
            return mark;
        }
        let words = style.words_against(&base);
        let mark = (!words.is_empty()).then(|| match self.index.get(&words) {
            Some(&i) => i,
            None => {
                self.names.push(words.clone());
                self.index.insert(words, self.names.len() - 1);
                self.names.len() - 1
            }
        });
        self.of_pair.insert((style, base), mark);
        mark
    }
}

/// The mark of every cell of row `r`: text cells by their own style against their area's base;
/// blanks, borders and bars inside a run (the same mark on the text either side, in the same area)
/// by that run's.
fn row_marks(
    grid: &CellGrid,
    regions: &Regions,
    r: usize,
    cols: usize,
    tags: &mut Tags,
) -> Vec<Option<usize>> {
    let cells = &grid.rows[r];
    let mut marks: Vec<Option<usize>> = vec![None; cols];
    let mut col = 0;
    while col < cols {
        let Some(segment) = regions.segment_at(r, col) else {
            break;
        };
        let end = (segment.to as usize).min(cols);
        let base = regions.base_at(r, col);
        let text: Vec<bool> = (col..end).map(|c| regions.is_text_at(r, c)).collect();
        let own: Vec<Option<usize>> = (col..end)
            .zip(&text)
            .map(|(c, &is_text)| {
                if is_text {
                    tags.mark(Style::of(&cells[c]), base)
                } else {
                    None
                }
            })
            .collect();
        // A neutral cell belongs to a run when the text on both sides of it carries the same mark.
        let mut after: Vec<Option<Option<usize>>> = vec![None; text.len()];
        let mut next = None;
        for i in (0..text.len()).rev() {
            after[i] = next;
            if text[i] {
                next = Some(own[i]);
            }
        }
        let mut before = None;
        for (i, &is_text) in text.iter().enumerate() {
            marks[col + i] = if is_text {
                before = Some(own[i]);
                own[i]
            } else {
                match (before, after[i]) {
                    (Some(b), Some(a)) if a == b => b,
                    _ => None,
                }
            };
        }
        col = end;
    }
    marks
}

/// Unmark styles that recur outside highlights in more than [`RECURRING_RUNS`] runs.
fn drop_recurring(marks: &mut [Vec<Option<usize>>], regions: &Regions, tag_count: usize) {
    let in_highlight = |r: usize, c: usize| regions.is_highlight_at(r, c);
    let mut runs = vec![0usize; tag_count];
    for (r, row) in marks.iter().enumerate() {
        for (c, mark) in row.iter().enumerate() {
            if let Some(tag) = mark {
                let starts = c == 0 || row[c - 1] != Some(*tag);
                if starts && !in_highlight(r, c) {
                    runs[*tag] += 1;
                }
            }
        }
    }
    for (r, row) in marks.iter_mut().enumerate() {
        for (c, mark) in row.iter_mut().enumerate() {
            if mark.is_some_and(|tag| runs[tag] > RECURRING_RUNS) && !in_highlight(r, c) {
                *mark = None;
            }
        }
    }
}

/// One row being written.
struct Line<'a> {
    grid: &'a CellGrid,
    row: usize,
    cursor_col: Option<usize>,
}

impl Line<'_> {
    fn blank(&self, c: usize) -> bool {
        let cell = &self.grid.rows[self.row][c];
        cell.width != CellWidth::Spacer && cell.text == " "
    }

    /// Cells `[from, to)` in a tag, with blanks at either end left outside it.
    fn tagged(&self, out: &mut String, from: usize, to: usize, words: &str) {
        let Some(first) = (from..to).find(|&c| !self.blank(c)) else {
            return self.plain(out, from, to);
        };
        let last = (first..to).rev().find(|&c| !self.blank(c)).unwrap_or(first);
        self.plain(out, from, first);
        out.push('[');
        out.push_str(words);
        out.push(']');
        self.plain(out, first, last + 1);
        out.push_str("[/]");
        self.plain(out, last + 1, to);
    }

    /// Cells `[from, to)` as text: `[` doubled, wide characters once, the cursor marked.
    fn plain(&self, out: &mut String, from: usize, to: usize) {
        for (c, cell) in self.grid.rows[self.row][from..to]
            .iter()
            .enumerate()
            .map(|(i, cell)| (from + i, cell))
        {
            if self.cursor_col == Some(c) {
                out.push_str(CURSOR_MARK);
            }
            if cell.width == CellWidth::Spacer {
                continue;
            }
            for ch in cell.text.chars() {
                if ch == '[' {
                    out.push('[');
                }
                out.push(ch);
            }
        }
    }
}

/// The plain text of styled text: `[[` becomes `[`, every other tag goes. For tests and for readers
/// that want to check what they parsed.
pub fn strip_markup(styled: &str) -> String {
    let mut out = String::with_capacity(styled.len());
    let mut chars = styled.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '[' {
            out.push(ch);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            out.push('[');
            continue;
        }
        for inner in chars.by_ref() {
            if inner == ']' {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_screens::{self, grid, text};

    fn styled(cols: u16, rows: u16, bytes: &[u8]) -> String {
        let grid = grid(cols, rows, bytes);
        let out = styled_text(&grid, &Regions::of(&grid));
        assert_eq!(
            strip_markup(&out),
            text(cols, rows, bytes),
            "without its markup, styled text is the plain text"
        );
        out
    }

    #[test]
    fn a_menu_marks_its_selection_not_its_box_shadow_or_backdrop() {
        let out = styled(40, 14, &test_screens::dialog_menu());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], "     ┌────────────────────────────┐");
        assert_eq!(lines[3], "      Pick one");
        assert_eq!(lines[4], "         [red]a[/]  Apple");
        assert_eq!(
            lines[5],
            "         [bold red on blue]b[/]  [bold white on blue]Banana[/]"
        );
        assert_eq!(
            lines[9],
            "           [bold white on blue]<[/] [bold yellow on blue][cursor/]OK[/] [bold white on blue]>[/]  <[bold]Cancel[/]>"
        );
        assert!(
            !out.contains("on black") && !out.contains("on white"),
            "{out}"
        );
        assert_eq!(
            out.matches("[/]").count(),
            8,
            "a, b, Banana, c, the three parts of <OK>, Cancel, and nothing else: {out}"
        );
    }

    #[test]
    fn search_hits_are_marked_and_the_filler_and_prompt_are_not() {
        let out = styled(30, 9, &test_screens::search_hits());
        assert_eq!(
            out.lines().take(5).collect::<Vec<_>>(),
            vec![
                "apple [reverse]banana[/] cherry",
                "[reverse]banana[/] split",
                "no fruit here",
                "[reverse]banana[/]s and more [reverse]banana[/]s",
                "~",
            ],
            "the ~ lines recur, so their colour is not marked"
        );
        assert!(out.ends_with("(END)[cursor/]"), "{out}");
    }

    #[test]
    fn recurring_colours_are_theme_and_rare_ones_are_marked() {
        let out = styled(40, 10, &test_screens::process_list());
        assert!(
            out.starts_with("  Tasks: [bold cyan]12[/] running\n"),
            "{out}"
        );
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[2], "    1 root      0.0 /bin/app",
            "cyan in every row"
        );
        assert_eq!(lines[4], "   [black on cyan]60 root      0.0 /bin/app[/]");
    }

    #[test]
    fn literal_brackets_are_doubled_and_the_cursor_is_marked() {
        assert_eq!(styled(20, 3, b"[x] done\r\n$ "), "[[x] done\n$ [cursor/]\n");
        assert_eq!(styled(20, 3, b"[x] done\r\n$ \x1b[?25l"), "[[x] done\n$\n");
        assert_eq!(
            strip_markup("[[[bold]a[/]] [[[["),
            "[a] [[",
            "[[ is [, anything else in brackets is a tag"
        );
    }

    #[test]
    fn blanks_at_either_end_of_a_run_stay_outside_its_tag() {
        assert_eq!(
            styled(30, 3, b"go \x1b[1;31m  two words  \x1b[0m end\x1b[?25l"),
            "go   [bold red]two words[/]   end\n\n"
        );
    }

    #[test]
    fn wide_characters_appear_once_inside_or_outside_tags() {
        assert_eq!(
            styled(20, 2, "日本\x1b[7m語\x1b[0m ok\x1b[?25l".as_bytes()),
            "日本[reverse]語[/] ok\n"
        );
    }

    #[test]
    fn a_plain_screen_is_its_own_styled_text() {
        let bytes = b"$ ls\r\nCargo.toml  src\r\n$ ";
        assert_eq!(styled(30, 4, bytes), "$ ls\nCargo.toml  src\n$ [cursor/]\n");
    }
}
