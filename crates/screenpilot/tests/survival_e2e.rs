//! Sessions outlive their daemon: each session's program is held by a holder process, so a daemon
//! killed with SIGKILL, stopped with --keep-sessions or replaced by another build takes nothing with
//! it; the next daemon takes every session over, screen and all.

use crate::common;

use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::{
    fixture, processes_in_session, wait_for_process_exit, Background, Daemon, LONG_MS, PROMPT,
};
use serde_json::Value;

const LONG: &str = "20000";

/// A wait of session `sh` that cannot hold: a request running until the test ends it.
const NEVER_SHOWN: [&str; 7] = [
    "--json",
    "wait",
    "sh",
    "--regex",
    "never shown",
    "--timeout-ms",
    "600000",
];

fn kill_daemon(d: &Daemon) -> i32 {
    let pid = d.daemon_pid();
    // SAFETY: sending a signal to a pid we just read; the daemon is ours.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    assert!(
        wait_for_process_exit(pid, Duration::from_millis(LONG_MS)),
        "the daemon did not die"
    );
    pid
}

/// Returns once exactly `n` requests run in the daemon (a client's wait has reached it, say).
fn until_running(d: &Daemon, n: usize) {
    let n = n.to_string();
    d.sp_json(&[
        "daemon",
        "status",
        "--until-running",
        &n,
        "--timeout-ms",
        LONG,
    ]);
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

fn mkfifo(path: &Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

fn sids(list: &Value) -> Vec<String> {
    let mut sids: Vec<String> = list["sessions"]
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|s| s["sid"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    sids.sort();
    sids
}

fn pid_of(d: &Daemon, sid: &str) -> i32 {
    d.sp_json(&["list"])["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["sid"] == sid))
        .and_then(|s| s["pid"].as_i64())
        .unwrap_or_else(|| panic!("no session {sid}")) as i32
}

/// What a person sees of a session: the text, which screen, where the cursor is.
fn look(d: &Daemon, sid: &str) -> (String, Value, Value) {
    let seen = d.snapshot(sid);
    (
        seen["text"].as_str().unwrap_or_default().to_owned(),
        seen["alt_screen"].clone(),
        seen["cursor"].clone(),
    )
}

/// The issue's five: bash with a background job, vim with unsaved text, python3 with state, less,
/// and a recording session; a wait pending at the kill is answered as interrupted.
#[test]
fn five_sessions_survive_a_killed_daemon_and_go_on_where_they_were() {
    let d = Daemon::new();
    let notes = d.path().join("notes.txt");
    let nums = d.path().join("nums.txt");
    let numbers: String = (1..=100).map(|n| format!("{n}\n")).collect();
    std::fs::write(&nums, numbers).unwrap();
    let (go, done) = (d.path().join("go"), d.path().join("done"));
    mkfifo(&go);
    mkfifo(&done);
    let cast = d.path().join("rec.cast");

    d.spawn_bash("sh");
    d.line("sh", "sleep 1000 & echo job-$!");
    let shown = d.wait_regex("sh", r"^job-\d+$");
    let job: i32 = shown["text"]
        .as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("job-")?.parse().ok())
        .expect("the job's pid");
    let vim = notes.to_str().unwrap();
    d.sp_json(&[
        "spawn", "--sid", "vim", "--", "vim", "-u", "NONE", "-i", "NONE", "-N", vim,
    ]);
    d.wait_regex("vim", "notes.txt");
    d.sp_json(&["type", "vim", "iunsaved words"]);
    d.wait_regex("vim", "^unsaved words$");
    d.sp_json(&["keys", "vim", "Escape", "--until-input", "--no-screen"]);
    d.sp_json(&[
        "spawn",
        "--sid",
        "py",
        "--until-input",
        "--",
        "python3",
        "-q",
    ]);
    d.sp_json(&["line", "py", "v = 6*7", "--until-input", "--no-screen"]);
    d.sp_json(&[
        "spawn",
        "--sid",
        "less",
        "--",
        "less",
        nums.to_str().unwrap(),
    ]);
    d.wait_regex("less", "^23$");
    d.sp_json(&["wait", "less", "--until-input", "--no-screen"]);
    d.spawn_bash_with("rec", &["--record", cast.to_str().unwrap()]);
    d.line("rec", "echo before-the-kill");
    d.wait_regex("rec", "^before-the-kill$");
    d.line("rec", "read x < go; echo during-the-gap-$x; echo > done");
    let before: Vec<_> = ["sh", "vim", "py", "less"].map(|sid| look(&d, sid)).into();

    // A wait that cannot hold, pending when the daemon dies.
    let mut pending = d.command(&NEVER_SHOWN);
    let pending = pending
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the wait");
    let mut pending = Background(Some(pending));
    until_running(&d, 1);
    let old = kill_daemon(&d);
    let mut pending = pending.0.take().unwrap();
    let mut said = String::new();
    pending
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    assert_eq!(pending.wait().unwrap().code(), Some(2), "{said}");
    let said: Value = serde_json::from_str(said.trim()).expect("one JSON answer");
    assert_eq!(said["error"]["code"], "daemon_gone", "{said}");
    assert!(
        said["error"]["message"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{said}"
    );

    // The recording session prints while no daemon runs.
    std::fs::write(&go, "1\n").unwrap();
    let mut line = String::new();
    std::io::BufReader::new(std::fs::File::open(&done).unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(alive(job), "the background job died with the daemon");

    let listed = d.sp_json(&["list"]);
    assert_ne!(d.daemon_pid(), old);
    assert_eq!(
        sids(&listed),
        ["less", "py", "rec", "sh", "vim"],
        "{listed}"
    );
    for (sid, then) in ["sh", "vim", "py", "less"].iter().zip(before) {
        assert_eq!(look(&d, sid), then, "{sid} after the daemon's death");
    }
    d.wait_regex("rec", "^during-the-gap-1$");
    d.wait_regex("rec", PROMPT);

    d.line("sh", "jobs");
    d.wait_regex("sh", r"Running\s+sleep 1000 &");
    d.sp_json(&["line", "py", "print(v)", "--until", "^42$"]);
    d.sp_json(&["keys", "less", "G"]);
    d.wait_regex("less", "^100$");
    d.sp_json(&["keys", "vim", ":wq", "Enter", "--until-exit"]);
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "unsaved words\n");
    d.line("rec", "exit 5");
    d.sp_json(&["wait", "rec", "--exit", "--timeout-ms", LONG]);

    // The recording went on: every output once, in order, and the exit status last.
    let text = std::fs::read_to_string(&cast).unwrap();
    let output: String = text
        .lines()
        .skip(1)
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e[1] == "o")
        .map(|e| e[2].as_str().unwrap_or_default().to_owned())
        .collect();
    // Typed and printed: twice; printed while no daemon ran: once.
    for (printed, times) in [("before-the-kill", 2), ("during-the-gap-1", 1)] {
        assert_eq!(
            output.matches(printed).count(),
            times,
            "{printed:?} in {output:?}"
        );
    }
    assert!(text.trim_end().ends_with(r#""x", "5"]"#), "{text}");
    // SAFETY: ending the job the test started.
    unsafe { libc::kill(job, libc::SIGKILL) };
}

/// `daemon stop` ends nothing by surprise: it names what runs and wants a flag. --keep-sessions
/// leaves the sessions to the next daemon, here one of another build (an upgrade): the old one
/// announces 0.0.9 with the test switch. --end-sessions ends them, holders too, even when no
/// daemon runs.
#[test]
fn daemon_stop_names_what_runs_and_keep_sessions_hands_them_to_the_next_build() {
    let d = Daemon::new();
    let old_build = |args: &[&str]| {
        d.command(args)
            .env("SCREENPILOT_TEST_ANNOUNCE_VERSION", "0.0.9")
            .output()
            .unwrap()
    };
    assert!(old_build(&[
        "spawn", "--sid", "sh", "--env", "PS1=$ ", "--until", PROMPT, "--", "bash", "--norc"
    ])
    .status
    .success());
    d.line("sh", "kept=yes-$((40+2))");
    let old = d.daemon_pid();

    let refused = old_build(&["daemon", "stop"]);
    assert_eq!(refused.status.code(), Some(2));
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(
        why.contains("sh (bash --norc)")
            && why.contains("--keep-sessions")
            && why.contains("--end-sessions"),
        "{why}"
    );
    assert_eq!(d.daemon_pid(), old, "a refused stop stops nothing");
    let status = d.sp_json(&["daemon", "status"]);
    assert!(
        status["other_build"]
            .as_str()
            .unwrap_or_default()
            .contains("--keep-sessions"),
        "{status}"
    );

    d.sp_json(&["daemon", "stop", "--keep-sessions"]);
    assert!(wait_for_process_exit(old, Duration::from_millis(LONG_MS)));
    d.sp_json(&["line", "sh", "echo $kept", "--until", "^yes-42$"]);
    let new = d.daemon_pid();
    assert_ne!(new, old);
    assert_eq!(
        d.sp_json(&["daemon", "status"])["version"],
        env!("CARGO_PKG_VERSION")
    );

    let bash = pid_of(&d, "sh");
    kill_daemon(&d);
    // No daemon runs: --end-sessions starts one to end what the holders keep.
    d.sp_json(&["daemon", "stop", "--end-sessions"]);
    assert!(wait_for_process_exit(bash, Duration::from_millis(LONG_MS)));
    let holders = std::fs::read_dir(d.path().join("holders")).unwrap().count();
    assert_eq!(holders, 0, "every holder exits with its session");
    let (status, _) = d.json_status(&["daemon", "status"]);
    assert_eq!(status, 1, "no daemon runs after the stop");
}

/// A holder keeps the exit status of a program that ended while no daemon ran, for the next one; a
/// holder no daemon comes back to ends its session after the idle limit, as a daemon would.
#[test]
fn a_holder_keeps_the_exit_status_and_ends_its_session_when_left_alone() {
    let d = Daemon::new();
    let go = d.path().join("go");
    mkfifo(&go);
    d.sp_json(&[
        "spawn",
        "--sid",
        "ends",
        "--",
        "sh",
        "-c",
        "read x < go; exit 3",
    ]);
    let program = pid_of(&d, "ends");
    kill_daemon(&d);
    std::fs::write(&go, "now\n").unwrap();
    assert!(wait_for_process_exit(
        program,
        Duration::from_millis(LONG_MS)
    ));
    let listed = d.sp_json(&["list"]);
    let ended = &listed["sessions"][0];
    assert_eq!(
        (&ended["sid"], &ended["exit_code"]),
        (&Value::from("ends"), &Value::from(3)),
        "{listed}"
    );

    let alone = Daemon::with_env(&[("SCREENPILOT_IDLE_TIMEOUT_SECS", "2")]);
    alone.spawn_bash("sh");
    let bash = pid_of(&alone, "sh");
    kill_daemon(&alone);
    assert!(
        wait_for_process_exit(bash, Duration::from_millis(LONG_MS)),
        "the holder left alone did not end its session"
    );
    assert!(sids(&alone.sp_json(&["list"])).is_empty());
}

/// Holders this daemon cannot take over (a future protocol, another user's socket, a corrupted
/// greeting) are named to the first caller and left alone; the user's other sessions are taken over.
#[test]
fn holders_that_cannot_be_taken_over_are_named_and_harm_nothing() {
    let d = Daemon::new();
    d.spawn_bash("mine");
    d.line("mine", "mark=still-here");
    let protocol = format!("{}=99", screenpilot_session::held::TEST_PROTOCOL_VAR);
    d.sp_json(&[
        "spawn", "--sid", "future", "--env", &protocol, "--", "sleep", "1000",
    ]);
    let sleeper = pid_of(&d, "future");
    kill_daemon(&d);

    let holders = d.path().join("holders");
    let corrupt = Background(Some(fake_holder(&holders.join("7"), "huge", false)));
    let nofd = Background(Some(fake_holder(&holders.join("8"), "nofd", false)));
    // Another user's socket, reached through a link in our directory.
    let foreign_dir = tempfile::Builder::new()
        .prefix("sp-foreign-")
        .tempdir()
        .unwrap();
    std::fs::set_permissions(
        foreign_dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o777),
    )
    .unwrap();
    let root = rustix::process::getuid().is_root();
    let foreign = root.then(|| {
        let path = foreign_dir.path().join("sock");
        let server = Background(Some(fake_holder(&path, "huge", true)));
        std::os::unix::fs::symlink(&path, holders.join("9")).unwrap();
        server
    });

    let out = d.sp(&["list"]);
    let notice = String::from_utf8_lossy(&out.stderr);
    assert!(notice.contains("could not take over"), "{notice}");
    assert!(
        notice.contains("speaks protocol 99, this daemon 1") && notice.contains("left running"),
        "{notice}"
    );
    assert!(notice.contains("a frame of 4294967295 bytes"), "{notice}");
    assert!(notice.contains("did not start with the pty"), "{notice}");
    if foreign.is_some() {
        assert!(
            notice.contains("is served by uid 65534") && notice.contains("left alone"),
            "{notice}"
        );
    }
    assert!(alive(sleeper), "the future holder's session was harmed");
    d.sp_json(&["line", "mine", "echo $mark", "--until", "^still-here$"]);
    drop((corrupt, nofd, foreign));
    // The future holder is this test's to end, with its session.
    let holder: i32 = notice
        .split("its holder (pid ")
        .nth(1)
        .and_then(|rest| rest.split(')').next()?.parse().ok())
        .expect("the notice names the holder's pid");
    for pid in processes_in_session(sleeper).into_iter().chain([holder]) {
        // SAFETY: ending the processes this test started.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// Start `fake_holder.py` listening at `path` (as nobody with `foreign`); returns once it listens.
fn fake_holder(path: &Path, mode: &str, foreign: bool) -> std::process::Child {
    let script = fixture("fake_holder.py");
    let mut command = if foreign {
        // Where nobody can read it, with the system's Python (not one under root's home).
        let copy = path.with_file_name("fake_holder.py");
        std::fs::copy(&script, &copy).unwrap();
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "/usr/bin/python3",
        ]);
        c.arg(copy);
        c
    } else {
        let mut c = Command::new("python3");
        c.arg(script);
        c
    };
    let mut child = command
        .arg(path)
        .arg(mode)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the fake holder");
    let mut ready = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut ready)
        .unwrap();
    assert_eq!(ready.trim(), "ready");
    let _ = std::io::stdout().flush();
    child
}

/// An upgrade: the daemon here is another build (a copy of the binary: another executable, which
/// also announces 0.0.9). A call of this build while it serves a request leaves it be and says so;
/// once it is idle, the next call has it hand its sessions over to this build's daemon.
#[test]
fn an_idle_daemon_of_another_build_hands_its_sessions_to_this_one() {
    let d = Daemon::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let old = elsewhere.path().join("screenpilot");
    // Copied by cp, not by this process: a write descriptor of ours could be inherited by a child
    // another test forks meanwhile, and the copy would not run ("text file busy").
    let copied = Command::new("cp")
        .arg(common::binary())
        .arg(&old)
        .status()
        .unwrap();
    assert!(copied.success());
    let old_cli = |args: &[&str]| {
        let mut command = Command::new(&old);
        command
            .args(args)
            .env("SCREENPILOT_DIR", d.path())
            .env("SCREENPILOT_TEST_ANNOUNCE_VERSION", "0.0.9")
            .current_dir(d.path())
            .stdin(Stdio::null());
        command
    };
    let spawned = old_cli(&[
        "spawn", "--sid", "sh", "--env", "PS1=$ ", "--until", PROMPT, "--", "bash", "--norc",
    ])
    .output()
    .unwrap();
    assert!(spawned.status.success());
    assert!(old_cli(&["line", "sh", "kept=yes-$((40+2))"])
        .status()
        .unwrap()
        .success());
    // `daemon status` only looks: it never has a daemon hand over (`daemon_pid` starts one).
    let status_pid = || d.sp_json(&["daemon", "status"])["pid"].as_i64().unwrap() as i32;
    let old_daemon = status_pid();

    let busy = Background(Some(
        old_cli(&NEVER_SHOWN)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    ));
    until_running(&d, 1);
    let out = d.sp(&["list"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("screenpilot 0.0.9") && said.contains("serves 1 request(s) now, so it stays"),
        "{said}"
    );
    assert_eq!(status_pid(), old_daemon);

    drop(busy);
    until_running(&d, 0);
    let out = d.sp(&["--json", "line", "sh", "echo $kept", "--until", "^yes-42$"]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("its sessions go over to this build's daemon"),
        "{said}"
    );
    assert!(wait_for_process_exit(
        old_daemon,
        Duration::from_millis(LONG_MS)
    ));
    let status = d.sp_json(&["daemon", "status"]);
    assert_eq!(status["version"], env!("CARGO_PKG_VERSION"), "{status}");
    assert!(status.get("other_build").is_none(), "{status}");
}

/// `close` ends what left the session too: a process that called setsid after a double fork is not
/// in the session's process group, but its holder is the subreaper of all of it.
#[test]
fn close_ends_what_left_the_session() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    d.line(
        "sh",
        r#"(python3 -c 'import os,time; os.setsid(); print("escaped", os.getpid(), flush=True); time.sleep(1000)' &)"#,
    );
    // Printed after the next prompt, by then drawn: `$ escaped PID`.
    let shown = d.wait_regex("sh", r"escaped \d+$");
    let escaped: i32 = shown["text"]
        .as_str()
        .unwrap()
        .lines()
        .find_map(|l| l.split("escaped ").nth(1)?.parse().ok())
        .expect("the escaped pid");
    let bash = pid_of(&d, "sh");
    assert!(
        !processes_in_session(bash).contains(&escaped),
        "it left the session"
    );
    let closed = d.sp_json(&["close", "sh"]);
    let named = closed["escaped"].as_array().cloned().unwrap_or_default();
    assert!(
        named.len() == 1
            && named[0].as_str().is_some_and(
                |n| n.starts_with(&format!("{escaped} ")) && n.contains("os.setsid()")
            ),
        "close says what it ended beside the session: {closed}"
    );
    assert!(
        wait_for_process_exit(escaped, Duration::from_millis(LONG_MS)),
        "the process that left the session outlived close"
    );
}
