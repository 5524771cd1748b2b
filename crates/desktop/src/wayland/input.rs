//! Input through the wlr virtual pointer and the virtual keyboard: pointer gestures (move, click,
//! scroll, drag, a button left down), key chords and any Unicode text. As with X11's input, keys and
//! buttons a call pressed are released when it ends, whether it succeeds or fails ([`Held`]).
//!
//! Buttons keep X's numbering and become Linux input codes (1 `BTN_LEFT`, 2 `BTN_MIDDLE`, 3
//! `BTN_RIGHT`, 8 `BTN_SIDE`, 9 `BTN_EXTRA`); 4-7 are wheel steps (axis events from a wheel, one
//! discrete step each). Motion is absolute, in output pixels over the output's extent.
//!
//! The keyboard types with a keymap of its own (`keymap`). The first-keystroke trap: a compositor
//! may drop the key that follows a keymap upload in the same burst (reported with wtype on sway), so
//! every upload is followed by a round trip before any key is sent. (Debian 12's headless sway 1.7
//! delivers that key even without the round trip, wtype's too; the round trip costs well under a
//! millisecond, so it stays for compositors that do not.) The virtual keyboard's key events do
//! not move the compositor's modifier state (wlroots), so chords also send the modifier mask.

use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::time::{Duration, Instant};

use wayland_client::protocol::wl_pointer;
use wayland_client::Connection;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;

use super::keymap::Keymap;
use super::Wayland;
use crate::error::{DesktopError, Result};
use crate::keyboard::Modifier;
use crate::keysym::{self, Keysym};
use crate::x11::{
    Button, Point, BUTTON_BACK, BUTTON_FORWARD, BUTTON_LEFT, BUTTON_MIDDLE, BUTTON_RIGHT,
    WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT, WHEEL_UP,
};

/// `wl_keyboard.keymap_format.xkb_v1`.
const KEYMAP_FORMAT_XKB_V1: u32 = 1;
/// One wheel step, in the axis units libinput reports for a mouse wheel's click.
const WHEEL_STEP: f64 = 15.0;

/// The virtual devices, and what we know of their state (they cannot be read back).
pub(crate) struct Input {
    conn: Connection,
    pointer: ZwlrVirtualPointerV1,
    keyboard: ZwpVirtualKeyboardV1,
    keymap: Keymap,
    /// Where we last moved the pointer.
    pub position: Option<Point>,
    /// Buttons pressed by [`Wayland::button`] and not released by it: let go by `leave_as_found`.
    left_down: Vec<Button>,
    /// The virtual pointer needs the output's size for absolute motion.
    extent: (u32, u32),
    epoch: Instant,
}

impl Input {
    pub fn new(
        conn: Connection,
        pointer: ZwlrVirtualPointerV1,
        keyboard: ZwpVirtualKeyboardV1,
    ) -> Input {
        Input {
            conn,
            pointer,
            keyboard,
            keymap: Keymap::new(),
            position: None,
            left_down: Vec::new(),
            extent: (1, 1),
            epoch: Instant::now(),
        }
    }

