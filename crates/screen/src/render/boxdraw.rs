//! Box drawing (U+2500-257F), block elements (U+2580-259F), braille (U+2800-28FF) and the four
//! powerline separators (U+E0B0-E0B3), drawn as shapes aligned to the cell grid.
//!
//! Fonts draw these characters for their own line height, so in a grid of a different height lines
//! break or overlap. Drawing them from the cell size makes every line meet its neighbour exactly, which
//! is what makes a TUI's frames read as frames.

use super::blocks;
use super::metrics::BoxMetrics;
use super::shapes::Shape;

/// The shapes for `ch`, or `None` when it is not drawn procedurally.
pub(crate) fn shapes(ch: char, m: &BoxMetrics) -> Option<Vec<Shape>> {
    let c = ch as u32;
    match c {
        0x2500..=0x257F => Some(box_drawing(c, m)),
        0x2580..=0x259F => Some(blocks::block(c, m)),
        0x2800..=0x28FF => Some(blocks::braille(c, m)),
        0xE0B0..=0xE0B3 => Some(blocks::powerline(c, m)),
        _ => None,
    }
}

/// The weight of a line leaving the centre of the cell in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum W {
    None,
    Light,
    Heavy,
    Double,
}

/// The arms of U+2500-257F as four digits, up/right/down/left, 0 none, 1 light, 2 heavy, 3 double.
/// Empty entries (dashes, arcs, diagonals) are drawn by their own code.
#[rustfmt::skip]
const ARMS: [&str; 128] = [
    "0101", "0202", "1010", "2020", "", "", "", "", "", "", "", "", "0110", "0210", "0120", "0220",
    "0011", "0012", "0021", "0022", "1100", "1200", "2100", "2200", "1001", "1002", "2001", "2002",
    "1110", "1210", "2110", "1120", "2120", "2210", "1220", "2220", "1011", "1012", "2011", "1021",
    "2021", "2012", "1022", "2022", "0111", "0112", "0211", "0212", "0121", "0122", "0221", "0222",
    "1101", "1102", "1201", "1202", "2101", "2102", "2201", "2202", "1111", "1112", "1211", "1212",
    "2111", "1121", "2121", "2112", "2211", "1122", "1221", "2212", "1222", "2122", "2221", "2222",
    "", "", "", "", "0303", "3030", "0310", "0130", "0330", "0013", "0031", "0033",
    "1300", "3100", "3300", "1003", "3001", "3003", "1310", "3130", "3330", "1013", "3031", "3033",
    "0313", "0131", "0333", "1303", "3101", "3303", "1313", "3131", "3333", "", "", "",
    "", "", "", "", "0001", "1000", "0100", "0010", "0002", "2000", "0200",
    "0020", "0201", "1020", "0102", "2010",
];

fn weight(digit: u8) -> W {
    match digit {
        b'1' => W::Light,
        b'2' => W::Heavy,
        b'3' => W::Double,
        _ => W::None,
    }
}

fn box_drawing(c: u32, m: &BoxMetrics) -> Vec<Shape> {
    let (w, h) = (m.w as f32, m.h as f32);
    match c {
        // Dashed lines: (horizontal?, heavy?, dashes per cell).
        0x2504..=0x250B | 0x254C..=0x254F => {
            let (horizontal, heavy, count) = match c {
                0x2504 => (true, false, 3),
                0x2505 => (true, true, 3),
                0x2506 => (false, false, 3),
                0x2507 => (false, true, 3),
                0x2508 => (true, false, 4),
                0x2509 => (true, true, 4),
                0x250A => (false, false, 4),
                0x250B => (false, true, 4),
                0x254C => (true, false, 2),
                0x254D => (true, true, 2),
                0x254E => (false, false, 2),
                _ => (false, true, 2),
            };
            dashes(horizontal, heavy, count, m)
        }
        0x256D..=0x2570 => arc(c, m),
        0x2571..=0x2573 => {
            let t = m.light as f32;
            let rising = Shape::Line {
                x0: 0.0,
                y0: h,
                x1: w,
                y1: 0.0,
                width: t,
            };
            let falling = Shape::Line {
                x0: 0.0,
                y0: 0.0,
                x1: w,
                y1: h,
                width: t,
            };
            match c {
                0x2571 => vec![rising],
                0x2572 => vec![falling],
                _ => vec![rising, falling],
            }
        }
        _ => {
            let digits = ARMS
                .get((c - 0x2500) as usize)
                .map(|s| s.as_bytes())
                .unwrap_or_default();
            let [up, right, down, left] = match digits {
                [a, b, c, d] => [weight(*a), weight(*b), weight(*c), weight(*d)],
                _ => return Vec::new(),
            };
            lines(up, right, down, left, m)
        }
    }
}

