//! Whether the program in front waits for input, and which kind, read from the kernel rather than
//! guessed from the screen: the pty's line settings (termios, read on the master), its foreground
//! process group (`tcgetpgrp` on the master), and what each task of that group is blocked in
//! (`/proc/PID/task/TID/{stat,syscall}`, and for poll, select and epoll the descriptors it waits
//! on). A program counts as waiting only when a task of the foreground group is blocked reading the
//! terminal (or polling it for input) and no task of the group is running; the kind comes from the
//! line settings: canonical with echo is a line, canonical without echo a hidden line (a password),
//! raw is single keys, except a raw prompt on the main screen, which is a line editor (readline).
//!
//! Where the kernel gives no answer (another OS, a task we may not inspect), the answer is
//! [`Input::Unknown`], never a guess.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the program in front is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// A line, echoed (a shell, a REPL, `read -p`, a y/n question).
    Line,
    /// A hidden line: a password prompt. A person should type it (never the model).
    Secret,
    /// Single keys (a full-screen program: vim, less, a menu).
    Keys,
    /// Not reading the terminal: computing, sleeping, waiting on something else, or ended.
    None,
    /// The kernel did not say.
    Unknown,
}

impl Input {
    pub fn name(self) -> &'static str {
        match self {
            Input::Line => "line",
            Input::Secret => "secret",
            Input::Keys => "keys",
            Input::None => "none",
            Input::Unknown => "unknown",
        }
    }

    /// The program waits for input of some kind.
    pub fn waiting(self) -> bool {
        matches!(self, Input::Line | Input::Secret | Input::Keys)
    }
}

/// The pty of one session, as readiness reads it.
#[derive(Debug)]
pub struct Terminal {
    /// A duplicate of the pty's master, for the line settings and the foreground group.
    master: std::os::fd::OwnedFd,
    /// The leader the session started (its processes are its descendants).
    leader: i32,
    /// `/dev/pts/N`, as `/proc/PID/fd` links name it.
    pts: Option<PathBuf>,
}

impl Terminal {
    /// Watch the pty whose master is `master`, for the session led by `leader`.
    pub fn new(master: BorrowedFd<'_>, leader: i32) -> std::io::Result<Terminal> {
        let master = master.try_clone_to_owned()?;
        let mut number: libc::c_uint = 0;
        // SAFETY: TIOCGPTN writes one unsigned int through a valid pointer.
        let rc = unsafe { libc::ioctl(master.as_raw_fd(), libc::TIOCGPTN, &mut number) };
        let pts = (rc == 0).then(|| PathBuf::from(format!("/dev/pts/{number}")));
        Ok(Terminal {
            master,
            leader,
            pts,
        })
    }

    /// Bytes the program wrote that have not been read from the master yet: output on its way.
    pub fn output_pending(&self) -> usize {
        let mut count: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through a valid pointer.
        let rc = unsafe { libc::ioctl(self.master.as_raw_fd(), libc::FIONREAD, &mut count) };
        if rc == 0 {
            usize::try_from(count).unwrap_or(0)
        } else {
            0
        }
    }

    /// Input typed that the program has not read yet (0 when it cannot be told).
    pub fn input_pending(&self) -> usize {
        let Some(pts) = &self.pts else { return 0 };
        // The slave is opened for a moment only: holding it would keep the pty from hanging up
        // when the program ends.
        let Ok(slave) = rustix::fs::open(
            pts,
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::NONBLOCK,
            rustix::fs::Mode::empty(),
        ) else {
            return 0;
        };
        let mut count: libc::c_int = 0;
        // SAFETY: FIONREAD writes one int through a valid pointer.
        let rc = unsafe { libc::ioctl(slave.as_raw_fd(), libc::FIONREAD, &mut count) };
        if rc == 0 {
            usize::try_from(count).unwrap_or(0)
        } else {
            0
        }
    }

    /// The line settings: (canonical, echo), or `None` when they cannot be read.
    pub fn line_settings(&self) -> Option<(bool, bool)> {
        // SAFETY: termios is plain data that tcgetattr fills.
        let mut termios: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: a valid fd and pointer; on a pty master Linux reports the slave's settings.
        let rc = unsafe { libc::tcgetattr(self.master.as_raw_fd(), &mut termios) };
        (rc == 0).then_some((
            termios.c_lflag & libc::ICANON != 0,
            termios.c_lflag & libc::ECHO != 0,
        ))
    }

    /// The line settings say a hidden line is being read (canonical, echo off).
    pub fn hidden_line(&self) -> bool {
        self.line_settings() == Some((true, false))
    }

