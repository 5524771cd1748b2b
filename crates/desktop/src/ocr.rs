//! Text from pixels, for windows whose application exposes no accessibility tree (Tk, xterm, xcalc,
//! Wine, games, remote desktops): the words tesseract finds in a window's picture, joined into the
//! phrases a person reads as one label, each with its box on the screen.
//!
//! The picture is prepared as measurements on this kind of machine showed best (Tk, xterm on white
//! and on black, xcalc; tesseract 5.3): grey, light text on dark turned dark on light, enlarged 3x
//! with a Lanczos filter (2x for large windows), black and white at Otsu's threshold, what is not
//! text cleared (borders and rules, solid blocks such as a block cursor), in a white margin; one
//! tesseract run with `--psm 6` (a block of text). The marks it leaves unread (a calculator key's
//! lone character) and its short unsure words are read once more, side by side in a strip, with
//! `--psm 7`. Tesseract runs as a child process (`tesseract stdin stdout`), bounded in time, with
//! one thread. Figures: BENCHMARKS.md, "Desktops as text: every toolkit, and text from pixels".

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncWriteExt;

use crate::capture::Frame;

/// How many times the picture is enlarged before reading: tesseract reads UI text (9-13 px high)
/// far better at 27-39 px.
const SCALE: u32 = 3;

/// Words read with less confidence than this (0-100) are dropped: below it tesseract's guesses are
/// mostly borders and icons read as letters (real labels came at 21: `old_root` in an xterm).
const MIN_CONFIDENCE: f32 = 20.0;

/// Marks that are not letters or digits (`|`, `[]`) are kept only above this confidence.
const MIN_CONFIDENCE_MARKS: f32 = 60.0;

/// Windows larger than this many pixels are enlarged 2x, not 3x: as well read (Tk, xterm), in
/// half the time.
const LARGE_WINDOW: u64 = 800 * 600;

/// A window larger than this many pixels is not read (tesseract would take seconds).
pub const LARGEST: u64 = 1920 * 1200;

/// How long one read may take.
pub const LIMIT: Duration = Duration::from_secs(20);

/// A phrase read from pixels: words on one line with no more than a space between them, and its
/// box in the picture's pixels (x, y, width, height).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phrase {
    pub text: String,
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

/// One word of tesseract's TSV, its box in the picture it was given.
#[derive(Debug, Clone, PartialEq)]
struct Word {
    text: String,
    x: i32,
    y: i32,
    width: u32,
    height: u32,
    confidence: f32,
    /// Block, paragraph and line: words of one line share it.
    line: (u32, u32, u32),
}

/// Why text could not be read from pixels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OcrError {
    /// tesseract is not installed.
    Missing,
    /// It ran and failed, or took too long: what it said.
    Failed(String),
}

impl std::fmt::Display for OcrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OcrError::Missing => write!(
                f,
                "reading text from pixels needs tesseract (apt install tesseract-ocr tesseract-ocr-eng)"
            ),
            OcrError::Failed(why) => write!(f, "tesseract failed: {why}"),
        }
    }
}

/// Whether tesseract can be run here.
pub fn available() -> bool {
    crate::process::find_on_path(&["tesseract"]).is_some()
}

