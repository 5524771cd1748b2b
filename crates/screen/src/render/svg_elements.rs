//! SVG elements for the shared primitives, and the number and text formatting every element uses.

use std::fmt::Write;

use crate::color::Rgb;

use super::shapes::Shape;

/// Write one shape as an SVG element, offset by (dx, dy), in `colour`.
pub(crate) fn write_shape(o: &mut String, shape: &Shape, dx: f32, dy: f32, colour: Rgb) {
    let c = colour.hex();
    let _ = match *shape {
        Shape::Rect { x, y, w, h, alpha } => {
            if w <= 0.0 || h <= 0.0 {
                return;
            }
            let _ = write!(
                o,
                r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{c}""#,
                num(x + dx),
                num(y + dy),
                num(w),
                num(h)
            );
            if alpha < 1.0 {
                let _ = write!(o, r#" fill-opacity="{}""#, num(alpha));
            }
            writeln!(o, "/>")
        }
        Shape::Line {
            x0,
            y0,
            x1,
            y1,
            width,
        } => writeln!(
            o,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{c}" stroke-width="{}" stroke-linecap="round"/>"#,
            num(x0 + dx),
            num(y0 + dy),
            num(x1 + dx),
            num(y1 + dy),
            num(width)
        ),
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
            // Sweep clockwise (on screen, y down) when the turn from start to end is clockwise.
            let cross = (x0 - cx) * (y1 - cy) - (y0 - cy) * (x1 - cx);
            writeln!(
                o,
                r#"<path d="M{} {} A{} {} 0 0 {} {} {}" fill="none" stroke="{c}" stroke-width="{}"/>"#,
                num(x0 + dx),
                num(y0 + dy),
                num(r),
                num(r),
                u8::from(cross > 0.0),
                num(x1 + dx),
                num(y1 + dy),
                num(width)
            )
        }
        Shape::Disc { cx, cy, r } => writeln!(
            o,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{c}"/>"#,
            num(cx + dx),
            num(cy + dy),
            num(r)
        ),
        Shape::Triangle { points } => {
            let [a, b, t] = points.map(|(x, y)| format!("{},{}", num(x + dx), num(y + dy)));
            writeln!(o, r#"<polygon points="{a} {b} {t}" fill="{c}"/>"#)
        }
        Shape::Wave {
            x0,
            x1,
            y,
            amplitude,
            period,
            width,
        } => {
            // Eight points per period trace the sine closely enough at underline sizes.
            let step = (period / 8.0).max(0.5);
            let mut points = String::new();
            let mut x = x0;
            loop {
                let wy = y + amplitude * (std::f32::consts::TAU * (x - x0) / period.max(1.0)).sin();
                let _ = write!(
                    points,
                    "{}{},{}",
                    if points.is_empty() { "" } else { " " },
                    num(x + dx),
                    num(wy + dy)
                );
                if x >= x1 {
                    break;
                }
                x = (x + step).min(x1);
            }
            writeln!(
                o,
                r#"<polyline points="{points}" fill="none" stroke="{c}" stroke-width="{}"/>"#,
                num(width)
            )
        }
    };
}

/// A coordinate with at most two decimals and no trailing zeros, so output is compact and stable.
pub(crate) fn num(v: f32) -> String {
    let rounded = (v * 100.0).round() / 100.0;
    if rounded.fract() == 0.0 {
        format!("{}", rounded as i64)
    } else {
        let s = format!("{rounded:.2}");
        s.trim_end_matches('0').to_owned()
    }
}

/// Append text escaped for XML. Characters XML cannot carry (controls) become U+FFFD so the document
/// always parses.
pub(crate) fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\u{FFFE}' | '\u{FFFF}' => out.push('\u{FFFD}'),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compact() {
        assert_eq!(num(3.0), "3");
        assert_eq!(num(0.185), "0.19");
        assert_eq!(num(-2.5), "-2.5");
    }

    #[test]
    fn shapes_become_elements() {
        let mut out = String::new();
        write_shape(
            &mut out,
            &Shape::rect(1.0, 2.0, 3.0, 0.0),
            0.0,
            0.0,
            Rgb::new(0, 0, 0),
        );
        assert!(out.is_empty(), "an empty rectangle writes nothing");
        let shade = Shape::Rect {
            x: 0.0,
            y: 0.0,
            w: 10.0,
            h: 20.0,
            alpha: 0.5,
        };
        write_shape(&mut out, &shade, 5.0, 40.0, Rgb::new(255, 0, 0));
        assert_eq!(out, "<rect x=\"5\" y=\"40\" width=\"10\" height=\"20\" fill=\"#ff0000\" fill-opacity=\"0.5\"/>\n");
    }
}
