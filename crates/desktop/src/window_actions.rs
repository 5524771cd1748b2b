//! Window management on a desktop: focus, raise, move and resize, minimise, close a top-level
//! window, each returning once its effect shows.
//!
//! The requests are in `x11::manage` (through the window manager when one runs). Here each is sent,
//! then the window is looked at again whenever the watcher's window counter moves (a focus change,
//! a configure, a map or unmap, a property such as `WM_STATE`, the window list): no polling, and
//! no fixed delay. A window manager that ignores a request gives a timeout naming what was asked
//! and how the window is, after [`WINDOW_ACTION_TIMEOUT`].

use std::collections::HashSet;
use std::time::Duration;

use serde::Serialize;
use tokio::time::Instant;

use crate::backend::Backend;
use crate::desktop::Desktop;
use crate::error::{DesktopError, Result};
use crate::x11::{MoveResize, WindowInfo};

/// How long a window action waits for its effect (at most the desktop's step limit).
pub const WINDOW_ACTION_TIMEOUT: Duration = Duration::from_secs(10);

/// How a close ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum CloseOutcome {
    /// The window is gone from the window list (destroyed or withdrawn).
    Closed,
    /// The window stays, and its program showed another window instead (such as "Save changes?").
    Asking { dialog: WindowInfo },
}

/// What one look at the window found.
enum Look<R> {
    Done(R),
    Wait,
}

impl Desktop {
    /// Give `window` the keyboard (showing and raising it, un-minimising it). Returns its new state.
    pub async fn focus_window(&self, window: u32) -> Result<WindowInfo> {
        let before = self
            .window_action("focusing", window, move |x| x.request_focus(window))
            .await?;
        let mut sent_direct = false;
        self.until("focusing", window, move |x| {
            let now = x.client(window)?;
            if now.mapped && now.focused {
                return Ok(Look::Done(now));
            }
            // A window manager that does not speak EWMH maps it on request; then it can take the
            // keyboard from us.
            if now.mapped && !sent_direct && !x.focus_by_window_manager()? {
                sent_direct = true;
                x.x11("focusing")?.set_focus(window)?;
                return Ok(Look::Wait);
            }
            Ok(Look::Wait)
        })
        .await
        .map_err(|e| timed_out(e, &before))
    }

    /// Put `window` above the others. Returns its new state.
    pub async fn raise_window(&self, window: u32) -> Result<WindowInfo> {
        self.window_action("raising", window, move |x| x.request_raise(window))
            .await?;
        self.until("raising", window, move |x| {
            let now = x.client(window)?;
            if x.on_top(window)? {
                Ok(Look::Done(now))
            } else {
                Ok(Look::Wait)
            }
        })
        .await
    }

    /// Move and/or resize `window`'s client area (screen pixels, as [`WindowInfo`] has them).
    /// Returns its new state once each part asked for took effect, or was changed by the window
    /// manager's own rules (a terminal keeps whole character cells, a window may be kept on screen):
    /// compare the result with what was asked.
    pub async fn move_resize_window(&self, window: u32, to: MoveResize) -> Result<WindowInfo> {
        to.check("geometry")?;
        let (before, by_ewmh) = self
            .window_action("moving", window, move |x| {
                Ok((x.request_move_resize(window, to)?, x.moves_exactly()?))
            })
            .await?;
        let was = before.clone();
        let first = self
            .until("moving", window, move |x| {
                let now = x.client(window)?;
                Ok(if to.taken(&was, &now) {
                    Look::Done(now)
                } else {
                    Look::Wait
                })
            })
            .await
            .map_err(|e| timed_out(e, &before))?;
        // A window manager without EWMH may place the frame where the client was asked to go (twm
        // puts its title bar there), leaving the client off by the frame's edges: ask once more,
        // that much further, and take what comes. (With EWMH a difference is the window manager's
        // own rule, such as keeping windows on screen.)
        if by_ewmh {
            return Ok(first);
        }
        let off = |asked: Option<i32>, got: i32| asked.filter(|a| *a != got).map(|a| a - got);
        let (dx, dy) = (off(to.x, first.x), off(to.y, first.y));
        if dx.is_none() && dy.is_none() {
            return Ok(first);
        }
        let again = MoveResize {
            x: to.x.map(|a| a + dx.unwrap_or(0)),
            y: to.y.map(|a| a + dy.unwrap_or(0)),
            width: None,
            height: None,
        };
        if again.check("geometry").is_err() {
            return Ok(first);
        }
        self.window_action("moving", window, move |x| {
            x.request_move_resize(window, again)
        })
        .await?;
        let was = first.clone();
        let settled = self
            .until("moving", window, move |x| {
                let now = x.client(window)?;
                let part = |asked: Option<i32>, was: i32, is: i32| {
                    asked.is_none_or(|a| is == a || is != was)
                };
                Ok(if part(to.x, was.x, now.x) && part(to.y, was.y, now.y) {
                    Look::Done(now)
                } else {
                    Look::Wait
                })
            })
            .await;
        // The window manager may keep it where it is (on screen, say): that is its answer.
        match settled {
            Err(DesktopError::Timeout { .. }) => Ok(first),
            other => other,
        }
    }

