//! Sessions a killed daemon left running, and how the next daemon ends them.
//!
//! Why records: a daemon that is killed (SIGKILL, OOM) cannot end its sessions. Its programs get the
//! pty's hang-up, but one that ignores SIGHUP keeps running, reparented to init, unknown to the next
//! daemon. So the registry keeps one small file per live session in the daemon's private directory,
//! written when the session starts and removed once it is closed: the leader's pid, when it started
//! (clock ticks since boot, field 22 of /proc/PID/stat) and the boot it started in. The next daemon,
//! holding the daemon lock (so no other daemon owns these records), reads what is left and ends the
//! processes that are provably the same session.
//!
//! What counts as ours, for a record of leader pid N started at S:
//! - another boot: nothing (pids mean nothing across boots);
//! - pid N runs (or is a zombie) with start time S: the session is ours; every process of our uid
//!   whose session id is N;
//! - pid N runs with another start time: the pid was reused, so our session is entirely gone (Linux
//!   never hands out a pid still used as a session id); nothing;
//! - pid N does not run: the processes of our uid in session N that started at or after S. A session
//!   id stays reserved while any member lives, so these are our session's, unless it emptied, N was
//!   reused by a process that called setsid and then exited, all between the kill and this start.
//!
//! Each process is opened as a pidfd and checked again through it before any signal, so a pid that
//! ends and is reused between the look and the signal is never hit.

use std::os::fd::OwnedFd;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::{Pid, PidfdFlags, Signal};
use tokio::io::unix::AsyncFd;

use crate::process::stat;

/// What identifies a session's processes to a daemon that did not start them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRecord {
    /// The session leader's pid: also the session id and process group of what it started.
    pub leader: i32,
    /// When the leader started, in clock ticks since boot.
    pub start_time: u64,
    /// /proc/sys/kernel/random/boot_id at the time.
    pub boot_id: String,
    /// What a person knew the session as: its sid and command (absent in a record of an older
    /// daemon).
    pub named: Option<Lost>,
}

/// A session a killed daemon took with it, as its next daemon reports it.
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct Lost {
    pub sid: String,
    pub cmd: String,
}

impl SessionRecord {
    /// The record of a leader we started; `None` when /proc cannot tell.
    pub fn of(leader: i32, named: Lost) -> Option<SessionRecord> {
        Some(SessionRecord {
            leader,
            start_time: crate::process::start_time(leader)?,
            boot_id: boot_id()?,
            named: Some(named),
        })
    }

    /// The record's file: `LEADER START BOOT`, then its name as a JSON line.
    fn text(&self) -> String {
        let named = self
            .named
            .as_ref()
            .and_then(|n| serde_json::to_string(n).ok())
            .unwrap_or_default();
        format!(
            "{} {} {}\n{named}\n",
            self.leader, self.start_time, self.boot_id
        )
    }

    fn parse(text: &str) -> Option<SessionRecord> {
        let mut lines = text.lines();
        let mut fields = lines.next()?.split_whitespace();
        let record = SessionRecord {
            leader: fields.next()?.parse().ok().filter(|pid| *pid > 1)?,
            start_time: fields.next()?.parse().ok()?,
            boot_id: fields.next()?.to_owned(),
            named: lines.next().and_then(|l| serde_json::from_str(l).ok()),
        };
        fields.next().is_none().then_some(record)
    }
}

/// The directory of records, one file per live session, named by its leader's pid.
#[derive(Debug, Clone)]
pub struct Records(PathBuf);

