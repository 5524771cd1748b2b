//! Whether the parser stands between sequences, told from the bytes it was given.
//!
//! vte keeps its state private. [`crate::Screen`] needs to know one thing of it: that the next
//! printable byte will be printed, not read as part of an escape sequence or a string (an OSC title
//! left open swallows every line after it). That is decided by the last ESC, CAN or SUB in the input
//! and what follows it, so [`SequenceState::after`] looks back for that byte and reads forward from
//! there, instead of following every byte. Strings other than OSC (DCS, SOS, PM, APC) are taken to
//! last until ESC, CAN or SUB; vte also ends a DCS string at a lone 0x9c byte, so after one of those
//! this may say "inside a string" where vte is between sequences: never the other way round.

use memchr::{memchr, memrchr3};

const ESC: u8 = 0x1b;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const BEL: u8 = 0x07;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SequenceState {
    /// Between sequences: a printable byte is printed.
    #[default]
    Ground,
    /// After ESC; `intermediates` once a byte of 0x20-0x2f followed it.
    Escape { intermediates: bool },
    /// Inside a CSI sequence: its final byte (0x40-0x7e) ends it.
    Csi,
    /// Inside an OSC string: BEL ends it (ESC, CAN and SUB end anything).
    Osc,
    /// Inside a DCS, SOS, PM or APC string.
    ControlString,
}

impl SequenceState {
    /// The state after the parser, in this state, reads `bytes`.
    pub(crate) fn after(self, bytes: &[u8]) -> SequenceState {
        match memrchr3(ESC, CAN, SUB, bytes) {
            None => self.through(bytes),
            Some(at) if bytes[at] == ESC => SequenceState::Escape {
                intermediates: false,
            }
            .through(&bytes[at + 1..]),
            // CAN and SUB end whatever was open; only ESC leaves the ground state again.
            Some(_) => SequenceState::Ground,
        }
    }

