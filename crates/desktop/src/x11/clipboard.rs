//! Reading the desktop's selections (CLIPBOARD and PRIMARY) as X clients do, and the types both
//! sides of a transfer agree on. Setting them needs an owner that outlives the call: see
//! `clipboard_owner`.
//!
//! X keeps no clipboard contents: a selection is a promise by its *owner* (the program that copied)
//! to convert its data to a type when asked. Reading is asking: `ConvertSelection` to a window of
//! ours, then the owner writes a property on that window and says so with `SelectionNotify`. Data
//! larger than one request comes in pieces (INCR): the owner first writes the total size, then one
//! piece each time we delete the property, and an empty piece at the end. Every step waits for the
//! owner's event under a bound ([`ANSWER_TIMEOUT`], and the call's deadline), never by polling.
//!
//! The reading window is created for one read and destroyed after it, so a display we attached to
//! is left as it was.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    Atom, AtomEnum, ConnectionExt as _, CreateWindowAux, EventMask, Property, Window, WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;

use super::X11;
use crate::error::{DesktopError, Result};
use crate::gestures::Seat as _;

/// The most a selection may hold, read or set: larger contents are refused with an error.
pub const MAX_CLIP_BYTES: usize = 64 << 20;

/// How long one step of a transfer may take the selection's owner (its first answer, each piece).
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Which selection: CLIPBOARD (Ctrl+C / Ctrl+V) or PRIMARY (the last text selected; middle click
/// pastes it).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Selection {
    #[default]
    Clipboard,
    Primary,
}

impl Selection {
    /// The selection's X name.
    pub fn x_name(self) -> &'static str {
        match self {
            Selection::Clipboard => "CLIPBOARD",
            Selection::Primary => "PRIMARY",
        }
    }

    /// For messages: "the clipboard", "the primary selection".
    pub fn human(self) -> &'static str {
        match self {
            Selection::Clipboard => "the clipboard",
            Selection::Primary => "the primary selection",
        }
    }

    pub(crate) fn atom(self, atoms: &ClipAtoms) -> Atom {
        match self {
            Selection::Clipboard => atoms.clipboard,
            Selection::Primary => AtomEnum::PRIMARY.into(),
        }
    }
}

/// What to read from a selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum ClipKind {
    /// UTF-8 text (asked for as `UTF8_STRING`, `text/plain;charset=utf-8`, `STRING` or `TEXT`,
    /// whichever the owner offers first).
    #[serde(rename = "text")]
    Text,
    /// A PNG image (`image/png`), byte for byte as the owner gives it.
    #[serde(rename = "image/png")]
    Png,
}

impl ClipKind {
    /// The name callers use: "text", "image/png".
    pub fn name(self) -> &'static str {
        match self {
            ClipKind::Text => "text",
            ClipKind::Png => "image/png",
        }
    }
}

/// What a selection holds, or is set to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClipContent {
    Text(String),
    /// The bytes of a PNG file.
    Png(Vec<u8>),
}

impl ClipContent {
    pub fn kind(&self) -> ClipKind {
        match self {
            ClipContent::Text(_) => ClipKind::Text,
            ClipContent::Png(_) => ClipKind::Png,
        }
    }

    /// Its size in bytes (UTF-8 for text).
    pub fn len(&self) -> usize {
        match self {
            ClipContent::Text(text) => text.len(),
            ClipContent::Png(bytes) => bytes.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Refuse what cannot be offered: more than [`MAX_CLIP_BYTES`], or "PNG" bytes that are not a
    /// PNG file. `field` names the argument in errors.
    pub fn check(&self, field: &'static str) -> Result<()> {
        if self.len() > MAX_CLIP_BYTES {
            return Err(DesktopError::invalid(
                field,
                format!(
                    "{} bytes is more than the {} MiB a selection may hold",
                    self.len(),
                    MAX_CLIP_BYTES >> 20
                ),
            ));
        }
        if let ClipContent::Png(bytes) = self {
            let decoder = png::Decoder::new(std::io::Cursor::new(bytes.as_slice()));
            if let Err(e) = decoder.read_info() {
                return Err(DesktopError::invalid(
                    field,
                    format!("the image is not a PNG file ({e})"),
                ));
            }
        }
        Ok(())
    }
}

/// Type names that say how to talk about a selection rather than what it holds; left out when
/// telling a caller what a selection offers.
const META_TARGETS: &[&str] = &[
    "TARGETS",
    "TIMESTAMP",
    "MULTIPLE",
    "SAVE_TARGETS",
    "DELETE",
    "INSERT_SELECTION",
    "INSERT_PROPERTY",
];

/// The atoms of selection transfers, interned once per connection that needs them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClipAtoms {
    pub clipboard: Atom,
    pub targets: Atom,
    pub timestamp: Atom,
    pub multiple: Atom,
    pub incr: Atom,
    pub utf8_string: Atom,
    pub text: Atom,
    pub text_plain_utf8: Atom,
    pub text_plain: Atom,
    pub image_png: Atom,
    pub atom_pair: Atom,
    /// The property of our windows that transfers land in.
    pub transfer: Atom,
}

impl ClipAtoms {
    pub fn intern(conn: &RustConnection) -> Result<ClipAtoms> {
        let names: [&[u8]; 12] = [
            b"CLIPBOARD",
            b"TARGETS",
            b"TIMESTAMP",
            b"MULTIPLE",
            b"INCR",
            b"UTF8_STRING",
            b"TEXT",
            b"text/plain;charset=utf-8",
            b"text/plain",
            b"image/png",
            b"ATOM_PAIR",
            b"SCREENPILOT_SELECTION",
        ];
        let cookies = names
            .iter()
            .map(|name| conn.intern_atom(false, name))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut a = Vec::with_capacity(cookies.len());
        for cookie in cookies {
            a.push(cookie.reply()?.atom);
        }
        Ok(ClipAtoms {
            clipboard: a[0],
            targets: a[1],
            timestamp: a[2],
            multiple: a[3],
            incr: a[4],
            utf8_string: a[5],
            text: a[6],
            text_plain_utf8: a[7],
            text_plain: a[8],
            image_png: a[9],
            atom_pair: a[10],
            transfer: a[11],
        })
    }

