//! Sessions without holders (`SCREENPILOT_HOLDERS=off`; with them, sessions outlive the daemon:
//! survival_e2e) end with their daemon. A daemon killed with SIGKILL cannot end them: programs that ignore the hang-up would keep
//! running (reparented to init) and its desktops' private directories would stay. Its guard process
//! ends them at once; should the guard have been killed too, the next daemon on the same directory
//! ends them before it answers anything. Either touches nothing that is not provably its own. Real
//! daemons, a real `kill -9`, real programs.

use crate::common;

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

/// Two sessions whose programs ignore the hang-up: `stubborn` (sh and its sleep, the leader alive) and
/// `leaderless` (a sleep left behind by a leader that exited, as `nohup cmd &` then `exit`), shown
/// ready; their pids. `n` makes their sleeps' arguments this test's own.
fn stubborn_sessions(daemon: &Daemon, n: u32) -> (Vec<i32>, Vec<i32>) {
    let stubborn = format!("trap '' HUP; echo ready; sleep {n}");
    let leaderless = format!("trap '' HUP; sleep {} & echo ready; exit 0", n + 1);
    for (sid, script) in [("stubborn", &stubborn), ("leaderless", &leaderless)] {
        daemon.sp_json(&["spawn", "--sid", sid, "--", "sh", "-c", script]);
    }
    let ms = LONG_MS.to_string();
    for sid in ["stubborn", "leaderless"] {
        daemon.sp_json(&["wait", sid, "--regex", "ready", "--timeout-ms", &ms]);
    }
    let stubborn = members_of(daemon, "stubborn");
    let leaderless = members_of(daemon, "leaderless");
    assert_eq!(stubborn.len(), 2, "sh and sleep: {stubborn:?}");
    assert_eq!(leaderless.len(), 1, "the sleep left behind: {leaderless:?}");
    (stubborn, leaderless)
}

