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
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
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

/// Remove the private directories under `base` whose owner no longer runs. Does nothing when this
/// process cannot read its own record (no /proc): then no owner could be told alive from dead.
pub(crate) fn remove_abandoned(base: &Path) {
    let Some(us) = Owner::this_process() else {
        return;
    };
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
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
            let _ = std::fs::remove_dir_all(&path);
        }
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
