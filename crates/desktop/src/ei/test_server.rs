//! An EIS server for the tests, on reis's server side, in a thread: one seat, and, once the client
//! binds it, an absolute pointer (with buttons and a wheel) over one 1280x800 region and a keyboard
//! with a real XKB keymap, each resumed when the client says it is ready. It logs what arrives,
//! framed as the protocol frames it (an event is only logged once its frame came), until the client
//! leaves; a [`Script`] can make it offer less, add no device, or disconnect midway.

use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::os::unix::net::UnixStream;
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kbvm::xkb::diagnostic::{Diagnostic, DiagnosticHandler};
use kbvm::xkb::rmlvo::Group;
use reis::ei::connection::DisconnectReason;
use reis::eis;
use reis::handshake::EisHandshaker;
use reis::request::{DeviceCapability, EisRequest, EisRequestConverter};
use reis::PendingRequestResult;

use crate::wayland::blocking::{wait_for, Until};

/// The server gives up on a client that stays silent this long (a test bug, not a wait).
const SERVER_LIMIT: Duration = Duration::from_secs(20);

/// What the server received, in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Got {
    Start(String),
    Stop(String),
    Frame(String),
    Motion(f32, f32),
    Button(u32, bool),
    Scroll(i32, i32),
    Key(u32, bool),
}

/// How the server behaves.
#[derive(Clone)]
pub(super) struct Script {
    /// What its seat offers.
    pub offers: reis::enumflags2::BitFlags<DeviceCapability>,
    /// Add devices when the client binds the seat.
    pub add_devices: bool,
    /// Send `disconnected` after this many frames.
    pub disconnect_after_frames: Option<usize>,
}

impl Default for Script {
    fn default() -> Script {
        Script {
            offers: DeviceCapability::PointerAbsolute
                | DeviceCapability::Button
                | DeviceCapability::Scroll
                | DeviceCapability::Keyboard,
            add_devices: true,
            disconnect_after_frames: None,
        }
    }
}

/// Start a server on one end of a socket pair; the other end is for the client. The thread returns
/// what it received, or why it failed.
pub(super) fn serve(script: Script) -> (UnixStream, JoinHandle<Result<Vec<Got>, String>>) {
    let (client, server) = UnixStream::pair().expect("a socket pair");
    let thread = std::thread::spawn(move || run(server, script));
    (client, thread)
}

/// A US international keymap (AltGr+e is é), compiled by kbvm from the system's XKB data.
pub(super) fn us_intl_keymap() -> &'static str {
    static KEYMAP: OnceLock<String> = OnceLock::new();
    KEYMAP.get_or_init(|| {
        let groups = [Group {
            layout: "us",
            variant: "intl",
        }];
        let keymap = kbvm::xkb::Context::default().keymap_from_names(
            Quiet,
            Some("evdev"),
            Some("pc105"),
            Some(&groups),
            Some(&[]),
        );
        let text = keymap.format().to_string();
        assert!(
            text.contains("<AC01>") && text.contains("eacute"),
            "kbvm compiled no us(intl) keymap: is xkb-data (/usr/share/X11/xkb) installed?"
        );
        text
    })
}

struct Quiet;

impl DiagnosticHandler for Quiet {
    fn handle(&mut self, _diagnostic: Diagnostic) {}
}

