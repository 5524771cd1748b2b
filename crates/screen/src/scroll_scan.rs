//! How many rows a piece of program output can push into the history, read from the bytes before
//! the emulator runs them.
//!
//! [`crate::Screen`] cuts its input into pieces that each push at most a few rows more than a
//! screenful, so the rows alacritty keeps are always enough to copy every pushed row out of (see
//! [`crate::history`]); waits use the same counts to search only the history that is new. Each piece
//! is counted at its most: a line feed scrolls at most one line, a soft wrap at most one per row of
//! text (`len / cols + 1`: a row takes at least `cols` bytes), CSI S / J / M at most a screenful, CSI b
//! (repeat the last character) its count of characters. The scanner also follows the alternate screen
//! (CSI ? 1049 h / l), so it knows whether a clear of the history (CSI 3 J, ESC c) hits the primary
//! screen's.

/// Where the scanner stands between two pieces.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Scanner {
    state: State,
    /// The alternate screen is on at this point of the stream.
    alt: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum State {
    #[default]
    Ground,
    Escape,
    Csi(Csi),
}

/// A CSI sequence read so far.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
struct Csi {
    /// The parameter being read.
    param: u32,
    /// The first parameter, once read.
    first: u32,
    /// Parameters read.
    count: u16,
    /// A `?` private marker.
    question: bool,
    /// Any other private marker or intermediate byte.
    other: bool,
    /// One of the parameters is 1049 (the alternate screen).
    alt_screen: bool,
}

impl Csi {
    /// Take one byte of the parameters (or private markers, intermediates).
    fn read(&mut self, byte: u8) {
        match byte {
            b'0'..=b'9' => self.param = (self.param * 10 + u32::from(byte - b'0')).min(65_535),
            b';' | b':' => self.end_param(),
            b'?' => self.question = true,
            0x20..=0x2f | 0x3c..=0x3e => self.other = true,
            _ => {}
        }
    }

    fn end_param(&mut self) {
        if self.count == 0 {
            self.first = self.param;
        }
        self.alt_screen |= self.param == 1049;
        self.count = self.count.saturating_add(1);
        self.param = 0;
    }
}

/// A piece of input cut by [`Scanner::next_piece`].
pub(crate) struct Piece {
    pub(crate) len: usize,
    /// The most rows it (and what waited to run before it) can push into the history.
    pub(crate) bound: u64,
    /// It ends with a sequence that clears the primary screen's history.
    pub(crate) clears: bool,
    /// The scanner after it.
    pub(crate) scanner: Scanner,
}

impl Scanner {
    /// After all input so far has run (no synchronized update holds any), the alternate screen is
    /// known for sure: take it from the emulator.
    pub(crate) fn settle(&mut self, alt: bool) {
        if self.state == State::Ground {
            self.alt = alt;
        }
    }

