//! The steps of one call, shared by the operations that take them (`send`, `spawn`, `computer`): each
//! step's input (text, keys, a mouse event, a secret) is checked before anything is sent, written, and
//! waited on with its own `until` condition before the next step goes.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use screenpilot_screen::keys;
use screenpilot_session::Session;

use super::common::{parse_fields, Context, OpError};
use super::look::{Look, ScreenMode};
use super::secrets::{type_hidden, SecretRef};
use super::until::{Compiled, UntilDone, UntilParams};
use super::write::{mouse_writes, MouseSpec};

/// The most steps one call may carry.
const MAX_STEPS: usize = 50;

/// One step as given: input, then a condition.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StepSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mouse: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretRef>,
}

impl StepSpec {
    fn is_empty(&self) -> bool {
        self.text.is_none()
            && self.keys.is_none()
            && self.mouse.is_none()
            && self.until.is_none()
            && self.secret.is_none()
    }
}

/// A step checked before anything is sent: its mouse event parsed, its condition compiled.
pub(crate) struct Step {
    text: Option<String>,
    keys: Option<Vec<String>>,
    mouse: Option<MouseSpec>,
    until: Option<Compiled>,
    /// A secret's value, typed with Enter into a hidden-line prompt.
    secret: Option<String>,
    /// Where errors about it point: "" (the call's own fields) or "steps[N]".
    field: String,
}

/// How the waits of a call's steps ended, as `send` and `spawn` answer them.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Outcomes {
    /// How the (last) step's wait ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<UntilDone>,
    /// With several steps: how each one's wait ended, in order (null: no until). Fewer than given
    /// when one did not hold: the rest were not sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<Option<UntilDone>>,
    /// How many steps were given (with several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub given: Option<usize>,
}

impl Outcomes {
    fn of(outcomes: Vec<Option<UntilDone>>, given: usize) -> Outcomes {
        let many = given > 1;
        Outcomes {
            until: outcomes.last().cloned().flatten(),
            given: many.then_some(given),
            steps: if many { outcomes } else { Vec::new() },
        }
    }

    /// Every step was sent and every wait held.
    pub fn satisfied(&self) -> bool {
        match self.given {
            Some(given) => {
                self.steps.len() == given && self.steps.iter().flatten().all(|u| u.held.is_some())
            }
            None => self.until.as_ref().is_none_or(|u| u.held.is_some()),
        }
    }

    /// The lines a model reads about the waits: `held=...` (or one numbered line per step), and
    /// which steps were not sent.
    pub fn facts(&self) -> Vec<String> {
        let Some(given) = self.given else {
            return self.until.iter().map(UntilDone::brief).collect();
        };
        let mut lines: Vec<String> = self
            .steps
            .iter()
            .enumerate()
            .map(|(i, done)| match done {
                Some(done) => format!("{i}: {}", done.brief()),
                None => format!("{i}: sent"),
            })
            .collect();
        if self.steps.len() < given {
            lines.push(format!("{}-{}: not sent", self.steps.len(), given - 1));
        }
        // Each on its own line; the screen's facts follow on the last.
        vec![lines.join("\n") + "\n"]
    }

    /// Why the waits did not hold, for stderr (`what`: the operation).
    pub fn complaint(&self, what: &str) -> Option<String> {
        if self.satisfied() {
            return None;
        }
        let until = self.until.as_ref()?;
        let which = match self.given {
            Some(_) => format!("step {}: ", self.steps.len().saturating_sub(1)),
            None => String::new(),
        };
        Some(if until.timed_out {
            format!(
                "{what}: {which}until timed out after {} ms",
                until.elapsed_ms.round()
            )
        } else {
            format!("{what}: {which}the program ended before until held")
        })
    }
}

/// How the steps of a call went: each wait's outcome, the last mouse cell, and the screen after.
pub(crate) struct Walked {
    pub outcomes: Outcomes,
    pub cell: Option<[u16; 2]>,
    pub look: Look,
}

/// A JSON object parsed as `T`, errors naming `field.inner` (`until.regex`, `steps[1].mouse`).
fn parse_at<T: serde::de::DeserializeOwned>(value: &Value, field: &str) -> Result<T, OpError> {
    if !value.is_object() {
        return Err(OpError::invalid(
            field,
            "an object, e.g. {\"regex\": \"^>>> $\"}",
        ));
    }
    parse_fields::<T>(value).map_err(|bad| {
        let path = bad
            .field
            .map_or(field.to_owned(), |f| format!("{field}.{f}"));
        OpError::invalid(&path, bad.error)
    })
}

