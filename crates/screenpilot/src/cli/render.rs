//! `screenpilot render FILE.cast -o OUT.gif|OUT.mp4|OUT.webm`: draw an asciicast v2 or v3
//! recording as an animated GIF or a video, with the screenshot renderer's pictures and the
//! recording's own timing. Like `replay`, it runs here and asks the daemon nothing.
//!
//! The recording is read twice: once to check every line and find the largest size the terminal
//! took (the canvas), so a damaged file is refused before anything is written; then to draw it.
//! Neither reading holds the whole file. The events go through the screen crate's
//! `FrameSampler`, which keeps only the screens a person would see change, at most `fps` a second.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;

use screenpilot_screen::animation::{canvas_pixels, draw_frame, FrameSampler, GifWriter};
use screenpilot_screen::cast::{self, CastEvent, CastHeader, EventKind, PlaybackClock};
use screenpilot_screen::render::checked_font_px;
use screenpilot_screen::{RenderOptions, Size, Theme, ThemeName};

use super::ffmpeg::{Codec, Ffmpeg};
use super::replay::{bad_line, read_header, unreadable};
use crate::ops::{ErrorCode, OpError};

/// Pauses are cut to this many seconds when neither `--idle-limit` nor the file says.
pub const DEFAULT_IDLE_LIMIT: f64 = 2.0;
/// Frames a second when `--fps` is not given.
pub const DEFAULT_FPS: f64 = 30.0;
/// A GIF's delays are hundredths of a second and browsers slow delays under 2 down to 10: more
/// than 50 frames a second cannot be shown.
const MAX_GIF_FPS: f64 = 50.0;
const MAX_VIDEO_FPS: f64 = 60.0;
/// The longest animation drawn, in seconds (pauses cut and speed applied). A header's
/// `idle_time_limit` of 1e308, or `--speed 1e-300`, would otherwise make a GIF without end; with
/// `--fps` at most 60, this also bounds the frames to 216,000.
pub const MAX_DURATION_S: f64 = 3600.0;

/// What `render` draws, how, and where to.
#[derive(Debug, Clone)]
pub struct Render {
    pub file: PathBuf,
    pub output: PathBuf,
    /// Font size in pixels, as given (checked here to name the option).
    pub font_px: f64,
    pub theme: ThemeName,
    /// Pauses longer than this many seconds are cut to it (default: the file's
    /// `idle_time_limit`, else [`DEFAULT_IDLE_LIMIT`]).
    pub idle_limit: Option<f64>,
    pub fps: f64,
    pub speed: f64,
}

/// The kinds of file `render` writes, by the output's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Gif,
    Mp4,
    Webm,
}

impl Format {
    fn of(path: &Path) -> Result<Format, OpError> {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        match extension.as_deref() {
            Some("gif") => Ok(Format::Gif),
            Some("mp4") => Ok(Format::Mp4),
            Some("webm") => Ok(Format::Webm),
            other => Err(OpError::invalid(
                "output",
                format!(
                    "{}: {}; render writes .gif, .mp4 (H.264) or .webm (VP9)",
                    path.display(),
                    match other {
                        Some(ext) => format!("unknown output format .{ext}"),
                        None => "no extension to tell the format by".to_owned(),
                    }
                ),
            )),
        }
    }
}

/// What was written, as `render --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Rendered {
    pub path: String,
    pub format: Format,
    /// The picture's size in pixels (a video of odd size is padded to even by ffmpeg).
    pub width: u32,
    pub height: u32,
    /// The terminal's size in cells: the largest the recording took.
    pub cols: u16,
    pub rows: u16,
    /// Distinct screens drawn (a GIF holds these, or fewer when two draw alike; a video repeats
    /// each for as long as it lasts).
    pub frames: usize,
    /// The animation's length in seconds, pauses cut and speed applied.
    pub duration_s: f64,
    pub bytes: u64,
}

impl Rendered {
    /// One line for a person.
    pub fn human(&self) -> String {
        format!(
            "{}: {}x{} px ({}x{} cells), {} frames, {:.2} s, {} bytes",
            self.path,
            self.width,
            self.height,
            self.cols,
            self.rows,
            self.frames,
            self.duration_s,
            self.bytes
        )
    }
}

