//! Operations as MCP tools: name, description and input schema straight from [`crate::ops`], with the
//! schema compacted for models.
//!
//! schemars writes what Rust knows (`"format": "uint16"`, `"maximum": 65535`, `["string", "null"]` for an
//! `Option`, enums behind `$ref`). A model pays tokens for each of them on every session and some clients
//! reject `$ref` or type lists, so the listed schema keeps only what constrains a call: types, enums,
//! required fields, defaults, descriptions. The daemon still validates every call with the full rules.
//!
//! Both schemas are made portable: no subschema is a bare `true` (schemars writes one for a
//! `serde_json::Value` field or map; MCP Inspector `--strict` and some clients want objects there).
//! The one boolean kept is `additionalProperties: false` (classic profile only), which OpenAI's strict mode asks for. No
//! `type` is a list (schemars writes `["integer", "null"]` for an `Option`): clients that map schemas
//! onto a single-`type` dialect (Gemini's OpenAPI subset) reject or loosen those, so each becomes
//! `anyOf` branches of one type. And no subschema is empty (`{}`, what a `Value` field becomes once
//! its `true` is gone): it says "any JSON value" by listing the six types.

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

use super::output_schemas::{
    self, OutputSchemas, SUBSCHEMA_KEYWORDS, SUBSCHEMA_LISTS, SUBSCHEMA_MAPS,
};
use crate::ops::{OperationDef, Profile};

/// Numeric formats schemars derives from Rust types; no JSON Schema validator knows them.
const RUST_FORMATS: &[&str] = &[
    "int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint",
    "float", "double",
];

/// An operation as an MCP tool, as a server serving `profiles` lists it: its compacted parameter
/// schema (with only the parameters those profiles list, [`crate::ops::Operation::FIELD_PROFILES`]),
/// its description (the classic one when the classic profile is served), and the schema of its answer
/// as `outputSchema` (clients validate `structuredContent` against it), a summary or the exact one as
/// `outputs` says ([`super::output_schemas`]).
pub fn tool_of(op: &OperationDef, profiles: &[Profile], outputs: OutputSchemas) -> Tool {
    let mut schema = match (op.params_schema)() {
        Value::Object(schema) => compact_schema(schema),
        _ => Map::from_iter([("type".to_owned(), json!("object"))]),
    };
    let mut hidden = false;
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        properties.retain(|name, _| {
            let listed = op
                .field_profiles
                .iter()
                .find(|(field, _)| field == name)
                .is_none_or(|(_, only)| only.iter().any(|p| profiles.contains(p)));
            hidden |= !listed;
            listed
        });
    }
    // A parameter left out of the listing is still taken: the listed schema must not refuse it. The
    // lean profiles leave the flag out anyway: a model pays for it on every turn, and the daemon
    // names an unknown parameter in its error.
    let classic = profiles.contains(&Profile::Classic);
    if hidden || !classic {
        schema.remove("additionalProperties");
    }
    // So too what a nested object may hold (`until`'s unknown fields, `env`'s values) and the
    // length of a pair ([w,h], [x,y]): the description says it, the daemon checks it.
    if !classic {
        if let Some(Value::Object(properties)) = schema.get_mut("properties") {
            for property in properties.values_mut().filter_map(Value::as_object_mut) {
                property.remove("minItems");
                property.remove("maxItems");
                property.remove("additionalProperties");
            }
        }
    }
    let description = match op.classic_description {
        Some(text) if classic => text,
        _ => op.description,
    };
    let tool =
        Tool::new(op.name, description, portable(schema)).with_annotations(annotations_of(op));
    match (op.output_schema)() {
        Value::Object(output) => {
            let exact = portable(compact_output_schema(output));
            tool.with_raw_output_schema(std::sync::Arc::new(output_schemas::listed(exact, outputs)))
        }
        _ => tool,
    }
}

