//! The one boundary between a desktop and the window system under it.
//!
//! [`crate::Desktop`] runs every step on a [`Backend`]: the screen (capture, size), input (pointer,
//! buttons, wheel, keys, text), the top-level windows and what can be asked of them, and the
//! clipboard. Two backends exist: [`crate::X11`] (a private Xvfb or an attached X display) and
//! `wayland::Session` (a private headless sway or an attached wlroots compositor). The calls block;
//! the desktop runs them one at a time on a blocking thread under a deadline ([`Backend::begin`]).
//!
//! A third backend goes here too: macOS (ScreenCaptureKit for capture, CGEvent for input, the AX
//! API for windows and the accessibility tree) and Windows (Windows.Graphics.Capture, SendInput, UI
//! Automation) each map onto these calls one for one; the crate's README says how, and which
//! permissions each needs.
//!
//! What only X11 has (the window manager's start-up handshake, focus set by us when a window
//! manager ignores EWMH) is reached through [`Backend::x11`], which names the step it was needed
//! for when the backend is another.

use std::time::{Duration, Instant};

use crate::capture::Frame;
use crate::error::{DesktopError, Result};
use crate::gestures::Gestures;
use crate::keyboard::Modifier;
use crate::keysym::Keysym;
use crate::x11::{Button, ClipContent, ClipKind, MoveResize, Point, Selection, WindowInfo, X11};

/// A window system a desktop runs on. See the module documentation.
pub trait Backend: Send {
    /// "x11" or "wayland".
    fn kind(&self) -> &'static str;

    // The screen.

    /// The screen in pixels, as screenshots have it.
    fn size(&self) -> (u32, u32);
    /// Start one step that must end by `deadline`: every wait inside it stops there.
    fn begin(&mut self, deadline: Instant) -> Result<()>;
    /// How frames are read ("shm", "get_image", "screencopy").
    fn capture_method(&self) -> &'static str;
    /// The whole screen as RGB, with the pointer drawn in when `pointer`.
    fn capture(&mut self, pointer: bool) -> Result<Frame>;
    /// A hash of the screen's pixels without the pointer.
    fn screen_hash(&mut self) -> Result<u64> {
        Ok(self.capture(false)?.hash())
    }
    /// Everything sent so far has reached the display server.
    fn sync(&mut self) -> Result<()>;
    /// Wait until nothing was drawn for `quiet`, at most `max` (a blind wait after input on a
    /// display whose drawing cannot be watched from outside the step).
    fn settle(&mut self, quiet: Duration, max: Duration) -> Result<()>;

    // Input.

    /// Where the pointer is, and the buttons held (X's mask: 0x100 left, 0x200 middle, 0x400 right).
    fn pointer(&self) -> Result<(Point, u16)>;
    /// Refuse a point off the screen; `field` names it in the error.
    fn check_point(&self, point: Point, field: &'static str) -> Result<()>;
    fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()>;
    /// `count` clicks of `button` at `at`, with `modifiers` held.
    fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: &[Modifier],
    ) -> Result<()>;
    /// Wheel steps at `at`: horizontal first (positive = right), then vertical (positive = down).
    fn scroll(
        &mut self,
        at: Point,
        steps_x: i32,
        steps_y: i32,
        modifiers: &[Modifier],
    ) -> Result<()>;
    /// Press `button` at the first point, move through the others, release at the last.
    fn drag(&mut self, path: &[Point], button: Button, modifiers: &[Modifier]) -> Result<()>;
    /// Press or release one button (at `at`, else where the pointer is); a button left down is
    /// released when the desktop closes.
    fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()>;
    /// Press the keys of a chord in order, hold them `hold`, release them in reverse.
    fn key_chord(&mut self, keysyms: &[Keysym], hold: Duration) -> Result<()>;
    /// Type any Unicode text, character by character.
    fn type_text(&mut self, text: &str) -> Result<()>;
    /// Release what input steps left pressed, and undo changes to the keymap.
    fn leave_as_found(&mut self) -> Result<()>;

    // Windows.

    /// The top-level windows, with their geometry in screen pixels.
    fn windows(&self) -> Result<Vec<WindowInfo>>;
    /// One top-level window now; [`DesktopError::WindowGone`] when it is not one (any more).
    fn client(&self, window: u32) -> Result<WindowInfo>;
    /// Screen pixels per unit of a window's own coordinates, which its application measures in (the
    /// boxes of its accessibility tree): a Wayland output's scale; 1 on X11.
    fn window_scale(&self) -> Result<f64> {
        Ok(1.0)
    }
    /// A menu or tooltip (an override-redirect or popup surface) covers this point.
    fn popup_at(&self, x: i16, y: i16) -> Result<bool>;
    /// A window manager (or compositor) gives windows the keyboard when asked; else we set it.
    fn focus_by_window_manager(&self) -> Result<bool>;
    /// Give `window` the keyboard, through the window manager when `ask_window_manager`.
    fn activate(&self, window: u32, ask_window_manager: bool) -> Result<()>;
    /// Ask for `window` to be shown, raised and focused. Returns how it was before.
    fn request_focus(&mut self, window: u32) -> Result<WindowInfo>;
    /// Ask for `window` to go above the others. Returns how it was before.
    fn request_raise(&mut self, window: u32) -> Result<WindowInfo>;
    /// `window` is above every other shown window it overlaps.
    fn on_top(&self, window: u32) -> Result<bool>;
    /// Ask for `window`'s client area to move and/or resize. Returns how it was before.
    fn request_move_resize(&mut self, window: u32, to: MoveResize) -> Result<WindowInfo>;
    /// A move lands the client area where asked (else the window manager may place its frame
    /// there, and the desktop asks once more, that much further).
    fn moves_exactly(&self) -> Result<bool>;
    /// Ask for `window` to be minimised. Returns how it was before.
    fn request_minimize(&mut self, window: u32) -> Result<WindowInfo>;
    /// Ask `window` to close; with `kill`, end its program's connection instead. Returns how it
    /// was before.
    fn request_close(&mut self, window: u32, kill: bool) -> Result<WindowInfo>;

