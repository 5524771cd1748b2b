//! Block elements (U+2580-259F), braille patterns (U+2800-28FF) and the powerline separators
//! (U+E0B0-E0B3): filled shapes sized from the cell, so blocks tile without seams.

use super::metrics::BoxMetrics;
use super::shapes::Shape;

/// Block elements: eighths, halves, quadrants and the three shades.
pub(crate) fn block(c: u32, m: &BoxMetrics) -> Vec<Shape> {
    let (w, h) = (m.w as f32, m.h as f32);
    let y8 = |k: u32| (h * k as f32 / 8.0).round();
    let x8 = |k: u32| (w * k as f32 / 8.0).round();
    let (mx, my) = (x8(4), y8(4));
    let quadrants = |ul: bool, ur: bool, ll: bool, lr: bool| {
        [
            (ul, 0.0, 0.0, mx, my),
            (ur, mx, 0.0, w - mx, my),
            (ll, 0.0, my, mx, h - my),
            (lr, mx, my, w - mx, h - my),
        ]
        .into_iter()
        .filter(|q| q.0)
        .map(|(_, x, y, qw, qh)| Shape::rect(x, y, qw, qh))
        .collect()
    };
    match c {
        0x2580 => vec![Shape::rect(0.0, 0.0, w, my)],
        0x2581..=0x2588 => {
            let top = y8(8 - (c - 0x2580));
            vec![Shape::rect(0.0, top, w, h - top)]
        }
        0x2589..=0x258F => vec![Shape::rect(0.0, 0.0, x8(0x2590 - c), h)],
        0x2590 => vec![Shape::rect(mx, 0.0, w - mx, h)],
        0x2591..=0x2593 => {
            let alpha = (c - 0x2590) as f32 * 0.25;
            vec![Shape::Rect {
                x: 0.0,
                y: 0.0,
                w,
                h,
                alpha,
            }]
        }
        0x2594 => vec![Shape::rect(0.0, 0.0, w, y8(1))],
        0x2595 => vec![Shape::rect(x8(7), 0.0, w - x8(7), h)],
        0x2596 => quadrants(false, false, true, false),
        0x2597 => quadrants(false, false, false, true),
        0x2598 => quadrants(true, false, false, false),
        0x2599 => quadrants(true, false, true, true),
        0x259A => quadrants(true, false, false, true),
        0x259B => quadrants(true, true, true, false),
        0x259C => quadrants(true, true, false, true),
        0x259D => quadrants(false, true, false, false),
        0x259E => quadrants(false, true, true, false),
        _ => quadrants(false, true, true, true),
    }
}

/// Braille patterns: up to eight dots in two columns of four.
pub(crate) fn braille(c: u32, m: &BoxMetrics) -> Vec<Shape> {
    let (w, h) = (m.w as f32, m.h as f32);
    // Dot n (bit n) sits at (column, row); the order is Unicode's, dots 7 and 8 came last.
    const DOTS: [(u32, u32); 8] = [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 0),
        (1, 1),
        (1, 2),
        (0, 3),
        (1, 3),
    ];
    // Centres snapped to pixel centres so equal dots look equal.
    let snap = |v: f32| (v - 0.5).round() + 0.5;
    let r = (w / 4.0).min(h / 8.0) * 0.7;
    let bits = c - 0x2800;
    DOTS.iter()
        .enumerate()
        .filter(|(bit, _)| bits & (1 << bit) != 0)
        .map(|(_, &(col, row))| Shape::Disc {
            cx: snap(w * (1 + 2 * col) as f32 / 4.0),
            cy: snap(h * (1 + 2 * row) as f32 / 8.0),
            r,
        })
        .collect()
}

/// Powerline separators: solid and thin arrows pointing right (E0B0, E0B1) and left (E0B2, E0B3).
pub(crate) fn powerline(c: u32, m: &BoxMetrics) -> Vec<Shape> {
    let (w, h) = (m.w as f32, m.h as f32);
    let (back, tip) = if c <= 0xE0B1 { (0.0, w) } else { (w, 0.0) };
    if matches!(c, 0xE0B0 | 0xE0B2) {
        vec![Shape::Triangle {
            points: [(back, 0.0), (tip, h / 2.0), (back, h)],
        }]
    } else {
        let width = m.light as f32;
        vec![
            Shape::Line {
                x0: back,
                y0: 0.0,
                x1: tip,
                y1: h / 2.0,
                width,
            },
            Shape::Line {
                x0: tip,
                y0: h / 2.0,
                x1: back,
                y1: h,
                width,
            },
        ]
    }
}
