//! Turning transmitted bytes into pixels: base64 (as it streams), PNG, zlib, raw RGB(A), the
//! uncompressed TIFF that chafa sends as iTerm2 images, and the JPEG and GIF (first frame) that
//! imgcat sends. Every decoder checks the declared size against [`MAX_IMAGE_PIXELS`] before it
//! allocates.

use std::io::Cursor;

use super::bitmap::{Bitmap, MAX_IMAGE_PIXELS};

/// Why a picture was refused: the text of the note a snapshot shows.
pub(crate) type Refusal = String;

/// Refuse a declared size past the pixel limit (or an empty one).
pub(crate) fn check_size(width: u64, height: u64) -> Result<(), Refusal> {
    if width == 0 || height == 0 {
        return Err(format!("declared {width}x{height} px is empty"));
    }
    if width.saturating_mul(height) > MAX_IMAGE_PIXELS {
        return Err(format!(
            "declared {width}x{height} px over the {} M px limit",
            MAX_IMAGE_PIXELS >> 20
        ));
    }
    Ok(())
}

/// A base64 decoder fed a piece at a time; whitespace is skipped, `=` ends a group early.
#[derive(Debug, Default, Clone)]
pub(crate) struct Base64 {
    bits: u32,
    count: u8,
    /// A byte that is not base64 was seen.
    pub bad: bool,
}

impl Base64 {
    /// Decode `input` onto `out`.
    pub(crate) fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) {
        for &b in input {
            let value = match b {
                b'A'..=b'Z' => b - b'A',
                b'a'..=b'z' => b - b'a' + 26,
                b'0'..=b'9' => b - b'0' + 52,
                b'+' | b'-' => 62,
                b'/' | b'_' => 63,
                b'=' => {
                    self.flush(out);
                    continue;
                }
                b' ' | b'\n' | b'\r' | b'\t' => continue,
                _ => {
                    self.bad = true;
                    continue;
                }
            };
            self.bits = (self.bits << 6) | u32::from(value);
            self.count += 1;
            if self.count == 4 {
                out.extend_from_slice(&self.bits.to_be_bytes()[1..]);
                self.bits = 0;
                self.count = 0;
            }
        }
    }

    /// End a group cut short by padding (or by the end of the data).
    pub(crate) fn flush(&mut self, out: &mut Vec<u8>) {
        match self.count {
            2 => out.push((self.bits >> 4) as u8),
            3 => out.extend_from_slice(&((self.bits >> 2) as u16).to_be_bytes()),
            _ => {}
        }
        self.bits = 0;
        self.count = 0;
    }
}

/// Decode a PNG of any colour type into RGBA.
pub(crate) fn png(data: &[u8]) -> Result<Bitmap, Refusal> {
    let mut decoder = ::png::Decoder::new_with_limits(
        Cursor::new(data),
        ::png::Limits {
            bytes: (MAX_IMAGE_PIXELS as usize) * 8,
        },
    );
    decoder.set_transformations(::png::Transformations::EXPAND | ::png::Transformations::STRIP_16);
    let mut reader = decoder
        .read_info()
        .map_err(|e| format!("PNG does not decode: {e}"))?;
    let (width, height) = (reader.info().width, reader.info().height);
    check_size(u64::from(width), u64::from(height))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| "PNG too large".to_owned())?;
    let mut buf = vec![0; size];
    let frame = reader
        .next_frame(&mut buf)
        .map_err(|e| format!("PNG does not decode: {e}"))?;
    buf.truncate(frame.buffer_size());
    let channels = match frame.color_type {
        ::png::ColorType::Grayscale => 1,
        ::png::ColorType::GrayscaleAlpha => 2,
        ::png::ColorType::Rgb => 3,
        ::png::ColorType::Rgba => 4,
        ::png::ColorType::Indexed => return Err("PNG palette not expanded".to_owned()),
    };
    let pixels = width as usize * height as usize;
    let stride = frame.line_size;
    let mut rgba = Vec::with_capacity(pixels * 4);
    for y in 0..height as usize {
        let line = &buf[y * stride..y * stride + width as usize * channels];
        for px in line.chunks_exact(channels) {
            rgba.extend_from_slice(&match px {
                [g] => [*g, *g, *g, 255],
                [g, a] => [*g, *g, *g, *a],
                [r, g, b] => [*r, *g, *b, 255],
                [r, g, b, a] => [*r, *g, *b, *a],
                _ => [0, 0, 0, 0],
            });
        }
    }
    Ok(Bitmap {
        width,
        height,
        rgba,
    })
}

/// Raw pixels of 3 (RGB) or 4 (RGBA) bytes each, `width` x `height` of them.
pub(crate) fn raw(
    data: &[u8],
    width: u32,
    height: u32,
    channels: usize,
) -> Result<Bitmap, Refusal> {
    check_size(u64::from(width), u64::from(height))?;
    let pixels = width as usize * height as usize;
    if data.len() < pixels * channels {
        return Err(format!(
            "{} bytes of pixels for {width}x{height} px need {}",
            data.len(),
            pixels * channels
        ));
    }
    let rgba = if channels == 4 {
        data[..pixels * 4].to_vec()
    } else {
        data[..pixels * 3]
            .chunks_exact(3)
            .flat_map(|p| [p[0], p[1], p[2], 255])
            .collect()
    };
    Ok(Bitmap {
        width,
        height,
        rgba,
    })
}

