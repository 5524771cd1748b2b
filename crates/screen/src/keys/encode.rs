//! The bytes of one key: xterm's legacy encoding (with DECCKM for the cursor keys), the kitty
//! keyboard protocol's escape codes, and bracketed paste. The keyboard is a US PC-101 layout.

use thiserror::Error;

use super::token::{KeyToken, Modifiers, NamedKey};
use crate::modes::InputModes;

const ESC: u8 = 0x1b;

/// The first of kitty's codes for F13-F35 (`CSI 57376 u` is F13).
const KITTY_F13: u32 = 57376;

/// A key a terminal cannot send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum KeyError {
    #[error("{key} has no terminal encoding: no terminal sends bytes for it")]
    NoTerminalEncoding { key: NamedKey },
}

/// Refuse a token no terminal has bytes for: the lock keys, PrintScreen, Pause, Menu, and function
/// keys past F24. The answer does not depend on the application's modes, so a caller can check a
/// whole batch of keys before sending the first.
pub fn check_encodable(token: &KeyToken) -> Result<(), KeyError> {
    let KeyToken::Named { key, .. } = *token else {
        return Ok(());
    };
    match key {
        NamedKey::CapsLock
        | NamedKey::PrintScreen
        | NamedKey::Menu
        | NamedKey::NumLock
        | NamedKey::ScrollLock
        | NamedKey::Pause => Err(KeyError::NoTerminalEncoding { key }),
        NamedKey::F(n) if !(1..=24).contains(&n) => Err(KeyError::NoTerminalEncoding { key }),
        _ => Ok(()),
    }
}

// Kitty keyboard protocol flags, as the application pushes them with `CSI > flags u`.
const KITTY_DISAMBIGUATE: u8 = 1;
const KITTY_EVENT_TYPES: u8 = 2;
const KITTY_ALTERNATE_KEYS: u8 = 4;
pub(super) const KITTY_ALL_KEYS: u8 = 8;
const KITTY_ASSOCIATED_TEXT: u8 = 16;

const PASTE_END: &str = "\x1b[201~";

/// `text` between the bracketed-paste markers, so the application takes it as one paste.
pub(super) fn bracketed_paste(text: &str) -> Vec<u8> {
    // The end marker inside the text would end the paste early and run the rest as typed keys.
    // Removing one occurrence can join its neighbours into a new one, hence the loop.
    let mut body = text.to_owned();
    while body.contains(PASTE_END) {
        body = body.replace(PASTE_END, "");
    }
    let mut out = Vec::with_capacity(body.len() + 12);
    out.extend_from_slice(b"\x1b[200~");
    out.extend_from_slice(body.as_bytes());
    out.extend_from_slice(PASTE_END.as_bytes());
    out
}

/// Is the kitty protocol changing how keys are encoded? Alternate keys (4) and associated text (16)
/// only add fields to escape codes that the other flags produce.
pub(super) fn kitty_active(modes: &InputModes) -> bool {
    modes.kitty_keyboard & (KITTY_DISAMBIGUATE | KITTY_EVENT_TYPES | KITTY_ALL_KEYS) != 0
}

/// The C0 byte ctrl turns an ASCII key into, as xterm and kitty map it; `None` when ctrl leaves the
/// key alone.
pub(super) fn ctrl_byte(ch: char) -> Option<u8> {
    Some(match ch {
        ' ' | '@' | '2' => 0,
        'a'..='z' => ch as u8 - b'a' + 1,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' | '~' => 0x1e,
        '_' | '/' | '7' => 0x1f,
        '?' | '8' => 0x7f,
        _ => return None,
    })
}

/// US layout: the character shift makes of an unshifted key.
fn shifted(ch: char) -> char {
    const PAIRS: &[(char, char)] = &[
        ('`', '~'),
        ('1', '!'),
        ('2', '@'),
        ('3', '#'),
        ('4', '$'),
        ('5', '%'),
        ('6', '^'),
        ('7', '&'),
        ('8', '*'),
        ('9', '('),
        ('0', ')'),
        ('-', '_'),
        ('=', '+'),
        ('[', '{'),
        (']', '}'),
        ('\\', '|'),
        (';', ':'),
        ('\'', '"'),
        (',', '<'),
        ('.', '>'),
        ('/', '?'),
    ];
    if ch.is_ascii_lowercase() {
        return ch.to_ascii_uppercase();
    }
    PAIRS
        .iter()
        .find(|(base, _)| *base == ch)
        .map_or(ch, |(_, up)| *up)
}

