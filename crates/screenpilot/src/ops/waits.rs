//! Waits: each returns the screen it saw with its result. A timeout is a normal result, never an error.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::Desktop;
use screenpilot_session::wait::{
    compile, compile_all, wait, Condition, Outcome, Reason, WaitOptions,
};
use screenpilot_session::{parse_hash, Limits, Session, SessionError};

use super::blocking::{run_blocking, run_bounded, Heavy};
use super::common::{Context, OpError, Progress};
use super::desktop_waits::{self, DesktopCondition};
use super::display::{find_target, DesktopScreen, Target};
use super::operation::{Operation, Profile, Report, View};
use super::screen::{exited_flag, AnyScreen, SessionScreen};

/// Default wait timeout when none is given.
const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// The longest a single wait may last.
const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// Lines of history searched when `scrollback` is set.
const SCROLLBACK_SEARCH_LINES: usize = 10_000;

/// Parameters of `wait_for`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForParams {
    pub sid: String,
    /// A regex (Rust syntax) over the screen text, multi-line mode.
    pub pattern: String,
    /// Default 10000; a timeout is not an error.
    pub timeout_ms: Option<u64>,
    /// Also search the scrollback above the screen.
    #[serde(default)]
    pub scrollback: bool,
    // Also return `styled` and `highlights` (described at snapshot: every tool's bytes count).
    #[serde(default)]
    pub styled: bool,
}

/// Parameters of `expect`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectParams {
    pub sid: String,
    /// Regexes to race; the first in list order wins when several match the same screen.
    pub patterns: Vec<String>,
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub scrollback: bool,
    // Also return `styled` and `highlights` (described at snapshot: every tool's bytes count).
    #[serde(default)]
    pub styled: bool,
}

/// Parameters of `wait_change`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitChangeParams {
    pub sid: String,
    /// Baseline text hash (from snapshot or an input tool); default: the screen at call time.
    pub hash: Option<String>,
    pub timeout_ms: Option<u64>,
    // Also return `styled` and `highlights` (described at snapshot: every tool's bytes count).
    #[serde(default)]
    pub styled: bool,
}

/// Parameters of `wait_visual_change`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitVisualChangeParams {
    pub sid: String,
    /// Baseline visual hash; default: the screen at call time.
    pub visual_hash: Option<String>,
    pub timeout_ms: Option<u64>,
    // Also return `styled` and `highlights` (described at snapshot: every tool's bytes count).
    #[serde(default)]
    pub styled: bool,
}

/// Parameters of `wait_ready`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitReadyParams {
    pub sid: String,
    /// A regex that means "ready"; omit or "" to wait only for a quiet screen.
    pub marker: Option<String>,
    /// The screen text must stay unchanged this long to count as quiet (default 300).
    pub stable_ms: Option<u64>,
    /// Give up after this many ms (default 10000).
    pub max_wait_ms: Option<u64>,
    // Also return `styled` and `highlights` (described at snapshot: every tool's bytes count).
    #[serde(default)]
    pub styled: bool,
}

/// Parameters of `wait_exit`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitExitParams {
    pub sid: String,
    pub timeout_ms: Option<u64>,
    // Also return `styled` and `highlights` (described at snapshot: every tool's bytes count).
    #[serde(default)]
    pub styled: bool,
}

/// What every wait answers: the screen it saw, whether the program exited, and how long it took.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Waited {
    #[serde(flatten)]
    pub screen: AnyScreen,
    /// The program exited (and ended the wait, on a detect_child_exit session).
    pub exited: bool,
    pub elapsed_ms: f64,
}

impl Waited {
    fn after(outcome: &Outcome, screen: AnyScreen) -> Waited {
        Waited {
            screen,
            exited: outcome.reason == Reason::Exited,
            elapsed_ms: (outcome.elapsed.as_secs_f64() * 1e6).round() / 1e3,
        }
    }

