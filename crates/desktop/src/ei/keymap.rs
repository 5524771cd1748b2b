//! The compositor's keymap, read backwards: which key, with which modifier keys held, types a
//! keysym. On EI the keymap is the server's (the `ei_keyboard.keymap` event) and a client cannot
//! replace it, unlike our wlroots virtual keyboard (`crate::wayland` uploads one key per keysym). So a
//! character is typed with the key the user's layout has for it ("é" on a French layout is one key;
//! on US international it is AltGr+e), and a character the layout lacks cannot be typed at all.
//!
//! The map is parsed with kbvm (no include paths, no environment: the server sends it complete) and
//! looked up as a client would read the keys back: for the current group and locked modifiers
//! (Caps Lock on, "a" is typed with Shift), each key under each modifier combination the key types
//! know, fewest modifiers first, lowest keycode first. A modifier is pressed through a key whose
//! action sets it (`SetMods`: Shift_L for Shift, ISO_Level3_Shift for AltGr's Mod5).

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;

use kbvm::lookup::LookupTable;
use kbvm::xkb::diagnostic::{Diagnostic, DiagnosticHandler, DiagnosticKind};
use kbvm::xkb::keymap::Action;
use kbvm::{GroupIndex, Keycode, ModifierMask};

use crate::error::{DesktopError, Result};
use crate::keyboard::Modifier;
use crate::keysym::Keysym;

/// A keymap larger than this is refused (a US map is about 60 KiB of text).
const MAX_KEYMAP_BYTES: u32 = 16 << 20;

/// The XKB names of the modifier keys keyboards have, preferred to press a modifier with.
const PHYSICAL: [&str; 8] = [
    "LFSH", "RTSH", "LCTL", "RCTL", "LALT", "RALT", "LWIN", "RWIN",
];

/// How to type one keysym: hold `modifiers` (evdev codes, in order), press and release `key`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Press {
    pub key: u32,
    pub modifiers: Vec<u32>,
}

/// The server's keymap, and its reverse for the modifier state it was last built for.
pub(crate) struct ServerKeymap {
    table: LookupTable,
    /// Keycodes of the map, ascending.
    keycodes: Vec<Keycode>,
    /// Modifier masks the key types map to a level, fewest modifiers first.
    masks: Vec<u32>,
    /// For each real modifier (Shift, Lock, Control, Mod1-5), the evdev code of a key that sets it.
    modifier_keys: [Option<u32>; 8],
    reverse: HashMap<Keysym, Press>,
    /// The (locked modifiers, group) `reverse` was built for.
    built_for: Option<(u32, u32)>,
}

impl ServerKeymap {
    /// Read the keymap the server sent (`size` bytes, usually ending in a NUL) and parse it.
    pub fn read(fd: OwnedFd, size: u32) -> Result<ServerKeymap> {
        if size > MAX_KEYMAP_BYTES {
            return Err(DesktopError::Eis(format!(
                "the keyboard's keymap is {size} bytes; more than {MAX_KEYMAP_BYTES} is refused"
            )));
        }
        let file = std::fs::File::from(fd);
        let mut text = vec![0; size as usize];
        file.read_exact_at(&mut text, 0).map_err(|e| {
            DesktopError::Eis(format!("the keyboard's keymap could not be read: {e}"))
        })?;
        while text.last() == Some(&0) {
            text.pop();
        }
        ServerKeymap::parse(&text)
    }

    /// Parse a keymap in XKB's text format.
    pub fn parse(text: &[u8]) -> Result<ServerKeymap> {
        let mut context = kbvm::xkb::Context::builder();
        context.enable_default_includes(false);
        context.enable_environment(false);
        // Only a fatal error stops the parse; what kbvm reports besides (a keysym name it does
        // not know) leaves the rest of the map usable, as xkbcommon would.
        let keymap = context
            .build()
            .keymap_from_bytes(NotFatal, None, text)
            .map_err(|e| {
                DesktopError::Eis(format!("the keyboard's keymap cannot be parsed: {e}"))
            })?;
        let mut keycodes = Vec::new();
        let mut masks = vec![0];
        // For each real modifier: (not a key of a real keyboard, keycode) of the keys setting it.
        let mut setters: [Vec<(bool, Keycode)>; 8] = Default::default();
        for key in keymap.keys() {
            keycodes.push(key.keycode());
            for group in key.groups().flatten() {
                masks.extend(group.ty().mappings().map(|m| m.mask().0 & 0xff));
            }
            let base = key
                .groups()
                .flatten()
                .next()
                .and_then(|g| g.levels().next());
            for action in base.map(|level| level.actions()).unwrap_or_default() {
                if let Action::ModsSet(set) = action {
                    for (bit, found) in setters.iter_mut().enumerate() {
                        if set.mask().0 & (1 << bit) != 0 {
                            found.push((!PHYSICAL.contains(&key.name()), key.keycode()));
                        }
                    }
                }
            }
        }
        // A key a keyboard has (RALT for AltGr) rather than a map's virtual one (LVL3).
        let modifier_keys = setters.map(|found| found.iter().min().map(|(_, kc)| kc.to_evdev()));
        keycodes.sort();
        masks.sort_by_key(|m| (m.count_ones(), *m));
        masks.dedup();
        // Only combinations we can hold down.
        masks.retain(|m| (0..8).all(|bit| m & (1 << bit) == 0 || modifier_keys[bit].is_some()));
        Ok(ServerKeymap {
            table: keymap.to_builder().build_lookup_table(),
            keycodes,
            masks,
            modifier_keys,
            reverse: HashMap::new(),
            built_for: None,
        })
    }

    /// How to type `keysym` with the keyboard's modifiers `locked` and `group` as the server last
    /// said; `None` when no key of the map types it.
    pub fn press(&mut self, keysym: Keysym, locked: u32, group: u32) -> Option<Press> {
        if self.built_for != Some((locked, group)) {
            self.build(locked, group);
        }
        self.reverse.get(&keysym).cloned()
    }

    /// The key of a modifier (its left key when the map has both), pressed on its own.
    pub fn modifier(&mut self, modifier: Modifier, locked: u32, group: u32) -> Option<u32> {
        modifier
            .keysyms()
            .iter()
            .filter_map(|ks| self.press(*ks, locked, group))
            .find(|press| press.modifiers.is_empty())
            .map(|press| press.key)
    }

    fn build(&mut self, locked: u32, group: u32) {
        self.reverse.clear();
        for mask in &self.masks {
            let mods = ModifierMask(mask | locked);
            for keycode in &self.keycodes {
                let lookup = self
                    .table
                    .lookup(GroupIndex(group), mods, *keycode)
                    .with_ctrl_transform(false);
                let mut keysyms = lookup.into_iter();
                let (Some(only), None) = (keysyms.next(), keysyms.next()) else {
                    continue;
                };
                self.reverse
                    .entry(only.keysym().0)
                    .or_insert_with(|| Press {
                        key: keycode.to_evdev(),
                        modifiers: (0..8)
                            .filter(|bit| mask & (1 << bit) != 0)
                            .filter_map(|bit| self.modifier_keys[bit])
                            .collect(),
                    });
            }
        }
        self.built_for = Some((locked, group));
    }
}

/// Drops kbvm's diagnostics that are not fatal (a fatal one comes back as the parse's error).
struct NotFatal;

impl DiagnosticHandler for NotFatal {
    fn filter(&self, _kind: DiagnosticKind, is_fatal: bool) -> bool {
        is_fatal
    }

    fn handle(&mut self, _diagnostic: Diagnostic) {}
}
