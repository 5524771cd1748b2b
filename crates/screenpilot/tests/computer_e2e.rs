//! Computer use end to end, through the real binary: desktop sessions on a private Xvfb that the
//! product starts (xterm, and a test window that records the X events it receives), and the same
//! actions on a terminal session. Synchronisation is by events only: X events, inotify, the product's
//! own waits.

use crate::common;
use crate::recorder;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use common::{brief, png_of, wait_for_file, wait_for_process_exit, Daemon};
use recorder::{Input, Recorder, BUTTON1_MASK, CONTROL_MASK, MOD4_MASK, SHIFT_MASK};

/// Generous: CI is a loaded two-core machine, and every wait returns as soon as its event comes.
const LONG: Duration = Duration::from_secs(20);

/// Start a desktop session; returns (display, xauthority).
fn start_desktop(daemon: &Daemon, sid: &str, extra: &[&str]) -> (String, PathBuf) {
    let mut args = vec!["desktop", "start", "--sid", sid, "--wm", "none"];
    args.extend_from_slice(extra);
    let started = daemon.sp_json(&args);
    assert_eq!(started["kind"], "desktop");
    (
        started["display"].as_str().expect("display").to_owned(),
        PathBuf::from(started["xauthority"].as_str().expect("xauthority")),
    )
}

/// The next `n` button presses (motion skipped), each after its release.
fn button_presses(window: &mut Recorder, n: usize) -> Vec<String> {
    let mut presses = Vec::new();
    let mut releases = 0;
    while releases < n {
        match window.next(LONG) {
            Some(Input::Button { press: false, .. }) => releases += 1,
            Some(press @ Input::Button { press: true, .. }) => presses.push(press.brief()),
            Some(_) => {}
            None => panic!("only {releases} of {n} clicks arrived: {presses:?}"),
        }
    }
    presses
}

#[test]
fn xterm_on_a_desktop_runs_a_typed_command_and_the_screen_changes() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(
        &daemon,
        "desk",
        &[
            "--size",
            "1024x768",
            "--",
            "env",
            "LANG=C.UTF-8",
            "xterm",
            "-u8",
            "-e",
            "bash",
            "--norc",
            "--noprofile",
        ],
    );
    let watcher = recorder::connect(&display, &xauthority);
    recorder::wait_for_a_mapped_window(&watcher, LONG);

    let listed = daemon.sp_json(&["list"]);
    let entry = listed["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["sid"] == "desk"))
        .cloned()
        .expect("the desktop is listed");
    assert_eq!(entry["kind"], "desktop");
    assert_eq!(entry["alive"], true);
    assert_eq!(
        (entry["width"].clone(), entry["height"].clone()),
        (json!(1024), json!(768))
    );

    let before = daemon.act("desk", json!({"type": "click", "x": 100, "y": 100}));
    assert_eq!(before["kind"], "desktop");
    assert_eq!(
        (before["width"].clone(), before["height"].clone()),
        (json!(1024), json!(768))
    );
    assert_eq!(before["pointer"], json!({"x": 100, "y": 100}));
    let first = png_of(&before);
    assert_eq!(&first[1..4], b"PNG");

    let out = daemon.path().join("typed.txt");
    let command = format!("echo 'héllo ✓ 日本' > {}\n", out.display());
    let typed = daemon.act("desk", json!({"type": "type", "text": command}));
    assert_eq!(wait_for_file(&out, LONG), "héllo ✓ 日本\n");
    assert_ne!(
        png_of(&typed),
        first,
        "typing changed nothing on the screenshot"
    );

    // The CLI verb saves the screenshot to a file.
    let shot = daemon.path().join("shot.png");
    let saved = daemon.sp_json(&[
        "computer",
        "desk",
        "screenshot",
        "-o",
        shot.to_str().expect("utf-8"),
    ]);
    assert_eq!(saved["path"], shot.to_str().expect("utf-8"));
    let frame =
        screenpilot_desktop::decode_png(&std::fs::read(&shot).expect("saved png")).expect("a PNG");
    assert_eq!((frame.width, frame.height), (1024, 768));

    // close stops what it started: the program and the X server.
    let (xvfb, program) = (entry["pid"].as_i64(), entry["program_pid"].as_i64());
    let closed = daemon.sp_json(&["close", "desk"]);
    assert_eq!(closed["kind"], "desktop");
    for pid in [xvfb, program].into_iter().flatten() {
        assert!(
            wait_for_process_exit(pid as i32, LONG),
            "process {pid} outlived close"
        );
    }
    let gone = daemon.sp_error(&["alive", "desk"]);
    assert_eq!(gone["code"], "unknown_session");
}

