//! The per-user daemon: owns every session, serves the JSON-lines protocol on a unix socket.
//!
//! Exactly one runs per socket directory, guaranteed by an exclusive lock held for its lifetime; a
//! socket file left by a dead daemon is therefore known stale and replaced. Only peers with our uid
//! are served. No TCP port is opened.

use std::collections::HashMap;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::OwnedWriteHalf;
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;
use tokio_util::sync::CancellationToken;

use screenpilot_session::{ExitInfo, Limits, Registry};

use crate::guard::{self, Guard};
use crate::hang_up;
use crate::metrics;
use crate::ops::ErrorCode;
use crate::ops::{self, Context, OpError};
use crate::paths::Paths;
use crate::protocol::{Request, Response, MAX_REQUEST_BYTES};
use crate::resume::{self, Found, Resumable};

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
        if n == 0 {
            return Err(DaemonError::Setup(
                "SCREENPILOT_MAX_SESSIONS=0: no session could ever start; give at least 1".into(),
            ));
        }
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

/// Allocations of this size and more get pages of their own, given back as soon as they are freed.
const OWN_PAGES_FROM: usize = 16 << 20;

/// Make big buffers (a large screenshot's pixels, its PNG and the answer carrying it) go back to
/// the system when freed. By default glibc raises the size that gets pages of its own to the largest
/// buffer freed so far (up to 32 MiB), and the free space it keeps with it, so later big buffers
/// stay in its arenas for good: after four screenshots of a 1000x100 screen at the largest size the
/// daemon kept 237 MiB it no longer used (66 MiB with these settings). Both are fixed instead: from
/// 16 MiB a buffer has pages of its own, and up to twice that of free space is kept for reuse, so
/// the everyday screenshots (an 80x24 or 200x50 screen's pixels take 1.5 to 8 MiB) do not page-fault
/// fresh memory every time (a lower threshold cost a 200x50 screenshot 5 ms of its 15).
fn return_big_buffers_at_once() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes settings of the allocator; it takes no pointers.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, OWN_PAGES_FROM as libc::c_int);
        libc::mallopt(libc::M_TRIM_THRESHOLD, (2 * OWN_PAGES_FROM) as libc::c_int);
    }
}

