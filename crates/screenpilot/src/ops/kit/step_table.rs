//! One `[[step]]` of a step file, as one type: `save_test`'s journal writes it (each operation says
//! what its call becomes, [`super::operation::Operation::journal`]) and `screenpilot test` reads it
//! back (`steps/file.rs`). A key that is no field here but an operation's name runs that operation
//! with the table as its parameters, so an operation with no step of its own still has one.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a secret comes from, as a request or a step names it: never the value a model would have
/// to hold. Defined with the step (which names it too), read on the caller's side by
/// [`super::secrets`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The value, filled in on the caller's side ([`SecretRef::resolve`]); never listed, never kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub value: Option<String>,
    /// Why it could not be resolved, for the daemon to refuse with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub problem: Option<String>,
}

/// One step. Exactly one of its actions is given (`spawn`, input, `until` alone, `resize`, `run`,
/// `expect`, `golden`, `textual`, `desktop`, `computer`, `act`, `close`, or an operation's name);
/// the reader says so when not.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepTable {
    /// The session; none: the last one started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sid: Option<String>,
    /// A program to start, as a command line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spawn: Option<String>,
    /// A Textual app: the textual_run tool's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub textual: Option<Map<String, Value>>,
    /// A desktop: the desktop_start tool's parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desktop: Option<Map<String, Value>>,
    /// With spawn: `COLSxROWS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<BTreeMap<String, String>>,
    /// A command line run at the session's shell prompt, waited for until it ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// Text, then Enter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse: Option<Map<String, Value>>,
    /// Where a password comes from (`{env = "VAR"}` or `{file = "PATH"}`), never its value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretRef>,
    /// Computer actions: one table or a list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub computer: Option<Value>,
    /// An action on a desktop element: `ref`, `do`, `text`, `to`, `until`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<Map<String, Value>>,
    /// A new terminal size, `COLSxROWS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize: Option<String>,
    /// The condition to wait for, as the send tool takes it; alone, the step only waits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub close: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub golden: Option<Value>,
    /// This step's limit for its wait or expectation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Words for the person reading the file; nothing runs them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Any other operation, by its name, with its parameters (kept apart from the fields: the
    /// reader and the writer put it in the table under its name).
    #[serde(skip)]
    pub op: Option<(String, Map<String, Value>)>,
}

/// What a call carries that its step does not keep: its session (the step's own `sid`), what the
/// caller's side filled in, its limit and the form of its answer.
pub const CALLERS_OWN: &[&str] = &[
    "sid",
    "caller_env",
    "caller_umask",
    "reader",
    "timeout_ms",
    "screen",
];

/// The fields of an `act` step's table.
pub const ACT_FIELDS: &[&str] = &["ref", "do", "text", "to", "until"];