/// US layout: the unshifted key that types `ch` with shift, if `ch` needs shift.
fn unshifted(ch: char) -> Option<char> {
    if ch.is_ascii_uppercase() {
        return Some(ch.to_ascii_lowercase());
    }
    if ch.is_ascii() {
        return "`1234567890-=[]\\;',./"
            .chars()
            .find(|base| *base != ch && shifted(*base) == ch);
    }
    // Beyond ASCII, an upper-case letter is shift + its lower-case form.
    let mut lower = ch.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(low), None) if low != ch && ch.is_uppercase() => Some(low),
        _ => None,
    }
}

fn push_csi(out: &mut Vec<u8>, number: u32, mods: Modifiers, final_byte: u8) {
    out.extend_from_slice(b"\x1b[");
    if number != 1 || !mods.is_empty() {
        out.extend_from_slice(number.to_string().as_bytes());
    }
    if !mods.is_empty() {
        out.push(b';');
        out.extend_from_slice(mods.param().to_string().as_bytes());
    }
    out.push(final_byte);
}

fn push_char(out: &mut Vec<u8>, ch: char) {
    let mut buf = [0; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
}

/// How a functional key is written: `CSI number ~`, or `CSI letter` / `SS3 letter`.
enum Functional {
    Tilde(u32),
    Letter(u8),
}

fn functional(key: NamedKey) -> Option<Functional> {
    Some(match key {
        NamedKey::Up => Functional::Letter(b'A'),
        NamedKey::Down => Functional::Letter(b'B'),
        NamedKey::Right => Functional::Letter(b'C'),
        NamedKey::Left => Functional::Letter(b'D'),
        NamedKey::End => Functional::Letter(b'F'),
        NamedKey::Home => Functional::Letter(b'H'),
        NamedKey::Insert => Functional::Tilde(2),
        NamedKey::Delete => Functional::Tilde(3),
        NamedKey::PageUp => Functional::Tilde(5),
        NamedKey::PageDown => Functional::Tilde(6),
        NamedKey::F(n @ 1..=4) => Functional::Letter(b'P' + (n - 1)),
        NamedKey::F(n @ 5..=12) => Functional::Tilde(match n {
            5 => 15,
            6..=10 => u32::from(n) + 11,
            _ => u32::from(n) + 12,
        }),
        _ => return None,
    })
}

/// A keypad key: in application keypad mode (DECKPAM) `ESC O` and the key's letter, as VT100 keypads
/// send; under the kitty protocol its own code point (57399 for KP_0 ...); otherwise the character
/// it types. Alt adds an ESC prefix; other modifiers have no legacy encoding here.
pub(super) fn keypad(out: &mut Vec<u8>, ch: u8, mods: Modifiers, modes: &InputModes) {
    if kitty_active(modes) {
        let code = match ch {
            b'0'..=b'9' => 57399 + u32::from(ch - b'0'),
            b'.' => 57409,
            b'/' => 57410,
            b'*' => 57411,
            b'-' => 57412,
            b'+' => 57413,
            b'\r' => 57414,
            _ => 57415,
        };
        push_csi(out, code, mods, b'u');
        return;
    }
    if mods.alt {
        out.push(ESC);
    }
    if !modes.app_keypad {
        out.push(ch);
        return;
    }
    let letter = match ch {
        b'0'..=b'9' => b'p' + (ch - b'0'),
        b'\r' => b'M',
        b'*' => b'j',
        b'+' => b'k',
        b'-' => b'm',
        b'.' => b'n',
        b'/' => b'o',
        _ => b'X',
    };
    out.extend_from_slice(&[ESC, b'O', letter]);
}

/// xterm's encoding of the named keys.
pub(super) fn legacy_named(out: &mut Vec<u8>, key: NamedKey, mods: Modifiers, app_cursor: bool) {
    let alt_prefix = |out: &mut Vec<u8>| {
        if mods.alt {
            out.push(ESC);
        }
    };
    match key {
        NamedKey::F(n @ 13..=24) => legacy_named(
            out,
            NamedKey::F(n - 12),
            mods.with(Modifiers::SHIFT),
            app_cursor,
        ),
        NamedKey::Enter => {
            alt_prefix(out);
            out.push(b'\r');
        }
        NamedKey::Tab if mods.shift => {
            alt_prefix(out);
            out.extend_from_slice(b"\x1b[Z");
        }
        NamedKey::Tab => {
            alt_prefix(out);
            out.push(b'\t');
        }
        NamedKey::Backspace => {
            alt_prefix(out);
            out.push(if mods.ctrl { 0x08 } else { 0x7f });
        }
        NamedKey::Escape => {
            alt_prefix(out);
            out.push(ESC);
        }
        _ => match functional(key) {
            Some(Functional::Letter(letter)) if mods.is_empty() => {
                // F1-F4 are always SS3; the cursor keys only in application cursor mode (DECCKM).
                let ss3 = app_cursor || matches!(key, NamedKey::F(_));
                out.extend_from_slice(if ss3 { b"\x1bO" } else { b"\x1b[" });
                out.push(letter);
            }
            Some(Functional::Letter(letter)) => push_csi(out, 1, mods, letter),
            Some(Functional::Tilde(number)) => push_csi(out, number, mods, b'~'),
            None => {}
        },
    }
}

/// The kitty protocol's encoding of the named keys (only press events are ever sent).
pub(super) fn kitty_named(out: &mut Vec<u8>, key: NamedKey, mods: Modifiers, flags: u8) {
    let disambiguate = flags & KITTY_DISAMBIGUATE != 0;
    let all_keys = flags & KITTY_ALL_KEYS != 0;
    let control = match key {
        NamedKey::Enter => Some(b'\r'),
        NamedKey::Tab => Some(b'\t'),
        NamedKey::Backspace => Some(0x7f),
        NamedKey::Escape => Some(ESC),
        _ => None,
    };
    if let NamedKey::F(n @ 13..=24) = key {
        push_csi(out, KITTY_F13 + u32::from(n - 13), mods, b'u');
        return;
    }
    if let Some(byte) = control {
        // Enter, Tab and Backspace keep their bytes unless every key is an escape code, so a user
        // can still type `reset` after a crashed program left the protocol on.
        let legacy = if mods.is_empty() {
            !all_keys && (byte != ESC || !disambiguate)
        } else {
            !disambiguate && !all_keys
        };
        if legacy {
            legacy_named(out, key, mods, false);
        } else {
            push_csi(out, u32::from(byte), mods, b'u');
        }
        return;
    }
    match functional(key) {
        // F3 is `CSI 13 ~`: `CSI R` is a cursor position report.
        Some(Functional::Letter(b'R')) => push_csi(out, 13, mods, b'~'),
        Some(Functional::Letter(letter)) => push_csi(out, 1, mods, letter),
        Some(Functional::Tilde(number)) => push_csi(out, number, mods, b'~'),
        None => {}
    }
}

/// xterm's encoding of a character key: ESC for alt, the C0 byte for ctrl, the shifted character
/// for shift. Super cannot be expressed and is dropped.
pub(super) fn legacy_char(out: &mut Vec<u8>, ch: char, mods: Modifiers) {
    if mods.alt {
        out.push(ESC);
    }
    if mods.ctrl {
        if let Some(byte) = ctrl_byte(ch.to_ascii_lowercase()) {
            out.push(byte);
            return;
        }
    }
    push_char(out, if mods.shift { shifted(ch) } else { ch });
}

/// The kitty protocol's encoding of a character key: plain text while it types text (unless
/// every key is an escape code), otherwise `CSI code[:shifted][;mods][;text] u` with the code of
/// the unshifted key.
pub(super) fn kitty_char(out: &mut Vec<u8>, ch: char, mods: Modifiers, flags: u8) {
    let disambiguate = flags & KITTY_DISAMBIGUATE != 0;
    let all_keys = flags & KITTY_ALL_KEYS != 0;
    let (key, mods) = match unshifted(ch) {
        Some(base) => (base, mods.with(Modifiers::SHIFT)),
        None => (ch, mods),
    };
    let shifted_key = if mods.shift { shifted(key) } else { key };
    let types_text = !(mods.ctrl || mods.alt || mods.super_key);
    if types_text && !all_keys {
        push_char(out, shifted_key);
        return;
    }
    let legacy_key = ctrl_byte(key).is_some() || key.is_ascii_graphic();
    if !disambiguate && !all_keys && legacy_key && !mods.super_key {
        // Event types alone (flag 2) keep the legacy bytes for text keys.
        legacy_char(out, key, mods);
        return;
    }
    out.extend_from_slice(b"\x1b[");
    out.extend_from_slice(u32::from(key).to_string().as_bytes());
    if flags & KITTY_ALTERNATE_KEYS != 0 && mods.shift && shifted_key != key {
        out.push(b':');
        out.extend_from_slice(u32::from(shifted_key).to_string().as_bytes());
    }
    let text = (types_text && flags & KITTY_ASSOCIATED_TEXT != 0).then_some(shifted_key);
    if !mods.is_empty() || text.is_some() {
        out.push(b';');
    }
    if !mods.is_empty() {
        out.extend_from_slice(mods.param().to_string().as_bytes());
    }
    if let Some(text) = text {
        out.push(b';');
        out.extend_from_slice(u32::from(text).to_string().as_bytes());
    }
    out.push(b'u');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::{encode, encode_paste, encode_text, keypad_key, parse_token, try_encode};

    fn legacy() -> InputModes {
        InputModes::default()
    }

    fn kitty(flags: u8) -> InputModes {
        InputModes {
            kitty_keyboard: flags,
            ..InputModes::default()
        }
    }

    fn key(token: &str, modes: &InputModes) -> Vec<u8> {
        encode(&parse_token(token), modes)
    }

    #[test]
    fn legacy_control_characters() {
        let m = legacy();
        assert_eq!(key("C-a", &m), [0x01]);
        assert_eq!(key("C-z", &m), [0x1a]);
        assert_eq!(key("C-Space", &m), [0x00]);
        assert_eq!(key("^@", &m), [0x00]);
        assert_eq!(key("^[", &m), [0x1b]);
        assert_eq!(key("C-\\", &m), [0x1c]);
        assert_eq!(key("C-]", &m), [0x1d]);
        assert_eq!(key("^^", &m), [0x1e]);
        assert_eq!(key("C-_", &m), [0x1f]);
        assert_eq!(key("^?", &m), [0x7f]);
        assert_eq!(key("M-x", &m), b"\x1bx");
        assert_eq!(key("alt+x", &m), b"\x1bx");
        assert_eq!(key("C-M-x", &m), [0x1b, 0x18]);
        assert_eq!(key("S-a", &m), b"A");
        assert_eq!(key("S-1", &m), b"!");
        assert_eq!(key("M-S-a", &m), b"\x1bA");
    }

    #[test]
    fn keypad_keys_follow_application_keypad_mode() {
        let normal = legacy();
        assert_eq!(key("KP5", &normal), b"5");
        assert_eq!(key("KP_Enter", &normal), b"\r");
        assert_eq!(key("kpplus", &normal), b"+");
        let app = InputModes {
            app_keypad: true,
            ..InputModes::default()
        };
        assert_eq!(key("KP0", &app), b"\x1bOp");
        assert_eq!(key("KP9", &app), b"\x1bOy");
        assert_eq!(key("KPEnter", &app), b"\x1bOM");
        assert_eq!(key("KP*", &app), b"\x1bOj");
        assert_eq!(key("KPMinus", &app), b"\x1bOm");
        assert_eq!(key("M-KP1", &app), b"\x1b\x1bOq");
        assert_eq!(key("KP1", &kitty(KITTY_DISAMBIGUATE)), b"\x1b[57400u");
        // Not a keypad name: typed as text.
        assert_eq!(key("KPX", &normal), b"KPX");
    }

    fn named(key: NamedKey, modes: &InputModes) -> Result<Vec<u8>, KeyError> {
        try_encode(&key.into(), modes)
    }

    #[test]
    fn x_keypad_names_encode_as_keypad_keys_in_both_keypad_modes() {
        let pad = |name: &str| keypad_key(name).expect(name);
        let normal = legacy();
        let app = InputModes {
            app_keypad: true,
            ..InputModes::default()
        };
        for (name, typed, deckpam) in [
            ("KP_0", b"0", b"\x1bOp"),
            ("KP_9", b"9", b"\x1bOy"),
            ("KP_Add", b"+", b"\x1bOk"),
            ("KP_Subtract", b"-", b"\x1bOm"),
            ("KP_Multiply", b"*", b"\x1bOj"),
            ("KP_Divide", b"/", b"\x1bOo"),
            ("KP_Decimal", b".", b"\x1bOn"),
            ("KP_Enter", b"\r", b"\x1bOM"),
            ("KP_Equal", b"=", b"\x1bOX"),
        ] {
            assert_eq!(named(pad(name), &normal), Ok(typed.to_vec()), "{name}");
            assert_eq!(named(pad(name), &app), Ok(deckpam.to_vec()), "{name}");
        }
    }

    #[test]
    fn f13_to_f24_are_shifted_f1_to_f12_as_xterm_terminfo_reads_them() {
        let m = legacy();
        assert_eq!(named(NamedKey::F(13), &m), Ok(b"\x1b[1;2P".to_vec()));
        assert_eq!(named(NamedKey::F(16), &m), Ok(b"\x1b[1;2S".to_vec()));
        assert_eq!(named(NamedKey::F(17), &m), Ok(b"\x1b[15;2~".to_vec()));
        assert_eq!(named(NamedKey::F(24), &m), Ok(b"\x1b[24;2~".to_vec()));
        let ctrl_f13 = KeyToken::Named {
            key: NamedKey::F(13),
            mods: Modifiers::CTRL,
        };
        assert_eq!(try_encode(&ctrl_f13, &m), Ok(b"\x1b[1;6P".to_vec()));
        // The kitty protocol has codes of its own for them.
        let k = kitty(KITTY_DISAMBIGUATE);
        assert_eq!(named(NamedKey::F(13), &k), Ok(b"\x1b[57376u".to_vec()));
        assert_eq!(named(NamedKey::F(24), &k), Ok(b"\x1b[57387u".to_vec()));
    }

    #[test]
    fn keys_without_terminal_bytes_are_refused_by_name() {
        for key in [
            NamedKey::CapsLock,
            NamedKey::PrintScreen,
            NamedKey::Menu,
            NamedKey::NumLock,
            NamedKey::ScrollLock,
            NamedKey::Pause,
            NamedKey::F(25),
        ] {
            for modes in [legacy(), kitty(KITTY_DISAMBIGUATE | KITTY_ALL_KEYS)] {
                assert_eq!(
                    named(key, &modes),
                    Err(KeyError::NoTerminalEncoding { key }),
                    "{key}"
                );
            }
        }
        let err = named(NamedKey::CapsLock, &legacy()).expect_err("no bytes");
        assert_eq!(
            err.to_string(),
            "CapsLock has no terminal encoding: no terminal sends bytes for it"
        );
        // `encode` keeps its infallible signature for parsed tokens: such a key sends nothing.
        assert_eq!(encode(&NamedKey::Pause.into(), &legacy()), b"");
    }

    #[test]
    fn legacy_named_keys() {
        let m = legacy();
        assert_eq!(key("Enter", &m), b"\r");
        assert_eq!(key("M-Enter", &m), b"\x1b\r");
        assert_eq!(key("Tab", &m), b"\t");
        assert_eq!(key("BackTab", &m), b"\x1b[Z");
        assert_eq!(key("S-Tab", &m), b"\x1b[Z");
        assert_eq!(key("Backspace", &m), [0x7f]);
        assert_eq!(key("C-Backspace", &m), [0x08]);
        assert_eq!(key("Escape", &m), [0x1b]);
        assert_eq!(key("Up", &m), b"\x1b[A");
        assert_eq!(key("Home", &m), b"\x1b[H");
        assert_eq!(key("End", &m), b"\x1b[F");
        assert_eq!(key("C-Up", &m), b"\x1b[1;5A");
        assert_eq!(key("S-Left", &m), b"\x1b[1;2D");
        assert_eq!(key("C-M-S-Right", &m), b"\x1b[1;8C");
        assert_eq!(key("Insert", &m), b"\x1b[2~");
        assert_eq!(key("Delete", &m), b"\x1b[3~");
        assert_eq!(key("PageUp", &m), b"\x1b[5~");
        assert_eq!(key("C-PageDown", &m), b"\x1b[6;5~");
        assert_eq!(key("F1", &m), b"\x1bOP");
        assert_eq!(key("F4", &m), b"\x1bOS");
        assert_eq!(key("S-F1", &m), b"\x1b[1;2P");
        let f5_to_f12: Vec<Vec<u8>> = (5..=12).map(|n| key(&format!("F{n}"), &m)).collect();
        let expected: Vec<Vec<u8>> = [15, 17, 18, 19, 20, 21, 23, 24]
            .iter()
            .map(|n| format!("\x1b[{n}~").into_bytes())
            .collect();
        assert_eq!(f5_to_f12, expected);
        assert_eq!(key("C-F5", &m), b"\x1b[15;5~");
        assert_eq!(key("super+up", &m), b"\x1b[1;9A");
    }

    #[test]
    fn application_cursor_mode_uses_ss3_for_unmodified_cursor_keys() {
        let m = InputModes {
            app_cursor: true,
            ..InputModes::default()
        };
        assert_eq!(key("Up", &m), b"\x1bOA");
        assert_eq!(key("Down", &m), b"\x1bOB");
        assert_eq!(key("Right", &m), b"\x1bOC");
        assert_eq!(key("Left", &m), b"\x1bOD");
        assert_eq!(key("Home", &m), b"\x1bOH");
        assert_eq!(key("End", &m), b"\x1bOF");
        assert_eq!(key("C-Up", &m), b"\x1b[1;5A");
        assert_eq!(key("PageUp", &m), b"\x1b[5~");
    }

    #[test]
    fn kitty_disambiguate() {
        let m = kitty(KITTY_DISAMBIGUATE);
        assert_eq!(key("Escape", &m), b"\x1b[27u");
        assert_eq!(key("M-Escape", &m), b"\x1b[27;3u");
        assert_eq!(key("C-c", &m), b"\x1b[99;5u");
        assert_eq!(key("M-x", &m), b"\x1b[120;3u");
        assert_eq!(key("C-M-x", &m), b"\x1b[120;7u");
        assert_eq!(key("M-X", &m), b"\x1b[120;4u");
        assert_eq!(key("C-S-a", &m), b"\x1b[97;6u");
        assert_eq!(key("C-Space", &m), b"\x1b[32;5u");
        assert_eq!(key("super+a", &m), b"\x1b[97;9u");
        // Plain text and the unmodified Enter, Tab and Backspace stay as they were.
        assert_eq!(key("a", &m), b"a");
        assert_eq!(key("S-a", &m), b"A");
        assert_eq!(key("Enter", &m), b"\r");
        assert_eq!(key("Tab", &m), b"\t");
        assert_eq!(key("Backspace", &m), [0x7f]);
        assert_eq!(key("M-Enter", &m), b"\x1b[13;3u");
        assert_eq!(key("S-Tab", &m), b"\x1b[9;2u");
        assert_eq!(key("C-Backspace", &m), b"\x1b[127;5u");
        assert_eq!(key("Up", &m), b"\x1b[A");
        assert_eq!(key("C-Up", &m), b"\x1b[1;5A");
        assert_eq!(key("F1", &m), b"\x1b[P");
        assert_eq!(key("F3", &m), b"\x1b[13~");
        assert_eq!(key("S-F3", &m), b"\x1b[13;2~");
        assert_eq!(key("S-F4", &m), b"\x1b[1;2S");
        assert_eq!(key("Delete", &m), b"\x1b[3~");
        assert_eq!(key("C-PageUp", &m), b"\x1b[5;5~");
        assert_eq!(encode_text("hi\n", &m), b"hi\r");
    }

    #[test]
    fn kitty_disambiguate_ignores_application_cursor_mode() {
        let m = InputModes {
            app_cursor: true,
            kitty_keyboard: KITTY_DISAMBIGUATE,
            ..InputModes::default()
        };
        assert_eq!(key("Up", &m), b"\x1b[A");
    }

    #[test]
    fn kitty_all_keys_as_escape_codes() {
        let m = kitty(KITTY_DISAMBIGUATE | KITTY_ALL_KEYS);
        assert_eq!(key("a", &m), b"\x1b[97u");
        assert_eq!(key("A", &m), b"\x1b[97;2u");
        assert_eq!(key("!", &m), b"\x1b[49;2u");
        assert_eq!(key("Enter", &m), b"\x1b[13u");
        assert_eq!(key("Tab", &m), b"\x1b[9u");
        assert_eq!(key("Backspace", &m), b"\x1b[127u");
        assert_eq!(key("Escape", &m), b"\x1b[27u");
        assert_eq!(key("Space", &m), b"\x1b[32u");
        assert_eq!(key("hi", &m), b"\x1b[104u\x1b[105u");
        assert_eq!(encode_text("a\r\nb", &m), b"\x1b[97u\x1b[13u\x1b[98u");
        assert_eq!(key("é", &m), b"\x1b[233u");
        assert_eq!(key("É", &m), b"\x1b[233;2u");
    }

    #[test]
    fn kitty_alternate_keys_and_associated_text() {
        let all = KITTY_DISAMBIGUATE | KITTY_ALL_KEYS;
        let m = kitty(all | KITTY_ALTERNATE_KEYS);
        assert_eq!(key("A", &m), b"\x1b[97:65;2u");
        assert_eq!(key("a", &m), b"\x1b[97u");
        assert_eq!(key("C-S-a", &m), b"\x1b[97:65;6u");
        let m = kitty(all | KITTY_ASSOCIATED_TEXT);
        assert_eq!(key("a", &m), b"\x1b[97;;97u");
        assert_eq!(key("A", &m), b"\x1b[97;2;65u");
        // Ctrl+a types no text, so it carries none.
        assert_eq!(key("C-a", &m), b"\x1b[97;5u");
        // Without flag 8 text keys still send their text.
        let m = kitty(KITTY_DISAMBIGUATE | KITTY_ASSOCIATED_TEXT);
        assert_eq!(key("a", &m), b"a");
    }

    #[test]
    fn kitty_event_types_only_keeps_legacy_text_keys() {
        let m = kitty(KITTY_EVENT_TYPES);
        assert_eq!(key("C-c", &m), [0x03]);
        assert_eq!(key("Escape", &m), [0x1b]);
        assert_eq!(key("Enter", &m), b"\r");
        assert_eq!(key("Up", &m), b"\x1b[A");
        assert_eq!(key("S-Tab", &m), b"\x1b[Z");
    }

    #[test]
    fn flags_without_protocol_bits_are_legacy() {
        let m = kitty(KITTY_ALTERNATE_KEYS | KITTY_ASSOCIATED_TEXT);
        assert_eq!(key("Escape", &m), [0x1b]);
        assert_eq!(key("C-c", &m), [0x03]);
    }

    #[test]
    fn paste_cannot_break_out_of_its_brackets() {
        let on = InputModes {
            bracketed_paste: true,
            ..InputModes::default()
        };
        assert_eq!(
            encode_paste("x\n\x1b[201~rm -rf ~\n", &on),
            b"\x1b[200~x\nrm -rf ~\n\x1b[201~"
        );
        // Removing the marker once would join the halves around it into a new marker.
        assert_eq!(
            encode_paste("\x1b[20\x1b[201~1~\n", &on),
            b"\x1b[200~\n\x1b[201~"
        );
    }
}
