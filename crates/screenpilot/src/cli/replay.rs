//! `screenpilot replay FILE.cast`: play an asciicast v2 or v3 recording in this terminal, with the
//! timing it was recorded with (faster with `--speed`, long pauses cut with `--idle-limit`).
//!
//! The file is read as it plays, so a long recording starts at once and a damaged line is reported
//! (by its number) when playback reaches it. Waiting between events is the player's job: one timer
//! per event, set for when the event is due, so playback keeps to the recorded clock however long
//! writing to the terminal takes. Ctrl-C stops it.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use screenpilot_screen::cast::{self, CastError, CastHeader, EventKind, PlaybackClock};

use crate::ops::{ErrorCode, OpError};

/// What `replay` plays and how fast.
#[derive(Debug, Clone)]
pub struct Replay {
    pub file: PathBuf,
    /// Playback speed: 2 plays twice as fast.
    pub speed: f64,
    /// Pauses longer than this many seconds are cut to it (default: the file's `idle_time_limit`).
    pub idle_limit: Option<f64>,
}

/// Input modes a recording may leave on, switched off when playback ends or is stopped, so the
/// person's terminal does not go on sending mouse reports or pasting in brackets. The screen itself
/// is left as the recording left it.
const GIVE_BACK: &str = "\x1b[0m\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1004l\x1b[?2004l\x1b[?1l\x1b>\x1b[?25h";

/// Play `replay.file` to stdout. Returns the exit status: 0 when it played to the end, 130 when
/// stopped with Ctrl-C.
pub fn run(replay: &Replay) -> Result<i32, OpError> {
    if !(replay.speed.is_finite() && replay.speed > 0.0) {
        return Err(OpError::invalid(
            "speed",
            format!("--speed {} is not a positive number", replay.speed),
        ));
    }
    if let Some(limit) = replay.idle_limit {
        if !(limit.is_finite() && limit > 0.0) {
            return Err(OpError::invalid(
                "idle_limit",
                format!("--idle-limit {limit} is not a positive number of seconds"),
            ));
        }
    }
    let file = File::open(&replay.file).map_err(|e| {
        OpError::invalid(
            "file",
            format!("cannot open {}: {e}", replay.file.display()),
        )
    })?;
    let mut lines = BufReader::new(file).lines();
    let header = read_header(&replay.file, &mut lines)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            OpError::new(
                ErrorCode::Runtime,
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let played = runtime.block_on(play(replay, &header, lines, &mut out));
    let _ = out
        .write_all(GIVE_BACK.as_bytes())
        .and_then(|_| out.flush());
    played
}

/// Play the events after the header, each when it is due.
async fn play(
    replay: &Replay,
    header: &CastHeader,
    lines: impl Iterator<Item = std::io::Result<String>>,
    out: &mut impl Write,
) -> Result<i32, OpError> {
    let idle_limit = replay.idle_limit.or(header.idle_time_limit);
    // Ctrl-C is caught from here on (before anything is shown), so stopping always gives the
    // terminal its modes back.
    let mut ctrl_c = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| {
            OpError::new(
                ErrorCode::Runtime,
                format!("replay: cannot catch Ctrl-C: {e}"),
            )
        })?;
    // The terminal cannot be resized from here; xterm (with its window operations allowed) takes
    // this request, other terminals ignore it and show the recording at their own size.
    let resize = |size: screenpilot_screen::Size| {
        format!("\x1b[8;{};{}t", size.rows, size.cols).into_bytes()
    };
    if !put(out, &resize(header.size))? {
        return Ok(0);
    }
    let start = tokio::time::Instant::now();
    let mut clock = PlaybackClock::new(header.version, idle_limit, replay.speed);
    for (index, line) in lines.enumerate() {
        let number = index + 2;
        let line = line.map_err(|e| unreadable(&replay.file, number, e))?;
        let Some(event) = cast::parse_line(&line).map_err(|e| bad_line(&replay.file, number, e))?
        else {
            continue;
        };
        let due = start + Duration::from_secs_f64(clock.advance(event.time));
        if due > tokio::time::Instant::now() {
            if !put(out, b"")? {
                return Ok(0);
            }
            tokio::select! {
                _ = tokio::time::sleep_until(due) => {}
                _ = ctrl_c.recv() => return Ok(130),
            }
        }
        let bytes = match event.kind {
            EventKind::Output(text) => text.into_bytes(),
            EventKind::Resize(size) => resize(size),
            // Input, markers and the exit status change nothing on the screen.
            EventKind::Other => continue,
        };
        if !put(out, &bytes)? {
            return Ok(0);
        }
    }
    put(out, b"")?;
    Ok(0)
}

