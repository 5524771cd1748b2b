//! `screenpilot attach` end to end, through a real pty as a person's terminal: the attaching
//! `screenpilot attach` runs as a session of its own ("viewer"), so the test types into it as a
//! person would and reads its screen as they would see it, while the agent drives the target.

use crate::common;

use common::{binary, fixture, Background, Daemon, PROMPT};
use serde_json::Value;

const LONG: &str = "20000";

/// Start `screenpilot attach ARGS...` in a terminal of `size` (COLSxROWS) as session `viewer`.
fn attach(d: &Daemon, viewer: &str, size: &str, args: &[&str]) {
    let mut spawn = vec![
        "spawn",
        "--sid",
        viewer,
        "--size",
        size,
        "--",
        binary(),
        "attach",
    ];
    spawn.extend_from_slice(args);
    d.sp_json(&spawn);
}

/// The viewers `list` shows for `sid`.
fn viewers(d: &Daemon, sid: &str) -> Vec<Value> {
    let list = d.sp_json(&["list"]);
    let session = list["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["sid"] == sid))
        .unwrap_or_else(|| panic!("{sid} is not listed: {list}"));
    session["viewers"].as_array().cloned().unwrap_or_default()
}

/// The screen's lines, without the blank ones at the bottom.
fn lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(|l| l.trim_end().to_owned()).collect();
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

/// The viewer has ended; its exit status and final screen.
fn ended(d: &Daemon, viewer: &str) -> (i64, String) {
    let exit = d.sp_json(&["wait", viewer, "--exit", "--timeout-ms", LONG]);
    assert_eq!(exit["exited"], true, "{viewer} did not end: {exit}");
    let alive = d.json_status(&["alive", viewer]).1;
    (alive["exit_code"].as_i64().unwrap_or(-1), d.screen(viewer))
}

#[test]
fn typed_text_reaches_the_program_the_agents_wait_sees_it_and_detaching_leaves_it_running() {
    let d = Daemon::new();
    d.spawn_bash("target");
    // Two people at once, on terminals larger than the session (80x24).
    attach(&d, "viewer", "100x30", &["target"]);
    attach(&d, "other", "90x26", &["target"]);
    d.wait_regex("viewer", PROMPT);
    d.wait_regex("other", PROMPT);
    let attached = viewers(&d, "target");
    assert_eq!(attached.len(), 2, "{attached:?}");
    assert!(attached
        .iter()
        .all(|v| v["how"] == "attach" && v["read_only"] == false));

    // The agent waits while the person types.
    let waiting = Background::spawn(d.command(&[
        "--json",
        "wait",
        "target",
        "--regex=^typed-42$",
        "--timeout-ms",
        LONG,
    ]));
    d.sp_json(&["type", "viewer", "echo typed-$((6*7))"]);
    d.sp_json(&["keys", "viewer", "Enter"]);
    let seen = common::parse_json(&waiting.finish());
    assert_eq!(seen["matched"], true, "the agent's wait: {seen}");

    // Both people see what the program drew, exactly as `snapshot` reads it.
    for viewer in ["viewer", "other"] {
        d.wait_regex(viewer, r"^typed-42\n\$ ?$");
        assert_eq!(
            lines(&d.screen(viewer)),
            lines(&d.screen("target")),
            "{viewer} shows the target's screen"
        );
    }

    // Detaching ends the attachment, not the program.
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    let (status, screen) = ended(&d, "viewer");
    assert_eq!(status, 0, "{screen}");
    assert!(
        screen.contains("detached from target; it keeps running"),
        "{screen}"
    );
    assert_eq!(viewers(&d, "target").len(), 1);
    d.assert_bash_healthy("target", "after");
    d.sp_json(&["keys", "other", "C-]", "d"]);
    assert_eq!(ended(&d, "other").0, 0);
    assert!(viewers(&d, "target").is_empty());
    d.assert_bash_healthy("target", "later");
}

#[test]
fn a_paste_reaches_the_program_as_a_paste() {
    let d = Daemon::new();
    let reporter = fixture("input_reporter.py");
    d.sp_json(&[
        "spawn", "--sid", "target", "--", "python3", &reporter, "--paste",
    ]);
    d.wait_regex("target", "^READY$");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", "^READY$");
    // The program asked for bracketed paste; the person's terminal was told to bracket pastes too.
    let modes = d.snapshot("target")["modes"].clone();
    assert_eq!(modes["bracketed_paste"], true, "{modes}");
    assert_eq!(d.snapshot("viewer")["modes"], modes);
    // Two lines pasted into the person's terminal, then a key: the program gets exactly the bytes
    // that terminal sent, the paste whole between its markers (a lost marker would run the lines
    // as typed), then the key on its own.
    d.sp_json(&["type", "viewer", "echo pasted-1\necho pasted-2"]);
    d.sp_json(&["keys", "viewer", "z"]);
    d.wait_regex("target", r"^KEYS 'z'$");
    let screen = lines(&d.screen("target"));
    assert_eq!(
        screen[2..],
        [
            r"PASTE '\x1b[200~echo pasted-1\necho pasted-2\x1b[201~'",
            "KEYS 'z'",
        ],
        "{screen:#?}"
    );
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    assert_eq!(ended(&d, "viewer").0, 0);
}

#[test]
fn ctrl_bracket_shows_what_comes_next_and_twice_sends_it_to_the_program() {
    let d = Daemon::new();
    let reporter = fixture("input_reporter.py");
    d.sp_json(&["spawn", "--sid", "target", "--", "python3", &reporter]);
    d.wait_regex("target", "^READY$");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", "^READY$");
    d.sp_json(&["keys", "viewer", "C-]"]);
    d.wait_regex("viewer", r"d detach \(the program keeps running\)");
    d.sp_json(&["keys", "viewer", "C-]"]);
    d.wait_regex("target", r"^KEYS '\\x1d'$");
    // The hint is gone once the screen is painted again; what follows goes on as usual.
    d.sp_json(&["keys", "viewer", "z"]);
    d.wait_regex("target", r"^KEYS 'z'$");
    d.wait_regex("viewer", r"^KEYS 'z'$");
    let screen = d.screen("viewer");
    assert!(!screen.contains("detach"), "{screen}");
    assert_eq!(lines(&screen), lines(&d.screen("target")));
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    assert_eq!(ended(&d, "viewer").0, 0);
}

#[test]
fn read_only_sends_nothing_and_still_shows_everything() {
    let d = Daemon::new();
    d.spawn_bash("target");
    attach(&d, "viewer", "80x24", &["target", "--read-only"]);
    d.wait_regex("viewer", PROMPT);
    let attached = viewers(&d, "target");
    assert_eq!(attached.len(), 1, "{attached:?}");
    assert_eq!(attached[0]["read_only"], true, "{attached:?}");

    // What the person types, then the chord: by the time the viewer has ended it has read all of it
    // (and a writing attachment would have delivered it: see the test above).
    d.sp_json(&["type", "viewer", "echo leaked-$((6*7))"]);
    d.sp_json(&["keys", "viewer", "Enter", "C-]", "d"]);
    let (status, screen) = ended(&d, "viewer");
    assert_eq!(status, 0, "{screen}");
    // Anything that had reached bash would show before this marker.
    d.line("target", "echo marker-$((6*7))");
    d.wait_regex("target", "^marker-42$");
    let target = d.screen("target");
    assert!(
        !target.contains("leaked"),
        "read-only input leaked:\n{target}"
    );
    assert!(viewers(&d, "target").is_empty());
}

#[test]
fn a_smaller_terminal_shows_the_part_around_the_cursor() {
    let d = Daemon::new();
    d.spawn_bash("target");
    d.line(
        "target",
        "for i in $(seq 1 30); do echo line-$i-$(printf '%060d' $i); done",
    );
    d.wait_regex("target", r"^line-30-0+30\n\$ ?$");
    attach(&d, "viewer", "40x10", &["target"]);
    d.wait_regex("viewer", PROMPT);
    // The cursor is on the target's last row, at the left: the viewer shows the last 10 rows, their
    // first 40 columns.
    let target: Vec<String> = d.screen("target").lines().map(str::to_owned).collect();
    let expected: Vec<String> = target[target.len() - 10..]
        .iter()
        .map(|l| l.chars().take(40).collect::<String>().trim_end().to_owned())
        .collect();
    assert_eq!(lines(&d.screen("viewer")), lines(&expected.join("\n")));
    // The session kept its own size.
    let size = d.snapshot("target");
    assert_eq!(
        (size["cols"].as_u64(), size["rows"].as_u64()),
        (Some(80), Some(24))
    );
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    assert_eq!(ended(&d, "viewer").0, 0);
}

/// A program that prints its terminal size at start and after every SIGWINCH.
const SHOW_SIZE: &str = "import os, signal
def show(*_):
    print('size-%dx%d' % tuple(os.get_terminal_size()), flush=True)
signal.signal(signal.SIGWINCH, show)
show()
while True:
    signal.pause()";

#[test]
fn resize_gives_the_session_the_persons_terminal_size_and_follows_it() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "target", "--", "python3", "-c", SHOW_SIZE]);
    d.wait_regex("target", "^size-80x24$");
    attach(&d, "viewer", "100x30", &["target", "--resize"]);
    d.wait_regex("target", "^size-100x30$");
    d.wait_regex("viewer", "^size-100x30$");
    // The person resizes their terminal: the session follows.
    d.sp_json(&["resize", "viewer", "60x20"]);
    d.wait_regex("target", "^size-60x20$");
    d.wait_regex("viewer", "^size-60x20$");
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    assert_eq!(ended(&d, "viewer").0, 0);
}

