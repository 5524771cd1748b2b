//! Owning a selection for as long as it is ours: a thread with its own connection and window that
//! answers every program asking for the contents we set, until another program takes the
//! selection (SelectionClear) or the desktop closes.
//!
//! Why a thread and a connection of its own: X keeps no clipboard data; a paste in an app asks the
//! owner at that moment, perhaps long after `clipboard_set` returned, perhaps while the action
//! connection ([`crate::Desktop::run`]) is busy typing the Ctrl+V that asks. And when the desktop
//! closes, closing this connection hands the selection back to the server, so nothing of ours stays
//! behind on a display we attached to.
//!
//! What it answers (ICCCM 2.2 and the freedesktop conventions): `TARGETS`, `TIMESTAMP`,
//! `MULTIPLE`, and for text `UTF8_STRING`, `text/plain;charset=utf-8`, `STRING` (Latin-1), `TEXT`
//! (as UTF-8), `text/plain` (only for ASCII text); for an image `image/png`. Data larger than one
//! request goes INCR: the size first, then a piece each time the reader deletes the property, and
//! an empty piece at the end. A reader that stops reading is dropped after [`STALLED_READER`].
//!
//! The thread sleeps in `poll(2)` on the connection and an eventfd (commands from the desktop, and
//! stop); its only timer is the stalled-reader bound.

use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ChangeWindowAttributesAux, ConnectionExt as _, CreateWindowAux, EventMask,
    PropMode, Property, SelectionNotifyEvent, SelectionRequestEvent, Window, WindowClass,
    SELECTION_NOTIFY_EVENT,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::clipboard::{latin1, piece_size, ClipAtoms, ClipContent, Selection};
use crate::error::{DesktopError, Result};
use crate::wakeable::{WakeableThread, Waker};

/// How long a reader may leave an INCR piece unread before we give up on it.
pub const STALLED_READER: Duration = Duration::from_secs(30);

/// How long taking ownership may wait for the server's timestamp.
const OWN_TIMEOUT: Duration = Duration::from_secs(10);

/// The handle the desktop keeps: send it contents to own; dropping it (or [`Owner::stop`]) ends
/// the thread, and with its connection every selection it held.
pub(crate) struct Owner {
    commands: mpsc::Sender<Command>,
    thread: WakeableThread,
}

enum Command {
    Own {
        selection: Selection,
        content: ClipContent,
        done: tokio::sync::oneshot::Sender<Result<()>>,
    },
    Stop,
}

/// One conversion we can give: the type atom the property gets, and its bytes.
struct Form {
    type_: Atom,
    bytes: Arc<[u8]>,
}

/// What we hold for one selection.
struct Held {
    /// Since when (the server time of our SetSelectionOwner).
    since: u32,
    /// By target atom.
    forms: Vec<(Atom, Form)>,
}

/// An INCR transfer under way to one reader's property.
struct Incr {
    type_: Atom,
    bytes: Arc<[u8]>,
    sent: usize,
    /// The empty closing piece is written.
    closed: bool,
    last_progress: Instant,
}

struct OwnerThread {
    conn: RustConnection,
    window: Window,
    atoms: ClipAtoms,
    piece: usize,
    held: HashMap<Atom, Held>,
    transfers: HashMap<(Window, Atom), Incr>,
    commands: mpsc::Receiver<Command>,
    wake: Waker,
}