/// Start of a centred band of thickness `t` across a length `len`.
fn centre(len: u32, t: u32) -> i32 {
    (len.saturating_sub(t) / 2) as i32
}

/// The straight arms of a box-drawing character as rectangles.
fn lines(up: W, right: W, down: W, left: W, m: &BoxMetrics) -> Vec<Shape> {
    let mut rects = Vec::new();
    // Horizontal arms run along x and sit across y; vertical ones the other way round. The same rules
    // serve both, with the coordinates swapped.
    for (along, across, neg, pos, perp_neg, perp_pos, vertical) in [
        (m.w, m.h, left, right, up, down, false),
        (m.h, m.w, up, down, left, right, true),
    ] {
        let arms = Arms {
            along,
            across,
            neg,
            pos,
            perp_neg,
            perp_pos,
        };
        for (a0, a1, c0, c1) in arms.rects(m) {
            let (a0, a1, c0, c1) = (a0 as f32, a1 as f32, c0 as f32, c1 as f32);
            rects.push(if vertical {
                Shape::rect(c0, a0, c1 - c0, a1 - a0)
            } else {
                Shape::rect(a0, c0, a1 - a0, c1 - c0)
            });
        }
    }
    rects
}

/// The two arms of one axis (`neg` towards 0, `pos` towards `along`) and the arms across it
/// (`perp_neg` on the side of smaller across-coordinates).
struct Arms {
    along: u32,
    across: u32,
    neg: W,
    pos: W,
    perp_neg: W,
    perp_pos: W,
}