    /// The types to ask for, best first, for `kind`.
    fn wanted(&self, kind: ClipKind) -> Vec<Atom> {
        match kind {
            ClipKind::Text => vec![
                self.utf8_string,
                self.text_plain_utf8,
                AtomEnum::STRING.into(),
                self.text,
                self.text_plain,
            ],
            ClipKind::Png => vec![self.image_png],
        }
    }
}

/// The largest piece one request may carry on this connection, without BIG-REQUESTS (what every
/// client can take in one property write); larger data goes INCR.
pub(crate) fn piece_size(conn: &RustConnection) -> usize {
    let core = usize::from(conn.setup().maximum_request_length) * 4;
    core.saturating_sub(64).clamp(4096, 256 * 1024)
}

/// The names of `atoms`, in order (one round trip).
pub(crate) fn atom_names(conn: &RustConnection, atoms: &[Atom]) -> Result<Vec<String>> {
    let cookies = atoms
        .iter()
        .map(|a| conn.get_atom_name(*a))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    let mut names = Vec::with_capacity(cookies.len());
    for cookie in cookies {
        match cookie.reply() {
            Ok(reply) => names.push(String::from_utf8_lossy(&reply.name).into_owned()),
            // An atom that does not exist (a broken owner's list): leave it out.
            Err(x11rb::errors::ReplyError::X11Error(_)) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(names)
}

/// One read: our window, and the selection being read.
struct Read {
    window: Window,
    selection: Selection,
    atoms: ClipAtoms,
}

/// What a finished conversion gave: the property's type and bytes.
struct Converted {
    type_: Atom,
    bytes: Vec<u8>,
}

impl X11 {
    /// The types the owner of `which` offers (its `TARGETS`, without the meta types such as
    /// `TARGETS` itself), or `None` when nobody owns it. An owner that does not answer `TARGETS`
    /// offers an empty list.
    pub fn clipboard_types(&mut self, which: Selection) -> Result<Option<Vec<String>>> {
        self.check_deadline("reading the selection's types")?;
        let atoms = ClipAtoms::intern(&self.conn)?;
        if self.selection_owner(which, &atoms)?.is_none() {
            return Ok(None);
        }
        let read = self.begin_read(which, atoms)?;
        let targets = self.targets(&read);
        let outcome = targets.and_then(|targets| {
            let names = atom_names(&self.conn, &targets.unwrap_or_default())?;
            Ok(names
                .into_iter()
                .filter(|n| !META_TARGETS.contains(&n.as_str()))
                .collect())
        });
        self.end_read(read)?;
        outcome.map(Some)
    }

    /// Read `which` as `kind`. Errors: nobody owns it ([`DesktopError::SelectionEmpty`]); its owner
    /// does not offer the type ([`DesktopError::TypeNotOffered`], listing what it offers); it
    /// refused or did not answer; more than [`MAX_CLIP_BYTES`].
    pub fn clipboard_get(&mut self, which: Selection, kind: ClipKind) -> Result<ClipContent> {
        self.check_deadline("reading the selection")?;
        let atoms = ClipAtoms::intern(&self.conn)?;
        let Some(owner) = self.selection_owner(which, &atoms)? else {
            return Err(DesktopError::SelectionEmpty {
                field: "selection",
                message: format!("nobody owns {} (nothing was copied)", which.human()),
            });
        };
        let read = self.begin_read(which, atoms)?;
        let outcome = self.read_as(&read, owner, kind);
        self.end_read(read)?;
        outcome
    }

    fn selection_owner(&self, which: Selection, atoms: &ClipAtoms) -> Result<Option<Window>> {
        let owner = self
            .conn
            .get_selection_owner(which.atom(atoms))?
            .reply()?
            .owner;
        Ok((owner != x11rb::NONE).then_some(owner))
    }

    fn begin_read(&self, selection: Selection, atoms: ClipAtoms) -> Result<Read> {
        let window = self.conn.generate_id()?;
        self.conn.create_window(
            0,
            window,
            self.root,
            -10,
            -10,
            1,
            1,
            0,
            WindowClass::INPUT_ONLY,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        Ok(Read {
            window,
            selection,
            atoms,
        })
    }

    fn end_read(&self, read: Read) -> Result<()> {
        self.conn.destroy_window(read.window)?;
        self.sync()
    }

    /// The owner's `TARGETS`, or `None` when it refused to say.
    fn targets(&mut self, read: &Read) -> Result<Option<Vec<Atom>>> {
        let Some(answer) = self.convert(read, read.atoms.targets)? else {
            return Ok(None);
        };
        if answer.bytes.len() % 4 != 0 {
            return Ok(None);
        }
        let atoms = answer
            .bytes
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .filter(|a| *a != x11rb::NONE)
            .collect();
        Ok(Some(atoms))
    }

    fn read_as(&mut self, read: &Read, owner: Window, kind: ClipKind) -> Result<ClipContent> {
        let wanted = read.atoms.wanted(kind);
        let offered = self.targets(read)?;
        // An owner that does not answer TARGETS (old programs) is asked for each type in turn.
        let candidates: Vec<Atom> = match &offered {
            Some(offered) => wanted
                .iter()
                .copied()
                .filter(|a| offered.contains(a))
                .collect(),
            None => wanted.clone(),
        };
        for target in candidates.iter().copied() {
            let Some(answer) = self.convert(read, target)? else {
                continue;
            };
            return Ok(match kind {
                ClipKind::Text => ClipContent::Text(decode_text(&answer)),
                ClipKind::Png => ClipContent::Png(answer.bytes),
            });
        }
        let holds = match &offered {
            Some(offered) => atom_names(&self.conn, offered)?
                .into_iter()
                .filter(|n| !META_TARGETS.contains(&n.as_str()))
                .collect(),
            None => Vec::new(),
        };
        let which = read.selection.human();
        let message = if offered.is_none() {
            format!(
                "{which}'s owner (window {owner:#x}) refused to give {} and does not say what it offers",
                kind.name()
            )
        } else if !candidates.is_empty() {
            format!(
                "{which}'s owner (window {owner:#x}) offers {} but refused to give it",
                kind.name()
            )
        } else if holds.is_empty() {
            format!("{which} offers no content types, not {}", kind.name())
        } else {
            format!("{which} holds {}, not {}", holds.join(", "), kind.name())
        };
        Err(DesktopError::TypeNotOffered {
            field: "type",
            message,
            offered: holds,
        })
    }

    /// Ask the owner to convert the selection to `target` and collect the answer (INCR included).
    /// `None` when the owner refused.
    fn convert(&mut self, read: &Read, target: Atom) -> Result<Option<Converted>> {
        let property = read.atoms.transfer;
        self.conn.delete_property(read.window, property)?;
        self.conn.convert_selection(
            read.window,
            read.selection.atom(&read.atoms),
            target,
            property,
            x11rb::CURRENT_TIME,
        )?;
        self.conn.flush()?;
        let what = format!("{}'s owner answering", read.selection.human());
        let notify = self.wait_event(
            &what,
            |e| matches!(e, Event::SelectionNotify(n) if n.requestor == read.window),
        )?;
        let Event::SelectionNotify(notify) = notify else {
            return Ok(None);
        };
        if notify.property == x11rb::NONE {
            return Ok(None);
        }
        let first = self.take_property(read.window, notify.property)?;
        if first.type_ != read.atoms.incr {
            if first.bytes.len() > MAX_CLIP_BYTES {
                return Err(too_big(read.selection, first.bytes.len()));
            }
            return Ok(Some(first));
        }
        self.read_incr(read, notify.property, &first)
            .map(Some)
            .inspect_err(|_| {
                // Leave no piece behind on our window (it is destroyed right after, too).
                let _ = self.conn.delete_property(read.window, notify.property);
            })
    }

    /// The pieces of an INCR transfer, `announced` being the property that started it (its value
    /// is a lower bound on the size). Each piece is read and deleted, which asks for the next one.
    fn read_incr(
        &mut self,
        read: &Read,
        property: Atom,
        announced: &Converted,
    ) -> Result<Converted> {
        let size = announced
            .bytes
            .get(..4)
            .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize)
            .unwrap_or(0);
        if size > MAX_CLIP_BYTES {
            return Err(too_big(read.selection, size));
        }
        let mut bytes = Vec::with_capacity(size);
        let mut type_ = x11rb::NONE;
        let what = format!("{}'s owner sending the next piece", read.selection.human());
        loop {
            self.wait_event(&what, |e| {
                matches!(e, Event::PropertyNotify(p)
                    if p.window == read.window && p.atom == property && p.state == Property::NEW_VALUE)
            })?;
            let piece = self.take_property(read.window, property)?;
            if piece.type_ == x11rb::NONE {
                // Our own deletion raced the notice: nothing new yet.
                continue;
            }
            if piece.bytes.is_empty() {
                return Ok(Converted { type_, bytes });
            }
            type_ = piece.type_;
            if bytes.len() + piece.bytes.len() > MAX_CLIP_BYTES {
                return Err(too_big(read.selection, bytes.len() + piece.bytes.len()));
            }
            bytes.extend_from_slice(&piece.bytes);
        }
    }

    /// Read a property of ours whole and delete it.
    fn take_property(&self, window: Window, property: Atom) -> Result<Converted> {
        // In 4-byte units: one more than the limit, so a larger value shows as `bytes_after`.
        let length = (MAX_CLIP_BYTES / 4 + 1) as u32;
        let reply = self
            .conn
            .get_property(true, window, property, AtomEnum::ANY, 0, length)?
            .reply()?;
        if reply.bytes_after > 0 {
            self.conn.delete_property(window, property)?;
            return Err(DesktopError::Limit(format!(
                "the selection holds more than the {} MiB a read may take",
                MAX_CLIP_BYTES >> 20
            )));
        }
        let bytes = match reply.format {
            32 => reply
                .value32()
                .map(|v| v.flat_map(u32::to_ne_bytes).collect())
                .unwrap_or_default(),
            16 => reply
                .value16()
                .map(|v| v.flat_map(u16::to_ne_bytes).collect())
                .unwrap_or_default(),
            _ => reply.value,
        };
        Ok(Converted {
            type_: reply.type_,
            bytes,
        })
    }

    /// Wait for the first event `want` accepts, at most [`ANSWER_TIMEOUT`] and never past the
    /// call's deadline; other events are dropped (a keymap change is noted first).
    fn wait_event(&mut self, what: &str, mut want: impl FnMut(&Event) -> bool) -> Result<Event> {
        let start = Instant::now();
        let end = (start + ANSWER_TIMEOUT).min(self.deadline);
        let mut mapping_changed = false;
        let found = loop {
            let now = Instant::now();
            if now >= end {
                break None;
            }
            match self.next_event(end - now)? {
                Some(Event::MappingNotify(_)) => mapping_changed = true,
                Some(event) if want(&event) => break Some(event),
                _ => {}
            }
        };
        if mapping_changed {
            self.keyboard.reload(&self.conn)?;
        }
        found.ok_or_else(|| DesktopError::Timeout {
            what: what.to_owned(),
            limit: end.saturating_duration_since(start),
        })
    }
}

fn too_big(which: Selection, size: usize) -> DesktopError {
    DesktopError::Limit(format!(
        "{} holds {size} bytes, more than the {} MiB a read may take",
        which.human(),
        MAX_CLIP_BYTES >> 20
    ))
}

/// Text from a converted property: Latin-1 for `STRING`, UTF-8 otherwise (invalid bytes replaced).
fn decode_text(converted: &Converted) -> String {
    if converted.type_ == u32::from(AtomEnum::STRING) {
        converted.bytes.iter().map(|b| char::from(*b)).collect()
    } else {
        String::from_utf8_lossy(&converted.bytes).into_owned()
    }
}

/// Text as `STRING` (ISO Latin-1): characters beyond it become '?'.
pub(crate) fn latin1(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_keeps_what_it_can_and_marks_the_rest() {
        assert_eq!(latin1("café €"), b"caf\xe9 ?".to_vec());
    }

    #[test]
    fn png_content_must_be_a_png_and_every_content_is_bounded() {
        let bad = ClipContent::Png(b"GIF89a".to_vec());
        let e = bad.check("content").expect_err("not a PNG");
        assert_eq!(e.field(), Some("content"));
        let frame = crate::capture::Frame {
            width: 2,
            height: 1,
            rgb: vec![0; 6],
        };
        let good = ClipContent::Png(crate::capture::encode_png(&frame).expect("encode"));
        good.check("content").expect("a PNG");
        let big = ClipContent::Text("x".repeat(MAX_CLIP_BYTES + 1));
        assert!(big.check("content").is_err());
    }
}
