//! `textual_run` end to end: the real binary, a real daemon, real Textual apps on real ptys. Each test
//! copies its fixture app into a private directory (screenshots are written beside the app) and runs
//! its own daemon there, stopped when the test ends.
//!
//! The interpreter is `$SCREENPILOT_TEST_PYTHON`, else `<repo>/.venv/bin/python` (scripts/test.sh makes
//! it). A missing one fails the test: Textual support is part of the product, not an optional extra.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

/// The interpreter with Textual installed.
fn python() -> String {
    let python = std::env::var("SCREENPILOT_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/../../.venv/bin/python", env!("CARGO_MANIFEST_DIR")));
    let ok = Command::new(&python)
        .args(["-c", "import textual"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "no Python with Textual at {python}: run scripts/test.sh (it creates .venv with textual), \
         or set SCREENPILOT_TEST_PYTHON to an interpreter that has it"
    );
    python
}

/// One test's daemon and scratch directory; dropping it stops the daemon and removes the directory.
struct Harness {
    dir: PathBuf,
    python: String,
}

impl Harness {
    fn new(name: &str) -> Harness {
        let dir = std::env::temp_dir().join(format!("sp-tx-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the test directory");
        Harness {
            dir,
            python: python(),
        }
    }

    /// Copy a fixture app into the test directory; returns its path.
    fn app(&self, fixture: &str) -> String {
        let from = format!(
            "{}/tests/fixtures/textual/{fixture}",
            env!("CARGO_MANIFEST_DIR")
        );
        let to = self.dir.join(fixture);
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {from}: {e}"));
        to.to_string_lossy().into_owned()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_screenpilot"));
        cmd.args(args)
            .env("SCREENPILOT_DIR", &self.dir)
            .env_remove("SCREENPILOT_MAX_SESSIONS")
            .current_dir(&self.dir)
            .stdin(Stdio::null());
        cmd
    }

    /// `screenpilot --json ARGS`: (exit status, progress updates, final object).
    fn run(&self, args: &[&str]) -> (i32, Vec<Value>, Value) {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self
            .command(&full)
            .output()
            .unwrap_or_else(|e| panic!("run screenpilot {args:?}: {e}"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut lines: Vec<Value> = stdout
            .lines()
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|e| {
                    panic!(
                        "not a JSON line ({e}): {line}\nstderr: {}",
                        String::from_utf8_lossy(&out.stderr)
                    )
                })
            })
            .collect();
        let last = lines.pop().unwrap_or_else(|| {
            panic!(
                "screenpilot {args:?} printed nothing; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let progress = lines.into_iter().map(|l| l["progress"].clone()).collect();
        (out.status.code().unwrap_or(-1), progress, last)
    }

    /// A `textual` run that must succeed; returns (progress, result).
    fn textual(&self, args: &[&str]) -> (Vec<Value>, Value) {
        let mut full = vec!["textual", "--python", &self.python];
        full.extend_from_slice(args);
        let (status, progress, result) = self.run(&full);
        assert_eq!(status, 0, "screenpilot {full:?} failed: {result}");
        assert_eq!(result["ok"], true, "{result}");
        (progress, result)
    }

    /// A `textual` run that must fail; returns the error object.
    fn textual_error(&self, args: &[&str]) -> Value {
        let mut full = vec!["textual", "--python", &self.python];
        full.extend_from_slice(args);
        let (status, _, result) = self.run(&full);
        assert_eq!(status, 2, "screenpilot {full:?} should fail: {result}");
        assert_eq!(result["ok"], false, "{result}");
        result["error"].clone()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self
            .command(&["daemon", "stop"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The state of the first widget `selector` matched in a result's `query`.
fn queried<'a>(result: &'a Value, selector: &str) -> &'a Value {
    let entry = result["query"]
        .as_array()
        .and_then(|q| q.iter().find(|e| e["selector"] == selector))
        .unwrap_or_else(|| panic!("no query result for {selector}: {result}"));
    &entry["widgets"][0]
}

/// Find a widget by id in a `tree` result.
fn find_in_tree<'a>(node: &'a Value, id: &str) -> Option<&'a Value> {
    if node["id"] == id {
        return Some(node);
    }
    node["children"]
        .as_array()?
        .iter()
        .find_map(|child| find_in_tree(child, id))
}

/// Check that a PNG decodes: signature, IHDR, and the inflated pixel data has exactly the size the
/// header promises (decoded by Python's zlib, the reference inflater).
fn assert_png_decodes(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
        "{} is not a PNG",
        path.display()
    );
    let script = r#"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    length, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + length]
    if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]:
        sys.exit("bad CRC in " + kind.decode())
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + length
width, height, depth, colour = ihdr[:4]
channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colour]
raw = zlib.decompress(idat)
expected = height * (1 + width * channels * depth // 8)
if len(raw) != expected:
    sys.exit(f"pixel data is {len(raw)} bytes, expected {expected}")
print(width, height)
"#;
    let out = Command::new(python())
        .args(["-c", script])
        .arg(path)
        .output()
        .expect("run python to decode the PNG");
    assert!(
        out.status.success(),
        "{} does not decode: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn counter_one_shot_presses_clicks_pauses_and_reports_tree_query_and_screenshots() {
    let h = Harness::new("counter");
    let app = h.app("counter.py");
    let actions = json!([
        {"press": "tab"},
        {"click": "#inc"},
        {"pause": 0.6},
        {"click": "#inc"},
        {"screenshot": true}
    ])
    .to_string();
    let (progress, result) = h.textual(&[
        &app,
        "--actions",
        &actions,
        "--tree",
        "--query",
        "#label",
        "--query",
        "#inc",
        "--screenshot",
    ]);

    // A screen update after every action, in order, the last one showing both presses.
    assert_eq!(progress.len(), 5, "{progress:?}");
    for (i, update) in progress.iter().enumerate() {
        assert_eq!(update["step"], i + 1);
        assert_eq!(update["of"], 5);
    }
    assert_eq!(progress[1]["action"], json!({"click": "#inc"}));
    assert!(progress[1]["text"].as_str().unwrap().contains("count: 1"));
    assert!(progress[4]["text"].as_str().unwrap().contains("count: 2"));
    // The text keeps every row; the message (what MCP clients show) stops at the last line of text.
    assert_eq!(
        progress[1]["text"].as_str().unwrap().split('\n').count(),
        25
    );
    let message = progress[1]["message"].as_str().unwrap();
    assert!(
        message.starts_with("2/5 click #inc\ncount: 1\n"),
        "{message}"
    );
    assert!(
        message.ends_with("Increment\n▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁▁"),
        "{message:?}"
    );

    // The screen comes from our emulator: the label and the button as a person sees them.
    let text = result["text"].as_str().unwrap();
    assert!(text.starts_with("count: 2"), "{text}");
    assert!(text.contains("Increment"), "{text}");
    assert_eq!(
        (result["cols"].as_u64(), result["rows"].as_u64()),
        (Some(80), Some(25))
    );

    assert_eq!(queried(&result, "#label")["content"], "count: 2");
    let button = queried(&result, "#inc");
    assert_eq!(button["label"], "Increment");
    assert_eq!(button["type"], "Button");
    assert_eq!(button["focused"], true);

    let tree = &result["tree"];
    let inc = find_in_tree(&tree["screen"], "inc").expect("the button is in the tree");
    assert_eq!(inc["type"], "Button");
    assert_eq!(inc["visible"], true);
    assert_eq!(inc["disabled"], false);
    assert_eq!(inc["region"].as_array().map(Vec::len), Some(4));
    assert_eq!(tree["focused"], "Button#inc");

    // One-shot: the app was stopped, cleanly, and its files are beside the app.
    let details = &result["details"];
    assert_eq!(result["alive"], false);
    assert_eq!(details["exit"]["return_code"], 0, "{details}");
    assert_eq!(details["exit"]["exit_code"], 0, "{details}");
    assert_eq!(
        details["textual_version"]
            .as_str()
            .map(|v| v.starts_with('8')),
        Some(true)
    );
    assert_eq!(details["size"], json!([80, 25]));
    let shots = details["screenshots"].as_array().expect("screenshots");
    assert_eq!(shots.len(), 2, "the action's and the final one: {details}");
    for shot in shots {
        let svg = Path::new(shot["svg"].as_str().unwrap());
        let png = Path::new(shot["png"].as_str().unwrap());
        assert_eq!(svg.parent(), Path::new(&app).parent());
        let svg_text = std::fs::read_to_string(svg).expect("the SVG exists");
        assert!(svg_text.starts_with("<svg") || svg_text.starts_with("<?xml"));
        assert!(svg_text.contains("Increment"));
        assert_png_decodes(png);
    }
    assert_eq!(details["screenshot"], shots[1]["svg"]);
    assert_eq!(details["warnings"], Value::Null, "{details}");

    // Nothing is left running.
    let (_, _, list) = h.run(&["list"]);
    assert_eq!(list["sessions"], json!([]), "{list}");
}

#[test]
fn one_shot_returns_the_apps_exit_value() {
    let h = Harness::new("exit");
    let app = h.app("counter.py");
    let actions = json!([{"click": "#inc"}, {"press": "q"}]).to_string();
    let (progress, result) = h.textual(&[&app, "--actions", &actions]);
    assert_eq!(progress.len(), 2);
    let details = &result["details"];
    assert_eq!(details["exit_value"], 1, "{details}");
    assert_eq!(details["exit"]["return_code"], 0, "{details}");
    assert_eq!(
        details["warnings"],
        Value::Null,
        "an exit is not a warning: {details}"
    );

    // What could not be taken of an app that is gone is said, not silently left out.
    let (_, result) = h.textual(&[
        &app,
        "--actions",
        &actions,
        "--screenshot",
        "--tree",
        "--query",
        "#label",
    ]);
    let details = &result["details"];
    assert_eq!(details["exit_value"], 1, "{details}");
    assert_eq!(
        details["warnings"],
        json!(["screenshot, tree, query: not taken, the app had exited"]),
        "{details}"
    );
    assert_eq!(result["alive"], false);
    assert_eq!(result["exit_code"], 0);
}

#[test]
fn input_form_takes_typed_text_and_reports_values() {
    let h = Harness::new("form");
    let app = h.app("form.py");
    let actions = json!([
        {"press": ["A", "d", "a", "space", "L", "!"]},
        {"press": ["backspace", "home", "M", "s", "space", "end", "."]},
        {"press": "tab"},
        {"press": ["a", "d", "a", "@", "x", ".", "o", "r", "g"]},
        {"click": "#subscribe"},
        {"click": "#submit"}
    ])
    .to_string();
    let (_, result) = h.textual(&[
        &app,
        "--actions",
        &actions,
        "--query",
        "#name",
        "--query",
        "#email",
        "--query",
        "#subscribe",
        "--query",
        "#result",
    ]);
    assert_eq!(queried(&result, "#name")["value"], "Ms Ada L.");
    assert_eq!(queried(&result, "#email")["value"], "ada@x.org");
    assert_eq!(queried(&result, "#email")["type"], "Input");
    assert_eq!(queried(&result, "#subscribe")["value"], true);
    let expected = "submitted Ms Ada L. <ada@x.org> subscribed=True";
    assert_eq!(queried(&result, "#result")["content"], expected);
    assert!(
        result["text"].as_str().unwrap().contains(expected),
        "{}",
        result["text"]
    );
}

#[test]
fn data_table_reports_rows_columns_and_cursor_after_keys() {
    let h = Harness::new("table");
    let app = h.app("table.py");
    let (_, before) = h.textual(&[&app, "--session", "planets", "--query", "#planets"]);
    let table = queried(&before, "#planets");
    assert_eq!(table["row_count"], 6, "{table}");
    assert_eq!(table["column_count"], 3, "{table}");
    assert_eq!(table["cursor_row"], 0, "{table}");
    assert!(before["text"].as_str().unwrap().contains("Jupiter"));

    let actions = json!([{"press": ["down", "down", "down"]}, {"press": "up"}]).to_string();
    let (_, after) = h.textual(&[
        "--session",
        "planets",
        "--actions",
        &actions,
        "--query",
        "#planets",
    ]);
    let table = queried(&after, "#planets");
    assert_eq!(table["cursor_row"], 2, "{table}");
    assert_eq!(table["cursor_coordinate"], json!([2, 0]), "{table}");
    h.textual(&["--session", "planets", "--close"]);
}

#[test]
fn a_modal_screen_covering_a_button_refuses_the_click_until_dismissed() {
    let h = Harness::new("modal");
    let app = h.app("modal.py");
    h.textual(&[&app, "--session", "modal"]);

    let refused = json!([{"click": "#delete"}]).to_string();
    let error = h.textual_error(&["--session", "modal", "--actions", &refused]);
    assert_eq!(error["code"], "widget_covered", "{error}");
    assert_eq!(error["field"], "actions[0]", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("ConfirmScreen"), "{message}");
    assert!(message.contains("#delete"), "{message}");

    // The refused click changed nothing; dismissing the modal uncovers the button.
    let actions = json!([{"click": "#cancel"}, {"click": "#delete"}]).to_string();
    let (_, result) = h.textual(&[
        "--session",
        "modal",
        "--actions",
        &actions,
        "--query",
        "#status",
    ]);
    assert_eq!(queried(&result, "#status")["content"], "deleted: yes");
    h.textual(&["--session", "modal", "--close"]);
}

#[test]
fn hidden_disabled_off_screen_and_absent_widgets_refuse_clicks() {
    let h = Harness::new("hidden");
    let app = h.app("hidden.py");
    h.textual(&[&app, "--session", "hid"]);
    for (selector, code, words) in [
        ("#secret", "widget_hidden", "display: none"),
        ("#ghost", "widget_hidden", "visibility: hidden"),
        ("#off", "widget_disabled", "disabled"),
        ("#below", "widget_off_screen", "out of view"),
        ("#nowhere", "widget_absent", "#visible"),
        ("#under", "widget_covered", "covered by Static#cover"),
    ] {
        let actions = json!([{"click": selector}]).to_string();
        let error = h.textual_error(&["--session", "hid", "--actions", &actions]);
        assert_eq!(error["code"], code, "{selector}: {error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains(words), "{selector}: {message}");
    }
    let hover = json!([{"click": "#visible"}, {"hover": "#visible"}]).to_string();
    h.textual(&["--session", "hid", "--actions", &hover]);
    h.textual(&["--session", "hid", "--close"]);
}

#[test]
fn a_session_is_opened_acted_on_twice_and_closed() {
    let h = Harness::new("session");
    let app = h.app("counter.py");
    let tab = json!([{"press": "tab"}]).to_string();
    let (_, opened) = h.textual(&[
        &app,
        "--session",
        "counter",
        "--actions",
        &tab,
        "--size",
        "60x20",
    ]);
    assert_eq!(opened["sid"], "counter");
    assert_eq!(opened["alive"], true);
    assert_eq!(opened["details"]["exit"], Value::Null);
    let again = h.textual_error(&[&app, "--session", "counter"]);
    assert_eq!(again["code"], "duplicate_session", "{again}");
    assert_eq!(again["field"], "session", "{again}");
    assert_eq!(
        (opened["cols"].as_u64(), opened["rows"].as_u64()),
        (Some(60), Some(20))
    );

    let click = json!([{"click": "#inc"}]).to_string();
    let (_, first) = h.textual(&["--session", "counter", "--actions", &click]);
    assert!(first["text"].as_str().unwrap().starts_with("count: 1"));
    let click_and_resize = json!([{"click": "#inc"}, {"resize": [70, 22]}]).to_string();
    let (progress, second) = h.textual(&[
        "--session",
        "counter",
        "--actions",
        &click_and_resize,
        "--query",
        "#label",
        "--tree",
    ]);
    assert_eq!(progress.len(), 2);
    assert_eq!(queried(&second, "#label")["content"], "count: 2");
    // The app saw the new size (SIGWINCH) before the call returned.
    assert_eq!(
        (second["cols"].as_u64(), second["rows"].as_u64()),
        (Some(70), Some(22))
    );
    assert_eq!(
        second["tree"]["screen"]["region"],
        json!([0, 0, 70, 22]),
        "{}",
        second["tree"]
    );
    assert_eq!(queried(&second, "#label")["region"], json!([0, 0, 70, 1]));

    // A real screenpilot session, counted with the others.
    let (_, _, list) = h.run(&["list"]);
    let sids: Vec<&str> = list["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["sid"].as_str())
        .collect();
    assert_eq!(sids, ["counter"], "{list}");
    assert_eq!(list["sessions"][0]["kind"], "textual", "{list}");

    let (_, closed) = h.textual(&["--session", "counter", "--close"]);
    assert_eq!(closed["alive"], false);
    assert_eq!(closed["details"]["exit"]["return_code"], 0, "{closed}");
    let (_, _, list) = h.run(&["list"]);
    assert_eq!(list["sessions"], json!([]), "{list}");
    let error = h.textual_error(&["--session", "counter", "--actions", &click]);
    assert_eq!(error["field"], "session", "{error}");
}

#[test]
fn missing_prerequisites_are_clear_errors() {
    let h = Harness::new("prereq");
    let app = h.app("counter.py");

    let (status, _, result) = h.run(&["textual", "--python", "no-such-python3.99", &app]);
    assert_eq!(status, 2, "{result}");
    assert_eq!(result["error"]["code"], "python_unavailable", "{result}");
    assert_eq!(result["error"]["field"], "python", "{result}");

    // An interpreter that cannot import Textual (site-packages switched off).
    let wrapper = h.dir.join("python-without-site");
    std::fs::write(
        &wrapper,
        format!("#!/bin/sh\nexec {} -S \"$@\"\n", h.python),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    let wrapper = wrapper.to_string_lossy().into_owned();
    let (status, _, result) = h.run(&["textual", "--python", &wrapper, &app]);
    assert_eq!(status, 2, "{result}");
    assert_eq!(result["error"]["code"], "textual_missing", "{result}");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("pip install \"textual>=8.2\""),
        "{message}"
    );

    // A file without an app says what it needs.
    let not_an_app = h.dir.join("not_an_app.py");
    std::fs::write(&not_an_app, "x = 1\n").unwrap();
    let error = h.textual_error(&[not_an_app.to_str().unwrap()]);
    assert_eq!(error["code"], "app_load_failed", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("no Textual app found"),
        "{error}"
    );
}

#[test]
fn sizes_out_of_range_are_refused_before_the_app_starts_naming_their_field() {
    let h = Harness::new("sizes");
    let app = h.app("counter.py");
    let error = h.textual_error(&[&app, "--size", "1x1"]);
    assert_eq!(error["field"], "size", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("size: 1x1 is too small"),
        "{error}"
    );
    let actions = json!([{"press": "tab"}, {"resize": [5000, 10]}]).to_string();
    let error = h.textual_error(&[&app, "--actions", &actions]);
    assert_eq!(error["field"], "actions[1]", "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("too large"),
        "{error}"
    );
    let (_, _, list) = h.run(&["list"]);
    assert_eq!(list["sessions"], json!([]), "{list}");
}

#[test]
fn an_app_that_crashes_while_starting_is_an_error_showing_its_traceback() {
    let h = Harness::new("crash");
    let app = h.app("crash.py");
    let actions = json!([{"press": "tab"}, {"click": "#inc"}]).to_string();
    let error = h.textual_error(&[&app, "--actions", &actions]);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("RuntimeError: compose exploded"),
        "{message}"
    );
    assert!(message.contains("while starting"), "{message}");
    assert!(message.contains("none of the 2 action(s) ran"), "{message}");
    // Only the app's own output: no terminal answer echoed once the app let go of the terminal.
    assert!(!message.contains("^["), "{message}");
    let (_, _, list) = h.run(&["list"]);
    assert_eq!(list["sessions"], json!([]), "{list}");
}

#[test]
fn a_timeout_says_what_became_of_the_app_and_leaves_nothing_running() {
    let h = Harness::new("timeout");
    let app = h.app("slow_start.py");
    for (session, words) in [
        (None, "the app was stopped"),
        (Some("slow"), "session 'slow' was not opened"),
    ] {
        let mut args = vec![app.as_str(), "--timeout", "1500"];
        args.extend(session.iter().flat_map(|s| ["--session", s]));
        let error = h.textual_error(&args);
        assert_eq!(error["code"], "timeout", "{error}");
        assert_eq!(error["field"], "timeout", "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(message.contains("1500 ms"), "{message}");
        assert!(message.contains(words), "{message}");
        // Gone by the time the caller hears of it.
        let (_, _, list) = h.run(&["list"]);
        assert_eq!(list["sessions"], json!([]), "{list}");
    }
}

#[test]
fn an_interpreter_behind_a_wrapper_script_that_does_not_exec_runs_the_app() {
    let h = Harness::new("wrapper");
    let app = h.app("counter.py");
    // Python runs as the script's child, as with many venv and toolchain shims.
    let wrapper = h.dir.join("python-wrapper");
    std::fs::write(&wrapper, format!("#!/bin/sh\n{} \"$@\"\n", h.python)).unwrap();
    let mut perms = std::fs::metadata(&wrapper).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&wrapper, perms).unwrap();
    let actions = json!([{"click": "#inc"}]).to_string();
    let (status, _, result) = h.run(&[
        "textual",
        "--python",
        wrapper.to_str().unwrap(),
        &app,
        "--actions",
        &actions,
        "--timeout",
        "20000",
    ]);
    assert_eq!(status, 0, "{result}");
    assert!(
        result["text"].as_str().unwrap().starts_with("count: 1"),
        "{result}"
    );
    assert_eq!(result["details"]["exit"]["return_code"], 0, "{result}");
}

#[test]
fn textual_key_names_type_their_characters_and_unknown_names_are_refused() {
    let h = Harness::new("keynames");
    let app = h.app("form.py");
    let actions = json!([
        {"press": ["A", "full_stop", "exclamation_mark", "slash", "at", "space", "minus", "pound_sign"]}
    ])
    .to_string();
    let (_, result) = h.textual(&[&app, "--actions", &actions, "--query", "#name"]);
    assert_eq!(queried(&result, "#name")["value"], "A.!/@ -£", "{result}");

    // A misspelt key is an error, not the text of its name typed into the focused Input.
    let actions = json!([{"press": "tab"}, {"press": ["a", "enetr"]}]).to_string();
    let error = h.textual_error(&[&app, "--actions", &actions]);
    assert_eq!(error["field"], "actions[1]", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("\"enetr\" is not a key"), "{message}");
}

#[test]
fn app_files_that_give_no_single_app_say_why() {
    let h = Harness::new("badapps");
    let write = |name: &str, body: &str| {
        let path = h.dir.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_string_lossy().into_owned()
    };
    let syntax = write(
        "syntax.py",
        "from textual.app import App\nclass Broken(App)\n    pass\n",
    );
    let error = h.textual_error(&[&syntax]);
    assert_eq!(error["code"], "app_load_failed", "{error}");
    assert_eq!(error["field"], "app", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("SyntaxError"), "{message}");
    assert!(message.contains("syntax.py\", line 2"), "{message}");
    // The error is about the app, not the probe that imported it.
    assert!(!message.contains("screenpilot_probe"), "{message}");
    assert!(!message.contains("importlib"), "{message}");

    let raises = write(
        "raises.py",
        "from textual.app import App\nraise ValueError('no config')\n",
    );
    let message = h.textual_error(&[&raises])["message"].to_string();
    assert!(message.contains("raises.py"), "{message}");
    assert!(message.contains("ValueError: no config"), "{message}");
    assert!(!message.contains("screenpilot_probe"), "{message}");

    let two = write(
        "two.py",
        "from textual.app import App\nclass First(App): pass\nclass Second(App): pass\n",
    );
    let message = h.textual_error(&[&two])["message"].to_string();
    assert!(message.contains("(First, Second)"), "{message}");
    assert!(message.contains("app = OneOfThem()"), "{message}");

    let (_, _, list) = h.run(&["list"]);
    assert_eq!(list["sessions"], json!([]), "{list}");
}

#[test]
fn double_click_hover_times_button_and_offset_reach_the_widget_as_asked() {
    let h = Harness::new("clicks");
    let app = h.app("clicks.py");
    let actions = json!([
        {"hover": "#pad"},
        {"double_click": "#pad"},
        {"click": {"selector": "#pad", "times": 3}},
        {"click": "#pad"},
        {"click": {"selector": "#pad", "button": "right", "offset": [1, 2]}}
    ])
    .to_string();
    let (progress, _) = h.textual(&[&app, "--actions", &actions]);
    let report = |i: usize| -> Vec<String> {
        let text = progress[i]["text"].as_str().unwrap();
        text.lines().take(2).map(str::to_owned).collect()
    };
    assert_eq!(report(0), ["no clicks", "hovered"]);
    // The pad is 20x5 at the top left below two lines: its centre is (10, 2) within it.
    assert_eq!(report(1)[0], "chain 2 button 1 at 10,2");
    // Each action is its own chain, however soon it follows the last (as with Textual's Pilot).
    assert_eq!(report(2)[0], "chain 3 button 1 at 10,2");
    assert_eq!(report(3)[0], "chain 1 button 1 at 10,2");
    assert_eq!(report(4)[0], "chain 1 button 3 at 1,2");
}
