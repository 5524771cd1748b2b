//! Every screen streamed after an action is the settled one, what a person sees once the app is idle:
//! after the start's animated scroll to the focused widget, after a resize, after a tab switch; and an
//! app that exits part-way reports its last frame. Each runs on the newest and the oldest supported
//! Textual, on Textual's own example apps where they show it.

use serde_json::json;

use super::harness::{oldest_python, queried, Harness};

/// Textual's checkbox example focuses a checkbox below the fold on mount, then scrolls it into view,
/// animated, after its first refresh: a click right after start must wait for that scroll.
fn click_right_after_start_lands_once_the_focused_widget_is_scrolled_into_view(h: &Harness) {
    let app = h.example("widgets/checkbox.py");
    let actions = json!([{"click": "#initial_focus"}]).to_string();
    let (progress, result) = h.textual(&[
        &app,
        "--size",
        "80x8",
        "--actions",
        &actions,
        "--query",
        "#initial_focus",
    ]);
    let checkbox = queried(&result, "#initial_focus");
    assert_eq!(checkbox["value"], true, "the click checked it: {checkbox}");
    let [_, y, _, height] = [0, 1, 2, 3].map(|i| checkbox["region"][i].as_i64().unwrap());
    assert!(y >= 0 && y + height <= 8, "in view: {checkbox}");
    let text = progress[0]["text"].as_str().unwrap();
    assert!(text.contains("Kaitain"), "{text}");
}

#[test]
fn click_right_after_start_waits_for_the_scroll_to_the_focused_widget() {
    click_right_after_start_lands_once_the_focused_widget_is_scrolled_into_view(&Harness::new());
}

#[test]
fn click_right_after_start_waits_for_the_scroll_on_the_oldest_textual() {
    click_right_after_start_lands_once_the_focused_widget_is_scrolled_into_view(
        &Harness::with_python(oldest_python()),
    );
}

/// Textual 8 lays out a new size after a short debounce timer: each screen streamed after a resize
/// must already have the new layout (here a line whose text sits at the right edge).
fn resized_screens_have_the_new_layout(h: &Harness) {
    let app = h.app("tabs.py");
    let sizes = [[100, 32], [90, 30], [110, 35], [80, 25]];
    let actions: Vec<_> = sizes.iter().map(|size| json!({"resize": size})).collect();
    let (progress, result) = h.textual(&[&app, "--actions", &json!(actions).to_string()]);
    assert_eq!(progress.len(), sizes.len());
    for (update, [cols, rows]) in progress.iter().zip(sizes) {
        let text = update["text"].as_str().unwrap();
        assert_eq!(text.split('\n').count(), rows, "{text}");
        let edge = text
            .lines()
            .find(|line| line.ends_with("right edge"))
            .unwrap_or_else(|| panic!("no right edge line: {text}"));
        assert_eq!(
            edge.chars().count(),
            cols,
            "laid out at {cols} columns: {text}"
        );
    }
    assert_eq!(progress.last().unwrap()["text"], result["text"]);
}

#[test]
fn the_screen_streamed_after_a_resize_has_the_new_layout() {
    resized_screens_have_the_new_layout(&Harness::new());
}

#[test]
fn the_screen_streamed_after_a_resize_has_the_new_layout_on_the_oldest_textual() {
    resized_screens_have_the_new_layout(&Harness::with_python(oldest_python()));
}

/// The columns of `label` in the first row that has it, and the row below it (a tab bar's underline).
fn tab_and_underline(text: &str, label: &str) -> (usize, Vec<char>) {
    let lines: Vec<&str> = text.lines().collect();
    let row = lines
        .iter()
        .position(|line| line.contains(label))
        .unwrap_or_else(|| panic!("no {label} on screen: {text}"));
    let byte = lines[row].find(label).unwrap();
    let start = lines[row][..byte].chars().count();
    (start, lines[row + 1].chars().collect())
}

/// The underline's bright part runs between a "╸" and a "╺": right under the active tab's label.
fn assert_underlined(text: &str, label: &str) {
    let (start, underline) = tab_and_underline(text, label);
    let end = start + label.chars().count();
    let around = (underline.get(start - 1), underline.get(end));
    assert_eq!(
        around,
        (Some(&'╸'), Some(&'╺')),
        "the underline is not under {label}: {text}"
    );
}

