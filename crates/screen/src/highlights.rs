//! The spans a person reads as selected or focused: a menu's current item, a focused button, a
//! search hit, a visual selection. Found from the screen's areas ([`crate::regions`]): each highlight
//! area gives one span per row it covers.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::grid::{Attrs, CellGrid, CellWidth};
use crate::regions::{Regions, Segment};
use crate::style::Style;

/// How a highlight is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HighlightKind {
    /// In reverse video.
    Reverse,
    /// On a background unlike the one around it.
    Background,
}

/// One highlighted span on one row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Highlight {
    /// 0-based row.
    pub row: u16,
    /// 0-based column of its first cell.
    pub col: u16,
    /// Its text, without blanks at either end.
    pub text: String,
    pub why: HighlightKind,
    /// How it differs from the text around it, in the styled markup's words (`bold white on blue`).
    pub style: String,
}

/// A span being gathered: its cells `[col, end)` on `row`, and how many text cells of each style.
struct Span {
    row: u16,
    col: u16,
    end: u16,
    text: String,
    style: Style,
    base: Style,
    weight: usize,
}

/// Blank cells between two highlights that still read as one ("b  Banana": a tag and its item).
const JOIN_GAP: u16 = 2;

/// Every highlight on the screen, in reading order.
pub fn highlights(grid: &CellGrid, regions: &Regions) -> Vec<Highlight> {
    let mut spans: Vec<Span> = Vec::new();
    for segment in regions.segments.iter().filter(|s| s.highlight) {
        if let Some(span) = span_of(grid, regions, segment) {
            join_or_push(&mut spans, span, grid);
        }
    }
    spans
        .into_iter()
        .map(|span| Highlight {
            row: span.row,
            col: span.col,
            text: span.text,
            why: if span.style.attrs.has(Attrs::INVERSE) {
                HighlightKind::Reverse
            } else {
                HighlightKind::Background
            },
            style: span.style.words_against(&span.base),
        })
        .collect()
}

/// The span of a highlighted segment, trimmed of blanks; none without text.
fn span_of(grid: &CellGrid, regions: &Regions, segment: &Segment) -> Option<Span> {
    let r = segment.row as usize;
    let (from, to) = (segment.from as usize, segment.to as usize);
    let cells = grid.rows.get(r)?;
    let texts: Vec<usize> = (from..to).filter(|&c| regions.is_text_at(r, c)).collect();
    let (&first_text, &last_text) = (texts.first()?, texts.last()?);
    let blank = |c: usize| cells[c].width != CellWidth::Spacer && cells[c].text == " ";
    let first = (from..=first_text).find(|&c| !blank(c))?;
    let last = (last_text..to).rev().find(|&c| !blank(c))?;
    let mut styles: Vec<(Style, usize)> = Vec::new();
    for &c in &texts {
        let style = Style::of(&cells[c]);
        match styles.iter_mut().find(|(s, _)| *s == style) {
            Some((_, n)) => *n += 1,
            None => styles.push((style, 1)),
        }
    }
    let mut most = styles[0];
    for &(style, n) in &styles {
        if n > most.1 {
            most = (style, n);
        }
    }
    Some(Span {
        row: r as u16,
        col: first as u16,
        end: last as u16 + 1,
        text: text_of(grid, r, first, last + 1),
        style: most.0,
        base: regions.base_at(r, from),
        weight: texts.len(),
    })
}

/// Add `span`, joining it to the previous one when only a few blanks on the same row part them.
fn join_or_push(spans: &mut Vec<Span>, span: Span, grid: &CellGrid) {
    if let Some(last) = spans.last_mut() {
        let near = last.row == span.row && span.col >= last.end && span.col - last.end <= JOIN_GAP;
        let cells = &grid.rows[span.row as usize];
        if near
            && (last.end..span.col).all(|c| cells[c as usize].text == " ")
            && last.style.bg == span.style.bg
        {
            last.text
                .push_str(&" ".repeat((span.col - last.end) as usize));
            last.text.push_str(&span.text);
            last.end = span.end;
            if span.weight > last.weight {
                last.style = span.style;
                last.base = span.base;
            }
            last.weight += span.weight;
            return;
        }
    }
    spans.push(span);
}