/// Run the daemon until `shutdown` is requested or SIGTERM/SIGINT arrives. `announce` receives one line
/// once the socket accepts connections (or saying another daemon already runs).
pub async fn run(
    paths: Paths,
    limits: Limits,
    mut announce: impl Write,
) -> Result<(), DaemonError> {
    return_big_buffers_at_once();
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
    // The guard ends our sessions should we die without closing them; started first, so it also
    // finishes the clean-up below should we be killed during it.
    let guard = match Guard::spawn(&paths) {
        Ok(guard) => Some(guard),
        Err(e) => {
            eprintln!("screenpilot daemon: cannot start the guard ({e}); if this daemon is killed, the next one ends what its sessions left running");
            None
        }
    };
    // We hold the lock, so any socket file, session record or desktop directory without a running
    // owner is a leftover of a dead daemon.
    let records = guard::end_leftovers(
        &paths,
        limits.close_grace,
        "screenpilot daemon: a previous daemon was killed",
    )
    .await
    .map_err(DaemonError::Setup)?;
    let _ = std::fs::remove_file(&paths.socket);
    let listener = UnixListener::bind(&paths.socket).map_err(|e| {
        DaemonError::Setup(format!("cannot listen on {}: {e}", paths.socket.display()))
    })?;

    let ctx = Context::new(Registry::new(limits));
    // Each terminal session gets a holder of its own, so it outlives this daemon; those a daemon
    // before this one left are taken over before the first request is answered.
    // SCREENPILOT_HOLDERS=off: sessions end with their daemon, as before holders (and to measure them).
    if std::env::var("SCREENPILOT_HOLDERS").as_deref() != Ok("off") {
        ctx.registry
            .use_holders(screenpilot_session::held::HoldConfig {
                command: ["/proc/self/exe", "daemon", "hold"]
                    .map(str::to_owned)
                    .to_vec(),
                dir: paths.dir.join("holders"),
            });
    }
    let adopted = ctx.registry.adopt_held().await;
    if adopted > 0 {
        eprintln!("screenpilot daemon: took over {adopted} session(s) a daemon before this one left running");
    }
    // The sessions a killed daemon took with it: the first caller is told, and `list` shows them.
    ctx.registry.set_lost(guard::take_lost(&paths));
    crate::watch::install(&ctx);
    // Opt-in metrics for fleets; a bad address stops the daemon before it takes any request.
    let metrics = match std::env::var(metrics::METRICS_VAR) {
        Ok(addr) if !addr.trim().is_empty() => Some(
            metrics::serve(addr.trim(), ctx.clone())
                .await
                .map_err(|e| DaemonError::Setup(e.message))?,
        ),
        _ => None,
    };
    let registry = ctx.registry.clone();
    registry.keep_records(records);
    let expiry = tokio::spawn(registry.clone().expire_idle());
    let (stop_tx, mut stop_rx) = watch::channel(false);
    let guard_watch = guard.as_ref().map(|guard| {
        let (pid, ended) = (guard.pid(), guard.ended());
        tokio::spawn(async move {
            let how = match ended.await {
                Some(ExitInfo { signal: Some(n), .. }) => format!("was killed by signal {n}"),
                Some(ExitInfo { exit_code: Some(n), .. }) => format!("exited with status {n}"),
                _ => "ended".to_owned(),
            };
            eprintln!("screenpilot daemon: the guard (pid {pid}) {how}; if this daemon is killed, the next one ends what its sessions left running");
        })
    });
    let state = Arc::new(DaemonState {
        paths: paths.clone(),
        guard_pid: guard.as_ref().map(Guard::pid),
        started: Instant::now(),
        stop: stop_tx,
        running: watch::channel(0).0,
        resumable: Resumable::default(),
        instance: instance_name(),
        metrics,
        build: crate::wire::build::Build::this_daemon(),
        keep_sessions: std::sync::atomic::AtomicBool::new(false),
    });

    // Which build serves here, for clients to compare without a request (see `hand_over_to_this_build`).
    if let Ok(text) = serde_json::to_vec(&state.build) {
        let _ = std::fs::write(crate::wire::build::build_file(&paths), text);
    }
    let _ = writeln!(
        announce,
        "screenpilot daemon ready on {}",
        paths.socket.display()
    );
    let _ = announce.flush();
    drop(announce);

    let mut reserve = Reserve::open();
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .map_err(|e| DaemonError::Setup(format!("signal handler: {e}")))?;
    let mut interrupt = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
        .map_err(|e| DaemonError::Setup(format!("signal handler: {e}")))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Every descriptor a connection needs is taken here, in the one task that also
                    // refuses connections: none can take the reserve between its release and use.
                    let hang_up = hang_up::watch(&stream);
                    tokio::spawn(serve(stream, hang_up, ctx.clone(), state.clone()));
                }
                Err(e) if out_of_descriptors(&e) => refuse_one(&listener, &mut reserve).await,
                // A connection that failed between connect and accept (ECONNABORTED): nothing to do.
                Err(_) => {}
            },
            _ = stop_rx.changed() => break,
            // A service manager restarting the daemon, or a ^C: the sessions stay for the next one.
            _ = terminate.recv() => {
                state.keep_sessions.store(true, std::sync::atomic::Ordering::Release);
                break;
            }
            _ = interrupt.recv() => {
                state.keep_sessions.store(true, std::sync::atomic::Ordering::Release);
                break;
            }
        }
    }
    // Stop taking connections first, so the next client starts a fresh daemon instead of talking to
    // this one while it closes sessions.
    drop(listener);
    let _ = std::fs::remove_file(&paths.socket);
    expiry.abort();
    let keep = state
        .keep_sessions
        .load(std::sync::atomic::Ordering::Acquire);
    tokio::join!(registry.close_all(keep), ctx.desktops.close_all());
    if let Some(watch) = guard_watch {
        watch.abort();
    }
    if let Some(guard) = guard {
        guard.stand_down();
    }
    drop(lock);
    Ok(())
}

