//! How long a client waits: for a silent daemon, for a link to be made again.

use std::time::Duration;

/// Names the grace period, in ms, a client allows the daemon beyond a request's own timeouts.
pub(crate) const ANSWER_GRACE_VAR: &str = "SCREENPILOT_ANSWER_GRACE_MS";
/// The grace period when [`ANSWER_GRACE_VAR`] is not set.
const DEFAULT_ANSWER_GRACE: Duration = Duration::from_secs(60);
/// The same over a remote link, where silence most often means a dead network.
pub(super) const REMOTE_ANSWER_GRACE: Duration = Duration::from_secs(10);

/// How long a dropped remote link is tried again before waiting calls end with `link_lost`.
const RECONNECT_LIMIT: Duration = Duration::from_secs(120);
pub const RECONNECT_LIMIT_VAR: &str = "SCREENPILOT_RECONNECT_MS";

fn duration_var(name: &str) -> Option<Duration> {
    std::env::var(name)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
}

/// The grace period a client allows this machine's daemon: [`ANSWER_GRACE_VAR`], else the default.
pub(crate) fn answer_grace() -> Duration {
    duration_var(ANSWER_GRACE_VAR).unwrap_or(DEFAULT_ANSWER_GRACE)
}

/// The same over a remote link: [`ANSWER_GRACE_VAR`], else 10 s.
pub(super) fn remote_answer_grace() -> Duration {
    duration_var(ANSWER_GRACE_VAR).unwrap_or(REMOTE_ANSWER_GRACE)
}

/// How long a dropped remote link is tried again: [`RECONNECT_LIMIT_VAR`], else 120 s.
pub(super) fn reconnect_limit() -> Duration {
    duration_var(RECONNECT_LIMIT_VAR).unwrap_or(RECONNECT_LIMIT)
}