#[test]
fn an_x_client_receives_every_button_scroll_chord_drag_and_character() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "events", &["--size", "800x600"]);
    let mut window = Recorder::open(&display, &xauthority);
    let briefs = |inputs: &[Input]| inputs.iter().map(Input::brief).collect::<Vec<_>>();

    daemon.act("events", json!({"type": "click", "x": 10, "y": 20}));
    assert_eq!(
        briefs(&window.take(3, LONG)),
        [
            "motion 10,20",
            "press 1 @10,20 state=0x0",
            "release 1 @10,20 state=0x100"
        ]
    );

    // Every button: right, wheel (middle), back, forward, as one batch.
    let (status, batch) = daemon.computer(json!({"sid": "events", "actions": [
        {"type": "click", "x": 30, "y": 40, "button": "right"},
        {"type": "click", "x": 30, "y": 40, "button": "wheel"},
        {"type": "click", "x": 30, "y": 40, "button": "back"},
        {"type": "click", "x": 30, "y": 40, "button": "forward"},
    ]}));
    assert_eq!(status, 0, "{}", brief(&batch));
    assert_eq!(batch["done"], 4);
    // XTest reports a motion for every move, even to where the pointer already is: count presses.
    assert_eq!(
        button_presses(&mut window, 4),
        ["3", "2", "8", "9"].map(|b| format!("press {b} @30,40 state=0x0"))
    );

    // Scroll: 240 right is 2 notches (button 7), 360 up is 3 (button 4); horizontal first.
    let scrolled = daemon.act(
        "events",
        json!({"type": "scroll", "x": 100, "y": 100, "scroll_x": 240, "scroll_y": -360}),
    );
    assert_eq!(scrolled["results"][0]["steps_x"], 2);
    assert_eq!(scrolled["results"][0]["steps_y"], -3);
    assert_eq!(
        button_presses(&mut window, 5),
        ["7", "7", "4", "4", "4"].map(|b| format!("press {b} @100,100 state=0x0"))
    );

    // Double click, and Anthropic's triple_click alias.
    daemon.act("events", json!({"type": "double_click", "x": 50, "y": 60}));
    daemon.act(
        "events",
        json!({"action": "triple_click", "coordinate": [50, 60]}),
    );
    assert_eq!(
        button_presses(&mut window, 5),
        vec!["press 1 @50,60 state=0x0".to_owned(); 5]
    );

    // Chords: Ctrl+C, then META (Super) + e, then Anthropic's key "ctrl+shift+t".
    daemon.act("events", json!({"type": "keypress", "keys": ["CTRL", "C"]}));
    let ctrl_c = window.take(4, LONG);
    assert_eq!(
        briefs(&ctrl_c),
        ["key+ 0xffe3", "key+ 0x63", "key- 0x63", "key- 0xffe3"]
    );
    assert!(matches!(ctrl_c[1], Input::Key { state, .. } if state & CONTROL_MASK != 0));
    daemon.act("events", json!({"type": "keypress", "keys": ["META", "e"]}));
    let super_e = window.take(4, LONG);
    assert_eq!(
        briefs(&super_e),
        ["key+ 0xffeb", "key+ 0x65", "key- 0x65", "key- 0xffeb"]
    );
    assert!(matches!(super_e[1], Input::Key { state, .. } if state & MOD4_MASK != 0));
    daemon.act("events", json!({"action": "key", "text": "ctrl+shift+t"}));
    let combo = window.take(6, LONG);
    assert_eq!(
        briefs(&combo)[..3],
        ["key+ 0xffe3", "key+ 0xffe1", "key+ 0x54"]
    );

    // A drag moves through every point with the button held.
    daemon.act(
        "events",
        json!({"type": "drag", "path": [{"x": 10, "y": 10}, {"x": 200, "y": 150}, [400, 300]]}),
    );
    let drag = window.take(5, LONG);
    assert_eq!(
        briefs(&drag),
        [
            "motion 10,10",
            "press 1 @10,10 state=0x0",
            "motion 200,150",
            "motion 400,300",
            "release 1 @400,300 state=0x100"
        ]
    );
    assert!(matches!(drag[2], Input::Motion { state, .. } if state & BUTTON1_MASK != 0));

    // Any Unicode arrives intact, characters missing from the keymap included.
    // More distinct missing characters than the keymap has spare keycodes: keycodes get reused.
    let many: String = ('\u{4e00}'..'\u{4e00}')
        .chain('\u{4e00}'..='\u{4e77}')
        .collect();
    let text = format!("héllo ✓ 日本 Ünïcödé {many}");
    let text = text.as_str();
    daemon.act("events", json!({"type": "type", "text": text}));
    let mut typed = String::new();
    while typed.chars().count() < text.chars().count() {
        match window.next(LONG) {
            Some(Input::Key {
                press: true,
                keysym,
                ..
            }) => {
                if let Some(c) = screenpilot_desktop::keysym::to_char(keysym) {
                    typed.push(c);
                }
            }
            Some(_) => {}
            None => panic!("typing stopped after {typed:?}"),
        }
    }
    assert_eq!(typed, text);

    // The test window's colour shows in the screenshot (pixels arrive as RGB, not BGR).
    let shot = daemon.act("events", json!({"type": "screenshot"}));
    let frame = screenpilot_desktop::decode_png(&png_of(&shot)).expect("a PNG");
    assert_eq!(frame.pixel(700, 500), Some([0x33, 0x66, 0xcc]));
    // cursor_position reports where the pointer is.
    let position = daemon.act("events", json!({"action": "cursor_position"}));
    assert_eq!(position["results"][0]["x"], 400);
    assert_eq!(position["results"][0]["y"], 300);
}