    /// The next piece of `bytes`: as long as it can be while it pushes at most `budget` rows into the
    /// history, counting `base` rows already waiting to run before it, but at least one sequence. It
    /// is cut only between sequences, and right after a clear of the primary screen's history, so that
    /// the clear is the last thing it does. `rows` x `cols` is the screen's size.
    pub(crate) fn next_piece(
        self,
        bytes: &[u8],
        rows: u64,
        cols: u64,
        base: u64,
        budget: u64,
    ) -> Piece {
        let cols = cols.max(1);
        let Scanner { mut state, mut alt } = self;
        let mut events = base;
        // A piece of `len` bytes is within the budget while `len < allowed`
        // (`events + len / cols + 1 <= budget`); kept up to date as `events` grows.
        let allowed = |events: u64| budget.saturating_sub(events).saturating_mul(cols);
        let mut within = allowed(events);
        // The last place to cut (between two sequences) seen: its length, rows and screen.
        let mut cut = (0usize, events, alt);
        let piece = |len: usize, events: u64, clears: bool, state: State, alt: bool| Piece {
            len,
            bound: events + len as u64 / cols + 1,
            clears,
            scanner: Scanner { state, alt },
        };
        let mut feeds_in_a_row = 0;
        let mut i = 0;
        while i < bytes.len() {
            let byte = bytes[i];
            match state {
                State::Ground => {
                    if i as u64 >= within && cut.0 > 0 {
                        return piece(cut.0, cut.1, false, State::Ground, cut.2);
                    }
                    cut = (i, events, alt);
                    // A flood of short lines (several line feeds since the last escape): take plain
                    // text in stretches that fit, counting their line feeds at once.
                    if feeds_in_a_row >= FLOOD_FEEDS {
                        let (len, feeds) = fitting_stretch(&bytes[i..], i, events, allowed);
                        feeds_in_a_row = 0;
                        if len > 0 {
                            i += len;
                            events += feeds;
                            within = allowed(events);
                            cut = (i, events, alt);
                            continue;
                        }
                    }
                    // Plain text and sequences that change nothing counted here, up to the next
                    // line feed or other escape: taken whole when all of it fits.
                    // Looked for only as far as the budget allows: past it the piece is cut.
                    let reach = usize::try_from(within).map_or(bytes.len(), |w| w.min(bytes.len()));
                    let (stretch, escaped) = quiet_stretch(&bytes[..reach.max(i)], i);
                    if escaped {
                        feeds_in_a_row = 0;
                    }
                    if (stretch as u64) < within {
                        i = stretch;
                        cut = (i, events, alt);
                    } else {
                        // Plain text up to the next line feed or escape: every place in it is a
                        // place to cut; the last one within the budget ends the piece.
                        let run = first_text_end(bytes, i);
                        if run as u64 >= within {
                            let last = within.saturating_sub(1) as usize;
                            if last > i {
                                return piece(last, events, false, State::Ground, alt);
                            }
                            if i > 0 {
                                return piece(i, events, false, State::Ground, alt);
                            }
                            // Nothing fits: the piece holds at least this much.
                        } else {
                            cut = (run, events, alt);
                        }
                        i = run;
                        if let Some(after) = quiet_csi_end(bytes, i) {
                            i = after;
                            continue;
                        }
                    }
                    match bytes.get(i) {
                        None => break,
                        Some(0x1b) => {
                            feeds_in_a_row = 0;
                            state = State::Escape;
                        }
                        Some(_) => {
                            events += 1;
                            within = allowed(events);
                            feeds_in_a_row += 1;
                        }
                    }
                    i += 1;
                }
                State::Escape => {
                    i += 1;
                    state = match byte {
                        0x1b => {
                            events += 1;
                            State::Escape
                        }
                        // Line feeds run wherever they are, even inside an escape sequence.
                        b'\n' | 0x0b | 0x0c => {
                            events += 1;
                            State::Escape
                        }
                        b'[' => State::Csi(Csi::default()),
                        _ => {
                            // ESC D / ESC E index one line; anything else is counted as that too.
                            // ESC c resets the terminal: both screens' history goes, and the
                            // primary screen is shown.
                            events += 1;
                            if byte == b'c' {
                                return piece(i, events, true, State::Ground, false);
                            }
                            State::Ground
                        }
                    };
                    within = allowed(events);
                }
                State::Csi(mut csi) => {
                    // Skip to what ends or interrupts the sequence; read its parameters only when it
                    // is one that matters here.
                    let stop = bytes[i..]
                        .iter()
                        .position(|&b| ENDS_CSI[usize::from(b)])
                        .map(|n| i + n);
                    let end = stop.unwrap_or(bytes.len());
                    let stopper = stop.map(|k| bytes[k]);
                    if stopper.is_none_or(|b| {
                        !(0x40..=0x7e).contains(&b)
                            || matches!(b, b'S' | b'J' | b'M' | b'b' | b'h' | b'l')
                    }) {
                        for &b in &bytes[i..end] {
                            csi.read(b);
                        }
                    }
                    i = end + 1;
                    state = match stopper {
                        None => State::Csi(csi),
                        Some(0x1b) => State::Escape,
                        // Line feeds run wherever they are, even inside an escape sequence.
                        Some(b'\n' | 0x0b | 0x0c) => {
                            events += 1;
                            State::Csi(csi)
                        }
                        Some(last) => {
                            csi.end_param();
                            let plain = !csi.question && !csi.other;
                            match last {
                                // Scroll up, erase in display (2 J scrolls the screen into history),
                                // delete lines (at the top row alacritty scrolls the history too).
                                b'S' | b'J' | b'M' => events += rows,
                                b'b' => events += u64::from(csi.first.max(1)) / cols + 1,
                                b'h' | b'l' if csi.question && !csi.other && csi.alt_screen => {
                                    alt = last == b'h';
                                }
                                _ => {}
                            }
                            if last == b'J' && csi.first == 3 && plain && !alt {
                                return piece(i, events, true, State::Ground, alt);
                            }
                            State::Ground
                        }
                    };
                    within = allowed(events);
                }
            }
        }
        let len = bytes.len();
        if len as u64 >= within && cut.0 > 0 {
            return piece(cut.0, cut.1, false, State::Ground, cut.2);
        }
        piece(len, events, false, state, alt)
    }
}

