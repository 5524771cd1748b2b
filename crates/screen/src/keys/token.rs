//! The key token types: what one `send_keys` token means once parsed. A leaf that the parser, the
//! encoder and the public entry points in `keys` all share.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Modifier keys held with a key or a mouse event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Modifiers {
    pub shift: bool,
    /// Alt, also called Meta (`M-` in the token grammar).
    pub alt: bool,
    pub ctrl: bool,
    /// The Windows/Command key. Only the kitty protocol and xterm's modified function keys carry
    /// it; legacy encodings of text keys drop it.
    #[serde(rename = "super")]
    pub super_key: bool,
}

impl Modifiers {
    pub const NONE: Modifiers = Modifiers {
        shift: false,
        alt: false,
        ctrl: false,
        super_key: false,
    };
    pub const SHIFT: Modifiers = Modifiers {
        shift: true,
        ..Modifiers::NONE
    };
    pub const ALT: Modifiers = Modifiers {
        alt: true,
        ..Modifiers::NONE
    };
    pub const CTRL: Modifiers = Modifiers {
        ctrl: true,
        ..Modifiers::NONE
    };

    pub fn is_empty(self) -> bool {
        self == Modifiers::NONE
    }

    /// Both sets of modifiers held at once.
    pub fn with(self, other: Modifiers) -> Modifiers {
        Modifiers {
            shift: self.shift || other.shift,
            alt: self.alt || other.alt,
            ctrl: self.ctrl || other.ctrl,
            super_key: self.super_key || other.super_key,
        }
    }

    /// The bit field shared by xterm and kitty: shift 1, alt 2, ctrl 4, super 8.
    pub fn bits(self) -> u8 {
        u8::from(self.shift)
            | u8::from(self.alt) << 1
            | u8::from(self.ctrl) << 2
            | u8::from(self.super_key) << 3
    }

    /// The modifier parameter of `CSI 1 ; m A` and `CSI code ; m u`: one more than [`Self::bits`].
    pub(super) fn param(self) -> u8 {
        1 + self.bits()
    }
}

/// A key that does not type a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedKey {
    Enter,
    Tab,
    Backspace,
    Escape,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    Delete,
    /// F1 to F12.
    F(u8),
    /// A numeric keypad key, by the character it types: `0`-`9`, `+`, `-`, `*`, `/`, `.`, `=`, or `\r`
    /// for the keypad's Enter. In application keypad mode (DECKPAM) it sends its own sequence.
    Keypad(u8),
}

/// One `send_keys` token, parsed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KeyToken {
    /// A named key, possibly with modifiers (`Enter`, `C-Up`, `S-Tab`, `shift+tab`).
    Named { key: NamedKey, mods: Modifiers },
    /// A character key with modifiers (`C-c`, `^c`, `M-x`, `ctrl+c`, `C-Space`).
    Char { ch: char, mods: Modifiers },
    /// Anything else: typed as it is.
    Text(String),
}

impl From<NamedKey> for KeyToken {
    fn from(key: NamedKey) -> KeyToken {
        KeyToken::Named {
            key,
            mods: Modifiers::NONE,
        }
    }
}