    fn view_with(&self, flags: &[Option<(&'static str, String)>]) -> View {
        let mut all = vec![exited_flag(self.exited)];
        all.extend(flags.iter().cloned());
        let flags: Vec<(&'static str, String)> = all.into_iter().flatten().collect();
        self.screen.view(&flags)
    }

    /// "timed out" or "ended: the program exited first", with a detail.
    fn complaint_with(&self, detail: Option<String>) -> String {
        let why = if self.exited {
            "ended: the program exited first"
        } else {
            "timed out"
        };
        match detail {
            Some(detail) => format!("wait {why} ({detail})"),
            None => format!("wait {why}"),
        }
    }
}

fn flag(name: &'static str, value: impl ToString) -> Option<(&'static str, String)> {
    Some((name, value.to_string()))
}

/// What `wait_for` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Matched {
    #[serde(flatten)]
    pub waited: Waited,
    /// The regex matched before the timeout.
    pub matched: bool,
    /// The text it matched.
    #[serde(rename = "match")]
    pub matched_text: Option<String>,
}

impl Report for Matched {
    fn satisfied(&self) -> bool {
        self.matched
    }
    fn view(&self) -> View {
        self.waited.view_with(&[flag("matched", self.matched)])
    }
    fn complaint(&self) -> Option<String> {
        (!self.matched).then(|| self.waited.complaint_with(None))
    }
}

/// What `expect` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Expected {
    #[serde(flatten)]
    pub waited: Waited,
    pub matched: bool,
    /// The 0-based position of the pattern that matched; -1 on timeout.
    pub index: i64,
    #[serde(rename = "match")]
    pub matched_text: Option<String>,
}

impl Report for Expected {
    fn satisfied(&self) -> bool {
        self.matched
    }
    fn view(&self) -> View {
        self.waited
            .view_with(&[flag("matched", self.matched), flag("index", self.index)])
    }
    fn complaint(&self) -> Option<String> {
        (!self.matched).then(|| {
            self.waited
                .complaint_with(Some(format!("index {}", self.index)))
        })
    }
}

/// What `wait_change` and `wait_visual_change` answer.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Changed {
    #[serde(flatten)]
    pub waited: Waited,
    /// The screen changed from the baseline before the timeout.
    pub changed: bool,
}

impl Report for Changed {
    fn satisfied(&self) -> bool {
        self.changed
    }
    fn view(&self) -> View {
        self.waited.view_with(&[flag("changed", self.changed)])
    }
    fn complaint(&self) -> Option<String> {
        (!self.changed).then(|| self.waited.complaint_with(None))
    }
}

/// Why `wait_ready` returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ReadyReason {
    /// The marker appeared.
    Marker,
    /// The screen stayed unchanged for stable_ms.
    Stable,
    /// The program exited first (detect_child_exit sessions).
    Exited,
    Timeout,
}

/// What `wait_ready` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Readied {
    #[serde(flatten)]
    pub waited: Waited,
    pub reason: ReadyReason,
    /// The marker matched.
    pub matched: bool,
    #[serde(rename = "match")]
    pub matched_text: Option<String>,
}

impl Readied {
    fn reason_name(&self) -> &'static str {
        match self.reason {
            ReadyReason::Marker => "MARKER",
            ReadyReason::Stable => "STABLE",
            ReadyReason::Exited => "EXITED",
            ReadyReason::Timeout => "TIMEOUT",
        }
    }
}

impl Report for Readied {
    fn satisfied(&self) -> bool {
        matches!(self.reason, ReadyReason::Marker | ReadyReason::Stable)
    }
    fn view(&self) -> View {
        self.waited.view_with(&[
            flag("matched", self.matched),
            flag("reason", self.reason_name()),
        ])
    }
    fn complaint(&self) -> Option<String> {
        (!self.satisfied()).then(|| {
            self.waited
                .complaint_with(Some(format!("reason {}", self.reason_name())))
        })
    }
}

impl Report for Waited {
    fn satisfied(&self) -> bool {
        self.exited
    }
    fn view(&self) -> View {
        self.view_with(&[])
    }
    fn complaint(&self) -> Option<String> {
        (!self.exited).then(|| self.complaint_with(None))
    }
}

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

/// Run a wait on a terminal and read the screen it ends on (styled when asked).
async fn run(
    session: &Session,
    condition: Condition,
    options: WaitOptions,
    styled: bool,
) -> (Outcome, Waited) {
    let outcome = wait(session, &condition, options).await;
    let screen = AnyScreen::Terminal(SessionScreen::read(session, SessionScreen::options(styled)));
    let waited = Waited::after(&outcome, screen);
    (outcome, waited)
}

/// Run a wait on a desktop and read the screen it ends on.
async fn run_desktop(
    desktop: &Desktop,
    condition: DesktopCondition,
    timeout: Duration,
) -> Result<(Outcome, Waited), OpError> {
    let outcome = desktop_waits::wait(desktop, &condition, timeout).await?;
    let screen = AnyScreen::Desktop(DesktopScreen::read(desktop).await?);
    let waited = Waited::after(&outcome, screen);
    Ok((outcome, waited))
}

