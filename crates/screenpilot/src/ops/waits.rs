//! Waits: each returns the screen it saw with its result. A timeout is a normal result, never an error.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use screenpilot_session::wait::{compile, wait, Condition, Outcome, Reason, WaitOptions};
use screenpilot_session::{parse_hash, ReadOptions, Session};

use super::{schema_of, with_state, Context, OpError, OpResult, OperationDef};

/// Default wait timeout when none is given.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// The longest a single wait may last.
const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// Lines of history searched when `scrollback` is set.
const SCROLLBACK_SEARCH_LINES: usize = 10_000;

/// Parameters of `wait_for`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForParams {
    pub sid: String,
    /// A regex (Rust syntax), matched against the whole screen text with multi-line mode on: `^`/`$` match at each line. Lines have no trailing padding; the cursor row runs up to the cursor.
    pub pattern: String,
    /// Give up after this many ms (default 10000). A timeout returns matched=false, not an error.
    pub timeout_ms: Option<u64>,
    /// Also search the scrollback above the screen.
    #[serde(default)]
    pub scrollback: bool,
}

/// Parameters of `expect`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectParams {
    pub sid: String,
    /// Regexes to race; the first in list order wins when several match the same screen.
    pub patterns: Vec<String>,
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub scrollback: bool,
}

/// Parameters of `wait_change`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitChangeParams {
    pub sid: String,
    /// Baseline text hash (from snapshot or an input tool); default: the screen at call time.
    pub hash: Option<String>,
    pub timeout_ms: Option<u64>,
}

/// Parameters of `wait_visual_change`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitVisualChangeParams {
    pub sid: String,
    /// Baseline visual hash; default: the screen at call time.
    pub visual_hash: Option<String>,
    pub timeout_ms: Option<u64>,
}

/// Parameters of `wait_ready`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitReadyParams {
    pub sid: String,
    /// A regex that means "ready"; omit or "" to wait only for a quiet screen.
    pub marker: Option<String>,
    /// The screen text must stay unchanged this long to count as quiet (default 300).
    pub stable_ms: Option<u64>,
    /// Give up after this many ms (default 10000).
    pub max_wait_ms: Option<u64>,
}

/// Parameters of `wait_exit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitExitParams {
    pub sid: String,
    pub timeout_ms: Option<u64>,
}

pub const WAIT_FOR: OperationDef = OperationDef {
    name: "wait_for",
    description: "Wait until a regex matches the screen, woken by the program's output (no polling). Use after send_line/send_keys instead of sleeping. \
The regex sees the screen text with multi-line mode: `^`/`$` anchor at each line; lines have no trailing padding but the cursor's row runs up to the cursor, so \"\\\\$ $\" finds a shell prompt; lines soft-wrapped by the terminal width are joined back for matching. \
Returns {ok, sid, matched, match, exited, alive, text, hash, ...}. A timeout is not an error: matched=false with the final screen. \
On a detect_child_exit session the wait ends at once when the program exits (exited=true). \
Example: {\"sid\": \"py\", \"pattern\": \"^>>> $\", \"timeout_ms\": 5000}.",
    schema: schema_of::<WaitForParams>,
};

pub const EXPECT: OperationDef = OperationDef {
    name: "expect",
    description: "Race several regexes and learn which matched first (pexpect style): returns {ok, sid, matched, index, match, exited, text, ...}; index is the 0-based pattern position, -1 on timeout. \
When several match the same screen the earliest in the list wins, so put the most specific first. Patterns use multi-line mode (^/$ per line). \
Timeouts are not errors. Example: {\"sid\": \"ssh\", \"patterns\": [\"[Pp]assword:\", \"\\\\$ $\", \"denied\"], \"timeout_ms\": 10000}.",
    schema: schema_of::<ExpectParams>,
};

