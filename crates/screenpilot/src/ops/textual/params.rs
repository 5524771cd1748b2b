//! The parameters of `textual_run`, as the caller gives them, and the checked request made from them.
//!
//! The names are those of the reference tool (app, actions, size, screenshot, tree, query, session,
//! close, python, timeout). Everything is validated here, before any process starts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use screenpilot_screen::{MouseButton, Size};
use screenpilot_session::SessionId;

use crate::ops::kit::button::Button;
use crate::ops::kit::common::{program_env, OpError};

/// Parameters of `textual_run`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextualRunParams {
    /// Python file with an App
    pub app: Option<String>,
    /// {press: key or [keys]}, {click: SEL or {selector, offset:[x,y], times, button}}, {double_click: SEL}, {hover: SEL}, {pause: secs}, {resize: [w,h]}, {screenshot: true}
    // Listed to clients as a plain list of objects: the description says the shapes in far fewer
    // tokens than their full schema, and the daemon checks each action with a message naming it.
    #[schemars(with = "Vec<serde_json::Map<String, Value>>")]
    #[serde(default)]
    pub actions: Vec<Value>,
    /// [80,25]
    pub size: Option<[u16; 2]>,
    #[serde(default)]
    pub screenshot: bool,
    /// Add the widget tree
    #[serde(default)]
    pub tree: bool,
    /// Selectors: add their widgets' state
    #[serde(default)]
    pub query: Vec<String>,
    pub session: Option<String>,
    #[serde(default)]
    pub close: bool,
    pub python: Option<String>,
    /// ms
    pub timeout: Option<u64>,
    /// The caller's environment, filled in by `prepare` (not a tool parameter): the interpreter is
    /// looked up on its PATH, and the app runs in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub caller_env: Option<BTreeMap<String, String>>,
}

/// One entry of `actions`, as written.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// A key, or keys in order: Textual names ("tab", "enter", "ctrl+q", "a").
    Press(Keys),
    Click(Target),
    DoubleClick(Target),
    /// Move the pointer over the widget.
    Hover(Target),
    /// Seconds to wait.
    Pause(f64),
    /// New terminal size [width, height].
    Resize([u16; 2]),
    /// Write an SVG and a PNG of the screen now, beside the app file.
    Screenshot(bool),
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Keys {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(untagged)]
pub enum Target {
    /// A CSS selector, e.g. "#inc" or "Button.primary".
    Selector(String),
    Spec(TargetSpec),
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    pub selector: String,
    /// Cell offset [x, y] from the widget's top-left corner; default: the centre of its visible part.
    pub offset: Option<[i32; 2]>,
    /// Clicks in a row (2 is a double click); default 1.
    pub times: Option<u32>,
    /// "left" (default), "middle", "right", or Textual's numbers 1, 2, 3.
    pub button: Option<Button>,
}

/// Which of the four shapes of call this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Start, act, stop: no session.
    OneShot,
    /// Start the app as session `sid` and keep it.
    Open(SessionId),
    /// Act on the running session `sid`.
    Act(SessionId),
}

/// A mouse step, checked.
#[derive(Debug, Clone)]
pub struct Pointer {
    pub selector: String,
    pub offset: Option<[i32; 2]>,
    pub count: u32,
    pub button: MouseButton,
    /// Only move there (hover).
    pub hover: bool,
}

/// One step, checked.
#[derive(Debug, Clone)]
pub enum Step {
    Press(Vec<String>),
    Pointer(Pointer),
    Pause(Duration),
    Resize(Size),
    Screenshot,
}

/// A checked `textual_run` request.
#[derive(Debug, Clone)]
pub struct Request {
    pub mode: Mode,
    pub app: Option<PathBuf>,
    /// Each step with the action as the caller wrote it (echoed in progress updates).
    pub steps: Vec<(Step, Value)>,
    pub size: Option<Size>,
    pub screenshot: bool,
    pub tree: bool,
    pub query: Vec<String>,
    pub close: bool,
    pub python: Option<String>,
    pub timeout: Duration,
    /// The environment the interpreter starts from (the caller's).
    pub env: Vec<(String, String)>,
}

pub const DEFAULT_SIZE: Size = Size::new(80, 25);
pub const DEFAULT_PYTHON: &str = "python3";
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_CLICKS: u32 = 10;

const ACTION_SHAPES: &str = "an action is one of {\"press\": \"tab\"}, {\"press\": [\"ctrl+a\", \"x\"]}, {\"click\": \"#id\"}, \
{\"click\": {\"selector\": \"#id\", \"offset\": [x, y], \"times\": 2, \"button\": \"left\"}}, {\"double_click\": \"#id\"}, \
{\"hover\": \"#id\"}, {\"pause\": 0.5}, {\"resize\": [100, 30]}, {\"screenshot\": true}";

