//! The scrollback history, kept as text.
//!
//! alacritty_terminal keeps every history row as full-width cells (24 bytes each, however little the row
//! holds): 10,000 rows of 80 columns take about 19 MB, 48 MB at 200 columns. Nothing reads the history
//! but as text (snapshots with scrollback, scrollback searches), so [`crate::Screen`] keeps only a small
//! window of rows in alacritty and copies every row that scrolls into it here, as the text a reader
//! gets back: about the bytes the row shows, shared in blocks rather than one allocation per row.
//!
//! Each row is stored as [`crate::Screen::scrollback_text`] shows it: visible characters, wide ones
//! once, zero-width marks after their base, tabs as blanks; trailing blanks dropped unless the row was
//! soft-wrapped (then the blanks are part of the logical line it continues). Styles are not kept: no
//! reader of the history asks for them.

use std::collections::VecDeque;

use alacritty_terminal::grid::Row;
use alacritty_terminal::term::cell::{Cell as TermCell, Flags};

use crate::occupied::occupied;

/// Rows per block. A block's text is one allocation, sized exactly once the block is full.
const BLOCK_ROWS: usize = 256;
/// In a block's `ends`: the row was soft-wrapped into the next one.
const WRAPPED: u32 = 1 << 31;

#[derive(Default)]
struct Block {
    /// UTF-8 text: rows go in whole, as [`row_text`] writes them.
    text: Vec<u8>,
    /// For each row, where its text ends in `text`, with [`WRAPPED`] set for a soft-wrapped row.
    ends: Vec<u32>,
}

impl Block {
    fn row(&self, i: usize) -> (&str, bool) {
        let start = if i == 0 {
            0
        } else {
            (self.ends[i - 1] & !WRAPPED) as usize
        };
        let end = self.ends[i];
        let text = &self.text[start..(end & !WRAPPED) as usize];
        // Always UTF-8: rows are written whole, as characters.
        (std::str::from_utf8(text).unwrap_or(""), end & WRAPPED != 0)
    }
}

/// History rows, oldest first, at most `limit` of them.
pub(crate) struct History {
    blocks: VecDeque<Block>,
    /// Rows of the oldest block already dropped (dropped rows are freed a block at a time).
    skip: usize,
    len: usize,
    limit: usize,
    /// Rows that went past the limit, in all.
    dropped: u64,
}

