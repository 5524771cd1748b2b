//! Child processes: starting a program on a pty, learning how it ended, and ending a whole session's
//! processes.
//!
//! One reaper per process waits for the programs it started, by pid. The daemon makes itself a child
//! subreaper, so processes orphaned inside a session are reparented to it and reaped here too (they are
//! in sessions of their own): no zombies are left behind, and the children other parts of the process
//! start and wait for (std's `Command`, a desktop's programs) keep their exit status. The
//! reaper runs on its own thread so it outlives any single tokio runtime (tests start many).

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use rustix::process::{Pid, Signal, WaitOptions};
use serde::{Deserialize, Serialize};
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;

use crate::error::{Result, SessionError};
use crate::spec::{BaseEnv, SpawnSpec, CALLER_TERMINAL_VARS, TERMINAL_VARS};

/// How a program ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExitInfo {
    /// The exit status, when it exited normally.
    pub exit_code: Option<i32>,
    /// The signal number, when a signal killed it.
    pub signal: Option<i32>,
}

type ExitSender = watch::Sender<Option<ExitInfo>>;

struct Reaper {
    /// Children we wait for, by pid. Held locked across fork so a child cannot be reaped before it is
    /// registered.
    waiting: Mutex<HashMap<i32, ExitSender>>,
}

fn reaper() -> &'static Reaper {
    static REAPER: OnceLock<&'static Reaper> = OnceLock::new();
    REAPER.get_or_init(|| {
        let reaper: &'static Reaper = Box::leak(Box::new(Reaper {
            waiting: Mutex::new(HashMap::new()),
        }));
        // Subreaper: orphans of our sessions come to us instead of an init that may not reap them.
        let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("screenpilot-reaper".into())
            .spawn(move || {
                let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    let _ = ready_tx.send(());
                    return;
                };
                runtime.block_on(async move {
                    let signals =
                        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child());
                    let _ = ready_tx.send(());
                    let Ok(mut signals) = signals else { return };
                    loop {
                        reaper.reap_all();
                        if signals.recv().await.is_none() {
                            return;
                        }
                    }
                });
            });
        if spawned.is_ok() {
            // The SIGCHLD handler must be installed before the first child can exit.
            let _ = ready_rx.recv();
        }
        reaper
    })
}

impl Reaper {
    /// Reap the children we started, by pid, and the orphans our sessions left us; never a child
    /// another part of this process started and waits for itself (std's `Command`, a desktop's
    /// programs): a `wait()` for any child would take their exit status from them.
    fn reap_all(&self) {
        let Ok(mut waiting) = self.waiting.lock() else {
            return;
        };
        let ours: Vec<i32> = waiting.keys().copied().collect();
        for pid in ours {
            if let Some(info) = reap(pid) {
                if let Some(sender) = waiting.remove(&pid) {
                    sender.send_replace(Some(info));
                }
            }
        }
        // An orphan was reparented to us from a session's process tree, so it is in a session of its
        // own (every program we start calls setsid); a child in our session belongs to someone else
        // here. That one stops the scan until it is reaped; the next SIGCHLD resumes it.
        // SAFETY: getsid(0) only reads our own session id.
        let our_session = unsafe { libc::getsid(0) };
        while let Some(pid) = next_exited_child() {
            // SAFETY: getsid on a pid that is our (unreaped) child: it cannot be reused meanwhile.
            if unsafe { libc::getsid(pid) } == our_session {
                break;
            }
            let info = reap(pid);
            if let (Some(info), Some(sender)) = (info, waiting.remove(&pid)) {
                sender.send_replace(Some(info));
            }
        }
    }
}

/// Reap `pid` if it has ended.
fn reap(pid: i32) -> Option<ExitInfo> {
    // Never `None` (any child): only a real pid.
    let pid = Pid::from_raw(pid)?;
    let (_, status) = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG).ok()??;
    Some(ExitInfo {
        exit_code: status.exit_status(),
        signal: status.terminating_signal(),
    })
}

/// The pid of a child that has ended and is not reaped yet, leaving it unreaped.
fn next_exited_child() -> Option<i32> {
    // SAFETY: siginfo_t is plain data; waitid fills it and, with WNOWAIT, reaps nothing.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: a valid siginfo pointer.
    let rc = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: after a successful waitid, si_pid is the valid member (0 when none has ended).
    let pid = unsafe { info.si_pid() };
    (rc == 0 && pid > 0).then_some(pid)
}

