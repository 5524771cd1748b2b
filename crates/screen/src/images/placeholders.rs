//! kitty's Unicode placeholders: a virtual placement (`U=1`) is not drawn where the cursor is but in
//! every cell that holds U+10EEEE naming its image, so the picture is part of the text and travels
//! with it (through tmux, inside a Textual layout, scrolled with the rest). Each such cell says which
//! image (its foreground colour, plus a third mark for the id's top byte), which placement (its
//! underline colour) and which tile of the placement's grid of cells it shows (combining marks for
//! the row and the column). Marks left out are inferred from the cell to the left, as kitty does.
//!
//! The picture is fitted into its placement's `cols` x `rows` cells keeping its aspect ratio,
//! centred; each run of tiles on the screen shows its part of that.

use super::bitmap::Bitmap;
use super::CELL_PX;

/// The character of a placeholder cell.
pub(crate) const PLACEHOLDER: char = '\u{10EEEE}';

/// The combining marks that number rows, columns and the id's top byte, in kitty's order (its
/// rowcolumn-diacritics list, sorted): the mark at index `n` stands for `n`.
const MARKS: [u32; 297] = [
    0x00305, 0x0030D, 0x0030E, 0x00310, 0x00312, 0x0033D, 0x0033E, 0x0033F, 0x00346, 0x0034A,
    0x0034B, 0x0034C, 0x00350, 0x00351, 0x00352, 0x00357, 0x0035B, 0x00363, 0x00364, 0x00365,
    0x00366, 0x00367, 0x00368, 0x00369, 0x0036A, 0x0036B, 0x0036C, 0x0036D, 0x0036E, 0x0036F,
    0x00483, 0x00484, 0x00485, 0x00486, 0x00487, 0x00592, 0x00593, 0x00594, 0x00595, 0x00597,
    0x00598, 0x00599, 0x0059C, 0x0059D, 0x0059E, 0x0059F, 0x005A0, 0x005A1, 0x005A8, 0x005A9,
    0x005AB, 0x005AC, 0x005AF, 0x005C4, 0x00610, 0x00611, 0x00612, 0x00613, 0x00614, 0x00615,
    0x00616, 0x00617, 0x00657, 0x00658, 0x00659, 0x0065A, 0x0065B, 0x0065D, 0x0065E, 0x006D6,
    0x006D7, 0x006D8, 0x006D9, 0x006DA, 0x006DB, 0x006DC, 0x006DF, 0x006E0, 0x006E1, 0x006E2,
    0x006E4, 0x006E7, 0x006E8, 0x006EB, 0x006EC, 0x00730, 0x00732, 0x00733, 0x00735, 0x00736,
    0x0073A, 0x0073D, 0x0073F, 0x00740, 0x00741, 0x00743, 0x00745, 0x00747, 0x00749, 0x0074A,
    0x007EB, 0x007EC, 0x007ED, 0x007EE, 0x007EF, 0x007F0, 0x007F1, 0x007F3, 0x00816, 0x00817,
    0x00818, 0x00819, 0x0081B, 0x0081C, 0x0081D, 0x0081E, 0x0081F, 0x00820, 0x00821, 0x00822,
    0x00823, 0x00825, 0x00826, 0x00827, 0x00829, 0x0082A, 0x0082B, 0x0082C, 0x0082D, 0x00951,
    0x00953, 0x00954, 0x00F82, 0x00F83, 0x00F86, 0x00F87, 0x0135D, 0x0135E, 0x0135F, 0x017DD,
    0x0193A, 0x01A17, 0x01A75, 0x01A76, 0x01A77, 0x01A78, 0x01A79, 0x01A7A, 0x01A7B, 0x01A7C,
    0x01B6B, 0x01B6D, 0x01B6E, 0x01B6F, 0x01B70, 0x01B71, 0x01B72, 0x01B73, 0x01CD0, 0x01CD1,
    0x01CD2, 0x01CDA, 0x01CDB, 0x01CE0, 0x01DC0, 0x01DC1, 0x01DC3, 0x01DC4, 0x01DC5, 0x01DC6,
    0x01DC7, 0x01DC8, 0x01DC9, 0x01DCB, 0x01DCC, 0x01DD1, 0x01DD2, 0x01DD3, 0x01DD4, 0x01DD5,
    0x01DD6, 0x01DD7, 0x01DD8, 0x01DD9, 0x01DDA, 0x01DDB, 0x01DDC, 0x01DDD, 0x01DDE, 0x01DDF,
    0x01DE0, 0x01DE1, 0x01DE2, 0x01DE3, 0x01DE4, 0x01DE5, 0x01DE6, 0x01DFE, 0x020D0, 0x020D1,
    0x020D4, 0x020D5, 0x020D6, 0x020D7, 0x020DB, 0x020DC, 0x020E1, 0x020E7, 0x020E9, 0x020F0,
    0x02CEF, 0x02CF0, 0x02CF1, 0x02DE0, 0x02DE1, 0x02DE2, 0x02DE3, 0x02DE4, 0x02DE5, 0x02DE6,
    0x02DE7, 0x02DE8, 0x02DE9, 0x02DEA, 0x02DEB, 0x02DEC, 0x02DED, 0x02DEE, 0x02DEF, 0x02DF0,
    0x02DF1, 0x02DF2, 0x02DF3, 0x02DF4, 0x02DF5, 0x02DF6, 0x02DF7, 0x02DF8, 0x02DF9, 0x02DFA,
    0x02DFB, 0x02DFC, 0x02DFD, 0x02DFE, 0x02DFF, 0x0A66F, 0x0A67C, 0x0A67D, 0x0A6F0, 0x0A6F1,
    0x0A8E0, 0x0A8E1, 0x0A8E2, 0x0A8E3, 0x0A8E4, 0x0A8E5, 0x0A8E6, 0x0A8E7, 0x0A8E8, 0x0A8E9,
    0x0A8EA, 0x0A8EB, 0x0A8EC, 0x0A8ED, 0x0A8EE, 0x0A8EF, 0x0A8F0, 0x0A8F1, 0x0AAB0, 0x0AAB2,
    0x0AAB3, 0x0AAB7, 0x0AAB8, 0x0AABE, 0x0AABF, 0x0AAC1, 0x0FE20, 0x0FE21, 0x0FE22, 0x0FE23,
    0x0FE24, 0x0FE25, 0x0FE26, 0x10A0F, 0x10A38, 0x1D185, 0x1D186, 0x1D187, 0x1D188, 0x1D189,
    0x1D1AA, 0x1D1AB, 0x1D1AC, 0x1D1AD, 0x1D242, 0x1D243, 0x1D244,
];

