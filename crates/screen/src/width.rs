//! How many columns a character takes: as the programs writing to the terminal count them.
//!
//! Programs place their cursor with the C library's `wcwidth`, as do xterm and tmux. unicode-width,
//! which alacritty uses, disagrees with glibc on a few dozen characters: the spacing vowel signs of
//! Bengali, Tamil, Kannada, Malayalam, Oriya and Sinhala (U+09BE), the soft hyphen and the halfwidth
//! Hangul filler take one column for glibc and none for unicode-width; the Hangul filler (U+3164)
//! takes two. Where they differ the screen would put the rest of the line a column away from where
//! the program thinks it is. [`char_width`] is glibc's width wherever glibc knows the character and
//! unicode-width's elsewhere (emoji newer than the C library stay wide).

use std::cmp::Ordering;

use unicode_width::UnicodeWidthChar;

use crate::width_table::WIDTHS;

/// The first code point whose width the table changes: everything below it (ASCII, Latin-1 up to
/// U+00AC) is unicode-width's, without a search.
const FIRST_CORRECTED: u32 = match WIDTHS.first() {
    Some(&(first, _, _)) => first,
    None => u32::MAX,
};

/// Columns `c` takes: 0 for combining marks and other characters drawn over the previous cell, 1 or
/// 2 for the rest; `None` for control characters.
pub fn char_width(c: char) -> Option<usize> {
    corrected_width(c).or_else(|| c.width())
}

/// The width of `c` where it is not unicode-width's (which alacritty uses), else `None`.
pub(crate) fn corrected_width(c: char) -> Option<usize> {
    let code = c as u32;
    if code < FIRST_CORRECTED {
        return None;
    }
    let i = WIDTHS
        .binary_search_by(|&(first, last, _)| {
            if last < code {
                Ordering::Less
            } else if first > code {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })
        .ok()?;
    Some(usize::from(WIDTHS[i].2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_disjoint_and_changes_every_width_it_lists() {
        for pair in WIDTHS.windows(2) {
            assert!(pair[0].1 < pair[1].0, "{pair:x?}");
        }
        for &(first, last, width) in &WIDTHS {
            assert!(first <= last && width <= 2);
            for c in (first..=last).filter_map(char::from_u32) {
                assert_ne!(c.width(), Some(usize::from(width)), "U+{:04X}", c as u32);
            }
        }
    }

    #[test]
    fn widths_as_programs_count_them() {
        assert_eq!(char_width('a'), Some(1));
        assert_eq!(char_width('\u{7}'), None);
        // Spacing vowel signs, the soft hyphen, the halfwidth filler: one column.
        for c in ['\u{AD}', '\u{9BE}', '\u{BBE}', '\u{D3E}', '\u{FFA0}'] {
            assert_eq!(char_width(c), Some(1), "U+{:04X}", c as u32);
        }
        // The Hangul filler is as wide as the syllables it stands for.
        assert_eq!(char_width('\u{3164}'), Some(2));
        // Combining marks, CJK and emoji, Unicode 15's included, as before.
        assert_eq!(char_width('\u{301}'), Some(0));
        assert_eq!(char_width('\u{4E00}'), Some(2));
        assert_eq!(char_width('\u{1F600}'), Some(2));
        assert_eq!(char_width('\u{1FAE8}'), Some(2));
    }
}
