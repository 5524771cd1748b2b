//! Geometric primitives drawn instead of font glyphs wherever pixel-exact joins matter (box drawing,
//! blocks, braille, underlines, the frame's buttons), and their rasterisation to coverage for PNG. The
//! SVG writer emits the same primitives as elements, so both formats agree.

use std::f32::consts::TAU;

use super::metrics::Metrics;

/// Anti-aliased ink of a glyph or shape: `alpha` (0 = none, 255 = full) over a `width` x `height` box
/// whose top-left pixel is (`left`, `top`) relative to the top-left of its cell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Coverage {
    pub left: i32,
    pub top: i32,
    pub width: u32,
    pub height: u32,
    pub alpha: Vec<u8>,
}

/// One primitive, in pixels relative to the top-left of its cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Shape {
    /// A filled axis-aligned rectangle; `alpha` below 1 for the shade blocks.
    Rect {
        x: f32,
        y: f32,
        w: f32,
        h: f32,
        alpha: f32,
    },
    /// A straight stroke (diagonals, powerline chevrons).
    Line {
        x0: f32,
        y0: f32,
        x1: f32,
        y1: f32,
        width: f32,
    },
    /// A quarter-circle stroke around (cx, cy) from (x0, y0) to (x1, y1) (rounded corners).
    Arc {
        cx: f32,
        cy: f32,
        r: f32,
        x0: f32,
        y0: f32,
        x1: f32,
        y1: f32,
        width: f32,
    },
    /// A filled disc (braille dots, window buttons).
    Disc { cx: f32, cy: f32, r: f32 },
    /// A filled triangle (powerline arrows).
    Triangle { points: [(f32, f32); 3] },
    /// A sine wave along y, one period every `period` pixels from x0 (curly underline).
    Wave {
        x0: f32,
        x1: f32,
        y: f32,
        amplitude: f32,
        period: f32,
        width: f32,
    },
}

impl Shape {
    pub fn rect(x: f32, y: f32, w: f32, h: f32) -> Shape {
        Shape::Rect {
            x,
            y,
            w,
            h,
            alpha: 1.0,
        }
    }

    /// The pixels the shape may touch: (x0, y0, x1, y1), before clipping.
    fn bounds(&self) -> (f32, f32, f32, f32) {
        match *self {
            Shape::Rect { x, y, w, h, .. } => (x, y, x + w, y + h),
            Shape::Line {
                x0,
                y0,
                x1,
                y1,
                width,
            } => {
                let m = width / 2.0 + 1.0;
                (
                    x0.min(x1) - m,
                    y0.min(y1) - m,
                    x0.max(x1) + m,
                    y0.max(y1) + m,
                )
            }
            Shape::Arc {
                cx, cy, r, width, ..
            } => {
                let m = r + width / 2.0 + 1.0;
                (cx - m, cy - m, cx + m, cy + m)
            }
            Shape::Disc { cx, cy, r } => (cx - r - 1.0, cy - r - 1.0, cx + r + 1.0, cy + r + 1.0),
            Shape::Triangle { points } => {
                let xs = points.map(|p| p.0);
                let ys = points.map(|p| p.1);
                let min = |v: [f32; 3]| v[0].min(v[1]).min(v[2]);
                let max = |v: [f32; 3]| v[0].max(v[1]).max(v[2]);
                (min(xs) - 1.0, min(ys) - 1.0, max(xs) + 1.0, max(ys) + 1.0)
            }
            Shape::Wave {
                x0,
                x1,
                y,
                amplitude,
                width,
                ..
            } => {
                let m = amplitude + width / 2.0 + 1.0;
                (x0, y - m, x1, y + m)
            }
        }
    }

