//! Glyphs: coverage rasterised from the embedded faces (or a system font, or a procedural shape) once
//! per (character, face, size) and kept in a per-thread cache.

use std::cell::RefCell;
use std::collections::HashMap;

use ab_glyph::{point, Font, GlyphId, PxScale};

use super::boxdraw;
use super::faces::{embedded, Face};
use super::fallback;
use super::metrics::{BoxMetrics, Metrics};
use super::shapes::{self, Coverage, Decoration, Shape};

/// How many cells a character takes in a title bar: 0 for combining marks, 2 for wide characters.
/// Only used for titles: cells on the screen carry their width from the emulator.
pub(crate) fn char_cells(c: char) -> usize {
    crate::width::char_width(c).unwrap_or(0)
}

/// Characters that take no room and draw nothing: joiners, variation selectors, bidi marks.
fn is_invisible(c: char) -> bool {
    matches!(c as u32, 0x200B..=0x200F | 0x2028..=0x202E | 0x2060..=0x2064 | 0xFE00..=0xFE0F | 0xFEFF)
        || c.is_control()
}

/// What the glyph cache holds coverage for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GlyphKey {
    /// One character of a cell's text, in a face, spanning one or two cells.
    Char { ch: char, face: Face, wide: bool },
    /// An underline or strikeout under one or two cells.
    Decoration { decoration: Decoration, wide: bool },
}

/// Distinct glyphs kept per thread before the cache starts over; a screen of random Unicode could
/// otherwise grow it without bound.
const MAX_CACHED_GLYPHS: usize = 8192;

/// Rasterised coverage by (font size, key). `None` means "draws nothing" (a space, an empty braille cell).
#[derive(Default)]
pub(crate) struct GlyphCache {
    map: HashMap<(u32, GlyphKey), Option<Coverage>>,
}

impl GlyphCache {
    pub fn get(&mut self, key: GlyphKey, metrics: &Metrics) -> Option<&Coverage> {
        let full_key = (metrics.font_px.to_bits(), key);
        if self.map.len() >= MAX_CACHED_GLYPHS && !self.map.contains_key(&full_key) {
            self.map.clear();
        }
        self.map
            .entry(full_key)
            .or_insert_with(|| rasterise(key, metrics))
            .as_ref()
    }
}

thread_local! {
    // Per thread rather than behind a lock: screenshots of different sessions render in parallel, and the
    // cache is small (a few hundred glyphs of a few hundred bytes).
    static GLYPHS: RefCell<GlyphCache> = RefCell::new(GlyphCache::default());
}

/// Run `f` with this thread's glyph cache.
pub(crate) fn with_glyph_cache<R>(f: impl FnOnce(&mut GlyphCache) -> R) -> R {
    // The cache is moved out for the duration and put back, so no borrow is held across `f`; a nested
    // call (none exists) or a thread being torn down simply works with an empty cache.
    let mut cache = GLYPHS.try_with(RefCell::take).unwrap_or_default();
    let result = f(&mut cache);
    let _ = GLYPHS.try_with(|slot| slot.replace(cache));
    result
}

fn rasterise(key: GlyphKey, metrics: &Metrics) -> Option<Coverage> {
    match key {
        GlyphKey::Char { ch, face, wide } => rasterise_char(ch, face, wide, metrics),
        GlyphKey::Decoration { decoration, wide } => {
            let shapes = shapes::decoration(decoration, 0.0, metrics.span_w(wide) as f32, metrics);
            shapes::rasterise(&shapes, metrics.span_w(wide), metrics.cell_h)
        }
    }
}

/// Coverage of one character: drawn procedurally when it is a line or block (so neighbours join), else
/// from the embedded face, else from a system font, else a placeholder box so the gap is visible.
pub(crate) fn rasterise_char(
    ch: char,
    face: Face,
    wide: bool,
    metrics: &Metrics,
) -> Option<Coverage> {
    let span_w = metrics.span_w(wide);
    let boxes = BoxMetrics::new(metrics, span_w);
    if let Some(shapes) = boxdraw::shapes(ch, &boxes) {
        return shapes::rasterise(&shapes, span_w, metrics.cell_h);
    }
    if ch == ' ' || is_invisible(ch) {
        return None;
    }
    let faces = embedded();
    // Bold and oblique cover fewer characters than regular: borrow regular's glyph rather than leave a gap.
    for candidate in [face, Face::Regular] {
        if let Some(font) = &faces[candidate as usize] {
            let id = font.glyph_id(ch);
            if id.0 != 0 {
                return rasterise_outline(font, id, span_w, metrics);
            }
        }
    }
    if let Some(found) =
        fallback::with_font_for(ch, |font, id| rasterise_outline(font, id, span_w, metrics))
    {
        return found;
    }
    shapes::rasterise(&placeholder(span_w, metrics), span_w, metrics.cell_h)
}