struct DaemonState {
    paths: Paths,
    /// The process that ends our sessions should we die without closing them (`None`: it could not
    /// start).
    guard_pid: Option<i32>,
    started: Instant,
    stop: watch::Sender<bool>,
    /// Operations running now, over all connections (`status` reports it, and waits on it when
    /// asked): a client can see that what it gave up on (a wait, a Textual run) was stopped, not
    /// merely that it stopped listening.
    running: watch::Sender<usize>,
    /// Requests sent with a `resume` key, and their answers (see `resume.rs`).
    resumable: Resumable,
    /// Names this daemon's life: a client that reconnects compares it, to tell a daemon that stayed
    /// from a new one (whose sessions are not the ones it left).
    instance: String,
    /// Where the metrics page is served (`SCREENPILOT_METRICS`), if it is.
    metrics: Option<std::net::SocketAddr>,
    /// Which screenpilot this is, read at start (a binary installed over ours later is another).
    build: crate::wire::build::Build,
    /// Stopping leaves held sessions running for the next daemon (`shutdown` with
    /// `sessions: "keep"`, SIGTERM, SIGINT).
    keep_sessions: std::sync::atomic::AtomicBool,
}

/// One operation counted in [`DaemonState::running`] for as long as it lives: it counts from before
/// its task is spawned and stops counting when that task's future is dropped, by finishing or by
/// being aborted (the client hung up or cancelled it).
struct Running(Arc<DaemonState>);

