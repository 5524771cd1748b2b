//! Starting a desktop until it is usable: the window manager has taken over the display, and the
//! program's first window is shown and has the keyboard. Without this a program started right after
//! its window manager races it: its window may be mapped before the window manager manages it and
//! never be shown, or shown without focus, and the first keys typed are lost.
//!
//! Every wait here is woken by the watcher's window counter ([`crate::Desktop::window_updates`]:
//! root properties, windows created and mapped, focus) or by the process ending (its pidfd), under
//! one deadline. The one exception is a window manager that never announces itself (twm): taking
//! SubstructureRedirect raises no event anyone else can see, so after each event we look, and between
//! events we look again after 5, 10, 20, ... ms (at most 200 ms apart) until it is taken.

use std::collections::HashSet;
use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::backend::Backend;
use crate::error::{DesktopError, Result};
use crate::process::{log_tail, Child};
use crate::x11::{WindowInfo, WindowManagerState};

/// What waiting for readiness needs of a desktop: its connection, its window counter, and whether it
/// is a display we attached to. `Desktop` implements it; declared here so this file needs nothing of
/// the file that starts desktops (which calls into this one).
pub(crate) trait Display: Sync {
    fn run<R: Send + 'static>(
        &self,
        what: &str,
        limit: Duration,
        job: impl FnOnce(&mut dyn Backend) -> Result<R> + Send + 'static,
    ) -> impl Future<Output = Result<R>> + Send;
    fn window_updates(&self) -> watch::Receiver<u64>;
    fn damage_updates(&self) -> watch::Receiver<u64>;
    fn attached(&self) -> bool;
}

/// Window managers that announce themselves through `_NET_SUPPORTING_WM_CHECK` (EWMH). For these we
/// wait for the announcement, which comes after they have set up; for others, holding the
/// SubstructureRedirect of the root is taken as ready.
pub const EWMH_WINDOW_MANAGERS: &[&str] = &[
    "openbox",
    "fluxbox",
    "icewm",
    "xfwm4",
    "matchbox-window-manager",
    "i3",
    "awesome",
    "bspwm",
    "herbstluftwm",
    "jwm",
    "pekwm",
    "fvwm3",
    "metacity",
    "mutter",
    "marco",
    "kwin_x11",
    "xfce4-session",
];

/// How the program's window gets the keyboard when it does not have it once shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FocusBy {
    /// Ask the (EWMH) window manager with a `_NET_ACTIVE_WINDOW` request.
    WindowManager,
    /// SetInputFocus ourselves: no window manager, or one that does not speak EWMH.
    Us,
}

impl FocusBy {
    pub fn of(by_window_manager: bool) -> FocusBy {
        if by_window_manager {
            FocusBy::WindowManager
        } else {
            FocusBy::Us
        }
    }
}