/// Write `bytes` to the terminal, and flush when given none. `Ok(false)` when the reader has gone
/// (`replay demo.cast | head`): playback ends quietly then, as any filter's does.
fn put(out: &mut impl Write, bytes: &[u8]) -> Result<bool, OpError> {
    let written = if bytes.is_empty() {
        out.flush()
    } else {
        out.write_all(bytes)
    };
    match written {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(OpError::new(
            ErrorCode::IoError,
            format!("replay: writing to the terminal: {e}"),
        )),
    }
}

/// Read a recording's first line, its header; errors name the file and line 1.
pub(crate) fn read_header(
    path: &Path,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
) -> Result<CastHeader, OpError> {
    let first = match lines.next() {
        Some(line) => line.map_err(|e| unreadable(path, 1, e))?,
        None => return Err(bad_line(path, 1, CastError::Empty)),
    };
    cast::parse_header(&first).map_err(|e| bad_line(path, 1, e))
}

/// A recording's line `number` is wrong: `file: PATH:N: why`.
pub(crate) fn bad_line(path: &Path, number: usize, why: impl std::fmt::Display) -> OpError {
    OpError::invalid("file", format!("{}:{number}: {why}", path.display()))
}

pub(crate) fn unreadable(path: &Path, number: usize, e: std::io::Error) -> OpError {
    bad_line(path, number, format_args!("cannot read this line: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use screenpilot_screen::cast::CastVersion;
    use screenpilot_screen::Size;

    #[tokio::test(start_paused = true)]
    async fn playback_keeps_the_recorded_clock_scaled_by_speed_with_pauses_cut() {
        let replay = Replay {
            file: PathBuf::from("t.cast"),
            speed: 2.0,
            idle_limit: Some(1.0),
        };
        let header = CastHeader {
            version: CastVersion::V3,
            size: Size::new(10, 3),
            idle_time_limit: None,
        };
        let lines = [
            r#"[1.0, "o", "a"]"#,
            "# a comment",
            r#"[5.0, "o", "b"]"#,
            r#"[0.5, "r", "20x5"]"#,
            r#"[0.0, "x", "0"]"#,
        ]
        .map(|l| Ok(l.to_owned()));
        let mut out = Vec::new();
        let begun = tokio::time::Instant::now();
        let status = play(&replay, &header, lines.into_iter(), &mut out).await;
        assert_eq!(status.map_err(|e| e.message), Ok(0));
        // 1 s + 5 s cut to 1 s + 0.5 s, at double speed.
        assert_eq!(begun.elapsed(), Duration::from_millis(1250));
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\x1b[8;3;10tab\x1b[8;5;20t"
        );
    }

    #[tokio::test]
    async fn a_bad_line_is_named_by_its_number() {
        let replay = Replay {
            file: PathBuf::from("t.cast"),
            speed: 1000.0,
            idle_limit: None,
        };
        let header = CastHeader {
            version: CastVersion::V2,
            size: Size::new(10, 3),
            idle_time_limit: None,
        };
        let lines = [r#"[0.1, "o", "a"]"#, r#"[0.2, "o"]"#].map(|l| Ok(l.to_owned()));
        let error = play(&replay, &header, lines.into_iter(), &mut Vec::new())
            .await
            .unwrap_err();
        assert!(error.message.contains("t.cast:3: "), "{}", error.message);
    }
}
