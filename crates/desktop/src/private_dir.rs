//! The private directory of a desktop (its X cookie and logs), and the clean-up of directories that
//! a killed daemon left behind.
//!
//! Why an owner record: a daemon that exits normally removes its directories, but one killed with
//! SIGKILL cannot; its X servers die with it (parent-death signal), its directories would stay. Each
//! directory therefore records the process that made it (pid, start time, pid namespace), and every
//! new desktop first removes the directories whose owner is gone. Only a directory that is ours (our
//! uid, a real directory, not a symlink) with a readable record naming a process of our namespace
//! that no longer runs is removed; anything else (a record being written, another user's, another
//! container's) is left alone.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use crate::error::{DesktopError, Result};
use crate::server::random_bytes;

/// Every private directory's name starts with this.
const PREFIX: &str = "screenpilot-desktop-";
/// The owner record inside it: "PID START_TIME PID_NAMESPACE".
const OWNER_FILE: &str = "owner";

/// A directory only we can read, removed when dropped: the cookie and the logs live here.
#[derive(Debug)]
pub struct PrivateDir(PathBuf);

impl PrivateDir {
    /// Create a new directory under `$XDG_RUNTIME_DIR` (or the temp directory), after removing the
    /// ones whose owner died.
    pub fn create(label: &str) -> Result<PrivateDir> {
        let base = base_dir();
        remove_abandoned(&base);
        PrivateDir::create_in(&base, label)
    }

    fn create_in(base: &Path, label: &str) -> Result<PrivateDir> {
        let mut bytes = [0u8; 6];
        random_bytes(&mut bytes)?;
        let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let label: String = label
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .take(40)
            .collect();
        let path = base.join(format!("{PREFIX}{label}-{suffix}"));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .map_err(|e| DesktopError::Io(format!("cannot create {}: {e}", path.display())))?;
        let dir = PrivateDir(path);
        if let Some(owner) = Owner::this_process() {
            // Without a record the directory is never taken for abandoned: a leak, not a loss.
            let _ = std::fs::write(dir.0.join(OWNER_FILE), owner.record());
        }
        Ok(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The process that made a directory. The start time tells a reused pid from the owner; the
/// namespace says whether that pid can be looked up from here at all.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    pid: i32,
    start_time: u64,
    pid_namespace: String,
}

impl Owner {
    fn this_process() -> Option<Owner> {
        let pid = std::process::id() as i32;
        Some(Owner {
            pid,
            start_time: start_time(pid)?,
            pid_namespace: pid_namespace()?,
        })
    }

    fn record(&self) -> String {
        format!("{} {} {}\n", self.pid, self.start_time, self.pid_namespace)
    }

    fn parse(record: &str) -> Option<Owner> {
        let mut fields = record.split_whitespace();
        let owner = Owner {
            pid: fields.next()?.parse().ok()?,
            start_time: fields.next()?.parse().ok()?,
            pid_namespace: fields.next()?.to_owned(),
        };
        fields.next().is_none().then_some(owner)
    }

    fn is_running(&self) -> bool {
        start_time(self.pid) == Some(self.start_time)
    }
}

/// When process `pid` started, in clock ticks since boot (field 22 of /proc/PID/stat); `None` when
/// it does not run, including a zombie nobody reaped (a killed daemon whose parent does not wait).
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count from the last ')'.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?;
    if matches!(state, "Z" | "X" | "x") {
        return None;
    }
    fields.nth(18)?.parse().ok()
}

/// Our pid namespace, e.g. "pid:[4026531836]".
fn pid_namespace() -> Option<String> {
    let link = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(link.to_string_lossy().into_owned())
}

/// Where private directories are made: `$XDG_RUNTIME_DIR`, else the temp directory.
fn base_dir() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|p| p.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

/// Remove the private directories under `base` whose owner no longer runs. Does nothing when this
/// process cannot read its own record (no /proc): then no owner could be told alive from dead.
pub(crate) fn remove_abandoned(base: &Path) {
    for (path, _) in abandoned(base) {
        let _ = std::fs::remove_dir_all(&path);
    }
}

/// The private directories under `base` whose owner no longer runs, with that owner.
fn abandoned(base: &Path) -> Vec<(PathBuf, Owner)> {
    let Some(us) = Owner::this_process() else {
        return Vec::new();
    };
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let Ok(entries) = std::fs::read_dir(base) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with(PREFIX) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || meta.uid() != uid {
            continue;
        }
        let Some(owner) = std::fs::read_to_string(path.join(OWNER_FILE))
            .ok()
            .as_deref()
            .and_then(Owner::parse)
        else {
            continue;
        };
        if owner.pid_namespace == us.pid_namespace && !owner.is_running() {
            found.push((path, owner));
        }
    }
    found
}

/// What [`end_abandoned`] did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Abandoned {
    /// Private directories removed.
    pub dirs: usize,
    /// Processes that named one and were ended (or still ran after the KILL step: `survivors`).
    pub processes: usize,
    pub survivors: usize,
}

