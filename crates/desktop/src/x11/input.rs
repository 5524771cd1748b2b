//! Input through XTest: the [`Seat`] under the gestures of `crate::gestures`, and key chords and
//! text, with keycodes borrowed for keysyms the keymap lacks (`crate::keyboard`).

use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{self, ConnectionExt as _};
use x11rb::protocol::xtest::ConnectionExt as _;

use super::{Button, Point, X11};
use crate::error::{DesktopError, Result};
use crate::gestures::{Gestures, Held, Seat};
use crate::keyboard::Modifier;
use crate::keysym::Keysym;

impl Seat for X11 {
    type Key = u8;

    fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        X11::check_point(self, point, field)
    }

    fn modifier_keys(&mut self, modifiers: &[Modifier]) -> Result<Vec<u8>> {
        modifiers
            .iter()
            .map(|m| self.keyboard.modifier(*m))
            .collect()
    }

    fn send_motion(&mut self, to: Point) -> Result<()> {
        self.fake(xproto::MOTION_NOTIFY_EVENT, 0, Some(to))
    }

    fn send_key(&mut self, keycode: u8, press: bool) -> Result<()> {
        let kind = if press {
            xproto::KEY_PRESS_EVENT
        } else {
            xproto::KEY_RELEASE_EVENT
        };
        self.fake(kind, keycode, None)
    }

    /// X has buttons for the wheel (4-7): a step is a press and a release.
    fn send_button(&mut self, button: Button, press: bool) -> Result<()> {
        let kind = if press {
            xproto::BUTTON_PRESS_EVENT
        } else {
            xproto::BUTTON_RELEASE_EVENT
        };
        self.fake(kind, button, None)
    }

    fn flush(&mut self) -> Result<()> {
        self.conn.flush()?;
        Ok(())
    }

    fn round_trip(&mut self) -> Result<()> {
        self.conn.get_input_focus()?.reply()?;
        Ok(())
    }

    fn left_down(&mut self) -> &mut Vec<Button> {
        &mut self.left_down
    }

    fn deadline(&self) -> Instant {
        self.deadline
    }
}

impl X11 {
    fn fake(&self, kind: u8, detail: u8, at: Option<Point>) -> Result<()> {
        let (x, y) = at.map_or((0, 0), |p| (p.x as i16, p.y as i16));
        self.conn
            .xtest_fake_input(kind, detail, 0, self.root, x, y, 0)?;
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
        self.press_keys(&keycodes, hold)
    }

    /// Type text: each character's key (with Shift when needed); characters the keymap lacks go on
    /// spare keycodes. Newline is Return, tab is Tab. Text with a character that is no key (a control
    /// character) is refused before any key is pressed.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        let keysyms = crate::gestures::text_keysyms(text)?;
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
            let shift = match (needs_shift, shift) {
                (false, _) => None,
                (true, Some(s)) => Some(s),
                (true, None) => {
                    return Err(DesktopError::Protocol(
                        "this keymap has no Shift key".into(),
                    ))
                }
            };
            let mut held = Held::new(self);
            if let Some(s) = shift {
                held.key_down(s)?;
            }
            held.key_down(keycode)?;
            held.key_up(keycode)?;
            held.finish()?;
        }
        Ok(())
    }

    /// Before closing, so an attached display is left as we found it: release the buttons
    /// [`Gestures::button`] left down (a held button would block the real user's pointer) and put
    /// borrowed keycodes back.
    pub fn leave_as_found(&mut self) -> Result<()> {
        self.release_left_down()?;
        self.keyboard.restore(&self.conn)?;
        self.sync()
    }
}
