//! The action objects computer-use models emit, exactly as their vendors define them, read the way
//! `computer` reads them ([`super::request::spec_from_json`], then [`super::parse::parse`]). Each
//! group cites where its shapes come from; a vendor adding a field or an action should fail here
//! first.

use screenpilot_desktop::Modifier;
use serde_json::{json, Value};

use super::actions::{Action, Px};
use super::keys::{parse_chord, Chord};
use super::parse::parse;
use super::request::spec_from_json;
use crate::ops::kit::button::Button;
use crate::ops::kit::error::OpError;

fn read(value: Value) -> Result<Action, OpError> {
    let spec = spec_from_json(value, "action")?;
    parse(&spec, "action")
}

fn ok(value: Value) -> Action {
    read(value.clone()).unwrap_or_else(|e| panic!("{value} was refused: {}", e.message))
}

/// The field an action is refused for.
fn refused(value: Value) -> String {
    match read(value.clone()) {
        Ok(action) => panic!("{value} was taken as {action:?}"),
        Err(e) => e.field.unwrap_or_default(),
    }
}

fn at(x: u32, y: u32) -> Option<Px> {
    Some(Px { x, y })
}

fn click(x: u32, y: u32, button: Button, count: u32, hold: &[Modifier]) -> Action {
    Action::Click {
        at: at(x, y),
        button,
        count,
        hold: hold.to_vec(),
    }
}

fn chord(keys: &[&str]) -> Chord {
    let names: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
    parse_chord(&names, "keys").expect("a chord")
}

/// Anthropic `computer_20250124` and `computer_20251124`: `{"action": name, ...fields}`. Fields per
/// action from the SDK's input types (anthropics/anthropic-sdk-ruby,
/// lib/anthropic/models/beta/beta_computer_*_input.rb at babab26 and 1236cfa; the docs' migration
/// guide: toolset inputs are these minus `action`), the tool from anthropic-sdk-python
/// src/anthropic/types/beta/beta_tool_computer_use_20251124_param.py at 009b035.
#[test]
fn anthropic_computer_tool_actions_are_taken_as_sent() {
    use Modifier::{Alt, Ctrl, Shift};
    assert_eq!(ok(json!({"action": "screenshot"})), Action::Screenshot);
    assert_eq!(
        ok(json!({"action": "left_click", "coordinate": [640, 360]})),
        click(640, 360, Button::Left, 1, &[])
    );
    // Modifiers held during a click go in `text` (BetaComputerLeftClickInput: "Optional key
    // combination to hold down during this action (e.g. \"ctrl\", \"shift\", \"ctrl+shift\")").
    assert_eq!(
        ok(json!({"action": "left_click", "coordinate": [640, 360], "text": "ctrl+shift"})),
        click(640, 360, Button::Left, 1, &[Ctrl, Shift])
    );
    assert_eq!(
        ok(json!({"action": "right_click", "coordinate": [1, 2], "text": "shift"})),
        click(1, 2, Button::Right, 1, &[Shift])
    );
    assert_eq!(
        ok(json!({"action": "middle_click", "coordinate": [1, 2]})),
        click(1, 2, Button::Middle, 1, &[])
    );
    assert_eq!(
        ok(json!({"action": "double_click", "coordinate": [1, 2], "text": "alt"})),
        click(1, 2, Button::Left, 2, &[Alt])
    );
    assert_eq!(
        ok(json!({"action": "triple_click", "coordinate": [1, 2], "text": null})),
        click(1, 2, Button::Left, 3, &[])
    );
    // Without `coordinate`: at the cursor.
    assert_eq!(
        ok(json!({"action": "left_click", "coordinate": null})),
        Action::Click {
            at: None,
            button: Button::Left,
            count: 1,
            hold: Vec::new()
        }
    );
    assert_eq!(
        ok(json!({"action": "mouse_move", "coordinate": [7, 8]})),
        Action::Move {
            at: Px { x: 7, y: 8 },
            hold: Vec::new()
        }
    );
    assert_eq!(
        ok(
            json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [30, 40], "text": "shift"})
        ),
        Action::Drag {
            path: vec![Px { x: 1, y: 2 }, Px { x: 30, y: 40 }],
            hold: vec![Shift]
        }
    );
    assert_eq!(
        ok(json!({"action": "left_mouse_down"})),
        Action::MouseDown { at: None }
    );
    assert_eq!(
        ok(json!({"action": "left_mouse_up"})),
        Action::MouseUp { at: None }
    );
    assert_eq!(
        ok(
            json!({"action": "scroll", "coordinate": [5, 6], "scroll_direction": "down", "scroll_amount": 5, "text": "shift"})
        ),
        Action::Scroll {
            at: at(5, 6),
            steps_x: 0,
            steps_y: 5,
            hold: vec![Shift]
        }
    );
    assert_eq!(
        ok(json!({"action": "scroll", "scroll_direction": "left", "scroll_amount": 2})),
        Action::Scroll {
            at: None,
            steps_x: -2,
            steps_y: 0,
            hold: Vec::new()
        }
    );
    assert_eq!(
        ok(json!({"action": "type", "text": "Hello, world!\n"})),
        Action::Type {
            text: "Hello, world!\n".into()
        }
    );
    // `key`: xdotool names, `+` for combinations, `repeat` 1-100 (BetaComputerKeyInput).
    assert_eq!(
        ok(json!({"action": "key", "text": "ctrl+s"})),
        Action::Keypress {
            chords: vec![chord(&["ctrl", "s"])],
            hold_ms: 0
        }
    );
    assert_eq!(
        ok(json!({"action": "key", "text": "ctrl+s", "repeat": 3})),
        Action::Keypress {
            chords: vec![chord(&["ctrl", "s"]); 3],
            hold_ms: 0
        }
    );
    assert_eq!(
        ok(json!({"action": "key", "text": "Page_Down", "repeat": null})),
        ok(json!({"action": "key", "text": "Page_Down"}))
    );
    assert_eq!(
        ok(json!({"action": "key", "text": "BackSpace", "repeat": 100})),
        Action::Keypress {
            chords: vec![chord(&["BACKSPACE"]); 100],
            hold_ms: 0
        }
    );
    assert_eq!(
        ok(json!({"action": "hold_key", "text": "shift", "duration": 1})),
        Action::Keypress {
            chords: vec![chord(&["shift"])],
            hold_ms: 1000
        }
    );
    assert_eq!(
        ok(json!({"action": "wait", "duration": 2})),
        Action::Wait { ms: Some(2000) }
    );
    assert_eq!(
        ok(json!({"action": "cursor_position"})),
        Action::CursorPosition
    );
    // `zoom` (computer_20251124 with enable_zoom; BetaComputerZoomInput: region (x0, y0, x1, y1)).
    assert_eq!(
        ok(json!({"action": "zoom", "region": [0, 0, 640, 400]})),
        Action::Zoom {
            region: [0, 0, 640, 400]
        }
    );
}

