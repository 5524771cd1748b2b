//! Pictures that programs draw in the terminal: the kitty graphics protocol, iTerm2 inline images
//! (OSC 1337 File=) and sixel (DCS q).
//!
//! alacritty_terminal ignores all three, so [`crate::Screen`] takes them out of the byte stream
//! before it reaches alacritty ([`intercept`]): the feed is split at each picture, the picture is
//! decoded ([`kitty`], [`iterm`], [`sixel`], [`decode`]) and placed at the cursor as it stands at that
//! moment, anchored to the grid row it starts on so that it scrolls with the text.
//!
//! Everything a program sends is bounded: a declared size past [`MAX_IMAGE_PIXELS`] is refused before
//! anything is allocated, a transmission past [`MAX_PAYLOAD_BYTES`] is refused as it streams, and the
//! pictures one screen keeps are at most [`MAX_SCREEN_BYTES`] decoded (oldest dropped first). Each
//! refusal leaves a short [`notes`](Images::notes) entry; the session goes on.
//!
//! Only a screen that opted in ([`crate::Screen::set_images`]) does any of this, and only then are the
//! capability queries (primary DA, XTSMGRAPHICS, kitty `a=q`, cell size) answered as a terminal with
//! graphics: otherwise programs keep their text fallback.

pub(crate) mod bitmap;
pub(crate) mod decode;
pub(crate) mod intercept;
pub(crate) mod iterm;
pub(crate) mod kitty;
pub(crate) mod placeholders;
pub(crate) mod sixel;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

pub(crate) use bitmap::CELL_PX;
pub use bitmap::{Bitmap, MAX_IMAGE_PIXELS, MAX_PAYLOAD_BYTES, MAX_PLACEMENTS, MAX_SCREEN_BYTES};

/// The most notes kept; older ones go.
const MAX_NOTES: usize = 8;

/// Which protocol drew a picture.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    Kitty,
    Iterm,
    Sixel,
}

/// A picture as it sits on the visible screen now.
#[derive(Debug, Clone)]
pub struct ShownImage {
    /// Counts the pictures placed on this screen, from 1: how a snapshot names it.
    pub number: u64,
    pub protocol: Protocol,
    /// Top-left cell; `row` may be above the screen (negative) when the picture scrolled partly off.
    pub row: i32,
    pub col: u16,
    /// Cells it covers.
    pub cols: u16,
    pub rows: u16,
    /// The area it is drawn in, in nominal pixels (a cell is [`CELL_PX`]): the picture is scaled to it.
    pub area_px: (u32, u32),
    pub bitmap: Arc<Bitmap>,
}

impl PartialEq for ShownImage {
    fn eq(&self, other: &ShownImage) -> bool {
        self.number == other.number
            && (self.row, self.col, self.cols, self.rows)
                == (other.row, other.col, other.cols, other.rows)
            && Arc::ptr_eq(&self.bitmap, &other.bitmap)
    }
}

impl Eq for ShownImage {}

impl ShownImage {
    /// What a text snapshot shows on the picture's first row, e.g. `[image 1: 8x4 cells, 64x64 px]`,
    /// cut to the picture's width (at least `[image 1]`).
    pub fn label(&self) -> String {
        let long = format!(
            "[image {}: {}x{} cells, {}x{} px]",
            self.number, self.cols, self.rows, self.bitmap.width, self.bitmap.height
        );
        if long.len() <= usize::from(self.cols) {
            long
        } else {
            format!("[image {}]", self.number)
        }
    }
}

/// A picture as results list it; its pixels travel beside (MCP image content).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PictureInfo {
    /// As the screen text's label names it: `[image N ...]`.
    pub number: u64,
    pub protocol: Protocol,
    /// Top-left cell (row may be negative: scrolled partly off).
    pub row: i32,
    pub col: u16,
    pub cols: u16,
    pub rows: u16,
    /// The picture's own size in pixels.
    pub width: u32,
    pub height: u32,
    /// The picture as a PNG, base64, when a result carries it (MCP sends it as image content).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub png: Option<String>,
}

impl ShownImage {
    pub fn info(&self) -> PictureInfo {
        PictureInfo {
            number: self.number,
            protocol: self.protocol,
            row: self.row,
            col: self.col,
            cols: self.cols,
            rows: self.rows,
            width: self.bitmap.width,
            height: self.bitmap.height,
            png: None,
        }
    }

