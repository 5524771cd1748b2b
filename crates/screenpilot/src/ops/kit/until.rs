//! `until`: the condition an input carries to wait for afterwards, so one call is one agent step
//! (type, then wait for the answer), and what a wait for it reports. The waits without input take
//! the same object (`wait`).
//!
//! Any part that holds ends the wait; the program's end always ends it (nothing can change after).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_session::wait::{
    compile, compile_all, wait_until, Before, Outcome, Quiet, Reason, Settle, Until,
};
use screenpilot_session::Session;

pub use super::answers::{Held, UntilDone};
use super::blocking::{run_blocking, run_bounded, Heavy};
use super::common::{Context, OpError};

/// Default limit of a wait for `until`, in ms.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// The longest one wait may last, in ms.
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// The longest quiet spell a settle may ask for, in ms.
const MAX_SETTLE_MS: u64 = 10_000;

/// What to wait for: any part that holds ends the wait.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UntilParams {
    /// ^ $ per line; new output only
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub exit: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub change: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub visual: bool,
    /// Changed, then still
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quiet_ms: Option<u64>,
    /// Program awaits input
    #[serde(default, skip_serializing_if = "is_false")]
    pub input: bool,
    /// 30; 0: none
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle_ms: Option<u64>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A checked and compiled `until`, not yet tied to a screen ([`Compiled::arm`]).
pub struct Compiled {
    params: UntilParams,
    regexes: Vec<regex::Regex>,
}

/// A compiled `until`, ready to wait on a terminal session; what its parts are named in answers.
pub struct Armed {
    until: Until,
    /// The regexes come from `any` (else `regex`).
    from_any: bool,
    timeout: Duration,
}

/// What a call waiting for `until` on `sid` says it does: "waiting for /^42$/ on py".
pub fn waiting_words(sid: &str, until: Option<&serde_json::Value>) -> Option<String> {
    let until = until.filter(|u| !u.is_null())?;
    Some(match until["regex"].as_str() {
        Some(regex) => format!("waiting for /{regex}/ on {sid}"),
        None => format!("waiting on {sid} until {until}"),
    })
}

/// The wait limit: `timeout_ms` or the default, refused over the maximum (naming `field`).
pub fn timeout(ms: Option<u64>, field: &str) -> Result<Duration, OpError> {
    let ms = ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if ms > MAX_TIMEOUT_MS {
        return Err(OpError::invalid(
            field,
            format!("{ms} ms is over the limit of {MAX_TIMEOUT_MS} ms"),
        ));
    }
    Ok(Duration::from_millis(ms))
}

impl UntilParams {
    /// Check and compile, naming the part at fault (`until.regex`, `until.any`).
    pub async fn compile(self, ctx: &Context) -> Result<Compiled, OpError> {
        if self.regex.is_none()
            && self.any.is_none()
            && !self.exit
            && !self.change
            && !self.visual
            && !self.input
            && self.quiet_ms.is_none()
        {
            return Err(OpError::invalid(
                "until",
                "give at least one of regex, any, exit, change, visual, quiet_ms, input; e.g. {\"regex\": \"\\\\$ $\"}",
            ));
        }
        if self.settle_ms.is_some_and(|ms| ms > MAX_SETTLE_MS) {
            return Err(OpError::invalid(
                "until.settle_ms",
                format!("at most {MAX_SETTLE_MS} ms; e.g. 30 (0: answer at once)"),
            ));
        }
        if self.regex.is_some() && self.any.is_some() {
            return Err(OpError::invalid(
                "until",
                "give regex or any, not both (put the regex in the any list)",
            ));
        }
        if self.quiet_ms == Some(0) {
            return Err(OpError::invalid(
                "until.quiet_ms",
                "must be at least 1 ms; e.g. 200",
            ));
        }
        let limits = ctx.registry.limits().clone();
        let regexes = match (self.regex.clone(), self.any.clone()) {
            (Some(pattern), _) => {
                vec![run_blocking(move || compile(&pattern, "until.regex", &limits)).await??]
            }
            (None, Some(patterns)) if patterns.is_empty() => {
                return Err(OpError::invalid(
                    "until.any",
                    "give at least one regex, e.g. [\"\\\\$ $\", \"Error\"]",
                ))
            }
            (None, Some(patterns)) => {
                run_bounded(Heavy::Regexes, move || {
                    compile_all(&patterns, "until.any", &limits)
                })
                .await??
            }
            (None, None) => Vec::new(),
        };
        Ok(Compiled {
            params: self,
            regexes,
        })
    }
}

impl Compiled {
    /// Tie the condition to `session`'s screen as it is now, before the input: a change the input
    /// makes at once is never missed, and a regex holds only where the screen changed after it.
    /// Without input before it (`after_input` false), a regex holds anywhere, as in a plain wait.
    pub fn arm(self, session: &Session, timeout: Duration, after_input: bool) -> Armed {
        let (hash, visual, before) = session.with_screen(|s| {
            let before = Before {
                rows: s.text().split('\n').map(str::to_owned).collect(),
                scroll_bound: s.scroll_bound(),
            };
            (s.hash(), s.visual_hash(), before)
        });
        let p = self.params;
        let settle = match p.settle_ms {
            Some(0) => None,
            Some(ms) => Some(Settle {
                quiet: Duration::from_millis(ms),
                limit: Settle::DEFAULT.limit.max(Duration::from_millis(ms * 4)),
            }),
            None => Some(Settle::DEFAULT),
        };
        Armed {
            until: Until {
                regexes: self.regexes,
                change_from: p.change.then_some(hash),
                visual_from: p.visual.then_some(visual),
                quiet: p.quiet_ms.map(|ms| Quiet {
                    time: Duration::from_millis(ms),
                    visual: true,
                    after_change_from: Some(visual),
                }),
                exit: p.exit,
                end_on_exit: true,
                fresh_since: after_input.then(|| std::sync::Arc::new(before)),
                input: p.input,
                settle,
                ..Until::default()
            },
            from_any: p.any.is_some(),
            timeout,
        }
    }
}

impl Armed {
    /// Wait on `session` until a part holds.
    pub async fn wait(&self, session: &Session) -> UntilDone {
        let outcome = wait_until(
            session,
            &self.until,
            screenpilot_session::WaitOptions {
                timeout: self.timeout,
                scrollback: None,
            },
        )
        .await;
        self.done(&outcome)
    }

    /// What an outcome of this wait says.
    pub fn done(&self, outcome: &Outcome) -> UntilDone {
        let held = match outcome.reason {
            Reason::Matched if self.from_any => Some(Held::Any),
            Reason::Matched => Some(Held::Regex),
            Reason::Changed => Some(Held::Change),
            Reason::VisualChanged => Some(Held::Visual),
            Reason::Stable => Some(Held::Quiet),
            Reason::Input => Some(Held::Input),
            Reason::Exited if self.until.exit => Some(Held::Exit),
            _ => None,
        };
        UntilDone {
            held,
            index: outcome.index.filter(|_| self.from_any),
            matched: outcome.matched_text.clone(),
            timed_out: outcome.reason == Reason::Timeout,
            elapsed_ms: (outcome.elapsed.as_secs_f64() * 1e6).round() / 1e3,
            settle_ms: (outcome.settled.as_secs_f64() * 1e6).round() / 1e3,
        }
    }
}
