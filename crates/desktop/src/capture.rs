//! Screen capture: the root window's pixels through MIT-SHM (the server writes straight into memory we
//! share with it), or a plain GetImage when shared memory is not available (a remote display, another
//! IPC namespace). The pointer, which GetImage never includes, is drawn in from XFixes; the result is
//! RGB, encoded as PNG with light (zlib level 1) compression.

use std::os::fd::{FromRawFd, OwnedFd};

use x11rb::connection::Connection;
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xfixes::GetCursorImageReply;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat, ImageOrder, Window};
use x11rb::rust_connection::RustConnection;

use crate::error::{DesktopError, Result};

/// A captured screen, 8-bit RGB, rows top to bottom.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub rgb: Vec<u8>,
}

impl Frame {
    /// The part of the frame in `x..x+width`, `y..y+height` (clipped to the frame).
    pub fn crop(&self, x: u32, y: u32, width: u32, height: u32) -> Frame {
        let x0 = x.min(self.width);
        let y0 = y.min(self.height);
        let x1 = x.saturating_add(width).min(self.width);
        let y1 = y.saturating_add(height).min(self.height);
        let (w, h) = (x1 - x0, y1 - y0);
        let mut rgb = Vec::with_capacity((w * h * 3) as usize);
        for row in y0..y1 {
            let start = ((row * self.width + x0) * 3) as usize;
            rgb.extend_from_slice(&self.rgb[start..start + (w * 3) as usize]);
        }
        Frame {
            width: w,
            height: h,
            rgb,
        }
    }

    /// A 64-bit hash (xxh3) of the size and every pixel: equal frames, equal hashes.
    pub fn hash(&self) -> u64 {
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        hasher.update(&self.width.to_le_bytes());
        hasher.update(&self.height.to_le_bytes());
        hasher.update(&self.rgb);
        hasher.digest()
    }

    /// The colour of one pixel, or `None` outside the frame.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 3]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = ((y * self.width + x) * 3) as usize;
        Some([self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]])
    }
}

/// Encode as PNG (RGB, 8 bit).
///
/// Why zlib level 1 rather than `Compression::Fast` (fdeflate): on a 1280x800 desktop with text it
/// costs about 1 ms more (4.3 ms instead of 3.3 ms) and makes a file a third the size (161 KiB
/// instead of 472 KiB), and every screenshot travels to the model as base64.
pub fn encode_png(frame: &Frame) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(frame.rgb.len() / 8);
    let mut encoder = png::Encoder::new(&mut out, frame.width, frame.height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_deflate_compression(png::DeflateCompression::Level(1));
    encoder.set_filter(png::Filter::Adaptive);
    let encode_err = |e: png::EncodingError| DesktopError::Io(format!("PNG encoding failed: {e}"));
    let mut writer = encoder.write_header().map_err(encode_err)?;
    writer.write_image_data(&frame.rgb).map_err(encode_err)?;
    writer.finish().map_err(encode_err)?;
    Ok(out)
}

/// Decode a PNG (8-bit RGB or RGBA) into a frame; alpha is dropped.
pub fn decode_png(bytes: &[u8]) -> Result<Frame> {
    let bad = |e: &dyn std::fmt::Display| DesktopError::Io(format!("not a PNG screenshot: {e}"));
    let decoder = png::Decoder::new(std::io::Cursor::new(bytes));
    let mut reader = decoder.read_info().map_err(|e| bad(&e))?;
    let size = reader
        .output_buffer_size()
        .ok_or_else(|| bad(&"image too large"))?;
    let mut buf = vec![0; size];
    let info = reader.next_frame(&mut buf).map_err(|e| bad(&e))?;
    let channels = match (info.color_type, info.bit_depth) {
        (png::ColorType::Rgb, png::BitDepth::Eight) => 3,
        (png::ColorType::Rgba, png::BitDepth::Eight) => 4,
        other => return Err(bad(&format!("{other:?} pixels"))),
    };
    let mut rgb = Vec::with_capacity(info.width as usize * info.height as usize * 3);
    for row in buf[..info.buffer_size()].chunks_exact(info.line_size) {
        for px in row.chunks_exact(channels) {
            rgb.extend_from_slice(&px[..3]);
        }
    }
    Ok(Frame {
        width: info.width,
        height: info.height,
        rgb,
    })
}