/// A schema as strict clients want it (see the module comment); it accepts exactly what it did.
pub fn portable(schema: Map<String, Value>) -> Map<String, Value> {
    let mut schema = no_true_subschemas(schema);
    one_type_each(&mut schema);
    schema
}

/// What the operation declares about itself ([`crate::ops::Operation::READ_ONLY`], `DESTRUCTIVE`).
/// Every tool acts only on screenpilot's own sessions: not an open world.
fn annotations_of(op: &OperationDef) -> ToolAnnotations {
    // Each hint is sent only where it differs from the spec's default (readOnlyHint false,
    // destructiveHint true, openWorldHint true); destructiveHint means something only when not read-only.
    let annotations = ToolAnnotations::new().open_world(false);
    if op.read_only {
        annotations.read_only(true)
    } else {
        annotations.destructive(op.destructive)
    }
}

/// `schema` with every `true` subschema dropped (where a keyword holds it) or made `{}` (where a
/// name or a list position needs a schema).
pub fn no_true_subschemas(mut schema: Map<String, Value>) -> Map<String, Value> {
    schema.retain(|key, value| {
        !(SUBSCHEMA_KEYWORDS.contains(&key.as_str()) && *value == Value::Bool(true))
    });
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        if SUBSCHEMA_KEYWORDS.contains(&key) {
            object_schema(value);
        } else if SUBSCHEMA_MAPS.contains(&key) {
            if let Value::Object(named) = value {
                named.values_mut().for_each(object_schema);
            }
        } else if SUBSCHEMA_LISTS.contains(&key) {
            if let Value::Array(list) = value {
                list.iter_mut().for_each(object_schema);
            }
        }
    }
    schema
}

/// Keywords that only describe; a schema with nothing else accepts any value.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];

/// Keywords that constrain `null` too (the type-specific ones, `minimum` or `items`, ignore it).
const ANY_TYPE_KEYWORDS: &[&str] = &[
    "enum", "const", "anyOf", "allOf", "oneOf", "not", "if", "then", "else", "$ref",
];

/// Every `type` list in `schema` and its subschemas split into `anyOf` branches of one type each, and
/// every empty subschema spelled out as any of the six JSON types. Annotations stay where they were;
/// the other keywords go into each branch (into the `null` branch only those that apply to `null`),
/// so the schema accepts exactly what it did.
fn one_type_each(schema: &mut Map<String, Value>) {
    for_each_subschema(schema, one_type_each);
    let types = match schema.get("type") {
        Some(Value::Array(types)) => types.clone(),
        _ if schema.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) => {
            ["null", "boolean", "number", "string", "array", "object"]
                .map(Value::from)
                .to_vec()
        }
        _ => return,
    };
    schema.remove("type");
    let (annotations, rules): (Map<String, Value>, Map<String, Value>) = std::mem::take(schema)
        .into_iter()
        .partition(|(key, _)| ANNOTATIONS.contains(&key.as_str()));
    let branches = types
        .into_iter()
        .map(|t| {
            let mut branch = Map::from_iter([("type".to_owned(), t.clone())]);
            for (key, value) in &rules {
                if t != "null" || ANY_TYPE_KEYWORDS.contains(&key.as_str()) {
                    branch.insert(key.clone(), value.clone());
                }
            }
            Value::Object(branch)
        })
        .collect();
    *schema = annotations;
    schema.insert("anyOf".to_owned(), Value::Array(branches));
}

/// Call `f` on each subschema directly under `schema` (the keywords of [`no_true_subschemas`]).
fn for_each_subschema(schema: &mut Map<String, Value>, f: fn(&mut Map<String, Value>)) {
    for (key, value) in schema.iter_mut() {
        let key = key.as_str();
        if SUBSCHEMA_KEYWORDS.contains(&key) {
            if let Value::Object(inner) = value {
                f(inner);
            }
        } else if SUBSCHEMA_MAPS.contains(&key) {
            if let Value::Object(named) = value {
                named
                    .values_mut()
                    .filter_map(Value::as_object_mut)
                    .for_each(f);
            }
        } else if SUBSCHEMA_LISTS.contains(&key) {
            if let Value::Array(list) = value {
                list.iter_mut().filter_map(Value::as_object_mut).for_each(f);
            }
        }
    }
}

