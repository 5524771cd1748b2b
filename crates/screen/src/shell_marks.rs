//! Shell integration marks: the OSC 133 "semantic prompt" sequences (FinalTerm's, used by iTerm2,
//! VS Code, kitty, WezTerm and fish) with which a shell brackets its prompt and each command's output,
//! so a terminal knows where a command's output starts and ends, and how the command exited:
//!
//! ```text
//! ESC ] 133 ; A ST            the prompt starts
//! ESC ] 133 ; B ST            the prompt ends; the command line starts
//! ESC ] 133 ; C ST            the command runs: its output starts
//! ESC ] 133 ; D [; STATUS] ST the command ended, with its exit status
//! ```
//!
//! ST is BEL or `ESC \`; options after a further `;` (`aid=...`, `k=...`) are ignored. The emulator
//! ignores these sequences (they draw nothing); [`MarkScanner`] finds them in the byte stream beside it,
//! across reads, and says where in each read each mark took effect, so the session can split the
//! output of a command from what came before and after it.

/// What a mark says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// `A`: a prompt is being drawn.
    PromptStart,
    /// `B`: the prompt is drawn; what is typed next is the command line.
    CommandStart,
    /// `C`: the command line was accepted and runs; its output follows.
    OutputStart,
    /// `D`: the command ended, with its exit status when the shell gave one.
    CommandEnd(Option<i32>),
}

/// A mark found in one read: `end` is the offset just past its sequence, where it takes effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub end: usize,
    pub mark: Mark,
    /// The `sp=HEX` parameter the mark carried: a shell given screenpilot's integration signs its
    /// marks with the session's token, so output that prints marks cannot pass for the shell.
    pub token: Option<u64>,
}

/// The most bytes of an OSC string kept to read a mark from; longer strings are not marks.
const MAX_MARK_BYTES: usize = 64;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
enum State {
    /// Anywhere but in an OSC string.
    #[default]
    Other,
    /// Just after ESC.
    Escape,
    /// In an OSC string; its first bytes, or `None` once it is too long to be a mark.
    Osc(Option<Vec<u8>>),
    /// ESC inside an OSC string: `\` completes its terminator; anything else starts a new sequence.
    OscEscape(Option<Vec<u8>>),
}

/// Finds marks in a byte stream fed in pieces (a mark may span reads).
#[derive(Debug, Clone, Default)]
pub struct MarkScanner {
    state: State,
}

impl MarkScanner {
    /// The marks that end in `bytes`, in order.
    pub fn scan(&mut self, bytes: &[u8]) -> Vec<Found> {
        let mut found = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            self.state = match std::mem::take(&mut self.state) {
                State::Other => {
                    // Nothing can happen before the next ESC.
                    match memchr_esc(&bytes[i..]) {
                        Some(at) => {
                            i += at + 1;
                            self.state = State::Escape;
                            continue;
                        }
                        None => return found,
                    }
                }
                State::Escape if byte == b']' => State::Osc(Some(Vec::new())),
                State::Escape if byte == 0x1b => State::Escape,
                State::Escape => State::Other,
                State::Osc(text) => match byte {
                    0x07 => {
                        push_mark(&mut found, text, i + 1);
                        State::Other
                    }
                    0x1b => State::OscEscape(text),
                    // CAN and SUB abandon the string.
                    0x18 | 0x1a => State::Other,
                    _ => State::Osc(text.and_then(|mut t| {
                        (t.len() < MAX_MARK_BYTES).then(|| {
                            t.push(byte);
                            t
                        })
                    })),
                },
                State::OscEscape(text) if byte == b'\\' => {
                    push_mark(&mut found, text, i + 1);
                    State::Other
                }
                State::OscEscape(text) => {
                    // The ESC ended the string and begins the next sequence with this byte.
                    push_mark(&mut found, text, i - usize::from(i > 0));
                    self.state = State::Escape;
                    continue;
                }
            };
            i += 1;
        }
        found
    }
}