/// A program running on a pty.
pub struct Spawned {
    pub pid: i32,
    pub pty: pty_process::Pty,
    /// Becomes `Some` when the program has ended and been reaped.
    pub exit: watch::Receiver<Option<ExitInfo>>,
}

/// Start the program of `spec` on a new pty, as the leader of a new session and process group.
/// `token` signs the shell marks of an interactive bash ([`crate::shell::bash_integration`]).
pub fn spawn(spec: &SpawnSpec, token: u64) -> Result<Spawned> {
    let reaper = reaper();
    let mut waiting = reaper.waiting.lock().map_err(|_| SessionError::Spawn {
        field: "cmd",
        message: "internal error: reaper lock poisoned".into(),
    })?;
    // Not reaped while we hold the lock: even a program that exits at once is still in /proc.
    let (pid, pty) = start_on_pty(spec, token)?;
    note_start_time(pid);
    let (sender, exit) = watch::channel(None);
    waiting.insert(pid, sender);
    drop(waiting);
    let pty = async_pty(pty).map_err(|e| SessionError::Spawn {
        field: "cmd",
        message: format!("cannot watch the pseudo-terminal: {e}"),
    })?;
    Ok(Spawned { pid, pty, exit })
}

/// The size the kernel tells the program (TIOCGWINSZ). A session that shows pictures also gives
/// the pixels, a cell being [`NOMINAL_CELL_PIXELS`](screenpilot_screen::geometry::NOMINAL_CELL_PIXELS),
/// as a terminal with graphics does: programs size their pictures from it.
pub(crate) fn kernel_size(size: screenpilot_screen::Size, images: bool) -> pty_process::Size {
    if !images {
        return pty_process::Size::new(size.rows, size.cols);
    }
    let (cw, ch) = screenpilot_screen::geometry::NOMINAL_CELL_PIXELS;
    pty_process::Size::new_with_pixel(
        size.rows,
        size.cols,
        size.cols.saturating_mul(cw),
        size.rows.saturating_mul(ch),
    )
}

/// Start the program of `spec` on a new pty, as [`spawn`] does, but leave its reaping to the caller
/// (a holder reaps what it starts itself). Its pid and the pty's master.
pub fn start_on_pty(spec: &SpawnSpec, token: u64) -> Result<(i32, pty_process::blocking::Pty)> {
    let io_err = |what: &str, e: &dyn std::fmt::Display| SessionError::Spawn {
        field: "cmd",
        message: format!("{what}: {e}"),
    };
    // The blocking flavour of pty-process starts the program with std's Command: its child handle owns
    // nothing, so dropping it leaves the reaping to us. tokio's handle holds a pidfd that forgetting it
    // would leak (one per session) and that dropping it would use to reap the child behind our back.
    let (pty, pts) =
        pty_process::blocking::open().map_err(|e| io_err("cannot open a pseudo-terminal", &e))?;
    pty.resize(kernel_size(spec.size, spec.images))
        .map_err(|e| io_err("cannot size the pseudo-terminal", &e))?;
    let program = &spec.argv[0];
    let mut command = pty_process::blocking::Command::new(program)
        .args(&spec.argv[1..])
        .current_dir(&spec.cwd);
    // With a base of its own, the program is also looked up on that PATH: std then execs with the
    // new environment in place.
    if let BaseEnv::Exactly(vars) = &spec.base_env {
        command = command.env_clear();
        for (key, value) in vars {
            command = command.env(key, value);
        }
    }
    for key in CALLER_TERMINAL_VARS {
        command = command.env_remove(key);
    }
    for (key, value) in TERMINAL_VARS {
        command = command.env(key, value);
    }
    // An interactive bash marks its prompts and commands (OSC 133) for `run`.
    for (key, value) in crate::shell::integration(spec, token) {
        command = command.env(key, value);
    }
    for (key, value) in &spec.env {
        command = command.env(key, value);
    }
    let child = command
        .spawn(pts)
        .map_err(|e| spawn_error(program, spec, &e))?;
    let pid = child.id() as i32;
    // The caller waits for it by pid; std's handle does nothing when dropped.
    drop(child);
    Ok((pid, pty))
}

