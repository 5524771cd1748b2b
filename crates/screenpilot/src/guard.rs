//! The daemon's guard: a small process that ends the daemon's sessions when the daemon dies without
//! closing them (SIGKILL, the OOM killer, a crash), instead of leaving them to the next daemon.
//!
//! Why a process: a daemon killed with SIGKILL runs no code. Its programs get the pty's hang-up, but
//! one that ignores SIGHUP keeps running, reparented to init. Something that outlives the daemon must
//! notice its death and end them; PR_SET_PDEATHSIG cannot be it (it fires when the forking *thread*
//! ends, and tokio's threads come and go), and the sessions' programs are not ours to change.
//!
//! How: at start the daemon re-executes its own binary (`/proc/self/exe daemon guard`) in a session
//! of its own (setsid: a terminal's ^C or hang-up never reaches it), with stdin a pipe whose write end
//! only the daemon holds (close-on-exec, so no session program inherits it). The guard blocks reading
//! it. A daemon that stops normally closes its sessions, then writes `stopped`: the guard exits. Any
//! other end of the daemon closes the pipe without a word: the guard waits until the daemon is gone
//! (its pidfd, so the daemon lock it held has been let go), takes the daemon lock without waiting (a
//! daemon that got it first ends the leftovers itself), and ends what the session records name, with
//! the same code a starting daemon runs (`screenpilot_session::leftovers`: pidfd-checked, never a
//! reused pid), and what the daemon's desktops left. The guard holds no descriptor of the daemon's
//! (socket, lock, ptys): it closes every inherited one but its stdin and stderr (the daemon log).
//!
//! The next daemon's clean-up stays: it covers a guard that was itself killed.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use screenpilot_session::leftovers::{self, Lost, Records};
use screenpilot_session::process::{spawn_helper, ExitInfo};
use tokio::sync::watch;

use crate::paths::Paths;

/// The daemon's pid, in the guard's environment.
const GUARDED_DAEMON: &str = "SCREENPILOT_GUARDED_DAEMON";

/// What the daemon writes to its guard once it has closed its sessions.
const STOPPED: &[u8] = b"stopped\n";

/// The longest the guard waits for a daemon that closed the pipe to be gone: it is exiting.
const DAEMON_EXIT_LIMIT: Duration = Duration::from_secs(60);

/// The daemon's side: the guard's pid and the write end of its pipe.
pub struct Guard {
    pid: i32,
    pipe: std::process::ChildStdin,
    exit: watch::Receiver<Option<ExitInfo>>,
}