/// Anthropic's computer-use demo reads a click's modifiers from `key`, not `text`
/// (anthropics/claude-quickstarts, computer-use-demo/computer_use_demo/tools/computer.py at
/// 271ba85: `ComputerTool20250124.__call__(..., key=None)`, `xdotool keydown {key}` around the
/// click), and allows fractional `duration` (`int | float`).
#[test]
fn the_anthropic_demos_spellings_are_taken_too() {
    assert_eq!(
        ok(json!({"action": "left_click", "coordinate": [3, 4], "key": "ctrl"})),
        click(3, 4, Button::Left, 1, &[Modifier::Ctrl])
    );
    assert_eq!(
        ok(json!({"action": "double_click", "coordinate": [3, 4], "key": "ctrl+shift"})),
        click(3, 4, Button::Left, 2, &[Modifier::Ctrl, Modifier::Shift])
    );
    assert_eq!(
        ok(json!({"action": "wait", "duration": 0.5})),
        Action::Wait { ms: Some(500) }
    );
    // One place for the held keys: two is a mistake, named by its second field.
    assert_eq!(
        refused(
            json!({"action": "left_click", "coordinate": [3, 4], "text": "ctrl", "key": "shift"})
        ),
        "action.key"
    );
}

/// Anthropic `computer_toolset_20260801`: every action is a tool; the model sends a `tool_use`
/// block per action, with no `action` field in `input` (anthropic-sdk-ruby
/// lib/anthropic/models/beta/beta_computer_left_click_tool_use_block.rb: id, input, name,
/// toolset_name "computer", type "tool_use", optional caller).
#[test]
fn toolset_tool_use_blocks_are_taken_as_they_come() {
    let block = json!({
        "type": "tool_use",
        "id": "toolu_01A",
        "name": "left_click",
        "toolset_name": "computer",
        "input": {"coordinate": [640, 360], "text": "ctrl"},
        "caller": {"type": "direct"},
    });
    let spec = spec_from_json(block.clone(), "actions[0]").expect("a block");
    assert_eq!(spec.id.as_deref(), Some("toolu_01A"));
    assert_eq!(
        ok(block),
        ok(json!({"action": "left_click", "coordinate": [640, 360], "text": "ctrl"}))
    );
    // Just the name and input, as a client may pass them.
    assert_eq!(
        ok(json!({"name": "key", "input": {"text": "ctrl+s", "repeat": 3}})),
        ok(json!({"action": "key", "text": "ctrl+s", "repeat": 3}))
    );
    for (name, input) in [
        ("screenshot", json!({})),
        ("cursor_position", json!({})),
        ("left_mouse_down", json!({})),
        ("left_mouse_up", json!({})),
        ("zoom", json!({"region": [0, 0, 10, 10]})),
        ("wait", json!({"duration": 1})),
        ("hold_key", json!({"text": "shift", "duration": 1})),
        ("mouse_move", json!({"coordinate": [1, 1]})),
        (
            "scroll",
            json!({"coordinate": [1, 1], "scroll_direction": "up", "scroll_amount": 3, "text": "ctrl"}),
        ),
        (
            "left_click_drag",
            json!({"start_coordinate": [1, 1], "coordinate": [2, 2]}),
        ),
        ("triple_click", json!({"coordinate": [1, 1]})),
        ("type", json!({"text": "hi"})),
    ] {
        let mut flat = input.clone();
        flat["action"] = json!(name);
        assert_eq!(
            ok(
                json!({"type": "tool_use", "id": "t", "name": name, "toolset_name": "computer", "input": input})
            ),
            ok(flat),
            "{name}"
        );
    }
    // What is not a block's is refused by name.
    let block = |extra: Value| {
        let mut block = json!({"type": "tool_use", "id": "t", "name": "left_click", "toolset_name": "computer", "input": {}});
        for (k, v) in extra.as_object().cloned().unwrap_or_default() {
            block[k] = v;
        }
        block
    };
    assert_eq!(
        refused(block(json!({"toolset_name": "browser"}))),
        "action.toolset_name"
    );
    // A flat action with a stray name or input is a flat action: the stray field is named.
    assert_eq!(
        refused(json!({"type": "click", "x": 1, "y": 1, "name": "left_click"})),
        "action.name"
    );
    assert_eq!(
        refused(json!({"action": "left_click", "input": {"coordinate": [1, 1]}})),
        "action.input"
    );
    assert_eq!(refused(block(json!({"name": 3}))), "action.name");
    assert_eq!(refused(block(json!({"input": [1, 2]}))), "action.input");
    assert_eq!(refused(block(json!({"id": 7}))), "action.id");
    assert_eq!(
        refused(block(json!({"coordinate": [1, 2]}))),
        "action.coordinate"
    );
    assert_eq!(
        refused(block(json!({"input": {"action": "left_click"}}))),
        "action.input.action"
    );
    assert_eq!(
        refused(json!({"input": {"coordinate": [1, 2]}})),
        "action.name"
    );
    assert_eq!(
        refused(block(json!({"name": "fly"}))),
        "action.type",
        "an unknown action"
    );
    assert_eq!(
        refused(block(
            json!({"input": {"coordinate": [1, 2], "button": "right"}})
        )),
        "action.button"
    );
}