    /// The state after `bytes`, which hold no ESC, CAN or SUB.
    fn through(self, bytes: &[u8]) -> SequenceState {
        // An escape sequence is decided by its first byte of 0x20-0x7e (C0 controls run inside it
        // and DEL is ignored there): it ends, goes on with intermediates, or opens a CSI sequence or
        // a string, which the rest of the bytes then may end.
        let (mut state, mut rest) = (self, bytes);
        while let SequenceState::Escape { intermediates } = state {
            let Some(at) = rest.iter().position(|b| (0x20..=0x7e).contains(b)) else {
                return state;
            };
            state = match rest[at] {
                0x20..=0x2f => SequenceState::Escape {
                    intermediates: true,
                },
                _ if intermediates => SequenceState::Ground,
                b'[' => SequenceState::Csi,
                b']' => SequenceState::Osc,
                b'P' | b'X' | b'^' | b'_' => SequenceState::ControlString,
                _ => SequenceState::Ground,
            };
            rest = &rest[at + 1..];
        }
        match state {
            SequenceState::Osc if memchr(BEL, rest).is_some() => SequenceState::Ground,
            SequenceState::Csi if rest.iter().any(|b| (0x40..=0x7e).contains(b)) => {
                SequenceState::Ground
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SequenceState;
    use alacritty_terminal::vte::{Params, Parser, Perform};
    use proptest::prelude::*;

    /// Remembers whether the last thing the parser did was to print `X`.
    #[derive(Default)]
    struct Printed(bool);

    impl Perform for Printed {
        fn print(&mut self, c: char) {
            self.0 = c == 'X';
        }
        fn execute(&mut self, _: u8) {}
        fn csi_dispatch(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
            self.0 = false;
        }
        fn esc_dispatch(&mut self, _: &[u8], _: bool, _: u8) {
            self.0 = false;
        }
        fn hook(&mut self, _: &Params, _: &[u8], _: bool, _: char) {
            self.0 = false;
        }
    }

    /// Whether vte, after `bytes`, prints an `X` that follows a CR (which also settles any UTF-8
    /// sequence left open).
    fn vte_prints_next(bytes: &[&[u8]]) -> bool {
        let mut parser = Parser::new();
        let mut printed = Printed::default();
        for piece in bytes {
            parser.advance(&mut printed, piece);
        }
        printed.0 = false;
        parser.advance(&mut printed, b"\rX");
        printed.0
    }

    fn state_after(pieces: &[&[u8]]) -> SequenceState {
        pieces
            .iter()
            .fold(SequenceState::Ground, |state, piece| state.after(piece))
    }

    #[test]
    fn follows_what_ends_each_kind_of_sequence() {
        let cases: &[(&[u8], SequenceState)] = &[
            (b"plain text\r\n", SequenceState::Ground),
            (b"\x1b[1;31", SequenceState::Csi),
            (b"\x1b[1;31\r\n12", SequenceState::Csi),
            (b"\x1b[1;31m after", SequenceState::Ground),
            (b"\x1b]0;title never closed\r\nmore", SequenceState::Osc),
            (b"\x1b]0;title\x07 after", SequenceState::Ground),
            (b"\x1b]0;title\x1b\\ after", SequenceState::Ground),
            (b"\x1bPq#0;2;0;0;0", SequenceState::ControlString),
            (b"\x1b_apc\r\n", SequenceState::ControlString),
            (b"\x1b_apc\x18 after", SequenceState::Ground),
            (
                b"\x1b(",
                SequenceState::Escape {
                    intermediates: true,
                },
            ),
            (b"\x1b(0 text", SequenceState::Ground),
            (
                b"\x1b\r\n",
                SequenceState::Escape {
                    intermediates: false,
                },
            ),
            (b"\x1b7 text", SequenceState::Ground),
        ];
        for (bytes, expected) in cases {
            assert_eq!(
                SequenceState::Ground.after(bytes),
                *expected,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
            let between = *expected == SequenceState::Ground;
            assert_eq!(vte_prints_next(&[bytes]), between, "vte after {bytes:?}");
        }
    }

    #[test]
    fn a_sequence_split_between_reads_is_followed_across_them() {
        let pieces: [&[u8]; 3] = [b"text \x1b[", b"38;5;1", b"2m more\r\n"];
        assert_eq!(state_after(&pieces[..2]), SequenceState::Csi);
        assert_eq!(state_after(&pieces), SequenceState::Ground);
        let title: [&[u8]; 3] = [b"\x1b]2;a title ", b"that goes on\r\n", b"and ends\x07"];
        assert_eq!(state_after(&title[..2]), SequenceState::Osc);
        assert_eq!(state_after(&title), SequenceState::Ground);
    }

    /// Bytes that matter to the parser's state, and others, in random reads.
    fn pieces() -> impl Strategy<Value = Vec<Vec<u8>>> {
        let byte = prop_oneof![
            Just(0x1b),
            Just(0x18),
            Just(0x1a),
            Just(0x07),
            Just(b'['),
            Just(b']'),
            Just(b'P'),
            Just(b'_'),
            Just(b'('),
            Just(b'0'),
            Just(b';'),
            Just(b'm'),
            Just(b'\r'),
            Just(b'\n'),
            Just(b'x'),
            Just(0x9c),
            Just(0xe6),
            any::<u8>(),
        ];
        prop::collection::vec(prop::collection::vec(byte, 0..12), 1..6)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        /// Between sequences by this reading means vte prints what comes next; and it says so
        /// whenever vte does, but for a DCS string ended by a lone 0x9c.
        #[test]
        fn ground_means_vte_prints_the_next_byte(pieces in pieces()) {
            let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
            let ours = state_after(&refs) == SequenceState::Ground;
            let vte = vte_prints_next(&refs);
            if ours {
                prop_assert!(vte);
            } else if vte {
                let all = pieces.concat();
                prop_assert!(all.contains(&0x9c), "ours {:?}", state_after(&refs));
            }
        }
    }
}
