//! "Wait until the screen reacted and went quiet", on the damage counter of the watcher
//! ([`crate::Desktop::damage_updates`]). No polling: the only timers are the caller's limits.
//!
//! The caller notes the damage generation before it acts (`since`), acts, then settles:
//!
//! 1. **Reaction**: wait until the generation passes `since` (something was drawn after the action
//!    began), for at most the *reaction window*, `min(limit, reaction)`.
//! 2. **Quiet**: then wait until nothing has been drawn for `quiet`, all within `limit`.
//!
//! Why a reaction window shorter than the limit: an action that changes nothing on the screen (a
//! click on an empty desktop, a key the app ignores) would otherwise always cost the whole limit. So
//! when nothing is drawn within the window, the result is `reacted: false` (and `settled: true`: the
//! screen has been still all that time); the caller can tell "no visible effect" from "still
//! drawing". [`DEFAULT_REACTION`] (300 ms) is many times the reaction of an app that is alive
//! (xterm draws a typed key within about 5 ms here; a redraw is a frame or two), and well under what
//! an agent loses by sleeping (a reference tool sleeps 2 s after every action).
//!
//! A reaction window of zero skips step 1: wait only for quiet (for a `wait` action with no
//! duration: "until the screen is still").

use std::time::Duration;

use tokio::time::Instant;

use serde::Serialize;
use tokio::sync::watch;

/// How long [`settle`] waits by default for the screen to react to an action.
pub const DEFAULT_REACTION: Duration = Duration::from_millis(300);

/// What [`settle`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Settled {
    /// Something was drawn after `since`.
    pub reacted: bool,
    /// The screen was still for the whole quiet time when the wait ended; false when the limit came
    /// first (it kept drawing) or changes cannot be watched (no DAMAGE, or the desktop closed).
    pub settled: bool,
    /// How long the wait took.
    pub waited: Duration,
}

/// Settle on a damage counter: see the module documentation.
pub async fn settle(
    mut damage: watch::Receiver<u64>,
    since: u64,
    quiet: Duration,
    reaction: Duration,
    limit: Duration,
) -> Settled {
    let start = Instant::now();
    let end = start + limit;
    let done = |reacted: bool, settled: bool| Settled {
        reacted,
        settled,
        waited: start.elapsed(),
    };
    let mut reacted = *damage.borrow_and_update() > since;
    if damage.has_changed().is_err() {
        return done(reacted, false);
    }
    // The last drawing we know of. Drawn before we looked, or not at all: the start, the latest
    // moment it can have been.
    let mut last = start;
    if !reacted && !reaction.is_zero() {
        let window = reaction.min(limit);
        match tokio::time::timeout(window, damage.changed()).await {
            Ok(Ok(())) => {
                damage.borrow_and_update();
                reacted = true;
                last = Instant::now();
            }
            Ok(Err(_closed)) => return done(false, false),
            // Nothing drawn all that time: still, and no reaction to wait for.
            Err(_) if window >= quiet => return done(false, true),
            Err(_) => {}
        }
    }
    loop {
        let now = Instant::now();
        let quiet_until = last + quiet;
        if now >= quiet_until {
            return done(reacted, true);
        }
        if now >= end {
            return done(reacted, false);
        }
        match tokio::time::timeout(quiet_until.min(end) - now, damage.changed()).await {
            Ok(Ok(())) => {
                damage.borrow_and_update();
                reacted = true;
                last = Instant::now();
            }
            Ok(Err(_closed)) => return done(reacted, false),
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[tokio::test(start_paused = true)]
    async fn a_reaction_then_quiet_settles_soon_after_the_last_drawing() {
        let (tx, rx) = watch::channel(5u64);
        let drawer = tokio::spawn(async move {
            for _ in 0..3 {
                tokio::time::sleep(20 * MS).await;
                tx.send_modify(|g| *g += 1);
            }
            tx
        });
        let result = settle(rx, 5, 50 * MS, 300 * MS, 2000 * MS).await;
        assert!(result.reacted && result.settled, "{result:?}");
        // Last drawing at 60 ms, then 50 ms of quiet.
        assert!(
            result.waited >= 110 * MS && result.waited < 130 * MS,
            "{result:?}"
        );
        drop(drawer.await);
    }

    #[tokio::test(start_paused = true)]
    async fn no_reaction_costs_the_reaction_window_not_the_limit() {
        let (_tx, rx) = watch::channel(5u64);
        let result = settle(rx, 5, 50 * MS, 300 * MS, 2000 * MS).await;
        assert_eq!((result.reacted, result.settled), (false, true));
        assert!(
            result.waited >= 300 * MS && result.waited < 310 * MS,
            "{result:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn drawing_that_never_stops_is_not_settled_at_the_limit() {
        let (tx, rx) = watch::channel(0u64);
        let drawer = tokio::spawn(async move {
            while !tx.is_closed() {
                tokio::time::sleep(10 * MS).await;
                tx.send_modify(|g| *g += 1);
            }
        });
        let result = settle(rx, 0, 50 * MS, 300 * MS, 500 * MS).await;
        assert_eq!((result.reacted, result.settled), (true, false));
        assert!(
            result.waited >= 500 * MS && result.waited < 520 * MS,
            "{result:?}"
        );
        drawer.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn drawing_before_the_call_counts_as_the_reaction() {
        let (_tx, rx) = watch::channel(7u64);
        let result = settle(rx, 5, 50 * MS, 300 * MS, 2000 * MS).await;
        assert_eq!((result.reacted, result.settled), (true, true));
        assert!(
            result.waited >= 50 * MS && result.waited < 60 * MS,
            "{result:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_zero_reaction_window_waits_for_quiet_only() {
        let (_tx, rx) = watch::channel(5u64);
        let result = settle(rx, 5, 50 * MS, Duration::ZERO, 2000 * MS).await;
        assert_eq!((result.reacted, result.settled), (false, true));
        assert!(
            result.waited >= 50 * MS && result.waited < 60 * MS,
            "{result:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_counter_ends_the_wait_unsettled() {
        let (tx, rx) = watch::channel(5u64);
        drop(tx);
        let result = settle(rx, 5, 50 * MS, 300 * MS, 2000 * MS).await;
        assert_eq!((result.reacted, result.settled), (false, false));
        assert!(result.waited < 10 * MS);
    }
}
