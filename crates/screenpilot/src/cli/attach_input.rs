//! What an attached person's keystrokes mean, before they go to the program: the detach chord
//! (Ctrl-] then d) is taken out, and mouse reports are moved from the person's terminal to the
//! session's screen when the view does not start at its top-left corner. Pure: bytes in, bytes out.

/// Ctrl-] as a legacy terminal sends it (GS).
const PREFIX: u8 = 0x1d;
/// Ctrl-] under the kitty keyboard protocol (when the program turned it on, the person's terminal
/// encodes keys that way too).
const PREFIX_KITTY: &[&[u8]] = &[b"\x1b[93;5u", b"\x1b[93;5:1u"];
/// `d` after the prefix: detach. Plain, or under kitty's "report all keys as escape codes".
const DETACH: &[&[u8]] = &[b"d", b"D", b"\x1b[100u", b"\x1b[100;1u", b"\x1b[100;1:1u"];

/// What one read from the person's terminal amounts to.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Input {
    /// Bytes for the program.
    pub forward: Vec<u8>,
    /// The person asked to detach (anything after the chord in the same read is dropped).
    pub detach: bool,
}

/// The detach chord: Ctrl-] then `d` detaches; Ctrl-] twice sends one Ctrl-] to the program;
/// Ctrl-] then any other key sends both, so nothing typed is lost.
#[derive(Debug, Default)]
pub struct Chord {
    /// The prefix as it came, when it was the last thing read.
    armed: Option<Vec<u8>>,
}

impl Chord {
    /// Ctrl-] was the last key: the next one decides.
    pub fn armed(&self) -> bool {
        self.armed.is_some()
    }

    pub fn feed(&mut self, mut bytes: &[u8]) -> Input {
        let mut input = Input::default();
        while !bytes.is_empty() {
            if let Some(prefix) = self.armed.take() {
                if DETACH.iter().any(|k| bytes.starts_with(k)) {
                    input.detach = true;
                    return input;
                }
                // Twice: one Ctrl-] for the program.
                if let Some(len) = prefix_at(bytes) {
                    bytes = &bytes[len..];
                }
                input.forward.extend_from_slice(&prefix);
                continue;
            }
            match prefix_at(bytes) {
                Some(len) => {
                    self.armed = Some(bytes[..len].to_vec());
                    bytes = &bytes[len..];
                }
                None => {
                    // Up to the next possible prefix.
                    let next = (1..bytes.len())
                        .find(|&i| prefix_at(&bytes[i..]).is_some())
                        .unwrap_or(bytes.len());
                    input.forward.extend_from_slice(&bytes[..next]);
                    bytes = &bytes[next..];
                }
            }
        }
        input
    }
}

/// The length of the chord's prefix when `bytes` starts with it.
fn prefix_at(bytes: &[u8]) -> Option<usize> {
    if bytes.first() == Some(&PREFIX) {
        return Some(1);
    }
    PREFIX_KITTY
        .iter()
        .find(|p| bytes.starts_with(p))
        .map(|p| p.len())
}

/// Moves mouse reports (SGR `ESC [ < b ; x ; y M`, X10 `ESC [ M b x y`) by the view's origin, so a
/// click lands on the screen cell the person saw under the pointer. A report cut in two by a read is
/// held back until the rest arrives.
#[derive(Debug, Default)]
pub struct MouseShift {
    held: Vec<u8>,
}

impl MouseShift {
    /// `bytes` with every mouse report moved by (`cols`, `rows`).
    pub fn apply(&mut self, bytes: &[u8], cols: u16, rows: u16) -> Vec<u8> {
        let mut data = std::mem::take(&mut self.held);
        data.extend_from_slice(bytes);
        if cols == 0 && rows == 0 {
            return data;
        }
        let mut out = Vec::with_capacity(data.len());
        let mut i = 0;
        while i < data.len() {
            let rest = &data[i..];
            if rest.starts_with(b"\x1b[<") {
                match sgr_report(rest) {
                    Report::Whole(len, button, x, y, end) => {
                        let x = x.saturating_add(u32::from(cols));
                        let y = y.saturating_add(u32::from(rows));
                        out.extend_from_slice(format!("\x1b[<{button};{x};{y}").as_bytes());
                        out.push(end);
                        i += len;
                        continue;
                    }
                    Report::Partial => {
                        self.held = rest.to_vec();
                        return out;
                    }
                    Report::Not => {}
                }
            } else if rest.starts_with(b"\x1b[M") {
                if rest.len() < 6 {
                    self.held = rest.to_vec();
                    return out;
                }
                let shift = |byte: u8, by: u16| -> u8 {
                    u8::try_from(u16::from(byte) + by).unwrap_or(u8::MAX)
                };
                out.extend_from_slice(&[
                    0x1b,
                    b'[',
                    b'M',
                    rest[3],
                    shift(rest[4], cols),
                    shift(rest[5], rows),
                ]);
                i += 6;
                continue;
            }
            out.push(data[i]);
            i += 1;
        }
        out
    }
}