/// The phrases in `frame` (a window's picture), boxes in its pixels.
pub async fn read(frame: &Frame) -> Result<Vec<Phrase>, OcrError> {
    if frame.width == 0 || frame.height == 0 {
        return Ok(Vec::new());
    }
    let Some((_, program)) = crate::process::find_on_path(&["tesseract"]) else {
        return Err(OcrError::Missing);
    };
    let scale = if u64::from(frame.width) * u64::from(frame.height) > LARGE_WINDOW {
        2
    } else {
        SCALE
    };
    let picture = prepare(frame, scale);
    let mut read = words(&tesseract(&program, &picture, "6").await?);
    // Marks no word covers (a key's lone character: psm 6 leaves many out) and short words read
    // unsure, read again, each alone in a strip of them, as single lines.
    let unsure = |w: &Word| w.confidence < SURE && w.text.chars().count() <= 3;
    let sure: Vec<Word> = read.iter().filter(|w| !unsure(w)).cloned().collect();
    let marks = unread_marks(&picture, &sure, scale as usize);
    if !marks.is_empty() {
        let (strip, spans) = strip_of(&picture, &marks);
        let again = words(&tesseract(&program, &strip, "7").await?);
        for (mark, (from, to)) in marks.iter().zip(spans) {
            let inside: Vec<&Word> = again
                .iter()
                .filter(|w| (from..to).contains(&(w.x + w.width as i32 / 2)))
                .collect();
            if inside.is_empty() {
                continue;
            }
            read.retain(|w| !(unsure(w) && overlaps(w, mark)));
            read.push(Word {
                text: inside
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                x: mark.x,
                y: mark.y,
                width: mark.width,
                height: mark.height,
                confidence: inside.iter().map(|w| w.confidence).fold(100.0, f32::min),
                // A line of its own.
                line: (u32::MAX, mark.y as u32, mark.x as u32),
            });
        }
    }
    let read: Vec<Word> = read.into_iter().map(|w| shrink(w, scale)).collect();
    Ok(in_reading_order(phrases(&read)))
}

/// `word` with its box in the picture before it was enlarged `scale` times.
fn shrink(word: Word, scale: u32) -> Word {
    let scale = scale.max(1);
    Word {
        x: word.x / scale as i32,
        y: word.y / scale as i32,
        width: word.width.div_ceil(scale),
        height: word.height.div_ceil(scale),
        ..word
    }
}

/// Short words read with less confidence than this are read again on their own.
const SURE: f32 = 60.0;

/// Run tesseract on `picture` with page segmentation mode `psm`: its TSV.
async fn tesseract(
    program: &std::path::Path,
    picture: &Picture,
    psm: &str,
) -> Result<String, OcrError> {
    let pgm = pgm(picture);
    let mut child = tokio::process::Command::new(program)
        .args([
            "stdin", "stdout", "--psm", psm, "--dpi", "300", "-l", "eng", "tsv",
        ])
        // One thread: its OpenMP threads only fight each other on a small picture.
        .env("OMP_THREAD_LIMIT", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| OcrError::Failed(format!("cannot start it: {e}")))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let feed = async move {
        stdin.write_all(&pgm).await?;
        stdin.shutdown().await
    };
    let run = async {
        let (fed, out) = tokio::join!(feed, child.wait_with_output());
        let out = out.map_err(|e| OcrError::Failed(e.to_string()))?;
        if !out.status.success() {
            let said = String::from_utf8_lossy(&out.stderr);
            return Err(OcrError::Failed(format!(
                "{}: {}",
                out.status,
                said.trim().lines().last().unwrap_or("")
            )));
        }
        fed.map_err(|e| OcrError::Failed(format!("writing the picture: {e}")))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    tokio::time::timeout(LIMIT, run)
        .await
        .map_err(|_| OcrError::Failed(format!("no answer within {} s", LIMIT.as_secs())))?
}

/// `frame` as tesseract reads it best: grey, dark text on light, enlarged `scale` times (Lanczos),
/// black and white at Otsu's threshold, what is not text cleared.
fn prepare(frame: &Frame, scale: u32) -> Picture {
    let (w, h) = (frame.width as usize, frame.height as usize);
    let mut grey: Vec<u8> = frame
        .rgb
        .chunks_exact(3)
        .map(|p| {
            ((u32::from(p[0]) * 299 + u32::from(p[1]) * 587 + u32::from(p[2]) * 114) / 1000) as u8
        })
        .collect();
    let mean = grey.iter().map(|v| u64::from(*v)).sum::<u64>() / grey.len().max(1) as u64;
    if mean < 128 {
        grey.iter_mut().for_each(|v| *v = 255 - *v);
    }
    let (sw, sh) = (w * scale as usize, h * scale as usize);
    let wide = enlarge(&grey, w, h, scale as usize, true);
    let mut big = enlarge(&wide, sw, h, scale as usize, false);
    let threshold = otsu(&big);
    for v in &mut big {
        *v = if *v > threshold { 255 } else { 0 };
    }
    let near_rules = clear_rules(&mut big, sw, 20 * scale as usize, 2 * scale as usize);
    clear_shapes(&mut big, sw, scale as usize, &near_rules);
    Picture {
        pixels: big,
        width: sw,
        height: sh,
    }
}

/// A black and white picture (0 or 255 a pixel, rows top to bottom).
struct Picture {
    pixels: Vec<u8>,
    width: usize,
    height: usize,
}

/// `picture` as a binary PGM, in a white margin: tesseract drops words that touch the picture's
/// edge (an xterm's first column does).
fn pgm(picture: &Picture) -> Vec<u8> {
    let (pw, ph) = (picture.width + 2 * MARGIN, picture.height + 2 * MARGIN);
    let mut pgm = format!("P5\n{pw} {ph}\n255\n").into_bytes();
    let header = pgm.len();
    pgm.resize(header + pw * ph, 255);
    for (y, row) in picture
        .pixels
        .chunks_exact(picture.width.max(1))
        .enumerate()
    {
        let start = header + (y + MARGIN) * pw + MARGIN;
        pgm[start..start + picture.width].copy_from_slice(row);
    }
    pgm
}

/// A box in a picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Boxed {
    x: i32,
    y: i32,
    width: u32,
    height: u32,
}

