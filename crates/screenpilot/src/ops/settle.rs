//! "Wait until the screen reacted and went quiet": the one loop behind every input that answers with
//! a settled screen (input ops with `settle_ms`, `computer` on terminals and on desktops).
//!
//! A screen announces changes on a watch channel (a terminal's pump, a desktop's damage watcher), and
//! a fingerprint says whether what is shown differs. No polling: the loop sleeps on the channel, with
//! the caller's limits as its only timers.

use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

/// How long to wait, and for what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    /// How long to wait for the screen to start changing; an input that changes nothing costs this.
    pub reaction: Duration,
    /// The screen must then stay unchanged this long.
    pub quiet: Duration,
    /// The whole wait, reaction included, never lasts longer than this.
    pub limit: Duration,
}

/// What a settle saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settled {
    /// The screen changed after the input.
    pub reacted: bool,
    /// It changed and then stayed quiet for the quiet time, within the limit. An input that changes
    /// nothing is not settled: the caller sees the screen as it is.
    pub settled: bool,
}

/// Wait until the screen has not changed for `settle.quiet` (at most `settle.limit`), without
/// waiting for it to change first: a `wait` with no duration.
pub async fn until_still(
    updates: watch::Receiver<u64>,
    fingerprint: impl Fn() -> u64,
    settle_for: Settle,
) -> Settled {
    // A fingerprint that is not the current one: the loop starts at "changed" and waits for quiet.
    let before = !fingerprint();
    settle(updates, fingerprint, before, settle_for).await
}

/// Wait until `fingerprint()` differs from `before` and then stays the same for `settle.quiet`.
/// `updates` wakes the loop on every change the screen announces; when its sender is gone (the
/// program ended) nothing can change any more, which counts as quiet.
pub async fn settle(
    mut updates: watch::Receiver<u64>,
    fingerprint: impl Fn() -> u64,
    before: u64,
    settle: Settle,
) -> Settled {
    let start = Instant::now();
    let limit = start + settle.limit;
    let react_by = start + settle.reaction.min(settle.limit);
    let mut last = fingerprint();
    while last == before {
        match tokio::time::timeout_at(react_by, updates.changed()).await {
            Ok(Ok(())) => last = fingerprint(),
            Ok(Err(_)) | Err(_) => {
                return Settled {
                    reacted: fingerprint() != before,
                    settled: false,
                }
            }
        }
    }
    let mut calm_at = Instant::now() + settle.quiet;
    loop {
        if calm_at > limit {
            // Quiet would come after the limit: wait for the limit, then say whether it came.
            let changed = tokio::time::timeout_at(limit, updates.changed()).await;
            let still = !matches!(changed, Ok(Ok(()))) && fingerprint() == last;
            return Settled {
                reacted: true,
                settled: still && Instant::now() >= calm_at,
            };
        }
        match tokio::time::timeout_at(calm_at, updates.changed()).await {
            Ok(Ok(())) => {
                let now = fingerprint();
                if now != last {
                    last = now;
                    calm_at = Instant::now() + settle.quiet;
                }
            }
            Ok(Err(_)) | Err(_) => {
                return Settled {
                    reacted: true,
                    settled: true,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn screen() -> (watch::Sender<u64>, Arc<AtomicU64>) {
        (watch::Sender::new(0), Arc::new(AtomicU64::new(0)))
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_then_quiet_settles() {
        let (tx, shown) = screen();
        let rx = tx.subscribe();
        let writer = shown.clone();
        tokio::spawn(async move {
            for step in 1..=3u64 {
                tokio::time::sleep(10 * MS).await;
                writer.store(step, Ordering::SeqCst);
                tx.send_replace(step);
            }
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(tx);
        });
        let outcome = settle(
            rx,
            || shown.load(Ordering::SeqCst),
            0,
            Settle {
                reaction: 1000 * MS,
                quiet: 50 * MS,
                limit: 2000 * MS,
            },
        )
        .await;
        assert_eq!(
            outcome,
            Settled {
                reacted: true,
                settled: true
            }
        );
        assert_eq!(
            shown.load(Ordering::SeqCst),
            3,
            "it waited for the last change"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn no_change_costs_the_reaction_time_only() {
        let (tx, shown) = screen();
        let started = tokio::time::Instant::now();
        let outcome = settle(
            tx.subscribe(),
            || shown.load(Ordering::SeqCst),
            0,
            Settle {
                reaction: 300 * MS,
                quiet: 50 * MS,
                limit: 2000 * MS,
            },
        )
        .await;
        assert!(!outcome.reacted && !outcome.settled);
        assert_eq!(started.elapsed(), 300 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn a_screen_that_never_stops_changing_is_not_settled_at_the_limit() {
        let (tx, shown) = screen();
        let rx = tx.subscribe();
        let writer = shown.clone();
        tokio::spawn(async move {
            for step in 1..=1000u64 {
                tokio::time::sleep(10 * MS).await;
                writer.store(step, Ordering::SeqCst);
                tx.send_replace(step);
            }
        });
        let started = tokio::time::Instant::now();
        let outcome = settle(
            rx,
            || shown.load(Ordering::SeqCst),
            0,
            Settle {
                reaction: 500 * MS,
                quiet: 50 * MS,
                limit: 500 * MS,
            },
        )
        .await;
        assert!(outcome.reacted && !outcome.settled);
        // It gives up once quiet could no longer come within the limit, never later.
        assert!(started.elapsed() <= 500 * MS, "{:?}", started.elapsed());
    }
}
