//! One connection to a display, and everything done through it: capture, pointer and keyboard input
//! through XTest, waiting for the screen to settle (DAMAGE), the pointer position.
//!
//! These calls block; [`crate::Desktop`] runs them on a blocking thread with a deadline. Long waits
//! inside a call (holding a key, settling) stop at the deadline. Keys and buttons pressed by a call
//! are released when the call ends, whether it succeeds or fails ([`Held`]).

use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::damage::{self, ConnectionExt as _};
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::protocol::xproto::{self, ConnectionExt as _, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::protocol::Event;
use x11rb::rust_connection::{DefaultStream, RustConnection};

use crate::capture::{self, Capturer, Frame};
use crate::error::{DesktopError, Result};
use crate::keyboard::{Keyboard, Modifier};
use crate::keysym::{self, Keysym};

/// A pointer button, by X's numbering: 1 left, 2 middle, 3 right, 4/5 wheel up/down, 6/7 wheel
/// left/right, 8 back, 9 forward.
pub type Button = u8;

pub const BUTTON_LEFT: Button = 1;
pub const BUTTON_MIDDLE: Button = 2;
pub const BUTTON_RIGHT: Button = 3;
pub const WHEEL_UP: Button = 4;
pub const WHEEL_DOWN: Button = 5;
pub const WHEEL_LEFT: Button = 6;
pub const WHEEL_RIGHT: Button = 7;
pub const BUTTON_BACK: Button = 8;
pub const BUTTON_FORWARD: Button = 9;

/// A point on the screen, in pixels of the screenshot (= root window coordinates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Point {
    pub x: u32,
    pub y: u32,
}

/// Connect to a display by name (`:1`), with the usual `XAUTHORITY` lookup, or with an explicit
/// Xauthority file. Tests use this to watch a desktop from the outside.
pub fn connect(display: &str, xauthority: Option<&Path>) -> Result<(RustConnection, usize)> {
    let Some(path) = xauthority else {
        return RustConnection::connect(Some(display)).map_err(|e| {
            DesktopError::Connection(format!("cannot connect to display {display:?}: {e}"))
        });
    };
    let bytes = std::fs::read(path)
        .map_err(|e| DesktopError::Io(format!("cannot read {}: {e}", path.display())))?;
    let cookie = parse_cookie(&bytes).ok_or_else(|| {
        DesktopError::Io(format!("{} holds no MIT-MAGIC-COOKIE-1", path.display()))
    })?;
    let number: u32 = display
        .trim_start_matches(':')
        .split('.')
        .next()
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| {
            DesktopError::invalid(
                "display",
                format!("{display:?} is not a local display like \":1\""),
            )
        })?;
    Ok((connect_local(number, &cookie)?, 0))
}

/// The cookie of the first MIT-MAGIC-COOKIE-1 entry of an Xauthority file.
fn parse_cookie(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut rest = bytes;
    let field = |rest: &mut &[u8]| -> Option<Vec<u8>> {
        let len = usize::from(u16::from_be_bytes([*rest.first()?, *rest.get(1)?]));
        let value = rest.get(2..2 + len)?.to_vec();
        *rest = &rest[2 + len..];
        Some(value)
    };
    while rest.len() >= 2 {
        rest = &rest[2..]; // family
        let _address = field(&mut rest)?;
        let _number = field(&mut rest)?;
        let name = field(&mut rest)?;
        let data = field(&mut rest)?;
        if name == crate::server::AUTH_NAME {
            return Some(data);
        }
    }
    None
}

