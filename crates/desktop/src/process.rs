//! The processes a desktop starts (Xvfb, a window manager, the user's program): each in its own
//! process group, tied to the daemon's life, watched through a pidfd, and ended as a group.
//!
//! Why a launcher thread: `PR_SET_PDEATHSIG` fires when the *thread* that forked the child exits, not
//! the process. Tokio's blocking threads come and go, so children are forked from one thread that lives
//! as long as the process; if the daemon dies (even by SIGKILL) its X servers get SIGTERM instead of
//! lingering.
//!
//! What the children start in turn stays in their group and is reaped here too (`orphans`).
//!
//! Why pidfds: another part of the daemon reaps with `waitpid(-1)`, so our children may be reaped
//! before we look. A pidfd still becomes readable when the child exits, whoever reaps it.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::io::unix::AsyncFd;

/// How a child ended, when we were the one to reap it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExitStatus {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Launch {
    pub argv: Vec<String>,
    /// Set over this process's environment, or over nothing with `env_clear`.
    pub env: Vec<(OsString, OsString)>,
    /// Start from an empty environment, so that `env` is all the program gets (and the PATH it is
    /// looked up on).
    pub env_clear: bool,
    pub cwd: Option<PathBuf>,
    /// stdout and stderr go here (appended).
    pub log: PathBuf,
    /// A descriptor the child inherits under the same number (Xvfb's `-displayfd`).
    pub keep_fd: Option<RawFd>,
}

/// A started child. Ends its process group when dropped without [`Child::stop`].
#[derive(Debug)]
pub struct Child {
    pub pid: i32,
    pub program: String,
    pidfd: OwnedFd,
    status: Mutex<Option<ExitStatus>>,
    stopped: std::sync::atomic::AtomicBool,
}

type Job = Box<dyn FnOnce() + Send>;

/// Run `job` on the launcher thread, the parent of every child we start.
fn on_launcher(job: Job) -> std::io::Result<()> {
    static LAUNCHER: OnceLock<Mutex<mpsc::Sender<Job>>> = OnceLock::new();
    let sender = LAUNCHER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let _ = std::thread::Builder::new()
            .name("screenpilot-desktop-launcher".into())
            .spawn(move || {
                while let Ok(job) = rx.recv() {
                    job();
                }
            });
        Mutex::new(tx)
    });
    let sender = sender
        .lock()
        .map_err(|_| std::io::Error::other("launcher lock poisoned"))?;
    sender
        .send(job)
        .map_err(|_| std::io::Error::other("the launcher thread is gone"))
}

impl Child {
    /// Start a program as the leader of a new process group, with SIGTERM as its parent-death signal.
    pub async fn spawn(launch: Launch) -> std::io::Result<Child> {
        Child::spawn_inner(launch, None).await
    }

    /// [`Child::spawn`] as another user: uid and gid `user`, no supplementary groups (we must be
    /// root). For programs that refuse to run as root (sway).
    pub async fn spawn_as(launch: Launch, user: (u32, u32)) -> std::io::Result<Child> {
        Child::spawn_inner(launch, Some(user)).await
    }

