//! `computer` on desktops as a model uses it, through the real binary on a real Xvfb with openbox,
//! xterm and an X client that records what it receives: screenshots sized for models with clicks
//! given in their pixels landing on the screen pixel under them, screenshots that already show what
//! the input did, Anthropic's action shapes, chords written as one string, keypad keys, and the
//! published schema checked by a JSON Schema validator. Synchronisation is by events only: files
//! written (inotify), process exits (pidfd), window titles (the product's wait), X events.

use crate::common;
use crate::recorder;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

use common::{brief, png_of, wait_for_file, wait_for_process_exit, Daemon, LONG_MS};
use recorder::{Input, Recorder};
use screenpilot_desktop::scale::{Scale, DEFAULT_MAX_LONG_EDGE, DEFAULT_MAX_PIXELS};

/// Generous: CI is a loaded two-core machine, and every wait returns as soon as its event comes.
const LONG: Duration = Duration::from_millis(LONG_MS);

/// How the product scales a screen of this size by default.
fn default_scale(screen: (u32, u32)) -> Scale {
    Scale::fit(screen, DEFAULT_MAX_LONG_EDGE, DEFAULT_MAX_PIXELS)
}

/// A `computer` call that must succeed; its answer.
fn call_ok(daemon: &Daemon, params: Value) -> Value {
    let (status, answer) = daemon.computer(params.clone());
    assert!(
        status == 0 && answer["ok"] == true,
        "{params}: {}",
        brief(&answer)
    );
    answer
}

/// The image pixel at the centre of a window of the `snapshot` window list, found by title.
fn centre_of(daemon: &Daemon, sid: &str, title: &str, scale: Scale) -> (u32, u32) {
    let snapshot = daemon.snapshot(sid);
    let window = snapshot["windows"]
        .as_array()
        .and_then(|all| all.iter().find(|w| w["title"] == title))
        .unwrap_or_else(|| panic!("no window {title:?} in {snapshot}"));
    let at = |key: &str| window[key].as_i64().expect("a number");
    let (x, y) = (at("x") + at("width") / 2, at("y") + at("height") / 2);
    scale.to_image(x as u32, y as u32)
}

/// Start a desktop running bash in an xterm titled `title` at the top left, with `WHO=title` and
/// a `$ ` prompt; returns the scratch directory commands may write into.
fn start_xterm(daemon: &Daemon, sid: &str, size: &str, title: &str) -> PathBuf {
    let who = format!("WHO={title}");
    let started = daemon.sp_json(&[
        "desktop",
        "start",
        "--sid",
        sid,
        "--size",
        size,
        "--",
        "env",
        "PS1=$ ",
        &who,
        "xterm",
        "-T",
        title,
        "-geometry",
        "80x24+0+0",
        "-e",
        "bash",
        "--norc",
        "--noprofile",
    ]);
    assert_eq!(started["window"]["focused"], true, "{started}");
    daemon.path().to_path_buf()
}