/// Connect to local display `number` with a cookie: the socket file, else the abstract socket.
pub(crate) fn connect_local(number: u32, cookie: &[u8]) -> Result<RustConnection> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixStream};
    let path = format!("/tmp/.X11-unix/X{number}");
    let stream = UnixStream::connect(&path).or_else(|first| {
        SocketAddr::from_abstract_name(path.as_bytes())
            .and_then(|addr| UnixStream::connect_addr(&addr))
            .map_err(|_| first)
    });
    let stream = stream.map_err(|e| {
        DesktopError::Connection(format!("cannot connect to display :{number}: {e}"))
    })?;
    let (stream, _) = DefaultStream::from_unix_stream(stream)
        .map_err(|e| DesktopError::Connection(format!("display :{number}: {e}")))?;
    RustConnection::connect_to_stream_with_auth_info(
        stream,
        0,
        crate::server::AUTH_NAME.to_vec(),
        cookie.to_vec(),
    )
    .map_err(|e| DesktopError::Connection(format!("display :{number} refused us: {e}")))
}

/// A live connection to one screen of a display.
pub struct X11 {
    conn: RustConnection,
    root: Window,
    width: u16,
    height: u16,
    keyboard: Keyboard,
    capturer: Capturer,
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
        let mut x = X11 {
            conn,
            root,
            width,
            height,
            keyboard,
            capturer,
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

    fn check_deadline(&self, what: &str) -> Result<()> {
        if Instant::now() >= self.deadline {
            return Err(DesktopError::Timeout {
                what: what.to_owned(),
                limit: Duration::ZERO,
            });
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
        let mut last_change = start;
        let mut mapping_changed = false;
        loop {
            let now = Instant::now();
            let quiet_until = last_change + quiet;
            if now >= quiet_until || now >= end {
                break;
            }
            match self.next_event(quiet_until.min(end) - now)? {
                Some(Event::DamageNotify(_)) => {
                    self.conn
                        .damage_subtract(damage, x11rb::NONE, x11rb::NONE)?;
                    self.conn.flush()?;
                    last_change = Instant::now();
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
        let (w, h) = self.size();
        if point.x >= w || point.y >= h {
            return Err(DesktopError::invalid(
                field,
                format!(
                    "({}, {}) is off the {w}x{h} screen; x must be 0-{} and y 0-{}",
                    point.x,
                    point.y,
                    w - 1,
                    h - 1
                ),
            ));
        }
        Ok(())
    }

    fn held(&self) -> Held<'_> {
        Held {
            conn: &self.conn,
            root: self.root,
            keys: Vec::new(),
            buttons: Vec::new(),
        }
    }

    /// Keycodes of the modifiers to hold, in order.
    fn modifier_keycodes(&self, modifiers: &[Modifier]) -> Result<Vec<u8>> {
        modifiers
            .iter()
            .map(|m| self.keyboard.modifier(*m))
            .collect()
    }

    /// Move the pointer to `at` (already checked), then press `modifiers`: the start of every pointer
    /// gesture. What is held is released when the returned guard goes.
    fn held_at(&self, at: Point, modifiers: &[Modifier]) -> Result<Held<'_>> {
        let mods = self.modifier_keycodes(modifiers)?;
        let mut held = self.held();
        held.motion(at)?;
        for kc in mods {
            held.key_down(kc)?;
        }
        Ok(held)
    }

    /// Move the pointer, with `modifiers` held during the move.
    pub fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()> {
        self.check_point(to, "x/y")?;
        let mods = self.modifier_keycodes(modifiers)?;
        let mut held = self.held();
        for kc in mods {
            held.key_down(kc)?;
        }
        held.motion(to)?;
        held.release_all()
    }

    /// `count` clicks of `button` at `at`, with `modifiers` held.
    pub fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.check_point(at, "x/y")?;
        let mut held = self.held_at(at, modifiers)?;
        for _ in 0..count {
            held.button_down(button)?;
            held.button_up(button)?;
        }
        held.release_all()
    }

    /// Wheel steps at `at`: horizontal first (positive = right), then vertical (positive = down).
    pub fn scroll(
        &mut self,
        at: Point,
        steps_x: i32,
        steps_y: i32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.check_point(at, "x/y")?;
        let mut held = self.held_at(at, modifiers)?;
        let horizontal = if steps_x > 0 { WHEEL_RIGHT } else { WHEEL_LEFT };
        let vertical = if steps_y > 0 { WHEEL_DOWN } else { WHEEL_UP };
        for (button, steps) in [(horizontal, steps_x), (vertical, steps_y)] {
            for _ in 0..steps.unsigned_abs() {
                held.button_down(button)?;
                held.button_up(button)?;
            }
        }
        held.release_all()
    }

    /// Press `button` at the first point, move through the others in order, release at the last.
    pub fn drag(&mut self, path: &[Point], button: Button, modifiers: &[Modifier]) -> Result<()> {
        let Some(first) = path.first() else {
            return Err(DesktopError::invalid(
                "path",
                "a drag needs at least one point",
            ));
        };
        for point in path {
            self.check_point(*point, "path")?;
        }
        let mut held = self.held_at(*first, modifiers)?;
        held.button_down(button)?;
        for point in &path[1..] {
            held.motion(*point)?;
        }
        held.button_up(button)?;
        held.release_all()
    }

    /// Press or release a button and leave it so (Anthropic's left_mouse_down / left_mouse_up).
    pub fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()> {
        if let Some(at) = at {
            self.check_point(at, "x/y")?;
            self.held().motion(at)?;
        }
        let kind = if press {
            xproto::BUTTON_PRESS_EVENT
        } else {
            xproto::BUTTON_RELEASE_EVENT
        };
        self.conn
            .xtest_fake_input(kind, button, 0, self.root, 0, 0, 0)?;
        self.conn.flush()?;
        self.left_down.retain(|b| *b != button);
        if press {
            self.left_down.push(button);
        }
        Ok(())
    }

    /// Press the keys of one chord in order (Shift is added for a key that needs it), hold them for
    /// `hold`, release them in reverse order. They are released even when this fails midway.
    pub fn key_chord(&mut self, keysyms: &[Keysym], hold: Duration) -> Result<()> {
        let mut keycodes: Vec<u8> = Vec::new();
        let shift = self.keyboard.modifier(Modifier::Shift).ok();
        for ks in keysyms {
            let keycode = match Modifier::of_keysym(*ks) {
                Some(modifier) => self.keyboard.modifier(modifier)?,
                None => {
                    let (keycode, needs_shift) = self.keyboard.ensure(&self.conn, *ks)?;
                    if needs_shift {
                        match shift {
                            Some(s) if !keycodes.contains(&s) => keycodes.push(s),
                            Some(_) => {}
                            None => {
                                return Err(DesktopError::Protocol(
                                    "this keymap has no Shift key".into(),
                                ))
                            }
                        }
                    }
                    keycode
                }
            };
            if !keycodes.contains(&keycode) {
                keycodes.push(keycode);
            }
        }
        let deadline = self.deadline;
        let mut held = self.held();
        for kc in keycodes {
            held.key_down(kc)?;
        }
        if !hold.is_zero() {
            held.conn.flush()?;
            let until = Instant::now() + hold;
            std::thread::sleep(
                until
                    .min(deadline)
                    .saturating_duration_since(Instant::now()),
            );
            if until > deadline {
                return Err(DesktopError::Timeout {
                    what: "holding the keys".into(),
                    limit: Duration::ZERO,
                });
            }
        }
        held.release_all()
    }

    /// Type text: each character's key (with Shift when needed); characters the keymap lacks go on
    /// spare keycodes. Newline is Return, tab is Tab. Text with a character that is no key (a control
    /// character) is refused before any key is pressed.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        let keysyms = keysym::for_text(text).map_err(|(i, c)| {
            DesktopError::invalid(
                "text",
                format!("character {i} is {c:?}, a control character, not text; press keys with keypress"),
            )
        })?;
        let shift = self.keyboard.modifier(Modifier::Shift).ok();
        for ks in keysyms {
            self.check_deadline("typing")?;
            if self.keyboard.find(ks).is_none() && self.keyboard.must_settle_before_borrowing() {
                // Let every client read the keys typed so far before a keycode changes meaning.
                let remaining = self.deadline.saturating_duration_since(Instant::now());
                self.settle(
                    Duration::from_millis(50),
                    remaining.min(Duration::from_secs(1)),
                )?;
            }
            let (keycode, needs_shift) = self.keyboard.ensure(&self.conn, ks)?;
            let mut held = self.held();
            if needs_shift {
                let s = shift
                    .ok_or_else(|| DesktopError::Protocol("this keymap has no Shift key".into()))?;
                held.key_down(s)?;
            }
            held.key_down(keycode)?;
            held.key_up(keycode)?;
            held.release_all()?;
        }
        self.conn.flush()?;
        Ok(())
    }

    /// Before closing, so an attached display is left as we found it: release the buttons
    /// [`X11::button`] left down (a held button would block the real user's pointer) and put borrowed
    /// keycodes back.
    pub fn leave_as_found(&mut self) -> Result<()> {
        let held = Held {
            conn: &self.conn,
            root: self.root,
            keys: Vec::new(),
            buttons: std::mem::take(&mut self.left_down),
        };
        held.release_all()?;
        self.keyboard.restore(&self.conn)?;
        self.sync()
    }

    /// The raw connection, for callers that need more than this type offers.
    pub fn connection(&self) -> &RustConnection {
        &self.conn
    }
}

