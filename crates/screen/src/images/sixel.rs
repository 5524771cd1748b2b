//! A sixel decoder that draws as the bytes stream in (DCS P1;P2;P3 q ... ST).
//!
//! Raster attributes (`"Pan;Pad;Ph;Pv`) declare the size: one past [`MAX_IMAGE_PIXELS`] is refused
//! before anything is allocated; without them the picture grows as it is drawn, up to the same limit.
//! Colour registers (`#Pc;Pu;Px;Py;Pz`, HLS or RGB in percent), repeats (`!Pn`), `$` (back to the
//! left) and `-` (down six pixels) are followed.

use super::bitmap::{Bitmap, MAX_IMAGE_PIXELS};
use super::decode::{check_size, Refusal};

/// The most colour registers.
const REGISTERS: usize = 1024;

/// The VT340's first 16 colours (RGB percent), which registers start as.
const VT340: [[u8; 3]; 16] = [
    [0, 0, 0],
    [20, 20, 80],
    [80, 13, 13],
    [20, 80, 20],
    [80, 20, 80],
    [20, 80, 80],
    [80, 80, 20],
    [53, 53, 53],
    [26, 26, 26],
    [33, 33, 60],
    [60, 26, 26],
    [33, 60, 33],
    [60, 33, 60],
    [33, 60, 60],
    [60, 60, 33],
    [80, 80, 80],
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    /// Sixel data and the one-byte commands.
    Data,
    /// `!`: the repeat count being read.
    Repeat,
    /// `#`: a colour's parameters.
    Colour,
    /// `"`: raster attributes.
    Raster,
}

#[derive(Debug)]
pub(crate) struct SixelDecoder {
    command: Command,
    params: Vec<u32>,
    palette: Vec<[u8; 4]>,
    colour: usize,
    x: u32,
    y: u32,
    repeat: u32,
    /// Size allocated, and the extent drawn.
    width: u32,
    height: u32,
    drawn: (u32, u32),
    pixels: Vec<u8>,
    refused: Option<Refusal>,
}

impl SixelDecoder {
    /// A decoder for the DCS parameters `params` (P1;P2;P3, which only choose aspect and background;
    /// pixels left undrawn stay transparent either way).
    pub(crate) fn new(_params: &[u8]) -> SixelDecoder {
        let mut palette = vec![[0, 0, 0, 255]; REGISTERS];
        for (slot, rgb) in palette.iter_mut().zip(VT340) {
            *slot = [percent(rgb[0]), percent(rgb[1]), percent(rgb[2]), 255];
        }
        SixelDecoder {
            command: Command::Data,
            params: Vec::new(),
            palette,
            colour: 0,
            x: 0,
            y: 0,
            repeat: 1,
            width: 0,
            height: 0,
            drawn: (0, 0),
            pixels: Vec::new(),
            refused: None,
        }
    }

