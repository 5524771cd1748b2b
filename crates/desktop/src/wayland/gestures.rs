//! The gestures of [`Wayland`]: pointer motion, clicks, wheel steps, drags, a button left down,
//! key chords and text, each through the virtual devices of `input`, releasing what it pressed
//! ([`Held`]) whether it succeeds or fails.

use std::time::{Duration, Instant};

use super::input::{check_button, Held};
use super::Wayland;
use crate::error::{DesktopError, Result};
use crate::keyboard::Modifier;
use crate::keysym::{self, Keysym};
use crate::x11::{Button, Point, WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT, WHEEL_UP};

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