impl Boxed {
    fn right(&self) -> i32 {
        self.x + self.width as i32
    }
    fn bottom(&self) -> i32 {
        self.y + self.height as i32
    }
    /// Whether the two boxes, this one grown by `dx` and `dy`, touch.
    fn near(&self, other: &Boxed, dx: i32, dy: i32) -> bool {
        self.x - dx < other.right()
            && other.x < self.right() + dx
            && self.y - dy < other.bottom()
            && other.y < self.bottom() + dy
    }
    fn join(&self, other: &Boxed) -> Boxed {
        let (x, y) = (self.x.min(other.x), self.y.min(other.y));
        Boxed {
            x,
            y,
            width: (self.right().max(other.right()) - x) as u32,
            height: (self.bottom().max(other.bottom()) - y) as u32,
        }
    }
}

fn overlaps(word: &Word, mark: &Boxed) -> bool {
    let boxed = Boxed {
        x: word.x,
        y: word.y,
        width: word.width,
        height: word.height,
    };
    boxed.near(mark, 0, 0)
}

/// The dark marks of `picture` no word of `read` covers, close ones joined (`+/-`, `1/x`), of a
/// size text could be (2 to 40 pixels high before enlarging `scale` times); at most 64.
fn unread_marks(picture: &Picture, read: &[Word], scale: usize) -> Vec<Boxed> {
    let covered = |b: &Boxed| {
        let (cx, cy) = (b.x + b.width as i32 / 2, b.y + b.height as i32 / 2);
        let pad = scale as i32;
        read.iter().any(|w| {
            cx >= w.x - pad
                && cx < w.x + w.width as i32 + pad
                && cy >= w.y - pad
                && cy < w.y + w.height as i32 + pad
        })
    };
    let mut marks: Vec<Boxed> = Vec::new();
    each_shape(&picture.pixels, picture.width, |_, b| {
        if (b.width as usize > scale || b.height as usize > scale) && !covered(&b) {
            marks.push(b);
        }
    });
    // Join marks a letter's gap apart, until none are.
    let (dx, dy) = (3 * scale as i32, scale as i32);
    let mut joined = true;
    while joined {
        joined = false;
        let mut out: Vec<Boxed> = Vec::new();
        for mark in marks {
            match out.iter_mut().find(|o| o.near(&mark, dx, dy)) {
                Some(o) => {
                    *o = o.join(&mark);
                    joined = true;
                }
                None => out.push(mark),
            }
        }
        marks = out;
    }
    marks.retain(|m| {
        let (h, w) = (m.height as usize, m.width as usize);
        (2 * scale..=40 * scale).contains(&h) && w <= 80 * scale
    });
    marks.truncate(64);
    marks
}