/// The number a combining mark stands for.
pub(crate) fn number_of(mark: char) -> Option<u32> {
    MARKS.binary_search(&u32::from(mark)).ok().map(|n| n as u32)
}

/// What one placeholder cell says by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mark {
    /// The image id's low bits (from the foreground colour: 24 bits, or a 256-colour index).
    pub id: u32,
    /// The placement id (from the underline colour), 0 when none.
    pub placement: u32,
    pub row: Option<u32>,
    pub col: Option<u32>,
    /// The image id's top byte.
    pub top: Option<u32>,
}

impl Mark {
    /// A cell's marks: the first three combining marks that number something are the row, the
    /// column and the id's top byte.
    pub(crate) fn new(id: u32, placement: u32, marks: &[char]) -> Mark {
        let mut numbers = marks.iter().filter_map(|&c| number_of(c));
        Mark {
            id,
            placement,
            row: numbers.next(),
            col: numbers.next(),
            top: numbers.next(),
        }
    }

    /// The tile this cell shows, taking what it leaves out from the cell to its left when that one
    /// names the same image and placement and this cell can continue it.
    fn resolve(self, left: Option<&(Mark, Tile)>) -> Tile {
        let follows = left
            .filter(|(mark, tile)| {
                (mark.id, mark.placement) == (self.id, self.placement)
                    && self.row.is_none_or(|r| r == tile.row)
                    && self.col.is_none_or(|c| c == tile.col + 1)
            })
            .map(|(_, tile)| tile);
        let top = self.top.or(follows.map(|t| t.id >> 24)).unwrap_or(0);
        Tile {
            id: (top << 24) | (self.id & 0x00ff_ffff),
            placement: self.placement,
            row: self.row.or(follows.map(|t| t.row)).unwrap_or(0),
            col: self.col.or(follows.map(|t| t.col + 1)).unwrap_or(0),
        }
    }
}

