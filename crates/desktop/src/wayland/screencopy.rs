//! Capture through wlr-screencopy: the compositor copies the output into a `wl_shm` buffer we share
//! with it (a memfd), and we turn its 32-bit pixels into an RGB [`Frame`]. The buffer is kept
//! between captures of the same size and format.
//!
//! `copy_with_damage` is the same copy, held back by the compositor until something was drawn, and
//! reported with the damaged boxes: the damage watch (`damage` module) loops on it.

use std::fs::File;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::os::unix::fs::FileExt;

use wayland_client::protocol::wl_buffer::WlBuffer;
use wayland_client::protocol::wl_output::WlOutput;
use wayland_client::protocol::wl_registry::WlRegistry;
use wayland_client::protocol::wl_shm::{self, WlShm};
use wayland_client::protocol::wl_shm_pool::WlShmPool;
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle, WEnum};
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_frame_v1::{
    self, ZwlrScreencopyFrameV1,
};
use wayland_protocols_wlr::screencopy::v1::client::zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1;

use super::blocking::{dispatch_until, Until};
use super::globals::{bind, Globals, SCREENCOPY, SHM};
use crate::capture::Frame;
use crate::error::{DesktopError, Result};
use crate::looks::{join, Area};

/// Captures of one output, on their own event queue.
pub(crate) struct Screencopy {
    queue: EventQueue<CopyState>,
    state: CopyState,
    manager: ZwlrScreencopyManagerV1,
    shm: WlShm,
    output: WlOutput,
    buffer: Option<ShmBuffer>,
    raw: Vec<u8>,
}

/// What the compositor said about the frame being copied.
#[derive(Default)]
pub(crate) struct CopyState {
    layout: Option<Layout>,
    /// All buffer types were announced (screencopy v3), or the one `buffer` event was (v1, v2).
    described: bool,
    y_invert: bool,
    ready: bool,
    failed: bool,
    damage: Option<Area>,
    /// The frame's version, to know whether `buffer_done` will come.
    version: u32,
}

/// The shm buffer the compositor asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    format: u32,
    width: u32,
    height: u32,
    stride: u32,
}

/// What a copy is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Want {
    /// The pixels, now.
    Pixels,
    /// Where something was drawn: the compositor completes the copy once something was drawn since
    /// our last such copy; the pixels are not read.
    Damage,
}

/// A copied screen (`None` for [`Want::Damage`]), and the box drawn since the last copy with damage
/// (`None`: nothing, or a copy for the pixels).
pub(crate) struct Copied {
    pub frame: Option<Frame>,
    pub damage: Option<Area>,
}

struct ShmBuffer {
    layout: Layout,
    file: File,
    pool: WlShmPool,
    buffer: WlBuffer,
}

impl Drop for ShmBuffer {
    fn drop(&mut self) {
        self.buffer.destroy();
        self.pool.destroy();
    }
}

impl Screencopy {
    /// Bind screencopy and shm (which the probe found) on a queue of their own.
    pub fn new(
        conn: &Connection,
        registry: &WlRegistry,
        globals: &Globals,
        output: WlOutput,
    ) -> Result<Screencopy> {
        let queue = conn.new_event_queue::<CopyState>();
        let qh = queue.handle();
        let missing = |name: &str| {
            DesktopError::Connection(format!(
                "the compositor offers no {name}, so the screen cannot be captured"
            ))
        };
        let manager = bind(registry, globals, SCREENCOPY, 3, &qh, ()).ok_or(missing(SCREENCOPY))?;
        let shm = bind(registry, globals, SHM, 1, &qh, ()).ok_or(missing(SHM))?;
        Ok(Screencopy {
            queue,
            state: CopyState::default(),
            manager,
            shm,
            output,
            buffer: None,
            raw: Vec::new(),
        })
    }

    /// Copy the output (for [`Want::Pixels`], the pointer drawn in when `pointer`). For
    /// [`Want::Damage`], `until` must allow for the wait until something is drawn.
    pub fn copy(&mut self, conn: &Connection, want: Want, until: Until) -> Result<Copied> {
        self.copy_with_pointer(conn, want, false, until)
    }

    pub fn copy_with_pointer(
        &mut self,
        conn: &Connection,
        want: Want,
        pointer: bool,
        until: Until,
    ) -> Result<Copied> {
        let qh = self.queue.handle();
        let frame = self
            .manager
            .capture_output(i32::from(pointer), &self.output, &qh, ());
        self.state = CopyState {
            version: frame.version(),
            ..CopyState::default()
        };
        let result = self.copy_frame(conn, &frame, want, until);
        frame.destroy();
        result
    }

