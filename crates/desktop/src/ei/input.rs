//! [`Input`]: the input half of a desktop on an EIS server, with the names and meaning of the
//! [`crate::Backend`] input calls: absolute motion in the devices' regions, buttons as Linux input
//! codes, wheel steps as discrete scrolling (120 a step), keys and text through the compositor's own
//! keymap. The gestures are `crate::gestures`' over this [`Seat`], as X11's and wlroots' are.
//!
//! Events go out in frames, one per change (a key pressed and released in the same frame would be
//! nothing), between `start_emulating` and `stop_emulating` on each device a call uses; a device
//! holding a button left down ([`Input::button`]) keeps emulating until it is let go, since
//! `stop_emulating` lets the server release everything. Every call ends with a round trip, so when
//! it returns the server has taken the events (or the call says why not).

use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use super::keymap::{Press, ServerKeymap};
use super::link::{Cap, Device, Link, Region};
use crate::error::{DesktopError, Result};
use crate::gestures::{linux_button, Gestures as _, Held, Seat};
use crate::keyboard::Modifier;
use crate::keysym::{self, Keysym};
use crate::x11::{Button, Point, WHEEL_DOWN, WHEEL_LEFT, WHEEL_RIGHT, WHEEL_UP};

/// One wheel step in `ei_scroll.scroll_discrete` units.
const WHEEL_STEP: i32 = 120;

/// Input through an EIS server (see the module documentation). Each call runs until the deadline of
/// the last [`Input::begin`].
pub struct Input {
    link: Link,
    keymap: Option<ServerKeymap>,
    /// Where we last moved the pointer.
    position: Option<Point>,
    /// Buttons [`Input::button`] pressed and left down.
    left_down: Vec<Button>,
}

impl Input {
    /// Speak EI on `socket` (from the RemoteDesktop portal's `ConnectToEIS`, or [`super::socket`]):
    /// the handshake as a sender, bind the seat's pointer, button, scroll and keyboard capabilities,
    /// and wait until devices with them are added and resumed, all within `limit`. Errors: a seat
    /// without one of them (named), no such device in time (a timeout naming what is missing), the
    /// server disconnecting.
    pub fn connect(socket: UnixStream, limit: Duration) -> Result<Input> {
        let mut link = Link::handshake(socket, limit)?;
        link.wait_for_devices()?;
        let mut input = Input {
            link,
            keymap: None,
            position: None,
            left_down: Vec::new(),
        };
        input.take_keymap()?;
        Ok(input)
    }

    /// Start a call that must end by `deadline`: every wait of the call gives up there
    /// ([`DesktopError::Timeout`]). Reads what the server sent since the last call.
    pub fn begin(&mut self, deadline: Instant) -> Result<()> {
        self.link.begin(deadline)
    }

    /// The regions the absolute pointer reaches (the compositor's logical pixels).
    pub fn regions(&self) -> Vec<Region> {
        self.link
            .devices
            .iter()
            .filter(|d| d.usable() && d.has(Cap::PointerAbsolute))
            .flat_map(|d| d.regions.iter().copied())
            .collect()
    }

    /// The desktop's size: the box around every region.
    pub fn size(&self) -> (u32, u32) {
        self.regions().iter().fold((0, 0), |(w, h), r| {
            (
                w.max(r.x.saturating_add(r.width)),
                h.max(r.y.saturating_add(r.height)),
            )
        })
    }

    /// Where we last put the pointer (EI cannot read it back: the middle of the desktop before we
    /// moved it), and the X state mask of the buttons we hold down (Button1Mask, ...).
    pub fn pointer(&self) -> (Point, u16) {
        let (w, h) = self.size();
        let at = self.position.unwrap_or(Point { x: w / 2, y: h / 2 });
        let mask = self
            .left_down
            .iter()
            .filter(|b| (1..=5).contains(*b))
            .fold(0, |mask, b| mask | 1 << (7 + u16::from(*b)));
        (at, mask)
    }