    /// What the program in front waits for. The program is looked at first, then the line
    /// settings (a program blocked reading changes neither them nor what it wrote), then the
    /// screen: `full_screen()` (the alternate screen is on, or nothing is shown yet) tells a
    /// full-screen program from a line editor when both read raw keys with echo off.
    pub fn input(&self, full_screen: impl FnOnce() -> bool) -> Input {
        // SAFETY: tcgetpgrp on a valid fd; on a pty master it reports the slave's foreground group.
        let group = unsafe { libc::tcgetpgrp(self.master.as_raw_fd()) };
        if group <= 0 {
            return Input::Unknown;
        }
        let Some(pts) = &self.pts else {
            return Input::Unknown;
        };
        let mut reading = false;
        let mut unsure = false;
        for pid in group_members(self.leader, group) {
            match process_state(pid, pts) {
                Task::Running => return Input::None,
                Task::Reading => reading = true,
                Task::Elsewhere => {}
                Task::Unknown => unsure = true,
            }
        }
        let Some((canonical, echo)) = self.line_settings() else {
            return Input::Unknown;
        };
        let full_screen = full_screen();
        let kind = match (canonical, echo) {
            (true, true) => Input::Line,
            (true, false) => Input::Secret,
            (false, true) => Input::Keys,
            (false, false) if full_screen => Input::Keys,
            (false, false) => Input::Line,
        };
        if reading {
            kind
        } else if unsure && kind == Input::Secret {
            // A task we may not inspect (a set-uid sudo) sleeps while the terminal reads a hidden
            // line: only a password prompt sets that.
            Input::Secret
        } else if unsure {
            Input::Unknown
        } else {
            Input::None
        }
    }
}

/// The processes of process group `group` among `leader` and its descendants (a program's own
/// foreground jobs stay in its tree; what left it is not in front).
fn group_members(leader: i32, group: i32) -> Vec<i32> {
    let mut members = Vec::new();
    let mut queue = vec![leader];
    let mut seen = 0usize;
    while let Some(pid) = queue.pop() {
        seen += 1;
        // A bound against a tree that forks faster than we read it.
        if seen > 4096 {
            break;
        }
        if process_group(pid) == Some(group) {
            members.push(pid);
        }
        queue.extend(children(pid));
    }
    if members.is_empty() && group != leader && process_group(group) == Some(group) {
        // The group's leader outside the tree (a job that double-forked): still the one in front.
        members.push(group);
    }
    members
}

/// The children of every thread of `pid`.
fn children(pid: i32) -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for task in tasks.flatten() {
        let path = task.path().join("children");
        if let Ok(text) = std::fs::read_to_string(path) {
            found.extend(
                text.split_whitespace()
                    .filter_map(|w| w.parse::<i32>().ok()),
            );
        }
    }
    found
}

fn process_group(pid: i32) -> Option<i32> {
    Some(crate::process::stat(pid)?.pgrp)
}

/// What one process is doing, as far as input goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Task {
    /// A task of it is on a processor.
    Running,
    /// A task is blocked reading the terminal (or polling it for input).
    Reading,
    /// Blocked on something else (a timer, a pipe, a socket, a child).
    Elsewhere,
    /// It may not be inspected.
    Unknown,
}

fn process_state(pid: i32, pts: &std::path::Path) -> Task {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Task::Elsewhere;
    };
    let terminal_fds = terminal_fds(pid, pts);
    let mut reading = false;
    let mut unknown = false;
    for task in tasks.flatten() {
        let dir = task.path();
        let Some(stat) = crate::process::stat_at(&dir.join("stat")) else {
            continue;
        };
        if stat.state == 'R' {
            return Task::Running;
        }
        if stat.state != 'S' {
            // Stopped, traced, in the disk, a zombie: not reading the terminal.
            continue;
        }
        let Some(fds) = terminal_fds.as_ref() else {
            unknown = true;
            continue;
        };
        match std::fs::read_to_string(dir.join("syscall")) {
            Ok(line) => match blocked_on_terminal(pid, &line, fds) {
                Some(true) => reading = true,
                Some(false) => {}
                None => unknown = true,
            },
            Err(_) => unknown = true,
        }
    }
    if reading {
        Task::Reading
    } else if unknown {
        Task::Unknown
    } else {
        Task::Elsewhere
    }
}

/// The descriptors of `pid` open on the terminal; `None` when they cannot be read.
fn terminal_fds(pid: i32, pts: &std::path::Path) -> Option<Vec<i32>> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    let mut fds = Vec::new();
    for entry in entries.flatten() {
        // `/dev/tty` is the process's controlling terminal, ours for a process of the session.
        if std::fs::read_link(entry.path())
            .is_ok_and(|target| target == pts || target == std::path::Path::new("/dev/tty"))
        {
            if let Some(fd) = entry.file_name().to_str().and_then(|n| n.parse().ok()) {
                fds.push(fd);
            }
        }
    }
    Some(fds)
}

