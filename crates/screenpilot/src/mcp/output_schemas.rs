//! Which `outputSchema` a tool lists: a summary by default, the exact schema on request
//! (`screenpilot mcp --output-schemas full`).
//!
//! Why not the exact one always: the official Python SDK 1.x validates every result with
//! `jsonschema.validate`, which first checks the *schema* against the Draft 2020-12 metaschema, about
//! 0.17 ms a subschema on top of 0.34 ms, on every call (benches/output_schema_cost.py). An exact
//! `snapshot` schema has 131 subschemas: 22 ms of the client's own CPU for each snapshot. SDK 2.x checks
//! a schema once and keeps its validator, so it pays well under a millisecond either way.
//!
//! The summary keeps what a program reading a result leans on: the fields every answer has
//! (`required`), and the type of the top-level fields that have one (a string, a number, a list...),
//! no more than [`MOST_SUBSCHEMAS`] schema objects in all. It accepts every answer the exact schema
//! accepts (the tests validate real results against both), so the MCP rule that `structuredContent`
//! conforms to `outputSchema` holds under either.

use serde_json::{json, Map, Value};

/// What `--output-schemas` asks for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputSchemas {
    /// The summary: `required` and the top-level fields' types, in a few subschemas.
    #[default]
    Compact,
    /// The exact schema of every answer, nested objects and unions included.
    Full,
}

/// Most schema objects in a summary, itself included: `ok` and the next two fields every answer has
/// are typed. SDK 1.30 pays about 0.34 ms + 0.17 ms for each on a quiet machine and up to 0.4 ms each
/// on a loaded one (two cores shared with compilers): eight took 2.5-4.3 ms there, four stay under 2.
pub const MOST_SUBSCHEMAS: usize = 4;

/// The types a summarised field may have: one, with nothing nested in it.
const SIMPLE_TYPES: &[&str] = &["string", "integer", "number", "boolean", "array", "object"];

/// The schema listed for an answer whose exact schema is `full` (already compacted and portable).
pub fn listed(full: Map<String, Value>, wanted: OutputSchemas) -> Map<String, Value> {
    match wanted {
        OutputSchemas::Full => full,
        OutputSchemas::Compact => summary_of(&full),
    }
}

/// `{type: object, required, properties}` with the fields every answer has, and a plain type for
/// the top-level fields that have one: those of the root and its `allOf` parts, and those every
/// branch of a union (`anyOf`, `oneOf`, nested or not) types alike. Fields every answer has are typed
/// first, in the order `required` names them; past [`MOST_SUBSCHEMAS`] the rest stay untyped (still
/// named in `required` when every answer has them).
pub fn summary_of(full: &Map<String, Value>) -> Map<String, Value> {
    let defs = full.get("$defs").and_then(Value::as_object);
    let resolve = |schema: &Value| -> Option<Map<String, Value>> {
        let map = schema.as_object()?;
        match map.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.strip_prefix("#/$defs/")?;
                let mut target = defs?.get(name)?.as_object()?.clone();
                // Keywords beside the `$ref` narrow it further: keep them.
                for (key, value) in map.iter().filter(|(key, _)| *key != "$ref") {
                    target.insert(key.clone(), value.clone());
                }
                Some(target)
            }
            None => Some(map.clone()),
        }
    };
    let Facts {
        required,
        mut typed,
    } = facts_of(full, &resolve);
    let rank = |name: &String| {
        required
            .iter()
            .position(|r| r == name)
            .unwrap_or(usize::MAX)
    };
    typed.sort_by_key(|(name, _)| rank(name));
    typed.truncate(MOST_SUBSCHEMAS - 1);

    let mut summary = Map::new();
    summary.insert("type".into(), json!("object"));
    if !typed.is_empty() {
        let properties: Map<String, Value> = typed
            .into_iter()
            .map(|(name, schema)| (name, Value::Object(schema)))
            .collect();
        summary.insert("properties".into(), Value::Object(properties));
    }
    if !required.is_empty() {
        summary.insert("required".into(), json!(required));
    }
    summary
}

/// What holds of every instance a schema accepts: the fields it must have, and the fields it types
/// with one simple type.
struct Facts {
    required: Vec<String>,
    typed: Vec<(String, Map<String, Value>)>,
}

