//! A client of the daemon, starting it when it is not running. Many requests may be in flight on one
//! connection; answers are routed back by request id.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::UnixStream;
use tokio::sync::mpsc;

use crate::ops::ErrorCode;
use crate::ops::OpError;
use crate::paths::Paths;
use crate::protocol::{Request, Response};

/// How long a client waits for a daemon it started to say it is ready.
const DAEMON_START_LIMIT: Duration = Duration::from_secs(20);

type Pending = Arc<Mutex<HashMap<u64, mpsc::UnboundedSender<Response>>>>;

/// A connection to the daemon.
///
/// A daemon that stops answering (SIGSTOPped, wedged) must not hold a caller forever, yet a wait may
/// legitimately run for an hour without a line, and an `attach` for a day. So the bound is on the
/// daemon answering at all: once calls are waiting and nothing has come for the grace period
/// (`SCREENPILOT_ANSWER_GRACE_MS`, the CLI's), the watchdog asks the daemon for its `status`; a
/// daemon that does not answer that within [`STATUS_CHECK_LIMIT`] (or the grace, if shorter) is
/// given up: every waiting call ends with `daemon_unavailable`.
pub struct Client {
    /// Becomes true when the daemon closes the connection (or is given up).
    closed: tokio::sync::watch::Receiver<bool>,
    link: Arc<Link>,
}

/// What the client, its calls and its watchdog share.
struct Link {
    writer: tokio::sync::Mutex<OwnedWriteHalf>,
    pending: Pending,
    next_id: AtomicU64,
    /// Wakes the watchdog when a call starts.
    call_started: tokio::sync::Notify,
    /// Why the daemon was given up, once it was.
    given_up: Mutex<Option<String>>,
}

/// How long a daemon that has been silent with calls waiting may take to answer `status`.
const STATUS_CHECK_LIMIT: Duration = Duration::from_secs(10);

/// The answers to one request: progress lines, then the final answer.
pub struct Call {
    id: u64,
    answers: mpsc::UnboundedReceiver<Response>,
    link: Arc<Link>,
}

impl Call {
    /// The next progress line, or the final answer (then the call is over).
    pub async fn next(&mut self) -> Result<Response, OpError> {
        match self.answers.recv().await {
            Some(response) => Ok(response),
            None => Err(match self.link.given_up() {
                Some(why) => OpError::new(ErrorCode::DaemonUnavailable, why),
                None => OpError::new(
                    ErrorCode::DaemonGone,
                    "the screenpilot daemon closed the connection before answering",
                ),
            }),
        }
    }

    /// Wait for the final answer, passing progress lines to `on_progress`.
    pub async fn finish(mut self, mut on_progress: impl FnMut(&Value)) -> Result<Value, OpError> {
        loop {
            let response = self.next().await?;
            if let Some(progress) = &response.progress {
                on_progress(progress);
                continue;
            }
            return final_answer(response);
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Ok(mut pending) = self.link.pending.lock() {
            pending.remove(&self.id);
        }
    }
}

impl Link {
    fn given_up(&self) -> Option<String> {
        self.given_up
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    /// Register a call and send its request.
    async fn start(self: &Arc<Self>, op: &str, params: Value) -> Result<Call, OpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(id, tx);
        }
        let call = Call {
            id,
            answers: rx,
            link: self.clone(),
        };
        let request = Request {
            id: json!(id),
            op: op.to_owned(),
            params,
        };
        let mut line = serde_json::to_vec(&request)
            .map_err(|e| OpError::new(ErrorCode::BadRequest, e.to_string()))?;
        line.push(b'\n');
        self.writer
            .lock()
            .await
            .write_all(&line)
            .await
            .map_err(|e| {
                OpError::new(
                    ErrorCode::DaemonGone,
                    format!("cannot send to the screenpilot daemon: {e}"),
                )
            })?;
        self.call_started.notify_one();
        Ok(call)
    }

    fn has_calls(&self) -> bool {
        self.pending.lock().map(|p| !p.is_empty()).unwrap_or(false)
    }
}

