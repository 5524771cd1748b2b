//! What an operation is: one definition with its name, description, parameter type, output type and
//! implementation ([`Operation`]); and how its output reads for people and models ([`Report`]).
//!
//! The daemon runs operations; the CLI and the MCP server build the same parameter types, and read
//! answers back into the same output types. [`OperationDef`] is the untyped face of an operation that
//! the list in `mod.rs` generates for each one.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::view::{Report, View};

use super::common::{parse_params, schema_of, Caller, Context, ErrorCode, OpError, Progress};
use super::step_table::{Journaled, StepTable};

/// One operation.
pub trait Operation {
    /// The MCP tool name, and the daemon op name.
    const NAME: &'static str;
    /// What a model reading it cold needs: what it does, what comes back, an example.
    const DESCRIPTION: &'static str;
    /// It only looks (snapshots, screenshots, waits): MCP's `readOnlyHint`.
    const READ_ONLY: bool = false;
    /// It may end or lose something (a program, a session): MCP's `destructiveHint`. Operations that
    /// are neither only add (start a session) or give a program input, as a person at it would.
    const DESTRUCTIVE: bool = false;
    /// The tool profiles that list it (`screenpilot mcp --tools ...`); the classic ones by default.
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    /// Parameters listed only when one of these profiles is served (an empty list: never listed,
    /// for parameters only the CLI or the library sets): a model reads only what it can use, so
    /// every byte listed earns its place. The daemon takes them all whatever is listed.
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] = &[];
    /// The description the classic profile lists, when it differs (the seed's shapes, spelled out).
    const CLASSIC_DESCRIPTION: Option<&'static str> = None;
    /// It is an MCP tool. Operations only a person's client uses (`attach` streaming paints to a
    /// terminal) say `false`: the daemon runs them, no tool list shows them.
    const TOOL: bool = true;
    /// It starts a session (`spawn`): a client of several hosts sends it to the host its sid names.
    const STARTS_SESSION: bool = false;
    /// It asks every host at once (`list`) when a client has several, and the answers are merged.
    const EVERY_HOST: bool = false;
    /// It belongs in a session's story that `save_test` writes down: what it did to a session or
    /// saw of it. `false` for what serves a person or the tool itself (`list`, `watch`, `attach`).
    const IN_STEP_FILES: bool = true;
    type Params: DeserializeOwned + Serialize + JsonSchema + Send;
    type Output: DeserializeOwned + Serialize + JsonSchema + Report + Send;

    /// Fill in what only the caller knows (relative paths are the caller's), before the parameters
    /// leave the CLI or the MCP server for the daemon.
    fn prepare(_params: &mut Self::Params, _caller: &Caller) {}

    /// How long a call may wait (waits say their timeout): the MCP server reports progress against it.
    fn time_limit(_params: &Self::Params) -> Option<Duration> {
        None
    }

    /// What the MCP server reports while a call waits ("waiting for /ready/ on sh").
    fn progress(_params: &Self::Params) -> Option<String> {
        None
    }

    /// The steps a call becomes in a step file (`held`: whatever it waited for held). By default an
    /// operation that changes something is a step under its own name, `NAME = {params}`, which
    /// `screenpilot test` runs again; one that only looks is none (it only marks what was seen).
    fn journal(params: &Self::Params, _held: bool) -> Vec<Journaled> {
        if Self::READ_ONLY {
            return Vec::new();
        }
        match serde_json::to_value(params) {
            Ok(params) => vec![Journaled::acting(StepTable::of_operation(
                Self::NAME,
                &params,
            ))],
            Err(_) => Vec::new(),
        }
    }

    fn run(
        ctx: &Context,
        params: Self::Params,
        progress: &Progress,
    ) -> impl Future<Output = Result<Self::Output, OpError>> + Send;
}

/// A set of tools, served alone by `screenpilot mcp --tools NAME`: a client that drives only one
/// kind of session loads only its tools. `terminal`, `textual` and `desktop` are the lean tools, all
/// three served by default; `classic` is the tools of the terminal-driving seed (SmartCLI's names
/// and shapes: send_keys, wait_for, expect, ...) and screenpilot's own beside them, for clients that
/// rely on those. `list` and `close` are in every profile, so a model can always see and end what it
/// started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Terminal,
    Textual,
    Desktop,
    Classic,
}

