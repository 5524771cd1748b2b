//! The EI protocol as a sender, on one socket: the handshake, the seat and the devices the EIS server
//! announces (their regions, the keyboard's keymap), pings, and a sync round trip. reis parses and
//! writes the messages; what they mean for us is kept here, as plain state ([`Device`]).
//!
//! Every wait reads the socket in `poll(2)` under the deadline of the current step and ends with
//! [`DesktopError::Timeout`] naming what was still missing; nothing blocks without one. A server that
//! says `disconnected` or closes the socket ends the wait with [`DesktopError::Connection`], its
//! reason included; one that sends what cannot be parsed, with [`DesktopError::Eis`]. What the server
//! says is taken in by `events`.

mod events;

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use reis::ei;
use reis::handshake::EiHandshaker;
use reis::PendingRequestResult;

use crate::error::{DesktopError, Result};
use crate::wayland::blocking::{wait_for, Until};

/// The name the EIS server (and a compositor's dialog) shows for us.
const CLIENT_NAME: &str = "screenpilot";

/// What a device can do, by the protocol interface that carries it; the four input needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cap {
    PointerAbsolute,
    Button,
    Scroll,
    Keyboard,
}

impl Cap {
    pub const ALL: [Cap; 4] = [
        Cap::PointerAbsolute,
        Cap::Button,
        Cap::Scroll,
        Cap::Keyboard,
    ];

    pub fn interface(self) -> &'static str {
        match self {
            Cap::PointerAbsolute => "ei_pointer_absolute",
            Cap::Button => "ei_button",
            Cap::Scroll => "ei_scroll",
            Cap::Keyboard => "ei_keyboard",
        }
    }

    /// What the capability is for, in an error.
    pub fn purpose(self) -> &'static str {
        match self {
            Cap::PointerAbsolute => "pointer motion",
            Cap::Button => "buttons",
            Cap::Scroll => "the wheel",
            Cap::Keyboard => "keys",
        }
    }
}

/// A rectangle of the desktop an absolute pointer reaches, in the compositor's logical pixels; `scale`
/// is how many physical pixels one of them covers (what a capture at full resolution would add).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    pub scale: f32,
}

impl Region {
    pub fn contains(&self, x: u32, y: u32) -> bool {
        (self.x..self.x.saturating_add(self.width)).contains(&x)
            && (self.y..self.y.saturating_add(self.height)).contains(&y)
    }
}

/// A seat the server announced, and the capabilities (interface, mask) it offers.
struct Seat {
    proxy: ei::Seat,
    name: String,
    offers: Vec<(String, u64)>,
}

/// A device the server added to our seat.
pub(crate) struct Device {
    proxy: ei::Device,
    pub name: String,
    pub pointer_absolute: Option<ei::PointerAbsolute>,
    pub button: Option<ei::Button>,
    pub scroll: Option<ei::Scroll>,
    pub keyboard: Option<ei::Keyboard>,
    pub regions: Vec<Region>,
    /// The keyboard's XKB keymap (a descriptor and its size), until it is read.
    pub keymap: Option<(OwnedFd, u32)>,
    /// All its interfaces are known (`ei_device.done`).
    done: bool,
    /// Events may be sent (`resumed`, and not `paused` since).
    resumed: bool,
    /// Between our `start_emulating` and `stop_emulating`.
    pub emulating: bool,
}

impl Device {
    pub fn has(&self, cap: Cap) -> bool {
        match cap {
            Cap::PointerAbsolute => self.pointer_absolute.is_some() && !self.regions.is_empty(),
            Cap::Button => self.button.is_some(),
            Cap::Scroll => self.scroll.is_some(),
            Cap::Keyboard => self.keyboard.is_some(),
        }
    }

    /// Added in full and resumed: input may be sent through it.
    pub fn usable(&self) -> bool {
        self.done && self.resumed
    }
}

