//! What an operation is: one definition with its name, description, parameter type, output type and
//! implementation ([`Operation`]); and how its output reads for people and models ([`Report`]).
//!
//! The daemon runs operations; the CLI and the MCP server build the same parameter types, and read
//! answers back into the same output types. [`OperationDef`] is the untyped face of an operation that
//! the list in `mod.rs` generates for each one.

use std::future::Future;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{parse_params, schema_of, Caller, Context, ErrorCode, OpError, Progress};

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
    /// The tool profiles that list it (`screenpilot mcp --tools ...`); terminal tools by default.
    const PROFILES: &'static [Profile] = &[Profile::Terminal];
    /// It is an MCP tool. Operations only a person's client uses (`attach` streaming paints to a
    /// terminal) say `false`: the daemon runs them, no tool list shows them.
    const TOOL: bool = true;
    type Params: DeserializeOwned + Serialize + JsonSchema + Send;
    type Output: DeserializeOwned + Serialize + JsonSchema + Report + Send;

    /// Fill in what only the caller knows (relative paths are the caller's), before the parameters
    /// leave the CLI or the MCP server for the daemon.
    fn prepare(_params: &mut Self::Params, _caller: &Caller) {}

    /// How long a call may wait (waits say their timeout): the MCP server reports progress against it.
    fn time_limit(_params: &Self::Params) -> Option<Duration> {
        None
    }

    fn run(
        ctx: &Context,
        params: Self::Params,
        progress: &Progress,
    ) -> impl Future<Output = Result<Self::Output, OpError>> + Send;
}

/// How an output reads: whether it is good news, and what people and models are shown.
pub trait Report {
    /// `false` makes the answer `ok: false` (evidence attached, e.g. `computer` failing after input).
    fn ok(&self) -> bool {
        true
    }

    /// Whether the operation got what was asked (a wait's condition held; the program is alive): the
    /// CLI's exit status is 0 when it did, 1 when not.
    fn satisfied(&self) -> bool {
        self.ok()
    }

    /// What a model reads first in a tool result.
    fn view(&self) -> View {
        View::default()
    }

    /// What the CLI prints for a person (without --json).
    fn human(&self) -> String {
        self.view().screen.unwrap_or_default()
    }

    /// A line for stderr when not satisfied ("wait timed out").
    fn complaint(&self) -> Option<String> {
        None
    }
}

/// A screen-bearing result as a model reads it: one header line of facts, then the screen.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct View {
    /// Facts for the header line, in reading order (`sid=sh matched=true ...`).
    pub header: Vec<(&'static str, String)>,
    /// History above the screen, when asked for.
    pub scrollback: Option<String>,
    /// The screen text; `None` for results that carry no screen (they read as compact JSON).
    pub screen: Option<String>,
    /// Other findings, shown as JSON after the screen for models that read only text.
    pub extras: Vec<(&'static str, Value)>,
}

impl View {
    /// Add a header fact.
    pub fn fact(&mut self, name: &'static str, value: impl ToString) {
        self.header.push((name, value.to_string()));
    }
}

/// A set of tools for one kind of session, served alone by `screenpilot mcp --tools NAME`: a client
/// that drives only one kind loads only its tools. `list` and `close` are in every profile, so a
/// model can always see and end what it started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Terminal,
    Textual,
    Desktop,
}

impl Profile {
    pub const ALL: [Profile; 3] = [Profile::Terminal, Profile::Textual, Profile::Desktop];
    /// Every profile: for the operations every kind of session uses.
    pub const EVERY: &'static [Profile] = &Profile::ALL;
    /// Terminals and desktops: the operations that look at either.
    pub const SCREENS: &'static [Profile] = &[Profile::Terminal, Profile::Desktop];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Terminal => "terminal",
            Profile::Textual => "textual",
            Profile::Desktop => "desktop",
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
    /// [`Operation::TOOL`].
    pub tool: bool,
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
    pub const fn of<O: Operation>() -> OperationDef {
        OperationDef {
            name: O::NAME,
            description: O::DESCRIPTION,
            read_only: O::READ_ONLY,
            destructive: O::DESTRUCTIVE,
            profiles: O::PROFILES,
            tool: O::TOOL,
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

/// Parse, run and answer one operation: what the daemon does with a request.
pub async fn run<O: Operation>(
    ctx: &Context,
    params: Value,
    progress: &Progress,
) -> Result<Value, OpError> {
    let params: O::Params = parse_params(O::NAME, params)?;
    let output = O::run(ctx, params, progress).await?;
    let answer = Answer {
        ok: output.ok(),
        output,
    };
    serde_json::to_value(answer)
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("{}: answer: {e}", O::NAME)))
}
