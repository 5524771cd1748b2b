//! The terminal emulator: alacritty_terminal fed with the bytes a program writes, read back as text,
//! hashes, cells and input modes.
//!
//! [`Screen`] does no I/O. Bytes go in through [`Screen::feed`]; whatever the terminal must answer
//! (device attributes, cursor position reports, DECRQM, colour queries) comes back as bytes for the caller
//! to write to the pty, so applications that query the terminal never stall.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use alacritty_terminal::event::{Event, EventListener, WindowSize};
use alacritty_terminal::grid::{Dimensions, Grid};
use alacritty_terminal::index::{Column, Line, Point};
use alacritty_terminal::term::cell::{Cell as TermCell, Flags};
use alacritty_terminal::term::{Config, Term, TermMode};
use alacritty_terminal::vte::ansi::{
    self, CharsetIndex, Color as AnsiColor, CursorShape as AnsiCursorShape, NamedColor, Processor,
    StandardCharset, StdSyncHandler,
};
use xxhash_rust::xxh3::Xxh3;

use crate::color::{Color, Rgb};
use crate::geometry::Size;
use crate::grid::{Attrs, Cell, CellGrid, CellWidth, Cursor, CursorShape};
use crate::history::{row_text, visible_char, History};
use crate::modes::{InputModes, MouseEncoding, MouseTracking};
use crate::osc_limit::OscLimit;
use crate::palette::{Theme, BACKGROUND_INDEX, FOREGROUND_INDEX};
use crate::scroll_scan::Scanner;
use crate::sequence_state::SequenceState;
use crate::unseen_lines;
use crate::width_handler::Widths;

mod images_glue;

pub use crate::geometry::NOMINAL_CELL_PIXELS;

/// The most bytes of a window title kept; a longer title is cut (at a character boundary), so every
/// `list` and wait answer that carries it stays small.
pub const MAX_TITLE_BYTES: usize = 1024;

/// Everything the emulator wants to tell the outside world, gathered while it parses.
#[derive(Default)]
struct Outbox {
    /// Bytes to write back to the pty (answers to queries).
    replies: Vec<u8>,
    title: Option<String>,
    bells: u64,
}

#[derive(Clone)]
struct Listener {
    outbox: Arc<Mutex<Outbox>>,
    /// The colours used to answer colour queries (OSC 4/10/11 with `?`).
    theme: Arc<Theme>,
    size: Arc<Mutex<Size>>,
}

impl EventListener for Listener {
    fn send_event(&self, event: Event) {
        let Ok(mut outbox) = self.outbox.lock() else {
            return;
        };
        match event {
            Event::PtyWrite(text) => outbox.replies.extend_from_slice(text.as_bytes()),
            Event::Title(title) => outbox.title = Some(title),
            Event::ResetTitle => outbox.title = None,
            Event::Bell => outbox.bells += 1,
            Event::ColorRequest(index, format) => {
                let rgb = match index as u16 {
                    FOREGROUND_INDEX => self.theme.foreground,
                    BACKGROUND_INDEX => self.theme.background,
                    i if i < 256 => self.theme.indexed(i as u8),
                    _ => self.theme.cursor,
                };
                let reply = format(ansi::Rgb {
                    r: rgb.r,
                    g: rgb.g,
                    b: rgb.b,
                });
                outbox.replies.extend_from_slice(reply.as_bytes());
            }
            Event::TextAreaSizeRequest(format) => {
                let size = self.size.lock().map(|s| *s).unwrap_or_default();
                let reply = format(WindowSize {
                    num_lines: size.rows,
                    num_cols: size.cols,
                    cell_width: NOMINAL_CELL_PIXELS.0,
                    cell_height: NOMINAL_CELL_PIXELS.1,
                });
                outbox.replies.extend_from_slice(reply.as_bytes());
            }
            // No clipboard is shared with applications: answer reads with an empty clipboard.
            Event::ClipboardLoad(_, format) => {
                outbox.replies.extend_from_slice(format("").as_bytes())
            }
            _ => {}
        }
    }
}

struct TermDims(Size);

/// alacritty_terminal needs at least two columns (a wide character in one column panics) and one row.
fn usable(size: Size) -> Size {
    Size::new(size.cols.max(2), size.rows.max(1))
}

impl Dimensions for TermDims {
    fn total_lines(&self) -> usize {
        self.0.rows as usize
    }
    fn screen_lines(&self) -> usize {
        self.0.rows as usize
    }
    fn columns(&self) -> usize {
        self.0.cols as usize
    }
}

/// Rows of history alacritty keeps beyond a screenful, between pieces of input (see
/// [`crate::history`]): each piece of input may push at most this many rows, less [`SLACK`].
const WINDOW_EXTRA_ROWS: usize = 100;

/// Rows of margin between what a piece of input is counted to push and alacritty's window.
const SLACK: u64 = 8;

/// The rows `0..rows`, from `start` (or the last row) down to 0, then the rest.
fn first_at(rows: usize, start: u64) -> impl Iterator<Item = usize> {
    let top = usize::try_from(start.saturating_add(1)).map_or(rows, |top| top.min(rows));
    (0..top).rev().chain(top..rows)
}

/// Where the cells of row `line` are: alacritty moves rows around in its ring of rows but never their
/// cells, so this tells a row apart wherever it went (history rows are negative lines).
fn row_address(grid: &Grid<TermCell>, line: i32) -> usize {
    &grid[Line(line)][Column(0)] as *const TermCell as usize
}

/// How many rows of history alacritty keeps for a screen of `size`.
fn window_limit(size: Size, scrollback: usize) -> usize {
    (usize::from(size.rows) + WINDOW_EXTRA_ROWS).min(scrollback)
}

fn term_config(history: usize) -> Config {
    Config {
        scrolling_history: history,
        kitty_keyboard: true,
        ..Config::default()
    }
}

/// How alacritty's own history of the primary screen relates to the history kept as text.
#[derive(Default)]
struct Window {
    /// Rows alacritty keeps between pieces of input.
    limit: usize,
    /// alacritty's limit now (raised for a piece that may push more).
    current: usize,
    /// Rows in alacritty's history at the last copy; the newest this many rows of the text history are
    /// copies of them.
    rows: usize,
    /// Address of the cells of the newest of them.
    newest: Option<usize>,
    /// alacritty reflowed its rows (a resize): the copies are stale.
    resync: bool,
    /// Bytes fed so far (what a synchronized update holds is the last of them).
    fed: u64,
    /// Where in the input the oldest and the newest clears of the primary screen's history (CSI 3 J,
    /// ESC c) not accounted for end.
    clears: Option<(u64, u64)>,
    /// The most rows pushed, or waiting to be pushed, that are not copied yet: held by a synchronized
    /// update, or pushed on the primary screen while the alternate one is shown.
    pending: u64,
    /// Since the last copy, more rows may have been pushed than alacritty's limit.
    overflow: bool,
}

