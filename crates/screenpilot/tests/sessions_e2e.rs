//! The core engine end to end: the real binary, a real daemon, real programs in real ptys (bash, python3,
//! vim, less) and small fixture programs. Each test asserts what a user would check on the screen, on
//! disk or in /proc.

use crate::common;

use std::time::Duration;

use common::{fixture, processes_in_session, wait_for_process_exit, Background, Daemon, LONG_MS};
use serde_json::Value;

const LONG: &str = "20000";

#[test]
fn bash_runs_a_line_and_reports_its_exit_code() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    d.line("sh", "echo hello-$((40+2))");
    let seen = d.wait_regex("sh", "^hello-42$");
    assert!(seen["text"]
        .as_str()
        .unwrap()
        .contains("$ echo hello-$((40+2))"));
    assert_eq!(d.snapshot("sh")["alive"], true);

    d.line("sh", "exit 3");
    let ended = d.sp_json(&["wait", "sh", "--exit", "--timeout-ms", LONG]);
    assert_eq!(ended["exited"], true, "{ended}");
    let (status, alive) = d.json_status(&["alive", "sh"]);
    assert_eq!(status, 1, "alive exits 1 once the program has ended");
    assert_eq!(alive["alive"], false, "{alive}");
    assert_eq!(alive["exit_code"], 3, "{alive}");
    assert_eq!(alive["signal"], Value::Null, "{alive}");
}

#[test]
fn python_repl_evaluates_an_expression() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "py", "--", "python3", "-q"]);
    d.wait_regex("py", "^>>> ?$");
    d.line("py", "sum(range(1000))");
    d.wait_regex("py", r"^499500\n>>> ?$");
    d.line("py", "'-'.join(['a', 'b', 'c'])");
    d.wait_regex("py", r"^'a-b-c'$");
}

#[test]
fn vim_writes_the_file_and_owns_the_alternate_screen_while_it_runs() {
    let d = Daemon::new();
    d.spawn_bash("ed");
    assert_eq!(d.snapshot("ed")["alt_screen"], false);

    d.line("ed", "vim -u NONE -i NONE -N -n notes.txt");
    d.wait_regex("ed", r#""notes.txt" \[New\]"#);
    assert_eq!(
        d.snapshot("ed")["alt_screen"],
        true,
        "vim runs on the alternate screen"
    );

    d.sp_json(&["keys", "ed", "i"]);
    d.wait_regex("ed", "-- INSERT --");
    d.sp_json(&["type", "ed", "hello from screenpilot"]);
    d.wait_regex("ed", "^hello from screenpilot$");
    let before = d.sp_json(&["keys", "ed", "Escape"]);
    let hash = before["hash"].as_str().unwrap();
    let normal = d.sp_json(&["wait", "ed", "--change", hash, "--timeout-ms", LONG]);
    assert!(
        !normal["text"].as_str().unwrap().contains("-- INSERT --"),
        "{normal}"
    );

    d.line("ed", ":wq");
    d.wait_regex("ed", r#"(?s)vim -u NONE.*^\$ ?$"#);
    let written = std::fs::read_to_string(d.path().join("notes.txt")).expect("vim wrote notes.txt");
    assert_eq!(written, "hello from screenpilot\n");
    let after = d.snapshot("ed");
    assert_eq!(
        after["alt_screen"], false,
        "back on the shell's screen: {after}"
    );
    assert!(!after["text"].as_str().unwrap().contains("-- INSERT --"));
}

#[test]
fn less_scrolls_with_arrow_keys() {
    let d = Daemon::new();
    let lines: String = (1..=200).map(|i| format!("line {i:03}\n")).collect();
    std::fs::write(d.path().join("numbers.txt"), lines).unwrap();
    d.sp_json(&[
        "spawn",
        "--sid",
        "pager",
        "--env",
        "LESSHISTFILE=-",
        "--",
        "less",
        "numbers.txt",
    ]);
    d.wait_regex("pager", r"\Aline 001\n");
    let snap = d.snapshot("pager");
    assert_eq!(snap["alt_screen"], true, "{snap}");
    assert_eq!(
        snap["modes"]["app_cursor"], true,
        "less turns on application cursor keys: {snap}"
    );

    d.sp_json(&["keys", "pager", "Down", "Down", "Down"]);
    d.wait_regex("pager", r"\Aline 004\n");
    d.sp_json(&["keys", "pager", "Up"]);
    d.wait_regex("pager", r"\Aline 003\n");
    d.sp_json(&["keys", "pager", "q"]);
    d.sp_json(&["wait", "pager", "--exit", "--timeout-ms", LONG]);
}

#[test]
fn arrow_keys_follow_the_application_cursor_mode() {
    let d = Daemon::new();
    let reporter = fixture("input_reporter.py");
    d.sp_json(&["spawn", "--sid", "plain", "--", "python3", &reporter]);
    d.sp_json(&[
        "spawn",
        "--sid",
        "app",
        "--",
        "python3",
        &reporter,
        "--app-cursor",
    ]);
    d.wait_regex("plain", "^READY$");
    d.wait_regex("app", "^READY$");
    assert_eq!(d.snapshot("app")["modes"]["app_cursor"], true);

    d.sp_json(&["keys", "plain", "Down"]);
    d.wait_regex("plain", r"^KEYS '\\x1b\[B'$");
    d.sp_json(&["keys", "app", "Down"]);
    d.wait_regex("app", r"^KEYS '\\x1bOB'$");
}

#[test]
fn terminal_queries_are_answered_so_the_program_never_stalls() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "q",
        "--",
        "python3",
        &fixture("term_queries.py"),
    ]);
    let done = d.wait_regex("q", "^QUERIES DONE$");
    let text = done["text"].as_str().unwrap();
    assert!(
        !text.contains("NO ANSWER"),
        "a query went unanswered:\n{text}"
    );
    assert!(
        text.contains(r"DSR '\x1b[5;10R'"),
        "the cursor report names row 5, column 10:\n{text}"
    );
    let da1 = text.lines().find(|l| l.starts_with("DA1 ")).unwrap();
    assert!(
        da1.starts_with(r"DA1 '\x1b[?") && da1.ends_with("c'"),
        "{da1}"
    );
    let decrqm = text.lines().find(|l| l.starts_with("DECRQM ")).unwrap();
    assert!(
        decrqm.starts_with(r"DECRQM '\x1b[?2004;") && decrqm.ends_with("$y'"),
        "{decrqm}"
    );
}