/// Reap every child of this process that has ended, returning each pid with how it ended. Only for
/// a process all of whose children are its own to reap (a holder).
pub fn reap_any() -> Vec<(i32, ExitInfo)> {
    let mut reaped = Vec::new();
    // `wait`: any child (rustix's `waitpid(None)` is only those of our process group).
    while let Ok(Some((pid, status))) = rustix::process::wait(WaitOptions::NOHANG) {
        reaped.push((
            pid.as_raw_nonzero().get(),
            ExitInfo {
                exit_code: status.exit_status(),
                signal: status.terminating_signal(),
            },
        ));
    }
    reaped
}

/// A helper process started with [`spawn_helper`].
pub struct Helper {
    pub pid: i32,
    /// Its stdin, when the command asked for a pipe.
    pub stdin: Option<std::process::ChildStdin>,
    /// Becomes `Some` when it has ended and been reaped.
    pub exit: watch::Receiver<Option<ExitInfo>>,
}

/// Start a helper process (no pty) whose end the one reaper reports, as it does for a session's
/// program. Nothing else may wait for it: a `wait` on its pid could reap a session's program that
/// reused the pid after the reaper took the helper.
pub fn spawn_helper(mut command: std::process::Command) -> std::io::Result<Helper> {
    let reaper = reaper();
    let mut waiting = reaper
        .waiting
        .lock()
        .map_err(|_| std::io::Error::other("reaper lock poisoned"))?;
    let mut child = command.spawn()?;
    let pid = child.id() as i32;
    let stdin = child.stdin.take();
    // Not reaped while we hold the lock, so the exit cannot be missed; std's handle does nothing
    // when dropped.
    drop(child);
    let (sender, exit) = watch::channel(None);
    waiting.insert(pid, sender);
    Ok(Helper { pid, stdin, exit })
}

/// How many recent spawns' start times are kept for [`start_time`].
const NOTED_START_TIMES: usize = 64;

fn noted_start_times() -> &'static Mutex<std::collections::VecDeque<(i32, u64)>> {
    static NOTED: OnceLock<Mutex<std::collections::VecDeque<(i32, u64)>>> = OnceLock::new();
    NOTED.get_or_init(Default::default)
}

fn note_start_time(pid: i32) {
    let Some(started) = proc_start_time(pid) else {
        return;
    };
    let mut noted = noted_start_times()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if noted.len() == NOTED_START_TIMES {
        noted.pop_front();
    }
    noted.push_back((pid, started));
}

/// When a program we started began (clock ticks since boot, field 22 of /proc/PID/stat): read at
/// spawn for the last few spawns, so it is known even for a program that already exited and was
/// reaped; else from /proc.
pub fn start_time(pid: i32) -> Option<u64> {
    let noted = noted_start_times()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .iter()
        .rev()
        .find(|(noted, _)| *noted == pid)
        .map(|(_, started)| *started);
    noted.or_else(|| proc_start_time(pid))
}

/// The pty's controlling side, made non-blocking and registered with the async runtime.
pub(crate) fn async_pty(pty: pty_process::blocking::Pty) -> std::io::Result<pty_process::Pty> {
    async_master(OwnedFd::from(pty))
}

/// A pty's controlling side `fd` (a holder's, say), made non-blocking and registered with the async
/// runtime.
pub(crate) fn async_master(fd: OwnedFd) -> std::io::Result<pty_process::Pty> {
    let flags = rustix::fs::fcntl_getfl(&fd)?;
    rustix::fs::fcntl_setfl(&fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    // SAFETY: `fd` is the open controlling side of a pty, now non-blocking, as from_fd requires.
    unsafe { pty_process::Pty::from_fd(fd) }.map_err(std::io::Error::other)
}

fn spawn_error(program: &str, spec: &SpawnSpec, e: &dyn std::fmt::Display) -> SessionError {
    let text = e.to_string();
    let message = if text.contains("No such file") || text.contains("os error 2") {
        if program.contains('/') {
            format!(
                "program {program:?} does not exist (relative to {})",
                spec.cwd.display()
            )
        } else if lacks_path(spec) {
            format!("program {program:?} was not found: the environment has no PATH, so only /bin and /usr/bin were searched; give a full path or set PATH in env")
        } else {
            format!("program {program:?} was not found in PATH")
        }
    } else if text.contains("ermission denied") {
        format!("program {program:?} is not executable: {text}")
    } else {
        format!("cannot start {program:?}: {text}")
    };
    SessionError::Spawn {
        field: "cmd",
        message,
    }
}

/// Whether the program's environment has no PATH at all (a clean one, say).
fn lacks_path(spec: &SpawnSpec) -> bool {
    let has = |vars: &[(String, String)]| vars.iter().any(|(key, _)| key == "PATH");
    match &spec.base_env {
        BaseEnv::Inherit => std::env::var_os("PATH").is_none() && !has(&spec.env),
        BaseEnv::Exactly(vars) => !has(vars) && !has(&spec.env),
    }
}

/// Every live (non-zombie) process whose session id is `leader`'s pid.
pub fn session_members(leader: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // Fields after the command name, which may itself contain spaces and parentheses.
            let Some(rest) = stat.rsplit_once(')').map(|(_, rest)| rest) else {
                return false;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.first().is_some_and(|state| *state != "Z")
                && fields.get(3) == Some(&leader.to_string().as_str())
        })
        .collect()
}