#[test]
fn out_of_range_points_and_control_characters_are_refused_before_anything_is_sent() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "edge", &["--size", "640x480"]);
    let mut window = Recorder::open(&display, &xauthority);

    let (status, refused) = daemon.computer(json!({"sid": "edge", "actions": [
        {"type": "click", "x": 10, "y": 10},
        {"type": "keypress", "keys": ["CTRL", "a"]},
        {"type": "click", "x": 640, "y": 10},
    ]}));
    assert_eq!(status, 2, "{}", brief(&refused));
    assert_eq!(refused["error"]["field"], "actions[2].x");
    let (_, anthropic) = daemon.computer(
        json!({"sid": "edge", "action": {"action": "left_click", "coordinate": [5, 480]}}),
    );
    assert_eq!(anthropic["error"]["field"], "action.coordinate");
    let (_, drag) = daemon
        .computer(json!({"sid": "edge", "action": {"type": "drag", "path": [[1, 1], [5000, 1]]}}));
    assert_eq!(drag["error"]["field"], "action.path");
    let (_, negative) =
        daemon.computer(json!({"sid": "edge", "action": {"type": "move", "x": -1, "y": 3}}));
    assert_eq!(negative["error"]["field"], "action.x");
    // A malformed field is named, in a single action as in a batch.
    let (_, wrong_type) =
        daemon.computer(json!({"sid": "edge", "action": {"type": "click", "x": "10", "y": 3}}));
    assert_eq!(wrong_type["error"]["field"], "action.x");
    // A control character has no key: the whole text is refused, not typed up to it.
    let (status, bell) = daemon.computer(json!({"sid": "edge", "actions": [
        {"type": "click", "x": 10, "y": 10},
        {"type": "type", "text": "ab\u{7}c"},
    ]}));
    assert_eq!(status, 2, "{}", brief(&bell));
    assert_eq!(bell["error"]["field"], "actions[1].text");

    // The first thing the window sees is this sentinel click: nothing of the refused calls arrived.
    daemon.act("edge", json!({"type": "click", "x": 7, "y": 9}));
    assert_eq!(
        window.next(LONG).map(|i| i.brief()).as_deref(),
        Some("motion 7,9")
    );
}

