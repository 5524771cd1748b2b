//! What each reader last saw of a session, so the next screen it is sent can be only what changed.
//!
//! A reader is a name its client gives (an MCP server names itself once per process; the CLI uses the
//! name it is told). The memory is small: a few readers per session, one screen each, the oldest
//! forgotten first; a reader that was forgotten is simply sent the whole screen again.

use std::time::Instant;

#[cfg(test)]
use screenpilot_screen::CursorShape;
use screenpilot_screen::{Cursor, Size};

/// How many readers a session remembers.
const READERS: usize = 8;

/// A screen as a reader saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// One line per row (the rows of the text shown).
    pub rows: Vec<String>,
    pub size: Size,
    pub cursor: Cursor,
    pub alt_screen: bool,
    pub title: Option<String>,
    pub alive: bool,
}

/// The last screen each reader saw.
#[derive(Debug, Default)]
pub struct Views {
    readers: Vec<(String, Seen, Instant)>,
}

impl Views {
    /// What `reader` saw last.
    pub fn last(&self, reader: &str) -> Option<&Seen> {
        self.readers
            .iter()
            .find(|(name, ..)| name == reader)
            .map(|(_, seen, _)| seen)
    }

    /// `reader` has now seen `seen`; past the limit, the reader heard from longest ago is forgotten.
    pub fn remember(&mut self, reader: &str, seen: Seen) {
        let now = Instant::now();
        if let Some(slot) = self.readers.iter_mut().find(|(name, ..)| name == reader) {
            slot.1 = seen;
            slot.2 = now;
            return;
        }
        if self.readers.len() == READERS {
            if let Some(oldest) = (0..self.readers.len()).min_by_key(|&i| self.readers[i].2) {
                self.readers.swap_remove(oldest);
            }
        }
        self.readers.push((reader.to_owned(), seen, now));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(text: &str) -> Seen {
        Seen {
            rows: vec![text.to_owned()],
            size: Size { cols: 10, rows: 1 },
            cursor: Cursor {
                row: 0,
                col: 0,
                visible: true,
                shape: CursorShape::Block,
            },
            alt_screen: false,
            title: None,
            alive: true,
        }
    }

    #[test]
    fn each_reader_keeps_its_own_last_screen_and_the_oldest_reader_goes_first() {
        let mut views = Views::default();
        views.remember("a", seen("1"));
        views.remember("b", seen("2"));
        views.remember("a", seen("3"));
        assert_eq!(views.last("a"), Some(&seen("3")));
        assert_eq!(views.last("b"), Some(&seen("2")));
        for n in 0..READERS {
            views.remember(&format!("r{n}"), seen("x"));
        }
        assert!(views.last("b").is_none(), "b was heard from longest ago");
        assert_eq!(views.readers.len(), READERS);
    }
}