impl Running {
    fn start(state: &Arc<DaemonState>) -> Running {
        state.running.send_modify(|n| *n += 1);
        Running(state.clone())
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.running.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The longest `status` waits for `until_running` (a bound, not a delay: it answers the moment the
/// count is reached).
const STATUS_WAIT_LIMIT_MS: u64 = 600_000;

/// What `status` answers.
fn status(ctx: &Context, state: &DaemonState) -> Value {
    json!({
        "ok": true,
        "pid": std::process::id(),
        "version": state.build.version,
        "protocol": state.build.protocol,
        "build": state.build.build,
        "socket": state.paths.socket,
        "guard_pid": state.guard_pid,
        "uptime_secs": state.started.elapsed().as_secs(),
        "sessions": ctx.registry.list().len() + ctx.desktops.list().len(),
        "max_sessions": ctx.registry.limits().max_sessions,
        "requests_running": *state.running.borrow(),
        // Sessions outlive this daemon: a client of another build may have it hand them over.
        "holders": ctx.registry.holds(),
        "instance": state.instance,
        "metrics": state.metrics.map(|addr| format!("http://{addr}/metrics")),
    })
}

/// What `shutdown` does with the sessions (`sessions`: "keep" leaves them to their holders for the
/// next daemon, "end" ends them): true to keep. Without `sessions`, it is refused while any session
/// runs, naming them: nothing a user has running ends by surprise.
fn shutdown_sessions(params: &Value, ctx: &Context) -> Result<bool, OpError> {
    match params.get("sessions").and_then(Value::as_str) {
        Some("keep") => return Ok(true),
        Some("end") => return Ok(false),
        Some(other) => {
            return Err(OpError::invalid(
                "sessions",
                format!("sessions: {other:?} is neither \"keep\" nor \"end\""),
            ))
        }
        None => {}
    }
    let mut running: Vec<String> = ctx
        .registry
        .list()
        .into_iter()
        .filter(|s| s.alive)
        .map(|s| format!("{} ({})", s.sid, shell_words::join(&s.cmd)))
        .collect();
    running.extend(
        ctx.desktops
            .list()
            .into_iter()
            .map(|d| format!("{} (a desktop)", d.sid)),
    );
    if running.is_empty() {
        return Ok(false);
    }
    Err(OpError::invalid(
        "sessions",
        format!(
            "{} session(s) still run: {}. `daemon stop --keep-sessions` leaves terminal sessions running for the next daemon (desktops end); `daemon stop --end-sessions` ends them all",
            running.len(),
            running.join(", ")
        ),
    ))
}

/// A name for this daemon's life: its pid and the time it started, in nanoseconds.
fn instance_name() -> String {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("{}-{}", std::process::id(), since_epoch.as_nanos())
}

/// `status` with `until_running: N` (and `timeout_ms`, default 30,000): the answer waits until exactly
/// N operations run (woken by each one starting or ending), or the timeout passes; it says which.
fn status_when(params: &Value) -> Result<Option<(usize, Duration)>, OpError> {
    let Some(until) = params.get("until_running") else {
        return Ok(None);
    };
    let until = until
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            OpError::invalid(
                "until_running",
                "must be a whole number of requests, e.g. 0",
            )
        })?;
    let timeout_ms = match params.get("timeout_ms") {
        None => 30_000,
        Some(ms) => ms
            .as_u64()
            .filter(|&ms| ms <= STATUS_WAIT_LIMIT_MS)
            .ok_or_else(|| {
                OpError::invalid(
                    "timeout_ms",
                    format!("must be whole milliseconds from 0 to {STATUS_WAIT_LIMIT_MS}"),
                )
            })?,
    };
    Ok(Some((until, Duration::from_millis(timeout_ms))))
}

/// A test plays an older daemon: operations it asks this one to answer as unknown
/// ([`crate::wire::build::FORGET_VAR`]), read once.
fn forgotten(op: &str) -> bool {
    static FORGOTTEN: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        std::env::var(crate::wire::build::FORGET_VAR)
            .map(|ops| ops.split(',').map(|o| o.trim().to_owned()).collect())
            .unwrap_or_default()
    });
    FORGOTTEN.iter().any(|o| o == op)
}

