//! Key names as computer-use models write them (`CTRL`, `cmd`, `ArrowLeft`, `Page_Down`, `F5`, `a`,
//! `KP_Add`, `XF86AudioMute`), normalised once, then turned into X keysyms for desktops or key tokens
//! for terminals. The named keys are the screen crate's [`NamedKey`], the same type `send_keys` uses.

use screenpilot_desktop::keysym::{self, Keysym};
use screenpilot_desktop::Modifier;
use screenpilot_screen::keys::{self, KeyToken, Modifiers, NamedKey};

use crate::ops::kit::error::OpError;

/// One key of a chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Modifier(Modifier),
    Named(NamedKey),
    /// A character key; letters are lowercase (the key, not the case: hold SHIFT for capitals).
    /// The space bar is `Char(' ')`.
    Char(char),
    /// Any other X key, by its keysym (`XF86AudioMute`, `KP_Home`): desktops only.
    Keysym(Keysym),
}

/// Keys pressed together, in the order given; released in reverse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chord(pub Vec<Key>);

/// Spelled-out punctuation (X keysym names as xdotool takes them).
fn punctuation(name: &str) -> Option<char> {
    Some(match name {
        "PLUS" => '+',
        "MINUS" => '-',
        "EQUAL" | "EQUALS" => '=',
        "COMMA" => ',',
        "PERIOD" | "DOT" => '.',
        "SLASH" => '/',
        "BACKSLASH" => '\\',
        "SEMICOLON" => ';',
        "COLON" => ':',
        "APOSTROPHE" | "QUOTE" => '\'',
        "QUOTEDBL" => '"',
        "GRAVE" | "BACKQUOTE" => '`',
        "BRACKETLEFT" => '[',
        "BRACKETRIGHT" => ']',
        "BRACELEFT" => '{',
        "BRACERIGHT" => '}',
        "UNDERSCORE" => '_',
        "ASTERISK" => '*',
        "EXCLAM" => '!',
        "AT" => '@',
        "NUMBERSIGN" | "HASH" => '#',
        "DOLLAR" => '$',
        "PERCENT" => '%',
        "AMPERSAND" => '&',
        "PARENLEFT" => '(',
        "PARENRIGHT" => ')',
        "QUESTION" => '?',
        "LESS" => '<',
        "GREATER" => '>',
        "BAR" => '|',
        "ASCIITILDE" | "TILDE" => '~',
        "ASCIICIRCUM" => '^',
        _ => return None,
    })
}

