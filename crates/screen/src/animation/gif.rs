//! Frames to an animated GIF, kept small: each frame after the first holds only the rectangle that
//! changed, with the pixels in it that did not change left transparent (long runs of one index, which
//! LZW packs to almost nothing), and a palette of its own chosen from the pixels that did
//! ([`super::quantize`]).
//!
//! A GIF frame's delay is whole hundredths of a second. Each frame's start is rounded on the
//! animation's own clock, and its delay is the next start less its own, so rounding never adds up
//! over a long recording.

use std::borrow::Cow;
use std::io::Write;

use super::quantize::{pack, Palette};

/// Why a GIF could not be written.
#[derive(Debug, thiserror::Error)]
pub enum GifError {
    #[error("a GIF is at most 65535 pixels a side; this one would be {width}x{height}: use a smaller font_px")]
    TooLarge { width: u32, height: u32 },
    #[error("the frame has {got} bytes of RGB, not {width}x{height}x3")]
    FrameSize { width: u16, height: u16, got: usize },
    #[error("GIF encoding failed: {0}")]
    Encode(#[from] ::gif::EncodingError),
}

/// What was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GifSummary {
    /// Frames in the file.
    pub frames: usize,
    /// The animation's length, in hundredths of a second.
    pub duration_cs: u64,
}

/// Writes an animated GIF that loops, one frame at a time.
pub struct GifWriter<W: Write> {
    encoder: ::gif::Encoder<W>,
    width: u16,
    height: u16,
    /// The RGB pixels of the last frame written (before they were reduced to its palette): what the
    /// next frame is compared with.
    written: Option<Vec<u8>>,
    /// The last frame given and the hundredth it starts at, written once the next one says how long
    /// it lasts.
    held: Option<(Vec<u8>, u64)>,
    frames: usize,
}

impl<W: Write> GifWriter<W> {
    /// A GIF of `width` x `height` pixels, written to `out`.
    pub fn new(out: W, width: u32, height: u32) -> Result<GifWriter<W>, GifError> {
        let too_large = || GifError::TooLarge { width, height };
        let w = u16::try_from(width).map_err(|_| too_large())?;
        let h = u16::try_from(height).map_err(|_| too_large())?;
        let mut encoder = ::gif::Encoder::new(out, w, h, &[])?;
        encoder.set_repeat(::gif::Repeat::Infinite)?;
        Ok(GifWriter {
            encoder,
            width: w,
            height: h,
            written: None,
            held: None,
            frames: 0,
        })
    }

    /// Show `rgb` (8-bit RGB, rows top to bottom) from `at` seconds on. Times must not go back.
    /// A frame that looks like the one before it, or that the next one replaces within the same
    /// hundredth of a second, is never written.
    pub fn push(&mut self, rgb: Vec<u8>, at: f64) -> Result<(), GifError> {
        let expected = usize::from(self.width) * usize::from(self.height) * 3;
        if rgb.len() != expected {
            return Err(GifError::FrameSize {
                width: self.width,
                height: self.height,
                got: rgb.len(),
            });
        }
        let start = hundredths(at);
        match self.held.take() {
            Some((held, held_start)) if held == rgb => self.held = Some((held, held_start)),
            Some((_, held_start)) if start <= held_start => self.held = Some((rgb, held_start)),
            Some((held, held_start)) => {
                self.write(held, start - held_start)?;
                self.held = Some((rgb, start));
            }
            None => self.held = Some((rgb, start)),
        }
        Ok(())
    }

    /// End the animation at `end` seconds (the last frame lasts until then, and at least 2
    /// hundredths: browsers slow shorter delays down) and finish the file.
    pub fn finish(mut self, end: f64) -> Result<(W, GifSummary), GifError> {
        let mut duration_cs = 0;
        if let Some((held, start)) = self.held.take() {
            let delay = hundredths(end).saturating_sub(start).max(2);
            self.write(held, delay)?;
            duration_cs = start + delay;
        }
        let frames = self.frames;
        let out = self.encoder.into_inner()?;
        Ok((
            out,
            GifSummary {
                frames,
                duration_cs,
            },
        ))
    }

    /// Write one frame lasting `delay` hundredths: the whole image the first time, then only what
    /// changed.
    fn write(&mut self, rgb: Vec<u8>, mut delay: u64) -> Result<(), GifError> {
        let width = usize::from(self.width);
        let frame_delay = delay.min(u64::from(u16::MAX)) as u16;
        delay -= u64::from(frame_delay);
        let frame = match &self.written {
            None => {
                let palette = Palette::new(rgb.chunks_exact(3).map(pack), 256);
                let indices = map_pixels(&rgb, &palette);
                ::gif::Frame {
                    width: self.width,
                    height: self.height,
                    palette: Some(palette.rgb),
                    buffer: Cow::Owned(indices),
                    delay: frame_delay,
                    dispose: ::gif::DisposalMethod::Keep,
                    ..::gif::Frame::default()
                }
            }
            Some(before) => {
                let Some(rect) = changed_rect(before, &rgb, width) else {
                    // Nothing differs (the screen changed in what is not drawn, such as the title).
                    return self.extend_last(u64::from(frame_delay) + delay);
                };
                delta_frame(before, &rgb, width, rect, frame_delay)
            }
        };
        self.encoder.write_frame(&frame)?;
        self.frames += 1;
        self.written = Some(rgb);
        if delay > 0 {
            self.extend_last(delay)?;
        }
        Ok(())
    }

