//! alacritty's terminal, fed characters at the widths programs count (see [`crate::width`]).
//!
//! alacritty_terminal sizes every character it prints with unicode-width. [`Widths`] stands between
//! the parser and the terminal: a character whose width [`crate::width`] corrects is printed as a
//! stand-in alacritty gives that width (so the cursor, wrapping, insert mode and wide-character
//! spacers all move as they would for a character of that width), and the real character is then put
//! into the cell the stand-in took; a character that should take no room joins the previous cell, as
//! alacritty joins combining marks. Every other call goes straight to the terminal.

use alacritty_terminal::event::EventListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::index::Column;
use alacritty_terminal::term::cell::Flags;
use alacritty_terminal::term::{Term, TermMode};
use alacritty_terminal::vte::ansi::cursor_icon::CursorIcon;
use alacritty_terminal::vte::ansi::{
    Attr, CharsetIndex, ClearMode, CursorShape, CursorStyle, Handler, Hyperlink, KeyboardModes,
    KeyboardModesApplyBehavior, LineClearMode, Mode, ModifyOtherKeys, PrivateMode, Rgb,
    ScpCharPath, ScpUpdateMode, StandardCharset, TabulationClearMode,
};

use crate::width::corrected_width;

/// What alacritty prints in place of a one-column character it would give another width: one
/// column wide for unicode-width, and outside ASCII, so no character set (DEC line drawing) maps it.
const NARROW_STAND_IN: char = '\u{FFFD}';

/// The same for a two-column character.
const WIDE_STAND_IN: char = '\u{3000}';

/// The parser's handler: `term` with corrected widths.
pub(crate) struct Widths<'a, T> {
    term: &'a mut Term<T>,
}

impl<'a, T: EventListener> Widths<'a, T> {
    pub(crate) fn new(term: &'a mut Term<T>) -> Self {
        Widths { term }
    }

    /// `c` takes no column: into the cell before the cursor, with its combining marks. This is
    /// alacritty's own placement of a zero-width character (its `Term::input`).
    fn join_previous(&mut self, c: char) {
        let grid = self.term.grid_mut();
        let line = grid.cursor.point.line;
        let mut column = grid.cursor.point.column;
        // Once the last column is written the cursor stays on it, waiting to wrap.
        if !grid.cursor.input_needs_wrap {
            column.0 = column.0.saturating_sub(1);
        }
        // A wide character's marks go on its first cell.
        if grid[line][column].flags.contains(Flags::WIDE_CHAR_SPACER) {
            column.0 = column.0.saturating_sub(1);
        }
        grid[line][column].push_zerowidth(c);
    }

    /// `c` takes `width` (1 or 2) columns: alacritty prints a stand-in of that width, then `c`
    /// replaces it in its cell.
    fn stand_in(&mut self, c: char, width: usize) {
        let stand_in = if width == 2 {
            WIDE_STAND_IN
        } else {
            NARROW_STAND_IN
        };
        // Without line wrapping alacritty drops a wide character that does not fit before the last
        // column; the cell before the cursor is then not the stand-in's.
        let dropped = width == 2
            && !self.term.mode().contains(TermMode::LINE_WRAP)
            && self.term.grid().cursor.point.column.0 + 1 >= self.term.columns();
        Handler::input(self.term, stand_in);
        if dropped {
            return;
        }
        let grid = self.term.grid_mut();
        let point = grid.cursor.point;
        // The last cell written: the cursor's own when it waits to wrap, else the one before it.
        let last = if grid.cursor.input_needs_wrap {
            Some(point.column.0)
        } else {
            point.column.0.checked_sub(1)
        };
        let Some(first) = last.and_then(|last| last.checked_sub(width - 1)) else {
            return;
        };
        let cell = &mut grid[point.line][Column(first)];
        // Checked rather than assumed: should alacritty place characters differently one day, the
        // stand-in shows instead of another cell being overwritten.
        if cell.c == stand_in {
            cell.c = c;
        }
    }
}