pub const WAIT_CHANGE: OperationDef = OperationDef {
    name: "wait_change",
    description: "Wait until the screen text differs from a baseline hash (default: the screen at call time). Pass the `hash` returned by send_keys/send_line/type to never miss a fast change. \
Returns {ok, sid, changed, hash, text, exited, ...}; the new hash is the next baseline. Text only: use wait_visual_change for colour/cursor moves. \
Timeout: changed=false, not an error. Example: {\"sid\": \"vim\", \"hash\": \"9f2c61a0b3d4e5f6\", \"timeout_ms\": 3000}.",
    schema: schema_of::<WaitChangeParams>,
};

pub const WAIT_VISUAL_CHANGE: OperationDef = OperationDef {
    name: "wait_visual_change",
    description: "Wait until anything visible changes from a baseline visual_hash (default: now): text, colours, attributes, cursor position or shape, title. \
Use after arrow keys in menus, where the highlight moves but no text changes. Returns {ok, sid, changed, visual_hash, text, exited, ...}. \
Timeout: changed=false, not an error. Example: {\"sid\": \"menu\", \"visual_hash\": \"0a1b2c3d4e5f6071\"}.",
    schema: schema_of::<WaitVisualChangeParams>,
};

pub const WAIT_READY: OperationDef = OperationDef {
    name: "wait_ready",
    description: "Wait until a marker regex appears or the screen text stays unchanged for stable_ms (default 300), at most max_wait_ms (default 10000). \
Returns {ok, sid, reason, matched, exited, text, ...} with reason MARKER, STABLE, TIMEOUT or EXITED (EXITED only on detect_child_exit sessions). \
Good for programs with no reliable prompt. Example: {\"sid\": \"build\", \"marker\": \"BUILD (SUCCESS|FAILED)\", \"stable_ms\": 500, \"max_wait_ms\": 60000}.",
    schema: schema_of::<WaitReadyParams>,
};

pub const WAIT_EXIT: OperationDef = OperationDef {
    name: "wait_exit",
    description: "Wait until the session's program exits. Returns {ok, sid, exited, alive, exit_code, signal, text, ...}; exited=false on timeout (not an error). \
Example: {\"sid\": \"tests\", \"timeout_ms\": 120000}.",
    schema: schema_of::<WaitExitParams>,
};

fn timeout(ms: Option<u64>, field: &str) -> Result<Duration, OpError> {
    let ms = ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if ms > MAX_TIMEOUT_MS {
        return Err(OpError::invalid(
            field,
            format!("{ms} ms is over the limit of {MAX_TIMEOUT_MS} ms"),
        ));
    }
    Ok(Duration::from_millis(ms))
}

/// Run a wait and assemble the common result: the screen state plus `exited` and `elapsed_ms`.
async fn run(
    session: &Session,
    condition: Condition,
    options: WaitOptions,
) -> (Outcome, Map<String, Value>) {
    let outcome = wait(session, &condition, options).await;
    let state = session.read(ReadOptions::default());
    let mut out = with_state(session.sid.as_str(), &state);
    out.insert("exited".into(), (outcome.reason == Reason::Exited).into());
    out.insert(
        "elapsed_ms".into(),
        ((outcome.elapsed.as_secs_f64() * 1e6).round() / 1e3).into(),
    );
    (outcome, out)
}

fn options(timeout: Duration, scrollback: bool) -> WaitOptions {
    WaitOptions {
        timeout,
        scrollback: scrollback.then_some(SCROLLBACK_SEARCH_LINES),
    }
}

pub async fn wait_for(ctx: &Context, p: WaitForParams) -> OpResult {
    let limits = ctx.registry.limits();
    let regex = compile(&p.pattern, "pattern", limits)?;
    let timeout = timeout(p.timeout_ms, "timeout_ms")?;
    let session = ctx.registry.get(&p.sid)?;
    let (outcome, mut out) = run(
        &session,
        Condition::Regex(regex),
        options(timeout, p.scrollback),
    )
    .await;
    out.insert("matched".into(), (outcome.reason == Reason::Matched).into());
    out.insert("match".into(), outcome.matched_text.into());
    Ok(Value::Object(out))
}

