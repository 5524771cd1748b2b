//! Every operation screenpilot offers, defined once.
//!
//! Each operation has a parameter type (serde + JSON Schema) and an implementation over the session
//! registry. The daemon executes them; the CLI and the MCP server only build parameters, send them to
//! the daemon and present the result. [`OPERATIONS`] lists them with the descriptions the MCP server
//! publishes.

mod computer;
mod desktop;
mod input;
mod lifecycle;
mod mouse;
mod observe;
mod textual;
mod waits;

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use screenpilot_desktop::DesktopRegistry;
use screenpilot_session::{Registry, ScreenState, SessionError};

pub use computer::{ActionSpec, ComputerParams};
pub use desktop::DesktopStartParams;
pub use input::{SendKeysParams, TextParams};
pub use lifecycle::{ResizeParams, SidParams, SpawnParams};
pub use mouse::MouseParams;
pub use observe::{ImageFormat, ScreenshotParams, SnapshotParams};
pub use waits::{
    ExpectParams, WaitChangeParams, WaitExitParams, WaitForParams, WaitReadyParams,
    WaitVisualChangeParams,
};

/// Where an operation streams intermediate results (a screen update after each step of a long
/// operation); the daemon forwards them as progress lines, MCP as progress notifications.
#[derive(Clone, Default)]
pub struct Progress(Option<tokio::sync::mpsc::UnboundedSender<Value>>);

impl Progress {
    pub fn new(sink: tokio::sync::mpsc::UnboundedSender<Value>) -> Progress {
        Progress(Some(sink))
    }

    /// Report progress; silently dropped when nobody listens.
    pub fn send(&self, update: Value) {
        if let Some(sink) = &self.0 {
            let _ = sink.send(update);
        }
    }
}

/// What an operation needs from the daemon.
#[derive(Clone)]
pub struct Context {
    pub registry: Arc<Registry>,
    /// Desktop sessions (X11); `list`, `alive` and `close` consult it for sids that are not terminals.
    pub desktops: Arc<DesktopRegistry>,
}

impl Context {
    /// A context over `registry`, with desktops sharing its sid space and session limit.
    pub fn new(registry: Arc<Registry>) -> Context {
        let desktops = DesktopRegistry::new();
        registry.set_peers(Arc::new(desktop::DesktopPeers(desktops.clone())));
        Context { registry, desktops }
    }
}

/// Why an operation failed: a stable code, a message for people and models, and the field at fault.
#[derive(Debug, Clone, Serialize, serde::Deserialize, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct OpError {
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub field: Option<String>,
}

impl OpError {
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        OpError {
            code: code.to_owned(),
            message: message.into(),
            field: None,
        }
    }

    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        OpError {
            code: "invalid_argument".into(),
            message: format!("{field}: {message}"),
            field: Some(field.into()),
        }
    }
}

impl From<SessionError> for OpError {
    fn from(e: SessionError) -> Self {
        OpError {
            code: e.code().to_owned(),
            message: e.to_string(),
            field: e.field().map(str::to_owned),
        }
    }
}

pub type OpResult = Result<Value, OpError>;

/// One operation as the outside world sees it.
pub struct OperationDef {
    /// The MCP tool name, and the daemon op name.
    pub name: &'static str,
    /// What a model reading it cold needs: what it does, what comes back, an example.
    pub description: &'static str,
    /// JSON Schema of the parameters.
    pub schema: fn() -> Value,
}

fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// Parse parameters, naming the operation and the field at fault in errors.
fn params<T: DeserializeOwned>(op: &str, value: Value) -> Result<T, OpError> {
    let value = if value.is_null() {
        Value::Object(Map::new())
    } else {
        value
    };
    T::deserialize(&value).map_err(|e| {
        let text = e.to_string();
        // Unknown, missing and duplicate fields are named by serde itself.
        if text.contains("field `") {
            return OpError {
                code: "invalid_argument".into(),
                message: format!("{op}: {text}"),
                field: text.split('`').nth(1).map(str::to_owned),
            };
        }
        let field = match &value {
            Value::Object(fields) => culprit::<T>(fields, &text),
            _ => Some("params".to_owned()),
        };
        OpError {
            code: "invalid_argument".into(),
            message: match &field {
                Some(field) => format!("{op}: {field}: {text}"),
                None => format!("{op}: {text}"),
            },
            field,
        }
    })
}

/// The field whose value makes `fields` fail to parse with `error`: serde's message for a wrong type
/// ("invalid type: string \"5\", expected u64") does not say where. Without the culprit the error
/// changes (or parsing succeeds); without any other field it stays the same. Runs only on failure.
fn culprit<T: DeserializeOwned>(fields: &Map<String, Value>, error: &str) -> Option<String> {
    fields.keys().find_map(|key| {
        let mut without = fields.clone();
        without.remove(key);
        let same = T::deserialize(&Value::Object(without)).is_err_and(|e| e.to_string() == error);
        (!same).then(|| key.clone())
    })
}

