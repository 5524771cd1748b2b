//! The request shape of one computer action, as models send it: a flat object with `type` (or
//! Anthropic's `action`) and the fields that type uses. [`super::parse`] turns it into an
//! [`super::actions::Action`].
//!
//! Its JSON Schema is what MCP clients check calls against before they reach us, so it must accept
//! every shape we take: both `type` and `action` are listed, and neither is required there (the
//! daemon says which is missing).

use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::ops::common::{parse_fields, OpError};

/// {x, y} or [x, y].
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(transform = plain_numbers)]
pub enum PointSpec {
    Object { x: f64, y: f64 },
    Pair([f64; 2]),
}

/// One action: `type` (or `action`) plus the fields that type uses (see the tool description).
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(transform = accept_action_for_type)]
pub struct ActionSpec {
    /// screenshot click double_click scroll type wait move keypress drag, or Anthropic's left_click right_click middle_click triple_click mouse_move left_click_drag key hold_key left_mouse_down left_mouse_up cursor_position zoom.
    #[serde(rename = "type", alias = "action")]
    pub kind: String,
    pub x: Option<f64>,
    pub y: Option<f64>,
    /// left (default), right, wheel, back, forward.
    pub button: Option<String>,
    /// + = right/down; 120 a notch, at most 50 notches.
    pub scroll_x: Option<f64>,
    pub scroll_y: Option<f64>,
    /// type: Unicode (\n = Enter); key, hold_key: "ctrl+s"; pointer actions: modifiers to hold.
    pub text: Option<String>,
    /// keypress: one chord of CTRL ALT SHIFT META ENTER ESC TAB UP F1-F24 KP_0... a character or any X keysym name; pointer actions: modifiers to hold.
    pub keys: Option<Vec<String>>,
    /// drag: [{x, y}, ...] or [[x, y], ...].
    pub path: Option<Vec<PointSpec>>,
    /// wait: ms (none: until still, <= 2 s); keypress: hold ms.
    pub ms: Option<u64>,
    pub coordinate: Option<[f64; 2]>,
    pub start_coordinate: Option<[f64; 2]>,
    /// up, down, left, right.
    pub scroll_direction: Option<String>,
    /// Wheel notches, 1-50 (default 3).
    pub scroll_amount: Option<u32>,
    /// Seconds (wait, hold_key).
    pub duration: Option<f64>,
    /// zoom: [x0, y0, x1, y1] of the screenshot, shown at full screen resolution.
    pub region: Option<[f64; 4]>,
}

/// Any action object, for the schema of `actions` (each item is checked as `action` is): listing
/// every field twice would cost every client the bytes again.
pub struct ActionObject;

impl JsonSchema for ActionObject {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ActionObject".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> Schema {
        schemars::json_schema!({"type": "object"})
    }
}

/// The schema of [`ActionSpec`] as clients see it: Anthropic's `action` beside `type`, neither
/// required.
fn accept_action_for_type(schema: &mut Schema) {
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.insert("action".to_owned(), json!({"type": "string"}));
    }
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|name| name != "type");
    }
    if schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
    {
        schema.remove("required");
    }
}

/// Drop the Rust number formats (`double`) inside a schema: the listed schema is compacted at its
/// top level only, and these say nothing a JSON client can use.
fn plain_numbers(schema: &mut Schema) {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if map.get("format").and_then(Value::as_str) == Some("double") {
                    map.remove("format");
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    if let Some(map) = schema.as_object_mut() {
        map.values_mut().for_each(strip);
    }
}

/// An action object from its JSON. A malformed field is named in the error (`actions[2].x`).
pub fn spec_from_json(value: Value, prefix: &str) -> Result<ActionSpec, OpError> {
    if !value.is_object() {
        let error = parse_fields::<ActionSpec>(&value)
            .err()
            .map(|bad| plain_words(&bad.error))
            .unwrap_or_default();
        return Err(OpError::invalid(
            prefix,
            format!(
                "{error}; an action is an object like {{\"type\": \"click\", \"x\": 10, \"y\": 20}}"
            ),
        ));
    }
    parse_fields::<ActionSpec>(&value).map_err(|bad| {
        let has_type = value.get("type").is_some() || value.get("action").is_some();
        match bad.field {
            Some(field) if field != "params" && (field != "type" || has_type) => {
                OpError::invalid(&format!("{prefix}.{field}"), plain_words(&bad.error))
            }
            _ if !has_type => {
                OpError::invalid(&format!("{prefix}.type"), "missing; e.g. \"click\"")
            }
            _ => OpError::invalid(prefix, plain_words(&bad.error)),
        }
    })
}

/// serde's message with JSON words for Rust types ("expected a number", not "expected f64").
fn plain_words(text: &str) -> String {
    text.replace("expected f64", "expected a number")
        .replace("expected u32", "expected a whole number")
        .replace("expected u64", "expected a whole number")
        .replace("expected a sequence", "expected a list")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn malformed_fields_are_named() {
        let err = spec_from_json(json!({"type": "click", "x": "10", "y": 5}), "action")
            .expect_err("a string x");
        assert_eq!(err.field.as_deref(), Some("action.x"));
        assert!(err.message.contains("expected a number"), "{}", err.message);
        let err = spec_from_json(json!({"type": "keypress", "keys": "ctrl+c"}), "actions[3]")
            .expect_err("keys not a list");
        assert_eq!(err.field.as_deref(), Some("actions[3].keys"));
        let err = spec_from_json(json!({"type": "click", "bogus": 1}), "action")
            .expect_err("unknown field");
        assert_eq!(err.field.as_deref(), Some("action.bogus"));
        let err = spec_from_json(json!({"x": 1}), "action").expect_err("no type");
        assert_eq!(err.field.as_deref(), Some("action.type"));
        let err = spec_from_json(json!("click"), "action").expect_err("not an object");
        assert_eq!(err.field.as_deref(), Some("action"));
    }
}
