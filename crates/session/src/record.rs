//! Recording a session's output as an asciicast v2 file, playable with `asciinema play`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::time::Instant;

use screenpilot_screen::Size;

use crate::error::{Result, SessionError};
use crate::spec::Recording;

/// Open the recording's file: a new one with the caller's permissions, or an existing one only when
/// `force` says so.
fn open_target(target: &Recording) -> Result<File> {
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

pub struct Recorder {
    out: BufWriter<File>,
    start: Instant,
    /// The start of a UTF-8 character split across two reads, kept for the next event.
    pending: Vec<u8>,
}

impl Recorder {
    pub fn create(target: &Recording, size: Size, command: &[String]) -> Result<Recorder> {
        let file = open_target(target)?;
        let mut out = BufWriter::new(file);
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let header = serde_json::json!({
            "version": 2,
            "width": size.cols,
            "height": size.rows,
            "timestamp": timestamp,
            "command": shell_words::join(command),
            "env": {"TERM": "xterm-256color"},
        });
        writeln!(out, "{header}")
            .and_then(|_| out.flush())
            .map_err(|e| SessionError::Io(format!("record: {e}")))?;
        Ok(Recorder {
            out,
            start: Instant::now(),
            pending: Vec::new(),
        })
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

    pub fn resize(&mut self, size: Size) {
        self.event("r", &format!("{}x{}", size.cols, size.rows));
    }

    fn event(&mut self, kind: &str, data: &str) {
        if data.is_empty() {
            return;
        }
        let line = serde_json::json!([self.start.elapsed().as_secs_f64(), kind, data]);
        let _ = writeln!(self.out, "{line}").and_then(|_| self.out.flush());
    }
}
