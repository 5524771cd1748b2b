//! The terminal size the ingest measurements use, for raw alacritty_terminal as for `Screen`.

use alacritty_terminal::grid::Dimensions;

pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;

pub struct Dims;

impl Dimensions for Dims {
    fn total_lines(&self) -> usize {
        ROWS as usize
    }
    fn screen_lines(&self) -> usize {
        ROWS as usize
    }
    fn columns(&self) -> usize {
        COLS as usize
    }
}
