//! Taking the picture sequences out of the byte stream before alacritty sees it.
//!
//! [`Intercept::scan`] splits what a program wrote into text for alacritty and [`Event`]s: a picture
//! (kitty APC `ESC _ G`, iTerm2 `ESC ] 1337;File=`, sixel `ESC P ... q`), a capability query this
//! terminal answers itself when pictures are on, or a screen clear that also removes pictures. A
//! picture's bytes are consumed as they stream: base64 is decoded as it comes and sixel drawn as it
//! comes, with their caps, so nothing is buffered past [`MAX_PAYLOAD_BYTES`]. A sequence cut by the
//! end of a read is held back (a few bytes) until the next read completes it.

use std::ops::Range;

use super::bitmap::{Bitmap, MAX_PAYLOAD_BYTES};
use super::decode::{Base64, Refusal};
use super::sixel::SixelDecoder;

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;

/// The most bytes of an escape sequence looked at to tell what it is; longer ones are not ours.
const LOOKAHEAD: usize = 32;

/// The most bytes of control data (kitty keys, iTerm2 arguments) kept.
const MAX_CONTROL_BYTES: usize = 4096;

/// What a piece of input is.
#[derive(Debug)]
pub(crate) enum Piece {
    /// Bytes for alacritty.
    Text(Range<usize>),
    /// An ESC for alacritty that ended a picture's string and began something else.
    Esc,
    Event(Event),
}

#[derive(Debug)]
pub(crate) enum Event {
    /// A kitty graphics command: its control data (`a=T,f=100,...`) and decoded payload.
    Kitty {
        control: Vec<u8>,
        payload: Result<Vec<u8>, Refusal>,
    },
    /// An iTerm2 `File=` with its arguments (`inline=1;width=8`) and decoded file.
    Iterm {
        args: Vec<u8>,
        payload: Result<Vec<u8>, Refusal>,
    },
    /// `OSC 1337;ReportCellSize`.
    ItermCellSize,
    Sixel(Result<Bitmap, Refusal>),
    /// `CSI c`: primary device attributes.
    PrimaryDa,
    /// `CSI ? Pi ; Pa ; Pv S`: XTSMGRAPHICS, its parameters.
    Graphics(Vec<u32>),
    /// `CSI 16 t`: the size of a cell in pixels.
    CellPixels,
    /// `CSI 2 J` (passed on to alacritty too).
    Clear,
    /// `ESC c` (passed on too).
    Reset,
}

/// A string being consumed.
#[derive(Debug)]
enum Body {
    Kitty(Collect),
    Iterm(Collect),
    Sixel(Box<SixelDecoder>),
    /// An OSC whose content is not needed: this event when it ends.
    Swallow(fn() -> Event),
}

/// Control data up to a separator, then a base64 payload.
#[derive(Debug, Default)]
struct Collect {
    control: Vec<u8>,
    in_payload: bool,
    base64: Base64,
    payload: Vec<u8>,
    refused: Option<Refusal>,
}

impl Collect {
    fn feed(&mut self, mut bytes: &[u8], separator: u8) {
        if !self.in_payload {
            let (control, rest) = match memchr::memchr(separator, bytes) {
                Some(at) => {
                    self.in_payload = true;
                    (&bytes[..at], &bytes[at + 1..])
                }
                None => (bytes, &b""[..]),
            };
            if self.control.len() + control.len() > MAX_CONTROL_BYTES {
                self.refuse(format!("control data past {MAX_CONTROL_BYTES} bytes"));
            } else {
                self.control.extend_from_slice(control);
            }
            bytes = rest;
        }
        while self.refused.is_none() && !bytes.is_empty() {
            let (now, later) = bytes.split_at(bytes.len().min(64 * 1024));
            self.base64.feed(now, &mut self.payload);
            if self.payload.len() > MAX_PAYLOAD_BYTES {
                self.refuse(format!(
                    "transmission past the {} MB limit",
                    MAX_PAYLOAD_BYTES >> 20
                ));
            }
            bytes = later;
        }
    }

    fn refuse(&mut self, why: String) {
        if self.refused.is_none() {
            self.refused = Some(why);
            self.payload = Vec::new();
        }
    }

    fn finish(mut self) -> (Vec<u8>, Result<Vec<u8>, Refusal>) {
        self.base64.flush(&mut self.payload);
        let payload = match self.refused {
            Some(why) => Err(why),
            None => Ok(self.payload),
        };
        (self.control, payload)
    }
}

/// How the bytes at an ESC read.
enum Start {
    /// Too few bytes to tell: hold them back.
    Need,
    /// Not ours.
    Plain,
    /// A string of ours opens; its opening is this long.
    Body(Body, usize),
    /// A sequence this long that is answered here and not passed on.
    Query(Event, usize),
    /// A sequence this long passed on, then this event.
    Forward(Event, usize),
}

/// Where the scan of a program's output stands between reads.
#[derive(Debug, Default)]
pub(crate) struct Intercept {
    body: Option<Body>,
    /// An ESC ended a string: a `\` right after it completes the terminator.
    after_esc: bool,
    /// Bytes held back at the end of the last read.
    pending: Vec<u8>,
}