/// How the server lays pixels out for the root window: 32 bits per pixel with 8-bit channels, the
/// only layout of depth-24 and depth-32 visuals in practice.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PixelFormat {
    red_shift: u32,
    green_shift: u32,
    blue_shift: u32,
    big_endian: bool,
}

impl PixelFormat {
    pub fn of_root(conn: &RustConnection, screen: usize) -> Result<PixelFormat> {
        let setup = conn.setup();
        let root = setup
            .roots
            .get(screen)
            .ok_or_else(|| DesktopError::Protocol(format!("screen {screen} does not exist")))?;
        let bpp = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == root.root_depth)
            .map(|f| f.bits_per_pixel)
            .unwrap_or(0);
        let visual = root
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == root.root_visual)
            .ok_or_else(|| DesktopError::Protocol("the root visual is not listed".into()))?;
        let shift = |mask: u32| -> Option<u32> {
            let shift = mask.trailing_zeros();
            (mask >> shift == 0xff).then_some(shift)
        };
        match (
            bpp,
            shift(visual.red_mask),
            shift(visual.green_mask),
            shift(visual.blue_mask),
        ) {
            (32, Some(red_shift), Some(green_shift), Some(blue_shift)) => Ok(PixelFormat {
                red_shift,
                green_shift,
                blue_shift,
                big_endian: setup.image_byte_order == ImageOrder::MSB_FIRST,
            }),
            _ => Err(DesktopError::Protocol(format!(
                "unsupported screen format: depth {}, {bpp} bits per pixel, masks {:#x}/{:#x}/{:#x} (screenpilot reads 32-bit pixels with 8-bit channels)",
                root.root_depth, visual.red_mask, visual.green_mask, visual.blue_mask
            ))),
        }
    }

    /// Convert `width * height` 32-bit pixels to RGB.
    pub fn to_rgb(self, data: &[u8], width: u32, height: u32) -> Result<Vec<u8>> {
        let pixels = width as usize * height as usize;
        let Some(data) = data.get(..pixels * 4) else {
            return Err(DesktopError::Protocol(format!(
                "the server sent {} bytes for a {width}x{height} image",
                data.len()
            )));
        };
        let mut rgb = vec![0u8; pixels * 3];
        // The common case (little-endian BGRX, i.e. red in bits 16-23): a plain byte shuffle.
        if !self.big_endian && (self.red_shift, self.green_shift, self.blue_shift) == (16, 8, 0) {
            for (out, px) in rgb.chunks_exact_mut(3).zip(data.chunks_exact(4)) {
                out[0] = px[2];
                out[1] = px[1];
                out[2] = px[0];
            }
            return Ok(rgb);
        }
        for (out, px) in rgb.chunks_exact_mut(3).zip(data.chunks_exact(4)) {
            let bytes = [px[0], px[1], px[2], px[3]];
            let value = if self.big_endian {
                u32::from_be_bytes(bytes)
            } else {
                u32::from_le_bytes(bytes)
            };
            out[0] = (value >> self.red_shift) as u8;
            out[1] = (value >> self.green_shift) as u8;
            out[2] = (value >> self.blue_shift) as u8;
        }
        Ok(rgb)
    }
}

