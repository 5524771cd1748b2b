//! Waits: each returns the screen it saw with its result. A timeout is a normal result, never an error.

use std::future::Future;
use std::marker::PhantomData;
use std::time::Duration;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use screenpilot_session::wait::{
    compile, compile_all, wait, Condition, Outcome, Reason, WaitOptions,
};
use screenpilot_session::{parse_hash, Limits, SessionError};

use crate::ops::kit::blocking::{run_blocking, run_bounded, Heavy};
use crate::ops::kit::common::{Context, OpError, Progress};
use crate::ops::kit::desktop_waits::{self, DesktopCondition};
use crate::ops::kit::display::AnyScreen;
use crate::ops::kit::display::{find_target, DesktopScreen, Target};
use crate::ops::kit::operation::{Operation, Profile, Report, View};
use crate::ops::kit::screen::{exited_flag, SessionScreen};
use crate::ops::kit::step_table::Journaled;
use crate::ops::kit::until::timeout;
use serde_json::Value;

/// Lines of history searched when `scrollback` is set.
const SCROLLBACK_SEARCH_LINES: usize = 10_000;

/// The parameters of the classic waits: the session, each wait's own fields, then `styled` (also
/// return `styled` and `highlights`, as described at snapshot: every tool's bytes count), which every
/// wait takes. Each also knows its sid and its limit for [`Waits`].
macro_rules! wait_params {
    ($( $(#[$doc:meta])* $name:ident limit $limit:ident $(search $search:ident)? { $($fields:tt)* } )*) => {$(
        $(#[$doc])*
        #[derive(Debug, Serialize, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct $name {
            pub sid: String,
            $($fields)*
            #[serde(default)]
            pub styled: bool,
        }

        impl WaitFields for $name {
            fn sid(&self) -> &str {
                &self.sid
            }
            fn limit(&self) -> (Option<u64>, &'static str) {
                (self.$limit, stringify!($limit))
            }
            fn styled(&self) -> bool {
                self.styled
            }
            $(fn scrollback(&self) -> bool {
                self.$search
            })?
        }
    )*};
}

wait_params! {
    /// Parameters of `wait_for`.
    WaitForParams limit timeout_ms search scrollback {
        /// A regex (Rust syntax) over the screen text, multi-line mode.
        pub pattern: String,
        /// Default 10000; a timeout is not an error.
        pub timeout_ms: Option<u64>,
        /// Also search the scrollback above the screen.
        #[serde(default)]
        pub scrollback: bool,
    }
    /// Parameters of `expect`.
    ExpectParams limit timeout_ms search scrollback {
        /// Regexes to race; the first in list order wins when several match the same screen.
        pub patterns: Vec<String>,
        pub timeout_ms: Option<u64>,
        #[serde(default)]
        pub scrollback: bool,
    }
    /// Parameters of `wait_change`.
    WaitChangeParams limit timeout_ms {
        /// Baseline text hash (from snapshot or an input tool); default: the screen at call time.
        pub hash: Option<String>,
        pub timeout_ms: Option<u64>,
    }
    /// Parameters of `wait_visual_change`.
    WaitVisualChangeParams limit timeout_ms {
        /// Baseline visual hash; default: the screen at call time.
        pub visual_hash: Option<String>,
        pub timeout_ms: Option<u64>,
    }
    /// Parameters of `wait_ready`.
    WaitReadyParams limit max_wait_ms {
        /// A regex that means "ready"; omit or "" to wait only for a quiet screen.
        pub marker: Option<String>,
        /// The screen text must stay unchanged this long to count as quiet (default 300).
        pub stable_ms: Option<u64>,
        /// Give up after this many ms (default 10000).
        pub max_wait_ms: Option<u64>,
    }
    /// Parameters of `wait_exit`.
    WaitExitParams limit timeout_ms {
        pub timeout_ms: Option<u64>,
    }
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

/// What the answer of a classic wait says beyond its screen: whether its condition held, the flags of
/// its header line, and a detail for the complaint. Every such answer reads the same way ([`Report`]).
trait Answered {
    fn waited(&self) -> &Waited;
    fn held(&self) -> bool;
    fn flags(&self) -> Vec<(&'static str, String)>;
    fn detail(&self) -> Option<String> {
        None
    }
}

impl<A: Answered> Report for A {
    fn satisfied(&self) -> bool {
        self.held()
    }
    fn view(&self) -> View {
        let flags: Vec<Option<(&'static str, String)>> =
            self.flags().into_iter().map(Some).collect();
        self.waited().view_with(&flags)
    }
    fn complaint(&self) -> Option<String> {
        (!self.held()).then(|| self.waited().complaint_with(self.detail()))
    }
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

impl Answered for Matched {
    fn waited(&self) -> &Waited {
        &self.waited
    }
    fn held(&self) -> bool {
        self.matched
    }
    fn flags(&self) -> Vec<(&'static str, String)> {
        vec![("matched", self.matched.to_string())]
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

impl Answered for Expected {
    fn waited(&self) -> &Waited {
        &self.waited
    }
    fn held(&self) -> bool {
        self.matched
    }
    fn flags(&self) -> Vec<(&'static str, String)> {
        vec![
            ("matched", self.matched.to_string()),
            ("index", self.index.to_string()),
        ]
    }
    fn detail(&self) -> Option<String> {
        Some(format!("index {}", self.index))
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

impl Changed {
    fn after(outcome: &Outcome, waited: Waited) -> Changed {
        Changed {
            waited,
            changed: outcome.reason == Reason::Changed,
        }
    }
}

impl Answered for Changed {
    fn waited(&self) -> &Waited {
        &self.waited
    }
    fn held(&self) -> bool {
        self.changed
    }
    fn flags(&self) -> Vec<(&'static str, String)> {
        vec![("changed", self.changed.to_string())]
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

impl Answered for Readied {
    fn waited(&self) -> &Waited {
        &self.waited
    }
    fn held(&self) -> bool {
        matches!(self.reason, ReadyReason::Marker | ReadyReason::Stable)
    }
    fn flags(&self) -> Vec<(&'static str, String)> {
        vec![
            ("matched", self.matched.to_string()),
            ("reason", self.reason_name().to_owned()),
        ]
    }
    fn detail(&self) -> Option<String> {
        Some(format!("reason {}", self.reason_name()))
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

/// What a classic wait waits for, before it is tied to a terminal or a desktop: each operation says
/// which, and [`wait_on`] runs it on whichever the sid names.
pub enum Awaited {
    /// Regexes (one: wait_for; several: expect) over the screen text, or a desktop's window titles.
    Regexes(Vec<regex::Regex>),
    /// The text hash (desktops: the pixels) differs from this baseline, or from the screen now.
    Change(Option<u64>),
    /// The visual hash (desktops: the pixels) differs.
    VisualChange(Option<u64>),
    Ready {
        marker: Option<regex::Regex>,
        stable: Duration,
    },
    Exit,
}

/// How long a classic wait may last, and what its answer carries.
pub struct WaitHow {
    timeout: Duration,
    scrollback: bool,
    styled: bool,
}

/// The one path of every classic wait: find the session, wait there, read the screen it ended on.
async fn wait_on(
    ctx: &Context,
    sid: &str,
    awaited: Awaited,
    how: WaitHow,
) -> Result<(Outcome, Waited), OpError> {
    let target = find_target(ctx, sid)?;
    if how.scrollback && !matches!(target, Target::Terminal(_)) {
        return Err(OpError::invalid(
            "scrollback",
            "a desktop has no scrollback; its text is its window titles",
        ));
    }
    match target {
        Target::Terminal(session) => {
            let condition = match awaited {
                Awaited::Regexes(regexes) => match <[regex::Regex; 1]>::try_from(regexes) {
                    Ok([one]) => Condition::Regex(one),
                    Err(many) => Condition::Any(many),
                },
                Awaited::Change(from) => {
                    Condition::Change(from.unwrap_or_else(|| session.with_screen(|s| s.hash())))
                }
                Awaited::VisualChange(from) => Condition::VisualChange(
                    from.unwrap_or_else(|| session.with_screen(|s| s.visual_hash())),
                ),
                Awaited::Ready { marker, stable } => Condition::Ready { marker, stable },
                Awaited::Exit => Condition::Exit,
            };
            let options = WaitOptions {
                timeout: how.timeout,
                scrollback: how.scrollback.then_some(SCROLLBACK_SEARCH_LINES),
            };
            let outcome = wait(&session, &condition, options).await;
            let read = SessionScreen::read(&session, SessionScreen::options(how.styled));
            let waited = Waited::after(&outcome, AnyScreen::Terminal(read));
            Ok((outcome, waited))
        }
        Target::Desktop(desktop) => {
            let condition = match awaited {
                Awaited::Regexes(regexes) => DesktopCondition::Titles(regexes),
                // Text and visual changes are one thing on a desktop: its hash covers its pixels.
                Awaited::Change(from) | Awaited::VisualChange(from) => match from {
                    Some(hash) => DesktopCondition::Change(hash),
                    None => DesktopCondition::Change(desktop.screen_hash().await?),
                },
                Awaited::Ready { marker, stable } => DesktopCondition::Ready { marker, stable },
                Awaited::Exit => DesktopCondition::Exit,
            };
            let outcome = desktop_waits::wait(&desktop, &condition, how.timeout).await?;
            let screen = AnyScreen::Desktop(DesktopScreen::read(&desktop).await?);
            let waited = Waited::after(&outcome, screen);
            Ok((outcome, waited))
        }
    }
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

/// What every classic wait's parameters have (written by [`wait_params`]).
pub trait WaitFields {
    fn sid(&self) -> &str;
    /// The limit in ms and the name of its field.
    fn limit(&self) -> (Option<u64>, &'static str);
    fn styled(&self) -> bool;
    /// Search the history above the screen too (wait_for and expect only).
    fn scrollback(&self) -> bool {
        false
    }
}

/// A classic wait, by its parameters: what it waits for, how long, and what it answers. One
/// [`Operation`] ([`ClassicWait`]) runs every one of them the same way.
pub trait Waits: WaitFields + DeserializeOwned + Serialize + JsonSchema + Send + 'static {
    const NAME: &'static str;
    const DESCRIPTION: &'static str;
    type Output: DeserializeOwned + Serialize + JsonSchema + Report + Send;
    /// Its limit and the form of its answer; a bad limit is refused naming its field.
    fn how(&self) -> Result<WaitHow, OpError> {
        let (ms, field) = self.limit();
        Ok(WaitHow {
            timeout: timeout(ms, field)?,
            scrollback: self.scrollback(),
            styled: self.styled(),
        })
    }
    /// What it waits for, its regexes compiled (errors name the field).
    fn awaited(self, ctx: &Context) -> impl Future<Output = Result<Awaited, OpError>> + Send;
    fn answer(outcome: Outcome, waited: Waited) -> Self::Output;
    /// What the MCP server says while it waits: "waiting for /^42$/ on sh".
    fn progress(&self) -> String;
    /// The condition a step file waits for in its place (`until`), when there is one.
    fn as_until(&self) -> Option<Value> {
        None
    }
}

/// The operation of a classic wait `W` (wait_for, expect, wait_change, ...).
pub struct ClassicWait<W>(PhantomData<W>);

impl<W: Waits> Operation for ClassicWait<W> {
    const NAME: &'static str = W::NAME;
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = W::DESCRIPTION;
    const READ_ONLY: bool = true;
    type Params = W;
    type Output = W::Output;

    fn progress(p: &W) -> Option<String> {
        Some(p.progress())
    }

    fn journal(p: &W, held: bool) -> Vec<Journaled> {
        p.as_until()
            .map(|until| Journaled::wait(until, held))
            .unwrap_or_default()
    }

    fn time_limit(p: &W) -> Option<Duration> {
        p.how().ok().map(|how| how.timeout)
    }

    async fn run(ctx: &Context, p: W, _: &Progress) -> Result<W::Output, OpError> {
        let how = p.how()?;
        let sid = p.sid().to_owned();
        let awaited = p.awaited(ctx).await?;
        let (outcome, waited) = wait_on(ctx, &sid, awaited, how).await?;
        Ok(W::answer(outcome, waited))
    }
}

impl Waits for WaitForParams {
    const NAME: &'static str = "wait_for";
    const DESCRIPTION: &'static str = "Wait until a regex matches the screen, woken by the program's output (no polling): use it instead of sleeping. \
The regex sees the screen text in multi-line mode (`^`/`$` per line); lines have no trailing padding but the cursor's row runs up to the cursor, so \"\\\\$ $\" finds a shell prompt; soft-wrapped lines are joined back. \
Returns {ok, sid, matched, match, exited, alive, text, hash, ...}. A timeout is not an error: matched=false with the final screen. \
On a detect_child_exit session the wait ends at once when the program exits (exited=true). \
On a desktop the text is its window titles (woken when one opens or changes). \
Example: {\"sid\": \"py\", \"pattern\": \"^>>> $\", \"timeout_ms\": 5000}.";
    type Output = Matched;
    fn progress(&self) -> String {
        format!("waiting for /{}/ on {}", self.pattern, self.sid)
    }
    fn as_until(&self) -> Option<Value> {
        Some(serde_json::json!({"regex": self.pattern}))
    }
    async fn awaited(self, ctx: &Context) -> Result<Awaited, OpError> {
        let pattern = self.pattern;
        let regex = compile_one(ctx, move |l| compile(&pattern, "pattern", l)).await?;
        Ok(Awaited::Regexes(vec![regex]))
    }
    fn answer(outcome: Outcome, waited: Waited) -> Matched {
        Matched {
            waited,
            matched: outcome.reason == Reason::Matched,
            matched_text: outcome.matched_text,
        }
    }
}

impl Waits for ExpectParams {
    const NAME: &'static str = "expect";
    const DESCRIPTION: &'static str = "Race several regexes and learn which matched first (pexpect style): returns {ok, sid, matched, index, match, exited, text, ...}; index is the 0-based pattern position, -1 on timeout. \
When several match the same screen the earliest in the list wins, so put the most specific first. Patterns use multi-line mode (^/$ per line). \
Desktops: patterns match window titles. Timeouts are not errors. Example: {\"sid\": \"ssh\", \"patterns\": [\"[Pp]assword:\", \"\\\\$ $\", \"denied\"], \"timeout_ms\": 10000}.";
    type Output = Expected;
    fn progress(&self) -> String {
        let patterns: Vec<String> = self.patterns.iter().map(|p| format!("/{p}/")).collect();
        format!("waiting for any of {} on {}", patterns.join(", "), self.sid)
    }
    async fn awaited(self, ctx: &Context) -> Result<Awaited, OpError> {
        if self.patterns.is_empty() {
            return Err(OpError::invalid(
                "patterns",
                "give at least one regex, e.g. [\"\\\\$ $\", \"Error\"]",
            ));
        }
        let patterns = self.patterns;
        let regexes =
            compile_off_thread(ctx, move |l| compile_all(&patterns, "patterns", l)).await?;
        Ok(Awaited::Regexes(regexes))
    }
    fn answer(outcome: Outcome, waited: Waited) -> Expected {
        Expected {
            waited,
            matched: outcome.reason == Reason::Matched,
            index: outcome.index.map(|i| i as i64).unwrap_or(-1),
            matched_text: outcome.matched_text,
        }
    }
}

impl Waits for WaitChangeParams {
    const NAME: &'static str = "wait_change";
    const DESCRIPTION: &'static str = "Wait until the screen text differs from a baseline hash (default: the screen at call time). Pass the `hash` returned by send_keys/send_line/type to never miss a fast change. \
Returns {ok, sid, changed, hash, text, exited, ...}; the new hash is the next baseline. Text only: use wait_visual_change for colour/cursor moves. On a desktop the hash covers its pixels (woken by X damage). \
Timeout: changed=false, not an error. Example: {\"sid\": \"vim\", \"hash\": \"9f2c61a0b3d4e5f6\", \"timeout_ms\": 3000}.";
    type Output = Changed;
    fn progress(&self) -> String {
        format!("waiting for the text of {} to change", self.sid)
    }
    fn as_until(&self) -> Option<Value> {
        Some(serde_json::json!({"change": true}))
    }
    async fn awaited(self, _: &Context) -> Result<Awaited, OpError> {
        let baseline = self.hash.as_deref().map(|h| parse_hash(h, "hash"));
        Ok(Awaited::Change(baseline.transpose()?))
    }
    fn answer(outcome: Outcome, waited: Waited) -> Changed {
        Changed::after(&outcome, waited)
    }
}

impl Waits for WaitVisualChangeParams {
    const NAME: &'static str = "wait_visual_change";
    const DESCRIPTION: &'static str = "Wait until anything visible changes from a baseline visual_hash (default: now): text, colours, attributes, cursor position or shape, title. \
Use after arrow keys in menus, where the highlight moves but no text changes. Desktops: any pixel change (X damage). Returns {ok, sid, changed, visual_hash, text, exited, ...}. \
Timeout: changed=false, not an error. Example: {\"sid\": \"menu\", \"visual_hash\": \"0a1b2c3d4e5f6071\"}.";
    type Output = Changed;
    fn progress(&self) -> String {
        format!("waiting for the look of {} to change", self.sid)
    }
    fn as_until(&self) -> Option<Value> {
        Some(serde_json::json!({"visual": true}))
    }
    async fn awaited(self, _: &Context) -> Result<Awaited, OpError> {
        let baseline = self
            .visual_hash
            .as_deref()
            .map(|h| parse_hash(h, "visual_hash"));
        Ok(Awaited::VisualChange(baseline.transpose()?))
    }
    fn answer(outcome: Outcome, waited: Waited) -> Changed {
        Changed::after(&outcome, waited)
    }
}

impl Waits for WaitReadyParams {
    const NAME: &'static str = "wait_ready";
    const DESCRIPTION: &'static str = "Wait until a marker regex appears or the screen text stays unchanged for stable_ms (default 300), at most max_wait_ms (default 10000). \
Returns {ok, sid, reason, matched, exited, text, ...} with reason MARKER, STABLE, TIMEOUT or EXITED (EXITED only on detect_child_exit sessions). \
Desktops: the marker matches window titles, and quiet means nothing drawn for stable_ms. Good for programs with no reliable prompt. Example: {\"sid\": \"build\", \"marker\": \"BUILD (SUCCESS|FAILED)\", \"stable_ms\": 500, \"max_wait_ms\": 60000}.";
    type Output = Readied;
    fn progress(&self) -> String {
        match self.marker.as_deref().filter(|m| !m.is_empty()) {
            Some(marker) => format!("waiting for {} to be ready (/{marker}/)", self.sid),
            None => format!("waiting for {} to be quiet", self.sid),
        }
    }
    async fn awaited(self, ctx: &Context) -> Result<Awaited, OpError> {
        let marker = match self.marker.filter(|m| !m.is_empty()) {
            None => None,
            Some(pattern) => Some(compile_one(ctx, move |l| compile(&pattern, "marker", l)).await?),
        };
        let stable = Duration::from_millis(self.stable_ms.unwrap_or(300));
        Ok(Awaited::Ready { marker, stable })
    }
    fn answer(outcome: Outcome, waited: Waited) -> Readied {
        let reason = match outcome.reason {
            Reason::Marker => ReadyReason::Marker,
            Reason::Stable => ReadyReason::Stable,
            Reason::Exited => ReadyReason::Exited,
            _ => ReadyReason::Timeout,
        };
        Readied {
            waited,
            reason,
            matched: outcome.reason == Reason::Marker,
            matched_text: outcome.matched_text,
        }
    }
}

impl Waits for WaitExitParams {
    const NAME: &'static str = "wait_exit";
    const DESCRIPTION: &'static str = "Wait until the session's program exits. Returns {ok, sid, exited, alive, exit_code, signal, text, ...}; exited=false on timeout (not an error). \
On a desktop: the program given to desktop_start. Example: {\"sid\": \"tests\", \"timeout_ms\": 120000}.";
    type Output = Waited;
    fn progress(&self) -> String {
        format!("waiting for {} to exit", self.sid)
    }
    fn as_until(&self) -> Option<Value> {
        Some(serde_json::json!({"exit": true}))
    }
    async fn awaited(self, _: &Context) -> Result<Awaited, OpError> {
        Ok(Awaited::Exit)
    }
    fn answer(_: Outcome, waited: Waited) -> Waited {
        waited
    }
}
