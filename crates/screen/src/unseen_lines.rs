//! Runs of plain lines in a program's output: the lines a flood pushes out of sight before anyone
//! could see them.
//!
//! `seq`, `cat` of a log or a chatty build write hundreds of short lines per read. The emulator draws
//! each one on the bottom row, and a screenful of line feeds later it has gone into the history,
//! where only its text is kept. When a line is plain (printable ASCII, narrower than the screen,
//! ended by CR LF) and the terminal prints it from column 0 of a freshly scrolled bottom row, what the
//! emulator would do with it is known without running it: the history gets the line's text.
//! [`find`] finds such runs; [`crate::Screen`] checks the terminal's state and takes all but the lines
//! that stay on the screen (or in alacritty's own window of history) straight into the history.

use memchr::{memchr, memchr_iter};

/// A run of plain lines in a piece of output (see [`find`]).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Run {
    /// Where the line feed that ends the line before the run is (a CR precedes it).
    pub(crate) start: usize,
    /// Just past the CR LF of the run's last line.
    pub(crate) end: usize,
    /// The plain lines in the run.
    pub(crate) lines: usize,
}

/// The first run in `bytes` of at least `min` plain lines, each at most `cols - 1` printable ASCII
/// bytes (0x20-0x7e) followed by CR LF, right after a CR LF. The run ends with a line that is not
/// empty: then the last character printed, which CSI b repeats, is one the emulator prints.
pub(crate) fn find(bytes: &[u8], cols: usize, min: usize) -> Option<Run> {
    // Most output has too few lines per read for a run: counted at a fraction of what reading each
    // line costs.
    if memchr_iter(b'\n', bytes).take(min).count() < min {
        return None;
    }
    let mut from = 0;
    while let Some(found) = memchr(b'\n', &bytes[from..]) {
        let start = from + found;
        from = start + 1;
        if start == 0 || bytes[start - 1] != b'\r' {
            continue;
        }
        let (mut lines, mut last) = (0, None);
        let mut at = start + 1;
        while let Some(line) = plain_line(&bytes[at..], cols) {
            lines += 1;
            if line > 0 {
                last = Some((lines, at + line + 2));
            }
            at += line + 2;
        }
        match last {
            Some((lines, end)) if lines >= min => return Some(Run { start, end, lines }),
            // The line that ended this run may end the line before the next one.
            _ => from = from.max(at.saturating_sub(1)),
        }
    }
    None
}

/// The length of the plain line `bytes` starts with, without its CR LF; `None` when it is not one.
fn plain_line(bytes: &[u8], cols: usize) -> Option<usize> {
    let len = bytes
        .iter()
        .take(cols)
        .position(|b| !(0x20..=0x7e).contains(b))?;
    (bytes[len] == b'\r' && bytes.get(len + 1) == Some(&b'\n')).then_some(len)
}

/// The lines of a run, without their CR LF: `bytes` from just past the run's first line feed.
pub(crate) struct Lines<'a> {
    bytes: &'a [u8],
    /// Where the next line starts.
    at: usize,
}

impl<'a> Lines<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Lines<'a> {
        Lines { bytes, at: 0 }
    }

    /// Where the next line starts in the bytes.
    pub(crate) fn offset(&self) -> usize {
        self.at
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.bytes.get(self.at..)?;
        let end = memchr(b'\n', rest)?;
        self.at += end + 1;
        // Every line of a run ends with CR LF.
        Some(&rest[..end.saturating_sub(1)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_starts_at_a_line_feed_after_a_carriage_return_and_ends_with_a_printed_line() {
        let bytes = b"half a li\r\none\r\ntwo\r\n\r\nthree\r\n\r\n\r\ntail";
        let run = find(bytes, 80, 3).expect("a run");
        assert_eq!(&bytes[..run.start], b"half a li\r");
        assert_eq!(&bytes[run.start..run.end], b"\none\r\ntwo\r\n\r\nthree\r\n");
        assert_eq!(run.lines, 4);
        let lines: Vec<&[u8]> = Lines::new(&bytes[run.start + 1..run.end]).collect();
        assert_eq!(lines, [&b"one"[..], b"two", b"", b"three"]);
    }

    #[test]
    fn lines_that_are_not_plain_end_a_run() {
        // Too wide, an escape, a tab, a bare line feed, UTF-8, a line without its end.
        for breaker in [
            &b"0123456789\r\n"[..],
            b"a \x1b[1mbold\x1b[m\r\n",
            b"a\tb\r\n",
            b"bare\n",
            b"caf\xc3\xa9\r\n",
            b"unfinished",
        ] {
            let mut bytes = b"x\r\n1\r\n2\r\n".to_vec();
            bytes.extend_from_slice(breaker);
            bytes.extend_from_slice(b"3\r\n4\r\n5\r\n");
            let run = find(&bytes, 10, 2).expect("a run");
            assert_eq!(&bytes[run.start..run.end], b"\n1\r\n2\r\n", "{breaker:?}");
            // A line that is not plain but ends with CR LF may precede the next run.
            let next = find(&bytes, 10, 3).map(|run| bytes[run.start..run.end].to_vec());
            let expected = breaker
                .ends_with(b"\r\n")
                .then(|| b"\n3\r\n4\r\n5\r\n".to_vec());
            assert_eq!(next, expected, "{breaker:?}");
        }
    }

    #[test]
    fn a_later_run_is_found_past_a_short_one() {
        let bytes = b"\r\na\r\n\x1b[m\r\nb\r\nc\r\nd\r\n";
        let run = find(bytes, 80, 3).expect("a run");
        assert_eq!(&bytes[run.start..run.end], b"\nb\r\nc\r\nd\r\n");
        assert_eq!(run.lines, 3);
        assert_eq!(find(b"no line feed at all", 80, 1), None);
        assert_eq!(find(b"\r\n\r\n\r\n", 80, 1), None, "only empty lines");
    }
}

#[cfg(test)]
#[path = "unseen_tests.rs"]
mod screen_tests;
