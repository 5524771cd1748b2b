//! The input of [`Wayland`]: its [`Seat`] (the virtual devices of `input`, a round trip to the
//! compositor), under the gestures of `crate::gestures`, and key chords and text, each key of our
//! own keymap.

use std::time::{Duration, Instant};

use super::Wayland;
use crate::error::{DesktopError, Result};
use crate::gestures::{Gestures, Held, Seat};
use crate::keyboard::Modifier;
use crate::keysym::Keysym;
use crate::x11::{Button, Point};

impl Seat for Wayland {
    type Key = u32;

    fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        crate::gestures::check_on_screen(self.size(), point, field)
    }

    fn modifier_keys(&mut self, modifiers: &[Modifier]) -> Result<Vec<u32>> {
        Ok(modifiers
            .iter()
            .map(|m| self.input.keymap.modifier(*m).0)
            .collect())
    }

    /// Absolute motion is over the output's extent, which may have changed.
    fn begin_gesture(&mut self) {
        self.input.extent = self.size();
    }

    fn send_motion(&mut self, to: Point) -> Result<()> {
        self.input.motion(to);
        Ok(())
    }

    fn send_key(&mut self, key: u32, press: bool) -> Result<()> {
        self.input.key(key, press);
        Ok(())
    }

    fn send_button(&mut self, button: Button, press: bool) -> Result<()> {
        self.input.button(button, press)
    }

    fn flush(&mut self) -> Result<()> {
        self.input.flush()
    }

    fn round_trip(&mut self) -> Result<()> {
        self.sync()
    }

    fn left_down(&mut self) -> &mut Vec<Button> {
        &mut self.input.left_down
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }
}

impl Wayland {
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
        let keys = keysyms
            .iter()
            .map(|ks| match Modifier::of_keysym(*ks) {
                Some(m) => Ok(self.input.keymap.modifier(m).0),
                None => self.key_of(*ks),
            })
            .collect::<Result<Vec<u32>>>()?;
        self.press_keys(&keys, hold)
    }

    /// Type text: each character is one key press of a key our keymap gives its keysym (uploaded
    /// again, with a round trip, when the text needs keysyms it lacks). Newline is Return, tab is
    /// Tab. Text with a control character is refused before any key is pressed.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        let keysyms = crate::gestures::text_keysyms(text)?;
        let mut rest = &keysyms[..];
        while !rest.is_empty() {
            self.check_deadline("typing")?;
            let fits = self.ensure_keys(rest)?;
            let keys = rest[..fits]
                .iter()
                .map(|ks| self.key_of(*ks))
                .collect::<Result<Vec<u32>>>()?;
            let mut held = Held::new(self);
            for key in keys {
                held.key_down(key)?;
                held.key_up(key)?;
            }
            held.finish()?;
            rest = &rest[fits..];
        }
        Ok(())
    }

    fn key_of(&self, keysym: Keysym) -> Result<u32> {
        self.input
            .keymap
            .key(keysym)
            .ok_or_else(|| DesktopError::Connection("the keymap lost a key it was given".into()))
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

    /// Before closing: release the buttons [`Gestures::button`] left down, so the seat is left
    /// as we found it.
    pub fn leave_as_found(&mut self) -> Result<()> {
        self.release_left_down()
    }
}
