//! Input through XTest: pointer gestures (move, click, scroll, drag, a button left down), key chords
//! and text. Keys and buttons pressed by a call are released when it ends, whether it succeeds or
//! fails ([`Held`]).

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{self, ConnectionExt as _, Window};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use super::{Button, Point, WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT, WHEEL_UP, X11};
use crate::error::{DesktopError, Result};
use crate::keyboard::Modifier;
use crate::keysym::{self, Keysym};

impl X11 {
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
        let mut numlock_on: Option<bool> = None;
        for ks in keysyms {
            let keycode = match Modifier::of_keysym(*ks) {
                Some(modifier) => self.keyboard.modifier(modifier)?,
                None => {
                    let (mut keycode, mut needs_shift) = self.keyboard.ensure(&self.conn, *ks)?;
                    if self.keyboard.is_numlock_sensitive(keycode) {
                        let on = match numlock_on {
                            Some(on) => on,
                            None => {
                                let (_, state) = self.pointer()?;
                                let on = self
                                    .keyboard
                                    .numlock_mask()
                                    .is_some_and(|mask| state & mask != 0);
                                *numlock_on.insert(on)
                            }
                        };
                        // KP_1 is the second level of the KP_End key: NumLock on gives it. Otherwise
                        // the key goes on a keycode of its own (see Keyboard::is_numlock_sensitive).
                        let second_level = needs_shift;
                        if second_level != on {
                            (keycode, needs_shift) = self.keyboard.borrow(&self.conn, *ks)?;
                        } else {
                            needs_shift = false;
                        }
                    }
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
