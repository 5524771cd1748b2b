//! A bound on what one OSC string may make the parser buffer.
//!
//! vte (built with `std`) collects an OSC string (`ESC ] ... BEL`) in a `Vec` that grows until the
//! terminator arrives, so a program that opens a title and never closes it would grow the daemon by every
//! byte it writes. DCS, SOS, PM and APC strings are not buffered by vte or alacritty, and the
//! synchronized-update buffer has its own 2 MiB cap, so the OSC string is the one place to bound.
//!
//! [`OscLimit`] sits in front of the parser and drops the bytes of an OSC string past
//! [`MAX_OSC_BYTES`], keeping its terminator, so the string still ends where the program ended it (a
//! huge title arrives truncated). It follows only what vte does with ESC: from any state ESC starts an
//! escape sequence and `ESC ]` opens an OSC string, which BEL, CAN, SUB or ESC end.

use std::borrow::Cow;

/// The most bytes of one OSC string handed to the parser; the rest of the string is dropped.
pub const MAX_OSC_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside any OSC string (ground, CSI, DCS...: all the same to us).
    Other,
    /// Just after ESC.
    Escape,
    /// Inside an OSC string, with this many bytes of it passed on.
    Osc(usize),
}

/// Tracks OSC strings across [`OscLimit::filter`] calls (a string may span many reads).
#[derive(Debug, Clone)]
pub(crate) struct OscLimit {
    state: State,
    max: usize,
}

impl Default for OscLimit {
    fn default() -> OscLimit {
        OscLimit::new(MAX_OSC_BYTES)
    }
}

impl OscLimit {
    pub(crate) fn new(max: usize) -> OscLimit {
        OscLimit {
            state: State::Other,
            max,
        }
    }

    /// `bytes` with the part of any OSC string past the cap removed. Borrows when nothing is dropped.
    pub(crate) fn filter<'a>(&mut self, bytes: &'a [u8]) -> Cow<'a, [u8]> {
        let mut kept: Option<Vec<u8>> = None;
        let mut i = 0;
        while i < bytes.len() {
            if self.state == State::Other {
                // Nothing changes until an OSC string opens: skip to where one does, or to the
                // escape the input ends in, and step from there.
                let next = osc_or_trailing_escape(bytes, i);
                if let Some(out) = &mut kept {
                    out.extend_from_slice(&bytes[i..next]);
                }
                i = next;
                if i == bytes.len() {
                    break;
                }
            }
            let byte = bytes[i];
            let keep = self.step(byte);
            match (&mut kept, keep) {
                (Some(out), true) => out.push(byte),
                (None, false) => kept = Some(bytes[..i].to_vec()),
                _ => {}
            }
            i += 1;
        }
        match kept {
            Some(out) => Cow::Owned(out),
            None => Cow::Borrowed(bytes),
        }
    }

    /// Advance over one byte; false when it must be dropped.
    fn step(&mut self, byte: u8) -> bool {
        match (self.state, byte) {
            (_, 0x1b) => self.state = State::Escape,
            (State::Escape, b']') => self.state = State::Osc(0),
            (State::Escape, b) if runs_inside_escape(b) => {}
            (State::Escape, _) => self.state = State::Other,
            (State::Osc(_), 0x07 | 0x18 | 0x1a) => self.state = State::Other,
            (State::Osc(len), _) => {
                if len >= self.max {
                    return false;
                }
                self.state = State::Osc(len + 1);
            }
            (State::Other, _) => {}
        }
        true
    }
}

/// The C0 controls vte executes inside an escape sequence, staying in it (CAN, SUB and ESC end it).
fn runs_inside_escape(byte: u8) -> bool {
    matches!(byte, 0x00..=0x17 | 0x19 | 0x1c..=0x1f)
}

/// Where stepping must resume in `bytes`, read from `from` on outside any escape: the ESC of the
/// first `ESC ]` (an OSC string opening), else the ESC of an escape still open at the end, else the
/// end. `]` is rare where ESC is common (colours, cursor moves), so it is what is looked for; an ESC
/// counts when only the C0 controls vte runs inside an escape sequence stand between it and the `]`
/// (or the end).
fn osc_or_trailing_escape(bytes: &[u8], from: usize) -> usize {
    // The ESC that the bytes before `at` (back to `from`) leave open, if any.
    let open_escape = |at: usize| {
        let start = bytes[from..at]
            .iter()
            .rposition(|&b| !runs_inside_escape(b))?;
        (bytes[from + start] == 0x1b).then_some(from + start)
    };
    let mut at = from;
    while let Some(n) = memchr::memchr(b']', &bytes[at..]) {
        if let Some(escape) = open_escape(at + n) {
            return escape;
        }
        at += n + 1;
    }
    open_escape(bytes.len()).unwrap_or(bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(limit: &mut OscLimit, chunks: &[&[u8]]) -> Vec<u8> {
        chunks
            .iter()
            .flat_map(|c| limit.filter(c).into_owned())
            .collect()
    }

    #[test]
    fn ordinary_output_and_short_strings_pass_untouched() {
        let mut limit = OscLimit::new(8);
        let input: &[u8] = b"hello \x1b[1mbold\x1b[0m \x1b]2;title\x07 done\x1b]0;x\x1b\\";
        assert!(matches!(limit.filter(input), Cow::Borrowed(_)));
        assert_eq!(run(&mut limit, &[input]), input);
    }

    #[test]
    fn an_osc_string_past_the_cap_is_cut_but_keeps_its_terminator() {
        let mut limit = OscLimit::new(8);
        let out = run(
            &mut limit,
            &[b"a\x1b]2;0123", b"456789abc", b"def\x07after"],
        );
        assert_eq!(out, b"a\x1b]2;012345\x07after");
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 1000,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Skipping to the next OSC string gives what stepping over every byte gives, however the input
        /// is cut into reads.
        #[test]
        fn skipping_ahead_keeps_the_same_bytes_as_a_byte_at_a_time(
            input in proptest::collection::vec(
                proptest::sample::select(vec![0x1b, b']', 0x07, 0x18, 0x1a, 0x19, b'\n', b'x', b'\\', 0x9d]),
                0..300,
            ),
            cuts in proptest::collection::vec(0usize..300, 0..6),
        ) {
            // A cap of 2 makes most OSC strings in such input run past it.
            let mut reference = OscLimit::new(2);
            let expected: Vec<u8> = input.iter().copied().filter(|&b| reference.step(b)).collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(input.len())).collect();
            cuts.sort_unstable();
            let mut chunks = Vec::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([input.len()]) {
                chunks.push(&input[from..cut]);
                from = cut;
            }
            let mut limit = OscLimit::new(2);
            proptest::prop_assert_eq!(run(&mut limit, &chunks), expected);
        }
    }

    #[test]
    fn an_unterminated_string_passes_at_most_the_cap_however_long_it_runs() {
        let mut limit = OscLimit::new(16);
        let mut passed = limit.filter(b"\x1b]2;").len();
        let chunk = vec![b'x'; 4096];
        for _ in 0..1000 {
            passed += limit.filter(&chunk).len();
        }
        assert_eq!(passed, 2 + 16);
        assert_eq!(&*limit.filter(b"\x1b\\ok"), b"\x1b\\ok");
        assert_eq!(&*limit.filter(b"plain"), b"plain");
    }
}
