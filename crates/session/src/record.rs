//! Recording a session as an asciicast v3 file, playable with `asciinema play` (3.x) and its web
//! player, and with `screenpilot replay`.
//!
//! The header carries the terminal's size, type and theme (the emulator's own colours, so a player
//! draws what a screenshot shows); events carry the interval since the previous event, so a file
//! stopped at any moment is complete. Output (`o`), resizes (`r`), the program's exit status (`x`)
//! and, when asked, the input sent to the program (`i`) are recorded. A recording started on a
//! running session opens with the screen as it is, painted from the emulator's cells.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

use screenpilot_screen::{Painter, Screen, Size, Theme, Viewport};

use crate::error::{Result, SessionError};
use crate::process::ExitInfo;
use crate::spec::Recording;

/// The terminal type recorded in the header: what every session's program is told (`TERM`).
const TERM_TYPE: &str = "xterm-256color";

/// Open the recording's file: a new one with the caller's permissions, or an existing one only when
/// `force` says so.
pub fn open_target(target: &Recording) -> Result<File> {
    use std::fs::OpenOptions;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let path = &target.path;
    let cannot = |e: std::io::Error| {
        SessionError::invalid("record", format!("cannot create {}: {e}", path.display()))
    };
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(target.mode)
        .open(path)
    {
        Ok(file) => {
            // The daemon's own umask applied too on creation; set exactly the caller's bits.
            file.set_permissions(std::fs::Permissions::from_mode(target.mode))
                .map_err(cannot)?;
            Ok(file)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && target.force => {
            OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)
                .map_err(cannot)
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(SessionError::invalid(
            "record",
            format!(
                "{} already exists; choose another file, or give force to replace it",
                path.display()
            ),
        )),
        Err(e) => Err(cannot(e)),
    }
}

/// The header line of a recording of a `size` terminal running `command`: `version` first, as
/// asciinema writes it, for readers that look at the start of the file.
pub fn header(size: Size, command: &[String], theme: &Theme) -> String {
    let timestamp = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let palette: Vec<String> = theme.ansi.iter().map(|c| c.hex()).collect();
    let term = serde_json::json!({
        "cols": size.cols,
        "rows": size.rows,
        "type": TERM_TYPE,
        "theme": {
            "fg": theme.foreground.hex(),
            "bg": theme.background.hex(),
            "palette": palette.join(":"),
        },
    });
    let command = serde_json::Value::from(shell_words::join(command));
    format!("{{\"version\":3,\"term\":{term},\"timestamp\":{timestamp},\"command\":{command}}}")
}

/// The bytes that open a recording started on a running session: the screen as the emulator holds
/// it (on the alternate screen when the program is there), then auto-wrap back on, as a program's
/// own output expects. What the cells do not show is not carried over: the pen, scroll region and
/// saved cursor the program set, and the normal screen under an alternate one.
pub fn opening(screen: &Screen) -> Vec<u8> {
    let mut bytes = Vec::new();
    if screen.alt_screen() {
        bytes.extend_from_slice(b"\x1b[?1049h");
    }
    let viewport = Viewport::whole(screen.size());
    bytes.extend(Painter::new().paint(&screen.cells(), &screen.modes(), viewport));
    bytes.extend_from_slice(b"\x1b[?7h");
    bytes
}

/// An open recording. Writes go straight to the file (one line per event, flushed), so a reader sees
/// every event as it happens and a crash loses nothing already recorded.
pub struct Recorder {
    out: BufWriter<File>,
    path: PathBuf,
    start: Instant,
    /// When the previous event happened, in microseconds since `start`: intervals are computed from
    /// whole microseconds, so rounding never accumulates over a long recording.
    last_us: u128,
    /// Record the input sent to the program (`i` events).
    input: bool,
    /// The start of a UTF-8 character split across two reads, kept for the next event.
    pending: Vec<u8>,
}

impl Recorder {
    /// Create the file `target` names (refusing an existing one unless `force`) and write the header
    /// for a `size` terminal running `command`.
    pub fn create(target: &Recording, size: Size, command: &[String]) -> Result<Recorder> {
        let file = open_target(target)?;
        Recorder::begin(file, target, size, command)
    }

    /// Write the header to `file`, already opened with [`open_target`].
    pub fn begin(
        file: File,
        target: &Recording,
        size: Size,
        command: &[String],
    ) -> Result<Recorder> {
        let mut out = BufWriter::new(file);
        let header = header(size, command, &Theme::dark());
        writeln!(out, "{header}")
            .and_then(|_| out.flush())
            .map_err(|e| SessionError::Io(format!("record: {}: {e}", target.path.display())))?;
        Ok(Recorder {
            out,
            path: target.path.clone(),
            start: Instant::now(),
            last_us: 0,
            input: target.input,
            pending: Vec::new(),
        })
    }

    /// Go on writing an existing recording at `path` (a session a daemon before this one recorded):
    /// new events are appended to it.
    pub fn resume(path: &Path, input: bool) -> Result<Recorder> {
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| SessionError::Io(format!("record: {}: {e}", path.display())))?;
        Ok(Recorder {
            out: BufWriter::new(file),
            path: path.to_owned(),
            start: Instant::now(),
            last_us: 0,
            input,
            pending: Vec::new(),
        })
    }

    /// Whether input is recorded too.
    pub fn records_input(&self) -> bool {
        self.input
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append program output. Errors are ignored: a full disk must not stop the session.
    pub fn output(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
        let valid_up_to = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            // An incomplete character at the end waits for the next read; invalid bytes go out as U+FFFD.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..valid_up_to]).into_owned();
        self.pending.drain(..valid_up_to);
        self.event("o", &text);
    }

    /// Append input sent to the program, when the recording was asked to keep input.
    pub fn input(&mut self, bytes: &[u8]) {
        if self.input {
            self.event("i", &String::from_utf8_lossy(bytes));
        }
    }

    pub fn resize(&mut self, size: Size) {
        self.event("r", &format!("{}x{}", size.cols, size.rows));
    }

    /// Append the program's exit status: its exit code, or 128 + the signal that ended it (as a
    /// shell reports it).
    pub fn exit(&mut self, exit: ExitInfo) {
        let status = match (exit.exit_code, exit.signal) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => return,
        };
        self.event("x", &status.to_string());
    }

    fn event(&mut self, code: &str, data: &str) {
        if data.is_empty() && code != "x" {
            return;
        }
        let now = self.start.elapsed().as_micros();
        let interval = now.saturating_sub(self.last_us);
        self.last_us = now;
        let data = serde_json::Value::from(data);
        let _ = writeln!(
            self.out,
            "[{}.{:06}, \"{code}\", {data}]",
            interval / 1_000_000,
            interval % 1_000_000
        )
        .and_then(|_| self.out.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test's files.
    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("screenpilot-record-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn recording(dir: &Path, input: bool) -> Recording {
        Recording {
            path: dir.join("t.cast"),
            mode: 0o600,
            force: false,
            input,
        }
    }

    fn lines(path: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn a_recording_is_asciicast_v3_with_intervals_resizes_and_the_exit_status() {
        let dir = scratch("v3");
        let target = recording(&dir, false);
        let argv = vec!["bash".to_owned(), "-c".to_owned(), "echo hi".to_owned()];
        let mut rec = Recorder::create(&target, Size::new(90, 20), &argv).unwrap();
        rec.output("é".as_bytes().split_at(1).0);
        rec.output(&"é".as_bytes()[1..]);
        rec.input(b"ignored");
        rec.resize(Size::new(100, 30));
        rec.exit(ExitInfo {
            exit_code: None,
            signal: Some(1),
        });
        drop(rec);
        let lines = lines(&target.path);
        let header = &lines[0];
        assert_eq!(header["version"], 3);
        assert_eq!(header["term"]["cols"], 90);
        assert_eq!(header["term"]["rows"], 20);
        assert_eq!(header["term"]["type"], "xterm-256color");
        assert_eq!(header["term"]["theme"]["bg"], "#16161c");
        assert_eq!(
            header["term"]["theme"]["palette"]
                .as_str()
                .unwrap()
                .split(':')
                .count(),
            16
        );
        assert_eq!(header["command"], "bash -c 'echo hi'");
        let events: Vec<(&str, &str)> = lines[1..]
            .iter()
            .map(|e| (e[1].as_str().unwrap(), e[2].as_str().unwrap()))
            .collect();
        // The split character is written whole, once; input is not kept unless asked.
        assert_eq!(events, [("o", "é"), ("r", "100x30"), ("x", "129")]);
        assert!(lines[1..].iter().all(|e| e[0].as_f64().unwrap() >= 0.0));
    }

    #[test]
    fn the_opening_of_a_late_recording_draws_the_screen_and_leaves_wrapping_on() {
        let size = Size::new(20, 4);
        let mut source = Screen::new(size, 100);
        source.feed(b"\x1b[?1049h\x1b[H\x1b[1;31mred\x1b[0m on the alternate screen");
        let mut player = Screen::new(size, 100);
        player.feed(&opening(&source));
        assert!(player.alt_screen());
        assert_eq!(player.text(), source.text());
        assert_eq!(player.cursor(), source.cursor());
        // What the program writes next lands the same way on both, wrapping included.
        let next = b"\r\n0123456789012345678901234";
        source.feed(next);
        player.feed(next);
        assert_eq!(player.text(), source.text());
    }

    #[test]
    fn input_is_recorded_only_when_asked() {
        let dir = scratch("input");
        let target = recording(&dir, true);
        let mut rec = Recorder::create(&target, Size::new(80, 24), &["cat".to_owned()]).unwrap();
        rec.input(b"typed\r");
        drop(rec);
        let lines = lines(&target.path);
        assert_eq!(lines[1][1], "i");
        assert_eq!(lines[1][2], "typed\r");
    }

    #[test]
    fn an_existing_file_is_kept_unless_forced() {
        let dir = scratch("force");
        let mut target = recording(&dir, false);
        std::fs::write(&target.path, "precious").unwrap();
        let refused = Recorder::create(&target, Size::new(80, 24), &["cat".to_owned()]);
        assert!(matches!(refused, Err(SessionError::Invalid { .. })));
        assert_eq!(std::fs::read_to_string(&target.path).unwrap(), "precious");
        target.force = true;
        Recorder::create(&target, Size::new(80, 24), &["cat".to_owned()]).unwrap();
        assert!(std::fs::read_to_string(&target.path)
            .unwrap()
            .starts_with("{\"version\":3,"));
    }
}