/// The regexes of `wait_for` and `expect` as a terminal condition, and the same for a desktop.
async fn run_regexes(
    ctx: &Context,
    sid: &str,
    regexes: Vec<regex::Regex>,
    timeout: Duration,
    scrollback: bool,
    styled: bool,
) -> Result<(Outcome, Waited), OpError> {
    match find_target(ctx, sid)? {
        Target::Terminal(session) => {
            let condition = match <[regex::Regex; 1]>::try_from(regexes) {
                Ok([one]) => Condition::Regex(one),
                Err(many) => Condition::Any(many),
            };
            Ok(run(&session, condition, options(timeout, scrollback), styled).await)
        }
        Target::Desktop(desktop) => {
            if scrollback {
                return Err(OpError::invalid(
                    "scrollback",
                    "a desktop has no scrollback; its text is its window titles",
                ));
            }
            run_desktop(&desktop, DesktopCondition::Titles(regexes), timeout).await
        }
    }
}

fn options(timeout: Duration, scrollback: bool) -> WaitOptions {
    WaitOptions {
        timeout,
        scrollback: scrollback.then_some(SCROLLBACK_SEARCH_LINES),
    }
}

/// `wait_for`: until a regex matches.
pub struct WaitFor;

impl Operation for WaitFor {
    const NAME: &'static str = "wait_for";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Wait until a regex matches the screen, woken by the program's output (no polling): use it instead of sleeping. \
The regex sees the screen text in multi-line mode (`^`/`$` per line); lines have no trailing padding but the cursor's row runs up to the cursor, so \"\\\\$ $\" finds a shell prompt; soft-wrapped lines are joined back. \
Returns {ok, sid, matched, match, exited, alive, text, hash, ...}. A timeout is not an error: matched=false with the final screen. \
On a detect_child_exit session the wait ends at once when the program exits (exited=true). \
On a desktop the text is its window titles (woken when one opens or changes). \
Example: {\"sid\": \"py\", \"pattern\": \"^>>> $\", \"timeout_ms\": 5000}.";
    const READ_ONLY: bool = true;
    type Params = WaitForParams;

    fn time_limit(p: &WaitForParams) -> Option<Duration> {
        timeout(p.timeout_ms, "timeout_ms").ok()
    }
    type Output = Matched;

    async fn run(ctx: &Context, p: WaitForParams, _: &Progress) -> Result<Matched, OpError> {
        let pattern = p.pattern;
        let regex = compile_one(ctx, move |l| compile(&pattern, "pattern", l)).await?;
        let timeout = timeout(p.timeout_ms, "timeout_ms")?;
        let (outcome, waited) =
            run_regexes(ctx, &p.sid, vec![regex], timeout, p.scrollback, p.styled).await?;
        Ok(Matched {
            waited,
            matched: outcome.reason == Reason::Matched,
            matched_text: outcome.matched_text,
        })
    }
}

/// `expect`: race several regexes.
pub struct Expect;

impl Operation for Expect {
    const NAME: &'static str = "expect";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Race several regexes and learn which matched first (pexpect style): returns {ok, sid, matched, index, match, exited, text, ...}; index is the 0-based pattern position, -1 on timeout. \
When several match the same screen the earliest in the list wins, so put the most specific first. Patterns use multi-line mode (^/$ per line). \
Desktops: patterns match window titles. Timeouts are not errors. Example: {\"sid\": \"ssh\", \"patterns\": [\"[Pp]assword:\", \"\\\\$ $\", \"denied\"], \"timeout_ms\": 10000}.";
    const READ_ONLY: bool = true;
    type Params = ExpectParams;

    fn time_limit(p: &ExpectParams) -> Option<Duration> {
        timeout(p.timeout_ms, "timeout_ms").ok()
    }
    type Output = Expected;

    async fn run(ctx: &Context, p: ExpectParams, _: &Progress) -> Result<Expected, OpError> {
        if p.patterns.is_empty() {
            return Err(OpError::invalid(
                "patterns",
                "give at least one regex, e.g. [\"\\\\$ $\", \"Error\"]",
            ));
        }
        let patterns = p.patterns;
        let regexes =
            compile_off_thread(ctx, move |l| compile_all(&patterns, "patterns", l)).await?;
        let timeout = timeout(p.timeout_ms, "timeout_ms")?;
        let (outcome, waited) =
            run_regexes(ctx, &p.sid, regexes, timeout, p.scrollback, p.styled).await?;
        Ok(Expected {
            waited,
            matched: outcome.reason == Reason::Matched,
            index: outcome.index.map(|i| i as i64).unwrap_or(-1),
            matched_text: outcome.matched_text,
        })
    }
}