/// One cell's part of a placement: the image, the placement, and the tile (row, column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tile {
    id: u32,
    placement: u32,
    row: u32,
    col: u32,
}

/// A rectangle of the screen showing consecutive tiles of one placement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub id: u32,
    pub placement: u32,
    /// Screen row and column of its top-left cell.
    pub line: i32,
    pub col: u16,
    pub cols: u16,
    pub rows: u16,
    /// The placement's tile at its top-left cell.
    pub tile_row: u32,
    pub tile_col: u32,
}

/// The spans a screen's placeholder cells make: `rows[i][c]` is the mark of column `c` on screen
/// row `first + i`, if that cell is a placeholder. Tiles continuing each other along a row make one
/// run; runs of the same width under each other, one tile row further down, make one span.
pub(crate) fn spans(first: i32, rows: &[Vec<Option<Mark>>]) -> Vec<Span> {
    let mut done: Vec<Span> = Vec::new();
    let mut open: Vec<Span> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let line = first + i as i32;
        let mut runs: Vec<Span> = Vec::new();
        let mut left: Option<(Mark, Tile)> = None;
        for (col, mark) in row.iter().enumerate() {
            let Some(mark) = *mark else {
                left = None;
                continue;
            };
            let tile = mark.resolve(left.as_ref());
            let continues = left.is_some_and(|(_, t)| {
                (t.id, t.placement, t.row, t.col + 1)
                    == (tile.id, tile.placement, tile.row, tile.col)
            });
            match runs.last_mut() {
                Some(run) if continues => run.cols += 1,
                _ => runs.push(Span {
                    id: tile.id,
                    placement: tile.placement,
                    line,
                    col: col as u16,
                    cols: 1,
                    rows: 1,
                    tile_row: tile.row,
                    tile_col: tile.col,
                }),
            }
            left = Some((mark, tile));
        }
        let mut still_open = Vec::new();
        for span in open.drain(..) {
            let below = runs.iter().position(|run| {
                (run.id, run.placement, run.col, run.cols, run.tile_col)
                    == (span.id, span.placement, span.col, span.cols, span.tile_col)
                    && run.tile_row == span.tile_row + u32::from(span.rows)
            });
            match below {
                Some(at) => {
                    runs.remove(at);
                    still_open.push(Span {
                        rows: span.rows + 1,
                        ..span
                    });
                }
                None => done.push(span),
            }
        }
        still_open.extend(runs);
        open = still_open;
    }
    done.extend(open);
    done.sort_by_key(|s| (s.line, s.col));
    done
}

/// The most pixels a span's picture is drawn with at more than one pixel per nominal cell pixel:
/// past it the span is drawn less finely, down to one.
const MAX_SPAN_PIXELS: u64 = 4 << 20;

