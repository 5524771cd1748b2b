//! The PNG's pixels ([`RgbImage`]) and blending anti-aliased ink into them, with gamma handled so text
//! keeps its weight.

use std::sync::OnceLock;

use crate::color::Rgb;

use super::shapes::Coverage;

/// An 8-bit RGB image, rows top to bottom.
pub(crate) struct RgbImage {
    pub width: u32,
    pub height: u32,
    pub data: Vec<u8>,
}

/// sRGB <-> linear tables for blending anti-aliased edges (see [`Blender::mix`]).
struct Gamma {
    to_linear: [u16; 256],
    to_srgb: Vec<u8>,
}

const LINEAR_MAX: usize = 4095;

fn gamma() -> &'static Gamma {
    static GAMMA: OnceLock<Gamma> = OnceLock::new();
    GAMMA.get_or_init(|| {
        let mut to_linear = [0u16; 256];
        for (i, v) in to_linear.iter_mut().enumerate() {
            let s = i as f64 / 255.0;
            let l = if s <= 0.04045 {
                s / 12.92
            } else {
                ((s + 0.055) / 1.055).powf(2.4)
            };
            *v = (l * LINEAR_MAX as f64).round() as u16;
        }
        let to_srgb = (0..=LINEAR_MAX)
            .map(|i| {
                let l = i as f64 / LINEAR_MAX as f64;
                let s = if l <= 0.003_130_8 {
                    l * 12.92
                } else {
                    1.055 * l.powf(1.0 / 2.4) - 0.055
                };
                (s * 255.0).round().clamp(0.0, 255.0) as u8
            })
            .collect();
        Gamma { to_linear, to_srgb }
    })
}

/// Blends ink over the image through coverage.
///
/// Nearly every partly covered pixel lies on its own cell's background, so the blend for each coverage
/// value is looked up in a table per (ink, background) pair; neighbouring cells share colours, so a few
/// tables serve a whole screen. Pixels on another colour (overlapping glyphs) take the slow path.
pub(crate) struct Blender {
    gamma: &'static Gamma,
    tables: Vec<(Rgb, Rgb, Box<BlendTable>)>,
}

/// The blended colour for every coverage value, for one (ink, background) pair.
type BlendTable = [[u8; 3]; 256];

/// Tables kept per render; a screen with more colour pairs than this just rebuilds some.
const MAX_BLEND_TABLES: usize = 64;

impl Blender {
    pub fn new() -> Blender {
        Blender {
            gamma: gamma(),
            tables: Vec::new(),
        }
    }

    /// The colour of a pixel `a`/255 covered by `ink` over `under`.
    ///
    /// Light ink on a darker background blends in linear light, dark ink on a lighter one in sRGB:
    /// each choice gives the heavier of the two results, so text keeps its weight in both dark and
    /// light themes instead of looking thin and grey in one of them.
    fn mix(g: &Gamma, ink: [u8; 3], under: [u8; 3], a: u8) -> [u8; 3] {
        let a = i32::from(a);
        let luma = |c: [u8; 3]| 2 * u32::from(c[0]) + 5 * u32::from(c[1]) + u32::from(c[2]);
        let linear = luma(ink) >= luma(under);
        let mut out = [0u8; 3];
        for ((o, f), b) in out.iter_mut().zip(ink).zip(under) {
            *o = if linear {
                let (fl, bl) = (
                    i32::from(g.to_linear[f as usize]),
                    i32::from(g.to_linear[b as usize]),
                );
                let mixed = bl + scale(fl - bl, a);
                g.to_srgb[mixed.clamp(0, LINEAR_MAX as i32) as usize]
            } else {
                let (f, b) = (i32::from(f), i32::from(b));
                (b + scale(f - b, a)).clamp(0, 255) as u8
            };
        }
        out
    }

