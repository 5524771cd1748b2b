//! Painting a screen onto another terminal: the bytes that make a person's terminal (or a browser
//! terminal) show what our emulator shows.
//!
//! Viewers are painted from the emulator's cells rather than sent the program's own output, so what
//! they see is exactly what `snapshot` reads, whatever state the program set up before they joined
//! (scroll regions, character sets, a pen colour) and whatever size their terminal is. The first
//! paint draws everything; later ones send only the cells that changed since the previous paint, so
//! a burst of output costs one small update, not a replay of every byte.
//!
//! Every paint positions the cursor absolutely and runs with auto-wrap off, so it never scrolls the
//! viewer's terminal, and is wrapped in a synchronized update (mode 2026) so no half-drawn frame shows.

use std::fmt::Write as _;
use std::time::Duration;

use crate::color::{Color, Rgb};
use crate::geometry::{CellPos, Size};
use crate::grid::{Attrs, Cell, CellGrid, CellWidth, Cursor, CursorShape};
use crate::modes::{InputModes, MouseEncoding, MouseTracking};
use crate::palette::{BACKGROUND_INDEX, FOREGROUND_INDEX};

/// The shortest time between two paints for one viewer while output keeps coming (60 a second): a
/// rate limit, not a delay; a change after a quiet spell is painted at once. Attach and the watch
/// page both pace their paints by it.
pub const PAINT_INTERVAL: Duration = Duration::from_millis(16);

/// Which part of the screen a viewer's terminal shows: a window of the viewer's size whose top-left
/// corner is the screen cell `origin`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewport {
    /// The viewer's terminal size.
    pub size: Size,
    /// The screen cell shown in the viewer's top-left corner.
    pub origin: CellPos,
}

impl Viewport {
    /// A viewer as large as the screen, showing all of it.
    pub fn whole(screen: Size) -> Viewport {
        Viewport {
            size: screen,
            origin: CellPos::new(0, 0),
        }
    }

    /// A viewer of `size` onto a screen of `screen`: the top-left part when the screen fits, else the
    /// window that keeps `cursor` in view, moved as little as possible from `previous`.
    pub fn following(
        size: Size,
        screen: Size,
        cursor: CellPos,
        previous: Option<Viewport>,
    ) -> Viewport {
        let axis = |viewer: u16, screen: u16, at: u16, was: u16| -> u16 {
            if screen <= viewer {
                return 0;
            }
            let most = screen - viewer;
            let start = was.min(most);
            if at < start {
                at
            } else if at >= start + viewer {
                (at + 1 - viewer).min(most)
            } else {
                start
            }
        };
        let was = previous.map(|v| v.origin).unwrap_or(CellPos::new(0, 0));
        Viewport {
            size,
            origin: CellPos::new(
                axis(size.cols, screen.cols, cursor.col.0, was.col.0),
                axis(size.rows, screen.rows, cursor.row.0, was.row.0),
            ),
        }
    }

    /// The screen cell shown at viewer cell (`col`, `row`), if the screen has one there.
    fn screen_cell<'g>(&self, grid: &'g CellGrid, col: u16, row: u16) -> Option<&'g Cell> {
        let row = grid.rows.get((self.origin.row.0 + row) as usize)?;
        row.get((self.origin.col.0 + col) as usize)
    }

    /// Where a screen position appears on the viewer, if it is in view.
    pub fn to_viewer(&self, pos: CellPos) -> Option<CellPos> {
        let col = pos.col.0.checked_sub(self.origin.col.0)?;
        let row = pos.row.0.checked_sub(self.origin.row.0)?;
        (col < self.size.cols && row < self.size.rows).then(|| CellPos::new(col, row))
    }

    /// The screen position under a viewer cell (for mouse events the viewer reports).
    pub fn to_screen(&self, pos: CellPos) -> CellPos {
        CellPos::new(
            pos.col.0.saturating_add(self.origin.col.0),
            pos.row.0.saturating_add(self.origin.row.0),
        )
    }
}

/// What was last painted, so the next paint sends only the difference.
#[derive(Debug, Clone)]
struct Painted {
    grid: CellGrid,
    modes: InputModes,
    viewport: Viewport,
}

/// Paints successive screens onto one viewer.
#[derive(Debug, Default, Clone)]
pub struct Painter {
    last: Option<Painted>,
}