/// One connection to an EIS server, as a sender.
pub(crate) struct Link {
    context: ei::Context,
    connection: ei::Connection,
    seats: Vec<Seat>,
    /// The seat we bound (the first the server finished announcing).
    bound: Option<ei::Seat>,
    pub devices: Vec<Device>,
    /// The last serial the server sent, which every request about devices repeats.
    last_serial: u32,
    /// Counts `start_emulating` (the protocol wants it to grow by at least one each time).
    sequence: u32,
    /// The keyboard's locked modifiers and group, from its last `modifiers` event.
    pub locked: u32,
    pub group: u32,
    /// The callback of the sync in flight, and whether it answered.
    sync: Option<ei::Callback>,
    synced: bool,
    deadline: Instant,
    limit: Duration,
}

impl Link {
    /// The handshake as a sender on `socket`, within `limit`.
    pub fn handshake(socket: UnixStream, limit: Duration) -> Result<Link> {
        let deadline = Instant::now() + limit;
        let context = ei::Context::new(socket)
            .map_err(|e| DesktopError::Connection(format!("the EIS socket: {e}")))?;
        let mut handshaker = EiHandshaker::new(CLIENT_NAME, ei::handshake::ContextType::Sender);
        let reply = loop {
            let event = next_event(&context, deadline, limit)?;
            let answer = handshaker.handle_event(event).map_err(|e| {
                DesktopError::Eis(format!("the EIS server broke the handshake: {e}"))
            })?;
            if let Some(reply) = answer {
                break reply;
            }
        };
        let missing: Vec<&str> = ["ei_seat", "ei_device"]
            .into_iter()
            .chain(Cap::ALL.map(Cap::interface))
            .filter(|name| !reply.negotiated_interfaces.contains_key(*name))
            .collect();
        if !missing.is_empty() {
            return Err(DesktopError::Eis(format!(
                "the EIS server does not speak {}, which input needs",
                missing.join(", ")
            )));
        }
        Ok(Link {
            context,
            connection: reply.connection,
            seats: Vec::new(),
            bound: None,
            devices: Vec::new(),
            last_serial: reply.serial,
            sequence: 0,
            locked: 0,
            group: 0,
            sync: None,
            synced: false,
            deadline,
            limit,
        })
    }

    /// Start a step that must end by `deadline`, and take in what the server sent meanwhile (a
    /// device paused, a disconnection).
    pub fn begin(&mut self, deadline: Instant) -> Result<()> {
        let now = Instant::now();
        self.deadline = deadline;
        self.limit = deadline.saturating_duration_since(now);
        // A `disconnected` read with the end of the socket says more than the end alone.
        let read = self.read();
        self.dispatch()?;
        read
    }

    /// The first usable device with `cap` that `fits`, waiting for the server to add or resume
    /// one (a device is paused while, for example, the screen is locked).
    fn device(&mut self, cap: Cap, fits: impl Fn(&Device) -> bool) -> Result<usize> {
        let find = |link: &Link| {
            link.devices
                .iter()
                .position(|d| d.usable() && d.has(cap) && fits(d))
        };
        self.wait_until(
            |link| link.waiting_for(&[cap]),
            |link| {
                link.check_offered(&[cap])?;
                Ok(find(link).is_some())
            },
        )?;
        find(self).ok_or_else(|| DesktopError::Eis("a device went away".into()))
    }

    /// Wait until a usable device offers each capability input needs.
    pub fn wait_for_devices(&mut self) -> Result<()> {
        self.wait_until(
            |link| link.waiting_for(&Cap::ALL),
            |link| {
                link.check_offered(&Cap::ALL)?;
                Ok(link.missing(&Cap::ALL).is_empty())
            },
        )
    }

    /// The capabilities of `caps` no usable device has yet.
    fn missing(&self, caps: &[Cap]) -> Vec<Cap> {
        caps.iter()
            .copied()
            .filter(|cap| !self.devices.iter().any(|d| d.usable() && d.has(*cap)))
            .collect()
    }