#[test]
fn the_next_daemon_ends_what_a_killed_one_left_and_nothing_else() {
    let runtime = tempfile::Builder::new()
        .prefix("sp-orphans-runtime-")
        .tempdir()
        .expect("runtime dir");
    let runtime_path = runtime.path().to_str().expect("utf-8 path").to_owned();
    // Sessions without holders (SCREENPILOT_HOLDERS=off) end with their daemon: what is tested here.
    let daemon = Daemon::with_env(&[
        ("XDG_RUNTIME_DIR", &runtime_path),
        ("SCREENPILOT_HOLDERS", "off"),
    ]);

    let (stubborn, leaderless) = stubborn_sessions(&daemon, 1000);

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

    // kill -9 of the guard, then of the daemon: the programs that ignore HUP outlive both.
    let guard = guard_pid(&daemon);
    // SAFETY: a plain kill of the guard of the daemon this test started.
    unsafe {
        libc::kill(guard, libc::SIGKILL);
    }
    assert!(
        wait_for_process_exit(guard, Duration::from_secs(20)),
        "the guard outlived SIGKILL"
    );
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

/// The daemon's guard process, from `daemon status`.
fn guard_pid(daemon: &Daemon) -> i32 {
    let status = daemon.sp_json(&["daemon", "status"]);
    status["guard_pid"]
        .as_i64()
        .unwrap_or_else(|| panic!("no guard_pid in {status}")) as i32
}

/// Nothing answers on the daemon's socket (and connecting starts no daemon).
fn no_daemon_answers(daemon: &Daemon) -> bool {
    std::os::unix::net::UnixStream::connect(daemon.path().join("daemon.sock")).is_err()
}

#[test]
fn a_killed_daemons_guard_ends_its_sessions_without_a_next_daemon() {
    let runtime = tempfile::Builder::new()
        .prefix("sp-guard-runtime-")
        .tempdir()
        .expect("runtime dir");
    let runtime_path = runtime.path().to_str().expect("utf-8 path").to_owned();
    // Sessions without holders (SCREENPILOT_HOLDERS=off) end with their daemon: what is tested here.
    let daemon = Daemon::with_env(&[
        ("XDG_RUNTIME_DIR", &runtime_path),
        ("SCREENPILOT_HOLDERS", "off"),
    ]);
    let (stubborn, leaderless) = stubborn_sessions(&daemon, 600);
    // A desktop whose program ignores HUP and TERM; it says its pids once they are there.
    let pids_file = daemon.path().join("desktop-pids");
    let script = format!(
        "trap '' HUP TERM; sleep 602 & echo $$ $! > {}; wait",
        pids_file.display()
    );
    let desktop = daemon.sp_json(&[
        "desktop", "start", "--sid", "desk", "--", "xterm", "-e", "sh", "-c", &script,
    ]);
    assert_eq!(desktop["alive"], true, "{desktop}");
    let desktop_program: Vec<i32> = common::wait_for_file(&pids_file, Duration::from_secs(30))
        .split_whitespace()
        .map(|pid| pid.parse().expect("a pid"))
        .collect();
    assert_eq!(
        desktop_program.len(),
        2,
        "sh and sleep: {desktop_program:?}"
    );
    let guard = guard_pid(&daemon);
    let daemon_pid = daemon.daemon_pid();
    let _cleanup = KillOnDrop(
        stubborn
            .iter()
            .chain(&leaderless)
            .chain(&desktop_program)
            .copied()
            .chain([guard])
            .collect(),
    );

    // SAFETY: a plain kill of the daemon this test started.
    unsafe {
        libc::kill(daemon_pid, libc::SIGKILL);
    }
    // From here on no command runs, so no daemon starts: the guard alone must end them.
    for pid in stubborn
        .iter()
        .chain(&leaderless)
        .chain(&desktop_program)
        .chain([&daemon_pid, &guard])
    {
        assert!(
            wait_for_process_exit(*pid, Duration::from_secs(30)),
            "process {pid} still runs after the daemon was killed (guard {guard}, daemon {daemon_pid})"
        );
    }
    assert!(no_daemon_answers(&daemon), "a daemon was started");
    let left: Vec<_> = std::fs::read_dir(daemon.path().join("sessions"))
        .expect("records dir")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "records left: {left:?}");
    assert_eq!(
        desktop_dirs(runtime.path()),
        Vec::<String>::new(),
        "the killed daemon's desktop directory stayed"
    );
    let log = std::fs::read_to_string(daemon.path().join("daemon.log")).unwrap_or_default();
    assert!(
        log.contains(&format!(
            "screenpilot guard: the daemon (pid {daemon_pid}) died without closing its sessions; ended 3 processes of its 2 sessions"
        )),
        "the daemon log does not say what the guard ended: {log}"
    );
}

#[test]
fn a_daemon_that_stops_leaves_no_guard() {
    let daemon = Daemon::with_env(&[("SCREENPILOT_HOLDERS", "off")]);
    daemon.sp_json(&[
        "spawn",
        "--sid",
        "stubborn",
        "--",
        "sh",
        "-c",
        "trap '' HUP; echo ready; sleep 603",
    ]);
    let ms = LONG_MS.to_string();
    daemon.sp_json(&["wait", "stubborn", "--regex", "ready", "--timeout-ms", &ms]);
    let stubborn = members_of(&daemon, "stubborn");
    let guard = guard_pid(&daemon);
    assert!(running(guard), "the guard {guard} does not run");
    let _cleanup = KillOnDrop(stubborn.iter().copied().chain([guard]).collect());
    daemon.sp_json(&["daemon", "stop", "--end-sessions"]);
    for pid in stubborn.iter().chain([&guard]) {
        assert!(
            wait_for_process_exit(*pid, Duration::from_secs(30)),
            "process {pid} still runs after daemon stop (guard {guard})"
        );
    }
    // The guard found nothing to do: only the daemon's own close ran.
    let log = std::fs::read_to_string(daemon.path().join("daemon.log")).unwrap_or_default();
    assert!(!log.contains("guard"), "{log}");
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
