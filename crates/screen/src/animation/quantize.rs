//! At most 256 colours for one GIF frame, chosen from the frame's own pixels.
//!
//! A terminal frame is a few flat colours (backgrounds, glyph ink) and the anti-aliased edges between
//! them, which can be hundreds of shades. The flat colours must stay exact (a background off by one
//! shade would show as a seam against the previous frame's pixels, which a frame of differences
//! leaves in place), and a rare colour far from the others (a red error among grey text) must not be
//! lost; but an edge needs far fewer shades than it has, and every shade spared makes the frame
//! smaller (LZW packs runs of few indices better). Colours are picked one at a time by how many
//! pixels they have times how far they are from every colour already picked, so the most common
//! comes first, then the rare but distinct, and the many shades of one edge last; picking stops once
//! every colour is near enough to a pick: almost exact ([`FLAT_TOLERANCE`]) for a colour covering
//! 1/200 of the pixels or more, within [`EDGE_TOLERANCE`] for the others. Every colour is drawn in
//! its nearest pick.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// How far a common colour may be drawn from its own, in levels of each channel: a flat colour stays
/// as it is.
pub(crate) const FLAT_TOLERANCE: u32 = 2;
/// How far a rare colour (an anti-aliased edge's shade, mostly) may be drawn from its own. Measured
/// on a 60-second vim recording (BENCHMARKS.md): the GIF is 29% smaller than with every colour kept
/// that fits, with no difference to be seen at 4x.
pub(crate) const EDGE_TOLERANCE: u32 = 16;

/// A colour as 0xRRGGBB.
pub(crate) type Packed = u32;

pub(crate) fn pack(rgb: &[u8]) -> Packed {
    (u32::from(rgb[0]) << 16) | (u32::from(rgb[1]) << 8) | u32::from(rgb[2])
}

/// The chosen colours and where every colour of the frame is drawn.
pub(crate) struct Palette {
    /// `r, g, b` for each entry, in index order.
    pub rgb: Vec<u8>,
    index: HashMap<Packed, u8, BuildHasherDefault<ColourHasher>>,
}

impl Palette {
    /// At most `max` (1 to 256) colours for `pixels`.
    pub fn new(pixels: impl Iterator<Item = Packed>, max: usize) -> Palette {
        let max = max.clamp(1, 256);
        let mut counts: HashMap<Packed, u32, BuildHasherDefault<ColourHasher>> = HashMap::default();
        // Runs of one colour are the rule: count a run with one lookup.
        let mut run: Option<(Packed, u32)> = None;
        for colour in pixels {
            match &mut run {
                Some((c, n)) if *c == colour => *n += 1,
                _ => {
                    if let Some((c, n)) = run {
                        *counts.entry(c).or_default() += n;
                    }
                    run = Some((colour, 1));
                }
            }
        }
        if let Some((c, n)) = run {
            *counts.entry(c).or_default() += n;
        }
        let mut colours: Vec<(Packed, u32)> = counts.into_iter().collect();
        // The most common first; equal counts in colour order, so the output never depends on
        // the hash map's order.
        colours.sort_unstable_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let nearest = pick(&colours, max);
        let mut entries: Vec<usize> = nearest.clone();
        entries.sort_unstable();
        entries.dedup();
        let slot: HashMap<usize, u8> = entries
            .iter()
            .enumerate()
            .map(|(slot, &at)| (at, slot as u8))
            .collect();
        let rgb = entries
            .iter()
            .flat_map(|&at| {
                let c = colours[at].0;
                [(c >> 16) as u8, (c >> 8) as u8, c as u8]
            })
            .collect();
        let index = colours
            .iter()
            .zip(&nearest)
            .map(|(&(colour, _), at)| (colour, slot[at]))
            .collect();
        Palette { rgb, index }
    }

    /// How many entries the palette has.
    pub fn len(&self) -> usize {
        self.rgb.len() / 3
    }

    /// The entry `colour` is drawn with. Colours that were not among the pixels get entry 0.
    pub fn index(&self, colour: Packed) -> u8 {
        self.index.get(&colour).copied().unwrap_or(0)
    }
}