/// The bytes that end a run of plain text: an escape, and the line feeds (LF, VT, FF). Looked up in a
/// table, the cheapest test for a byte against several values.
const ENDS_TEXT: [bool; 256] = {
    let mut ends = [false; 256];
    ends[0x1b] = true;
    ends[b'\n' as usize] = true;
    ends[0x0b] = true;
    ends[0x0c] = true;
    ends
};

/// The bytes that end or interrupt a CSI sequence's parameters: its final byte (0x40-0x7e), an
/// escape, and the line feeds (which run wherever they are).
const ENDS_CSI: [bool; 256] = {
    let mut ends = ENDS_TEXT;
    let mut byte = 0x40;
    while byte <= 0x7e {
        ends[byte] = true;
        byte += 1;
    }
    ends
};

/// Where a CSI sequence starting at `at` (its ESC) ends, when it is whole in `bytes` and can neither
/// scroll, switch screens nor clear the history: parameters and intermediates (0x20-0x3f) only, then
/// a final byte other than S, J, M, b, h and l. `None` sends the sequence through the states.
fn quiet_csi_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at + 1) != Some(&b'[') {
        return None;
    }
    let end = parameters_end(bytes, at + 2);
    match *bytes.get(end)? {
        b'S' | b'J' | b'M' | b'b' | b'h' | b'l' => None,
        0x40..=0x7e => Some(end + 1),
        _ => None,
    }
}

/// How far plain text and the sequences [`quiet_csi_end`] lets through run from `at`: to the first
/// line feed, the ESC of any other sequence, or the end. And whether a sequence was among them.
fn quiet_stretch(bytes: &[u8], at: usize) -> (usize, bool) {
    let mut i = at;
    let mut escaped = false;
    loop {
        i = first_text_end(bytes, i);
        if bytes.get(i) != Some(&0x1b) {
            return (i, escaped);
        }
        match quiet_csi_end(bytes, i) {
            Some(end) => {
                i = end;
                escaped = true;
            }
            None => return (i, escaped),
        }
    }
}

/// A byte's value in every byte of a word.
const fn every_byte(byte: u8) -> u64 {
    0x0101_0101_0101_0101 * byte as u64
}

/// The top bit of every byte of `word` that is not zero (exact: nothing carries between bytes).
fn nonzero_bytes(word: u64) -> u64 {
    let low7 = every_byte(0x7f);
    (((word & low7) + low7) | word) & every_byte(0x80)
}

/// The top bit of every byte of `word` that is a C0 control (below 0x20).
fn controls(word: u64) -> u64 {
    !nonzero_bytes(word & every_byte(0xe0)) & every_byte(0x80)
}

/// The top bit of every byte of `word` that cannot be in a CSI sequence's parameters or
/// intermediates (anything outside 0x20-0x3f).
fn not_parameters(word: u64) -> u64 {
    nonzero_bytes((word & every_byte(0xe0)) ^ every_byte(0x20))
}

/// The first byte at or after `from` that ends plain text ([`ENDS_TEXT`]: ESC, LF, VT, FF), or
/// `bytes.len()`. Text has few C0 controls (a CR before each LF): each one found is looked up.
fn first_text_end(bytes: &[u8], from: usize) -> usize {
    first_of(bytes, from, controls, |b| ENDS_TEXT[usize::from(b)])
}