/// A terminal screen: feed it bytes, read what a person would see.
pub struct Screen {
    term: Term<Listener>,
    parser: Processor<StdSyncHandler>,
    /// Bounds what the parser buffers for one OSC string.
    osc_limit: OscLimit,
    /// Never decreases; grows by at least the number of lines pushed into history (see
    /// [`Screen::scroll_bound`]).
    scroll_bound: u64,
    /// Where the byte scanner that bounds scrolling stands between chunks.
    scan: Scanner,
    /// Whether the parser stands between sequences after the bytes fed so far.
    sequence: SequenceState,
    /// Lines taken into the history without alacritty running them (see [`Screen::feed_unseen`]).
    #[cfg(test)]
    pub(crate) unseen: usize,
    /// The history limit asked for, in lines.
    scrollback: usize,
    /// The history as text (see [`crate::history`]); alacritty keeps only the newest rows of it.
    /// `None` keeps all of it in alacritty, as before the compact store (tests compare the two).
    history: Option<History>,
    /// How the primary screen's own history in alacritty relates to `history`.
    window: Window,
    outbox: Arc<Mutex<Outbox>>,
    size: Arc<Mutex<Size>>,
    title: Option<String>,
    /// Counts every feed, resize and sync flush; cached text is valid for one generation.
    generation: u64,
    cache: Option<(u64, String)>,
    /// The same for [`Screen::search_text`].
    search_cache: Option<(u64, String)>,
    /// The same for [`Screen::history_search_tail`]: the generation, how many history rows the text
    /// covers, and the text. Several waits searching the history after one chunk of output share it.
    history_cache: Option<(u64, usize, String)>,
    /// Pictures programs draw, when shown at all ([`Screen::set_images`]).
    images: Option<Box<crate::images::Images>>,
}

impl Screen {
    /// A blank screen of `size` keeping at most `scrollback` lines of history.
    pub fn new(size: Size, scrollback: usize) -> Screen {
        Screen::with_theme(size, scrollback, Theme::dark())
    }

    /// Like [`Screen::new`], answering colour queries from `theme`.
    /// Sizes below 2x1 are raised to 2x1.
    pub fn with_theme(size: Size, scrollback: usize, theme: Theme) -> Screen {
        let size = usable(size);
        let outbox = Arc::new(Mutex::new(Outbox::default()));
        let shared_size = Arc::new(Mutex::new(size));
        let listener = Listener {
            outbox: outbox.clone(),
            theme: Arc::new(theme),
            size: shared_size.clone(),
        };
        let kept = window_limit(size, scrollback);
        Screen {
            term: Term::new(term_config(kept), &TermDims(size), listener),
            parser: Processor::new(),
            osc_limit: OscLimit::default(),
            scroll_bound: 0,
            scan: Scanner::default(),
            sequence: SequenceState::Ground,
            #[cfg(test)]
            unseen: 0,
            scrollback,
            history: (scrollback > 0).then(|| History::new(scrollback)),
            window: Window {
                limit: kept,
                current: kept,
                ..Window::default()
            },
            outbox,
            size: shared_size,
            title: None,
            generation: 0,
            cache: None,
            search_cache: None,
            history_cache: None,
            images: None,
        }
    }

    #[cfg(test)]
    pub(crate) fn alacritty_history(&self) -> usize {
        self.term.grid().history_size()
    }

    /// The history alacritty itself holds, as [`Screen::scrollback_text`] (or, joined,
    /// [`Screen::scrollback_search_text`]) would show it.
    #[cfg(test)]
    pub(crate) fn alacritty_scrollback_text(&self, join_wrapped: bool) -> String {
        let rows = if self.alt_screen() {
            0
        } else {
            self.term.grid().history_size()
        };
        self.lines_text(-(rows as i32), 0, join_wrapped)
    }

    /// A screen keeping all its history in alacritty, as before the history kept as text: what the
    /// tests compare with.
    #[cfg(test)]
    pub(crate) fn uncompacted(size: Size, scrollback: usize) -> Screen {
        let mut screen = Screen::new(size, scrollback);
        screen.history = None;
        screen.term.set_options(term_config(scrollback));
        screen.window.limit = scrollback;
        screen.window.current = scrollback;
        screen
    }

