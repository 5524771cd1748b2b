//! What goes wrong before or around the app: interpreters, app files, sizes, crashes and timeouts,
//! each a clear error that leaves nothing running.

use serde_json::json;

use super::harness::Harness;

#[test]
fn missing_prerequisites_are_clear_errors() {
    let h = Harness::new();
    let app = h.app("counter.py");

    let (status, _, result) = h.run(&["textual", "--python", "no-such-python3.99", &app]);
    assert_eq!(status, 2, "{result}");
    assert_eq!(result["error"]["code"], "python_unavailable", "{result}");
    assert_eq!(result["error"]["field"], "python", "{result}");

    // An interpreter that cannot import Textual (site-packages switched off).
    let wrapper = h.script(
        "python-without-site",
        &format!("#!/bin/sh\nexec {} -S \"$@\"\n", h.python),
    );
    let (status, _, result) = h.run(&["textual", "--python", &wrapper, &app]);
    assert_eq!(status, 2, "{result}");
    assert_eq!(result["error"]["code"], "textual_missing", "{result}");
    let message = result["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("pip install \"textual>=1.0\""),
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
    let h = Harness::new();
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
    let h = Harness::new();
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
    let h = Harness::new();
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
    let h = Harness::new();
    let app = h.app("counter.py");
    // Python runs as the script's child, as with many venv and toolchain shims.
    let wrapper = h.script(
        "python-wrapper",
        &format!("#!/bin/sh\n{} \"$@\"\n", h.python),
    );
    let actions = json!([{"click": "#inc"}]).to_string();
    let (status, _, result) = h.run(&[
        "textual",
        "--python",
        &wrapper,
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
fn app_files_that_give_no_single_app_say_why() {
    let h = Harness::new();
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
