//! A daemon killed with SIGKILL cannot end its sessions: programs that ignore the hang-up keep running
//! (reparented to init) and its desktops' private directories stay. The next daemon on the same
//! directory ends them before it answers anything, and touches nothing that is not provably its own.
//! Real daemons, a real `kill -9`, real programs.

mod common;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{processes_in_session, wait_for_process_exit, Daemon, LONG_MS};

/// State letter of process `pid` (R, S, Z...), `None` once it is gone.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..].trim_start().chars().next()
}

fn running(pid: i32) -> bool {
    matches!(state(pid), Some(c) if c != 'Z' && c != 'X')
}

/// Field 22 of /proc/PID/stat: when it started, in clock ticks since boot.
fn start_time(pid: i32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
    stat[stat.rfind(')').expect("comm") + 1..]
        .split_whitespace()
        .nth(19)
        .and_then(|t| t.parse().ok())
        .expect("start time")
}

/// The live (not zombie) processes of terminal session `sid`, found through its leader's pid.
fn members_of(daemon: &Daemon, sid: &str) -> Vec<i32> {
    let list = daemon.sp_json(&["list"]);
    let leader = list["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["sid"] == sid)
        .and_then(|s| s["pid"].as_i64())
        .unwrap_or_else(|| panic!("no session {sid} in {list}")) as i32;
    processes_in_session(leader)
        .into_iter()
        .filter(|pid| running(*pid))
        .collect()
}

/// Kills the processes the test found when it ends, so a failing run leaves none behind.
struct KillOnDrop(Vec<i32>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        for pid in &self.0 {
            // SAFETY: plain signals to processes this test started (checked live a moment ago).
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
    }
}

fn desktop_dirs(base: &Path) -> Vec<String> {
    std::fs::read_dir(base)
        .expect("read the runtime dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("screenpilot-desktop-"))
        .collect()
}

#[test]
fn the_next_daemon_ends_what_a_killed_one_left_and_nothing_else() {
    let runtime = tempfile::Builder::new()
        .prefix("sp-orphans-runtime-")
        .tempdir()
        .expect("runtime dir");
    let runtime_path = runtime.path().to_str().expect("utf-8 path").to_owned();
    let daemon = Daemon::with_env(&[("XDG_RUNTIME_DIR", &runtime_path)]);

    // A program that ignores the hang-up, its leader alive...
    daemon.sp_json(&[
        "spawn",
        "--sid",
        "stubborn",
        "--",
        "sh",
        "-c",
        "trap '' HUP; echo ready; sleep 1000",
    ]);
    // ...and one whose leader has gone, leaving a member behind (as `nohup cmd &` then `exit`).
    daemon.sp_json(&[
        "spawn",
        "--sid",
        "leaderless",
        "--",
        "sh",
        "-c",
        "trap '' HUP; sleep 1001 & echo ready; exit 0",
    ]);
    let ms = LONG_MS.to_string();
    for sid in ["stubborn", "leaderless"] {
        daemon.sp_json(&["wait", sid, "--regex", "ready", "--timeout-ms", &ms]);
    }
    let stubborn = members_of(&daemon, "stubborn");
    let leaderless = members_of(&daemon, "leaderless");
    assert_eq!(stubborn.len(), 2, "sh and sleep: {stubborn:?}");
    assert_eq!(leaderless.len(), 1, "the sleep left behind: {leaderless:?}");

    // A desktop whose program ignores HUP and TERM (xterm's shell).
    let desktop = daemon.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "desk",
        "--",
        "xterm",
        "-e",
        "sh",
        "-c",
        "trap '' HUP TERM; sleep 1002.4242",
    ]);
    assert_eq!(desktop["alive"], true, "{desktop}");
    assert_eq!(desktop_dirs(runtime.path()).len(), 1, "one private dir");

    // An unrelated process of ours, in a session of its own, and a record naming its pid with another
    // start time: the pid of a leader that died and was reused. It must not be touched.
    let mut unrelated = Command::new("sleep");
    unrelated
        .arg("1003")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        unrelated.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut unrelated = unrelated.spawn().expect("start an unrelated sleep");
    let unrelated_pid = unrelated.id() as i32;
    let _cleanup = KillOnDrop(
        stubborn
            .iter()
            .chain(&leaderless)
            .copied()
            .chain([unrelated_pid])
            .collect(),
    );
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("boot id");
    let records = daemon.path().join("sessions");
    std::fs::write(
        records.join(unrelated_pid.to_string()),
        format!(
            "{unrelated_pid} {} {}\n",
            start_time(unrelated_pid) + 1,
            boot.trim()
        ),
    )
    .expect("plant a record");

    // kill -9: the programs that ignore HUP outlive it.
    let daemon_pid = daemon.daemon_pid();
    // SAFETY: a plain kill of the daemon this test started.
    unsafe {
        libc::kill(daemon_pid, libc::SIGKILL);
    }
    assert!(
        wait_for_process_exit(daemon_pid, Duration::from_secs(20)),
        "the daemon outlived SIGKILL"
    );
    let desktop_program: Vec<i32> = processes_of_sleep("1002.4242");
    let _cleanup_desktop = KillOnDrop(desktop_program.clone());
    assert!(
        !desktop_program.is_empty(),
        "the desktop's program died with the daemon"
    );
    for pid in stubborn.iter().chain(&leaderless).chain(&desktop_program) {
        assert!(
            running(*pid),
            "{pid} ended with the daemon; nothing left to test"
        );
    }

    // The next daemon (started by any command) ends them before it answers.
    let list = daemon.sp_json(&["list"]);
    assert_eq!(list["sessions"].as_array().map(Vec::len), Some(0), "{list}");
    for pid in stubborn.iter().chain(&leaderless).chain(&desktop_program) {
        assert!(
            wait_for_process_exit(*pid, Duration::from_secs(20)),
            "process {pid} left by the killed daemon is still running"
        );
    }
    assert_eq!(
        desktop_dirs(runtime.path()),
        Vec::<String>::new(),
        "the killed daemon's desktop directory stayed"
    );
    let left: Vec<_> = std::fs::read_dir(&records)
        .expect("records dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "records left: {left:?}");
    assert!(
        running(unrelated_pid),
        "an unrelated process whose pid a stale record named was killed"
    );
    let log = std::fs::read_to_string(daemon.path().join("daemon.log")).unwrap_or_default();
    assert!(
        log.contains("a previous daemon was killed"),
        "the daemon log does not say what it ended: {log}"
    );
    let _ = unrelated.kill();
    let _ = unrelated.wait();
}

/// Live `sleep ARG` processes of our uid.
fn processes_of_sleep(arg: &str) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| c == format!("sleep\0{arg}\0").as_bytes())
                .unwrap_or(false)
                && running(*pid)
        })
        .collect()
}
