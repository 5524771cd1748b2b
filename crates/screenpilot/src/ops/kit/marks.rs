//! Numbered marks on a desktop screenshot ("set of marks"): a box around each element of the latest
//! snapshot that has a ref, and its ref in a tag at the box's corner, so a model that reads pixels
//! can still act by ref. Tags are drawn with a small bitmap font of their own (`e` and digits), no
//! font files: they must stay legible at any screenshot scale, so they are drawn after scaling.

/// One mark: a box in the picture's pixels, and its ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
    pub label: String,
}

/// 5x7 glyphs, one row a byte (bit 4 is the left column).
const DIGITS: [[u8; 7]; 10] = [
    [0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e],
    [0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e],
    [0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f],
    [0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e],
    [0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02],
    [0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e],
    [0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e],
    [0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08],
    [0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e],
    [0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c],
];
const LETTER_E: [u8; 7] = [0x00, 0x00, 0x0e, 0x11, 0x1f, 0x10, 0x0e];

/// The marks' colour (a saturated magenta seldom seen in interfaces), and the tags' text.
const INK: [u8; 3] = [230, 0, 160];
const PAPER: [u8; 3] = [255, 255, 255];
/// Each font pixel is this many picture pixels.
const SIZE: i32 = 2;

fn glyph(c: char) -> Option<[u8; 7]> {
    match c {
        'e' => Some(LETTER_E),
        '0'..='9' => Some(DIGITS[c as usize - '0' as usize]),
        _ => None,
    }
}

/// Draw `marks` into `rgb` (`width` x `height`, three bytes a pixel).
pub fn draw(rgb: &mut [u8], width: u32, height: u32, marks: &[Mark]) {
    let (w, h) = (width as i32, height as i32);
    let mut put = |x: i32, y: i32, color: [u8; 3]| {
        if x >= 0 && y >= 0 && x < w && y < h {
            let at = ((y * w + x) * 3) as usize;
            if let Some(pixel) = rgb.get_mut(at..at + 3) {
                pixel.copy_from_slice(&color);
            }
        }
    };
    for mark in marks {
        // The box: two pixels wide, on its edge.
        for t in 0..2 {
            for x in mark.x..mark.x + mark.width {
                put(x, mark.y + t, INK);
                put(x, mark.y + mark.height - 1 - t, INK);
            }
            for y in mark.y..mark.y + mark.height {
                put(mark.x + t, y, INK);
                put(mark.x + mark.width - 1 - t, y, INK);
            }
        }
        // The tag: the ref on ink, at the top left, inside the box when it fits above nothing.
        let glyphs: Vec<[u8; 7]> = mark.label.chars().filter_map(glyph).collect();
        let tag_w = glyphs.len() as i32 * 6 * SIZE + SIZE;
        let tag_h = 9 * SIZE;
        let tag_y = if mark.y >= tag_h {
            mark.y - tag_h
        } else {
            mark.y
        };
        for y in tag_y..tag_y + tag_h {
            for x in mark.x..mark.x + tag_w {
                put(x, y, INK);
            }
        }
        for (i, rows) in glyphs.iter().enumerate() {
            let left = mark.x + SIZE + i as i32 * 6 * SIZE;
            for (row, bits) in rows.iter().enumerate() {
                for col in 0..5 {
                    if bits & (0x10 >> col) != 0 {
                        for dy in 0..SIZE {
                            for dx in 0..SIZE {
                                put(
                                    left + col * SIZE + dx,
                                    tag_y + SIZE + row as i32 * SIZE + dy,
                                    PAPER,
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_draws_its_box_and_its_tag() {
        let (w, h) = (60u32, 40u32);
        let mut rgb = vec![0u8; (w * h * 3) as usize];
        draw(
            &mut rgb,
            w,
            h,
            &[Mark {
                x: 10,
                y: 25,
                width: 30,
                height: 10,
                label: "e7".into(),
            }],
        );
        let at = |x: u32, y: u32| {
            let i = ((y * w + x) * 3) as usize;
            [rgb[i], rgb[i + 1], rgb[i + 2]]
        };
        assert_eq!(at(20, 25), INK, "top edge");
        assert_eq!(at(39, 30), INK, "right edge");
        assert_eq!(at(25, 30), [0, 0, 0], "inside stays");
        // The tag sits above the box (there is room), with white strokes of the glyphs.
        let tag: Vec<[u8; 3]> = (7..25)
            .flat_map(|y| (10..36).map(move |x| (x, y)))
            .map(|(x, y)| at(x, y))
            .collect();
        assert!(tag.contains(&PAPER) && tag.contains(&INK));
        // Off the picture: nothing drawn, nothing out of bounds.
        draw(
            &mut rgb,
            w,
            h,
            &[Mark {
                x: -50,
                y: -50,
                width: 500,
                height: 500,
                label: "e123".into(),
            }],
        );
    }
}