    /// Keep the picture as it is for `delay` more hundredths: a frame of one transparent pixel per
    /// 65535 of them (the longest delay one frame has).
    fn extend_last(&mut self, mut delay: u64) -> Result<(), GifError> {
        while delay > 0 {
            let this = delay.min(u64::from(u16::MAX)) as u16;
            delay -= u64::from(this);
            let frame = ::gif::Frame {
                width: 1,
                height: 1,
                palette: Some(vec![0, 0, 0, 0, 0, 0]),
                transparent: Some(0),
                buffer: Cow::Owned(vec![0]),
                delay: this,
                dispose: ::gif::DisposalMethod::Keep,
                ..::gif::Frame::default()
            };
            self.encoder.write_frame(&frame)?;
            self.frames += 1;
        }
        Ok(())
    }
}

/// Seconds to whole hundredths, rounded.
fn hundredths(seconds: f64) -> u64 {
    (seconds.max(0.0) * 100.0).round() as u64
}

/// A rectangle of pixels: left, top, width, height.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Rect {
    left: usize,
    top: usize,
    width: usize,
    height: usize,
}

/// The smallest rectangle holding every pixel that differs between two images `width` pixels wide.
fn changed_rect(before: &[u8], after: &[u8], width: usize) -> Option<Rect> {
    let stride = width * 3;
    let rows = || before.chunks_exact(stride).zip(after.chunks_exact(stride));
    let top = rows().position(|(a, b)| a != b)?;
    let bottom = rows().rposition(|(a, b)| a != b)?;
    let (mut left, mut right) = (width, 0);
    for (a, b) in rows().skip(top).take(bottom + 1 - top) {
        let differs = |x: &usize| a[x * 3..x * 3 + 3] != b[x * 3..x * 3 + 3];
        if let Some(first) = (0..left).find(differs) {
            left = first;
        }
        if let Some(last) = (right..width).rev().find(differs) {
            right = last;
        }
    }
    Some(Rect {
        left,
        top,
        width: right.max(left) + 1 - left,
        height: bottom + 1 - top,
    })
}

/// The frame drawing `rect` of `after` over `before`: pixels that did not change are transparent.
fn delta_frame(
    before: &[u8],
    after: &[u8],
    width: usize,
    rect: Rect,
    delay: u16,
) -> ::gif::Frame<'static> {
    let stride = width * 3;
    let pixels = || {
        (rect.top..rect.top + rect.height).flat_map(move |y| {
            let row = y * stride + rect.left * 3;
            (0..rect.width).map(move |x| {
                let at = row + x * 3;
                (&before[at..at + 3], &after[at..at + 3])
            })
        })
    };
    let changed = pixels().filter(|(a, b)| a != b).map(|(_, b)| pack(b));
    let palette = Palette::new(changed, 255);
    let transparent = palette.len() as u8;
    let indices = pixels()
        .map(|(a, b)| {
            if a == b {
                transparent
            } else {
                palette.index(pack(b))
            }
        })
        .collect();
    let mut colours = palette.rgb;
    colours.extend_from_slice(&[0, 0, 0]);
    ::gif::Frame {
        left: rect.left as u16,
        top: rect.top as u16,
        width: rect.width as u16,
        height: rect.height as u16,
        palette: Some(colours),
        transparent: Some(transparent),
        buffer: Cow::Owned(indices),
        delay,
        dispose: ::gif::DisposalMethod::Keep,
        ..::gif::Frame::default()
    }
}