    /// What a wait for `caps` is still waiting for, for its timeout.
    fn waiting_for(&self, caps: &[Cap]) -> String {
        if self.bound.is_none() {
            return "waiting for the EIS server to announce a seat".into();
        }
        let missing: Vec<String> = self
            .missing(caps)
            .into_iter()
            .map(|cap| format!("{} ({})", cap.purpose(), cap.interface()))
            .collect();
        let mut what = format!(
            "waiting for the EIS server to add and resume a device for {}",
            missing.join(", ")
        );
        let known: Vec<String> = self
            .devices
            .iter()
            .map(|d| {
                let state = match (d.done, d.resumed) {
                    (false, _) => "not finished",
                    (true, false) => "paused",
                    (true, true) => "resumed",
                };
                format!("'{}' {state}", d.name)
            })
            .collect();
        if known.is_empty() {
            what.push_str(" (it added none)");
        } else {
            what.push_str(&format!(" (it added {})", known.join(", ")));
        }
        what
    }

    /// Refuse at once when the bound seat does not offer one of `caps`: no device will come.
    fn check_offered(&self, caps: &[Cap]) -> Result<()> {
        let Some(seat) = self
            .bound
            .as_ref()
            .and_then(|bound| self.seats.iter().find(|s| s.proxy == *bound))
        else {
            return Ok(());
        };
        let lacking: Vec<&str> = caps
            .iter()
            .map(|cap| cap.interface())
            .filter(|name| !seat.offers.iter().any(|(offered, _)| offered == name))
            .collect();
        if lacking.is_empty() {
            return Ok(());
        }
        let offered: Vec<&str> = seat.offers.iter().map(|(name, _)| name.as_str()).collect();
        Err(DesktopError::Eis(format!(
            "the EIS seat '{}' offers {} but not {}, which input needs",
            seat.name,
            if offered.is_empty() {
                "nothing".to_owned()
            } else {
                offered.join(", ")
            },
            lacking.join(", ")
        )))
    }

    /// A round trip: the server has processed everything sent so far.
    pub fn sync(&mut self) -> Result<()> {
        self.sync = Some(self.connection.sync(1));
        self.synced = false;
        self.wait_until(
            |_| "a round trip to the EIS server".into(),
            |link| Ok(link.synced),
        )
    }

    /// When the current step must end.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// The error of a step that ran out of time while `what`.
    pub fn timeout(&self, what: &str) -> DesktopError {
        DesktopError::Timeout {
            what: what.to_owned(),
            limit: self.limit,
        }
    }

    /// Send through the first usable device with `cap` that `fits` (waiting for one): begin
    /// emulating on it, `send`, and close the frame.
    pub fn send(
        &mut self,
        cap: Cap,
        fits: impl Fn(&Device) -> bool,
        send: impl FnOnce(&Device),
    ) -> Result<()> {
        let index = self.device(cap, fits)?;
        self.start(index);
        send(&self.devices[index]);
        self.frame(index);
        Ok(())
    }

    /// End emulating on every device but those to `keep`.
    pub fn stop_all(&mut self, keep: impl Fn(&Device) -> bool) {
        for index in 0..self.devices.len() {
            if !keep(&self.devices[index]) {
                self.stop(index);
            }
        }
    }

    /// Begin emulating on device `index` (once, until [`Link::stop`]).
    fn start(&mut self, index: usize) {
        let device = &mut self.devices[index];
        if !device.emulating {
            self.sequence = self.sequence.wrapping_add(1);
            device
                .proxy
                .start_emulating(self.last_serial, self.sequence);
            device.emulating = true;
        }
    }

    /// Close the frame of what was just sent on device `index`.
    fn frame(&self, index: usize) {
        self.devices[index]
            .proxy
            .frame(self.last_serial, monotonic_micros());
    }

    /// End emulating on device `index`; the server may reset what it still holds down.
    fn stop(&mut self, index: usize) {
        let device = &mut self.devices[index];
        if device.emulating {
            device.proxy.stop_emulating(self.last_serial);
            device.emulating = false;
        }
    }

