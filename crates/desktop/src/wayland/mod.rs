//! A blocking client for wlroots compositors (sway, Hyprland, labwc, river, ...): the Wayland
//! counterpart of [`crate::x11::X11`], with the same method names where they apply.
//!
//! - capture: wlr-screencopy into shared memory (`screencopy`);
//! - input: a wlr virtual pointer (absolute motion over the output, buttons, wheel steps) and a
//!   virtual keyboard with a keymap of our own that types any Unicode (`input`, `keymap`);
//! - the clipboard through wlr-data-control (`clipboard`), windows through wlr-foreign-toplevel
//!   (`toplevels`), and a damage watch for waits without polling (`damage`).
//!
//! What the compositor offers decides whether it can be used, not environment variables: without
//! the wlroots input protocols (GNOME, KDE) [`Wayland::connect`] says so before sending anything.
//! Every wait reads the socket under the deadline of [`Wayland::begin`] (`blocking`).

pub(crate) mod blocking;
pub mod clipboard;
pub mod damage;
mod gestures;
mod globals;
pub(crate) mod input;
mod keymap;
mod screencopy;
pub mod toplevels;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::{Connection, EventQueue, Proxy};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1;
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1;
use wayland_protocols_wlr::virtual_pointer::v1::client::zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1;

use self::blocking::{roundtrip, Until};
use self::globals::{Globals, KNOWN};
use self::input::Input;
use self::screencopy::{Screencopy, Want};
use crate::capture::Frame;
use crate::error::{DesktopError, Result};
use crate::x11::Point;

pub use self::clipboard::ClipboardServer;
pub use self::damage::DamageWatch;
pub use self::toplevels::Toplevel;

/// A live connection to a wlroots compositor, acting on its first output and seat.
pub struct Wayland {
    conn: Connection,
    queue: EventQueue<Globals>,
    globals: Globals,
    registry: WlRegistry,
    seat: WlSeat,
    capture: Screencopy,
    input: Input,
    /// The protocols found, of those screenpilot uses.
    found: Vec<&'static str>,
    socket: PathBuf,
    deadline: Instant,
}

impl Wayland {
    /// Connect to the compositor whose socket is at `socket` (the absolute path of its
    /// `WAYLAND_DISPLAY`), bind what screenpilot uses and upload the keyboard's keymap. Errors: no
    /// socket there; a compositor without virtual pointer and keyboard (input cannot be delivered),
    /// without screencopy, or without an output or seat — each checked before any request but the
    /// registry's is sent.
    pub fn connect(socket: &Path) -> Result<Wayland> {
        let deadline = Instant::now() + Duration::from_secs(10);
        let conn = globals::open(socket)?;
        let (mut queue, mut globals, registry) = globals::discover(&conn, deadline)?;
        globals::check_offered(|name| globals.has(name))?;
        let output = globals::bind_output(&conn, &mut queue, &mut globals, &registry, deadline)?;
        let found = KNOWN
            .iter()
            .copied()
            .filter(|name| globals.has(name))
            .collect();
        let qh = queue.handle();
        let seat: WlSeat = globals::bind(&registry, &globals, globals::SEAT, 1, &qh, ())
            .ok_or_else(|| DesktopError::Connection("the compositor offers no wl_seat".into()))?;
        let pointers: ZwlrVirtualPointerManagerV1 =
            globals::bind(&registry, &globals, globals::VIRTUAL_POINTER, 2, &qh, ()).ok_or_else(
                || DesktopError::Connection("the virtual pointer manager went away".into()),
            )?;
        let keyboards: ZwpVirtualKeyboardManagerV1 =
            globals::bind(&registry, &globals, globals::VIRTUAL_KEYBOARD, 1, &qh, ()).ok_or_else(
                || DesktopError::Connection("the virtual keyboard manager went away".into()),
            )?;
        // With the output, absolute motion spans that output alone (version 2).
        let pointer: ZwlrVirtualPointerV1 = if pointers.version() >= 2 {
            pointers.create_virtual_pointer_with_output(Some(&seat), Some(&output), &qh, ())
        } else {
            pointers.create_virtual_pointer(Some(&seat), &qh, ())
        };
        let keyboard: ZwpVirtualKeyboardV1 = keyboards.create_virtual_keyboard(&seat, &qh, ());
        let capture = Screencopy::new(&conn, &registry, &globals, output)?;
        let input = Input::new(conn.clone(), pointer, keyboard);
        let mut wayland = Wayland {
            conn,
            queue,
            globals,
            registry,
            seat,
            capture,
            input,
            found,
            socket: socket.to_owned(),
            deadline,
        };
        // The keymap, then a round trip before any key (see `input`: the first-keystroke trap).
        wayland.input.upload_keymap()?;
        wayland.sync()?;
        Ok(wayland)
    }

