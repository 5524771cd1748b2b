//! The clipboard and the primary selection through wlr-data-control, which lets a client without a
//! window read and set them (a regular client may only touch them while it has the focus).
//!
//! Reading ([`Wayland::clipboard_get`], [`Wayland::clipboard_types`]) runs on the action connection:
//! a data device for the seat, whose first events are the current offers; then the offer is asked
//! to write the type we want into a pipe, read to its end under the call's deadline.
//!
//! Setting needs an owner that outlives the call: [`ClipboardServer`], a thread with its own
//! connection that holds a data source per selection and writes its content to every reader, until
//! another program copies (the compositor cancels our source) or it is stopped (closing the
//! connection withdraws our sources, so the compositor keeps nothing of ours).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use wayland_client::backend::ObjectId;
use wayland_client::protocol::wl_seat::WlSeat;
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle};
use wayland_protocols_wlr::data_control::v1::client::zwlr_data_control_device_v1::{
    self, ZwlrDataControlDeviceV1,
};
use wayland_protocols_wlr::data_control::v1::client::zwlr_data_control_manager_v1::ZwlrDataControlManagerV1;
use wayland_protocols_wlr::data_control::v1::client::zwlr_data_control_offer_v1::{
    self, ZwlrDataControlOfferV1,
};
use wayland_protocols_wlr::data_control::v1::client::zwlr_data_control_source_v1::{
    self, ZwlrDataControlSourceV1,
};

use super::blocking::{self, dispatch_until, roundtrip, Until};
use super::globals::{self, Globals, DATA_CONTROL, SEAT};
use super::Wayland;
use crate::error::{DesktopError, Result};
use crate::wakeable::{WakeableThread, Waker};
use crate::x11::{ClipContent, ClipKind, Selection, MAX_CLIP_BYTES};

/// The text types offered when setting text, and asked for (the first one offered) when reading.
const TEXT_TYPES: [&str; 5] = [
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "text/plain",
    "STRING",
    "TEXT",
];
const PNG_TYPE: &str = "image/png";

/// The state of a data device's queue: the offers and what each selection is, and (for the
/// server) the sources we hold.
#[derive(Default)]
struct ClipState {
    types: HashMap<ObjectId, Vec<String>>,
    clipboard: Option<ZwlrDataControlOfferV1>,
    primary: Option<ZwlrDataControlOfferV1>,
    /// The device is gone (another client's data-control took the seat away, or it was destroyed).
    finished: bool,
    /// Our sources and their content, by selection.
    serving: HashMap<Selection, (ZwlrDataControlSourceV1, Arc<Vec<u8>>)>,
    /// Bumped when either selection changes hands (the server's device only).
    changes: Option<watch::Sender<u64>>,
}

impl ClipState {
    fn offer(&self, which: Selection) -> Option<&ZwlrDataControlOfferV1> {
        match which {
            Selection::Clipboard => self.clipboard.as_ref(),
            Selection::Primary => self.primary.as_ref(),
        }
    }

    fn types_of(&self, which: Selection) -> Vec<String> {
        self.offer(which)
            .and_then(|o| self.types.get(&o.id()))
            .cloned()
            .unwrap_or_default()
    }

    /// Forget offers that are no selection any more (the compositor replaced them).
    fn prune(&mut self) {
        let live: Vec<ObjectId> = [&self.clipboard, &self.primary]
            .into_iter()
            .flatten()
            .map(|o| o.id())
            .collect();
        self.types.retain(|id, _| live.contains(id));
        if let Some(changes) = &self.changes {
            changes.send_modify(|generation| *generation += 1);
        }
    }
}

/// The data-control manager, bound once per connection.
fn manager(
    wayland: &Wayland,
    qh: &QueueHandle<ClipState>,
) -> Result<(ZwlrDataControlManagerV1, u32)> {
    let manager: ZwlrDataControlManagerV1 =
        globals::bind(&wayland.registry, &wayland.globals, DATA_CONTROL, 2, qh, ()).ok_or_else(
            || {
                DesktopError::Connection(
                    "the compositor offers no zwlr_data_control_manager_v1, so the clipboard \
                     cannot be reached"
                        .into(),
                )
            },
        )?;
    let version = manager.version();
    Ok((manager, version))
}

fn check_primary(which: Selection, version: u32) -> Result<()> {
    if which == Selection::Primary && version < 2 {
        return Err(DesktopError::invalid(
            "selection",
            "this compositor's data control (version 1) has no primary selection",
        ));
    }
    Ok(())
}