#[test]
fn mouse_clicks_reach_an_app_with_sgr_mouse_reporting() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "m",
        "--",
        "python3",
        &fixture("input_reporter.py"),
        "--mouse",
    ]);
    d.wait_regex("m", "^target: TARGET$");
    let modes = &d.snapshot("m")["modes"];
    assert_eq!(modes["mouse_encoding"], "sgr", "{modes}");

    // Cells are 0-based for us, 1-based on the wire.
    let click = d.sp_json(&["mouse", "m", "click", "--at", "5,3"]);
    assert_eq!(
        (click["col"].as_u64(), click["row"].as_u64()),
        (Some(5), Some(3))
    );
    d.wait_regex("m", "^MOUSE press button=0 x=6 y=4$");
    d.wait_regex("m", "^MOUSE release button=0 x=6 y=4$");

    // "target: TARGET" is row 1; TARGET spans columns 8-13 (0-based), so 9-14 on the wire.
    let on_text = d.sp_json(&["mouse", "m", "click", "--text", "TARGET"]);
    assert_eq!(on_text["row"], 1, "{on_text}");
    let seen = d.wait_regex("m", r"^MOUSE press button=0 x=(\d+) y=2$");
    let x: u64 = seen["match"]
        .as_str()
        .and_then(|m| m.split("x=").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .and_then(|x| x.parse().ok())
        .unwrap_or_else(|| panic!("no x in {seen}"));
    assert!(
        (9..=14).contains(&x),
        "the click landed at x={x}, off TARGET"
    );

    d.sp_json(&["mouse", "m", "click", "--at", "0,0", "--button", "right"]);
    d.wait_regex("m", "^MOUSE press button=2 x=1 y=1$");
}

#[test]
fn a_click_on_an_app_without_mouse_reporting_is_a_clear_error() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    let error = d.sp_error(&["mouse", "sh", "click", "--at", "1,1"]);
    let message = error["message"].as_str().unwrap().to_lowercase();
    assert!(message.contains("mouse"), "{error}");
    d.assert_bash_healthy("sh", "still");
}

