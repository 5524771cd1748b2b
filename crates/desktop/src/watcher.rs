//! Watching a display for change, without polling: a thread with its own connection that sleeps in
//! `poll(2)` until the X server sends an event, and counts two kinds of change in
//! `tokio::sync::watch` generation counters that any number of waits can follow.
//!
//! - **damage**: something was drawn. The DAMAGE extension reports the root window's damage
//!   (everything drawn on the screen) whenever its bounding box grows; we then subtract (repair)
//!   it, wait for the server to have done so, note the box the batch covered ([`Watcher::drawn`]),
//!   and only then bump the counter. So a bump always comes after every drawing it stands for, and
//!   drawing after it raises a new event.
//! - **pointer**: the pointer moved (XInput 2 raw motion on the root, which XTest's moves raise too).
//!   Xvfb draws the pointer in software without reporting DAMAGE, so a picture that shows the pointer
//!   must follow this as well.
//! - **windows**: the window list, a title, mapping or focus changed: SubstructureNotify and
//!   PropertyChange on the root (windows created, mapped, moved; `_NET_CLIENT_LIST`,
//!   `_NET_ACTIVE_WINDOW`), and PropertyChange, StructureNotify and FocusChange on every client
//!   window (titles, and mapping inside a window manager's frame, which the root does not see).
//!   Clients are found again whenever the list may have changed, and the counter is bumped once more
//!   after their events are selected, so a waiter that looks after that bump misses nothing.
//!
//! Why a thread and not a task: x11rb's connection is blocking. Why its own connection: the action
//! connection ([`crate::Desktop::run`]) runs one call at a time and may be busy for seconds (typing a
//! long text); change must be seen meanwhile.
//!
//! Stopping: [`Watcher::stop_and_take`], or dropping it, writes to an eventfd the thread polls
//! beside the connection (`crate::wakeable`), so it ends at once; it also ends when the display
//! goes away. Either way it drops its senders, and every receiver's `changed()` then returns an
//! error: a wait on a closed desktop ends.

use std::collections::HashSet;
use std::os::fd::AsFd;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use tokio::sync::watch;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::damage::{self, ConnectionExt as _};
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{ChangeWindowAttributesAux, ConnectionExt as _, NotifyMode, Window};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;

use crate::error::{DesktopError, Result};
use crate::looks::{join, Area};
use crate::wakeable::{WakeableThread, Waker};
use crate::x11::windows::{self, Atoms};

/// A running watcher. Dropping it stops the thread (without waiting for it).
pub(crate) struct Watcher {
    thread: WakeableThread,
    damage: watch::Receiver<u64>,
    windows: watch::Receiver<u64>,
    pointer: watch::Receiver<u64>,
    drawn: Arc<Mutex<Drawn>>,
    /// The display has DAMAGE, so `damage` counts drawing (without it, it never moves).
    pub has_damage: bool,
}

struct Watch {
    conn: RustConnection,
    root: Window,
    atoms: Atoms,
    damage: Option<u32>,
    wake: Waker,
    /// Clients whose events we selected.
    clients: HashSet<Window>,
    damage_tx: watch::Sender<u64>,
    drawn: Arc<Mutex<Drawn>>,
    windows_tx: watch::Sender<u64>,
    pointer_tx: watch::Sender<u64>,
}

/// The last batch of drawing: the damage generation it bumped to, and the box it covered.
#[derive(Debug, Clone, Copy, Default)]
pub struct Drawn {
    pub generation: u64,
    pub area: Option<Area>,
}

/// What one batch of events changed.
#[derive(Default)]
struct Changes {
    drawn: bool,
    /// The box holding what was drawn (DAMAGE's areas, joined).
    area: Option<Area>,
    windows: bool,
    pointer: bool,
    /// The set of clients may have changed: find them again.
    relist: bool,
}

