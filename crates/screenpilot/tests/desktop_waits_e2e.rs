//! Waits, snapshots and screenshots on desktop sessions, through the real CLI, on a real Xvfb with a
//! real xterm. The program under test reacts to lines the test writes into a named pipe, so every
//! change on the screen happens when the test says, and every wait is woken by X itself.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use common::{Background, Daemon};

/// An xterm whose shell sets its title to "ready", then for each line read from `fifo` prints the
/// line, sets the title to it, and exits on "quit". The shell holds the pipe open for reading and
/// writing, so no line is lost between two reads and no writer's close ends its loop.
fn start_reactive_xterm(daemon: &Daemon, sid: &str, size: &str) -> PathBuf {
    let fifo = daemon.path().join(format!("{sid}.fifo"));
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let script = format!(
        r#"exec 3<> '{}'; printf '\033]0;ready\007'; while read -r line <&3; do printf '%s\n' "$line"; printf '\033]0;%s\007' "$line"; [ "$line" = quit ] && exit 7; done"#,
        fifo.display()
    );
    let started = daemon.sp_json(&[
        "desktop", "start", "--sid", sid, "--size", size, "--", "xterm", "-e", "sh", "-c", &script,
    ]);
    assert_eq!(started["kind"], "desktop", "{started}");
    assert!(started["window"]["focused"] == true, "{started}");
    fifo
}

/// Write one line into the program's pipe (blocks until it reads).
fn say(fifo: &Path, line: &str) {
    let mut pipe = std::fs::OpenOptions::new()
        .write(true)
        .open(fifo)
        .expect("the program opens its pipe");
    writeln!(pipe, "{line}").expect("the line is written");
}

fn wait_json(daemon: &Daemon, args: &[&str]) -> (i32, Value) {
    daemon.json_status(args)
}

#[test]
fn wait_for_matches_window_titles_and_wakes_when_one_changes() {
    let daemon = Daemon::new();
    let fifo = start_reactive_xterm(&daemon, "d", "800x600");
    let (status, ready) = wait_json(&daemon, &["wait", "d", "--regex", "^ready$"]);
    assert_eq!(status, 0, "{ready}");
    assert_eq!(ready["matched"], true);
    assert_eq!(ready["text"], "ready");

    let waiting = Background::spawn(daemon.command(&[
        "--json",
        "wait",
        "d",
        "--any",
        "^never$",
        "^done$",
        "--timeout-ms",
        "20000",
    ]));
    say(&fifo, "done");
    let out = waiting.finish();
    let result = common::parse_json(&out);
    assert_eq!(out.status.code(), Some(0), "{result}");
    assert_eq!(result["index"], 1, "{result}");
    assert_eq!(result["match"], "done");
    let windows = result["windows"].as_array().expect("windows");
    assert!(
        windows
            .iter()
            .any(|w| w["title"] == "done" && w["focused"] == true),
        "{result}"
    );

    // A title that never comes is a timeout, not an error.
    let (status, late) = wait_json(
        &daemon,
        &["wait", "d", "--regex", "^nope$", "--timeout-ms", "300"],
    );
    assert_eq!(status, 1, "{late}");
    assert_eq!(late["matched"], false);
}

#[test]
fn visual_change_ready_and_exit_are_woken_by_the_display() {
    let daemon = Daemon::new();
    let fifo = start_reactive_xterm(&daemon, "d", "640x480");
    daemon.sp_json(&["wait", "d", "--regex", "^ready$"]);
    // Quiet once xterm has drawn its first frame.
    let (status, quiet) = wait_json(&daemon, &["wait", "d", "--ready", "--stable-ms", "200"]);
    assert_eq!(status, 0, "{quiet}");
    assert_eq!(quiet["reason"], "STABLE");

    let before = daemon.snapshot("d");
    let hash = before["hash"].as_str().expect("a hash").to_owned();
    let waiting = Background::spawn(daemon.command(&[
        "--json",
        "wait",
        "d",
        "--visual-change",
        &hash,
        "--timeout-ms",
        "20000",
    ]));
    say(&fifo, "painted");
    let out = waiting.finish();
    let changed = common::parse_json(&out);
    assert_eq!(out.status.code(), Some(0), "{changed}");
    assert_eq!(changed["changed"], true);
    assert_ne!(changed["hash"], before["hash"]);

    // A baseline that is the screen now times out when nothing is drawn.
    daemon.sp_json(&["wait", "d", "--ready", "--stable-ms", "200"]);
    let now = daemon.snapshot("d")["hash"]
        .as_str()
        .expect("hash")
        .to_owned();
    let (status, still) = wait_json(
        &daemon,
        &["wait", "d", "--change", &now, "--timeout-ms", "300"],
    );
    assert_eq!(status, 1, "{still}");

    let waiting = Background::spawn(daemon.command(&[
        "--json",
        "wait",
        "d",
        "--exit",
        "--timeout-ms",
        "20000",
    ]));
    say(&fifo, "quit");
    let out = waiting.finish();
    let ended = common::parse_json(&out);
    assert_eq!(out.status.code(), Some(0), "{ended}");
    assert_eq!(ended["exited"], true, "{ended}");
    assert_eq!(daemon.sp_json(&["alive", "d"])["program_alive"], false);
}

