//! "Wait until the screen reacted and went quiet": the one loop behind every input that answers with
//! a settled screen (`computer` on desktops and on terminals, [`crate::Desktop::settle`]).
//!
//! A screen announces changes on a watch channel (a desktop's damage counter, a terminal's pump), and
//! a fingerprint says whether what is shown differs (the damage generation itself, or a hash of a
//! terminal's screen). No polling: the loop sleeps on the channel, with the caller's limits as its
//! only timers. The caller reads the fingerprint before it acts (`before`), acts, then settles:
//!
//! 1. **Reaction**: wait until the fingerprint differs from `before`, for at most the *reaction
//!    window*, `min(limit, reaction)`.
//! 2. **Quiet**: then wait until it has not changed for `quiet`, all within `limit`.
//!
//! Why a reaction window shorter than the limit: an action that changes nothing on the screen (a
//! click on an empty desktop, a key the app ignores) would otherwise always cost the whole limit. So
//! when nothing changes within the window, the result is `reacted: false` (and `settled: true` when
//! the window was at least the quiet time: the screen has been still all that while); the caller can
//! tell "no visible effect" from "still drawing". [`DEFAULT_REACTION`] (300 ms) is many times the
//! reaction of an app that is alive (xterm draws a typed key within about 5 ms here; a redraw is a
//! frame or two), and well under what an agent loses by sleeping (a reference tool sleeps 2 s after
//! every action). A reaction window of zero skips step 1: wait only for quiet ([`until_still`]).

use std::time::Duration;

use serde::Serialize;
use tokio::sync::watch;
use tokio::time::Instant;

use screenpilot_screen::settling::Settling;

/// How long [`Settle::reaction`] is by default.
pub const DEFAULT_REACTION: Duration = Duration::from_millis(300);

/// How long to wait, and for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    /// How long to wait for the screen to start changing; zero: do not wait for a change.
    pub reaction: Duration,
    /// The screen must then stay unchanged this long.
    pub quiet: Duration,
    /// The whole wait, reaction included, never lasts longer than this.
    pub limit: Duration,
}

/// What a settle saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Settled {
    /// The screen changed after `before`.
    pub reacted: bool,
    /// The screen was still for the whole quiet time when the wait ended; false when the limit came
    /// first (it kept changing) or changes cannot be watched (the channel closed).
    pub settled: bool,
    /// How long the wait took.
    pub waited: Duration,
}

/// Wait until the screen has not changed for `settle.quiet` (at most `settle.limit`), without waiting
/// for it to change first.
pub async fn until_still(
    updates: watch::Receiver<u64>,
    fingerprint: impl Fn() -> u64,
    settle_for: Settle,
) -> Settled {
    let before = fingerprint();
    let mut waited = settle(
        updates,
        fingerprint,
        before,
        Settle {
            reaction: Duration::ZERO,
            ..settle_for
        },
    )
    .await;
    waited.reacted = false;
    waited
}

