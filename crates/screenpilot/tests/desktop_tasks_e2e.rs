//! Desktop tasks as a new user tries them, through the real CLI on a real Xvfb with openbox and real
//! programs, and the same tasks on a private headless sway (Wayland; the terminal there is foot): an editor (mousepad) that takes Unicode and saves it through its own Save As dialog, a
//! drag in xterm that selects text a middle click then pastes, and a zenity dialog that takes CJK text
//! typed right after it opened. Each task is checked by what it leaves behind (a file's bytes, a program's output), and
//! every wait is on an event: a window title (the product's wait), a file closed (inotify), a program's
//! exit.

use crate::common;

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};

use common::{brief, png_of, wait_for_file, Daemon, LONG_MS};

const LONG: Duration = Duration::from_millis(LONG_MS);

/// Wait until a window title matches `pattern`; returns the answer.
fn wait_title(daemon: &Daemon, sid: &str, pattern: &str) -> Value {
    let ms = LONG_MS.to_string();
    let (status, answer) =
        daemon.json_status(&["wait", sid, "--regex", pattern, "--timeout-ms", &ms]);
    assert_eq!(
        status,
        0,
        "no window title matched {pattern:?}: {}",
        brief(&answer)
    );
    answer
}

/// Save the editor's buffer as `path` through its Save As dialog, as a person would.
fn save_as(daemon: &Daemon, sid: &str, path: &Path) -> String {
    daemon.act(sid, json!({"type": "keypress", "keys": ["ctrl+s"]}));
    wait_title(daemon, sid, "^Save As$");
    daemon.act(
        sid,
        json!({"type": "type", "text": path.to_str().expect("utf-8 path")}),
    );
    daemon.act(sid, json!({"type": "keypress", "keys": ["ENTER"]}));
    wait_for_file(path, LONG)
}

/// `desktop start --sid SID [--wayland] -- PROGRAM...`'s answer.
fn start(daemon: &Daemon, sid: &str, wayland: bool, program: &[&str]) -> Value {
    let mut args = vec!["desktop", "start", "--sid", sid];
    if wayland {
        args.push("--wayland");
    }
    args.push("--");
    args.extend_from_slice(program);
    daemon.sp_json(&args)
}

fn start_mousepad(daemon: &Daemon, sid: &str, wayland: bool) -> Value {
    let started = start(daemon, sid, wayland, &["mousepad"]);
    assert_eq!(started["window"]["focused"], true, "{}", brief(&started));
    wait_title(daemon, sid, "Mousepad$");
    started
}

#[test]
fn an_editor_takes_unicode_and_saves_it_through_its_dialog() {
    editor_task(false);
}

#[test]
fn on_wayland_an_editor_takes_unicode_and_saves_it_through_its_dialog() {
    editor_task(true);
}

fn editor_task(wayland: bool) {
    let daemon = Daemon::new();
    start_mousepad(&daemon, "ed", wayland);
    let text = "héllo wörld ✓ 日本語 ∑";
    let typed = daemon.act("ed", json!({"type": "type", "text": text}));
    assert_eq!(typed["results"][0]["settled"], true, "{}", brief(&typed));
    let file = daemon.path().join("notes.txt");
    let saved = save_as(&daemon, "ed", &file);
    assert_eq!(saved.trim_end_matches('\n'), text);
    // The title names the file once saved.
    wait_title(&daemon, "ed", "notes\\.txt - Mousepad$");
}

#[test]
fn a_drag_selects_text_that_a_middle_click_pastes() {
    let daemon = Daemon::new();
    let started = daemon.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "sel",
        "--",
        "env",
        "PS1=$ ",
        "xterm",
        "-T",
        "sel",
        "-geometry",
        "80x24+0+0",
        "-e",
        "bash",
        "--norc",
        "--noprofile",
    ]);
    // xterm's cells: 80x24 inside a 2-pixel border.
    drag_and_paste(&daemon, &started["window"], 2);
}

#[test]
fn on_wayland_a_drag_selects_text_that_a_middle_click_pastes() {
    let daemon = Daemon::new();
    let shell = ["env", "PS1=$ ", "bash", "--norc", "--noprofile"];
    let mut foot = vec!["foot", "-W", "80x24", "-T", "sel"];
    foot.extend_from_slice(&shell);
    let started = start(&daemon, "sel", true, &foot);
    // foot's cells fill its window (no padding by default).
    drag_and_paste(&daemon, &started["window"], 0);
}

