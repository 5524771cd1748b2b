//! How long `computer` lets a screen react and settle after input before taking its screenshot.

use std::time::Duration;

use crate::ops::settle::Settle;

/// Terminals: the program answers a keypress within milliseconds; the screen must then be still 50 ms.
pub(super) const TERMINAL_SETTLE: Settle = Settle {
    reaction: Duration::from_millis(100),
    quiet: Duration::from_millis(50),
    limit: Duration::from_millis(1000),
};

/// Desktops: after input, the screenshot waits until the screen has been still this long...
pub(super) const SETTLE_QUIET: Duration = Duration::from_millis(50);
/// ...but no longer than this.
pub(super) const SETTLE_MAX: Duration = Duration::from_millis(1000);