/// Run an operation in its own task so that a panic in it becomes an error answer instead of a
/// request that is never answered. Aborting the caller aborts the operation too.
async fn execute_guarded(
    ctx: Context,
    op: String,
    params: Value,
    progress: ops::Progress,
    running: Running,
) -> Result<Value, OpError> {
    struct AbortOnDrop(AbortHandle);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let name = op.clone();
    let task = tokio::spawn(async move {
        let _running = running;
        let mut outcome = match forgotten(&op) {
            true => Err(OpError::new(
                ErrorCode::UnknownOperation,
                format!("op: unknown operation {op:?}"),
            )),
            false => ops::execute(&ctx, &op, params, &progress).await,
        };
        // The first answer tells its caller what a killed daemon before this one took with it.
        if let Ok(Value::Object(answer)) = &mut outcome {
            if let Some(notice) = ctx.registry.take_lost_notice() {
                answer.insert("notice".into(), notice.into());
            }
        }
        outcome
    });
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
///
/// A client may half-close (shut down its write side) right after its last request: every request
/// read is still run and answered, and the connection closes once the last answer is out. Only the
/// peer hanging up entirely (or a slow reader overflowing its queue) stops what it started.
async fn serve(
    stream: UnixStream,
    hang_up: Option<AsyncFd<OwnedFd>>,
    ctx: Context,
    state: Arc<DaemonState>,
) {
    if !peer_allowed(&stream) {
        return;
    }
    let (read, write) = stream.into_split();
    let (outbox, rx) = Outbox::new();
    let overflow = outbox.overflow.clone();
    let mut writer = tokio::spawn(write_answers(write, rx, outbox.queued.clone()));
    let tasks: Tasks = Arc::default();
    let mut reader = BufReader::new(read);
    let mut line = Vec::new();
    let mut shed = false;
    loop {
        line.clear();
        let mut limited = (&mut reader).take(MAX_REQUEST_BYTES as u64 + 1);
        let read = tokio::select! {
            read = limited.read_until(b'\n', &mut line) => read,
            _ = overflow.cancelled() => {
                shed = true;
                break;
            }
        };
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) if n > MAX_REQUEST_BYTES => {
                let error = OpError::new(
                    ErrorCode::BadRequest,
                    format!("request: longer than {MAX_REQUEST_BYTES} bytes"),
                );
                outbox.send(Response::done(Value::Null, Err(error)));
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
                outbox.send(Response::done(Value::Null, Err(error)));
                continue;
            }
        };
        handle(request, &ctx, &state, &outbox, &tasks);
    }
    // No more requests. The writer ends once every running request has answered (each holds a clone
    // of the outbox); until then, the peer may still hang up or stop reading.
    drop(outbox);
    if !shed {
        tokio::select! {
            _ = &mut writer => {}
            _ = hang_up::hung_up(hang_up.as_ref()) => {}
            _ = overflow.cancelled() => shed = true,
        }
    }
    if shed {
        eprintln!(
            "screenpilot daemon: closed a client connection that left more than {MAX_QUEUED_ANSWER_BYTES} bytes of answers unread; its requests were stopped"
        );
    }
    // The client is gone (or finished): nothing it started keeps running, but for requests sent
    // with a resume key, whose answers are kept for the client to come back for.
    let running: Vec<AbortHandle> = tasks
        .lock()
        .map(|mut t| {
            t.drain()
                .filter(|(_, task)| !task.resumable)
                .map(|(_, task)| task.abort)
                .collect()
        })
        .unwrap_or_default();
    for handle in running {
        handle.abort();
    }
    writer.abort();
}

/// The most requests one connection may have running at once; past it a request is answered at
/// once with `limit_exceeded`.
pub const MAX_IN_FLIGHT: usize = 256;

/// The most answer bytes one connection may leave unread. Past it (and with at least one answer
/// already waiting) the reader is judged too slow and its connection closed, so a client that never
/// reads cannot grow the daemon without limit. A single answer larger than this still goes out.
pub const MAX_QUEUED_ANSWER_BYTES: usize = 64 * 1024 * 1024;

/// The answers of one connection, serialised, waiting for the socket; counted in bytes.
#[derive(Clone)]
struct Outbox {
    tx: mpsc::UnboundedSender<Vec<u8>>,
    queued: Arc<AtomicUsize>,
    /// Cancelled when the queue overflowed: the connection is to be closed.
    overflow: CancellationToken,
}

impl Outbox {
    fn new() -> (Outbox, mpsc::UnboundedReceiver<Vec<u8>>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let outbox = Outbox {
            tx,
            queued: Arc::default(),
            overflow: CancellationToken::new(),
        };
        (outbox, rx)
    }

    fn send(&self, response: Response) {
        if self.overflow.is_cancelled() {
            return;
        }
        let Ok(mut line) = serde_json::to_vec(&response) else {
            return;
        };
        line.push(b'\n');
        let len = line.len();
        let before = self.queued.fetch_add(len, Ordering::AcqRel);
        if before > 0 && before + len > MAX_QUEUED_ANSWER_BYTES {
            self.queued.fetch_sub(len, Ordering::AcqRel);
            self.overflow.cancel();
            return;
        }
        let _ = self.tx.send(line);
    }
}

/// Write queued answers to the socket as the peer reads them.
async fn write_answers(
    mut write: OwnedWriteHalf,
    mut rx: mpsc::UnboundedReceiver<Vec<u8>>,
    queued: Arc<AtomicUsize>,
) {
    while let Some(line) = rx.recv().await {
        let written = write.write_all(&line).await;
        queued.fetch_sub(line.len(), Ordering::AcqRel);
        if written.is_err() {
            return;
        }
    }
}

