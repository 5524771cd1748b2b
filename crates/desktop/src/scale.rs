//! Screenshots sized for models, and the exact way back from their pixels to the screen's.
//!
//! Vision models downscale large images before they look at them (Anthropic's API beyond 1568 px on
//! the long edge or about 1.15 megapixels), and then the coordinates they answer with are off by the
//! factor they never saw. So we send an image already within the model's limits ([`fit`]; the
//! vendors' limits by name in [`PRESETS`]), and map every coordinate through one [`Scale`]:
//!
//! - image to screen: the screen pixel under the *centre* of the image pixel, so a click lands inside
//!   the area the model pointed at, never on the edge of its neighbour, and the last image pixel maps
//!   inside the screen;
//! - screen to image: the image pixel whose area holds the screen pixel's centre.
//!
//! Going image -> screen -> image gives back the same pixel whenever the image is not larger than the
//! screen (every case [`fit`] produces). The downscale itself ([`Frame::resize`]) averages every screen
//! pixel an image pixel covers (a box filter, weighted by the covered area), which keeps thin text
//! strokes as grey instead of dropping them the way nearest-neighbour sampling does.

use serde::Serialize;

use crate::capture::Frame;

/// Anthropic's limit on the long edge of an image the model sees unscaled.
pub const DEFAULT_MAX_LONG_EDGE: u32 = 1568;
/// Anthropic's limit on the pixels of an image the model sees unscaled (about 1.15 megapixels).
pub const DEFAULT_MAX_PIXELS: u64 = 1_150_000;

/// The most a screenshot may be: its long edge and its area ([`fit`] keeps within both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Fit {
    pub max_long_edge: u32,
    pub max_pixels: u64,
}

/// A named [`Fit`]: one vendor's image limit, so a screenshot reaches the model as it was sent,
/// neither resized by the API (which loses the scale the coordinates need) nor refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    pub fit: Fit,
}

/// The vendors' limits, as of September 2026. Vendors count images in square patches (Anthropic 28
/// px, OpenAI 32 px; a partial patch counts whole), so each area limit sits below budget x patch²:
/// ⌈w/p⌉·⌈h/p⌉ <= wh/p² + (w+h)/p + 1, and (w+h) is largest with the long edge at its limit. The
/// bound under each entry is that arithmetic; `presets_stay_within_their_vendors_budgets` checks it.
///
/// Sources: Anthropic's vision guide (platform.claude.com/docs/en/build-with-claude/vision: image
/// tokens ⌈w/28⌉·⌈h/28⌉; 1568 px and 1568 tokens, or 2576 px and 4784 tokens for Claude Opus 4.7
/// and later); its computer-use guide (.../agents-and-tools/tool-use/computer-use-tool: the
/// `computer_toolset_20260801` refuses an oversized screenshot instead of scaling it); the
/// computer-use demo (anthropics/claude-quickstarts, computer-use-demo/.../tools/computer.py:
/// `MAX_SCALING_TARGETS` XGA 1024x768 and WXGA 1280x800; its README advises no more than XGA/WXGA);
/// OpenAI's computer-use guide (developers.openai.com/api/docs/guides/tools-computer-use: send
/// `detail: "original"`; downscaled, 1440x900 and 1600x900 performed well) and images guide
/// (.../guides/images-vision: `original` on gpt-5.4 and gpt-5.5 is at most 6000 px and 10,000
/// patches of 32 px).
pub const PRESETS: [Preset; 6] = [
    // Claude before Opus 4.7, all computer-use tool versions: 1568 px and 1568 tokens. The area
    // bound gives at most 1,150,000/784 + (1568+734)/28 + 1 = 1550 tokens. The default.
    Preset {
        name: "anthropic",
        fit: Fit {
            max_long_edge: DEFAULT_MAX_LONG_EDGE,
            max_pixels: DEFAULT_MAX_PIXELS,
        },
    },
    // Claude Opus 4.7 and later, and every model of `computer_toolset_20260801`: 2576 px and 4784
    // tokens (about 3.75 MP); at most 3,600,000/784 + (2576+1398)/28 + 1 = 4734 tokens.
    Preset {
        name: "anthropic-hires",
        fit: Fit {
            max_long_edge: 2576,
            max_pixels: 3_600_000,
        },
    },
    // The demo's XGA target, what its README recommends: within 1024x768.
    Preset {
        name: "xga",
        fit: Fit {
            max_long_edge: 1024,
            max_pixels: 1024 * 768,
        },
    },
    // The demo's WXGA target: within 1280x800 (a 16:9 screen comes out 1280x720, the size
    // Anthropic's computer-use guide suggests starting with).
    Preset {
        name: "wxga",
        fit: Fit {
            max_long_edge: 1280,
            max_pixels: 1280 * 800,
        },
    },
    // OpenAI's GA `computer` tool, downscaled as its guide found to work well: within 1600x900
    // (1440x900 at 16:10); at most 1485 patches, inside every detail level's budget.
    Preset {
        name: "openai",
        fit: Fit {
            max_long_edge: 1600,
            max_pixels: 1600 * 900,
        },
    },
    // OpenAI `detail: "original"` on gpt-5.4 and gpt-5.5: 6000 px and 10,000 patches; at most
    // 9,900,000/1024 + (6000+1650)/32 + 1 = 9908 patches. A 4K screen goes unscaled.
    Preset {
        name: "openai-original",
        fit: Fit {
            max_long_edge: 6000,
            max_pixels: 9_900_000,
        },
    },
];

