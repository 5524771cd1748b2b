//! Counting sway's window and workspace events, without polling: a thread with its own IPC
//! connection, subscribed to `["window", "workspace"]`, sleeps in `poll(2)` until sway writes, and
//! bumps a `tokio::sync::watch` generation once per batch of events read.
//!
//! sway sends a window event when a window appears (`new`), closes, takes the focus, changes its
//! title, goes fullscreen, floats or moves to another workspace (the scratchpad too); a workspace
//! event when the visible workspace changes. It sends none when a window is only resized or moved
//! within its workspace: a wait for that reads [`crate::sway::SwayIpc::windows`] after the command.
//!
//! Stopping: [`SwayEvents::stop`] writes to an eventfd the thread polls beside the socket, so it
//! ends at once; it also ends when sway goes. Either way it drops its sender, and every receiver's
//! `changed()` then returns an error: a wait on a closed compositor ends.

use std::os::fd::AsFd;
use std::path::Path;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::watch;

use crate::error::{DesktopError, Result};
use crate::sway::wire::{Request, Wire, EVENT_BIT};
use crate::wakeable::{WakeableThread, Waker};

/// A running event counter. Dropping it stops the thread (without waiting for it).
pub struct SwayEvents {
    thread: WakeableThread,
    updates: watch::Receiver<u64>,
}

impl SwayEvents {
    /// Connect to `ipc` and subscribe (blocking, within `limit`), then start the thread. When this
    /// returns, every later event is counted.
    pub fn start(ipc: &Path, limit: Duration) -> Result<SwayEvents> {
        let mut wire = Wire::connect(ipc)?;
        let reply = wire.call(Request::Subscribe, r#"["window","workspace"]"#, limit)?;
        let accepted = serde_json::from_slice::<serde_json::Value>(&reply)
            .ok()
            .and_then(|answer| answer.get("success")?.as_bool())
            .unwrap_or(false);
        if !accepted {
            return Err(DesktopError::Compositor(format!(
                "sway refused the event subscription: {}",
                String::from_utf8_lossy(&reply)
            )));
        }
        let (tx, rx) = watch::channel(0u64);
        let waker = Waker::new()?;
        let theirs = waker.try_clone()?;
        let thread =
            WakeableThread::spawn("screenpilot-sway-events", "sway event", waker, move || {
                count_events(wire, &theirs, &tx)
            })?;
        Ok(SwayEvents {
            thread,
            updates: rx,
        })
    }

    /// The generation, bumped after every batch of window or workspace events.
    pub fn updates(&self) -> watch::Receiver<u64> {
        self.updates.clone()
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

/// The thread: sleep until sway writes or we are told to stop; count each batch of events.
fn count_events(mut wire: Wire, waker: &Waker, tx: &watch::Sender<u64>) {
    loop {
        if !matches!(waker.sleep_beside(wire.stream().as_fd(), None), Ok(false)) {
            return;
        }
        let Ok(open) = wire.read_available() else {
            return;
        };
        let Ok(kinds) = wire.take_messages() else {
            return;
        };
        if kinds.iter().any(|kind| kind & EVENT_BIT != 0) {
            tx.send_modify(|generation| *generation += 1);
        }
        if !open {
            return;
        }
    }
}