    /// Send what is buffered, waiting (within the deadline) while the socket is full.
    pub fn flush(&mut self) -> Result<()> {
        loop {
            match self.context.flush() {
                Ok(()) => return Ok(()),
                Err(e) => {
                    let e = std::io::Error::from(e);
                    if e.kind() != std::io::ErrorKind::WouldBlock {
                        return Err(self.why_broken(&e));
                    }
                    self.wait(libc::POLLOUT, || "sending to the EIS server".into())?;
                }
            }
        }
    }

    /// A write failed (the server closed the socket): its reason, when it sent one first.
    fn why_broken(&mut self, e: &std::io::Error) -> DesktopError {
        let _ = self.context.read();
        match self.dispatch() {
            Err(reason) => reason,
            Ok(()) => broken(e),
        }
    }

    /// Say goodbye (when dropped); nothing is waited for.
    pub fn disconnect(&self) {
        self.connection.disconnect();
        let _ = self.context.flush();
    }

    /// Read and handle events until `done`, within the deadline; `what` names the wait in a timeout.
    fn wait_until(
        &mut self,
        what: impl Fn(&Link) -> String,
        mut done: impl FnMut(&Link) -> Result<bool>,
    ) -> Result<()> {
        loop {
            self.dispatch()?;
            if done(self)? {
                return Ok(());
            }
            self.flush()?;
            self.wait(libc::POLLIN, || what(self))?;
            self.read()?;
        }
    }

    /// Wait until the socket is ready for `events`; a timeout is named by `what`.
    fn wait(&self, events: i16, what: impl Fn() -> String) -> Result<()> {
        let until = Until::deadline(self.deadline);
        match wait_for(self.context.as_fd(), events, until, "") {
            Ok(_) => Ok(()),
            Err(DesktopError::Timeout { .. }) => Err(self.timeout(&what())),
            Err(e) => Err(e),
        }
    }

    /// Take in what the socket holds, without waiting.
    fn read(&self) -> Result<()> {
        match self.context.read() {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(closed()),
            Err(e) => Err(broken(&e)),
        }
    }

    /// Handle every event read so far.
    fn dispatch(&mut self) -> Result<()> {
        while let Some(pending) = self.context.pending_event() {
            if let Some(event) = parsed(pending)? {
                self.handle(event)?;
            }
        }
        Ok(())
    }
}

/// The next event during the handshake, read within `deadline`.
fn next_event(context: &ei::Context, deadline: Instant, limit: Duration) -> Result<ei::Event> {
    loop {
        if let Some(pending) = context.pending_event() {
            match parsed(pending)? {
                Some(event) => return Ok(event),
                None => continue,
            }
        }
        let until = Until::deadline(deadline);
        match wait_for(context.as_fd(), libc::POLLIN, until, "") {
            Ok(_) => {}
            Err(DesktopError::Timeout { .. }) => {
                return Err(DesktopError::Timeout {
                    what: "the handshake with the EIS server".into(),
                    limit,
                })
            }
            Err(e) => return Err(e),
        }
        match context.read() {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Err(closed()),
            Err(e) => return Err(broken(&e)),
        }
    }
}

/// An event read, or `None` for one about an object we released already (it crossed our release).
fn parsed(pending: PendingRequestResult<ei::Event>) -> Result<Option<ei::Event>> {
    match pending {
        PendingRequestResult::Request(event) => Ok(Some(event)),
        PendingRequestResult::InvalidObject(_) => Ok(None),
        PendingRequestResult::ParseError(e) => Err(DesktopError::Eis(format!(
            "the EIS server sent a message that cannot be read: {e}"
        ))),
    }
}

fn closed() -> DesktopError {
    DesktopError::Connection("the EIS server closed the connection".into())
}

fn broken(e: &std::io::Error) -> DesktopError {
    DesktopError::Connection(format!("the EIS connection broke: {e}"))
}

/// Microseconds of `CLOCK_MONOTONIC`, the clock of frame timestamps.
fn monotonic_micros() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into a local; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as u64 * 1_000_000 + now.tv_nsec as u64 / 1_000
}