/// Inflate zlib data into at most `limit` bytes.
pub(crate) fn inflate(data: &[u8], limit: usize) -> Result<Vec<u8>, Refusal> {
    miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(data, limit).map_err(|e| {
        format!(
            "zlib data does not inflate within {limit} bytes ({:?})",
            e.status
        )
    })
}

/// An uncompressed RGB or RGBA TIFF (what chafa sends to iTerm2): one IFD, strips, 8 bits a sample.
pub(crate) fn tiff(data: &[u8]) -> Result<Bitmap, Refusal> {
    let bad = || "TIFF: only uncompressed 8-bit RGB(A) is read".to_owned();
    let little = match data.get(..4) {
        Some(b"II*\0") => true,
        Some(b"MM\0*") => false,
        _ => return Err(bad()),
    };
    let u16_at = |at: usize| -> Option<u32> {
        let b = data.get(at..at + 2)?;
        Some(u32::from(if little {
            u16::from_le_bytes([b[0], b[1]])
        } else {
            u16::from_be_bytes([b[0], b[1]])
        }))
    };
    let u32_at = |at: usize| -> Option<u32> {
        let b: [u8; 4] = data.get(at..at + 4)?.try_into().ok()?;
        Some(if little {
            u32::from_le_bytes(b)
        } else {
            u32::from_be_bytes(b)
        })
    };
    let ifd = u32_at(4).ok_or_else(bad)? as usize;
    let entries = u16_at(ifd).ok_or_else(bad)? as usize;
    let (mut width, mut height, mut samples, mut compression) = (0, 0, 1, 1);
    let mut offsets: Vec<u32> = Vec::new();
    for i in 0..entries.min(64) {
        let entry = ifd + 2 + i * 12;
        let tag = u16_at(entry).ok_or_else(bad)?;
        let kind = u16_at(entry + 2).ok_or_else(bad)?;
        let count = u32_at(entry + 4).ok_or_else(bad)? as usize;
        let value = |n: usize| -> Option<u32> {
            let size = if kind == 3 { 2 } else { 4 };
            let base = if size * count <= 4 {
                entry + 8
            } else {
                u32_at(entry + 8)? as usize
            };
            if kind == 3 {
                u16_at(base + n * 2)
            } else {
                u32_at(base + n * 4)
            }
        };
        match tag {
            256 => width = value(0).ok_or_else(bad)?,
            257 => height = value(0).ok_or_else(bad)?,
            259 => compression = value(0).ok_or_else(bad)?,
            273 => {
                offsets = (0..count.min(1 << 16))
                    .map(|n| value(n).ok_or_else(bad))
                    .collect::<Result<_, _>>()?
            }
            277 => samples = value(0).ok_or_else(bad)?,
            _ => {}
        }
    }
    check_size(u64::from(width), u64::from(height))?;
    if compression != 1 || !(samples == 3 || samples == 4) || offsets.is_empty() {
        return Err(bad());
    }
    // Strips follow one another in the file as chafa writes them; read them in order.
    let need = width as usize * height as usize * samples as usize;
    let mut pixels = Vec::with_capacity(need);
    for &offset in &offsets {
        let start = offset as usize;
        let take = (need - pixels.len()).min(data.len().saturating_sub(start));
        pixels.extend_from_slice(data.get(start..start + take).ok_or_else(bad)?);
        if pixels.len() == need {
            break;
        }
    }
    raw(&pixels, width, height, samples as usize)
}

/// A JPEG, as RGBA.
fn jpeg(data: &[u8]) -> Result<Bitmap, Refusal> {
    use zune_jpeg::zune_core::colorspace::ColorSpace;
    use zune_jpeg::zune_core::options::DecoderOptions;
    let options = DecoderOptions::default()
        .jpeg_set_out_colorspace(ColorSpace::RGBA)
        .set_max_width(1 << 16)
        .set_max_height(1 << 16);
    let mut decoder = zune_jpeg::JpegDecoder::new_with_options(Cursor::new(data), options);
    decoder
        .decode_headers()
        .map_err(|e| format!("JPEG does not decode: {e}"))?;
    let (width, height) = decoder
        .dimensions()
        .ok_or_else(|| "JPEG has no size".to_owned())?;
    check_size(width as u64, height as u64)?;
    let rgba = decoder
        .decode()
        .map_err(|e| format!("JPEG does not decode: {e}"))?;
    if rgba.len() != width * height * 4 {
        return Err("JPEG decoded to the wrong size".to_owned());
    }
    Ok(Bitmap {
        width: width as u32,
        height: height as u32,
        rgba,
    })
}