/// The `marks` of `picture` side by side in a strip, twice the tallest mark's height apart, each vertically
/// centred: the strip, and where each mark lies across it.
fn strip_of(picture: &Picture, marks: &[Boxed]) -> (Picture, Vec<(i32, i32)>) {
    let tallest = marks.iter().map(|m| m.height as usize).max().unwrap_or(0);
    // Wide apart: psm 7 joins marks a word's space apart into one word.
    let gap = (2 * tallest).max(16);
    let height = tallest + gap;
    let width = marks.iter().map(|m| m.width as usize + gap).sum::<usize>() + gap;
    let mut pixels = vec![255u8; width * height];
    let mut spans = Vec::new();
    let mut at = gap;
    for m in marks {
        let top = (height - m.height as usize) / 2;
        for y in 0..m.height as usize {
            let from = (m.y as usize + y) * picture.width + m.x as usize;
            let to = (top + y) * width + at;
            pixels[to..to + m.width as usize]
                .copy_from_slice(&picture.pixels[from..from + m.width as usize]);
        }
        spans.push((
            at as i32 - gap as i32 / 2,
            (at + m.width as usize + gap / 2) as i32,
        ));
        at += m.width as usize + gap;
    }
    (
        Picture {
            pixels,
            width,
            height,
        },
        spans,
    )
}

/// Phrases in the order a person reads them: rows top to bottom (a phrase whose middle is within
/// the row's first phrase's height belongs to its row), each row left to right.
fn in_reading_order(mut phrases: Vec<Phrase>) -> Vec<Phrase> {
    phrases.sort_by_key(|p| p.y + p.height as i32 / 2);
    let mut rows: Vec<Vec<Phrase>> = Vec::new();
    for phrase in phrases {
        let middle = phrase.y + phrase.height as i32 / 2;
        match rows.last_mut() {
            Some(row)
                if (middle - (row[0].y + row[0].height as i32 / 2)).abs() * 2
                    < row[0].height as i32 =>
            {
                row.push(phrase)
            }
            _ => rows.push(vec![phrase]),
        }
    }
    rows.into_iter()
        .flat_map(|mut row| {
            row.sort_by_key(|p| p.x);
            row
        })
        .collect()
}

/// The white margin around the enlarged picture, in its pixels.
const MARGIN: usize = 24;

/// Turn white every straight run of dark pixels at least `longest` long, across and down, in a black
/// and white picture `width` wide: the borders of buttons and fields, rules, box-drawing lines. No
/// letter has a straight stroke that long; psm 6 reads a button's border as text (xcalc's keys).
/// Returns the pixels within `near` of what was cleared, where what is left of a border (a corner
/// of a sunken field) would be read as a mark ("Email address.").
fn clear_rules(pixels: &mut [u8], width: usize, longest: usize, near: usize) -> Vec<bool> {
    let height = pixels.len() / width.max(1);
    let mut clear = vec![false; pixels.len()];
    let mut runs = |at: &dyn Fn(usize, usize) -> usize, lines: usize, length: usize| {
        for line in 0..lines {
            let mut start = 0;
            for i in 0..=length {
                let dark = i < length && pixels[at(line, i)] == 0;
                if dark {
                    continue;
                }
                if i - start >= longest {
                    (start..i).for_each(|j| clear[at(line, j)] = true);
                }
                start = i + 1;
            }
        }
    };
    runs(&|y, x| y * width + x, height, width);
    runs(&|x, y| y * width + x, width, height);
    for (pixel, clear) in pixels.iter_mut().zip(&clear) {
        if *clear {
            *pixel = 255;
        }
    }
    // Grown by `near` each way: across the rows, then down the columns.
    let grow = |mask: &[bool], at: &dyn Fn(usize, usize) -> usize, lines: usize, length: usize| {
        let mut grown = mask.to_vec();
        for line in 0..lines {
            for i in (0..length).filter(|i| mask[at(line, *i)]) {
                let (from, to) = (i.saturating_sub(near), (i + near).min(length - 1));
                (from..=to).for_each(|j| grown[at(line, j)] = true);
            }
        }
        grown
    };
    let across = grow(&clear, &|y, x| y * width + x, height, width);
    grow(&across, &|x, y| y * width + x, width, height)
}