fn run(socket: UnixStream, script: Script) -> Result<Vec<Got>, String> {
    let deadline = Instant::now() + SERVER_LIMIT;
    let context = eis::Context::new(socket).map_err(|e| e.to_string())?;
    let mut handshaker = Some(EisHandshaker::new(&context, 1));
    let mut converter: Option<EisRequestConverter> = None;
    let mut got = Vec::new();
    let mut frames = 0;
    loop {
        while let Some(pending) = context.pending_request() {
            let request = match pending {
                PendingRequestResult::Request(request) => request,
                PendingRequestResult::ParseError(e) => return Err(format!("parse: {e}")),
                PendingRequestResult::InvalidObject(_) => continue,
            };
            if let Some(shaking) = handshaker.as_mut() {
                let Some(reply) = shaking.handle_request(request).map_err(|e| e.to_string())?
                else {
                    continue;
                };
                handshaker = None;
                let started = EisRequestConverter::new(&context, reply, 1);
                let _seat = started.handle().add_seat(Some("seat0"), script.offers);
                converter = Some(started);
                continue;
            }
            let Some(converter) = converter.as_mut() else {
                continue;
            };
            converter
                .handle_request(request)
                .map_err(|e| e.to_string())?;
            while let Some(request) = converter.next_request() {
                match request {
                    EisRequest::Bind(bind) if script.add_devices => add_devices(&bind.seat),
                    EisRequest::Ready(ready) => ready.device.resumed(),
                    EisRequest::DeviceStartEmulating(e) => got.push(Got::Start(name(&e.device))),
                    EisRequest::DeviceStopEmulating(e) => got.push(Got::Stop(name(&e.device))),
                    EisRequest::Frame(frame) => {
                        got.push(Got::Frame(name(&frame.device)));
                        frames += 1;
                        if script.disconnect_after_frames == Some(frames) {
                            converter.handle().disconnected(
                                DisconnectReason::Error,
                                Some("the test server ends the session"),
                            );
                            return Ok(got);
                        }
                    }
                    EisRequest::PointerMotionAbsolute(m) => {
                        got.push(Got::Motion(m.dx_absolute, m.dy_absolute))
                    }
                    EisRequest::Button(b) => got.push(Got::Button(
                        b.button,
                        b.state == eis::button::ButtonState::Press,
                    )),
                    EisRequest::ScrollDiscrete(s) => {
                        got.push(Got::Scroll(s.discrete_dx, s.discrete_dy))
                    }
                    EisRequest::KeyboardKey(k) => {
                        got.push(Got::Key(k.key, k.state == eis::keyboard::KeyState::Press))
                    }
                    EisRequest::Disconnect => return Ok(got),
                    _ => {}
                }
            }
        }
        // The client leaving closes its end, with or without reading what we sent last.
        let gone = |e: &std::io::Error| {
            use std::io::ErrorKind::*;
            matches!(e.kind(), UnexpectedEof | BrokenPipe | ConnectionReset)
        };
        match context.flush().map_err(std::io::Error::from) {
            Ok(()) => {}
            Err(e) if gone(&e) => return Ok(got),
            Err(e) => return Err(e.to_string()),
        }
        let until = Until::deadline(deadline);
        wait_for(
            context.as_fd(),
            libc::POLLIN,
            until,
            "the test server's wait",
        )
        .map_err(|e| e.to_string())?;
        match context.read() {
            Ok(_) => {}
            Err(e) if gone(&e) => return Ok(got),
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn add_devices(seat: &reis::request::Seat) {
    let pointer = seat.add_device(
        Some("pointer"),
        eis::device::DeviceType::Virtual,
        DeviceCapability::PointerAbsolute | DeviceCapability::Button | DeviceCapability::Scroll,
        |device| device.device().region(0, 0, 1280, 800, 1.0),
    );
    let keyboard = seat.add_device(
        Some("keyboard"),
        eis::device::DeviceType::Virtual,
        DeviceCapability::Keyboard.into(),
        |device| {
            if let Some(keyboard) = device.interface::<eis::Keyboard>() {
                let text = us_intl_keymap();
                let fd = memfd(text.as_bytes());
                keyboard.keymap(
                    eis::keyboard::KeymapType::Xkb,
                    text.len() as u32,
                    fd.as_fd(),
                );
            }
        },
    );
    drop((pointer, keyboard));
}

fn name(device: &reis::request::Device) -> String {
    device.name().unwrap_or_default().to_owned()
}

fn memfd(bytes: &[u8]) -> OwnedFd {
    // SAFETY: plain syscall with a NUL-terminated name; the result is a new descriptor or -1.
    let raw = unsafe { libc::memfd_create(c"test-keymap".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(
        raw >= 0,
        "memfd_create: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a fresh descriptor nobody else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    std::fs::File::from(fd.try_clone().expect("dup"))
        .write_all_at(bytes, 0)
        .expect("the keymap written");
    fd
}