#[test]
fn a_2560x1600_desktop_is_clicked_through_its_scaled_screenshot() {
    let daemon = Daemon::new();
    let dir = start_xterm(&daemon, "big", "2560x1600", "first");
    let scale = default_scale((2560, 1600));
    assert_eq!(scale.image, (1356, 848));

    let shot = daemon.act("big", json!({"type": "screenshot"}));
    assert_eq!(
        (shot["width"].clone(), shot["height"].clone()),
        (json!(1356), json!(848))
    );
    assert_eq!(
        (shot["screen_width"].clone(), shot["screen_height"].clone()),
        (json!(2560), json!(1600))
    );
    let factor = shot["scale"].as_f64().expect("scale");
    assert!((factor - 2560.0 / 1356.0).abs() < 1e-3, "{}", brief(&shot));
    let frame = screenpilot_desktop::decode_png(&png_of(&shot)).expect("a PNG");
    assert_eq!((frame.width, frame.height), (1356, 848));

    // A second xterm, far from the first: on the screen at (1400, 900), in the screenshot near
    // (741, 477). A click taken as screen pixels would land on the empty desktop instead.
    daemon.act(
        "big",
        json!({"type": "type", "text": "env WHO=second xterm -T second -geometry 80x24+1400+900 -e bash --norc --noprofile &\n"}),
    );
    daemon.wait_regex("big", "^second$");
    for (title, file) in [("second", "a.txt"), ("first", "b.txt"), ("second", "c.txt")] {
        let (x, y) = centre_of(&daemon, "big", title, scale);
        let clicked = daemon.act("big", json!({"type": "click", "x": x, "y": y}));
        assert_eq!(
            clicked["pointer"],
            json!({"x": x, "y": y}),
            "{}",
            brief(&clicked)
        );
        let path = dir.join(file);
        daemon.act(
            "big",
            json!({"type": "type", "text": format!("echo $WHO > {}\n", path.display())}),
        );
        assert_eq!(
            wait_for_file(&path, LONG),
            format!("{title}\n"),
            "clicked {title}"
        );
    }

    // Off the screenshot is refused by name, though it is on the screen.
    let refused = daemon.sp_error(&[
        "call",
        "computer",
        &json!({"sid": "big", "action": {"type": "click", "x": 1356, "y": 10}}).to_string(),
    ]);
    assert_eq!(refused["field"], "action.x");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("action.x: 1356 is outside the 1356x848 screenshot")),
        "{refused}"
    );
    let (_, refused) = daemon.computer(json!({"sid": "big", "actions": [
        {"type": "move", "x": 5, "y": 5},
        {"type": "move", "x": 5, "y": 848},
    ]}));
    assert_eq!(
        refused["error"]["field"],
        "actions[1].y",
        "{}",
        brief(&refused)
    );
    let (_, refused) = daemon.computer(
        json!({"sid": "big", "action": {"action": "left_click", "coordinate": [2000, 10]}}),
    );
    assert_eq!(refused["error"]["field"], "action.coordinate");

    // Full size: coordinates are screen pixels; a smaller size on request.
    let full = call_ok(
        &daemon,
        json!({"sid": "big", "full_size": true, "action": {"type": "move", "x": 2000, "y": 1200}}),
    );
    assert_eq!(
        (full["width"].clone(), full["scale"].clone()),
        (json!(2560), json!(1.0))
    );
    assert_eq!(full["pointer"], json!({"x": 2000, "y": 1200}));
    let small = call_ok(
        &daemon,
        json!({"sid": "big", "max_long_edge": 1000, "action": {"type": "cursor_position"}}),
    );
    assert_eq!(
        (small["width"].clone(), small["height"].clone()),
        (json!(1000), json!(625))
    );
    let (px, py) = Scale::fit((2560, 1600), 1000, DEFAULT_MAX_PIXELS).to_image(2000, 1200);
    assert_eq!(
        small["results"][0],
        json!({"type": "cursor_position", "x": px, "y": py})
    );
    let (_, both) = daemon.computer(
        json!({"sid": "big", "full_size": true, "max_pixels": 10000, "action": {"type": "screenshot"}}),
    );
    assert_eq!(both["error"]["field"], "full_size", "{}", brief(&both));
}