#[test]
fn held_keys_are_released_when_an_action_fails_midway() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "guard", &["--size", "640x480"]);
    let mut window = Recorder::open(&display, &xauthority);

    // The second action holds Ctrl+Shift for 5 s but may take only 300 ms: it fails with the keys down.
    let (status, failed) =
        daemon.computer(json!({"sid": "guard", "step_timeout_ms": 300, "actions": [
            {"type": "keypress", "keys": ["CTRL", "a"]},
            {"action": "hold_key", "text": "ctrl+shift", "duration": 5},
            {"type": "click", "x": 1, "y": 1},
        ]}));
    assert_eq!(
        status,
        0,
        "a failure after dispatch is a result: {}",
        brief(&failed)
    );
    assert_eq!(failed["ok"], false);
    assert_eq!(failed["failed_index"], 1);
    assert_eq!(failed["done"], 1);
    assert_eq!(failed["outcome"], "unknown");
    assert_eq!(failed["error"]["code"], "timeout");
    assert!(failed["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("outcome is unknown")));
    assert_eq!(
        &png_of(&failed)[1..4],
        b"PNG",
        "a failure still brings a screenshot"
    );

    let keys = window.take(8, LONG);
    assert_eq!(
        keys.iter().map(Input::brief).collect::<Vec<_>>(),
        [
            "key+ 0xffe3",
            "key+ 0x61",
            "key- 0x61",
            "key- 0xffe3",
            "key+ 0xffe3",
            "key+ 0xffe1",
            "key- 0xffe1",
            "key- 0xffe3",
        ]
    );
    // The next click arrives with no modifier down.
    daemon.act("guard", json!({"type": "click", "x": 20, "y": 30}));
    let click = window.until(LONG, |i| matches!(i, Input::Button { press: true, .. }));
    assert_eq!(
        click.last().map(Input::brief).as_deref(),
        Some("press 1 @20,30 state=0x0")
    );
}

/// The key and button events one action sent, motions left out: up to the release of `last_key`
/// (the first modifier held, released last).
fn held_during(window: &mut Recorder, last_key: u32) -> Vec<String> {
    window
        .until(
            LONG,
            |i| matches!(i, Input::Key { press: false, keysym, .. } if *keysym == last_key),
        )
        .iter()
        .filter(|i| !matches!(i, Input::Motion { .. }))
        .map(Input::brief)
        .collect()
}

/// Each vendor names the modifiers to hold during a pointer action its own way (OpenAI `keys`,
/// Anthropic `text`, its demo `key`, the toolset's blocks the same as `text`): all are pressed
/// before the button, held through it, and released after, in reverse order.
#[test]
fn modifiers_every_vendor_names_are_held_through_the_pointer_action() {
    const CTRL: u32 = 0xffe3;
    const SHIFT: u32 = 0xffe1;
    const ALT: u32 = 0xffe9;
    const SUPER: u32 = 0xffeb;
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "mods", &["--size", "640x480"]);
    let mut window = Recorder::open(&display, &xauthority);
    let ctrl_shift_click = [
        "key+ 0xffe3",
        "key+ 0xffe1",
        "press 1 @10,20 state=0x5",
        "release 1 @10,20 state=0x105",
        "key- 0xffe1",
        "key- 0xffe3",
    ];
    // OpenAI GA: keys held during a click.
    daemon.act(
        "mods",
        json!({"type": "click", "button": "left", "x": 10, "y": 20, "keys": ["CTRL", "SHIFT"]}),
    );
    assert_eq!(held_during(&mut window, CTRL), ctrl_shift_click);
    // Anthropic computer_20251124: text.
    daemon.act(
        "mods",
        json!({"action": "left_click", "coordinate": [10, 20], "text": "ctrl+shift"}),
    );
    assert_eq!(held_during(&mut window, CTRL), ctrl_shift_click);
    // Anthropic's demo: key.
    daemon.act(
        "mods",
        json!({"action": "right_click", "coordinate": [10, 20], "key": "shift"}),
    );
    assert_eq!(
        held_during(&mut window, SHIFT),
        [
            "key+ 0xffe1",
            "press 3 @10,20 state=0x1",
            "release 3 @10,20 state=0x401",
            "key- 0xffe1"
        ]
    );
    // Anthropic's toolset: a tool_use block, its id on the result.
    let scrolled = daemon.act(
        "mods",
        json!({"type": "tool_use", "id": "toolu_7", "name": "scroll", "toolset_name": "computer",
               "input": {"coordinate": [30, 40], "scroll_direction": "down", "scroll_amount": 2, "text": "ctrl"}}),
    );
    assert_eq!(
        scrolled["results"][0]["id"],
        "toolu_7",
        "{}",
        brief(&scrolled)
    );
    assert_eq!(
        held_during(&mut window, CTRL),
        [
            "key+ 0xffe3",
            "press 5 @30,40 state=0x4",
            "release 5 @30,40 state=0x1004",
            "press 5 @30,40 state=0x4",
            "release 5 @30,40 state=0x1004",
            "key- 0xffe3"
        ]
    );
    // OpenAI drag and double click; Anthropic's left_click_drag.
    daemon.act(
        "mods",
        json!({"type": "drag", "path": [{"x": 50, "y": 50}, {"x": 60, "y": 60}], "keys": ["ALT"]}),
    );
    assert_eq!(
        held_during(&mut window, ALT),
        [
            "key+ 0xffe9",
            "press 1 @50,50 state=0x8",
            "release 1 @60,60 state=0x108",
            "key- 0xffe9"
        ]
    );
    daemon.act(
        "mods",
        json!({"type": "double_click", "x": 5, "y": 6, "keys": ["META"]}),
    );
    assert_eq!(
        held_during(&mut window, SUPER),
        [
            "key+ 0xffeb",
            "press 1 @5,6 state=0x40",
            "release 1 @5,6 state=0x140",
            "press 1 @5,6 state=0x40",
            "release 1 @5,6 state=0x140",
            "key- 0xffeb"
        ]
    );
    daemon.act(
        "mods",
        json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4], "text": "shift"}),
    );
    assert_eq!(
        held_during(&mut window, SHIFT),
        [
            "key+ 0xffe1",
            "press 1 @1,2 state=0x1",
            "release 1 @3,4 state=0x101",
            "key- 0xffe1"
        ]
    );
    // OpenAI move: the modifier is down while the pointer moves.
    daemon.act(
        "mods",
        json!({"type": "move", "x": 70, "y": 80, "keys": ["SHIFT"]}),
    );
    let moved = window.until(LONG, |i| matches!(i, Input::Key { press: false, .. }));
    assert!(
        moved
            .iter()
            .any(|i| matches!(i, Input::Motion { x: 70, y: 80, state } if state & SHIFT_MASK != 0)),
        "{moved:?}"
    );
    // Nothing stays down: a plain click comes with no modifier.
    daemon.act("mods", json!({"type": "click", "x": 9, "y": 9}));
    assert_eq!(button_presses(&mut window, 1), ["press 1 @9,9 state=0x0"]);
}

