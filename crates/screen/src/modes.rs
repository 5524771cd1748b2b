//! The input modes an application has switched on: they decide how keys and mouse events are encoded.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Which mouse events the application asked to receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseTracking {
    /// No mouse reporting: clicks cannot reach the application.
    #[default]
    Off,
    /// Presses and releases (mode 1000).
    Click,
    /// Presses, releases and motion while a button is held (mode 1002).
    Drag,
    /// Every motion (mode 1003).
    Motion,
}

/// How mouse events are encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseEncoding {
    /// `ESC [ M b x y` with one byte per value (coordinates up to 223).
    #[default]
    X10,
    /// Like X10 but coordinates as UTF-8 (mode 1005).
    Utf8,
    /// `ESC [ < b ; x ; y M/m` (mode 1006).
    Sgr,
}

/// The application's current input modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
pub struct InputModes {
    /// DECCKM: arrows send `ESC O A` instead of `ESC [ A`.
    pub app_cursor: bool,
    /// DECKPAM: the keypad sends application sequences.
    pub app_keypad: bool,
    /// Mode 2004: pasted text is wrapped in `ESC [200~` ... `ESC [201~`.
    pub bracketed_paste: bool,
    pub mouse_tracking: MouseTracking,
    pub mouse_encoding: MouseEncoding,
    /// Mode 1004: focus in/out events.
    pub focus_events: bool,
    /// Mode 1007: the wheel sends arrow keys on the alternate screen.
    pub alternate_scroll: bool,
    /// Kitty keyboard protocol flags the application pushed (0 = legacy encoding).
    pub kitty_keyboard: u8,
}