impl Profile {
    pub const ALL: [Profile; 4] = [
        Profile::Terminal,
        Profile::Textual,
        Profile::Desktop,
        Profile::Classic,
    ];
    /// What `screenpilot mcp` serves without `--tools`.
    pub const DEFAULT: [Profile; 3] = [Profile::Terminal, Profile::Textual, Profile::Desktop];
    /// Every profile: for the operations every kind of session uses.
    pub const EVERY: &'static [Profile] = &Profile::ALL;
    /// The lean terminal and desktop tools and the classic ones: operations that look at either.
    pub const SCREENS: &'static [Profile] =
        &[Profile::Terminal, Profile::Desktop, Profile::Classic];
    /// The terminal tools, lean and classic.
    pub const TERMINALS: &'static [Profile] = &[Profile::Terminal, Profile::Classic];

    /// Only the classic profile.
    pub const CLASSIC: &'static [Profile] = &[Profile::Classic];
    /// The desktop profiles.
    pub const DESKTOPS: &'static [Profile] = &[Profile::Desktop, Profile::Classic];
    /// No profile: a parameter never listed.
    pub const NONE: &'static [Profile] = &[];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Terminal => "terminal",
            Profile::Textual => "textual",
            Profile::Desktop => "desktop",
            Profile::Classic => "classic",
        }
    }
}

/// An answer on the wire: `ok` and the output's fields.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Answer<T> {
    pub ok: bool,
    #[serde(flatten)]
    pub output: T,
}

/// An answer read back into its output type: what the CLI and the MCP server show.
#[derive(Debug, Clone)]
pub struct Reading {
    pub ok: bool,
    pub satisfied: bool,
    pub view: View,
    pub human: String,
    pub complaint: Option<String>,
}

/// An operation as the outside world sees it, without types; one per operation, generated.
pub struct OperationDef {
    pub name: &'static str,
    pub description: &'static str,
    /// [`Operation::READ_ONLY`].
    pub read_only: bool,
    /// [`Operation::DESTRUCTIVE`].
    pub destructive: bool,
    /// [`Operation::PROFILES`].
    pub profiles: &'static [Profile],
    /// [`Operation::FIELD_PROFILES`].
    pub field_profiles: &'static [(&'static str, &'static [Profile])],
    /// [`Operation::CLASSIC_DESCRIPTION`].
    pub classic_description: Option<&'static str>,
    /// [`Operation::TOOL`].
    pub tool: bool,
    /// [`Operation::STARTS_SESSION`].
    pub starts_session: bool,
    /// [`Operation::EVERY_HOST`].
    pub every_host: bool,
    /// [`Operation::progress`], on JSON parameters.
    pub progress: fn(&Value) -> Option<String>,
    /// [`Operation::journal`], on JSON parameters.
    pub journal: fn(&Value, bool) -> Vec<Journaled>,
    /// Parse, run and answer: what the daemon does with a request ([`run`]).
    pub run: for<'a> fn(&'a Context, Value, &'a Progress) -> Running<'a>,
    /// JSON Schema of the parameters.
    pub params_schema: fn() -> Value,
    /// JSON Schema of the answer (`ok` and the output's fields).
    pub output_schema: fn() -> Value,
    /// Parse JSON parameters, complete them for the caller ([`Operation::prepare`]), and give them
    /// back as JSON.
    pub prepare: fn(Value, &Caller) -> Result<Value, OpError>,
    /// Read an answer back into the output type.
    pub read: fn(&Value) -> Result<Reading, OpError>,
    /// How long a call with these parameters may wait, if it is a wait.
    pub time_limit: fn(&Value) -> Option<Duration>,
}