impl<T: EventListener> Handler for Widths<'_, T> {
    fn input(&mut self, c: char) {
        match corrected_width(c) {
            None => Handler::input(self.term, c),
            Some(0) => self.join_previous(c),
            Some(width) => self.stand_in(c, width),
        }
    }

    fn set_title(&mut self, title: Option<String>) {
        Handler::set_title(self.term, title)
    }
    fn set_cursor_style(&mut self, style: Option<CursorStyle>) {
        Handler::set_cursor_style(self.term, style)
    }
    fn set_cursor_shape(&mut self, shape: CursorShape) {
        Handler::set_cursor_shape(self.term, shape)
    }
    fn goto(&mut self, line: i32, col: usize) {
        Handler::goto(self.term, line, col)
    }
    fn goto_line(&mut self, line: i32) {
        Handler::goto_line(self.term, line)
    }
    fn goto_col(&mut self, col: usize) {
        Handler::goto_col(self.term, col)
    }
    fn insert_blank(&mut self, count: usize) {
        Handler::insert_blank(self.term, count)
    }
    fn move_up(&mut self, lines: usize) {
        Handler::move_up(self.term, lines)
    }
    fn move_down(&mut self, lines: usize) {
        Handler::move_down(self.term, lines)
    }
    fn identify_terminal(&mut self, intermediate: Option<char>) {
        Handler::identify_terminal(self.term, intermediate)
    }
    fn device_status(&mut self, arg: usize) {
        Handler::device_status(self.term, arg)
    }
    fn move_forward(&mut self, col: usize) {
        Handler::move_forward(self.term, col)
    }
    fn move_backward(&mut self, col: usize) {
        Handler::move_backward(self.term, col)
    }
    fn move_down_and_cr(&mut self, row: usize) {
        Handler::move_down_and_cr(self.term, row)
    }
    fn move_up_and_cr(&mut self, row: usize) {
        Handler::move_up_and_cr(self.term, row)
    }
    fn put_tab(&mut self, count: u16) {
        Handler::put_tab(self.term, count)
    }
    fn backspace(&mut self) {
        Handler::backspace(self.term)
    }
    fn carriage_return(&mut self) {
        Handler::carriage_return(self.term)
    }
    fn linefeed(&mut self) {
        Handler::linefeed(self.term)
    }
    fn bell(&mut self) {
        Handler::bell(self.term)
    }
    fn substitute(&mut self) {
        Handler::substitute(self.term)
    }
    fn newline(&mut self) {
        Handler::newline(self.term)
    }
    fn set_horizontal_tabstop(&mut self) {
        Handler::set_horizontal_tabstop(self.term)
    }
    fn scroll_up(&mut self, lines: usize) {
        Handler::scroll_up(self.term, lines)
    }
    fn scroll_down(&mut self, lines: usize) {
        Handler::scroll_down(self.term, lines)
    }
    fn insert_blank_lines(&mut self, lines: usize) {
        Handler::insert_blank_lines(self.term, lines)
    }
    fn delete_lines(&mut self, lines: usize) {
        Handler::delete_lines(self.term, lines)
    }
    fn erase_chars(&mut self, count: usize) {
        Handler::erase_chars(self.term, count)
    }
    fn delete_chars(&mut self, count: usize) {
        Handler::delete_chars(self.term, count)
    }
    fn move_backward_tabs(&mut self, count: u16) {
        Handler::move_backward_tabs(self.term, count)
    }
    fn move_forward_tabs(&mut self, count: u16) {
        Handler::move_forward_tabs(self.term, count)
    }
    fn save_cursor_position(&mut self) {
        Handler::save_cursor_position(self.term)
    }
    fn restore_cursor_position(&mut self) {
        Handler::restore_cursor_position(self.term)
    }
    fn clear_line(&mut self, mode: LineClearMode) {
        Handler::clear_line(self.term, mode)
    }
    fn clear_screen(&mut self, mode: ClearMode) {
        Handler::clear_screen(self.term, mode)
    }
    fn clear_tabs(&mut self, mode: TabulationClearMode) {
        Handler::clear_tabs(self.term, mode)
    }
    fn set_tabs(&mut self, interval: u16) {
        Handler::set_tabs(self.term, interval)
    }
    fn reset_state(&mut self) {
        Handler::reset_state(self.term)
    }
    fn reverse_index(&mut self) {
        Handler::reverse_index(self.term)
    }
    fn terminal_attribute(&mut self, attr: Attr) {
        Handler::terminal_attribute(self.term, attr)
    }
    fn set_mode(&mut self, mode: Mode) {
        Handler::set_mode(self.term, mode)
    }
    fn unset_mode(&mut self, mode: Mode) {
        Handler::unset_mode(self.term, mode)
    }
    fn report_mode(&mut self, mode: Mode) {
        Handler::report_mode(self.term, mode)
    }
    fn set_private_mode(&mut self, mode: PrivateMode) {
        Handler::set_private_mode(self.term, mode)
    }
    fn unset_private_mode(&mut self, mode: PrivateMode) {
        Handler::unset_private_mode(self.term, mode)
    }
    fn report_private_mode(&mut self, mode: PrivateMode) {
        Handler::report_private_mode(self.term, mode)
    }
    fn set_scrolling_region(&mut self, top: usize, bottom: Option<usize>) {
        Handler::set_scrolling_region(self.term, top, bottom)
    }
    fn set_keypad_application_mode(&mut self) {
        Handler::set_keypad_application_mode(self.term)
    }
    fn unset_keypad_application_mode(&mut self) {
        Handler::unset_keypad_application_mode(self.term)
    }
    fn set_active_charset(&mut self, index: CharsetIndex) {
        Handler::set_active_charset(self.term, index)
    }
    fn configure_charset(&mut self, index: CharsetIndex, charset: StandardCharset) {
        Handler::configure_charset(self.term, index, charset)
    }
    fn set_color(&mut self, index: usize, rgb: Rgb) {
        Handler::set_color(self.term, index, rgb)
    }
    fn dynamic_color_sequence(&mut self, prefix: String, index: usize, terminator: &str) {
        Handler::dynamic_color_sequence(self.term, prefix, index, terminator)
    }
    fn reset_color(&mut self, index: usize) {
        Handler::reset_color(self.term, index)
    }
    fn clipboard_store(&mut self, clipboard: u8, data: &[u8]) {
        Handler::clipboard_store(self.term, clipboard, data)
    }
    fn clipboard_load(&mut self, clipboard: u8, terminator: &str) {
        Handler::clipboard_load(self.term, clipboard, terminator)
    }
    fn decaln(&mut self) {
        Handler::decaln(self.term)
    }
    fn push_title(&mut self) {
        Handler::push_title(self.term)
    }
    fn pop_title(&mut self) {
        Handler::pop_title(self.term)
    }
    fn text_area_size_pixels(&mut self) {
        Handler::text_area_size_pixels(self.term)
    }
    fn text_area_size_chars(&mut self) {
        Handler::text_area_size_chars(self.term)
    }
    fn set_hyperlink(&mut self, hyperlink: Option<Hyperlink>) {
        Handler::set_hyperlink(self.term, hyperlink)
    }
    fn set_mouse_cursor_icon(&mut self, icon: CursorIcon) {
        Handler::set_mouse_cursor_icon(self.term, icon)
    }
    fn report_keyboard_mode(&mut self) {
        Handler::report_keyboard_mode(self.term)
    }
    fn push_keyboard_mode(&mut self, mode: KeyboardModes) {
        Handler::push_keyboard_mode(self.term, mode)
    }
    fn pop_keyboard_modes(&mut self, to_pop: u16) {
        Handler::pop_keyboard_modes(self.term, to_pop)
    }
    fn set_keyboard_mode(&mut self, mode: KeyboardModes, behavior: KeyboardModesApplyBehavior) {
        Handler::set_keyboard_mode(self.term, mode, behavior)
    }
    fn set_modify_other_keys(&mut self, mode: ModifyOtherKeys) {
        Handler::set_modify_other_keys(self.term, mode)
    }
    fn report_modify_other_keys(&mut self) {
        Handler::report_modify_other_keys(self.term)
    }
    fn set_scp(&mut self, char_path: ScpCharPath, update_mode: ScpUpdateMode) {
        Handler::set_scp(self.term, char_path, update_mode)
    }
}
