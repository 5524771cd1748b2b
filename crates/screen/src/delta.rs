//! What changed between two screens, as a reader who saw the first needs it to rebuild the second: the
//! rows to replace, after the old rows moved up by `scrolled` (output scrolling a shell's screen moves
//! every row; listing them all again would cost as much as the whole screen).
//!
//! Rows are the lines of [`crate::Screen::text`]: one per screen row, no trailing padding. Applying a
//! [`Delta`] to the rows it was made from gives exactly the rows it was made to ([`Delta::apply`]).

use std::hash::{Hash, Hasher};

/// The rows that differ, after a scroll.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Delta {
    /// The old rows moved up this many rows first (the top ones gone, blank rows at the bottom).
    pub scrolled: usize,
    /// Then these rows (0-based row, new text) replace what is there, in row order.
    pub rows: Vec<(usize, String)>,
}

impl Delta {
    /// The change from `before` to `after`, two screens of the same number of rows.
    pub fn between(before: &[&str], after: &[&str]) -> Delta {
        let old: Vec<u64> = before.iter().map(|r| row_hash(r)).collect();
        let new: Vec<u64> = after.iter().map(|r| row_hash(r)).collect();
        let blank = row_hash("");
        let old_at = |i: usize| old.get(i).copied().unwrap_or(blank);
        // The scroll that leaves the fewest bytes to send; no scroll wins ties.
        let cost = |scrolled: usize| -> usize {
            (0..after.len())
                .filter(|&i| new[i] != old_at(i + scrolled))
                .map(|i| after[i].len() + ROW_OVERHEAD)
                .sum()
        };
        // A scroll is what the reader is told happened: it must move more rows of old text into
        // place than it leaves blank rows, unlisted, for the reader to infer. Otherwise a program
        // that redrew in place (fzf narrowing its list) would read as `scrolled=23` over blanks.
        let moves_text = |scrolled: usize| -> bool {
            let (mut kept, mut inferred) = (0, 0);
            for i in (0..after.len()).filter(|&i| new[i] == old_at(i + scrolled)) {
                if new[i] != blank {
                    kept += 1;
                } else if i + scrolled >= old.len() {
                    inferred += 1;
                }
            }
            kept > inferred
        };
        let mut best = (cost(0), 0);
        // Every scroll is tried: rows x rows comparisons of row hashes, cheap at any screen size.
        for scrolled in 1..after.len() {
            let c = cost(scrolled);
            if c < best.0 && moves_text(scrolled) {
                best = (c, scrolled);
            }
        }
        let scrolled = best.1;
        let rows = (0..after.len())
            .filter(|&i| new[i] != old_at(i + scrolled))
            .map(|i| (i, after[i].to_owned()))
            .collect();
        Delta { scrolled, rows }
    }

    /// The rows `before` becomes once this delta is applied; `rows` is the screen's row count.
    pub fn apply(&self, before: &[String], rows: usize) -> Vec<String> {
        let mut out: Vec<String> = (0..rows)
            .map(|i| before.get(i + self.scrolled).cloned().unwrap_or_default())
            .collect();
        for (row, text) in &self.rows {
            if let Some(slot) = out.get_mut(*row) {
                slot.clone_from(text);
            }
        }
        out
    }

    /// Nothing changed.
    pub fn is_empty(&self) -> bool {
        self.scrolled == 0 && self.rows.is_empty()
    }

    /// Bytes the delta takes as text (`ROW|text` lines), to weigh it against the whole screen.
    pub fn text_len(&self) -> usize {
        self.rows
            .iter()
            .map(|(row, text)| text.len() + ROW_OVERHEAD + usize::from(*row >= 10))
            .sum()
    }
}

/// What a listed row costs beyond its text: its number, a separator and a newline.
const ROW_OVERHEAD: usize = 3;

fn row_hash(row: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    row.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str) -> Vec<String> {
        text.split('\n').map(str::to_owned).collect()
    }

    fn check(before: &str, after: &str) -> Delta {
        let (b, a) = (rows(before), rows(after));
        let br: Vec<&str> = b.iter().map(String::as_str).collect();
        let ar: Vec<&str> = a.iter().map(String::as_str).collect();
        let delta = Delta::between(&br, &ar);
        assert_eq!(delta.apply(&b, a.len()), a, "{delta:?}");
        delta
    }

    #[test]
    fn one_changed_row_is_all_that_is_listed() {
        let delta = check(">>> 6*7\n>>> \n\n", ">>> 6*7\n42\n>>> \n");
        assert_eq!(delta.scrolled, 0);
        assert_eq!(
            delta.rows,
            vec![(1, "42".to_owned()), (2, ">>> ".to_owned())]
        );
        assert!(check("a\nb", "a\nb").is_empty());
    }

    #[test]
    fn output_that_scrolls_the_screen_is_a_scroll_and_the_new_rows() {
        let before = "$ ls\none\ntwo\n$ ";
        let after = "two\n$ echo hi\nhi\n$ ";
        let delta = check(before, after);
        assert_eq!(delta.scrolled, 2);
        assert_eq!(
            delta.rows,
            vec![
                (1, "$ echo hi".to_owned()),
                (2, "hi".to_owned()),
                (3, "$ ".to_owned())
            ]
        );
    }

    /// fzf narrowing its list redraws in place: the rows are listed as they are (blank ones
    /// included), not as a scroll that leaves blank rows to be inferred.
    #[test]
    fn a_list_redrawn_in_place_is_not_a_scroll() {
        let before = "  ninth\n  eighth\n  seventh\n  sixth\n  fifth\n  fourth\n  third\n  second\n> first\n  9/9\n> ";
        let after = "\n\n\n\n\n\n\n\n> sixth\n  1/9\n> si";
        let delta = check(before, after);
        assert_eq!(delta.scrolled, 0);
        assert_eq!(delta.rows.len(), 11, "{delta:?}");
        assert_eq!(delta.rows[0], (0, String::new()));
        // One row of old text landing in place by chance is no scroll either.
        let after = "\n\n\n\n\n\n\n\n  ninth\n  1/9\n> n";
        assert_eq!(check(before, after).scrolled, 0);
    }

    #[test]
    fn a_screen_cleared_and_redrawn_rebuilds_exactly() {
        check("a\nb\nc\nd", "\n\n\n");
        check("\n\n\n", "x\n\ny\n");
        check("same\nsame\nsame", "same\nother\nsame");
    }
}