/// Parse one key name; `None` when it is not one.
pub fn parse_key(name: &str) -> Option<Key> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return Some(match c {
            '\n' | '\r' => Key::Named(NamedKey::Enter),
            '\t' => Key::Named(NamedKey::Tab),
            '\u{8}' => Key::Named(NamedKey::Backspace),
            '\u{1b}' => Key::Named(NamedKey::Escape),
            // A control character is no key (a desktop would press nothing for it).
            c if keysym::for_char(c).is_none() => return None,
            c => char_key(c),
        });
    }
    let norm: String = name
        .trim()
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' '))
        .flat_map(char::to_uppercase)
        .collect();
    let named = match norm.as_str() {
        "CTRL" | "CONTROL" | "CTL" | "CONTROLL" | "CONTROLR" | "LCTRL" | "RCTRL" => {
            return Some(Key::Modifier(Modifier::Ctrl))
        }
        "ALT" | "OPTION" | "OPT" | "ALTL" | "ALTR" | "LALT" | "RALT" => {
            return Some(Key::Modifier(Modifier::Alt))
        }
        "SHIFT" | "SHIFTL" | "SHIFTR" | "LSHIFT" | "RSHIFT" => {
            return Some(Key::Modifier(Modifier::Shift))
        }
        "META" | "CMD" | "COMMAND" | "SUPER" | "WIN" | "WINDOWS" | "SUPERL" | "SUPERR"
        | "METAL" | "METAR" | "OS" | "LWIN" | "RWIN" => {
            return Some(Key::Modifier(Modifier::Super))
        }
        "SPACE" | "SPACEBAR" => return Some(Key::Char(' ')),
        "ENTER" | "RETURN" => NamedKey::Enter,
        "ESC" | "ESCAPE" => NamedKey::Escape,
        "TAB" => NamedKey::Tab,
        "BACKSPACE" | "BKSP" => NamedKey::Backspace,
        "DELETE" | "DEL" => NamedKey::Delete,
        "INSERT" | "INS" => NamedKey::Insert,
        "UP" | "ARROWUP" | "UPARROW" => NamedKey::Up,
        "DOWN" | "ARROWDOWN" | "DOWNARROW" => NamedKey::Down,
        "LEFT" | "ARROWLEFT" | "LEFTARROW" => NamedKey::Left,
        "RIGHT" | "ARROWRIGHT" | "RIGHTARROW" => NamedKey::Right,
        "HOME" => NamedKey::Home,
        "END" => NamedKey::End,
        "PAGEUP" | "PGUP" | "PRIOR" => NamedKey::PageUp,
        "PAGEDOWN" | "PGDN" | "NEXT" => NamedKey::PageDown,
        "CAPSLOCK" | "CAPS" => NamedKey::CapsLock,
        "PRINT" | "PRINTSCREEN" | "PRTSC" => NamedKey::PrintScreen,
        "MENU" | "CONTEXTMENU" | "APPS" => NamedKey::Menu,
        "NUMLOCK" => NamedKey::NumLock,
        "SCROLLLOCK" => NamedKey::ScrollLock,
        "PAUSE" | "BREAK" => NamedKey::Pause,
        other => {
            if let Some(c) = punctuation(other) {
                return Some(Key::Char(c));
            }
            if let Some(key) = keys::keypad_key(other) {
                return Some(Key::Named(key));
            }
            match other.strip_prefix('F') {
                Some(digits)
                    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) =>
                {
                    // F1-F24 only, though X goes to F35: the tools promise 24 and terminals stop there.
                    // `F01` is not a key name.
                    let n: u8 = digits.parse().ok()?;
                    if !(1..=24).contains(&n) || digits.len() != n.to_string().len() {
                        return None;
                    }
                    NamedKey::F(n)
                }
                _ => return x_key(name.trim()),
            }
        }
    };
    Some(Key::Named(named))
}

/// The key that types `c`: letters by their lowercase form (the key, not the case).
fn char_key(c: char) -> Key {
    if c.is_alphabetic() {
        Key::Char(c.to_lowercase().next().unwrap_or(c))
    } else {
        Key::Char(c)
    }
}

/// Any other X keysym name, as `xdotool key` takes it (`XF86AudioMute`, `KP_Home`, `adiaeresis`).
/// One that types a character is that character's key, so terminals can send it too.
fn x_key(name: &str) -> Option<Key> {
    let keysym = keysym::by_name(name)?;
    Some(match keysym::to_char(keysym) {
        Some(c) if !c.is_control() => char_key(c),
        _ => Key::Keysym(keysym),
    })
}

