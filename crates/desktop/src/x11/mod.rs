//! One connection to a display, and everything done through it: capture, pointer and keyboard input
//! through XTest, waiting for the screen to settle (DAMAGE), the pointer position.
//!
//! These calls block; [`crate::Desktop`] runs them on a blocking thread with a deadline. Long waits
//! inside a call (holding a key, settling) stop at the deadline. Reaching the display is in
//! the `connect` module, input (and the guard that releases what a call pressed) in `input`.

pub mod clipboard;
pub(crate) mod clipboard_owner;
mod connect;
mod input;
pub(crate) mod manage;
pub mod windows;
mod wm;

use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::damage::{self, ConnectionExt as _};
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::protocol::xproto::{ConnectionExt as _, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;

use crate::capture::{self, Capturer, Frame};
use crate::error::{DesktopError, Result};
use crate::gestures::Seat as _;
pub use crate::gestures::{
    Button, Point, BUTTON_BACK, BUTTON_FORWARD, BUTTON_LEFT, BUTTON_MIDDLE, BUTTON_RIGHT,
    WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT, WHEEL_UP,
};
use crate::keyboard::Keyboard;

pub use clipboard::{ClipContent, ClipKind, Selection, MAX_CLIP_BYTES};
pub use connect::connect;
pub(crate) use connect::connect_local;
pub use manage::MoveResize;
pub use windows::{Atoms, WindowInfo, WindowManagerState};

/// A live connection to one screen of a display.
pub struct X11 {
    conn: RustConnection,
    root: Window,
    width: u16,
    height: u16,
    keyboard: Keyboard,
    capturer: Capturer,
    atoms: Atoms,
    /// Reports that something was drawn since the last subtract; `None` without DAMAGE.
    damage: Option<u32>,
    xfixes: bool,
    deadline: Instant,
    /// Buttons pressed by [`X11::button`] and not released by it: let go when the desktop closes.
    left_down: Vec<Button>,
}

impl X11 {
    /// Set up a connection: XTEST is required; MIT-SHM, XFIXES and DAMAGE are used when present.
    pub fn new(conn: RustConnection, screen: usize) -> Result<X11> {
        let has = |name: &'static str| -> Result<bool> {
            Ok(conn.extension_information(name)?.is_some())
        };
        if !has(x11rb::protocol::xtest::X11_EXTENSION_NAME)? {
            return Err(DesktopError::Protocol(
                "the display lacks the XTEST extension, so input cannot be sent".into(),
            ));
        }
        conn.xtest_get_version(2, 2)?.reply()?;
        let shm = has(x11rb::protocol::shm::X11_EXTENSION_NAME)?
            && conn
                .shm_query_version()
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some_and(|v| (v.major_version, v.minor_version) >= (1, 2));
        let xfixes = has(x11rb::protocol::xfixes::X11_EXTENSION_NAME)?
            && conn.xfixes_query_version(4, 0)?.reply().is_ok();
        let damage = if has(damage::X11_EXTENSION_NAME)?
            && conn.damage_query_version(1, 1)?.reply().is_ok()
        {
            Some(conn.generate_id()?)
        } else {
            None
        };
        let root_screen = conn
            .setup()
            .roots
            .get(screen)
            .ok_or_else(|| DesktopError::Protocol(format!("screen {screen} does not exist")))?;
        let root = root_screen.root;
        let (width, height) = (root_screen.width_in_pixels, root_screen.height_in_pixels);
        if let Some(id) = damage {
            conn.damage_create(id, root, damage::ReportLevel::NON_EMPTY)?
                .check()?;
        }
        let keyboard = Keyboard::load(&conn)?;
        let capturer = Capturer::new(&conn, screen, shm)?;
        let atoms = Atoms::intern(&conn)?;
        let mut x = X11 {
            conn,
            root,
            width,
            height,
            keyboard,
            capturer,
            atoms,
            damage,
            xfixes,
            deadline: Instant::now() + Duration::from_secs(30),
            left_down: Vec::new(),
        };
        x.refresh_size()?;
        Ok(x)
    }

    /// The screen size in pixels, as of the last look.
    pub fn size(&self) -> (u32, u32) {
        (self.width.into(), self.height.into())
    }

    /// "shm" or "get_image".
    pub fn capture_method(&self) -> &'static str {
        self.capturer.method()
    }

    /// Start a call: set its deadline, read pending events (a keymap change, stale damage), and the
    /// screen size (a display we attached to may have been resized).
    pub fn begin(&mut self, deadline: Instant) -> Result<()> {
        self.deadline = deadline;
        self.drain_events()?;
        self.refresh_size()?;
        if let Some(damage) = self.damage {
            self.conn
                .damage_subtract(damage, x11rb::NONE, x11rb::NONE)?;
        }
        Ok(())
    }

    /// The root window's current size (a display we attached to may have been resized).
    pub fn refresh_size(&mut self) -> Result<(u32, u32)> {
        let geometry = self.conn.get_geometry(self.root)?.reply()?;
        self.width = geometry.width;
        self.height = geometry.height;
        Ok(self.size())
    }

    /// A round trip: everything sent so far has been processed by the server.
    pub fn sync(&self) -> Result<()> {
        self.conn.get_input_focus()?.reply()?;
        Ok(())
    }

    fn drain_events(&mut self) -> Result<()> {
        let mut mapping_changed = false;
        while let Some(event) = self.conn.poll_for_event()? {
            if let Event::MappingNotify(_) = event {
                mapping_changed = true;
            }
        }
        if mapping_changed {
            self.keyboard.reload(&self.conn)?;
        }
        Ok(())
    }

    /// The next event, waiting at most `timeout`.
    fn next_event(&self, timeout: Duration) -> Result<Option<Event>> {
        if let Some(event) = self.conn.poll_for_event()? {
            return Ok(Some(event));
        }
        let mut poll = libc::pollfd {
            fd: self.conn.stream().as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd for the connection's socket.
        unsafe {
            libc::poll(&mut poll, 1, ms);
        }
        Ok(self.conn.poll_for_event()?)
    }

    /// Wait until nothing has been drawn for `quiet`, at most `max` (and never past the deadline).
    /// Without DAMAGE this is only a round trip.
    pub fn settle(&mut self, quiet: Duration, max: Duration) -> Result<()> {
        self.sync()?;
        let Some(damage) = self.damage else {
            return Ok(());
        };
        let start = Instant::now();
        let end = (start + max).min(self.deadline);
        // The one react-then-quiet rule, with no reaction to wait for; each damage is a new frame.
        let mut rule = screenpilot_screen::settling::Settling::new(None, quiet, start);
        let mut frames = 0u64;
        rule.saw(frames, start);
        let mut mapping_changed = false;
        loop {
            let now = Instant::now();
            let quiet_until = rule.quiet_at().unwrap_or(start);
            if now >= quiet_until || now >= end {
                break;
            }
            match self.next_event(quiet_until.min(end) - now)? {
                Some(Event::DamageNotify(_)) => {
                    self.conn
                        .damage_subtract(damage, x11rb::NONE, x11rb::NONE)?;
                    self.conn.flush()?;
                    frames += 1;
                    rule.saw(frames, Instant::now());
                }
                Some(Event::MappingNotify(_)) => mapping_changed = true,
                _ => {}
            }
        }
        if mapping_changed {
            self.keyboard.reload(&self.conn)?;
        }
        self.keyboard.settled();
        Ok(())
    }

    /// Capture the screen, with the pointer drawn in when `pointer` is set.
    pub fn capture(&mut self, pointer: bool) -> Result<Frame> {
        self.check_deadline("capturing the screen")?;
        let mut frame = self
            .capturer
            .capture(&self.conn, self.root, self.width, self.height)?;
        if pointer && self.xfixes {
            if let Ok(cursor) = self.conn.xfixes_get_cursor_image()?.reply() {
                capture::draw_cursor(&mut frame, &cursor);
            }
        }
        Ok(frame)
    }

    /// A hash of the screen's pixels, without the pointer ([`Frame::hash`] of `capture(false)`): equal
    /// screens, equal hashes, wherever the pointer is.
    pub fn screen_hash(&mut self) -> Result<u64> {
        Ok(self.capture(false)?.hash())
    }

    /// The top-level (client) windows, in the window manager's order (or bottom to top without one).
    pub fn windows(&self) -> Result<Vec<WindowInfo>> {
        self.check_deadline("listing the windows")?;
        windows::list(&self.conn, self.root, &self.atoms)
    }

    /// Whether the topmost window at `x, y` of the screen is one no window manager manages
    /// (override-redirect: an open menu, a combo box's list, a tooltip). Such a popup is above every
    /// managed window, so what an application says is there is what a click there reaches.
    pub fn popup_at(&self, x: i16, y: i16) -> Result<bool> {
        self.check_deadline("finding the window at a point")?;
        let child = self
            .conn
            .translate_coordinates(self.root, self.root, x, y)?
            .reply()?
            .child;
        if child == x11rb::NONE {
            return Ok(false);
        }
        Ok(self
            .conn
            .get_window_attributes(child)?
            .reply()
            .is_ok_and(|a| a.override_redirect))
    }

    /// What the display says about its window manager.
    pub fn window_manager(&self) -> Result<WindowManagerState> {
        WindowManagerState::read(&self.conn, self.root, &self.atoms)
    }

    /// Give `window` the keyboard: through the window manager (an EWMH `_NET_ACTIVE_WINDOW` request,
    /// as a pager sends it, so it also raises and un-minimises) when `ask_window_manager`, else
    /// directly with SetInputFocus. Returns once the server has processed the request; the window
    /// manager may act a little later.
    pub fn activate(&self, window: u32, ask_window_manager: bool) -> Result<()> {
        use x11rb::protocol::xproto::{ClientMessageEvent, EventMask, InputFocus};
        if ask_window_manager {
            // data: source 2 = a pager (honoured without focus-stealing checks), time, our window.
            let event = ClientMessageEvent::new(
                32,
                window,
                self.atoms.net_active_window,
                [2, x11rb::CURRENT_TIME, 0, 0, 0],
            );
            self.conn.send_event(
                false,
                self.root,
                EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                event,
            )?;
        } else {
            self.conn
                .set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)?;
        }
        self.sync()
    }

    /// Where the pointer is, and which modifier and button bits are down (X's state mask).
    pub fn pointer(&self) -> Result<(Point, u16)> {
        let reply = self.conn.query_pointer(self.root)?.reply()?;
        Ok((
            Point {
                x: reply.root_x.max(0) as u32,
                y: reply.root_y.max(0) as u32,
            },
            u16::from(reply.mask),
        ))
    }

    /// Refuse a point off the screen (the server would silently clamp it).
    pub fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        crate::gestures::check_on_screen(self.size(), point, field)
    }

    /// The raw connection, for callers that need more than this type offers.
    pub fn connection(&self) -> &RustConnection {
        &self.conn
    }
}