/// Memory shared with the X server through a memfd.
struct SharedMemory {
    segment: u32,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone and only read while the capture holds `&mut`.
unsafe impl Send for SharedMemory {}

impl SharedMemory {
    fn attach(conn: &RustConnection, len: usize) -> Result<SharedMemory> {
        let io =
            |what: &str| DesktopError::Io(format!("{what}: {}", std::io::Error::last_os_error()));
        // SAFETY: memfd_create with a NUL-terminated name; the descriptor is owned below.
        let raw = unsafe { libc::memfd_create(c"screenpilot-capture".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io("memfd_create"));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: plain syscalls on the descriptor we own.
        if unsafe { libc::ftruncate(raw, len as libc::off_t) } != 0 {
            return Err(io("ftruncate"));
        }
        // SAFETY: a new shared mapping of the whole file; unmapped in Drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                raw,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io("mmap"));
        }
        // Owned from here: dropped (unmapped) on any error below.
        let mut memory = SharedMemory {
            segment: 0,
            ptr: ptr.cast(),
            len,
        };
        memory.segment = conn.generate_id()?;
        conn.shm_attach_fd(memory.segment, fd, false)?.check()?;
        Ok(memory)
    }

    fn bytes(&self, len: usize) -> &[u8] {
        // SAFETY: ptr..ptr+self.len is our mapping; len is clamped to it.
        unsafe { std::slice::from_raw_parts(self.ptr, len.min(self.len)) }
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        // SAFETY: unmapping our own mapping once. The server detaches when the connection closes.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// Captures the root window, reusing one shared segment while the screen size stays the same.
pub(crate) struct Capturer {
    format: PixelFormat,
    shm_available: bool,
    memory: Option<SharedMemory>,
}

impl Capturer {
    pub fn new(conn: &RustConnection, screen: usize, shm_available: bool) -> Result<Capturer> {
        Ok(Capturer {
            format: PixelFormat::of_root(conn, screen)?,
            shm_available,
            memory: None,
        })
    }

    /// Which way frames are read: "shm" or "get_image".
    pub fn method(&self) -> &'static str {
        if self.shm_available {
            "shm"
        } else {
            "get_image"
        }
    }

    pub fn capture(
        &mut self,
        conn: &RustConnection,
        root: Window,
        width: u16,
        height: u16,
    ) -> Result<Frame> {
        let started = std::time::Instant::now();
        let frame = self.read_frame(conn, root, width, height);
        if frame.is_ok() {
            crate::stats::captured(started.elapsed());
        }
        frame
    }

    fn read_frame(
        &mut self,
        conn: &RustConnection,
        root: Window,
        width: u16,
        height: u16,
    ) -> Result<Frame> {
        let len = usize::from(width) * usize::from(height) * 4;
        if self.shm_available {
            if self.memory.as_ref().is_none_or(|m| m.len < len) {
                self.memory = None;
                match SharedMemory::attach(conn, len) {
                    Ok(memory) => self.memory = Some(memory),
                    // No shared memory with this server: read through the socket from now on.
                    Err(_) => self.shm_available = false,
                }
            }
            if let Some(memory) = &self.memory {
                conn.shm_get_image(
                    root,
                    0,
                    0,
                    width,
                    height,
                    !0,
                    ImageFormat::Z_PIXMAP.into(),
                    memory.segment,
                    0,
                )?
                .reply()?;
                let rgb = self
                    .format
                    .to_rgb(memory.bytes(len), width.into(), height.into())?;
                return Ok(Frame {
                    width: width.into(),
                    height: height.into(),
                    rgb,
                });
            }
        }
        let image = conn
            .get_image(ImageFormat::Z_PIXMAP, root, 0, 0, width, height, !0)?
            .reply()?;
        let rgb = self
            .format
            .to_rgb(&image.data, width.into(), height.into())?;
        Ok(Frame {
            width: width.into(),
            height: height.into(),
            rgb,
        })
    }
}

/// Blend the pointer image (premultiplied ARGB) into the frame at its hotspot.
pub(crate) fn draw_cursor(frame: &mut Frame, cursor: &GetCursorImageReply) {
    let left = i32::from(cursor.x) - i32::from(cursor.xhot);
    let top = i32::from(cursor.y) - i32::from(cursor.yhot);
    let (cw, ch) = (i32::from(cursor.width), i32::from(cursor.height));
    for cy in 0..ch {
        let y = top + cy;
        if y < 0 || y >= frame.height as i32 {
            continue;
        }
        for cx in 0..cw {
            let x = left + cx;
            if x < 0 || x >= frame.width as i32 {
                continue;
            }
            let Some(&argb) = cursor.cursor_image.get((cy * cw + cx) as usize) else {
                continue;
            };
            let alpha = argb >> 24;
            if alpha == 0 {
                continue;
            }
            let i = ((y as u32 * frame.width + x as u32) * 3) as usize;
            let source = [(argb >> 16) & 0xff, (argb >> 8) & 0xff, argb & 0xff];
            for (channel, src) in source.into_iter().enumerate() {
                let dst = u32::from(frame.rgb[i + channel]);
                let blended = src + (dst * (255 - alpha) + 127) / 255;
                frame.rgb[i + channel] = blended.min(255) as u8;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bgrx() -> PixelFormat {
        PixelFormat {
            red_shift: 16,
            green_shift: 8,
            blue_shift: 0,
            big_endian: false,
        }
    }

    #[test]
    fn bgrx_pixels_become_rgb() {
        let data = [0x30, 0x20, 0x10, 0x00, 0xff, 0x00, 0x80, 0x00];
        let rgb = bgrx().to_rgb(&data, 2, 1).expect("convert");
        assert_eq!(rgb, vec![0x10, 0x20, 0x30, 0x80, 0x00, 0xff]);
    }

    #[test]
    fn other_layouts_use_the_masks() {
        let rgbx_be = PixelFormat {
            red_shift: 24,
            green_shift: 16,
            blue_shift: 8,
            big_endian: true,
        };
        let rgb = rgbx_be.to_rgb(&[1, 2, 3, 0], 1, 1).expect("convert");
        assert_eq!(rgb, vec![1, 2, 3]);
    }

    #[test]
    fn short_data_is_an_error_not_a_panic() {
        assert!(bgrx().to_rgb(&[0; 7], 2, 1).is_err());
    }

    #[test]
    fn crop_clips_to_the_frame() {
        let frame = Frame {
            width: 3,
            height: 2,
            rgb: (0..18).collect(),
        };
        let part = frame.crop(1, 1, 5, 5);
        assert_eq!((part.width, part.height), (2, 1));
        assert_eq!(part.rgb, vec![12, 13, 14, 15, 16, 17]);
        assert_eq!(frame.pixel(2, 1), Some([15, 16, 17]));
        assert_eq!(frame.pixel(3, 0), None);
    }

    #[test]
    fn the_hash_follows_the_pixels_and_the_size() {
        let frame = Frame {
            width: 2,
            height: 1,
            rgb: vec![1, 2, 3, 4, 5, 6],
        };
        assert_eq!(frame.hash(), frame.clone().hash());
        let mut changed = frame.clone();
        changed.rgb[5] = 7;
        assert_ne!(frame.hash(), changed.hash());
        let reshaped = Frame {
            width: 1,
            height: 2,
            rgb: frame.rgb.clone(),
        };
        assert_ne!(frame.hash(), reshaped.hash());
    }

    #[test]
    fn cursor_pixels_blend_by_alpha() {
        let mut frame = Frame {
            width: 2,
            height: 1,
            rgb: vec![100; 6],
        };
        let cursor = GetCursorImageReply {
            sequence: 0,
            length: 0,
            x: 1,
            y: 0,
            width: 2,
            height: 1,
            xhot: 1,
            yhot: 0,
            cursor_serial: 0,
            // Opaque white, then half-transparent black (premultiplied).
            cursor_image: vec![0xffff_ffff, 0x8000_0000],
        };
        draw_cursor(&mut frame, &cursor);
        assert_eq!(&frame.rgb[0..3], &[255, 255, 255]);
        assert_eq!(frame.rgb[3], 50);
    }

    #[test]
    fn png_encoding_round_trips_the_size() {
        let frame = Frame {
            width: 4,
            height: 3,
            rgb: (0..36).collect(),
        };
        let png = encode_png(&frame).expect("encode");
        assert_eq!(&png[1..4], b"PNG");
        assert_eq!(decode_png(&png).expect("decode"), frame);
        assert!(decode_png(b"not a png").is_err());
    }
}
