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

use serde_json::Value;

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

/// Which asciicast version a file is, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    /// Event times are seconds since the start.
    V2,
    /// Event times are seconds since the previous event.
    V3,
}

/// A recording's header, as far as playing it needs.
#[derive(Debug, Clone, PartialEq)]
struct Header {
    version: Version,
    cols: u64,
    rows: u64,
    idle_time_limit: Option<f64>,
}

/// One event: its time field, code and data.
#[derive(Debug, Clone, PartialEq)]
struct Event {
    time: f64,
    code: String,
    data: String,
}

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
    let first = match lines.next() {
        Some(line) => line.map_err(|e| unreadable(&replay.file, 1, e))?,
        None => {
            return Err(bad_line(
                &replay.file,
                1,
                "the file is empty, not an asciicast recording",
            ))
        }
    };
    let header = parse_header(&first).map_err(|m| bad_line(&replay.file, 1, &m))?;
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
    header: &Header,
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
    let resize = |cols, rows| format!("\x1b[8;{rows};{cols}t").into_bytes();
    if !put(out, &resize(header.cols, header.rows))? {
        return Ok(0);
    }
    let start = tokio::time::Instant::now();
    let mut clock = 0.0f64;
    let mut previous = 0.0f64;
    for (index, line) in lines.enumerate() {
        let number = index + 2;
        let line = line.map_err(|e| unreadable(&replay.file, number, e))?;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let event = parse_event(&line).map_err(|m| bad_line(&replay.file, number, &m))?;
        let mut pause = match header.version {
            Version::V3 => event.time,
            Version::V2 => (event.time - previous).max(0.0),
        };
        previous = event.time;
        if let Some(limit) = idle_limit {
            pause = pause.min(limit);
        }
        clock += pause / replay.speed;
        let due = start + Duration::from_secs_f64(clock);
        if due > tokio::time::Instant::now() {
            if !put(out, b"")? {
                return Ok(0);
            }
            tokio::select! {
                _ = tokio::time::sleep_until(due) => {}
                _ = ctrl_c.recv() => return Ok(130),
            }
        }
        let bytes = match event.code.as_str() {
            "o" => event.data.into_bytes(),
            "r" => {
                let (cols, rows) = parse_size(&event.data)
                    .ok_or_else(|| bad_line(&replay.file, number, "a resize is \"COLSxROWS\""))?;
                resize(u64::from(cols), u64::from(rows))
            }
            // Input, markers and the exit status change nothing on the screen.
            _ => continue,
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

fn bad_line(path: &Path, number: usize, message: &str) -> OpError {
    OpError::invalid("file", format!("{}:{number}: {message}", path.display()))
}

fn unreadable(path: &Path, number: usize, e: std::io::Error) -> OpError {
    bad_line(path, number, &format!("cannot read this line: {e}"))
}

/// Read the header line of an asciicast v2 or v3 file.
fn parse_header(line: &str) -> Result<Header, String> {
    let not_asciicast = "not an asciicast v2 or v3 recording";
    let value: Value = serde_json::from_str(line)
        .map_err(|e| format!("{not_asciicast}: the first line is not a JSON header ({e})"))?;
    if !value.is_object() {
        return Err(format!(
            "{not_asciicast}: the first line is not a JSON object"
        ));
    }
    let number = |v: &Value| v.as_u64().filter(|n| *n > 0);
    let idle_time_limit = value["idle_time_limit"].as_f64();
    match value["version"].as_u64() {
        Some(2) => Ok(Header {
            version: Version::V2,
            cols: number(&value["width"]).ok_or("the v2 header has no width")?,
            rows: number(&value["height"]).ok_or("the v2 header has no height")?,
            idle_time_limit,
        }),
        Some(3) => Ok(Header {
            version: Version::V3,
            cols: number(&value["term"]["cols"]).ok_or("the v3 header has no term.cols")?,
            rows: number(&value["term"]["rows"]).ok_or("the v3 header has no term.rows")?,
            idle_time_limit,
        }),
        Some(other) => Err(format!(
            "{not_asciicast}: version {other} (this player reads 2 and 3; `asciinema convert` turns older ones into v2)"
        )),
        None => Err(format!("{not_asciicast}: the header has no version")),
    }
}

/// Read one event line: `[time, code, data]`.
fn parse_event(line: &str) -> Result<Event, String> {
    let shape = "an event is [time, \"code\", \"data\"]";
    let value: Value =
        serde_json::from_str(line).map_err(|e| format!("not JSON ({e}); {shape}"))?;
    let [time, code, data] = value.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(shape.to_owned());
    };
    let time = time
        .as_f64()
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| format!("the time {time} is not a number of seconds; {shape}"))?;
    let (Some(code), Some(data)) = (code.as_str(), data.as_str()) else {
        return Err(shape.to_owned());
    };
    Ok(Event {
        time,
        code: code.to_owned(),
        data: data.to_owned(),
    })
}

fn parse_size(text: &str) -> Option<(u16, u16)> {
    let (cols, rows) = text.split_once('x')?;
    Some((cols.trim().parse().ok()?, rows.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_of_both_versions_read_and_others_are_named() {
        let v3 =
            parse_header(r#"{"version":3,"term":{"cols":90,"rows":20},"idle_time_limit":1.5}"#);
        assert_eq!(
            v3,
            Ok(Header {
                version: Version::V3,
                cols: 90,
                rows: 20,
                idle_time_limit: Some(1.5)
            })
        );
        let v2 = parse_header(r#"{"version": 2, "width": 80, "height": 24}"#).unwrap();
        assert_eq!((v2.version, v2.cols, v2.rows), (Version::V2, 80, 24));
        assert!(parse_header("{").unwrap_err().contains("not a JSON header"));
        assert!(parse_header(r#"{"version": 1, "width": 80}"#)
            .unwrap_err()
            .contains("version 1"));
        assert!(parse_header(r#"{"version": 3, "term": {}}"#)
            .unwrap_err()
            .contains("term.cols"));
    }

    #[test]
    fn events_read_and_malformed_ones_say_what_an_event_is() {
        assert_eq!(
            parse_event(r#"[0.5, "o", "hi"]"#),
            Ok(Event {
                time: 0.5,
                code: "o".into(),
                data: "hi".into()
            })
        );
        for bad in [r#"[0.5, "o"]"#, r#"{"o": 1}"#, r#"[-1, "o", ""]"#, "nope"] {
            assert!(
                parse_event(bad).unwrap_err().contains("an event is"),
                "{bad}"
            );
        }
    }

    #[tokio::test(start_paused = true)]
    async fn playback_keeps_the_recorded_clock_scaled_by_speed_with_pauses_cut() {
        let replay = Replay {
            file: PathBuf::from("t.cast"),
            speed: 2.0,
            idle_limit: Some(1.0),
        };
        let header = Header {
            version: Version::V3,
            cols: 10,
            rows: 3,
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
        let header = Header {
            version: Version::V2,
            cols: 10,
            rows: 3,
            idle_time_limit: None,
        };
        let lines = [r#"[0.1, "o", "a"]"#, r#"[0.2, "o"]"#].map(|l| Ok(l.to_owned()));
        let error = play(&replay, &header, lines.into_iter(), &mut Vec::new())
            .await
            .unwrap_err();
        assert!(error.message.contains("t.cast:3: "), "{}", error.message);
    }
}