/// The preset of this name, if there is one (the names are in [`PRESETS`]).
pub fn preset(name: &str) -> Option<Fit> {
    PRESETS.iter().find(|p| p.name == name).map(|p| p.fit)
}

/// The largest size with the screen's aspect ratio whose long edge is at most `max_long_edge` and
/// whose area is at most `max_pixels`. Never larger than the screen (no upscaling); each side at
/// least 1. A limit of 0 means no limit of that kind.
pub fn fit(screen_w: u32, screen_h: u32, max_long_edge: u32, max_pixels: u64) -> (u32, u32) {
    if screen_w == 0 || screen_h == 0 {
        return (screen_w, screen_h);
    }
    let long = screen_w.max(screen_h);
    let short = screen_w.min(screen_h);
    let area = u64::from(screen_w) * u64::from(screen_h);
    let long_limit = if max_long_edge == 0 {
        long
    } else {
        max_long_edge
    };
    let pixel_limit = if max_pixels == 0 { area } else { max_pixels };
    if long <= long_limit && area <= pixel_limit {
        return (screen_w, screen_h);
    }
    // The short side that keeps the aspect for a given long side, rounded to nearest.
    let short_for = |l: u32| -> u32 {
        let s = (u64::from(l) * u64::from(short) * 2 + u64::from(long)) / (u64::from(long) * 2);
        (s as u32).clamp(1, short)
    };
    let by_area = (pixel_limit as f64 * f64::from(long) / f64::from(short)).sqrt();
    let mut l = (by_area.floor() as u64)
        .min(u64::from(long_limit))
        .min(u64::from(long)) as u32;
    l = l.max(1);
    // Float rounding may leave the area a pixel row over the limit: step down until it fits.
    while l > 1 && u64::from(l) * u64::from(short_for(l)) > pixel_limit {
        l -= 1;
    }
    let s = short_for(l);
    if screen_w >= screen_h {
        (l, s)
    } else {
        (s, l)
    }
}

/// How screenshot pixels relate to screen pixels, per axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Scale {
    /// The screen's size (root window pixels).
    pub screen: (u32, u32),
    /// The screenshot's size.
    pub image: (u32, u32),
}

/// The pixel of a `to`-sized axis under the centre of pixel `p` of a `from`-sized axis:
/// floor((p + 0.5) * to / from), always `< to` for `p < from`.
fn map_axis(p: u32, from: u32, to: u32) -> u32 {
    if from == 0 || to == 0 {
        return 0;
    }
    let p = p.min(from - 1);
    ((u64::from(p) * 2 + 1) * u64::from(to) / (u64::from(from) * 2)) as u32
}

impl Scale {
    /// The scale for a screen sent as an image of at most `max_long_edge` and `max_pixels` ([`fit`]).
    pub fn fit(screen: (u32, u32), max_long_edge: u32, max_pixels: u64) -> Scale {
        Scale {
            screen,
            image: fit(screen.0, screen.1, max_long_edge, max_pixels),
        }
    }

    /// No scaling: the image is the screen.
    pub fn identity(screen: (u32, u32)) -> Scale {
        Scale {
            screen,
            image: screen,
        }
    }

    pub fn is_identity(&self) -> bool {
        self.screen == self.image
    }