    /// Minimise (iconify) `window`. Returns its new state (`minimized`, not `mapped`).
    pub async fn minimize_window(&self, window: u32) -> Result<WindowInfo> {
        let before = self
            .window_action("minimising", window, move |x| x.request_minimize(window))
            .await?;
        if before.minimized {
            return Ok(before);
        }
        self.until("minimising", window, move |x| {
            let now = x.client(window)?;
            Ok(if now.minimized && !now.mapped {
                Look::Done(now)
            } else {
                Look::Wait
            })
        })
        .await
        .map_err(|e| timed_out(e, &before))
    }

    /// Close `window`: ask its window manager (`_NET_CLOSE_WINDOW`) or the window itself
    /// (`WM_DELETE_WINDOW`); with `kill`, end its program's X connection (XKillClient) instead,
    /// which the program does not get to refuse. Returns once the window is gone from the window
    /// list, or its program showed another window instead ([`CloseOutcome::Asking`]).
    pub async fn close_window(&self, window: u32, kill: bool) -> Result<CloseOutcome> {
        let (before, all) = self
            .window_action("closing", window, move |x| {
                let all: HashSet<u32> = x.windows()?.iter().map(|w| w.id).collect();
                let info = x.request_close(window, kill)?;
                Ok((info, all))
            })
            .await?;
        let pid = before.pid;
        self.until("closing", window, move |x| {
            let windows = x.windows()?;
            if !windows.iter().any(|w| w.id == window) {
                return Ok(Look::Done(CloseOutcome::Closed));
            }
            let dialog = windows
                .iter()
                .find(|w| !all.contains(&w.id) && w.mapped && pid.is_some() && w.pid == pid);
            Ok(match dialog {
                Some(dialog) => Look::Done(CloseOutcome::Asking {
                    dialog: dialog.clone(),
                }),
                None => Look::Wait,
            })
        })
        .await
    }

    /// Send one request about `window` (checked to be a client first).
    async fn window_action<R: Send + 'static>(
        &self,
        doing: &str,
        window: u32,
        request: impl FnOnce(&mut dyn Backend) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.run(
            &format!("{doing} window {window:#x}"),
            self.step_timeout,
            request,
        )
        .await
    }

    /// Look at the display with `look` now and after each window change, until it is done, within
    /// [`WINDOW_ACTION_TIMEOUT`]. Without a watcher (an attached display that took one
    /// connection only) there is one look.
    async fn until<R: Send + 'static>(
        &self,
        doing: &'static str,
        window: u32,
        look: impl FnMut(&mut dyn Backend) -> Result<Look<R>> + Send + 'static,
    ) -> Result<R> {
        let limit = WINDOW_ACTION_TIMEOUT.min(self.step_timeout);
        let deadline = Instant::now() + limit;
        let mut updates = self.window_updates();
        let look = std::sync::Arc::new(std::sync::Mutex::new(look));
        loop {
            updates.borrow_and_update();
            let step = look.clone();
            let found = self
                .run(&format!("{doing} window {window:#x}"), limit, move |x| {
                    let mut look = step.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    (*look)(x)
                })
                .await?;
            match found {
                Look::Done(result) => return Ok(result),
                Look::Wait => {}
            }
            if !self.watches_windows() || Instant::now() >= deadline {
                return Err(DesktopError::Timeout {
                    what: format!("{doing} window {window:#x}"),
                    limit,
                });
            }
            tokio::select! {
                changed = updates.changed() => {
                    if changed.is_err() {
                        return Err(DesktopError::Closed);
                    }
                }
                _ = tokio::time::sleep_until(deadline) => {}
            }
        }
    }
}

/// A timeout says how the window was before the request, so the caller sees what did not change.
fn timed_out(e: DesktopError, before: &WindowInfo) -> DesktopError {
    match e {
        DesktopError::Timeout { what, limit } => DesktopError::Timeout {
            what: format!(
                "{what} (the window manager did not act on it; it was '{}' at ({}, {}) {}x{}, {}{})",
                before.title,
                before.x,
                before.y,
                before.width,
                before.height,
                if before.mapped { "shown" } else if before.minimized { "minimised" } else { "hidden" },
                if before.focused { ", focused" } else { "" },
            ),
            limit,
        },
        other => other,
    }
}
