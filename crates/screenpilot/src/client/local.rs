//! This machine's daemon: its socket, starting it when none answers, and one-shot requests over a
//! plain blocking socket for the CLI's fast path.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use tokio::net::UnixStream;

use super::limits::{answer_grace, ANSWER_GRACE_VAR};
use super::wire::final_answer;
use crate::paths::Paths;
use crate::protocol::{Request, Response};
use crate::wire::build;
use crate::wire::error::ErrorCode;
use crate::wire::error::OpError;

/// How long a client waits for a daemon it started to say it is ready.
const DAEMON_START_LIMIT: Duration = Duration::from_secs(20);

/// When the daemon here is another build of screenpilot (another executable: an upgrade installed
/// since it started) that keeps its sessions with holders and serves no request now, it hands them
/// over: it is stopped keeping them, and this build's daemon, started by the next connection, takes
/// them. One serving requests stays, and the caller is told. `SCREENPILOT_HANDOVER=never` turns it
/// off. Costs one small file read when the builds are the same.
pub fn hand_over_to_this_build(paths: &Paths) {
    let Ok(text) = std::fs::read(build::build_file(paths)) else {
        return;
    };
    let Ok(theirs) = serde_json::from_slice::<build::Build>(&text) else {
        return;
    };
    let ours = build::Build::this();
    if theirs.build == ours.build || std::env::var("SCREENPILOT_HANDOVER").as_deref() == Ok("never")
    {
        return;
    }
    let Some(Ok(status)) = call_blocking_once(paths, "status", json!({}), |_| {}) else {
        return;
    };
    let daemon = build::Build::of_status(&status);
    if daemon.build == ours.build {
        return;
    }
    let what = ours.differs(&daemon).unwrap_or_default();
    // An older daemon without holders ends its sessions when it stops: never hand those over.
    if status["holders"] != true {
        return;
    }
    let running = status["requests_running"].as_u64().unwrap_or(u64::MAX);
    if running > 0 {
        eprintln!(
            "screenpilot: {what}; it serves {running} request(s) now, so it stays until they end"
        );
        return;
    }
    let pid = status["pid"]
        .as_i64()
        .and_then(|pid| i32::try_from(pid).ok());
    let pidfd = pid
        .and_then(rustix::process::Pid::from_raw)
        .and_then(|pid| {
            rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok()
        });
    // It may exit before its answer is written: gone is what was asked for.
    match call_blocking_once(paths, "shutdown", json!({"sessions": "keep"}), |_| {}) {
        Some(Ok(_)) => {}
        Some(Err(e)) if e.code == ErrorCode::DaemonGone => {}
        _ => return,
    }
    // Gone, so its socket and lock are free for this build's daemon (it keeps no session to end).
    if let Some(pidfd) = pidfd {
        use std::os::fd::AsRawFd;
        let mut fd = libc::pollfd {
            fd: pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a signal's EINTR just polls again.
        while unsafe { libc::poll(&mut fd, 1, 30_000) } < 0
            && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
        {}
    }
    eprintln!(
        "screenpilot: the daemon was another build; its sessions go over to this build's daemon"
    );
}

/// A connection to this machine's daemon, starting it if none answers.
pub async fn connect_or_start(paths: &Paths) -> Result<UnixStream, OpError> {
    // Blocking (a request, then the old daemon's exit): off the async threads.
    let here = paths.clone();
    let _ = tokio::task::spawn_blocking(move || hand_over_to_this_build(&here)).await;
    if let Some(stream) = connect(paths).await? {
        return Ok(stream);
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
        return Ok(stream);
    }
    start_daemon(paths).await?;
    drop(starting);
    connect(paths).await?.ok_or_else(|| {
        OpError::new(
            ErrorCode::DaemonUnavailable,
            format!(
                "the screenpilot daemon started but its socket {} refuses connections",
                paths.socket.display()
            ),
        )
    })
}

/// One request over a plain blocking socket, for one-shot CLI verbs: no async runtime to build, which is
/// most of what a short command costs. Progress lines go to `on_progress`. `None` when no daemon
/// answers (the caller then starts one through [`Client::connect_or_start`]).
pub fn call_blocking(
    paths: &Paths,
    op: &str,
    params: Value,
    on_progress: impl FnMut(&Value),
) -> Option<Result<Value, OpError>> {
    hand_over_to_this_build(paths);
    let answer = call_blocking_once(paths, op, params, on_progress)?;
    // An error of a daemon of another build is said as such (see `Client::explain`).
    Some(answer.map_err(|error| {
        if !build::may_be_another_build(&error) {
            return error;
        }
        match call_blocking_once(paths, "status", json!({}), |_| {}) {
            Some(Ok(status)) => build::explain(error, &status),
            _ => error,
        }
    }))
}

fn call_blocking_once(
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
        resume: None,
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
        super::wire::check_request_size(&line)?;
        line.push(b'\n');
        (&stream).write_all(&line).map_err(gone)?;
        let mut reader = BufReader::new(&stream);
        loop {
            let mut answer = String::new();
            if reader.read_line(&mut answer).map_err(gone)? == 0 {
                return Err(OpError::new(
                    ErrorCode::DaemonGone,
                    crate::wire::error::interrupted("the screenpilot daemon"),
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

/// Connect to the daemon's socket: `None` when nothing answers there, an error when something does but
/// it is not our own daemon.
pub async fn connect(paths: &Paths) -> Result<Option<UnixStream>, OpError> {
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
        .args(["daemon", "run"]) // not an operation: this binary's verb
        .env("SCREENPILOT_DIR", &paths.dir)
        // The daemon serves this machine: it never follows a host named for the client.
        .env_remove(crate::host::HOST_VAR)
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
