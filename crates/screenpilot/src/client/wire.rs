//! What a client's connection is made of: the two directions of a daemon's socket or of a link
//! command's pipes, the end of what that command said on stderr, and how a final answer reads.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncWrite};

use crate::ops::OpError;
use crate::protocol::Response;

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

/// The outcome a final (non-progress) response carries.
pub(super) fn final_answer(response: Response) -> Result<Value, OpError> {
    match (response.result, response.error) {
        (_, Some(error)) => Err(error),
        (Some(result), None) => Ok(result),
        (None, None) => Ok(Value::Null),
    }
}