    /// How much of the pixel whose top-left corner is (px, py) the shape covers, 0 to 1.
    fn coverage(&self, px: f32, py: f32) -> f32 {
        // Strokes and discs use the distance from the pixel centre to the outline: one pixel of linear
        // ramp is close enough to true area coverage at these sizes, and far cheaper.
        let (qx, qy) = (px + 0.5, py + 0.5);
        let ramp = |half_width: f32, distance: f32| (half_width + 0.5 - distance).clamp(0.0, 1.0);
        match *self {
            Shape::Rect { x, y, w, h, alpha } => {
                let ox = ((px + 1.0).min(x + w) - px.max(x)).max(0.0);
                let oy = ((py + 1.0).min(y + h) - py.max(y)).max(0.0);
                ox * oy * alpha
            }
            Shape::Line {
                x0,
                y0,
                x1,
                y1,
                width,
            } => ramp(width / 2.0, segment_distance((qx, qy), (x0, y0), (x1, y1))),
            Shape::Arc {
                cx,
                cy,
                r,
                x0,
                y0,
                x1,
                y1,
                width,
            } => {
                let (dx, dy) = (qx - cx, qy - cy);
                let (e0, e1) = ((x0 - cx, y0 - cy), (x1 - cx, y1 - cy));
                // Inside the quarter's sector the distance is to the circle, outside to the nearer end.
                let distance = if dx * e0.0 + dy * e0.1 >= 0.0 && dx * e1.0 + dy * e1.1 >= 0.0 {
                    ((dx * dx + dy * dy).sqrt() - r).abs()
                } else {
                    let d0 = ((qx - x0).powi(2) + (qy - y0).powi(2)).sqrt();
                    let d1 = ((qx - x1).powi(2) + (qy - y1).powi(2)).sqrt();
                    d0.min(d1)
                };
                ramp(width / 2.0, distance)
            }
            Shape::Disc { cx, cy, r } if r > 0.0 => {
                ramp(r, ((qx - cx).powi(2) + (qy - cy).powi(2)).sqrt())
            }
            Shape::Disc { .. } => 0.0,
            Shape::Triangle { points } => {
                let [a, b, c] = points;
                let orientation = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
                if orientation == 0.0 {
                    return 0.0;
                }
                let sign = orientation.signum();
                // Signed distance to each edge, positive inside; the smallest one decides.
                let edge = |p: (f32, f32), q: (f32, f32)| {
                    let (ex, ey) = (q.0 - p.0, q.1 - p.1);
                    let len = (ex * ex + ey * ey).sqrt().max(f32::EPSILON);
                    sign * (ex * (qy - p.1) - ey * (qx - p.0)) / len
                };
                (edge(a, b).min(edge(b, c)).min(edge(c, a)) + 0.5).clamp(0.0, 1.0)
            }
            Shape::Wave {
                x0,
                x1,
                y,
                amplitude,
                period,
                width,
            } => {
                if qx < x0 || qx > x1 || period <= 0.0 {
                    return 0.0;
                }
                let phase = TAU * (qx - x0) / period;
                let centre = y + amplitude * phase.sin();
                let slope = amplitude * TAU / period * phase.cos();
                ramp(
                    width / 2.0,
                    (qy - centre).abs() / (1.0 + slope * slope).sqrt(),
                )
            }
        }
    }
}