    /// Refuse a point outside every region (the server would drop the event).
    pub fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        let regions = self.regions();
        if regions.iter().any(|r| r.contains(point.x, point.y)) {
            return Ok(());
        }
        let listed: Vec<String> = regions
            .iter()
            .map(|r| format!("{}x{} at ({}, {})", r.width, r.height, r.x, r.y))
            .collect();
        Err(DesktopError::invalid(
            field,
            format!(
                "({}, {}) is outside the screen; the pointer reaches {}",
                point.x,
                point.y,
                listed.join(", ")
            ),
        ))
    }

    /// Press the keys of one chord in order, hold them for `hold`, release them in reverse order. A
    /// keysym on a shifted level brings its modifier keys (Shift before "A"). Every keysym is
    /// looked up before a key is pressed: one the keymap lacks is an error naming it, and nothing
    /// is sent.
    pub fn key_chord(&mut self, keysyms: &[Keysym], hold: Duration) -> Result<()> {
        let mut keys: Vec<u32> = Vec::new();
        for ks in keysyms {
            let press = match Modifier::of_keysym(*ks) {
                Some(modifier) => Press {
                    key: self.modifier_key(modifier)?,
                    modifiers: Vec::new(),
                },
                None => self.press(*ks)?.ok_or_else(|| {
                    DesktopError::invalid("keys", format!("{} is on no key of the compositor's keymap (on libei the keymap is the compositor's, and cannot be added to)", keysym_name(*ks)))
                })?,
            };
            for key in press.modifiers.into_iter().chain([press.key]) {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        self.press_keys(&keys, hold)
    }

    /// Type text: each character is the key (and modifier keys) the compositor's keymap has for
    /// it. Newline is Return, tab is Tab. Every character is looked up before a key is pressed:
    /// a control character, or one the keymap cannot type, is an error naming it, and nothing is
    /// sent.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        let keysyms = crate::gestures::text_keysyms(text)?;
        let mut presses = Vec::with_capacity(keysyms.len());
        for ks in &keysyms {
            match self.press(*ks)? {
                Some(press) => presses.push(press),
                None => {
                    // The first character that fails is the first of its kind in the text.
                    let (i, c) = text
                        .chars()
                        .enumerate()
                        .find(|(_, c)| keysym::for_char(*c) == Some(*ks))
                        .unwrap_or((0, char::REPLACEMENT_CHARACTER));
                    return Err(DesktopError::invalid(
                        "text",
                        format!("character {i} is {c:?}, which no key of the compositor's keymap types (on libei the keymap is the compositor's, and cannot be added to)"),
                    ));
                }
            }
        }
        let mut held = Held::new(self);
        for press in presses {
            held.seat.check_deadline("typing")?;
            for key in &press.modifiers {
                held.key_down(*key)?;
            }
            held.key_down(press.key)?;
            held.key_up(press.key)?;
            for key in press.modifiers.iter().rev() {
                held.key_up(*key)?;
            }
        }
        held.finish()
    }

    /// Before closing: release the buttons [`Input::button`] left down and stop emulating, so the
    /// seat is left as we found it.
    pub fn leave_as_found(&mut self) -> Result<()> {
        self.release_left_down()
    }

    /// A round trip: everything sent so far has been processed by the server.
    pub fn sync(&mut self) -> Result<()> {
        self.link.sync()
    }

    /// The keyboard's keymap, read again when a (new) keyboard device brought one.
    fn keymap(&mut self) -> Result<&mut ServerKeymap> {
        self.take_keymap()?;
        self.keymap.as_mut().ok_or_else(|| {
            DesktopError::Eis(
                "the EIS keyboard came without a keymap, so which key types what is unknown".into(),
            )
        })
    }

    fn take_keymap(&mut self) -> Result<()> {
        let fresh = self
            .link
            .devices
            .iter_mut()
            .find(|d| d.has(Cap::Keyboard) && d.keymap.is_some())
            .and_then(|d| d.keymap.take());
        if let Some((fd, size)) = fresh {
            self.keymap = Some(ServerKeymap::read(fd, size)?);
        }
        Ok(())
    }

    /// How to type `keysym` on the keyboard as it is now (its locked modifiers and group).
    fn press(&mut self, keysym: Keysym) -> Result<Option<Press>> {
        let (locked, group) = (self.link.locked, self.link.group);
        Ok(self.keymap()?.press(keysym, locked, group))
    }

    fn modifier_key(&mut self, modifier: Modifier) -> Result<u32> {
        let (locked, group) = (self.link.locked, self.link.group);
        self.keymap()?
            .modifier(modifier, locked, group)
            .ok_or_else(|| {
                DesktopError::invalid(
                    "keys",
                    format!("the compositor's keymap has no {modifier:?} key"),
                )
            })
    }
}