impl Intercept {
    /// The bytes held back from the last read, to be put before the next one.
    pub(crate) fn take_pending(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.pending)
    }

    /// Split `input` into pieces; bytes at its end that may begin one of our sequences are held
    /// back (see [`Intercept::take_pending`]).
    pub(crate) fn scan(&mut self, input: &[u8]) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let mut i = 0;
        let mut text_start = 0;
        while i < input.len() {
            if let Some(body) = &mut self.body {
                let end = input[i..]
                    .iter()
                    .position(|&b| matches!(b, ESC | CAN | SUB | BEL))
                    .map(|n| i + n);
                let stop = end.unwrap_or(input.len());
                let is_osc = matches!(body, Body::Iterm(_) | Body::Swallow(_));
                if let Some(at) = end.filter(|&at| input[at] == BEL && !is_osc) {
                    // BEL inside APC or DCS is part of the string.
                    feed_body(body, &input[i..=at]);
                    i = at + 1;
                    continue;
                }
                feed_body(body, &input[i..stop]);
                let Some(at) = end else {
                    return pieces;
                };
                let body = self.body.take().expect("a body is being read");
                match input[at] {
                    CAN | SUB => {}
                    terminator => {
                        pieces.push(Piece::Event(finish(body)));
                        self.after_esc = terminator == ESC;
                    }
                }
                i = at + 1;
                text_start = i;
                continue;
            }
            if std::mem::take(&mut self.after_esc) {
                if input[i] == b'\\' {
                    i += 1;
                    text_start = i;
                    continue;
                }
                pieces.push(Piece::Esc);
            }
            let Some(n) = memchr::memchr(ESC, &input[i..]) else {
                break;
            };
            let at = i + n;
            match classify(&input[at..]) {
                Start::Need => {
                    push_text(&mut pieces, text_start..at);
                    self.pending = input[at..].to_vec();
                    return pieces;
                }
                Start::Plain => i = at + 1,
                Start::Body(body, len) => {
                    push_text(&mut pieces, text_start..at);
                    self.body = Some(body);
                    i = at + len;
                    text_start = i;
                }
                Start::Query(event, len) => {
                    push_text(&mut pieces, text_start..at);
                    pieces.push(Piece::Event(event));
                    i = at + len;
                    text_start = i;
                }
                Start::Forward(event, len) => {
                    push_text(&mut pieces, text_start..at + len);
                    pieces.push(Piece::Event(event));
                    i = at + len;
                    text_start = i;
                }
            }
        }
        push_text(&mut pieces, text_start..input.len());
        pieces
    }
}

fn push_text(pieces: &mut Vec<Piece>, range: Range<usize>) {
    if !range.is_empty() {
        pieces.push(Piece::Text(range));
    }
}

fn feed_body(body: &mut Body, bytes: &[u8]) {
    match body {
        Body::Kitty(collect) => collect.feed(bytes, b';'),
        Body::Iterm(collect) => collect.feed(bytes, b':'),
        Body::Sixel(decoder) => decoder.feed(bytes),
        Body::Swallow(_) => {}
    }
}

fn finish(body: Body) -> Event {
    match body {
        Body::Kitty(collect) => {
            let (control, payload) = collect.finish();
            Event::Kitty { control, payload }
        }
        Body::Iterm(collect) => {
            let (args, payload) = collect.finish();
            Event::Iterm { args, payload }
        }
        Body::Sixel(decoder) => Event::Sixel(decoder.finish()),
        Body::Swallow(event) => event(),
    }
}

/// `bytes` starts with `prefix`: Some(true); could still (it is a shorter prefix of it): None;
/// cannot: Some(false).
fn starts(bytes: &[u8], prefix: &[u8]) -> Option<bool> {
    let n = bytes.len().min(prefix.len());
    if bytes[..n] != prefix[..n] {
        Some(false)
    } else if n < prefix.len() {
        None
    } else {
        Some(true)
    }
}

/// What the sequence at the start of `bytes` (an ESC) is to us.
fn classify(bytes: &[u8]) -> Start {
    let Some(&kind) = bytes.get(1) else {
        return Start::Need;
    };
    match kind {
        b'_' => match bytes.get(2) {
            None => Start::Need,
            Some(b'G') => Start::Body(Body::Kitty(Collect::default()), 3),
            Some(_) => Start::Plain,
        },
        b']' => {
            let rest = &bytes[2..];
            match starts(rest, b"1337;File=") {
                Some(true) => return Start::Body(Body::Iterm(Collect::default()), 12),
                None => return Start::Need,
                Some(false) => {}
            }
            match starts(rest, b"1337;ReportCellSize") {
                Some(true) => Start::Body(Body::Swallow(|| Event::ItermCellSize), 21),
                None => Start::Need,
                Some(false) => Start::Plain,
            }
        }
        b'P' => {
            for (n, &b) in bytes.iter().enumerate().skip(2).take(LOOKAHEAD) {
                match b {
                    b'0'..=b'9' | b';' => {}
                    b'q' => {
                        return Start::Body(
                            Body::Sixel(Box::new(SixelDecoder::new(&bytes[2..n]))),
                            n + 1,
                        )
                    }
                    _ => return Start::Plain,
                }
            }
            if bytes.len() < LOOKAHEAD + 2 {
                Start::Need
            } else {
                Start::Plain
            }
        }
        b'[' => classify_csi(bytes),
        b'c' => Start::Forward(Event::Reset, 2),
        _ => Start::Plain,
    }
}