fn facts_of(
    schema: &Map<String, Value>,
    resolve: &impl Fn(&Value) -> Option<Map<String, Value>>,
) -> Facts {
    let mut facts = Facts {
        required: required_of(schema),
        typed: simple_fields(schema, resolve),
    };
    let parts = |key: &str| -> Vec<Facts> {
        schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(resolve)
            .map(|part| facts_of(&part, resolve))
            .collect()
    };
    // Every part of an allOf holds.
    for part in parts("allOf") {
        facts.required.extend(part.required);
        facts.typed.extend(part.typed);
    }
    // Of a union, what every branch says alike.
    for key in ["anyOf", "oneOf"] {
        let branches = parts(key);
        if let Some((first, rest)) = branches.split_first() {
            for name in &first.required {
                if rest.iter().all(|b| b.required.contains(name)) {
                    facts.required.push(name.clone());
                }
            }
            for field in &first.typed {
                if rest.iter().all(|b| b.typed.contains(field)) {
                    facts.typed.push(field.clone());
                }
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    facts.required.retain(|name| seen.insert(name.clone()));
    let mut seen = std::collections::HashSet::new();
    facts.typed.retain(|(name, _)| seen.insert(name.clone()));
    facts
}

fn required_of(schema: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str().map(str::to_owned))
        .collect()
}

/// The fields of `schema`'s `properties` that have one simple type, each as `{type}` (and its
/// `enum`, for a string that is one of a few names).
fn simple_fields(
    schema: &Map<String, Value>,
    resolve: &impl Fn(&Value) -> Option<Map<String, Value>>,
) -> Vec<(String, Map<String, Value>)> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(name, field)| {
            let field = resolve(field)?;
            let kind = field.get("type")?.as_str()?;
            if !SIMPLE_TYPES.contains(&kind) {
                return None;
            }
            let mut plain = Map::new();
            plain.insert("type".into(), json!(kind));
            if let (Some(names @ Value::Array(_)), "string") = (field.get("enum"), kind) {
                plain.insert("enum".into(), names.clone());
            }
            Some((name.clone(), plain))
        })
        .collect()
}

