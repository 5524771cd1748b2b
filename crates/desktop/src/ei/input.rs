//! [`Input`]: the input half of a desktop on an EIS server, with the names and meaning of the
//! [`crate::Backend`] input calls: absolute motion in the devices' regions, buttons as Linux input
//! codes, wheel steps as discrete scrolling (120 a step), keys and text through the compositor's own
//! keymap. As with X11 and wlroots input, keys and buttons a call pressed are released when it ends,
//! whether it succeeds or fails ([`Held`]).
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
use crate::keyboard::Modifier;
use crate::keysym::{self, Keysym};
use crate::wayland::input::linux_button;
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

    /// Move the pointer, with `modifiers` held during the move.
    pub fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()> {
        self.check_point(to, "x/y")?;
        let keys = self.modifier_keys(modifiers)?;
        let mut held = self.held();
        for key in keys {
            held.key_down(key)?;
        }
        held.motion(to)?;
        held.finish()
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
        let code = linux_button(button)?;
        let mut held = self.held_at(at, modifiers)?;
        for _ in 0..count {
            held.button_down(code)?;
            held.button_up(code)?;
        }
        held.finish()
    }

    /// Wheel steps at `at`: horizontal first (positive = right), then vertical (positive = down),
    /// each axis one discrete scroll of 120 per step.
    pub fn scroll(
        &mut self,
        at: Point,
        steps_x: i32,
        steps_y: i32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.check_point(at, "x/y")?;
        let mut held = self.held_at(at, modifiers)?;
        if steps_x != 0 {
            held.wheel(steps_x, 0)?;
        }
        if steps_y != 0 {
            held.wheel(0, steps_y)?;
        }
        held.finish()
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
        let code = linux_button(button)?;
        let mut held = self.held_at(*first, modifiers)?;
        held.button_down(code)?;
        for point in &path[1..] {
            held.motion(*point)?;
        }
        held.button_up(code)?;
        held.finish()
    }

    /// Press or release a button and leave it so (Anthropic's left_mouse_down / left_mouse_up); a
    /// wheel "button" is one step when pressed.
    pub fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()> {
        let wheel = match button {
            WHEEL_UP => Some((0, -1)),
            WHEEL_DOWN => Some((0, 1)),
            WHEEL_LEFT => Some((-1, 0)),
            WHEEL_RIGHT => Some((1, 0)),
            _ => None,
        };
        let code = match wheel {
            Some(_) => 0,
            None => linux_button(button)?,
        };
        if let Some(at) = at {
            self.check_point(at, "x/y")?;
        }
        self.left_down.retain(|b| *b != button);
        if press && wheel.is_none() {
            self.left_down.push(button);
        }
        let mut held = self.held();
        if let Some(at) = at {
            held.motion(at)?;
        }
        match wheel {
            Some((x, y)) if press => held.wheel(x, y)?,
            Some(_) => {}
            None => held.button(code, press)?,
        }
        held.finish()
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
        let deadline = self.link.deadline();
        let mut held = self.held();
        for key in keys {
            held.key_down(key)?;
        }
        if !hold.is_zero() {
            held.input.link.flush()?;
            let until = Instant::now() + hold;
            // Holding is the point here, not synchronisation: the keys stay down for `hold`.
            std::thread::sleep(
                until
                    .min(deadline)
                    .saturating_duration_since(Instant::now()),
            );
            if until > deadline {
                return Err(held.input.link.timeout("holding the keys"));
            }
        }
        held.finish()
    }

    /// Type text: each character is the key (and modifier keys) the compositor's keymap has for
    /// it. Newline is Return, tab is Tab. Every character is looked up before a key is pressed:
    /// a control character, or one the keymap cannot type, is an error naming it, and nothing is
    /// sent.
    pub fn type_text(&mut self, text: &str) -> Result<()> {
        let keysyms = keysym::for_text(text).map_err(|(i, c)| {
            DesktopError::invalid(
                "text",
                format!("character {i} is {c:?}, a control character, not text; press keys with keypress"),
            )
        })?;
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
        let mut held = self.held();
        for press in presses {
            held.check_deadline()?;
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
        let buttons = std::mem::take(&mut self.left_down);
        let mut held = self.held();
        for button in buttons {
            if let Ok(code) = linux_button(button) {
                held.buttons.push(code);
            }
        }
        held.finish()
    }

    /// A round trip: everything sent so far has been processed by the server.
    pub fn sync(&mut self) -> Result<()> {
        self.link.sync()
    }

    fn held(&mut self) -> Held<'_> {
        Held {
            input: self,
            keys: Vec::new(),
            buttons: Vec::new(),
        }
    }

    /// Move to `at` (already checked), then press `modifiers`: the start of every pointer gesture.
    fn held_at(&mut self, at: Point, modifiers: &[Modifier]) -> Result<Held<'_>> {
        let keys = self.modifier_keys(modifiers)?;
        let mut held = self.held();
        held.motion(at)?;
        for key in keys {
            held.key_down(key)?;
        }
        Ok(held)
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

    fn modifier_keys(&mut self, modifiers: &[Modifier]) -> Result<Vec<u32>> {
        modifiers.iter().map(|m| self.modifier_key(*m)).collect()
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

/// Keys and buttons pressed during one call (evdev codes, in order). Whatever is still down when it
/// goes out of scope is released, in reverse order: no modifier stays stuck after an error.
struct Held<'a> {
    input: &'a mut Input,
    keys: Vec<u32>,
    buttons: Vec<u32>,
}

