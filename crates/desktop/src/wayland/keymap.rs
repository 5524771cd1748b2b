//! The keymap screenpilot's virtual keyboard uploads: one key per keysym, each with a single level,
//! as wtype does. Any keysym can be typed by giving it a key, so "é", "✓" or "日" need no Shift and
//! no layout. Typing first adds the keysyms the text needs (the keymap is uploaded again); keycodes
//! stay within X's 8-255, so clients under Xwayland read them too, and when they run out the map
//! starts again from its base.
//!
//! Why replacing the map mid-text is safe (unlike X11's ChangeKeyboardMapping, see
//! `crate::keyboard`): the compositor sends a client the new map on its keyboard, in order with the
//! keys, so keys typed before the change are read with the old map.

use crate::keyboard::Modifier;
use crate::keysym::{self, Keysym};

/// Evdev codes are X keycodes minus 8; the first key is X keycode 9 (evdev 1).
const FIRST_KEYCODE: u32 = 9;
/// X keycodes end at 255.
const MAX_KEYS: usize = 255 - FIRST_KEYCODE as usize + 1;

/// The four modifiers, in the order the base map holds them (and their real modifier masks).
const MODIFIERS: [(Modifier, Keysym, &str, u32); 4] = [
    (Modifier::Shift, keysym::SHIFT_L, "Shift", 1),
    (Modifier::Ctrl, keysym::CONTROL_L, "Control", 1 << 2),
    (Modifier::Alt, keysym::ALT_L, "Mod1", 1 << 3),
    (Modifier::Super, keysym::SUPER_L, "Mod4", 1 << 6),
];

/// Keysym to key, for the keymap we uploaded last (or will upload next).
#[derive(Debug, Clone)]
pub(crate) struct Keymap {
    keysyms: Vec<Keysym>,
}

impl Keymap {
    /// The modifiers, the editing keys and printable ASCII: most typing needs no other upload.
    pub fn new() -> Keymap {
        Keymap { keysyms: base() }
    }

    /// The evdev code of the key that types `keysym`.
    pub fn key(&self, keysym: Keysym) -> Option<u32> {
        self.keysyms
            .iter()
            .position(|k| *k == keysym)
            .map(|i| i as u32 + FIRST_KEYCODE - 8)
    }

    /// The evdev code and modifier mask of a modifier's key.
    pub fn modifier(&self, modifier: Modifier) -> (u32, u32) {
        let (_, keysym, _, mask) = MODIFIERS
            .iter()
            .find(|(m, ..)| *m == modifier)
            .copied()
            .unwrap_or(MODIFIERS[0]);
        // The base map, which every map starts from, holds the modifiers first.
        (self.key(keysym).unwrap_or(1), mask)
    }

    /// The modifier mask of `key` when it is a modifier's key.
    pub fn modifier_mask(&self, key: u32) -> Option<u32> {
        MODIFIERS
            .iter()
            .find(|(_, keysym, ..)| self.key(*keysym) == Some(key))
            .map(|(.., mask)| *mask)
    }

    /// Give keys to as many of `wanted` as lack one, in order; when the keycodes run out, start again
    /// from the base map. Returns how many of `wanted` now have a key (the first ones), so a caller
    /// types those and comes back for the rest; the map changed when some had none.
    pub fn ensure(&mut self, wanted: &[Keysym]) -> (usize, bool) {
        let mut changed = false;
        let mut restarted = false;
        for (i, ks) in wanted.iter().enumerate() {
            if self.key(*ks).is_some() {
                continue;
            }
            if self.keysyms.len() == MAX_KEYS {
                if restarted || changed {
                    // Type what fits with this map first.
                    return (i, changed);
                }
                self.keysyms = base();
                restarted = true;
                if self.key(*ks).is_some() {
                    changed = true;
                    continue;
                }
            }
            self.keysyms.push(*ks);
            changed = true;
        }
        (wanted.len(), changed)
    }