#[test]
fn bad_input_names_the_field_and_harms_no_session() {
    let d = Daemon::new();
    d.spawn_bash("witness");

    let unknown = d.sp_error(&["alive", "no-such-session"]);
    assert_eq!(unknown["field"], "sid", "{unknown}");
    assert!(unknown["message"]
        .as_str()
        .unwrap()
        .contains("no-such-session"));
    d.assert_bash_healthy("witness", "a");

    let bad_sid = d.sp_error(&["spawn", "--sid", "bad sid!", "--", "bash"]);
    assert_eq!(bad_sid["field"], "sid", "{bad_sid}");
    assert!(
        bad_sid["message"].as_str().unwrap().contains("bad sid!"),
        "{bad_sid}"
    );
    d.assert_bash_healthy("witness", "b");

    let oversize = d.sp_error(&["spawn", "--size", "2000x10", "--", "bash"]);
    assert!(
        oversize["field"].as_str().unwrap_or("").contains("cols"),
        "{oversize}"
    );
    assert!(
        oversize["message"].as_str().unwrap().contains("2000"),
        "{oversize}"
    );
    d.assert_bash_healthy("witness", "c");

    let cwd = d.sp_error(&["spawn", "--cwd", "/no/such/dir", "--", "bash"]);
    assert_eq!(cwd["field"], "cwd", "{cwd}");
    assert!(
        cwd["message"].as_str().unwrap().contains("/no/such/dir"),
        "{cwd}"
    );
    d.assert_bash_healthy("witness", "d");

    let env = d.sp_error(&["spawn", "--env", "1X=y", "--", "bash"]);
    assert_eq!(env["field"], "env", "{env}");
    assert!(env["message"].as_str().unwrap().contains("1X"), "{env}");
    d.assert_bash_healthy("witness", "e");

    let regex = d.sp_error(&[
        "wait",
        "witness",
        "--regex",
        "(unclosed",
        "--timeout-ms",
        "100",
    ]);
    assert_eq!(regex["field"], "pattern", "{regex}");
    assert!(
        regex["message"].as_str().unwrap().contains("(unclosed"),
        "{regex}"
    );
    d.assert_bash_healthy("witness", "f");

    let json = d.sp_error(&["call", "spawn", "{not json"]);
    assert_eq!(json["field"], "params", "{json}");
    let unknown_field = d.sp_error(&["call", "alive", r#"{"sid": "witness", "sidd": 1}"#]);
    assert!(
        unknown_field["message"].as_str().unwrap().contains("sidd"),
        "{unknown_field}"
    );
    d.assert_bash_healthy("witness", "g");

    // An unknown key token is typed as text, not refused.
    d.sp_json(&["keys", "witness", "Frobnicate", "Enter"]);
    d.wait_regex("witness", "^\\$ Frobnicate$");
    d.wait_regex("witness", "Frobnicate: command not found");
    d.assert_bash_healthy("witness", "h");

    let sessions = d.sp_json(&["list"])["sessions"].as_array().unwrap().clone();
    assert_eq!(
        sessions.len(),
        1,
        "no failed spawn left a session: {sessions:?}"
    );
}

#[test]
fn a_ninth_session_is_refused_and_the_eight_keep_running() {
    let d = Daemon::new();
    for i in 0..8 {
        d.sp_json(&["spawn", "--sid", &format!("s{i}"), "--", "cat"]);
    }
    let refused = d.sp_error(&["spawn", "--sid", "s8", "--", "cat"]);
    assert_eq!(refused["code"], "limit_exceeded", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains('8'),
        "{refused}"
    );

    for i in 0..8 {
        let sid = format!("s{i}");
        assert_eq!(d.sp_json(&["alive", &sid])["alive"], true, "{sid}");
    }
    // cat echoes what it reads: the sessions still work, not just exist.
    d.line("s7", "still-here");
    d.wait_regex("s7", "^still-here\nstill-here$");
    // Closing one makes room again.
    d.sp_json(&["close", "s0"]);
    d.sp_json(&["spawn", "--sid", "s8", "--", "cat"]);
}

#[test]
fn close_ends_every_process_even_those_ignoring_hup_and_term() {
    let d = Daemon::with_env(&[("SCREENPILOT_CLOSE_GRACE_MS", "200")]);
    let spawned = d.sp_json(&[
        "spawn",
        "--sid",
        "stubborn",
        "--",
        "bash",
        "-c",
        "trap '' HUP TERM; sleep 1000 & sleep 1000 & echo started; wait",
    ]);
    let leader = spawned["pid"].as_i64().unwrap() as i32;
    d.wait_regex("stubborn", "^started$");
    let before = processes_in_session(leader);
    assert!(
        before.len() >= 3,
        "bash and its two sleeps run in session {leader}: {before:?}"
    );

    let closed = d.sp_json(&["close", "stubborn"]);
    assert_eq!(closed["signal"], 9, "only SIGKILL ends it: {closed}");
    let after = processes_in_session(leader);
    assert!(after.is_empty(), "processes left behind: {after:?}");
    for pid in before {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "pid {pid} still exists (zombie or alive)"
        );
    }
    let list = d.sp_json(&["list"]);
    assert_eq!(list["sessions"].as_array().unwrap().len(), 0, "{list}");
}

#[test]
fn two_clients_see_the_same_sessions() {
    let d = Daemon::new();
    d.spawn_bash("shared");
    // A second, independent client process: the raw `call` verb.
    let out = d.sp(&["call", "list", "{}"]);
    assert!(out.status.success());
    let listed = common::parse_json(&out);
    let sids: Vec<&str> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["sid"].as_str())
        .collect();
    assert_eq!(sids, ["shared"]);

    // One client waits while another types: both talk to the same session.
    let waiter = Background::spawn(d.command(&[
        "--json",
        "wait",
        "shared",
        "--regex",
        "^from-other-client$",
        "--timeout-ms",
        LONG,
    ]));
    d.line("shared", "echo from-other-$(echo client)");
    let out = waiter.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(common::parse_json(&out)["matched"], true);
}

