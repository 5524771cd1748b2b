//! Parsing one `send_keys` token: caret notation (`^c`), Emacs/tmux prefixes (`C-M-x`), Textual's
//! `+`-joined names (`ctrl+shift+up`) and the named keys. Never fails: anything else is text.

use super::encode::ctrl_byte;
use super::token::{KeyToken, Modifiers, NamedKey};

/// Parse one token. Never fails: a token that is not a key becomes [`KeyToken::Text`].
pub fn parse_token(token: &str) -> KeyToken {
    parse_caret(token)
        .or_else(|| parse_dash_prefixed(token))
        .or_else(|| parse_plus_joined(token))
        .or_else(|| named_key(token).map(|(key, mods)| key.with_mods(mods)))
        .map(KeyToken::normalized)
        .unwrap_or_else(|| KeyToken::Text(token.to_owned()))
}

/// What a key name stands for: a named key or a character, before modifiers from the prefixes.
#[derive(Clone, Copy)]
enum BaseKey {
    Named(NamedKey),
    Char(char),
}

impl BaseKey {
    fn with_mods(self, mods: Modifiers) -> KeyToken {
        match self {
            BaseKey::Named(key) => KeyToken::Named { key, mods },
            BaseKey::Char(ch) => KeyToken::Char { ch, mods },
        }
    }
}

impl KeyToken {
    /// `C-X` and `^X` mean ctrl+x, as in tmux and Emacs: the case of a ctrl-ed letter is not shift.
    fn normalized(self) -> KeyToken {
        match self {
            KeyToken::Char { ch, mods } if mods.ctrl && ch.is_ascii_uppercase() => KeyToken::Char {
                ch: ch.to_ascii_lowercase(),
                mods,
            },
            other => other,
        }
    }
}

/// `^c`, `^[`, `^?`: caret notation for control characters.
fn parse_caret(token: &str) -> Option<KeyToken> {
    let mut chars = token.chars();
    let (Some('^'), Some(ch), None) = (chars.next(), chars.next(), chars.next()) else {
        return None;
    };
    let ch = ch.to_ascii_lowercase();
    // Digits map too (`ctrl+2` is NUL) but `^2` reads as text, not as caret notation.
    if ch.is_ascii_digit() {
        return None;
    }
    ctrl_byte(ch)?;
    Some(KeyToken::Char {
        ch,
        mods: Modifiers::CTRL,
    })
}

/// `C-x`, `M-Enter`, `C-M-S-Up`: Emacs/tmux prefixes, at least one, before a key name or a character.
fn parse_dash_prefixed(token: &str) -> Option<KeyToken> {
    let mut mods = Modifiers::NONE;
    let mut rest = token;
    loop {
        let held = match rest.get(..2) {
            Some("C-") => Modifiers::CTRL,
            Some("M-") => Modifiers::ALT,
            Some("S-") => Modifiers::SHIFT,
            _ => break,
        };
        // `C--` is ctrl+minus: a prefix needs something after it.
        if rest.len() == 2 {
            break;
        }
        mods = mods.with(held);
        rest = &rest[2..];
    }
    if mods.is_empty() {
        return None;
    }
    let (base, extra) = key_name(rest)?;
    Some(base.with_mods(mods.with(extra)))
}

/// `ctrl+c`, `shift+tab`, `ctrl+shift+up`, `ctrl++`: Textual's key names.
fn parse_plus_joined(token: &str) -> Option<KeyToken> {
    let (mod_names, key) = match token.strip_suffix("++") {
        Some(mod_names) => (mod_names, "+"),
        None => token.rsplit_once('+')?,
    };
    if mod_names.is_empty() || key.is_empty() {
        return None;
    }
    let mut mods = Modifiers::NONE;
    for name in mod_names.split('+') {
        mods = mods.with(Modifiers::named(name)?);
    }
    let (base, extra) = key_name(key)
        .or_else(|| textual_char_name(key).map(|ch| (BaseKey::Char(ch), Modifiers::NONE)))?;
    Some(base.with_mods(mods.with(extra)))
}

