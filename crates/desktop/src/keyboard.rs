//! The display's keyboard map, as far as typing needs it: which keycode (and shift level) produces a
//! keysym, which keycodes are modifiers, and spare keycodes to put missing keysyms on.
//!
//! A character the keymap lacks ("é", "✓", "日" on a US map) is typed by mapping its keysym onto a
//! spare keycode (one with no symbols) with ChangeKeyboardMapping, then pressing that keycode.
//!
//! Why borrowed keycodes are not restored right after the key press: an Xlib client looks keysyms up
//! lazily. When it receives MappingNotify it only forgets its copy of the map, and fetches the map again
//! when it next translates a key event, which can be after we restored the keycode: it would then read
//! "nothing" for the key we pressed. So a borrowed keycode keeps its keysym until the keycode is needed
//! for another character (least recently used first), and every borrowed keycode is restored when the
//! desktop closes. When one text needs more missing characters than there are spare keycodes (about 20
//! on Xvfb), typing pauses before reusing one until the screen has been still for 50 ms, so clients have
//! read the keys typed so far: 120 distinct CJK characters reach xterm intact that way. A client that
//! does not read its events for longer than that could still misread a reused keycode.

use std::collections::{HashMap, HashSet, VecDeque};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::error::{DesktopError, Result};
use crate::keysym::{self, Keysym};

/// The four modifiers a chord can hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Modifier {
    Shift,
    Ctrl,
    Alt,
    Super,
}

impl Modifier {
    /// Keysyms that act as this modifier, the usual one first.
    pub(crate) fn keysyms(self) -> &'static [Keysym] {
        match self {
            Modifier::Shift => &[keysym::SHIFT_L, keysym::SHIFT_R],
            Modifier::Ctrl => &[keysym::CONTROL_L, keysym::CONTROL_R],
            Modifier::Alt => &[keysym::ALT_L, keysym::ALT_R, keysym::META_L],
            Modifier::Super => &[keysym::SUPER_L, keysym::SUPER_R],
        }
    }

    pub fn of_keysym(keysym: Keysym) -> Option<Modifier> {
        [
            Modifier::Shift,
            Modifier::Ctrl,
            Modifier::Alt,
            Modifier::Super,
        ]
        .into_iter()
        .find(|m| m.keysyms().contains(&keysym))
    }
}

pub(crate) struct Keyboard {
    min: u8,
    max: u8,
    per_keycode: usize,
    /// keysyms[(keycode - min) * per_keycode + column]
    keysyms: Vec<Keysym>,
    /// Every keycode that is bound to some modifier bit.
    modifier_keycodes: HashSet<u8>,
    /// The modifier bit NumLock sets (Mod2 on most maps), if a Num_Lock key is bound to one.
    numlock_mask: Option<u16>,
    /// Keycodes with no symbols when we first looked, least recently used first.
    spare: VecDeque<u8>,
    /// What we put on spare keycodes.
    borrowed: HashMap<u8, Keysym>,
    /// Borrowed during the current burst of typing: not to be reused until the display settles.
    recent: HashSet<u8>,
}

impl Keyboard {
    pub fn load(conn: &RustConnection) -> Result<Keyboard> {
        let setup = conn.setup();
        let (min, max) = (setup.min_keycode, setup.max_keycode);
        let mut keyboard = Keyboard {
            min,
            max,
            per_keycode: 0,
            keysyms: Vec::new(),
            modifier_keycodes: HashSet::new(),
            numlock_mask: None,
            spare: VecDeque::new(),
            borrowed: HashMap::new(),
            recent: HashSet::new(),
        };
        keyboard.reload(conn)?;
        keyboard.spare = (min..=max)
            .filter(|kc| keyboard.row(*kc).iter().all(|ks| *ks == 0))
            .filter(|kc| !keyboard.modifier_keycodes.contains(kc))
            .collect();
        Ok(keyboard)
    }

    /// Read the map again (after a MappingNotify). A spare keycode someone else mapped meanwhile stops
    /// being spare.
    pub fn reload(&mut self, conn: &RustConnection) -> Result<()> {
        let count = self.max - self.min + 1;
        let map = conn.get_keyboard_mapping(self.min, count)?.reply()?;
        self.per_keycode = usize::from(map.keysyms_per_keycode).max(1);
        self.keysyms = map.keysyms;
        let mods = conn.get_modifier_mapping()?.reply()?;
        let per_modifier = usize::from(mods.keycodes_per_modifier()).max(1);
        self.numlock_mask = self.find(keysym::NUM_LOCK).and_then(|(numlock, _)| {
            let index = mods.keycodes.iter().position(|kc| *kc == numlock)? / per_modifier;
            (index < 8).then(|| 1u16 << index)
        });
        self.modifier_keycodes = mods.keycodes.into_iter().filter(|kc| *kc != 0).collect();
        let taken: Vec<u8> = self
            .spare
            .iter()
            .copied()
            .filter(|kc| {
                let first = self.row(*kc).first().copied().unwrap_or(0);
                match self.borrowed.get(kc) {
                    Some(ours) => first != *ours && first != 0,
                    None => first != 0,
                }
            })
            .collect();
        self.spare.retain(|kc| !taken.contains(kc));
        for kc in taken {
            self.borrowed.remove(&kc);
        }
        Ok(())
    }

