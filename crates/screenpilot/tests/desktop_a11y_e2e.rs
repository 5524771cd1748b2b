//! Desktops as text (issue 24), as a new user tries them: real GTK programs on a private desktop
//! (Xvfb, openbox, the desktop's own session and accessibility buses), driven through the CLI by refs
//! alone: no coordinates, no screenshot read. Each task is checked by what the program did (its
//! output, a file it wrote), and every wait is an event (an element appearing, a program's exit).

use crate::common;

use std::path::Path;

use regex::Regex;
use serde_json::Value;

use common::{png_of, ref_in, Daemon, LONG_MS};

fn settings_app() -> String {
    common::fixture("gtk/settings.py")
}

/// `act SID ARGS...`, which must succeed; its answer.
fn act(d: &Daemon, sid: &str, args: &[&str]) -> Value {
    let mut full = vec!["act", sid];
    full.extend_from_slice(args);
    d.sp_json(&full)
}

/// What the desktop's first program printed, once it ended.
fn output_at_exit(d: &Daemon, sid: &str) -> String {
    let ms = LONG_MS.to_string();
    let ended = d.sp_json(&["wait", sid, "--exit", "--timeout-ms", &ms]);
    assert_eq!(ended["exited"], true, "{ended}");
    let listed = d.sp_json(&["list"]);
    let log = listed["sessions"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["sid"] == sid))
        .and_then(|s| s["log"].as_str())
        .expect("the program's log")
        .to_owned();
    std::fs::read_to_string(log).expect("the log")
}

/// The printed lines that are not GTK's own warnings.
fn printed(log: &str) -> Vec<String> {
    log.lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.contains("CRITICAL")
                && !l.contains("WARNING")
                && !l.contains("Gtk-")
                && !l.starts_with('(')
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_settings_dialog_is_read_and_driven_by_refs() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "s",
        "--",
        "/usr/bin/python3",
        &settings_app(),
    ]);
    let shown = d.elements("s");
    assert!(shown.contains("window \"Preferences\""), "{shown}");
    assert!(
        Regex::new(r#"check box "Save automatically" \[e\d+\] focused checked"#)
            .expect("re")
            .is_match(&shown),
        "{shown}"
    );
    assert!(shown.contains("check box \"Show hidden files\""), "{shown}");
    assert!(shown.contains("unchecked"), "{shown}");
    assert!(shown.contains("combo box \"Theme\""), "{shown}");
    assert!(shown.contains("=\"Light\""), "{shown}");

    // Toggle a check box, and read its new state in the answer.
    let hidden = ref_in(&shown, r#"check box "Show hidden files""#);
    let toggled = act(&d, "s", &[&hidden, "toggle"]);
    let after = toggled["elements"].as_str().unwrap_or_default();
    assert!(
        after.contains(&format!(
            "check box \"Show hidden files\" [{hidden}] checked"
        )),
        "{after}"
    );
    // Pick an item in the combo box: open it, wait for the item, choose it.
    let opened = act(
        &d,
        "s",
        &[
            "combo box \"Theme\"",
            "click",
            "--appears-role",
            "menu item",
            "--appears-name",
            "^Dark$",
        ],
    );
    assert_eq!(opened["held"], true, "{opened}");
    let picked = act(
        &d,
        "s",
        &["menu item \"Dark\"", "click", "--gone-role", "menu item"],
    );
    let after = picked["elements"].as_str().unwrap_or_default();
    assert!(after.contains("=\"Dark\""), "{after}");
    // Type a name, apply.
    let user = ref_in(after, r#"text "User name""#);
    act(&d, "s", &[&user, "set", "--text", "ada"]);
    act(&d, "s", &["button \"Apply\"", "click"]);
    let log = output_at_exit(&d, "s");
    let settings: Value = printed(&log)
        .iter()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no settings printed: {log}"));
    assert_eq!(
        settings,
        serde_json::json!({"autosave": true, "hidden": true, "theme": "Dark", "user": "ada"})
    );
}

#[test]
fn a_form_is_filled_and_submitted_by_refs() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "f",
        "--",
        "zenity",
        "--forms",
        "--title",
        "Signup",
        "--text",
        "Please sign up",
        "--add-entry",
        "Name",
        "--add-password",
        "Secret",
        "--add-combo",
        "Colour",
        "--combo-values",
        "Red|Green|Blue",
    ]);
    let shown = d.elements("f");
    // Fields are named by the labels beside them.
    let name = ref_in(&shown, r#"^\s*text "Name""#);
    let secret = ref_in(&shown, r#"password text "Secret""#);
    assert!(
        shown.contains("(0 characters, hidden)"),
        "a password is never shown: {shown}"
    );
    act(&d, "f", &[&name, "set", "--text", "Ada Lovelace"]);
    let typed = act(&d, "f", &[&secret, "set", "--text", "hunter2"]);
    let after = typed["elements"].as_str().unwrap_or_default();
    assert!(after.contains("(7 characters, hidden)"), "{after}");
    assert!(!after.contains("hunter2"), "{after}");
    act(
        &d,
        "f",
        &["combo box \"Colour\"", "click", "--appears-name", "^Blue$"],
    );
    act(&d, "f", &["menu item \"Blue\"", "click"]);
    act(&d, "f", &["button \"OK\"", "click"]);
    let log = output_at_exit(&d, "f");
    assert!(
        printed(&log).contains(&"Ada Lovelace|hunter2|Blue".to_owned()),
        "{log}"
    );
}

#[test]
fn a_file_is_chosen_in_a_file_chooser_by_refs() {
    let d = Daemon::new();
    let dir = d.path().join("files");
    std::fs::create_dir_all(&dir).expect("a directory");
    for name in ["alpha.txt", "beta.txt", "gamma.txt"] {
        std::fs::write(dir.join(name), name).expect("a file");
    }
    let start = format!("{}/", dir.display());
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "fc",
        "--",
        "zenity",
        "--file-selection",
        "--title",
        "Pick",
        "--filename",
        &start,
    ]);
    let shown = d.elements("fc");
    let beta = ref_in(&shown, r#"table cell "beta.txt""#);
    let selected = act(&d, "fc", &[&beta, "select"]);
    let after = selected["elements"].as_str().unwrap_or_default();
    assert!(
        Regex::new(r#"table cell "beta.txt" \[e\d+\] (focused )?selected"#)
            .expect("re")
            .is_match(after),
        "{after}"
    );
    act(&d, "fc", &["button \"OK\"", "click"]);
    let log = output_at_exit(&d, "fc");
    let chosen = dir.join("beta.txt").display().to_string();
    assert!(printed(&log).contains(&chosen), "{log}");
}

/// Mousepad with a home of its own (it keeps state there, and would offer to restore it).
fn start_mousepad(d: &Daemon, sid: &str) -> std::path::PathBuf {
    let home = d.path().join(format!("home-{sid}"));
    std::fs::create_dir_all(&home).expect("a home");
    let env = |k: &str, v: &Path| format!("{k}={}", v.display());
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        sid,
        "--cwd",
        &home.display().to_string(),
        "--env",
        &env("HOME", &home),
        "--env",
        &env("XDG_CONFIG_HOME", &home.join(".config")),
        "--env",
        &env("XDG_DATA_HOME", &home.join(".local/share")),
        "--env",
        "GSETTINGS_BACKEND=memory",
        "--",
        "mousepad",
    ]);
    home
}