    /// Parse bytes written by the application. Returns the bytes the terminal must answer with
    /// (empty when there is nothing to answer); the caller writes them to the pty.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<u8> {
        if self.images.is_some() {
            return self.feed_with_images(bytes);
        }
        self.feed_text(bytes);
        self.generation += 1;
        self.drain_outbox()
    }

    /// Run bytes that hold no picture through the emulator.
    fn feed_text(&mut self, bytes: &[u8]) {
        let bytes = self.osc_limit.filter(bytes);
        let mut rest: &[u8] = &bytes;
        if self.history.is_some() && !self.alt_screen() {
            let cols = self.term.columns();
            while let Some(run) = unseen_lines::find(rest, cols, self.unseen_minimum() + 1) {
                self.feed_pieces(&rest[..run.start]);
                self.feed_unseen(&rest[run.start..run.end], run.lines);
                rest = &rest[run.end..];
            }
        }
        self.feed_pieces(rest);
        if self.parser.sync_bytes_count() == 0 {
            let alt = self.alt_screen();
            self.scan.settle(alt);
        }
    }

    /// Run `bytes` through the emulator in pieces, each pushing no more rows into alacritty's history
    /// than its window holds, and copy what they push into the history kept as text.
    fn feed_pieces(&mut self, bytes: &[u8]) {
        self.sequence = self.sequence.after(bytes);
        let mut rest = bytes;
        while !rest.is_empty() {
            // Buffered bytes of a synchronized update may all run now, with whatever they scroll.
            let buffered = self.parser.sync_bytes_count() > 0;
            let (budget, base) = match self.history {
                // Pieces small enough that alacritty's window of history never loses a row before
                // it is copied out. What a synchronized update holds can only run all at once, and
                // rows not copied yet add to what the next piece pushes: then alacritty keeps more.
                Some(_) if self.window.pending == 0 && !buffered => {
                    ((self.window.limit as u64).saturating_sub(SLACK), 0)
                }
                Some(_) => (u64::MAX, self.window.pending),
                None if buffered => (
                    u64::MAX,
                    self.term.grid().history_size() as u64 + self.term.screen_lines() as u64,
                ),
                None => (u64::MAX, 0),
            };
            let rows = self.term.screen_lines() as u64;
            let cols = self.term.columns() as u64;
            let piece = self.scan.next_piece(rest, rows, cols, base, budget);
            let (run, next) = rest.split_at(piece.len);
            rest = next;
            self.scan = piece.scanner;
            if self.history.is_none() {
                self.scroll_bound += piece.bound;
                self.advance(run);
                continue;
            }
            if piece.clears {
                let at = self.window.fed + piece.len as u64;
                let first = self.window.clears.map_or(at, |(first, _)| first);
                self.window.clears = Some((first, at));
            }
            self.window.fed += piece.len as u64;
            self.run_piece(piece.bound, |screen| screen.advance(run));
        }
    }

    /// Run `bytes` through the parser into the terminal, with the widths programs count (see
    /// [`crate::width_handler`]).
    fn advance(&mut self, bytes: &[u8]) {
        self.parser.advance(&mut Widths::new(&mut self.term), bytes);
        self.relocate_images();
    }

    /// Run what a synchronized update holds, as [`Screen::advance`] would.
    fn stop_sync(&mut self) {
        self.parser.stop_sync(&mut Widths::new(&mut self.term));
        self.relocate_images();
    }

    /// The most lines of a run of plain lines alacritty still runs: enough to leave its screen and
    /// its window of history as they would be had it run them all.
    fn unseen_minimum(&self) -> usize {
        self.window.limit + self.term.screen_lines() - 1
    }

    /// Run `run`: the line feed ending a line (after its CR), then `lines` plain lines (see
    /// [`crate::unseen_lines`]). When the terminal is certain to print each of them from column 0 of
    /// a freshly scrolled bottom row, all but the last [`Screen::unseen_minimum`] go straight into
    /// the history as text; the screen, alacritty's window and the history end as if alacritty had
    /// run them all. Otherwise the run goes through alacritty like any other output.
    fn feed_unseen(&mut self, run: &[u8], lines: usize) {
        let rows = self.term.screen_lines();
        let skipped = lines.saturating_sub(self.unseen_minimum());
        if skipped == 0 || !self.prints_plain_lines_at_the_bottom() {
            self.feed_pieces(run);
            return;
        }
        // The line feed must scroll the whole screen into the history (no scroll region).
        let top = row_address(self.term.grid(), 0);
        self.feed_pieces(&run[..1]);
        let grid = self.term.grid();
        let scrolled = grid.history_size() > 0
            && row_address(grid, -1) == top
            && grid.cursor.point.line == Line(rows as i32 - 1);
        if !scrolled {
            self.feed_pieces(&run[1..]);
            return;
        }
        // The run's next line feeds push the rest of the screen into the history before any of its
        // lines: push it now. The screen is then blank rows cleared as scrolling clears them.
        self.run_piece(rows as u64, |screen| {
            for _ in 1..rows {
                screen.advance(b"\n");
            }
        });
        // The skipped lines go after those rows and before what alacritty pushes next: its window,
        // all copied already, starts afresh.
        self.term.grid_mut().clear_history();
        self.window.rows = 0;
        self.window.newest = None;
        let mut body = unseen_lines::Lines::new(&run[1..]);
        if let Some(history) = self.history.as_mut() {
            let mut next = 0;
            history.extend(skipped, |i, out| {
                // The rows a full history would drop at once are never asked for.
                let line = body.nth(i - next).unwrap_or_default();
                next = i + 1;
                // As the history keeps a row: trailing blanks dropped.
                let shown = line.iter().rposition(|&b| b != b' ').map_or(0, |n| n + 1);
                out.extend_from_slice(&line[..shown]);
                false
            });
            if next < skipped {
                body.nth(skipped - next - 1);
            }
        }
        let split = 1 + body.offset();
        #[cfg(test)]
        {
            self.unseen += skipped;
        }
        self.scroll_bound += skipped as u64;
        self.window.fed += (split - 1) as u64;
        // The lines left, from the top row down, into rows as fresh as the ones they would have
        // scrolled into.
        self.run_piece(0, |screen| screen.advance(b"\x1b[H"));
        self.feed_pieces(&run[split..]);
    }

    /// Whether the next plain line is printed from column 0 of the bottom row, as it comes: the
    /// parser between sequences, nothing held back (no rows waiting to be copied, which is also the
    /// case while a synchronized update holds input: the CR before the run is held with it), the
    /// primary screen shown, the cursor at the start of the bottom row, and ASCII in every character
    /// set (DEC line drawing maps letters). Insert mode changes nothing on a freshly scrolled row.
    /// Whether the line feed before the line scrolls the whole screen is seen when it runs.
    fn prints_plain_lines_at_the_bottom(&self) -> bool {
        let cursor = &self.term.grid().cursor;
        let bottom = Point::new(Line(self.term.screen_lines() as i32 - 1), Column(0));
        self.sequence == SequenceState::Ground
            && self.window.pending == 0
            && !self.alt_screen()
            && cursor.point == bottom
            && !cursor.input_needs_wrap
            && [
                CharsetIndex::G0,
                CharsetIndex::G1,
                CharsetIndex::G2,
                CharsetIndex::G3,
            ]
            .into_iter()
            .all(|set| cursor.charsets[set] == StandardCharset::Ascii)
    }

    fn drain_outbox(&mut self) -> Vec<u8> {
        let Ok(mut outbox) = self.outbox.lock() else {
            return Vec::new();
        };
        if let Some(mut title) = outbox.title.take() {
            if title.len() > MAX_TITLE_BYTES {
                let mut end = MAX_TITLE_BYTES;
                while !title.is_char_boundary(end) {
                    end -= 1;
                }
                title.truncate(end);
            }
            self.title = Some(title);
        }
        std::mem::take(&mut outbox.replies)
    }

    /// While the application holds a synchronized update (mode 2026) open, the screen keeps showing the
    /// previous frame. This is when that update is given up on if it is never closed.
    pub fn sync_deadline(&self) -> Option<Instant> {
        self.parser.sync_timeout().sync_timeout()
    }

    /// The application holds a synchronized update (mode 2026) open: the screen shows the frame
    /// before it, and the one it is drawing is not whole yet.
    pub fn in_sync_frame(&self) -> bool {
        self.parser.sync_bytes_count() > 0
    }

    /// For each logical line of [`Screen::search_text`], the row it starts on (a line wider than
    /// the terminal goes on over the rows that follow).
    pub fn search_line_rows(&self) -> Vec<usize> {
        let grid = self.term.grid();
        let last_col = Column(self.term.columns().saturating_sub(1));
        let mut starts = vec![0];
        for row in 0..self.term.screen_lines() {
            let continues = grid[Line(row as i32)][last_col]
                .flags
                .contains(Flags::WRAPLINE);
            if !continues && row + 1 < self.term.screen_lines() {
                starts.push(row + 1);
            }
        }
        starts
    }

    /// Apply a synchronized update whose deadline passed. Returns replies like [`Screen::feed`].
    pub fn flush_sync(&mut self) -> Vec<u8> {
        if self.history.is_some() {
            let bound = self.window.pending;
            self.run_piece(bound, |screen| screen.stop_sync());
        } else {
            self.scroll_bound +=
                self.term.grid().history_size() as u64 + self.term.screen_lines() as u64;
            self.stop_sync();
        }
        self.generation += 1;
        self.drain_outbox()
    }

    pub fn size(&self) -> Size {
        Size::new(self.term.columns() as u16, self.term.screen_lines() as u16)
    }

    /// Sizes below 2x1 are raised to 2x1.
    ///
    /// alacritty reflows the rows it holds: the screen and the newest rows of history (a few more
    /// than a screenful). Older history keeps the width it was written at, as in xterm; its logical
    /// lines (what scrollback searches see) are the same at any width.
    pub fn resize(&mut self, size: Size) {
        let size = usable(size);
        // Rows are reflowed into new ones: pictures lose their anchors.
        if let Some(images) = self.images.as_mut() {
            images.placements.clear();
        }
        if self.history.is_some() {
            // Reflowing may make more rows of the window: none may fall out before they are copied.
            self.set_window_limit(self.scrollback);
            self.term.resize(TermDims(size));
            self.window.resync = true;
            self.window.limit = window_limit(size, self.scrollback);
            if self.collect(u64::MAX) && self.parser.sync_bytes_count() == 0 {
                self.window.pending = 0;
            }
        } else {
            self.term.resize(TermDims(size));
        }
        // A resize reflows the history: everything may be new to a search.
        self.scroll_bound += self.history_len() as u64 + self.term.screen_lines() as u64;
        if let Ok(mut shared) = self.size.lock() {
            *shared = size;
        }
        self.generation += 1;
    }

    /// A counter that grows by at least as many lines as have been pushed into the history since any
    /// earlier reading (and usually not by much more), so a search of the history can look only at the
    /// lines that are new: `history[-(now - then)..]`. Rows are counted as they are copied into the
    /// history; a resize or a cleared history counts the whole history and a screenful.
    pub fn scroll_bound(&self) -> u64 {
        self.scroll_bound
    }

    /// Run one piece of input (`run`), which can push at most `bound` rows into the history, then copy
    /// the rows it pushed out of alacritty.
    fn run_piece(&mut self, bound: u64, run: impl FnOnce(&mut Screen)) {
        let needed = usize::try_from(bound.saturating_add(SLACK)).unwrap_or(usize::MAX);
        // Only raised here: rows not copied yet (the primary screen was out of reach) must stay.
        let wanted = needed.clamp(self.window.limit, self.scrollback.max(self.window.limit));
        if wanted > self.window.current {
            self.set_window_limit(wanted);
        }
        let limit = self.window.current;
        run(self);
        // Until the rows are copied (maybe later, if the alternate screen is on now).
        self.window.overflow |= needed > limit;
        let copied = self.collect(bound);
        self.window.pending = if !copied || self.parser.sync_bytes_count() > 0 {
            bound
        } else {
            0
        };
    }

    /// Set how many rows of history alacritty keeps on the primary screen.
    fn set_window_limit(&mut self, limit: usize) {
        if limit == self.window.current {
            return;
        }
        if self.alt_screen() {
            // The primary screen is alacritty's inactive grid, reachable only through its options.
            self.term.set_options(term_config(limit));
        } else {
            self.term.grid_mut().update_history(limit);
        }
        self.window.current = limit;
    }

    /// Copy the rows that scrolled into alacritty's history since the last call into `history`, then
    /// bring alacritty's window of history back to its size.
    ///
    /// The newest row already copied is known by the address of its cells, which alacritty never moves
    /// while it rotates rows through history: the rows below it are new. When more rows may have
    /// scrolled than alacritty kept (`overflow`), that row may have gone round and come back. `bound`
    /// is at most a few rows more than scrolled since (see [`crate::scroll_scan`]): the search for
    /// that row starts there, and usually ends a few rows later.
    /// Returns false when the rows could not be copied yet.
    fn collect(&mut self, bound: u64) -> bool {
        if self.alt_screen() {
            // The primary screen is out of reach; its rows (and any clear of them) wait there until
            // it is shown again.
            return false;
        }
        let Some(history) = self.history.as_mut() else {
            return false;
        };
        let window = &mut self.window;
        let grid = self.term.grid();
        let rows = grid.history_size();
        let cols = grid.columns();
        // A clear has run once the synchronized update holding it (if any) has run.
        let ran = window.fed - self.parser.sync_bytes_count() as u64;
        let cleared = match window.clears {
            Some((first, last)) if first <= ran => {
                window.clears = (last > ran).then_some((last, last));
                true
            }
            _ => false,
        };
        let row_id = |line: usize| row_address(grid, -(line as i32) - 1);
        let grew = rows > window.rows;
        let mut rewritten = false;
        let new = if cleared {
            history.clear();
            rows
        } else if window.resync {
            history.truncate_newest(window.rows);
            rows
        } else if window.overflow && rows == window.current {
            // alacritty holds as many rows as the limit: they are the whole history.
            history.clear();
            rows
        } else {
            match window.newest {
                None => rows,
                Some(id) => match first_at(rows, bound).find(|&j| row_id(j) == id) {
                    Some(j) => {
                        // That row may have changed since, in one way: writing over a wide
                        // character at the start of the top screen row clears the spacer alacritty
                        // left at the end of the row above (for a wide character that did not fit
                        // there), history or not.
                        let row = &grid[Line(-(j as i32) - 1)];
                        rewritten = history.rewrite_newest(|out| row_text(row, cols, out));
                        j
                    }
                    // Not found: alacritty's rows were rearranged; take them all again.
                    None => {
                        history.truncate_newest(window.rows);
                        rows
                    }
                },
            }
        };
        window.resync = false;
        window.overflow = false;
        // Oldest first: the row `count` lines up the history is the oldest new one.
        let count = new.min(self.scrollback);
        history.extend(count, |i, out| {
            row_text(&grid[Line(i as i32 - count as i32)], cols, out)
        });
        window.newest = (rows > 0).then(|| row_id(0));
        window.rows = rows;
        // Every row that changed is among the newest `new` (the ones copied again after a truncation
        // included), and the newest one when it was rewritten: a search of the history looks at
        // no more than that. The oldest rows dropping at the limit changes none of the newest.
        self.scroll_bound += new as u64 + u64::from(rewritten);
        let kept = window.limit;
        let shrink = window.current > kept || rows > kept;
        self.set_window_limit(kept);
        let grid = self.term.grid_mut();
        self.window.rows = grid.history_size();
        if shrink || (grew && self.window.rows == kept) {
            // alacritty grows its history a thousand rows at a time and keeps what it no longer
            // needs as spare rows. Once the window is full it only rotates rows through it: free the
            // spare rows then, and after a raised limit, not while it fills (they would be allocated
            // again at once).
            grid.truncate();
        }
        true
    }

    /// Rows of history: those kept as text, or alacritty's own.
    fn history_len(&self) -> usize {
        if self.alt_screen() {
            return 0;
        }
        match &self.history {
            Some(history) => history.len(),
            None => self.term.grid().history_size(),
        }
    }

    /// Increases whenever the screen may have changed.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of bells rung so far.
    pub fn bells(&self) -> u64 {
        self.outbox.lock().map(|o| o.bells).unwrap_or(0)
    }

    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    /// True while a full-screen program owns the alternate screen.
    pub fn alt_screen(&self) -> bool {
        self.term.mode().contains(TermMode::ALT_SCREEN)
    }

    pub fn modes(&self) -> InputModes {
        let mode = *self.term.mode();
        let mouse_tracking = if mode.contains(TermMode::MOUSE_MOTION) {
            MouseTracking::Motion
        } else if mode.contains(TermMode::MOUSE_DRAG) {
            MouseTracking::Drag
        } else if mode.contains(TermMode::MOUSE_REPORT_CLICK) {
            MouseTracking::Click
        } else {
            MouseTracking::Off
        };
        let mouse_encoding = if mode.contains(TermMode::SGR_MOUSE) {
            MouseEncoding::Sgr
        } else if mode.contains(TermMode::UTF8_MOUSE) {
            MouseEncoding::Utf8
        } else {
            MouseEncoding::X10
        };
        let kitty_bits = [
            TermMode::DISAMBIGUATE_ESC_CODES,
            TermMode::REPORT_EVENT_TYPES,
            TermMode::REPORT_ALTERNATE_KEYS,
            TermMode::REPORT_ALL_KEYS_AS_ESC,
            TermMode::REPORT_ASSOCIATED_TEXT,
        ];
        let kitty_keyboard = kitty_bits
            .iter()
            .enumerate()
            .filter(|(_, bit)| mode.contains(**bit))
            .fold(0u8, |acc, (i, _)| acc | (1 << i));
        InputModes {
            app_cursor: mode.contains(TermMode::APP_CURSOR),
            app_keypad: mode.contains(TermMode::APP_KEYPAD),
            bracketed_paste: mode.contains(TermMode::BRACKETED_PASTE),
            mouse_tracking,
            mouse_encoding,
            focus_events: mode.contains(TermMode::FOCUS_IN_OUT),
            alternate_scroll: mode.contains(TermMode::ALTERNATE_SCROLL),
            kitty_keyboard,
        }
    }

    pub fn cursor(&self) -> Cursor {
        let point = self.term.grid().cursor.point;
        let style = self.term.cursor_style();
        let shape = match style.shape {
            AnsiCursorShape::Underline => CursorShape::Underline,
            AnsiCursorShape::Beam => CursorShape::Beam,
            AnsiCursorShape::HollowBlock => CursorShape::HollowBlock,
            AnsiCursorShape::Block | AnsiCursorShape::Hidden => CursorShape::Block,
        };
        Cursor {
            row: point.line.0.max(0) as u16,
            col: point.column.0 as u16,
            visible: self.term.mode().contains(TermMode::SHOW_CURSOR)
                && style.shape != AnsiCursorShape::Hidden,
            shape,
        }
    }

    /// The visible screen as text: one line per row, joined by `\n`, with no trailing padding (so
    /// `$`-anchored patterns work); on the cursor's row the text runs up to the cursor, so a prompt keeps
    /// the space it printed. Wide characters appear once.
    pub fn text(&mut self) -> &str {
        if self
            .cache
            .as_ref()
            .is_none_or(|(generation, _)| *generation != self.generation)
        {
            let rows = self.term.screen_lines() as i32;
            let text = self.lines_text(0, rows, false);
            self.cache = Some((self.generation, text));
        }
        self.cache
            .as_ref()
            .map(|(_, text)| text.as_str())
            .unwrap_or_default()
    }

    /// The visible screen as logical lines: like [`Screen::text`], but a line the terminal soft-wrapped
    /// at the right margin is joined back into one, as the program wrote it. Waits match regexes against
    /// this, so a pattern finds output that happens to be wider than the terminal.
    pub fn search_text(&mut self) -> &str {
        if self
            .search_cache
            .as_ref()
            .is_none_or(|(generation, _)| *generation != self.generation)
        {
            let rows = self.term.screen_lines() as i32;
            let text = self.lines_text(0, rows, true);
            self.search_cache = Some((self.generation, text));
        }
        self.search_cache
            .as_ref()
            .map(|(_, text)| text.as_str())
            .unwrap_or_default()
    }

    /// Rows of history above the visible screen (none on the alternate screen).
    pub fn history_rows(&self) -> usize {
        self.history_len()
    }

    /// Up to `max_lines` lines of history above the visible screen, oldest first, in the same form as
    /// [`Screen::text`]. Empty on the alternate screen, which has no history.
    pub fn scrollback_text(&self, max_lines: usize) -> String {
        self.history_text(max_lines, false)
    }

    /// The last `rows` rows of history (all when there are fewer), joined as [`Screen::lines_text`]
    /// joins them.
    fn history_text(&self, rows: usize, join_wrapped: bool) -> String {
        let rows = rows.min(self.history_len());
        match &self.history {
            Some(history) => history.text(rows, join_wrapped),
            None => self.lines_text(-(rows as i32), 0, join_wrapped),
        }
    }

    /// At least the last `rows` rows of history (maybe more) as logical lines, soft wraps joined, like
    /// [`Screen::scrollback_search_text`]. The text is kept for the current generation, so several
    /// searches of the same new lines build it once.
    pub fn history_search_tail(&mut self, rows: usize) -> &str {
        let rows = rows.min(self.history_len());
        if rows == 0 {
            return "";
        }
        let fresh = self
            .history_cache
            .as_ref()
            .is_some_and(|(generation, covered, _)| {
                *generation == self.generation && *covered >= rows
            });
        if !fresh {
            let text = self.history_text(rows, true);
            self.history_cache = Some((self.generation, rows, text));
        }
        let text = self
            .history_cache
            .as_ref()
            .map(|(_, _, text)| text.as_str())
            .unwrap_or_default();
        // Each logical line takes at least one row, so the last `rows` of them cover `rows` rows.
        let start = text
            .rmatch_indices('\n')
            .nth(rows - 1)
            .map_or(0, |(at, _)| at + 1);
        &text[start..]
    }

    /// Rows of history that went past the scrollback limit since the screen began (0 when the history
    /// is alacritty's own).
    pub fn history_dropped(&self) -> u64 {
        self.history.as_ref().map_or(0, History::dropped)
    }

    /// The scrollback as logical lines, soft wraps joined (see [`Screen::search_text`]).
    pub fn scrollback_search_text(&self, max_lines: usize) -> String {
        self.history_text(max_lines, true)
    }

    /// Lines in `[from, to)`, where 0 is the top visible row and negative lines are history.
    ///
    /// Trailing blanks are dropped, except on the row of a visible cursor, where everything up to the
    /// cursor is kept: a prompt such as `$ ` keeps its space, so `\$ $` finds it. With `join_wrapped`,
    /// a row the terminal soft-wrapped continues on the next without a line break.
    fn lines_text(&self, from: i32, to: i32, join_wrapped: bool) -> String {
        let grid = self.term.grid();
        let cursor = self.cursor();
        let mut out =
            String::with_capacity(((to - from).max(0) as usize) * (self.term.columns() + 1));
        let last_col = Column(self.term.columns().saturating_sub(1));
        let mut continues = false;
        for line in from..to {
            if line != from && !continues {
                out.push('\n');
            }
            let row = &grid[Line(line)];
            continues = join_wrapped && row[last_col].flags.contains(Flags::WRAPLINE);
            let start = out.len();
            let keep_to_cursor = cursor.visible && line == i32::from(cursor.row);
            let mut keep = 0;
            for col in 0..self.term.columns() {
                if keep_to_cursor && col == usize::from(cursor.col) {
                    keep = out.len() - start;
                }
                let cell = &row[Column(col)];
                if cell
                    .flags
                    .intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER)
                {
                    continue;
                }
                out.push(visible_char(cell.c));
                if let Some(marks) = cell.zerowidth() {
                    out.extend(marks.iter());
                }
            }
            if !continues {
                let trimmed = out[start..].trim_end_matches(' ').len().max(keep);
                out.truncate(start + trimmed);
            }
        }
        out
    }

    /// xxh3 of the screen text: changes exactly when the text does.
    pub fn hash(&mut self) -> u64 {
        xxhash_rust::xxh3::xxh3_64(self.text().as_bytes())
    }

    /// xxh3 over text, colours, attributes, the cursor (position, shape, visibility) and the title:
    /// changes when anything a person would see changes, such as a selection bar moving.
    pub fn visual_hash(&self) -> u64 {
        let mut hasher = Xxh3::new();
        let grid = self.term.grid();
        for line in 0..self.term.screen_lines() as i32 {
            let row = &grid[Line(line)];
            for col in 0..self.term.columns() {
                let cell = &row[Column(col)];
                let mut buf = [0u8; 4];
                hasher.update(cell.c.encode_utf8(&mut buf).as_bytes());
                if let Some(marks) = cell.zerowidth() {
                    for mark in marks {
                        hasher.update(mark.encode_utf8(&mut buf).as_bytes());
                    }
                }
                hasher.update(&color_key(cell.fg));
                hasher.update(&color_key(cell.bg));
                hasher.update(&cell.flags.bits().to_le_bytes());
            }
        }
        let cursor = self.cursor();
        hasher.update(&[cursor.visible as u8, cursor.shape as u8]);
        hasher.update(&cursor.row.to_le_bytes());
        hasher.update(&cursor.col.to_le_bytes());
        hasher.update(self.title.as_deref().unwrap_or("").as_bytes());
        for image in self.images() {
            hasher.update(&image.number.to_le_bytes());
            hasher.update(&image.row.to_le_bytes());
        }
        hasher.digest()
    }

    /// True when no visible cell is drawn in reverse or on a background of its own: then nothing on
    /// the screen can read as selected or focused ([`crate::highlights`] finds nothing), and a reader
    /// wanting only highlights need not copy the cells. Cheap: no cell is copied.
    pub fn plain_backdrop(&self) -> bool {
        let grid = self.term.grid();
        (0..self.term.screen_lines() as i32).all(|line| {
            grid[Line(line)][..].iter().all(|cell| {
                !cell.flags.contains(Flags::INVERSE) && convert_color(cell.bg) == Color::Default
            })
        })
    }

    /// The whole visible screen as cells.
    pub fn cells(&self) -> CellGrid {
        let grid = self.term.grid();
        let rows = (0..self.term.screen_lines() as i32)
            .map(|line| {
                let row = &grid[Line(line)];
                (0..self.term.columns())
                    .map(|col| convert_cell(&row[Column(col)]))
                    .collect()
            })
            .collect();
        let colors = self.term.colors();
        let mut palette_overrides = Vec::new();
        for index in 0..256usize {
            if let Some(rgb) = colors[index] {
                palette_overrides.push((index as u16, Rgb::new(rgb.r, rgb.g, rgb.b)));
            }
        }
        for (named, index) in [
            (NamedColor::Foreground, FOREGROUND_INDEX),
            (NamedColor::Background, BACKGROUND_INDEX),
        ] {
            if let Some(rgb) = colors[named] {
                palette_overrides.push((index, Rgb::new(rgb.r, rgb.g, rgb.b)));
            }
        }
        CellGrid {
            size: self.size(),
            rows,
            cursor: self.cursor(),
            palette_overrides,
            title: self.title.clone(),
            images: self.images(),
        }
    }
}