/// One descriptor kept free, so that when the process runs out, a waiting client can still be
/// accepted and told why, instead of being left in the backlog while accept fails again at once.
struct Reserve(Option<std::fs::File>);

impl Reserve {
    fn open() -> Reserve {
        Reserve(std::fs::File::open("/dev/null").ok())
    }
}

fn out_of_descriptors(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EMFILE) | Some(libc::ENFILE))
}

/// Out of descriptors: free the reserve, accept the waiting client, tell it why it is refused, close
/// it, and take the reserve back. Without a reserve, wait a moment (the one timer here) rather than
/// spin on an accept that fails at once.
///
/// Accept fails with EMFILE even when nobody is waiting (readiness left over from the last accept),
/// so the freed reserve is offered to one accept attempt only: when nobody is waiting, that attempt
/// clears the stale readiness and the reserve is taken back at once, never left free for another
/// task to take while this one waits for the next client.
async fn refuse_one(listener: &UnixListener, reserve: &mut Reserve) {
    if reserve.0.take().is_none() {
        eprintln!(
            "screenpilot daemon: out of file descriptors and no reserve; pausing accept for 100 ms"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        *reserve = Reserve::open();
        return;
    }
    let attempt = std::future::poll_fn(|cx| match listener.poll_accept(cx) {
        std::task::Poll::Ready(accepted) => std::task::Poll::Ready(Some(accepted)),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await;
    if let Some(Ok((mut stream, _))) = attempt {
        let error = OpError::new(
            ErrorCode::LimitExceeded,
            "the screenpilot daemon is out of file descriptors (too many open connections or sessions); close some clients and try again",
        );
        if let Ok(mut line) = serde_json::to_vec(&Response::done(Value::Null, Err(error))) {
            line.push(b'\n');
            // The socket buffer of a fresh connection takes one short line without blocking.
            let _ = stream.try_write(&line);
        }
        let _ = stream.shutdown().await;
        eprintln!("screenpilot daemon: out of file descriptors; refused a connection");
    }
    *reserve = Reserve::open();
}

/// The requests running for one connection, by id.
type Tasks = Arc<Mutex<HashMap<String, Task>>>;

struct Task {
    abort: AbortHandle,
    /// Sent with a resume key: it outlives the connection.
    resumable: bool,
}

fn handle(request: Request, ctx: &Context, state: &Arc<DaemonState>, tx: &Outbox, tasks: &Tasks) {
    let Request {
        id,
        op,
        params,
        resume,
    } = request;
    // The daemon's own operations read their few fields by hand; parameters that are not an object
    // are refused for them as for every other operation, by the same parser.
    if matches!(op.as_str(), "cancel" | "status" | "shutdown" | "resume") {
        if let Err(error) = ops::parse_params::<serde::de::IgnoredAny>(&op, params.clone()) {
            tx.send(Response::done(id, Err(error)));
            return;
        }
    }
    if let Some(key) = &resume {
        if let Err(error) = check_resume_key(key, &state.resumable) {
            tx.send(Response::done(id, Err(error)));
            return;
        }
    }
    match op.as_str() {
        "cancel" => {
            // By the id on this connection, or by the resume key from any connection.
            let target = params.get("id").map(|v| v.to_string()).unwrap_or_default();
            let task = tasks.lock().ok().and_then(|mut t| t.remove(&target));
            let mut cancelled = task.is_some();
            if let Some(task) = task {
                task.abort.abort();
                let error = OpError::new(ErrorCode::Cancelled, "request cancelled by the client");
                tx.send(Response::done(
                    params.get("id").cloned().unwrap_or(Value::Null),
                    Err(error),
                ));
            }
            if let Some(key) = params.get("key").and_then(Value::as_str) {
                cancelled |= state.resumable.cancel(key);
            }
            tx.send(Response::done(
                id,
                Ok(json!({"ok": true, "cancelled": cancelled})),
            ));
        }
        "resume" => resume_answer(id, &params, state, tx, tasks),
        "status" => match status_when(&params) {
            Err(error) => tx.send(Response::done(id, Err(error))),
            Ok(None) => tx.send(Response::done(id, Ok(status(ctx, state)))),
            Ok(Some((until, limit))) => {
                let (ctx, state, tx) = (ctx.clone(), state.clone(), tx.clone());
                tokio::spawn(async move {
                    let mut count = state.running.subscribe();
                    let reached = tokio::time::timeout(limit, count.wait_for(|n| *n == until))
                        .await
                        .is_ok();
                    let mut answer = status(&ctx, &state);
                    answer["reached"] = reached.into();
                    tx.send(Response::done(id, Ok(answer)));
                });
            }
        },
        "shutdown" => match shutdown_sessions(&params, ctx) {
            Err(error) => tx.send(Response::done(id, Err(error))),
            Ok(keep) => {
                state
                    .keep_sessions
                    .store(keep, std::sync::atomic::Ordering::Release);
                tx.send(Response::done(id, Ok(json!({"ok": true, "kept": keep}))));
                state.stop.send_replace(true);
            }
        },
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
                tx.send(Response::done(id, Err(error)));
                return;
            }
            // Each running request holds memory until it answers: a client pipelining thousands
            // is told to wait for answers instead of growing the daemon without bound.
            if table.len() >= MAX_IN_FLIGHT {
                let error = OpError::new(
                    ErrorCode::LimitExceeded,
                    format!("request {key}: {MAX_IN_FLIGHT} requests are already running on this connection, the most one may have; send more as answers come"),
                );
                tx.send(Response::done(id, Err(error)));
                return;
            }
            let running = Running::start(state);
            let (start_tx, start_rx) = tokio::sync::oneshot::channel::<Option<resume::Finish>>();
            let task = tokio::spawn(async move {
                // The task's own record under its resume key, made once its abort handle exists.
                let finish = start_rx.await.ok().flatten();
                let (progress_tx, mut progress_rx) = mpsc::unbounded_channel();
                let forward_tx = tx_task.clone();
                let forward_id = id.clone();
                let forward = tokio::spawn(async move {
                    while let Some(update) = progress_rx.recv().await {
                        forward_tx.send(Response::progress(forward_id.clone(), update));
                    }
                });
                let counted = metrics::enabled().map(|m| {
                    let waits = ops::find(&op)
                        .ok()
                        .filter(|def| (def.time_limit)(&params).is_some());
                    (m, op.clone(), waits, std::time::Instant::now())
                });
                let outcome =
                    execute_guarded(ctx, op, params, ops::Progress::new(progress_tx), running)
                        .await;
                if let Some((m, op, waits, started)) = counted {
                    m.operation(&op, metrics::outcome_of(&outcome), started.elapsed());
                    if let Some(def) = waits {
                        let held = outcome
                            .as_ref()
                            .ok()
                            .and_then(|answer| (def.read)(answer).ok())
                            .map(|reading| reading.satisfied);
                        m.wait(match held {
                            Some(true) => "held",
                            Some(false) => "not_held",
                            None => "error",
                        });
                    }
                }
                // Every progress line goes out before the final answer.
                let _ = forward.await;
                if let Ok(mut tasks) = tasks_task.lock() {
                    tasks.remove(&key_task);
                }
                let response = Response::done(id, outcome);
                if let Some(finish) = finish {
                    finish.done(outcome_of(&response));
                }
                tx_task.send(response);
            });
            let finish = resume
                .as_deref()
                .map(|k| state.resumable.start(k, task.abort_handle()));
            let _ = start_tx.send(finish);
            table.insert(
                key,
                Task {
                    abort: task.abort_handle(),
                    resumable: resume.is_some(),
                },
            );
        }
    }
}

/// A resume key must be short and new: a second request under a live key could not be told apart.
fn check_resume_key(key: &str, resumable: &Resumable) -> Result<(), OpError> {
    if key.is_empty() || key.len() > resume::MAX_KEY_LEN {
        return Err(OpError::invalid(
            "resume",
            format!(
                "a key of 1 to {} bytes, unique to the request",
                resume::MAX_KEY_LEN
            ),
        ));
    }
    if resumable.contains(key) {
        return Err(OpError::new(
            ErrorCode::DuplicateId,
            format!("resume: a request with key {key:?} is running or its answer is kept; give each request its own key"),
        )
        .with_field("resume"));
    }
    Ok(())
}

/// A final answer without its id: what is kept for `resume`.
fn outcome_of(response: &Response) -> Value {
    let mut value = serde_json::to_value(response).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("id");
    }
    value
}