impl StepTable {
    /// What a step can do, by the field that says it (`input` for text, keys, line, mouse or a
    /// secret; `until` for a condition alone): a step does exactly one, or an operation's.
    pub const ACTIONS: &'static [&'static str] = &[
        "spawn",
        "input",
        Self::UNTIL,
        Self::RESIZE,
        "run",
        "expect",
        "golden",
        "textual",
        "desktop",
        Self::COMPUTER,
        Self::ACT,
        "close",
    ];
    pub const UNTIL: &'static str = "until";
    pub const RESIZE: &'static str = "resize";
    pub const COMPUTER: &'static str = "computer";
    pub const ACT: &'static str = "act";
    pub const EXPECT: &'static str = "expect";

    /// The actions this step gives, in [`StepTable::ACTIONS`]' order, then its operation's name. A
    /// condition goes with spawn, input and computer; alone it is a wait.
    pub fn actions(&self) -> Vec<&str> {
        let input = self.gives_input();
        let given = [
            self.spawn.is_some(),
            input,
            self.until.is_some() && !input && self.spawn.is_none() && self.computer.is_none(),
            self.resize.is_some(),
            self.run.is_some(),
            self.expect.is_some(),
            self.golden.is_some(),
            self.textual.is_some(),
            self.desktop.is_some(),
            self.computer.is_some(),
            self.act.is_some(),
            self.close.is_some(),
        ];
        Self::ACTIONS
            .iter()
            .zip(given)
            .filter_map(|(name, given)| given.then_some(*name))
            .chain(self.op.as_ref().map(|(name, _)| name.as_str()))
            .collect()
    }

    /// The field names a step table has, in the order the type declares them: the order a person
    /// reads a step in (what it does, then what it waits for), which the writer keeps.
    pub fn fields() -> &'static [&'static str] {
        field_names::<StepTable>()
    }

    /// It gives input: text, keys, a line, a mouse event or a secret.
    pub fn gives_input(&self) -> bool {
        self.text.is_some()
            || self.keys.is_some()
            || self.line.is_some()
            || self.mouse.is_some()
            || self.secret.is_some()
    }

    /// It starts its session (a program, a Textual app, a desktop).
    pub fn starts(&self) -> bool {
        self.spawn.is_some() || self.textual.is_some() || self.desktop.is_some()
    }

    /// The table as JSON, the operation's own key included; a field given as null at any depth is a
    /// field not given (TOML has no null).
    pub fn to_map(&self) -> Map<String, Value> {
        let mut map = match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        if let Some((name, params)) = &self.op {
            map.insert(name.clone(), Value::Object(params.clone()));
        }
        match without_nulls(Value::Object(map)) {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    /// A step running operation `name` with `params` (its `sid` goes in the step's own field; what
    /// was not given is left out).
    pub fn of_operation(name: &str, params: &Value) -> StepTable {
        let mut params = params.as_object().cloned().unwrap_or_default();
        params.retain(|_, v| !v.is_null());
        let sid = params
            .remove("sid")
            .and_then(|s| s.as_str().map(str::to_owned));
        StepTable {
            sid,
            op: Some((name.to_owned(), params)),
            ..StepTable::default()
        }
    }
}

/// What one call becomes in a step file: a step, and whether it acts (the reaction to it is what
/// the next step, or a condition the journal makes, waits for).
#[derive(Debug, Clone, PartialEq)]
pub struct Journaled {
    pub step: StepTable,
    pub acts: bool,
}

impl Journaled {
    /// A step whose reaction is to be waited for (input, a program started).
    pub fn acting(step: StepTable) -> Journaled {
        Journaled { step, acts: true }
    }

    /// A step that waits for what it needs itself.
    pub fn waiting(step: StepTable) -> Journaled {
        Journaled { step, acts: false }
    }

    /// A step that only waits for `until` (when what was waited for held: one that did not is no
    /// condition to keep).
    pub fn wait(until: Value, held: bool) -> Vec<Journaled> {
        let step = StepTable {
            until: Some(until),
            ..StepTable::default()
        };
        held.then(|| Journaled::waiting(step)).into_iter().collect()
    }

    /// The input steps of a call that gives input and waits (`send`, `spawn`'s `steps`): its own
    /// input (`text`, `keys`, `mouse`, `secret` with `until`: `first`), then each of `steps`. A
    /// secret is kept as where it comes from, never its value; a condition only when it held (the
    /// journal makes one from the screens otherwise).
    pub fn inputs(first: Option<&Value>, steps: &[Value], held: bool) -> Vec<Journaled> {
        first
            .into_iter()
            .chain(steps)
            .filter_map(|spec| {
                let get = |key: &str| spec.get(key).filter(|v| !v.is_null());
                let mut step = StepTable {
                    text: get("text").and_then(Value::as_str).map(str::to_owned),
                    keys: get("keys").and_then(|k| serde_json::from_value(k.clone()).ok()),
                    mouse: get("mouse").and_then(Value::as_object).cloned(),
                    secret: get("secret")
                        .and_then(|s| serde_json::from_value::<SecretRef>(s.clone()).ok())
                        .map(|s| SecretRef {
                            env: s.env,
                            file: s.file,
                            ..SecretRef::default()
                        }),
                    ..StepTable::default()
                };
                let acts = step.gives_input();
                step.until = get("until").filter(|_| held).cloned();
                (step != StepTable::default()).then_some(Journaled { step, acts })
            })
            .collect()
    }

    /// The call's parameters as a step's table, without nulls and without `drop` (what the file
    /// does not keep: the sid, what only the caller filled in).
    pub fn table_of(params: &Value, drop: &[&str]) -> Map<String, Value> {
        let mut table = params.as_object().cloned().unwrap_or_default();
        table.retain(|key, value| !value.is_null() && !drop.contains(&key.as_str()));
        table
    }
}

/// `value` without the nulls of its objects, at any depth.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// The fields of a struct deriving `Deserialize`, in declaration order, as serde itself knows them.
fn field_names<T: Deserialize<'static>>() -> &'static [&'static str] {
    use serde::de::{self, Visitor};
    struct Catch(Option<&'static [&'static str]>);
    impl<'de> serde::Deserializer<'de> for &mut Catch {
        type Error = de::value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
            Err(de::Error::custom("only the field names are read"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, Self::Error> {
            self.0 = Some(fields);
            Err(de::Error::custom("only the field names are read"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
            ignored_any
        }
    }
    let mut catch = Catch(None);
    let _ = T::deserialize(&mut catch);
    catch.0.unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_fields_are_the_types_and_an_operation_goes_under_its_name() {
        let fields = StepTable::fields();
        assert_eq!(
            fields[..3],
            ["sid", "spawn", "textual"],
            "declaration order"
        );
        for field in ["until", "keys", "act", "close", "note"] {
            assert!(fields.contains(&field), "{field} in {fields:?}");
        }
        assert!(!fields.contains(&"op"), "the op is no field");
        let step = StepTable::of_operation("probe", &json!({"sid": "a", "times": 2, "x": null}));
        assert_eq!(step.sid.as_deref(), Some("a"));
        assert_eq!(
            Value::Object(step.to_map()),
            json!({"sid": "a", "probe": {"times": 2}})
        );
    }
}