/// Watch one connection: while calls wait and the daemon has been silent for `grace`, check that it
/// still answers; give it up when it does not. Sleeps on events (a line, a call starting), never polls.
async fn watchdog(
    link: std::sync::Weak<Link>,
    mut lines: tokio::sync::watch::Receiver<u64>,
    closed: tokio::sync::watch::Sender<bool>,
    grace: Duration,
    socket: std::path::PathBuf,
) {
    loop {
        let Some(strong) = link.upgrade() else {
            return;
        };
        if !strong.has_calls() {
            // Idle: nothing to bound until a call starts (or the connection goes).
            tokio::select! {
                _ = strong.call_started.notified() => {}
                _ = lines.changed() => {}
            }
            if closed.is_closed() || *closed.borrow() {
                return;
            }
            continue;
        }
        drop(strong);
        lines.mark_unchanged();
        match tokio::time::timeout(grace, lines.changed()).await {
            Ok(Ok(())) => continue,
            Ok(Err(_)) => return, // the reader ended: the daemon closed the connection
            Err(_) => {}
        }
        let Some(strong) = link.upgrade() else {
            return;
        };
        if !strong.has_calls() {
            continue;
        }
        let limit = grace.min(STATUS_CHECK_LIMIT);
        let alive = tokio::time::timeout(limit, async {
            let mut check = strong.start("status", json!({})).await.ok()?;
            check.next().await.ok()
        })
        .await;
        if matches!(alive, Ok(Some(_))) {
            continue;
        }
        let why = format!(
            "the screenpilot daemon at {} sent nothing for {} ms ({ANSWER_GRACE_VAR}) and did not answer a status check within {} ms; is it stopped (kill -STOP) or overloaded?",
            socket.display(),
            grace.as_millis(),
            limit.as_millis(),
        );
        *strong
            .given_up
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(why);
        // Every waiting call ends (its channel closes) and says why.
        if let Ok(mut pending) = strong.pending.lock() {
            pending.clear();
        }
        closed.send_replace(true);
        return;
    }
}

impl Client {
    /// Connect to the daemon of `paths`, starting it if none answers.
    pub async fn connect_or_start(paths: &Paths) -> Result<Arc<Client>, OpError> {
        if let Some(stream) = connect(paths).await? {
            return Ok(Client::over(stream, paths));
        }
        paths.ensure_private_dir().map_err(|e| {
            OpError::new(
                ErrorCode::DaemonUnavailable,
                format!("cannot prepare the daemon directory: {e}"),
            )
        })?;
        let starting = crate::paths::lock_file(&paths.start_lock, DAEMON_START_LIMIT)
            .await
            .map_err(|e| {
                OpError::new(
                    ErrorCode::DaemonUnavailable,
                    format!("cannot start the screenpilot daemon: {e}"),
                )
            })?;
        // Another client may have started it while we waited for the lock.
        if let Some(stream) = connect(paths).await? {
            return Ok(Client::over(stream, paths));
        }
        start_daemon(paths).await?;
        drop(starting);
        let stream = connect(paths).await?.ok_or_else(|| {
            OpError::new(
                ErrorCode::DaemonUnavailable,
                format!(
                    "the screenpilot daemon started but its socket {} refuses connections",
                    paths.socket.display()
                ),
            )
        })?;
        Ok(Client::over(stream, paths))
    }

    /// Connect only if a daemon is running (`None` when none answers).
    pub async fn connect_existing(paths: &Paths) -> Result<Option<Arc<Client>>, OpError> {
        Ok(connect(paths)
            .await?
            .map(|stream| Client::over(stream, paths)))
    }

    fn over(stream: UnixStream, paths: &Paths) -> Arc<Client> {
        let (read, write) = stream.into_split();
        let link = Arc::new(Link {
            writer: tokio::sync::Mutex::new(write),
            pending: Pending::default(),
            next_id: AtomicU64::new(1),
            call_started: tokio::sync::Notify::new(),
            given_up: Mutex::new(None),
        });
        let routes = link.pending.clone();
        let (closed_tx, closed) = tokio::sync::watch::channel(false);
        let (lines_tx, lines) = tokio::sync::watch::channel(0u64);
        let closed_reader = closed_tx.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(read).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                lines_tx.send_modify(|n| *n += 1);
                let Ok(response) = serde_json::from_str::<Response>(&line) else {
                    continue;
                };
                let Some(id) = response.id.as_u64() else {
                    continue;
                };
                let Ok(mut routes) = routes.lock() else {
                    return;
                };
                let is_final = response.is_final();
                if let Some(route) = routes.get(&id) {
                    let _ = route.send(response);
                }
                if is_final {
                    routes.remove(&id);
                }
            }
            // The daemon went away: every waiting call learns it.
            if let Ok(mut routes) = routes.lock() {
                routes.clear();
            }
            closed_reader.send_replace(true);
        });
        tokio::spawn(watchdog(
            Arc::downgrade(&link),
            lines,
            closed_tx,
            answer_grace(),
            paths.socket.clone(),
        ));
        Arc::new(Client { closed, link })
    }

    /// Send a request; its answers arrive on the returned call.
    pub async fn start(&self, op: &str, params: Value) -> Result<Call, OpError> {
        self.link.start(op, params).await
    }

    /// Send a request and wait for its final answer.
    pub async fn call(&self, op: &str, params: Value) -> Result<Value, OpError> {
        self.start(op, params).await?.finish(|_| {}).await
    }

    /// Resolves when the daemon has closed this connection (for example, after it shut down).
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Ask the daemon to stop the request `id`.
    /// Returns whether the request was still running (and is now stopped).
    pub async fn cancel(&self, id: u64) -> Result<bool, OpError> {
        let answer = self.call("cancel", json!({"id": id})).await?;
        Ok(answer["cancelled"] == serde_json::Value::Bool(true))
    }
}

