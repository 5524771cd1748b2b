//! Waiting on a Wayland connection, never past a deadline: wayland-client's own `roundtrip` and
//! `blocking_dispatch` block without a bound, so every wait here reads the socket itself, in
//! `poll(2)` with the time left, and optionally beside a descriptor that stops the wait at once (the
//! eventfd of a watcher thread being stopped).

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use wayland_client::backend::protocol::Message;
use wayland_client::backend::{Backend, ObjectData, ObjectId, WaylandError};
use wayland_client::protocol::wl_display;
use wayland_client::{Connection, DispatchError, EventQueue};

use crate::error::{DesktopError, Result};

/// When a wait gives up: at `deadline` ([`DesktopError::Timeout`]), or when `stop` becomes readable
/// ([`DesktopError::Closed`]). Neither: wait as long as the connection lives.
#[derive(Clone, Copy, Default)]
pub(crate) struct Until<'a> {
    pub deadline: Option<Instant>,
    pub stop: Option<BorrowedFd<'a>>,
}

impl Until<'_> {
    pub fn deadline(deadline: Instant) -> Until<'static> {
        Until {
            deadline: Some(deadline),
            stop: None,
        }
    }
}

/// Dispatch `queue`'s events into `state`, reading the socket as needed, until `done(state)`.
pub(crate) fn dispatch_until<S>(
    conn: &Connection,
    queue: &mut EventQueue<S>,
    state: &mut S,
    until: Until,
    what: &str,
    mut done: impl FnMut(&S) -> bool,
) -> Result<()> {
    loop {
        queue.dispatch_pending(state).map_err(dispatch_error)?;
        if done(state) {
            return Ok(());
        }
        let mut events = libc::POLLIN;
        match conn.flush() {
            Ok(()) => {}
            // The socket's buffer is full: wait until the compositor reads, as well as for events.
            Err(WaylandError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                events |= libc::POLLOUT
            }
            Err(e) => return Err(wayland_error(e)),
        }
        let Some(guard) = queue.prepare_read() else {
            continue;
        };
        if !wait_for(guard.connection_fd(), events, until, what)? {
            // Only writable: loop to flush again.
            continue;
        }
        match guard.read() {
            Ok(_) => {}
            Err(WaylandError::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(wayland_error(e)),
        }
    }
}

/// A round trip: every request sent so far has been processed by the compositor, and every event
/// it sent before answering has been dispatched into `state`.
pub(crate) fn roundtrip<S>(
    conn: &Connection,
    queue: &mut EventQueue<S>,
    state: &mut S,
    until: Until,
    what: &str,
) -> Result<()> {
    let done = Arc::new(SyncDone(AtomicBool::new(false)));
    conn.send_request(
        &conn.display(),
        wl_display::Request::Sync {},
        Some(done.clone()),
    )
    .map_err(|_| DesktopError::Connection("the Wayland connection is closed".into()))?;
    // The callback's event is handled as the socket is read (no queue), so it is set as soon as the
    // read that holds it returns; events read with it are then dispatched before `done` is asked.
    dispatch_until(conn, queue, state, until, what, |_| {
        done.0.load(Ordering::Acquire)
    })
}

/// The answer to one `wl_display.sync`.
struct SyncDone(AtomicBool);

impl ObjectData for SyncDone {
    fn event(
        self: Arc<Self>,
        _backend: &Backend,
        _msg: Message<ObjectId, OwnedFd>,
    ) -> Option<Arc<dyn ObjectData>> {
        self.0.store(true, Ordering::Release);
        None
    }

    fn destroyed(&self, _object_id: ObjectId) {}
}

/// Wait until `fd` is ready for `events`: true when readable, false when only writable. A stop
/// descriptor that becomes readable ends the wait with [`DesktopError::Closed`].
pub(crate) fn wait_for(fd: BorrowedFd, events: i16, until: Until, what: &str) -> Result<bool> {
    let mut fds = [
        libc::pollfd {
            fd: fd.as_raw_fd(),
            events,
            revents: 0,
        },
        libc::pollfd {
            fd: until.stop.map_or(-1, |s| s.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        let timeout = match until.deadline {
            None => -1,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(timeout(what));
                }
                // Rounded up, so a wait never ends a little before its deadline.
                left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
            }
        };
        // SAFETY: two valid pollfds (a negative fd is ignored by poll).
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
        if ready < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(DesktopError::Io(format!("poll: {e}")));
        }
        if fds[1].revents != 0 {
            return Err(DesktopError::Closed);
        }
        let revents = fds[0].revents;
        if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
            return Ok(true);
        }
        if revents & libc::POLLOUT != 0 {
            return Ok(false);
        }
    }
}

pub(crate) fn timeout(what: &str) -> DesktopError {
    DesktopError::Timeout {
        what: what.to_owned(),
        limit: Duration::ZERO,
    }
}

pub(crate) fn wayland_error(e: WaylandError) -> DesktopError {
    match e {
        WaylandError::Io(e) => {
            DesktopError::Connection(format!("the Wayland connection broke: {e}"))
        }
        WaylandError::Protocol(e) => DesktopError::Connection(format!(
            "the compositor ended the connection with a protocol error: {e}"
        )),
    }
}

pub(crate) fn dispatch_error(e: DispatchError) -> DesktopError {
    match e {
        DispatchError::Backend(e) => wayland_error(e),
        other => DesktopError::Connection(format!("a Wayland event could not be read: {other}")),
    }
}
