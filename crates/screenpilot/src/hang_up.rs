//! Noticing that the other end of a socket or pipe is gone, without reading from it: the daemon
//! watches each connection this way, `dial-stdio` its stdout.

use std::os::fd::{AsFd, OwnedFd};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A second descriptor of `io`, registered for write readiness alone, for [`hung_up`]; its own
/// registration leaves the original's readiness to whoever writes to it. `None` when the process
/// is out of descriptors (the caller then goes on without noticing a hang-up early).
pub fn watch(io: &impl AsFd) -> Option<AsyncFd<OwnedFd>> {
    let fd = io.as_fd().try_clone_to_owned().ok()?;
    // SAFETY: an OwnedFd is open for as long as it is owned, and always returns the same fd.
    unsafe { AsyncFd::register_with_interest(fd, Interest::WRITABLE) }.ok()
}

/// Resolves when the peer has closed its end entirely (not merely shut down its writing side): a
/// stream socket or pipe whose reader is gone reports hang-up; one whose peer only half-closed does
/// not. Never resolves for `None`.
pub async fn hung_up(fd: Option<&AsyncFd<OwnedFd>>) {
    let Some(fd) = fd else {
        return std::future::pending().await;
    };
    loop {
        let Ok(mut guard) = fd.writable().await else {
            return std::future::pending().await;
        };
        if guard.ready().is_write_closed() {
            return;
        }
        // Writable only: wait for the next change of state (edge-triggered, no polling).
        guard.clear_ready();
    }
}
