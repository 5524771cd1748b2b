//! Watching a compositor's output for drawing, without polling: a thread with its own connection
//! that keeps one `copy_with_damage` outstanding. The compositor holds such a copy back until
//! something is drawn, then completes it with the damaged boxes; each completed copy with damage
//! bumps a `tokio::sync::watch` generation, and records the box it covered ([`Drawn`], as the X11
//! watcher does), before the next copy is asked for. So a bump always comes after the drawing it
//! stands for, and drawing after it completes the next copy.
//!
//! [`DamageWatch::start`] returns once the first copy is done: drawing after it is counted.
//!
//! Why a thread and its own connection: the action connection ([`super::Wayland`]) runs one call at
//! a time and may be busy for seconds (typing a long text); drawing must be seen meanwhile.
//!
//! Stopping: [`DamageWatch::stop`] writes to an eventfd the thread polls beside the connection, so
//! it ends at once; it also ends when the compositor goes away. Either way it drops its sender, and
//! every receiver's `changed()` then returns an error.

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::watch;
use wayland_client::protocol::wl_output::WlOutput;
use wayland_client::{Connection, EventQueue};

use super::blocking::Until;
use super::globals::{self, Globals};
use super::screencopy::{Screencopy, Want};
use crate::error::Result;
use crate::wakeable::{WakeableThread, Waker};
use crate::watcher::Drawn;

/// A running damage watch. Dropping it stops the thread (without waiting for it).
pub struct DamageWatch {
    thread: WakeableThread,
    damage: watch::Receiver<u64>,
    drawn: Arc<Mutex<Drawn>>,
}

struct Watch {
    conn: Connection,
    /// Keeps the output and the registry's queue alive.
    _queue: EventQueue<Globals>,
    _output: WlOutput,
    capture: Screencopy,
    wake: Waker,
    damage_tx: watch::Sender<u64>,
    drawn: Arc<Mutex<Drawn>>,
}

impl DamageWatch {
    /// Connect to the compositor at `socket`, make the first copy (by `deadline`), then start the
    /// thread. When this returns, every later drawing is counted.
    pub fn start(socket: &Path, deadline: Instant) -> Result<DamageWatch> {
        let conn = globals::open(socket)?;
        let (mut queue, mut found, registry) = globals::discover(&conn, deadline)?;
        let output = globals::bind_output(&conn, &mut queue, &mut found, &registry, deadline)?;
        let mut capture = Screencopy::new(&conn, &registry, &found, output.clone())?;
        // The first copy with damage starts the compositor's damage tracking for us; it completes
        // at once (all is new to us) and counts as the starting point, not as drawing.
        capture.copy(&conn, Want::Damage, Until::deadline(deadline))?;
        let waker = Waker::new()?;
        let (damage_tx, damage_rx) = watch::channel(0u64);
        let drawn = Arc::new(Mutex::new(Drawn::default()));
        let watch = Watch {
            conn,
            _queue: queue,
            _output: output,
            capture,
            wake: waker.try_clone()?,
            damage_tx,
            drawn: drawn.clone(),
        };
        let thread =
            WakeableThread::spawn("screenpilot-wayland-damage", "damage", waker, move || {
                watch.run()
            })?;
        Ok(DamageWatch {
            thread,
            damage: damage_rx,
            drawn,
        })
    }

    /// The drawing generation: it goes up after each batch of drawing.
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

    /// Tell the thread to end (it does at once; this does not wait).
    pub fn stop(&self) {
        self.thread.wake();
    }

    /// Tell the thread to end, and hand over its handle to wait for it (once; `None` after).
    pub fn stop_and_take(&self) -> Option<JoinHandle<()>> {
        self.thread.wake_and_take()
    }
}

impl Watch {
    fn run(mut self) {
        // Any error means the compositor went away or we were stopped: end, dropping the sender.
        let _ = self.watch();
    }

    fn watch(&mut self) -> Result<()> {
        loop {
            let until = Until {
                deadline: None,
                stop: Some(self.wake.as_fd()),
            };
            let copied = self.capture.copy(&self.conn, Want::Damage, until)?;
            let Some(area) = copied.damage else {
                continue;
            };
            self.damage_tx.send_modify(|generation| {
                *generation += 1;
                *self.drawn.lock().unwrap_or_else(|p| p.into_inner()) = Drawn {
                    generation: *generation,
                    area: Some(area),
                };
            });
        }
    }
}