/// Where the parameters and intermediates of a CSI sequence starting at `from` end, or `bytes.len()`.
fn parameters_end(bytes: &[u8], from: usize) -> usize {
    // The marks are exact: every marked byte is one.
    first_of(bytes, from, not_parameters, |_| true)
}

/// The first byte at or after `from` that `candidates` marks and `is` holds for, or `bytes.len()`.
/// Eight bytes at a time: `candidates` marks (the top bit of a byte) the bytes of a word that may be
/// it, and each marked byte is then asked.
fn first_of(
    bytes: &[u8],
    from: usize,
    candidates: impl Fn(u64) -> u64,
    is: impl Fn(u8) -> bool,
) -> usize {
    let mut i = from;
    while let Some(word) = bytes.get(i..i + 8) {
        let mut marked = candidates(u64::from_le_bytes(word.try_into().unwrap_or_default()));
        while marked != 0 {
            let k = marked.trailing_zeros() as usize / 8;
            if is(word[k]) {
                return i + k;
            }
            marked &= marked - 1;
        }
        i += 8;
    }
    // The last few bytes one at a time, each in a word of its own.
    let tail = bytes.get(i..).unwrap_or_default();
    tail.iter()
        .position(|&b| candidates(u64::from(b)) & 0x80 != 0 && is(b))
        .map_or(bytes.len(), |n| i + n)
}

/// Line feeds in a row, with no escape between, after which plain text is taken in blocks.
const FLOOD_FEEDS: u32 = 2;
/// Plain text taken at once in a flood of short lines; the last block that does not fit is read
/// line by line.
const BLOCK: usize = 64;
// Its line feeds are summed in a `u8`.
const _: () = assert!(BLOCK < 256);

