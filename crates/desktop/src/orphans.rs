//! What a desktop's programs leave behind: the processes they start themselves (the session bus
//! activates `at-spi-bus-launcher`, which starts a second `dbus-daemon` and `at-spi2-registryd`; a
//! browser forks its helpers). They stay in the process group of the program we started, and when
//! their parent ends they are reparented to the daemon (a child subreaper). Nobody else reaps them:
//! the session reaper leaves alone any child in the daemon's own session, which ours are. So this
//! module does, twice:
//!
//! - when one ends (SIGCHLD, on a thread of its own): a zombie child of ours in one of the desktops'
//!   process groups, other than the group's leader (a [`crate::process::Child`] collects its leader's
//!   status through its pidfd), is reaped;
//! - when the group is stopped ([`end_members`]): every member still running is signalled by pidfd
//!   (never by group id, which could name someone else once the group is empty), waited for through
//!   its pidfd, and reaped.

use std::collections::HashSet;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use tokio::io::unix::AsyncFd;

/// The process groups our desktops started (each the pid of its leader), kept for the daemon's life
/// (a few bytes each): a member can reach us as a zombie after its group was ended. A number reused
/// by another group is harmless: only our children in our own session are reaped, which are the
/// desktops' (a terminal session's programs have sessions of their own).
fn groups() -> &'static Mutex<HashSet<i32>> {
    static GROUPS: OnceLock<Mutex<HashSet<i32>>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        start_reaper();
        Mutex::default()
    })
}

fn lock_groups() -> std::sync::MutexGuard<'static, HashSet<i32>> {
    groups()
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Watch the group led by `leader` (a child just started as a group leader).
pub(crate) fn watch_group(leader: i32) {
    lock_groups().insert(leader);
}

/// A thread that reaps on every SIGCHLD (tokio's signal handler chains with the session reaper's).
fn start_reaper() {
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("screenpilot-desktop-orphans".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                let _ = ready_tx.send(());
                return;
            };
            runtime.block_on(async move {
                let signals = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child());
                let _ = ready_tx.send(());
                let Ok(mut signals) = signals else { return };
                loop {
                    reap_orphans();
                    if signals.recv().await.is_none() {
                        return;
                    }
                }
            });
        });
    if spawned.is_ok() {
        // The handler must be installed before the first of our children can end.
        let _ = ready_rx.recv();
    }
}

/// What /proc says about one process.
struct Stat {
    pid: i32,
    state: char,
    ppid: i32,
    pgrp: i32,
    session: i32,
}

fn stat_of(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The name (field 2) may hold spaces and parentheses: the fields after it follow the last ')'.
    let mut fields = text[text.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(Stat {
        pid,
        state,
        ppid,
        pgrp,
        session,
    })
}

fn every_process() -> Vec<Stat> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat_of)
        .collect()
}