impl Watcher {
    /// Select what to watch on `conn` (blocking: a few round trips), then start the thread. When this
    /// returns, every later change is counted.
    pub fn start(conn: RustConnection, screen: usize) -> Result<Watcher> {
        let root = conn
            .setup()
            .roots
            .get(screen)
            .ok_or_else(|| DesktopError::Protocol(format!("screen {screen} does not exist")))?
            .root;
        let atoms = Atoms::intern(&conn)?;
        let damage = if conn
            .extension_information(damage::X11_EXTENSION_NAME)?
            .is_some()
            && conn.damage_query_version(1, 1)?.reply().is_ok()
        {
            let id = conn.generate_id()?;
            conn.damage_create(id, root, damage::ReportLevel::BOUNDING_BOX)?
                .check()?;
            Some(id)
        } else {
            None
        };
        // Pointer motion, when the display has XInput 2 (without it, `pointer` never moves).
        if conn
            .extension_information(xinput::X11_EXTENSION_NAME)?
            .is_some()
            && conn.xinput_xi_query_version(2, 0)?.reply().is_ok()
        {
            let motion = xinput::EventMask {
                deviceid: xinput::Device::ALL_MASTER.into(),
                mask: vec![xinput::XIEventMask::RAW_MOTION],
            };
            // A display that refuses it simply reports no motion.
            let _ = conn.xinput_xi_select_events(root, &[motion])?.check();
        }
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(windows::root_event_mask()),
        )?
        .check()?;
        let waker = Waker::new()?;
        let (damage_tx, damage_rx) = watch::channel(0u64);
        let drawn = Arc::new(Mutex::new(Drawn::default()));
        let (windows_tx, windows_rx) = watch::channel(0u64);
        let (pointer_tx, pointer_rx) = watch::channel(0u64);
        let mut watch = Watch {
            conn,
            root,
            atoms,
            damage,
            wake: waker.try_clone()?,
            clients: HashSet::new(),
            damage_tx,
            drawn: drawn.clone(),
            windows_tx,
            pointer_tx,
        };
        watch.select_clients()?;
        let thread =
            WakeableThread::spawn("screenpilot-desktop-watch", "watcher", waker, move || {
                watch.run()
            })?;
        Ok(Watcher {
            thread,
            damage: damage_rx,
            windows: windows_rx,
            pointer: pointer_rx,
            drawn,
            has_damage: damage.is_some(),
        })
    }

    pub fn damage_updates(&self) -> watch::Receiver<u64> {
        self.damage.clone()
    }

    /// The last batch of drawing (see [`Drawn`]).
    pub fn drawn(&self) -> Drawn {
        *self
            .drawn
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn window_updates(&self) -> watch::Receiver<u64> {
        self.windows.clone()
    }

    pub fn pointer_updates(&self) -> watch::Receiver<u64> {
        self.pointer.clone()
    }

    /// Tell the thread to end (it does at once), and hand over its handle to wait for it (once; `None` after).
    pub fn stop_and_take(&self) -> Option<JoinHandle<()>> {
        self.thread.wake_and_take()
    }
}

impl Watch {
    fn run(mut self) {
        // Any error means the connection is gone (the display ended): stop, dropping the senders.
        let _ = self.watch();
    }

    fn watch(&mut self) -> Result<()> {
        let mut again = false;
        loop {
            let mut changes = Changes::default();
            while let Some(event) = self.conn.poll_for_event()? {
                self.classify(&event, &mut changes);
            }
            if changes.relist {
                // Replies read meanwhile may queue more events: drain again before sleeping.
                self.select_clients()?;
                changes.windows = true;
                again = true;
            }
            if changes.drawn {
                if let Some(damage) = self.damage {
                    self.conn
                        .damage_subtract(damage, x11rb::NONE, x11rb::NONE)?;
                    // A round trip: the repair is done, so the bump below comes after all it covered.
                    self.conn.get_input_focus()?.reply()?;
                }
                self.damage_tx.send_modify(|generation| {
                    *generation += 1;
                    *self.drawn.lock().unwrap_or_else(|p| p.into_inner()) = Drawn {
                        generation: *generation,
                        area: changes.area,
                    };
                });
                again = true;
            }
            if changes.windows {
                self.windows_tx.send_modify(|generation| *generation += 1);
            }
            if changes.pointer {
                self.pointer_tx.send_modify(|generation| *generation += 1);
            }
            self.conn.flush()?;
            if std::mem::take(&mut again) {
                continue;
            }
            if self.sleep()? {
                return Ok(());
            }
        }
    }

    fn classify(&self, event: &Event, changes: &mut Changes) {
        match event {
            Event::DamageNotify(e) => {
                changes.drawn = true;
                let drawn = (e.area.x, e.area.y, e.area.width, e.area.height);
                changes.area = Some(changes.area.map_or(drawn, |area| join(area, drawn)));
            }
            Event::XinputRawMotion(_) => changes.pointer = true,
            Event::PropertyNotify(e) => {
                if e.window == self.root {
                    if self.atoms.describes_root(e.atom) {
                        changes.windows = true;
                        changes.relist |= e.atom != self.atoms.net_active_window;
                    }
                } else if self.atoms.describes_client(e.atom) {
                    changes.windows = true;
                    changes.relist |= e.atom == self.atoms.wm_state;
                }
            }
            Event::CreateNotify(_)
            | Event::DestroyNotify(_)
            | Event::MapNotify(_)
            | Event::UnmapNotify(_)
            | Event::ReparentNotify(_) => {
                changes.windows = true;
                changes.relist = true;
            }
            Event::ConfigureNotify(_) => changes.windows = true,
            Event::FocusIn(e) if e.mode != NotifyMode::GRAB && e.mode != NotifyMode::UNGRAB => {
                changes.windows = true
            }
            Event::FocusOut(e) if e.mode != NotifyMode::GRAB && e.mode != NotifyMode::UNGRAB => {
                changes.windows = true
            }
            _ => {}
        }
    }

    /// Find the clients and select our events on the new ones. A client gone meanwhile answers with
    /// an error event, which is ignored.
    fn select_clients(&mut self) -> Result<()> {
        let clients = windows::client_windows(&self.conn, self.root, &self.atoms)?;
        let current: HashSet<Window> = clients.into_iter().collect();
        let mask = ChangeWindowAttributesAux::new().event_mask(windows::client_event_mask());
        for client in current.difference(&self.clients) {
            self.conn.change_window_attributes(*client, &mask)?;
        }
        self.clients = current;
        Ok(())
    }

    /// Sleep until the server sends something or we are told to stop (true).
    fn sleep(&self) -> Result<bool> {
        self.wake.sleep_beside(self.conn.stream().as_fd(), None)
    }
}
