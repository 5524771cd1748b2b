//! Pixel sizes: the cell and the lines in it ([`Metrics`], from the font size and the embedded regular
//! face), and the span procedural shapes are drawn in ([`BoxMetrics`]). Glyphs, styles, shapes and
//! both renderers read them from here, below all of them.

use ab_glyph::Font;

use super::faces::{embedded, Face};

/// Sizes in pixels derived from the font size: everything the renderers need to place glyphs and lines.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Metrics {
    pub font_px: f32,
    pub cell_w: u32,
    pub cell_h: u32,
    /// Baseline, in pixels from the top of the cell; a whole pixel so every row looks the same.
    pub baseline: u32,
    /// Where a glyph's origin sits from the left of its cell: the font's advance is not a whole
    /// number of pixels, so glyphs are centred in the rounded cell.
    pub glyph_x: f32,
    /// Thickness of underlines, strikeouts and light box-drawing lines.
    pub line: u32,
    pub underline_y: u32,
    pub strike_y: u32,
}

impl Metrics {
    pub fn new(font_px: f32) -> Metrics {
        // DejaVu Sans Mono's own numbers, used should the embedded font ever fail to parse.
        let (mut upem, mut ascent, mut descent, mut advance) = (2048.0, 1901.0, 483.0, 1233.0);
        if let Some(font) = &embedded()[Face::Regular as usize] {
            upem = font.units_per_em().unwrap_or(upem);
            ascent = font.ascent_unscaled();
            descent = -font.descent_unscaled();
            advance = font.h_advance_unscaled(font.glyph_id('M'));
        }
        let px = font_px / upem;
        let advance_px = advance * px;
        let cell_w = advance_px.round().max(1.0) as u32;
        // 1.25 em gives a little air between lines, as terminals do; at 16 px it is exactly 20.
        let cell_h = (font_px * 1.25).round().max(2.0) as u32;
        let (ascent_px, descent_px) = (ascent * px, descent * px);
        let pad = (cell_h as f32 - ascent_px - descent_px) / 2.0;
        let baseline = ((pad + ascent_px).round() as u32).min(cell_h - 1);
        let line = (font_px / 16.0).round().max(1.0) as u32;
        let underline_y = (baseline + ((descent_px * 0.4).round() as u32).max(1))
            .min(cell_h.saturating_sub(line));
        // Half the x-height of DejaVu (0.547 em), so the strike crosses lowercase letters mid-way.
        let strike_y = baseline.saturating_sub((font_px * 0.547 / 2.0).round() as u32);
        Metrics {
            font_px,
            cell_w,
            cell_h,
            baseline,
            glyph_x: (cell_w as f32 - advance_px) / 2.0,
            line,
            underline_y,
            strike_y,
        }
    }

    /// Width in pixels of a cell, or of the two cells of a wide character.
    pub fn span_w(&self, wide: bool) -> u32 {
        if wide {
            self.cell_w * 2
        } else {
            self.cell_w
        }
    }
}

/// Sizes of one span (one or two cells) for procedural drawing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BoxMetrics {
    pub w: u32,
    pub h: u32,
    /// Thickness of light lines.
    pub light: u32,
    /// Thickness of heavy lines; the same parity as light ones so both share a centre.
    pub heavy: u32,
    /// Offset of each line of a double line from the centre of a light one.
    pub gap: u32,
}

impl BoxMetrics {
    pub fn new(metrics: &Metrics, span_w: u32) -> BoxMetrics {
        let light = metrics.line;
        BoxMetrics {
            w: span_w,
            h: metrics.cell_h,
            light,
            heavy: 2 * light + light % 2,
            gap: (2 * light).max(2),
        }
    }
}
