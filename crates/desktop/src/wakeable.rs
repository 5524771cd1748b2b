//! Threads that sleep on a connection and wake at once when their owner asks, without polling: an
//! eventfd ([`Waker`]) the thread polls beside its socket. The X11 and Wayland drawing watchers,
//! sway's event counter and both clipboard servers each run one ([`WakeableThread`]).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::error::{DesktopError, Result};

/// An eventfd: readable once woken, until drained.
pub(crate) struct Waker(OwnedFd);

impl Waker {
    pub fn new() -> Result<Waker> {
        // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
        let raw = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if raw < 0 {
            return Err(DesktopError::Io(format!(
                "eventfd: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        Ok(Waker(unsafe { OwnedFd::from_raw_fd(raw) }))
    }

    /// Another handle on the same eventfd, for the other side.
    pub fn try_clone(&self) -> Result<Waker> {
        let fd = self
            .0
            .try_clone()
            .map_err(|e| DesktopError::Io(format!("eventfd: {e}")))?;
        Ok(Waker(fd))
    }

    /// Make it readable: whoever polls it wakes.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writing 8 bytes from a local to our eventfd.
        unsafe {
            libc::write(
                self.0.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            );
        }
    }

    /// Make it unreadable again (after a wake that asked for something other than an end).
    pub fn drain(&self) {
        let mut count: u64 = 0;
        // SAFETY: reading 8 bytes into a local from our non-blocking eventfd.
        unsafe {
            libc::read(
                self.0.as_raw_fd(),
                (&mut count as *mut u64).cast(),
                std::mem::size_of::<u64>(),
            );
        }
    }

    /// Sleep until `fd` is readable, `timeout` passes (`None`: never) or this is woken: true when
    /// woken.
    pub fn sleep_beside(&self, fd: BorrowedFd, timeout: Option<Duration>) -> Result<bool> {
        let timeout = timeout.map_or(-1, |t| {
            // One more millisecond, so the wake-up comes after the moment, not before it.
            t.as_millis().min(i32::MAX as u128 - 1) as i32 + 1
        });
        let mut fds = [
            libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: self.0.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            // SAFETY: two valid pollfds.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout) };
            if ready >= 0 {
                return Ok(fds[1].revents != 0);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(DesktopError::Io(format!("poll: {e}")));
            }
        }
    }
}

impl AsFd for Waker {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

/// A thread that sleeps beside a clone of a [`Waker`], and the owner's end. Dropping it wakes the
/// thread (without waiting for it): a thread that ends on any wake ends.
pub(crate) struct WakeableThread {
    waker: Waker,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl WakeableThread {
    /// Start `run` on a thread called `name` (`what` names it in an error); `waker` wakes it (`run`
    /// holds a clone of it).
    pub fn spawn(
        name: &str,
        what: &str,
        waker: Waker,
        run: impl FnOnce() + Send + 'static,
    ) -> Result<WakeableThread> {
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(run)
            .map_err(|e| DesktopError::Io(format!("cannot start the {what} thread: {e}")))?;
        Ok(WakeableThread {
            waker,
            thread: Mutex::new(Some(thread)),
        })
    }

    pub fn wake(&self) {
        self.waker.wake();
    }

    /// Wake the thread, and hand over its handle to wait for it (once; `None` after).
    pub fn wake_and_take(&self) -> Option<JoinHandle<()>> {
        self.wake();
        self.thread
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take()
    }

    /// The thread still runs.
    pub fn alive(&self) -> bool {
        self.thread
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .as_ref()
            .is_some_and(|t| !t.is_finished())
    }
}

impl Drop for WakeableThread {
    fn drop(&mut self) {
        self.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixStream;
    use std::sync::mpsc;

    #[test]
    fn a_sleeping_thread_wakes_when_asked_and_reports_the_socket_otherwise() {
        let (ours, socket) = UnixStream::pair().unwrap();
        let (tx, rx) = mpsc::channel();
        let waker = Waker::new().unwrap();
        let thread_end = waker.try_clone().unwrap();
        let thread = WakeableThread::spawn("test-wakeable", "test", waker, move || {
            // First the socket becomes readable: not a wake.
            let woken = thread_end.sleep_beside(socket.as_fd(), None).unwrap();
            tx.send(woken).unwrap();
            let mut byte = [0u8];
            std::io::Read::read(&mut &socket, &mut byte).unwrap();
            // Then the owner wakes it.
            let woken = thread_end.sleep_beside(socket.as_fd(), None).unwrap();
            tx.send(woken).unwrap();
        })
        .unwrap();
        std::io::Write::write_all(&mut &ours, b"x").unwrap();
        assert!(!rx.recv().unwrap(), "a readable socket is not a wake");
        let handle = thread.wake_and_take().expect("the handle, once");
        assert!(rx.recv().unwrap(), "woken");
        handle.join().unwrap();
        assert!(thread.wake_and_take().is_none());
        assert!(!thread.alive());
    }

    #[test]
    fn a_timeout_ends_the_sleep_and_a_drained_waker_sleeps_again() {
        let (_ours, theirs) = UnixStream::pair().unwrap();
        let waker = Waker::new().unwrap();
        let short = Some(Duration::from_millis(1));
        assert!(!waker.sleep_beside(theirs.as_fd(), short).unwrap());
        waker.try_clone().unwrap().wake();
        assert!(waker.sleep_beside(theirs.as_fd(), short).unwrap());
        waker.drain();
        assert!(!waker.sleep_beside(theirs.as_fd(), short).unwrap());
    }
}