/// Anthropic's `key` with `repeat` presses the combination that many times, in every form.
#[test]
fn a_key_with_repeat_is_pressed_that_many_times() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "rep", &["--size", "320x240"]);
    let mut window = Recorder::open(&display, &xauthority);
    let briefs = |inputs: &[Input]| inputs.iter().map(Input::brief).collect::<Vec<_>>();
    daemon.act("rep", json!({"action": "key", "text": "a", "repeat": 3}));
    assert_eq!(
        briefs(&window.take(6, LONG)),
        [
            "key+ 0x61",
            "key- 0x61",
            "key+ 0x61",
            "key- 0x61",
            "key+ 0x61",
            "key- 0x61"
        ]
    );
    let (status, answer) = daemon.computer(json!({"sid": "rep", "actions": [
        {"type": "tool_use", "id": "toolu_a", "name": "key", "toolset_name": "computer",
         "input": {"text": "ctrl+BackSpace", "repeat": 2}},
        {"type": "tool_use", "id": "toolu_b", "name": "screenshot", "toolset_name": "computer", "input": {}},
    ]}));
    assert_eq!(status, 0, "{}", brief(&answer));
    assert_eq!(answer["results"][0]["id"], "toolu_a");
    assert_eq!(answer["results"][1]["id"], "toolu_b");
    assert_eq!(
        briefs(&window.take(8, LONG)),
        [
            "key+ 0xffe3",
            "key+ 0xff08",
            "key- 0xff08",
            "key- 0xffe3",
            "key+ 0xffe3",
            "key+ 0xff08",
            "key- 0xff08",
            "key- 0xffe3"
        ]
    );
}

/// `fit` sizes the screenshot by a vendor's preset, and coordinates in it map back exactly.
#[test]
fn a_fit_preset_sizes_the_screenshot_and_clicks_map_back_through_it() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "fit", &["--size", "2560x1600"]);
    let mut window = Recorder::open(&display, &xauthority);
    for (name, expected) in [
        ("xga", (1024, 640)),
        ("wxga", (1280, 800)),
        ("anthropic", (1356, 848)),
        ("openai", (1517, 948)),
        ("anthropic-hires", (2400, 1500)),
        ("openai-original", (2560, 1600)),
    ] {
        let preset = screenpilot_desktop::scale::preset(name).expect(name);
        let scale = screenpilot_desktop::scale::Scale::fit(
            (2560, 1600),
            preset.max_long_edge,
            preset.max_pixels,
        );
        assert_eq!(scale.image, expected, "{name}");
        let (x, y) = (expected.0 / 3, expected.1 / 5);
        let (status, clicked) = daemon.computer(
            json!({"sid": "fit", "fit": name, "action": {"type": "click", "x": x, "y": y}}),
        );
        assert_eq!(status, 0, "{name}: {}", brief(&clicked));
        let (width, height) = (clicked["width"].clone(), clicked["height"].clone());
        assert_eq!(
            (width, height),
            (json!(expected.0), json!(expected.1)),
            "{name}"
        );
        assert_eq!(clicked["pointer"], json!({"x": x, "y": y}), "{name}");
        let (sx, sy) = scale.to_screen(x, y);
        assert_eq!(
            button_presses(&mut window, 1),
            [format!("press 1 @{sx},{sy} state=0x0")],
            "{name}"
        );
    }
    let (_, unknown) =
        daemon.computer(json!({"sid": "fit", "fit": "gpt", "action": {"type": "screenshot"}}));
    assert_eq!(unknown["error"]["field"], "fit", "{}", brief(&unknown));
}