fn memchr_esc(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0x1b)
}

fn push_mark(found: &mut Vec<Found>, text: Option<Vec<u8>>, end: usize) {
    if let Some(mark) = text.as_deref().and_then(parse) {
        let token = text.as_deref().and_then(token_of);
        found.push(Found { end, mark, token });
    }
}

/// The `sp=HEX` parameter of a mark.
fn token_of(text: &[u8]) -> Option<u64> {
    text.split(|&b| b == b';')
        .find_map(|arg| arg.strip_prefix(b"sp="))
        .and_then(|hex| std::str::from_utf8(hex).ok())
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
}

/// The mark an OSC string is, if it is one.
fn parse(text: &[u8]) -> Option<Mark> {
    let rest = text.strip_prefix(b"133;")?;
    let (kind, args) = match rest.iter().position(|&b| b == b';') {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    match kind {
        b"A" => Some(Mark::PromptStart),
        b"B" => Some(Mark::CommandStart),
        b"C" => Some(Mark::OutputStart),
        b"D" => {
            let status = args.split(|&b| b == b';').next().unwrap_or_default();
            let status = std::str::from_utf8(status).ok()?.trim();
            Some(Mark::CommandEnd(status.parse().ok()))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(pieces: &[&[u8]]) -> Vec<(usize, usize, Mark)> {
        let mut scanner = MarkScanner::default();
        pieces
            .iter()
            .enumerate()
            .flat_map(|(n, piece)| {
                scanner
                    .scan(piece)
                    .into_iter()
                    .map(move |f| (n, f.end, f.mark))
            })
            .collect()
    }

    #[test]
    fn each_kind_is_found_where_it_ends() {
        let stream = b"\x1b]133;D;3\x07\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x1b\\out";
        let found = marks(&[stream]);
        assert_eq!(
            found,
            vec![
                (0, 10, Mark::CommandEnd(Some(3))),
                (0, 18, Mark::PromptStart),
                (0, 28, Mark::CommandStart),
                (0, 41, Mark::OutputStart),
            ]
        );
        assert_eq!(
            &stream[41..],
            b"out",
            "C takes effect right before the output"
        );
    }

    #[test]
    fn a_mark_split_over_reads_is_found_in_the_read_it_ends_in() {
        let found = marks(&[b"x\x1b]13", b"3;D", b";127;aid=9\x1b", b"\\rest"]);
        assert_eq!(found, vec![(3, 1, Mark::CommandEnd(Some(127)))]);
    }

    #[test]
    fn other_strings_and_sequences_are_not_marks() {
        assert!(marks(&[b"\x1b]0;133;A\x07\x1b[133;Am\x1b]1337;A\x07"]).is_empty());
        // CAN abandons a string; a string too long to be a mark is none.
        assert!(marks(&[b"\x1b]133;A\x18\x07"]).is_empty());
        let long = [b"\x1b]133;D;".as_slice(), &[b'1'; 100], b"\x07"].concat();
        assert!(marks(&[&long]).is_empty());
        // D without a status, or with one that is not a number.
        assert_eq!(
            marks(&[b"\x1b]133;D\x07\x1b]133;D;x\x07"]),
            vec![
                (0, 8, Mark::CommandEnd(None)),
                (0, 18, Mark::CommandEnd(None))
            ]
        );
    }

    #[test]
    fn an_escape_ending_a_mark_starts_the_next_sequence() {
        // ESC [ after the string: the mark ends at the ESC, which belongs to the CSI that follows.
        let stream = b"\x1b]133;C\x1b[31mred";
        let found = marks(&[stream]);
        assert_eq!(found, vec![(0, 7, Mark::OutputStart)]);
        assert_eq!(&stream[7..], b"\x1b[31mred");
        // And it still finds a mark right after.
        let found = marks(&[b"\x1b]133;C\x1b]133;D;0\x07"]);
        assert_eq!(found.len(), 2, "{found:?}");
    }
}