impl Arms {
    /// Rectangles as (along start, along end, across start, across end).
    fn rects(&self, m: &BoxMetrics) -> Vec<(i32, i32, i32, i32)> {
        let (t1, d) = (m.light, m.gap as i32);
        let thick = |w: W| if w == W::Heavy { m.heavy } else { m.light };
        // Where the light perpendicular line sits along this axis; double lines sit `d` either side.
        let c1a = centre(self.along, t1);
        let t1 = t1 as i32;
        // The band (along this axis) a perpendicular arm's line(s) occupy.
        let perp_band = |p: W| -> Option<(i32, i32)> {
            match p {
                W::None => None,
                W::Double => Some((c1a - d, c1a + d + t1)),
                w => {
                    let s = centre(self.along, thick(w));
                    Some((s, s + thick(w) as i32))
                }
            }
        };
        let both_double = self.perp_neg == W::Double && self.perp_pos == W::Double;
        let mut out = Vec::new();
        for (arm, positive, opposite) in [(self.neg, false, self.pos), (self.pos, true, self.neg)] {
            let span = |reach: i32| {
                if positive {
                    (reach, self.along as i32)
                } else {
                    (0, reach)
                }
            };
            match arm {
                W::None => {}
                W::Light | W::Heavy => {
                    let t = thick(arm);
                    let c0 = centre(self.across, t);
                    let own = (centre(self.along, t), centre(self.along, t) + t as i32);
                    // Reach far enough to cover the lines met at the centre. Between two double lines
                    // with nothing opposite, stop at the nearer one, as ╟ and ╤ show.
                    let (lo, hi) = if opposite == W::None && both_double {
                        (c1a + d, c1a - d + t1)
                    } else {
                        [self.perp_neg, self.perp_pos]
                            .into_iter()
                            .filter_map(perp_band)
                            .fold(own, |(lo, hi), (s, e)| (lo.min(s), hi.max(e)))
                    };
                    let (a0, a1) = span(if positive { lo } else { hi });
                    out.push((a0, a1, c0, c0 + t as i32));
                }
                W::Double => {
                    let c1c = centre(self.across, m.light);
                    for (c0, near, far) in [
                        (c1c - d, self.perp_neg, self.perp_pos),
                        (c1c + d, self.perp_pos, self.perp_neg),
                    ] {
                        // Each of the two lines stops where it meets the line of a perpendicular arm on
                        // its side (the inner corner), runs on to the opposite arm when there is one,
                        // or turns the outer corner of the arm on the far side.
                        let band_end = |p: W, inner: bool| -> i32 {
                            match (p, perp_band(p)) {
                                (W::Double, _) => match (positive, inner) {
                                    (true, true) => c1a + d,
                                    (false, true) => c1a - d + t1,
                                    (true, false) => c1a - d,
                                    (false, false) => c1a + d + t1,
                                },
                                (_, Some((s, e))) => {
                                    if positive {
                                        s
                                    } else {
                                        e
                                    }
                                }
                                (_, None) => {
                                    if positive {
                                        c1a
                                    } else {
                                        c1a + t1
                                    }
                                }
                            }
                        };
                        let reach = if near != W::None {
                            band_end(near, true)
                        } else if opposite != W::None {
                            band_end(W::None, true)
                        } else {
                            band_end(far, false)
                        };
                        let (a0, a1) = span(reach);
                        out.push((a0, a1, c0, c0 + t1));
                    }
                }
            }
        }
        out
    }
}

/// A dashed line of `count` dashes per cell, each dash centred in its share of the cell.
fn dashes(horizontal: bool, heavy: bool, count: u32, m: &BoxMetrics) -> Vec<Shape> {
    let t = if heavy { m.heavy } else { m.light };
    let (along, across) = if horizontal { (m.w, m.h) } else { (m.h, m.w) };
    let c0 = centre(across, t) as f32;
    let share = along as f32 / count as f32;
    (0..count)
        .map(|i| {
            let start = (i as f32 * share + share * 0.2).round();
            let end = ((i + 1) as f32 * share - share * 0.2)
                .round()
                .max(start + 1.0);
            if horizontal {
                Shape::rect(start, c0, end - start, t as f32)
            } else {
                Shape::rect(c0, start, t as f32, end - start)
            }
        })
        .collect()
}

/// Rounded corners ╭ ╮ ╯ ╰: a quarter circle joined by straight lines to the middles of two edges.
fn arc(c: u32, m: &BoxMetrics) -> Vec<Shape> {
    let t = m.light as f32;
    let (w, h) = (m.w as f32, m.h as f32);
    // Centres of the vertical and horizontal light lines, matching `lines`.
    let cx = centre(m.w, m.light) as f32 + t / 2.0;
    let cy = centre(m.h, m.light) as f32 + t / 2.0;
    let r = (w.min(h) / 2.0).max(1.0);
    // (towards right?, towards down?)
    let (right, down) = match c {
        0x256D => (true, true),
        0x256E => (false, true),
        0x256F => (false, false),
        _ => (true, false),
    };
    let sx = if right { 1.0 } else { -1.0 };
    let sy = if down { 1.0 } else { -1.0 };
    let (acx, acy) = (cx + sx * r, cy + sy * r);
    let (vx0, vy0) = (cx, cy + sy * r);
    let (hx0, hy0) = (cx + sx * r, cy);
    let half = t / 2.0;
    let vertical = if down {
        Shape::rect(cx - half, vy0, t, (h - vy0).max(0.0))
    } else {
        Shape::rect(cx - half, 0.0, t, vy0.max(0.0))
    };
    let horizontal = if right {
        Shape::rect(hx0, cy - half, (w - hx0).max(0.0), t)
    } else {
        Shape::rect(0.0, cy - half, hx0.max(0.0), t)
    };
    vec![
        Shape::Arc {
            cx: acx,
            cy: acy,
            r,
            x0: vx0,
            y0: vy0,
            x1: hx0,
            y1: hy0,
            width: t,
        },
        vertical,
        horizontal,
    ]
}