/// How much plain text at the start of `rest` (which starts `at` bytes into the piece) can be taken
/// in whole blocks: no escape in it, and, with its line feeds counted, each block's end still within
/// what the budget allows. Its length and line feeds.
fn fitting_stretch(
    rest: &[u8],
    at: usize,
    events: u64,
    allowed: impl Fn(u64) -> u64,
) -> (usize, u64) {
    let (mut len, mut feeds) = (0, 0);
    for block in rest.chunks_exact(BLOCK) {
        // Counted as bytes (at most 64 of them), which vectorizes. LF, VT and FF are 0x0a-0x0c.
        let count =
            |matches: fn(u8) -> bool| block.iter().map(|&b| u8::from(matches(b))).sum::<u8>();
        if count(|b| b == 0x1b) > 0 {
            break;
        }
        let more = u64::from(count(|b| b.wrapping_sub(b'\n') < 3));
        if ((at + len + BLOCK) as u64) >= allowed(events + feeds + more) {
            break;
        }
        len += BLOCK;
        feeds += more;
    }
    (len, feeds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(bytes: &[u8]) -> Piece {
        Scanner::default().next_piece(bytes, 10, 20, 0, u64::MAX)
    }

    #[test]
    fn counts_line_feeds_wraps_and_scrolling_sequences() {
        assert_eq!(whole(b"a\nb\nc").bound, 3);
        assert_eq!(whole(&[b'x'; 45]).bound, 3);
        assert_eq!(whole(b"\x1b[2J\x1b[S").bound, 21);
        assert_eq!(whole(b"x\x1b[100b").bound, 7);
        assert_eq!(whole(b"\x1bD\x1bE").bound, 3);
    }

    #[test]
    fn cuts_between_sequences_within_the_budget() {
        let bytes = b"1\n2\n3\n\x1b[31m4\n5\n";
        let piece = Scanner::default().next_piece(bytes, 10, 80, 0, 3);
        assert_eq!(&bytes[..piece.len], b"1\n2\n3");
        // A sequence is never cut, even when it alone passes the budget.
        let piece = Scanner::default().next_piece(b"\x1b[2Jab", 10, 80, 0, 3);
        assert_eq!(piece.len, 4);
    }

    #[test]
    fn a_flood_of_short_lines_is_cut_where_the_budget_ends_as_line_by_line() {
        let flood: Vec<u8> = (1..3000)
            .flat_map(|i| format!("{i}\r\n").into_bytes())
            .collect();
        for (cols, budget) in [(120, 132), (80, 30), (20, 500), (200, 9)] {
            let mut rest = &flood[..];
            while !rest.is_empty() {
                let piece = Scanner::default().next_piece(rest, 40, cols, 0, budget);
                let (run, next) = rest.split_at(piece.len);
                let feeds = run.iter().filter(|&&b| b == b'\n').count() as u64;
                // What the piece really pushes is within its bound, and the bound within the budget.
                assert!(
                    feeds + run.len() as u64 / cols < piece.bound,
                    "{cols} {budget}"
                );
                assert!(piece.bound <= budget, "{cols} {budget}: {}", piece.bound);
                // As long as it can be: one more line would not fit, unless the input ended.
                if !next.is_empty() {
                    assert!(
                        piece.bound + 2 >= budget,
                        "{cols} {budget}: {}",
                        piece.bound
                    );
                }
                rest = next;
            }
        }
    }

    #[test]
    fn a_clear_of_the_primary_history_ends_the_piece() {
        let piece = whole(b"a\n\x1b[3Jb\n");
        assert!(piece.clears);
        assert_eq!(piece.len, 6);
        // On the alternate screen it clears nothing that is kept.
        let piece = whole(b"\x1b[?1049h\x1b[3Jb\n\x1b[?1049l");
        assert!(!piece.clears);
        assert!(whole(b"\x1b[?1049h\x1bc").clears);
    }

    #[test]
    fn a_sequence_split_between_chunks_is_counted_when_it_ends() {
        let first = whole(b"ab\x1b[");
        let second = first.scanner.next_piece(b"5S", 10, 20, 0, u64::MAX);
        assert_eq!(second.bound, 11);
        let first = whole(b"\x1b[?10");
        let second = first.scanner.next_piece(b"49h", 10, 20, 0, u64::MAX);
        assert!(second.scanner.alt);
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config {
            cases: 500,
            failure_persistence: None,
            ..Default::default()
        })]

        /// Looking a word at a time finds what looking at every byte finds, from anywhere.
        #[test]
        fn word_at_a_time_finds_the_same_bytes_as_byte_at_a_time(
            bytes in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::sample::select(vec![0x1b, b'\n', 0x0b, 0x0c, b'\r', b'[', b';', b'?', b' ', b'/', b'@', b'~', 0x7f, 0x80, 0x9b, 0xff]),
                    proptest::num::u8::ANY,
                ],
                0..64,
            ),
            from in 0usize..70,
        ) {
            let from = from.min(bytes.len());
            let scalar = |stop: fn(u8) -> bool| {
                bytes[from..].iter().position(|&b| stop(b)).map_or(bytes.len(), |n| from + n)
            };
            proptest::prop_assert_eq!(
                first_text_end(&bytes, from),
                scalar(|b| ENDS_TEXT[usize::from(b)])
            );
            proptest::prop_assert_eq!(
                parameters_end(&bytes, from),
                scalar(|b| !(0x20..=0x3f).contains(&b))
            );
        }
    }

    #[test]
    fn quiet_sequences_in_long_text_are_never_cut_through() {
        // Colours between words, on a narrow screen with a small budget: every piece ends between
        // two sequences, within the budget, and the pieces add up to the input.
        let input: Vec<u8> = (0..400)
            .flat_map(|i| format!("\x1b[3{}mword{i} \x1b[0m", i % 8).into_bytes())
            .collect();
        let (cols, budget) = (4, 6);
        let mut rest = &input[..];
        let mut scanner = Scanner::default();
        let mut taken = 0;
        while !rest.is_empty() {
            let piece = scanner.next_piece(rest, 10, cols, 0, budget);
            assert!(piece.len > 0);
            assert!(piece.bound <= budget, "{}", piece.bound);
            let (run, next) = rest.split_at(piece.len);
            // No sequence is left open at the cut.
            assert!(
                piece.scanner.state == State::Ground,
                "{:?}",
                String::from_utf8_lossy(run)
            );
            assert!(
                next.is_empty() || piece.bound + 2 >= budget,
                "{}",
                piece.bound
            );
            taken += run.len();
            scanner = piece.scanner;
            rest = next;
        }
        assert_eq!(taken, input.len());
    }
}