impl Painter {
    pub fn new() -> Painter {
        Painter::default()
    }

    /// Draw everything again on the next paint (the viewer was resized or cleared).
    pub fn forget(&mut self) {
        self.last = None;
    }

    /// The bytes that bring the viewer from the previous paint to `grid` as seen through `viewport`,
    /// with the viewer's input modes set to the application's `modes` (so the person's keys and mouse
    /// are encoded as the application expects). Empty when nothing visible changed.
    pub fn paint(&mut self, grid: &CellGrid, modes: &InputModes, viewport: Viewport) -> Vec<u8> {
        let previous = self
            .last
            .take()
            .filter(|last| last.viewport == viewport && last.grid.size == grid.size);
        let mut out = String::new();
        match &previous {
            None => {
                // Reset the pen, switch auto-wrap off, clear the viewer and start from blank cells.
                out.push_str("\x1b[0m\x1b[?7l\x1b[H\x1b[2J");
                paint_palette(&mut out, &[], &grid.palette_overrides);
                paint_modes(&mut out, None, modes);
                paint_title(&mut out, None, grid.title.as_deref());
                paint_rows(&mut out, None, grid, viewport);
            }
            Some(last) => {
                paint_palette(
                    &mut out,
                    &last.grid.palette_overrides,
                    &grid.palette_overrides,
                );
                paint_modes(&mut out, Some(&last.modes), modes);
                paint_title(&mut out, last.grid.title.as_deref(), grid.title.as_deref());
                paint_rows(&mut out, Some(&last.grid), grid, viewport);
            }
        }
        let cursor_moved = previous
            .as_ref()
            .is_none_or(|last| last.grid.cursor != grid.cursor);
        if !out.is_empty() || cursor_moved {
            paint_cursor(&mut out, &grid.cursor, viewport);
        }
        self.last = Some(Painted {
            grid: grid.clone(),
            modes: *modes,
            viewport,
        });
        if out.is_empty() {
            return Vec::new();
        }
        format!("\x1b[?2026h{out}\x1b[?2026l").into_bytes()
    }

    /// A full paint of what was painted last, for a viewer joining now (the paints after it then
    /// apply to it as to everyone else); with the viewport it was painted through. None before the
    /// first paint.
    pub fn repaint_last(&self) -> Option<(Viewport, Vec<u8>)> {
        let last = self.last.as_ref()?;
        let bytes = Painter::new().paint(&last.grid, &last.modes, last.viewport);
        Some((last.viewport, bytes))
    }

    /// The bytes that give the viewer back its own settings when it stops watching: input modes off,
    /// default pen, palette and cursor, auto-wrap on.
    pub fn release(&self) -> Vec<u8> {
        let mut out = String::from("\x1b[0m\x1b[?7h\x1b[?25h\x1b[0 q");
        paint_modes(
            &mut out,
            self.last.as_ref().map(|l| &l.modes),
            &InputModes::default(),
        );
        if self
            .last
            .as_ref()
            .is_some_and(|l| !l.grid.palette_overrides.is_empty())
        {
            out.push_str("\x1b]104\x07\x1b]110\x07\x1b]111\x07");
        }
        out.into_bytes()
    }
}

