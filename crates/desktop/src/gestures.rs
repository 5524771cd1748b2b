//! The gestures every backend's input offers, written once ([`Gestures`]): a move, clicks, wheel
//! steps, a drag, a button left down, keys held for a while. A backend gives a [`Seat`] (the events
//! it can send, and a round trip); a new backend (macOS's CGEvent, Windows' SendInput) implements
//! [`Seat`] and has them all. `Held` releases what a gesture pressed, in reverse order, whether the
//! gesture succeeds or fails, so no modifier stays stuck after an error.
//!
//! Keys and text are the backends' own (their keymaps differ: X11 borrows keycodes, our Wayland
//! keyboard uploads a keymap of its own, libei types with the compositor's), but they press through
//! `Held` too.

use std::time::{Duration, Instant};

use crate::error::{DesktopError, Result};
use crate::keyboard::Modifier;
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

/// A point on the screen, in pixels of the screenshot (= X's root window coordinates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Point {
    pub x: u32,
    pub y: u32,
}

/// One backend's input devices, event by event.
pub trait Seat {
    /// A key as the device names it (an X keycode, an evdev code).
    type Key: Copy + PartialEq;

    /// Refuse a point the pointer cannot reach; `field` names it in the error.
    fn check_point(&self, point: Point, field: &'static str) -> Result<()>;
    /// Refuse a button this seat has no event for, before anything is sent.
    fn check_button(&self, button: Button) -> Result<()> {
        check_button(button)
    }
    /// The keys of `modifiers`, in order.
    fn modifier_keys(&mut self, modifiers: &[Modifier]) -> Result<Vec<Self::Key>>;
    /// Before a gesture's first event.
    fn begin_gesture(&mut self) {}
    fn send_motion(&mut self, to: Point) -> Result<()>;
    fn send_key(&mut self, key: Self::Key, press: bool) -> Result<()>;
    /// Press or release a button; a wheel "button" (4-7) is one step when pressed.
    fn send_button(&mut self, button: Button, press: bool) -> Result<()>;
    /// Wheel steps, horizontal (positive = right) then vertical (positive = down).
    fn send_wheel(&mut self, steps_x: i32, steps_y: i32) -> Result<()> {
        let horizontal = if steps_x > 0 { WHEEL_RIGHT } else { WHEEL_LEFT };
        let vertical = if steps_y > 0 { WHEEL_DOWN } else { WHEEL_UP };
        for (button, steps) in [(horizontal, steps_x), (vertical, steps_y)] {
            for _ in 0..steps.unsigned_abs() {
                self.send_button(button, true)?;
                self.send_button(button, false)?;
            }
        }
        Ok(())
    }
    /// After a gesture's last event, before it is flushed.
    fn end_gesture(&mut self) {}
    /// Send what is queued.
    fn flush(&mut self) -> Result<()>;
    /// Wait until the far side has processed everything sent.
    fn round_trip(&mut self) -> Result<()>;
    /// Buttons [`Gestures::button`] pressed and left down, let go by
    /// [`Gestures::release_left_down`].
    fn left_down(&mut self) -> &mut Vec<Button>;
    /// When the current step must end.
    fn deadline(&self) -> Instant;
    /// The error of a step that ran out of time while `what`.
    fn timeout(&self, what: &str) -> DesktopError {
        DesktopError::Timeout {
            what: what.to_owned(),
            limit: Duration::ZERO,
        }
    }
    /// An error once the step's deadline has passed.
    fn check_deadline(&self, what: &str) -> Result<()> {
        if Instant::now() >= self.deadline() {
            return Err(self.timeout(what));
        }
        Ok(())
    }
}

/// Refuse a point off a `w`x`h` screen (a server would silently clamp it).
pub(crate) fn check_on_screen((w, h): (u32, u32), point: Point, field: &'static str) -> Result<()> {
    if point.x >= w || point.y >= h {
        return Err(DesktopError::invalid(
            field,
            format!(
                "({}, {}) is off the {w}x{h} screen; x must be 0-{} and y 0-{}",
                point.x,
                point.y,
                w.saturating_sub(1),
                h.saturating_sub(1)
            ),
        ));
    }
    Ok(())
}

/// The Linux input code (`BTN_LEFT`, ...) of a (non-wheel) button, as Wayland's virtual pointer and
/// libei send them. Buttons keep X's numbering: 1 left, 2 middle, 3 right, 8 back, 9 forward.
pub(crate) fn linux_button(button: Button) -> Result<u32> {
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

/// Refuse what is neither a button nor a wheel step (1-9).
pub(crate) fn check_button(button: Button) -> Result<()> {
    match button {
        WHEEL_UP | WHEEL_DOWN | WHEEL_LEFT | WHEEL_RIGHT => Ok(()),
        other => linux_button(other).map(|_| ()),
    }
}

/// The keysyms that type `text`, one per character; text with a control character is refused,
/// naming it, before any key is pressed.
pub(crate) fn text_keysyms(text: &str) -> Result<Vec<Keysym>> {
    keysym::for_text(text).map_err(|(i, c)| {
        DesktopError::invalid(
            "text",
            format!(
                "character {i} is {c:?}, a control character, not text; press keys with keypress"
            ),
        )
    })
}

pub(crate) fn is_wheel(button: Button) -> bool {
    matches!(button, WHEEL_UP | WHEEL_DOWN | WHEEL_LEFT | WHEEL_RIGHT)
}

/// Move the pointer to `at` (already checked), then press `modifiers`: the start of every pointer
/// gesture but a move.
fn held_at<'a, S: Seat>(seat: &'a mut S, at: Point, modifiers: &[Modifier]) -> Result<Held<'a, S>> {
    let keys = seat.modifier_keys(modifiers)?;
    let mut held = Held::new(seat);
    held.motion(at)?;
    for key in keys {
        held.key_down(key)?;
    }
    Ok(held)
}