    /// The protocols found of those screenpilot uses (`wl_output`, ...,
    /// `zwlr_data_control_manager_v1`, `zwlr_foreign_toplevel_manager_v1`).
    pub fn protocols(&self) -> Vec<&'static str> {
        self.found.clone()
    }

    /// The compositor's socket.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The output's size in pixels (its current mode; what a capture holds).
    pub fn size(&self) -> (u32, u32) {
        (self.globals.output.width, self.globals.output.height)
    }

    /// The output's integer scale as the compositor announces it to clients (`wl_output.scale`; a
    /// fractional scale is rounded up).
    pub fn output_scale(&self) -> u32 {
        self.globals.output.scale.max(1) as u32
    }

    /// The output's size in logical units (the pixels divided by its scale), as clients lay out.
    pub fn logical_size(&self) -> (u32, u32) {
        let scale = self.output_scale();
        (
            self.globals.output.width / scale,
            self.globals.output.height / scale,
        )
    }

    /// Start a call: set its deadline, which every later wait of the call gives up at
    /// ([`DesktopError::Timeout`]), and read pending events (a new output mode).
    pub fn begin(&mut self, deadline: Instant) -> Result<()> {
        self.deadline = deadline;
        self.queue
            .dispatch_pending(&mut self.globals)
            .map_err(blocking::dispatch_error)?;
        Ok(())
    }

    fn until(&self) -> Until<'static> {
        Until::deadline(self.deadline)
    }

    /// A round trip: everything sent so far has been processed by the compositor.
    pub fn sync(&mut self) -> Result<()> {
        let until = self.until();
        roundtrip(
            &self.conn,
            &mut self.queue,
            &mut self.globals,
            until,
            "a round trip to the compositor",
        )
    }

    /// Capture the output, with the pointer drawn in when `pointer` is set.
    pub fn capture(&mut self, pointer: bool) -> Result<Frame> {
        let until = self.until();
        let copied = self
            .capture
            .copy_with_pointer(&self.conn, Want::Pixels, pointer, until)?;
        let frame = copied.frame.ok_or(DesktopError::Closed)?;
        let output = &mut self.globals.output;
        (output.width, output.height) = (frame.width, frame.height);
        Ok(frame)
    }

    /// A hash of the screen's pixels, without the pointer ([`Frame::hash`] of `capture(false)`).
    pub fn screen_hash(&mut self) -> Result<u64> {
        Ok(self.capture(false)?.hash())
    }

    /// Where we last put the pointer (the virtual pointer cannot read it back: the output's middle
    /// before we moved it), and the X state mask of the buttons we hold down (Button1Mask, ...).
    pub fn pointer(&self) -> Result<(Point, u16)> {
        let (w, h) = self.size();
        let at = self.input.position.unwrap_or(Point { x: w / 2, y: h / 2 });
        Ok((at, self.input.button_mask()))
    }

    /// The connection, for callers that need more than this type offers.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }
}

wayland_client::delegate_noop!(Globals: ignore WlSeat);
wayland_client::delegate_noop!(Globals: ZwlrVirtualPointerManagerV1);
wayland_client::delegate_noop!(Globals: ZwlrVirtualPointerV1);
wayland_client::delegate_noop!(Globals: ZwpVirtualKeyboardManagerV1);
wayland_client::delegate_noop!(Globals: ZwpVirtualKeyboardV1);

impl std::fmt::Debug for Wayland {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wayland")
            .field("socket", &self.socket)
            .field("size", &self.size())
            .field("protocols", &self.found)
            .finish()
    }
}
