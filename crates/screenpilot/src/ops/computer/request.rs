//! The request shape of one computer action, as models send it: a flat object with `type` (or
//! Anthropic's `action`) and the fields that type uses. [`super::parse`] turns it into an
//! [`super::actions::Action`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::ops::common::OpError;

/// {x, y} or [x, y].
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PointSpec {
    Object { x: f64, y: f64 },
    Pair([f64; 2]),
}

/// One action: `type` plus the fields that type uses (see the tool description).
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    /// screenshot, click, double_click, scroll, type, wait, move, keypress, drag, or an alias.
    #[serde(rename = "type", alias = "action")]
    pub kind: String,
    pub x: Option<f64>,
    pub y: Option<f64>,
    /// left (default), right, wheel, back, forward.
    pub button: Option<String>,
    pub scroll_x: Option<f64>,
    pub scroll_y: Option<f64>,
    pub text: Option<String>,
    /// keypress: one chord. Pointer actions: modifiers to hold.
    pub keys: Option<Vec<String>>,
    /// drag: [{x, y}, ...] or [[x, y], ...].
    pub path: Option<Vec<PointSpec>>,
    /// wait: milliseconds (default 2000).
    pub ms: Option<u64>,
    pub coordinate: Option<[f64; 2]>,
    pub start_coordinate: Option<[f64; 2]>,
    pub scroll_direction: Option<String>,
    pub scroll_amount: Option<u32>,
    /// Seconds (wait, hold_key).
    pub duration: Option<f64>,
    /// zoom: [x0, y0, x1, y1].
    pub region: Option<[f64; 4]>,
}

/// An action object from its JSON. A malformed field is named in the error (`actions[2].x`), which
/// serde alone does not do: each field is tried on its own to find the one at fault.
pub fn spec_from_json(value: Value, prefix: &str) -> Result<ActionSpec, OpError> {
    let error = match serde_json::from_value::<ActionSpec>(value.clone()) {
        Ok(spec) => return Ok(spec),
        Err(e) => e,
    };
    let Value::Object(fields) = value else {
        return Err(OpError::invalid(
            prefix,
            format!(
                "{}; an action is an object like {{\"type\": \"click\", \"x\": 10, \"y\": 20}}",
                in_plain_words(&error)
            ),
        ));
    };
    let culprit = fields.iter().find_map(|(key, field)| {
        let mut alone = Map::new();
        if key != "type" && key != "action" {
            alone.insert("type".into(), "screenshot".into());
        }
        alone.insert(key.clone(), field.clone());
        serde_json::from_value::<ActionSpec>(Value::Object(alone))
            .err()
            .map(|e| (key.clone(), e))
    });
    Err(match culprit {
        Some((key, e)) => OpError::invalid(&format!("{prefix}.{key}"), in_plain_words(&e)),
        None if !fields.contains_key("type") && !fields.contains_key("action") => {
            OpError::invalid(&format!("{prefix}.type"), "missing; e.g. \"click\"")
        }
        None => OpError::invalid(prefix, in_plain_words(&error)),
    })
}

/// serde's message with JSON words for Rust types ("expected a number", not "expected f64").
fn in_plain_words(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = text.split(" at line ").next().unwrap_or(&text);
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