impl Owner {
    /// Start the thread on `conn` (a connection of its own; blocking: a few round trips).
    pub fn start(conn: RustConnection, screen: usize) -> Result<Owner> {
        let root = conn
            .setup()
            .roots
            .get(screen)
            .ok_or_else(|| DesktopError::Protocol(format!("screen {screen} does not exist")))?
            .root;
        let atoms = ClipAtoms::intern(&conn)?;
        let window = conn.generate_id()?;
        conn.create_window(
            0,
            window,
            root,
            -10,
            -10,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?
        .check()?;
        let piece = piece_size(&conn);
        let waker = Waker::new()?;
        let (tx, rx) = mpsc::channel();
        let state = OwnerThread {
            conn,
            window,
            atoms,
            piece,
            held: HashMap::new(),
            transfers: HashMap::new(),
            commands: rx,
            wake: waker.try_clone()?,
        };
        let thread = WakeableThread::spawn(
            "screenpilot-desktop-clipboard",
            "clipboard",
            waker,
            move || state.run(),
        )?;
        Ok(Owner {
            commands: tx,
            thread,
        })
    }

    /// The thread still runs (its connection has not failed).
    pub fn alive(&self) -> bool {
        self.thread.alive()
    }

    /// Take `selection` with `content`; resolves once the server made us its owner.
    pub fn own(
        &self,
        selection: Selection,
        content: ClipContent,
    ) -> Result<tokio::sync::oneshot::Receiver<Result<()>>> {
        let (done, answer) = tokio::sync::oneshot::channel();
        self.commands
            .send(Command::Own {
                selection,
                content,
                done,
            })
            .map_err(|_| DesktopError::Connection("the clipboard thread has ended".into()))?;
        self.thread.wake();
        Ok(answer)
    }

    /// Tell the thread to end and hand over its handle to wait for it (once).
    pub fn stop(&mut self) -> Option<JoinHandle<()>> {
        let _ = self.commands.send(Command::Stop);
        self.thread.wake_and_take()
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The forms `content` is offered in, by target.
fn forms(content: ClipContent, atoms: &ClipAtoms) -> Vec<(Atom, Form)> {
    let form = |target: Atom, type_: Atom, bytes: &Arc<[u8]>| {
        (
            target,
            Form {
                type_,
                bytes: bytes.clone(),
            },
        )
    };
    match content {
        ClipContent::Text(text) => {
            let ascii = text.is_ascii();
            let string = Arc::<[u8]>::from(latin1(&text));
            let utf8 = Arc::<[u8]>::from(text.into_bytes());
            let mut forms = vec![
                form(atoms.utf8_string, atoms.utf8_string, &utf8),
                form(atoms.text_plain_utf8, atoms.text_plain_utf8, &utf8),
                form(AtomEnum::STRING.into(), AtomEnum::STRING.into(), &string),
                // TEXT lets the owner pick the encoding: UTF-8.
                form(atoms.text, atoms.utf8_string, &utf8),
            ];
            if ascii {
                forms.push(form(atoms.text_plain, atoms.text_plain, &utf8));
            }
            forms
        }
        ClipContent::Png(bytes) => {
            vec![form(atoms.image_png, atoms.image_png, &Arc::from(bytes))]
        }
    }
}

impl OwnerThread {
    fn run(mut self) {
        // Any error means the connection is gone (the display ended): stop, and with the
        // connection every selection we held goes too.
        let _ = self.serve();
    }

    fn serve(&mut self) -> Result<()> {
        loop {
            while let Some(event) = self.conn.poll_for_event()? {
                self.handle(event)?;
            }
            self.drop_stalled()?;
            self.conn.flush()?;
            if self.sleep()? {
                // Commands first: a stop ends the thread.
                loop {
                    match self.commands.try_recv() {
                        Ok(Command::Own {
                            selection,
                            content,
                            done,
                        }) => {
                            let taken = self.take(selection, content);
                            let broken = matches!(taken, Err(DesktopError::Connection(_)));
                            let _ = done.send(taken);
                            if broken {
                                return Ok(());
                            }
                        }
                        Ok(Command::Stop) | Err(mpsc::TryRecvError::Disconnected) => {
                            return Ok(());
                        }
                        Err(mpsc::TryRecvError::Empty) => break,
                    }
                }
            }
        }
    }

    /// Sleep until the server sends something, a command comes (true), or a stalled transfer is
    /// due to be dropped.
    fn sleep(&self) -> Result<bool> {
        let timeout = self
            .transfers
            .values()
            .map(|t| t.last_progress + STALLED_READER)
            .min()
            .map(|due| due.saturating_duration_since(Instant::now()));
        if self
            .wake
            .sleep_beside(self.conn.stream().as_fd(), timeout)?
        {
            self.wake.drain();
            return Ok(true);
        }
        Ok(false)
    }

    /// Become the owner of `selection` with `content`: a server timestamp (ICCCM asks owners not to
    /// use CurrentTime), SetSelectionOwner, and a check that it took.
    fn take(&mut self, selection: Selection, content: ClipContent) -> Result<()> {
        let since = self.server_time()?;
        let atom = selection.atom(&self.atoms);
        let forms = forms(content, &self.atoms);
        self.held.insert(atom, Held { since, forms });
        self.conn.set_selection_owner(self.window, atom, since)?;
        let owner = self.conn.get_selection_owner(atom)?.reply()?.owner;
        if owner != self.window {
            self.held.remove(&atom);
            return Err(DesktopError::Protocol(format!(
                "the server did not make us the owner of {} (window {owner:#x} holds it)",
                selection.human()
            )));
        }
        Ok(())
    }

    /// The server's time now: append nothing to a property of our window and read the time of the
    /// PropertyNotify that raises. Events that come meanwhile are served.
    fn server_time(&mut self) -> Result<u32> {
        let stamp = self.atoms.timestamp;
        self.conn
            .change_property8(PropMode::APPEND, self.window, stamp, AtomEnum::INTEGER, &[])?;
        self.conn.flush()?;
        let end = Instant::now() + OWN_TIMEOUT;
        loop {
            while let Some(event) = self.conn.poll_for_event()? {
                if let Event::PropertyNotify(e) = &event {
                    if e.window == self.window && e.atom == stamp {
                        return Ok(e.time);
                    }
                }
                self.handle(event)?;
            }
            let now = Instant::now();
            if now >= end {
                return Err(DesktopError::Timeout {
                    what: "taking the selection (waiting for the server's time)".into(),
                    limit: OWN_TIMEOUT,
                });
            }
            let mut poll = libc::pollfd {
                fd: self.conn.stream().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = (end - now).as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd.
            unsafe {
                libc::poll(&mut poll, 1, ms.max(1));
            }
        }
    }

    fn handle(&mut self, event: Event) -> Result<()> {
        match event {
            Event::SelectionRequest(request) => self.answer(&request),
            Event::SelectionClear(clear) => {
                let ours_since = self.held.get(&clear.selection).map(|h| h.since);
                // A clear older than our latest take is about an earlier ownership.
                if ours_since.is_some_and(|since| clear.time >= since || clear.time == 0) {
                    self.held.remove(&clear.selection);
                }
                Ok(())
            }
            Event::PropertyNotify(notify) if notify.state == Property::DELETE => {
                self.next_piece(notify.window, notify.atom)
            }
            Event::Error(error) => {
                // A reader that went away mid-transfer: its window no longer exists.
                let gone = error.bad_value;
                self.transfers.retain(|(window, _), _| *window != gone);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Answer one SelectionRequest: write the property (or start INCR) and notify the reader;
    /// refuse (property None) what we cannot give.
    fn answer(&mut self, request: &SelectionRequestEvent) -> Result<()> {
        // Obsolete readers name no property: ICCCM says to use the target's name.
        let property = if request.property == x11rb::NONE {
            request.target
        } else {
            request.property
        };
        let given = match self.held.get(&request.selection) {
            Some(held) if request.time == 0 || request.time >= held.since => {
                if request.target == self.atoms.multiple {
                    self.answer_multiple(request, property)?
                } else {
                    self.give(
                        request.selection,
                        request.requestor,
                        request.target,
                        property,
                    )?
                }
            }
            _ => false,
        };
        let notify = SelectionNotifyEvent {
            response_type: SELECTION_NOTIFY_EVENT,
            sequence: 0,
            time: request.time,
            requestor: request.requestor,
            selection: request.selection,
            target: request.target,
            property: if given { property } else { x11rb::NONE },
        };
        self.conn
            .send_event(false, request.requestor, EventMask::NO_EVENT, notify)?;
        Ok(())
    }

    /// `MULTIPLE`: the reader's property lists (target, property) pairs; convert each, and put None
    /// in place of the property of each we cannot give.
    fn answer_multiple(&mut self, request: &SelectionRequestEvent, property: Atom) -> Result<bool> {
        if request.property == x11rb::NONE {
            return Ok(false);
        }
        let Ok(reply) = self
            .conn
            .get_property(false, request.requestor, property, AtomEnum::ANY, 0, 1024)?
            .reply()
        else {
            return Ok(false);
        };
        let Some(values) = reply.value32() else {
            return Ok(false);
        };
        let mut pairs: Vec<u32> = values.collect();
        for pair in pairs.chunks_exact_mut(2) {
            let (target, prop) = (pair[0], pair[1]);
            let given = target != self.atoms.multiple
                && prop != x11rb::NONE
                && self.give(request.selection, request.requestor, target, prop)?;
            if !given {
                pair[1] = x11rb::NONE;
            }
        }
        self.conn.change_property32(
            PropMode::REPLACE,
            request.requestor,
            property,
            self.atoms.atom_pair,
            &pairs,
        )?;
        Ok(true)
    }

    /// Write `target` of `selection` to the reader's `property`; false when we do not have it.
    fn give(
        &mut self,
        selection: Atom,
        requestor: Window,
        target: Atom,
        property: Atom,
    ) -> Result<bool> {
        let Some(held) = self.held.get(&selection) else {
            return Ok(false);
        };
        if target == self.atoms.targets {
            let mut targets = vec![
                self.atoms.targets,
                self.atoms.timestamp,
                self.atoms.multiple,
            ];
            targets.extend(held.forms.iter().map(|(t, _)| *t));
            self.conn.change_property32(
                PropMode::REPLACE,
                requestor,
                property,
                AtomEnum::ATOM,
                &targets,
            )?;
            return Ok(true);
        }
        if target == self.atoms.timestamp {
            self.conn.change_property32(
                PropMode::REPLACE,
                requestor,
                property,
                AtomEnum::INTEGER,
                &[held.since],
            )?;
            return Ok(true);
        }
        let Some((_, form)) = held.forms.iter().find(|(t, _)| *t == target) else {
            return Ok(false);
        };
        let (type_, bytes) = (form.type_, form.bytes.clone());
        if bytes.len() <= self.piece {
            self.conn
                .change_property8(PropMode::REPLACE, requestor, property, type_, &bytes)?;
            return Ok(true);
        }
        // INCR: watch the reader's property for its deletes, then announce the size.
        self.conn.change_window_attributes(
            requestor,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        let size = u32::try_from(bytes.len()).unwrap_or(u32::MAX);
        self.conn.change_property32(
            PropMode::REPLACE,
            requestor,
            property,
            self.atoms.incr,
            &[size],
        )?;
        self.transfers.insert(
            (requestor, property),
            Incr {
                type_,
                bytes,
                sent: 0,
                closed: false,
                last_progress: Instant::now(),
            },
        );
        Ok(true)
    }

    /// The reader deleted `property` on `window`: if it is an INCR transfer of ours, write the next
    /// piece (or the empty closing one; after that, the transfer is done).
    fn next_piece(&mut self, window: Window, property: Atom) -> Result<()> {
        let Some(transfer) = self.transfers.get_mut(&(window, property)) else {
            return Ok(());
        };
        if transfer.closed {
            self.transfers.remove(&(window, property));
            self.forget_reader(window)?;
            return Ok(());
        }
        let end = (transfer.sent + self.piece).min(transfer.bytes.len());
        let piece = &transfer.bytes[transfer.sent..end];
        self.conn
            .change_property8(PropMode::REPLACE, window, property, transfer.type_, piece)?;
        transfer.closed = piece.is_empty();
        transfer.sent = end;
        transfer.last_progress = Instant::now();
        Ok(())
    }

    /// Stop watching a reader's window once no transfer to it is left.
    fn forget_reader(&self, window: Window) -> Result<()> {
        if self.transfers.keys().any(|(w, _)| *w == window) {
            return Ok(());
        }
        self.conn.change_window_attributes(
            window,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT),
        )?;
        Ok(())
    }

    fn drop_stalled(&mut self) -> Result<()> {
        let now = Instant::now();
        let stalled: Vec<(Window, Atom)> = self
            .transfers
            .iter()
            .filter(|(_, t)| now >= t.last_progress + STALLED_READER)
            .map(|(key, _)| *key)
            .collect();
        for key in stalled {
            self.transfers.remove(&key);
            self.forget_reader(key.0)?;
        }
        Ok(())
    }
}