    pub(crate) fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.refused.is_some() {
                return;
            }
            if matches!(
                self.command,
                Command::Repeat | Command::Colour | Command::Raster
            ) {
                match b {
                    b'0'..=b'9' => {
                        let last = self.params.last_mut().expect("a parameter is open");
                        *last = last.saturating_mul(10).saturating_add(u32::from(b - b'0'));
                        continue;
                    }
                    b';' if self.params.len() < 8 => {
                        self.params.push(0);
                        continue;
                    }
                    b';' => continue,
                    _ => self.end_command(),
                }
            }
            match b {
                b'?'..=b'~' => {
                    let repeat = std::mem::replace(&mut self.repeat, 1);
                    self.sixel(b - b'?', repeat);
                }
                b'!' => self.open(Command::Repeat),
                b'#' => self.open(Command::Colour),
                b'"' => self.open(Command::Raster),
                b'$' => self.x = 0,
                b'-' => {
                    self.x = 0;
                    self.y = self.y.saturating_add(6);
                }
                _ => {}
            }
        }
    }

    fn open(&mut self, command: Command) {
        self.command = command;
        self.params.clear();
        self.params.push(0);
    }

    fn end_command(&mut self) {
        let p = std::mem::take(&mut self.params);
        match self.command {
            Command::Repeat => self.repeat = p[0].max(1),
            Command::Colour => {
                let index = p[0] as usize % REGISTERS;
                self.colour = index;
                if p.len() >= 5 {
                    let (x, y, z) = (p[2].min(360), p[3].min(100), p[4].min(100));
                    self.palette[index] = match p[1] {
                        1 => hls(x, y, z),
                        _ => [percent(x as u8), percent(y as u8), percent(z as u8), 255],
                    };
                }
            }
            Command::Raster => {
                if let [_, _, w, h, ..] = p[..] {
                    if w > 0 && h > 0 {
                        if let Err(why) = check_size(u64::from(w), u64::from(h)) {
                            self.refused = Some(why);
                        } else {
                            self.grow(w, h);
                        }
                    }
                }
            }
            Command::Data => {}
        }
        self.command = Command::Data;
    }

    /// Make the canvas at least `w` x `h`, growing by half again at a time.
    fn grow(&mut self, w: u32, h: u32) {
        if w <= self.width && h <= self.height {
            return;
        }
        let new_w = w.max(self.width);
        let new_h = h.max(self.height);
        if u64::from(new_w) * u64::from(new_h) > MAX_IMAGE_PIXELS {
            self.refused = Some(format!(
                "drawn past {new_w}x{new_h} px, over the {} M px limit",
                MAX_IMAGE_PIXELS >> 20
            ));
            return;
        }
        let grown_w = if new_w > self.width {
            new_w.max(self.width + self.width / 2)
        } else {
            self.width
        };
        let grown_h = if new_h > self.height {
            new_h.max(self.height + self.height / 2)
        } else {
            self.height
        };
        let (grown_w, grown_h) = if u64::from(grown_w) * u64::from(grown_h) > MAX_IMAGE_PIXELS {
            (new_w, new_h)
        } else {
            (grown_w, grown_h)
        };
        let mut pixels = vec![0u8; grown_w as usize * grown_h as usize * 4];
        let old_stride = self.width as usize * 4;
        for row in 0..self.height as usize {
            let from = &self.pixels[row * old_stride..(row + 1) * old_stride];
            let at = row * grown_w as usize * 4;
            pixels[at..at + old_stride].copy_from_slice(from);
        }
        self.pixels = pixels;
        self.width = grown_w;
        self.height = grown_h;
    }

    fn sixel(&mut self, bits: u8, repeat: u32) {
        let repeat = repeat.min(MAX_IMAGE_PIXELS as u32);
        let right = self.x.saturating_add(repeat);
        if bits != 0 {
            let bottom = self
                .y
                .saturating_add(6 - bits.leading_zeros().saturating_sub(2));
            self.grow(right, bottom);
            if self.refused.is_some() {
                return;
            }
            let colour = self.palette[self.colour];
            let stride = self.width as usize * 4;
            for bit in 0..6 {
                if bits & (1 << bit) == 0 {
                    continue;
                }
                let row = (self.y + bit) as usize;
                let start = row * stride + self.x as usize * 4;
                for px in self.pixels[start..start + repeat as usize * 4].chunks_exact_mut(4) {
                    px.copy_from_slice(&colour);
                }
                self.drawn.1 = self.drawn.1.max(self.y + bit + 1);
            }
            self.drawn.0 = self.drawn.0.max(right);
        }
        self.x = right;
    }

    pub(crate) fn finish(mut self) -> Result<Bitmap, Refusal> {
        if self.command != Command::Data {
            self.end_command();
        }
        if let Some(why) = self.refused {
            return Err(format!("sixel {why}"));
        }
        // The declared size, or what was drawn past it.
        let (w, h) = (self.width.max(self.drawn.0), self.height.max(self.drawn.1));
        let (w, h) = if self.pixels.is_empty() {
            (0, 0)
        } else {
            (w, h)
        };
        if w == 0 || h == 0 {
            return Err("sixel picture is empty".to_owned());
        }
        // Trim the growth slack: the extent is the larger of declared and drawn, within the canvas.
        let (w, h) = (w.min(self.width), h.min(self.height));
        let mut rgba = Vec::with_capacity(w as usize * h as usize * 4);
        for row in 0..h as usize {
            let at = row * self.width as usize * 4;
            rgba.extend_from_slice(&self.pixels[at..at + w as usize * 4]);
        }
        Ok(Bitmap {
            width: w,
            height: h,
            rgba,
        })
    }
}