    fn copy_frame(
        &mut self,
        conn: &Connection,
        frame: &ZwlrScreencopyFrameV1,
        want: Want,
        until: Until,
    ) -> Result<Copied> {
        let what = "capturing the screen";
        dispatch_until(conn, &mut self.queue, &mut self.state, until, what, |s| {
            s.described || s.failed
        })?;
        let Some(layout) = self.state.layout.filter(|_| !self.state.failed) else {
            return Err(DesktopError::Connection(
                "the compositor offers no shared-memory buffer for capturing the screen".into(),
            ));
        };
        if self.buffer.as_ref().is_none_or(|b| b.layout != layout) {
            self.buffer = None;
            self.buffer = Some(ShmBuffer::new(&self.shm, layout, &self.queue.handle())?);
        }
        let Some(buffer) = &self.buffer else {
            return Err(DesktopError::Closed);
        };
        if want == Want::Damage {
            frame.copy_with_damage(&buffer.buffer);
        } else {
            frame.copy(&buffer.buffer);
        }
        dispatch_until(conn, &mut self.queue, &mut self.state, until, what, |s| {
            s.ready || s.failed
        })?;
        if self.state.failed {
            return Err(DesktopError::Connection(
                "the compositor could not copy the screen (screencopy failed: the output may \
                 have changed or gone)"
                    .into(),
            ));
        }
        if want == Want::Damage {
            return Ok(Copied {
                frame: None,
                damage: self.state.damage,
            });
        }
        let size = layout.stride as usize * layout.height as usize;
        self.raw.resize(size, 0);
        buffer
            .file
            .read_exact_at(&mut self.raw, 0)
            .map_err(|e| DesktopError::Io(format!("reading the captured screen: {e}")))?;
        let frame = to_rgb(&self.raw, layout, self.state.y_invert)?;
        Ok(Copied {
            frame: Some(frame),
            damage: self.state.damage,
        })
    }
}