/// A GIF's first frame, placed on its logical screen, as RGBA.
fn gif(data: &[u8]) -> Result<Bitmap, Refusal> {
    let bad = |e: gif::DecodingError| format!("GIF does not decode: {e}");
    let mut options = gif::DecodeOptions::new();
    options.set_color_output(gif::ColorOutput::RGBA);
    // The declared sizes are checked before a frame is read: at most the pixel limit in bytes.
    options.set_memory_limit(gif::MemoryLimit::Bytes(
        std::num::NonZeroU64::new(MAX_IMAGE_PIXELS * 4).expect("not zero"),
    ));
    let mut decoder = options.read_info(Cursor::new(data)).map_err(bad)?;
    let (width, height) = (u32::from(decoder.width()), u32::from(decoder.height()));
    check_size(u64::from(width), u64::from(height))?;
    let frame = decoder
        .read_next_frame()
        .map_err(bad)?
        .ok_or_else(|| "GIF has no frame".to_owned())?;
    let mut rgba = vec![0u8; width as usize * height as usize * 4];
    let (fw, fh) = (usize::from(frame.width), usize::from(frame.height));
    let (left, top) = (usize::from(frame.left), usize::from(frame.top));
    for y in 0..fh.min((height as usize).saturating_sub(top)) {
        let visible = fw.min((width as usize).saturating_sub(left));
        let from = y * fw * 4;
        let to = ((top + y) * width as usize + left) * 4;
        if let Some(row) = frame.buffer.get(from..from + visible * 4) {
            rgba[to..to + visible * 4].copy_from_slice(row);
        }
    }
    Ok(Bitmap {
        width,
        height,
        rgba,
    })
}

/// Decode a file of a format told by its first bytes: PNG, JPEG, GIF or TIFF.
pub(crate) fn file(data: &[u8]) -> Result<Bitmap, Refusal> {
    if data.starts_with(b"\x89PNG") {
        png(data)
    } else if data.starts_with(b"\xff\xd8\xff") {
        jpeg(data)
    } else if data.starts_with(b"GIF87a") || data.starts_with(b"GIF89a") {
        gif(data)
    } else if data.starts_with(b"II*\0") || data.starts_with(b"MM\0*") {
        tiff(data)
    } else {
        Err("only PNG, JPEG, GIF and TIFF pictures are decoded".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let mut d = Base64::default();
        for piece in text.as_bytes().chunks(3) {
            d.feed(piece, &mut out);
        }
        d.flush(&mut out);
        out
    }

    #[test]
    fn base64_decodes_across_pieces_with_and_without_padding() {
        assert_eq!(b64("aGVsbG8="), b"hello");
        assert_eq!(b64("aGVsbG8"), b"hello");
        assert_eq!(b64("aGVsbA=="), b"hell");
        assert_eq!(b64("aGVs\nbG8h"), b"hello!");
    }

    #[test]
    fn a_huge_declared_size_is_refused() {
        assert!(check_size(100_000, 100_000)
            .unwrap_err()
            .contains("over the 16 M px limit"));
        assert!(check_size(4096, 4096).is_ok());
    }

    /// A GIF of `width` x `height` (a 2x2 frame of red, green / blue, yellow at `left`, `top`).
    fn gif_of(width: u16, height: u16, left: u16, top: u16) -> Vec<u8> {
        let palette = [255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 0];
        let mut out = Vec::new();
        {
            let mut encoder = gif::Encoder::new(&mut out, width, height, &palette).unwrap();
            let mut frame = gif::Frame::from_indexed_pixels(2, 2, vec![0, 1, 2, 3], None);
            (frame.left, frame.top) = (left, top);
            encoder.write_frame(&frame).unwrap();
        }
        out
    }

    #[test]
    fn a_gif_shows_its_first_frame_where_it_sits() {
        let b = file(&gif_of(3, 3, 1, 1)).unwrap();
        assert_eq!((b.width, b.height), (3, 3));
        let at = |x: usize, y: usize| &b.rgba[(y * 3 + x) * 4..(y * 3 + x) * 4 + 4];
        assert_eq!(at(1, 1), [255, 0, 0, 255]);
        assert_eq!(at(2, 2), [255, 255, 0, 255]);
        assert_eq!(at(0, 0)[3], 0, "outside the frame is transparent");
        // A declared logical screen past the limit is refused before anything is read.
        let mut huge = gif_of(2, 2, 0, 0);
        huge[6..10].copy_from_slice(&[0xff, 0xff, 0xff, 0xff]);
        assert!(
            file(&huge).unwrap_err().contains("limit"),
            "{:?}",
            file(&huge)
        );
    }

    #[test]
    fn a_broken_jpeg_or_an_unknown_format_is_refused_by_name() {
        assert!(file(b"\xff\xd8\xff\xe0garbage")
            .unwrap_err()
            .contains("JPEG"));
        assert!(file(b"BM....")
            .unwrap_err()
            .contains("PNG, JPEG, GIF and TIFF"));
    }
}
