//! Driving apps: keys, clicks, pauses and resizes, and what comes back (screen, tree, query,
//! screenshots, exit value), in one-shot runs and sessions.

use std::path::Path;

use serde_json::{json, Value};

use super::harness::{assert_png_decodes, find_in_tree, queried, Harness};

#[test]
fn counter_one_shot_presses_clicks_pauses_and_reports_tree_query_and_screenshots() {
    let h = Harness::new();
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
    let h = Harness::new();
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
    let h = Harness::new();
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
    let h = Harness::new();
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
fn a_session_is_opened_acted_on_twice_and_closed() {
    let h = Harness::new();
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
fn double_click_hover_times_button_and_offset_reach_the_widget_as_asked() {
    let h = Harness::new();
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

#[test]
fn textual_key_names_type_their_characters_and_unknown_names_are_refused() {
    let h = Harness::new();
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
