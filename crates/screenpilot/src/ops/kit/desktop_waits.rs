//! Waits on desktop sessions, woken by the desktop's watcher (X DAMAGE for pixels, window-list and
//! title changes for windows), never by polling: the same wait operations as terminals, with the
//! window titles as the text their regexes match and a hash of the pixels as the screen hash.

use std::time::Duration;

use regex::Regex;
use tokio::time::Instant;

use screenpilot_desktop::Desktop;
use screenpilot_session::wait::{Outcome, Reason};

use super::display::titles;
use super::error::{ErrorCode, OpError};

/// What to wait for on a desktop.
pub enum DesktopCondition {
    /// Any of these regexes matches the window titles (one per line); the first in list order wins.
    Titles(Vec<Regex>),
    /// The screen's pixels differ from this hash.
    Change(u64),
    /// A marker regex matches the titles, or nothing is drawn for `stable`.
    Ready {
        marker: Option<Regex>,
        stable: Duration,
    },
    /// The program started on the desktop exits.
    Exit,
}

/// Wait for `condition` on `desktop`, at most `timeout`. A timeout is an ordinary outcome.
pub async fn wait(
    desktop: &Desktop,
    condition: &DesktopCondition,
    timeout: Duration,
) -> Result<Outcome, OpError> {
    let start = Instant::now();
    let deadline = start + timeout;
    let done = |reason: Reason, index: Option<usize>, matched_text: Option<String>| Outcome {
        reason,
        index,
        matched_text,
        input: None,
        elapsed: start.elapsed(),
        settled: std::time::Duration::ZERO,
    };
    let on_pixels = matches!(
        condition,
        DesktopCondition::Change(_) | DesktopCondition::Ready { .. }
    );
    if on_pixels && !desktop.watches_damage() {
        return Err(OpError::new(
            ErrorCode::DisplayUnavailable,
            format!(
                "sid: desktop '{}' has no X DAMAGE extension to watch, so waits on its pixels are unavailable; wait_for on window titles still works",
                desktop.sid
            ),
        ));
    }
    match condition {
        DesktopCondition::Exit => {
            if desktop.info().program_pid.is_none() {
                return Err(OpError::invalid(
                    "sid",
                    format!(
                        "desktop '{}' was started without a program; there is nothing to wait for",
                        desktop.sid
                    ),
                ));
            }
            let reason = match desktop.wait_program_exit(timeout).await {
                Some(_) => Reason::Exited,
                None => Reason::Timeout,
            };
            Ok(done(reason, None, None))
        }
        DesktopCondition::Titles(regexes) => {
            let mut windows = desktop.window_updates();
            loop {
                windows.borrow_and_update();
                let text = titles(&desktop.windows().await?);
                if let Some((index, found)) = first_match(regexes, &text) {
                    return Ok(done(Reason::Matched, Some(index), Some(found)));
                }
                if !changed_before(&mut windows, deadline).await {
                    return Ok(done(Reason::Timeout, None, None));
                }
            }
        }
        DesktopCondition::Change(from) => {
            let mut damage = desktop.damage_updates();
            loop {
                damage.borrow_and_update();
                if desktop.screen_hash().await? != *from {
                    return Ok(done(Reason::Changed, None, None));
                }
                if !changed_before(&mut damage, deadline).await {
                    return Ok(done(Reason::Timeout, None, None));
                }
            }
        }
        DesktopCondition::Ready { marker, stable } => {
            let mut damage = desktop.damage_updates();
            let mut windows = desktop.window_updates();
            let mut calm_at = Instant::now() + *stable;
            // A caret blinking is drawing that does not end the calm.
            let mut looks = desktop.looks();
            loop {
                if let Some(marker) = marker {
                    windows.borrow_and_update();
                    let text = titles(&desktop.windows().await?);
                    if let Some(found) = marker.find(&text) {
                        return Ok(done(Reason::Marker, None, Some(found.as_str().to_owned())));
                    }
                }
                damage.borrow_and_update();
                let until = calm_at.min(deadline);
                tokio::select! {
                    changed = damage.changed() => {
                        if changed.is_err() {
                            // The watcher is gone (the desktop closed): nothing will be drawn.
                            return Ok(done(Reason::Stable, None, None));
                        }
                        if desktop.drawing_changed(&mut looks).await {
                            calm_at = Instant::now() + *stable;
                        }
                    }
                    changed = windows.changed(), if marker.is_some() => {
                        if changed.is_err() {
                            return Ok(done(Reason::Timeout, None, None));
                        }
                    }
                    _ = tokio::time::sleep_until(until) => {
                        let reason = if until == calm_at { Reason::Stable } else { Reason::Timeout };
                        return Ok(done(reason, None, None));
                    }
                }
            }
        }
    }
}

/// The first regex in list order that matches `text`, and what it matched.
fn first_match(regexes: &[Regex], text: &str) -> Option<(usize, String)> {
    regexes
        .iter()
        .enumerate()
        .find_map(|(i, re)| re.find(text).map(|m| (i, m.as_str().to_owned())))
}

/// Wait for the counter to move, until `deadline`; false at the deadline or when the watcher is gone.
async fn changed_before(
    updates: &mut tokio::sync::watch::Receiver<u64>,
    deadline: Instant,
) -> bool {
    matches!(
        tokio::time::timeout_at(deadline, updates.changed()).await,
        Ok(Ok(()))
    )
}