/// Every live process descended from `ancestor` (by parent pid), in no order.
pub fn descendants(ancestor: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let parents: std::collections::HashMap<i32, i32> = entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| stat(pid).filter(|s| !s.zombie).map(|s| (pid, s.ppid)))
        .collect();
    parents
        .keys()
        .copied()
        .filter(|&pid| {
            let mut at = pid;
            // Bounded: a chain is never longer than the processes there are.
            for _ in 0..parents.len() {
                match parents.get(&at) {
                    Some(&parent) if parent == ancestor => return true,
                    Some(&parent) if parent > 1 => at = parent,
                    _ => return false,
                }
            }
            false
        })
        .collect()
}

/// Close every descriptor from `first` up, inherited from whoever started this process (the guard
/// and holders call it first thing: nothing of theirs is open yet).
pub fn close_descriptors_from(first: i32) {
    // SAFETY: close_range takes plain integers; the caller has nothing open from `first` up.
    let closed = unsafe { libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0u32) };
    if closed == 0 {
        return;
    }
    // Kernels before 5.9: the list in /proc (the directory's own descriptor is gone by the close).
    let fds: Vec<i32> = std::fs::read_dir("/proc/self/fd")
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .filter(|fd| *fd >= first)
                .collect()
        })
        .unwrap_or_default();
    for fd in fds {
        // SAFETY: closing a descriptor number; one that is not open just fails.
        unsafe { libc::close(fd) };
    }
}

/// Each of `pids` as `PID COMMAND` (its command line, arguments joined by spaces), for a person.
pub fn named(pids: &[i32]) -> Vec<String> {
    pids.iter()
        .map(|pid| {
            let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let command = String::from_utf8_lossy(&command).replace('\0', " ");
            format!("{pid} {}", command.trim_end())
        })
        .collect()
}

/// End `pids` (TERM, then KILL what is left after `grace`).
pub async fn end_all(pids: &[i32], grace: Duration) {
    for (signal, limit) in [
        (Signal::TERM, grace),
        (Signal::KILL, Duration::from_secs(5)),
    ] {
        signal_all(pids, signal);
        signal_all(pids, Signal::CONT);
        if wait_gone(pids, limit).await {
            return;
        }
    }
}

fn signal_all(pids: &[i32], signal: Signal) {
    for pid in pids {
        if let Some(pid) = Pid::from_raw(*pid) {
            let _ = rustix::process::kill_process(pid, signal);
        }
    }
}

/// Wait until every process in `pids` has terminated, or `limit` passes. Woken by pidfds becoming
/// readable, not by polling. Returns true when all are gone.
pub(crate) async fn wait_gone(pids: &[i32], limit: Duration) -> bool {
    let waits = pids.iter().filter_map(|pid| {
        let fd: OwnedFd =
            rustix::process::pidfd_open(Pid::from_raw(*pid)?, rustix::process::PidfdFlags::empty())
                .ok()?;
        // SAFETY: an OwnedFd owned by the AsyncFd always reports the same descriptor.
        let fd =
            unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()?;
        Some(async move {
            let _ = fd.readable().await;
        })
    });
    let all: Vec<_> = waits.collect();
    tokio::time::timeout(limit, async {
        for wait in all {
            wait.await;
        }
    })
    .await
    .is_ok()
}