impl OperationDef {
    /// The definition of `O`.
    pub const fn of<O: Operation + 'static>() -> OperationDef {
        OperationDef {
            name: O::NAME,
            description: O::DESCRIPTION,
            read_only: O::READ_ONLY,
            destructive: O::DESTRUCTIVE,
            profiles: O::PROFILES,
            field_profiles: O::FIELD_PROFILES,
            classic_description: O::CLASSIC_DESCRIPTION,
            tool: O::TOOL,
            starts_session: O::STARTS_SESSION,
            every_host: O::EVERY_HOST,
            progress: progress::<O>,
            journal: journal::<O>,
            run: run_boxed::<O>,
            params_schema: schema_of::<O::Params>,
            output_schema: schema_of::<Answer<O::Output>>,
            prepare: prepare::<O>,
            read: read::<O>,
            time_limit: time_limit::<O>,
        }
    }
}

fn prepare<O: Operation>(params: Value, caller: &Caller) -> Result<Value, OpError> {
    let mut typed: O::Params = parse_params(O::NAME, params)?;
    O::prepare(&mut typed, caller);
    serde_json::to_value(typed)
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("{}: parameters: {e}", O::NAME)))
}

fn progress<O: Operation>(params: &Value) -> Option<String> {
    O::progress(&O::Params::deserialize(params).ok()?)
}

fn journal<O: Operation>(params: &Value, held: bool) -> Vec<Journaled> {
    O::Params::deserialize(params)
        .map(|p| O::journal(&p, held))
        .unwrap_or_default()
}

/// A running operation: its answer, to come.
pub type Running<'a> = Pin<Box<dyn Future<Output = Result<Value, OpError>> + Send + 'a>>;

fn run_boxed<'a, O: Operation + 'static>(
    ctx: &'a Context,
    params: Value,
    progress: &'a Progress,
) -> Running<'a> {
    Box::pin(run::<O>(ctx, params, progress))
}

fn time_limit<O: Operation>(params: &Value) -> Option<Duration> {
    O::time_limit(&O::Params::deserialize(params).ok()?)
}

fn read<O: Operation>(answer: &Value) -> Result<Reading, OpError> {
    let output = O::Output::deserialize(answer).map_err(|e| {
        OpError::new(
            ErrorCode::BadResponse,
            format!("{}: the daemon's answer does not read: {e}", O::NAME),
        )
    })?;
    Ok(Reading {
        ok: output.ok(),
        satisfied: output.satisfied(),
        view: output.view(),
        human: output.human(),
        complaint: output.complaint(),
    })
}

/// A terminal operation given a desktop's sid says so, rather than that no such session exists.
fn kind_named(ctx: &Context, op: &str, sid: Option<&str>, error: OpError) -> OpError {
    match sid {
        Some(sid) if error.code == ErrorCode::UnknownSession && ctx.desktops.get(sid).is_some() => {
            OpError::new(
                ErrorCode::UnknownSession,
                format!("sid: '{sid}' is a desktop session, and {op} works on terminal sessions; a desktop takes snapshot, screenshot, act, computer, the waits and close"),
            )
            .with_field("sid")
        }
        _ => error,
    }
}

/// Parse, run and answer one operation: what the daemon does with a request.
pub async fn run<O: Operation>(
    ctx: &Context,
    params: Value,
    progress: &Progress,
) -> Result<Value, OpError> {
    let journaled = O::IN_STEP_FILES;
    let raw = journaled.then(|| params.clone());
    let before = match &raw {
        Some(raw) => ctx
            .journal
            .begin(&ctx.registry, raw.get("sid").and_then(Value::as_str)),
        None => None,
    };
    let sid = params.get("sid").and_then(Value::as_str).map(str::to_owned);
    let params: O::Params = parse_params(O::NAME, params)?;
    let output = O::run(ctx, params, progress)
        .await
        .map_err(|e| kind_named(ctx, O::NAME, sid.as_deref(), e))?;
    let held = output.satisfied();
    let answer = Answer {
        ok: output.ok(),
        output,
    };
    let answer = serde_json::to_value(answer)
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("{}: answer: {e}", O::NAME)))?;
    if let Some(raw) = raw {
        // The parameters parsed once more: the run took the first.
        let steps = journal::<O>(&raw, held);
        ctx.journal.done(steps, &raw, &answer, before);
    }
    Ok(answer)
}