impl Drop for Input {
    /// Let go of what is held and say goodbye, without waiting for the server.
    fn drop(&mut self) {
        if self.link.begin(Instant::now()).is_ok() {
            let _ = self.leave_as_found();
        }
        self.link.disconnect();
    }
}

impl std::fmt::Debug for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Input")
            .field("regions", &self.regions())
            .field("position", &self.position)
            .field("left_down", &self.left_down)
            .finish()
    }
}

impl Seat for Input {
    type Key = u32;

    fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        Input::check_point(self, point, field)
    }

    fn modifier_keys(&mut self, modifiers: &[Modifier]) -> Result<Vec<u32>> {
        modifiers.iter().map(|m| self.modifier_key(*m)).collect()
    }

    fn send_motion(&mut self, to: Point) -> Result<()> {
        let inside = |d: &Device| d.regions.iter().any(|r| r.contains(to.x, to.y));
        self.link.send(Cap::PointerAbsolute, inside, |device| {
            if let Some(pointer) = &device.pointer_absolute {
                pointer.motion_absolute(to.x as f32, to.y as f32);
            }
        })?;
        self.position = Some(to);
        Ok(())
    }

    fn send_key(&mut self, key: u32, press: bool) -> Result<()> {
        let state = if press {
            reis::ei::keyboard::KeyState::Press
        } else {
            reis::ei::keyboard::KeyState::Released
        };
        self.link.send(
            Cap::Keyboard,
            |_| true,
            |device| {
                if let Some(keyboard) = &device.keyboard {
                    keyboard.key(key, state);
                }
            },
        )
    }

    /// A wheel "button" is one discrete step when pressed, nothing when released.
    fn send_button(&mut self, button: Button, press: bool) -> Result<()> {
        let step = match button {
            WHEEL_UP => Some((0, -1)),
            WHEEL_DOWN => Some((0, 1)),
            WHEEL_LEFT => Some((-1, 0)),
            WHEEL_RIGHT => Some((1, 0)),
            _ => None,
        };
        if let Some((x, y)) = step {
            return if press { self.send_wheel(x, y) } else { Ok(()) };
        }
        let code = linux_button(button)?;
        let state = if press {
            reis::ei::button::ButtonState::Press
        } else {
            reis::ei::button::ButtonState::Released
        };
        self.link.send(
            Cap::Button,
            |_| true,
            |device| {
                if let Some(button) = &device.button {
                    button.button(code, state);
                }
            },
        )
    }

    /// Wheel steps on one axis (or both), as one discrete scroll.
    fn send_wheel(&mut self, steps_x: i32, steps_y: i32) -> Result<()> {
        let (x, y) = (
            steps_x.saturating_mul(WHEEL_STEP),
            steps_y.saturating_mul(WHEEL_STEP),
        );
        self.link.send(
            Cap::Scroll,
            |_| true,
            |device| {
                if let Some(scroll) = &device.scroll {
                    scroll.scroll_discrete(x, y);
                }
            },
        )
    }

    /// Stop emulating where nothing stays held: a device holding a button left down keeps
    /// emulating, since stopping would let it go.
    fn end_gesture(&mut self) {
        let holding = !self.left_down.is_empty();
        self.link
            .stop_all(|d| holding && (d.has(Cap::Button) || d.has(Cap::PointerAbsolute)));
    }

    fn flush(&mut self) -> Result<()> {
        self.link.flush()
    }

    fn round_trip(&mut self) -> Result<()> {
        self.link.sync()
    }

    fn left_down(&mut self) -> &mut Vec<Button> {
        &mut self.left_down
    }

    fn deadline(&self) -> Instant {
        self.link.deadline()
    }

    fn timeout(&self, what: &str) -> DesktopError {
        self.link.timeout(what)
    }
}

fn keysym_name(keysym: Keysym) -> String {
    match (keysym::name(keysym), keysym::to_char(keysym)) {
        (Some(name), _) => name.to_owned(),
        (None, Some(c)) => format!("{c:?}"),
        (None, None) => format!("keysym {keysym:#x}"),
    }
}