#[test]
fn desktops_share_sids_and_the_session_limit_with_terminals_and_attach_never_kills() {
    let daemon = Daemon::with_env(&[("SCREENPILOT_MAX_SESSIONS", "2")]);
    daemon.sp_json(&["spawn", "--sid", "t1", "--", "sleep", "600"]);
    start_desktop(&daemon, "d1", &["--size", "320x240"]);
    let limit = daemon.sp_error(&["desktop", "start", "--sid", "d2"]);
    assert_eq!(limit["code"], "limit_exceeded");
    let limit = daemon.sp_error(&["spawn", "--sid", "t2", "--", "sleep", "600"]);
    assert_eq!(limit["code"], "limit_exceeded");
    daemon.sp_json(&["close", "t1"]);
    let taken = daemon.sp_error(&["spawn", "--sid", "d1", "--", "sleep", "600"]);
    assert_eq!(taken["code"], "duplicate_session");
    daemon.sp_json(&["spawn", "--sid", "t3", "--", "sleep", "600"]);
    let taken = daemon.sp_error(&["desktop", "start", "--sid", "t3"]);
    assert_eq!(taken["code"], "duplicate_session");
    daemon.sp_json(&["close", "t3"]);
    daemon.sp_json(&["close", "d1"]);

    // An X server we did not start: attach, act, close; it must still be running afterwards.
    let mut xvfb = KillOnDrop(
        Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "300x200x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb"),
    );
    let mut number = String::new();
    {
        use std::io::BufRead;
        let stdout = xvfb.0.stdout.take().expect("stdout");
        std::io::BufReader::new(stdout)
            .read_line(&mut number)
            .expect("display number");
    }
    let display = format!(":{}", number.trim());
    let attached = daemon.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "outside",
        "--display",
        &display,
    ]);
    assert_eq!(attached["attached"], true);
    assert_eq!(attached["width"], 300);
    let shot = daemon.act("outside", json!({"type": "click", "x": 299, "y": 199}));
    assert_eq!(shot["pointer"], json!({"x": 299, "y": 199}));
    // Leave a button down and a borrowed keycode behind: close must undo both.
    daemon.act("outside", json!({"type": "type", "text": "✓"}));
    daemon.act(
        "outside",
        json!({"action": "left_mouse_down", "coordinate": [10, 10]}),
    );
    use screenpilot_desktop::x11rb::connection::Connection as _;
    use screenpilot_desktop::x11rb::protocol::xproto::ConnectionExt as _;
    let (conn, screen) =
        screenpilot_desktop::x11rb::rust_connection::RustConnection::connect(Some(&display))
            .expect("connect to the attached display");
    let root = conn.setup().roots[screen].root;
    let left_button_down = || {
        let pointer = conn
            .query_pointer(root)
            .expect("query")
            .reply()
            .expect("pointer");
        u16::from(pointer.mask) & BUTTON1_MASK != 0
    };
    assert!(left_button_down(), "left_mouse_down left no button down");
    daemon.sp_json(&["close", "outside"]);
    assert!(
        xvfb.0.try_wait().expect("status").is_none(),
        "closing an attached desktop stopped its X server"
    );
    assert!(
        !left_button_down(),
        "close left the left button down on a display we attached to"
    );
    let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .expect("keymap")
        .reply()
        .expect("keymap");
    let check_mark = screenpilot_desktop::keysym::for_char('✓').expect("a keysym");
    assert!(
        !map.keysyms.contains(&check_mark),
        "close left a borrowed keycode mapped"
    );
}

