//! Waits end to end: every kind of wait against real programs, many at once, and clients that vanish
//! mid-wait. Nothing here sleeps to synchronise; timeouts are generous because a wait returns as soon as
//! its condition holds.

use crate::common;
#[path = "waits/trust.rs"]
mod trust;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

use common::{fixture, parse_json, Background, Daemon};
use serde_json::Value;

const LONG: &str = "20000";

fn text(result: &Value) -> &str {
    result["text"].as_str().unwrap_or("")
}

fn elapsed_ms(result: &Value) -> f64 {
    result["elapsed_ms"]
        .as_f64()
        .expect("a wait reports elapsed_ms")
}

#[test]
fn wait_for_returns_when_late_output_arrives() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    d.line("sh", "sleep 0.3; echo do''ne");
    let (status, result) =
        d.json_status(&["wait", "sh", "--regex", r"^done\n\$", "--timeout-ms", LONG]);
    assert_eq!(status, 0, "{result}");
    assert_eq!(result["matched"], true, "{result}");
    assert_eq!(result["exited"], false, "{result}");
    assert!(
        text(&result).contains("$ sleep 0.3; echo do''ne\ndone\n$"),
        "{result}"
    );
}

#[test]
fn a_dollar_anchored_pattern_matches_a_line_end() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    // Trailing spaces the program wrote do not stop `$` from matching the end of the line.
    d.line("sh", "printf 'done   \\n'");
    let result = d.wait_regex("sh", "^done$");
    assert_eq!(result["match"], "done", "{result}");
    // Only the cursor's row (the new prompt, `$ `) runs up to the cursor.
    assert!(
        text(&result)
            .lines()
            .filter(|l| *l != "$ ")
            .all(|l| !l.ends_with(' ')),
        "{result}"
    );
}

#[test]
fn the_documented_prompt_pattern_finds_a_shell_prompt() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    let (status, result) =
        d.json_status(&["wait", "sh", "--regex", r"\$ $", "--timeout-ms", "3000"]);
    assert_eq!(status, 0, "`\\$ $` should find the `$ ` prompt: {result}");
    let (status, result) = d.json_status(&[
        "wait",
        "sh",
        "--any",
        "Password:",
        r"\$ $",
        "Error",
        "--timeout-ms",
        "3000",
    ]);
    assert_eq!((status, result["index"].as_i64()), (0, Some(1)), "{result}");
}

#[test]
fn a_pattern_starting_with_a_dash_is_accepted() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    d.line("sh", "echo '-- INSERT --'");
    let (status, result) = d.json_status(&[
        "wait",
        "sh",
        "--regex",
        "-- INSERT --",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(status, 0, "{result}");
}

#[test]
fn expect_reports_which_pattern_matched() {
    let d = Daemon::new();
    // The prompt pattern allows for trimmed lines (see the_documented_prompt_pattern_finds_a_shell_prompt).
    let patterns = ["Password:", r"^\$ ?$", "Error"];
    let expect = |sid: &str, patterns: &[&str]| {
        let mut args = vec!["wait", sid, "--any"];
        args.extend_from_slice(patterns);
        args.extend_from_slice(&["--timeout-ms", LONG]);
        let (status, result) = d.json_status(&args);
        assert_eq!(status, 0, "{result}");
        assert_eq!(result["matched"], true, "{result}");
        result
    };

    d.sp_json(&[
        "spawn",
        "--sid",
        "ok",
        "--",
        "python3",
        &fixture("login.py"),
    ]);
    d.wait_regex("ok", "^login:");
    d.line("ok", "alice");
    let asked = expect("ok", &patterns);
    assert_eq!(asked["index"], 0, "{asked}");
    assert_eq!(asked["match"], "Password:", "{asked}");

    let typed = d.line("ok", "secret");
    // The dialogue clears the screen: wait for that before racing the patterns again.
    let hash = typed["hash"].as_str().unwrap();
    d.sp_json(&["wait", "ok", "--change", hash, "--timeout-ms", LONG]);
    let welcomed = expect("ok", &patterns);
    assert_eq!(welcomed["index"], 1, "{welcomed}");
    assert!(text(&welcomed).starts_with("Welcome, alice"), "{welcomed}");

    d.sp_json(&[
        "spawn",
        "--sid",
        "bad",
        "--",
        "python3",
        &fixture("login.py"),
    ]);
    d.wait_regex("bad", "^login:");
    d.line("bad", "mallory");
    expect("bad", &patterns);
    d.line("bad", "guess");
    d.wait_regex("bad", "^Error: wrong password\nPassword:");
    let denied = expect("bad", &["Welcome", r"^\$ ?$", "Error"]);
    assert_eq!(denied["index"], 2, "{denied}");
    assert_eq!(denied["match"], "Error", "{denied}");
}

#[test]
fn expect_breaks_ties_by_list_order() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "tie",
        "--",
        "python3",
        &fixture("login.py"),
    ]);
    d.wait_regex("tie", "^login:");
    d.line("tie", "eve");
    d.wait_regex("tie", "^Password:");
    d.line("tie", "wrong");
    // Now "Error: wrong password" and "Password:" are both on screen, Error first in reading order.
    d.wait_regex("tie", "^Error: wrong password\nPassword:");
    let race = |patterns: &[&str]| {
        let mut args = vec!["wait", "tie", "--any"];
        args.extend_from_slice(patterns);
        args.extend_from_slice(&["--timeout-ms", LONG]);
        d.sp_json(&args)
    };
    let first = race(&["Password:", "Error"]);
    assert_eq!(
        (first["index"].as_i64(), first["match"].as_str()),
        (Some(0), Some("Password:"))
    );
    let swapped = race(&["Error", "Password:"]);
    assert_eq!(
        (swapped["index"].as_i64(), swapped["match"].as_str()),
        (Some(0), Some("Error"))
    );
    let middle = race(&["Welcome", "Error", "Password:"]);
    assert_eq!(middle["index"], 1, "{middle}");
    let (status, none) = d.json_status(&[
        "wait",
        "tie",
        "--any",
        "Welcome",
        "Bye",
        "--timeout-ms",
        "300",
    ]);
    assert_eq!(status, 1, "a timeout exits 1: {none}");
    assert_eq!(
        (none["matched"].as_bool(), none["index"].as_i64()),
        (Some(false), Some(-1)),
        "{none}"
    );
}

