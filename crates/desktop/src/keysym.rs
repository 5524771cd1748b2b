//! X keysyms: the names X gives to what a key produces. The constants here are the ones screenpilot
//! presses itself; any other key is found by its X name through [`by_name`], which reads the complete
//! table of xkbcommon (through `kbvm`): every name of `keysymdef.h` and `XF86keysym.h`, their aliases,
//! `U+XXXX`-style `U20AC` and raw `0x1008ff12`, so every name `xdotool key` accepts works. Any
//! character maps to a keysym through [`for_char`] (Latin-1 directly, everything else through the
//! Unicode range `0x0100_0000 + code point`).

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
pub const KP_SPACE: Keysym = 0xff80;
pub const KP_ENTER: Keysym = 0xff8d;
pub const KP_EQUAL: Keysym = 0xffbd;
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

/// The keysym with this X name: the exact name first (`KP_Enter`, `KP_0`, `XF86AudioMute`,
/// `adiaeresis`, `A` is not `a`), then the same name in any case (`kp_enter`, `return`). Also `U20AC`
/// (a code point) and `0xff8d` (a raw keysym). `None` for an unknown name and for `NoSymbol`.
pub fn by_name(name: &str) -> Option<Keysym> {
    let found =
        kbvm::Keysym::from_str(name).or_else(|| kbvm::Keysym::from_str_insensitive(name))?;
    // 0 is NoSymbol; keysyms are 29-bit values.
    (found.0 != 0 && found.0 <= 0x1fff_ffff).then_some(found.0)
}

/// The X name of a keysym (`KP_Enter`, `XF86AudioMute`), when it has one; for messages.
pub fn name(keysym: Keysym) -> Option<&'static str> {
    kbvm::Keysym(keysym).name()
}

/// Is this a key of the numeric keypad (`KP_Space` .. `KP_Equal`)? Which of its two symbols such a
/// key gives depends on NumLock as well as Shift.
pub fn is_keypad(keysym: Keysym) -> bool {
    (KP_SPACE..=KP_EQUAL).contains(&keysym)
}

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
    fn names_follow_x_exactly_then_any_case() {
        assert_eq!(by_name("KP_Enter"), Some(0xff8d));
        assert_ne!(by_name("KP_Enter"), by_name("Return"));
        assert_eq!(by_name("Return"), Some(RETURN));
        assert_eq!(by_name("KP_0"), Some(0xffb0));
        assert_eq!(by_name("KP_9"), Some(0xffb9));
        assert_eq!(by_name("KP_Add"), Some(0xffab));
        assert_eq!(by_name("KP_Subtract"), Some(0xffad));
        assert_eq!(by_name("XF86AudioMute"), Some(0x1008_ff12));
        assert_eq!(by_name("XF86_AudioMute"), Some(0x1008_ff12));
        assert_eq!(by_name("adiaeresis"), Some(0xe4));
        assert_eq!(by_name("Adiaeresis"), Some(0xc4));
        assert_eq!(by_name("a"), Some(0x61));
        assert_eq!(by_name("A"), Some(0x41));
        // Aliases: both names of one key.
        assert_eq!(by_name("Prior"), Some(PAGE_UP));
        assert_eq!(by_name("Page_Up"), Some(PAGE_UP));
        assert_eq!(by_name("Super_L"), Some(SUPER_L));
        assert_eq!(by_name("F24"), function_key(24));
        // Case-insensitive fallback.
        assert_eq!(by_name("kp_enter"), Some(0xff8d));
        assert_eq!(by_name("RETURN"), Some(RETURN));
        assert_eq!(by_name("xf86audiomute"), Some(0x1008_ff12));
        // Code points and raw values, as XStringToKeysym takes them.
        assert_eq!(by_name("U20AC"), Some(0x0100_20ac));
        assert_eq!(by_name("0xff8d"), Some(0xff8d));
        assert_eq!(by_name("no_such_key"), None);
        assert_eq!(by_name(""), None);
        assert_eq!(by_name("0x0"), None);
        assert_eq!(name(0xff8d), Some("KP_Enter"));
        assert!(is_keypad(0xff8d) && is_keypad(0xffb0) && !is_keypad(RETURN));
    }

    #[test]
    fn modifiers_are_recognised() {
        assert!(is_modifier(CONTROL_L) && is_modifier(SUPER_L) && is_modifier(SHIFT_R));
        assert!(!is_modifier(RETURN) && !is_modifier(0x61));
    }
}
