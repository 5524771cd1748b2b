//! Key names as computer-use models write them (`CTRL`, `cmd`, `ArrowLeft`, `Page_Down`, `F5`, `a`),
//! normalised once, then turned into X keysyms for desktops or key tokens for terminals.

use screenpilot_desktop::keysym::{self, Keysym};
use screenpilot_desktop::Modifier;
use screenpilot_screen::keys::{KeyToken, Modifiers, NamedKey};

use crate::ops::common::OpError;

/// A key that is not a modifier and does not type a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    Enter,
    Escape,
    Tab,
    Space,
    Backspace,
    Delete,
    Insert,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    /// F1 to F24.
    F(u8),
    CapsLock,
    PrintScreen,
    Menu,
    NumLock,
    ScrollLock,
    Pause,
}

/// One key of a chord.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    Modifier(Modifier),
    Named(Named),
    /// A character key; letters are lowercase (the key, not the case: hold SHIFT for capitals).
    Char(char),
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
            ' ' => Key::Named(Named::Space),
            '\n' | '\r' => Key::Named(Named::Enter),
            '\t' => Key::Named(Named::Tab),
            '\u{8}' => Key::Named(Named::Backspace),
            '\u{1b}' => Key::Named(Named::Escape),
            c if c.is_alphabetic() => Key::Char(c.to_lowercase().next().unwrap_or(c)),
            // A control character is no key (a desktop would press nothing for it).
            c if keysym::for_char(c).is_none() => return None,
            c => Key::Char(c),
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
        "ENTER" | "RETURN" | "KPENTER" => Named::Enter,
        "ESC" | "ESCAPE" => Named::Escape,
        "TAB" => Named::Tab,
        "SPACE" | "SPACEBAR" => Named::Space,
        "BACKSPACE" | "BKSP" => Named::Backspace,
        "DELETE" | "DEL" => Named::Delete,
        "INSERT" | "INS" => Named::Insert,
        "UP" | "ARROWUP" | "UPARROW" => Named::Up,
        "DOWN" | "ARROWDOWN" | "DOWNARROW" => Named::Down,
        "LEFT" | "ARROWLEFT" | "LEFTARROW" => Named::Left,
        "RIGHT" | "ARROWRIGHT" | "RIGHTARROW" => Named::Right,
        "HOME" => Named::Home,
        "END" => Named::End,
        "PAGEUP" | "PGUP" | "PRIOR" => Named::PageUp,
        "PAGEDOWN" | "PGDN" | "NEXT" => Named::PageDown,
        "CAPSLOCK" | "CAPS" => Named::CapsLock,
        "PRINT" | "PRINTSCREEN" | "PRTSC" => Named::PrintScreen,
        "MENU" | "CONTEXTMENU" | "APPS" => Named::Menu,
        "NUMLOCK" => Named::NumLock,
        "SCROLLLOCK" => Named::ScrollLock,
        "PAUSE" | "BREAK" => Named::Pause,
        other => {
            if let Some(c) = punctuation(other) {
                return Some(Key::Char(c));
            }
            let n: u8 = other.strip_prefix('F')?.parse().ok()?;
            if !(1..=24).contains(&n) || other.len() != n.to_string().len() + 1 {
                return None;
            }
            Named::F(n)
        }
    };
    Some(Key::Named(named))
}

/// The list form (`["CTRL", "SHIFT", "t"]`); `field` names the argument in errors.
pub fn parse_chord(names: &[String], field: &str) -> Result<Chord, OpError> {
    if names.is_empty() {
        return Err(OpError::invalid(
            field,
            "no keys given; e.g. [\"CTRL\", \"c\"] or [\"ENTER\"]",
        ));
    }
    let mut keys = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let key = parse_key(name).ok_or_else(|| unknown_key(name, &format!("{field}[{i}]")))?;
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    Ok(Chord(keys))
}