/// A key name or a single character, after any modifier prefixes.
fn key_name(name: &str) -> Option<(BaseKey, Modifiers)> {
    if let Some(named) = named_key(name) {
        return Some(named);
    }
    let mut chars = name.chars();
    match (chars.next(), chars.next()) {
        (Some(ch), None) => Some((BaseKey::Char(ch), Modifiers::NONE)),
        _ => None,
    }
}

/// The named keys, matched without regard to case. BackTab is shift+Tab.
fn named_key(name: &str) -> Option<(BaseKey, Modifiers)> {
    let lower = name.to_ascii_lowercase();
    let key = match lower.as_str() {
        "enter" | "return" => NamedKey::Enter,
        "tab" => NamedKey::Tab,
        "backtab" | "btab" => return Some((BaseKey::Named(NamedKey::Tab), Modifiers::SHIFT)),
        "space" => return Some((BaseKey::Char(' '), Modifiers::NONE)),
        "backspace" | "bspace" => NamedKey::Backspace,
        "delete" => NamedKey::Delete,
        "escape" | "esc" => NamedKey::Escape,
        "up" => NamedKey::Up,
        "down" => NamedKey::Down,
        "left" => NamedKey::Left,
        "right" => NamedKey::Right,
        "home" => NamedKey::Home,
        "end" => NamedKey::End,
        "pageup" | "page_up" | "pgup" | "ppage" => NamedKey::PageUp,
        "pagedown" | "page_down" | "pgdn" | "npage" => NamedKey::PageDown,
        "insert" => NamedKey::Insert,
        _ if lower.starts_with("kp") => keypad_key(&lower)?,
        _ => {
            let n: u8 = lower.strip_prefix('f')?.parse().ok()?;
            // `f01` is not a key name.
            if !(1..=12).contains(&n) || lower.len() != n.to_string().len() + 1 {
                return None;
            }
            NamedKey::F(n)
        }
    };
    Some((BaseKey::Named(key), Modifiers::NONE))
}

/// A numeric keypad key by its X or tmux name, in any case: `KP_0`-`KP_9`, `KP_Add`, `KP_Subtract`,
/// `KP_Multiply`, `KP_Divide`, `KP_Decimal`, `KP_Enter`, `KP_Equal`, and `KP5`, `KPPlus`, `KP+`.
pub fn keypad_key(name: &str) -> Option<NamedKey> {
    let lower = name.to_ascii_lowercase();
    keypad_char(lower.strip_prefix("kp")?).map(NamedKey::Keypad)
}

/// The keypad key named after `kp`.
fn keypad_char(rest: &str) -> Option<u8> {
    let rest = rest.strip_prefix('_').unwrap_or(rest);
    Some(match rest {
        "enter" => b'\r',
        "plus" | "add" | "+" => b'+',
        "minus" | "subtract" | "-" => b'-',
        "multiply" | "asterisk" | "*" => b'*',
        "divide" | "slash" | "/" => b'/',
        "decimal" | "period" | "dot" | "." => b'.',
        "equal" | "=" => b'=',
        digit if digit.len() == 1 && digit.as_bytes()[0].is_ascii_digit() => digit.as_bytes()[0],
        _ => return None,
    })
}