/// In the 80x24 terminal of `window` (cells inside a border of `border` pixels), select a line by a
/// drag and paste it with a middle click into a command that writes it to a file.
fn drag_and_paste(daemon: &Daemon, window: &Value, border: u32) {
    let number = |key: &str| window[key].as_u64().expect("a number") as u32;
    // The default 1280x800 desktop is not scaled, so screen pixels are screenshot pixels.
    let (cell_w, cell_h) = (
        (number("width") - 2 * border) / 80,
        (number("height") - 2 * border) / 24,
    );
    let centre = |col: u32, row: u32| {
        json!({
            "x": number("x") + border + col * cell_w + cell_w / 2,
            "y": number("y") + border + row * cell_h + cell_h / 2,
        })
    };
    daemon.act("sel", json!({"type": "type", "text": "echo hello world\n"}));
    // Row 1 shows "hello world": drag from its first cell past its last.
    daemon.act(
        "sel",
        json!({"type": "drag", "path": [centre(0, 1), centre(11, 1)]}),
    );
    let out = daemon.path().join("pasted.txt");
    daemon.act("sel", json!({"type": "type", "text": "echo "}));
    let middle = centre(40, 12);
    daemon.act(
        "sel",
        json!({"type": "click", "x": middle["x"], "y": middle["y"], "button": "middle"}),
    );
    let redirect = format!(" > {}\n", out.display());
    daemon.act("sel", json!({"type": "type", "text": redirect}));
    let pasted = wait_for_file(&out, LONG);
    assert_eq!(pasted.trim_end(), "hello world");
}

/// How many pixels differ between two PNG screenshots of the same size.
fn pixels_changed(a: &Value, b: &Value) -> usize {
    let decode = |v: &Value| screenpilot_desktop::decode_png(&png_of(v)).expect("a PNG");
    let (a, b) = (decode(a), decode(b));
    assert_eq!((a.width, a.height), (b.width, b.height));
    a.rgb
        .chunks(3)
        .zip(b.rgb.chunks(3))
        .filter(|(p, q)| p != q)
        .count()
}

#[test]
fn a_context_menu_opens_on_a_right_click_and_escape_closes_it() {
    context_menu_task(false);
}

#[test]
fn on_wayland_a_context_menu_opens_on_a_right_click_and_escape_closes_it() {
    context_menu_task(true);
}

fn context_menu_task(wayland: bool) {
    let daemon = Daemon::new();
    let started = start_mousepad(&daemon, "menu", wayland);
    let before = daemon.act("menu", json!({"type": "type", "text": "alpha"}));
    let window = &started["window"];
    let number = |key: &str| window[key].as_u64().expect("a number");
    let (x, y) = (
        number("x") + number("width") / 2,
        number("y") + number("height") * 3 / 4,
    );
    let opened = daemon.act(
        "menu",
        json!({"type": "click", "x": x, "y": y, "button": "right"}),
    );
    assert_eq!(opened["results"][0]["reacted"], true, "{}", brief(&opened));
    // A menu, not a blinking cursor: thousands of pixels changed.
    let changed = pixels_changed(&before, &opened);
    assert!(
        changed > 5_000,
        "only {changed} pixels changed after the right click"
    );
    let closed = daemon.act("menu", json!({"type": "keypress", "keys": ["ESC"]}));
    assert!(
        pixels_changed(&opened, &closed) > 5_000,
        "the menu did not close"
    );
    // The editor has the keyboard again: what is typed next lands in the text.
    daemon.act("menu", json!({"type": "type", "text": " beta"}));
    let saved = save_as(&daemon, "menu", &daemon.path().join("menu.txt"));
    assert_eq!(saved.trim_end_matches('\n'), "alpha beta");
}

#[test]
fn a_dialog_takes_cjk_typed_right_after_it_opens() {
    dialog_task(false);
}

#[test]
fn on_wayland_a_dialog_takes_cjk_typed_right_after_it_opens() {
    dialog_task(true);
}

fn dialog_task(wayland: bool) {
    let daemon = Daemon::new();
    let started = start(
        &daemon,
        "dlg",
        wayland,
        &[
            "zenity",
            "--entry",
            "--title",
            "Name?",
            "--text",
            "Your name",
        ],
    );
    assert_eq!(started["window"]["title"], "Name?", "{}", brief(&started));
    let log = started["log"].as_str().expect("a log file").to_owned();
    // Typed at once: the window is shown and focused when start returns.
    daemon.act("dlg", json!({"type": "type", "text": "山田 太郎\n"}));
    let ms = LONG_MS.to_string();
    let ended = daemon.sp_json(&["wait", "dlg", "--exit", "--timeout-ms", &ms]);
    assert_eq!(ended["exited"], true, "{}", brief(&ended));
    let output = std::fs::read_to_string(&log).expect("the program's log");
    assert!(
        output.lines().any(|line| line == "山田 太郎"),
        "zenity printed {output:?}"
    );
}