fn object_schema(value: &mut Value) {
    match value {
        Value::Bool(true) => *value = Value::Object(Map::new()),
        Value::Object(map) => *map = no_true_subschemas(std::mem::take(map)),
        _ => {}
    }
}

/// The parameter schema as listed to clients (see the module comment).
pub fn compact_schema(mut schema: Map<String, Value>) -> Map<String, Value> {
    schema.remove("$schema");
    schema.remove("title");
    // The parameter type's own doc ("Parameters of `spawn`. ...") is for people reading Rust; a
    // model reads the tool's description.
    schema.remove("description");
    let defs = match schema.remove("$defs") {
        Some(Value::Object(defs)) => defs,
        _ => Map::new(),
    };
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            compact_value(property, &defs);
        }
    }
    schema
}

fn compact_value(value: &mut Value, defs: &Map<String, Value>) {
    let Value::Object(map) = value else {
        return;
    };
    // An Option<Enum> is `anyOf: [{$ref}, {type: null}]`: the field is optional anyway.
    if let Some(Value::Array(any_of)) = map.get("anyOf") {
        let not_null: Vec<&Value> = any_of
            .iter()
            .filter(|v| v.get("type") != Some(&json!("null")))
            .collect();
        if let [only] = not_null[..] {
            let only = only.clone();
            map.remove("anyOf");
            merge_under(map, &only);
        }
    }
    // `$ref` to a definition: inline it, with the field's own description only (a type's doc is
    // written for people reading Rust).
    if let Some(Value::String(reference)) = map.get("$ref") {
        let target = reference
            .strip_prefix("#/$defs/")
            .and_then(|name| defs.get(name))
            .cloned()
            .map(|mut target| {
                if let Some(fields) = target.as_object_mut() {
                    fields.remove("description");
                }
                target
            });
        if let Some(target) = target {
            map.remove("$ref");
            merge_under(map, &target);
        }
    }
    if let Some(Value::Array(types)) = map.get("type") {
        let not_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [only] = not_null[..] {
            let only = only.clone();
            map.insert("type".into(), only);
        }
    }
    drop_rust_integer_noise(map);
    plain_enum_and_no_empty_default(map);
    for key in ["items", "additionalProperties"] {
        if let Some(inner) = map.get_mut(key) {
            compact_value(inner, defs);
        }
    }
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for property in properties.values_mut() {
            compact_value(property, defs);
        }
    }
}