impl ShmBuffer {
    fn new(shm: &WlShm, layout: Layout, qh: &QueueHandle<CopyState>) -> Result<ShmBuffer> {
        let size = layout.stride as usize * layout.height as usize;
        let io = |e: std::io::Error| DesktopError::Io(format!("a buffer for the screen: {e}"));
        // SAFETY: plain syscall with a NUL-terminated name; the result is a new descriptor or -1.
        let raw =
            unsafe { libc::memfd_create(c"screenpilot-screencopy".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io(std::io::Error::last_os_error()));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let file = File::from(unsafe { OwnedFd::from_raw_fd(raw) });
        file.set_len(size as u64).map_err(io)?;
        let format = wl_shm::Format::try_from(layout.format).map_err(|_| {
            DesktopError::Connection(format!(
                "the compositor asked for an unknown pixel format {:#x}",
                layout.format
            ))
        })?;
        let pool = shm.create_pool(file.as_fd(), size as i32, qh, ());
        let buffer = pool.create_buffer(
            0,
            layout.width as i32,
            layout.height as i32,
            layout.stride as i32,
            format,
            qh,
            (),
        );
        Ok(ShmBuffer {
            layout,
            file,
            pool,
            buffer,
        })
    }
}

/// The RGB frame of a 32-bit shm buffer: XRGB8888 and ARGB8888 (bytes B, G, R, X in memory) or
/// XBGR8888 and ABGR8888 (R, G, B, X); rows bottom to top when `y_invert`.
fn to_rgb(raw: &[u8], layout: Layout, y_invert: bool) -> Result<Frame> {
    let (r, g, b) = match wl_shm::Format::try_from(layout.format) {
        Ok(wl_shm::Format::Xrgb8888 | wl_shm::Format::Argb8888) => (2, 1, 0),
        Ok(wl_shm::Format::Xbgr8888 | wl_shm::Format::Abgr8888) => (0, 1, 2),
        _ => {
            return Err(DesktopError::Connection(format!(
                "the compositor captures in pixel format {:#x}; screenpilot reads XRGB8888, \
                 ARGB8888, XBGR8888 and ABGR8888",
                layout.format
            )))
        }
    };
    let (width, height, stride) = (
        layout.width as usize,
        layout.height as usize,
        layout.stride as usize,
    );
    if stride < width * 4 || raw.len() < stride * height {
        return Err(DesktopError::Connection(format!(
            "the compositor's buffer of {}x{} with stride {stride} does not hold its pixels",
            width, height
        )));
    }
    let mut rgb = vec![0u8; width * height * 3];
    for (row, out) in rgb.chunks_exact_mut(width * 3).enumerate() {
        let source = if y_invert { height - 1 - row } else { row };
        let line = &raw[source * stride..source * stride + width * 4];
        for (px, out) in line.chunks_exact(4).zip(out.chunks_exact_mut(3)) {
            out[0] = px[r];
            out[1] = px[g];
            out[2] = px[b];
        }
    }
    Ok(Frame {
        width: layout.width,
        height: layout.height,
        rgb,
    })
}

impl Dispatch<ZwlrScreencopyFrameV1, ()> for CopyState {
    fn event(
        state: &mut Self,
        _: &ZwlrScreencopyFrameV1,
        event: zwlr_screencopy_frame_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_screencopy_frame_v1::Event;
        match event {
            Event::Buffer {
                format,
                width,
                height,
                stride,
            } => {
                let format = match format {
                    WEnum::Value(f) => f as u32,
                    WEnum::Unknown(f) => f,
                };
                state.layout = Some(Layout {
                    format,
                    width,
                    height,
                    stride,
                });
                // Before v3 this one event is the whole description.
                state.described |= state.version < 3;
            }
            Event::BufferDone => state.described = true,
            Event::Flags {
                flags: WEnum::Value(flags),
            } => state.y_invert = flags.contains(zwlr_screencopy_frame_v1::Flags::YInvert),
            Event::Damage {
                x,
                y,
                width,
                height,
            } => {
                let clamp16 = |v: u32| v.min(i16::MAX as u32);
                let area: Area = (
                    clamp16(x) as i16,
                    clamp16(y) as i16,
                    width.min(u16::MAX.into()) as u16,
                    height.min(u16::MAX.into()) as u16,
                );
                if area.2 > 0 && area.3 > 0 {
                    state.damage = Some(state.damage.map_or(area, |d| join(d, area)));
                }
            }
            Event::Ready { .. } => state.ready = true,
            Event::Failed => state.failed = true,
            _ => {}
        }
    }
}

wayland_client::delegate_noop!(CopyState: ignore ZwlrScreencopyManagerV1);
wayland_client::delegate_noop!(CopyState: ignore WlShm);
wayland_client::delegate_noop!(CopyState: ignore WlShmPool);
wayland_client::delegate_noop!(CopyState: ignore WlBuffer);

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(format: wl_shm::Format) -> Layout {
        Layout {
            format: format as u32,
            width: 2,
            height: 2,
            stride: 12,
        }
    }

    /// Two rows of two pixels, red then green, blue then white, with 4 bytes of row padding.
    fn pixels(order: [usize; 3]) -> Vec<u8> {
        let mut raw = Vec::new();
        for row in [[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [255, 255, 255]]] {
            for px in row {
                let mut bytes = [0u8, 0, 0, 0xff];
                for (channel, at) in order.iter().enumerate() {
                    bytes[*at] = px[channel];
                }
                raw.extend_from_slice(&bytes);
            }
            raw.extend_from_slice(&[9, 9, 9, 9]);
        }
        raw
    }

    #[test]
    fn xrgb_and_xbgr_become_rgb_with_padding_skipped() {
        let want = vec![255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255];
        for format in [wl_shm::Format::Xrgb8888, wl_shm::Format::Argb8888] {
            let frame = to_rgb(&pixels([2, 1, 0]), layout(format), false).unwrap();
            assert_eq!(frame.rgb, want, "{format:?}");
        }
        for format in [wl_shm::Format::Xbgr8888, wl_shm::Format::Abgr8888] {
            let frame = to_rgb(&pixels([0, 1, 2]), layout(format), false).unwrap();
            assert_eq!(frame.rgb, want, "{format:?}");
        }
    }

    #[test]
    fn y_inverted_buffers_are_turned_upright() {
        let frame = to_rgb(&pixels([2, 1, 0]), layout(wl_shm::Format::Xrgb8888), true).unwrap();
        assert_eq!(frame.pixel(0, 0), Some([0, 0, 255]));
        assert_eq!(frame.pixel(1, 1), Some([0, 255, 0]));
    }

    #[test]
    fn other_formats_and_short_buffers_are_refused() {
        let err = to_rgb(&[0; 24], layout(wl_shm::Format::Rgb565), false).unwrap_err();
        assert!(err.to_string().contains("XRGB8888"), "{err}");
        assert!(to_rgb(&[0; 20], layout(wl_shm::Format::Xrgb8888), false).is_err());
    }
}
