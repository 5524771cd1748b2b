//! Characters take the columns programs count for them (glibc's wcwidth, as xterm and tmux), not
//! unicode-width's: byte streams fed to the emulator, read back as cells, cursor and text.

use screenpilot_screen::mouse::find_text;
use screenpilot_screen::{CellGrid, CellPos, CellWidth, Screen, Size};

fn screen(cols: u16, bytes: &[u8]) -> Screen {
    let mut screen = Screen::new(Size::new(cols, 4), 100);
    screen.feed(bytes);
    screen
}

fn cells(cols: u16, bytes: &[u8]) -> CellGrid {
    screen(cols, bytes).cells()
}

/// The text of each cell of row `row`, spacers as `~`.
fn row(grid: &CellGrid, row: usize) -> Vec<String> {
    grid.rows[row]
        .iter()
        .map(|cell| match cell.width {
            CellWidth::Spacer => "~".to_owned(),
            _ => cell.text.clone(),
        })
        .collect()
}

/// The column of the first `|` on row 0.
fn bar_column(bytes: &[u8]) -> Option<usize> {
    cells(20, bytes).rows[0]
        .iter()
        .position(|cell| cell.text == "|")
}

#[test]
fn bengali_vowel_sign_puts_the_bar_where_tmux_does() {
    // printf 'a\xe0\xa6\x95\xe0\xa6\xbe|': KA, then the spacing vowel sign AA (U+09BE), one column each.
    let bytes = b"a\xe0\xa6\x95\xe0\xa6\xbe|";
    let mut screen = screen(20, bytes);
    let grid = screen.cells();
    assert_eq!(row(&grid, 0)[..5], ["a", "\u{995}", "\u{9BE}", "|", " "]);
    assert_eq!(grid.cursor.col, 4);
    assert_eq!(screen.text().lines().next(), Some("a\u{995}\u{9BE}|"));
}

#[test]
fn soft_hyphen_tamil_aa_and_halfwidth_filler_take_one_column() {
    for c in [
        '\u{AD}', '\u{BBE}', '\u{FFA0}', '\u{D3E}', '\u{2630}', '\u{17D8}',
    ] {
        let bytes = format!("a{c}|");
        let grid = cells(20, bytes.as_bytes());
        assert_eq!(
            row(&grid, 0)[..3],
            ["a".to_owned(), c.to_string(), "|".to_owned()],
            "U+{:04X}",
            c as u32
        );
        assert_eq!(grid.rows[0][1].width, CellWidth::Single);
    }
}

#[test]
fn hangul_filler_takes_two_columns() {
    let grid = cells(20, "a\u{3164}|".as_bytes());
    assert_eq!(row(&grid, 0)[..4], ["a", "\u{3164}", "~", "|"]);
    assert_eq!(grid.rows[0][1].width, CellWidth::Wide);
    assert_eq!(grid.cursor.col, 4);
}

#[test]
fn combining_accent_still_joins_the_previous_cell() {
    let grid = cells(20, "e\u{301}|".as_bytes());
    assert_eq!(row(&grid, 0)[..2], ["e\u{301}", "|"]);
}

#[test]
fn characters_glibc_counts_as_zero_columns_join_the_previous_cell() {
    // The interlinear annotation anchor: one column for unicode-width, none for glibc.
    let grid = cells(20, "a\u{FFF9}|".as_bytes());
    assert_eq!(row(&grid, 0)[..2], ["a\u{FFF9}", "|"]);
    // After a wide character, on its first cell, as alacritty places combining marks.
    let grid = cells(20, "\u{4E00}\u{FFF9}|".as_bytes());
    assert_eq!(row(&grid, 0)[..3], ["\u{4E00}\u{FFF9}", "~", "|"]);
}

#[test]
fn cjk_and_emoji_keep_two_columns() {
    // U+1FAE8 is Unicode 15: glibc 2.36 does not know it, the emulator keeps it wide.
    for c in ['\u{4E00}', '\u{1F600}', '\u{1FAE8}'] {
        let bytes = format!("{c}|");
        assert_eq!(bar_column(bytes.as_bytes()), Some(2), "U+{:04X}", c as u32);
    }
}