/// Pick at most `max` of `colours` (sorted, most common first), until every colour is near enough
/// to a pick; returns, for each colour, the position in `colours` of the pick it is drawn with.
fn pick(colours: &[(Packed, u32)], max: usize) -> Vec<usize> {
    let total: u64 = colours.iter().map(|&(_, count)| u64::from(count)).sum();
    let within = |levels: u32| 9 * levels * levels;
    let tolerance: Vec<u32> = colours
        .iter()
        .map(|&(_, count)| {
            if u64::from(count) * 200 >= total {
                within(FLAT_TOLERANCE)
            } else {
                within(EDGE_TOLERANCE)
            }
        })
        .collect();
    let mut nearest = vec![0usize; colours.len()];
    let mut distance: Vec<u32> = colours
        .iter()
        .map(|&(c, _)| difference(c, colours[0].0))
        .collect();
    for _ in 1..max {
        let (best, score) = (0..colours.len())
            .filter(|&i| distance[i] > tolerance[i])
            .map(|i| (i, u64::from(colours[i].1) * u64::from(distance[i])))
            .fold(
                (0, 0),
                |best, this| if this.1 > best.1 { this } else { best },
            );
        if score == 0 {
            break;
        }
        for (i, &(c, _)) in colours.iter().enumerate() {
            let d = difference(c, colours[best].0);
            if d < distance[i] {
                distance[i] = d;
                nearest[i] = best;
            }
        }
    }
    nearest
}

/// How different two colours look, roughly: squared differences weighted as the eye weighs red,
/// green and blue.
fn difference(a: Packed, b: Packed) -> u32 {
    let channel = |shift: u32| {
        let d = ((a >> shift) & 0xff) as i32 - ((b >> shift) & 0xff) as i32;
        (d * d) as u32
    };
    2 * channel(16) + 4 * channel(8) + 3 * channel(0)
}

/// Colours are already well spread 24-bit numbers: one multiplication mixes them enough.
#[derive(Default)]
struct ColourHasher(u64);

impl Hasher for ColourHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rgb_of(palette: &Palette, colour: Packed) -> Packed {
        pack(&palette.rgb[usize::from(palette.index(colour)) * 3..])
    }

    #[test]
    fn few_colours_stay_exact() {
        let pixels = [0x16161c, 0x16161c, 0xd8d8d8, 0x808080, 0x16161c];
        let palette = Palette::new(pixels.into_iter(), 255);
        assert_eq!(palette.len(), 3);
        for colour in pixels {
            assert_eq!(rgb_of(&palette, colour), colour);
        }
        assert_eq!(palette.index(0x16161c), 0, "the most common first");
    }

    #[test]
    fn a_common_colour_near_another_stays_and_a_rare_one_is_drawn_in_its_neighbour() {
        let background = 0x16161c;
        // A highlighted line's background (256-colour 235), a few levels lighter.
        let line = 0x262626;
        let rare = 0x19191f;
        let mut pixels = vec![background; 10_000];
        pixels.extend(std::iter::repeat_n(line, 2_000));
        pixels.extend(std::iter::repeat_n(rare, 3));
        let palette = Palette::new(pixels.into_iter(), 255);
        assert_eq!(palette.len(), 2);
        assert_eq!(rgb_of(&palette, line), line);
        assert_eq!(rgb_of(&palette, rare), background);
    }

    #[test]
    fn many_shades_keep_the_flat_colours_and_a_rare_distinct_one() {
        let background = 0x16161c;
        let ink = 0xd8d8d8;
        let red = 0xcd3131;
        let mut pixels = vec![background; 10_000];
        pixels.extend(std::iter::repeat_n(ink, 2_000));
        // 300 grey edge shades between them, each common enough to beat red on count alone.
        for shade in 0..300u32 {
            let v = 0x20 + shade * 0xb0 / 300;
            pixels.extend(std::iter::repeat_n((v << 16) | (v << 8) | v, 20));
        }
        pixels.extend(std::iter::repeat_n(red, 5));
        let palette = Palette::new(pixels.iter().copied(), 16);
        assert!(palette.len() <= 16);
        for exact in [background, ink, red] {
            assert_eq!(rgb_of(&palette, exact), exact, "{exact:06x}");
        }
        // A shade is drawn in a grey close to it.
        let shade = 0x787878;
        assert!(difference(rgb_of(&palette, shade), shade) <= 9 * 16 * 16);
    }

    #[test]
    fn the_choice_does_not_depend_on_the_order_colours_come_in() {
        let mut pixels: Vec<Packed> = (0..2000u32).map(|i| i * 7919 % 0xffffff).collect();
        let forward = Palette::new(pixels.iter().copied(), 64).rgb;
        pixels.reverse();
        assert_eq!(Palette::new(pixels.iter().copied(), 64).rgb, forward);
    }
}