/// "20 s", "1.5 s", "300 ms".
pub(crate) fn human(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// How a process ended, for messages: "exited with status 3", "was killed by signal 9".
fn ended(child: &Child) -> String {
    match child.status() {
        Some(status) => match (status.exit_code, status.signal) {
            (Some(code), _) => format!("exited with status {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "exited".to_owned(),
        },
        None => "exited".to_owned(),
    }
}

fn with_log(message: String, log: &str) -> String {
    if log.is_empty() {
        format!("{message}; it wrote nothing")
    } else {
        format!("{message}; its output ends with: {log}")
    }
}

/// Wait until the window manager we started (`name`, process `child`, logging to `log`) has taken
/// over the display.
pub(crate) async fn window_manager(
    desktop: &impl Display,
    name: &str,
    child: &Child,
    log: &std::path::Path,
    limit: Duration,
) -> Result<WindowManagerState> {
    let announces = EWMH_WINDOW_MANAGERS.contains(&name);
    let deadline = Instant::now() + limit;
    let exited = |what: &str| {
        let message = format!(
            "window manager {name} (pid {}) {} before it {what}",
            child.pid,
            ended(child)
        );
        DesktopError::WindowNotReady {
            field: "window_manager",
            message: with_log(message, &log_tail(log, 400)),
        }
    };
    let state = taken_over(desktop, announces, child, deadline, limit)
        .await?
        .ok_or_else(|| exited("took over the display"))?;
    let Some(state) = state else {
        return Err(DesktopError::WindowNotReady {
            field: "window_manager",
            message: format!(
                "window manager {name} (pid {}) did not take over the display within {}",
                child.pid,
                human(limit)
            ),
        });
    };
    if state.announced.is_none() {
        return Ok(state);
    }
    // Announced: wait until its event loop answers (see x11/wm.rs for why).
    let answers = desktop
        .run("reading _NET_SUPPORTED", limit, |x| {
            x.x11("reading _NET_SUPPORTED")?
                .window_manager_answers_frame_requests()
        })
        .await?;
    if !answers {
        return Ok(state);
    }
    let give_up = child.pidfd_clone().ok();
    let remaining = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    let answered = desktop
        .run(
            "waiting for the window manager to answer",
            remaining,
            move |x| {
                x.x11("waiting for the window manager")?
                    .window_manager_answers(give_up.as_ref())
            },
        )
        .await;
    match answered {
        Ok(true) => Ok(state),
        Ok(false) => Err(exited("answered its first request")),
        Err(DesktopError::Timeout { .. }) => Err(DesktopError::WindowNotReady {
            field: "window_manager",
            message: format!(
                "window manager {name} (pid {}) announced itself but answered no request within {}",
                child.pid,
                human(limit)
            ),
        }),
        Err(e) => Err(e),
    }
}

/// Wait until a window manager has taken over: announced itself, or (when it is not one that
/// announces) holds the redirect. `Ok(None)` when the process ended first; `Ok(Some(None))` at the
/// deadline with no window manager in sight.
async fn taken_over(
    desktop: &impl Display,
    announces: bool,
    child: &Child,
    deadline: Instant,
    limit: Duration,
) -> Result<Option<Option<WindowManagerState>>> {
    let mut updates = desktop.window_updates();
    let mut recheck = Duration::from_millis(5);
    loop {
        updates.borrow_and_update();
        let state = desktop
            .run("checking the window manager", limit, |x| {
                x.x11("checking the window manager")?.window_manager()
            })
            .await?;
        if state.announced.is_some() || (state.redirect_taken && !announces) {
            return Ok(Some(Some(state)));
        }
        if Instant::now() >= deadline {
            // It runs but never said so: use it as it is.
            return Ok(Some(state.present().then_some(state)));
        }
        // Only the redirect is left to look for, and nothing signals it: look again soon.
        let look_again = !announces;
        tokio::select! {
            changed = updates.changed() => {
                if changed.is_err() {
                    return Err(DesktopError::Connection("the display went away while the window manager started".into()));
                }
            }
            exited = child.wait_exit(deadline.saturating_duration_since(Instant::now())) => {
                if exited {
                    return Ok(None);
                }
            }
            _ = tokio::time::sleep(recheck), if look_again => {
                recheck = (recheck * 2).min(Duration::from_millis(200));
            }
            _ = tokio::time::sleep_until(deadline) => {}
        }
    }
}

/// The process group of `pid`, from /proc.
fn process_group(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After "pid (comm) state ppid pgrp": comm may hold spaces and parentheses, so start after the last ')'.
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(2)?
        .parse()
        .ok()
}

/// Which of the windows that were not there before is the program's: one whose `_NET_WM_PID` is the
/// program or in its process group (a child it started); else one with no pid; else, on a display of
/// our own where nothing else runs, any new one. The first of its kind in the window manager's order.
fn pick(
    windows: &[WindowInfo],
    before: &HashSet<u32>,
    program_pid: i32,
    own_display: bool,
) -> Option<WindowInfo> {
    let new = || windows.iter().filter(|w| !before.contains(&w.id));
    let ours = |pid: u32| {
        i64::from(pid) == i64::from(program_pid)
            || process_group(pid).is_some_and(|g| i64::from(g) == i64::from(program_pid))
    };
    new()
        .find(|w| w.pid.is_some_and(ours))
        .or_else(|| new().find(|w| w.pid.is_none()))
        .or_else(|| new().find(|_| own_display))
        .cloned()
}

/// Wait until the program's first window is shown and has the keyboard; give it the keyboard if it
/// is shown without. `before`: the client windows that existed before the program started.
pub(crate) async fn program_window(
    desktop: &impl Display,
    program: &Child,
    log: &std::path::Path,
    before: &HashSet<u32>,
    focus_by: FocusBy,
    limit: Duration,
) -> Result<WindowInfo> {
    let deadline = Instant::now() + limit;
    let mut updates = desktop.window_updates();
    let own_display = !desktop.attached();
    let mut chosen: Option<WindowInfo> = None;
    let mut asked: Option<Instant> = None;
    let mut program_ended = false;
    loop {
        updates.borrow_and_update();
        let windows = desktop
            .run("looking for the program's window", limit, |x| x.windows())
            .await?;
        let current = chosen
            .as_ref()
            .and_then(|c| windows.iter().find(|w| w.id == c.id).cloned())
            .or_else(|| pick(&windows, before, program.pid, own_display));
        if let Some(window) = &current {
            if window.mapped && window.focused {
                return Ok(window.clone());
            }
            // Shown without the keyboard: ask for it (again after a second, if a window manager
            // busy with its own start-up dropped the first request).
            let due = asked.is_none_or(|at| at.elapsed() >= Duration::from_secs(1));
            if window.mapped && due {
                let (id, by_wm) = (window.id, focus_by == FocusBy::WindowManager);
                desktop
                    .run(
                        "giving the program's window the keyboard",
                        limit,
                        move |x| x.activate(id, by_wm),
                    )
                    .await?;
                asked = Some(Instant::now());
                chosen = current;
                continue;
            }
        }
        chosen = current;
        if program_ended && chosen.is_none() {
            let message = format!(
                "{} (pid {}) {} before it mapped a window",
                program.program,
                program.pid,
                ended(program)
            );
            return Err(DesktopError::WindowNotReady {
                field: "cmd",
                message: with_log(message, &log_tail(log, 400)),
            });
        }
        let ask_again = asked.map(|at| at + Duration::from_secs(1));
        tokio::select! {
            changed = updates.changed() => {
                if changed.is_err() {
                    return Err(DesktopError::Connection("the display went away while the program started".into()));
                }
            }
            exited = program.wait_exit(deadline.saturating_duration_since(Instant::now())), if !program_ended => {
                // Look once more: its window may have come with its last breath.
                program_ended = exited;
            }
            _ = tokio::time::sleep_until(ask_again.unwrap_or(deadline)), if ask_again.is_some() => {}
            _ = tokio::time::sleep_until(deadline) => {}
        }
        if Instant::now() >= deadline {
            let message = match &chosen {
                Some(w) if w.mapped => format!(
                    "window '{}' of {} (pid {}) was mapped but never got input focus within {}",
                    w.title,
                    program.program,
                    program.pid,
                    human(limit)
                ),
                Some(w) => format!(
                    "window '{}' of {} (pid {}) was never shown within {}",
                    w.title,
                    program.program,
                    program.pid,
                    human(limit)
                ),
                None => format!(
                    "{} (pid {}) mapped no window within {}",
                    program.program,
                    program.pid,
                    human(limit)
                ),
            };
            return Err(DesktopError::WindowNotReady {
                field: "cmd",
                message,
            });
        }
    }
}

/// How long [`painted`] waits at most for a window to be drawn.
pub(crate) const PAINT_LIMIT: Duration = Duration::from_secs(5);

/// Wait until `window` is not all black, woken by drawing, at most `limit`. A window the program has
/// not painted yet shows black under Xvfb: a GTK 4 window is mapped and focused a while before its
/// first frame. A window still black at the limit is taken as it is (a black window is a window
/// too); a window of one other colour is painted.
pub(crate) async fn painted(
    desktop: &impl Display,
    window: &WindowInfo,
    limit: Duration,
) -> Result<()> {
    let deadline = Instant::now() + limit;
    let mut damage = desktop.damage_updates();
    let (x, y) = (window.x.max(0) as u32, window.y.max(0) as u32);
    let (width, height) = (window.width, window.height);
    loop {
        damage.borrow_and_update();
        let blank = desktop
            .run(
                "seeing whether the program's window is painted",
                limit,
                move |x11| {
                    let frame = x11.capture(false)?.crop(x, y, width, height);
                    Ok(!frame.rgb.is_empty() && frame.rgb.iter().all(|v| *v == 0))
                },
            )
            .await?;
        if !blank {
            return Ok(());
        }
        match tokio::time::timeout_at(deadline, damage.changed()).await {
            Ok(Ok(())) => {}
            // The limit, or a display that went away: what start does next says which.
            _ => return Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(id: u32, pid: Option<u32>) -> WindowInfo {
        WindowInfo {
            id,
            title: String::new(),
            class: String::new(),
            instance: String::new(),
            pid,
            x: 0,
            y: 0,
            width: 10,
            height: 10,
            focused: false,
            mapped: true,
            minimized: false,
            maximized: false,
            above: false,
        }
    }

    #[test]
    fn the_programs_window_is_found_by_pid_then_by_being_new() {
        let me = std::process::id();
        let before: HashSet<u32> = [1].into_iter().collect();
        let windows = vec![
            window(1, Some(me)),
            window(2, Some(999_999_999)),
            window(3, None),
            window(4, Some(me)),
        ];
        // Ours by pid, though another new window came first.
        assert_eq!(
            pick(&windows, &before, me as i32, false).map(|w| w.id),
            Some(4)
        );
        // No pid match: the first new window without a pid.
        assert_eq!(
            pick(&windows[..3], &before, me as i32, false).map(|w| w.id),
            Some(3)
        );
        // Someone else's window counts only on a display of our own.
        assert_eq!(pick(&windows[..2], &before, me as i32, false), None);
        assert_eq!(
            pick(&windows[..2], &before, me as i32, true).map(|w| w.id),
            Some(2)
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human(Duration::from_secs(20)), "20 s");
        assert_eq!(human(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(human(Duration::from_millis(300)), "300 ms");
    }
}