impl Wayland {
    /// The device's view of the selections, after one round trip; the caller destroys it.
    fn clip_device(
        &mut self,
        which: Selection,
    ) -> Result<(
        EventQueue<ClipState>,
        ClipState,
        ZwlrDataControlManagerV1,
        ZwlrDataControlDeviceV1,
    )> {
        let mut queue = self.conn.new_event_queue::<ClipState>();
        let qh = queue.handle();
        let (manager, version) = manager(self, &qh)?;
        if let Err(e) = check_primary(which, version) {
            manager.destroy();
            return Err(e);
        }
        let device = manager.get_data_device(&self.seat, &qh, ());
        let mut state = ClipState::default();
        let until = self.until();
        roundtrip(
            &self.conn,
            &mut queue,
            &mut state,
            until,
            &format!("reading {}", which.human()),
        )?;
        Ok((queue, state, manager, device))
    }

    /// The types `which` offers (`text/plain;charset=utf-8`, `image/png`, ..., as its owner names
    /// them); empty when nobody owns it.
    pub fn clipboard_types(&mut self, which: Selection) -> Result<Vec<String>> {
        let (_queue, state, manager, device) = self.clip_device(which)?;
        let types = state.types_of(which);
        release(&state, &manager, &device);
        Ok(types)
    }

    /// Read `which` as `kind`. Errors: nobody owns it ([`DesktopError::SelectionEmpty`], field
    /// `selection`); its owner does not offer `kind` ([`DesktopError::TypeNotOffered`], field `type`,
    /// with the types it does offer); more than [`MAX_CLIP_BYTES`]; an owner that does not finish
    /// writing by the call's deadline.
    pub fn clipboard_get(&mut self, which: Selection, kind: ClipKind) -> Result<ClipContent> {
        let (_queue, state, manager, device) = self.clip_device(which)?;
        let result = self.receive(&state, which, kind);
        release(&state, &manager, &device);
        let _ = self.conn.flush();
        result
    }

    fn receive(&self, state: &ClipState, which: Selection, kind: ClipKind) -> Result<ClipContent> {
        let Some(offer) = state.offer(which) else {
            return Err(DesktopError::SelectionEmpty {
                field: "selection",
                message: format!("{} is empty: nothing was copied", which.human()),
            });
        };
        let offered = state.types_of(which);
        let wanted: &[&str] = match kind {
            ClipKind::Text => &TEXT_TYPES,
            ClipKind::Png => &[PNG_TYPE],
        };
        let Some(mime) = wanted.iter().find(|t| offered.iter().any(|o| o == *t)) else {
            return Err(DesktopError::TypeNotOffered {
                field: "type",
                message: format!(
                    "{} holds no {}; it offers {}",
                    which.human(),
                    kind.name(),
                    if offered.is_empty() {
                        "nothing".to_owned()
                    } else {
                        offered.join(", ")
                    }
                ),
                offered,
            });
        };
        let (read, write) = pipe()?;
        offer.receive((*mime).to_owned(), write.as_fd());
        self.conn.flush().map_err(blocking::wayland_error)?;
        // Our copy of the writing end must go, or the pipe never reaches its end.
        drop(write);
        let bytes = read_to_end(read, self.deadline, &format!("reading {}", which.human()))?;
        Ok(match kind {
            ClipKind::Text => ClipContent::Text(String::from_utf8_lossy(&bytes).into_owned()),
            ClipKind::Png => ClipContent::Png(bytes),
        })
    }
}