impl History {
    pub(crate) fn new(limit: usize) -> History {
        History {
            blocks: VecDeque::new(),
            skip: 0,
            len: 0,
            limit,
            dropped: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Rows that went past the limit since the history began.
    pub(crate) fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Row `i` (0 is the oldest kept) as text, and whether it was soft-wrapped.
    pub(crate) fn row(&self, i: usize) -> (&str, bool) {
        let i = i + self.skip;
        let first = self.blocks.front().map_or(0, |b| b.ends.len());
        if i < first {
            return self.blocks[0].row(i);
        }
        let i = i - first;
        self.blocks[1 + i / BLOCK_ROWS].row(i % BLOCK_ROWS)
    }

    /// Append `count` rows, oldest first: `row(i, out)` writes row `i` into `out` and says whether
    /// it was soft-wrapped. The oldest rows go once the limit is passed (rows that would go at once
    /// are never written).
    pub(crate) fn extend(
        &mut self,
        count: usize,
        mut row: impl FnMut(usize, &mut Vec<u8>) -> bool,
    ) {
        let mut i = count.saturating_sub(self.limit);
        self.dropped += i as u64;
        while i < count {
            if self
                .blocks
                .back()
                .is_none_or(|b| b.ends.len() == BLOCK_ROWS)
            {
                // A program's output is much alike from block to block: the next block starts with
                // room for what the last one held, instead of growing to it a doubling at a time.
                let room = self.blocks.back_mut().map_or(0, |full| {
                    full.text.shrink_to_fit();
                    full.text.len()
                });
                self.blocks.push_back(Block {
                    text: Vec::with_capacity(room),
                    ends: Vec::with_capacity(BLOCK_ROWS),
                });
            }
            let Some(block) = self.blocks.back_mut() else {
                return;
            };
            let until = count.min(i + BLOCK_ROWS - block.ends.len());
            for i in i..until {
                let wrapped = row(i, &mut block.text);
                let end = block.text.len() as u32 | if wrapped { WRAPPED } else { 0 };
                block.ends.push(end);
            }
            self.len += until - i;
            i = until;
        }
        self.drop_oldest(self.len.saturating_sub(self.limit));
    }

    /// Forget the oldest `n` rows; their blocks are freed once every row of them is gone.
    fn drop_oldest(&mut self, n: usize) {
        let mut n = n.min(self.len);
        self.dropped += n as u64;
        while n > 0 {
            let Some(front) = self.blocks.front() else {
                break;
            };
            let left = front.ends.len() - self.skip;
            if n < left {
                self.skip += n;
                self.len -= n;
                break;
            }
            self.blocks.pop_front();
            self.skip = 0;
            self.len -= left;
            n -= left;
        }
    }

    /// Write the newest row again with `row` (as [`History::extend`] does) and keep that when it
    /// differs from what was kept; says whether it did.
    pub(crate) fn rewrite_newest(&mut self, row: impl FnOnce(&mut Vec<u8>) -> bool) -> bool {
        if self.len == 0 {
            return false;
        }
        let mut text = Vec::new();
        let wrapped = row(&mut text);
        let (kept, kept_wrapped) = self.row(self.len - 1);
        if kept.as_bytes() == text.as_slice() && kept_wrapped == wrapped {
            return false;
        }
        self.truncate_newest(1);
        self.extend(1, |_, out| {
            out.extend_from_slice(&text);
            wrapped
        });
        true
    }

    /// Forget the newest `n` rows.
    pub(crate) fn truncate_newest(&mut self, n: usize) {
        for _ in 0..n.min(self.len) {
            let only = self.blocks.len() == 1;
            let Some(block) = self.blocks.back_mut() else {
                break;
            };
            block.ends.pop();
            let end = block.ends.last().map_or(0, |e| (e & !WRAPPED) as usize);
            block.text.truncate(end);
            self.len -= 1;
            let left = block.ends.len() - if only { self.skip } else { 0 };
            if left == 0 {
                self.blocks.pop_back();
                if only {
                    self.skip = 0;
                }
            }
        }
    }

    pub(crate) fn clear(&mut self) {
        self.blocks.clear();
        self.skip = 0;
        self.len = 0;
    }

    /// The last `rows` rows (all when there are fewer) as text, joined as
    /// [`crate::Screen::scrollback_text`] (`join_wrapped` false) or
    /// [`crate::Screen::scrollback_search_text`] (true) show them.
    pub(crate) fn text(&self, rows: usize, join_wrapped: bool) -> String {
        let from = self.len - rows.min(self.len);
        let mut out = String::new();
        let mut continues = false;
        for i in from..self.len {
            if i != from && !continues {
                out.push('\n');
            }
            let (text, wrapped) = self.row(i);
            continues = join_wrapped && wrapped;
            if continues {
                out.push_str(text);
            } else {
                out.push_str(text.trim_end_matches(' '));
            }
        }
        out
    }
}

/// Write `row` into `out` as the history keeps it (see the module docs). Returns whether the row was
/// soft-wrapped. `cols` is the terminal's width.
// Inlined into the copy loop: it runs once for every row that scrolls, often a few cells long.
#[inline(always)]
pub(crate) fn row_text(row: &Row<TermCell>, cols: usize, out: &mut Vec<u8>) -> bool {
    let cells = &row[..];
    let cells = &cells[..cols.min(cells.len())];
    // Past the cells written since the row was last cleared, all are the blank it was cleared with:
    // they show as blanks and never carry a soft wrap, so a short row is read only as far as it was
    // written (its last cell, a cache line of its own, is not touched).
    let written = occupied(row).map_or(cells.len(), |n| n.min(cells.len()));
    let wrapped = written == cells.len()
        && cells
            .last()
            .is_some_and(|last| last.flags.contains(Flags::WRAPLINE));
    let spacer = Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER;
    // Trailing blanks are dropped, as every reader would drop them; a soft-wrapped row keeps them.
    // A blank is anything that shows as a space: a space, a tab's cell, an empty one, the spacer of a
    // wide character that did not fit.
    let end = if wrapped {
        cells.len()
    } else {
        cells[..written]
            .iter()
            .rposition(|cell| {
                visible_char(cell.c) != ' '
                    || cell.zerowidth().is_some_and(|marks| !marks.is_empty())
            })
            .map_or(0, |i| i + 1)
    };
    let shown = &cells[..end];
    // Most rows are printable ASCII: copied in one go.
    if shown.iter().all(|cell| {
        (' '..='~').contains(&cell.c) && cell.extra.is_none() && !cell.flags.intersects(spacer)
    }) {
        out.extend(shown.iter().map(|cell| cell.c as u8));
        return wrapped;
    }
    let mut utf8 = [0; 4];
    let mut push =
        |out: &mut Vec<u8>, c: char| out.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
    for cell in shown {
        if cell.flags.intersects(spacer) {
            continue;
        }
        push(out, visible_char(cell.c));
        for &mark in cell.zerowidth().unwrap_or_default() {
            push(out, mark);
        }
    }
    wrapped
}

/// What a cell shows. alacritty_terminal keeps a tab's `\t` in the cell where the tab started (for
/// copying); on screen that cell is blank, and text with a `\t` in it would no longer line up.
pub(crate) fn visible_char(c: char) -> char {
    match c {
        '\0' | '\t' => ' ',
        c => c,
    }
}

#[cfg(test)]
#[path = "history_tests.rs"]
pub(crate) mod screen_tests;

#[cfg(test)]
mod tests {
    use super::*;

    fn push(h: &mut History, text: &str, wrapped: bool) {
        h.extend(1, |_, out| {
            out.extend_from_slice(text.as_bytes());
            wrapped
        });
    }

    #[test]
    fn keeps_the_newest_rows_up_to_its_limit_across_blocks() {
        let mut h = History::new(600);
        for i in 0..1000 {
            push(&mut h, &format!("row {i}"), i % 3 == 0);
        }
        assert_eq!(h.len(), 600);
        assert_eq!(h.row(0), ("row 400", false));
        assert_eq!(h.row(599), ("row 999", true));
        assert_eq!(h.text(2, false), "row 998\nrow 999");
        // Wrapped rows join with the next one when asked.
        assert_eq!(h.text(3, true), "row 997\nrow 998\nrow 999");
        assert_eq!(h.text(4, true), "row 996row 997\nrow 998\nrow 999");
    }

    #[test]
    fn forgets_the_newest_rows_and_starts_again() {
        let mut h = History::new(300);
        for i in 0..700 {
            push(&mut h, &format!("{i}"), false);
        }
        h.truncate_newest(299);
        assert_eq!(h.len(), 1);
        assert_eq!(h.text(10, false), "400");
        h.truncate_newest(5);
        assert_eq!(h.len(), 0);
        assert_eq!(h.text(10, false), "");
        push(&mut h, "again", false);
        assert_eq!(h.text(10, false), "again");
        h.clear();
        assert_eq!(h.len(), 0);
    }

    #[test]
    fn a_zero_limit_keeps_nothing() {
        let mut h = History::new(0);
        push(&mut h, "x", false);
        assert_eq!(h.len(), 0);
    }
}