    /// Send the keymap (the caller then makes a round trip before any key).
    pub fn upload_keymap(&mut self) -> Result<()> {
        let mut text = self.keymap.text().into_bytes();
        text.push(0);
        let io = |e: std::io::Error| DesktopError::Io(format!("the keyboard's keymap: {e}"));
        // SAFETY: plain syscall with a NUL-terminated name; the result is a new descriptor or -1.
        let raw = unsafe { libc::memfd_create(c"screenpilot-keymap".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        file.write_all_at(&text, 0).map_err(io)?;
        self.keyboard
            .keymap(KEYMAP_FORMAT_XKB_V1, file.as_fd(), text.len() as u32);
        Ok(())
    }

    /// X's state mask bits of the buttons held down (Button1Mask is 1 << 8).
    pub fn button_mask(&self) -> u16 {
        self.left_down
            .iter()
            .filter(|b| (1..=5).contains(*b))
            .fold(0, |mask, b| mask | 1 << (7 + u16::from(*b)))
    }

    /// Milliseconds for event timestamps.
    fn time(&self) -> u32 {
        self.epoch.elapsed().as_millis() as u32
    }

    fn motion(&mut self, to: Point) {
        let (w, h) = self.extent;
        let time = self.time();
        self.pointer.motion_absolute(time, to.x, to.y, w, h);
        self.pointer.frame();
        self.position = Some(to);
    }

    /// Press or release a button; a wheel "button" is one step when pressed, nothing when released.
    fn button(&mut self, button: Button, press: bool) -> Result<()> {
        let time = self.time();
        let axis = match button {
            WHEEL_UP | WHEEL_DOWN => wl_pointer::Axis::VerticalScroll,
            WHEEL_LEFT | WHEEL_RIGHT => wl_pointer::Axis::HorizontalScroll,
            _ => {
                let state = if press {
                    wl_pointer::ButtonState::Pressed
                } else {
                    wl_pointer::ButtonState::Released
                };
                self.pointer.button(time, linux_button(button)?, state);
                self.pointer.frame();
                return Ok(());
            }
        };
        if press {
            let sign = if matches!(button, WHEEL_UP | WHEEL_LEFT) {
                -1
            } else {
                1
            };
            self.pointer.axis_source(wl_pointer::AxisSource::Wheel);
            self.pointer
                .axis_discrete(time, axis, WHEEL_STEP * f64::from(sign), sign);
            self.pointer.frame();
        }
        Ok(())
    }

    fn key(&mut self, key: u32, press: bool) {
        let time = self.time();
        self.keyboard.key(time, key, u32::from(press));
    }

    fn flush(&self) -> Result<()> {
        self.conn.flush().map_err(super::blocking::wayland_error)
    }
}

/// The Linux input code of a (non-wheel) button.
fn linux_button(button: Button) -> Result<u32> {
    Ok(match button {
        BUTTON_LEFT => 0x110,
        BUTTON_RIGHT => 0x111,
        BUTTON_MIDDLE => 0x112,
        BUTTON_BACK => 0x113,
        BUTTON_FORWARD => 0x114,
        _ => {
            return Err(DesktopError::invalid(
                "button",
                format!("{button} is no button; 1-9 are (1 left, 2 middle, 3 right, 4-7 wheel, 8 back, 9 forward)"),
            ))
        }
    })
}

fn check_button(button: Button) -> Result<()> {
    match button {
        WHEEL_UP | WHEEL_DOWN | WHEEL_LEFT | WHEEL_RIGHT => Ok(()),
        other => linux_button(other).map(|_| ()),
    }
}

impl Wayland {
    fn held(&mut self) -> Held<'_> {
        self.input.extent = self.size();
        Held {
            input: &mut self.input,
            keys: Vec::new(),
            mods: 0,
            buttons: Vec::new(),
        }
    }

    /// Move the pointer to `at` (already checked), then press `modifiers`: the start of every pointer
    /// gesture. What is held is released when the returned guard goes.
    fn held_at(&mut self, at: Point, modifiers: &[Modifier]) -> Held<'_> {
        let mut held = self.held();
        held.input.motion(at);
        for m in modifiers {
            held.modifier_down(*m);
        }
        held
    }

    /// Move the pointer, with `modifiers` held during the move.
    pub fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()> {
        self.check_point(to, "x/y")?;
        let mut held = self.held();
        for m in modifiers {
            held.modifier_down(*m);
        }
        held.input.motion(to);
        held.release_all();
        self.sync()
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
        check_button(button)?;
        let mut held = self.held_at(at, modifiers);
        for _ in 0..count {
            held.button_down(button)?;
            held.button_up(button)?;
        }
        held.release_all();
        self.sync()
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
        let mut held = self.held_at(at, modifiers);
        let horizontal = if steps_x > 0 { WHEEL_RIGHT } else { WHEEL_LEFT };
        let vertical = if steps_y > 0 { WHEEL_DOWN } else { WHEEL_UP };
        for (button, steps) in [(horizontal, steps_x), (vertical, steps_y)] {
            for _ in 0..steps.unsigned_abs() {
                held.button_down(button)?;
                held.button_up(button)?;
            }
        }
        held.release_all();
        self.sync()
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
        check_button(button)?;
        let mut held = self.held_at(*first, modifiers);
        held.button_down(button)?;
        for point in &path[1..] {
            held.input.motion(*point);
        }
        held.button_up(button)?;
        held.release_all();
        self.sync()
    }

    /// Press or release a button and leave it so (Anthropic's left_mouse_down / left_mouse_up).
    pub fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()> {
        check_button(button)?;
        if let Some(at) = at {
            self.check_point(at, "x/y")?;
            self.input.extent = self.size();
            self.input.motion(at);
        }
        self.input.button(button, press)?;
        self.input.left_down.retain(|b| *b != button);
        if press && !matches!(button, WHEEL_UP | WHEEL_DOWN | WHEEL_LEFT | WHEEL_RIGHT) {
            self.input.left_down.push(button);
        }
        self.sync()
    }