/// `resume {key}`: the kept answer of the request sent under `key` (waiting for it when it still
/// runs), under this request's id; `not_delivered` when this daemon never had it.
fn resume_answer(id: Value, params: &Value, state: &Arc<DaemonState>, tx: &Outbox, tasks: &Tasks) {
    let Some(key) = params.get("key").and_then(Value::as_str) else {
        let error = OpError::invalid("key", "the resume key the request was sent with");
        tx.send(Response::done(id, Err(error)));
        return;
    };
    let answer_with = |id: Value, done: &resume::Done| {
        let mut value = done.outcome.clone();
        value["id"] = id;
        serde_json::from_value::<Response>(value).unwrap_or_else(|e| {
            Response::done(
                Value::Null,
                Err(OpError::new(ErrorCode::Internal, format!("resume: {e}"))),
            )
        })
    };
    let not_delivered = |key: &str| {
        OpError::new(
            ErrorCode::NotDelivered,
            format!("resume: no request with key {key:?} reached this daemon (or its answer was kept longer than {} s); it was not run", resume::KEEP_FOR.as_secs()),
        )
        .with_field("key")
    };
    match state.resumable.take(key) {
        Found::Done(done) => tx.send(answer_with(id, &done)),
        Found::Unknown => tx.send(Response::done(id, Err(not_delivered(key)))),
        Found::Running(mut done) => {
            let (tx_task, tasks_task, store) = (tx.clone(), tasks.clone(), state.resumable.clone());
            let (task_key, key) = (id.to_string(), key.to_owned());
            let table_key = task_key.clone();
            let mut table = tasks
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            let task = tokio::spawn(async move {
                let ended = done.wait_for(Option::is_some).await.is_ok();
                if let Ok(mut tasks) = tasks_task.lock() {
                    tasks.remove(&task_key);
                }
                // Taken from the store, so it is handed over once.
                let response = match (ended, store.take(&key)) {
                    (true, Found::Done(done)) => answer_with(id, &done),
                    _ => Response::done(
                        id,
                        Err(OpError::new(
                            ErrorCode::Cancelled,
                            format!("resume: the request with key {key:?} was stopped before it answered"),
                        )),
                    ),
                };
                tx_task.send(response);
            });
            table.insert(
                table_key,
                Task {
                    abort: task.abort_handle(),
                    resumable: false,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_waits_only_when_asked_and_names_a_bad_field() {
        assert!(matches!(status_when(&json!({})), Ok(None)));
        assert!(matches!(
            status_when(&json!({"until_running": 0})),
            Ok(Some((0, limit))) if limit == Duration::from_secs(30)
        ));
        for (params, field) in [
            (json!({"until_running": -1}), "until_running"),
            (json!({"until_running": "0"}), "until_running"),
            (
                json!({"until_running": 0, "timeout_ms": 600_001}),
                "timeout_ms",
            ),
            (json!({"until_running": 0, "timeout_ms": 1.5}), "timeout_ms"),
        ] {
            let error = status_when(&params)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(error.contains(field), "{params}: {error}");
        }
    }
}