/// Distance from p to the segment a-b.
fn segment_distance(p: (f32, f32), a: (f32, f32), b: (f32, f32)) -> f32 {
    let (abx, aby) = (b.0 - a.0, b.1 - a.1);
    let len2 = abx * abx + aby * aby;
    let t = if len2 > 0.0 {
        (((p.0 - a.0) * abx + (p.1 - a.1) * aby) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (cx, cy) = (a.0 + t * abx, a.1 + t * aby);
    ((p.0 - cx).powi(2) + (p.1 - cy).powi(2)).sqrt()
}

/// Rasterise shapes into a `width` x `height` coverage box at the cell origin; overlapping shapes keep the
/// strongest coverage, so joins do not darken. `None` when nothing is inked.
pub(crate) fn rasterise(shapes: &[Shape], width: u32, height: u32) -> Option<Coverage> {
    let mut alpha = vec![0u8; width as usize * height as usize];
    for shape in shapes {
        let (x0, y0, x1, y1) = shape.bounds();
        let clip = |v: f32, max: u32| (v.floor().max(0.0) as u32).min(max);
        let (x0, x1) = (clip(x0, width), clip(x1.ceil(), width));
        let (y0, y1) = (clip(y0, height), clip(y1.ceil(), height));
        for py in y0..y1 {
            for px in x0..x1 {
                let c = shape.coverage(px as f32, py as f32);
                if c > 0.0 {
                    let a = &mut alpha[(py * width + px) as usize];
                    *a = (*a).max((c * 255.0).round() as u8);
                }
            }
        }
    }
    alpha.iter().any(|&a| a > 0).then_some(Coverage {
        left: 0,
        top: 0,
        width,
        height,
        alpha,
    })
}

/// Lines drawn with the text: the underline styles and the strikeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Decoration {
    Underline,
    DoubleUnderline,
    CurlyUnderline,
    DottedUnderline,
    DashedUnderline,
    Strikeout,
}

/// The shapes of an underline or strikeout running `width` pixels from `x`, in cell coordinates.
pub(crate) fn decoration(decoration: Decoration, x: f32, width: f32, m: &Metrics) -> Vec<Shape> {
    let t = m.line as f32;
    let uy = m.underline_y as f32;
    let cell_h = m.cell_h as f32;
    match decoration {
        Decoration::Underline => vec![Shape::rect(x, uy, width, t)],
        Decoration::Strikeout => vec![Shape::rect(x, m.strike_y as f32, width, t)],
        Decoration::DoubleUnderline => {
            // Two lines with one line's gap, kept inside the cell.
            let low = (uy + t).min(cell_h - t);
            let high = (low - 2.0 * t).max(m.baseline as f32 + 1.0).min(low - t);
            vec![
                Shape::rect(x, high, width, t),
                Shape::rect(x, low, width, t),
            ]
        }
        Decoration::CurlyUnderline => {
            // One wave per cell, starting at the cell's left edge so neighbouring cells join.
            let amplitude = (t * 1.2).max(1.0).min((cell_h - uy - t / 2.0).max(0.5));
            vec![Shape::Wave {
                x0: x,
                x1: x + width,
                y: uy + t / 2.0,
                amplitude,
                period: m.cell_w as f32,
                width: t,
            }]
        }
        Decoration::DottedUnderline => {
            let step = 2.0 * t;
            let count = (width / step).floor() as usize;
            (0..count)
                .map(|i| Shape::rect(x + i as f32 * step, uy, t, t))
                .collect()
        }
        Decoration::DashedUnderline => {
            // One dash per cell, centred, a fifth of the cell left blank at either side.
            let cell = m.cell_w as f32;
            let count = (width / cell).round().max(1.0) as usize;
            (0..count)
                .map(|i| {
                    let start = x + i as f32 * cell + (cell * 0.2).round();
                    Shape::rect(start, uy, cell - 2.0 * (cell * 0.2).round(), t)
                })
                .collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ink(cov: &Coverage, x: u32, y: u32) -> u8 {
        cov.alpha[(y * cov.width + x) as usize]
    }

    #[test]
    fn whole_pixel_rectangles_are_crisp() {
        let cov = rasterise(&[Shape::rect(2.0, 3.0, 4.0, 1.0)], 10, 10).expect("ink");
        assert_eq!(ink(&cov, 2, 3), 255);
        assert_eq!(ink(&cov, 5, 3), 255);
        assert_eq!(ink(&cov, 6, 3), 0);
        assert_eq!(ink(&cov, 2, 4), 0);
        assert_eq!(cov.alpha.iter().filter(|&&a| a > 0).count(), 4);
    }

    #[test]
    fn shapes_are_clipped_to_the_box() {
        let shapes = [
            Shape::rect(-5.0, -5.0, 100.0, 100.0),
            Shape::Disc {
                cx: 50.0,
                cy: 50.0,
                r: 90.0,
            },
            Shape::Line {
                x0: -9.0,
                y0: -9.0,
                x1: 99.0,
                y1: 99.0,
                width: 3.0,
            },
        ];
        let cov = rasterise(&shapes, 4, 4).expect("ink");
        assert!(cov.alpha.iter().all(|&a| a == 255));
    }

    #[test]
    fn nothing_inked_is_none() {
        assert!(rasterise(&[], 4, 4).is_none());
        assert!(rasterise(&[Shape::rect(10.0, 10.0, 2.0, 2.0)], 4, 4).is_none());
    }

    #[test]
    fn a_disc_is_round() {
        let cov = rasterise(
            &[Shape::Disc {
                cx: 5.0,
                cy: 5.0,
                r: 3.0,
            }],
            10,
            10,
        )
        .expect("ink");
        assert_eq!(ink(&cov, 4, 4), 255, "centre");
        assert_eq!(ink(&cov, 0, 0), 0, "corner");
        assert!(
            ink(&cov, 1, 4) < 255 && ink(&cov, 8, 4) < 255,
            "edges are anti-aliased"
        );
    }

    #[test]
    fn curly_underline_spans_the_cell_and_joins() {
        let m = Metrics::new(16.0);
        let shapes = decoration(Decoration::CurlyUnderline, 0.0, 10.0, &m);
        let cov = rasterise(&shapes, 10, 20).expect("ink");
        for x in [0, 9] {
            assert!((0..20).any(|y| ink(&cov, x, y) > 64), "column {x} has ink");
        }
    }
}
