//! Recording a session's output as an asciicast v2 file, playable with `asciinema play`.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use screenpilot_screen::Size;

use crate::error::{Result, SessionError};

pub struct Recorder {
    out: BufWriter<File>,
    start: Instant,
    /// The start of a UTF-8 character split across two reads, kept for the next event.
    pending: Vec<u8>,
}

impl Recorder {
    pub fn create(path: &Path, size: Size, command: &[String]) -> Result<Recorder> {
        let file = File::create(path).map_err(|e| {
            SessionError::invalid("record", format!("cannot create {}: {e}", path.display()))
        })?;
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