    fn table(&mut self, ink: Rgb, under: Rgb) -> usize {
        if let Some(i) = self.tables.iter().position(|t| t.0 == ink && t.1 == under) {
            return i;
        }
        if self.tables.len() >= MAX_BLEND_TABLES {
            self.tables.clear();
        }
        let mut table: Box<BlendTable> = Box::new([[0u8; 3]; 256]);
        for (a, entry) in table.iter_mut().enumerate() {
            *entry = Blender::mix(
                self.gamma,
                [ink.r, ink.g, ink.b],
                [under.r, under.g, under.b],
                a as u8,
            );
        }
        self.tables.push((ink, under, table));
        self.tables.len() - 1
    }

    /// Blend `ink` through `coverage`, whose box starts at (x, y) plus its own offset; `under` is the
    /// colour most of the covered pixels have.
    pub fn blend(
        &mut self,
        canvas: &mut RgbImage,
        x: i64,
        y: i64,
        coverage: &Coverage,
        ink: Rgb,
        under: Rgb,
    ) {
        let index = self.table(ink, under);
        let table = &self.tables[index].2;
        let g = self.gamma;
        let ink_bytes = [ink.r, ink.g, ink.b];
        let under_bytes = [under.r, under.g, under.b];
        let (width, height) = (canvas.width as i64, canvas.height as i64);
        let stride = canvas.width as usize * 3;
        let left = x + i64::from(coverage.left);
        let top = y + i64::from(coverage.top);
        // Clip the coverage box to the image once, rather than per pixel.
        let gx0 = (-left).clamp(0, coverage.width as i64) as usize;
        let gx1 = (width - left).clamp(0, coverage.width as i64) as usize;
        if gx0 >= gx1 {
            return;
        }
        for gy in 0..coverage.height as i64 {
            let py = top + gy;
            if py < 0 || py >= height {
                continue;
            }
            let row_start = gy as usize * coverage.width as usize;
            let src = &coverage.alpha[row_start + gx0..row_start + gx1];
            let at = py as usize * stride + (left + gx0 as i64) as usize * 3;
            let dst = &mut canvas.data[at..at + src.len() * 3];
            for (&a, pixel) in src.iter().zip(dst.chunks_exact_mut(3)) {
                match a {
                    0 => {}
                    255 => pixel.copy_from_slice(&ink_bytes),
                    _ if *pixel == under_bytes => pixel.copy_from_slice(&table[a as usize]),
                    _ => {
                        let under = [pixel[0], pixel[1], pixel[2]];
                        pixel.copy_from_slice(&Blender::mix(g, ink_bytes, under, a));
                    }
                }
            }
        }
    }
}

/// `delta * a / 255`, rounded to nearest (integer division alone rounds negative values up).
fn scale(delta: i32, a: i32) -> i32 {
    let n = delta * a;
    if n >= 0 {
        (n + 127) / 255
    } else {
        (n - 127) / 255
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_of_the_ramp_are_exact() {
        let g = gamma();
        for (ink, under) in [
            ([255; 3], [0; 3]),
            ([0; 3], [255; 3]),
            ([200, 10, 10], [10, 10, 90]),
        ] {
            assert_eq!(Blender::mix(g, ink, under, 0), under);
            assert_eq!(Blender::mix(g, ink, under, 255), ink);
        }
    }

    #[test]
    fn half_coverage_keeps_text_weight_in_both_themes() {
        let g = gamma();
        // Light on dark blends in linear light: brighter than the sRGB midpoint.
        assert!(Blender::mix(g, [255; 3], [0; 3], 128)[0] > 180);
        // Dark on light blends in sRGB: darker than the linear-light midpoint (about 188).
        assert!(Blender::mix(g, [0; 3], [255; 3], 128)[0] < 130);
    }

    #[test]
    fn tables_agree_with_the_direct_blend() {
        let mut blender = Blender::new();
        let (ink, under) = (Rgb::new(230, 120, 30), Rgb::new(20, 30, 40));
        let index = blender.table(ink, under);
        for a in 0..=255u8 {
            let direct = Blender::mix(blender.gamma, [230, 120, 30], [20, 30, 40], a);
            assert_eq!(blender.tables[index].2[a as usize], direct);
        }
    }
}