/// xdotool's form (`"ctrl+shift+t"`, several chords separated by spaces: `"ctrl+a Delete"`).
pub fn parse_combo_text(text: &str, field: &str) -> Result<Vec<Chord>, OpError> {
    let chords: Vec<Chord> = text
        .split_whitespace()
        .map(|combo| {
            let names: Vec<String> = if combo == "+" {
                vec!["+".to_owned()]
            } else if let Some(mods) = combo.strip_suffix("++") {
                mods.split('+')
                    .map(str::to_owned)
                    .chain(["+".to_owned()])
                    .collect()
            } else {
                combo.split('+').map(str::to_owned).collect()
            };
            parse_chord(&names, field)
        })
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
BACKSPACE, DELETE, INSERT, UP/DOWN/LEFT/RIGHT (or ARROWUP...), HOME, END, PAGEUP, PAGEDOWN, F1-F24, or a single character"
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
        Key::Named(named) => match named {
            Named::Enter => keysym::RETURN,
            Named::Escape => keysym::ESCAPE,
            Named::Tab => keysym::TAB,
            Named::Space => keysym::SPACE,
            Named::Backspace => keysym::BACKSPACE,
            Named::Delete => keysym::DELETE,
            Named::Insert => keysym::INSERT,
            Named::Up => keysym::UP,
            Named::Down => keysym::DOWN,
            Named::Left => keysym::LEFT,
            Named::Right => keysym::RIGHT,
            Named::Home => keysym::HOME,
            Named::End => keysym::END,
            Named::PageUp => keysym::PAGE_UP,
            Named::PageDown => keysym::PAGE_DOWN,
            Named::F(n) => keysym::function_key(n)?,
            Named::CapsLock => keysym::CAPS_LOCK,
            Named::PrintScreen => keysym::PRINT,
            Named::Menu => keysym::MENU,
            Named::NumLock => keysym::NUM_LOCK,
            Named::ScrollLock => keysym::SCROLL_LOCK,
            Named::Pause => keysym::PAUSE,
        },
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
    let mut tokens = Vec::new();
    for key in &chord.0 {
        let token = match *key {
            Key::Modifier(_) => continue,
            Key::Char(ch) => KeyToken::Char { ch, mods },
            Key::Named(named) => {
                let (key, extra) = match named {
                    Named::Enter => (NamedKey::Enter, Modifiers::NONE),
                    Named::Escape => (NamedKey::Escape, Modifiers::NONE),
                    Named::Tab => (NamedKey::Tab, Modifiers::NONE),
                    Named::Space => {
                        tokens.push(KeyToken::Char { ch: ' ', mods });
                        continue;
                    }
                    Named::Backspace => (NamedKey::Backspace, Modifiers::NONE),
                    Named::Delete => (NamedKey::Delete, Modifiers::NONE),
                    Named::Insert => (NamedKey::Insert, Modifiers::NONE),
                    Named::Up => (NamedKey::Up, Modifiers::NONE),
                    Named::Down => (NamedKey::Down, Modifiers::NONE),
                    Named::Left => (NamedKey::Left, Modifiers::NONE),
                    Named::Right => (NamedKey::Right, Modifiers::NONE),
                    Named::Home => (NamedKey::Home, Modifiers::NONE),
                    Named::End => (NamedKey::End, Modifiers::NONE),
                    Named::PageUp => (NamedKey::PageUp, Modifiers::NONE),
                    Named::PageDown => (NamedKey::PageDown, Modifiers::NONE),
                    Named::F(n @ 1..=12) => (NamedKey::F(n), Modifiers::NONE),
                    // xterm sends F13-F24 as shifted F1-F12.
                    Named::F(n) => (NamedKey::F(n - 12), Modifiers::SHIFT),
                    other => {
                        return Err(OpError::invalid(
                            field,
                            format!(
                            "{other:?} has no terminal encoding; it works on desktop sessions only"
                        ),
                        ))
                    }
                };
                KeyToken::Named {
                    key,
                    mods: mods.with(extra),
                }
            }
        };
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
            ("RETURN", Named(super::Named::Enter)),
            ("esc", Named(super::Named::Escape)),
            ("ArrowLeft", Named(super::Named::Left)),
            ("Page_Down", Named(super::Named::PageDown)),
            ("PGUP", Named(super::Named::PageUp)),
            ("F24", Named(super::Named::F(24))),
            ("A", Char('a')),
            ("é", Char('é')),
            ("/", Char('/')),
            ("plus", Char('+')),
            (" ", Named(super::Named::Space)),
            ("\n", Named(super::Named::Enter)),
            ("\t", Named(super::Named::Tab)),
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
                key: NamedKey::F(1),
                mods: Modifiers::SHIFT
            }]
        );
        assert!(terminal_tokens(&chord(&["CTRL"]), "keys").is_err());
        assert!(terminal_tokens(&chord(&["PRINTSCREEN"]), "keys").is_err());
    }

    #[test]
    fn keys_map_to_keysyms() {
        assert_eq!(keysym_of(Key::Char('a')), Some(0x61));
        assert_eq!(keysym_of(Key::Named(Named::F(1))), Some(0xffbe));
        assert_eq!(
            keysym_of(Key::Modifier(Modifier::Super)),
            Some(keysym::SUPER_L)
        );
    }
}
