//! The side channel to the probe: one unix socket per app, JSON lines both ways.
//!
//! The daemon listens on a fresh socket in its private directory and accepts exactly one peer: the
//! process it just started, or one in its session (checked by pid and uid). Requests carry an `id`;
//! the probe answers each with `{id, ok, result | error}`, and announces `ready`, `error` and `exit`
//! as `{event, ...}` lines. A closed socket means the app's process is gone.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{UnixListener, UnixStream};

/// How the app ended, as the probe saw it (the process's own status comes from the session).
#[derive(Debug, Clone, Default, serde::Serialize, Deserialize)]
pub struct AppExit {
    /// Textual's return code: 0, or 1 after an unhandled exception; `None` if it never set one.
    pub return_code: Option<i64>,
    /// The value passed to `app.exit(...)`, as JSON (non-JSON values as their repr).
    pub return_value: Value,
    /// `repr()` of the return value.
    pub return_repr: Option<String>,
}

/// Why a request got no answer.
#[derive(Debug)]
pub enum LinkError {
    /// The app ended (its exit report, when it managed to send one).
    Exited(Option<AppExit>),
    /// No answer within the limit.
    Timeout,
    /// The probe refused or failed: its code and message.
    Probe {
        code: String,
        message: String,
    },
    Io(String),
}

/// A socket the probe will connect to; removed when dropped.
pub struct Rendezvous {
    pub path: PathBuf,
    listener: UnixListener,
}

impl Rendezvous {
    pub fn bind(path: PathBuf) -> std::io::Result<Rendezvous> {
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        Ok(Rendezvous { path, listener })
    }

    /// Accept the connection of process `pid` or a process in its session (others are dropped). The
    /// interpreter may be a wrapper script that runs Python as its child rather than exec-ing it; the
    /// app's session leader is `pid`, as the pty spawn starts a new session.
    pub async fn accept(&self, pid: i32) -> std::io::Result<Link> {
        let uid = rustix::process::getuid().as_raw();
        let in_session = |peer: i32| {
            peer == pid
                || rustix::process::Pid::from_raw(peer)
                    .and_then(|peer| rustix::process::getsid(Some(peer)).ok())
                    .is_some_and(|sid| sid.as_raw_nonzero().get() == pid)
        };
        loop {
            let (stream, _) = self.listener.accept().await?;
            let allowed = stream
                .peer_cred()
                .map(|cred| cred.uid() == uid && cred.pid().is_some_and(in_session))
                .unwrap_or(false);
            if allowed {
                let _ = std::fs::remove_file(&self.path);
                return Ok(Link::new(stream));
            }
        }
    }
}

impl Drop for Rendezvous {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Does `path` fit in a unix socket address (108 bytes with the NUL)?
pub fn fits_socket_path(path: &Path) -> bool {
    path.as_os_str().len() < 100
}

pub struct Link {
    lines: Lines<BufReader<OwnedReadHalf>>,
    writer: OwnedWriteHalf,
    next_id: u64,
    /// Set once the probe reported the app's end (or the socket closed).
    pub exited: Option<Option<AppExit>>,
}

impl Link {
    fn new(stream: UnixStream) -> Link {
        let (read, writer) = stream.into_split();
        Link {
            lines: BufReader::new(read).lines(),
            writer,
            next_id: 1,
            exited: None,
        }
    }

    /// The next line from the probe, parsed; an exit report or EOF ends the link.
    async fn next_message(&mut self) -> Result<Map<String, Value>, LinkError> {
        if let Some(exit) = &self.exited {
            return Err(LinkError::Exited(exit.clone()));
        }
        loop {
            let line = match self.lines.next_line().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => {
                    self.exited = Some(None);
                    return Err(LinkError::Exited(None));
                }
            };
            let Ok(Value::Object(message)) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("event").and_then(Value::as_str) == Some("exit") {
                let exit: AppExit =
                    serde_json::from_value(Value::Object(message)).unwrap_or_default();
                self.exited = Some(Some(exit.clone()));
                return Err(LinkError::Exited(Some(exit)));
            }
            return Ok(message);
        }
    }

    /// Wait for the probe's `ready` event; its fields (python, textual, app) on success.
    pub async fn ready(&mut self, limit: Duration) -> Result<Map<String, Value>, LinkError> {
        let wait = async {
            loop {
                let message = self.next_message().await?;
                match message.get("event").and_then(Value::as_str) {
                    Some("ready") => return Ok(message),
                    Some("error") => {
                        let text = |key: &str| {
                            message
                                .get(key)
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_owned()
                        };
                        return Err(LinkError::Probe {
                            code: text("code"),
                            message: text("message"),
                        });
                    }
                    _ => continue,
                }
            }
        };
        tokio::time::timeout(limit, wait)
            .await
            .unwrap_or(Err(LinkError::Timeout))
    }

    /// Send one request and wait up to `limit` for its answer.
    pub async fn request(
        &mut self,
        op: &str,
        fields: Value,
        limit: Duration,
    ) -> Result<Value, LinkError> {
        if let Some(exit) = &self.exited {
            return Err(LinkError::Exited(exit.clone()));
        }
        let id = self.next_id;
        self.next_id += 1;
        let mut request = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        request.insert("id".into(), json!(id));
        request.insert("op".into(), json!(op));
        let mut line = Value::Object(request).to_string();
        line.push('\n');
        if let Err(e) = self.writer.write_all(line.as_bytes()).await {
            // The probe closed its end: the app is ending. Its exit report may still be unread.
            let drain = async {
                loop {
                    match self.next_message().await {
                        Ok(_) => continue,
                        Err(LinkError::Exited(exit)) => return LinkError::Exited(exit),
                        Err(other) => return other,
                    }
                }
            };
            return Err(tokio::time::timeout(limit, drain)
                .await
                .unwrap_or_else(|_| LinkError::Io(format!("cannot reach the probe: {e}"))));
        }
        let answer = async {
            loop {
                let message = self.next_message().await?;
                if message.get("id").and_then(Value::as_u64) != Some(id) {
                    continue;
                }
                if message.get("ok") == Some(&Value::Bool(true)) {
                    return Ok(message.get("result").cloned().unwrap_or(Value::Null));
                }
                let error = message.get("error").cloned().unwrap_or(Value::Null);
                return Err(LinkError::Probe {
                    code: error["code"].as_str().unwrap_or("probe_failed").to_owned(),
                    message: error["message"].as_str().unwrap_or("").to_owned(),
                });
            }
        };
        tokio::time::timeout(limit, answer)
            .await
            .unwrap_or(Err(LinkError::Timeout))
    }

    /// Wait up to `limit` for the app's exit report (after asking it to exit).
    pub async fn wait_exit(&mut self, limit: Duration) -> Option<AppExit> {
        let wait = async {
            loop {
                if let Err(LinkError::Exited(exit)) = self.next_message().await {
                    return exit;
                }
            }
        };
        tokio::time::timeout(limit, wait).await.unwrap_or(None)
    }
}
