//! Which Textual releases run: the oldest and the newest supported (both tested throughout), older
//! ones refused with the supported range named, newer ones run with a warning.

use super::harness::{oldest_python, Harness};

#[test]
fn a_textual_older_than_supported_is_refused_naming_the_supported_range() {
    let h = Harness::new();
    let app = h.app("counter.py");
    // A stand-in Textual package that reports an old version, found before the installed one.
    let fake = h.dir.join("old-textual");
    std::fs::create_dir_all(fake.join("textual")).unwrap();
    std::fs::write(
        fake.join("textual/__init__.py"),
        "__version__ = \"0.86.0\"\n",
    )
    .unwrap();
    let wrapper = h.script(
        "python-with-old-textual",
        &format!(
            "#!/bin/sh\nPYTHONPATH=\"$PYTHONPATH:{}\" exec {} \"$@\"\n",
            fake.display(),
            h.python
        ),
    );
    let (status, _, result) = h.run(&["textual", "--python", &wrapper, &app]);
    assert_eq!(status, 2, "{result}");
    let error = &result["error"];
    assert_eq!(error["code"], "textual_too_old", "{error}");
    assert_eq!(error["field"], "python", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("Textual 0.86.0"), "{message}");
    assert!(
        message.contains("supports Textual 1.0 through 8.2"),
        "{message}"
    );
    assert!(
        message.contains("pip install \"textual>=1.0\""),
        "{message}"
    );
}

#[test]
fn the_oldest_supported_textual_runs_apps_as_the_newest_does() {
    let h = Harness::with_python(oldest_python());
    let app = h.app("counter.py");
    let actions =
        serde_json::json!([{"press": "tab"}, {"click": "#inc"}, {"click": "#inc"}]).to_string();
    let (progress, result) = h.textual(&[&app, "--actions", &actions, "--query", "#label"]);
    assert!(progress[2]["text"]
        .as_str()
        .unwrap()
        .starts_with("count: 2"));
    let version = result["details"]["textual_version"].as_str().unwrap();
    assert!(version.starts_with("1."), "{version}");
    assert_eq!(
        result["details"]["warnings"],
        serde_json::Value::Null,
        "{result}"
    );
}