    /// The picture as a PNG whose longer side is at most `max_edge` pixels (scaled down, nearest
    /// pixel, never up).
    pub fn png(&self, max_edge: u32) -> Result<Vec<u8>, ::png::EncodingError> {
        let b = &self.bitmap;
        let long = b.width.max(b.height).max(1);
        let (w, h) = if long > max_edge {
            (
                (u64::from(b.width) * u64::from(max_edge) / u64::from(long)).max(1) as u32,
                (u64::from(b.height) * u64::from(max_edge) / u64::from(long)).max(1) as u32,
            )
        } else {
            (b.width.max(1), b.height.max(1))
        };
        let mut rgba = Vec::with_capacity(w as usize * h as usize * 4);
        for y in 0..h {
            let sy = (u64::from(y) * u64::from(b.height) / u64::from(h)) as usize;
            for x in 0..w {
                let sx = (u64::from(x) * u64::from(b.width) / u64::from(w)) as usize;
                let at = (sy * b.width as usize + sx) * 4;
                rgba.extend_from_slice(b.rgba.get(at..at + 4).unwrap_or(&[0; 4]));
            }
        }
        let mut out = Vec::new();
        let mut encoder = ::png::Encoder::new(&mut out, w, h);
        encoder.set_color(::png::ColorType::Rgba);
        encoder.set_depth(::png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&rgba)?;
        writer.finish()?;
        Ok(out)
    }
}

/// `text` (one line per row, as [`crate::Screen::text`] gives it) with each picture's label written
/// over the cells of its first row, so a model reading the text sees where a picture sits. Rows keep
/// their width: the label replaces blanks (or whatever is under the picture).
pub fn label_text(text: &str, images: &[ShownImage], cols: u16) -> String {
    let mut lines: Vec<String> = text.split('\n').map(blank_placeholders).collect();
    for image in images {
        let Ok(row) = usize::try_from(image.row) else {
            continue;
        };
        let Some(line) = lines.get_mut(row) else {
            continue;
        };
        let room = usize::from(cols.saturating_sub(image.col));
        let label: String = image.label().chars().take(room).collect();
        *line = overwrite_columns(line, usize::from(image.col), &label);
    }
    lines.join("\n")
}

/// `line` with kitty's placeholder cells (U+10EEEE and the marks that number them) as blanks: the
/// picture they draw is labelled instead.
fn blank_placeholders(line: &str) -> String {
    if !line.contains(placeholders::PLACEHOLDER) {
        return line.to_owned();
    }
    let mut out = String::with_capacity(line.len());
    let mut after_placeholder = false;
    for c in line.chars() {
        if c == placeholders::PLACEHOLDER {
            out.push(' ');
            after_placeholder = true;
        } else if !(after_placeholder && placeholders::number_of(c).is_some()) {
            out.push(c);
            after_placeholder = false;
        }
    }
    out.truncate(out.trim_end_matches(' ').len());
    out
}

/// `line` with the columns from `col` on replaced by `label` (ASCII), padding with blanks when the
/// line is shorter. A wide character cut by the label becomes blanks.
fn overwrite_columns(line: &str, col: usize, label: &str) -> String {
    let end = col + label.len();
    let mut out = String::with_capacity(line.len() + label.len());
    let mut at = 0;
    let mut written = false;
    for c in line.chars() {
        let width = crate::width::char_width(c).unwrap_or(1).max(1);
        if at + width <= col {
            out.push(c);
        } else if at >= end {
            if !written {
                out.push_str(label);
                written = true;
            }
            out.push(c);
        } else {
            // Under the label, or a wide character it cuts: blanks outside the label.
            for x in at..at + width {
                if x < col || x >= end {
                    out.push(' ');
                } else if !written {
                    out.push_str(label);
                    written = true;
                }
            }
        }
        at += width;
    }
    if !written {
        out.extend(std::iter::repeat_n(' ', col.saturating_sub(at)));
        out.push_str(label);
    }
    out
}