/// The part of `image` that `span` shows, the image fitted (aspect kept, centred) into its
/// placement of `cols` x `rows` cells. Drawn at up to 4 pixels per nominal cell pixel, as fine as
/// the image is; transparent where the fitted image leaves the cells bare.
pub(crate) fn crop(image: &Bitmap, cols: u32, rows: u32, span: &Span) -> Bitmap {
    let (iw, ih) = (
        u64::from(image.width.max(1)),
        u64::from(image.height.max(1)),
    );
    let (cw, ch) = (u64::from(CELL_PX.0), u64::from(CELL_PX.1));
    let (bw1, bh1) = (u64::from(cols.max(1)) * cw, u64::from(rows.max(1)) * ch);
    let (sw, sh) = (u64::from(span.cols) * cw, u64::from(span.rows) * ch);
    // Pixels per nominal pixel: enough for the image's own, within bounds.
    let mut k = iw.div_ceil(bw1).max(ih.div_ceil(bh1)).clamp(1, 4);
    while k > 1 && sw * k * sh * k > MAX_SPAN_PIXELS {
        k -= 1;
    }
    let (bw, bh) = (bw1 * k, bh1 * k);
    // The fitted image within the placement's box: scale = min(bw/iw, bh/ih).
    let (fw, fh) = if bw * ih <= bh * iw {
        (bw, (bw * ih / iw).max(1))
    } else {
        ((bh * iw / ih).max(1), bh)
    };
    let (ox, oy) = ((bw - fw) / 2, (bh - fh) / 2);
    let (x0, y0) = (
        u64::from(span.tile_col) * cw * k,
        u64::from(span.tile_row) * ch * k,
    );
    let (w, h) = (sw * k, sh * k);
    let mut rgba = vec![0u8; (w * h * 4) as usize];
    for y in 0..h {
        let by = y0 + y;
        if by < oy || by >= oy + fh {
            continue;
        }
        let iy = ((by - oy) * ih / fh) as usize;
        for x in 0..w {
            let bx = x0 + x;
            if bx < ox || bx >= ox + fw {
                continue;
            }
            let ix = ((bx - ox) * iw / fw) as usize;
            let from = (iy * image.width as usize + ix) * 4;
            let to = ((y * w + x) * 4) as usize;
            if let Some(px) = image.rgba.get(from..from + 4) {
                rgba[to..to + 4].copy_from_slice(px);
            }
        }
    }
    Bitmap {
        width: w as u32,
        height: h as u32,
        rgba,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(id: u32, row: Option<u32>, col: Option<u32>) -> Option<Mark> {
        Some(Mark {
            id,
            placement: 0,
            row,
            col,
            top: None,
        })
    }

    #[test]
    fn marks_number_rows_columns_and_the_top_byte() {
        assert_eq!(number_of('\u{0305}'), Some(0));
        assert_eq!(number_of('\u{030D}'), Some(1));
        assert_eq!(number_of('\u{1D244}'), Some(296));
        assert_eq!(number_of('a'), None);
        let m = Mark::new(7, 0, &['\u{030E}', '\u{0305}', '\u{0310}']);
        assert_eq!((m.row, m.col, m.top), (Some(2), Some(0), Some(3)));
        let tile = m.resolve(None);
        assert_eq!(tile.id, (3 << 24) | 7);
    }

    #[test]
    fn cells_without_marks_continue_the_cell_to_their_left() {
        // kittytgp's grid: a row mark on the first cell, nothing on the others.
        let rows = vec![
            vec![
                None,
                mark(5, Some(0), None),
                mark(5, None, None),
                mark(5, None, None),
            ],
            vec![
                None,
                mark(5, Some(1), None),
                mark(5, None, None),
                mark(5, None, None),
            ],
        ];
        let spans = spans(3, &rows);
        assert_eq!(spans.len(), 1, "{spans:?}");
        let s = spans[0];
        assert_eq!((s.line, s.col, s.cols, s.rows), (3, 1, 3, 2));
        assert_eq!((s.tile_row, s.tile_col, s.id), (0, 0, 5));
    }

    #[test]
    fn a_broken_run_makes_spans_of_its_own() {
        // Two images side by side, and a column skipped in the second's tiles.
        let rows = vec![vec![
            mark(1, Some(0), Some(0)),
            mark(1, Some(0), Some(1)),
            mark(2, Some(0), Some(0)),
            mark(2, Some(0), Some(2)),
        ]];
        let spans = spans(0, &rows);
        let got: Vec<(u32, u16, u16, u32)> = spans
            .iter()
            .map(|s| (s.id, s.col, s.cols, s.tile_col))
            .collect();
        assert_eq!(got, [(1, 0, 2, 0), (2, 2, 1, 0), (2, 3, 1, 2)]);
    }

    #[test]
    fn a_span_shows_its_part_of_the_fitted_image() {
        // A 2x1 image (red, blue) fitted into 4x2 cells (40x40 nominal pixels): drawn 40x20,
        // centred, so the top and bottom 10 pixels are bare.
        let image = Bitmap {
            width: 2,
            height: 1,
            rgba: vec![255, 0, 0, 255, 0, 0, 255, 255],
        };
        let right_half = Span {
            id: 1,
            placement: 0,
            line: 0,
            col: 0,
            cols: 2,
            rows: 2,
            tile_row: 0,
            tile_col: 2,
        };
        let part = crop(&image, 4, 2, &right_half);
        assert_eq!((part.width, part.height), (20, 40));
        let at = |x: usize, y: usize| &part.rgba[(y * 20 + x) * 4..(y * 20 + x) * 4 + 4];
        assert_eq!(at(10, 20), [0, 0, 255, 255], "the right half is blue");
        assert_eq!(
            at(10, 5),
            [0, 0, 0, 0],
            "above the fitted image the cells are bare"
        );
        assert_eq!(at(10, 35), [0, 0, 0, 0], "and below it");
    }
}