#[test]
fn clicks_land_on_the_screen_pixel_under_the_screenshot_pixel() {
    let daemon = Daemon::new();
    let started = daemon.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "rec",
        "--wm",
        "none",
        "--size",
        "2560x1600",
    ]);
    let display = started["display"].as_str().expect("display");
    let xauthority = PathBuf::from(started["xauthority"].as_str().expect("xauthority"));
    let mut window = Recorder::open(display, &xauthority);
    let scale = default_scale((2560, 1600));
    let press_at = |window: &mut Recorder| -> String {
        window
            .until(LONG, |i| matches!(i, Input::Button { press: true, .. }))
            .last()
            .map(Input::brief)
            .unwrap_or_default()
    };

    for (x, y) in [(0, 0), (1355, 847), (678, 424), (101, 37)] {
        let clicked = daemon.act("rec", json!({"type": "click", "x": x, "y": y}));
        assert_eq!(clicked["pointer"], json!({"x": x, "y": y}));
        let (sx, sy) = scale.to_screen(x, y);
        assert_eq!(
            press_at(&mut window),
            format!("press 1 @{sx},{sy} state=0x0")
        );
    }

    // Anthropic's click and scroll without a coordinate act where the pointer is.
    daemon.act(
        "rec",
        json!({"action": "mouse_move", "coordinate": [300, 200]}),
    );
    let (sx, sy) = scale.to_screen(300, 200);
    let clicked = daemon.act("rec", json!({"action": "left_click"}));
    assert_eq!(
        (
            clicked["results"][0]["x"].clone(),
            clicked["results"][0]["y"].clone()
        ),
        (json!(300), json!(200))
    );
    assert_eq!(
        press_at(&mut window),
        format!("press 1 @{sx},{sy} state=0x0")
    );
    let scrolled = daemon.act(
        "rec",
        json!({"action": "scroll", "scroll_direction": "down", "scroll_amount": 2}),
    );
    assert_eq!(scrolled["results"][0]["steps_y"], 2);
    assert_eq!(
        press_at(&mut window),
        format!("press 5 @{sx},{sy} state=0x0")
    );
    assert_eq!(
        press_at(&mut window),
        format!("press 5 @{sx},{sy} state=0x0")
    );
    let position = daemon.act("rec", json!({"action": "cursor_position"}));
    assert_eq!(
        position["results"][0],
        json!({"type": "cursor_position", "x": 300, "y": 200})
    );

    // Past the most notches is refused, not cut down.
    let (_, refused) = daemon.computer(json!({"sid": "rec", "action":
        {"action": "scroll", "scroll_direction": "down", "scroll_amount": 100}}));
    assert_eq!(
        refused["error"]["field"],
        "action.scroll_amount",
        "{}",
        brief(&refused)
    );

    // A zoom region is given in screenshot pixels and shown at the screen's own resolution.
    let zoom = daemon.act(
        "rec",
        json!({"action": "zoom", "region": [100, 50, 200, 100]}),
    );
    assert_eq!(zoom["region"], json!([100, 50, 200, 100]));
    let (width, height) = (
        zoom["width"].as_f64().unwrap(),
        zoom["height"].as_f64().unwrap(),
    );
    let factor = 2560.0 / 1356.0;
    assert!((width - 100.0 * factor).abs() <= 1.0, "{}", brief(&zoom));
    assert!((height - 50.0 * factor).abs() <= 1.0, "{}", brief(&zoom));
    assert_eq!(zoom["scale"], 1.0);
    assert_eq!(
        zoom["pointer"],
        json!({"x": 300, "y": 200}),
        "the pointer stays in screenshot pixels"
    );
}

#[test]
fn the_screenshot_after_typing_already_shows_the_text() {
    let daemon = Daemon::new();
    start_xterm(&daemon, "type", "1280x800", "typing");
    let mut before = png_of(&daemon.act("type", json!({"type": "screenshot"})));
    for word in ["alpha", "bravo", "charlie", "delta", "echo"] {
        let typed = daemon.act("type", json!({"type": "type", "text": format!("{word} ")}));
        assert_eq!(
            typed["results"][0],
            json!({"type": "type", "reacted": true, "settled": true})
        );
        assert_eq!(typed["settled"], true);
        let shown = png_of(&typed);
        assert_ne!(shown, before, "{word}: the screenshot predates the typing");
        // Nothing is still to come: a screenshot taken after it shows the same screen.
        let after = png_of(&daemon.act("type", json!({"type": "screenshot"})));
        assert_eq!(shown, after, "{word}: the screen changed after the answer");
        before = shown;
    }
    // A wait without a duration ends once the screen is still, and says so.
    let waited = daemon.act("type", json!({"type": "wait"}));
    assert_eq!(
        waited["results"][0],
        json!({"type": "wait", "settled": true})
    );
}