/// One picture placed on the grid.
#[derive(Debug, Clone)]
pub(crate) struct Placement {
    pub number: u64,
    pub protocol: Protocol,
    /// kitty's image id and placement id.
    pub kitty: Option<(u32, u32)>,
    pub bitmap: Arc<Bitmap>,
    /// Its pixels count against the screen's budget here (not as a stored kitty image).
    pub owned: bool,
    /// Where the cells of its first row live (see `row_address` in the emulator): it moves with them.
    pub anchor: usize,
    /// Placed on the alternate screen.
    pub alt: bool,
    /// Screen row of the anchor when last seen.
    pub row: i32,
    pub col: u16,
    pub cols: u16,
    pub rows: u16,
    pub area_px: (u32, u32),
    /// A hash of the cells under it (sixel and iTerm2 pictures are part of the cells: writing over
    /// them or clearing them removes the picture), row by row; `None` for a row out of reach.
    pub under: Option<Vec<Option<u64>>>,
    /// Order of arrival, for eviction.
    pub seq: u64,
}

impl Placement {
    pub(crate) fn shown(&self) -> ShownImage {
        ShownImage {
            number: self.number,
            protocol: self.protocol,
            row: self.row,
            col: self.col,
            cols: self.cols,
            rows: self.rows,
            area_px: self.area_px,
            bitmap: self.bitmap.clone(),
        }
    }
}

/// A kitty placement shown through placeholder cells (`U=1`): where its cells are is the text's
/// business ([`placeholders`]).
#[derive(Debug, Clone)]
pub(crate) struct Virtual {
    pub id: u32,
    pub placement: u32,
    /// The cells the picture is fitted into.
    pub cols: u32,
    pub rows: u32,
    pub number: u64,
}

/// A part of a virtual placement drawn lately, kept so that an unchanged screen shows the very
/// same picture (and a reader comparing pictures sees no change).
#[derive(Debug)]
pub(crate) struct Crop {
    pub source: Arc<Bitmap>,
    pub fitted_into: (u32, u32),
    pub span: placeholders::Span,
    pub part: Arc<Bitmap>,
}

/// The most parts of virtual placements kept drawn.
const MAX_CROPS: usize = 16;

/// Everything a screen knows of pictures.
#[derive(Debug, Default)]
pub(crate) struct Images {
    pub intercept: intercept::Intercept,
    pub kitty: kitty::KittyStore,
    pub placements: Vec<Placement>,
    /// Virtual placements, oldest first (at most [`MAX_PLACEMENTS`]).
    pub virtuals: Vec<Virtual>,
    crops: Mutex<Vec<Crop>>,
    notes: VecDeque<String>,
    /// Pictures placed so far (numbers them).
    pub placed: u64,
    /// Arrivals so far (orders placements and stored kitty images for eviction).
    pub seq: u64,
}

impl Images {
    pub(crate) fn note(&mut self, note: impl Into<String>) {
        if self.notes.len() == MAX_NOTES {
            self.notes.pop_front();
        }
        self.notes.push_back(note.into());
    }

    pub(crate) fn notes(&self) -> Vec<String> {
        self.notes.iter().cloned().collect()
    }

    pub(crate) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Decoded bytes held: kitty's stored images, and the sixel and iTerm2 pictures placed.
    pub(crate) fn bytes(&self) -> usize {
        self.kitty.bytes()
            + self
                .placements
                .iter()
                .filter(|p| p.owned)
                .map(|p| p.bitmap.bytes())
                .sum::<usize>()
    }

    /// Make room for `incoming` more bytes and one more placement: drop the oldest pictures (a kitty
    /// image with its placements) until they fit.
    pub(crate) fn make_room(&mut self, incoming: usize) {
        while self.bytes() + incoming > MAX_SCREEN_BYTES || self.placements.len() >= MAX_PLACEMENTS
        {
            let oldest_placement = self
                .placements
                .iter()
                .filter(|p| p.owned || self.placements.len() >= MAX_PLACEMENTS)
                .map(|p| p.seq)
                .min();
            let oldest_kitty = self.kitty.oldest();
            match (oldest_placement, oldest_kitty) {
                (Some(p), Some((k, _))) if k < p => self.drop_kitty_image(self.kitty_id(k)),
                (Some(p), _) => self.placements.retain(|x| x.seq != p),
                (None, Some((k, _))) => self.drop_kitty_image(self.kitty_id(k)),
                (None, None) => break,
            }
        }
    }

    fn kitty_id(&self, seq: u64) -> u32 {
        self.kitty.id_of_seq(seq).unwrap_or(0)
    }

    /// Forget a kitty image and its placements.
    pub(crate) fn drop_kitty_image(&mut self, id: u32) {
        self.kitty.remove(id);
        self.placements
            .retain(|p| p.kitty.is_none_or(|(image, _)| image != id));
        self.virtuals.retain(|v| v.id != id);
    }

