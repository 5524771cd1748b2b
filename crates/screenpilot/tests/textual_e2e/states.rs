//! Queries report the state of every built-in widget that holds a value: Digits, ContentSwitcher,
//! Collapsible, MaskedInput, SelectionList, Log and RichLog, Markdown, notifications, loading.

use serde_json::json;

use super::harness::{oldest_python, queried, Harness};

fn widgets_report_their_state(h: &Harness) {
    let app = h.app("states.py");
    let actions =
        json!([{"click": "#date"}, {"press": ["2", "0", "2", "4", "1", "2"]}]).to_string();
    let selectors = [
        "#digits",
        "#switcher",
        "#more",
        "#date",
        "#picks",
        "#log",
        "#richlog",
        "#doc",
        "#spinner",
        "#busy",
        "Toast",
    ];
    let mut args = vec![app.as_str(), "--actions", &actions, "--tree"];
    for selector in &selectors {
        args.extend(["--query", selector]);
    }
    let (_, result) = h.textual(&args);

    assert_eq!(queried(&result, "#digits")["value"], "3.14");
    assert_eq!(queried(&result, "#switcher")["current"], "two");
    let more = queried(&result, "#more");
    assert_eq!(
        (&more["collapsed"], &more["title"]),
        (&json!(true), &json!("More"))
    );
    let date = queried(&result, "#date");
    assert_eq!(date["template"], "9999-99-99", "{date}");
    assert_eq!(date["value"], "2024-12-", "{date}");
    let picks = queried(&result, "#picks");
    assert_eq!(picks["selected"], json!(["a", "c"]), "{picks}");
    assert_eq!(picks["option_count"], 3, "{picks}");
    let log = queried(&result, "#log");
    assert_eq!(log["line_count"], 7, "{log}");
    assert_eq!(
        log["last_lines"],
        json!(["line 3", "line 4", "line 5", "line 6", "line 7"]),
        "{log}"
    );
    let rich_log = queried(&result, "#richlog");
    assert_eq!(rich_log["line_count"], 3, "{rich_log}");
    assert_eq!(
        rich_log["last_lines"],
        json!(["entry 1", "entry 2", "entry 3"])
    );
    let doc = queried(&result, "#doc");
    assert_eq!(doc["source_length"], 58, "{doc}");
    assert_eq!(
        doc["headings"],
        json!([
            {"level": 1, "text": "Title"},
            {"level": 2, "text": "Part one"},
            {"level": 2, "text": "Part two"}
        ]),
        "{doc}"
    );
    assert_eq!(queried(&result, "#spinner")["type"], "LoadingIndicator");
    assert_eq!(queried(&result, "#busy")["loading"], true);
    let toast = queried(&result, "Toast");
    assert_eq!(
        (&toast["message"], &toast["title"], &toast["severity"]),
        (
            &json!("Saved the file"),
            &json!("Disk"),
            &json!("information")
        ),
        "{toast}"
    );
    assert_eq!(
        result["tree"]["notifications"],
        json!([{"message": "Saved the file", "title": "Disk", "severity": "information"}])
    );
}

#[test]
fn queries_report_digits_switchers_collapsibles_masks_selections_logs_markdown_and_notifications() {
    widgets_report_their_state(&Harness::new());
}

#[test]
fn queries_report_the_same_states_on_the_oldest_textual() {
    widgets_report_their_state(&Harness::with_python(oldest_python()));
}
