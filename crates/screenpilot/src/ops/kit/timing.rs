//! How long input lets a screen react and settle before answering with it: `computer` before its
//! screenshot, `act` after an action, the classic input tools with `settle_ms`. One place for them all.
//!
//! Desktops settle on the damage counter ([`screenpilot_desktop::settle`]): wait for the first drawing after
//! the input (the reaction window), then until nothing has been drawn for the quiet time, never past
//! the limit. What was measured (release build, Xvfb 1280x800 under openbox, idle 2-core machine),
//! and why each value:
//!
//! - **Quiet 100 ms.** xterm draws everything a key, a typed command or a focus click causes within
//!   20 ms; GTK apps (zenity, mousepad, their menus and file dialogs) draw an animation frame every
//!   16-17 ms while they move. 100 ms is five such gaps, headroom for a loaded machine, and keeps a
//!   click's settled screenshot near 110 ms (quiet + about 10 ms to see the drawing, capture and
//!   encode). What it cannot catch: an app that draws again after a pause of its own. mousepad
//!   repaints its title ("*Untitled 1") about 170-200 ms after the typed text, and GTK's file
//!   dialog enables its Save button about 150 ms after the name is typed; catching those needs a
//!   quiet of 200-250 ms, which would double every answer's time. Such late drawing shows in the
//!   next screenshot; `wait` (no ms) waits for it.
//! - **Reaction 400 ms.** xterm reacts within 5 ms, a GTK context menu within 35 ms, mousepad's save
//!   dialog within 115 ms. An input that changes nothing visible costs this whole window (the answer
//!   says `reacted: false`), so it stays a few times the slowest reaction seen, far below the 2 s
//!   that reference tools sleep after every action.
//! - **Limit 2 s.** A screen that keeps drawing (a spinner, a 1 s menu animation) is shown as it is
//!   at the limit, with `settled: false`.

use std::time::Duration;

use screenpilot_desktop::Settle;

/// Terminals: the program answers a keypress within milliseconds; the screen must then be still 50 ms.
pub(crate) const TERMINAL_SETTLE: Settle = Settle {
    reaction: Duration::from_millis(100),
    quiet: Duration::from_millis(50),
    limit: Duration::from_millis(1000),
};

/// Desktops, after input (see the module documentation).
pub(crate) const DESKTOP_SETTLE: Settle = Settle {
    reaction: Duration::from_millis(400),
    quiet: Duration::from_millis(100),
    limit: Duration::from_millis(2000),
};

/// A `wait` without a duration: until the screen has been still 400 ms (an app that is busy draws
/// within it, see the reaction window above), but no longer than 2 s.
pub(crate) const UNTIL_STILL: Settle = Settle {
    reaction: Duration::ZERO,
    quiet: Duration::from_millis(400),
    limit: Duration::from_millis(2000),
};
/// The classic input tools' `settle_timeout_ms` when `settle_ms` is given without it.
pub(crate) const INPUT_SETTLE_LIMIT_MS: u64 = 5_000;

/// A `wait` without a duration on a desktop whose drawing cannot be watched: a plain sleep.
pub(crate) const WAIT_BLIND: Duration = Duration::from_millis(2000);

/// Desktops without a damage watcher (an attached display that refused a second connection): the
/// action connection's own stillness check, as before the watcher existed. Such answers never say
/// `settled: true`.
pub(crate) const BLIND_QUIET: Duration = Duration::from_millis(50);
pub(crate) const BLIND_MAX: Duration = Duration::from_millis(1000);