/// Tabs move their underline after a 0.02 s timer, then animate it: the screen streamed after the key
/// that switched tabs must show it under the new tab.
fn tab_switch_screens_have_the_underline_under_the_new_tab(h: &Harness) {
    let app = h.example("widgets/tabbed_content.py");
    let actions = json!([{"press": "l"}, {"press": "p"}]).to_string();
    let (progress, result) = h.textual(&[&app, "--actions", &actions, "--query", "TabbedContent"]);
    assert_underlined(progress[0]["text"].as_str().unwrap(), "Leto");
    assert_underlined(progress[1]["text"].as_str().unwrap(), "Paul");
    assert_eq!(queried(&result, "TabbedContent")["active"], "paul");
}

#[test]
fn the_screen_streamed_after_a_tab_switch_has_the_underline_under_the_new_tab() {
    tab_switch_screens_have_the_underline_under_the_new_tab(&Harness::new());
}

#[test]
fn the_screen_streamed_after_a_tab_switch_is_settled_on_the_oldest_textual() {
    tab_switch_screens_have_the_underline_under_the_new_tab(&Harness::with_python(oldest_python()));
}

/// An app that exits part-way reports the last frame it showed, not the blank terminal it left.
fn exit_part_way_reports_the_last_frame(h: &Harness) {
    let app = h.app("form.py");
    let actions = json!([{"press": ["h", "i"]}, {"press": "ctrl+q"}, {"press": "x"}]).to_string();
    let (status, progress, result) = h.run(&[
        "textual",
        "--python",
        &h.python,
        &app,
        "--actions",
        &actions,
    ]);
    assert_eq!(status, 2, "{result}");
    let error = &result["error"];
    assert_eq!(error["code"], "app_exited", "{error}");
    let message = error["message"].as_str().unwrap();
    assert!(
        message.contains("the last 1 of 3 action(s) did not run"),
        "{message}"
    );
    let (_, screen) = message
        .split_once("Its last screen:\n")
        .expect("the last screen");
    let input_line = screen.lines().nth(1).unwrap_or_default();
    assert!(
        input_line.contains("hi"),
        "the Input shows what was typed: {screen}"
    );
    assert!(screen.contains("Subscribe"), "{screen}");
    // The screen streamed for the step that ended the app is that frame too.
    assert_eq!(progress.len(), 2);
    assert!(
        progress[1]["text"].as_str().unwrap().contains("Subscribe"),
        "{}",
        progress[1]
    );
}

#[test]
fn an_app_that_exits_part_way_reports_its_last_frame() {
    exit_part_way_reports_the_last_frame(&Harness::new());
}

#[test]
fn an_app_that_exits_part_way_reports_its_last_frame_on_the_oldest_textual() {
    exit_part_way_reports_the_last_frame(&Harness::with_python(oldest_python()));
}

/// A Button ignores a click during its 0.2 s pressed look: settling waits it out, so clicks given back
/// to back all count, each streamed screen showing its own.
#[test]
fn back_to_back_clicks_on_a_button_all_count() {
    let h = Harness::new();
    let app = h.app("counter.py");
    let actions = json!([{"click": "#inc"}, {"click": "#inc"}, {"click": "#inc"}]).to_string();
    let (progress, result) = h.textual(&[&app, "--actions", &actions, "--query", "#label"]);
    for (i, update) in progress.iter().enumerate() {
        let text = update["text"].as_str().unwrap();
        assert!(text.starts_with(&format!("count: {}", i + 1)), "{text}");
    }
    assert_eq!(queried(&result, "#label")["content"], "count: 3");
}

/// An app that is never idle (a clock by a one-shot timer that sets itself again, a pulse that starts
/// itself again, a spinner) still settles after each action: what keeps coming back is waited for once,
/// then left running.
#[test]
fn an_app_that_is_never_idle_still_settles_after_each_action() {
    let h = Harness::new();
    let app = h.app("endless.py");
    let actions = json!([{"click": "#ok"}, {"press": "tab"}]).to_string();
    let (progress, result) = h.textual(&[&app, "--actions", &actions, "--query", "#ok"]);
    assert_eq!(progress.len(), 2);
    assert!(progress[0]["text"].as_str().unwrap().contains("pressed"));
    assert_eq!(queried(&result, "#ok")["label"], "pressed");
    // Settled every time, within the limit: no "still busy" warning.
    assert_eq!(
        result["details"]["warnings"],
        serde_json::Value::Null,
        "{result}"
    );
}