impl Records {
    /// Use (creating, mode 0700) `dir` for the records.
    pub fn in_dir(dir: PathBuf) -> std::io::Result<Records> {
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
        Ok(Records(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    fn file(&self, leader: i32) -> PathBuf {
        self.0.join(leader.to_string())
    }

    /// Record a session that just started. Best effort: without a record, a kill -9 of the daemon
    /// may leave it running, as before records existed.
    pub fn add(&self, leader: i32, named: Lost) {
        if let Some(record) = SessionRecord::of(leader, named) {
            let _ = std::fs::write(self.file(leader), record.text());
        }
    }

    /// Forget a session whose processes have been ended.
    pub fn remove(&self, leader: i32) {
        let _ = std::fs::remove_file(self.file(leader));
    }

    /// Every readable record. Unreadable or malformed files are removed (only a daemon writes here,
    /// and only this daemon runs).
    pub fn leftovers(&self) -> Vec<SessionRecord> {
        let Ok(entries) = std::fs::read_dir(&self.0) else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            match std::fs::read_to_string(&path)
                .ok()
                .as_deref()
                .and_then(SessionRecord::parse)
            {
                Some(record) => found.push(record),
                None => {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        found
    }
}

/// What `end_leftovers` did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ended {
    /// Records read.
    pub records: usize,
    /// Processes signalled (each counted once).
    pub processes: usize,
    /// Processes still running after the KILL step's limit.
    pub survivors: usize,
    /// The sessions of this boot the records named: lost with the daemon that ran them.
    pub lost: Vec<Lost>,
}

/// End the sessions a killed daemon left (see the module doc for what counts as ours): HUP, then TERM,
/// then KILL, each step after `grace` for what still runs, all sessions at once. Every record is
/// removed. Call it only while holding the daemon lock, before any session starts.
pub async fn end_leftovers(records: &Records, grace: Duration) -> Ended {
    let leftovers = records.leftovers();
    let mut ended = Ended {
        records: leftovers.len(),
        ..Ended::default()
    };
    let boot = boot_id();
    let mut all = tokio::task::JoinSet::new();
    for record in leftovers {
        if boot.as_deref() != Some(record.boot_id.as_str()) {
            records.remove(record.leader);
            continue;
        }
        ended.lost.extend(record.named.clone());
        all.spawn(end_one(record, grace));
    }
    // Each record goes once its processes are gone: a daemon killed during this sweep leaves the
    // rest to the next one.
    while let Some(result) = all.join_next().await {
        if let Ok((leader, signalled, survivors)) = result {
            records.remove(leader);
            ended.processes += signalled;
            ended.survivors += survivors;
        }
    }
    ended
}

/// End one leftover session; returns its leader, how many processes were signalled and how many
/// survived.
async fn end_one(record: SessionRecord, grace: Duration) -> (i32, usize, usize) {
    let steps = [
        (Signal::HUP, grace),
        (Signal::TERM, grace),
        (Signal::KILL, Duration::from_secs(5)),
    ];
    let mut seen = std::collections::HashSet::new();
    for (signal, limit) in steps {
        let members = ours(&record);
        if members.is_empty() {
            return (record.leader, seen.len(), 0);
        }
        for (pid, fd) in &members {
            seen.insert(*pid);
            let _ = rustix::process::pidfd_send_signal(fd, signal);
            // A stopped process acts on the signal only once continued.
            let _ = rustix::process::pidfd_send_signal(fd, Signal::CONT);
        }
        let fds: Vec<OwnedFd> = members.into_iter().map(|(_, fd)| fd).collect();
        all_exit(fds, limit).await;
    }
    (record.leader, seen.len(), ours(&record).len())
}

/// The processes of `record`'s session that are provably ours, each opened as a pidfd and checked
/// again through it.
fn ours(record: &SessionRecord) -> Vec<(i32, OwnedFd)> {
    let leader = stat(record.leader);
    let leader_is_ours = match &leader {
        Some(stat) if stat.start_time == record.start_time => true,
        // The pid was reused: our session has no member left (its id would still be reserved).
        Some(_) => return Vec::new(),
        None => false,
    };
    let uid = rustix::process::getuid().as_raw();
    let belongs = |pid: i32| -> bool {
        let Some(stat) = stat(pid) else {
            return false;
        };
        let owned = std::fs::metadata(format!("/proc/{pid}"))
            .map(|meta| meta.uid() == uid)
            .unwrap_or(false);
        owned
            && !stat.zombie
            && stat.session == record.leader
            && (leader_is_ours || stat.start_time >= record.start_time)
    };
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| belongs(*pid))
        .filter_map(|pid| {
            let fd = rustix::process::pidfd_open(Pid::from_raw(pid)?, PidfdFlags::empty()).ok()?;
            // The pid may have ended and been reused since the look above: check the same process
            // the descriptor now pins.
            belongs(pid).then_some((pid, fd))
        })
        .collect()
}

/// Wait until every process behind `fds` has exited, at most `limit`.
async fn all_exit(fds: Vec<OwnedFd>, limit: Duration) {
    let waits: Vec<_> = fds
        .into_iter()
        .filter_map(|fd| {
            // SAFETY: the AsyncFd owns the descriptor, so it stays the same one while registered.
            let fd = unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
                .ok()?;
            Some(async move {
                let _ = fd.readable().await;
            })
        })
        .collect();
    let _ = tokio::time::timeout(limit, async {
        for wait in waits {
            wait.await;
        }
    })
    .await;
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_owned()).filter(|id| !id.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_garbage_is_refused() {
        let named = Lost {
            sid: "py".into(),
            cmd: "python3 -q".into(),
        };
        let us = SessionRecord::of(std::process::id() as i32, named).expect("/proc is readable");
        assert_eq!(SessionRecord::parse(&us.text()), Some(us.clone()));
        // An older daemon's record, without the name, still reads.
        let old = format!("{} {} {}\n", us.leader, us.start_time, us.boot_id);
        let read = SessionRecord::parse(&old).expect("an older record");
        assert_eq!((read.leader, read.named), (us.leader, None));
        for bad in [
            "",
            "12",
            "12 x boot",
            "1 5 boot",
            "12 5 boot extra",
            "-3 5 boot",
        ] {
            assert_eq!(SessionRecord::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn stat_reads_this_process() {
        let us = stat(std::process::id() as i32).expect("our stat");
        assert!(!us.zombie);
        assert!(us.start_time > 0);
    }
}