/// The text of cells `[from, to)` of row `r`, wide characters once.
fn text_of(grid: &CellGrid, r: usize, from: usize, to: usize) -> String {
    grid.rows[r][from..to]
        .iter()
        .filter(|cell| cell.width != CellWidth::Spacer)
        .map(|cell| cell.text.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_screens::{self, grid};

    fn found(cols: u16, rows: u16, bytes: &[u8]) -> Vec<(u16, u16, String, HighlightKind)> {
        let grid = grid(cols, rows, bytes);
        highlights(&grid, &Regions::of(&grid))
            .into_iter()
            .map(|h| (h.row, h.col, h.text, h.why))
            .collect()
    }

    #[test]
    fn a_menu_highlights_its_selected_item_and_focused_button_only() {
        let grid = grid(40, 14, &test_screens::dialog_menu());
        let found = highlights(&grid, &Regions::of(&grid));
        assert_eq!(
            found,
            vec![
                Highlight {
                    row: 5,
                    col: 9,
                    text: "b  Banana".to_owned(),
                    why: HighlightKind::Background,
                    style: "bold white on blue".to_owned(),
                },
                Highlight {
                    row: 9,
                    col: 11,
                    text: "< OK >".to_owned(),
                    why: HighlightKind::Background,
                    // As many white cells (the angle brackets) as yellow: the first seen wins.
                    style: "bold white on blue".to_owned(),
                },
            ],
            "not the box, its border, its shadow or the backdrop"
        );
    }

    #[test]
    fn search_hits_are_reverse_video_and_the_word_between_them_is_not() {
        let hits = found(30, 9, &test_screens::search_hits());
        let texts: Vec<(u16, u16, &str)> = hits
            .iter()
            .map(|(row, col, text, why)| {
                assert_eq!(*why, HighlightKind::Reverse);
                (*row, *col, text.as_str())
            })
            .collect();
        assert_eq!(
            texts,
            vec![
                (0, 6, "banana"),
                (1, 0, "banana"),
                (3, 0, "banana"),
                (3, 17, "banana")
            ],
            "\"apple \", walled in by two hits, is not one; nor is the prompt on the last row"
        );
    }

    #[test]
    fn the_selected_row_of_a_list_is_a_highlight_and_the_rows_around_it_are_not() {
        let rows: Vec<(u16, String)> = found(40, 10, &test_screens::process_list())
            .into_iter()
            .map(|h| (h.0, h.2))
            .collect();
        assert!(
            rows.contains(&(4, "60 root      0.0 /bin/app".to_owned())),
            "{rows:?}"
        );
        assert!(
            rows.iter().all(|(row, _)| *row < 3 || *row == 4),
            "no other process row, nor the key bar: {rows:?}"
        );
    }

    #[test]
    fn the_row_left_between_a_header_and_the_selection_is_not_a_highlight() {
        // The first process is alone between the header bar and the selected second one.
        let b = b"\x1b[30;42m PID Command\x1b[K\x1b[0m\r\n    1 init\r\n\x1b[30;46m   58 app\x1b[K\x1b[0m\r\n   60 app\r\n   61 app";
        let rows: Vec<u16> = found(20, 8, b).into_iter().map(|h| h.0).collect();
        assert!(!rows.contains(&1), "{rows:?}");
        assert!(rows.contains(&2), "{rows:?}");
    }

    #[test]
    fn bars_across_the_first_row_and_anything_on_the_last_row_are_chrome() {
        let mut b = b"\x1b[30;46m  File  Edit  View\x1b[K\x1b[0m\r\n".to_vec();
        b.extend(b"  one\r\n\x1b[30;46m  two\x1b[K\x1b[0m\r\n  three\r\n");
        b.extend(b"\x1b[6;1H1\x1b[30;46mHelp\x1b[0m 2\x1b[30;46mSave\x1b[0m");
        assert_eq!(
            found(20, 6, &b),
            vec![(2, 2, "two".to_owned(), HighlightKind::Background)],
            "the menu bar and the key bar are not highlights; the selected row is"
        );
    }

    #[test]
    fn a_selection_over_several_rows_gives_one_span_per_row() {
        let b = b"keep\r\n\x1b[47mfirst line\x1b[0m\r\n\x1b[47msecond\x1b[0m\r\n\x1b[47mthird one\x1b[0m\r\nafter";
        assert_eq!(
            found(20, 6, b)
                .into_iter()
                .map(|h| (h.0, h.2))
                .collect::<Vec<_>>(),
            vec![
                (1, "first line".to_owned()),
                (2, "second".to_owned()),
                (3, "third one".to_owned()),
            ]
        );
    }

    #[test]
    fn a_panel_is_not_a_highlight_but_what_stands_out_in_it_is() {
        // A white panel filling most of a blue screen, with one item on cyan.
        let mut b = b"\x1b[44m\x1b[2J".to_vec();
        for row in 2..=9 {
            b.extend(format!("\x1b[{row};3H\x1b[30;47m{}", " ".repeat(34)).as_bytes());
        }
        b.extend(b"\x1b[3;5Htitle\x1b[5;5H\x1b[46mpicked\x1b[47m other");
        assert_eq!(
            found(40, 12, &b),
            vec![(4, 4, "picked".to_owned(), HighlightKind::Background)]
        );
    }

    #[test]
    fn a_plain_backdrop_has_no_highlights() {
        // Screens without reverse or background colours, and screens with them: the cheap check
        // (Screen::plain_backdrop) must never say "nothing to find" where highlights finds something.
        let screens: Vec<Vec<u8>> = vec![
            b"bash-5.2$ ls\r\nfile \x1b[1mbold\x1b[0m \x1b[4munder\x1b[0m \x1b[31mred\x1b[0m"
                .to_vec(),
            b"\x1b[7mreversed\x1b[0m plain".to_vec(),
            b"menu\r\n\x1b[44m item \x1b[0m".to_vec(),
            crate::test_screens::dialog_menu(),
            crate::test_screens::search_hits(),
            crate::test_screens::process_list(),
        ];
        for bytes in screens {
            let mut screen = crate::Screen::new(crate::Size::new(40, 14), 0);
            screen.feed(&bytes);
            let grid = screen.cells();
            let found = highlights(&grid, &Regions::of(&grid));
            if screen.plain_backdrop() {
                assert!(found.is_empty(), "{found:?}");
            }
        }
        let mut plain = crate::Screen::new(crate::Size::new(40, 5), 0);
        plain.feed(b"\x1b[1;32mgreen bold\x1b[0m text");
        assert!(plain.plain_backdrop());
        let mut menu = crate::Screen::new(crate::Size::new(40, 14), 0);
        menu.feed(&crate::test_screens::dialog_menu());
        assert!(!menu.plain_backdrop());
    }
}