/// Rows that differ from `last` (all rows when there is none), as runs of changed cells.
fn paint_rows(out: &mut String, last: Option<&CellGrid>, grid: &CellGrid, view: Viewport) {
    let blank = Cell::default();
    let mut pen: Option<(Color, Color, Attrs)> = None;
    for row in 0..view.size.rows {
        let new = |col: u16| view.screen_cell(grid, col, row).unwrap_or(&blank);
        let old = |col: u16| {
            last.map(|g| view.screen_cell(g, col, row).unwrap_or(&blank))
                .unwrap_or(&blank)
        };
        let cols = view.size.cols;
        let Some(first) = (0..cols).find(|&c| new(c) != old(c)) else {
            continue;
        };
        let Some(end) = (0..cols).rev().find(|&c| new(c) != old(c)).map(|c| c + 1) else {
            continue;
        };
        // Start on a whole character: a changed spacer repaints the wide character it belongs to.
        let mut col = first;
        while col > 0 && new(col).width == CellWidth::Spacer {
            col -= 1;
        }
        // Blank default cells from here to the row's end are one erase.
        let blank_from = (col..cols)
            .rev()
            .take_while(|&c| *new(c) == blank)
            .last()
            .unwrap_or(cols);
        let (stop, erase) = if end > blank_from {
            (blank_from, true)
        } else {
            (end, false)
        };
        let _ = write!(out, "\x1b[{};{}H", row + 1, col + 1);
        while col < stop {
            let cell = new(col);
            let style = (cell.fg, cell.bg, cell.attrs);
            if pen != Some(style) {
                push_sgr(out, cell);
                pen = Some(style);
            }
            match cell.width {
                CellWidth::Wide if col + 1 < cols => {
                    push_text(out, &cell.text);
                    col += 2;
                }
                // A wide character cut by the viewer's edge, or a spacer whose character is elsewhere.
                CellWidth::Wide | CellWidth::Spacer => {
                    out.push(' ');
                    col += 1;
                }
                CellWidth::Single => {
                    push_text(out, &cell.text);
                    col += 1;
                }
            }
        }
        if erase {
            if pen != Some((Color::Default, Color::Default, Attrs::default())) {
                out.push_str("\x1b[0m");
                pen = Some((Color::Default, Color::Default, Attrs::default()));
            }
            out.push_str("\x1b[K");
        }
    }
    if pen.is_some() {
        out.push_str("\x1b[0m");
    }
}

/// Cell text without control characters (a cell never should hold one; a viewer must never run one).
fn push_text(out: &mut String, text: &str) {
    for c in text.chars() {
        out.push(if c.is_control() { ' ' } else { c });
    }
}

fn push_sgr(out: &mut String, cell: &Cell) {
    out.push_str("\x1b[0");
    const ATTRS: [(u16, &str); 10] = [
        (Attrs::BOLD, ";1"),
        (Attrs::DIM, ";2"),
        (Attrs::ITALIC, ";3"),
        (Attrs::UNDERLINE, ";4"),
        (Attrs::DOUBLE_UNDERLINE, ";4:2"),
        (Attrs::UNDERCURL, ";4:3"),
        (Attrs::DOTTED_UNDERLINE, ";4:4"),
        (Attrs::DASHED_UNDERLINE, ";4:5"),
        (Attrs::INVERSE, ";7"),
        (Attrs::HIDDEN, ";8"),
    ];
    for (bit, code) in ATTRS {
        if cell.attrs.has(bit) {
            out.push_str(code);
        }
    }
    if cell.attrs.has(Attrs::STRIKEOUT) {
        out.push_str(";9");
    }
    push_color(out, cell.fg, 30, 90, 38);
    push_color(out, cell.bg, 40, 100, 48);
    out.push('m');
}

fn push_color(out: &mut String, color: Color, normal: u8, bright: u8, extended: u8) {
    match color {
        Color::Default => {}
        Color::Indexed(i @ 0..=7) => {
            let _ = write!(out, ";{}", normal + i);
        }
        Color::Indexed(i @ 8..=15) => {
            let _ = write!(out, ";{}", bright + i - 8);
        }
        Color::Indexed(i) => {
            let _ = write!(out, ";{extended};5;{i}");
        }
        Color::Rgb(Rgb { r, g, b }) => {
            let _ = write!(out, ";{extended};2;{r};{g};{b}");
        }
    }
}

fn paint_cursor(out: &mut String, cursor: &Cursor, view: Viewport) {
    let shape = match cursor.shape {
        CursorShape::Block | CursorShape::HollowBlock => 2,
        CursorShape::Underline => 4,
        CursorShape::Beam => 6,
    };
    let _ = write!(out, "\x1b[{shape} q");
    match view.to_viewer(cursor.pos()) {
        Some(at) => {
            let _ = write!(out, "\x1b[{};{}H", at.row.0 + 1, at.col.0 + 1);
            out.push_str(if cursor.visible {
                "\x1b[?25h"
            } else {
                "\x1b[?25l"
            });
        }
        None => out.push_str("\x1b[?25l"),
    }
}