/// Reap every zombie child of ours that one of the desktops' groups left behind.
pub(crate) fn reap_orphans() {
    let watched = lock_groups().clone();
    if watched.is_empty() {
        return;
    }
    // SAFETY: getpid and getsid(0) only read our own ids.
    let (us, our_session) = unsafe { (libc::getpid(), libc::getsid(0)) };
    for process in every_process() {
        let ours = process.ppid == us
            && process.state == 'Z'
            && process.session == our_session
            && process.pid != process.pgrp
            && watched.contains(&process.pgrp);
        if ours {
            // SAFETY: a plain non-blocking wait for one pid that is our unreaped child.
            unsafe {
                let mut status = 0;
                libc::waitpid(process.pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

/// Pidfds of the members of the group led by `leader` (the leader left out), in our session.
fn members(leader: i32) -> Vec<OwnedFd> {
    // SAFETY: getsid(0) only reads our own session id.
    let our_session = unsafe { libc::getsid(0) };
    every_process()
        .into_iter()
        .filter(|p| p.pgrp == leader && p.pid != leader && p.session == our_session)
        .filter(|p| p.state != 'Z')
        .filter_map(|p| pidfd_open(p.pid))
        .collect()
}

fn pidfd_open(pid: i32) -> Option<OwnedFd> {
    // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
    // SAFETY: a fresh descriptor that nothing else owns.
    (raw >= 0).then(|| unsafe { OwnedFd::from_raw_fd(raw) })
}

fn pidfd_signal(fd: &OwnedFd, signal: i32) {
    // SAFETY: plain syscall on a pidfd we own; no siginfo, no flags.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            fd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        );
    }
}

/// End what is left of the group led by `leader` (whose leader is being stopped or gone): TERM,
/// then KILL after `grace`, each member by its pidfd; wait for them and reap them. A member that
/// forks while we look is found on the next round (at most three).
pub(crate) async fn end_members(leader: i32, grace: Duration) {
    for round in 0..3 {
        let left = members(leader);
        if left.is_empty() {
            break;
        }
        let signal = if round == 0 {
            libc::SIGTERM
        } else {
            libc::SIGKILL
        };
        for fd in &left {
            pidfd_signal(fd, signal);
        }
        let clones: Vec<OwnedFd> = left.iter().filter_map(|fd| fd.try_clone().ok()).collect();
        wait_all_exit(clones, grace).await;
        if round == 0 {
            for fd in &left {
                pidfd_signal(fd, libc::SIGKILL);
            }
            wait_all_exit(left, Duration::from_secs(5)).await;
        }
        reap_orphans();
    }
    reap_orphans();
}

/// The processes below `leader` that left its group (a terminal's shell, in a session of its own
/// on the terminal's pty): pid and pidfd each, taken before the group is ended, since once their
/// parents are gone nothing ties them to the desktop any more.
pub(crate) fn strays(leader: i32) -> Vec<(i32, OwnedFd)> {
    let all = every_process();
    let mut below = vec![leader];
    let mut found = Vec::new();
    while let Some(parent) = below.pop() {
        for child in all.iter().filter(|p| p.ppid == parent && p.state != 'Z') {
            below.push(child.pid);
            if child.pgrp != leader {
                found.extend(pidfd_open(child.pid).map(|fd| (child.pid, fd)));
            }
        }
    }
    found
}

/// End `strays` (see [`strays`]): they usually go by themselves when their terminal closes
/// (SIGHUP); what is left after `grace` is killed. Each that came to us (the daemon is a child
/// subreaper) is reaped, so none stays a zombie.
pub(crate) async fn end_strays(strays: Vec<(i32, OwnedFd)>, grace: Duration) {
    if strays.is_empty() {
        return;
    }
    let clones: Vec<OwnedFd> = strays
        .iter()
        .filter_map(|(_, fd)| fd.try_clone().ok())
        .collect();
    wait_all_exit(clones, grace).await;
    for (_, fd) in &strays {
        pidfd_signal(fd, libc::SIGKILL);
    }
    let (pids, fds): (Vec<i32>, Vec<OwnedFd>) = strays.into_iter().unzip();
    wait_all_exit(fds, Duration::from_secs(5)).await;
    // SAFETY: getpid only reads our own id.
    let us = unsafe { libc::getpid() };
    for pid in pids {
        if stat_of(pid).is_some_and(|p| p.ppid == us && p.state == 'Z') {
            // SAFETY: a plain non-blocking wait for one pid that is our unreaped child.
            unsafe {
                let mut status = 0;
                libc::waitpid(pid, &mut status, libc::WNOHANG);
            }
        }
    }
}

/// Wait until every process behind `pidfds` has exited (whoever its parent), at most `limit`.
pub(crate) async fn wait_all_exit(pidfds: Vec<OwnedFd>, limit: Duration) {
    let waits: Vec<_> = pidfds
        .into_iter()
        .filter_map(|fd| {
            // SAFETY: the AsyncFd owns the descriptor, so it stays the same one while registered.
            unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }.ok()
        })
        .collect();
    let _ = tokio::time::timeout(limit, async {
        for fd in &waits {
            let _ = fd.readable().await;
        }
    })
    .await;
}