/// The exact answer schema (what `--output-schemas full` lists, and what the default summary is made
/// from): every field's type checked, and as small as that allows, because a validating client pays
/// for its size on every result ([`super::output_schemas`]). So it has no descriptions, titles, defaults or
/// Rust integer formats (a model reads the tool description, not this), and a definition used once
/// is written in place. ("T or null" stays an `anyOf` of two, not a list of types, which would be one
/// subschema fewer: MCP Inspector --strict and single-`type` clients refuse type lists.)
pub fn compact_output_schema(mut schema: Map<String, Value>) -> Map<String, Value> {
    schema.remove("$schema");
    schema.remove("title");
    schema.remove("description");
    inline_single_use_defs(&mut schema);
    if let Some(Value::Object(properties)) = schema.get_mut("properties") {
        for property in properties.values_mut() {
            strip_rust_noise(property, false);
        }
    }
    if let Some(Value::Object(defs)) = schema.get_mut("$defs") {
        for def in defs.values_mut() {
            strip_rust_noise(def, false);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get_mut(key) {
            for branch in branches {
                strip_rust_noise(branch, false);
            }
        }
    }
    schema
}

/// Write each `$defs` entry referenced once in place of its `$ref` (a definition shared by several
/// fields stays, once). Fewer subschemas, the same verdicts.
fn inline_single_use_defs(schema: &mut Map<String, Value>) {
    let Some(Value::Object(defs)) = schema.remove("$defs") else {
        return;
    };
    fn count_refs(value: &Value, counts: &mut std::collections::HashMap<String, usize>) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(r)) = map.get("$ref") {
                    if let Some(name) = r.strip_prefix("#/$defs/") {
                        *counts.entry(name.to_owned()).or_default() += 1;
                    }
                }
                map.values().for_each(|v| count_refs(v, counts));
            }
            Value::Array(items) => items.iter().for_each(|v| count_refs(v, counts)),
            _ => {}
        }
    }
    fn replace(value: &mut Value, single: &Map<String, Value>) {
        match value {
            Value::Object(map) => {
                let target = match map.get("$ref") {
                    Some(Value::String(r)) => r
                        .strip_prefix("#/$defs/")
                        .and_then(|name| single.get(name))
                        .cloned(),
                    _ => None,
                };
                if let Some(Value::Object(target)) = target {
                    map.remove("$ref");
                    for (key, inner) in target {
                        map.entry(key).or_insert(inner);
                    }
                }
                map.values_mut().for_each(|v| replace(v, single));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| replace(v, single)),
            _ => {}
        }
    }
    let mut counts = std::collections::HashMap::new();
    count_refs(&Value::Object(schema.clone()), &mut counts);
    defs.values().for_each(|v| count_refs(v, &mut counts));
    let (single, shared): (Map<String, Value>, Map<String, Value>) = defs
        .into_iter()
        .partition(|(name, _)| counts.get(name).copied().unwrap_or(0) <= 1);
    // A definition used once may itself use another used once: replace until nothing changes.
    let mut whole = Value::Object(std::mem::take(schema));
    let mut shared = Value::Object(shared);
    for _ in 0..8 {
        replace(&mut whole, &single);
        replace(&mut shared, &single);
    }
    if let Value::Object(map) = whole {
        *schema = map;
    }
    if let Value::Object(shared) = shared {
        if !shared.is_empty() {
            schema.insert("$defs".to_owned(), Value::Object(shared));
        }
    }
}

fn strip_rust_noise(value: &mut Value, keep_description: bool) {
    match value {
        Value::Object(map) => {
            if !keep_description {
                map.remove("description");
            }
            map.remove("title");
            map.remove("default");
            drop_rust_integer_noise(map);
            for (key, inner) in map.iter_mut() {
                match (key.as_str(), inner) {
                    ("enum" | "const" | "default", _) => {}
                    // Maps from names to schemas: a property may be called `title` or
                    // `description`, and only its schema is noise to strip.
                    ("properties" | "patternProperties" | "$defs", Value::Object(named)) => {
                        for schema in named.values_mut() {
                            strip_rust_noise(schema, false);
                        }
                    }
                    (_, inner) => strip_rust_noise(inner, false),
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                strip_rust_noise(item, false);
            }
        }
        _ => {}
    }
}

/// Drop a Rust numeric `format` and the bounds that come from the Rust type (not from the parameter:
/// the daemon checks the real ones).
fn drop_rust_integer_noise(map: &mut Map<String, Value>) {
    let rust_format = map
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|f| RUST_FORMATS.contains(&f));
    if !rust_format {
        return;
    }
    map.remove("format");
    if map
        .get("maximum")
        .and_then(Value::as_f64)
        .is_some_and(|max| max >= 65535.0)
    {
        map.remove("maximum");
    }
    // An unsigned type's 0 says "not negative", which no count or duration could be anyway.
    if map
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|min| min <= -32768.0 || min == 0.0)
    {
        map.remove("minimum");
    }
}