/// Turn white the dark shapes that are not letters, in a black and white picture `width` wide,
/// enlarged `scale` times: solid blocks (a terminal's block cursor, a filled box: mostly dark
/// and at least 4 pixels each way before enlarging) and long thin lines (borders and rules: at
/// most 2 pixels thick and 30 long). Tesseract reads a cursor under a word as part of it ("ro" for
/// "screenpilot"); and what is left of a border, a shape lying wholly `near_rules`.
fn clear_shapes(pixels: &mut [u8], width: usize, scale: usize, near_rules: &[bool]) {
    let mut clear = Vec::new();
    each_shape(pixels, width, |shape, b| {
        let (w, h) = (b.width as usize, b.height as usize);
        let (thin, long) = (w.min(h), w.max(h));
        let block = w >= 4 * scale && h >= 4 * scale && shape.len() * 10 >= w * h * 9;
        let line = thin <= 2 * scale && long >= 30 * scale;
        let remnant = shape.iter().all(|i| near_rules[*i]);
        if block || line || remnant {
            clear.extend_from_slice(shape);
        }
    });
    for i in clear {
        pixels[i] = 255;
    }
}

/// Each dark shape (4-connected) of a black and white picture `width` wide: its pixels (indexes)
/// and its box.
fn each_shape(pixels: &[u8], width: usize, mut found: impl FnMut(&[usize], Boxed)) {
    let height = pixels.len() / width.max(1);
    let mut seen = vec![false; pixels.len()];
    let mut stack = Vec::new();
    let mut shape = Vec::new();
    for start in 0..pixels.len() {
        if seen[start] || pixels[start] != 0 {
            continue;
        }
        shape.clear();
        stack.push(start);
        seen[start] = true;
        let (mut left, mut top, mut right, mut bottom) = (usize::MAX, usize::MAX, 0, 0);
        while let Some(i) = stack.pop() {
            shape.push(i);
            let (x, y) = (i % width, i / width);
            (left, top, right, bottom) = (left.min(x), top.min(y), right.max(x), bottom.max(y));
            let mut visit = |j: usize| {
                if !seen[j] && pixels[j] == 0 {
                    seen[j] = true;
                    stack.push(j);
                }
            };
            if x > 0 {
                visit(i - 1);
            }
            if x + 1 < width {
                visit(i + 1);
            }
            if y > 0 {
                visit(i - width);
            }
            if y + 1 < height {
                visit(i + width);
            }
        }
        let b = Boxed {
            x: left as i32,
            y: top as i32,
            width: (right + 1 - left) as u32,
            height: (bottom + 1 - top) as u32,
        };
        found(&shape, b);
    }
}