#[test]
fn a_chord_written_as_one_string_interrupts_the_program_in_xterm() {
    let daemon = Daemon::new();
    let dir = start_xterm(&daemon, "chord", "1280x800", "chords");
    let pid_file = dir.join("pid.txt");
    daemon.act(
        "chord",
        json!({"type": "type", "text": format!("sh -c 'echo $$ > {}; exec sleep 100'\n", pid_file.display())}),
    );
    let pid: i32 = wait_for_file(&pid_file, LONG)
        .trim()
        .parse()
        .expect("a pid");
    // OpenAI models write the chord as one key name.
    daemon.act("chord", json!({"type": "keypress", "keys": ["ctrl+c"]}));
    assert!(
        wait_for_process_exit(pid, LONG),
        "ctrl+c did not end sleep (pid {pid})"
    );
    // The shell takes commands again.
    let after = dir.join("after.txt");
    daemon.act(
        "chord",
        json!({"type": "type", "text": format!("echo back > {}\n", after.display())}),
    );
    assert_eq!(wait_for_file(&after, LONG), "back\n");
}

#[test]
fn keypad_keys_type_digits_and_enter_into_xterm() {
    let daemon = Daemon::new();
    let dir = start_xterm(&daemon, "pad", "1280x800", "keypad");
    let out = dir.join("sum.txt");
    let key = |name: &str| json!({"type": "keypress", "keys": [name]});
    let (status, typed) = daemon.computer(json!({"sid": "pad", "actions": [
        {"type": "type", "text": "echo $(("},
        key("KP_4"), key("KP_0"), key("KP_Add"), key("KP_2"),
        {"type": "type", "text": format!(")) > {}", out.display())},
        key("KP_Enter"),
    ]}));
    assert_eq!(status, 0, "{}", brief(&typed));
    assert_eq!(wait_for_file(&out, LONG), "42\n");
}

/// The `computer` tool's input schema as an MCP client lists it (`screenpilot mcp` over stdio).
fn published_computer_schema(daemon: &Daemon) -> Value {
    let mut server = daemon
        .command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start screenpilot mcp");
    let mut input = server.stdin.take().expect("stdin");
    for message in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "desktop-computer-e2e", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    ] {
        writeln!(input, "{message}").expect("write to the server");
    }
    let stdout = server.stdout.take().expect("stdout");
    let mut listed = None;
    for line in BufReader::new(stdout).lines() {
        let reply: Value = serde_json::from_str(&line.expect("a line")).expect("JSON-RPC");
        if reply["id"] == 2 {
            listed = Some(reply);
            break;
        }
    }
    drop(input);
    let _ = server.kill();
    let _ = server.wait();
    let listed = listed.expect("an answer to tools/list");
    listed["result"]["tools"]
        .as_array()
        .and_then(|tools| tools.iter().find(|t| t["name"] == "computer"))
        .map(|tool| tool["inputSchema"].clone())
        .expect("the computer tool is listed")
}

/// The venv's Python with `jsonschema` (scripts/test.sh makes it; SCREENPILOT_TEST_PYTHON overrides).