impl Held<'_> {
    fn motion(&mut self, to: Point) -> Result<()> {
        let inside = |d: &Device| d.regions.iter().any(|r| r.contains(to.x, to.y));
        self.input
            .link
            .send(Cap::PointerAbsolute, inside, |device| {
                if let Some(pointer) = &device.pointer_absolute {
                    pointer.motion_absolute(to.x as f32, to.y as f32);
                }
            })?;
        self.input.position = Some(to);
        Ok(())
    }

    fn key(&mut self, key: u32, press: bool) -> Result<()> {
        let state = if press {
            reis::ei::keyboard::KeyState::Press
        } else {
            reis::ei::keyboard::KeyState::Released
        };
        self.input.link.send(
            Cap::Keyboard,
            |_| true,
            |device| {
                if let Some(keyboard) = &device.keyboard {
                    keyboard.key(key, state);
                }
            },
        )
    }

    fn key_down(&mut self, key: u32) -> Result<()> {
        self.keys.push(key);
        self.key(key, true)
    }

    fn key_up(&mut self, key: u32) -> Result<()> {
        self.keys.retain(|k| *k != key);
        self.key(key, false)
    }

    fn button(&mut self, code: u32, press: bool) -> Result<()> {
        let state = if press {
            reis::ei::button::ButtonState::Press
        } else {
            reis::ei::button::ButtonState::Released
        };
        self.input.link.send(
            Cap::Button,
            |_| true,
            |device| {
                if let Some(button) = &device.button {
                    button.button(code, state);
                }
            },
        )
    }

    fn button_down(&mut self, code: u32) -> Result<()> {
        self.buttons.push(code);
        self.button(code, true)
    }

    fn button_up(&mut self, code: u32) -> Result<()> {
        self.buttons.retain(|b| *b != code);
        self.button(code, false)
    }

    /// Wheel steps on one axis (or both), as one discrete scroll.
    fn wheel(&mut self, steps_x: i32, steps_y: i32) -> Result<()> {
        let (x, y) = (
            steps_x.saturating_mul(WHEEL_STEP),
            steps_y.saturating_mul(WHEEL_STEP),
        );
        self.input.link.send(
            Cap::Scroll,
            |_| true,
            |device| {
                if let Some(scroll) = &device.scroll {
                    scroll.scroll_discrete(x, y);
                }
            },
        )
    }

    fn check_deadline(&self) -> Result<()> {
        if Instant::now() >= self.input.link.deadline() {
            return Err(self.input.link.timeout("typing"));
        }
        Ok(())
    }

    /// Release what is still down, stop emulating where nothing stays held, and wait until the
    /// server has it all.
    fn finish(mut self) -> Result<()> {
        self.release()?;
        self.input.link.sync()
    }

    fn release(&mut self) -> Result<()> {
        let mut first_error = Ok(());
        while let Some(code) = self.buttons.pop() {
            let sent = self.button(code, false);
            first_error = first_error.and(sent);
        }
        while let Some(key) = self.keys.pop() {
            let sent = self.key(key, false);
            first_error = first_error.and(sent);
        }
        // A device holding a button left down keeps emulating: stopping would let it go.
        let holding = !self.input.left_down.is_empty();
        self.input
            .link
            .stop_all(|d| holding && (d.has(Cap::Button) || d.has(Cap::PointerAbsolute)));
        let flushed = self.input.link.flush();
        first_error.and(flushed)
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        // After `finish` nothing is left, and this costs nothing.
        let _ = self.release();
    }
}

fn keysym_name(keysym: Keysym) -> String {
    match (keysym::name(keysym), keysym::to_char(keysym)) {
        (Some(name), _) => name.to_owned(),
        (None, Some(c)) => format!("{c:?}"),
        (None, None) => format!("keysym {keysym:#x}"),
    }
}