/// The outcome a final (non-progress) response carries.
fn final_answer(response: Response) -> Result<Value, OpError> {
    match (response.result, response.error) {
        (_, Some(error)) => Err(error),
        (Some(result), None) => Ok(result),
        (None, None) => Ok(Value::Null),
    }
}

/// One request over a plain blocking socket, for one-shot CLI verbs: no async runtime to build, which is
/// most of what a short command costs. Progress lines go to `on_progress`. `None` when no daemon
/// answers (the caller then starts one through [`Client::connect_or_start`]).
pub fn call_blocking(
    paths: &Paths,
    op: &str,
    params: Value,
    mut on_progress: impl FnMut(&Value),
) -> Option<Result<Value, OpError>> {
    use std::io::Write;
    let stream = std::os::unix::net::UnixStream::connect(&paths.socket).ok()?;
    if let Err(e) = check_daemon_owner(&stream, paths) {
        return Some(Err(e));
    }
    let gone = |e: std::io::Error| {
        OpError::new(
            ErrorCode::DaemonGone,
            format!("lost the screenpilot daemon: {e}"),
        )
    };
    let request = Request {
        id: json!(1),
        op: op.to_owned(),
        params,
    };
    // A daemon that accepted but never answers (stopped, wedged) must not hold the CLI forever. Each
    // read may legitimately last as long as the request's own timeouts, so the bound is those plus a
    // grace period; any line from the daemon (a progress line) starts it again.
    let bound = answer_bound(&request.params);
    let _ = stream.set_read_timeout(Some(bound));
    let gone = |e: std::io::Error| {
        if matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ) {
            OpError::new(
                ErrorCode::DaemonUnavailable,
                format!(
                    "the screenpilot daemon at {} did not answer within {} ms (the request's own timeouts plus {ANSWER_GRACE_VAR}); is it stopped (kill -STOP) or overloaded?",
                    paths.socket.display(),
                    bound.as_millis()
                ),
            )
        } else {
            gone(e)
        }
    };
    let outcome = (|| {
        let mut line = serde_json::to_vec(&request)
            .map_err(|e| OpError::new(ErrorCode::BadRequest, e.to_string()))?;
        line.push(b'\n');
        (&stream).write_all(&line).map_err(gone)?;
        let mut reader = BufReader::new(&stream);
        loop {
            let mut answer = String::new();
            if reader.read_line(&mut answer).map_err(gone)? == 0 {
                return Err(OpError::new(
                    ErrorCode::DaemonGone,
                    "the screenpilot daemon closed the connection before answering",
                ));
            }
            let response: Response = serde_json::from_str(&answer).map_err(|e| {
                OpError::new(
                    ErrorCode::BadResponse,
                    format!("the daemon sent a malformed answer: {e}"),
                )
            })?;
            if let Some(progress) = &response.progress {
                on_progress(progress);
                continue;
            }
            return final_answer(response);
        }
    })();
    Some(outcome)
}

/// Names the grace period, in ms, a client allows the daemon beyond a request's own timeouts.
const ANSWER_GRACE_VAR: &str = "SCREENPILOT_ANSWER_GRACE_MS";
/// The grace period when [`ANSWER_GRACE_VAR`] is not set.
const DEFAULT_ANSWER_GRACE: Duration = Duration::from_secs(60);

/// How long to wait for the daemon's next line: every timeout the request carries (any
/// `..._ms` number: `timeout_ms`, `max_wait_ms`, per-step timeouts, summed) plus the grace period.
fn answer_bound(params: &Value) -> Duration {
    fn timeouts(value: &Value, key: Option<&str>) -> u64 {
        match value {
            Value::Object(map) => map.iter().map(|(k, v)| timeouts(v, Some(k))).sum(),
            Value::Array(items) => items.iter().map(|v| timeouts(v, key)).sum(),
            Value::Number(n) if key.is_some_and(|k| k.ends_with("_ms")) => n.as_u64().unwrap_or(0),
            _ => 0,
        }
    }
    answer_grace() + Duration::from_millis(timeouts(params, None).min(24 * 3_600_000))
}