/// A `oneOf` of string constants (what schemars writes for an enum whose variants have docs) as one
/// `enum`, and a default that is what leaving the field out means anyway (false, [], {}) dropped.
fn plain_enum_and_no_empty_default(map: &mut Map<String, Value>) {
    if let Some(Value::Array(branches)) = map.get("oneOf") {
        let names: Option<Vec<Value>> = branches
            .iter()
            .map(|b| {
                let only_string = b.get("type") == Some(&json!("string"));
                match (b.get("const"), b.get("enum")) {
                    (Some(c), None) if only_string => Some(vec![c.clone()]),
                    (None, Some(Value::Array(list))) if only_string => Some(list.clone()),
                    _ => None,
                }
            })
            .collect::<Option<Vec<Vec<Value>>>>()
            .map(|lists| lists.concat());
        if let Some(names) = names {
            map.remove("oneOf");
            map.insert("type".into(), json!("string"));
            map.insert("enum".into(), Value::Array(names));
        }
    }
    let empty_default = match map.get("default") {
        Some(Value::Bool(false)) => true,
        Some(Value::Array(list)) => list.is_empty(),
        Some(Value::Object(fields)) => fields.is_empty(),
        _ => false,
    };
    if empty_default {
        map.remove("default");
    }
}

/// Add `from`'s keys to `map` where `map` has none of its own.
fn merge_under(map: &mut Map<String, Value>, from: &Value) {
    if let Value::Object(from) = from {
        for (key, value) in from {
            map.entry(key.clone()).or_insert_with(|| value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: [OutputSchemas; 2] = [OutputSchemas::Compact, OutputSchemas::Full];

    fn compact(schema: Value) -> Value {
        Value::Object(compact_schema(
            schema.as_object().cloned().unwrap_or_default(),
        ))
    }

    /// Visit every value of a schema with its path, not descending into literal values (`enum`,
    /// `const`, `default`, `examples`).
    fn walk(value: &Value, path: String, visit: &mut impl FnMut(&Value, &str)) {
        visit(value, &path);
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    if !matches!(key.as_str(), "enum" | "const" | "default" | "examples") {
                        walk(inner, format!("{path}.{key}"), visit);
                    }
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    walk(inner, format!("{path}[{i}]"), visit);
                }
            }
            _ => {}
        }
    }

    fn true_subschemas(value: &Value, path: String, found: &mut Vec<String>) {
        walk(value, path, &mut |value, path| {
            if value == &Value::Bool(true) {
                found.push(path.to_owned());
            }
        });
    }

    /// OpenAI refuses function descriptions over 1,024 characters; detail belongs in parameters.
    #[test]
    fn every_description_fits_1024_characters() {
        for op in crate::ops::OPERATIONS.iter() {
            let length = tool_of(op, &Profile::ALL, OutputSchemas::Full)
                .description
                .map_or(0, |d| d.chars().count());
            assert!(
                length <= 1024,
                "{}: description is {length} characters",
                op.name
            );
        }
    }

    /// What `check` finds in every tool's input schema and its output schemas of the kinds given.
    fn in_every_schema(
        check: fn(&Value, String, &mut Vec<String>),
        kinds: &[OutputSchemas],
    ) -> Vec<String> {
        let mut found = Vec::new();
        for op in crate::ops::OPERATIONS.iter() {
            for &outputs in kinds {
                let tool = tool_of(op, &Profile::ALL, outputs);
                let input = Value::Object((*tool.input_schema).clone());
                check(&input, format!("{}.inputSchema", op.name), &mut found);
                if let Some(output) = &tool.output_schema {
                    let output = Value::Object((**output).clone());
                    let path = format!("{}.outputSchema ({outputs:?})", op.name);
                    check(&output, path, &mut found);
                }
            }
        }
        found
    }

    #[test]
    fn no_schema_has_a_true_subschema() {
        let found = in_every_schema(true_subschemas, &BOTH);
        assert!(found.is_empty(), "{found:?}");
    }

    /// Every object schema (at any depth) that has `properties` and requires a field defines it.
    fn undefined_required(value: &Value, path: String, found: &mut Vec<String>) {
        walk(value, path, &mut |value, path| {
            if let (Some(Value::Array(required)), Some(Value::Object(properties))) =
                (value.get("required"), value.get("properties"))
            {
                for name in required.iter().filter_map(Value::as_str) {
                    if !properties.contains_key(name) {
                        found.push(format!("{path}: {name}"));
                    }
                }
            }
        });
    }

    /// A field called `title` or `description` is a field, not schema noise: a schema that requires
    /// it must still define it (the window list's `title` was stripped once). The compact output
    /// schemas name every field an answer has in `required` and type only the first few, on purpose
    /// ([`super::output_schemas`]): the exact ones are checked.
    #[test]
    fn every_required_field_is_defined() {
        let found = in_every_schema(undefined_required, &[OutputSchemas::Full]);
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn true_subschemas_become_objects_or_go() {
        let schema = json!({
            "type": "object",
            "additionalProperties": false,
            "properties": {"any": true, "map": {"type": "object", "additionalProperties": true}},
            "anyOf": [true, {"items": true}]
        });
        assert_eq!(
            Value::Object(no_true_subschemas(
                schema.as_object().cloned().unwrap_or_default()
            )),
            json!({
                "type": "object",
                "additionalProperties": false,
                "properties": {"any": {}, "map": {"type": "object"}},
                "anyOf": [{}, {}]
            })
        );
    }

    /// What MCP Inspector 2.12 `--strict` warns about: a `type` list, or a schema that says nothing.
    fn unportable(value: &Value, path: String, found: &mut Vec<String>) {
        let Value::Object(map) = value else { return };
        if matches!(map.get("type"), Some(Value::Array(_))) {
            found.push(format!("{path}: type list"));
        }
        if map.keys().all(|k| ANNOTATIONS.contains(&k.as_str())) {
            found.push(format!("{path}: no validation keyword"));
        }
        for (key, value) in map {
            let key = key.as_str();
            if SUBSCHEMA_KEYWORDS.contains(&key) {
                unportable(value, format!("{path}.{key}"), found);
            } else if SUBSCHEMA_MAPS.contains(&key) || SUBSCHEMA_LISTS.contains(&key) {
                let children: Vec<(String, &Value)> = match value {
                    Value::Object(named) => named.iter().map(|(k, v)| (k.clone(), v)).collect(),
                    Value::Array(list) => list
                        .iter()
                        .enumerate()
                        .map(|(i, v)| (i.to_string(), v))
                        .collect(),
                    _ => Vec::new(),
                };
                for (name, child) in children {
                    unportable(child, format!("{path}.{key}.{name}"), found);
                }
            }
        }
    }

    #[test]
    fn no_schema_has_a_type_list_or_an_empty_subschema() {
        let found = in_every_schema(unportable, &BOTH);
        assert!(found.is_empty(), "{found:#?}");
    }

    #[test]
    fn type_lists_become_one_type_branches_that_accept_the_same_values() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pid": {"description": "The pid.", "type": ["integer", "null"], "minimum": 0},
                "mode": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "value": {"description": "Anything."},
                "list": {"type": "array", "items": {}}
            }
        });
        assert_eq!(
            Value::Object(portable(schema.as_object().cloned().unwrap_or_default())),
            json!({
                "type": "object",
                "properties": {
                    "pid": {"description": "The pid.", "anyOf": [
                        {"type": "integer", "minimum": 0}, {"type": "null"}
                    ]},
                    "mode": {"anyOf": [
                        {"type": "string", "enum": ["a", "b", null]},
                        {"type": "null", "enum": ["a", "b", null]}
                    ]},
                    "value": {"description": "Anything.", "anyOf": [
                        {"type": "null"}, {"type": "boolean"}, {"type": "number"},
                        {"type": "string"}, {"type": "array"}, {"type": "object"}
                    ]},
                    "list": {"type": "array", "items": {"anyOf": [
                        {"type": "null"}, {"type": "boolean"}, {"type": "number"},
                        {"type": "string"}, {"type": "array"}, {"type": "object"}
                    ]}}
                }
            })
        );
    }

    #[test]
    fn every_tool_is_annotated_and_only_looking_tools_are_read_only() {
        let read_only = [
            "list",
            "wait",
            "alive",
            "snapshot",
            "screenshot",
            "wait_for",
            "expect",
            "wait_change",
            "wait_visual_change",
            "wait_ready",
            "wait_exit",
        ];
        for op in crate::ops::OPERATIONS.iter() {
            let annotations = tool_of(op, &Profile::ALL, OutputSchemas::Compact)
                .annotations
                .unwrap_or_default();
            assert_eq!(annotations.open_world_hint, Some(false), "{}", op.name);
            let looks = read_only.contains(&op.name);
            assert_eq!(
                annotations.read_only_hint,
                looks.then_some(true),
                "{}",
                op.name
            );
            let destructive = if looks {
                None
            } else {
                Some(op.name == "close")
            };
            assert_eq!(annotations.destructive_hint, destructive, "{}", op.name);
        }
    }

    #[test]
    fn rust_noise_goes_and_constraints_stay() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "ResizeParams",
            "description": "Parameters of `resize`.",
            "type": "object",
            "additionalProperties": false,
            "required": ["sid", "cols"],
            "properties": {
                "sid": {"type": "string"},
                "cols": {"type": "integer", "format": "uint16", "minimum": 0, "maximum": 65535},
                "rows": {"type": ["integer", "null"], "format": "uint16", "minimum": 0, "maximum": 65535},
                "dy": {"type": ["integer", "null"], "format": "int32"}
            }
        });
        assert_eq!(
            compact(schema),
            json!({
                "type": "object",
                "additionalProperties": false,
                "required": ["sid", "cols"],
                "properties": {
                    "sid": {"type": "string"},
                    "cols": {"type": "integer"},
                    "rows": {"type": "integer"},
                    "dy": {"type": "integer"}
                }
            })
        );
    }

    #[test]
    fn documented_enum_variants_are_one_enum_and_empty_defaults_go() {
        let schema = json!({
            "properties": {
                "screen": {"oneOf": [
                    {"enum": ["full"], "type": "string"},
                    {"const": "auto", "description": "The smaller.", "type": "string"}
                ]},
                "styled": {"type": "boolean", "default": false},
                "keys": {"type": "array", "items": {"type": "string"}, "default": []},
                "size": {"type": "integer", "default": 24}
            }
        });
        assert_eq!(
            compact(schema),
            json!({
                "properties": {
                    "screen": {"enum": ["full", "auto"], "type": "string"},
                    "styled": {"type": "boolean"},
                    "keys": {"type": "array", "items": {"type": "string"}},
                    "size": {"type": "integer", "default": 24}
                }
            })
        );
    }

    #[test]
    fn enums_are_inlined_with_the_fields_description_only() {
        let schema = json!({
            "description": "Parameters of `mouse`. Say where.",
            "$defs": {"Button": {"description": "A button.", "enum": ["left", "right"], "type": "string"}},
            "properties": {
                "action": {"$ref": "#/$defs/Button"},
                "button": {"anyOf": [{"$ref": "#/$defs/Button"}, {"type": "null"}], "description": "Default left."},
                "path": {"type": ["array", "null"], "items": {"type": "array", "items": {"type": "integer", "format": "uint16", "maximum": 65535}}}
            }
        });
        assert_eq!(
            compact(schema),
            json!({
                "properties": {
                    "action": {"enum": ["left", "right"], "type": "string"},
                    "button": {"description": "Default left.", "enum": ["left", "right"], "type": "string"},
                    "path": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}
                }
            })
        );
    }
}
