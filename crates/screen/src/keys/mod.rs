//! Key tokens (`Enter`, `C-c`, `ctrl+shift+up`, `hello`) and their bytes for the application's modes.
//!
//! Parsing never fails: a token that is not a key is text to type. Encoding follows xterm for the
//! legacy protocol (with DECCKM for the cursor keys) and the kitty keyboard protocol once the
//! application pushed its flags (<https://sw.kovidgoyal.net/kitty/keyboard-protocol/>). The keyboard
//! being simulated is a US PC-101 layout: shift+`1` is `!`, and `!` is reported as shift+`1`.
//!
//! This module holds the public entry points; the token types live in `token`, parsing in `parse`, the
//! byte encodings (xterm, kitty, bracketed paste) in `encode`.

use crate::modes::InputModes;

use self::encode::{
    bracketed_paste, kitty_active, kitty_char, kitty_named, legacy_char, legacy_named,
    KITTY_ALL_KEYS,
};

mod encode;
mod parse;
mod token;

pub use encode::{check_encodable, KeyError};
pub use parse::{keypad_key, parse_token};
pub use token::{KeyToken, Modifiers, NamedKey};

/// A short description of the token grammar, for tool descriptions and error messages.
pub fn describe_grammar() -> &'static str {
    "Each token is one key press or a piece of text.\n\
     Named keys: Enter Return Tab BackTab Space Backspace Delete Escape Esc Up Down Left Right \
     Home End PageUp PageDown Insert F1-F12 (any case; page_up, page_down also); keypad: KP0-KP9 \
     KPEnter KPPlus KPMinus KPMultiply KPDivide KPDecimal KPEqual (application keypad mode honoured).\n\
     Modifiers: C-x (ctrl), M-x (alt/meta), S-x (shift), combinable: C-M-x, C-Up, S-Tab; ^x is ctrl+x; \
     Textual style too: ctrl+c, alt+x, shift+tab, ctrl+shift+up.\n\
     Any other token is typed as literal text (\"hello\" types hello; use the type tool to type a word \
     that is also a key name, such as \"end\")."
}

/// Encode every token, one write per token (an app reading its input in chunks sees each key
/// separately, as a person would type them).
pub fn encode_tokens<S: AsRef<str>>(tokens: &[S], modes: &InputModes) -> Vec<Vec<u8>> {
    tokens
        .iter()
        .map(|token| encode(&parse_token(token.as_ref()), modes))
        .collect()
}

/// The bytes a terminal sends for one token, given the application's modes. For tokens from
/// [`parse_token`], which names only keys a terminal has; a token built from a wider set of key
/// names goes through [`try_encode`], which says when a key has no bytes (here it would send none).
pub fn encode(token: &KeyToken, modes: &InputModes) -> Vec<u8> {
    try_encode(token, modes).unwrap_or_default()
}

/// The bytes a terminal sends for one token, given the application's modes; an error naming the key
/// when no terminal has bytes for it (CapsLock, PrintScreen, Pause, Menu, NumLock, ScrollLock).
pub fn try_encode(token: &KeyToken, modes: &InputModes) -> Result<Vec<u8>, KeyError> {
    check_encodable(token)?;
    let mut out = Vec::new();
    match token {
        KeyToken::Text(text) => return Ok(encode_text(text, modes)),
        KeyToken::Named {
            key: NamedKey::Keypad(ch),
            mods,
        } => encode::keypad(&mut out, *ch, *mods, modes),
        KeyToken::Named { key, mods } if kitty_active(modes) => {
            kitty_named(&mut out, *key, *mods, modes.kitty_keyboard)
        }
        KeyToken::Named { key, mods } => legacy_named(&mut out, *key, *mods, modes.app_cursor),
        KeyToken::Char { ch, mods } if kitty_active(modes) => {
            kitty_char(&mut out, *ch, *mods, modes.kitty_keyboard)
        }
        KeyToken::Char { ch, mods } => legacy_char(&mut out, *ch, *mods),
    }
    Ok(out)
}

/// Text as typed on a keyboard: UTF-8 with each line break as the Enter key (CR). When the
/// application asked for every key as an escape code (kitty flag 8), each character is a key event.
pub fn encode_text(text: &str, modes: &InputModes) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    if modes.kitty_keyboard & KITTY_ALL_KEYS != 0 {
        let mut chars = text.chars().peekable();
        while let Some(ch) = chars.next() {
            if ch == '\r' && chars.peek() == Some(&'\n') {
                continue;
            }
            let token = match ch {
                '\r' | '\n' => NamedKey::Enter.into(),
                '\t' => NamedKey::Tab.into(),
                '\u{7f}' | '\u{8}' => NamedKey::Backspace.into(),
                '\u{1b}' => NamedKey::Escape.into(),
                '\u{1}'..='\u{1a}' => KeyToken::Char {
                    ch: char::from(b'a' + (ch as u8 - 1)),
                    mods: Modifiers::CTRL,
                },
                ch => KeyToken::Char {
                    ch,
                    mods: Modifiers::NONE,
                },
            };
            out.extend(encode(&token, modes));
        }
    } else {
        out.extend(text.replace("\r\n", "\r").replace('\n', "\r").into_bytes());
    }
    out
}

/// Text as the input operations enter it (`text` of send, step files, `run`'s command): a text
/// spanning lines (`\n`) as a paste ([`encode_paste`]), else typed ([`encode_text`]).
pub fn encode_entered(text: &str, modes: &InputModes) -> Vec<u8> {
    if text.contains('\n') {
        encode_paste(text, modes)
    } else {
        encode_text(text, modes)
    }
}

/// Text as pasted: multi-line text goes as one bracketed paste when the application enabled mode
/// 2004, so it is not run line by line; otherwise it is typed ([`encode_text`]).
pub fn encode_paste(text: &str, modes: &InputModes) -> Vec<u8> {
    if !(modes.bracketed_paste && text.contains(['\n', '\r'])) {
        return encode_text(text, modes);
    }
    bracketed_paste(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn legacy() -> InputModes {
        InputModes::default()
    }

    #[test]
    fn text_turns_line_breaks_into_enter() {
        let m = legacy();
        assert_eq!(encode_text("a\nb\r\nc", &m), b"a\rb\rc");
        assert_eq!(encode_text("héllo", &m), "héllo".as_bytes());
    }

    #[test]
    fn paste_is_bracketed_only_when_enabled_and_multi_line() {
        let on = InputModes {
            bracketed_paste: true,
            ..InputModes::default()
        };
        assert_eq!(encode_paste("a\nb", &on), b"\x1b[200~a\nb\x1b[201~");
        assert_eq!(encode_paste("one line", &on), b"one line");
        assert_eq!(encode_paste("a\nb", &legacy()), b"a\rb");
        // As the input operations enter text: pasted when it spans lines; a bare CR is Enter.
        assert_eq!(encode_entered("a\nb", &on), b"\x1b[200~a\nb\x1b[201~");
        assert_eq!(encode_entered("a\rb", &on), b"a\rb");
        assert_eq!(encode_entered("a\nb", &legacy()), b"a\rb");
    }

    #[test]
    fn grammar_description_names_the_forms() {
        let text = describe_grammar();
        for needle in ["Enter", "C-x", "^x", "ctrl+c", "literal text"] {
            assert!(text.contains(needle), "{needle}");
        }
        assert!(text.lines().count() <= 6);
    }
}