/// Textual's names for punctuation keys (`ctrl+minus`).
fn textual_char_name(name: &str) -> Option<char> {
    Some(match name.to_ascii_lowercase().as_str() {
        "plus" => '+',
        "minus" => '-',
        "underscore" => '_',
        "at" => '@',
        "question_mark" => '?',
        "circumflex_accent" => '^',
        "left_square_bracket" => '[',
        "right_square_bracket" => ']',
        "backslash" => '\\',
        "slash" => '/',
        "full_stop" => '.',
        "comma" => ',',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::encode_tokens;
    use crate::modes::InputModes;

    #[test]
    fn named_keys_parse_in_any_case_and_textual_spelling() {
        for token in ["Enter", "enter", "ENTER", "Return"] {
            assert_eq!(parse_token(token), NamedKey::Enter.into(), "{token}");
        }
        for (token, key) in [
            ("pageup", NamedKey::PageUp),
            ("page_up", NamedKey::PageUp),
            ("PageDown", NamedKey::PageDown),
            ("page_down", NamedKey::PageDown),
            ("escape", NamedKey::Escape),
            ("Esc", NamedKey::Escape),
            ("f5", NamedKey::F(5)),
            ("F12", NamedKey::F(12)),
            ("delete", NamedKey::Delete),
            ("insert", NamedKey::Insert),
        ] {
            assert_eq!(parse_token(token), key.into(), "{token}");
        }
        assert_eq!(
            parse_token("space"),
            KeyToken::Char {
                ch: ' ',
                mods: Modifiers::NONE
            }
        );
    }

    #[test]
    fn keypad_keys_go_by_their_x_names_in_any_case() {
        for (name, ch) in [
            ("KP_0", b'0'),
            ("kp_9", b'9'),
            ("KP_Add", b'+'),
            ("KP_ADD", b'+'),
            ("KP_Subtract", b'-'),
            ("KP_Multiply", b'*'),
            ("KP_Divide", b'/'),
            ("KP_Decimal", b'.'),
            ("KP_Enter", b'\r'),
            ("kp_enter", b'\r'),
            ("KP_Equal", b'='),
            ("KPAdd", b'+'),
        ] {
            assert_eq!(keypad_key(name), Some(NamedKey::Keypad(ch)), "{name}");
            assert_eq!(parse_token(name), NamedKey::Keypad(ch).into(), "{name}");
        }
        // Messages name them as X does.
        assert_eq!(NamedKey::Keypad(b'\r').to_string(), "KP_Enter");
        assert_eq!(NamedKey::Keypad(b'+').to_string(), "KP_Add");
        assert_eq!(NamedKey::Keypad(b'7').to_string(), "KP_7");
        assert_eq!(NamedKey::F(13).to_string(), "F13");
        for bad in ["KP_", "KP_10", "KP_Nope", "Add", "KP"] {
            assert_eq!(keypad_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn modifier_prefixes_combine() {
        let ctrl_alt = Modifiers::CTRL.with(Modifiers::ALT);
        assert_eq!(
            parse_token("C-M-x"),
            KeyToken::Char {
                ch: 'x',
                mods: ctrl_alt
            }
        );
        assert_eq!(
            parse_token("ctrl+shift+up"),
            KeyToken::Named {
                key: NamedKey::Up,
                mods: Modifiers::CTRL.with(Modifiers::SHIFT)
            }
        );
        for token in ["S-Tab", "shift+tab", "BackTab", "backtab"] {
            assert_eq!(
                parse_token(token),
                KeyToken::Named {
                    key: NamedKey::Tab,
                    mods: Modifiers::SHIFT
                },
                "{token}"
            );
        }
        for token in ["C-c", "^c", "^C", "C-C", "ctrl+c", "CTRL+C"] {
            assert_eq!(
                parse_token(token),
                KeyToken::Char {
                    ch: 'c',
                    mods: Modifiers::CTRL
                },
                "{token}"
            );
        }
        assert_eq!(
            parse_token("C--"),
            KeyToken::Char {
                ch: '-',
                mods: Modifiers::CTRL
            }
        );
        assert_eq!(
            parse_token("ctrl++"),
            KeyToken::Char {
                ch: '+',
                mods: Modifiers::CTRL
            }
        );
    }

    #[test]
    fn anything_else_is_text() {
        for token in [
            "hello",
            "x",
            "",
            "^",
            "^1",
            "C-",
            "S-",
            "C-M-",
            "a+b",
            "1+1",
            "+",
            "ctrl+",
            "C-foo",
            "f13",
            "f01",
            "hello world",
            "ctrl+nope",
            "c-x",
        ] {
            assert_eq!(parse_token(token), KeyToken::Text(token.into()), "{token}");
        }
        assert_eq!(
            encode_tokens(&["hello", "Enter"], &InputModes::default()),
            vec![b"hello".to_vec(), b"\r".to_vec()]
        );
    }
}