/// Rasterise one glyph of `font` centred in a span of `span_w` pixels, on the cell baseline.
fn rasterise_outline<F: Font>(
    font: &F,
    id: GlyphId,
    span_w: u32,
    metrics: &Metrics,
) -> Option<Coverage> {
    let upem = font.units_per_em()?;
    let mut px_per_unit = metrics.font_px / upem;
    let mut advance = font.h_advance_unscaled(id) * px_per_unit;
    let span = span_w as f32;
    // A glyph wider than its cells (a fallback font's full-width glyph in a narrow cell, say) is shrunk
    // to fit rather than spill over its neighbours.
    if advance > span + 0.5 {
        px_per_unit *= span / advance;
        advance = span;
    }
    let scale = PxScale::from(px_per_unit * font.height_unscaled());
    let x = (span - advance) / 2.0;
    let glyph = id.with_scale_and_position(scale, point(x, metrics.baseline as f32));
    let outlined = font.outline_glyph(glyph)?;
    let bounds = outlined.px_bounds();
    let width = bounds.width().max(0.0) as u32;
    let height = bounds.height().max(0.0) as u32;
    if width == 0 || height == 0 {
        return None;
    }
    let mut alpha = vec![0u8; width as usize * height as usize];
    outlined.draw(|gx, gy, c| {
        if let Some(a) = alpha.get_mut(gy as usize * width as usize + gx as usize) {
            *a = (c.clamp(0.0, 1.0) * 255.0).round() as u8;
        }
    });
    Some(Coverage {
        left: bounds.min.x as i32,
        top: bounds.min.y as i32,
        width,
        height,
        alpha,
    })
}

/// The box drawn for a character no font has: an outline from the x-height area down to the baseline,
/// so a screenshot shows that something is there.
fn placeholder(span_w: u32, metrics: &Metrics) -> Vec<Shape> {
    let t = metrics.line as f32;
    let x0 = (span_w as f32 * 0.15).round();
    let x1 = (span_w as f32 * 0.85).round().max(x0 + 2.0 * t);
    let y0 = (metrics.cell_h as f32 * 0.2).round();
    let y1 = (metrics.baseline as f32).max(y0 + 2.0 * t);
    vec![
        Shape::rect(x0, y0, x1 - x0, t),
        Shape::rect(x0, y1 - t, x1 - x0, t),
        Shape::rect(x0, y0, t, y1 - y0),
        Shape::rect(x1 - t, y0, t, y1 - y0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_face_parses() {
        assert!(embedded().iter().all(Option::is_some));
    }

    #[test]
    fn metrics_at_16px_are_10_by_20() {
        let m = Metrics::new(16.0);
        assert_eq!((m.cell_w, m.cell_h), (10, 20));
        assert!(m.baseline > m.strike_y && m.underline_y > m.baseline && m.underline_y < 20);
    }

    #[test]
    fn metrics_stay_sane_at_every_size() {
        for tenth in 60..=960 {
            let m = Metrics::new(tenth as f32 / 10.0);
            assert!(m.cell_w >= 1 && m.cell_h >= 2);
            assert!(m.baseline < m.cell_h && m.underline_y + m.line <= m.cell_h);
        }
    }

    #[test]
    fn letters_have_ink_and_spaces_do_not() {
        let m = Metrics::new(16.0);
        let a = rasterise_char('a', Face::Regular, false, &m).expect("a has a glyph");
        assert!(a.alpha.iter().any(|&v| v > 200));
        assert!(
            a.left >= 0 && a.left + a.width as i32 <= 10,
            "a stays in its cell"
        );
        assert!(rasterise_char(' ', Face::Regular, false, &m).is_none());
        assert!(rasterise_char('\u{200d}', Face::Bold, false, &m).is_none());
    }

    #[test]
    fn bold_is_heavier_than_regular() {
        let m = Metrics::new(16.0);
        let ink = |face| -> u32 {
            rasterise_char('H', face, false, &m)
                .map(|c| c.alpha.iter().map(|&v| u32::from(v)).sum())
                .unwrap_or(0)
        };
        assert!(ink(Face::Bold) > ink(Face::Regular) * 11 / 10);
    }

    #[test]
    fn a_character_no_font_has_gets_a_placeholder() {
        let m = Metrics::new(16.0);
        // A private-use character outside every font's repertoire.
        let cov = rasterise_char('\u{10FFFD}', Face::Regular, false, &m).expect("placeholder");
        assert!(cov.alpha.contains(&255));
    }
}