/// System call numbers that wait for input, on this machine's architecture.
#[cfg(target_arch = "x86_64")]
mod calls {
    pub const READ: &[i64] = &[0, 17, 19, 295, 327]; // read, pread64, readv, preadv, preadv2
    pub const POLL: &[i64] = &[7, 271]; // poll, ppoll
    pub const SELECT: &[i64] = &[23, 270]; // select, pselect6
    pub const EPOLL: &[i64] = &[232, 281, 441]; // epoll_wait, epoll_pwait, epoll_pwait2
}
#[cfg(target_arch = "aarch64")]
mod calls {
    pub const READ: &[i64] = &[63, 67, 65, 69, 286]; // read, pread64, readv, preadv, preadv2
    pub const POLL: &[i64] = &[73]; // ppoll
    pub const SELECT: &[i64] = &[72]; // pselect6
    pub const EPOLL: &[i64] = &[22, 441]; // epoll_pwait, epoll_pwait2
}
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod calls {
    pub const READ: &[i64] = &[];
    pub const POLL: &[i64] = &[];
    pub const SELECT: &[i64] = &[];
    pub const EPOLL: &[i64] = &[];
}

/// Whether the blocked system call of a task (`/proc/.../syscall`: number and arguments in hex)
/// waits for input from one of `fds`; `None` when that cannot be told.
fn blocked_on_terminal(pid: i32, line: &str, fds: &[i32]) -> Option<bool> {
    let mut words = line.split_whitespace();
    let number: i64 = words.next()?.parse().ok()?;
    let args: Vec<u64> = words
        .take(6)
        .filter_map(|w| u64::from_str_radix(w.trim_start_matches("0x"), 16).ok())
        .collect();
    if number < 0 || args.len() < 3 {
        // "running" or not in a system call.
        return Some(false);
    }
    let arg = |i: usize| args.get(i).copied().unwrap_or(0);
    let is_terminal = |fd: u64| i32::try_from(fd).is_ok_and(|fd| fds.contains(&fd));
    if calls::READ.contains(&number) {
        return Some(is_terminal(arg(0)));
    }
    if fds.is_empty() {
        return Some(false);
    }
    if calls::POLL.contains(&number) {
        // struct pollfd { int fd; short events; short revents; }, nfds of them at arg 0.
        let count = usize::try_from(arg(1)).ok()?.min(4096);
        let bytes = read_memory(pid, arg(0), count * 8)?;
        return Some(bytes.chunks_exact(8).any(|entry| {
            let fd = i32::from_ne_bytes([entry[0], entry[1], entry[2], entry[3]]);
            let events = i16::from_ne_bytes([entry[4], entry[5]]);
            fds.contains(&fd) && events & (libc::POLLIN | libc::POLLPRI) != 0
        }));
    }
    if calls::SELECT.contains(&number) {
        // The read set is a bitmap of nfds bits at arg 1.
        let nfds = usize::try_from(arg(0)).ok()?.min(65536);
        if arg(1) == 0 {
            return Some(false);
        }
        let bytes = read_memory(pid, arg(1), nfds.div_ceil(8))?;
        return Some(fds.iter().any(|&fd| {
            let fd = fd as usize;
            fd < nfds && bytes.get(fd / 8).is_some_and(|b| b & (1 << (fd % 8)) != 0)
        }));
    }
    if calls::EPOLL.contains(&number) {
        // The epoll instance lists what it watches in its fdinfo: `tfd: N events: HEX ...`.
        let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{}", arg(0))).ok()?;
        return Some(info.lines().any(|line| {
            let mut words = line.split_whitespace();
            if words.next() != Some("tfd:") {
                return false;
            }
            let fd: Option<i32> = words.next().and_then(|w| w.parse().ok());
            let events = words
                .skip_while(|w| *w != "events:")
                .nth(1)
                .and_then(|w| u32::from_str_radix(w, 16).ok())
                .unwrap_or(0);
            fd.is_some_and(|fd| fds.contains(&fd)) && events & (libc::EPOLLIN as u32) != 0
        }));
    }
    Some(false)
}

/// `len` bytes of `pid`'s memory at `address` (we started it, so we may read it).
fn read_memory(pid: i32, address: u64, len: usize) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    if len == 0 {
        return Some(Vec::new());
    }
    let file = std::fs::File::open(format!("/proc/{pid}/mem")).ok()?;
    let mut bytes = vec![0u8; len];
    file.read_exact_at(&mut bytes, address).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blocked_read_counts_only_on_a_terminal_descriptor() {
        let fds = [0, 5];
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(
                blocked_on_terminal(1, "0 0x0 0x7ffd 0x1 0x0 0x0 0x0 0x7ff 0x7ff", &fds),
                Some(true)
            );
            assert_eq!(
                blocked_on_terminal(1, "0 0x3 0x7ffd 0x1 0x0 0x0 0x0 0x7ff 0x7ff", &fds),
                Some(false)
            );
            // clock_nanosleep: a timer, not input.
            assert_eq!(
                blocked_on_terminal(1, "230 0x1 0x0 0x7ffd 0x0 0x0 0x0 0x7ff 0x7ff", &fds),
                Some(false)
            );
        }
        assert_eq!(blocked_on_terminal(1, "running", &fds), None);
        assert_eq!(blocked_on_terminal(1, "-1 0x7ffd 0x7ff", &fds), Some(false));
    }
}