#[test]
fn desktop_screenshots_are_sized_for_models_unless_asked_for_full_size() {
    let daemon = Daemon::new();
    start_reactive_xterm(&daemon, "big", "2560x1600");
    let shot = daemon.sp_json(&["screenshot", "big", "-o", "/dev/null"]);
    let (width, height) = (
        shot["width"].as_u64().unwrap(),
        shot["height"].as_u64().unwrap(),
    );
    assert!(width <= 1568 && height <= 1568, "{shot}");
    assert!(width * height <= 1_150_000, "{shot}");
    // The aspect ratio is kept (16:10).
    assert!((width as f64 / height as f64 - 1.6).abs() < 0.01, "{shot}");
    assert_eq!(shot["screen_width"], 2560);
    assert_eq!(shot["screen_height"], 1600);
    assert!(shot["scale"].as_f64().unwrap() > 1.8, "{shot}");

    let full = daemon.sp_json(&["screenshot", "big", "--full-size", "-o", "/dev/null"]);
    assert_eq!(
        (full["width"].clone(), full["height"].clone()),
        (2560.into(), 1600.into())
    );
    assert_eq!(full["scale"], 1.0);

    // Terminal-only options are refused by name.
    let error = daemon.sp_error(&["screenshot", "big", "-o", "x.svg"]);
    assert_eq!(error["field"], "format", "{error}");
    let error = daemon.sp_error(&["wait", "big", "--regex", "x", "--scrollback"]);
    assert_eq!(error["field"], "scrollback", "{error}");
}

#[test]
fn terminal_tools_given_a_desktop_say_it_is_a_desktop() {
    let daemon = Daemon::new();
    start_reactive_xterm(&daemon, "d1", "640x480");
    for args in [
        &["type", "d1", "hi"][..],
        &["line", "d1", "hi"],
        &["run", "d1", "true"],
        &["resize", "d1", "80x24"],
    ] {
        let error = daemon.sp_error(args);
        assert_eq!(error["field"], "sid", "{args:?}: {error}");
        let message = error["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("'d1' is a desktop session") && message.contains("terminal sessions"),
            "{args:?}: {message}"
        );
    }
    // A sid that is nothing at all is still said to be unknown.
    let error = daemon.sp_error(&["type", "nobody", "hi"]);
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("no session named 'nobody'")),
        "{error}"
    );
}

/// A caret blinking in a focused field draws twice a second forever (GTK draws its whole entry):
/// the desktop is still ready once nothing but the blink is drawn, on GTK 3 and Qt alike.
#[test]
fn a_blinking_caret_does_not_keep_a_desktop_from_being_ready() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop", "start", "--sid", "g", "--", "zenity", "--entry", "--title", "Blink", "--text",
        "Name",
    ]);
    d.start_qt_form("q");
    d.sp_json(&["act", "q", "text \"Name\"", "focus"]);
    for sid in ["g", "q"] {
        // 1.5 s is three blinks of either toolkit's caret.
        let (status, ready) = wait_json(
            &d,
            &[
                "wait",
                sid,
                "--ready",
                "--stable-ms",
                "1500",
                "--timeout-ms",
                "20000",
            ],
        );
        assert_eq!(status, 0, "{sid}: {ready}");
        assert_eq!(ready["reason"], "STABLE", "{sid}: {ready}");
    }
    // What is typed is drawing of another look: the field shows it (a third look is a change: the
    // unit tests of Looks).
    d.sp_json(&["computer", "g", "type", "Ada"]);
    let typed = d.sp_json(&["snapshot", "g"]);
    let elements = typed["elements"].as_str().unwrap_or_default();
    assert!(elements.contains(r#"="Ada""#), "{typed}");
}