/// `pixels` (`width` x `height`) enlarged `scale` times across (or down), with a Lanczos filter
/// (three lobes): sharper letter edges than bilinear, which tesseract reads better (xterm's 6x13
/// font: `drwxr` was read `druxr`).
fn enlarge(pixels: &[u8], width: usize, height: usize, scale: usize, across: bool) -> Vec<u8> {
    const LOBES: f32 = 3.0;
    let lanczos = |x: f32| -> f32 {
        if x.abs() < 1e-6 {
            return 1.0;
        }
        if x.abs() >= LOBES {
            return 0.0;
        }
        let px = std::f32::consts::PI * x;
        LOBES * px.sin() * (px / LOBES).sin() / (px * px)
    };
    // An output pixel's centre falls at one of `scale` phases between input pixels: their weights.
    let taps: Vec<(isize, Vec<f32>)> = (0..scale)
        .map(|phase| {
            let centre = (phase as f32 + 0.5) / scale as f32 - 0.5;
            let first = (centre - LOBES).ceil() as isize;
            let weights: Vec<f32> = (first..=(centre + LOBES).floor() as isize)
                .map(|i| lanczos(i as f32 - centre))
                .collect();
            let sum: f32 = weights.iter().sum();
            (first, weights.iter().map(|w| w / sum).collect())
        })
        .collect();
    let (out_w, out_h) = if across {
        (width * scale, height)
    } else {
        (width, height * scale)
    };
    let mut out = vec![0u8; out_w * out_h];
    let at = |x: isize, y: isize| {
        let x = x.clamp(0, width as isize - 1) as usize;
        let y = y.clamp(0, height as isize - 1) as usize;
        f32::from(pixels[y * width + x])
    };
    for y in 0..out_h {
        for x in 0..out_w {
            let (along, other) = if across { (x, y) } else { (y, x) };
            let (first, weights) = &taps[along % scale];
            let base = (along / scale) as isize + first;
            let value: f32 = weights
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    let i = base + k as isize;
                    w * if across {
                        at(i, other as isize)
                    } else {
                        at(other as isize, i)
                    }
                })
                .sum();
            out[y * out_w + x] = value.round().clamp(0.0, 255.0) as u8;
        }
    }
    out
}

/// The grey level that best splits `pixels` into two classes (Otsu's method).
fn otsu(pixels: &[u8]) -> u8 {
    let mut histogram = [0u64; 256];
    for v in pixels {
        histogram[usize::from(*v)] += 1;
    }
    let total = pixels.len() as f64;
    let sum: f64 = histogram
        .iter()
        .enumerate()
        .map(|(i, n)| i as f64 * *n as f64)
        .sum();
    let (mut below, mut below_sum) = (0.0f64, 0.0f64);
    let (mut best, mut best_variance) = (0u8, -1.0f64);
    for (level, count) in histogram.iter().enumerate() {
        below += *count as f64;
        below_sum += level as f64 * *count as f64;
        let above = total - below;
        if below == 0.0 || above == 0.0 {
            continue;
        }
        let (mean_below, mean_above) = (below_sum / below, (sum - below_sum) / above);
        let variance = below * above * (mean_below - mean_above).powi(2);
        if variance > best_variance {
            best_variance = variance;
            best = level as u8;
        }
    }
    best
}

/// The words of tesseract's TSV (level 5 rows), boxes divided back by `scale`; words read with
/// little confidence, and marks that are not letters or digits unless read with confidence, left
/// out.
fn words(tsv: &str) -> Vec<Word> {
    tsv.lines()
        .skip(1)
        .filter_map(|row| {
            let cols: Vec<&str> = row.split('\t').collect();
            if cols.len() < 12 || cols[0] != "5" {
                return None;
            }
            let text = cols[11].trim();
            let confidence: f32 = cols[10].parse().ok()?;
            let marks = !text.chars().any(char::is_alphanumeric);
            if text.is_empty()
                || confidence < MIN_CONFIDENCE
                || (marks && confidence < MIN_CONFIDENCE_MARKS)
            {
                return None;
            }
            let n = |i: usize| cols[i].parse::<u32>().ok();
            let margin = MARGIN as u32;
            Some(Word {
                text: text.to_owned(),
                x: n(6)?.saturating_sub(margin) as i32,
                y: n(7)?.saturating_sub(margin) as i32,
                width: n(8)?,
                height: n(9)?,
                confidence,
                line: (n(2)?, n(3)?, n(4)?),
            })
        })
        .collect()
}