#[test]
fn a_person_resizing_their_terminal_sees_the_session_anew_at_the_new_size() {
    let d = Daemon::new();
    d.spawn_bash("target");
    d.line("target", "for i in $(seq 1 30); do echo row-$i; done");
    d.wait_regex("target", r"^row-30\n\$ ?$");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", r"^row-8$");
    // Smaller: the rows around the cursor, and the session keeps its size.
    d.sp_json(&["resize", "viewer", "80x5"]);
    d.wait_regex("viewer", r"\Arow-27\nrow-28\nrow-29\nrow-30\n\$ ?$");
    let size = d.snapshot("target");
    assert_eq!(
        (size["cols"].as_u64(), size["rows"].as_u64()),
        (Some(80), Some(24))
    );
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    assert_eq!(ended(&d, "viewer").0, 0);
}

#[test]
fn detaching_gives_the_persons_terminal_back_as_it_was() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "target",
        "--",
        "python3",
        &fixture("input_reporter.py"),
        "--mouse",
    ]);
    d.wait_regex("target", "^READY$");
    // The person's shell, in which they run attach.
    d.spawn_bash("person");
    d.line(
        "person",
        &format!("{} attach target; echo attach-status-$?", binary()),
    );
    d.wait_regex("person", "^READY$");
    let during = d.snapshot("person");
    assert_eq!(during["alt_screen"], true, "{during}");
    assert_ne!(during["modes"]["mouse_tracking"], "off", "{during}");
    d.sp_json(&["keys", "person", "C-]", "d"]);
    d.wait_regex("person", r"^attach-status-0\n\$ ?$");
    let after = d.snapshot("person");
    assert_eq!(after["alt_screen"], false, "{after}");
    assert_eq!(after["modes"]["mouse_tracking"], "off", "{after}");
    let text = after["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("detached from target; it keeps running"),
        "{text}"
    );
    // The shell reads lines again, echoing them: the terminal is out of raw mode.
    d.line("person", "echo back-$((6*7))");
    d.wait_regex("person", r"^\$ echo back-\$\(\(6\*7\)\)\nback-42$");
    assert_eq!(d.sp_json(&["alive", "target"])["alive"], true);
}