impl Request {
    pub fn from_params(p: TextualRunParams) -> Result<Request, OpError> {
        let session = p
            .session
            .as_deref()
            .map(SessionId::parse)
            .transpose()
            .map_err(|e| OpError::invalid("session", e.to_string()))?;
        let mode = match (&p.app, session) {
            (Some(_), Some(sid)) => Mode::Open(sid),
            (None, Some(sid)) => Mode::Act(sid),
            (Some(_), None) if p.close => {
                return Err(OpError::invalid(
                    "close",
                    "close needs session (the name of an open session); a run without session stops its app anyway",
                ))
            }
            (Some(_), None) => Mode::OneShot,
            (None, None) => {
                return Err(OpError::invalid(
                    "app",
                    "give app (a Python file defining a Textual app) for a run, or session to act on an open one",
                ))
            }
        };
        let app = p.app.as_deref().map(check_app).transpose()?;
        let size = p.size.map(|[w, h]| Size::new(w, h));
        let timeout_ms = p.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms == 0 {
            return Err(OpError::invalid("timeout", "must be at least 1 ms"));
        }
        let timeout = Duration::from_millis(timeout_ms);
        if let Some(python) = &p.python {
            if python.trim().is_empty() || python.contains('\0') {
                return Err(OpError::invalid(
                    "python",
                    "an interpreter name or path, e.g. \"python3\" or \"/opt/venv/bin/python\"",
                ));
            }
        }
        let steps = p
            .actions
            .iter()
            .enumerate()
            .map(|(i, raw)| Ok((parse_step(i, raw, timeout)?, raw.clone())))
            .collect::<Result<Vec<_>, OpError>>()?;
        let env = program_env(p.caller_env, false)?;
        Ok(Request {
            mode,
            app,
            steps,
            size,
            screenshot: p.screenshot,
            tree: p.tree,
            query: p.query,
            close: p.close,
            python: p.python,
            timeout,
            env,
        })
    }
}

/// The app file must be an absolute path to a file (the CLI and the MCP server make paths absolute).
fn check_app(app: &str) -> Result<PathBuf, OpError> {
    let path = PathBuf::from(app);
    if !path.is_absolute() {
        return Err(OpError::invalid(
            "app",
            format!(
                "{app:?} is not an absolute path (the daemon has no working directory of yours)"
            ),
        ));
    }
    match std::fs::metadata(&path) {
        Ok(meta) if meta.is_file() => Ok(path),
        Ok(_) => Err(OpError::invalid(
            "app",
            format!("{} is not a file", path.display()),
        )),
        Err(e) => Err(OpError::invalid(
            "app",
            format!("cannot read {}: {e}", path.display()),
        )),
    }
}

fn parse_step(index: usize, raw: &Value, timeout: Duration) -> Result<Step, OpError> {
    let field = format!("actions[{index}]");
    let bad = |why: String| OpError::invalid(&field, why);
    let action: Action = serde_json::from_value(raw.clone())
        .map_err(|e| bad(format!("{raw} is not an action ({e}); {ACTION_SHAPES}")))?;
    let pointer = |target: Target, count: Option<u32>, hover: bool| -> Result<Step, OpError> {
        let (selector, offset, times, button) = match target {
            Target::Selector(selector) => (selector, None, None, None),
            Target::Spec(spec) => (spec.selector, spec.offset, spec.times, spec.button),
        };
        if selector.trim().is_empty() {
            return Err(bad("the selector is empty; e.g. \"#submit\"".into()));
        }
        let count = match (count, times) {
            (Some(fixed), _) => fixed,
            (None, Some(n)) if (1..=MAX_CLICKS).contains(&n) => n,
            (None, Some(n)) => return Err(bad(format!("times {n} is outside 1-{MAX_CLICKS}"))),
            (None, None) => 1,
        };
        let button = match button.unwrap_or_default() {
            b @ (Button::Left | Button::Middle | Button::Right) => MouseButton::from(b),
            other => {
                return Err(bad(format!(
                    "button {:?} is not left, middle or right",
                    other.name()
                )))
            }
        };
        Ok(Step::Pointer(Pointer {
            selector,
            offset,
            count,
            button,
            hover,
        }))
    };
    match action {
        Action::Press(keys) => {
            let keys = match keys {
                Keys::One(key) => vec![key],
                Keys::Many(keys) => keys,
            };
            if keys.is_empty() || keys.iter().any(String::is_empty) {
                return Err(bad(
                    "press needs a key or a list of keys, e.g. \"tab\" or [\"ctrl+a\", \"x\"]"
                        .into(),
                ));
            }
            Ok(Step::Press(keys))
        }
        Action::Click(target) => pointer(target, None, false),
        Action::DoubleClick(target) => pointer(target, Some(2), false),
        Action::Hover(target) => pointer(target, Some(0), true),
        // try_from: a pause too long for a Duration (1e300) is an error, not a panic.
        Action::Pause(seconds) => match Duration::try_from_secs_f64(seconds) {
            Ok(pause) if pause <= timeout => Ok(Step::Pause(pause)),
            Ok(_) => Err(bad(format!(
                "pause {seconds} s is longer than the whole call may take (timeout {} ms)",
                timeout.as_millis()
            ))),
            Err(_) => Err(bad(format!(
                "pause {seconds} is not a number of seconds >= 0"
            ))),
        },
        Action::Resize([w, h]) => Ok(Step::Resize(Size::new(w, h))),
        Action::Screenshot(true) => Ok(Step::Screenshot),
        Action::Screenshot(false) => Err(bad(
            "screenshot: false does nothing; leave the action out".into(),
        )),
    }
}