fn color_key(color: AnsiColor) -> [u8; 4] {
    match color {
        AnsiColor::Named(named) => {
            let [a, b] = (named as u16).to_le_bytes();
            [0, a, b, 0]
        }
        AnsiColor::Spec(rgb) => [1, rgb.r, rgb.g, rgb.b],
        AnsiColor::Indexed(i) => [2, i, 0, 0],
    }
}

fn convert_color(color: AnsiColor) -> Color {
    match color {
        AnsiColor::Spec(rgb) => Color::Rgb(Rgb::new(rgb.r, rgb.g, rgb.b)),
        AnsiColor::Indexed(i) => Color::Indexed(i),
        AnsiColor::Named(named) => {
            let index = named as usize;
            if index < 16 {
                Color::Indexed(index as u8)
            } else if let Some(normal) = dim_to_normal(named) {
                // Dim colours are normal colours drawn with the dim attribute, which the cell carries.
                Color::Indexed(normal)
            } else {
                Color::Default
            }
        }
    }
}

fn dim_to_normal(named: NamedColor) -> Option<u8> {
    let dims = [
        NamedColor::DimBlack,
        NamedColor::DimRed,
        NamedColor::DimGreen,
        NamedColor::DimYellow,
        NamedColor::DimBlue,
        NamedColor::DimMagenta,
        NamedColor::DimCyan,
        NamedColor::DimWhite,
    ];
    dims.iter().position(|d| *d == named).map(|i| i as u8)
}