enum Report {
    /// Length, button, column, row (1-based), final byte (`M` press, `m` release).
    Whole(usize, u32, u32, u32, u8),
    /// Only the start of one so far.
    Partial,
    /// Not a mouse report after all.
    Not,
}

fn sgr_report(bytes: &[u8]) -> Report {
    let body = &bytes[3..];
    let Some(end) = body
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';'))
    else {
        // Digits and semicolons to the end of the read: a report cut short (bounded, so a stray
        // `ESC [ <` cannot hold input back for long).
        return if body.len() < 32 {
            Report::Partial
        } else {
            Report::Not
        };
    };
    let last = body[end];
    if last != b'M' && last != b'm' {
        return Report::Not;
    }
    let fields: Vec<Option<u32>> = body[..end]
        .split(|b| *b == b';')
        .map(|f| std::str::from_utf8(f).ok()?.parse().ok())
        .collect();
    match fields.as_slice() {
        [Some(b), Some(x), Some(y)] => Report::Whole(3 + end + 1, *b, *x, *y, last),
        _ => Report::Not,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctrl_bracket_then_d_detaches_and_nothing_of_the_chord_reaches_the_program() {
        let mut chord = Chord::default();
        let input = chord.feed(b"ls\x1dd");
        assert_eq!(input.forward, b"ls");
        assert!(input.detach);
        // Split over two reads.
        let mut chord = Chord::default();
        assert_eq!(
            chord.feed(b"x\x1d"),
            Input {
                forward: b"x".to_vec(),
                detach: false
            }
        );
        assert!(chord.feed(b"d").detach);
    }

    #[test]
    fn ctrl_bracket_twice_sends_one_and_with_another_key_sends_both() {
        let mut chord = Chord::default();
        assert_eq!(chord.feed(b"\x1d\x1d").forward, b"\x1d");
        assert_eq!(chord.feed(b"\x1dq").forward, b"\x1dq");
        let mut chord = Chord::default();
        assert_eq!(chord.feed(b"\x1d").forward, b"");
        assert_eq!(chord.feed(b"\x1d").forward, b"\x1d");
        assert!(
            !chord.feed(b"d").detach,
            "a sent Ctrl-] no longer arms the chord"
        );
    }

    #[test]
    fn the_kitty_encoding_of_the_chord_detaches_too() {
        let mut chord = Chord::default();
        assert!(chord.feed(b"\x1b[93;5u\x1b[100u").detach);
    }

    #[test]
    fn mouse_reports_move_by_the_origin_and_other_bytes_stay() {
        let mut shift = MouseShift::default();
        assert_eq!(
            shift.apply(b"a\x1b[<0;3;4Mb\x1b[<0;3;4m", 10, 2),
            b"a\x1b[<0;13;6Mb\x1b[<0;13;6m"
        );
        assert_eq!(shift.apply(b"\x1b[M !!", 1, 2), b"\x1b[M \"#");
        assert_eq!(shift.apply(b"\x1b[A\x1b[<x", 1, 1), b"\x1b[A\x1b[<x");
        // No origin: unchanged, not even parsed.
        assert_eq!(shift.apply(b"\x1b[<0;3;4M", 0, 0), b"\x1b[<0;3;4M");
    }

    #[test]
    fn a_report_cut_by_a_read_is_held_until_the_rest_comes() {
        let mut shift = MouseShift::default();
        assert_eq!(shift.apply(b"k\x1b[<0;1", 5, 0), b"k");
        assert_eq!(shift.apply(b"2;7M", 5, 0), b"\x1b[<0;17;7M");
    }
}