/// Keywords whose value is one subschema; `true` there means "anything", as leaving it out does.
pub(crate) const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "items",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// Keywords whose value maps names to subschemas, or lists subschemas.
pub(crate) const SUBSCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
pub(crate) const SUBSCHEMA_LISTS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Schema objects in `schema`, itself included: what the metaschema check walks.
pub fn subschema_count(schema: &Value) -> usize {
    let Value::Object(map) = schema else {
        return 1;
    };
    let mut count = 1;
    for (key, value) in map {
        count += match (key.as_str(), value) {
            (k, Value::Object(named)) if SUBSCHEMA_MAPS.contains(&k) => {
                named.values().map(subschema_count).sum()
            }
            (k, Value::Array(list)) if SUBSCHEMA_LISTS.contains(&k) => {
                list.iter().map(subschema_count).sum()
            }
            (k, inner) if SUBSCHEMA_KEYWORDS.contains(&k) => subschema_count(inner),
            _ => 0,
        };
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(full: Value) -> Value {
        Value::Object(summary_of(full.as_object().expect("an object")))
    }

    #[test]
    fn root_fields_every_answer_has_are_typed_and_nested_schemas_go() {
        let full = json!({
            "type": "object",
            "required": ["ok", "sid", "cursor"],
            "properties": {
                "cursor": {"$ref": "#/$defs/Cursor"},
                "ok": {"type": "boolean"},
                "sid": {"type": "string"},
                "exit_code": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "mode": {"type": "string", "enum": ["a", "b"]},
                "lines": {"type": "array", "items": {"type": "string"}}
            },
            "$defs": {"Cursor": {"type": "object", "properties": {"row": {"type": "integer"}}}}
        });
        assert_eq!(
            summary(full),
            json!({
                "type": "object",
                "required": ["ok", "sid", "cursor"],
                "properties": {
                    "ok": {"type": "boolean"},
                    "sid": {"type": "string"},
                    "cursor": {"type": "object"}
                }
            })
        );
    }

    #[test]
    fn a_union_keeps_what_every_branch_says_alike() {
        let full = json!({
            "type": "object",
            "required": ["ok"],
            "properties": {"ok": {"type": "boolean"}},
            "anyOf": [
                {"type": "object", "required": ["sid", "text"],
                 "properties": {"sid": {"type": "string"}, "text": {"type": "string"}, "rows": {"type": "integer"}}},
                {"type": "object", "required": ["sid"],
                 "properties": {"sid": {"type": "string"}, "rows": {"type": "string"}}}
            ]
        });
        assert_eq!(
            summary(full),
            json!({
                "type": "object",
                "required": ["ok", "sid"],
                "properties": {"ok": {"type": "boolean"}, "sid": {"type": "string"}}
            })
        );
    }

    #[test]
    fn a_union_of_unions_keeps_what_every_leaf_says_alike() {
        let full = json!({
            "type": "object",
            "required": ["ok"],
            "properties": {"ok": {"type": "boolean"}},
            "anyOf": [
                {"type": "object", "properties": {"png": {"type": "string"}}, "anyOf": [
                    {"required": ["sid", "kind"], "properties": {"sid": {"type": "string"}, "kind": {"type": "string"}}},
                    {"required": ["sid"], "properties": {"sid": {"type": "string"}, "rows": {"type": "integer"}}}
                ]},
                {"required": ["sid", "delta"], "properties": {"sid": {"type": "string"}, "delta": {"type": "array"}}}
            ]
        });
        assert_eq!(
            summary(full),
            json!({
                "type": "object",
                "required": ["ok", "sid"],
                "properties": {"ok": {"type": "boolean"}, "sid": {"type": "string"}}
            })
        );
    }

    #[test]
    fn past_the_budget_fields_every_answer_has_are_typed_first() {
        let mut properties = Map::new();
        for i in 0..12 {
            properties.insert(format!("f{i:02}"), json!({"type": "integer"}));
        }
        let required = ["f11", "f10", "f09", "f08"];
        let full = json!({"type": "object", "required": required, "properties": properties});
        let listed = summary(full);
        assert_eq!(subschema_count(&listed), MOST_SUBSCHEMAS, "{listed}");
        let mut typed: Vec<&String> = listed["properties"]
            .as_object()
            .expect("properties")
            .keys()
            .collect();
        typed.sort_unstable();
        // The first `required` names.
        let mut wanted = required[..MOST_SUBSCHEMAS - 1].to_vec();
        wanted.sort_unstable();
        assert_eq!(typed, wanted, "{listed}");
    }

    /// Every tool's default outputSchema is an object of at most [`MOST_SUBSCHEMAS`] schema objects
    /// whose `required` holds `ok`, and no bigger than the full one. The counts are printed for
    /// BENCHMARKS.md (`cargo test -p screenpilot --lib output_schemas -- --nocapture`).
    #[test]
    fn every_default_output_schema_is_a_summary_of_few_subschemas() {
        use crate::mcp::tools::tool_of;
        use crate::ops::{Profile, OPERATIONS};
        let listed = |op, outputs| {
            let tool = tool_of(op, &Profile::ALL, outputs);
            Value::Object((*tool.output_schema.expect("an outputSchema")).clone())
        };
        for op in OPERATIONS.iter().filter(|op| op.tool) {
            let compact = listed(op, OutputSchemas::Compact);
            let full = listed(op, OutputSchemas::Full);
            let (few, all) = (subschema_count(&compact), subschema_count(&full));
            println!("{}: {all} subschemas in full, {few} compact", op.name);
            assert!(
                few <= MOST_SUBSCHEMAS,
                "{}: {few} subschemas: {compact}",
                op.name
            );
            assert_eq!(compact["type"], "object", "{}", op.name);
            let required = compact["required"].as_array().cloned().unwrap_or_default();
            assert!(required.contains(&json!("ok")), "{}: {compact}", op.name);
            assert!(
                all >= few,
                "{}: the full schema is smaller: {full}",
                op.name
            );
        }
    }

    #[test]
    fn subschemas_are_counted_as_the_metaschema_check_walks_them() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "b": {"type": "array", "items": {"type": "integer"}}},
            "required": ["a"]
        });
        assert_eq!(subschema_count(&schema), 6);
    }
}