fn convert_cell(cell: &TermCell) -> Cell {
    let flags = cell.flags;
    let mut text = String::new();
    text.push(visible_char(cell.c));
    if let Some(marks) = cell.zerowidth() {
        text.extend(marks.iter());
    }
    let pairs = [
        (Flags::BOLD, Attrs::BOLD),
        (Flags::DIM, Attrs::DIM),
        (Flags::ITALIC, Attrs::ITALIC),
        (Flags::UNDERLINE, Attrs::UNDERLINE),
        (Flags::DOUBLE_UNDERLINE, Attrs::DOUBLE_UNDERLINE),
        (Flags::UNDERCURL, Attrs::UNDERCURL),
        (Flags::DOTTED_UNDERLINE, Attrs::DOTTED_UNDERLINE),
        (Flags::DASHED_UNDERLINE, Attrs::DASHED_UNDERLINE),
        (Flags::STRIKEOUT, Attrs::STRIKEOUT),
        (Flags::INVERSE, Attrs::INVERSE),
        (Flags::HIDDEN, Attrs::HIDDEN),
    ];
    let attrs = pairs
        .iter()
        .filter(|(f, _)| flags.contains(*f))
        .fold(0u16, |acc, (_, a)| acc | a);
    let width = if flags.contains(Flags::WIDE_CHAR) {
        CellWidth::Wide
    } else if flags.intersects(Flags::WIDE_CHAR_SPACER | Flags::LEADING_WIDE_CHAR_SPACER) {
        CellWidth::Spacer
    } else {
        CellWidth::Single
    };
    Cell {
        text,
        fg: convert_color(cell.fg),
        bg: convert_color(cell.bg),
        attrs: Attrs(attrs),
        width,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen() -> Screen {
        Screen::new(Size::new(20, 5), 100)
    }

    #[test]
    fn the_search_for_the_newest_copied_row_visits_every_row_once_from_its_start() {
        let order: Vec<usize> = first_at(6, 2).collect();
        assert_eq!(order, [2, 1, 0, 3, 4, 5]);
        assert_eq!(first_at(3, u64::MAX).collect::<Vec<_>>(), [2, 1, 0]);
        assert_eq!(first_at(3, 0).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(first_at(0, 5).count(), 0);
    }

    #[test]
    fn text_has_no_trailing_padding_and_one_line_per_row() {
        let mut s = screen();
        s.feed(b"hello   \r\nworld");
        assert_eq!(s.text(), "hello\nworld\n\n\n");
    }

    #[test]
    fn the_cursor_row_keeps_spaces_up_to_the_cursor() {
        let mut s = screen();
        s.feed(b"done   \r\n$ ");
        assert_eq!(s.text(), "done\n$ \n\n\n");
        // A hidden cursor keeps nothing extra.
        s.feed(b"\x1b[?25l");
        assert_eq!(s.text(), "done\n$\n\n\n");
    }

    #[test]
    fn search_text_joins_soft_wrapped_lines() {
        let mut s = screen();
        s.feed(format!("{}\r\nnext", "x".repeat(25)).as_bytes());
        assert_eq!(
            s.text(),
            format!("{}\n{}\nnext\n\n", "x".repeat(20), "x".repeat(5))
        );
        assert_eq!(s.search_text(), format!("{}\nnext\n\n", "x".repeat(25)));
        // A space at the wrap point is part of the line.
        let mut s = screen();
        s.feed(b"0123456789012345678 wrapped");
        assert_eq!(
            s.search_text().lines().next(),
            Some("0123456789012345678 wrapped")
        );
    }

    #[test]
    fn tabs_show_as_blanks() {
        let mut s = screen();
        s.feed(b"a\tb");
        assert_eq!(s.text().lines().next(), Some("a       b"));
        assert_eq!(s.cells().rows[0][1].text, " ");
    }

    #[test]
    fn wide_characters_appear_once() {
        let mut s = screen();
        s.feed("日本語 ok".as_bytes());
        assert_eq!(s.text().lines().next(), Some("日本語 ok"));
        assert_eq!(s.cells().rows[0][1].width, CellWidth::Spacer);
    }

    #[test]
    fn hash_tracks_text_and_visual_hash_tracks_style() {
        let mut s = screen();
        s.feed(b"abc");
        let (hash, visual) = (s.hash(), s.visual_hash());
        // Same text, now red: text hash unchanged, visual hash changed.
        s.feed(b"\r\x1b[31mabc\x1b[0m");
        assert_eq!(s.hash(), hash);
        assert_ne!(s.visual_hash(), visual);
        s.feed(b"d");
        assert_ne!(s.hash(), hash);
    }

    #[test]
    fn queries_are_answered() {
        let mut s = screen();
        assert_eq!(s.feed(b"ab\x1b[6n"), b"\x1b[1;3R");
        assert_eq!(s.feed(b"\x1b[c"), b"\x1b[?6c");
        assert!(s.feed(b"\x1b[>c").starts_with(b"\x1b[>0;"));
        // DECRQM: synchronized output is supported (reset), in-band resize (2048) is not.
        assert_eq!(s.feed(b"\x1b[?2026$p"), b"\x1b[?2026;2$y");
        assert_eq!(s.feed(b"\x1b[?2048$p"), b"\x1b[?2048;0$y");
        let reply = String::from_utf8(s.feed(b"\x1b]11;?\x07")).unwrap();
        assert!(reply.starts_with("\x1b]11;rgb:"), "{reply:?}");
    }

    #[test]
    fn modes_follow_the_application() {
        let mut s = screen();
        assert_eq!(
            s.modes(),
            InputModes {
                alternate_scroll: true,
                ..InputModes::default()
            }
        );
        s.feed(b"\x1b[?1h\x1b[?2004h\x1b[?1002h\x1b[?1006h\x1b[?1049h\x1b[>1u");
        let m = s.modes();
        assert!(m.app_cursor && m.bracketed_paste);
        assert_eq!(m.mouse_tracking, MouseTracking::Drag);
        assert_eq!(m.mouse_encoding, MouseEncoding::Sgr);
        assert_eq!(m.kitty_keyboard, 1);
        assert!(s.alt_screen());
        s.feed(b"\x1b[?1049l");
        assert!(!s.alt_screen());
    }

    #[test]
    fn synchronized_update_shows_no_half_frame() {
        let mut s = screen();
        s.feed(b"old");
        s.feed(b"\x1b[?2026h\x1b[2J\x1b[Hnew fr");
        assert_eq!(
            s.text().lines().next(),
            Some("old"),
            "mid-update the previous frame stays"
        );
        assert!(s.sync_deadline().is_some());
        s.feed(b"ame\x1b[?2026l");
        assert_eq!(s.text().lines().next(), Some("new frame"));
        assert!(s.sync_deadline().is_none());
    }

    #[test]
    fn tiny_sizes_are_raised_instead_of_panicking() {
        let mut s = Screen::new(Size::new(1, 0), 10);
        s.feed("中文".as_bytes());
        assert_eq!(s.size(), Size::new(2, 1));
        s.resize(Size::new(0, 0));
        s.feed("中".as_bytes());
        assert_eq!(s.size(), Size::new(2, 1));
    }

    #[test]
    fn a_huge_title_is_kept_cut_to_its_limit() {
        let mut s = Screen::new(Size::new(80, 24), 100);
        let mut input = b"\x1b]2;".to_vec();
        input.extend(
            std::iter::repeat_n(b'\xc3', 1)
                .chain(std::iter::repeat_n(b'\xa9', 1))
                .cycle()
                .take(10 << 20),
        );
        input.extend_from_slice(b"\x07after");
        s.feed(&input);
        let title = s.title().unwrap_or_default();
        assert!(title.len() <= super::MAX_TITLE_BYTES, "{}", title.len());
        assert!(title.len() > super::MAX_TITLE_BYTES - 4 && title.starts_with('\u{e9}'));
        assert!(s.text().contains("after"));
    }

    #[test]
    fn an_unterminated_osc_string_does_not_swallow_what_follows_its_end() {
        let mut s = Screen::new(Size::new(80, 24), 100);
        s.feed(b"\x1b]2;");
        let chunk = vec![b'x'; 1 << 16];
        for _ in 0..200 {
            s.feed(&chunk);
        }
        s.feed(b"\x1b\\visible");
        assert!(s.text().contains("visible"));
        assert!(s.title().unwrap_or_default().len() <= super::MAX_TITLE_BYTES);
    }

    #[test]
    fn scroll_bound_covers_every_line_pushed_into_history() {
        for mut s in [
            Screen::new(Size::new(10, 5), 1000),
            Screen::uncompacted(Size::new(10, 5), 1000),
        ] {
            let mut history = 0;
            let mut bound = s.scroll_bound();
            for chunk in [
                &b"1\n2\n3\n4\n5\n6\n7\n"[..],
                b"a long line that wraps several times\r\n",
                b"\x1b[3S\x1b[2J\x1bD\x1bE",
                b"\x1b[",
                b"4S",
                // Repeat the last character 300 times: 30 rows.
                b"x\x1b[300b",
                // Delete lines at the top row.
                b"\x1b[H\x1b[5M",
            ] {
                s.feed(chunk);
                let grew = (s.history_len() - history) as u64;
                assert!(s.scroll_bound() - bound >= grew, "{chunk:?}");
                history = s.history_len();
                bound = s.scroll_bound();
            }
        }
    }

    #[test]
    fn a_full_history_counts_only_the_rows_pushed_not_the_whole_history() {
        let mut s = Screen::new(Size::new(80, 24), 1000);
        let flood: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("{i}\r\n").into_bytes())
            .collect();
        for chunk in flood.chunks(4096) {
            let before = s.scroll_bound();
            s.feed(chunk);
            let feeds = chunk.iter().filter(|&&b| b == b'\n').count() as u64;
            // A waiting search of the history reads the rows this says are new: a full history
            // must not make every chunk look like a thousand new rows.
            assert!(
                s.scroll_bound() - before <= feeds + 24 + 8,
                "{} for {feeds} lines",
                s.scroll_bound() - before
            );
        }
        assert_eq!(s.history_len(), 1000);
    }

    #[test]
    fn history_tail_covers_the_rows_asked_for_and_is_shared() {
        let mut s = Screen::new(Size::new(10, 3), 100);
        for i in 0..20 {
            s.feed(format!("line{i}\r\n").as_bytes());
        }
        s.feed(b"0123456789abcdefghij\r\nA\r\nB\r\nC");
        let all = s.scrollback_search_text(100);
        assert_eq!(s.history_search_tail(100), all);
        assert!(all.ends_with("line19\n0123456789abcdefghij"), "{all}");
        assert_eq!(s.history_search_tail(1), "0123456789abcdefghij");
        assert!(s.history_search_tail(2).ends_with("\n0123456789abcdefghij"));
        assert!(s.history_search_tail(4).starts_with("line17\n"));
        assert_eq!(s.history_search_tail(0), "");
    }

    #[test]
    fn title_cursor_and_scrollback() {
        let mut s = screen();
        s.feed(b"\x1b]2;my title\x07");
        assert_eq!(s.title(), Some("my title"));
        for i in 0..10 {
            s.feed(format!("line {i}\r\n").as_bytes());
        }
        assert_eq!(s.scrollback_text(3), "line 3\nline 4\nline 5");
        let cursor = s.cursor();
        assert_eq!((cursor.row, cursor.col, cursor.visible), (4, 0, true));
        s.feed(b"\x1b[?25l");
        assert!(!s.cursor().visible);
    }
}
