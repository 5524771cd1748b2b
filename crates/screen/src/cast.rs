//! Reading asciicast recordings, v2 and v3, one line at a time: what `screenpilot replay` plays and
//! `screenpilot render` draws. (Writing v3 is the session crate's: `record.rs`.)
//!
//! Lines are parsed as the caller reads them, so a long recording is never held whole and a damaged
//! line can be named by its number; the caller counts lines and owns the file. [`PlaybackClock`] turns
//! the two versions' event times into one timeline, with long pauses cut and a speed applied, so the
//! player and the renderer keep the same time.

use crate::geometry::Size;

/// Which asciicast version a file is, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CastVersion {
    /// Event times are seconds since the start.
    V2,
    /// Event times are seconds since the previous event.
    V3,
}

/// A recording's header, as far as playing or drawing it needs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CastHeader {
    pub version: CastVersion,
    /// The terminal's size when the recording began.
    pub size: Size,
    /// Pauses the recorder asked players to cut to this many seconds, if it did.
    pub idle_time_limit: Option<f64>,
}

/// One event line: its time field (see [`CastVersion`]) and what happened.
#[derive(Debug, Clone, PartialEq)]
pub struct CastEvent {
    pub time: f64,
    pub kind: EventKind,
}

/// What an event does to the screen.
#[derive(Debug, Clone, PartialEq)]
pub enum EventKind {
    /// The program wrote this text (code `o`).
    Output(String),
    /// The terminal took this size (code `r`, data `"COLSxROWS"`).
    Resize(Size),
    /// Input, markers, the exit status, codes of later versions: nothing to draw.
    Other,
}

/// What is wrong with a line; the caller adds the file and line number.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CastError {
    #[error("the file is empty, not an asciicast recording")]
    Empty,
    #[error("not an asciicast v2 or v3 recording: the first line is not a JSON header ({0})")]
    HeaderNotJson(String),
    #[error("not an asciicast v2 or v3 recording: the first line is not a JSON object")]
    HeaderNotObject,
    #[error("not an asciicast v2 or v3 recording: the header has no version")]
    NoVersion,
    #[error("not an asciicast v2 or v3 recording: version {0} (screenpilot reads 2 and 3; `asciinema convert` turns older ones into v2)")]
    UnknownVersion(u64),
    #[error("the v{version} header has no {field}")]
    NoSize { version: u8, field: &'static str },
    #[error("the header's {field} {value} is not a terminal size (1 to 65535)")]
    BadSize { field: &'static str, value: String },
    #[error("not JSON ({0}); {EVENT_SHAPE}")]
    EventNotJson(String),
    #[error("{EVENT_SHAPE}")]
    EventShape,
    #[error("the time {0} is not a number of seconds; {EVENT_SHAPE}")]
    EventTime(String),
    #[error("a resize is \"COLSxROWS\", not {0:?}")]
    ResizeData(String),
}

const EVENT_SHAPE: &str = "an event is [time, \"code\", \"data\"]";

/// Read the header line of an asciicast v2 or v3 file.
pub fn parse_header(line: &str) -> Result<CastHeader, CastError> {
    use serde_json::Value;
    let value: Value =
        serde_json::from_str(line).map_err(|e| CastError::HeaderNotJson(e.to_string()))?;
    if !value.is_object() {
        return Err(CastError::HeaderNotObject);
    }
    let (version, cols, rows) = match value["version"].as_u64() {
        Some(2) => (
            CastVersion::V2,
            ("width", &value["width"]),
            ("height", &value["height"]),
        ),
        Some(3) => (
            CastVersion::V3,
            ("term.cols", &value["term"]["cols"]),
            ("term.rows", &value["term"]["rows"]),
        ),
        Some(other) => return Err(CastError::UnknownVersion(other)),
        None => return Err(CastError::NoVersion),
    };
    let number = |(field, v): (&'static str, &Value)| -> Result<u16, CastError> {
        if v.is_null() {
            return Err(CastError::NoSize {
                version: if version == CastVersion::V2 { 2 } else { 3 },
                field,
            });
        }
        v.as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n > 0)
            .ok_or_else(|| CastError::BadSize {
                field,
                value: v.to_string(),
            })
    };
    Ok(CastHeader {
        version,
        size: Size::new(number(cols)?, number(rows)?),
        idle_time_limit: value["idle_time_limit"]
            .as_f64()
            .filter(|t| t.is_finite() && *t > 0.0),
    })
}

/// Read one line after the header: `None` for a blank line or a `#` comment (v3 allows them).
pub fn parse_line(line: &str) -> Result<Option<CastEvent>, CastError> {
    if line.trim().is_empty() || line.starts_with('#') {
        return Ok(None);
    }
    parse_event(line).map(Some)
}