#[test]
fn wait_change_returns_after_a_key_press_in_vim() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "vim",
        "--",
        "vim",
        "-u",
        "NONE",
        "-i",
        "NONE",
        "-N",
        "-n",
        "draft.txt",
    ]);
    d.wait_regex("vim", r#""draft.txt" \[New\]"#);
    // Let vim finish any start-up redraw, so the change we see is the key's.
    let settled = d.sp_json(&[
        "wait",
        "vim",
        "--ready",
        "--stable-ms",
        "200",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(settled["reason"], "STABLE", "{settled}");

    let pressed = d.sp_json(&["keys", "vim", "i"]);
    let baseline = pressed["hash"]
        .as_str()
        .expect("keys returns the hash from before them");
    assert_eq!(
        baseline,
        settled["hash"].as_str().unwrap(),
        "the baseline is the settled screen"
    );
    let changed = d.sp_json(&["wait", "vim", "--change", baseline, "--timeout-ms", LONG]);
    assert_eq!(changed["changed"], true, "{changed}");
    assert_ne!(changed["hash"], pressed["hash"]);
    assert!(text(&changed).contains("-- INSERT --"), "{changed}");

    let typed = d.sp_json(&["type", "vim", "xyz"]);
    let again = d.sp_json(&[
        "wait",
        "vim",
        "--change",
        typed["hash"].as_str().unwrap(),
        "--timeout-ms",
        LONG,
    ]);
    assert!(text(&again).starts_with("x"), "{again}");
    d.wait_regex("vim", "^xyz$");
}

#[test]
fn a_highlight_move_is_a_visual_change_but_not_a_text_change() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "menu",
        "--",
        "python3",
        &fixture("menu.py"),
    ]);
    d.wait_regex("menu", r"^choose a fruit");
    let before = d.snapshot("menu");

    let pressed = d.sp_json(&["keys", "menu", "Down"]);
    assert_eq!(
        pressed["visual_hash"], before["visual_hash"],
        "the menu was drawn before the key"
    );
    let moved = d.sp_json(&[
        "wait",
        "menu",
        "--visual-change",
        pressed["visual_hash"].as_str().unwrap(),
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(moved["changed"], true, "{moved}");
    assert_ne!(moved["visual_hash"], before["visual_hash"]);
    assert_eq!(moved["text"], before["text"], "no text changed");
    assert_eq!(moved["hash"], before["hash"]);

    let (status, unchanged) = d.json_status(&[
        "wait",
        "menu",
        "--change",
        pressed["hash"].as_str().unwrap(),
        "--timeout-ms",
        "500",
    ]);
    assert_eq!(status, 1, "a text wait times out: {unchanged}");
    assert_eq!(unchanged["changed"], false, "{unchanged}");
}

#[test]
fn wait_ready_is_stable_once_a_burst_of_output_ends() {
    let d = Daemon::new();
    d.spawn_bash("ls");
    d.line("ls", "ls -R /usr | head -2000");
    let result = d.sp_json(&[
        "wait",
        "ls",
        "--ready",
        "--stable-ms",
        "500",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(result["reason"], "STABLE", "{result}");
    assert!(elapsed_ms(&result) >= 500.0, "{result}");
    let last = text(&result).trim_end().lines().last().unwrap_or("");
    assert_eq!(
        last, "$",
        "the listing is over and the prompt is back: {result}"
    );
}

#[test]
fn wait_ready_stops_at_the_marker() {
    let d = Daemon::new();
    d.spawn_bash("build");
    d.line(
        "build",
        "for i in 1 2 3; do echo step $i; done; sleep 0.2; echo BUILD-''OK; sleep 30",
    );
    let result = d.sp_json(&[
        "wait",
        "build",
        "--ready",
        "--marker",
        "^BUILD-OK$",
        "--stable-ms",
        "60000",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(result["reason"], "MARKER", "{result}");
    assert_eq!(result["matched"], true, "{result}");
    assert_eq!(result["match"], "BUILD-OK", "{result}");
    assert!(text(&result).contains("step 3"), "{result}");
}

#[test]
fn wait_ready_ends_at_once_when_a_detected_child_exits() {
    let d = Daemon::new();
    d.spawn_bash_with("dies", &["--detect-child-exit"]);
    // Neither the marker nor a quiet minute will come: only the exit can end this wait early.
    let waiter = Background::spawn(d.command(&[
        "--json",
        "wait",
        "dies",
        "--ready",
        "--marker",
        "never-printed",
        "--stable-ms",
        "60000",
        "--timeout-ms",
        LONG,
    ]));
    d.line("dies", "exit 4");
    let out = waiter.finish();
    let result = parse_json(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an exit is not readiness: {result}"
    );
    assert_eq!(result["reason"], "EXITED", "{result}");
    assert_eq!(result["exited"], true, "{result}");
    assert_eq!(result["alive"], false, "{result}");
    assert!(
        elapsed_ms(&result) < 10_000.0,
        "far below the 20 s timeout: {result}"
    );

    // A wait started after the exit ends at once too.
    let (_, late) = d.json_status(&[
        "wait",
        "dies",
        "--regex",
        "never-printed",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(late["exited"], true, "{late}");
    assert!(elapsed_ms(&late) < 10_000.0, "{late}");
}

#[test]
fn without_detect_child_exit_a_wait_runs_to_its_timeout() {
    let d = Daemon::new();
    d.spawn_bash("dies");
    d.line("dies", "exit 4");
    d.sp_json(&["wait", "dies", "--exit", "--timeout-ms", LONG]);
    let (status, result) = d.json_status(&[
        "wait",
        "dies",
        "--ready",
        "--marker",
        "never-printed",
        "--stable-ms",
        "60000",
        "--timeout-ms",
        "600",
    ]);
    assert_eq!(status, 1, "{result}");
    assert_eq!(result["reason"], "TIMEOUT", "{result}");
    assert_eq!(result["exited"], false, "{result}");
    assert_eq!(result["alive"], false, "{result}");
    assert!(
        elapsed_ms(&result) >= 600.0,
        "it ran to its timeout: {result}"
    );
}

#[test]
fn fifty_concurrent_waits_on_ten_sessions_all_resolve() {
    let d = Daemon::with_env(&[("SCREENPILOT_MAX_SESSIONS", "16")]);
    let sids: Vec<String> = (0..10).map(|s| format!("s{s}")).collect();
    for sid in &sids {
        d.spawn_bash(sid);
    }
    let mut waiters = Vec::new();
    for (s, sid) in sids.iter().enumerate() {
        for k in 0..5 {
            let token = format!("tok-{s}-{k}");
            let pattern = format!("^{token}$");
            let waiter = Background::spawn(d.command(&[
                "--json",
                "wait",
                sid,
                "--regex",
                &pattern,
                "--timeout-ms",
                LONG,
            ]));
            waiters.push((token, waiter));
        }
    }
    // The tokens are printed by a loop, so the typed command line never contains one.
    for (s, sid) in sids.iter().enumerate() {
        d.line(
            sid,
            &format!("for k in 0 1 2 3 4; do echo tok-{s}-$k; done"),
        );
    }
    for (token, waiter) in waiters {
        let out = waiter.finish();
        assert!(
            out.status.success(),
            "wait for {token} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let result = parse_json(&out);
        assert_eq!(result["match"], token.as_str(), "{result}");
    }
}

#[test]
fn a_client_vanishing_mid_wait_leaves_the_daemon_healthy() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    // CLI clients killed while they wait.
    let doomed: Vec<Background> = (0..3)
        .map(|_| {
            Background::spawn(d.command(&[
                "wait",
                "sh",
                "--regex",
                "never-printed",
                "--timeout-ms",
                "60000",
            ]))
        })
        .collect();
    for waiter in doomed {
        d.sp_json(&["list"]);
        waiter.kill();
    }

    // A raw client: the status answer proves the wait before it on the same connection was taken up.
    let socket = d.path().join("daemon.sock");
    let mut stream = UnixStream::connect(&socket).expect("connect to the daemon socket");
    let requests = concat!(
        r#"{"id": 1, "op": "wait_for", "params": {"sid": "sh", "pattern": "never-printed", "timeout_ms": 60000}}"#,
        "\n",
        r#"{"id": 2, "op": "status", "params": {}}"#,
        "\n"
    );
    stream.write_all(requests.as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer).unwrap();
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(answer["id"], 2, "the wait is still running: {answer}");
    drop(stream);

    let list = d.sp_json(&["list"]);
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1, "{list}");
    d.assert_bash_healthy("sh", "after");
    let again = Background::spawn(d.command(&[
        "--json",
        "wait",
        "sh",
        "--regex",
        "^late-token$",
        "--timeout-ms",
        LONG,
    ]));
    d.line("sh", "echo late-''token");
    let out = again.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(d.sp_json(&["alive", "sh"])["alive"], true);
}

/// Answers and cancels go by request id, so a second request reusing the id of a running one is refused
/// (it could be neither told apart nor stopped), and the first can still be cancelled.
#[test]
fn a_request_reusing_a_running_id_is_refused() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    let socket = d.path().join("daemon.sock");
    let mut stream = UnixStream::connect(&socket).expect("connect to the daemon socket");
    let wait = r#"{"id": 7, "op": "wait_for", "params": {"sid": "sh", "pattern": "never-printed", "timeout_ms": 60000}}"#;
    let requests = format!("{wait}\n{wait}\n{}\n", r#"{"id": 8, "op": "status"}"#);
    stream.write_all(requests.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut next = || {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    let refused = next();
    assert_eq!(refused["id"], 7, "{refused}");
    assert_eq!(refused["error"]["code"], "duplicate_id", "{refused}");
    assert_eq!(next()["id"], 8);

    stream
        .write_all(b"{\"id\": 9, \"op\": \"cancel\", \"params\": {\"id\": 7}}\n")
        .unwrap();
    let mut answers = vec![next(), next()];
    answers.sort_by_key(|a| a["id"].as_i64());
    assert_eq!(answers[0]["error"]["code"], "cancelled", "{answers:?}");
    assert_eq!(answers[1]["result"]["cancelled"], true, "{answers:?}");
}

#[test]
fn an_invalid_regex_is_an_error_naming_the_pattern() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    let error = d.sp_error(&["wait", "sh", "--regex", "(unclosed", "--timeout-ms", LONG]);
    assert_eq!(error["field"], "pattern", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("(unclosed"),
        "{error}"
    );

    let error = d.sp_error(&[
        "wait",
        "sh",
        "--any",
        "fine",
        "[broken",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(error["field"], "patterns", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("[1]") && message.contains("[broken"),
        "{error}"
    );

    let error = d.sp_error(&[
        "wait",
        "sh",
        "--ready",
        "--marker",
        "a{99999999}",
        "--timeout-ms",
        LONG,
    ]);
    assert_eq!(error["field"], "marker", "{error}");

    d.assert_bash_healthy("sh", "fine");
}

#[test]
fn settle_returns_the_screen_once_the_program_has_answered() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    // Late output: the answer comes only once the shell has been quiet for longer than its pause.
    let result = d.sp_json(&[
        "line",
        "sh",
        "--settle-ms",
        "1500",
        "sleep 0.3; echo la''te",
    ]);
    assert_eq!(result["settled"], true, "{result}");
    assert!(text(&result).contains("\nlate\n"), "{result}");
    // The hash returned is the settled screen's, a ready baseline for the next wait.
    assert_eq!(result["hash"], d.snapshot("sh")["hash"], "{result}");
}

#[test]
fn settle_reports_a_program_that_did_not_react() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    d.line("sh", "stty -echo; cat > /dev/null");
    d.wait_regex("sh", r"cat > /dev/null\n");
    let params = r#"{"sid": "sh", "keys": ["x"], "settle_ms": 100, "settle_timeout_ms": 300}"#;
    let (status, result) = d.json_status(&["call", "send_keys", params]);
    assert_eq!(status, 0, "not an error: {result}");
    assert_eq!(result["settled"], false, "{result}");
}