/// Keys and buttons pressed during one call. Whatever is still down when it goes out of scope is
/// released, in reverse order: no modifier stays stuck after an error.
struct Held<'a> {
    conn: &'a RustConnection,
    root: Window,
    keys: Vec<u8>,
    buttons: Vec<Button>,
}

impl Held<'_> {
    fn fake(&self, kind: u8, detail: u8, at: Option<Point>) -> Result<()> {
        let (x, y) = at.map_or((0, 0), |p| (p.x as i16, p.y as i16));
        self.conn
            .xtest_fake_input(kind, detail, 0, self.root, x, y, 0)?;
        Ok(())
    }

    fn motion(&mut self, to: Point) -> Result<()> {
        self.fake(xproto::MOTION_NOTIFY_EVENT, 0, Some(to))
    }

    fn key_down(&mut self, keycode: u8) -> Result<()> {
        self.keys.push(keycode);
        self.fake(xproto::KEY_PRESS_EVENT, keycode, None)
    }

    fn key_up(&mut self, keycode: u8) -> Result<()> {
        self.keys.retain(|k| *k != keycode);
        self.fake(xproto::KEY_RELEASE_EVENT, keycode, None)
    }

    fn button_down(&mut self, button: Button) -> Result<()> {
        self.buttons.push(button);
        self.fake(xproto::BUTTON_PRESS_EVENT, button, None)
    }

    fn button_up(&mut self, button: Button) -> Result<()> {
        self.buttons.retain(|b| *b != button);
        self.fake(xproto::BUTTON_RELEASE_EVENT, button, None)
    }

    /// Release everything still down and wait until the server has processed it all.
    fn release_all(mut self) -> Result<()> {
        self.release();
        self.conn.flush()?;
        self.conn.get_input_focus()?.reply()?;
        Ok(())
    }

    fn release(&mut self) {
        while let Some(button) = self.buttons.pop() {
            let _ = self.fake(xproto::BUTTON_RELEASE_EVENT, button, None);
        }
        while let Some(keycode) = self.keys.pop() {
            let _ = self.fake(xproto::KEY_RELEASE_EVENT, keycode, None);
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if !self.keys.is_empty() || !self.buttons.is_empty() {
            self.release();
            let _ = self.conn.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_read_from_xauthority_files() {
        let mut file = crate::server::xauthority_entry(Some(3), &[1, 2, 3, 4]);
        assert_eq!(parse_cookie(&file), Some(vec![1, 2, 3, 4]));
        file.truncate(file.len() - 1);
        assert_eq!(parse_cookie(&file), None);
    }
}