    fn row(&self, keycode: u8) -> &[Keysym] {
        let start = usize::from(keycode - self.min) * self.per_keycode;
        self.keysyms
            .get(start..start + self.per_keycode)
            .unwrap_or(&[])
    }

    /// The keycode producing `keysym` in group 1, and whether Shift is needed for it.
    pub fn find(&self, keysym: Keysym) -> Option<(u8, bool)> {
        for (column, shift) in [(0, false), (1, true)] {
            let found = (self.min..=self.max).find(|kc| self.row(*kc).get(column) == Some(&keysym));
            if let Some(kc) = found {
                return Some((kc, shift));
            }
        }
        None
    }

    /// The modifier bit NumLock sets, if the keymap binds a Num_Lock key to one.
    pub fn numlock_mask(&self) -> Option<u16> {
        self.numlock_mask
    }

    /// Is this a keypad key with a different keypad symbol on each level (KP_End / KP_1)? NumLock
    /// picks the level of such a key. Shift is meant to invert that, but does not on every keymap
    /// (Xvfb's gives Shift+KP_End, not KP_1), so a level NumLock does not give is typed from a
    /// keycode of its own instead.
    pub fn is_numlock_sensitive(&self, keycode: u8) -> bool {
        let row = self.row(keycode);
        row.first().is_some_and(|k| keysym::is_keypad(*k))
            && row
                .get(1)
                .is_some_and(|k| keysym::is_keypad(*k) && row.first() != Some(k))
    }

    /// The keycode of a modifier key that really sets its modifier bit.
    pub fn modifier(&self, modifier: Modifier) -> Result<u8> {
        modifier
            .keysyms()
            .iter()
            .filter_map(|ks| self.find(*ks))
            .map(|(kc, _)| kc)
            .find(|kc| self.modifier_keycodes.contains(kc))
            .ok_or_else(|| {
                DesktopError::Protocol(format!(
                    "this display's keymap has no {modifier:?} key bound to a modifier"
                ))
            })
    }

    /// Would borrowing a keycode now take one used earlier in this burst of typing?
    pub fn must_settle_before_borrowing(&self) -> bool {
        self.spare
            .front()
            .is_some_and(|kc| self.recent.contains(kc))
    }

    /// The display settled: every client has read the keys typed so far.
    pub fn settled(&mut self) {
        self.recent.clear();
    }

    /// A keycode for `keysym`, mapping it onto a spare keycode when the keymap lacks it. Returns the
    /// keycode and whether Shift is needed.
    pub fn ensure(&mut self, conn: &RustConnection, keysym: Keysym) -> Result<(u8, bool)> {
        if let Some(found) = self.find(keysym) {
            if let Some(pos) = self.spare.iter().position(|kc| *kc == found.0) {
                // Ours: mark it recently used.
                self.spare.remove(pos);
                self.spare.push_back(found.0);
                self.recent.insert(found.0);
            }
            return Ok(found);
        }
        self.borrow(conn, keysym)
    }

    /// Put `keysym` on a spare keycode of its own (both levels), even if another key has it; for a
    /// key whose level the modifiers cannot pick reliably. Returns the keycode (no Shift needed).
    pub fn borrow(&mut self, conn: &RustConnection, keysym: Keysym) -> Result<(u8, bool)> {
        let Some(keycode) = self.spare.pop_front() else {
            return Err(DesktopError::Protocol(format!(
                "no spare keycode to put keysym {keysym:#x} on; this keymap uses every keycode"
            )));
        };
        conn.change_keyboard_mapping(1, keycode, 2, &[keysym, keysym])?;
        let start = usize::from(keycode - self.min) * self.per_keycode;
        for column in 0..self.per_keycode {
            if let Some(slot) = self.keysyms.get_mut(start + column) {
                *slot = if column < 2 { keysym } else { 0 };
            }
        }
        self.borrowed.insert(keycode, keysym);
        self.spare.push_back(keycode);
        self.recent.insert(keycode);
        Ok((keycode, false))
    }

    /// Put every borrowed keycode back to no symbols.
    pub fn restore(&mut self, conn: &RustConnection) -> Result<()> {
        let borrowed: Vec<u8> = self.borrowed.drain().map(|(keycode, _)| keycode).collect();
        for keycode in borrowed {
            conn.change_keyboard_mapping(1, keycode, 1, &[0])?;
            let start = usize::from(keycode - self.min) * self.per_keycode;
            for column in 0..self.per_keycode {
                if let Some(slot) = self.keysyms.get_mut(start + column) {
                    *slot = 0;
                }
            }
        }
        conn.flush()?;
        Ok(())
    }
}
