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

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use tokio::sync::watch;

use crate::error::{DesktopError, Result};
use crate::sway::wire::{Request, Wire, EVENT_BIT};

/// A running event counter. Dropping it stops the thread (without waiting for it).
pub struct SwayEvents {
    wake: OwnedFd,
    thread: Mutex<Option<JoinHandle<()>>>,
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
        // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if raw < 0 {
            return Err(DesktopError::Io(format!(
                "eventfd: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let wake = unsafe { OwnedFd::from_raw_fd(raw) };
        let thread_wake = wake
            .try_clone()
            .map_err(|e| DesktopError::Io(format!("eventfd: {e}")))?;
        let (tx, rx) = watch::channel(0u64);
        let thread = std::thread::Builder::new()
            .name("screenpilot-sway-events".into())
            .spawn(move || count_events(wire, &thread_wake, &tx))
            .map_err(|e| DesktopError::Io(format!("cannot start the sway event thread: {e}")))?;
        Ok(SwayEvents {
            wake,
            thread: Mutex::new(Some(thread)),
            updates: rx,
        })
    }

    /// The generation, bumped after every batch of window or workspace events.
    pub fn updates(&self) -> watch::Receiver<u64> {
        self.updates.clone()
    }

    /// Tell the thread to end (it does at once; this does not wait).
    pub fn stop(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a local to our eventfd.
        unsafe {
            libc::write(
                self.wake.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            );
        }
    }

    /// Tell the thread to end, and hand over its handle to wait for it (once; `None` after).
    pub fn stop_and_take(&self) -> Option<JoinHandle<()>> {
        self.stop();
        self.thread
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }
}

impl Drop for SwayEvents {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread: sleep until sway writes or we are told to stop; count each batch of events.
fn count_events(mut wire: Wire, wake: &OwnedFd, tx: &watch::Sender<u64>) {
    loop {
        let mut fds = [
            libc::pollfd {
                fd: wire.stream().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: wake.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: two valid pollfds, no timeout.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if ready < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        if fds[1].revents != 0 {
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
