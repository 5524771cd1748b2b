//! One agent step in one call: `send` input (text, keys, a mouse event), then wait `until` a
//! condition holds, and answer with the outcome and the screen as this caller has not seen it yet
//! ([`super::kit::look`]). A call may carry several such steps (`steps`), run in order, each waiting for
//! its own condition before the next is sent: a program whose turns a model knows (vim, a menu, a
//! REPL) is driven in one call, as a person types ahead, but never faster than the program answers.
//! With nothing to send, `send` only waits (or only looks).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::kit::common::{Caller, Context, OpError, Progress};
use super::kit::display::{find_target, Target};
use super::kit::look::{Look, ScreenMode};
use super::kit::operation::{Operation, Profile, Report, View};
use super::kit::secrets::SecretRef;
use super::kit::until::{timeout, waiting_words, UntilParams};
use super::kit::walk::{checked_steps, walk, Outcomes, StepSpec, Walked};
use crate::ops::kit::step_table::Journaled;

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

    fn progress(p: &SendParams) -> Option<String> {
        waiting_words(&p.sid, p.until.as_ref())
    }

    fn journal(p: &SendParams, held: bool) -> Vec<Journaled> {
        let first = serde_json::to_value(p).unwrap_or_default();
        Journaled::inputs(Some(&first), p.steps.as_deref().unwrap_or_default(), held)
    }

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

    fn progress(p: &WaitParams) -> Option<String> {
        waiting_words(&p.sid, Some(&p.until))
    }

    fn journal(p: &WaitParams, held: bool) -> Vec<Journaled> {
        Journaled::wait(p.until.clone(), held)
    }

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