/// An `until` object, errors naming `until.FIELD`.
pub(crate) fn until_object(value: &Value) -> Result<UntilParams, OpError> {
    parse_at(value, "until")
}

/// The steps of a call: its own fields first (when any is given), then `steps`, each checked and
/// compiled before anything is sent.
pub(crate) async fn checked_steps(
    ctx: &Context,
    first: StepSpec,
    more: Option<Vec<Value>>,
) -> Result<Vec<Step>, OpError> {
    let mut specs: Vec<(String, StepSpec)> = Vec::new();
    if !first.is_empty() {
        specs.push((String::new(), first));
    }
    let more = more.unwrap_or_default();
    if more.len() > MAX_STEPS {
        return Err(OpError::invalid(
            "steps",
            format!("{} steps; at most {MAX_STEPS} in one call", more.len()),
        ));
    }
    for (i, value) in more.iter().enumerate() {
        let field = format!("steps[{i}]");
        let spec: StepSpec = parse_at(value, &field)?;
        if spec.is_empty() {
            return Err(OpError::invalid(
                &field,
                "an empty step: give text, keys, mouse or until",
            ));
        }
        specs.push((field, spec));
    }
    let mut steps = Vec::with_capacity(specs.len());
    for (field, spec) in specs {
        let within = |e: OpError| match field.as_str() {
            "" => e,
            parent => e.within(parent),
        };
        let mouse = spec
            .mouse
            .as_ref()
            .map(|m| parse_at::<MouseSpec>(m, "mouse"))
            .transpose()
            .map_err(within)?;
        let until = match &spec.until {
            Some(value) => {
                let params: UntilParams = parse_at(value, "until").map_err(within)?;
                Some(params.compile(ctx).await.map_err(within)?)
            }
            None => None,
        };
        let secret = match &spec.secret {
            Some(_) if spec.text.is_some() || spec.keys.is_some() || spec.mouse.is_some() => {
                return Err(within(OpError::invalid(
                    "secret",
                    "is typed alone, with Enter: give no text, keys or mouse in the same step",
                )))
            }
            Some(secret) => Some(secret.value("secret").map_err(within)?.to_owned()),
            None => None,
        };
        steps.push(Step {
            text: spec.text.filter(|t| !t.is_empty()),
            keys: spec.keys,
            mouse,
            until,
            secret,
            field,
        });
    }
    Ok(steps)
}

/// Run `steps` on `session` in order: each one's input, then its wait (the screen hashes read
/// before the input, so a change it causes at once still counts). Stops at the first wait that does
/// not hold. Then look, as `reader`.
pub(crate) async fn walk(
    session: &Session,
    steps: Vec<Step>,
    limit: Duration,
    screen: ScreenMode,
    reader: Option<&str>,
) -> Result<Walked, OpError> {
    let given = steps.len();
    let mut outcomes = Vec::with_capacity(given);
    let mut cell = None;
    let mut waited = false;
    for step in steps {
        let modes = session.modes();
        let mut chunks = Vec::new();
        if let Some(text) = &step.text {
            chunks.push(keys::encode_entered(text, &modes));
        }
        if let Some(tokens) = &step.keys {
            chunks.extend(keys::encode_tokens(tokens, &modes));
        }
        if let Some(mouse) = &step.mouse {
            let within = |e: OpError| match step.field.as_str() {
                "" => e.within("mouse"),
                parent => e.within(&format!("{parent}.mouse")),
            };
            let (writes, at) = mouse_writes(session, mouse).map_err(within)?;
            chunks.extend(writes);
            cell = at.map(|pos| [pos.col.0, pos.row.0]);
        }
        let typed = !chunks.is_empty() || step.secret.is_some();
        let armed = step.until.map(|until| until.arm(session, limit, typed));
        if let Some(secret) = &step.secret {
            let field = match step.field.as_str() {
                "" => "secret".to_owned(),
                parent => format!("{parent}.secret"),
            };
            type_hidden(session, secret, &field).await?;
        }
        if !chunks.is_empty() {
            session.write(&chunks).await?;
        }
        let done = match armed {
            Some(armed) => {
                waited = true;
                Some(armed.wait(session).await)
            }
            None => None,
        };
        let held = done.as_ref().is_none_or(|d| d.held.is_some());
        outcomes.push(done);
        if !held {
            break;
        }
    }
    // Input with no wait after it has nothing new to show yet, unless asked.
    let screen = match screen {
        ScreenMode::Auto if !waited && given > 0 => ScreenMode::None,
        mode => mode,
    };
    let look = Look::take(session, screen, reader)?;
    Ok(Walked {
        outcomes: Outcomes::of(outcomes, given),
        cell,
        look,
    })
}