/// A socket served by another user (planted in a shared directory, say) gets nothing from us: requests
/// can carry secrets in `env`.
#[test]
fn a_socket_served_by_another_user_is_refused_before_anything_is_sent() {
    // SAFETY: a plain query of our own effective uid.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: serving a socket as another user needs root");
        return;
    }
    let d = Daemon::new();
    let socket = d.path().join("daemon.sock");
    // Bound as root, listening as nobody: the kernel reports the listener's uid to whoever connects.
    let server = r#"
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
os.setgid(65534); os.setuid(65534)
s.listen(8)
print("listening", flush=True)
s.settimeout(30)
while True:
    c, _ = s.accept()
    c.settimeout(30)
    data = c.recv(65536)
    print("received", repr(data), flush=True)
    if data:
        c.sendall(b'{"id":1,"ok":true,"result":{"ok":true,"sid":"x","pid":1,"cols":80,"rows":24}}\n')
    c.close()
"#;
    let mut fake = std::process::Command::new("python3")
        .args(["-c", server])
        .arg(&socket)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start python3");
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(
        fake.stdout.take().expect("fake server stdout"),
    ));
    let first = lines.next().and_then(Result::ok);
    assert_eq!(first.as_deref(), Some("listening"));

    let error = d.sp_error(&["spawn", "--env", "SECRET=hunter2", "--", "bash"]);
    assert_eq!(error["code"], "daemon_untrusted", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("uid 65534"),
        "{error}"
    );
    let error = d.sp_error(&["daemon", "status"]);
    assert_eq!(error["code"], "daemon_untrusted", "{error}");

    let _ = fake.kill();
    let _ = fake.wait();
    let heard: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        heard
            .iter()
            .all(|line| !line.contains("hunter2") && !line.contains("status")),
        "the foreign server was sent: {heard:?}"
    );
}