impl Guard {
    /// Start the guard of the daemon that owns `paths` (call it holding the daemon lock).
    pub fn spawn(paths: &Paths) -> std::io::Result<Guard> {
        let mut command = Command::new("/proc/self/exe");
        command
            .arg0("screenpilot")
            .args(["daemon", "guard"])
            .env("SCREENPILOT_DIR", &paths.dir)
            .env(GUARDED_DAEMON, std::process::id().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            command.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let helper = spawn_helper(command)?;
        let pipe = helper
            .stdin
            .ok_or_else(|| std::io::Error::other("the guard has no stdin pipe"))?;
        Ok(Guard {
            pid: helper.pid,
            pipe,
            exit: helper.exit,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Resolves when the guard has ended (it should not, while the daemon runs), with how.
    pub fn ended(&self) -> impl std::future::Future<Output = Option<ExitInfo>> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            let ended = exit.wait_for(Option::is_some).await.ok()?;
            *ended
        }
    }

    /// Tell the guard the sessions are closed: it exits without touching anything.
    pub fn stand_down(mut self) {
        let _ = self.pipe.write_all(STOPPED);
    }
}

/// The guard's side (`screenpilot daemon guard`, started by [`Guard::spawn`] only). Call it first
/// thing in `main`, before any runtime opens descriptors: it closes every inherited one above stderr.
/// Returns the exit status, or why it cannot run.
pub fn run(paths: &Paths, grace: Duration) -> Result<u8, String> {
    let daemon = std::env::var(GUARDED_DAEMON)
        .ok()
        .and_then(|pid| pid.parse::<i32>().ok())
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| {
            format!("daemon guard: {GUARDED_DAEMON} is not set; the daemon starts its guard itself")
        })?;
    screenpilot_session::process::close_descriptors_from(3);
    let pidfd = daemon_pidfd(daemon);
    let mut said = Vec::new();
    // Blocks until the daemon writes `stopped` and closes the pipe, or dies (the pipe closes).
    let _ = std::io::stdin().lock().read_to_end(&mut said);
    if said == STOPPED {
        return Ok(0);
    }
    if let Some(fd) = &pidfd {
        wait_readable(fd, DAEMON_EXIT_LIMIT);
    }
    // A daemon that took the lock first ended the leftovers before answering anything.
    let Ok(lock) = crate::paths::try_lock_file(&paths.lock) else {
        return Ok(0);
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("daemon guard: cannot start the async runtime: {e}"))?;
    let said = format!(
        "screenpilot guard: the daemon (pid {}) died without closing its sessions",
        daemon.as_raw_nonzero()
    );
    let outcome = runtime.block_on(end_leftovers(paths, grace, &said));
    drop(lock);
    outcome.map(|_| 0).map_err(|e| format!("daemon guard: {e}"))
}

/// End what a dead daemon left running: its sessions' programs that ignored the hang-up, and its
/// desktops' programs and private directories. The caller holds the daemon lock, so no live daemon
/// owns the records. The grace is capped so that this stays within a client's 20 s start limit (at
/// most 5 + 5 + 5 s). `said` starts the log line saying what was ended. Returns where the records
/// are.
pub async fn end_leftovers(paths: &Paths, grace: Duration, said: &str) -> Result<Records, String> {
    let grace = grace.min(Duration::from_secs(5));
    let records =
        Records::in_dir(paths.dir.join("sessions")).map_err(|e| format!("session records: {e}"))?;
    let (sessions, desktops) = tokio::join!(
        leftovers::end_leftovers(&records, grace),
        screenpilot_desktop::end_abandoned(grace)
    );
    if !sessions.lost.is_empty() {
        // For the next daemon to tell its first caller, and `list`, which sessions were lost.
        let mut lost = read_lost(paths);
        lost.extend(sessions.lost.iter().cloned());
        if let Ok(text) = serde_json::to_vec(&lost) {
            let _ = crate::whole_file::write_whole(&lost_file(paths), &text, Some(0o600), true);
        }
    }
    if sessions.processes > 0 || desktops.processes > 0 || desktops.dirs > 0 {
        let _ = writeln!(
            std::io::stderr(),
            "{said}; ended {} processes of its {} sessions and {} of its desktops, removed {} desktop directories{}",
            sessions.processes,
            sessions.records,
            desktops.processes,
            desktops.dirs,
            match sessions.survivors + desktops.survivors {
                0 => String::new(),
                n => format!(" ({n} still running after SIGKILL)"),
            }
        );
    }
    Ok(records)
}

/// Where the sessions lost with a killed daemon are kept until the next daemon reads them.
fn lost_file(paths: &Paths) -> std::path::PathBuf {
    paths.dir.join("lost.json")
}

fn read_lost(paths: &Paths) -> Vec<Lost> {
    std::fs::read(lost_file(paths))
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// The sessions lost with the daemon before this one, taken (the file goes): the starting daemon
/// keeps them to tell its first caller and to show in `list`.
pub fn take_lost(paths: &Paths) -> Vec<Lost> {
    let lost = read_lost(paths);
    let _ = std::fs::remove_file(lost_file(paths));
    lost
}

/// A pidfd of the daemon, or `None` when it has already gone. The daemon is our parent until it
/// dies (then we are reparented), so a parent that is it after the open means the pidfd names it,
/// not a process that reused its pid.
fn daemon_pidfd(daemon: rustix::process::Pid) -> Option<OwnedFd> {
    let fd = rustix::process::pidfd_open(daemon, rustix::process::PidfdFlags::empty()).ok()?;
    (rustix::process::getppid() == Some(daemon)).then_some(fd)
}

/// Block until `fd` is readable (a pidfd: its process exited), at most `limit`.
fn wait_readable(fd: &OwnedFd, limit: Duration) {
    let mut poll = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = i32::try_from(limit.as_millis()).unwrap_or(i32::MAX);
    // SAFETY: one pollfd that lives across the call.
    unsafe { libc::poll(&mut poll, 1, ms) };
}
