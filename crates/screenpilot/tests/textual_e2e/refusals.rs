//! Clicks that would miss are refused, naming the cause: a modal screen, a widget on a higher
//! layer, hidden, disabled, scrolled away or absent.

use serde_json::json;

use super::harness::{queried, Harness};

#[test]
fn a_modal_screen_covering_a_button_refuses_the_click_until_dismissed() {
    let h = Harness::new();
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
    let h = Harness::new();
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
