//! X keysyms: the names X gives to what a key produces. Only the ones screenpilot presses by name are
//! here; any character maps to a keysym through [`for_char`] (Latin-1 directly, everything else through
//! the Unicode range `0x0100_0000 + code point`).

pub type Keysym = u32;

pub const BACKSPACE: Keysym = 0xff08;
pub const TAB: Keysym = 0xff09;
pub const RETURN: Keysym = 0xff0d;
pub const PAUSE: Keysym = 0xff13;
pub const SCROLL_LOCK: Keysym = 0xff14;
pub const ESCAPE: Keysym = 0xff1b;
pub const HOME: Keysym = 0xff50;
pub const LEFT: Keysym = 0xff51;
pub const UP: Keysym = 0xff52;
pub const RIGHT: Keysym = 0xff53;
pub const DOWN: Keysym = 0xff54;
pub const PAGE_UP: Keysym = 0xff55;
pub const PAGE_DOWN: Keysym = 0xff56;
pub const END: Keysym = 0xff57;
pub const PRINT: Keysym = 0xff61;
pub const INSERT: Keysym = 0xff63;
pub const MENU: Keysym = 0xff67;
pub const NUM_LOCK: Keysym = 0xff7f;
pub const F1: Keysym = 0xffbe;
pub const SHIFT_L: Keysym = 0xffe1;
pub const SHIFT_R: Keysym = 0xffe2;
pub const CONTROL_L: Keysym = 0xffe3;
pub const CONTROL_R: Keysym = 0xffe4;
pub const CAPS_LOCK: Keysym = 0xffe5;
pub const META_L: Keysym = 0xffe7;
pub const ALT_L: Keysym = 0xffe9;
pub const ALT_R: Keysym = 0xffea;
pub const SUPER_L: Keysym = 0xffeb;
pub const SUPER_R: Keysym = 0xffec;
pub const DELETE: Keysym = 0xffff;
pub const SPACE: Keysym = 0x20;

/// Where Unicode keysyms start: the keysym of code point `c` is `UNICODE_BASE + c`.
const UNICODE_BASE: Keysym = 0x0100_0000;

/// Function key `n` (1-35, as X defines them).
pub fn function_key(n: u8) -> Option<Keysym> {
    (1..=35).contains(&n).then(|| F1 + Keysym::from(n) - 1)
}

/// The keysym that types `c`, or `None` for control characters other than newline, tab, backspace
/// and escape (which are keys, not text).
pub fn for_char(c: char) -> Option<Keysym> {
    let code = u32::from(c);
    match c {
        '\n' | '\r' => Some(RETURN),
        '\t' => Some(TAB),
        '\u{8}' => Some(BACKSPACE),
        '\u{1b}' => Some(ESCAPE),
        ' '..='~' | '\u{a0}'..='\u{ff}' => Some(code),
        c if c.is_control() => None,
        _ => Some(UNICODE_BASE + code),
    }
}

/// The keysyms that type `text`, one per character ("\r\n" is one Return, like "\n"); or the
/// position and value of the first character no key types (a control character).
pub fn for_text(text: &str) -> Result<Vec<Keysym>, (usize, char)> {
    let mut keysyms = Vec::with_capacity(text.len());
    let mut chars = text.chars().enumerate().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\r' && chars.peek().is_some_and(|(_, next)| *next == '\n') {
            continue;
        }
        keysyms.push(for_char(c).ok_or((i, c))?);
    }
    Ok(keysyms)
}

/// The character a keysym types, for the keysyms [`for_char`] produces (and Return, Tab).
pub fn to_char(keysym: Keysym) -> Option<char> {
    match keysym {
        RETURN => Some('\n'),
        TAB => Some('\t'),
        0x20..=0x7e | 0xa0..=0xff => char::from_u32(keysym),
        k if (UNICODE_BASE + 0x100..=UNICODE_BASE + 0x10_ffff).contains(&k) => {
            char::from_u32(k - UNICODE_BASE)
        }
        _ => None,
    }
}

/// Is this keysym a modifier key (shift, control, alt, super and friends)?
pub fn is_modifier(keysym: Keysym) -> bool {
    (SHIFT_L..=0xffee).contains(&keysym)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_map_to_keysyms_and_back() {
        for c in [
            'a', 'Z', ' ', '~', 'é', 'ÿ', '✓', '日', '本', '😀', '\n', '\t',
        ] {
            let keysym = for_char(c).expect("typeable");
            assert_eq!(to_char(keysym), Some(c), "{c:?} -> {keysym:#x}");
        }
        assert_eq!(for_char('é'), Some(0xe9));
        assert_eq!(for_char('✓'), Some(0x0100_2713));
        assert_eq!(for_char('\u{7}'), None);
    }

    #[test]
    fn text_is_checked_whole_and_crlf_is_one_return() {
        assert_eq!(
            for_text("a\r\nb\rc"),
            Ok(vec![0x61, RETURN, 0x62, RETURN, 0x63])
        );
        assert_eq!(for_text("ok\u{7}no"), Err((2, '\u{7}')));
    }

    #[test]
    fn function_keys_run_from_f1_to_f35() {
        assert_eq!(function_key(1), Some(0xffbe));
        assert_eq!(function_key(24), Some(0xffd5));
        assert_eq!(function_key(0), None);
        assert_eq!(function_key(36), None);
    }

    #[test]
    fn modifiers_are_recognised() {
        assert!(is_modifier(CONTROL_L) && is_modifier(SUPER_L) && is_modifier(SHIFT_R));
        assert!(!is_modifier(RETURN) && !is_modifier(0x61));
    }
}