/// OpenAI's GA `computer` tool: a `computer_call` carries `actions` (or the legacy single
/// `action`), each `{type, ...}` (openai/openai-python src/openai/types/responses/computer_action.py
/// at 1806456; the computer-use guide's example `{"type": "click", "button": "left", "x": 405,
/// "y": 157, "keys": ["SHIFT"]}`). `keys` on click, double_click, drag, move and scroll are held
/// during the action; SDK objects dumped with their unset fields carry `"keys": null`.
#[test]
fn openai_computer_actions_are_taken_as_sent() {
    use Modifier::{Ctrl, Shift, Super};
    assert_eq!(
        ok(json!({"type": "click", "button": "left", "x": 405, "y": 157, "keys": ["SHIFT"]})),
        click(405, 157, Button::Left, 1, &[Shift])
    );
    for (name, button) in [
        ("right", Button::Right),
        ("wheel", Button::Middle),
        ("back", Button::Back),
        ("forward", Button::Forward),
    ] {
        assert_eq!(
            ok(json!({"type": "click", "button": name, "x": 1, "y": 2, "keys": null})),
            click(1, 2, button, 1, &[])
        );
    }
    assert_eq!(
        ok(json!({"type": "double_click", "x": 1, "y": 2, "keys": ["CTRL"]})),
        click(1, 2, Button::Left, 2, &[Ctrl])
    );
    assert_eq!(
        ok(
            json!({"type": "drag", "path": [{"x": 1, "y": 2}, {"x": 5, "y": 6}, {"x": 9, "y": 9}], "keys": ["ALT"]})
        ),
        Action::Drag {
            path: vec![Px { x: 1, y: 2 }, Px { x: 5, y: 6 }, Px { x: 9, y: 9 }],
            hold: vec![Modifier::Alt]
        }
    );
    assert_eq!(
        ok(json!({"type": "move", "x": 3, "y": 4, "keys": ["META"]})),
        Action::Move {
            at: Px { x: 3, y: 4 },
            hold: vec![Super]
        }
    );
    assert_eq!(
        ok(
            json!({"type": "scroll", "x": 3, "y": 4, "scroll_x": 0, "scroll_y": -360, "keys": ["CTRL"]})
        ),
        Action::Scroll {
            at: at(3, 4),
            steps_x: 0,
            steps_y: -3,
            hold: vec![Ctrl]
        }
    );
    assert_eq!(
        ok(json!({"type": "keypress", "keys": ["CTRL", "L"]})),
        Action::Keypress {
            chords: vec![chord(&["CTRL", "l"])],
            hold_ms: 0
        }
    );
    assert_eq!(
        ok(json!({"type": "type", "text": "hello"})),
        Action::Type {
            text: "hello".into()
        }
    );
    assert_eq!(ok(json!({"type": "wait"})), Action::Wait { ms: None });
    assert_eq!(ok(json!({"type": "screenshot"})), Action::Screenshot);
}

