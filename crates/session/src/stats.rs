//! What all sessions of this process moved through their terminals, for a daemon's metrics: bytes a
//! program wrote (its output, read from the pty) and bytes written to it (input). Process-wide
//! counters, so no session pays for a lock.

use std::sync::atomic::{AtomicU64, Ordering};

static OUTPUT: AtomicU64 = AtomicU64::new(0);
static INPUT: AtomicU64 = AtomicU64::new(0);

pub(crate) fn output(bytes: usize) {
    OUTPUT.fetch_add(bytes as u64, Ordering::Relaxed);
}

pub(crate) fn input(bytes: usize) {
    INPUT.fetch_add(bytes as u64, Ordering::Relaxed);
}

/// Bytes read from programs, and bytes written to them, since this process started.
pub fn bytes() -> (u64, u64) {
    (
        OUTPUT.load(Ordering::Relaxed),
        INPUT.load(Ordering::Relaxed),
    )
}