/// The list form (`["CTRL", "SHIFT", "t"]`); `field` names the argument in errors. An entry that is
/// itself a chord (`["ctrl+c"]`, as OpenAI's models also write it) adds its keys to the chord.
pub fn parse_chord(names: &[String], field: &str) -> Result<Chord, OpError> {
    if names.is_empty() {
        return Err(OpError::invalid(
            field,
            "no keys given; e.g. [\"CTRL\", \"c\"] or [\"ENTER\"]",
        ));
    }
    let mut keys = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let unknown = || unknown_key(name, &format!("{field}[{i}]"));
        let found = match parse_key(name) {
            Some(key) => vec![key],
            None if name.len() > 1 && name.contains('+') => plus_separated(name)
                .iter()
                .map(|part| parse_key(part))
                .collect::<Option<Vec<Key>>>()
                .ok_or_else(unknown)?,
            None => return Err(unknown()),
        };
        for key in found {
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    Ok(Chord(keys))
}

/// The key names of one `+`-joined chord: `"ctrl+shift+t"`, `"ctrl++"` (Ctrl and the plus key), `"+"`.
fn plus_separated(combo: &str) -> Vec<String> {
    if combo == "+" {
        vec!["+".to_owned()]
    } else if let Some(mods) = combo.strip_suffix("++") {
        mods.split('+')
            .map(str::to_owned)
            .chain(["+".to_owned()])
            .collect()
    } else {
        combo.split('+').map(str::to_owned).collect()
    }
}

/// xdotool's form (`"ctrl+shift+t"`, several chords separated by spaces: `"ctrl+a Delete"`).
pub fn parse_combo_text(text: &str, field: &str) -> Result<Vec<Chord>, OpError> {
    let chords: Vec<Chord> = text
        .split_whitespace()
        .map(|combo| parse_chord(&plus_separated(combo), field))
        .collect::<Result<_, _>>()?;
    if chords.is_empty() {
        return Err(OpError::invalid(
            field,
            "no keys given; e.g. \"ctrl+c\" or \"Return\"",
        ));
    }
    Ok(chords)
}

fn unknown_key(name: &str, field: &str) -> OpError {
    OpError::invalid(
        field,
        format!(
            "unknown key {name:?}; use CTRL, ALT (OPTION), SHIFT, META (CMD, SUPER, WIN), ENTER, ESC, TAB, SPACE, \
BACKSPACE, DELETE, INSERT, UP/DOWN/LEFT/RIGHT (or ARROWUP...), HOME, END, PAGEUP, PAGEDOWN, F1-F24, \
CAPSLOCK, PRINTSCREEN, MENU, NUMLOCK, SCROLLLOCK, PAUSE, KP_0-KP_9, KP_ADD, KP_SUBTRACT, KP_MULTIPLY, KP_DIVIDE, \
KP_DECIMAL, KP_ENTER, KP_EQUAL, a single character, or (on desktops) any X keysym name such as XF86AudioMute"
        ),
    )
}

/// The X keysym of a key.
pub fn keysym_of(key: Key) -> Option<Keysym> {
    Some(match key {
        Key::Modifier(Modifier::Ctrl) => keysym::CONTROL_L,
        Key::Modifier(Modifier::Alt) => keysym::ALT_L,
        Key::Modifier(Modifier::Shift) => keysym::SHIFT_L,
        Key::Modifier(Modifier::Super) => keysym::SUPER_L,
        Key::Char(c) => keysym::for_char(c)?,
        Key::Keysym(keysym) => keysym,
        Key::Named(named) => match named {
            NamedKey::Enter => keysym::RETURN,
            NamedKey::Escape => keysym::ESCAPE,
            NamedKey::Tab => keysym::TAB,
            NamedKey::Backspace => keysym::BACKSPACE,
            NamedKey::Delete => keysym::DELETE,
            NamedKey::Insert => keysym::INSERT,
            NamedKey::Up => keysym::UP,
            NamedKey::Down => keysym::DOWN,
            NamedKey::Left => keysym::LEFT,
            NamedKey::Right => keysym::RIGHT,
            NamedKey::Home => keysym::HOME,
            NamedKey::End => keysym::END,
            NamedKey::PageUp => keysym::PAGE_UP,
            NamedKey::PageDown => keysym::PAGE_DOWN,
            NamedKey::F(n) => keysym::function_key(n)?,
            NamedKey::Keypad(ch) => keypad_keysym(ch)?,
            NamedKey::CapsLock => keysym::CAPS_LOCK,
            NamedKey::PrintScreen => keysym::PRINT,
            NamedKey::Menu => keysym::MENU,
            NamedKey::NumLock => keysym::NUM_LOCK,
            NamedKey::ScrollLock => keysym::SCROLL_LOCK,
            NamedKey::Pause => keysym::PAUSE,
        },
    })
}

/// The keypad's own keysyms (`KP_0` .. `KP_9`, `KP_Add` ...): the keypad's Enter is `KP_Enter`, not
/// Return, so an application that tells them apart sees the key that was named.
fn keypad_keysym(ch: u8) -> Option<Keysym> {
    Some(match ch {
        b'0'..=b'9' => 0xffb0 + Keysym::from(ch - b'0'),
        b'*' => 0xffaa,
        b'+' => 0xffab,
        b'-' => 0xffad,
        b'.' => 0xffae,
        b'/' => 0xffaf,
        b'\r' => keysym::KP_ENTER,
        b'=' => keysym::KP_EQUAL,
        _ => return None,
    })
}

/// The key tokens a terminal gets for a chord: one per non-modifier key, all with the chord's
/// modifiers. `field` names the argument in errors.
pub fn terminal_tokens(chord: &Chord, field: &str) -> Result<Vec<KeyToken>, OpError> {
    let mut mods = Modifiers::NONE;
    for key in &chord.0 {
        if let Key::Modifier(m) = key {
            match m {
                Modifier::Shift => mods.shift = true,
                Modifier::Ctrl => mods.ctrl = true,
                Modifier::Alt => mods.alt = true,
                Modifier::Super => mods.super_key = true,
            }
        }
    }
    let desktop_only = |what: String| {
        OpError::invalid(field, format!("{what}; it works on desktop sessions only"))
    };
    let mut tokens = Vec::new();
    for key in &chord.0 {
        let token = match *key {
            Key::Modifier(_) => continue,
            Key::Char(ch) => KeyToken::Char { ch, mods },
            Key::Named(key) => KeyToken::Named { key, mods },
            Key::Keysym(keysym) => {
                let name =
                    keysym::name(keysym).map_or_else(|| format!("{keysym:#x}"), str::to_owned);
                return Err(desktop_only(format!(
                    "the X key {name} has no terminal encoding"
                )));
            }
        };
        keys::check_encodable(&token).map_err(|e| desktop_only(e.to_string()))?;
        tokens.push(token);
    }
    if tokens.is_empty() {
        return Err(OpError::invalid(
            field,
            "a terminal cannot receive a modifier alone; add the key it modifies, e.g. [\"CTRL\", \"c\"]",
        ));
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;
    use screenpilot_screen::modes::InputModes;

    fn chord(names: &[&str]) -> Chord {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        parse_chord(&names, "keys").expect("valid chord")
    }

    #[test]
    fn model_spellings_normalise() {
        use Key::*;
        for (name, key) in [
            ("CTRL", Modifier(screenpilot_desktop::Modifier::Ctrl)),
            ("Control_L", Modifier(screenpilot_desktop::Modifier::Ctrl)),
            ("option", Modifier(screenpilot_desktop::Modifier::Alt)),
            ("CMD", Modifier(screenpilot_desktop::Modifier::Super)),
            ("META", Modifier(screenpilot_desktop::Modifier::Super)),
            ("Win", Modifier(screenpilot_desktop::Modifier::Super)),
            ("RETURN", Named(NamedKey::Enter)),
            ("esc", Named(NamedKey::Escape)),
            ("ArrowLeft", Named(NamedKey::Left)),
            ("Page_Down", Named(NamedKey::PageDown)),
            ("PGUP", Named(NamedKey::PageUp)),
            ("F24", Named(NamedKey::F(24))),
            ("A", Char('a')),
            ("é", Char('é')),
            ("/", Char('/')),
            ("plus", Char('+')),
            (" ", Char(' ')),
            ("\n", Named(NamedKey::Enter)),
            ("\t", Named(NamedKey::Tab)),
        ] {
            assert_eq!(parse_key(name), Some(key), "{name}");
        }
        for bad in ["F25", "F0", "F01", "HYPERSPACE", "", "\u{7}", "\u{0}"] {
            assert_eq!(parse_key(bad), None, "{bad}");
        }
    }

    #[test]
    fn unknown_keys_name_their_position() {
        let err = parse_chord(&["CTRL".into(), "NOPE".into()], "action.keys").expect_err("bad");
        assert_eq!(err.field.as_deref(), Some("action.keys[1]"));
    }

    #[test]
    fn xdotool_combos_split_into_chords() {
        let chords = parse_combo_text("ctrl+shift+t Return ctrl++", "text").expect("valid");
        assert_eq!(chords.len(), 3);
        assert_eq!(chords[0], chord(&["CTRL", "SHIFT", "t"]));
        assert_eq!(chords[1], chord(&["ENTER"]));
        assert_eq!(chords[2], chord(&["CTRL", "+"]));
    }

    #[test]
    fn chords_become_terminal_tokens() {
        let tokens = terminal_tokens(&chord(&["CTRL", "C"]), "keys").expect("tokens");
        assert_eq!(
            tokens,
            vec![KeyToken::Char {
                ch: 'c',
                mods: Modifiers::CTRL
            }]
        );
        let tokens = terminal_tokens(&chord(&["SHIFT", "F13"]), "keys").expect("tokens");
        assert_eq!(
            tokens,
            vec![KeyToken::Named {
                key: NamedKey::F(13),
                mods: Modifiers::SHIFT
            }]
        );
        // xterm has F13 as shift+F1: the same bytes either way.
        assert_eq!(
            keys::try_encode(&tokens[0], &InputModes::default()),
            Ok(b"\x1b[1;2P".to_vec())
        );
        assert!(terminal_tokens(&chord(&["CTRL"]), "keys").is_err());
        assert!(terminal_tokens(&chord(&["PRINTSCREEN"]), "keys").is_err());
    }

    #[test]
    fn keys_without_terminal_bytes_are_refused_by_name() {
        let err = terminal_tokens(&chord(&["CAPSLOCK"]), "action.keys").expect_err("no bytes");
        assert_eq!(err.field.as_deref(), Some("action.keys"));
        assert!(
            err.message.contains("CapsLock has no terminal encoding")
                && err.message.contains("desktop sessions only"),
            "{}",
            err.message
        );
        let err = terminal_tokens(&chord(&["XF86AudioMute"]), "keys").expect_err("no bytes");
        assert!(err.message.contains("XF86AudioMute"), "{}", err.message);
    }

    #[test]
    fn keypad_names_parse_to_keypad_keys() {
        for (name, ch) in [
            ("KP_0", b'0'),
            ("kp_9", b'9'),
            ("KP_Add", b'+'),
            ("kp_add", b'+'),
            ("KP_Subtract", b'-'),
            ("KP_Multiply", b'*'),
            ("KP_Divide", b'/'),
            ("KP_Decimal", b'.'),
            ("KP_Enter", b'\r'),
            ("KPENTER", b'\r'),
            ("KP_Equal", b'='),
        ] {
            assert_eq!(
                parse_key(name),
                Some(Key::Named(NamedKey::Keypad(ch))),
                "{name}"
            );
        }
    }

    #[test]
    fn keypad_keys_are_the_keypads_own_keysyms_not_return() {
        let sym = |name: &str| keysym_of(parse_key(name).expect(name));
        assert_eq!(sym("KP_0"), Some(0xffb0));
        assert_eq!(sym("KP_9"), Some(0xffb9));
        assert_eq!(sym("KP_Add"), Some(0xffab));
        assert_eq!(sym("KP_Subtract"), Some(0xffad));
        assert_eq!(sym("KP_Multiply"), Some(0xffaa));
        assert_eq!(sym("KP_Divide"), Some(0xffaf));
        assert_eq!(sym("KP_Decimal"), Some(0xffae));
        assert_eq!(sym("KP_Enter"), Some(0xff8d));
        assert_eq!(sym("KP_Equal"), Some(0xffbd));
        assert_eq!(sym("Return"), Some(keysym::RETURN));
        // The same as the desktop crate's complete table says.
        for name in [
            "KP_0",
            "KP_7",
            "KP_Add",
            "KP_Divide",
            "KP_Enter",
            "KP_Equal",
        ] {
            assert_eq!(sym(name), keysym::by_name(name), "{name}");
        }
    }

    #[test]
    fn keypad_keys_reach_terminals_through_the_keypad_encoding() {
        let bytes = |name: &str, modes: &InputModes| {
            let tokens = terminal_tokens(&chord(&[name]), "keys").expect("tokens");
            keys::try_encode(&tokens[0], modes).expect("bytes")
        };
        let normal = InputModes::default();
        let deckpam = InputModes {
            app_keypad: true,
            ..InputModes::default()
        };
        assert_eq!(bytes("KP_Add", &normal), b"+");
        assert_eq!(bytes("KP_Add", &deckpam), b"\x1bOk");
        assert_eq!(bytes("KP_Enter", &normal), b"\r");
        assert_eq!(bytes("KP_Enter", &deckpam), b"\x1bOM");
        assert_eq!(bytes("KP_5", &deckpam), b"\x1bOu");
    }

    #[test]
    fn any_x_keysym_name_works_for_desktops() {
        let mute = parse_key("XF86AudioMute").expect("an X key");
        assert_eq!(mute, Key::Keysym(0x1008_ff12));
        assert_eq!(keysym_of(mute), Some(0x1008_ff12));
        assert_eq!(parse_key("KP_Home"), Some(Key::Keysym(0xff95)));
        // A keysym that types a character is that character's key.
        assert_eq!(parse_key("adiaeresis"), Some(Key::Char('ä')));
        assert_eq!(parse_key("Adiaeresis"), Some(Key::Char('ä')));
    }

    #[test]
    fn keys_map_to_keysyms() {
        assert_eq!(keysym_of(Key::Char('a')), Some(0x61));
        assert_eq!(keysym_of(Key::Char(' ')), Some(keysym::SPACE));
        assert_eq!(keysym_of(Key::Named(NamedKey::F(1))), Some(0xffbe));
        assert_eq!(
            keysym_of(Key::Modifier(Modifier::Super)),
            Some(keysym::SUPER_L)
        );
    }
}
