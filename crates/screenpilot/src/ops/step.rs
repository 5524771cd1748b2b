//! One agent step in one call: `send` input (text, keys, a mouse event), then wait `until` a
//! condition holds, and answer with the outcome and the screen as this caller has not seen it yet
//! ([`super::look`]). A call may carry several such steps (`steps`), run in order, each waiting for
//! its own condition before the next is sent: a program whose turns a model knows (vim, a menu, a
//! REPL) is driven in one call, as a person types ahead, but never faster than the program answers.
//! With nothing to send, `send` only waits (or only looks).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use screenpilot_screen::keys;
use screenpilot_session::Session;

use super::common::{parse_fields, Caller, Context, OpError, Progress};
use super::display::{find_target, Target};
use super::look::{Look, ScreenMode};
use super::mouse::{mouse_writes, MouseSpec};
use super::operation::{Operation, Profile, Report, View};
use super::secret::{type_hidden, SecretRef};
use super::until::{timeout, Compiled, UntilDone, UntilParams};

/// The most steps one call may carry.
const MAX_STEPS: usize = 50;

/// Parameters of `send`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendParams {
    pub sid: String,
    /// Typed first
    pub text: Option<String>,
    /// Then pressed: Enter Tab Escape Up F5 C-c M-x...; other words typed
    pub keys: Option<Vec<String>>,
    /// Then {action: click|double_click|move|down|up|drag|scroll, col,row or text, button, to:[col,row], scroll_y}
    #[schemars(with = "Option<Map<String, Value>>")]
    pub mouse: Option<Value>,
    #[schemars(with = "Option<UntilParams>")]
    pub until: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<Map<String, Value>>>")]
    pub steps: Option<Vec<Value>>,
    /// For input=secret: {env:VAR} or {file:PATH}
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub secret: Option<SecretRef>,
    pub timeout_ms: Option<u64>,
    pub screen: Option<ScreenMode>,
    /// Who is looking, for deltas: filled in from the caller (not a tool parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub reader: Option<String>,
}

/// Parameters of `wait`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitParams {
    pub sid: String,
    #[schemars(with = "Map<String, Value>")]
    pub until: Value,
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub reader: Option<String>,
}

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
pub(super) struct Step {
    text: Option<String>,
    keys: Option<Vec<String>>,
    mouse: Option<MouseSpec>,
    until: Option<Compiled>,
    /// A secret's value, typed with Enter into a hidden-line prompt.
    secret: Option<String>,
    /// Where errors about it point: "" (the call's own fields) or "steps[N]".
    field: String,
}

/// What a step answers: how each wait ended, and the screen.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Stepped {
    pub sid: String,
    #[serde(flatten)]
    pub outcomes: Outcomes,
    /// `mouse`: the cell the (last) event went to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<[u16; 2]>,
    #[serde(flatten)]
    pub look: Look,
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
pub(super) struct Walked {
    pub outcomes: Outcomes,
    pub cell: Option<[u16; 2]>,
    pub look: Look,
}

impl Stepped {
    fn of(sid: String, walked: Walked) -> Stepped {
        Stepped {
            sid,
            outcomes: walked.outcomes,
            cell: walked.cell,
            look: walked.look,
        }
    }
}