    /// Screen pixels per image pixel on the x axis (>= 1 when downscaled), for callers to report.
    pub fn factor(&self) -> f64 {
        if self.image.0 == 0 {
            return 1.0;
        }
        f64::from(self.screen.0) / f64::from(self.image.0)
    }

    /// Is (x, y) a pixel of the image?
    pub fn contains_image_point(&self, x: u32, y: u32) -> bool {
        x < self.image.0 && y < self.image.1
    }

    /// The screen pixel under the centre of image pixel (x, y). Coordinates past the image are
    /// taken as its last pixel (check them first with [`Scale::contains_image_point`]).
    pub fn to_screen(&self, x: u32, y: u32) -> (u32, u32) {
        (
            map_axis(x, self.image.0, self.screen.0),
            map_axis(y, self.image.1, self.screen.1),
        )
    }

    /// The image pixel whose area holds the centre of screen pixel (x, y).
    pub fn to_image(&self, x: u32, y: u32) -> (u32, u32) {
        (
            map_axis(x, self.screen.0, self.image.0),
            map_axis(y, self.screen.1, self.image.1),
        )
    }
}

/// For one axis of a resize: for each output pixel, the first source pixel it covers and the share
/// of each of the next `taps` source pixels, in 1/2^bits summing to exactly 2^bits. Every output has
/// the same number of taps (zero weights pad the shorter ones, and the window is moved left at the
/// far edge), so the inner loops have no branches.
struct Taps {
    first: Vec<usize>,
    /// `weights[o * taps .. (o + 1) * taps]`.
    weights: Vec<u32>,
    taps: usize,
}

impl Taps {
    fn new(from: u32, to: u32, bits: u32) -> Taps {
        let one = 1u32 << bits;
        // In units of 1/(from*to): output pixel o spans [o*from, (o+1)*from), source pixel i spans
        // [i*to, (i+1)*to); their overlap is the weight of i in o, out of `from`.
        let (from64, to64) = (u64::from(from), u64::from(to));
        let taps = (from.div_ceil(to) as usize + 1).min(from as usize);
        let mut first = Vec::with_capacity(to as usize);
        let mut weights = vec![0u32; to as usize * taps];
        for (o, row) in weights.chunks_exact_mut(taps).enumerate() {
            let o = o as u64;
            let (start, end) = (o * from64, (o + 1) * from64);
            // Near the far edge, start the window earlier so it stays inside the source.
            let i0 = (start / to64).min(from64 - taps as u64);
            first.push(i0 as usize);
            let mut total = 0u32;
            let (mut largest, mut largest_weight) = (0usize, 0u32);
            for (k, slot) in row.iter_mut().enumerate() {
                let i = i0 + k as u64;
                let lo = (i * to64).max(start);
                let hi = ((i + 1) * to64).min(end);
                if hi <= lo {
                    continue;
                }
                let weight = ((hi - lo) * u64::from(one) / from64) as u32;
                *slot = weight;
                total += weight;
                if weight > largest_weight {
                    (largest, largest_weight) = (k, weight);
                }
            }
            // Truncation leaves the sum a little short of one: give the rest to the largest share.
            row[largest] += one - total;
        }
        Taps {
            first,
            weights,
            taps,
        }
    }

    fn of(&self, o: usize) -> (usize, &[u32]) {
        (
            self.first[o],
            &self.weights[o * self.taps..(o + 1) * self.taps],
        )
    }
}

/// Rows of 8-bit values to rows of 16-bit values with 8 bits below the point (value * 256), each
/// output row a weighted sum of a few source rows. With weights in 1/256ths the sums fit 16 bits,
/// so the inner loop is a plain 16-bit multiply-add over whole rows that the compiler vectorises
/// (8 or 16 lanes).
fn shrink_rows(source: &[u8], stride: usize, rows: &Taps, from_row: usize, out: &mut [u16]) {
    for (o, out_row) in out.chunks_exact_mut(stride).enumerate() {
        let (first, weights) = rows.of(from_row + o);
        for (k, &w) in weights.iter().enumerate() {
            let start = (first + k) * stride;
            let w = w as u16;
            let source = &source[start..start + stride];
            if k == 0 {
                for (t, &v) in out_row.iter_mut().zip(source) {
                    *t = w * u16::from(v);
                }
            } else {
                for (t, &v) in out_row.iter_mut().zip(source) {
                    *t += w * u16::from(v);
                }
            }
        }
    }
}

