//! Key tokens (`Enter`, `C-c`, `ctrl+shift+up`, `hello`) and their bytes for the application's modes.
//!
//! Parsing never fails: a token that is not a key is text to type. Encoding follows xterm for the
//! legacy protocol (with DECCKM for the cursor keys) and the kitty keyboard protocol once the
//! application pushed its flags (<https://sw.kovidgoyal.net/kitty/keyboard-protocol/>). The keyboard
//! being simulated is a US PC-101 layout: shift+`1` is `!`, and `!` is reported as shift+`1`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::modes::InputModes;

const ESC: u8 = 0x1b;

// Kitty keyboard protocol flags, as the application pushes them with `CSI > flags u`.
const KITTY_DISAMBIGUATE: u8 = 1;
const KITTY_EVENT_TYPES: u8 = 2;
const KITTY_ALTERNATE_KEYS: u8 = 4;
const KITTY_ALL_KEYS: u8 = 8;
const KITTY_ASSOCIATED_TEXT: u8 = 16;

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
    fn param(self) -> u8 {
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

/// A short description of the token grammar, for tool descriptions and error messages.
pub fn describe_grammar() -> &'static str {
    "Each token is one key press or a piece of text.\n\
     Named keys: Enter Return Tab BackTab Space Backspace Delete Escape Esc Up Down Left Right \
     Home End PageUp PageDown Insert F1-F12 (any case; page_up, page_down also).\n\
     Modifiers: C-x (ctrl), M-x (alt/meta), S-x (shift), combinable: C-M-x, C-Up, S-Tab; ^x is ctrl+x; \
     Textual style too: ctrl+c, alt+x, shift+tab, ctrl+shift+up.\n\
     Any other token is typed as literal text (\"hello\" types hello; use the type tool to type a word \
     that is also a key name, such as \"end\")."
}

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
        let held = match name.to_ascii_lowercase().as_str() {
            "ctrl" | "control" => Modifiers::CTRL,
            "alt" | "meta" | "option" => Modifiers::ALT,
            "shift" => Modifiers::SHIFT,
            "super" | "cmd" | "command" => Modifiers {
                super_key: true,
                ..Modifiers::NONE
            },
            _ => return None,
        };
        mods = mods.with(held);
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

/// Encode every token, one write per token (an app reading its input in chunks sees each key
/// separately, as a person would type them).
pub fn encode_tokens<S: AsRef<str>>(tokens: &[S], modes: &InputModes) -> Vec<Vec<u8>> {
    tokens
        .iter()
        .map(|token| encode(&parse_token(token.as_ref()), modes))
        .collect()
}

/// The bytes a terminal sends for one token, given the application's modes.
pub fn encode(token: &KeyToken, modes: &InputModes) -> Vec<u8> {
    let mut out = Vec::new();
    match token {
        KeyToken::Text(text) => return encode_text(text, modes),
        KeyToken::Named { key, mods } if kitty_active(modes) => {
            kitty_named(&mut out, *key, *mods, modes.kitty_keyboard)
        }
        KeyToken::Named { key, mods } => legacy_named(&mut out, *key, *mods, modes.app_cursor),
        KeyToken::Char { ch, mods } if kitty_active(modes) => {
            kitty_char(&mut out, *ch, *mods, modes.kitty_keyboard)
        }
        KeyToken::Char { ch, mods } => legacy_char(&mut out, *ch, *mods),
    }
    out
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

impl From<NamedKey> for KeyToken {
    fn from(key: NamedKey) -> KeyToken {
        KeyToken::Named {
            key,
            mods: Modifiers::NONE,
        }
    }
}

/// Text as pasted: multi-line text goes as one bracketed paste when the application enabled mode
/// 2004, so it is not run line by line; otherwise it is typed ([`encode_text`]).
pub fn encode_paste(text: &str, modes: &InputModes) -> Vec<u8> {
    if !(modes.bracketed_paste && text.contains(['\n', '\r'])) {
        return encode_text(text, modes);
    }
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

const PASTE_END: &str = "\x1b[201~";

/// Is the kitty protocol changing how keys are encoded? Alternate keys (4) and associated text (16)
/// only add fields to escape codes that the other flags produce.
fn kitty_active(modes: &InputModes) -> bool {
    modes.kitty_keyboard & (KITTY_DISAMBIGUATE | KITTY_EVENT_TYPES | KITTY_ALL_KEYS) != 0
}

/// The C0 byte ctrl turns an ASCII key into, as xterm and kitty map it; `None` when ctrl leaves the
/// key alone.
fn ctrl_byte(ch: char) -> Option<u8> {
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

/// xterm's encoding of the named keys.
fn legacy_named(out: &mut Vec<u8>, key: NamedKey, mods: Modifiers, app_cursor: bool) {
    let alt_prefix = |out: &mut Vec<u8>| {
        if mods.alt {
            out.push(ESC);
        }
    };
    match key {
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
fn kitty_named(out: &mut Vec<u8>, key: NamedKey, mods: Modifiers, flags: u8) {
    let disambiguate = flags & KITTY_DISAMBIGUATE != 0;
    let all_keys = flags & KITTY_ALL_KEYS != 0;
    let control = match key {
        NamedKey::Enter => Some(b'\r'),
        NamedKey::Tab => Some(b'\t'),
        NamedKey::Backspace => Some(0x7f),
        NamedKey::Escape => Some(ESC),
        _ => None,
    };
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
fn legacy_char(out: &mut Vec<u8>, ch: char, mods: Modifiers) {
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
fn kitty_char(out: &mut Vec<u8>, ch: char, mods: Modifiers, flags: u8) {
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
            encode_tokens(&["hello", "Enter"], &legacy()),
            vec![b"hello".to_vec(), b"\r".to_vec()]
        );
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

    #[test]
    fn grammar_description_names_the_forms() {
        let text = describe_grammar();
        for needle in ["Enter", "C-x", "^x", "ctrl+c", "literal text"] {
            assert!(text.contains(needle), "{needle}");
        }
        assert!(text.lines().count() <= 6);
    }
}