/// Draw `render.file` into `render.output`. On an error after the output was begun, the partial
/// file is removed.
pub fn run(render: &Render) -> Result<Rendered, OpError> {
    let format = Format::of(&render.output)?;
    let opts = RenderOptions {
        font_px: checked_font_px(render.font_px)
            .map_err(|e| OpError::invalid("font_px", format!("--font-px {e}")))?,
        theme: render.theme,
        frame: false,
    };
    check_options(render, format)?;
    check_not_the_input(render)?;
    let (header, canvas, idle_limit) = survey(render)?;
    let pixels = canvas_pixels(canvas, &opts)
        .map_err(|e| OpError::invalid("font_px", format!("--font-px {}: {e}", render.font_px)))?;
    // Written beside the output and renamed over it once whole: an error, or a person's Ctrl-C,
    // never leaves half a file where a good one was.
    // With the output's own extension: ffmpeg picks the container by it.
    let extension = render.output.extension().and_then(|e| e.to_str());
    let partial = crate::whole_file::partial_beside(&render.output, extension);
    let mut sink = Sink::start(
        render,
        &partial,
        format,
        (pixels.width, pixels.height),
        &opts,
    )?;
    let drawn = draw(render, &header, canvas, idle_limit, &opts, &mut sink);
    let finished = drawn
        .and_then(move |(frames, end)| sink.finish(end).map(|()| (frames, end)))
        .and_then(|done| {
            std::fs::rename(&partial, &render.output)
                .map(|()| done)
                .map_err(|e| {
                    OpError::invalid(
                        "output",
                        format!("cannot write {}: {e}", render.output.display()),
                    )
                })
        });
    let (frames, end) = finished.inspect_err(|_| {
        let _ = std::fs::remove_file(&partial);
    })?;
    let bytes = std::fs::metadata(&render.output)
        .map(|m| m.len())
        .unwrap_or(0);
    Ok(Rendered {
        path: render.output.display().to_string(),
        format,
        width: pixels.width,
        height: pixels.height,
        cols: canvas.cols,
        rows: canvas.rows,
        frames,
        duration_s: end,
        bytes,
    })
}

fn check_options(render: &Render, format: Format) -> Result<(), OpError> {
    if !(render.speed.is_finite() && render.speed > 0.0) {
        return Err(OpError::invalid(
            "speed",
            format!("--speed {} is not a positive number", render.speed),
        ));
    }
    if let Some(limit) = render.idle_limit {
        if !(limit.is_finite() && limit > 0.0) {
            return Err(OpError::invalid(
                "idle_limit",
                format!("--idle-limit {limit} is not a positive number of seconds"),
            ));
        }
    }
    let (most, why) = match format {
        Format::Gif => (
            MAX_GIF_FPS,
            "a GIF's delays are hundredths of a second, and browsers slow down those under 2",
        ),
        Format::Mp4 | Format::Webm => (MAX_VIDEO_FPS, "more is rarely shown"),
    };
    if !(render.fps.is_finite() && render.fps >= 1.0 && render.fps <= most) {
        return Err(OpError::invalid(
            "fps",
            format!("--fps {} is outside 1 to {most} ({why})", render.fps),
        ));
    }
    Ok(())
}

/// The events of a recording after its header, with their line numbers; a bad line is an error
/// naming it.
fn events<'a>(
    path: &'a Path,
    lines: impl Iterator<Item = std::io::Result<String>> + 'a,
) -> impl Iterator<Item = Result<CastEvent, OpError>> + 'a {
    lines.enumerate().filter_map(move |(index, line)| {
        let number = index + 2;
        let line = match line {
            Ok(line) => line,
            Err(e) => return Some(Err(unreadable(path, number, e))),
        };
        cast::parse_line(&line)
            .map_err(|e| bad_line(path, number, e))
            .transpose()
    })
}

fn open(path: &Path) -> Result<impl Iterator<Item = std::io::Result<String>>, OpError> {
    let file = File::open(path)
        .map_err(|e| OpError::invalid("file", format!("cannot open {}: {e}", path.display())))?;
    Ok(BufReader::new(file).lines())
}

/// Refuse an output that is the recording itself (the same file, by device and inode, through any
/// symlink): drawing would destroy what it draws.
fn check_not_the_input(render: &Render) -> Result<(), OpError> {
    use std::os::unix::fs::MetadataExt;
    let (Ok(input), Ok(output)) = (
        std::fs::metadata(&render.file),
        std::fs::metadata(&render.output),
    ) else {
        return Ok(());
    };
    if input.dev() == output.dev() && input.ino() == output.ino() {
        return Err(OpError::invalid(
            "output",
            format!(
                "{} is the recording {} itself; render would destroy it: name another output",
                render.output.display(),
                render.file.display()
            ),
        ));
    }
    Ok(())
}