/// Wait until `fingerprint()` differs from `before` and then stays the same for `settle.quiet` (see
/// the module documentation). `updates` wakes the loop on every change the screen announces.
pub async fn settle(
    mut updates: watch::Receiver<u64>,
    fingerprint: impl Fn() -> u64,
    before: u64,
    settle: Settle,
) -> Settled {
    let start = Instant::now();
    let end = start + settle.limit;
    let mut rule = Settling::new(Some(before), settle.quiet, start);
    if settle.reaction.is_zero() {
        rule.count_without_reaction();
    }
    let done = |rule: &Settling<Instant>, settled: bool| Settled {
        reacted: rule.reacted(),
        settled,
        waited: start.elapsed(),
    };
    updates.borrow_and_update();
    rule.saw(fingerprint(), start);
    if updates.has_changed().is_err() {
        return done(&rule, false);
    }
    // The reaction window: past it with no reaction, the input had no visible effect.
    let window = start + settle.reaction.min(settle.limit);
    loop {
        let now = Instant::now();
        let wake = match rule.quiet_at() {
            Some(quiet_at) if now >= quiet_at => return done(&rule, true),
            Some(_) if now >= end => return done(&rule, false),
            Some(quiet_at) => quiet_at.min(end),
            None => window,
        };
        match tokio::time::timeout_at(wake, updates.changed()).await {
            Ok(Ok(())) => {
                updates.borrow_and_update();
                rule.saw(fingerprint(), Instant::now());
            }
            Ok(Err(_closed)) => return done(&rule, false),
            // The window passed with nothing changed: still all that time, and no reaction to wait
            // for; a window shorter than the quiet time waits for the rest of it.
            Err(_) if rule.quiet_at().is_none() && window - start >= settle.quiet => {
                return done(&rule, true)
            }
            Err(_) if rule.quiet_at().is_none() => rule.count_without_reaction(),
            Err(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn limits(reaction: u32, quiet: u32, limit: u32) -> Settle {
        Settle {
            reaction: reaction * MS,
            quiet: quiet * MS,
            limit: limit * MS,
        }
    }

    /// A counter whose value is its own fingerprint, as a desktop's damage generation is.
    fn counter(start: u64) -> (watch::Sender<u64>, impl Fn() -> u64, watch::Receiver<u64>) {
        let (tx, rx) = watch::channel(start);
        let probe = rx.clone();
        (tx, move || *probe.borrow(), rx)
    }

    #[tokio::test(start_paused = true)]
    async fn a_reaction_then_quiet_settles_soon_after_the_last_change() {
        let (tx, probe, rx) = counter(5);
        let drawer = tokio::spawn(async move {
            for _ in 0..3 {
                tokio::time::sleep(20 * MS).await;
                tx.send_modify(|g| *g += 1);
            }
            tx
        });
        let result = settle(rx, probe, 5, limits(300, 50, 2000)).await;
        assert!(result.reacted && result.settled, "{result:?}");
        // Last change at 60 ms, then 50 ms of quiet.
        assert!(
            result.waited >= 110 * MS && result.waited < 130 * MS,
            "{result:?}"
        );
        drop(drawer.await);
    }

    #[tokio::test(start_paused = true)]
    async fn no_reaction_costs_the_reaction_window_not_the_limit() {
        let (_tx, probe, rx) = counter(5);
        let result = settle(rx, probe, 5, limits(300, 50, 2000)).await;
        assert_eq!((result.reacted, result.settled), (false, true));
        assert!(
            result.waited >= 300 * MS && result.waited < 310 * MS,
            "{result:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn changing_that_never_stops_is_not_settled_at_the_limit() {
        let (tx, probe, rx) = counter(0);
        let drawer = tokio::spawn(async move {
            while !tx.is_closed() {
                tokio::time::sleep(10 * MS).await;
                tx.send_modify(|g| *g += 1);
            }
        });
        let result = settle(rx, probe, 0, limits(300, 50, 500)).await;
        assert_eq!((result.reacted, result.settled), (true, false));
        assert!(
            result.waited >= 500 * MS && result.waited < 520 * MS,
            "{result:?}"
        );
        drawer.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_before_the_call_counts_as_the_reaction() {
        let (_tx, probe, rx) = counter(7);
        let result = settle(rx, probe, 5, limits(300, 50, 2000)).await;
        assert_eq!((result.reacted, result.settled), (true, true));
        assert!(
            result.waited >= 50 * MS && result.waited < 60 * MS,
            "{result:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn until_still_waits_for_quiet_only() {
        let (_tx, probe, rx) = counter(5);
        let result = until_still(rx, probe, limits(0, 50, 2000)).await;
        assert_eq!((result.reacted, result.settled), (false, true));
        assert!(
            result.waited >= 50 * MS && result.waited < 60 * MS,
            "{result:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_channel_ends_the_wait_unsettled() {
        let (tx, probe, rx) = counter(5);
        drop(tx);
        let result = settle(rx, probe, 5, limits(300, 50, 2000)).await;
        assert_eq!((result.reacted, result.settled), (false, false));
        assert!(result.waited < 10 * MS);
    }

    /// Announcements that change nothing shown (a terminal's pump after output that drew the same)
    /// are neither a reaction nor an end of quiet.
    #[tokio::test(start_paused = true)]
    async fn announcements_of_an_unchanged_screen_are_not_changes() {
        let (tx, rx) = watch::channel(0u64);
        let shown = Arc::new(AtomicU64::new(1));
        let writer = shown.clone();
        let pump = tokio::spawn(async move {
            for step in 1..=20u64 {
                tokio::time::sleep(10 * MS).await;
                if step == 3 {
                    writer.store(2, Ordering::SeqCst);
                }
                tx.send_replace(step);
            }
            tx
        });
        let result = settle(
            rx,
            move || shown.load(Ordering::SeqCst),
            1,
            limits(1000, 50, 2000),
        )
        .await;
        assert!(result.reacted && result.settled, "{result:?}");
        // The one real change at 30 ms, quiet 50 ms after it despite announcements every 10 ms.
        assert!(
            result.waited >= 80 * MS && result.waited < 90 * MS,
            "{result:?}"
        );
        drop(pump.await);
    }
}