#[test]
fn a_click_reaches_an_app_that_asked_for_the_mouse_where_the_person_saw_it() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "target",
        "--",
        "python3",
        &fixture("input_reporter.py"),
        "--mouse",
    ]);
    d.wait_regex("target", "^READY$");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", "^READY$");
    // The person's terminal is set to encode keys, paste and mouse the way the app asked.
    assert_eq!(d.snapshot("viewer")["modes"], d.snapshot("target")["modes"]);
    // A click on cell (5,3) of it.
    d.sp_json(&["mouse", "viewer", "click", "--at", "5,3"]);
    d.wait_regex("target", r"^MOUSE press button=0 x=6 y=4$");
    d.wait_regex("viewer", r"^MOUSE press button=0 x=6 y=4$");

    // Through a terminal smaller than the session, following the cursor down: the click lands on the
    // screen cell under the pointer, not on the one at the same place from the top.
    for i in 0..12 {
        d.sp_json(&["keys", "target", &format!("k{i}")]);
        d.wait_regex("target", &format!("^KEYS 'k{i}'$"));
    }
    attach(&d, "small", "80x10", &["target"]);
    d.wait_regex("small", r"^KEYS 'k11'$");
    let small: Vec<String> = d.screen("small").lines().map(str::to_owned).collect();
    let row_on_small = small
        .iter()
        .position(|l| l.contains("KEYS 'k10'"))
        .expect("k10 in view");
    let target: Vec<String> = d.screen("target").lines().map(str::to_owned).collect();
    let row_on_target = target
        .iter()
        .position(|l| l.contains("KEYS 'k10'"))
        .expect("k10 on the target");
    let at = format!("2,{row_on_small}");
    d.sp_json(&["mouse", "small", "click", "--at", &at]);
    d.wait_regex(
        "target",
        &format!(r"^MOUSE press button=0 x=3 y={}$", row_on_target + 1),
    );
}

