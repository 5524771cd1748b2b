//! "React, then go quiet": the one rule behind every answer that waits for a screen to settle (a
//! terminal wait's `quiet_ms`, `computer`'s screenshot after input, `act` after an action, desktop
//! and terminal alike). Pure: it is told each fingerprint of the screen (a hash of a terminal's
//! cells, a desktop's damage generation) and when it was seen, and says when the screen will have been
//! still long enough. The async loops that feed it wake on the screen's own change notices, so
//! nothing polls.
//!
//! 1. **Reaction** (when a fingerprint from before the input is given): nothing counts until the
//!    screen differs from it; the quiet time starts at that first difference.
//! 2. **Quiet**: after that, every change starts the quiet time again; the screen is settled once it
//!    has not changed for the quiet time.
//!
//! A driver that stops waiting for a reaction (its reaction window passed) calls
//! [`Settling::count_without_reaction`]: quiet then counts from the start.

use std::ops::Add;
use std::time::Duration;

/// One settle in progress. `I` is the clock's instant (`std` or `tokio`'s, whose time tests pause).
#[derive(Debug, Clone, Copy)]
pub struct Settling<I> {
    before: Option<u64>,
    quiet: Duration,
    /// Quiet is being counted (the reaction came, or none was waited for).
    counting: bool,
    /// The screen differed from `before` at some point.
    reacted: bool,
    last: Option<u64>,
    still_since: I,
}

impl<I: Copy + Add<Duration, Output = I>> Settling<I> {
    /// A settle starting at `now`: first for the screen to differ from `before` (none: no reaction
    /// to wait for), then for `quiet` without a change.
    pub fn new(before: Option<u64>, quiet: Duration, now: I) -> Settling<I> {
        Settling {
            before,
            quiet,
            counting: before.is_none(),
            reacted: false,
            last: None,
            still_since: now,
        }
    }

    /// The screen's fingerprint, seen at `now`.
    pub fn saw(&mut self, fingerprint: u64, now: I) {
        let differs = self.before.is_some_and(|b| b != fingerprint);
        if !self.counting {
            if differs {
                self.counting = true;
                self.reacted = true;
                self.still_since = now;
            }
        } else {
            if self.last.is_some_and(|last| last != fingerprint) {
                self.still_since = now;
            }
            self.reacted |= differs;
        }
        self.last = Some(fingerprint);
    }

    /// Stop waiting for a reaction: quiet counts from the start (or the last change seen since).
    pub fn count_without_reaction(&mut self) {
        self.counting = true;
    }

    /// The screen differed from the fingerprint before the input.
    pub fn reacted(&self) -> bool {
        self.reacted
    }

    /// When the screen will have been still for the quiet time; `None` while a reaction is awaited.
    pub fn quiet_at(&self) -> Option<I> {
        self.counting.then(|| self.still_since + self.quiet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Instants as milliseconds from a start, for readable expectations.
    fn at(ms: u64) -> Duration {
        Duration::from_millis(ms)
    }

    #[test]
    fn quiet_counts_from_the_reaction_and_every_change_after_it() {
        let mut s = Settling::new(Some(7), 50 * MS, at(0));
        s.saw(7, at(0));
        assert_eq!(s.quiet_at(), None, "no reaction yet");
        s.saw(7, at(10));
        assert_eq!(s.quiet_at(), None, "the same screen is no reaction");
        s.saw(8, at(20));
        assert!(s.reacted());
        assert_eq!(s.quiet_at(), Some(at(70)));
        s.saw(9, at(30));
        assert_eq!(
            s.quiet_at(),
            Some(at(80)),
            "a change starts the quiet time again"
        );
        s.saw(9, at(40));
        assert_eq!(
            s.quiet_at(),
            Some(at(80)),
            "a look at the same screen does not"
        );
    }

    #[test]
    fn without_a_reaction_to_wait_for_quiet_counts_from_the_start() {
        let mut s = Settling::new(None, 50 * MS, at(0));
        s.saw(1, at(5));
        assert_eq!(s.quiet_at(), Some(at(50)), "the first look is no change");
        assert!(!s.reacted());
        s.saw(2, at(30));
        assert_eq!(s.quiet_at(), Some(at(80)));
        let mut s = Settling::new(Some(1), 50 * MS, at(0));
        s.saw(1, at(0));
        s.count_without_reaction();
        assert_eq!(
            s.quiet_at(),
            Some(at(50)),
            "a driver gave up on the reaction"
        );
        s.saw(1, at(10));
        assert!(!s.reacted(), "back to where it was is no reaction");
    }
}
