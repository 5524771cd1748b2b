//! Input through the wlr virtual pointer and the virtual keyboard: the events under the gestures
//! (`crate::gestures`), key chords and any Unicode text (`super::gestures`).
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
use std::time::Instant;

use wayland_client::protocol::wl_pointer;
use wayland_client::Connection;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;

use super::keymap::Keymap;
use crate::error::{DesktopError, Result};
use crate::gestures::linux_button;
use crate::x11::{Button, Point, WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT, WHEEL_UP};

/// `wl_keyboard.keymap_format.xkb_v1`.
const KEYMAP_FORMAT_XKB_V1: u32 = 1;
/// One wheel step, in the axis units libinput reports for a mouse wheel's click.
const WHEEL_STEP: f64 = 15.0;

/// The virtual devices, and what we know of their state (they cannot be read back).
pub(crate) struct Input {
    pub(super) conn: Connection,
    pub(super) pointer: ZwlrVirtualPointerV1,
    pub(super) keyboard: ZwpVirtualKeyboardV1,
    pub(super) keymap: Keymap,
    /// Where we last moved the pointer.
    pub position: Option<Point>,
    /// Buttons pressed by [`Wayland::button`] and not released by it: let go by `leave_as_found`.
    pub(super) left_down: Vec<Button>,
    /// The virtual pointer needs the output's size for absolute motion.
    pub(super) extent: (u32, u32),
    /// The modifier mask of the modifier keys down (the virtual keyboard's keys do not move it).
    mods: u32,
    pub(super) epoch: Instant,
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
            mods: 0,
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
    pub(super) fn time(&self) -> u32 {
        self.epoch.elapsed().as_millis() as u32
    }

    pub(super) fn motion(&mut self, to: Point) {
        let (w, h) = self.extent;
        let time = self.time();
        self.pointer.motion_absolute(time, to.x, to.y, w, h);
        self.pointer.frame();
        self.position = Some(to);
    }

    /// Press or release a button; a wheel "button" is one step when pressed, nothing when released.
    pub(super) fn button(&mut self, button: Button, press: bool) -> Result<()> {
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

    /// Press or release a key; a modifier's key also sets the modifier mask.
    pub(super) fn key(&mut self, key: u32, press: bool) {
        let time = self.time();
        self.keyboard.key(time, key, u32::from(press));
        if let Some(mask) = self.keymap.modifier_mask(key) {
            let mods = if press {
                self.mods | mask
            } else {
                self.mods & !mask
            };
            if mods != self.mods {
                self.mods = mods;
                self.keyboard.modifiers(mods, 0, 0, 0);
            }
        }
    }

    pub(super) fn flush(&self) -> Result<()> {
        self.conn.flush().map_err(super::blocking::wayland_error)
    }
}