/// Every pixel's palette entry, a run of one colour looked up once.
fn map_pixels(rgb: &[u8], palette: &Palette) -> Vec<u8> {
    let mut last: Option<(u32, u8)> = None;
    rgb.chunks_exact(3)
        .map(|px| {
            let colour = pack(px);
            match last {
                Some((c, i)) if c == colour => i,
                _ => {
                    let i = palette.index(colour);
                    last = Some((colour, i));
                    i
                }
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `w` x `h` image of one colour, with (x, y, colour) pixels set.
    fn image(w: usize, h: usize, fill: [u8; 3], dots: &[(usize, usize, [u8; 3])]) -> Vec<u8> {
        let mut rgb = fill.repeat(w * h);
        for &(x, y, c) in dots {
            rgb[(y * w + x) * 3..][..3].copy_from_slice(&c);
        }
        rgb
    }

    /// Decode a GIF to its frames as shown: (delay, full RGBA picture after the frame).
    fn decode(bytes: &[u8]) -> Vec<(u16, Vec<u8>)> {
        let mut options = ::gif::DecodeOptions::new();
        options.set_color_output(::gif::ColorOutput::RGBA);
        let mut decoder = options.read_info(bytes).expect("a GIF");
        let (w, h) = (decoder.width() as usize, decoder.height() as usize);
        let mut canvas = vec![0u8; w * h * 4];
        let mut frames = Vec::new();
        while let Some(frame) = decoder.read_next_frame().expect("a frame") {
            for y in 0..frame.height as usize {
                for x in 0..frame.width as usize {
                    let src = &frame.buffer[(y * frame.width as usize + x) * 4..][..4];
                    if src[3] > 0 {
                        let at = ((frame.top as usize + y) * w + frame.left as usize + x) * 4;
                        canvas[at..at + 4].copy_from_slice(src);
                    }
                }
            }
            frames.push((frame.delay, canvas.clone()));
        }
        frames
    }

    fn rgba(rgb: &[u8]) -> Vec<u8> {
        rgb.chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect()
    }

    #[test]
    fn frames_after_the_first_hold_only_the_changed_rectangle_and_show_the_same_picture() {
        let bg = [0x16, 0x16, 0x1c];
        let ink = [0xd8, 0xd8, 0xd8];
        let first = image(8, 6, bg, &[(1, 1, ink)]);
        let second = image(8, 6, bg, &[(1, 1, ink), (3, 2, ink), (5, 4, [200, 0, 0])]);
        let mut writer = GifWriter::new(Vec::new(), 8, 6).unwrap();
        writer.push(first.clone(), 0.0).unwrap();
        writer.push(second.clone(), 0.5).unwrap();
        let (bytes, summary) = writer.finish(2.0).unwrap();
        assert_eq!(
            summary,
            GifSummary {
                frames: 2,
                duration_cs: 200
            }
        );
        let frames = decode(&bytes);
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0], (50, rgba(&first)));
        assert_eq!(frames[1], (150, rgba(&second)));
        let mut decoder = ::gif::DecodeOptions::new().read_info(&bytes[..]).unwrap();
        decoder.read_next_frame().unwrap();
        let delta = decoder.read_next_frame().unwrap().unwrap();
        assert_eq!(
            (delta.left, delta.top, delta.width, delta.height),
            (3, 2, 3, 3)
        );
    }

    #[test]
    fn delays_are_rounded_on_one_clock_so_they_add_up() {
        let mut writer = GifWriter::new(Vec::new(), 2, 1).unwrap();
        // 30 frames a second: delays of 3.33 hundredths alternate 3, 3, 4 and sum to the time.
        for i in 0..30 {
            let shade = (i * 8) as u8;
            writer
                .push(image(2, 1, [shade, 0, 0], &[]), f64::from(i) / 30.0)
                .unwrap();
        }
        let (bytes, summary) = writer.finish(1.0).unwrap();
        let delays: Vec<u64> = decode(&bytes).iter().map(|f| u64::from(f.0)).collect();
        assert_eq!(delays.iter().sum::<u64>(), 100);
        assert!(delays.iter().all(|d| (3..=4).contains(d)), "{delays:?}");
        assert_eq!(summary.duration_cs, 100);
    }

    #[test]
    fn repeated_and_same_hundredth_frames_are_never_written() {
        let a = image(2, 2, [1, 2, 3], &[]);
        let b = image(2, 2, [9, 9, 9], &[]);
        let c = image(2, 2, [7, 7, 7], &[]);
        let mut writer = GifWriter::new(Vec::new(), 2, 2).unwrap();
        writer.push(a.clone(), 0.0).unwrap();
        writer.push(a.clone(), 0.3).unwrap();
        writer.push(b, 1.0).unwrap();
        writer.push(c.clone(), 1.001).unwrap();
        let (bytes, summary) = writer.finish(1.0).unwrap();
        let frames = decode(&bytes);
        assert_eq!(summary.frames, 2);
        assert_eq!(frames[0], (100, rgba(&a)));
        assert_eq!(frames[1], (2, rgba(&c)), "the last frame lasts 2 at least");
    }

    #[test]
    fn a_pause_longer_than_one_delay_holds_with_empty_frames() {
        let mut writer = GifWriter::new(Vec::new(), 1, 1).unwrap();
        writer.push(vec![0, 0, 0], 0.0).unwrap();
        writer.push(vec![255, 255, 255], 1000.0).unwrap();
        let (bytes, _) = writer.finish(1001.0).unwrap();
        let delays: Vec<u16> = decode(&bytes).iter().map(|f| f.0).collect();
        assert_eq!(delays, [65535, 34465, 100], "100000 hundredths, then 100");
    }

    #[test]
    fn wrong_sizes_are_refused() {
        assert!(matches!(
            GifWriter::new(Vec::new(), 70_000, 10),
            Err(GifError::TooLarge { .. })
        ));
        let mut writer = GifWriter::new(Vec::new(), 2, 2).unwrap();
        assert!(matches!(
            writer.push(vec![0; 5], 0.0),
            Err(GifError::FrameSize { got: 5, .. })
        ));
    }
}