/// A short description of a step for progress messages ("click #inc").
pub fn describe(step: &Step) -> String {
    match step {
        Step::Press(keys) => format!("press {}", keys.join(" ")),
        Step::Pointer(p) if p.hover => format!("hover {}", p.selector),
        Step::Pointer(p) if p.count == 2 => format!("double_click {}", p.selector),
        Step::Pointer(p) => format!("click {}", p.selector),
        Step::Pause(d) => format!("pause {:.3} s", d.as_secs_f64()),
        Step::Resize(size) => format!("resize {}x{}", size.cols, size.rows),
        Step::Screenshot => "screenshot".into(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn request(params: Value) -> Result<Request, OpError> {
        let p: TextualRunParams = serde_json::from_value(params).expect("params shape");
        Request::from_params(p)
    }

    #[test]
    fn modes_follow_app_and_session() {
        let app = std::env::current_exe()
            .expect("exe")
            .to_string_lossy()
            .into_owned();
        assert_eq!(request(json!({"app": app})).unwrap().mode, Mode::OneShot);
        assert!(matches!(
            request(json!({"app": app, "session": "s"})).unwrap().mode,
            Mode::Open(_)
        ));
        assert!(matches!(
            request(json!({"session": "s", "close": true}))
                .unwrap()
                .mode,
            Mode::Act(_)
        ));
        assert_eq!(
            request(json!({})).unwrap_err().field.as_deref(),
            Some("app")
        );
        assert_eq!(
            request(json!({"app": "rel.py"}))
                .unwrap_err()
                .field
                .as_deref(),
            Some("app")
        );
        let missing = request(json!({"app": "/nonexistent/counter.py"})).unwrap_err();
        assert_eq!(missing.field.as_deref(), Some("app"));
        assert!(
            missing
                .message
                .contains("cannot read /nonexistent/counter.py"),
            "{missing:?}"
        );
        assert_eq!(
            request(json!({"session": "bad name"}))
                .unwrap_err()
                .field
                .as_deref(),
            Some("session")
        );
    }

    #[test]
    fn actions_parse_in_every_shape() {
        let r = request(json!({"session": "s", "actions": [
            {"press": "tab"}, {"press": ["ctrl+a", "x"]}, {"click": "#inc"},
            {"click": {"selector": "#inc", "offset": [1, 0], "times": 3, "button": 3}},
            {"double_click": "#row"}, {"hover": "Button"}, {"pause": 0.25},
            {"resize": [100, 30]}, {"screenshot": true}
        ]}))
        .unwrap();
        assert_eq!(r.steps.len(), 9);
        match &r.steps[3].0 {
            Step::Pointer(p) => {
                assert_eq!(
                    (p.count, p.button, p.offset),
                    (3, MouseButton::Right, Some([1, 0]))
                )
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(&r.steps[4].0, Step::Pointer(p) if p.count == 2));
        assert!(matches!(&r.steps[5].0, Step::Pointer(p) if p.hover));
    }

    #[test]
    fn bad_actions_name_their_index() {
        for bad in [
            json!({"clik": "#x"}),
            json!({"press": []}),
            json!({"pause": -1}),
            json!({"pause": 1e300}),
            json!({"pause": 121}),
            json!({"click": {"selector": "#x", "times": 0}}),
            json!({"click": {"selector": "#x", "button": "huge"}}),
            json!({"click": ""}),
            json!({"press": "a", "click": "#b"}),
        ] {
            let err =
                request(json!({"session": "s", "actions": [{"press": "tab"}, bad]})).unwrap_err();
            assert_eq!(err.field.as_deref(), Some("actions[1]"), "{err:?}");
        }
    }
}
