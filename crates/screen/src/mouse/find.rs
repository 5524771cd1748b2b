//! Finding text on the screen, in cells, to aim a click at.

use crate::geometry::CellPos;
use crate::width::char_width;

/// Where a piece of text is on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextMatch {
    /// The cell of its first character.
    pub start: CellPos,
    /// How many cells its first line covers.
    pub width: u16,
}

impl TextMatch {
    /// The middle cell of its first line (the left one of two middles).
    pub fn center(&self) -> CellPos {
        let offset = self.width.saturating_sub(1) / 2;
        CellPos::new(self.start.col.0.saturating_add(offset), self.start.row.0)
    }
}

/// The `nth` (0-based) occurrence of `needle` in `text`, a screen as [`crate::Screen::text`] gives
/// it (rows joined by `\n`). Columns count cells, so a wide (CJK) character counts two.
/// Occurrences do not overlap. `None` when there is no such occurrence or the needle is empty.
pub fn find_text_match(text: &str, needle: &str, nth: usize) -> Option<TextMatch> {
    if needle.is_empty() {
        return None;
    }
    let (index, _) = text.match_indices(needle).nth(nth)?;
    let before = &text[..index];
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let row = before.bytes().filter(|b| *b == b'\n').count();
    let col = cell_width(&text[line_start..index]);
    let first_line = needle.split('\n').next().unwrap_or_default();
    Some(TextMatch {
        start: CellPos::new(u16::try_from(col).ok()?, u16::try_from(row).ok()?),
        width: u16::try_from(cell_width(first_line)).ok()?,
    })
}

/// The cell of the first character of the `nth` occurrence of `needle` (see [`find_text_match`]).
pub fn find_text(text: &str, needle: &str, nth: usize) -> Option<CellPos> {
    find_text_match(text, needle, nth).map(|m| m.start)
}

/// The middle cell of the `nth` occurrence of `needle` (see [`find_text_match`]): the safest cell to
/// click on a button label.
pub fn find_text_center(text: &str, needle: &str, nth: usize) -> Option<CellPos> {
    find_text_match(text, needle, nth).map(|m| m.center())
}

/// Cells taken by `s`, measured as the emulator places characters.
fn cell_width(s: &str) -> usize {
    s.chars().map(|ch| char_width(ch).unwrap_or(0)).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_text_counts_cells_not_characters() {
        let screen = "名前: 山田\nOK 確認 OK\n  [ Save ]";
        assert_eq!(find_text(screen, "山田", 0), Some(CellPos::new(6, 0)));
        assert_eq!(find_text(screen, "確認", 0), Some(CellPos::new(3, 1)));
        assert_eq!(find_text(screen, "OK", 1), Some(CellPos::new(8, 1)));
        assert_eq!(find_text(screen, "OK", 2), None);
        assert_eq!(
            find_text_center(screen, "確認", 0),
            Some(CellPos::new(4, 1))
        );
        assert_eq!(
            find_text_center(screen, "[ Save ]", 0),
            Some(CellPos::new(5, 2))
        );
        assert_eq!(
            find_text_match(screen, "OK\n", 0),
            Some(TextMatch {
                start: CellPos::new(8, 1),
                width: 2
            })
        );
        assert_eq!(find_text(screen, "", 0), None);
        assert_eq!(find_text(screen, "absent", 0), None);
    }
}