impl Report for Stepped {
    fn satisfied(&self) -> bool {
        self.outcomes.satisfied()
    }
    fn view(&self) -> View {
        self.look.view(&self.outcomes.facts())
    }
    fn human(&self) -> String {
        self.view().render()
    }
    fn complaint(&self) -> Option<String> {
        self.outcomes.complaint("send")
    }
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
pub(super) fn until_object(value: &Value) -> Result<UntilParams, OpError> {
    parse_at(value, "until")
}

/// The steps of a call: its own fields first (when any is given), then `steps`, each checked and
/// compiled before anything is sent.
pub(super) async fn checked_steps(
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
pub(super) async fn walk(
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

/// `send`: input, then optionally a wait; several steps in order.
pub struct Send;

impl Operation for Send {
    const NAME: &'static str = "send";
    const PROFILES: &'static [Profile] = &[Profile::Terminal];
    const DESCRIPTION: &'static str = "Type text, press keys, click; then wait until one holds. \
Answers held=NAME match=TEXT or timeout (timeout_ms, 10000), then the screen (later: changed rows ROW|text; scrolled=N: moved up N). \
steps: more {text,keys,mouse,until}, each once the last held. \
E.g. {\"sid\":\"py\",\"keys\":[\"6*7\",\"Enter\"],\"until\":{\"regex\":\"^42$\"}}";
    type Params = SendParams;
    type Output = Stepped;

    fn prepare(p: &mut SendParams, caller: &Caller) {
        caller.fill_reader(&mut p.reader);
        // A secret's reference is read here, on the caller's side: the model never holds it. A
        // relay (the far host's bridge) keeps what the side the request began on read.
        if caller.relay {
            return;
        }
        if let Some(secret) = p.secret.as_mut() {
            secret.resolve(caller);
        }
        for step in p.steps.iter_mut().flatten() {
            let Some(value) = step.get_mut("secret") else {
                continue;
            };
            if let Ok(mut secret) = serde_json::from_value::<SecretRef>(value.clone()) {
                secret.resolve(caller);
                if let Ok(resolved) = serde_json::to_value(secret) {
                    *value = resolved;
                }
            }
        }
    }

    fn time_limit(p: &SendParams) -> Option<Duration> {
        let waits = p.until.is_some() || p.steps.as_ref().is_some_and(|s| !s.is_empty());
        waits
            .then(|| timeout(p.timeout_ms, "timeout_ms").ok())
            .flatten()
    }

    async fn run(ctx: &Context, p: SendParams, _: &Progress) -> Result<Stepped, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let limit = timeout(p.timeout_ms, "timeout_ms")?;
        let first = StepSpec {
            text: p.text,
            keys: p.keys,
            mouse: p.mouse,
            until: p.until,
            secret: p.secret,
        };
        let steps = checked_steps(ctx, first, p.steps).await?;
        let screen = p.screen.unwrap_or_default();
        let walked = walk(&session, steps, limit, screen, p.reader.as_deref()).await?;
        Ok(Stepped::of(p.sid, walked))
    }
}

/// `wait`: wait for a condition, without input.
pub struct Wait;

impl Operation for Wait {
    const NAME: &'static str = "wait";
    const PROFILES: &'static [Profile] = Profile::CLASSIC;
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] =
        &[("screen", Profile::NONE)];
    const READ_ONLY: bool = true;
    const DESCRIPTION: &'static str = "Wait, without input, until as in send. E.g. {\"sid\":\"b\",\"until\":{\"regex\":\"DONE|FAIL\"},\"timeout_ms\":60000}";
    type Params = WaitParams;
    type Output = Stepped;

    fn prepare(p: &mut WaitParams, caller: &Caller) {
        caller.fill_reader(&mut p.reader);
    }

    fn time_limit(p: &WaitParams) -> Option<Duration> {
        timeout(p.timeout_ms, "timeout_ms").ok()
    }

    async fn run(ctx: &Context, p: WaitParams, _: &Progress) -> Result<Stepped, OpError> {
        let limit = timeout(p.timeout_ms, "timeout_ms")?;
        let session = match find_target(ctx, &p.sid)? {
            Target::Terminal(session) => session,
            Target::Desktop(_) => {
                return Err(OpError::invalid(
                    "sid",
                    format!(
                        "'{}' is a desktop: use computer (wait action) or wait_for",
                        p.sid
                    ),
                ))
            }
        };
        let first = StepSpec {
            until: Some(p.until),
            ..StepSpec::default()
        };
        let steps = checked_steps(ctx, first, None).await?;
        let screen = p.screen.unwrap_or_default();
        let walked = walk(&session, steps, limit, screen, p.reader.as_deref()).await?;
        Ok(Stepped::of(p.sid, walked))
    }
}