/// Words joined into phrases: in reading order, a word continues the phrase before it when it is
/// on the same line and the gap between them is no wider than about a space (a third of the line's
/// height... up to its height); a wider gap starts a new phrase (two buttons side by side).
fn phrases(words: &[Word]) -> Vec<Phrase> {
    let mut out: Vec<Phrase> = Vec::new();
    let mut last_line = None;
    for word in words {
        let continues = out.last().is_some_and(|p| {
            let gap = word.x - (p.x + p.width as i32);
            let height = p.height.max(word.height) as i32;
            last_line == Some(word.line) && gap >= -2 && gap <= height
        });
        if continues {
            let p = out.last_mut().expect("a phrase");
            let right = (p.x + p.width as i32).max(word.x + word.width as i32);
            let bottom = (p.y + p.height as i32).max(word.y + word.height as i32);
            p.y = p.y.min(word.y);
            p.width = (right - p.x) as u32;
            p.height = (bottom - p.y) as u32;
            p.text.push(' ');
            p.text.push_str(&word.text);
        } else {
            out.push(Phrase {
                text: word.text.clone(),
                x: word.x,
                y: word.y,
                width: word.width,
                height: word.height,
            });
        }
        last_line = Some(word.line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Boxes in the enlarged picture, its white margin included.
    const TSV: &str = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext
1\t1\t0\t0\t0\t0\t0\t0\t1200\t900\t-1\t
4\t1\t1\t1\t1\t0\t30\t30\t600\t39\t-1\t
5\t1\t1\t1\t1\t1\t54\t54\t120\t39\t96.5\tApply
5\t1\t1\t1\t1\t2\t189\t54\t200\t39\t95.1\tchanges
5\t1\t1\t1\t1\t3\t624\t54\t90\t39\t93.0\tSave
5\t1\t1\t1\t2\t1\t54\t114\t9\t39\t40.0\t|
5\t1\t1\t1\t2\t2\t84\t114\t60\t39\t12.0\tqx
5\t1\t1\t1\t2\t3\t174\t114\t27\t39\t91.0\t7
";

    #[test]
    fn words_are_joined_into_phrases_and_wide_gaps_split_them() {
        let words: Vec<Word> = words(TSV).into_iter().map(|w| shrink(w, 3)).collect();
        // The bar and the unsure word are dropped; a lone digit is kept.
        let texts: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
        assert_eq!(texts, ["Apply", "changes", "Save", "7"]);
        let phrases = phrases(&words);
        assert_eq!(
            phrases,
            [
                Phrase {
                    text: "Apply changes".into(),
                    x: 10,
                    y: 10,
                    width: 112,
                    height: 13
                },
                Phrase {
                    text: "Save".into(),
                    x: 200,
                    y: 10,
                    width: 30,
                    height: 13
                },
                Phrase {
                    text: "7".into(),
                    x: 50,
                    y: 30,
                    width: 9,
                    height: 13
                },
            ]
        );
    }

    #[test]
    fn light_text_on_dark_is_turned_dark_on_light_enlarged_and_made_black_and_white() {
        // A dark 4x2 picture with one light pixel.
        let mut rgb = vec![10u8; 4 * 2 * 3];
        rgb[..3].copy_from_slice(&[250, 250, 250]);
        let frame = Frame {
            width: 4,
            height: 2,
            rgb,
        };
        let pgm = pgm(&prepare(&frame, 3));
        let (w, h) = (12 + 2 * MARGIN, 6 + 2 * MARGIN);
        let header = format!("P5\n{w} {h}\n255\n");
        assert_eq!(&pgm[..header.len()], header.as_bytes());
        let pixels = &pgm[header.len()..];
        assert_eq!(pixels.len(), w * h);
        assert!(pixels.iter().all(|v| *v == 0 || *v == 255));
        // The light pixel is now the dark one (top left, inside the white margin); the rest white.
        assert_eq!(pixels[MARGIN * w + MARGIN], 0);
        assert_eq!(pixels[(MARGIN + 5) * w + MARGIN + 11], 255);
        assert_eq!(pixels[0], 255);
    }

    #[test]
    fn blocks_and_rules_are_cleared_and_letters_kept() {
        // 40x12 at scale 1: a letter-like ring, a solid 5x5 block, a rule 35 long.
        let (w, h) = (40, 12);
        let mut pixels = vec![255u8; w * h];
        let mut dark = |x: usize, y: usize| pixels[y * w + x] = 0;
        for i in 0..5 {
            dark(1 + i, 1);
            dark(1 + i, 5);
            dark(1, 1 + i);
            dark(5, 1 + i);
        }
        for y in 1..6 {
            for x in 10..15 {
                dark(x, y);
            }
        }
        for x in 2..37 {
            dark(x, 10);
        }
        clear_shapes(&mut pixels, w, 1, &vec![false; w * h]);
        let dark_at = |x: usize, y: usize| pixels[y * w + x] == 0;
        assert!(
            dark_at(1, 1) && dark_at(5, 5),
            "the ring is a letter's shape: kept"
        );
        assert!(!dark_at(12, 3), "the block is cleared");
        assert!(!dark_at(20, 10), "the rule is cleared");
    }

    #[test]
    fn long_straight_runs_are_cleared_and_short_strokes_kept() {
        // A 30x10 box outline with a 3-pixel stroke inside.
        let (w, h) = (30, 10);
        let mut pixels = vec![255u8; w * h];
        for x in 0..w {
            pixels[x] = 0;
            pixels[(h - 1) * w + x] = 0;
        }
        for y in 0..h {
            pixels[y * w] = 0;
        }
        for y in 3..6 {
            pixels[y * w + 10] = 0;
        }
        // A speck left against the top edge (a sunken field's corner).
        pixels[w + 15] = 0;
        pixels[w + 16] = 0;
        let near = clear_rules(&mut pixels, w, 8, 1);
        clear_shapes(&mut pixels, w, 1, &near);
        assert_eq!(pixels[w + 15], 255, "the speck beside the edge is cleared");
        assert_eq!(pixels[5], 255, "the top edge is cleared");
        assert_eq!(pixels[5 * w], 255, "the left edge (10 long) is cleared");
        assert_eq!(pixels[4 * w + 10], 0, "the short stroke is kept");
        assert!(
            near[w + 1] && !near[5 * w + 10],
            "near the edges, not the stroke"
        );
    }

    #[test]
    fn marks_no_word_covers_are_found_joined_and_laid_in_a_strip() {
        // 60x20 at scale 1: a word's marks at 2..10 (covered), and `+/-`-like marks at 30..40.
        let (w, h) = (60, 20);
        let mut pixels = vec![255u8; w * h];
        for (x, y) in [
            (2, 5),
            (3, 5),
            (4, 6),
            (5, 7),
            (30, 5),
            (31, 6),
            (34, 5),
            (34, 6),
            (37, 7),
        ] {
            for dy in 0..4 {
                pixels[(y + dy) * w + x] = 0;
            }
        }
        let picture = Picture {
            pixels,
            width: w,
            height: h,
        };
        let read = [Word {
            text: "ab".into(),
            x: 1,
            y: 4,
            width: 6,
            height: 8,
            confidence: 90.0,
            line: (1, 1, 1),
        }];
        let marks = unread_marks(&picture, &read, 1);
        assert_eq!(
            marks,
            [Boxed {
                x: 30,
                y: 5,
                width: 8,
                height: 6
            }]
        );
        let (strip, spans) = strip_of(&picture, &marks);
        assert_eq!((strip.width, strip.height), (8 + 2 * 16, 6 + 16));
        assert_eq!(spans, [(8, 32)]);
        // The mark's first column, copied in place.
        assert_eq!(strip.pixels[8 * strip.width + 16], 0);
    }

    #[test]
    fn phrases_read_in_rows_left_to_right() {
        let at = |text: &str, x, y| Phrase {
            text: text.into(),
            x,
            y,
            width: 10,
            height: 12,
        };
        let ordered = in_reading_order(vec![
            at("9", 50, 41),
            at("7", 10, 40),
            at("8", 30, 42),
            at("4", 10, 70),
        ]);
        let texts: Vec<&str> = ordered.iter().map(|p| p.text.as_str()).collect();
        assert_eq!(texts, ["7", "8", "9", "4"]);
    }

    #[test]
    fn otsu_splits_two_levels_between_them() {
        let pixels: Vec<u8> = [20u8; 50]
            .iter()
            .chain([200u8; 50].iter())
            .copied()
            .collect();
        let t = otsu(&pixels);
        assert!((20..200).contains(&t), "{t}");
    }
}