    async fn spawn_inner(launch: Launch, user: Option<(u32, u32)>) -> std::io::Result<Child> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        on_launcher(Box::new(move || {
            let _ = tx.send(spawn_here(&launch, user));
        }))?;
        rx.await
            .map_err(|_| std::io::Error::other("the launcher thread dropped the request"))?
    }

    /// Has it exited? Reaps it when it has and nobody else did.
    pub fn exited(&self) -> bool {
        if self.status_now().is_some() {
            return true;
        }
        let mut poll = libc::pollfd {
            fd: self.pidfd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, zero timeout.
        let ready = unsafe { libc::poll(&mut poll, 1, 0) };
        if ready == 1 {
            self.reap();
            true
        } else {
            false
        }
    }

    /// How it ended, if it has and we reaped it.
    pub fn status(&self) -> Option<ExitStatus> {
        self.exited();
        self.status_now()
    }

    fn status_now(&self) -> Option<ExitStatus> {
        *self
            .status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Collect the exit status through the pidfd; another reaper may have been first (then the status
    /// is unknown, which is recorded as all `None`).
    fn reap(&self) {
        // SAFETY: siginfo_t is plain data; waitid fills it.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: a valid pidfd and a valid siginfo pointer.
        let rc = unsafe {
            libc::waitid(
                libc::P_PIDFD,
                self.pidfd.as_raw_fd() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOHANG,
            )
        };
        let status = if rc == 0 && info.si_signo == libc::SIGCHLD {
            // SAFETY: for SIGCHLD the status fields are the valid union members.
            let (code, value) = (info.si_code, unsafe { info.si_status() });
            if code == libc::CLD_EXITED {
                ExitStatus {
                    exit_code: Some(value),
                    signal: None,
                }
            } else {
                ExitStatus {
                    exit_code: None,
                    signal: Some(value),
                }
            }
        } else {
            ExitStatus::default()
        };
        let mut slot = self
            .status
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.get_or_insert(status);
    }

    /// Wait until it has exited, at most `limit`. True when it has.
    pub async fn wait_exit(&self, limit: Duration) -> bool {
        if self.exited() {
            return true;
        }
        let Ok(fd) = self.pidfd.try_clone() else {
            return false;
        };
        // SAFETY: the AsyncFd owns the descriptor, so it stays the same one while registered.
        let registered =
            unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) };
        let Ok(async_fd) = registered else {
            return false;
        };
        let gone = tokio::time::timeout(limit, async_fd.readable())
            .await
            .is_ok();
        gone && self.exited()
    }

    /// A second descriptor for its pidfd: readable once it has exited (for a blocking wait elsewhere).
    pub(crate) fn pidfd_clone(&self) -> std::io::Result<OwnedFd> {
        self.pidfd.try_clone()
    }

    fn signal_group(&self, signal: i32) {
        // SAFETY: kill on our own child's process group (negative pid).
        unsafe {
            libc::kill(-self.pid, signal);
        }
    }

    /// End the process group: TERM, then KILL after `grace`. Returns once the leader is gone (or the
    /// KILL step's limit passed).
    pub async fn stop(&self, grace: Duration) {
        self.stopped
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let strays = crate::orphans::strays(self.pid);
        if !self.exited() {
            self.signal_group(libc::SIGTERM);
            if !self.wait_exit(grace).await {
                self.signal_group(libc::SIGKILL);
                self.wait_exit(Duration::from_secs(5)).await;
            }
        }
        // What it started and left in its group (helpers, activated services) goes with it, reaped.
        // The group stays watched: a member may still be on its way to us (reparented as a zombie).
        crate::orphans::end_members(self.pid, grace).await;
        crate::orphans::end_strays(strays, grace).await;
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.stopped.load(std::sync::atomic::Ordering::SeqCst) || self.exited() {
            return;
        }
        self.signal_group(libc::SIGKILL);
        // Nobody will look at this child again (a desktop start that was cancelled): reap it once
        // the kill lands, or it stays a zombie for the daemon's life. A thread, because a drop must
        // not block and may run where there is no async runtime.
        if let Ok(pidfd) = self.pidfd.try_clone() {
            let _ = std::thread::Builder::new()
                .name("screenpilot-desktop-reap".into())
                .spawn(move || reap_when_gone(&pidfd));
        }
    }
}

/// Wait (at most 10 s: it was sent SIGKILL) until the process behind `pidfd` has exited, then reap it.
fn reap_when_gone(pidfd: &OwnedFd) {
    let mut poll = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a plain wait on a pidfd we own, with a status buffer of ours.
    unsafe {
        libc::poll(&mut poll, 1, 10_000);
        let mut info: libc::siginfo_t = std::mem::zeroed();
        libc::waitid(
            libc::P_PIDFD,
            pidfd.as_raw_fd() as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG,
        );
    }
}

/// Fork and exec on the current (launcher) thread.
fn spawn_here(launch: &Launch, user: Option<(u32, u32)>) -> std::io::Result<Child> {
    let Some((program, args)) = launch.argv.split_first() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "no program given",
        ));
    };
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&launch.log)?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        .process_group(0);
    if launch.env_clear {
        command.env_clear();
    }
    for (key, value) in &launch.env {
        command.env(key, value);
    }
    if let Some(cwd) = &launch.cwd {
        command.current_dir(cwd);
    }
    if let Some((uid, gid)) = user {
        // std drops the supplementary groups (setgroups) before setuid when it runs as root, and
        // changes the user before `pre_exec` below: the parent-death signal, which a change of
        // user clears, is set after it.
        command.uid(uid).gid(gid);
    }
    // SAFETY: getpid is async-signal-safe.
    let parent = unsafe { libc::getpid() };
    let keep_fd = launch.keep_fd;
    // SAFETY: only async-signal-safe calls (prctl, getppid, fcntl, _exit) between fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            if let Some(fd) = keep_fd {
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    let pid = child.id() as i32;
    // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    if raw < 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: our own child's group.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        return Err(e);
    }
    // SAFETY: `raw` is a fresh descriptor that nothing else owns.
    let pidfd = unsafe { OwnedFd::from_raw_fd(raw) };
    crate::orphans::watch_group(pid);
    Ok(Child {
        pid,
        program: program.clone(),
        pidfd,
        status: Mutex::new(None),
        stopped: std::sync::atomic::AtomicBool::new(false),
    })
}