#[test]
fn a_menu_opens_save_as_and_the_dialog_saves_the_file_by_refs() {
    let d = Daemon::new();
    let home = start_mousepad(&d, "m");
    let shown = d.elements("m");
    let text = ref_in(&shown, r#"^\s*text \[e\d+\] (focused )?editable"#);
    act(&d, "m", &[&text, "type", "--text", "kept by refs"]);
    act(
        &d,
        "m",
        &["menu \"File\"", "click", "--appears-name", "^Save As"],
    );
    let dialog = act(
        &d,
        "m",
        &[
            "menu item \"Save As...\"",
            "click",
            "--appears-role",
            "text",
            "--appears-name",
            "^Name:$",
        ],
    );
    assert_eq!(dialog["held"], true, "{dialog}");
    let path = home.join("notes.txt");
    act(
        &d,
        "m",
        &[
            "text \"Name:\"",
            "set",
            "--text",
            &path.display().to_string(),
        ],
    );
    act(
        &d,
        "m",
        &["button \"Save\"", "click", "--gone-role", "file chooser"],
    );
    let saved = common::wait_for_file(&path, std::time::Duration::from_millis(LONG_MS));
    assert_eq!(saved.trim_end(), "kept by refs");
}

#[test]
fn the_window_behind_is_focused_and_typed_into_and_text_goes_through_the_clipboard() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop", "start", "--sid", "w", "--", "zenity", "--entry", "--title", "First", "--text",
        "First:",
    ]);
    // A second program on the running desktop takes the focus.
    let second = d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "w",
        "--",
        "/usr/bin/python3",
        &settings_app(),
    ]);
    assert_eq!(second["window"]["title"], "Preferences", "{second}");
    let shown = d.elements("w");
    assert!(
        Regex::new(r#"window "Preferences" \[e\d+\] focused"#)
            .expect("re")
            .is_match(&shown),
        "{shown}"
    );
    // Moved over the window behind, the one on top covers its button: nothing is clicked through.
    let ok_line = Regex::new(r#"button "OK" \[(e\d+)\].* @(\d+),(\d+),"#).expect("re");
    let caps = ok_line
        .captures(&shown)
        .unwrap_or_else(|| panic!("{shown}"));
    let (hidden_ok, x, y): (String, i32, i32) = (
        caps[1].to_owned(),
        caps[2].parse().unwrap_or(0),
        caps[3].parse().unwrap_or(0),
    );
    let preferences = ref_in(&shown, r#"^window "Preferences""#);
    let to = format!("{},{}", (x - 100).max(0), (y - 100).max(0));
    act(&d, "w", &[&preferences, "move", "--to", &to]);
    let e = d.sp_error(&["act", "w", &hidden_ok, "double_click"]);
    assert_eq!(e["code"], "element_unavailable", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("covered"),
        "{e}"
    );
    // zenity's window is a GTK dialog: it reads, and is waited for, by that role.
    let waited = act(
        &d,
        "w",
        &["--appears-role", "dialog", "--appears-name", "^First$"],
    );
    assert_eq!(waited["held"], true, "{waited}");
    // Focus the window behind by its ref, and type into its entry.
    let first = ref_in(&shown, r#"^dialog "First""#);
    let focused = act(&d, "w", &[&first, "focus"]);
    let after = focused["elements"].as_str().unwrap_or_default();
    assert!(
        after.starts_with("dialog \"First\""),
        "the focused window comes first: {after}"
    );
    let entry = ref_in(after, r#"text "First:""#);
    act(&d, "w", &[&entry, "type", "--text", "copy me"]);
    // Copy it with the app's own keys, read the clipboard, paste it into the other app.
    d.sp_json(&["computer", "w", "keypress", "ctrl", "a"]);
    d.sp_json(&["computer", "w", "keypress", "ctrl", "c"]);
    let read = act(&d, "w", &["-", "clipboard"]);
    assert_eq!(read["clipboard"], "copy me", "{read}");
    let user = ref_in(after, r#"text "User name""#);
    act(&d, "w", &[&user, "focus"]);
    d.sp_json(&["computer", "w", "keypress", "ctrl", "v"]);
    let pasted = d.elements("w");
    assert!(pasted.contains("text \"User name\""), "{pasted}");
    assert!(pasted.contains("=\"copy me\""), "{pasted}");
    // The first one is still what was typed into it: each went to its own window.
    act(&d, "w", &[&ref_in(&pasted, r#"dialog "First""#), "focus"]);
    let ok = ref_in(&d.elements("w"), r#"button "OK""#);
    act(&d, "w", &[&ok, "click"]);
    let log = output_at_exit(&d, "w");
    assert!(printed(&log).contains(&"copy me".to_owned()), "{log}");
}

#[test]
fn the_clipboard_is_set_and_read_as_text_and_png_and_stays_after_the_call() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop", "start", "--sid", "c", "--", "zenity", "--entry", "--title", "Paste",
    ]);
    let empty = d.sp_error(&["act", "c", "-", "clipboard"]);
    assert_eq!(empty["code"], "selection_empty", "{empty}");
    act(
        &d,
        "c",
        &["-", "clipboard", "--text", "kept after the call"],
    );
    // A paste in the app, after the call that set it returned.
    d.sp_json(&["computer", "c", "keypress", "ctrl", "v"]);
    let shown = d.elements("c");
    assert!(shown.contains("=\"kept after the call\""), "{shown}");
    act(
        &d,
        "c",
        &["-", "primary", "--text", "the primary selection"],
    );
    assert_eq!(
        act(&d, "c", &["-", "primary"])["clipboard"],
        "the primary selection"
    );
    // A picture: set as a data URL, read back as PNG image content.
    let shot = d.sp_json(&["screenshot", "c"]);
    let png = shot["png"].as_str().expect("a png");
    act(
        &d,
        "c",
        &[
            "-",
            "clipboard",
            "--text",
            &format!("data:image/png;base64,{png}"),
        ],
    );
    let read = act(&d, "c", &["-", "clipboard"]);
    assert_eq!(png_of(&read), png_of(&shot), "the same PNG, byte for byte");
}

#[test]
fn marks_tag_each_ref_on_the_screenshot() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "k",
        "--",
        "/usr/bin/python3",
        &settings_app(),
    ]);
    let no_snapshot = d.sp_error(&["screenshot", "k", "--marks"]);
    assert_eq!(no_snapshot["field"], "marks", "{no_snapshot}");
    let shown = d.elements("k");
    let plain = d.sp_json(&["screenshot", "k"]);
    let marked = d.sp_json(&["screenshot", "k", "--marks"]);
    let decode = |v: &Value| screenpilot_desktop::decode_png(&png_of(v)).expect("a PNG");
    let (plain, marked) = (decode(&plain), decode(&marked));
    let ink =
        |f: &screenpilot_desktop::Frame| f.rgb.chunks(3).filter(|p| p == &[230, 0, 160]).count();
    assert_eq!(ink(&plain), 0);
    // Each element with a ref and a box is outlined: at least its perimeter in ink.
    let boxed = Regex::new(r"\[e\d+\].* @\d+,\d+,(\d+),(\d+)").expect("re");
    let perimeter: usize = shown
        .lines()
        .filter_map(|l| boxed.captures(l))
        .map(|c| c[1].parse::<usize>().unwrap_or(0) + c[2].parse::<usize>().unwrap_or(0))
        .sum();
    assert!(
        ink(&marked) > perimeter,
        "{} ink pixels for {perimeter}",
        ink(&marked)
    );
}

#[test]
fn waits_on_elements_return_when_the_tree_changes() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "v",
        "--",
        "/usr/bin/python3",
        &settings_app(),
    ]);
    let shown = d.elements("v");
    let hidden = ref_in(&shown, r#"check box "Show hidden files""#);
    // One client waits for the change, another makes it.
    let waiting = common::Background::spawn(d.command(&[
        "--json",
        "act",
        "v",
        "--changed",
        &hidden,
        "--timeout-ms",
        "60000",
    ]));
    let status = d.sp_json(&[
        "daemon",
        "status",
        "--until-running",
        "1",
        "--timeout-ms",
        "60000",
    ]);
    assert_eq!(status["reached"], true, "{status}");
    act(&d, "v", &[&hidden, "toggle"]);
    let out = waiting.finish();
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON answer");
    assert_eq!(answer["held"], true, "{answer}");
    assert!(
        answer["matched"]
            .as_str()
            .unwrap_or_default()
            .contains("checked"),
        "{answer}"
    );
    // A wait that does not hold is an ordinary answer, exit status 1.
    let (status, answer) = d.json_status(&[
        "act",
        "v",
        "--appears-role",
        "dialog",
        "--timeout-ms",
        "300",
    ]);
    assert_eq!(status, 1, "{answer}");
    assert_eq!(answer["held"], false, "{answer}");
}

#[test]
fn bad_refs_and_impossible_acts_are_refused_naming_why() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "x",
        "--",
        "/usr/bin/python3",
        &settings_app(),
    ]);
    d.sp_json(&[
        "desktop", "start", "--sid", "y", "--", "zenity", "--entry", "--title", "Other",
    ]);
    let before_any = d.sp_error(&["act", "x", "e1", "click"]);
    assert_eq!(before_any["field"], "ref", "{before_any}");
    let shown = d.elements("x");
    let other = d.elements("y");
    // A ref of another desktop.
    let theirs = ref_in(&other, r#"button "OK""#);
    let e = d.sp_error(&["act", "x", &theirs, "click"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("desktop 'y'"),
        "{e}"
    );
    // Text to a button; a window action on an element; nonsense.
    let apply = ref_in(&shown, r#"button "Apply""#);
    let e = d.sp_error(&["act", "x", &apply, "set", "--text", "x"]);
    assert_eq!(e["code"], "element_unavailable", "{e}");
    let e = d.sp_error(&["act", "x", &apply, "minimize"]);
    assert_eq!(e["field"], "ref", "{e}");
    let reset = ref_in(&shown, r#"button "Reset" \[e\d+\] disabled"#);
    let e = d.sp_error(&["act", "x", &reset, "click"]);
    assert_eq!(e["code"], "element_unavailable", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("disabled"),
        "{e}"
    );
    let e = d.sp_error(&["act", "x", &apply, "wiggle"]);
    assert_eq!(e["field"], "do", "{e}");
    let e = d.sp_error(&["act", "x", "e999999", "click"]);
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("never handed out"),
        "{e}"
    );
    let e = d.sp_error(&["act", "x", "--appears-name", "(", "--timeout-ms", "10"]);
    assert_eq!(e["field"], "until.appears", "{e}");
    // A window that is gone: its ref, and the element refs of its window, go with it.
    let window = ref_in(&shown, r#"^window "Preferences""#);
    act(&d, "x", &[&window, "close"]);
    let e = d.sp_error(&["act", "x", &window, "raise"]);
    assert_eq!(e["code"], "element_gone", "{e}");
    let e = d.sp_error(&["act", "x", &apply, "click"]);
    assert_eq!(e["code"], "element_gone", "{e}");
    // Acting on a terminal names the sid.
    d.spawn_bash("t");
    let e = d.sp_error(&["act", "t", "e1", "click"]);
    assert_eq!(e["field"], "sid", "{e}");
}

#[test]
fn a_qt_form_is_read_and_driven_by_refs_and_a_closed_popups_items_are_not_clicked() {
    let d = Daemon::new();
    d.start_qt_form("q");
    let shown = d.elements("q");
    assert!(!shown.contains("no-tree"), "{shown}");
    let name = ref_in(&shown, r#"^\s*text "Name" .*editable"#);
    let subscribe = ref_in(&shown, r#"check box "Subscribe" \[e\d+\] unchecked"#);
    let colour = ref_in(&shown, r#"combo box "Colour" \[e\d+\] ="Red""#);
    act(&d, "q", &[&name, "set", "--text", "Ada"]);
    let toggled = act(&d, "q", &[&subscribe, "toggle"]);
    let after = toggled["elements"].as_str().unwrap_or_default();
    ref_in(after, r#"check box "Subscribe" \[e\d+\] checked"#);
    act(
        &d,
        "q",
        &["combo box \"Colour\"", "click", "--appears-name", "^Blue$"],
    );
    let chosen = act(
        &d,
        "q",
        &["list item \"Blue\"", "click", "--changed", &colour],
    );
    let after = d.elements("q");
    ref_in(&after, r#"combo box "Colour" \[e\d+\] ="Blue""#);
    // The popup closed; Qt still lists its items, showing, at their old boxes (Qt 5.15). A click
    // there would land on the form below (on Submit): refused, and nothing is sent.
    let e = d.sp_error(&["act", "q", "list item \"Green\"", "click"]);
    let why = e["message"].as_str().unwrap_or_default();
    match e["code"].as_str() {
        Some("element_unavailable") => assert!(why.contains("not shown"), "{e} after {chosen}"),
        Some("element_gone") => {}
        _ => panic!("{e} after {chosen}"),
    }
    act(&d, "q", &["button \"Submit\"", "click"]);
    let log = output_at_exit(&d, "q");
    let submitted: Vec<_> = log.lines().filter(|l| l.starts_with("submitted")).collect();
    assert_eq!(
        submitted,
        ["submitted name=Ada subscribe=true colour=Blue"],
        "{log}"
    );
}

/// The processes on this machine, other than screenpilot's own, whose environment names `needle`
/// (the daemon's directory, which every process a desktop starts inherits), with their state and
/// command name.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue; // gone meanwhile, or a zombie (whose environment is empty)
        };
        if !String::from_utf8_lossy(&environ).contains(needle) {
            continue;
        }
        // The daemon's own processes (itself, its guard) are screenpilot.
        let exe = std::fs::read_link(entry.path().join("exe")).unwrap_or_default();
        if exe.file_name() == std::path::Path::new(common::binary()).file_name() {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        found.push(
            stat.split_whitespace()
                .take(4)
                .collect::<Vec<_>>()
                .join(" "),
        );
    }
    found
}

/// The daemon's children that are zombies, from /proc.
fn zombie_children(parent: i32) -> Vec<String> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.first() == Some(&"Z") && fields.get(1) == Some(&parent.to_string().as_str()) {
            found.push(
                stat.split_whitespace()
                    .take(4)
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        }
    }
    found
}

#[test]
fn twenty_desktops_started_and_closed_leave_no_zombie_and_no_process() {
    let d = Daemon::new();
    let daemon = d.daemon_pid();
    let dir = d.path().to_string_lossy().into_owned();
    for n in 0..20 {
        let sid = format!("z{n}");
        // A program that leaves a child of its own behind, and a snapshot that starts AT-SPI (the
        // session bus activates its launcher, which starts a bus and the registry).
        d.sp_json(&[
            "desktop",
            "start",
            "--sid",
            &sid,
            "--",
            "sh",
            "-c",
            "sleep 600 & exec xterm",
        ]);
        let snap = d.sp_json(&["snapshot", &sid]);
        assert!(snap["elements"].is_string(), "{snap}");
        d.sp_json(&["close", &sid]);
    }
    let zombies = zombie_children(daemon);
    assert!(
        zombies.is_empty(),
        "zombie children of the daemon: {zombies:?}"
    );
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left behind: {left:?}");
}

/// Wait (on the tree's events) until `role "name"` is shown on desktop `sid`; the answer.
fn wait_for_element(d: &Daemon, sid: &str, role: &str, name: &str) -> Value {
    let ms = LONG_MS.to_string();
    let held = act(
        d,
        sid,
        &[
            "--appears-role",
            role,
            "--appears-name",
            name,
            "--timeout-ms",
            &ms,
        ],
    );
    assert_eq!(held["held"], true, "{role} {name:?} never appeared: {held}");
    held
}

#[test]
fn a_gtk4_calculator_is_read_and_driven_by_refs() {
    let d = Daemon::new();
    let started = d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "calc",
        "--",
        "gnome-calculator",
    ]);
    // Start answers once the window is painted: GTK 4 maps it a while before its first frame,
    // which was a black box in a screenshot taken at once.
    let shot = d.sp_json(&["computer", "calc", "screenshot", "--full-size"]);
    let frame = screenpilot_desktop::decode_png(&common::png_of(&shot)).expect("a PNG");
    let at = |key: &str| started["window"][key].as_u64().expect("the window's box") as u32;
    let window = frame.crop(at("x"), at("y"), at("width"), at("height"));
    let colours: std::collections::HashSet<&[u8]> = window.rgb.chunks_exact(3).collect();
    assert!(
        colours.len() > 10,
        "the calculator's window is not painted: {started}"
    );
    // GTK 4.8 marks only its window as showing: the wait sees its buttons all the same.
    wait_for_element(&d, "calc", "button", "^=$");
    let shown = d.elements("calc");
    for key in ["1", "2", "×", "3", "="] {
        let line = format!(r#"button "{}" \[e\d+\]"#, regex::escape(key));
        let key_ref = ref_in(&shown, &line);
        let done = act(&d, "calc", &[&key_ref, "click"]);
        assert_eq!(done["done"], "action click", "{done}");
    }
    let after = d.elements("calc");
    assert!(
        Regex::new(r#"text \[e\d+\] focused editable ="36""#)
            .expect("re")
            .is_match(&after),
        "12×3 did not give 36: {after}"
    );
    // Boxes are on the screen, inside the window (GTK 4 gives them relative to it).
    let window = Regex::new(r#"window "Calculator" \[e\d+\] focused @(\d+),(\d+),(\d+),(\d+)"#)
        .expect("re")
        .captures(&after)
        .map(|c| {
            (1..5)
                .map(|i| c[i].parse::<i32>().expect("n"))
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|| panic!("no window line in {after}"));
    let equals = Regex::new(r#"button "=" \[e\d+\] @(\d+),(\d+),"#)
        .expect("re")
        .captures(&after)
        .map(|c| {
            (
                c[1].parse::<i32>().expect("x"),
                c[2].parse::<i32>().expect("y"),
            )
        })
        .unwrap_or_else(|| panic!("no = in {after}"));
    assert!(
        equals.0 > window[0]
            && equals.0 < window[0] + window[2]
            && equals.1 > window[1]
            && equals.1 < window[1] + window[3],
        "the = button's box is not inside its window: {after}"
    );
}

#[test]
fn a_gtk4_form_is_filled_and_sent_by_refs() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "g4",
        "--",
        "/usr/bin/python3",
        &common::fixture("gtk4/form.py"),
    ]);
    wait_for_element(&d, "g4", "button", "^Send$");
    let shown = d.elements("g4");
    let name = ref_in(&shown, r#"^\s*text "Name""#);
    act(&d, "g4", &[&name, "set", "--text", "Grace Hopper"]);
    let news = ref_in(&shown, r#"check box "Newsletter""#);
    let toggled = act(&d, "g4", &[&news, "toggle"]);
    let after = toggled["elements"].as_str().unwrap_or_default();
    assert!(
        Regex::new(&format!(r#"check box "Newsletter" \[{news}\].* checked"#))
            .expect("re")
            .is_match(after),
        "{after}"
    );
    assert!(after.contains("=\"Grace Hopper\""), "{after}");
    // One part read alone (GTK 4 marks only its window showing, and boxes are the window's): the
    // same line, at the same place.
    let line = Regex::new(r#"check box "Newsletter" .*"#).expect("re");
    let whole = line.find(after).map(|m| m.as_str().to_owned());
    let part = d.sp_json(&["snapshot", "g4", "--ref", &news]);
    let part = part["elements"].as_str().unwrap_or_default();
    assert_eq!(
        line.find(part).map(|m| m.as_str()),
        whole.as_deref(),
        "{part}"
    );
    act(&d, "g4", &["button \"Send\"", "click"]);
    let log = output_at_exit(&d, "g4");
    assert!(
        printed(&log).contains(&"Grace Hopper|on".to_owned()),
        "{log}"
    );
}

/// The title of every top-level window on `display`, read by xprop (a reader beside screenpilot).
fn titles_by_xprop(display: &str, xauthority: &str) -> String {
    let out = std::process::Command::new("xprop")
        .args(["-display", display, "-root", "_NET_CLIENT_LIST"])
        .env("XAUTHORITY", xauthority)
        .output()
        .expect("xprop");
    let list = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut titles = String::new();
    for id in Regex::new(r"0x[0-9a-f]+").expect("re").find_iter(&list) {
        let out = std::process::Command::new("xprop")
            .args(["-display", display, "-id", id.as_str(), "_NET_WM_NAME"])
            .env("XAUTHORITY", xauthority)
            .output()
            .expect("xprop");
        titles.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    titles
}

#[test]
fn a_chromium_page_is_read_and_driven_by_refs_without_its_accessibility_flag() {
    let d = Daemon::new();
    let profile = d.path().join("chromium-profile");
    let page = format!("file://{}", common::fixture("web/form.html"));
    let profile = format!("--user-data-dir={}", profile.display());
    web_form_is_read_and_driven_by_refs(
        &d,
        &[
            "chromium",
            // Root needs it; nothing here asks for accessibility (no --force-renderer-accessibility).
            "--no-sandbox",
            "--no-first-run",
            "--no-default-browser-check",
            &profile,
            &page,
        ],
        "type",
    );
}

/// Firefox ESR on the same form: its paragraph's text is held only by the Text interface, and its
/// fields answer `set` with success and keep their text (typed instead).
#[test]
fn a_firefox_page_is_read_and_driven_by_refs() {
    let d = Daemon::new();
    let profile = d.path().join("firefox-profile");
    std::fs::create_dir_all(&profile).expect("a profile directory");
    std::fs::copy(common::fixture("firefox/user.js"), profile.join("user.js")).expect("user.js");
    let page = format!("file://{}", common::fixture("web/form.html"));
    let profile = profile.display().to_string();
    web_form_is_read_and_driven_by_refs(
        &d,
        &["firefox-esr", "-profile", &profile, "-no-remote", &page],
        "set",
    );
}

/// Start `browser` on the order form in desktop "web", fill it by refs (the name with `enter`:
/// type or set), choose Medium in its select through the list, place the order, read the result
/// from the page, and check it outside screenpilot (the window's title, read by xprop).
fn web_form_is_read_and_driven_by_refs(d: &Daemon, browser: &[&str], enter: &str) {
    let mut start = vec!["desktop", "start", "--sid", "web", "--"];
    start.extend_from_slice(browser);
    let started = d.sp_json(&start);
    // Its page is read: the snapshot wakes the browser's tree, and the wait sees the button.
    wait_for_element(d, "web", "button", "^Place order$");
    let shown = d.elements("web");
    let name = ref_in(&shown, r#"(entry|text) "Name""#);
    act(d, "web", &[&name, enter, "--text", "Ada"]);
    // The select reads as its label with its choice as the value, and is chosen in by its list.
    let size = ref_in(&shown, r#"combo box "Size" .*="Small""#);
    let opened = act(d, "web", &[&size, "click", "--appears-name", "^Medium$"]);
    assert_eq!(opened["held"], true, "{opened}");
    let chosen = act(d, "web", &["menu item \"Medium\"", "click"]);
    let after = chosen["elements"].as_str().unwrap_or_default();
    assert!(
        Regex::new(r#"combo box "Size" .*="Medium""#)
            .expect("re")
            .is_match(after),
        "{after}"
    );
    act(d, "web", &["button \"Place order\"", "click"]);
    let ms = LONG_MS.to_string();
    let read = act(
        d,
        "web",
        &[
            "--appears-name",
            "^Ordered Medium for Ada$",
            "--timeout-ms",
            &ms,
        ],
    );
    assert_eq!(read["held"], true, "the result was not read: {read}");
    // The page saw it too: its title, read by xprop.
    let display = started["display"].as_str().expect("display");
    let xauthority = started["xauthority"].as_str().expect("xauthority");
    let titles = titles_by_xprop(display, xauthority);
    assert!(titles.contains("Ordered Medium for Ada"), "{titles}");
}

/// A field that answers `set` with success and keeps its text (as Gecko's web fields do): the value
/// read back tells, and the text is typed instead; the program's own output says what it got.
#[test]
fn a_set_that_the_field_ignores_is_typed_instead() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "st",
        "--",
        "/usr/bin/python3",
        &common::fixture("gtk/stubborn.py"),
    ]);
    let shown = d.elements("st");
    let name = ref_in(&shown, r#"text "Name" \[e\d+\]"#);
    let set = act(&d, "st", &[&name, "set", "--text", "Ada"]);
    let how = set.to_string();
    assert!(
        how.contains("typed"),
        "set did not fall back to typing: {set}"
    );
    act(&d, "st", &["button \"OK\"", "click"]);
    let log = output_at_exit(&d, "st");
    // (PyGObject warns once about the refused insert's position; the program's line is its own.)
    let said: Vec<String> = printed(&log)
        .into_iter()
        .filter(|l| l.starts_with("name="))
        .collect();
    assert_eq!(said, ["name=Ada"], "{log}");
}

/// The box `@x,y,w,h` on the line of `elements` that `line` matches.
fn box_in(elements: &str, line: &str) -> (i64, i64, i64, i64) {
    let pattern = Regex::new(line).expect("a regex");
    let found = elements
        .lines()
        .find(|l| pattern.is_match(l))
        .unwrap_or_else(|| panic!("no line matches {line:?} in:\n{elements}"));
    let c = Regex::new(r"@(-?\d+),(-?\d+),(\d+),(\d+)")
        .expect("a regex")
        .captures(found)
        .unwrap_or_else(|| panic!("no box on {found:?}"));
    let n = |i: usize| c[i].parse::<i64>().expect("a number");
    (n(1), n(2), n(3), n(4))
}

#[test]
fn a_tk_form_without_a_tree_is_read_from_pixels_and_driven_by_what_was_read() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "tk",
        "--",
        "/usr/bin/python3",
        &common::fixture("tk/form.py"),
    ]);
    let shown = d.elements("tk");
    assert!(
        shown.contains(r#"window "Tk Form""#) && shown.contains("no-tree"),
        "{shown}"
    );
    for label in [
        "Name:",
        "Email address",
        "Remember me",
        "Nothing saved yet",
        "Save",
        "Cancel",
        "Apply changes",
    ] {
        // A field's border beside a label may still add a mark to it ("Email address.").
        let line = format!(
            r#"text "[^"]*{}[.,]?" \[e\d+\] ocr @"#,
            regex::escape(label)
        );
        ref_in(&shown, &line);
    }
    // A second snapshot of the same pixels is not read again, and reads the same.
    assert_eq!(d.elements("tk"), shown);
    let remember = ref_in(&shown, r#"text "[^"]*Remember me" \[e\d+\] ocr"#);
    act(&d, "tk", &[&remember, "click"]);
    let saved = act(&d, "tk", &[r#"text "Save""#, "click"]);
    let after = saved["elements"].as_str().unwrap_or_default();
    assert!(after.contains("Saved remember=1"), "{saved}");
    // Clicked outside act, Cancel changes the status line: its ref from the snapshot before no
    // longer looks as it was read, and is refused without a click.
    let latest = d.elements("tk");
    let status = ref_in(&latest, r#"text "Saved remember=1""#);
    let (x, y, w, h) = box_in(&latest, r#"text "Cancel""#);
    d.sp_json(&[
        "computer",
        "tk",
        "click",
        &(x + w / 2).to_string(),
        &(y + h / 2).to_string(),
    ]);
    let e = d.sp_error(&["act", "tk", &status, "click"]);
    assert_eq!(e["code"], "element_gone", "{e}");
    assert!(
        e["message"]
            .as_str()
            .is_some_and(|m| m.contains("no longer looks") && m.contains("nothing was clicked")),
        "{e}"
    );
    // OCR is asked of whole desktop windows only.
    d.spawn_bash("sh");
    let e = d.sp_error(&["snapshot", "sh", "--ocr"]);
    assert_eq!(e["field"], "ocr", "{e}");
    let e = d.sp_error(&["snapshot", "tk", "--ocr", "--ref", "e1"]);
    assert_eq!(e["field"], "ocr", "{e}");
    // What was read from pixels takes clicks only.
    let e = d.sp_error(&["act", "tk", r#"text "Apply changes""#, "set", "--text", "x"]);
    assert_eq!(e["field"], "do", "{e}");
    act(&d, "tk", &[r#"text "Apply changes""#, "click"]);
    let window = ref_in(&d.elements("tk"), r#"window "Tk Form""#);
    act(&d, "tk", &[&window, "close"]);
    assert_eq!(
        printed(&output_at_exit(&d, "tk")),
        ["saved remember=1", "cancelled", "applied"]
    );
}

#[test]
fn an_xterms_lines_are_read_from_pixels() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "xt",
        "--",
        "xterm",
        "-e",
        "sh",
        "-c",
        "printf 'screenpilot reads 42 from pixels\\n'; exec sleep 600",
    ]);
    // The window is painted when start answers, but its line may come a moment later.
    let ms = LONG_MS.to_string();
    d.sp_json(&[
        "wait",
        "xt",
        "--ready",
        "--stable-ms",
        "300",
        "--timeout-ms",
        &ms,
    ]);
    let shown = d.elements("xt");
    ref_in(
        &shown,
        r#"text "screenpilot reads 42 from pixels" \[e\d+\] ocr @"#,
    );
}

/// A Swing form, through the ATK wrapper the desktop loads into every JVM (no flag on the command
/// line): read, filled and sent by refs; the program prints what it got.
#[test]
fn a_swing_form_is_read_and_driven_by_refs() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "sw",
        "--",
        "java",
        &common::fixture("swing/Form.java"),
    ]);
    wait_for_element(&d, "sw", "push button", "^Send$");
    let shown = d.elements("sw");
    let name = ref_in(&shown, r#"text "Name" .*editable"#);
    act(&d, "sw", &[&name, "set", "--text", "Ada"]);
    let subscribe = ref_in(&shown, r#"check box "Subscribe" \[e\d+\] unchecked"#);
    act(&d, "sw", &[&subscribe, "toggle"]);
    act(&d, "sw", &["button \"Send\"", "click"]);
    let sent = wait_for_element(&d, "sw", "label", "^Sent$");
    assert_eq!(sent["held"], true, "{sent}");
    let window = ref_in(&d.elements("sw"), r#"window "Swing Form""#);
    act(&d, "sw", &[&window, "close"]);
    let printed = printed(&output_at_exit(&d, "sw"));
    assert!(
        printed
            .iter()
            .any(|l| l == "sent Ada subscribe=true colour=Red"),
        "{printed:?}"
    );
}

/// LibreOffice Writer: text typed into its document by ref, its status bar read (fields whose
/// text only the Text interface holds), and the document saved through GTK's file chooser; the
/// saved file holds the text.
#[test]
fn a_libreoffice_document_is_typed_into_and_saved_by_refs() {
    let d = Daemon::new();
    let profile = d.path().join("lo-profile");
    std::fs::create_dir_all(profile.join("user")).expect("a profile");
    std::fs::copy(
        common::fixture("libreoffice/registrymodifications.xcu"),
        profile.join("user/registrymodifications.xcu"),
    )
    .expect("the profile's settings");
    let installation = format!("-env:UserInstallation=file://{}", profile.display());
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "lo",
        "--",
        "soffice",
        "--writer",
        "--norestore",
        &installation,
    ]);
    // Its splash comes first; the document's window after it.
    let ms = LONG_MS.to_string();
    let writer = d.sp_json(&[
        "wait",
        "lo",
        "--regex",
        "LibreOffice Writer",
        "--timeout-ms",
        &ms,
    ]);
    assert_eq!(writer["matched"], true, "{writer}");
    let page = wait_for_element(&d, "lo", "label", "^Page 1 of 1$");
    let shown = page["elements"].as_str().unwrap_or_default();
    let paragraph = ref_in(shown, r#"paragraph \[e\d+\] focused editable"#);
    act(
        &d,
        "lo",
        &[&paragraph, "type", "--text", "Hello from screenpilot"],
    );
    // The status bar counts the words once it has seen them.
    wait_for_element(&d, "lo", "label", "^3 words, 22 characters$");
    d.sp_json(&["computer", "lo", "keypress", "ctrl+s"]);
    let chooser = wait_for_element(&d, "lo", "file chooser", "^Save$");
    let dialog = chooser["elements"].as_str().unwrap_or_default();
    let file = d.path().join("note.odt");
    let file_name = file.display().to_string();
    let name = ref_in(dialog, r#"text "Name:" \[e\d+\] focused editable"#);
    act(&d, "lo", &[&name, "set", "--text", &file_name]);
    // The dialog's Save, listed first (the focused window's), not the toolbar's.
    let save = ref_in(dialog, r#"button "Save" \[e\d+\]"#);
    act(&d, "lo", &[&save, "click"]);
    let saved = d.sp_json(&["wait", "lo", "--regex", "note.odt", "--timeout-ms", &ms]);
    assert_eq!(saved["matched"], true, "{saved}");
    // The document, as saved: its content.xml holds the text.
    let unzip = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('content.xml').decode())",
            &file_name,
        ])
        .output()
        .expect("python3 reads the saved document");
    let content = String::from_utf8_lossy(&unzip.stdout);
    assert!(content.contains("Hello from screenpilot"), "{content}");
}

/// Asked for, OCR reads a window that has a tree too: its lines come under the tree's.
#[test]
fn ocr_on_request_reads_a_window_that_has_a_tree() {
    let d = Daemon::new();
    d.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "z",
        "--",
        "zenity",
        "--entry",
        "--title",
        "Pixels",
        "--text",
        "Your favourite colour",
    ]);
    let plain = d.elements("z");
    assert!(!plain.contains(" ocr "), "{plain}");
    let snap = d.sp_json(&["snapshot", "z", "--ocr"]);
    let read = snap["elements"].as_str().unwrap_or_default();
    ref_in(
        read,
        r#"text "Your favourite colour" \[e\d+\] focused editable"#,
    );
    ref_in(read, r#"text "Your favourite colour" \[e\d+\] ocr"#);
    ref_in(read, r#"text "OK" \[e\d+\] ocr"#);
}