#[test]
fn the_published_schema_accepts_every_action_shape_the_server_takes() {
    let daemon = Daemon::new();
    let schema = published_computer_schema(&daemon);
    assert!(
        !schema.to_string().contains(":true"),
        "a boolean subschema in {schema}"
    );
    // Each call the server takes (checked below against a terminal session, where they parse the
    // same way), as OpenAI's and Anthropic's models write them.
    let calls = json!([
        {"sid": "t", "action": {"type": "click", "x": 10, "y": 20, "button": "right"}},
        {"sid": "t", "action": {"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": 240}},
        {"sid": "t", "action": {"type": "keypress", "keys": ["ctrl+c"]}},
        {"sid": "t", "action": {"type": "keypress", "keys": ["CTRL", "SHIFT", "t"], "ms": 50}},
        {"sid": "t", "action": {"type": "drag", "path": [{"x": 1, "y": 2}, [3, 4]]}},
        {"sid": "t", "action": {"type": "type", "text": "hi\n"}},
        {"sid": "t", "action": {"type": "wait"}},
        {"sid": "t", "action": {"action": "left_click", "coordinate": [10, 20], "text": "shift"}},
        {"sid": "t", "action": {"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}},
        {"sid": "t", "action": {"action": "scroll", "coordinate": [5, 5], "scroll_direction": "up", "scroll_amount": 2}},
        {"sid": "t", "action": {"action": "key", "text": "ctrl+s"}},
        {"sid": "d", "action": {"action": "hold_key", "text": "shift", "duration": 0.1}},
        {"sid": "t", "action": {"action": "wait", "duration": 0.1}},
        {"sid": "t", "action": {"action": "zoom", "region": [0, 0, 10, 10]}},
        {"sid": "t", "actions": [{"action": "mouse_move", "coordinate": [1, 1]}, {"type": "screenshot"}]},
        {"sid": "d", "action": {"action": "left_click"}, "max_long_edge": 1024, "max_pixels": 800000},
        {"sid": "d", "action": {"type": "screenshot"}, "full_size": true, "step_timeout_ms": 5000},
        {"sid": "d", "action": {"type": "screenshot"}, "fit": "anthropic-hires"},
        {"sid": "t", "action": {"action": "key", "text": "a", "repeat": 3}},
        {"sid": "t", "action": {"action": "left_click", "coordinate": [10, 20], "key": "shift"}},
        {"sid": "t", "action": {"type": "click", "x": 1, "y": 2, "button": "left", "keys": null}},
        {"sid": "t", "actions": [
            {"type": "tool_use", "id": "toolu_1", "name": "key", "toolset_name": "computer", "input": {"text": "b"}},
            {"type": "tool_use", "id": "toolu_2", "name": "screenshot", "toolset_name": "computer", "input": {}, "caller": {"type": "direct"}},
        ]},
        {"sid": "d", "action": {"name": "cursor_position", "input": {}}},
    ]);
    let schema_file = daemon.path().join("computer.schema.json");
    std::fs::write(&schema_file, schema.to_string()).expect("write the schema");
    let calls_file = daemon.path().join("calls.json");
    std::fs::write(&calls_file, calls.to_string()).expect("write the calls");
    let check = r#"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for call in json.load(open(sys.argv[2])):
    for error in validator.iter_errors(call):
        print(json.dumps(call), "->", error.message)
"#;
    let out = Command::new(common::venv_python())
        .args(["-c", check])
        .arg(&schema_file)
        .arg(&calls_file)
        .output()
        .expect("run python with jsonschema (scripts/test.sh makes .venv)");
    assert!(
        out.status.success(),
        "python failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let refused = String::from_utf8_lossy(&out.stdout);
    assert!(
        refused.is_empty(),
        "the schema refuses calls the server takes:\n{refused}"
    );

    // And the server does take them (parsing is the same on every session kind; the pointer-less
    // and desktop-only shapes are parsed on a desktop).
    daemon.sp_json(&["spawn", "--sid", "t", "--size", "40x10", "--", "cat"]);
    daemon.sp_json(&[
        "desktop", "start", "--sid", "d", "--wm", "none", "--size", "320x200",
    ]);
    for call in calls.as_array().expect("a list") {
        let (status, answer) = daemon.computer(call.clone());
        let mouse_refused = answer["error"]["code"] == "mouse_unavailable";
        assert!(status == 0 || mouse_refused, "{call}: {}", brief(&answer));
    }
}