/// The CSI sequences we answer or follow: DA, XTSMGRAPHICS, 16 t, ED 2 and 3.
fn classify_csi(bytes: &[u8]) -> Start {
    let mut end = None;
    for (n, &b) in bytes.iter().enumerate().skip(2).take(LOOKAHEAD) {
        match b {
            0x30..=0x3f => {}
            0x40..=0x7e => {
                end = Some(n);
                break;
            }
            _ => return Start::Plain,
        }
    }
    let Some(end) = end else {
        return if bytes.len() < LOOKAHEAD + 2 {
            Start::Need
        } else {
            Start::Plain
        };
    };
    let params = &bytes[2..end];
    let len = end + 1;
    match (params, bytes[end]) {
        (b"" | b"0", b'c') => Start::Query(Event::PrimaryDa, len),
        ([b'?', rest @ ..], b'S') => {
            let values = rest
                .split(|&b| b == b';')
                .map(|p| {
                    std::str::from_utf8(p)
                        .ok()
                        .and_then(|s| s.parse().ok())
                        .unwrap_or(0)
                })
                .collect();
            Start::Query(Event::Graphics(values), len)
        }
        (b"16", b't') => Start::Query(Event::CellPixels, len),
        (b"2", b'J') => Start::Forward(Event::Clear, len),
        _ => Start::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scan `reads` one after another; the text passed on and the events, in order.
    fn scan(reads: &[&[u8]]) -> (Vec<u8>, Vec<Event>) {
        let mut intercept = Intercept::default();
        let mut text = Vec::new();
        let mut events = Vec::new();
        for read in reads {
            let mut input = intercept.take_pending();
            input.extend_from_slice(read);
            for piece in intercept.scan(&input) {
                match piece {
                    Piece::Text(range) => text.extend_from_slice(&input[range]),
                    Piece::Esc => text.push(ESC),
                    Piece::Event(event) => events.push(event),
                }
            }
        }
        (text, events)
    }

    #[test]
    fn pictures_and_queries_leave_the_text_and_other_sequences_alone() {
        let (text, events) = scan(&[b"a\x1b[1mb\x1b_Ga=T;aGk=\x1b\\c\x1b[cd\x1b]0;t\x07e\x1b[2Jf"]);
        assert_eq!(text, b"a\x1b[1mbcd\x1b]0;t\x07e\x1b[2Jf");
        assert!(
            matches!(&events[0], Event::Kitty { control, payload: Ok(p) } if control == b"a=T" && p == b"hi")
        );
        assert!(matches!(events[1], Event::PrimaryDa));
        assert!(matches!(events[2], Event::Clear));
    }

    #[test]
    fn a_sequence_cut_between_reads_is_put_back_together() {
        let input: &[u8] = b"x\x1b]1337;File=inline=1:aGk=\x07y\x1bPq#0!3~\x1b\\z";
        for cut in 0..input.len() {
            let (text, events) = scan(&[&input[..cut], &input[cut..]]);
            assert_eq!(text, b"xyz", "cut at {cut}");
            assert_eq!(events.len(), 2, "cut at {cut}");
            assert!(
                matches!(&events[0], Event::Iterm { args, payload: Ok(p) } if args == b"inline=1" && p == b"hi")
            );
            assert!(matches!(&events[1], Event::Sixel(Ok(b)) if b.width == 3));
        }
    }

    #[test]
    fn a_huge_transmission_is_refused_as_it_streams() {
        let mut intercept = Intercept::default();
        let _ = intercept.scan(b"\x1b_Ga=T,f=100;");
        let chunk = vec![b'A'; 1 << 20];
        // 100 MB of base64: what is kept never passes the cap.
        for _ in 0..134 {
            assert!(intercept.scan(&chunk).is_empty());
            if let Some(Body::Kitty(collect)) = &intercept.body {
                assert!(collect.payload.len() <= MAX_PAYLOAD_BYTES + (64 << 10));
            }
        }
        let pieces = intercept.scan(b"\x1b\\ok");
        assert!(matches!(
            &pieces[0],
            Piece::Event(Event::Kitty { payload: Err(why), .. }) if why.contains("limit")
        ));
        assert!(matches!(&pieces[1], Piece::Text(r) if r.len() == 2));
    }

    #[test]
    fn other_dcs_and_csi_sequences_pass() {
        let (text, events) = scan(&[b"\x1bP$qm\x1b\\\x1b[>c\x1b[14t\x1b[6n"]);
        assert_eq!(text, b"\x1bP$qm\x1b\\\x1b[>c\x1b[14t\x1b[6n");
        assert!(events.is_empty());
    }
}