/// The gestures, for every [`Seat`].
pub trait Gestures: Seat + Sized {
    /// Move the pointer, with `modifiers` held during the move.
    fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()> {
        self.check_point(to, "x/y")?;
        let keys = self.modifier_keys(modifiers)?;
        let mut held = Held::new(self);
        for key in keys {
            held.key_down(key)?;
        }
        held.motion(to)?;
        held.finish()
    }

    /// `count` clicks of `button` at `at`, with `modifiers` held.
    fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.check_point(at, "x/y")?;
        self.check_button(button)?;
        let mut held = held_at(self, at, modifiers)?;
        for _ in 0..count {
            held.button_down(button)?;
            held.button_up(button)?;
        }
        held.finish()
    }

    /// Wheel steps at `at`: horizontal first (positive = right), then vertical (positive = down).
    fn scroll(
        &mut self,
        at: Point,
        steps_x: i32,
        steps_y: i32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.check_point(at, "x/y")?;
        let held = held_at(self, at, modifiers)?;
        if steps_x != 0 {
            held.seat.send_wheel(steps_x, 0)?;
        }
        if steps_y != 0 {
            held.seat.send_wheel(0, steps_y)?;
        }
        held.finish()
    }

    /// Press `button` at the first point, move through the others in order, release at the last.
    fn drag(&mut self, path: &[Point], button: Button, modifiers: &[Modifier]) -> Result<()> {
        let Some(first) = path.first() else {
            return Err(DesktopError::invalid(
                "path",
                "a drag needs at least one point",
            ));
        };
        for point in path {
            self.check_point(*point, "path")?;
        }
        self.check_button(button)?;
        let mut held = held_at(self, *first, modifiers)?;
        held.button_down(button)?;
        for point in &path[1..] {
            held.motion(*point)?;
        }
        held.button_up(button)?;
        held.finish()
    }

    /// Press or release a button (at `at`, else where the pointer is) and leave it so (Anthropic's
    /// left_mouse_down / left_mouse_up); a wheel "button" is one step when pressed.
    fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()> {
        self.check_button(button)?;
        if let Some(at) = at {
            self.check_point(at, "x/y")?;
        }
        let left_down = self.left_down();
        left_down.retain(|b| *b != button);
        if press && !is_wheel(button) {
            left_down.push(button);
        }
        let mut held = Held::new(self);
        if let Some(at) = at {
            held.motion(at)?;
        }
        held.seat.send_button(button, press)?;
        held.finish()
    }

    /// Press `keys` in order, hold them for `hold`, release them in reverse order: a chord, once
    /// each key's code is known.
    fn press_keys(&mut self, keys: &[Self::Key], hold: Duration) -> Result<()> {
        let mut held = Held::new(self);
        for key in keys {
            held.key_down(*key)?;
        }
        held.hold(hold)?;
        held.finish()
    }

    /// Release the buttons [`Gestures::button`] left down (before closing, so the seat is left as we found it:
    /// a held button would block a real user's pointer).
    fn release_left_down(&mut self) -> Result<()> {
        let buttons = std::mem::take(self.left_down());
        let mut held = Held::new(self);
        held.buttons = buttons;
        held.finish()
    }
}

