//! The request shape of one computer action, as models send it: a flat object with `type` (or
//! Anthropic's `action`) and the fields that type uses. [`super::parse`] turns it into an
//! [`super::actions::Action`].
//!
//! Anthropic's `computer_toolset_20260801` makes each action a tool of its own, so its model sends
//! `tool_use` blocks (`{"type": "tool_use", "id": .., "name": "left_click", "toolset_name":
//! "computer", "input": {..}}`) with no `action` field. A client passes such a block as it came
//! (or just its `name` and `input`): it is read as `{"action": name, ...input}`, and its `id` comes
//! back on the action's result, so each block's answer can be told apart in a batch.
//!
//! Its JSON Schema is what MCP clients check calls against before they reach us, so it must accept
//! every shape we take: both `type` and `action` are listed, and neither is required there (the
//! daemon says which is missing).

use schemars::{JsonSchema, Schema};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::ops::kit::common::{parse_fields, OpError};

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
    /// Anthropic's demo: modifiers to hold during a click (its SDK says `text`).
    pub key: Option<String>,
    /// key: times to press it, 1-100.
    pub repeat: Option<u32>,
    /// The id of the toolset `tool_use` block this action came in, echoed on its result.
    #[serde(skip)]
    #[schemars(skip)]
    pub id: Option<String>,
}

impl ActionSpec {
    /// The fields given, as the request names them (`type`/`action` aside).
    pub fn given(&self) -> Vec<&'static str> {
        let present = [
            ("x", self.x.is_some()),
            ("y", self.y.is_some()),
            ("button", self.button.is_some()),
            ("scroll_x", self.scroll_x.is_some()),
            ("scroll_y", self.scroll_y.is_some()),
            ("text", self.text.is_some()),
            ("keys", self.keys.is_some()),
            ("path", self.path.is_some()),
            ("ms", self.ms.is_some()),
            ("coordinate", self.coordinate.is_some()),
            ("start_coordinate", self.start_coordinate.is_some()),
            ("scroll_direction", self.scroll_direction.is_some()),
            ("scroll_amount", self.scroll_amount.is_some()),
            ("duration", self.duration.is_some()),
            ("region", self.region.is_some()),
            ("key", self.key.is_some()),
            ("repeat", self.repeat.is_some()),
        ];
        present
            .into_iter()
            .filter(|(_, given)| *given)
            .map(|(name, _)| name)
            .collect()
    }
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

/// The fields of a toolset `tool_use` block besides `name` and `input`.
const TOOL_USE_FIELDS: [&str; 4] = ["type", "id", "toolset_name", "caller"];

/// Is this object a toolset `tool_use` block? It has a `name` or `input`, and no action's `type`
/// or `action` (on a flat action they are stray fields, refused by name as any unknown one is).
fn is_tool_use(map: &Map<String, Value>) -> bool {
    let block_type = match map.get("type") {
        None => true,
        Some(kind) => kind == "tool_use",
    };
    (map.contains_key("name") || map.contains_key("input"))
        && block_type
        && !map.contains_key("action")
}

/// A toolset `tool_use` block (or `{name, input}`) as the action it names, `{"action": name,
/// ...input}`, and the block's id. Anything but the block's own fields is refused by name.
fn from_tool_use(
    mut block: Map<String, Value>,
    prefix: &str,
) -> Result<(Value, Option<String>), OpError> {
    let field = |name: &str| format!("{prefix}.{name}");
    let name = match block.remove("name") {
        Some(Value::String(name)) => name,
        Some(_) => {
            return Err(OpError::invalid(
                &field("name"),
                "expected the action's name, e.g. \"left_click\"",
            ))
        }
        None => {
            return Err(OpError::invalid(
                &field("name"),
                "missing: a tool_use block names its action, e.g. \"left_click\"",
            ))
        }
    };
    let mut input = match block.remove("input") {
        Some(Value::Object(input)) => input,
        None | Some(Value::Null) => Map::new(),
        Some(_) => {
            return Err(OpError::invalid(
                &field("input"),
                "expected an object: the action's fields",
            ))
        }
    };
    let id = match block.remove("id") {
        None | Some(Value::Null) => None,
        Some(Value::String(id)) => Some(id),
        Some(_) => {
            return Err(OpError::invalid(
                &field("id"),
                "expected the tool_use block's id, a string",
            ))
        }
    };
    match block.get("toolset_name") {
        None => {}
        Some(Value::String(toolset)) if toolset == "computer" => {}
        Some(other) => {
            return Err(OpError::invalid(
                &field("toolset_name"),
                format!("{other} is not the \"computer\" toolset"),
            ))
        }
    }
    if let Some(other) = block
        .keys()
        .find(|key| !TOOL_USE_FIELDS.contains(&key.as_str()))
    {
        return Err(OpError::invalid(
            &field(other),
            "not a field of a tool_use block (type, id, name, toolset_name, input, caller); the action's fields go in input",
        ));
    }
    if let Some(inner) = ["action", "type"]
        .into_iter()
        .find(|key| input.contains_key(*key))
    {
        return Err(OpError::invalid(
            &field(&format!("input.{inner}")),
            "a toolset call's name is its action; input holds only the action's fields",
        ));
    }
    input.insert("action".to_owned(), Value::String(name));
    Ok((Value::Object(input), id))
}

/// An action object from its JSON: the flat form, or a toolset `tool_use` block. A malformed field
/// is named in the error (`actions[2].x`).
pub fn spec_from_json(value: Value, prefix: &str) -> Result<ActionSpec, OpError> {
    let (value, id) = match value {
        Value::Object(map) if is_tool_use(&map) => from_tool_use(map, prefix)?,
        other => (other, None),
    };
    let mut spec = flat_spec(value, prefix)?;
    spec.id = id;
    Ok(spec)
}

/// A flat action object (`type` or `action`, and its fields) from its JSON.
fn flat_spec(value: Value, prefix: &str) -> Result<ActionSpec, OpError> {
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