/// A child process killed and reaped when the test ends, even on a panic.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_same_actions_drive_a_terminal_app_through_its_rendered_screen() {
    let daemon = Daemon::new();
    let python = std::env::var("SCREENPILOT_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let fixture = format!(
        "{}/tests/fixtures/x11/mouse_menu.py",
        env!("CARGO_MANIFEST_DIR")
    );
    daemon.sp_json(&[
        "spawn", "--sid", "menu", "--size", "60x20", "--", &python, &fixture,
    ]);
    let ready = daemon.wait_regex("menu", "^READY mouse menu$");

    let shot = daemon.act("menu", json!({"type": "screenshot"}));
    assert_eq!(shot["kind"], "terminal");
    let (width, height) = (
        shot["width"].as_u64().expect("width"),
        shot["height"].as_u64().expect("height"),
    );
    let frame = screenpilot_desktop::decode_png(&png_of(&shot)).expect("a PNG");
    assert_eq!(
        (u64::from(frame.width), u64::from(frame.height)),
        (width, height)
    );
    let (cell_w, cell_h) = (width / 60, height / 20);

    // Click the middle of "Pears", found in the screen text, in pixels of the screenshot.
    let text = ready["text"].as_str().expect("text");
    let (row, line) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains("Pears"))
        .expect("Pears is on screen");
    let col = line.find("Pears").expect("column") as u64;
    let (x, y) = (
        col * cell_w + cell_w * 5 / 2,
        row as u64 * cell_h + cell_h / 2,
    );
    let clicked = daemon.act("menu", json!({"type": "click", "x": x, "y": y}));
    assert_eq!(clicked["results"][0]["row"], row);
    daemon.wait_regex("menu", "^CLICKED Pears$");
    assert_ne!(
        png_of(&clicked),
        png_of(&shot),
        "the screenshot is taken after the app redrew"
    );

    daemon.act("menu", json!({"type": "type", "text": "hi"}));
    daemon.wait_regex("menu", r"^KEY 'hi'$");
    // A line break is the Enter key, as on a desktop, even though the app asked for bracketed paste
    // (a shell would otherwise hold the pasted line instead of running it).
    daemon.act("menu", json!({"type": "type", "text": "ls\n"}));
    daemon.wait_regex("menu", r"^KEY 'ls\\r'$");
    daemon.act("menu", json!({"type": "keypress", "keys": ["CTRL", "C"]}));
    daemon.wait_regex("menu", r"^KEY '\\x03'$");
    daemon.act("menu", json!({"type": "keypress", "keys": ["ALT", "x"]}));
    daemon.wait_regex("menu", r"^KEY '\\x1bx'$");
    daemon.act(
        "menu",
        json!({"type": "keypress", "keys": ["SHIFT", "TAB"]}),
    );
    daemon.wait_regex("menu", r"^KEY '\\x1b\[Z'$");
    daemon.act("menu", json!({"action": "key", "text": "ctrl+Left"}));
    daemon.wait_regex("menu", r"^KEY '\\x1b\[1;5D'$");

    // Scroll down 240 = 2 wheel steps; right click; drag from one cell to another.
    daemon.act(
        "menu",
        json!({"type": "scroll", "x": 25, "y": 25, "scroll_x": 0, "scroll_y": 240}),
    );
    daemon.wait_regex("menu", r"(?s)WHEEL b=65 x=3 y=2\nWHEEL b=65 x=3 y=2");
    daemon.act(
        "menu",
        json!({"type": "click", "x": 405, "y": 185, "button": "right"}),
    );
    daemon.wait_regex("menu", "^PRESS b=2 x=41 y=10$");
    daemon.act(
        "menu",
        json!({"type": "drag", "path": [{"x": 405, "y": 305}, {"x": 455, "y": 305}]}),
    );
    daemon.wait_regex(
        "menu",
        r"(?s)PRESS b=0 x=41 y=16\nDRAG b=32 x=46 y=16\nRELEASE x=46 y=16",
    );

    // Off the rendered screen is refused, nothing sent.
    let refused =
        daemon.computer(json!({"sid": "menu", "action": {"type": "click", "x": width, "y": 0}}));
    assert_eq!(refused.0, 2);
    assert_eq!(refused.1["error"]["field"], "action.x");
    // A modifier alone has no terminal encoding.
    let alone =
        daemon.computer(json!({"sid": "menu", "action": {"type": "keypress", "keys": ["CTRL"]}}));
    assert_eq!(alone.0, 2);
    assert_eq!(alone.1["error"]["field"], "action.keys");
    daemon.sp_json(&["close", "menu"]);
}

#[test]
fn an_idle_desktop_is_closed_with_everything_it_started() {
    let daemon = Daemon::with_env(&[("SCREENPILOT_IDLE_TIMEOUT_SECS", "1")]);
    let started = daemon.sp_json(&[
        "desktop", "start", "--sid", "idle", "--wm", "none", "--size", "320x240", "--", "xterm",
    ]);
    for pid in [&started["pid"], &started["program_pid"]] {
        let pid = pid.as_i64().expect("a pid");
        assert!(
            wait_for_process_exit(pid as i32, LONG),
            "process {pid} outlived the idle limit"
        );
    }
    let listed = daemon.sp_json(&["list"]);
    assert_eq!(listed["sessions"], json!([]), "{listed}");
}