/// A field that means nothing for the action is refused by name, not ignored.
#[test]
fn fields_an_action_does_not_take_are_refused_by_name() {
    for (action, field) in [
        (
            json!({"type": "keypress", "keys": ["a"], "x": 5}),
            "action.x",
        ),
        (
            json!({"action": "left_click", "coordinate": [1, 1], "button": "right"}),
            "action.button",
        ),
        (
            json!({"type": "double_click", "x": 1, "y": 1, "button": "left"}),
            "action.button",
        ),
        (
            json!({"action": "key", "text": "a", "duration": 1}),
            "action.duration",
        ),
        (
            json!({"action": "screenshot", "coordinate": [1, 1]}),
            "action.coordinate",
        ),
        (
            json!({"type": "type", "text": "a", "keys": ["CTRL"]}),
            "action.keys",
        ),
        (json!({"type": "wait", "scroll_y": 3}), "action.scroll_y"),
        (
            json!({"action": "zoom", "region": [0, 0, 2, 2], "coordinate": [1, 1]}),
            "action.coordinate",
        ),
        (
            json!({"action": "mouse_move", "coordinate": [1, 1], "region": [0, 0, 1, 1]}),
            "action.region",
        ),
        (
            json!({"action": "left_mouse_down", "text": "shift"}),
            "action.text",
        ),
        (
            json!({"action": "hold_key", "text": "a", "duration": 1, "repeat": 2}),
            "action.repeat",
        ),
        (
            json!({"type": "click", "x": 1, "y": 1, "keys": ["CTRL"], "text": "shift"}),
            "action.text",
        ),
        (
            json!({"action": "key", "text": "a", "repeat": 0}),
            "action.repeat",
        ),
        (
            json!({"action": "key", "text": "a", "repeat": 101}),
            "action.repeat",
        ),
        (
            json!({"action": "zoom", "region": [0, 0, 2, 2], "scale": 2}),
            "action.scale",
        ),
    ] {
        assert_eq!(refused(action.clone()), field, "{action}");
    }
    let err = read(json!({"type": "keypress", "keys": ["a"], "x": 5})).expect_err("x");
    assert_eq!(
        err.message,
        "action.x: keypress takes no x (it takes keys, ms)"
    );
    let err = read(json!({"action": "screenshot", "text": "a"})).expect_err("text");
    assert!(
        err.message
            .ends_with("screenshot takes no text (it takes no fields)"),
        "{}",
        err.message
    );
}