/// Palette entries the application changed; entries it gave back are reset.
fn paint_palette(out: &mut String, was: &[(u16, Rgb)], now: &[(u16, Rgb)]) {
    if was == now {
        return;
    }
    for &(index, rgb) in now {
        let value = format!("rgb:{:02x}/{:02x}/{:02x}", rgb.r, rgb.g, rgb.b);
        let _ = match index {
            FOREGROUND_INDEX => write!(out, "\x1b]10;{value}\x07"),
            BACKGROUND_INDEX => write!(out, "\x1b]11;{value}\x07"),
            i => write!(out, "\x1b]4;{i};{value}\x07"),
        };
    }
    for &(index, _) in was.iter().filter(|(i, _)| !now.iter().any(|(j, _)| j == i)) {
        let _ = match index {
            FOREGROUND_INDEX => write!(out, "\x1b]110\x07"),
            BACKGROUND_INDEX => write!(out, "\x1b]111\x07"),
            i => write!(out, "\x1b]104;{i}\x07"),
        };
    }
}

fn paint_title(out: &mut String, was: Option<&str>, now: Option<&str>) {
    if was == now {
        return;
    }
    let title: String = now
        .unwrap_or("")
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let _ = write!(out, "\x1b]2;{title}\x07");
}

/// Input modes that differ from `was` (every mode that is on, when there is no `was`).
fn paint_modes(out: &mut String, was: Option<&InputModes>, now: &InputModes) {
    let off = InputModes::default();
    let was = was.unwrap_or(&off);
    let private = |on: bool, before: bool, code: u16, out: &mut String| {
        if on != before {
            let _ = write!(out, "\x1b[?{code}{}", if on { 'h' } else { 'l' });
        }
    };
    private(now.app_cursor, was.app_cursor, 1, out);
    private(now.bracketed_paste, was.bracketed_paste, 2004, out);
    private(now.focus_events, was.focus_events, 1004, out);
    private(now.alternate_scroll, was.alternate_scroll, 1007, out);
    if now.app_keypad != was.app_keypad {
        out.push_str(if now.app_keypad { "\x1b=" } else { "\x1b>" });
    }
    if now.mouse_tracking != was.mouse_tracking {
        let code = |t: MouseTracking| match t {
            MouseTracking::Off => None,
            MouseTracking::Click => Some(1000),
            MouseTracking::Drag => Some(1002),
            MouseTracking::Motion => Some(1003),
        };
        if let Some(code) = code(was.mouse_tracking) {
            let _ = write!(out, "\x1b[?{code}l");
        }
        if let Some(code) = code(now.mouse_tracking) {
            let _ = write!(out, "\x1b[?{code}h");
        }
    }
    if now.mouse_encoding != was.mouse_encoding {
        let code = |e: MouseEncoding| match e {
            MouseEncoding::X10 => None,
            MouseEncoding::Utf8 => Some(1005),
            MouseEncoding::Sgr => Some(1006),
        };
        if let Some(code) = code(was.mouse_encoding) {
            let _ = write!(out, "\x1b[?{code}l");
        }
        if let Some(code) = code(now.mouse_encoding) {
            let _ = write!(out, "\x1b[?{code}h");
        }
    }
    if now.kitty_keyboard != was.kitty_keyboard {
        let _ = write!(out, "\x1b[={};1u", now.kitty_keyboard);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Screen;

    /// A screen after `bytes`, and a second terminal painted from it through `painter`.
    fn painted(painter: &mut Painter, source: &mut Screen, viewer: &mut Screen, bytes: &[u8]) {
        source.feed(bytes);
        let view = Viewport::whole(source.size());
        let paint = painter.paint(&source.cells(), &source.modes(), view);
        viewer.feed(&paint);
    }

    fn assert_same(source: &Screen, viewer: &Screen) {
        let (a, b) = (source.cells(), viewer.cells());
        for (row, (x, y)) in a.rows.iter().zip(&b.rows).enumerate() {
            assert_eq!(x, y, "row {row} differs");
        }
        assert_eq!(a.cursor, b.cursor);
        assert_eq!(a.title, b.title);
        assert_eq!(a.palette_overrides, b.palette_overrides);
        assert_eq!(source.modes(), viewer.modes());
    }

    /// Like [`assert_same`], for screens where the program broke wide characters in two (inserting or
    /// deleting cells inside one): no terminal can be told to draw half a character, so the viewer
    /// shows the same text and styles, with that half as an ordinary blank cell.
    fn assert_looks_same(source: &mut Screen, viewer: &mut Screen) {
        assert_eq!(source.text(), viewer.text());
        let (a, b) = (source.cells(), viewer.cells());
        for (row, (x, y)) in a.rows.iter().zip(&b.rows).enumerate() {
            for (col, (p, q)) in x.iter().zip(y).enumerate() {
                let broken = p.width != q.width
                    || (p.width == CellWidth::Wide
                        && x.get(col + 1).map(|c| c.width) != Some(CellWidth::Spacer));
                if !broken {
                    assert_eq!(p, q, "row {row} col {col} differs");
                }
            }
        }
        assert_eq!(a.cursor, b.cursor);
        assert_eq!(source.modes(), viewer.modes());
    }

    const STEPS: &[&[u8]] = &[
        b"plain text\r\nsecond line",
        b"\x1b[1;31mbold red\x1b[0m \x1b[4:3;38;2;1;2;3mcurly rgb\x1b[0m \x1b[7;48;5;200mrev\x1b[0m",
        "\r\n\u{65e5}\u{672c}\u{8a9e} wide e\u{301} combining\r\n".as_bytes(),
        b"\x1b[5;10r\x1b[10;1Hscrolled\n\n\n\x1b[r",
        b"\x1b]2;a title\x07\x1b]4;3;rgb:12/34/56\x07\x1b[?1h\x1b[?2004h\x1b[?1002h\x1b[?1006h",
        b"\x1b[?1049h\x1b[Hfull screen app\x1b[24;80HZ\x1b[?25l",
        b"\x1b[3 q\x1b[?1049l\x1b[2;5H\x1b[?25h",
        b"\x1b[2J\x1b[Hcleared\x1b[9;2H\x1b[44m     \x1b[0m tail",
        b"\x1b[?1002l\x1b]104\x07\x1b[2;1H\x1b[K",
    ];

    #[test]
    fn painting_step_by_step_reproduces_every_screen() {
        let size = Size::new(80, 24);
        let mut source = Screen::new(size, 100);
        let mut viewer = Screen::new(size, 100);
        let mut painter = Painter::new();
        for step in STEPS {
            painted(&mut painter, &mut source, &mut viewer, step);
            assert_same(&source, &viewer);
        }
    }

    #[test]
    fn a_late_viewer_sees_the_same_screen_in_one_paint() {
        let size = Size::new(80, 24);
        let mut source = Screen::new(size, 100);
        for step in STEPS {
            source.feed(step);
            let mut viewer = Screen::new(size, 100);
            let paint =
                Painter::new().paint(&source.cells(), &source.modes(), Viewport::whole(size));
            viewer.feed(&paint);
            assert_same(&source, &viewer);
        }
    }

    #[test]
    fn an_unchanged_screen_paints_nothing() {
        let size = Size::new(40, 10);
        let mut source = Screen::new(size, 0);
        source.feed(b"hello");
        let mut painter = Painter::new();
        let view = Viewport::whole(size);
        assert!(!painter
            .paint(&source.cells(), &source.modes(), view)
            .is_empty());
        assert!(painter
            .paint(&source.cells(), &source.modes(), view)
            .is_empty());
        source.feed(b"!");
        let update =
            String::from_utf8(painter.paint(&source.cells(), &source.modes(), view)).unwrap();
        assert!(
            update.contains('!') && !update.contains("hello"),
            "{update:?}"
        );
    }

    #[test]
    fn a_smaller_viewer_follows_the_cursor_and_shows_the_cells_there() {
        let screen = Size::new(80, 24);
        let mut source = Screen::new(screen, 0);
        source.feed(b"\x1b[20;70Hfar corner");
        let viewer_size = Size::new(40, 10);
        let view = Viewport::following(viewer_size, screen, source.cursor().pos(), None);
        assert!(view.to_viewer(source.cursor().pos()).is_some());
        let mut viewer = Screen::new(viewer_size, 0);
        viewer.feed(&Painter::new().paint(&source.cells(), &source.modes(), view));
        let row = view.to_viewer(CellPos::new(69, 19)).unwrap();
        let text = viewer
            .text()
            .lines()
            .nth(row.row.0 as usize)
            .unwrap_or("")
            .to_owned();
        assert!(text.ends_with("far corner"), "{text:?}");
        assert_eq!(
            viewer.cursor().pos(),
            view.to_viewer(source.cursor().pos()).unwrap()
        );
    }

    #[test]
    fn a_larger_viewer_shows_the_screen_top_left_and_blank_beyond() {
        let screen = Size::new(20, 5);
        let mut source = Screen::new(screen, 0);
        source.feed(b"\x1b[41m");
        source.feed(&[b'x'; 100]);
        let viewer_size = Size::new(30, 8);
        let mut viewer = Screen::new(viewer_size, 0);
        let view = Viewport::following(viewer_size, screen, source.cursor().pos(), None);
        viewer.feed(&Painter::new().paint(&source.cells(), &source.modes(), view));
        let text = viewer.text().to_owned();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "x".repeat(20));
        assert_eq!(lines[4], "x".repeat(20));
        assert!(lines.iter().skip(5).all(|l| l.is_empty()), "{text:?}");
    }

    #[test]
    fn release_turns_the_viewers_modes_back_off() {
        let size = Size::new(20, 5);
        let mut source = Screen::new(size, 0);
        source.feed(b"\x1b[?1h\x1b[?1000h\x1b[?1006h\x1b[?2004h\x1b]4;1;rgb:00/00/00\x07");
        let mut viewer = Screen::new(size, 0);
        let mut painter = Painter::new();
        viewer.feed(&painter.paint(&source.cells(), &source.modes(), Viewport::whole(size)));
        assert_eq!(viewer.modes(), source.modes());
        viewer.feed(&painter.release());
        assert_eq!(viewer.modes(), InputModes::default());
        assert!(viewer.cells().palette_overrides.is_empty());
    }

    #[test]
    fn random_output_paints_back_identically_at_every_step() {
        // Fragments a program might write, in a pseudo-random order (xorshift, fixed seed).
        const PIECES: &[&[u8]] = &[
            b"word ",
            b"\r\n",
            b"\n",
            b"\x1b[1m",
            b"\x1b[0m",
            b"\x1b[3;4H",
            b"\x1b[K",
            b"\x1b[2J",
            b"\x1b[31;42m",
            b"\x1b[38;5;123m",
            b"\x1b[48;2;9;8;7m",
            b"\x1b[7m",
            b"\x1b[2;6r",
            b"\x1b[r",
            b"\x1bM",
            b"\x1b[5S",
            b"\x1b[3T",
            b"\x1b[2@",
            b"\x1b[3P",
            b"\x1b[L",
            b"\x1b[M",
            b"\x1b(0lqk\x1b(B",
            "\u{4e2d}\u{6587}".as_bytes(),
            b"\t|",
            b"\x08",
            b"\x1b[?25l",
            b"\x1b[?25h",
            b"\x1b[?1049h",
            b"\x1b[?1049l",
            b"\x1b7",
            b"\x1b8",
            b"\x1b[20G",
            b"\x1b[X",
            b"\x1b[?6h",
            b"\x1b[?6l",
            b"\x1b[4h",
            b"\x1b[4l",
            b"\x1b[?1000h",
            b"\x1b[?1000l",
        ];
        let size = Size::new(30, 8);
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..20 {
            let mut source = Screen::new(size, 50);
            let mut viewer = Screen::new(size, 50);
            let mut painter = Painter::new();
            for _ in 0..60 {
                let mut chunk = Vec::new();
                for _ in 0..(next() % 6) {
                    chunk.extend_from_slice(PIECES[(next() % PIECES.len() as u64) as usize]);
                }
                painted(&mut painter, &mut source, &mut viewer, &chunk);
                assert_looks_same(&mut source, &mut viewer);
            }
        }
    }

    #[test]
    fn a_repaint_of_the_last_paint_joins_a_viewer_to_the_same_stream() {
        let size = Size::new(30, 6);
        let mut source = Screen::new(size, 0);
        let mut painter = Painter::new();
        assert!(painter.repaint_last().is_none());
        source.feed(b"\x1b[1;33mfirst\x1b[0m");
        painter.paint(&source.cells(), &source.modes(), Viewport::whole(size));
        let (view, full) = painter.repaint_last().unwrap();
        assert_eq!(view, Viewport::whole(size));
        let mut late = Screen::new(size, 0);
        late.feed(&full);
        source.feed(b" second");
        late.feed(&painter.paint(&source.cells(), &source.modes(), view));
        assert_same(&source, &late);
    }
}
