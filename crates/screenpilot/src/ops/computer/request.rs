//! The request shape of one computer action, as models send it: a flat object with `type` (or
//! Anthropic's `action`) and the fields that type uses. [`super::parse`] turns it into an
//! [`super::actions::Action`].

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::ops::common::{parse_fields, OpError};

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