/// The grace period a client allows the daemon: [`ANSWER_GRACE_VAR`], else the default.
fn answer_grace() -> Duration {
    std::env::var(ANSWER_GRACE_VAR)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_ANSWER_GRACE)
}

/// Connect to the daemon's socket: `None` when nothing answers there, an error when something does but
/// it is not our own daemon.
async fn connect(paths: &Paths) -> Result<Option<UnixStream>, OpError> {
    let Ok(stream) = UnixStream::connect(&paths.socket).await else {
        return Ok(None);
    };
    check_daemon_owner(&stream, paths)?;
    Ok(Some(stream))
}

/// The process serving the socket must run as our own user. Requests can carry secrets (`env`), and a
/// socket in a shared place (`/tmp/screenpilot-UID`, a planted symlink) could be anyone's.
fn check_daemon_owner(stream: &impl std::os::fd::AsFd, paths: &Paths) -> Result<(), OpError> {
    let ours = rustix::process::getuid();
    match rustix::net::sockopt::socket_peercred(stream) {
        Ok(peer) if peer.uid == ours => Ok(()),
        Ok(peer) => Err(OpError::new(ErrorCode::DaemonUntrusted,
            format!(
                "{} is served by uid {}, not by this user (uid {}); nothing was sent. Remove it, or set SCREENPILOT_DIR to a private directory",
                paths.socket.display(),
                peer.uid.as_raw(),
                ours.as_raw()
            ),
        )),
        Err(e) => Err(OpError::new(ErrorCode::DaemonUntrusted,
            format!(
                "cannot tell who serves {} ({e}); nothing was sent",
                paths.socket.display()
            ),
        )),
    }
}

/// Start `screenpilot daemon run` in the background, detached from our terminal and process group, and
/// wait for its one line saying it is ready (or that another daemon already is).
async fn start_daemon(paths: &Paths) -> Result<(), OpError> {
    let exe = daemon_executable()?;
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&paths.log)
        .map_err(|e| {
            OpError::new(
                ErrorCode::DaemonUnavailable,
                format!("cannot open the daemon log {}: {e}", paths.log.display()),
            )
        })?;
    let mut command = std::process::Command::new(&exe);
    command
        .args(["daemon", "run"])
        .env("SCREENPILOT_DIR", &paths.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log);
    // SAFETY: setsid is async-signal-safe; it detaches the daemon from our terminal and signals.
    unsafe {
        command.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| {
        OpError::new(
            ErrorCode::DaemonUnavailable,
            format!(
                "cannot start the screenpilot daemon ({}): {e}",
                exe.display()
            ),
        )
    })?;
    let stdout = child.stdout.take();
    // Reap the daemon if it ever exits while we still run.
    std::thread::spawn(move || {
        let _ = child.wait();
    });
    let Some(stdout) = stdout else {
        return Err(OpError::new(
            ErrorCode::DaemonUnavailable,
            "the screenpilot daemon has no output pipe",
        ));
    };
    let log_path = paths.log.clone();
    let line = tokio::time::timeout(
        DAEMON_START_LIMIT,
        tokio::task::spawn_blocking(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            line
        }),
    )
    .await;
    match line {
        Ok(Ok(line)) if line.contains("ready") || line.contains("already running") => Ok(()),
        Ok(Ok(_)) | Ok(Err(_)) => Err(daemon_failed(&log_path, "it exited before becoming ready")),
        Err(_) => Err(daemon_failed(
            &log_path,
            &format!("it was not ready within {} s", DAEMON_START_LIMIT.as_secs()),
        )),
    }
}

fn daemon_failed(log: &Path, why: &str) -> OpError {
    let tail = std::fs::read_to_string(log)
        .map(|text| {
            text.lines()
                .rev()
                .take(5)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let log_part = if tail.trim().is_empty() {
        format!("its log {} is empty", log.display())
    } else {
        format!("the end of its log {}:\n{tail}", log.display())
    };
    OpError::new(
        ErrorCode::DaemonUnavailable,
        format!("the screenpilot daemon could not start: {why}; {log_part}"),
    )
}

/// The binary to run as the daemon: `$SCREENPILOT_BIN`, else this executable.
fn daemon_executable() -> Result<std::path::PathBuf, OpError> {
    if let Some(bin) = std::env::var_os("SCREENPILOT_BIN") {
        return Ok(bin.into());
    }
    std::env::current_exe().map_err(|e| {
        OpError::new(
            ErrorCode::DaemonUnavailable,
            format!("cannot find the screenpilot executable: {e}"),
        )
    })
}