impl<S: Seat> Gestures for S {}

/// Keys and buttons pressed during one call, in order. Whatever is still down when it goes out of
/// scope is released, in reverse order.
pub(crate) struct Held<'a, S: Seat> {
    pub seat: &'a mut S,
    keys: Vec<S::Key>,
    buttons: Vec<Button>,
    finished: bool,
}

impl<'a, S: Seat> Held<'a, S> {
    pub fn new(seat: &'a mut S) -> Held<'a, S> {
        seat.begin_gesture();
        Held {
            seat,
            keys: Vec::new(),
            buttons: Vec::new(),
            finished: false,
        }
    }

    pub fn motion(&mut self, to: Point) -> Result<()> {
        self.seat.send_motion(to)
    }

    /// Press `key`, unless this call holds it already.
    pub fn key_down(&mut self, key: S::Key) -> Result<()> {
        if self.keys.contains(&key) {
            return Ok(());
        }
        self.keys.push(key);
        self.seat.send_key(key, true)
    }

    pub fn key_up(&mut self, key: S::Key) -> Result<()> {
        self.keys.retain(|k| *k != key);
        self.seat.send_key(key, false)
    }

    pub fn button_down(&mut self, button: Button) -> Result<()> {
        self.buttons.push(button);
        self.seat.send_button(button, true)
    }

    pub fn button_up(&mut self, button: Button) -> Result<()> {
        self.buttons.retain(|b| *b != button);
        self.seat.send_button(button, false)
    }

    /// Keep what is down for `hold` (holding is the point here, not synchronisation), within the
    /// step's deadline.
    pub fn hold(&mut self, hold: Duration) -> Result<()> {
        if hold.is_zero() {
            return Ok(());
        }
        self.seat.flush()?;
        let deadline = self.seat.deadline();
        let until = Instant::now() + hold;
        std::thread::sleep(
            until
                .min(deadline)
                .saturating_duration_since(Instant::now()),
        );
        if until > deadline {
            return Err(self.seat.timeout("holding the keys"));
        }
        Ok(())
    }

    /// Release what is still down and wait until the far side has processed it all.
    pub fn finish(mut self) -> Result<()> {
        self.finished = true;
        self.release()?;
        self.seat.round_trip()
    }

    fn release(&mut self) -> Result<()> {
        let mut first_error = Ok(());
        while let Some(button) = self.buttons.pop() {
            first_error = first_error.and(self.seat.send_button(button, false));
        }
        while let Some(key) = self.keys.pop() {
            first_error = first_error.and(self.seat.send_key(key, false));
        }
        self.seat.end_gesture();
        first_error.and(self.seat.flush())
    }
}

impl<S: Seat> Drop for Held<'_, S> {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.release();
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

    #[test]
    fn a_point_off_the_screen_is_refused_naming_the_field_and_the_bounds() {
        assert!(check_on_screen((800, 600), Point { x: 799, y: 599 }, "x/y").is_ok());
        let e = check_on_screen((800, 600), Point { x: 800, y: 10 }, "path").unwrap_err();
        assert_eq!(e.field(), Some("path"));
        assert!(e.to_string().contains("x must be 0-799 and y 0-599"), "{e}");
    }
}
