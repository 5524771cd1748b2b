//! MP4 (H.264) and WebM (VP9) through the system's ffmpeg (Debian's `ffmpeg` package): raw RGB
//! frames piped to its standard input, never a file per frame.
//!
//! Raw video has no timestamps, so ffmpeg is given a constant frame rate and each frame is written
//! as many times as it lasts; the encoders turn a repeated frame into a few bytes. ffmpeg's own
//! messages are read on a thread of their own while frames are written, so neither side can block
//! the other, and they are what an error shows when it fails.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::thread::JoinHandle;

use screenpilot_screen::Rgb;

use crate::ops::{ErrorCode, OpError};

/// Which video ffmpeg makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// H.264 in MP4.
    H264,
    /// VP9 in WebM.
    Vp9,
}

impl Codec {
    /// ffmpeg's encoder options: 4:2:0 colour, which every browser and player shows; constant
    /// quality, which keeps a still terminal small.
    fn options(self) -> &'static [&'static str] {
        match self {
            Codec::H264 => &[
                "-c:v",
                "libx264",
                "-preset",
                "fast",
                "-crf",
                "23",
                "-pix_fmt",
                "yuv420p",
                "-movflags",
                "+faststart",
            ],
            Codec::Vp9 => &[
                "-c:v",
                "libvpx-vp9",
                "-crf",
                "32",
                "-b:v",
                "0",
                "-deadline",
                "good",
                "-cpu-used",
                "4",
                "-row-mt",
                "1",
                "-pix_fmt",
                "yuv420p",
            ],
        }
    }
}

/// A running ffmpeg taking frames.
pub struct Ffmpeg {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Option<JoinHandle<String>>,
    fps: f64,
    output: String,
    /// The last frame given, written once the next one says how long it lasts.
    held: Option<Vec<u8>>,
    /// Video frames written so far.
    written: u64,
}

impl Ffmpeg {
    /// Start ffmpeg writing `output` from frames of `width` x `height` RGB at `fps`. Odd sizes are
    /// padded by a pixel of `background` (4:2:0 video needs even ones).
    pub fn start(
        output: &Path,
        codec: Codec,
        (width, height): (u32, u32),
        fps: f64,
        background: Rgb,
    ) -> Result<Ffmpeg, OpError> {
        let mut command = Command::new("ffmpeg");
        command
            .args(["-hide_banner", "-loglevel", "error", "-y"])
            .args(["-f", "rawvideo", "-pixel_format", "rgb24"])
            .arg("-video_size")
            .arg(format!("{width}x{height}"))
            .arg("-framerate")
            .arg(fps.to_string())
            .args(["-i", "pipe:0"]);
        // RGB to BT.709 YUV, said so in the file, so players do not guess the colours.
        let mut filters = vec!["scale=out_color_matrix=bt709:out_range=tv".to_owned()];
        if width % 2 == 1 || height % 2 == 1 {
            filters.insert(
                0,
                format!(
                    "pad=ceil(iw/2)*2:ceil(ih/2)*2:color=0x{:02x}{:02x}{:02x}",
                    background.r, background.g, background.b
                ),
            );
        }
        command
            .arg("-vf")
            .arg(filters.join(","))
            .args(["-colorspace", "bt709", "-color_primaries", "bt709"])
            .args(["-color_trc", "bt709", "-color_range", "tv"])
            .args(codec.options())
            .arg(output)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                OpError::new(
                    ErrorCode::RenderFailed,
                    "ffmpeg is not installed, and MP4 and WebM are made with it: apt install ffmpeg (a .gif needs nothing)",
                )
            } else {
                OpError::new(
                    ErrorCode::RenderFailed,
                    format!("cannot start ffmpeg: {e}"),
                )
            }
        })?;
        let messages = child.stderr.take().map(|mut stderr| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = stderr.read_to_string(&mut text);
                text
            })
        });
        Ok(Ffmpeg {
            stdin: child.stdin.take(),
            child,
            messages,
            fps,
            output: output.display().to_string(),
            held: None,
            written: 0,
        })
    }

    /// Show `rgb` from `at` seconds on.
    pub fn push(&mut self, rgb: Vec<u8>, at: f64) -> Result<(), OpError> {
        if let Some(held) = self.held.take() {
            let until = self.frame_at(at);
            self.write_until(&held, until)?;
        }
        self.held = Some(rgb);
        Ok(())
    }

    /// End the video at `end` seconds (the last frame lasts until then, one frame at least) and wait
    /// for ffmpeg to finish the file. Returns the number of video frames.
    pub fn finish(mut self, end: f64) -> Result<u64, OpError> {
        if let Some(held) = self.held.take() {
            let until = self.frame_at(end).max(self.written + 1);
            self.write_until(&held, until)?;
        }
        drop(self.stdin.take());
        self.wait()?;
        Ok(self.written)
    }

    fn frame_at(&self, at: f64) -> u64 {
        (at.max(0.0) * self.fps).round() as u64
    }

    fn write_until(&mut self, rgb: &[u8], until: u64) -> Result<(), OpError> {
        while self.written < until {
            let Some(stdin) = self.stdin.as_mut() else {
                break;
            };
            if let Err(e) = stdin.write_all(rgb) {
                // ffmpeg stopped reading: it failed, and says why on its stderr.
                drop(self.stdin.take());
                self.wait()?;
                return Err(OpError::new(
                    ErrorCode::RenderFailed,
                    format!("ffmpeg stopped taking frames for {}: {e}", self.output),
                ));
            }
            self.written += 1;
        }
        Ok(())
    }

    /// Wait for ffmpeg to end; an error with its messages unless it succeeded.
    fn wait(&mut self) -> Result<(), OpError> {
        let status = self.child.wait().map_err(|e| {
            OpError::new(
                ErrorCode::RenderFailed,
                format!("cannot wait for ffmpeg: {e}"),
            )
        })?;
        let messages = self
            .messages
            .take()
            .and_then(|reader| reader.join().ok())
            .unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        Err(OpError::new(
            ErrorCode::RenderFailed,
            format!(
                "ffmpeg failed ({status}) making {}: {}",
                self.output,
                messages.trim()
            ),
        ))
    }
}

impl Drop for Ffmpeg {
    /// An ffmpeg left behind by an error is stopped, not left waiting for frames.
    fn drop(&mut self) {
        if self.stdin.take().is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