#[test]
fn the_program_ending_ends_the_attachment_with_its_status() {
    let d = Daemon::new();
    d.spawn_bash("target");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", PROMPT);
    d.line("viewer", "exit 3");
    let (status, screen) = ended(&d, "viewer");
    assert_eq!(status, 3, "{screen}");
    assert!(screen.contains("target ended (exit status 3)"), "{screen}");
}

#[test]
fn the_persons_terminal_going_away_detaches_without_ending_the_program() {
    let d = Daemon::new();
    d.spawn_bash("target");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", PROMPT);
    assert_eq!(viewers(&d, "target").len(), 1);
    // Closing the viewer's session hangs up its terminal (SIGHUP), as closing a terminal window does.
    d.sp_json(&["close", "viewer"]);
    assert!(viewers(&d, "target").is_empty());
    d.assert_bash_healthy("target", "still");
}

#[test]
fn closing_the_session_ends_the_attachment_and_says_so() {
    let d = Daemon::new();
    d.spawn_bash("target");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", PROMPT);
    d.sp_json(&["close", "target"]);
    let (_, screen) = ended(&d, "viewer");
    assert!(screen.contains("target was closed"), "{screen}");
}

#[test]
fn attaching_to_no_such_session_says_so_and_leaves_the_terminal_alone() {
    let d = Daemon::new();
    attach(&d, "viewer", "80x24", &["nothing-here"]);
    let (status, screen) = ended(&d, "viewer");
    assert_eq!(status, 2, "{screen}");
    assert!(screen.contains("nothing-here"), "{screen}");
}

#[test]
fn a_fast_printer_ends_on_the_same_screen_for_the_person() {
    let d = Daemon::new();
    d.spawn_bash("target");
    attach(&d, "viewer", "80x24", &["target"]);
    d.wait_regex("viewer", PROMPT);
    d.line("target", "seq 1 200000");
    d.wait_regex("target", r"^200000\n\$ ?$");
    d.wait_regex("viewer", r"^200000\n\$ ?$");
    assert_eq!(lines(&d.screen("viewer")), lines(&d.screen("target")));
    d.sp_json(&["keys", "viewer", "C-]", "d"]);
    assert_eq!(ended(&d, "viewer").0, 0);
}

#[test]
fn attach_without_a_terminal_says_it_needs_one() {
    let d = Daemon::new();
    d.spawn_bash("target");
    let out = d.sp(&["attach", "target"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("needs a terminal"), "{stderr}");
    assert!(viewers(&d, "target").is_empty());
}

#[test]
fn attaching_to_a_desktop_points_to_watch() {
    let d = Daemon::new();
    let started = d.sp_json(&["desktop", "start", "--sid", "desk", "--wm", "none"]);
    assert_eq!(started["kind"], "desktop", "{started}");
    attach(&d, "viewer", "80x24", &["desk"]);
    let (status, screen) = ended(&d, "viewer");
    assert_eq!(status, 2, "{screen}");
    assert!(screen.contains("desk is a desktop"), "{screen}");
    assert!(screen.contains("watch shows desktops"), "{screen}");
}