/// The result object every session operation starts from.
fn base(sid: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("ok".into(), Value::Bool(true));
    map.insert("sid".into(), Value::String(sid.to_owned()));
    map
}

/// `base` plus the screen state fields, flattened.
fn with_state(sid: &str, state: &ScreenState) -> Map<String, Value> {
    let mut map = base(sid);
    if let Ok(Value::Object(fields)) = serde_json::to_value(state) {
        map.extend(fields);
    }
    map
}

/// Run operation `name` with JSON parameters. Long operations report steps to `progress`.
pub async fn execute(
    ctx: &Context,
    name: &str,
    params_json: Value,
    progress: &Progress,
) -> OpResult {
    match name {
        "spawn" => lifecycle::spawn(ctx, params(name, params_json)?).await,
        "list" => lifecycle::list(ctx, params(name, params_json)?),
        "alive" => lifecycle::alive(ctx, params(name, params_json)?),
        "close" => lifecycle::close(ctx, params(name, params_json)?).await,
        "resize" => lifecycle::resize(ctx, params(name, params_json)?).await,
        "send_keys" => input::send_keys(ctx, params(name, params_json)?).await,
        "send_line" => input::send_line(ctx, params(name, params_json)?).await,
        "type" => input::type_text(ctx, params(name, params_json)?).await,
        "mouse" => mouse::mouse(ctx, params(name, params_json)?).await,
        "snapshot" => observe::snapshot(ctx, params(name, params_json)?),
        "screenshot" => observe::screenshot(ctx, params(name, params_json)?),
        "wait_for" => waits::wait_for(ctx, params(name, params_json)?).await,
        "expect" => waits::expect(ctx, params(name, params_json)?).await,
        "wait_change" => waits::wait_change(ctx, params(name, params_json)?).await,
        "wait_visual_change" => waits::wait_visual_change(ctx, params(name, params_json)?).await,
        "wait_ready" => waits::wait_ready(ctx, params(name, params_json)?).await,
        "wait_exit" => waits::wait_exit(ctx, params(name, params_json)?).await,
        "desktop_start" => desktop::desktop_start(ctx, params(name, params_json)?).await,
        "computer" => computer::computer(ctx, params(name, params_json)?, progress).await,
        "textual_run" => crate::textual::run(ctx, params(name, params_json)?, progress).await,
        other => Err(OpError::new(
            "unknown_operation",
            format!(
                "op: unknown operation {other:?}; known: {}",
                OPERATIONS
                    .iter()
                    .map(|o| o.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Every operation, in the order tools are listed.
pub const OPERATIONS: &[OperationDef] = &[
    lifecycle::SPAWN,
    lifecycle::LIST,
    lifecycle::ALIVE,
    lifecycle::CLOSE,
    lifecycle::RESIZE,
    input::SEND_KEYS,
    input::SEND_LINE,
    input::TYPE,
    mouse::MOUSE,
    observe::SNAPSHOT,
    observe::SCREENSHOT,
    waits::WAIT_FOR,
    waits::EXPECT,
    waits::WAIT_CHANGE,
    waits::WAIT_VISUAL_CHANGE,
    waits::WAIT_READY,
    waits::WAIT_EXIT,
    desktop::DESKTOP_START,
    computer::COMPUTER,
    textual::TEXTUAL_RUN,
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error_of<T: DeserializeOwned + std::fmt::Debug>(op: &str, value: Value) -> OpError {
        params::<T>(op, value).unwrap_err()
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_field() {
        let e = error_of::<SpawnParams>("spawn", json!({"cmd": "bash", "cols": -1}));
        assert_eq!(e.field.as_deref(), Some("cols"), "{e:?}");
        assert!(e.message.starts_with("spawn: cols: invalid value"), "{e:?}");

        let e = error_of::<WaitForParams>(
            "wait_for",
            json!({"sid": "a", "pattern": "x", "timeout_ms": "5"}),
        );
        assert_eq!(e.field.as_deref(), Some("timeout_ms"), "{e:?}");

        let e = error_of::<SpawnParams>("spawn", json!({"cmd": "bash", "env": {"A": 1}}));
        assert_eq!(e.field.as_deref(), Some("env"), "{e:?}");

        // A required field of the wrong type is named too (without it, the error is "missing field").
        let e = error_of::<ExpectParams>("expect", json!({"sid": "a", "patterns": "abc"}));
        assert_eq!(e.field.as_deref(), Some("patterns"), "{e:?}");
    }

    #[test]
    fn unknown_and_missing_fields_and_non_objects_are_named() {
        let e = error_of::<SidParams>("alive", json!({"sid": "a", "bogus": 1}));
        assert_eq!(e.field.as_deref(), Some("bogus"), "{e:?}");
        let e = error_of::<SidParams>("alive", json!({}));
        assert_eq!(e.field.as_deref(), Some("sid"), "{e:?}");
        let e = error_of::<SidParams>("alive", json!(5));
        assert_eq!(e.field.as_deref(), Some("params"), "{e:?}");
    }
}