#[test]
fn a_killed_daemon_is_replaced_by_the_next_command() {
    let d = Daemon::new();
    d.spawn_bash("first");
    let old = d.daemon_pid();
    // SAFETY: sending a signal to a pid we just read; the daemon is ours.
    assert_eq!(unsafe { libc::kill(old, libc::SIGKILL) }, 0);
    assert!(
        wait_for_process_exit(old, Duration::from_millis(LONG_MS)),
        "the daemon did not die"
    );

    d.spawn_bash("second");
    let new = d.daemon_pid();
    assert_ne!(new, old);
    d.assert_bash_healthy("second", "reborn");
    // The session of the killed daemon lives on, taken over by the new one (survival_e2e has more).
    d.assert_bash_healthy("first", "kept");
    let sids: Vec<String> = d.sp_json(&["list"])["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["sid"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(sids, ["first", "second"]);
}

/// A daemon of another version says so: `daemon status` shows both builds, and an operation it does
/// not know is explained as the older daemon's, not left as a bare "unknown operation". Played
/// by this build with the test-only switches (announce 0.0.9; forget `run`).
#[test]
fn a_daemon_of_another_version_is_named_as_such() {
    let d = Daemon::with_env(&[
        ("SCREENPILOT_TEST_ANNOUNCE_VERSION", "0.0.9"),
        ("SCREENPILOT_TEST_FORGET_OPS", "run"),
    ]);
    d.spawn_bash("sh");
    let status = d.sp_json(&["daemon", "status"]);
    assert_eq!(status["version"], "0.0.9", "{status}");
    assert_eq!(
        status["client"]["version"],
        env!("CARGO_PKG_VERSION"),
        "{status}"
    );
    let differs = status["other_build"].as_str().unwrap_or_default();
    assert!(
        differs.starts_with("the daemon runs screenpilot 0.0.9 (this client is ")
            && differs.contains("`screenpilot daemon stop --keep-sessions`"),
        "{status}"
    );
    let shown = String::from_utf8_lossy(&d.sp(&["daemon", "status"]).stdout).into_owned();
    assert!(
        shown.contains("screenpilot 0.0.9") && shown.contains("\nthe daemon runs"),
        "{shown}"
    );
    // `list` says it too, under the sessions.
    let listed = String::from_utf8_lossy(&d.sp(&["list"]).stdout).into_owned();
    let client = env!("CARGO_PKG_VERSION");
    assert!(
        listed.contains(&format!(
            "the daemon runs screenpilot 0.0.9, this client {client}"
        )),
        "{listed}"
    );
    let e = d.sp_error(&["run", "sh", "--", "echo", "hi"]);
    let message = e["message"].as_str().unwrap_or_default();
    assert_eq!(e["code"], "unknown_operation", "{e}");
    assert!(
        message.contains("unknown operation \"run\"")
            && message.contains("the daemon runs screenpilot 0.0.9"),
        "{e}"
    );
    // The same build says nothing of builds.
    let same = Daemon::new();
    same.spawn_bash("sh");
    let status = same.sp_json(&["daemon", "status"]);
    assert!(status.get("other_build").is_none(), "{status}");
}

#[test]
fn resize_changes_what_the_program_sees() {
    let d = Daemon::new();
    d.spawn_bash("sz");
    d.line("sz", "stty size");
    d.wait_regex("sz", "^24 80$");
    let resized = d.sp_json(&["resize", "sz", "100x30"]);
    assert_eq!(
        (resized["cols"].as_u64(), resized["rows"].as_u64()),
        (Some(100), Some(30))
    );
    d.line("sz", "stty size; tput cols");
    d.wait_regex("sz", "^30 100\n100$");
    let snap = d.snapshot("sz");
    assert_eq!(
        (snap["cols"].as_u64(), snap["rows"].as_u64()),
        (Some(100), Some(30))
    );
    assert_eq!(snap["text"].as_str().unwrap().split('\n').count(), 30);
}

#[test]
fn record_writes_an_asciicast_v3_file() {
    let d = Daemon::new();
    let cast = d.path().join("session.cast");
    let cast_arg = cast.to_str().unwrap();
    d.spawn_bash_with("rec", &["--record", cast_arg, "--size", "90x20"]);
    d.line("rec", "echo recorded-$((1+1))");
    d.wait_regex("rec", "^recorded-2$");
    d.sp_json(&["close", "rec"]);

    let content = std::fs::read_to_string(&cast).expect("the cast file exists");
    let mut lines = content.lines();
    let header: Value = serde_json::from_str(lines.next().unwrap()).expect("header is JSON");
    assert_eq!(header["version"], 3, "{header}");
    assert_eq!(header["term"]["cols"], 90, "{header}");
    assert_eq!(header["term"]["rows"], 20, "{header}");
    let mut output = String::new();
    for line in lines {
        let event: Value = serde_json::from_str(line).expect("each event is JSON");
        let event = event
            .as_array()
            .expect("an event is [interval, code, data]");
        assert_eq!(event.len(), 3, "{line}");
        let interval = event[0].as_f64().expect("the interval is a number");
        assert!(interval >= 0.0, "intervals are never negative: {line}");
        if event[1] == "o" {
            output.push_str(event[2].as_str().unwrap());
        }
    }
    assert!(
        output.contains("recorded-2"),
        "output not recorded: {output:?}"
    );
}