/// A desktop's pixels changing from `baseline` (default: now). Text and visual changes are one
/// thing on a desktop: its hash covers its pixels.
async fn pixel_change(
    desktop: &Desktop,
    baseline: Option<u64>,
    timeout: Duration,
) -> Result<(Outcome, Waited), OpError> {
    let from = match baseline {
        Some(hash) => hash,
        None => desktop.screen_hash().await?,
    };
    run_desktop(desktop, DesktopCondition::Change(from), timeout).await
}

/// Compile a wait's regexes on a blocking thread: a long list of large ones takes seconds of CPU, which
/// must not stall the sessions the async workers serve.
async fn compile_off_thread<T: Send + 'static>(
    ctx: &Context,
    job: impl FnOnce(&Limits) -> Result<T, SessionError> + Send + 'static,
) -> Result<T, OpError> {
    let limits = ctx.registry.limits().clone();
    Ok(run_bounded(Heavy::Regexes, move || job(&limits)).await??)
}

/// Compile one regex on a blocking thread without queueing: its cost is bounded by the compiled-size
/// limit, and a plain `wait` must not wait behind a long `expect` list.
async fn compile_one(
    ctx: &Context,
    job: impl FnOnce(&Limits) -> Result<regex::Regex, SessionError> + Send + 'static,
) -> Result<regex::Regex, OpError> {
    let limits = ctx.registry.limits().clone();
    Ok(run_blocking(move || job(&limits)).await??)
}

/// `wait_change`: until the screen text differs from a baseline.
pub struct WaitChange;

impl Operation for WaitChange {
    const NAME: &'static str = "wait_change";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Wait until the screen text differs from a baseline hash (default: the screen at call time). Pass the `hash` returned by send_keys/send_line/type to never miss a fast change. \
Returns {ok, sid, changed, hash, text, exited, ...}; the new hash is the next baseline. Text only: use wait_visual_change for colour/cursor moves. On a desktop the hash covers its pixels (woken by X damage). \
Timeout: changed=false, not an error. Example: {\"sid\": \"vim\", \"hash\": \"9f2c61a0b3d4e5f6\", \"timeout_ms\": 3000}.";
    const READ_ONLY: bool = true;
    type Params = WaitChangeParams;

    fn time_limit(p: &WaitChangeParams) -> Option<Duration> {
        timeout(p.timeout_ms, "timeout_ms").ok()
    }
    type Output = Changed;

    async fn run(ctx: &Context, p: WaitChangeParams, _: &Progress) -> Result<Changed, OpError> {
        let timeout = timeout(p.timeout_ms, "timeout_ms")?;
        let baseline = p
            .hash
            .as_deref()
            .map(|h| parse_hash(h, "hash"))
            .transpose()?;
        let (outcome, waited) = match find_target(ctx, &p.sid)? {
            Target::Terminal(session) => {
                let from = baseline.unwrap_or_else(|| session.with_screen(|s| s.hash()));
                run(
                    &session,
                    Condition::Change(from),
                    options(timeout, false),
                    p.styled,
                )
                .await
            }
            Target::Desktop(desktop) => pixel_change(&desktop, baseline, timeout).await?,
        };
        Ok(Changed {
            waited,
            changed: outcome.reason == Reason::Changed,
        })
    }
}

/// `wait_visual_change`: until anything visible differs from a baseline.
pub struct WaitVisualChange;

impl Operation for WaitVisualChange {
    const NAME: &'static str = "wait_visual_change";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Wait until anything visible changes from a baseline visual_hash (default: now): text, colours, attributes, cursor position or shape, title. \
Use after arrow keys in menus, where the highlight moves but no text changes. Desktops: any pixel change (X damage). Returns {ok, sid, changed, visual_hash, text, exited, ...}. \
Timeout: changed=false, not an error. Example: {\"sid\": \"menu\", \"visual_hash\": \"0a1b2c3d4e5f6071\"}.";
    const READ_ONLY: bool = true;
    type Params = WaitVisualChangeParams;

    fn time_limit(p: &WaitVisualChangeParams) -> Option<Duration> {
        timeout(p.timeout_ms, "timeout_ms").ok()
    }
    type Output = Changed;