/// Destroy a device and its offers.
fn release(
    state: &ClipState,
    manager: &ZwlrDataControlManagerV1,
    device: &ZwlrDataControlDeviceV1,
) {
    for offer in [&state.clipboard, &state.primary].into_iter().flatten() {
        offer.destroy();
    }
    device.destroy();
    manager.destroy();
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } < 0 {
        return Err(DesktopError::Io(format!(
            "pipe: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: fresh descriptors nobody else owns.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Read a non-blocking pipe to its end, at most [`MAX_CLIP_BYTES`], giving up at `deadline`.
fn read_to_end(fd: OwnedFd, deadline: Instant, what: &str) -> Result<Vec<u8>> {
    let mut file = std::fs::File::from(fd);
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        match file.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                if bytes.len() + n > MAX_CLIP_BYTES {
                    return Err(DesktopError::Limit(format!(
                        "{what}: more than the {} MiB a selection may hold",
                        MAX_CLIP_BYTES >> 20
                    )));
                }
                bytes.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                blocking::wait_for(file.as_fd(), libc::POLLIN, Until::deadline(deadline), what)?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(DesktopError::Io(format!("{what}: {e}"))),
        }
    }
}

/// Holds what we set on the clipboard and the primary selection, on its own connection and thread,
/// answering every reader until another program copies or it is stopped. Dropping it stops it.
pub struct ClipboardServer {
    commands: mpsc::Sender<Command>,
    stopping: Arc<AtomicBool>,
    thread: WakeableThread,
    changes: watch::Receiver<u64>,
}

struct Command {
    which: Selection,
    content: ClipContent,
    answer: mpsc::Sender<Result<()>>,
}

struct Server {
    conn: Connection,
    queue: EventQueue<ClipState>,
    state: ClipState,
    manager: ZwlrDataControlManagerV1,
    device: ZwlrDataControlDeviceV1,
    commands: mpsc::Receiver<Command>,
    wake: Waker,
    stopping: Arc<AtomicBool>,
    /// Keeps the seat and the registry's queue alive.
    _globals: (EventQueue<Globals>, WlSeat),
}

/// How long the compositor may take to accept a selection we set.
const SET_TIMEOUT: Duration = Duration::from_secs(10);

impl ClipboardServer {
    /// Connect to the compositor at `socket` and start the thread (nothing is set yet).
    pub fn start(socket: &Path) -> Result<ClipboardServer> {
        let deadline = Instant::now() + SET_TIMEOUT;
        let conn = globals::open(socket)?;
        let (registry_queue, found, registry) = globals::discover(&conn, deadline)?;
        let seat: WlSeat = globals::bind(&registry, &found, SEAT, 1, &registry_queue.handle(), ())
            .ok_or_else(|| DesktopError::Connection("the compositor offers no wl_seat".into()))?;
        let mut queue = conn.new_event_queue::<ClipState>();
        let qh = queue.handle();
        let manager: ZwlrDataControlManagerV1 =
            globals::bind(&registry, &found, DATA_CONTROL, 2, &qh, ()).ok_or_else(|| {
                DesktopError::Connection(
                    "the compositor offers no zwlr_data_control_manager_v1, so the clipboard \
                     cannot be set"
                        .into(),
                )
            })?;
        let device = manager.get_data_device(&seat, &qh, ());
        let (changes_tx, changes) = watch::channel(0u64);
        let mut state = ClipState {
            changes: Some(changes_tx),
            ..ClipState::default()
        };
        roundtrip(
            &conn,
            &mut queue,
            &mut state,
            Until::deadline(deadline),
            "starting the clipboard server",
        )?;
        let waker = Waker::new()?;
        let (commands, receiver) = mpsc::channel();
        let stopping = Arc::new(AtomicBool::new(false));
        let server = Server {
            conn,
            queue,
            state,
            manager,
            device,
            commands: receiver,
            wake: waker.try_clone()?,
            stopping: stopping.clone(),
            _globals: (registry_queue, seat),
        };
        let thread = WakeableThread::spawn(
            "screenpilot-wayland-clipboard",
            "clipboard",
            waker,
            move || server.run(),
        )?;
        Ok(ClipboardServer {
            commands,
            stopping,
            thread,
            changes,
        })
    }

    /// A generation that goes up whenever the clipboard or the primary selection changes hands
    /// (another program copied, or we set one): a wait for a copy needs no polling. It stops
    /// moving (and `changed()` fails) when the server ends.
    pub fn selection_updates(&self) -> watch::Receiver<u64> {
        self.changes.clone()
    }

    /// Set `which` to `content`; returns once the compositor has made it the selection, so a
    /// paste right after reads it. Fails when the content is refused ([`ClipContent::check`]),
    /// the compositor refuses or does not answer within `timeout`, or the server has ended.
    pub fn set(&self, which: Selection, content: ClipContent, timeout: Duration) -> Result<()> {
        content.check("content")?;
        let (answer, answered) = mpsc::channel();
        self.commands
            .send(Command {
                which,
                content,
                answer,
            })
            .map_err(|_| ended())?;
        self.thread.wake();
        match answered.recv_timeout(timeout) {
            Ok(result) => result,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                Err(blocking::timeout(&format!("setting {}", which.human())))
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(ended()),
        }
    }

    /// Whether the thread still runs (its connection may have broken).
    pub fn alive(&self) -> bool {
        self.thread.alive()
    }

    /// Tell the thread to end (it does at once, withdrawing what it set; this does not wait).
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        self.thread.wake();
    }

    /// Tell the thread to end, and hand over its handle to wait for it (once; `None` after).
    pub fn stop_and_take(&self) -> Option<JoinHandle<()>> {
        self.stopping.store(true, Ordering::Release);
        self.thread.wake_and_take()
    }
}

impl Drop for ClipboardServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn ended() -> DesktopError {
    DesktopError::Connection("the clipboard server has ended".into())
}

impl Server {
    fn run(mut self) {
        // An error other than a wake-up means the compositor went away: end.
        loop {
            let until = Until {
                deadline: None,
                stop: Some(self.wake.as_fd()),
            };
            match dispatch_until(
                &self.conn,
                &mut self.queue,
                &mut self.state,
                until,
                "",
                |s| s.finished,
            ) {
                Err(DesktopError::Closed) => {}
                _ => return,
            }
            self.wake.drain();
            if self.stopping.load(Ordering::Acquire) {
                return;
            }
            while let Ok(command) = self.commands.try_recv() {
                let result = self.set(command.which, &command.content);
                let _ = command.answer.send(result);
            }
        }
    }

    fn set(&mut self, which: Selection, content: &ClipContent) -> Result<()> {
        if which == Selection::Primary {
            check_primary(which, self.manager.version())?;
        }
        let qh = self.queue.handle();
        let source = self.manager.create_data_source(&qh, which);
        let (types, bytes): (&[&str], Vec<u8>) = match content {
            ClipContent::Text(text) => (&TEXT_TYPES, text.clone().into_bytes()),
            ClipContent::Png(png) => (&[PNG_TYPE], png.clone()),
        };
        for t in types {
            source.offer((*t).to_owned());
        }
        match which {
            Selection::Clipboard => self.device.set_selection(Some(&source)),
            Selection::Primary => self.device.set_primary_selection(Some(&source)),
        }
        if let Some((old, _)) = self.state.serving.insert(which, (source, Arc::new(bytes))) {
            old.destroy();
        }
        roundtrip(
            &self.conn,
            &mut self.queue,
            &mut self.state,
            Until::deadline(Instant::now() + SET_TIMEOUT),
            &format!("setting {}", which.human()),
        )
    }
}

impl Dispatch<ZwlrDataControlSourceV1, Selection> for ClipState {
    fn event(
        state: &mut Self,
        source: &ZwlrDataControlSourceV1,
        event: zwlr_data_control_source_v1::Event,
        which: &Selection,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        let ours = state
            .serving
            .get(which)
            .filter(|(s, _)| s == source)
            .map(|(_, bytes)| bytes.clone());
        match event {
            zwlr_data_control_source_v1::Event::Send { fd, .. } => {
                if let Some(bytes) = ours {
                    // A reader that reads slowly (or not at all) must not hold up the others.
                    let _ = std::thread::Builder::new()
                        .name("screenpilot-wayland-paste".into())
                        .spawn(move || {
                            let mut file = std::fs::File::from(fd);
                            let _ = file.write_all(&bytes);
                        });
                }
            }
            zwlr_data_control_source_v1::Event::Cancelled => {
                if ours.is_some() {
                    state.serving.remove(which);
                }
                source.destroy();
            }
            _ => {}
        }
    }
}

impl Dispatch<ZwlrDataControlDeviceV1, ()> for ClipState {
    fn event(
        state: &mut Self,
        _: &ZwlrDataControlDeviceV1,
        event: zwlr_data_control_device_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_data_control_device_v1::Event;
        match event {
            Event::DataOffer { id } => {
                state.types.insert(id.id(), Vec::new());
            }
            Event::Selection { id } => {
                if let Some(old) = std::mem::replace(&mut state.clipboard, id) {
                    if state.primary.as_ref() != Some(&old) {
                        old.destroy();
                    }
                }
                state.prune();
            }
            Event::PrimarySelection { id } => {
                if let Some(old) = std::mem::replace(&mut state.primary, id) {
                    if state.clipboard.as_ref() != Some(&old) {
                        old.destroy();
                    }
                }
                state.prune();
            }
            Event::Finished => state.finished = true,
            _ => {}
        }
    }

    wayland_client::event_created_child!(ClipState, ZwlrDataControlDeviceV1, [
        zwlr_data_control_device_v1::EVT_DATA_OFFER_OPCODE => (ZwlrDataControlOfferV1, ()),
    ]);
}

impl Dispatch<ZwlrDataControlOfferV1, ()> for ClipState {
    fn event(
        state: &mut Self,
        offer: &ZwlrDataControlOfferV1,
        event: zwlr_data_control_offer_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_data_control_offer_v1::Event::Offer { mime_type } = event {
            state.types.entry(offer.id()).or_default().push(mime_type);
        }
    }
}

wayland_client::delegate_noop!(ClipState: ZwlrDataControlManagerV1);