    /// Press the keys of one chord in order, hold them for `hold`, release them in reverse order.
    /// Each keysym has a key of its own in our keymap, so "A" is typed as such, without Shift.
    /// They are released even when this fails midway.
    pub fn key_chord(&mut self, keysyms: &[Keysym], hold: Duration) -> Result<()> {
        let plain: Vec<Keysym> = keysyms
            .iter()
            .copied()
            .filter(|ks| Modifier::of_keysym(*ks).is_none())
            .collect();
        if self.ensure_keys(&plain)? < plain.len() {
            return Err(DesktopError::invalid(
                "keys",
                "a chord of this many different keys does not fit one keymap",
            ));
        }
        let deadline = self.deadline;
        let mut held = self.held();
        for ks in keysyms {
            match Modifier::of_keysym(*ks) {
                Some(m) => held.modifier_down(m),
                None => {
                    let key = held.input.keymap.key(*ks).ok_or_else(|| {
                        DesktopError::Connection("the keymap lost a key it was given".into())
                    })?;
                    if !held.keys.contains(&key) {
                        held.key_down(key, 0);
                    }
                }
            }
        }
        if !hold.is_zero() {
            held.input.flush()?;
            let until = Instant::now() + hold;
            // Holding is the point here, not synchronisation: the keys stay down for `hold`.
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
        held.release_all();
        self.sync()
    }

    /// Type text: each character is one key press of a key our keymap gives its keysym (uploaded
    /// again, with a round trip, when the text needs keysyms it lacks). Newline is Return, tab is
    /// Tab. Text with a control character is refused before any key is pressed.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        let keysyms = keysym::for_text(text).map_err(|(i, c)| {
            DesktopError::invalid(
                "text",
                format!("character {i} is {c:?}, a control character, not text; press keys with keypress"),
            )
        })?;
        let mut rest = &keysyms[..];
        while !rest.is_empty() {
            self.check_deadline("typing")?;
            let fits = self.ensure_keys(rest)?;
            let mut held = self.held();
            for ks in &rest[..fits] {
                let key = held.input.keymap.key(*ks).ok_or_else(|| {
                    DesktopError::Connection("the keymap lost a key it was given".into())
                })?;
                held.key_down(key, 0);
                held.key_up(key);
            }
            held.release_all();
            self.sync()?;
            rest = &rest[fits..];
        }
        Ok(())
    }

    /// Give `keysyms` keys (from the first, as many as fit one keymap; returns how many), uploading
    /// the keymap and making a round trip when it changed.
    fn ensure_keys(&mut self, keysyms: &[Keysym]) -> Result<usize> {
        let (fits, changed) = self.input.keymap.ensure(keysyms);
        if changed {
            self.input.upload_keymap()?;
            self.sync()?;
        }
        Ok(fits)
    }

    fn check_deadline(&self, what: &str) -> Result<()> {
        if Instant::now() >= self.deadline {
            return Err(super::blocking::timeout(what));
        }
        Ok(())
    }

    /// Before closing: release the buttons [`Wayland::button`] left down, so the seat is left as
    /// we found it.
    pub fn leave_as_found(&mut self) -> Result<()> {
        let buttons = std::mem::take(&mut self.input.left_down);
        let mut held = self.held();
        held.buttons = buttons;
        held.release_all();
        self.sync()
    }
}

/// Keys and buttons pressed during one call. Whatever is still down when it goes out of scope is
/// released, in reverse order: no modifier stays stuck after an error.
struct Held<'a> {
    input: &'a mut Input,
    /// Evdev codes of keys down, with the modifier mask each adds.
    keys: Vec<u32>,
    mods: u32,
    buttons: Vec<Button>,
}

impl Held<'_> {
    fn key_down(&mut self, key: u32, mask: u32) {
        self.keys.push(key);
        self.input.key(key, true);
        if mask != 0 {
            self.mods |= mask;
            self.input.keyboard.modifiers(self.mods, 0, 0, 0);
        }
    }

    fn key_up(&mut self, key: u32) {
        self.keys.retain(|k| *k != key);
        self.input.key(key, false);
    }

    fn modifier_down(&mut self, modifier: Modifier) {
        let (key, mask) = self.input.keymap.modifier(modifier);
        if !self.keys.contains(&key) {
            self.key_down(key, mask);
        }
    }

    fn button_down(&mut self, button: Button) -> Result<()> {
        self.buttons.push(button);
        self.input.button(button, true)
    }

    fn button_up(&mut self, button: Button) -> Result<()> {
        self.buttons.retain(|b| *b != button);
        self.input.button(button, false)
    }

    /// Release everything still down (the caller then makes a round trip: all was processed).
    fn release_all(mut self) {
        self.release();
    }

    fn release(&mut self) {
        while let Some(button) = self.buttons.pop() {
            let _ = self.input.button(button, false);
        }
        while let Some(key) = self.keys.pop() {
            self.input.key(key, false);
        }
        if self.mods != 0 {
            self.mods = 0;
            self.input.keyboard.modifiers(0, 0, 0, 0);
        }
        let _ = self.input.flush();
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        if !self.keys.is_empty() || !self.buttons.is_empty() || self.mods != 0 {
            self.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buttons_map_to_linux_codes_and_others_are_refused() {
        assert_eq!(linux_button(BUTTON_LEFT).unwrap(), 0x110);
        assert_eq!(linux_button(BUTTON_RIGHT).unwrap(), 0x111);
        assert_eq!(linux_button(BUTTON_MIDDLE).unwrap(), 0x112);
        assert_eq!(linux_button(BUTTON_BACK).unwrap(), 0x113);
        assert_eq!(linux_button(BUTTON_FORWARD).unwrap(), 0x114);
        assert!(check_button(WHEEL_DOWN).is_ok());
        assert_eq!(check_button(10).unwrap_err().field(), Some("button"));
        assert!(check_button(0).is_err());
    }
}
