//! What the ingest measurements share: the terminal size, for raw alacritty_terminal as for `Screen`,
//! and the flood of short lines.

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

/// About 1 MiB of short numbered lines, like `seq`: the most rows per byte pushed into the history.
pub fn seq_stream() -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 1u64;
    while out.len() < 1 << 20 {
        out.extend_from_slice(format!("{i}\r\n").as_bytes());
        i += 1;
    }
    out
}
