//! The per-user daemon: owns every session, serves the JSON-lines protocol on a unix socket.
//!
//! Exactly one runs per socket directory, guaranteed by an exclusive lock held for its lifetime; a
//! socket file left by a dead daemon is therefore known stale and replaced. Only peers with our uid
//! are served. No TCP port is opened.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;

use screenpilot_session::{Limits, Registry};

use crate::ops::ErrorCode;
use crate::ops::{self, Context, OpError};
use crate::paths::Paths;
use crate::protocol::{Request, Response, MAX_REQUEST_BYTES};

/// Why the daemon could not run.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("{0}")]
    Setup(String),
    #[error("a screenpilot daemon is already running on {0}")]
    AlreadyRunning(String),
}

/// Read limits from the environment, naming the variable when one is malformed.
pub fn limits_from_env() -> Result<Limits, DaemonError> {
    let mut limits = Limits::default();
    let read =
        |name: &str| -> Result<Option<u64>, DaemonError> {
            match std::env::var(name) {
                Ok(text) => text.trim().parse::<u64>().map(Some).map_err(|_| {
                    DaemonError::Setup(format!("{name}={text:?} is not a whole number"))
                }),
                Err(_) => Ok(None),
            }
        };
    if let Some(n) = read("SCREENPILOT_MAX_SESSIONS")? {
        limits.max_sessions = n as usize;
    }
    if let Some(n) = read("SCREENPILOT_IDLE_TIMEOUT_SECS")? {
        if n == 0 {
            return Err(DaemonError::Setup(
                "SCREENPILOT_IDLE_TIMEOUT_SECS=0: sessions would close as soon as they start; give at least 1".into(),
            ));
        }
        limits.idle_timeout = Duration::from_secs(n);
    }
    if let Some(n) = read("SCREENPILOT_SCROLLBACK_LINES")? {
        limits.scrollback_lines = n as usize;
    }
    if let Some(n) = read("SCREENPILOT_CLOSE_GRACE_MS")? {
        limits.close_grace = Duration::from_millis(n);
    }
    Ok(limits)
}

/// Run the daemon until `shutdown` is requested or SIGTERM/SIGINT arrives. `announce` receives one line
/// once the socket accepts connections (or saying another daemon already runs).
pub async fn run(
    paths: Paths,
    limits: Limits,
    mut announce: impl Write,
) -> Result<(), DaemonError> {
    paths
        .ensure_private_dir()
        .map_err(|e| DaemonError::Setup(format!("daemon directory: {e}")))?;
    // Another daemon may still be shutting down here; it lets go of the lock as it exits.
    let lock = match crate::paths::lock_file(&paths.lock, Duration::from_secs(30)).await {
        Ok(lock) => lock,
        Err(_) => {
            let _ = writeln!(
                announce,
                "screenpilot daemon already running on {}",
                paths.socket.display()
            );
            let _ = announce.flush();
            return Err(DaemonError::AlreadyRunning(
                paths.socket.display().to_string(),
            ));
        }
    };
    // We hold the lock, so any socket file is a leftover of a dead daemon.
    let _ = std::fs::remove_file(&paths.socket);
    let listener = UnixListener::bind(&paths.socket).map_err(|e| {
        DaemonError::Setup(format!("cannot listen on {}: {e}", paths.socket.display()))
    })?;

    let ctx = Context::new(Registry::new(limits));
    let registry = ctx.registry.clone();
    let expiry = tokio::spawn(registry.clone().expire_idle());
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let state = Arc::new(DaemonState {
        paths: paths.clone(),
        started: Instant::now(),
        stop: stop_tx,
    });

    let _ = writeln!(
        announce,
        "screenpilot daemon ready on {}",
        paths.socket.display()
    );
    let _ = announce.flush();
    drop(announce);

    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| DaemonError::Setup(format!("signal handler: {e}")))?;
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| DaemonError::Setup(format!("signal handler: {e}")))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(serve(stream, ctx.clone(), state.clone()));
                }
            }
            _ = stop_rx.changed() => break,
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        }
    }
    // Stop taking connections first, so the next client starts a fresh daemon instead of talking to
    // this one while it closes sessions.
    drop(listener);
    let _ = std::fs::remove_file(&paths.socket);
    expiry.abort();
    tokio::join!(registry.close_all(), ctx.desktops.close_all());
    drop(lock);
    Ok(())
}

struct DaemonState {
    paths: Paths,
    started: Instant,
    stop: watch::Sender<bool>,
}

/// Run an operation in its own task so that a panic in it becomes an error answer instead of a
/// request that is never answered. Aborting the caller aborts the operation too.
async fn execute_guarded(
    ctx: Context,
    op: String,
    params: Value,
    progress: ops::Progress,
) -> Result<Value, OpError> {
    struct AbortOnDrop(AbortHandle);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let name = op.clone();
    let task = tokio::spawn(async move { ops::execute(&ctx, &op, params, &progress).await });
    let _guard = AbortOnDrop(task.abort_handle());
    match task.await {
        Ok(outcome) => outcome,
        Err(e) if e.is_panic() => Err(OpError::new(ErrorCode::Internal,
            format!("{name}: the operation failed unexpectedly (a bug in screenpilot); other sessions are unaffected"),
        )),
        Err(_) => Err(OpError::new(ErrorCode::Cancelled, format!("{name}: cancelled"))),
    }
}

