//! What a client's connection is made of: the two directions of a daemon's socket or of a link
//! command's pipes, the end of what that command said on stderr, and how a final answer reads.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite};

use crate::protocol::{Response, MAX_ANSWER_BYTES};
use crate::wire::error::{ErrorCode, OpError};

/// The most of the link command's stderr kept for messages.
const TAIL_BYTES: usize = 2048;

pub(super) type Writer = Box<dyn AsyncWrite + Send + Unpin>;

/// One connection: what is written to it, and what is read from it.
pub struct Wire {
    pub(super) writer: Writer,
    pub(super) feed: Feed,
}

/// The reading side of a connection, and for a remote link the command that carries it.
pub(super) struct Feed {
    pub(super) reader: Box<dyn AsyncBufRead + Send + Unpin>,
    pub(super) child: Option<tokio::process::Child>,
    pub(super) tail: Option<Tail>,
    /// The link command's process group (it leads its own): ended, all of it, with the feed, so a
    /// bridge's children (a `sleep` in a script, an ssh multiplexer) never outlive their link.
    pub(super) group: Option<i32>,
}

impl Drop for Feed {
    fn drop(&mut self) {
        end_group(self.group);
    }
}

/// End the link command's whole process group (it leads its own), if it has one.
pub(super) fn end_group(group: Option<i32>) {
    if let Some(group) = group.filter(|g| *g > 1) {
        // SAFETY: killpg only sends a signal; the group is the one the link command leads.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
}

impl Wire {
    pub(super) fn over_socket(stream: tokio::net::UnixStream) -> Wire {
        let (read, write) = stream.into_split();
        Wire {
            writer: Box::new(write),
            feed: Feed {
                reader: Box::new(tokio::io::BufReader::new(read)),
                child: None,
                tail: None,
                group: None,
            },
        }
    }
}

/// The end of what the link command wrote to stderr.
#[derive(Clone, Default)]
pub struct Tail(Arc<Mutex<VecDeque<u8>>>);

impl Tail {
    pub(super) fn push(&self, bytes: &[u8]) {
        let mut tail = self.0.lock().unwrap_or_else(|p| p.into_inner());
        tail.extend(bytes);
        let over = tail.len().saturating_sub(TAIL_BYTES);
        tail.drain(..over);
    }

    /// Its last lines, trimmed; empty when it said nothing.
    pub fn text(&self) -> String {
        let tail = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let bytes: Vec<u8> = tail.iter().copied().collect();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        lines[lines.len().saturating_sub(4)..].join(" / ")
    }
}

/// What one read of a daemon's or a link's answers gave.
pub(super) enum Read {
    /// A line, in the buffer.
    Line,
    /// The end of the connection (or a read error: the same to the caller).
    End,
    /// A line past [`MAX_ANSWER_BYTES`]: the link is to be dropped (what follows cannot be trusted);
    /// what was sent, for the message.
    TooLong(String),
}

/// Read one line of answers into `line`, never holding more than [`MAX_ANSWER_BYTES`] of it.
pub(super) async fn read_answer_line<R: AsyncBufRead + Unpin + ?Sized>(
    reader: &mut R,
    line: &mut Vec<u8>,
) -> Read {
    line.clear();
    let mut limited = (&mut *reader).take(MAX_ANSWER_BYTES as u64 + 1);
    match limited.read_until(b'\n', line).await {
        Ok(0) | Err(_) => Read::End,
        Ok(n) if n > MAX_ANSWER_BYTES => {
            line.clear();
            line.shrink_to_fit();
            Read::TooLong(format!(
                "a line longer than {MAX_ANSWER_BYTES} bytes, the most an answer may be"
            ))
        }
        Ok(_) => Read::Line,
    }
}

/// The outcome a final (non-progress) response carries.
pub(super) fn final_answer(response: Response) -> Result<Value, OpError> {
    match (response.result, response.error) {
        (_, Some(error)) => Err(error),
        (Some(result), None) => Ok(result),
        (None, None) => Ok(Value::Null),
    }
}

/// Refuse a request the daemon would refuse by closing the connection (every other call on it would
/// end `daemon_gone`): said here, it is one clear error and the connection lives on.
pub(crate) fn check_request_size(line: &[u8]) -> Result<(), OpError> {
    use crate::protocol::MAX_REQUEST_BYTES;
    if line.len() >= MAX_REQUEST_BYTES {
        return Err(OpError::new(
            ErrorCode::LimitExceeded,
            format!(
                "request: {} bytes, more than the {MAX_REQUEST_BYTES} a request to the daemon may be; nothing was sent",
                line.len() + 1
            ),
        ));
    }
    Ok(())
}