    /// Keep a virtual placement, replacing one with the same ids.
    pub(crate) fn add_virtual(&mut self, placement: Virtual) {
        self.virtuals
            .retain(|v| (v.id, v.placement) != (placement.id, placement.placement));
        if self.virtuals.len() >= MAX_PLACEMENTS {
            self.virtuals.remove(0);
        }
        self.virtuals.push(placement);
    }

    /// The pictures the placeholder cells on the screen show, `marks` being the screen's rows from
    /// `first` (see [`placeholders::spans`]).
    pub(crate) fn placeholder_pictures(
        &self,
        first: i32,
        marks: &[Vec<Option<placeholders::Mark>>],
    ) -> Vec<ShownImage> {
        let mut shown = Vec::new();
        for span in placeholders::spans(first, marks) {
            // A cell naming no placement shows the image's newest virtual placement.
            let Some(placement) = self.virtuals.iter().rev().find(|v| {
                v.id == span.id && (span.placement == 0 || v.placement == span.placement)
            }) else {
                continue;
            };
            let Some((_, source)) = self.kitty.find(span.id, 0) else {
                continue;
            };
            let part = self.part(&source, (placement.cols, placement.rows), span);
            shown.push(ShownImage {
                number: placement.number,
                protocol: Protocol::Kitty,
                row: span.line,
                col: span.col,
                cols: span.cols,
                rows: span.rows,
                area_px: (
                    u32::from(span.cols) * CELL_PX.0,
                    u32::from(span.rows) * CELL_PX.1,
                ),
                bitmap: part,
            });
        }
        shown
    }

    /// The part of `source` a span shows, drawn once while it stays the same.
    fn part(
        &self,
        source: &Arc<Bitmap>,
        fitted_into: (u32, u32),
        span: placeholders::Span,
    ) -> Arc<Bitmap> {
        let same = |c: &Crop| {
            Arc::ptr_eq(&c.source, source)
                && c.fitted_into == fitted_into
                && (c.span.cols, c.span.rows, c.span.tile_row, c.span.tile_col)
                    == (span.cols, span.rows, span.tile_row, span.tile_col)
        };
        let mut crops = self.crops.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = crops.iter().find(|c| same(c)) {
            return found.part.clone();
        }
        let part = Arc::new(placeholders::crop(
            source,
            fitted_into.0,
            fitted_into.1,
            &span,
        ));
        if crops.len() >= MAX_CROPS {
            crops.remove(0);
        }
        crops.push(Crop {
            source: source.clone(),
            fitted_into,
            span,
            part: part.clone(),
        });
        part
    }

    /// Add a placement, replacing any it covers exactly (a program redrawing a picture in place) and
    /// a kitty placement with the same ids.
    pub(crate) fn add(&mut self, placement: Placement) {
        self.placements.retain(|p| {
            let same_spot = p.alt == placement.alt
                && p.anchor == placement.anchor
                && p.col == placement.col
                && p.cols == placement.cols
                && p.rows == placement.rows;
            let same_ids =
                placement.kitty.is_some_and(|(id, _)| id != 0) && p.kitty == placement.kitty;
            !(same_spot || same_ids)
        });
        self.placements.push(placement);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(row: i32, col: u16, cols: u16) -> ShownImage {
        ShownImage {
            number: 1,
            protocol: Protocol::Kitty,
            row,
            col,
            cols,
            rows: 2,
            area_px: (u32::from(cols) * 10, 40),
            bitmap: Arc::new(Bitmap {
                width: 80,
                height: 40,
                rgba: vec![0; 80 * 40 * 4],
            }),
        }
    }

    #[test]
    fn a_label_sits_on_the_first_row_and_keeps_the_rest_of_the_line() {
        let text = "$ chafa\n\nnext";
        let out = label_text(text, &[shown(1, 2, 40)], 80);
        assert_eq!(out, "$ chafa\n  [image 1: 40x2 cells, 80x40 px]\nnext");
        let out = label_text("abcdefghijklmnop", &[shown(0, 3, 9)], 80);
        assert_eq!(out, "abc[image 1]mnop");
    }

    #[test]
    fn a_label_never_widens_the_screen() {
        let out = label_text("x", &[shown(0, 76, 40)], 80);
        assert_eq!(out, format!("x{}[ima", " ".repeat(75)));
    }
}
