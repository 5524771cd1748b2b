//! Wayland desktops through the real binary: a private headless sway (run as nobody when the tests
//! run as root), foot and GTK 3 programs on it natively, driven by `computer` and `act` and checked
//! outside screenpilot: files the programs write, what the programs print, sway's own IPC
//! (`swaymsg`), wl-clipboard. Synchronisation is by events only: files written (inotify), the
//! product's waits, process exits.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use regex::Regex;
use serde_json::{json, Value};

use common::{brief, png_of, ref_in, wait_for_file, Background, Daemon, LONG_MS};

const LONG: Duration = Duration::from_millis(LONG_MS);

/// The environment a program on the desktop got, as it wrote it with `env > path`.
fn env_file(path: &Path) -> HashMap<String, String> {
    wait_for_file(path, LONG)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

/// A Wayland client (wl-paste, swaymsg, ...) run beside screenpilot on the desktop of `env`.
fn beside(env: &HashMap<String, String>, program: &str, args: &[&str]) -> std::process::Output {
    let mut cmd = Command::new(program);
    cmd.args(args).env_remove("DISPLAY");
    for key in ["WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "SWAYSOCK"] {
        cmd.env(key, &env[key]);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"))
}

/// The box of the first element line matching `line`: `@x,y,w,h` in screenshot pixels.
fn box_of(elements: &str, line: &str) -> (i64, i64, i64, i64) {
    let pattern = Regex::new(line).expect("a regex");
    let found = elements
        .lines()
        .find(|l| pattern.is_match(l))
        .unwrap_or_else(|| panic!("no line {line:?} in\n{elements}"));
    let caps = Regex::new(r"@(-?\d+),(-?\d+),(\d+),(\d+)")
        .expect("re")
        .captures(found)
        .unwrap_or_else(|| panic!("no box on {found:?}"));
    let n = |i: usize| caps[i].parse::<i64>().expect("a number");
    (n(1), n(2), n(3), n(4))
}

/// The windows in sway's tree (`swaymsg -t get_tree`): its nodes with a process.
fn sway_windows(env: &HashMap<String, String>) -> Vec<Value> {
    let out = beside(env, "swaymsg", &["-r", "-t", "get_tree"]);
    let tree: Value = serde_json::from_slice(&out.stdout).expect("sway's tree");
    fn collect(node: &Value, found: &mut Vec<Value>) {
        if node["pid"].is_number() {
            found.push(node.clone());
        }
        for child in ["nodes", "floating_nodes"]
            .iter()
            .filter_map(|k| node[k].as_array())
            .flatten()
        {
            collect(child, found);
        }
    }
    let mut found = Vec::new();
    collect(&tree, &mut found);
    found
}

/// Where sway has the window titled `title`: its client area.
fn sway_rect(env: &HashMap<String, String>, title: &str) -> Option<(i64, i64, i64, i64)> {
    let window = sway_windows(env).into_iter().find(|w| w["name"] == title)?;
    let (r, w) = (&window["rect"], &window["window_rect"]);
    let n = |v: &Value| v.as_i64().unwrap_or(0);
    Some((
        n(&r["x"]) + n(&w["x"]),
        n(&r["y"]) + n(&w["y"]),
        n(&w["width"]),
        n(&w["height"]),
    ))
}

/// The titles of sway's windows.
fn sway_titles(env: &HashMap<String, String>) -> Vec<String> {
    sway_windows(env)
        .iter()
        .filter_map(|w| w["name"].as_str().map(str::to_owned))
        .collect()
}

/// The title of the window sway has focused.
fn sway_focused(env: &HashMap<String, String>) -> Option<String> {
    sway_windows(env)
        .into_iter()
        .find(|w| w["focused"] == true)
        .and_then(|w| w["name"].as_str().map(str::to_owned))
}

#[test]
fn foot_on_a_private_sway_takes_unicode_wakes_waits_and_its_windows_are_focused_moved_and_closed_by_ref(
) {
    let d = Daemon::new();
    let dir = d.path().to_path_buf();
    let fifo = dir.join("say");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let script = format!(
        // Opened read-write, the fifo never reads as ended when one writer closes.
        "env > {env}; head -n 1 > {typed}; head -n 1 > {second}; echo ready; while read l; do echo \"$l\"; done <> {fifo}",
        env = dir.join("env.txt").display(),
        typed = dir.join("typed.txt").display(),
        second = dir.join("second.txt").display(),
        fifo = fifo.display()
    );
    let started = d.sp_json(&[
        "desktop",
        "start",
        "--wayland",
        "--sid",
        "wl",
        "--size",
        "1024x768",
        "--",
        "foot",
        "-T",
        "sp-foot",
        "sh",
        "-c",
        &script,
    ]);
    assert_eq!(started["wayland"], true, "{}", brief(&started));
    assert_eq!(started["window"]["title"], "sp-foot", "{}", brief(&started));
    assert_eq!(started["window"]["focused"], true, "{}", brief(&started));
    assert_eq!(
        (started["width"].clone(), started["height"].clone()),
        (json!(1024), json!(768))
    );
    // sway refuses root: ours runs as nobody when the tests are root.
    let sway = started["pid"].as_i64().expect("sway's pid");
    let status = std::fs::read_to_string(format!("/proc/{sway}/status")).expect("sway runs");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        assert!(status.contains("\nUid:\t65534\t"), "{status}");
    }
    let env = env_file(&dir.join("env.txt"));
    assert_eq!(env["GDK_BACKEND"], "wayland");
    assert!(
        !env.contains_key("DISPLAY"),
        "no X display for a Wayland program"
    );

    // The first key typed after start reaches the program, and so does every character.
    let text = "héllo wörld ✓ 日本";
    d.sp_json(&["computer", "wl", "type", &format!("{text}\n")]);
    assert_eq!(
        wait_for_file(&dir.join("typed.txt"), LONG),
        format!("{text}\n")
    );

    // A second window takes the focus when it opens; focused by its ref, the first has it again
    // (sway says so) and takes what is typed next.
    let other = dir.join("other.txt");
    let read_other = format!("head -n 1 > {}", other.display());
    let started = d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "wl",
        "--",
        "foot",
        "-T",
        "sp-other",
        "sh",
        "-c",
        &read_other,
    ]);
    assert_eq!(
        started["window"]["title"],
        "sp-other",
        "{}",
        brief(&started)
    );
    assert_eq!(sway_focused(&env).as_deref(), Some("sp-other"));
    let shown = d.elements("wl");
    let (first, second) = (
        ref_in(&shown, r#"^window "sp-foot""#),
        ref_in(&shown, r#"^window "sp-other""#),
    );
    let focused = d.sp_json(&["act", "wl", &first, "focus"]);
    assert_eq!(sway_focused(&env).as_deref(), Some("sp-foot"), "{focused}");
    assert!(
        Regex::new(r#"^window "sp-foot" \[e\d+\] focused"#)
            .expect("re")
            .is_match(focused["elements"].as_str().unwrap_or_default()),
        "the focused window comes first: {focused}"
    );
    d.sp_json(&["computer", "wl", "type", "to the first\n"]);
    assert_eq!(
        wait_for_file(&dir.join("second.txt"), LONG),
        "to the first\n"
    );
    // And back: the other window, focused by its ref, takes its line (and closes, done).
    d.sp_json(&["act", "wl", &second, "focus"]);
    assert_eq!(sway_focused(&env).as_deref(), Some("sp-other"));
    d.sp_json(&["computer", "wl", "type", "to the other\n"]);
    assert_eq!(wait_for_file(&other, LONG), "to the other\n");
    d.wait_regex("wl", "^sp-foot$");

    // A wait for a visual change is woken by the compositor's damage, and only by it.
    d.sp_json(&["wait", "wl", "--ready", "--stable-ms", "200"]);
    let hash = d.snapshot("wl")["hash"]
        .as_str()
        .expect("a hash")
        .to_owned();
    let (status, still) = d.json_status(&["wait", "wl", "--change", &hash, "--timeout-ms", "300"]);
    assert_eq!(status, 1, "nothing was drawn: {still}");
    let waiting = Background::spawn(d.command(&[
        "--json",
        "wait",
        "wl",
        "--visual-change",
        &hash,
        "--timeout-ms",
        "20000",
    ]));
    std::fs::write(&fifo, "painted\n").expect("the fifo");
    let out = waiting.finish();
    let changed = common::parse_json(&out);
    assert_eq!(changed["changed"], true, "{changed}");

    // The window moves and closes by its ref; sway itself says where it is.
    let shown = d.elements("wl");
    let window = ref_in(&shown, r#"^window "sp-foot""#);
    d.sp_json(&["act", "wl", &window, "move", "--to", "100,120"]);
    let rect = sway_rect(&env, "sp-foot").expect("foot's window");
    assert_eq!((rect.0, rect.1), (100, 120), "{rect:?}");
    let moved = d.snapshot("wl");
    let listed = moved["windows"]
        .as_array()
        .and_then(|w| w.iter().find(|w| w["title"] == "sp-foot"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (listed["x"].clone(), listed["y"].clone()),
        (json!(100), json!(120)),
        "{moved}"
    );
    d.sp_json(&["act", "wl", &window, "close"]);
    assert!(sway_rect(&env, "sp-foot").is_none(), "closed");
    let ended = d.sp_json(&["wait", "wl", "--exit", "--timeout-ms", &LONG_MS.to_string()]);
    assert_eq!(ended["exited"], true, "{ended}");
    d.sp_json(&["close", "wl"]);
    assert!(
        common::wait_for_process_exit(sway as i32, LONG),
        "sway ended with its desktop"
    );
}

#[test]
fn gtk_on_a_2560x1600_wayland_desktop_is_acted_on_by_ref_scrolled_dragged_picked_from_popups_and_placed_right_at_scale_2(
) {
    let d = Daemon::new();
    let dir = d.path().to_path_buf();
    let probe = format!("env > {}; exec cat", dir.join("env.txt").display());
    d.sp_json(&[
        "desktop",
        "start",
        "--wayland",
        "--sid",
        "wg",
        "--size",
        "2560x1600",
        "--",
        "foot",
        "-T",
        "probe",
        "sh",
        "-c",
        &probe,
    ]);
    let env = env_file(&dir.join("env.txt"));
    let answer = dir.join("answer.txt");
    let zenity = format!(
        "zenity --entry --title First --text First: > {}",
        answer.display()
    );
    let started = d.sp_json(&["desktop", "start", "--sid", "wg", "--", "sh", "-c", &zenity]);
    assert_eq!(started["window"]["title"], "First", "{}", brief(&started));

    // Read as text, acted on by ref: the entry takes text typed through its ref.
    let shown = d.elements("wg");
    let entry = ref_in(&shown, r#"text "First:""#);
    d.sp_json(&["act", "wg", &entry, "type", "--text", "typed by ref"]);

    // The clipboard both ways, against wl-clipboard.
    // wl-copy leaves a child serving the copy (until the next one): no pipes for it to hold.
    let mut copy = Command::new("wl-copy");
    copy.arg("from wl-copy")
        .env_remove("DISPLAY")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    for key in ["WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"] {
        copy.env(key, &env[key]);
    }
    assert!(copy.status().expect("wl-copy").success());
    let read = d.sp_json(&["act", "wg", "-", "clipboard"]);
    assert_eq!(read["clipboard"], "from wl-copy", "{read}");
    d.sp_json(&["act", "wg", "-", "clipboard", "--text", "from screenpilot"]);
    let pasted = beside(&env, "wl-paste", &["-n"]);
    assert_eq!(String::from_utf8_lossy(&pasted.stdout), "from screenpilot");

    // A click at the screenshot pixel where the snapshot shows OK: the screenshot is scaled
    // (2560x1600 to 1356x848), and the click lands on the button.
    let shot = d.act("wg", json!({"type": "screenshot"}));
    assert_eq!(
        (shot["width"].clone(), shot["height"].clone()),
        (json!(1356), json!(848))
    );
    let frame = screenpilot_desktop::decode_png(&png_of(&shot)).expect("a PNG");
    assert_eq!((frame.width, frame.height), (1356, 848));
    let now = d.elements("wg");
    let (x, y, w, h) = box_of(&now, r#"button "OK""#);
    d.act(
        "wg",
        json!({"type": "click", "x": x + w / 2, "y": y + h / 2}),
    );
    // zenity prints what its entry held when OK is pressed.
    assert_eq!(wait_for_file(&answer, LONG), "typed by ref\n");

    gestures_on_a_scaled_desktop(&d, &env);
}

/// On the 2560x1600 desktop of `d` (session `wg`, screenshots 1356x848): a GTK window's list
/// scrolled and its slider dragged at screenshot coordinates, its combo box's popup list and a
/// field's context menu picked by ref, the window read alone; then its output at scale 2 (HiDPI):
/// the window list, a move and the elements' boxes in screen pixels. Each outcome is checked outside
/// screenpilot: the window's title (its state, see the fixture) as sway reports it, the primary
/// selection as wl-paste reads it.
fn gestures_on_a_scaled_desktop(d: &Daemon, env: &HashMap<String, String>) {
    // The probe goes first: a window without an accessibility tree is read from its pixels at
    // every snapshot that sees it change, and the new window would cover it.
    d.sp_json(&["act", "wg", r#"window "probe""#, "close"]);
    let started = d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "wg",
        "--",
        "/usr/bin/python3",
        &common::fixture("gtk/gestures.py"),
    ]);
    // The product's wait sees the title change, and sway has the same title: it is returned.
    let title = |pattern: &str| -> String {
        let waited = d.wait_regex("wg", pattern);
        let pattern = Regex::new(&format!("(?m){pattern}")).expect("re");
        let shown = sway_titles(env);
        shown
            .iter()
            .find(|t| pattern.is_match(t))
            .cloned()
            .unwrap_or_else(|| panic!("sway's titles {shown:?}; the wait's {}", waited["text"]))
    };
    title("^Gestures slider=0 scroll=0 size=Small$");
    assert_eq!(started["window"]["focused"], true, "{}", brief(&started));
    let centre = |b: (i64, i64, i64, i64)| (b.0 + b.2 / 2, b.1 + b.3 / 2);

    // Wheel steps over the list scroll it down, then back to the top.
    let shown = d.elements("wg");
    let (x, y) = centre(box_of(&shown, r#"list item "Row 3""#));
    d.act(
        "wg",
        json!({"action": "scroll", "coordinate": [x, y], "scroll_direction": "down", "scroll_amount": 5}),
    );
    title(r"scroll=[1-9]\d* ");
    d.act(
        "wg",
        json!({"action": "scroll", "coordinate": [x, y], "scroll_direction": "up", "scroll_amount": 10}),
    );
    title(" scroll=0 ");

    // A drag along the slider, from a quarter of it to past its end, moves it to its maximum.
    let (sx, sy, sw, sh) = box_of(&shown, r#"slider "Volume""#);
    let row = sy + sh / 2;
    d.act(
        "wg",
        json!({"type": "drag", "path": [[sx + sw / 4, row], [sx + sw / 2, row], [sx + sw + 4, row]]}),
    );
    title("slider=100 ");

    // The combo box's list is a popup no window list holds: its item is picked by ref.
    d.sp_json(&[
        "act",
        "wg",
        r#"combo box "Size""#,
        "click",
        "--appears-name",
        "^Large$",
    ]);
    d.sp_json(&["act", "wg", r#"menu item "Large""#, "click"]);
    title("size=Large$");

    // A context menu opened at the pointer is a popup listed on its own: where the compositor put
    // it is not known, so its items have no boxes; picked by ref, Select All selects the field's
    // text (the primary selection, as wl-paste reads it).
    let (nx, ny) = centre(box_of(&shown, r#"text "Note""#));
    d.act(
        "wg",
        json!({"type": "click", "x": nx, "y": ny, "button": "right"}),
    );
    let opened = d.elements("wg");
    let select_all = opened
        .lines()
        .find(|l| l.contains(r#"menu item "Select All""#))
        .unwrap_or_else(|| panic!("no Select All in\n{opened}"));
    assert!(!select_all.contains('@'), "{opened}");
    let picked = d.sp_json(&["act", "wg", r#"menu item "Select All""#, "click"]);
    let selected = beside(env, "wl-paste", &["--primary", "-n"]);
    assert_eq!(String::from_utf8_lossy(&selected.stdout), "pick me");

    // The window read alone: the same boxes as in the whole snapshot (the act's answer).
    let shown = picked["elements"].as_str().unwrap_or_default();
    let window = ref_in(shown, r#"^window "Gestures"#);
    let part = d.sp_json(&["snapshot", "wg", "--ref", &window]);
    let part = part["elements"].as_str().unwrap_or_default();
    for line in [r#"slider "Volume""#, r#"combo box "Size""#] {
        assert_eq!(box_of(part, line), box_of(shown, line), "{part}\n{shown}");
    }

    // HiDPI: the output at scale 2 lays windows out in half as many units. Windows, moves and
    // boxes stay in screen pixels: twice sway's units.
    let scaled = beside(env, "swaymsg", &["output", "HEADLESS-1", "scale", "2"]);
    assert!(scaled.status.success(), "{scaled:?}");
    let name = title("^Gestures .*size=Large$");
    // The window list of a snapshot has the window at twice sway's units.
    let twice_sway_s = |snapshot: &Value| {
        let listed = snapshot["windows"]
            .as_array()
            .and_then(|w| w.iter().find(|w| w["title"] == name.as_str()))
            .cloned()
            .unwrap_or_else(|| panic!("no {name:?} in {snapshot}"));
        let (x, y, w, h) = sway_rect(env, &name).expect("the window in sway's tree");
        let at = |key: &str| listed[key].as_i64().unwrap_or(-1);
        assert_eq!(
            (at("x"), at("y"), at("width"), at("height")),
            (2 * x, 2 * y, 2 * w, 2 * h),
            "{listed}"
        );
    };
    let scaled = d.snapshot("wg");
    twice_sway_s(&scaled);
    // Moved to a point of the screenshot: there it shows.
    let window = ref_in(
        scaled["elements"].as_str().unwrap_or_default(),
        r#"^window "Gestures"#,
    );
    d.sp_json(&["act", "wg", &window, "move", "--to", "100,120"]);
    let moved = d.snapshot("wg");
    twice_sway_s(&moved);
    let shown = moved["elements"].as_str().unwrap_or_default();
    let (wx, wy, _, _) = box_of(shown, r#"^window "Gestures"#);
    assert!(
        (wx - 100).abs() <= 1 && (wy - 120).abs() <= 1,
        "asked for 100,120 of the screenshot, shown at {wx},{wy}"
    );
    // The slider's box, in screenshot pixels, is where the pointer finds it: dragged from past its
    // end to before its start, it goes to its minimum.
    let (sx, sy, sw, sh) = box_of(shown, r#"slider "Volume""#);
    let row = sy + sh / 2;
    d.act(
        "wg",
        json!({"type": "drag", "path": [[sx + sw * 3 / 4, row], [sx + sw / 2, row], [sx - 4, row]]}),
    );
    title("slider=0 ");
}

#[test]
fn a_qt_form_running_natively_on_wayland_is_read_and_driven_by_refs() {
    let d = Daemon::new();
    let form = common::fixture("qt/form.py");
    let answer = d.path().join("submitted.txt");
    let run = format!("/usr/bin/python3 {form} --plain > {}", answer.display());
    let started = d.sp_json(&[
        "desktop",
        "start",
        "--wayland",
        "--sid",
        "q",
        "--",
        "sh",
        "-c",
        &run,
    ]);
    assert_eq!(started["wayland"], true, "{}", brief(&started));
    let shown = d.elements("q");
    assert!(!shown.contains("no-tree"), "{shown}");
    let name = ref_in(&shown, r#"^\s*text "Name" .*editable"#);
    let subscribe = ref_in(&shown, r#"check box "Subscribe" \[e\d+\] unchecked"#);
    d.sp_json(&["act", "q", &name, "set", "--text", "Ada"]);
    d.sp_json(&["act", "q", &subscribe, "toggle"]);
    // The combo box's list opens where Qt says its items are (opened by the pointer: a popup
    // opened through the accessibility call alone is placed elsewhere), and Blue is picked there.
    d.sp_json(&[
        "act",
        "q",
        r#"combo box "Colour""#,
        "click",
        "--appears-name",
        "^Blue$",
    ]);
    d.sp_json(&["act", "q", r#"list item "Blue""#, "click"]);
    // A click by ref lands where the form shows Submit: its box is placed by the window's position.
    d.sp_json(&["act", "q", "button \"Submit\"", "click"]);
    let printed = wait_for_file(&answer, LONG);
    assert!(
        printed
            .lines()
            .any(|l| l == "submitted name=Ada subscribe=true colour=Blue"),
        "{printed}"
    );
}

#[test]
fn a_wayland_display_that_is_not_there_is_named_and_nothing_is_left() {
    let d = Daemon::new();
    let missing = d.path().join("no-such-wayland");
    let missing = missing.to_str().expect("utf-8");
    let e = d.sp_error(&["desktop", "start", "--wayland", "--display", missing]);
    assert_eq!(e["field"], "display", "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("no Wayland compositor at") && message.contains(missing),
        "{e}"
    );
    // A Wayland name given as an X display says how to ask for it.
    let e = d.sp_error(&["desktop", "start", "--display", "wayland-1"]);
    assert_eq!(e["field"], "display", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("add wayland: true")),
        "{e}"
    );
    assert_eq!(d.sp_json(&["list"])["sessions"], json!([]));
}

/// weston (headless), as GNOME's and KDE's compositors are for us: a Wayland desktop without the
/// wlroots input protocols. Run as nobody when the tests are root, in a runtime folder of its own.
struct Weston {
    child: std::process::Child,
    socket: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Weston {
    fn start() -> Weston {
        let dir = tempfile::Builder::new()
            .prefix("sp-weston-")
            .tempdir()
            .expect("a runtime folder");
        let root = unsafe { libc::geteuid() } == 0;
        let mut command = if root {
            std::os::unix::fs::chown(dir.path(), Some(65534), Some(65534)).expect("chown");
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "weston"]);
            c
        } else {
            Command::new("weston")
        };
        let mut child = command
            .args([
                "--backend=headless-backend.so",
                "--socket=wayland-w",
                "--idle-time=0",
            ])
            .env("XDG_RUNTIME_DIR", dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start weston (a Debian package scripts/test.sh installs)");
        // weston listens before it loads its shell and launches the shell's helpers.
        let log = child.stderr.take().expect("weston's log");
        let (ready_tx, ready) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(log).lines().map_while(Result::ok) {
                if line.contains("launching") {
                    let _ = ready_tx.send(());
                }
            }
        });
        ready
            .recv_timeout(LONG)
            .expect("weston never launched its shell");
        Weston {
            child,
            socket: dir.path().join("wayland-w"),
            _dir: dir,
        }
    }
}

impl Drop for Weston {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_compositor_without_wlroots_input_is_refused_before_anything_is_sent() {
    let weston = Weston::start();
    let d = Daemon::new();
    let socket = weston.socket.to_str().expect("utf-8");
    let e = d.sp_error(&["desktop", "start", "--wayland", "--display", socket]);
    assert_eq!(e["field"], "display", "{e}");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(
            "offers no zwlr_virtual_pointer_manager_v1 and no zwp_virtual_keyboard_manager_v1, \
             so input cannot be delivered"
        ),
        "{e}"
    );
    assert_eq!(d.sp_json(&["list"])["sessions"], json!([]));
}
