//! What the ingest measurements share: the two terminals compared, raw alacritty_terminal and
//! `Screen`, of the same size and history, and the flood of short lines.

use alacritty_terminal::event::VoidListener;
use alacritty_terminal::grid::Dimensions;
use alacritty_terminal::term::{Config, Term};
use alacritty_terminal::vte::ansi::{Processor, StdSyncHandler};
use screenpilot_screen::{Screen, Size};

pub const COLS: u16 = 120;
pub const ROWS: u16 = 40;

/// Raw alacritty_terminal with its default 10,000 lines of history, and its parser.
pub fn raw_alacritty() -> (Term<VoidListener>, Processor<StdSyncHandler>) {
    (
        Term::new(Config::default(), &Dims, VoidListener),
        Processor::new(),
    )
}

/// screenpilot's screen of the same size and history.
pub fn screenpilot() -> Screen {
    Screen::new(Size::new(COLS, ROWS), 10_000)
}

struct Dims;

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