    /// The keymap in XKB's text format (`XKB_KEYMAP_FORMAT_TEXT_V1`).
    pub fn text(&self) -> String {
        let mut out = String::from("xkb_keymap {\nxkb_keycodes \"screenpilot\" {\n");
        out.push_str(&format!("minimum = 8;\nmaximum = {};\n", 255));
        for i in 0..self.keysyms.len() {
            let code = i as u32 + FIRST_KEYCODE;
            out.push_str(&format!("<K{code}> = {code};\n"));
        }
        out.push_str("};\n");
        out.push_str("xkb_types \"screenpilot\" { include \"complete\" };\n");
        out.push_str("xkb_compatibility \"screenpilot\" { include \"complete\" };\n");
        out.push_str("xkb_symbols \"screenpilot\" {\n");
        for (i, ks) in self.keysyms.iter().enumerate() {
            let code = i as u32 + FIRST_KEYCODE;
            out.push_str(&format!("key <K{code}> {{ [ {} ] }};\n", name(*ks)));
        }
        for (_, ks, map, _) in MODIFIERS {
            if let Some(key) = self.key(ks) {
                out.push_str(&format!("modifier_map {map} {{ <K{}> }};\n", key + 8));
            }
        }
        out.push_str("};\n};\n");
        out
    }
}

fn base() -> Vec<Keysym> {
    let mut keysyms: Vec<Keysym> = MODIFIERS.iter().map(|(_, ks, ..)| *ks).collect();
    keysyms.extend([
        keysym::RETURN,
        keysym::TAB,
        keysym::BACKSPACE,
        keysym::ESCAPE,
        keysym::DELETE,
        keysym::LEFT,
        keysym::UP,
        keysym::RIGHT,
        keysym::DOWN,
        keysym::HOME,
        keysym::END,
        keysym::PAGE_UP,
        keysym::PAGE_DOWN,
    ]);
    keysyms.extend(0x20..=0x7e);
    keysyms
}

/// A keysym as XKB's symbols section spells it: its name, `U2713` for an unnamed Unicode keysym,
/// else its number.
fn name(ks: Keysym) -> String {
    if let Some(name) = keysym::name(ks) {
        // Digits are numbers to XKB's parser; it reads 0-9 as the digit keysyms.
        return name.to_owned();
    }
    if let Some(c) = keysym::to_char(ks) {
        return format!("U{:04X}", u32::from(c));
    }
    format!("{ks:#x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_map_types_ascii_and_holds_the_modifiers() {
        let map = Keymap::new();
        assert_eq!(map.modifier(Modifier::Shift), (1, 1));
        assert_eq!(map.modifier(Modifier::Super), (4, 64));
        let a = map.key(u32::from('a')).expect("a key for a");
        let text = map.text();
        assert!(
            text.contains(&format!("key <K{}> {{ [ a ] }};", a + 8)),
            "{text}"
        );
        assert!(text.contains("modifier_map Control { <K10> };"), "{text}");
        assert!(text.contains("key <K9> { [ Shift_L ] };"), "{text}");
    }

    #[test]
    fn missing_keysyms_get_keys_named_as_xkb_reads_them() {
        let mut map = Keymap::new();
        let wanted = keysym::for_text("é✓日").unwrap();
        assert_eq!(map.ensure(&wanted), (3, true));
        assert_eq!(map.ensure(&wanted), (3, false));
        let text = map.text();
        assert!(text.contains("[ eacute ]"), "{text}");
        assert!(text.contains("[ U2713 ]"), "{text}");
        assert!(text.contains("[ U65E5 ]"), "{text}");
        assert!(map.key(wanted[2]).is_some());
    }

    #[test]
    fn running_out_of_keycodes_starts_again_from_the_base_and_types_in_parts() {
        let mut map = Keymap::new();
        let many: Vec<Keysym> = ('一'..='\u{4f00}')
            .map(|c| keysym::for_char(c).unwrap())
            .collect();
        let (fits, changed) = map.ensure(&many);
        assert!(changed && fits > 100 && fits < many.len());
        assert!(map.key(many[0]).is_some());
        let (more, changed) = map.ensure(&many[fits..]);
        assert!(changed && more > 100, "{more}");
        assert!(map.key(many[0]).is_none(), "the map started again");
        assert!(map.key(many[fits]).is_some() && map.key(u32::from('a')).is_some());
        assert!(map.text().lines().filter(|l| l.starts_with("key ")).count() <= MAX_KEYS);
    }
}