/// The first program of `names` found on PATH.
pub fn find_on_path(names: &[&str]) -> Option<(String, PathBuf)> {
    let path = std::env::var_os("PATH")?;
    for name in names {
        for dir in std::env::split_paths(&path) {
            let candidate = dir.join(name);
            if is_executable(&candidate) {
                return Some(((*name).to_owned(), candidate));
            }
        }
    }
    None
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The last `max` bytes of a log file, for error messages.
pub fn log_tail(path: &Path, max: usize) -> String {
    let Ok(bytes) = std::fs::read(path) else {
        return String::new();
    };
    let start = bytes.len().saturating_sub(max);
    String::from_utf8_lossy(&bytes[start..]).trim().to_owned()
}

/// A pipe for a child's first line (read end, write end), both close-on-exec and non-blocking: the
/// child is handed the write end on purpose, and [`first_line`] reads the other.
pub(crate) fn line_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors that we own below.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fresh descriptors from pipe2, owned from here on.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The first line a child writes to the pipe `fd` (Xvfb's `-displayfd`, dbus-daemon's
/// `--print-address`), read as it arrives: `None` when the child closed the pipe (it exited) first.
pub(crate) async fn first_line(fd: OwnedFd) -> std::result::Result<Option<String>, String> {
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd};
    // SAFETY: the AsyncFd owns the descriptor, so it stays the same one while registered.
    let fd = unsafe {
        tokio::io::unix::AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE)
    }
    .map_err(|e| format!("cannot watch the pipe: {e}"))?;
    let mut text = Vec::new();
    loop {
        let mut guard = fd.readable().await.map_err(|e| e.to_string())?;
        let mut buf = [0u8; 256];
        let read = guard.try_io(|inner| {
            let mut file = std::mem::ManuallyDrop::new(
                // SAFETY: a borrowed view of the descriptor the AsyncFd owns; never closed here.
                unsafe { std::fs::File::from_raw_fd(inner.get_ref().as_raw_fd()) },
            );
            file.read(&mut buf)
        });
        match read {
            Ok(Ok(0)) => return Ok(None),
            Ok(Ok(n)) => {
                text.extend_from_slice(&buf[..n]);
                if let Some(end) = text.iter().position(|b| *b == b'\n') {
                    return Ok(Some(
                        String::from_utf8_lossy(&text[..end]).trim().to_owned(),
                    ));
                }
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Ok(Err(e)) => return Err(format!("reading failed: {e}")),
            Err(_would_block) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn launch(argv: &[&str], log: &Path) -> Launch {
        Launch {
            argv: argv.iter().map(|a| a.to_string()).collect(),
            env: Vec::new(),
            env_clear: false,
            cwd: None,
            log: log.to_path_buf(),
            keep_fd: None,
        }
    }

    /// The state letter of process `pid` (R, S, Z, ...), or `None` once it is gone (reaped).
    fn state(pid: i32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat[stat.rfind(')')? + 1..].trim_start().chars().next()
    }

    #[tokio::test]
    async fn a_child_dropped_unstopped_is_killed_and_reaped() {
        let log = std::env::temp_dir().join(format!("sp-process-test-{}.log", std::process::id()));
        let child = Child::spawn(launch(&["sleep", "600"], &log))
            .await
            .expect("spawn sleep");
        let pid = child.pid;
        assert!(
            matches!(state(pid), Some(c) if c != 'Z'),
            "sleep is not running"
        );
        drop(child);
        // The reaping thread has no event to offer; look until it is done (or give up).
        let end = std::time::Instant::now() + Duration::from_secs(20);
        while state(pid).is_some() && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = std::fs::remove_file(&log);
        assert_eq!(
            state(pid),
            None,
            "the dropped child is still there (a zombie?)"
        );
    }

    #[tokio::test]
    async fn stop_ends_the_child_and_records_how() {
        let log = std::env::temp_dir().join(format!("sp-process-stop-{}.log", std::process::id()));
        let child = Child::spawn(launch(&["sleep", "600"], &log))
            .await
            .expect("spawn sleep");
        child.stop(Duration::from_secs(5)).await;
        let _ = std::fs::remove_file(&log);
        assert!(child.exited());
        assert_eq!(child.status().and_then(|s| s.signal), Some(libc::SIGTERM));
        assert_eq!(state(child.pid), None, "stop left a zombie");
    }
}