pub async fn expect(ctx: &Context, p: ExpectParams) -> OpResult {
    if p.patterns.is_empty() {
        return Err(OpError::invalid(
            "patterns",
            "give at least one regex, e.g. [\"\\\\$ $\", \"Error\"]",
        ));
    }
    let limits = ctx.registry.limits();
    let regexes = p
        .patterns
        .iter()
        .enumerate()
        .map(|(i, pattern)| {
            compile(pattern, "patterns", limits).map_err(|e| {
                OpError::invalid(
                    "patterns",
                    format!("[{i}]: {}", strip_field(&e.to_string())),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let timeout = timeout(p.timeout_ms, "timeout_ms")?;
    let session = ctx.registry.get(&p.sid)?;
    let (outcome, mut out) = run(
        &session,
        Condition::Any(regexes),
        options(timeout, p.scrollback),
    )
    .await;
    out.insert("matched".into(), (outcome.reason == Reason::Matched).into());
    out.insert(
        "index".into(),
        outcome.index.map(|i| i as i64).unwrap_or(-1).into(),
    );
    out.insert("match".into(), outcome.matched_text.into());
    Ok(Value::Object(out))
}

fn strip_field(message: &str) -> &str {
    message
        .split_once(": ")
        .map(|(_, rest)| rest)
        .unwrap_or(message)
}

pub async fn wait_change(ctx: &Context, p: WaitChangeParams) -> OpResult {
    let timeout = timeout(p.timeout_ms, "timeout_ms")?;
    let baseline = p
        .hash
        .as_deref()
        .map(|h| parse_hash(h, "hash"))
        .transpose()?;
    let session = ctx.registry.get(&p.sid)?;
    let from = match baseline {
        Some(hash) => hash,
        None => session.with_screen(|s| s.hash()),
    };
    let (outcome, mut out) = run(&session, Condition::Change(from), options(timeout, false)).await;
    out.insert("changed".into(), (outcome.reason == Reason::Changed).into());
    Ok(Value::Object(out))
}

pub async fn wait_visual_change(ctx: &Context, p: WaitVisualChangeParams) -> OpResult {
    let timeout = timeout(p.timeout_ms, "timeout_ms")?;
    let baseline = p
        .visual_hash
        .as_deref()
        .map(|h| parse_hash(h, "visual_hash"))
        .transpose()?;
    let session = ctx.registry.get(&p.sid)?;
    let from = match baseline {
        Some(hash) => hash,
        None => session.with_screen(|s| s.visual_hash()),
    };
    let (outcome, mut out) = run(
        &session,
        Condition::VisualChange(from),
        options(timeout, false),
    )
    .await;
    out.insert("changed".into(), (outcome.reason == Reason::Changed).into());
    Ok(Value::Object(out))
}

pub async fn wait_ready(ctx: &Context, p: WaitReadyParams) -> OpResult {
    let limits = ctx.registry.limits();
    let marker = match p.marker.as_deref() {
        None | Some("") => None,
        Some(pattern) => Some(compile(pattern, "marker", limits)?),
    };
    let stable = Duration::from_millis(p.stable_ms.unwrap_or(300));
    let timeout = timeout(p.max_wait_ms, "max_wait_ms")?;
    let session = ctx.registry.get(&p.sid)?;
    let (outcome, mut out) = run(
        &session,
        Condition::Ready { marker, stable },
        options(timeout, false),
    )
    .await;
    let reason = match outcome.reason {
        Reason::Marker => "MARKER",
        Reason::Stable => "STABLE",
        Reason::Exited => "EXITED",
        _ => "TIMEOUT",
    };
    out.insert("reason".into(), reason.into());
    out.insert("matched".into(), (outcome.reason == Reason::Marker).into());
    out.insert("match".into(), outcome.matched_text.into());
    Ok(Value::Object(out))
}

pub async fn wait_exit(ctx: &Context, p: WaitExitParams) -> OpResult {
    let timeout = timeout(p.timeout_ms, "timeout_ms")?;
    let session = ctx.registry.get(&p.sid)?;
    let (_, out) = run(&session, Condition::Exit, options(timeout, false)).await;
    Ok(Value::Object(out))
}