fn percent(p: u8) -> u8 {
    ((u32::from(p.min(100)) * 255 + 50) / 100) as u8
}

/// A sixel HLS colour (hue 0-360 with blue at 0, lightness and saturation in percent) as RGBA.
fn hls(h: u32, l: u32, s: u32) -> [u8; 4] {
    let (l, s) = (l as f32 / 100.0, s as f32 / 100.0);
    // Sixel hue puts blue at 0 degrees, red at 120 and green at 240: turn it into the usual wheel.
    let h = ((h + 240) % 360) as f32 / 360.0;
    let q = if l < 0.5 {
        l * (1.0 + s)
    } else {
        l + s - l * s
    };
    let p = 2.0 * l - q;
    let channel = |t: f32| {
        let t = t.rem_euclid(1.0);
        let v = if t < 1.0 / 6.0 {
            p + (q - p) * 6.0 * t
        } else if t < 0.5 {
            q
        } else if t < 2.0 / 3.0 {
            p + (q - p) * (2.0 / 3.0 - t) * 6.0
        } else {
            p
        };
        (v * 255.0).round().clamp(0.0, 255.0) as u8
    };
    [
        channel(h + 1.0 / 3.0),
        channel(h),
        channel(h - 1.0 / 3.0),
        255,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(data: &[u8]) -> Result<Bitmap, Refusal> {
        let mut decoder = SixelDecoder::new(b"0;1;0");
        for piece in data.chunks(5) {
            decoder.feed(piece);
        }
        decoder.finish()
    }

    fn pixel(b: &Bitmap, x: u32, y: u32) -> [u8; 4] {
        let at = (y * b.width + x) as usize * 4;
        b.rgba[at..at + 4].try_into().unwrap()
    }

    #[test]
    fn repeats_colours_and_bands_are_drawn() {
        // 8x12: red left half, green right half in the first band; blue in the second.
        let b = decode(b"\"1;1;8;12#1;2;100;0;0#2;2;0;100;0#3;2;0;0;100#1!4~#2!4~-#3!8~").unwrap();
        assert_eq!((b.width, b.height), (8, 12));
        assert_eq!(pixel(&b, 0, 0), [255, 0, 0, 255]);
        assert_eq!(pixel(&b, 7, 5), [0, 255, 0, 255]);
        assert_eq!(pixel(&b, 3, 11), [0, 0, 255, 255]);
    }

    #[test]
    fn dollar_goes_back_to_the_left_and_draws_over() {
        let b = decode(b"#1;2;100;0;0!4@$#2;2;0;100;0A").unwrap();
        assert_eq!((b.width, b.height), (4, 2));
        assert_eq!(pixel(&b, 0, 0), [255, 0, 0, 255]);
        assert_eq!(pixel(&b, 0, 1), [0, 255, 0, 255]);
        assert_eq!(pixel(&b, 1, 1), [0, 0, 0, 0]);
    }

    #[test]
    fn hls_colours_follow_the_sixel_wheel() {
        assert_eq!(hls(120, 50, 100), [255, 0, 0, 255]);
        assert_eq!(hls(240, 50, 100), [0, 255, 0, 255]);
        assert_eq!(hls(0, 50, 100), [0, 0, 255, 255]);
    }

    #[test]
    fn a_sixel_bomb_is_refused_without_allocating() {
        let err = decode(b"\"1;1;100000;100000#0!100000~").unwrap_err();
        assert!(
            err.contains("declared 100000x100000 px over the 16 M px limit"),
            "{err}"
        );
        // A picture that grows past the limit as it is drawn stops there.
        let mut data = Vec::new();
        for _ in 0..200 {
            data.extend_from_slice(b"!20000@-");
        }
        let err = decode(&data).unwrap_err();
        assert!(err.contains("over the 16 M px limit"), "{err}");
    }
}