/// The same with 32-bit sums and 12-bit weights, for ratios with so many taps (more than 32) that
/// 1/256ths would round most weights away.
fn shrink_rows_wide(source: &[u8], stride: usize, rows: &Taps, out: &mut [u16]) {
    let mut sum = vec![0u32; stride];
    for (o, out_row) in out.chunks_exact_mut(stride).enumerate() {
        let (first, weights) = rows.of(o);
        sum.fill(0);
        for (k, &w) in weights.iter().enumerate() {
            let start = (first + k) * stride;
            for (s, &v) in sum.iter_mut().zip(&source[start..start + stride]) {
                *s += w * u32::from(v);
            }
        }
        for (t, &s) in out_row.iter_mut().zip(&sum) {
            *t = ((s + 8) >> 4) as u16;
        }
    }
}

/// Each output pixel of a row a weighted sum (12-bit weights) of `N` neighbouring pixels; `M` is
/// `3 * N` (the values of those pixels), fixed so the loop unrolls without bounds checks.
fn shrink_columns<const N: usize, const M: usize>(
    tall: &[u16],
    stride: usize,
    columns: &Taps,
    out: &mut [u8],
) {
    let width = columns.first.len() * 3;
    for (row, out_row) in tall.chunks_exact(stride).zip(out.chunks_exact_mut(width)) {
        let each = out_row
            .chunks_exact_mut(3)
            .zip(&columns.first)
            .zip(columns.weights.chunks_exact(N));
        for ((px, &first), weights) in each {
            let (Some(source), Ok(weights)) = (
                row.get(first * 3..first * 3 + M)
                    .and_then(|s| <&[u16; M]>::try_from(s).ok()),
                <&[u32; N]>::try_from(weights),
            ) else {
                continue;
            };
            let mut acc = [1u32 << 19; 3];
            for k in 0..N {
                acc[0] += weights[k] * u32::from(source[3 * k]);
                acc[1] += weights[k] * u32::from(source[3 * k + 1]);
                acc[2] += weights[k] * u32::from(source[3 * k + 2]);
            }
            // At most (4096 * 65280 + 2^19) >> 20 = 255: the weights sum to exactly one.
            px[0] = (acc[0] >> 20) as u8;
            px[1] = (acc[1] >> 20) as u8;
            px[2] = (acc[2] >> 20) as u8;
        }
    }
}

/// [`shrink_columns`] for any number of taps.
fn shrink_columns_any(tall: &[u16], stride: usize, columns: &Taps, out: &mut [u8]) {
    let width = columns.first.len() * 3;
    for (row, out_row) in tall.chunks_exact(stride).zip(out.chunks_exact_mut(width)) {
        for (o, px) in out_row.chunks_exact_mut(3).enumerate() {
            let (first, weights) = columns.of(o);
            let mut acc = [1u32 << 19; 3];
            for (source, &w) in row[first * 3..].chunks_exact(3).zip(weights) {
                for c in 0..3 {
                    acc[c] += w * u32::from(source[c]);
                }
            }
            for c in 0..3 {
                px[c] = (acc[c] >> 20).min(255) as u8;
            }
        }
    }
}