/// Check every line of the recording; its header, the canvas (the largest width and height the
/// terminal took), and the idle limit. Refuses an animation past [`MAX_DURATION_S`] before
/// anything is written.
fn survey(render: &Render) -> Result<(CastHeader, Size, f64), OpError> {
    let path = &render.file;
    let mut lines = open(path)?;
    let header = read_header(path, &mut lines)?;
    let idle_limit = render
        .idle_limit
        .or(header.idle_time_limit)
        .unwrap_or(DEFAULT_IDLE_LIMIT);
    let mut clock = PlaybackClock::new(header.version, Some(idle_limit), render.speed);
    let mut canvas = header.size;
    for event in events(path, lines) {
        let event = event?;
        clock.advance(event.time);
        if let EventKind::Resize(size) = event.kind {
            canvas = Size::new(canvas.cols.max(size.cols), canvas.rows.max(size.rows));
        }
    }
    let end = clock.now() + idle_limit / render.speed;
    if !(end.is_finite() && end <= MAX_DURATION_S) {
        let given = match render.idle_limit {
            Some(limit) => format!("--idle-limit {limit}"),
            None => match header.idle_time_limit {
                Some(limit) => format!("the file's idle_time_limit {limit}"),
                None => format!("the default idle limit {DEFAULT_IDLE_LIMIT}"),
            },
        };
        return Err(OpError::new(
            ErrorCode::LimitExceeded,
            format!(
                "{}: the animation would last {end:.0} s (with {given} and --speed {}), more than render's limit of {MAX_DURATION_S} s; cut pauses with a smaller --idle-limit or raise --speed",
                path.display(),
                render.speed
            ),
        ));
    }
    Ok((header, canvas, idle_limit))
}

/// Feed the recording to the sampler and each frame it gives to `sink`. Returns the number of
/// frames and when the animation ends: at the last event, or later so that the last frame stays
/// for the idle limit at least (a looping GIF rests on how the recording ended).
fn draw(
    render: &Render,
    header: &CastHeader,
    canvas: Size,
    idle_limit: f64,
    opts: &RenderOptions,
    sink: &mut Sink,
) -> Result<(usize, f64), OpError> {
    let mut lines = open(&render.file)?;
    read_header(&render.file, &mut lines)?;
    let mut clock = PlaybackClock::new(header.version, Some(idle_limit), render.speed);
    let mut sampler = FrameSampler::new(header.size, render.fps);
    let mut frames = 0;
    let mut last_at = 0.0;
    let mut show = |frame: screenpilot_screen::animation::Frame| -> Result<(), OpError> {
        let rgb = draw_frame(&frame.grid, canvas, opts).map_err(|e| {
            OpError::new(ErrorCode::RenderFailed, format!("cannot draw a frame: {e}"))
        })?;
        frames += 1;
        last_at = frame.at;
        sink.push(rgb, frame.at)
    };
    for event in events(&render.file, lines) {
        let event = event?;
        let at = clock.advance(event.time);
        if let Some(frame) = sampler.push(at, &event.kind) {
            show(frame)?;
        }
    }
    if let Some(frame) = sampler.finish() {
        show(frame)?;
    }
    let end = clock.now().max(last_at + idle_limit / render.speed);
    Ok((frames, end))
}

/// Where frames go.
enum Sink {
    Gif(GifWriter<BufWriter<File>>),
    Video(Ffmpeg),
}

impl Sink {
    fn start(
        render: &Render,
        path: &Path,
        format: Format,
        size: (u32, u32),
        opts: &RenderOptions,
    ) -> Result<Sink, OpError> {
        let codec = match format {
            Format::Gif => {
                let file = File::create(path).map_err(|e| {
                    OpError::invalid(
                        "output",
                        format!("cannot write {}: {e}", render.output.display()),
                    )
                })?;
                let writer = GifWriter::new(BufWriter::new(file), size.0, size.1)
                    .map_err(|e| OpError::invalid("font_px", e.to_string()))?;
                return Ok(Sink::Gif(writer));
            }
            Format::Mp4 => Codec::H264,
            Format::Webm => Codec::Vp9,
        };
        let background = Theme::named(opts.theme).background;
        Ffmpeg::start(path, codec, size, render.fps, background).map(Sink::Video)
    }

    fn push(&mut self, rgb: Vec<u8>, at: f64) -> Result<(), OpError> {
        match self {
            Sink::Gif(writer) => writer.push(rgb, at).map_err(gif_failed),
            Sink::Video(ffmpeg) => ffmpeg.push(rgb, at),
        }
    }

    /// Finish the file, ending the animation at `end` seconds.
    fn finish(self, end: f64) -> Result<(), OpError> {
        match self {
            Sink::Gif(writer) => {
                let (mut out, _) = writer.finish(end).map_err(gif_failed)?;
                out.flush()
                    .map_err(|e| OpError::new(ErrorCode::IoError, format!("writing the GIF: {e}")))
            }
            Sink::Video(ffmpeg) => ffmpeg.finish(end).map(|_| ()),
        }
    }
}

fn gif_failed(e: screenpilot_screen::animation::GifError) -> OpError {
    OpError::new(ErrorCode::RenderFailed, e.to_string())
}