/// Read one event line: `[time, code, data]`.
pub fn parse_event(line: &str) -> Result<CastEvent, CastError> {
    use serde_json::Value;
    let value: Value =
        serde_json::from_str(line).map_err(|e| CastError::EventNotJson(e.to_string()))?;
    let [time, code, data] = value.as_array().map(Vec::as_slice).unwrap_or_default() else {
        return Err(CastError::EventShape);
    };
    let time = time
        .as_f64()
        .filter(|t| t.is_finite() && *t >= 0.0)
        .ok_or_else(|| CastError::EventTime(time.to_string()))?;
    let (Some(code), Some(data)) = (code.as_str(), data.as_str()) else {
        return Err(CastError::EventShape);
    };
    let kind = match code {
        "o" => EventKind::Output(data.to_owned()),
        "r" => EventKind::Resize(
            parse_size(data).ok_or_else(|| CastError::ResizeData(data.to_owned()))?,
        ),
        _ => EventKind::Other,
    };
    Ok(CastEvent { time, kind })
}

/// `"COLSxROWS"`, both at least 1.
fn parse_size(text: &str) -> Option<Size> {
    let (cols, rows) = text.split_once('x')?;
    let cols: u16 = cols.trim().parse().ok()?;
    let rows: u16 = rows.trim().parse().ok()?;
    (cols > 0 && rows > 0).then(|| Size::new(cols, rows))
}

/// When each event is played, in seconds since playback began: pauses longer than the idle limit
/// are cut to it (in the recording's time), then everything is divided by the speed.
#[derive(Debug, Clone)]
pub struct PlaybackClock {
    version: CastVersion,
    idle_limit: Option<f64>,
    speed: f64,
    /// The previous event's time field (v2 times are absolute).
    previous: f64,
    now: f64,
}

impl PlaybackClock {
    /// `speed` must be positive and `idle_limit`, when given, positive: the callers check both, to
    /// name the option that was wrong.
    pub fn new(version: CastVersion, idle_limit: Option<f64>, speed: f64) -> PlaybackClock {
        PlaybackClock {
            version,
            idle_limit,
            speed,
            previous: 0.0,
            now: 0.0,
        }
    }

    /// The playback time of the next event, whose time field is `time`.
    pub fn advance(&mut self, time: f64) -> f64 {
        let mut pause = match self.version {
            CastVersion::V3 => time,
            // A v2 time earlier than the one before is a pause of nothing, not a step back.
            CastVersion::V2 => (time - self.previous).max(0.0),
        };
        self.previous = self.previous.max(time);
        if let Some(limit) = self.idle_limit {
            pause = pause.min(limit);
        }
        self.now += pause / self.speed;
        self.now
    }

    /// The playback time of the last event so far.
    pub fn now(&self) -> f64 {
        self.now
    }
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
            Ok(CastHeader {
                version: CastVersion::V3,
                size: Size::new(90, 20),
                idle_time_limit: Some(1.5)
            })
        );
        let v2 = parse_header(r#"{"version": 2, "width": 80, "height": 24}"#).unwrap();
        assert_eq!((v2.version, v2.size), (CastVersion::V2, Size::new(80, 24)));
        let message = |line: &str| parse_header(line).unwrap_err().to_string();
        assert!(message("{").contains("not a JSON header"));
        assert!(message("[1]").contains("not a JSON object"));
        assert!(message(r#"{"version": 1, "width": 80}"#).contains("version 1"));
        assert_eq!(
            message(r#"{"version": 3, "term": {}}"#),
            "the v3 header has no term.cols"
        );
        assert_eq!(
            message(r#"{"version": 2, "width": 80, "height": 70000}"#),
            "the header's height 70000 is not a terminal size (1 to 65535)"
        );
    }

    #[test]
    fn events_read_and_malformed_ones_say_what_an_event_is() {
        assert_eq!(
            parse_event(r#"[0.5, "o", "hi"]"#),
            Ok(CastEvent {
                time: 0.5,
                kind: EventKind::Output("hi".into())
            })
        );
        assert_eq!(
            parse_event(r#"[1, "r", "100x30"]"#).map(|e| e.kind),
            Ok(EventKind::Resize(Size::new(100, 30)))
        );
        assert_eq!(
            parse_event(r#"[1, "x", "0"]"#).map(|e| e.kind),
            Ok(EventKind::Other)
        );
        for bad in [r#"[0.5, "o"]"#, r#"{"o": 1}"#, r#"[-1, "o", ""]"#, "nope"] {
            let message = parse_event(bad).unwrap_err().to_string();
            assert!(message.contains("an event is"), "{bad}: {message}");
        }
        assert_eq!(
            parse_event(r#"[1, "r", "wide"]"#).unwrap_err().to_string(),
            "a resize is \"COLSxROWS\", not \"wide\""
        );
        assert_eq!(parse_line("  "), Ok(None));
        assert_eq!(parse_line("# a marker of the recorder"), Ok(None));
    }

    #[test]
    fn the_clock_cuts_pauses_then_applies_the_speed_in_both_versions() {
        let mut v3 = PlaybackClock::new(CastVersion::V3, Some(1.0), 2.0);
        let times: Vec<f64> = [1.0, 5.0, 0.5, 0.0].map(|t| v3.advance(t)).to_vec();
        assert_eq!(times, [0.5, 1.0, 1.25, 1.25]);
        let mut v2 = PlaybackClock::new(CastVersion::V2, None, 1.0);
        let times: Vec<f64> = [1.0, 3.0, 2.0, 4.0].map(|t| v2.advance(t)).to_vec();
        assert_eq!(times, [1.0, 3.0, 3.0, 4.0], "a step back is no pause");
        assert_eq!(v2.now(), 4.0);
    }
}
