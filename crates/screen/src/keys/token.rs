//! The key token types: what one `send_keys` token means once parsed. A leaf that the parser, the
//! encoder and the public entry points in `keys` all share.

use std::fmt;

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

    pub const SUPER: Modifiers = Modifiers {
        super_key: true,
        ..Modifiers::NONE
    };

    /// A modifier by the names people and other tools give it, any case: ctrl or control; alt,
    /// meta or option; shift; super, cmd or command. The one table of them: key chords (`ctrl+c`)
    /// and mouse events' held keys both read names here.
    pub fn named(name: &str) -> Option<Modifiers> {
        Some(match name.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => Modifiers::CTRL,
            "alt" | "meta" | "option" => Modifiers::ALT,
            "shift" => Modifiers::SHIFT,
            "super" | "cmd" | "command" => Modifiers::SUPER,
            _ => return None,
        })
    }

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

/// A key that does not type a character: the one named-key type, for `send_keys` tokens and the
/// computer-use key names alike. Some of these keys exist only on a desktop keyboard (the lock keys,
/// PrintScreen, Pause, Menu): a terminal has no bytes for them, and encoding one is an error.
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
    /// F1 to F24. xterm has no keys of its own past F12: F13-F24 are sent as shift+F1-F12, as its
    /// terminfo entry reads them.
    F(u8),
    /// A numeric keypad key, by the character it types: `0`-`9`, `+`, `-`, `*`, `/`, `.`, `=`, or `\r`
    /// for the keypad's Enter. In application keypad mode (DECKPAM) it sends its own sequence.
    Keypad(u8),
    CapsLock,
    PrintScreen,
    /// The context-menu key.
    Menu,
    NumLock,
    ScrollLock,
    Pause,
}

/// The key's name as X spells it for the keypad (`KP_Enter`, `KP_Add`) and as the token grammar
/// does otherwise (`PageUp`, `F13`); for messages.
impl fmt::Display for NamedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            NamedKey::F(n) => write!(f, "F{n}"),
            NamedKey::Keypad(ch) => match ch {
                b'0'..=b'9' => write!(f, "KP_{}", char::from(ch)),
                b'\r' => f.write_str("KP_Enter"),
                b'+' => f.write_str("KP_Add"),
                b'-' => f.write_str("KP_Subtract"),
                b'*' => f.write_str("KP_Multiply"),
                b'/' => f.write_str("KP_Divide"),
                b'.' => f.write_str("KP_Decimal"),
                b'=' => f.write_str("KP_Equal"),
                other => write!(f, "keypad key {other:#04x}"),
            },
            // The other variants carry nothing: their names are their `Debug` form.
            other => write!(f, "{other:?}"),
        }
    }
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