/// End every process of the session led by `leader`: HUP, then TERM, then KILL, each step only for what
/// is still running after `grace`. Returns once they are all gone (or after the KILL step's limit).
pub async fn end_session(leader: i32, grace: Duration) {
    let steps = [
        (Signal::HUP, grace),
        (Signal::TERM, grace),
        (Signal::KILL, Duration::from_secs(5)),
    ];
    for (signal, limit) in steps {
        let mut members = session_members(leader);
        if members.is_empty() {
            return;
        }
        // The process group too, in case a member is between fork and exec.
        if let Some(pgid) = Pid::from_raw(leader) {
            let _ = rustix::process::kill_process_group(pgid, signal);
        }
        signal_all(&members, signal);
        // A continued process can act on the signal; a stopped one would not.
        signal_all(&members, Signal::CONT);
        members.retain(|pid| Pid::from_raw(*pid).is_some());
        if wait_gone(&members, limit).await && session_members(leader).is_empty() {
            return;
        }
    }
}

/// The fields of /proc/PID/stat (or of one task's, /proc/PID/task/TID/stat) that leftovers,
/// start times and readiness are read from.
pub(crate) struct Stat {
    /// `R` running, `S` sleeping, `Z` zombie, ...
    pub state: char,
    pub zombie: bool,
    pub ppid: i32,
    pub pgrp: i32,
    pub session: i32,
    pub start_time: u64,
}

pub(crate) fn stat(pid: i32) -> Option<Stat> {
    stat_at(Path::new(&format!("/proc/{pid}/stat")))
}

/// The stat file at `path`.
pub(crate) fn stat_at(path: &Path) -> Option<Stat> {
    parse_stat(&std::fs::read_to_string(path).ok()?)
}

fn parse_stat(text: &str) -> Option<Stat> {
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let fields: Vec<&str> = text[text.rfind(')')? + 1..].split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    Some(Stat {
        state,
        zombie: matches!(state, 'Z' | 'X' | 'x'),
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        session: fields.get(3)?.parse().ok()?,
        start_time: fields.get(19)?.parse().ok()?,
    })
}

/// How long ago process `pid` started.
pub fn started_ago(pid: i32) -> Option<Duration> {
    let ticks_then = stat(pid)?.start_time as f64;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split(' ')
        .next()?
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the system.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (per_second > 0.0).then(|| Duration::from_secs_f64((uptime - ticks_then / per_second).max(0.0)))
}

/// When process `pid` started (clock ticks since boot), zombie or not.
pub(crate) fn proc_start_time(pid: i32) -> Option<u64> {
    Some(stat(pid)?.start_time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_age_is_read_from_proc() {
        let age = started_ago(std::process::id() as i32).expect("this process's age");
        assert!(age < Duration::from_secs(24 * 3600), "{age:?}");
        assert_eq!(started_ago(i32::MAX), None, "no such process");
    }

    #[test]
    fn stat_fields_are_counted_after_a_name_with_spaces_and_parentheses() {
        let tail = (0..17).map(|n| n.to_string()).collect::<Vec<_>>().join(" ");
        let stat = parse_stat(&format!("42 (a (b) c) S 1 40 41 34816 {tail}")).expect("parses");
        assert_eq!((stat.state, stat.pgrp, stat.session), ('S', 40, 41));
        assert_eq!(stat.start_time, 14);
        assert!(!stat.zombie);
    }

    #[tokio::test]
    async fn a_helpers_end_is_reported_by_the_reaper() {
        let mut stdin_fed = std::process::Command::new("sh");
        stdin_fed
            .args(["-c", "read line; exit \"$line\""])
            .stdin(std::process::Stdio::piped());
        let mut helper = spawn_helper(stdin_fed).expect("start sh");
        // Still running: it waits for its line.
        assert_eq!(*helper.exit.borrow(), None);
        use std::io::Write;
        let mut stdin = helper.stdin.take().expect("a stdin pipe");
        stdin.write_all(b"7\n").expect("write");
        let ended = tokio::time::timeout(
            Duration::from_secs(30),
            helper.exit.wait_for(Option::is_some),
        )
        .await
        .expect("the reaper reports the exit")
        .map(|info| *info)
        .expect("the sender lives");
        assert_eq!(
            ended,
            Some(ExitInfo {
                exit_code: Some(7),
                signal: None
            })
        );

        let mut killed = std::process::Command::new("sh");
        killed.args(["-c", "kill -9 $$"]);
        let mut helper = spawn_helper(killed).expect("start sh");
        let ended = tokio::time::timeout(
            Duration::from_secs(30),
            helper.exit.wait_for(Option::is_some),
        )
        .await
        .expect("the reaper reports the kill")
        .map(|info| *info)
        .expect("the sender lives");
        assert_eq!(ended.and_then(|info| info.signal), Some(9));
    }
}