#[test]
fn a_killed_daemon_leaves_no_x_server_and_its_directory_goes_at_the_next_start() {
    let daemon = Daemon::new();
    let (_, xauthority) = start_desktop(&daemon, "doomed", &["--size", "320x240"]);
    let private_dir = xauthority.parent().expect("a directory").to_path_buf();
    let xvfb = daemon.sp_json(&["list"])["sessions"][0]["pid"]
        .as_i64()
        .expect("the Xvfb pid");
    // Without its guard, which would remove the directory at once (orphans_e2e tests that).
    let guard = daemon.sp_json(&["daemon", "status"])["guard_pid"]
        .as_i64()
        .expect("a guard") as i32;
    // SAFETY: a signal to the guard of the daemon this test started.
    unsafe {
        libc::kill(guard, libc::SIGKILL);
    }
    assert!(
        wait_for_process_exit(guard, LONG),
        "the guard survived SIGKILL"
    );
    let daemon_pid = daemon.daemon_pid();

    // SAFETY: a signal to the daemon this test started.
    unsafe {
        libc::kill(daemon_pid, libc::SIGKILL);
    }
    assert!(
        wait_for_process_exit(daemon_pid, LONG),
        "the daemon survived SIGKILL"
    );
    assert!(
        wait_for_process_exit(xvfb as i32, LONG),
        "Xvfb outlived its daemon"
    );
    assert!(private_dir.exists(), "nobody was left to remove it yet");

    // The next desktop (on a fresh daemon) removes what the dead one left.
    start_desktop(&daemon, "next", &["--size", "320x240"]);
    assert!(
        !private_dir.exists(),
        "{} outlived its daemon",
        private_dir.display()
    );
}

#[test]
fn input_to_a_session_that_cannot_take_it_is_refused_as_not_sent() {
    let daemon = Daemon::new();
    // A terminal whose program has ended.
    daemon.sp_json(&["spawn", "--sid", "ended", "--", "true"]);
    daemon.sp_json(&["wait", "ended", "--exit", "--timeout-ms", "20000"]);
    let (_, typed) =
        daemon.computer(json!({"sid": "ended", "action": {"type": "type", "text": "hi"}}));
    assert_eq!(typed["ok"], false, "{}", brief(&typed));
    assert_eq!(typed["outcome"], "not_sent", "{}", brief(&typed));
    assert!(
        !typed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown")),
        "{}",
        brief(&typed)
    );

    // A desktop whose X server is gone.
    start_desktop(&daemon, "dead", &["--size", "320x240"]);
    let xvfb = daemon.sp_json(&["list"])["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["sid"] == "dead"))
        .and_then(|s| s["pid"].as_i64())
        .expect("the Xvfb pid");
    // SAFETY: a signal to the Xvfb of this test's desktop.
    unsafe {
        libc::kill(xvfb as i32, libc::SIGTERM);
    }
    assert!(
        wait_for_process_exit(xvfb as i32, LONG),
        "Xvfb ignored SIGTERM"
    );
    let (status, clicked) =
        daemon.computer(json!({"sid": "dead", "action": {"type": "click", "x": 5, "y": 5}}));
    assert_ne!(status, 0, "{}", brief(&clicked));
    assert_eq!(clicked["error"]["code"], "display_unavailable");
    assert!(
        clicked["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nothing was sent")),
        "{}",
        brief(&clicked)
    );
    daemon.sp_json(&["close", "dead"]);
}

#[test]
fn a_call_that_finds_the_display_busy_sends_nothing() {
    let daemon = Daemon::new();
    let (display, xauthority) = start_desktop(&daemon, "busy", &["--size", "320x240"]);
    let mut window = Recorder::open(&display, &xauthority);
    std::thread::scope(|scope| {
        // This call holds the display for 3 s...
        let holder = scope.spawn(|| {
            daemon.computer(json!({"sid": "busy", "action":
                {"type": "keypress", "keys": ["SHIFT"], "ms": 3000}}))
        });
        assert_eq!(
            window.next(LONG).map(|i| i.brief()).as_deref(),
            Some("key+ 0xffe1")
        );
        // ...so this one, allowed 300 ms, gets no turn: it must say nothing went out.
        let (_, refused) = daemon.computer(json!({"sid": "busy", "step_timeout_ms": 300,
            "action": {"type": "click", "x": 5, "y": 5}}));
        assert_eq!(refused["ok"], false, "{}", brief(&refused));
        assert_eq!(refused["error"]["code"], "display_busy");
        assert_eq!(refused["outcome"], "not_sent", "{}", brief(&refused));
        let (status, held) = holder.join().expect("the holding call");
        assert_eq!(status, 0, "{}", brief(&held));
    });
    // Indeed nothing arrived: after the Shift release comes this sentinel click.
    daemon.act("busy", json!({"type": "click", "x": 7, "y": 9}));
    assert_eq!(
        window
            .take(2, LONG)
            .iter()
            .map(Input::brief)
            .collect::<Vec<_>>(),
        ["key- 0xffe1", "motion 7,9"]
    );
}
