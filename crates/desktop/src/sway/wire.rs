//! The sway (i3) IPC wire format, over a Unix socket: each message is the magic `i3-ipc`, the
//! payload's length and its type (both u32, native byte order), then a JSON payload. Replies carry
//! the type of the request; events have the high bit set.
//!
//! Why by hand and blocking: the protocol is this header and JSON, and each call waits for one
//! answer under one deadline; an async IPC crate would bring a runtime of its own for nothing.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{DesktopError, Result};

pub const MAGIC: &[u8; 6] = b"i3-ipc";
pub const HEADER_LEN: usize = 14;
/// A reply bigger than this is refused (a tree of thousands of windows is a few MB).
pub const MAX_PAYLOAD: usize = 64 << 20;

/// Message types we send (`ipc.h` of sway).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Request {
    RunCommand = 0,
    Subscribe = 2,
    GetOutputs = 3,
    GetTree = 4,
    GetVersion = 7,
}

/// Events have this bit set in their type.
pub const EVENT_BIT: u32 = 1 << 31;

/// One message: the header and its payload.
pub fn encode(kind: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
    out.extend_from_slice(&kind.to_ne_bytes());
    out.extend_from_slice(payload);
    out
}

/// Split the first whole message off `buf`: its type and payload, and how many bytes it took.
/// `Ok(None)` when `buf` does not hold a whole message yet.
pub fn decode(buf: &[u8]) -> Result<Option<(u32, &[u8], usize)>> {
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    if &buf[..6] != MAGIC {
        return Err(DesktopError::Compositor(
            "the IPC socket answered without the i3-ipc magic (is this sway's socket?)".into(),
        ));
    }
    let len = u32::from_ne_bytes([buf[6], buf[7], buf[8], buf[9]]) as usize;
    let kind = u32::from_ne_bytes([buf[10], buf[11], buf[12], buf[13]]);
    if len > MAX_PAYLOAD {
        return Err(DesktopError::Compositor(format!(
            "an IPC message of {len} bytes is past the {MAX_PAYLOAD}-byte limit"
        )));
    }
    if buf.len() < HEADER_LEN + len {
        return Ok(None);
    }
    Ok(Some((
        kind,
        &buf[HEADER_LEN..HEADER_LEN + len],
        HEADER_LEN + len,
    )))
}

/// A blocking connection to sway's IPC socket.
#[derive(Debug)]
pub struct Wire {
    stream: UnixStream,
    buf: Vec<u8>,
}

impl Wire {
    pub fn connect(path: &Path) -> Result<Wire> {
        let stream = UnixStream::connect(path).map_err(|e| {
            DesktopError::Connection(format!(
                "cannot connect to sway's IPC socket {}: {e}",
                path.display()
            ))
        })?;
        Ok(Wire {
            stream,
            buf: Vec::new(),
        })
    }

    pub fn stream(&self) -> &UnixStream {
        &self.stream
    }

    /// Send one request and read its reply (its JSON payload), all within `limit`.
    pub fn call(&mut self, request: Request, payload: &str, limit: Duration) -> Result<Vec<u8>> {
        let budget = Budget {
            deadline: Instant::now() + limit,
            limit,
            what: format!("sway IPC {request:?}"),
        };
        self.send(request as u32, payload.as_bytes(), &budget)?;
        loop {
            let (kind, body) = self.receive(&budget)?;
            // A subscribed connection may see events before the reply: they are not ours to read.
            if kind & EVENT_BIT != 0 {
                continue;
            }
            if kind != request as u32 {
                return Err(DesktopError::Compositor(format!(
                    "asked {request:?}, sway answered message type {kind}"
                )));
            }
            return Ok(body);
        }
    }

    fn send(&mut self, kind: u32, payload: &[u8], budget: &Budget) -> Result<()> {
        let message = encode(kind, payload);
        self.stream
            .set_write_timeout(Some(budget.left()?))
            .map_err(io_error)?;
        self.stream
            .write_all(&message)
            .map_err(|e| budget.broken(e))
    }

    /// The next whole message (type, payload), within the budget.
    fn receive(&mut self, budget: &Budget) -> Result<(u32, Vec<u8>)> {
        loop {
            if let Some((kind, body, used)) = decode(&self.buf)? {
                let body = body.to_vec();
                self.buf.drain(..used);
                return Ok((kind, body));
            }
            self.stream
                .set_read_timeout(Some(budget.left()?))
                .map_err(io_error)?;
            let mut chunk = [0u8; 16 * 1024];
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    return Err(DesktopError::Connection(format!(
                        "{}: sway closed its IPC connection (it exited?)",
                        budget.what
                    )))
                }
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(budget.broken(e)),
            }
        }
    }

    /// Read what the socket holds now without blocking; false when sway closed it.
    pub fn read_available(&mut self) -> Result<bool> {
        self.stream.set_nonblocking(true).map_err(io_error)?;
        let mut chunk = [0u8; 16 * 1024];
        let open = loop {
            match self.stream.read(&mut chunk) {
                Ok(0) => break false,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break true,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break false,
            }
        };
        self.stream.set_nonblocking(false).map_err(io_error)?;
        Ok(open)
    }

    /// Take the whole messages read so far (types only: events are counted, not read).
    pub fn take_messages(&mut self) -> Result<Vec<u32>> {
        let mut kinds = Vec::new();
        while let Some((kind, _, used)) = decode(&self.buf)? {
            kinds.push(kind);
            self.buf.drain(..used);
        }
        Ok(kinds)
    }
}

/// One call's deadline, its limit and its name, for errors.
struct Budget {
    deadline: Instant,
    limit: Duration,
    what: String,
}

impl Budget {
    fn timeout(&self) -> DesktopError {
        DesktopError::Timeout {
            what: self.what.clone(),
            limit: self.limit,
        }
    }

    /// Time left, or a timeout error naming the call.
    fn left(&self) -> Result<Duration> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.timeout());
        }
        // A zero timeout means "block forever" to a socket: never hand it one.
        Ok(left.max(Duration::from_millis(1)))
    }

    fn broken(&self, e: std::io::Error) -> DesktopError {
        match e.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => self.timeout(),
            _ => DesktopError::Connection(format!("{}: {e}", self.what)),
        }
    }
}

fn io_error(e: std::io::Error) -> DesktopError {
    DesktopError::Io(format!("sway IPC socket: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_wait_for_their_whole_payload() {
        let mut bytes = encode(4, b"{}");
        assert_eq!(&bytes[..6], b"i3-ipc");
        assert_eq!(bytes.len(), HEADER_LEN + 2);
        bytes.extend_from_slice(&encode(EVENT_BIT | 3, b"[1]"));
        let (kind, body, used) = decode(&bytes).expect("valid").expect("whole");
        assert_eq!((kind, body, used), (4, &b"{}"[..], HEADER_LEN + 2));
        let rest = &bytes[used..];
        assert_eq!(decode(&rest[..rest.len() - 1]).expect("valid"), None);
        let (kind, body, _) = decode(rest).expect("valid").expect("whole");
        assert_eq!((kind, body), (EVENT_BIT | 3, &b"[1]"[..]));
    }

    #[test]
    fn a_foreign_socket_is_told_apart() {
        let err = decode(b"HTTP/1.1 400 Bad").expect_err("no magic");
        assert!(err.to_string().contains("i3-ipc"), "{err}");
    }
}