    // The clipboard.

    /// The types `which` offers; `None` when nobody owns it.
    fn clipboard_types(&mut self, which: Selection) -> Result<Option<Vec<String>>>;
    /// Read `which` as `kind`.
    fn clipboard_get(&mut self, which: Selection, kind: ClipKind) -> Result<ClipContent>;

    /// The X11 connection, for what only X11 has; `doing` names the step in the error otherwise.
    fn x11(&mut self, doing: &str) -> Result<&mut X11> {
        Err(DesktopError::Unsupported {
            what: doing.to_owned(),
            backend: self.kind(),
        })
    }
}

impl Backend for X11 {
    fn kind(&self) -> &'static str {
        "x11"
    }

    fn size(&self) -> (u32, u32) {
        X11::size(self)
    }

    fn begin(&mut self, deadline: Instant) -> Result<()> {
        X11::begin(self, deadline)
    }

    fn capture_method(&self) -> &'static str {
        X11::capture_method(self)
    }

    fn capture(&mut self, pointer: bool) -> Result<Frame> {
        X11::capture(self, pointer)
    }

    fn screen_hash(&mut self) -> Result<u64> {
        X11::screen_hash(self)
    }

    fn sync(&mut self) -> Result<()> {
        X11::sync(self)
    }

    fn settle(&mut self, quiet: Duration, max: Duration) -> Result<()> {
        X11::settle(self, quiet, max)
    }

    fn pointer(&self) -> Result<(Point, u16)> {
        X11::pointer(self)
    }

    fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        X11::check_point(self, point, field)
    }

    fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()> {
        Gestures::move_to(self, to, modifiers)
    }

    fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        Gestures::click(self, at, button, count, modifiers)
    }

    fn scroll(
        &mut self,
        at: Point,
        steps_x: i32,
        steps_y: i32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        Gestures::scroll(self, at, steps_x, steps_y, modifiers)
    }

    fn drag(&mut self, path: &[Point], button: Button, modifiers: &[Modifier]) -> Result<()> {
        Gestures::drag(self, path, button, modifiers)
    }

    fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()> {
        Gestures::button(self, at, button, press)
    }

    fn key_chord(&mut self, keysyms: &[Keysym], hold: Duration) -> Result<()> {
        X11::key_chord(self, keysyms, hold)
    }

    fn type_text(&mut self, text: &str) -> Result<()> {
        X11::type_text(self, text)
    }

    fn leave_as_found(&mut self) -> Result<()> {
        X11::leave_as_found(self)
    }

    fn windows(&self) -> Result<Vec<WindowInfo>> {
        X11::windows(self)
    }

    fn client(&self, window: u32) -> Result<WindowInfo> {
        X11::client(self, window)
    }

    fn popup_at(&self, x: i16, y: i16) -> Result<bool> {
        X11::popup_at(self, x, y)
    }

    fn focus_by_window_manager(&self) -> Result<bool> {
        Ok(self.window_manager()?.announced.is_some())
    }

    fn activate(&self, window: u32, ask_window_manager: bool) -> Result<()> {
        X11::activate(self, window, ask_window_manager)
    }

    fn request_focus(&mut self, window: u32) -> Result<WindowInfo> {
        X11::request_focus(self, window)
    }

    fn request_raise(&mut self, window: u32) -> Result<WindowInfo> {
        X11::request_raise(self, window)
    }

    fn on_top(&self, window: u32) -> Result<bool> {
        X11::on_top(self, window)
    }

    fn request_move_resize(&mut self, window: u32, to: MoveResize) -> Result<WindowInfo> {
        X11::request_move_resize(self, window, to)
    }

    fn moves_exactly(&self) -> Result<bool> {
        self.moves_by_ewmh()
    }

    fn request_minimize(&mut self, window: u32) -> Result<WindowInfo> {
        X11::request_minimize(self, window)
    }

    fn request_close(&mut self, window: u32, kill: bool) -> Result<WindowInfo> {
        X11::request_close(self, window, kill).map(|(info, _)| info)
    }

    fn clipboard_types(&mut self, which: Selection) -> Result<Option<Vec<String>>> {
        X11::clipboard_types(self, which)
    }

    fn clipboard_get(&mut self, which: Selection, kind: ClipKind) -> Result<ClipContent> {
        X11::clipboard_get(self, which, kind)
    }

    fn x11(&mut self, _doing: &str) -> Result<&mut X11> {
        Ok(self)
    }
}