/// For a daemon starting after one was killed: end the processes its desktops left running, then
/// remove their private directories.
///
/// Why this is safe: Xvfb and the window manager die with the daemon (parent-death signal), but the
/// desktop's program may ignore it, and what that program started gets no signal at all. A process
/// is taken for a leftover of an abandoned directory (owner gone, as for [`remove_abandoned`]) only
/// if it runs as our uid, started after the directory's owner, and names that directory, whose name
/// holds 48 random bits: its `XAUTHORITY` (every program on the desktop inherits it) or an argument
/// (Xvfb's `-auth`) inside it. Each is opened as a pidfd and checked again before any signal, so a
/// reused pid is never hit. TERM first, KILL after `grace`.
pub async fn end_abandoned(grace: std::time::Duration) -> Abandoned {
    let mut done = Abandoned::default();
    for (path, owner) in abandoned(&base_dir()) {
        let mut seen = std::collections::HashSet::new();
        for (signal, limit) in [
            (libc::SIGTERM, grace),
            (libc::SIGKILL, std::time::Duration::from_secs(5)),
        ] {
            let members = naming(&path, &owner);
            if members.is_empty() {
                break;
            }
            for (pid, fd) in &members {
                seen.insert(*pid);
                send_signal(fd, signal);
                send_signal(fd, libc::SIGCONT);
            }
            let fds = members.into_iter().map(|(_, fd)| fd).collect();
            crate::orphans::wait_all_exit(fds, limit).await;
        }
        done.processes += seen.len();
        done.survivors += naming(&path, &owner).len();
        if std::fs::remove_dir_all(&path).is_ok() {
            done.dirs += 1;
        }
    }
    done
}

/// The live processes of our uid, started after `owner`, that name `dir` in their environment's
/// XAUTHORITY or in an argument; each opened as a pidfd.
fn naming(dir: &Path, owner: &Owner) -> Vec<(i32, OwnedFd)> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut inside = dir.as_os_str().as_bytes().to_vec();
    inside.push(b'/');
    let mut xauthority = b"XAUTHORITY=".to_vec();
    xauthority.extend_from_slice(&inside);
    let names_dir = |pid: i32| -> bool {
        let owned = std::fs::metadata(format!("/proc/{pid}"))
            .map(|meta| meta.uid() == uid)
            .unwrap_or(false);
        if !owned || start_time(pid).is_none_or(|started| started < owner.start_time) {
            return false;
        }
        let listed = |file: &str, prefix: &[u8]| {
            std::fs::read(format!("/proc/{pid}/{file}"))
                .map(|bytes| {
                    bytes
                        .split(|b| *b == 0)
                        .any(|item| item.starts_with(prefix))
                })
                .unwrap_or(false)
        };
        listed("environ", &xauthority) || listed("cmdline", &inside)
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| *pid != std::process::id() as i32 && names_dir(*pid))
        .filter_map(|pid| {
            // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
            let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
            if raw < 0 {
                return None;
            }
            // SAFETY: `raw` is a fresh descriptor that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(raw) };
            // Checked again now that the descriptor pins the process: the pid may have been reused.
            names_dir(pid).then_some((pid, fd))
        })
        .collect()
}

fn send_signal(pidfd: &OwnedFd, signal: i32) {
    // SAFETY: plain syscall on a pidfd we own; no siginfo.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            signal,
            std::ptr::null::<libc::siginfo_t>(),
            0,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory to play the temp directory, removed at the end.
    struct Base(PathBuf);

    impl Base {
        fn new(name: &str) -> Base {
            let path = std::env::temp_dir()
                .join(format!("sp-private-dir-test-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&path);
            std::fs::create_dir(&path).expect("base dir");
            Base(path)
        }
    }

    impl Drop for Base {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn private_dirs_are_0700_recorded_and_removed() {
        use std::os::unix::fs::PermissionsExt;
        let base = Base::new("mode");
        let dir = PrivateDir::create_in(&base.0, "unit").expect("private dir");
        let path = dir.path().to_path_buf();
        let mode = std::fs::metadata(&path)
            .expect("exists")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let record = std::fs::read_to_string(path.join(OWNER_FILE)).expect("owner record");
        assert_eq!(Owner::parse(&record), Owner::this_process());
        drop(dir);
        assert!(!path.exists());
    }

    #[test]
    fn only_directories_of_a_dead_owner_are_removed() {
        let base = Base::new("sweep");
        let us = Owner::this_process().expect("/proc is readable");
        let dir_with = |name: &str, record: Option<String>| {
            let path = base.0.join(format!("{PREFIX}{name}"));
            std::fs::create_dir(&path).expect("dir");
            if let Some(record) = record {
                std::fs::write(path.join(OWNER_FILE), record).expect("record");
            }
            path
        };
        // Our pid with another start time: the owner died and its pid was reused (by us).
        let dead = dir_with(
            "dead",
            Some(
                Owner {
                    start_time: us.start_time + 1,
                    ..us.clone()
                }
                .record(),
            ),
        );
        let alive = dir_with("alive", Some(us.record()));
        let unrecorded = dir_with("unrecorded", None);
        let garbled = dir_with("garbled", Some("12 not-a-number".into()));
        let elsewhere = dir_with(
            "other-namespace",
            Some(
                Owner {
                    start_time: us.start_time + 1,
                    pid_namespace: "pid:[1]".into(),
                    ..us.clone()
                }
                .record(),
            ),
        );
        // A symlink to a dead owner's directory is not followed.
        let target = base.0.join("target");
        std::fs::create_dir(&target).expect("target");
        std::fs::write(
            target.join(OWNER_FILE),
            std::fs::read(dead.join(OWNER_FILE)).expect("record"),
        )
        .expect("record");
        let link = base.0.join(format!("{PREFIX}link"));
        std::os::unix::fs::symlink(&target, &link).expect("symlink");

        remove_abandoned(&base.0);
        assert!(!dead.exists(), "a dead owner's directory stayed");
        for kept in [&alive, &unrecorded, &garbled, &elsewhere, &link, &target] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
    }
}