#[cfg(test)]
mod tests {
    use super::super::metrics::Metrics;
    use super::super::shapes::{rasterise, Coverage};
    use super::*;

    fn draw(ch: char) -> Coverage {
        let m = BoxMetrics::new(&Metrics::new(16.0), 10);
        let shapes = shapes(ch, &m).expect("procedural");
        rasterise(&shapes, m.w, m.h).expect("ink")
    }

    fn ink(cov: &Coverage, x: u32, y: u32) -> u8 {
        cov.alpha[(y * cov.width + x) as usize]
    }

    fn row_ink(cov: &Coverage, y: u32) -> Vec<u8> {
        (0..cov.width).map(|x| ink(cov, x, y)).collect()
    }

    #[test]
    fn the_table_covers_the_whole_block() {
        assert_eq!(ARMS.len(), 128);
        for (i, digits) in ARMS.iter().enumerate() {
            assert!(digits.is_empty() || digits.len() == 4, "entry {i:x}");
        }
    }

    #[test]
    fn horizontal_line_touches_both_cell_edges() {
        let cov = draw('─');
        let lit: Vec<u32> = (0..20).filter(|&y| ink(&cov, 0, y) == 255).collect();
        assert_eq!(lit.len(), 1, "one pixel thick");
        let y = lit[0];
        assert!(
            row_ink(&cov, y).iter().all(|&a| a == 255),
            "full width at row {y}"
        );
        // A vertical line's column meets it: the corner ┌ starts on the same row.
        let corner = draw('┌');
        assert_eq!(ink(&corner, 9, y), 255);
        assert_eq!(ink(&corner, 0, y), 0);
        assert_eq!(ink(&corner, 4, 19), 255, "down arm reaches the bottom edge");
    }

    #[test]
    fn vertical_lines_touch_top_and_bottom() {
        for ch in ['│', '┃', '║', '┼', '╬'] {
            let cov = draw(ch);
            let top: Vec<u8> = row_ink(&cov, 0);
            let bottom: Vec<u8> = row_ink(&cov, 19);
            assert_eq!(top, bottom, "{ch}");
            assert!(top.contains(&255), "{ch}");
        }
    }

    #[test]
    fn every_procedural_character_draws_something() {
        let m = BoxMetrics::new(&Metrics::new(16.0), 10);
        for c in (0x2500..=0x259F)
            .chain(0x2801..=0x28FF)
            .chain(0xE0B0..=0xE0B3)
        {
            let ch = char::from_u32(c).expect("valid");
            let shapes = shapes(ch, &m).expect("procedural");
            assert!(
                rasterise(&shapes, m.w, m.h).is_some(),
                "U+{c:04X} has no ink"
            );
        }
        assert!(
            shapes('\u{2800}', &m).is_some_and(|s| s.is_empty()),
            "blank braille"
        );
        assert!(shapes('a', &m).is_none());
    }

    #[test]
    fn double_corner_has_a_gap_between_its_lines() {
        let cov = draw('╔');
        let column = 9;
        let lit: Vec<u32> = (0..20).filter(|&y| ink(&cov, column, y) == 255).collect();
        assert_eq!(lit.len(), 2, "two horizontal lines at the right edge");
        assert!(lit[1] - lit[0] >= 3);
    }

    #[test]
    fn full_block_fills_and_halves_split() {
        let full = draw('█');
        assert!(full.alpha.iter().all(|&a| a == 255));
        let upper = draw('▀');
        let lower = draw('▄');
        for (u, l) in upper.alpha.iter().zip(&lower.alpha) {
            assert_eq!(
                u16::from(*u) + u16::from(*l),
                255,
                "halves are complementary"
            );
        }
    }
}
