//! How long reading the screen takes, for a daemon's metrics: the daemon names a function that every
//! capture of this process reports its time to. Without one, a capture reports nothing.

use std::sync::OnceLock;
use std::time::Duration;

static OBSERVER: OnceLock<fn(Duration)> = OnceLock::new();

/// Have every capture from now on report how long it took to `observer` (the first one set stays).
pub fn observe_captures(observer: fn(Duration)) {
    let _ = OBSERVER.set(observer);
}

pub(crate) fn captured(took: Duration) {
    if let Some(observer) = OBSERVER.get() {
        observer(took);
    }
}