#[test]
fn a_corrected_character_in_the_last_column_waits_to_wrap() {
    let grid = cells(5, "abcd\u{9BE}|".as_bytes());
    assert_eq!(row(&grid, 0), ["a", "b", "c", "d", "\u{9BE}"]);
    assert_eq!(row(&grid, 1)[0], "|");
}

#[test]
fn a_wide_filler_that_does_not_fit_wraps_like_a_cjk_character() {
    let grid = cells(5, "abcd\u{3164}|".as_bytes());
    assert_eq!(row(&grid, 0)[..4], ["a", "b", "c", "d"]);
    assert_eq!(row(&grid, 1)[..3], ["\u{3164}", "~", "|"]);
}

#[test]
fn without_line_wrap_a_wide_filler_at_the_end_is_dropped_like_a_cjk_character() {
    // The last two columns hold a CJK character, the cursor waits on its spacer.
    let before = "\x1b[?7labc\u{4E00}";
    let filler = cells(5, format!("{before}\u{3164}").as_bytes());
    let cjk = cells(5, format!("{before}\u{4E01}").as_bytes());
    assert_eq!(row(&filler, 0), ["a", "b", "c", "\u{4E00}", "~"]);
    assert_eq!(row(&filler, 0), row(&cjk, 0));
    // A one-column correction overwrites the last column, as any one-column character would.
    let narrow = cells(5, "\x1b[?7labcde\u{9BE}".as_bytes());
    assert_eq!(row(&narrow, 0), ["a", "b", "c", "d", "\u{9BE}"]);
}

#[test]
fn insert_mode_shifts_by_the_corrected_width() {
    let grid = cells(10, "ab\r\x1b[4h\u{9BE}\u{3164}".as_bytes());
    assert_eq!(row(&grid, 0)[..5], ["\u{9BE}", "\u{3164}", "~", "a", "b"]);
}

#[test]
fn line_drawing_maps_ascii_but_not_the_corrected_characters() {
    let grid = cells(10, "\x1b(0q\u{9BE}q\x1b(B".as_bytes());
    assert_eq!(row(&grid, 0)[..3], ["─", "\u{9BE}", "─"]);
}

#[test]
fn a_synchronized_update_places_characters_the_same_way() {
    let bytes = "\x1b[?2026ha\u{995}\u{9BE}|\u{3164}|\x1b[?2026l".as_bytes();
    let grid = cells(20, bytes);
    assert_eq!(
        row(&grid, 0)[..7],
        ["a", "\u{995}", "\u{9BE}", "|", "\u{3164}", "~", "|"]
    );
    // An update never closed, given up on at its deadline.
    let mut open = screen(20, "\x1b[?2026ha\u{9BE}|".as_bytes());
    open.flush_sync();
    assert_eq!(row(&open.cells(), 0)[..3], ["a", "\u{9BE}", "|"]);
}

#[test]
fn text_and_hash_hold_the_real_characters() {
    let bytes = "a\u{995}\u{9BE}|\u{3164}|\u{AD}\r\n".as_bytes();
    let mut first = screen(20, bytes);
    let mut second = screen(20, bytes);
    assert_eq!(
        first.text().lines().next(),
        Some("a\u{995}\u{9BE}|\u{3164}|\u{AD}")
    );
    assert_eq!(first.hash(), second.hash());
    // The stand-ins the emulator prints never show.
    let other = screen(20, "a\u{995}\u{FFFD}|\u{3000}|\u{FFFD}\r\n".as_bytes()).cells();
    assert_ne!(first.cells().rows, other.rows);
}

#[test]
fn scrolled_off_rows_keep_the_real_characters() {
    let mut screen = Screen::new(Size::new(20, 2), 100);
    screen.feed("a\u{9BE}|\u{3164}|\r\nx\r\ny\r\nz".as_bytes());
    assert_eq!(screen.scrollback_text(10), "a\u{9BE}|\u{3164}|\nx");
}

#[test]
fn find_text_counts_columns_as_the_screen_places_them() {
    let text = screen(20, "a\u{995}\u{9BE}|\u{3164}OK".as_bytes())
        .text()
        .to_owned();
    assert_eq!(find_text(&text, "OK", 0), Some(CellPos::new(6, 0)));
}