    async fn run(
        ctx: &Context,
        p: WaitVisualChangeParams,
        _: &Progress,
    ) -> Result<Changed, OpError> {
        let timeout = timeout(p.timeout_ms, "timeout_ms")?;
        let baseline = p
            .visual_hash
            .as_deref()
            .map(|h| parse_hash(h, "visual_hash"))
            .transpose()?;
        let (outcome, waited) = match find_target(ctx, &p.sid)? {
            Target::Terminal(session) => {
                let from = baseline.unwrap_or_else(|| session.with_screen(|s| s.visual_hash()));
                let condition = Condition::VisualChange(from);
                run(&session, condition, options(timeout, false), p.styled).await
            }
            Target::Desktop(desktop) => pixel_change(&desktop, baseline, timeout).await?,
        };
        Ok(Changed {
            waited,
            changed: outcome.reason == Reason::Changed,
        })
    }
}

/// `wait_ready`: until a marker appears or the screen goes quiet.
pub struct WaitReady;

impl Operation for WaitReady {
    const NAME: &'static str = "wait_ready";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Wait until a marker regex appears or the screen text stays unchanged for stable_ms (default 300), at most max_wait_ms (default 10000). \
Returns {ok, sid, reason, matched, exited, text, ...} with reason MARKER, STABLE, TIMEOUT or EXITED (EXITED only on detect_child_exit sessions). \
Desktops: the marker matches window titles, and quiet means nothing drawn for stable_ms. Good for programs with no reliable prompt. Example: {\"sid\": \"build\", \"marker\": \"BUILD (SUCCESS|FAILED)\", \"stable_ms\": 500, \"max_wait_ms\": 60000}.";
    const READ_ONLY: bool = true;
    type Params = WaitReadyParams;

    fn time_limit(p: &WaitReadyParams) -> Option<Duration> {
        timeout(p.max_wait_ms, "max_wait_ms").ok()
    }
    type Output = Readied;

    async fn run(ctx: &Context, p: WaitReadyParams, _: &Progress) -> Result<Readied, OpError> {
        let marker = match p.marker {
            None => None,
            Some(pattern) if pattern.is_empty() => None,
            Some(pattern) => Some(compile_one(ctx, move |l| compile(&pattern, "marker", l)).await?),
        };
        let stable = Duration::from_millis(p.stable_ms.unwrap_or(300));
        let timeout = timeout(p.max_wait_ms, "max_wait_ms")?;
        let (outcome, waited) = match find_target(ctx, &p.sid)? {
            Target::Terminal(session) => {
                let condition = Condition::Ready { marker, stable };
                run(&session, condition, options(timeout, false), p.styled).await
            }
            Target::Desktop(desktop) => {
                let condition = DesktopCondition::Ready { marker, stable };
                run_desktop(&desktop, condition, timeout).await?
            }
        };
        let reason = match outcome.reason {
            Reason::Marker => ReadyReason::Marker,
            Reason::Stable => ReadyReason::Stable,
            Reason::Exited => ReadyReason::Exited,
            _ => ReadyReason::Timeout,
        };
        Ok(Readied {
            waited,
            reason,
            matched: outcome.reason == Reason::Marker,
            matched_text: outcome.matched_text,
        })
    }
}

/// `wait_exit`: until the program exits.
pub struct WaitExit;

impl Operation for WaitExit {
    const NAME: &'static str = "wait_exit";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Wait until the session's program exits. Returns {ok, sid, exited, alive, exit_code, signal, text, ...}; exited=false on timeout (not an error). \
On a desktop: the program given to desktop_start. Example: {\"sid\": \"tests\", \"timeout_ms\": 120000}.";
    const READ_ONLY: bool = true;
    type Params = WaitExitParams;

    fn time_limit(p: &WaitExitParams) -> Option<Duration> {
        timeout(p.timeout_ms, "timeout_ms").ok()
    }
    type Output = Waited;

    async fn run(ctx: &Context, p: WaitExitParams, _: &Progress) -> Result<Waited, OpError> {
        let timeout = timeout(p.timeout_ms, "timeout_ms")?;
        let (_, waited) = match find_target(ctx, &p.sid)? {
            Target::Terminal(session) => {
                run(&session, Condition::Exit, options(timeout, false), p.styled).await
            }
            Target::Desktop(desktop) => {
                run_desktop(&desktop, DesktopCondition::Exit, timeout).await?
            }
        };
        Ok(waited)
    }
}