impl Frame {
    /// This frame scaled to `width` x `height` by area averaging (each output pixel is the mean of the
    /// source pixels it covers, weighted by how much of each it covers). Meant for downscaling;
    /// upscaling works but only repeats pixels.
    ///
    /// Two passes in fixed point: rows first (whole source rows weighted and summed in 16 bits,
    /// vectorised), giving values with 8 bits below the point; then columns, on the already fewer
    /// rows. 2560x1600 to 1356x848 takes 6-9 ms on a 2-vCPU EPYC VM (`cargo bench --bench
    /// desktop_capture`).
    pub fn resize(&self, width: u32, height: u32) -> Frame {
        if (width, height) == (self.width, self.height) {
            return self.clone();
        }
        if width == 0 || height == 0 || self.width == 0 || self.height == 0 {
            return Frame {
                width,
                height,
                rgb: vec![0; width as usize * height as usize * 3],
            };
        }
        let stride = self.width as usize * 3;
        let (dw, dh) = (width as usize, height as usize);
        let narrow_rows = self.height.div_ceil(height) < 32;
        let rows = Taps::new(self.height, height, if narrow_rows { 8 } else { 12 });
        // Both passes work on independent rows: on a large image, each is split between two
        // threads (a thread costs tens of microseconds, a pass milliseconds).
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
        let split = if threads > 1 && dh >= 256 { dh / 2 } else { dh };
        let mut tall = vec![0u16; dh * stride];
        if narrow_rows {
            let (top, bottom) = tall.split_at_mut(split * stride);
            std::thread::scope(|scope| {
                if !bottom.is_empty() {
                    scope.spawn(|| shrink_rows(&self.rgb, stride, &rows, split, bottom));
                }
                shrink_rows(&self.rgb, stride, &rows, 0, top);
            });
        } else {
            shrink_rows_wide(&self.rgb, stride, &rows, &mut tall);
        }
        let columns = Taps::new(self.width, width, 12);
        let mut rgb = vec![0u8; dw * dh * 3];
        let band = |tall: &[u16], out: &mut [u8]| match columns.taps {
            2 => shrink_columns::<2, 6>(tall, stride, &columns, out),
            3 => shrink_columns::<3, 9>(tall, stride, &columns, out),
            4 => shrink_columns::<4, 12>(tall, stride, &columns, out),
            5 => shrink_columns::<5, 15>(tall, stride, &columns, out),
            6 => shrink_columns::<6, 18>(tall, stride, &columns, out),
            _ => shrink_columns_any(tall, stride, &columns, out),
        };
        let (tall_top, tall_bottom) = tall.split_at(split * stride);
        let (out_top, out_bottom) = rgb.split_at_mut(split * dw * 3);
        std::thread::scope(|scope| {
            if !out_bottom.is_empty() {
                scope.spawn(|| band(tall_bottom, out_bottom));
            }
            band(tall_top, out_top);
        });
        Frame { width, height, rgb }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_keeps_small_screens_and_the_aspect_of_large_ones() {
        let (l, p) = (DEFAULT_MAX_LONG_EDGE, DEFAULT_MAX_PIXELS);
        assert_eq!(fit(1024, 768, l, p), (1024, 768));
        assert_eq!(fit(1280, 800, l, p), (1280, 800));
        // 1920x1080 = 2.07 MP: the area limit binds.
        let (w, h) = fit(1920, 1080, l, p);
        assert!(u64::from(w) * u64::from(h) <= p && w <= l);
        assert!(
            u64::from(w) * u64::from(h) > p - 3 * u64::from(w),
            "{w}x{h} is needlessly small"
        );
        assert!(
            (f64::from(w) / f64::from(h) - 16.0 / 9.0).abs() < 0.01,
            "{w}x{h}"
        );
        let (w, h) = fit(2560, 1600, l, p);
        assert_eq!((w, h), (1356, 848));
        // A tall, thin screen: the long-edge limit binds.
        let (w, h) = fit(800, 4000, l, p);
        assert_eq!((w, h), (314, 1568));
        // Portrait keeps orientation.
        let (w, h) = fit(1600, 2560, l, p);
        assert_eq!((w, h), (848, 1356));
        // Never upscale, never zero.
        assert_eq!(fit(10, 10, 1568, 1_150_000), (10, 10));
        assert_eq!(fit(10_000, 1, 100, 0), (100, 1));
        assert_eq!(fit(640, 480, 0, 0), (640, 480));
    }

    /// Patches of `side` pixels an image of `w` x `h` costs, a partial patch counting whole.
    fn patches((w, h): (u32, u32), side: u32) -> u64 {
        u64::from(w.div_ceil(side)) * u64::from(h.div_ceil(side))
    }

    #[test]
    fn presets_stay_within_their_vendors_budgets() {
        // (preset, patch side, most patches, longest edge the vendor takes unscaled)
        for (name, side, budget, edge) in [
            ("anthropic", 28, 1568, 1568),
            ("anthropic-hires", 28, 4784, 2576),
            ("xga", 28, 1568, 1568),
            ("wxga", 28, 1568, 1568),
            ("openai", 32, 2500, 2048),
            ("openai-original", 32, 10_000, 6000),
        ] {
            let f = preset(name).expect(name);
            // Screens just past the long edge with every height: every aspect ratio, finely.
            let mut worst = (0, (0, 0));
            for w in (f.max_long_edge..f.max_long_edge + 300).step_by(7) {
                for h in (64..=w).step_by(3) {
                    for screen in [(w, h), (h, w)] {
                        let image = fit(screen.0, screen.1, f.max_long_edge, f.max_pixels);
                        assert!(
                            image.0.max(image.1) <= edge,
                            "{name}: {screen:?} -> {image:?}"
                        );
                        worst = worst.max((patches(image, side), image));
                    }
                }
            }
            assert!(worst.0 <= budget, "{name}: {worst:?} over {budget}");
        }
        for (screen, name, image) in [
            ((3840, 2160), "anthropic-hires", (2529, 1423)),
            ((1920, 1080), "wxga", (1280, 720)),
            ((2560, 1600), "xga", (1024, 640)),
            ((2880, 1800), "openai", (1517, 948)),
            ((3840, 2160), "openai-original", (3840, 2160)),
        ] {
            let f = preset(name).expect(name);
            assert_eq!(
                fit(screen.0, screen.1, f.max_long_edge, f.max_pixels),
                image,
                "{name}"
            );
        }
    }

    #[test]
    fn presets_are_found_by_name_and_the_default_is_anthropics() {
        assert_eq!(
            preset("anthropic"),
            Some(Fit {
                max_long_edge: DEFAULT_MAX_LONG_EDGE,
                max_pixels: DEFAULT_MAX_PIXELS
            })
        );
        assert_eq!(preset("Anthropic"), None);
        assert_eq!(preset("nope"), None);
        let mut names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        names.dedup();
        assert_eq!(names.len(), PRESETS.len());
    }

    #[test]
    fn fit_stays_within_both_limits_for_many_sizes() {
        for w in (64..=8192).step_by(97) {
            for h in (64..=8192).step_by(131) {
                let (iw, ih) = fit(w, h, 1568, 1_150_000);
                assert!(
                    iw >= 1 && ih >= 1 && iw <= w && ih <= h,
                    "{w}x{h} -> {iw}x{ih}"
                );
                assert!(iw.max(ih) <= 1568, "{w}x{h} -> {iw}x{ih}");
                assert!(
                    u64::from(iw) * u64::from(ih) <= 1_150_000,
                    "{w}x{h} -> {iw}x{ih}"
                );
            }
        }
    }

    #[test]
    fn image_to_screen_to_image_is_the_same_pixel() {
        for (screen, image) in [
            ((2560, 1600), (1356, 848)),
            ((1920, 1080), (1429, 804)),
            ((1280, 800), (1280, 800)),
            ((1001, 999), (333, 777)),
            ((7, 5), (3, 2)),
        ] {
            let scale = Scale { screen, image };
            for x in 0..image.0 {
                let (sx, _) = scale.to_screen(x, 0);
                assert!(sx < screen.0);
                assert_eq!(scale.to_image(sx, 0).0, x, "{screen:?}/{image:?} x={x}");
            }
            for y in 0..image.1 {
                let (_, sy) = scale.to_screen(0, y);
                assert!(sy < screen.1);
                assert_eq!(scale.to_image(0, sy).1, y, "{screen:?}/{image:?} y={y}");
            }
        }
    }

    #[test]
    fn coordinates_map_to_pixel_centres_and_edges_stay_inside() {
        let scale = Scale {
            screen: (2560, 1600),
            image: (1280, 800),
        };
        // Image pixel 0 covers screen pixels 0-1; its centre is at screen 1.0: pixel 1.
        assert_eq!(scale.to_screen(0, 0), (1, 1));
        assert_eq!(scale.to_screen(1279, 799), (2559, 1599));
        assert_eq!(scale.to_screen(5000, 5000), (2559, 1599));
        assert_eq!(scale.to_image(2559, 1599), (1279, 799));
        assert_eq!(scale.to_image(0, 0), (0, 0));
        assert_eq!(scale.to_image(1, 1), (0, 0));
        assert_eq!(scale.to_image(2, 2), (1, 1));
        let same = Scale::identity((1280, 800));
        assert!(same.is_identity());
        assert_eq!(same.to_screen(17, 42), (17, 42));
        assert_eq!(same.to_image(17, 42), (17, 42));
        assert!(!same.contains_image_point(1280, 0));
        assert_eq!(
            Scale::fit((2560, 1600), 1568, 1_150_000).image,
            fit(2560, 1600, 1568, 1_150_000)
        );
    }

    fn frame(width: u32, height: u32, f: impl Fn(u32, u32) -> [u8; 3]) -> Frame {
        let mut rgb = Vec::new();
        for y in 0..height {
            for x in 0..width {
                rgb.extend_from_slice(&f(x, y));
            }
        }
        Frame { width, height, rgb }
    }

    #[test]
    fn resize_averages_the_covered_area() {
        // 2x2 blocks of one colour each become one pixel of that colour.
        let blocks = frame(4, 2, |x, _| if x < 2 { [255, 0, 10] } else { [0, 255, 20] });
        let half = blocks.resize(2, 1);
        assert_eq!(half.rgb, vec![255, 0, 10, 0, 255, 20]);
        // A one-pixel black line on white, shrunk 3:1 on both axes, is a third as dark.
        let line = frame(9, 9, |x, _| if x == 4 { [0, 0, 0] } else { [255; 3] });
        let small = line.resize(3, 3);
        assert_eq!(small.pixel(1, 1), Some([170, 170, 170]));
        assert_eq!(small.pixel(0, 1), Some([255, 255, 255]));
        // A flat colour stays exactly that colour at any ratio.
        let flat = frame(2560, 16, |_, _| [37, 200, 255]);
        let shrunk = flat.resize(1356, 9);
        assert!(shrunk.rgb.chunks_exact(3).all(|p| p == [37, 200, 255]));
        // Same size is a copy; upscaling repeats pixels.
        assert_eq!(line.resize(9, 9), line);
        let up = blocks.resize(8, 4);
        assert_eq!(up.pixel(0, 0), Some([255, 0, 10]));
        assert_eq!(up.pixel(7, 3), Some([0, 255, 20]));
    }

    #[test]
    fn resize_keeps_total_brightness_at_uneven_ratios() {
        let noise = frame(97, 61, |x, y| {
            let v = ((x * 31 + y * 17) % 256) as u8;
            [v, 255 - v, v / 2]
        });
        let small = noise.resize(40, 25);
        let mean = |f: &Frame| -> f64 {
            f.rgb.iter().map(|v| f64::from(*v)).sum::<f64>() / f.rgb.len() as f64
        };
        assert!((mean(&noise) - mean(&small)).abs() < 1.0);
    }

    /// Area averaging done the slow, obvious way, in floating point.
    fn reference(source: &Frame, width: u32, height: u32) -> Frame {
        let (sx, sy) = (
            f64::from(source.width) / f64::from(width),
            f64::from(source.height) / f64::from(height),
        );
        let overlap = |o: u32, i: u32, s: f64| -> f64 {
            let (lo, hi) = (f64::from(o) * s, f64::from(o + 1) * s);
            (hi.min(f64::from(i + 1)) - lo.max(f64::from(i))).max(0.0)
        };
        frame(width, height, |x, y| {
            let mut acc = [0.0f64; 3];
            let y0 = (f64::from(y) * sy).floor() as u32;
            let y1 = ((f64::from(y + 1) * sy).ceil() as u32).min(source.height);
            let x0 = (f64::from(x) * sx).floor() as u32;
            let x1 = ((f64::from(x + 1) * sx).ceil() as u32).min(source.width);
            for j in y0..y1 {
                for i in x0..x1 {
                    let w = overlap(y, j, sy) * overlap(x, i, sx) / (sx * sy);
                    let px = source.pixel(i, j).unwrap_or_default();
                    for c in 0..3 {
                        acc[c] += w * f64::from(px[c]);
                    }
                }
            }
            acc.map(|v| v.round().clamp(0.0, 255.0) as u8)
        })
    }

    fn noise(width: u32, height: u32) -> Frame {
        frame(width, height, |x, y| {
            let v = x.wrapping_mul(2_654_435_761) ^ y.wrapping_mul(40_503) ^ (x * y);
            [(v >> 3) as u8, (v >> 11) as u8, (v >> 19) as u8]
        })
    }

    #[test]
    fn resize_matches_exact_area_averaging_within_two_levels() {
        // Row weights are in 1/256ths (so the row pass runs in 16 bits): up to 2 levels off.
        // Large enough for the two-thread split; then a ratio too steep for 16-bit row sums.
        for (source, (w, h)) in [
            (noise(1031, 613), (517, 301)),
            (noise(2560, 40), (1356, 21)),
            (noise(90, 4000), (45, 100)),
        ] {
            let ours = source.resize(w, h);
            let exact = reference(&source, w, h);
            let worst = ours
                .rgb
                .iter()
                .zip(&exact.rgb)
                .map(|(a, b)| a.abs_diff(*b))
                .max();
            assert!(worst <= Some(2), "{w}x{h}: off by {worst:?}");
        }
    }
}