/// The peer must run as our own user.
fn peer_allowed(stream: &UnixStream) -> bool {
    match stream.peer_cred() {
        Ok(cred) => cred.uid() == rustix::process::getuid().as_raw(),
        Err(_) => false,
    }
}

/// Serve one connection: each request runs as its own task, answers go out as they finish.
async fn serve(stream: UnixStream, ctx: Context, state: Arc<DaemonState>) {
    if !peer_allowed(&stream) {
        return;
    }
    let (read, mut write) = stream.into_split();
    let (tx, mut rx) = mpsc::unbounded_channel::<Response>();
    let writer = tokio::spawn(async move {
        while let Some(response) = rx.recv().await {
            let Ok(mut line) = serde_json::to_vec(&response) else {
                continue;
            };
            line.push(b'\n');
            if write.write_all(&line).await.is_err() {
                return;
            }
        }
    });
    let tasks: Arc<Mutex<HashMap<String, AbortHandle>>> = Arc::default();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_REQUEST_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) if n > MAX_REQUEST_BYTES => {
                let error = OpError::new(
                    ErrorCode::BadRequest,
                    format!("request: longer than {MAX_REQUEST_BYTES} bytes"),
                );
                let _ = tx.send(Response::done(Value::Null, Err(error)));
                break;
            }
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let request: Request = match serde_json::from_slice(&line) {
            Ok(request) => request,
            Err(e) => {
                let error = OpError::new(
                    ErrorCode::BadJson,
                    format!("request: not valid JSON for {{\"id\", \"op\", \"params\"}}: {e}"),
                );
                let _ = tx.send(Response::done(Value::Null, Err(error)));
                continue;
            }
        };
        handle(request, &ctx, &state, &tx, &tasks);
    }
    // The client is gone: nothing it started keeps running.
    let running: Vec<AbortHandle> = tasks
        .lock()
        .map(|mut t| t.drain().map(|(_, h)| h).collect())
        .unwrap_or_default();
    for handle in running {
        handle.abort();
    }
    drop(tx);
    let _ = writer.await;
}

fn handle(
    request: Request,
    ctx: &Context,
    state: &Arc<DaemonState>,
    tx: &mpsc::UnboundedSender<Response>,
    tasks: &Arc<Mutex<HashMap<String, AbortHandle>>>,
) {
    let Request { id, op, params } = request;
    match op.as_str() {
        "cancel" => {
            let target = params.get("id").map(|v| v.to_string()).unwrap_or_default();
            let handle = tasks.lock().ok().and_then(|mut t| t.remove(&target));
            let cancelled = handle.is_some();
            if let Some(handle) = handle {
                handle.abort();
                let error = OpError::new(ErrorCode::Cancelled, "request cancelled by the client");
                let _ = tx.send(Response::done(
                    params.get("id").cloned().unwrap_or(Value::Null),
                    Err(error),
                ));
            }
            let _ = tx.send(Response::done(
                id,
                Ok(json!({"ok": true, "cancelled": cancelled})),
            ));
        }
        "status" => {
            let result = json!({
                "ok": true,
                "pid": std::process::id(),
                "version": env!("CARGO_PKG_VERSION"),
                "socket": state.paths.socket,
                "uptime_secs": state.started.elapsed().as_secs(),
                "sessions": ctx.registry.list().len() + ctx.desktops.list().len(),
                "max_sessions": ctx.registry.limits().max_sessions,
            });
            let _ = tx.send(Response::done(id, Ok(result)));
        }
        "shutdown" => {
            let _ = tx.send(Response::done(id, Ok(json!({"ok": true}))));
            state.stop.send_replace(true);
        }
        _ => {
            let key = id.to_string();
            let ctx = ctx.clone();
            let tx_task = tx.clone();
            let tasks_task = tasks.clone();
            let key_task = key.clone();
            // The table stays locked until the handle is in it, so the task's own removal (which
            // takes the same lock) always comes after the insertion.
            let mut table = tasks
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            // Answers, cancel and clean-up all go by id: a second running request with the same id
            // could be neither told apart nor stopped.
            if table.contains_key(&key) {
                let error = OpError::new(ErrorCode::DuplicateId,
                    format!("id: request {key} is still running on this connection; give each request its own id"),
                );
                let _ = tx.send(Response::done(id, Err(error)));
                return;
            }
            let task = tokio::spawn(async move {
                let (progress_tx, mut progress_rx) = mpsc::unbounded_channel();
                let forward_tx = tx_task.clone();
                let forward_id = id.clone();
                let forward = tokio::spawn(async move {
                    while let Some(update) = progress_rx.recv().await {
                        let _ = forward_tx.send(Response::progress(forward_id.clone(), update));
                    }
                });
                let outcome =
                    execute_guarded(ctx, op, params, ops::Progress::new(progress_tx)).await;
                // Every progress line goes out before the final answer.
                let _ = forward.await;
                if let Ok(mut tasks) = tasks_task.lock() {
                    tasks.remove(&key_task);
                }
                let _ = tx_task.send(Response::done(id, outcome));
            });
            table.insert(key, task.abort_handle());
        }
    }
}
