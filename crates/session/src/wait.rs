//! Event-driven waits: each is woken by the screen updates the pump announces, never by a polling
//! timer. The only timers are the caller's timeout and, for a quiet-screen wait, one deadline that every
//! change pushes back.

use std::sync::Arc;
use std::time::{Duration, Instant};

use regex::{Regex, RegexBuilder};
use serde::Serialize;

use screenpilot_screen::settling::Settling;

use crate::error::{Result, SessionError};
use crate::readiness::Input;
use crate::session::Session;
use crate::spec::Limits;

/// What to wait for.
#[derive(Debug, Clone)]
pub enum Condition {
    /// A regex matches the screen.
    Regex(Regex),
    /// Any of several regexes; the first in list order wins when several match one screen.
    Any(Vec<Regex>),
    /// The screen text hash differs from this one.
    Change(u64),
    /// The visual hash (text, styles, cursor) differs from this one.
    VisualChange(u64),
    /// A marker regex appears, or the screen text stays unchanged for `stable`.
    Ready {
        marker: Option<Regex>,
        stable: Duration,
    },
    /// The program ends.
    Exit,
}

/// Why a wait returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Reason {
    /// The regex (or one of them) matched.
    Matched,
    /// The screen changed.
    Changed,
    /// Something visible changed (an [`Until`] with `visual_from`; classic waits say `Changed`).
    VisualChanged,
    /// The command `run` started ended.
    CommandDone,
    /// The shell showed a prompt.
    Prompt,
    /// wait_ready: the marker appeared.
    Marker,
    /// wait_ready: the screen was quiet for stable_ms (any quiet wait).
    Stable,
    /// The program ended (wait_exit; or any wait on a detect_child_exit session).
    Exited,
    /// The program in front waits for input ([`crate::readiness`]).
    Input,
    Timeout,
}

/// The result of a wait; a timeout is an ordinary outcome.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub reason: Reason,
    /// For `Any`: which pattern matched.
    pub index: Option<usize>,
    /// The text the regex matched.
    pub matched_text: Option<String>,
    /// What the program waits for, when that is what held.
    pub input: Option<Input>,
    /// Until the condition held; the settle after it is `settled`.
    pub elapsed: Duration,
    /// How long the answer waited after the condition held for the output to go quiet.
    pub settled: Duration,
}

/// The most regexes one wait may race (`expect`'s `patterns`).
pub const MAX_PATTERNS: usize = 64;

/// What all the regexes of one wait may take once compiled, shared between them: each gets its share
/// as its compiled-program limit, so a long list of patterns costs no more than one big one.
pub const MAX_COMPILED_BYTES: usize = 8 << 20;

/// The most one regex may take compiled, however few there are.
const MAX_COMPILED_BYTES_EACH: usize = 1 << 20;

/// The same bound on each regex's lazy DFA cache: in all, and for one.
const MAX_DFA_BYTES: usize = 32 << 20;
const MAX_DFA_BYTES_EACH: usize = 4 << 20;

/// Compile a user regex with multi-line mode (so `^`/`$` work per line) and a size cap.
pub fn compile(pattern: &str, field: &'static str, limits: &Limits) -> Result<Regex> {
    compile_sized(pattern, field, limits, 1)
}

/// Compile the regexes one wait races. `field` names the list; errors give the failing index.
/// Compiling many large regexes takes real time (milliseconds each), so callers on an async runtime run
/// this on a blocking thread.
pub fn compile_all(
    patterns: &[String],
    field: &'static str,
    limits: &Limits,
) -> Result<Vec<Regex>> {
    if patterns.len() > MAX_PATTERNS {
        return Err(SessionError::invalid(
            field,
            format!(
                "{} patterns; the limit is {MAX_PATTERNS} (join alternatives with | in one pattern)",
                patterns.len()
            ),
        ));
    }
    patterns
        .iter()
        .enumerate()
        .map(|(i, pattern)| {
            compile_sized(pattern, field, limits, patterns.len()).map_err(|e| match e {
                SessionError::Invalid { message, .. } => {
                    SessionError::invalid(field, format!("[{i}]: {message}"))
                }
                other => other,
            })
        })
        .collect()
}

/// Compile one of `share` regexes that split the compiled-size budget.
fn compile_sized(
    pattern: &str,
    field: &'static str,
    limits: &Limits,
    share: usize,
) -> Result<Regex> {
    if pattern.len() > limits.max_pattern_len {
        return Err(SessionError::invalid(
            field,
            format!(
                "pattern is {} bytes; the limit is {}",
                pattern.len(),
                limits.max_pattern_len
            ),
        ));
    }
    let share = share.max(1);
    let size_limit = MAX_COMPILED_BYTES_EACH.min(MAX_COMPILED_BYTES / share);
    RegexBuilder::new(pattern)
        .multi_line(true)
        .size_limit(size_limit)
        .dfa_size_limit(MAX_DFA_BYTES_EACH.min(MAX_DFA_BYTES / share))
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => SessionError::invalid(
                field,
                format!(
                    "regex {pattern:?} compiles to more than {size_limit} bytes, its share of the \
                     {MAX_COMPILED_BYTES}-byte limit for all the patterns of one wait; simplify it \
                     (a Unicode class such as \\w repeated many times is large: try [A-Za-z0-9_])"
                ),
            ),
            e => SessionError::invalid(field, format!("invalid regex {pattern:?}: {e}")),
        })
}

/// Options shared by every wait.
#[derive(Debug, Clone, Copy)]
pub struct WaitOptions {
    pub timeout: Duration,
    /// Search the scrollback too (up to this many lines), not only the visible screen.
    pub scrollback: Option<usize>,
}

/// What a wait waits for, in general: any of these, the first to hold ending it. [`Condition`] is
/// each of the classic waits; an input that carries its own wait (`until`) can ask for several.
#[derive(Debug, Clone, Default)]
pub struct Until {
    /// Regexes over the screen text; the outcome's `index` says which matched (list order breaks
    /// ties).
    pub regexes: Vec<Regex>,
    /// The screen text hash differs from this one.
    pub change_from: Option<u64>,
    /// The visual hash (text, styles, cursor, title) differs from this one.
    pub visual_from: Option<u64>,
    /// The screen stays unchanged for a while.
    pub quiet: Option<Quiet>,
    /// The program ends.
    pub exit: bool,
    /// The command `run` armed with this id ends ([`crate::shell`]).
    pub command: Option<u64>,
    /// The shell is at a prompt (its marks say so).
    pub prompt: bool,
    /// The program's end ends the wait even when `exit` is not asked for (reason [`Reason::Exited`]):
    /// nothing can change any more. Classic waits set it only on detect_child_exit sessions.
    pub end_on_exit: bool,
    /// The screen before an input: a regex then holds only on a match that touches a row the
    /// output after the input changed (a prompt still on the screen from before is no answer).
    pub fresh_since: Option<Arc<Before>>,
    /// The program in front waits for input, and has read all that was typed.
    pub input: bool,
    /// Once a condition holds, answer when the output has been quiet this long (and no
    /// synchronized update is open), within [`Settle::limit`].
    pub settle: Option<Settle>,
}

/// The screen as it was before an input.
#[derive(Debug, Clone, Default)]
pub struct Before {
    /// Its rows, as [`screenpilot_screen::Screen::text`] gives them.
    pub rows: Vec<String>,
    /// [`screenpilot_screen::Screen::scroll_bound`] then: how far the rows moved up since is read
    /// from it, so a screen that scrolled into the same text as before still counts as new.
    pub scroll_bound: u64,
}

/// Settling before an answer: a program's frame is whole once its output pauses.
#[derive(Debug, Clone, Copy)]
pub struct Settle {
    pub quiet: Duration,
    /// The most a settle adds, for a program that never stops drawing.
    pub limit: Duration,
}

impl Settle {
    /// The default: measured on nano, whose redraw after a save comes in bursts up to 7 ms apart
    /// on an idle 2-core machine; 30 ms leaves room for a loaded one and costs an agent nothing it
    /// would notice.
    pub const DEFAULT: Settle = Settle {
        quiet: Duration::from_millis(30),
        limit: Duration::from_millis(500),
    };
}

/// How long output must have paused before the program's readiness is read.
const INPUT_QUIET: Duration = Duration::from_millis(20);
/// The longest pause between readings of the readiness when nothing is drawn: a program that
/// computes silently and then reads gives no event to wake on.
const INPUT_RECHECK_MAX: Duration = Duration::from_millis(500);

/// "The screen stays unchanged for `time`", optionally only once it has changed from a baseline
/// (after input: first the program reacts, then it goes quiet).
#[derive(Debug, Clone, Copy)]
pub struct Quiet {
    pub time: Duration,
    /// Watch the visual hash (a cursor move or a highlight counts as a change), not only the text.
    pub visual: bool,
    /// Count quiet only after the watched hash has differed from this.
    pub after_change_from: Option<u64>,
}

impl Condition {
    /// The condition as an [`Until`]; `detect_child_exit` says whether the program's end ends it.
    pub fn until(&self, detect_child_exit: bool) -> Until {
        let mut until = Until {
            end_on_exit: detect_child_exit,
            ..Until::default()
        };
        match self {
            Condition::Regex(re) => until.regexes = vec![re.clone()],
            Condition::Any(res) => until.regexes = res.clone(),
            Condition::Change(from) => until.change_from = Some(*from),
            Condition::VisualChange(from) => until.visual_from = Some(*from),
            Condition::Ready { marker, stable } => {
                until.regexes = marker.iter().cloned().collect();
                until.quiet = Some(Quiet {
                    time: *stable,
                    visual: false,
                    after_change_from: None,
                });
            }
            Condition::Exit => until.exit = true,
        }
        until
    }
}

/// Wait on `session` until `condition` holds, the program ends (on detect_child_exit sessions), or the
/// timeout passes.
pub async fn wait(session: &Session, condition: &Condition, options: WaitOptions) -> Outcome {
    let mut outcome = wait_until(
        session,
        &condition.until(session.detect_child_exit),
        options,
    )
    .await;
    // The classic names: wait_ready's regex is its marker; a visual change is a change.
    outcome.reason = match (condition, outcome.reason) {
        (Condition::Ready { .. }, Reason::Matched) => Reason::Marker,
        (_, Reason::VisualChanged) => Reason::Changed,
        (Condition::Regex(_), Reason::Matched) => {
            outcome.index = None;
            Reason::Matched
        }
        (_, reason) => reason,
    };
    outcome
}

/// Wait on `session` until any part of `until` holds, or the timeout passes; then, with
/// `until.settle`, until the output pauses, so the screen answered is a whole frame. Readiness
/// needs no settle (it is read only once the output paused and none is on its way), nor does a
/// quiet screen or a program's end.
pub async fn wait_until(session: &Session, until: &Until, options: WaitOptions) -> Outcome {
    let mut outcome = hold(session, until, options).await;
    let settles = matches!(
        outcome.reason,
        Reason::Matched | Reason::Changed | Reason::VisualChanged | Reason::Timeout
    );
    if let (Some(settle), true) = (until.settle, settles) {
        let held = Instant::now();
        settle_output(session, settle).await;
        outcome.settled = held.elapsed();
    }
    outcome
}

/// Wait until the pty's output has paused for `settle.quiet`, no output is on its way and no
/// synchronized update is open; at most `settle.limit`.
pub async fn settle_output(session: &Session, settle: Settle) {
    let limit = tokio::time::Instant::now() + settle.limit;
    let mut updates = session.subscribe();
    // `None` while output is on its way or a synchronized update is open: the pump's next update
    // (that output read, or the update closed or given up at its deadline) wakes us.
    let mut quiet_until = Some(tokio::time::Instant::now() + settle.quiet);
    loop {
        tokio::select! {
            changed = updates.changed() => {
                if changed.is_err() || session.finished() {
                    return;
                }
                quiet_until = Some(tokio::time::Instant::now() + settle.quiet);
            }
            _ = sleep_until_opt(quiet_until), if quiet_until.is_some() => {
                let open = session.with_screen(|s| s.in_sync_frame());
                if !open && session.output_pending() == 0 {
                    return;
                }
                quiet_until = None;
            }
            _ = tokio::time::sleep_until(limit) => return,
        }
    }
}

/// When the next reading of the program's readiness is due: a quiet spell after the last output,
/// then at growing intervals while nothing is drawn.
struct InputWatch {
    due: tokio::time::Instant,
    interval: Duration,
}

impl InputWatch {
    fn new() -> InputWatch {
        InputWatch {
            due: tokio::time::Instant::now() + INPUT_QUIET,
            interval: INPUT_QUIET,
        }
    }

    fn output(&mut self) {
        self.interval = INPUT_QUIET;
        self.due = tokio::time::Instant::now() + INPUT_QUIET;
    }

    fn not_yet(&mut self) {
        self.interval = (self.interval * 2).min(INPUT_RECHECK_MAX);
        self.due = tokio::time::Instant::now() + self.interval;
    }
}

/// How the screen now lines up with the screen before an input.
struct Alignment {
    /// The rows before, moved up this many rows (a scroll) before comparing.
    scrolled: usize,
    /// Which rows now differ from the row before at the same place.
    changed: Vec<bool>,
}

/// The first match of `re` in `text` (logical lines starting on rows `starts`) that the output
/// after the input made: it touches a changed row, and is not the same text at the same place
/// as before (the prompt a command was typed at). `old_rows` are the rows before the input.
fn fresh_find(
    re: &Regex,
    text: &str,
    starts: &[usize],
    old_rows: &[String],
    alignment: &Alignment,
) -> Option<String> {
    let changed = &alignment.changed;
    let line_of = |offset: usize| {
        text.as_bytes()[..offset]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
    };
    let line_start = |line: usize| {
        if line == 0 {
            0
        } else {
            text.match_indices('\n')
                .nth(line - 1)
                .map_or(0, |(i, _)| i + 1)
        }
    };
    re.find_iter(text).find_map(|m| {
        let first = line_of(m.start());
        let last = line_of(m.end().saturating_sub(1).max(m.start()));
        // A line past the screen's rows (never, without scrollback) counts as new.
        let Some(&from) = starts.get(first) else {
            return Some(m.as_str().to_owned());
        };
        let to = starts.get(last + 1).copied().unwrap_or(changed.len());
        let touched =
            (from..to.max(from + 1)).any(|row| changed.get(row).copied().unwrap_or(false));
        if !touched {
            return None;
        }
        // On a line of one row, the same text at the same place before is the old screen's.
        if first == last && to == from + 1 {
            let at = m.start() - line_start(first);
            let old = old_rows.get(from + alignment.scrolled).map(String::as_str);
            if old.and_then(|row| row.get(at..at + m.len())) == Some(m.as_str()) {
                return None;
            }
        }
        Some(m.as_str().to_owned())
    })
}

/// How the rows of `now` line up with `before`: moved up by the rows that scrolled into the
/// history since (`scrolled`, when the emulator counted some), else by the scroll that best
/// explains the change.
fn align(before: &[String], now: &str, scrolled: u64) -> Alignment {
    let now: Vec<&str> = now.split('\n').collect();
    if now.len() != before.len() {
        return Alignment {
            scrolled: 0,
            changed: vec![true; now.len()],
        };
    }
    let scrolled = match usize::try_from(scrolled) {
        Ok(0) | Err(_) => {
            let old: Vec<&str> = before.iter().map(String::as_str).collect();
            screenpilot_screen::Delta::between(&old, &now).scrolled
        }
        Ok(rows) => rows,
    };
    let changed = (0..now.len())
        .map(|row| before.get(row + scrolled).map_or("", String::as_str) != now[row])
        .collect();
    Alignment { scrolled, changed }
}

/// Wait on `session` until any part of `until` holds, or the timeout passes.
async fn hold(session: &Session, until: &Until, options: WaitOptions) -> Outcome {
    let _busy = session.waiting();
    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + options.timeout;
    let mut updates = session.subscribe();
    // A quiet screen: the one react-then-quiet rule, fed every screen this wait looks at.
    let mut quieting = until.quiet.map(|quiet| {
        let rule = Settling::new(
            quiet.after_change_from,
            quiet.time,
            tokio::time::Instant::now(),
        );
        (rule, quiet.visual)
    });
    let mut input_watch = until.input.then(InputWatch::new);
    // Where the last scrollback search ended (a reading of `Screen::scroll_bound`): history does not
    // change once written, so each later look searches only the lines pushed into it since, plus a
    // screenful for a match that began on the screen. Rescanning all of it on every chunk of output
    // would slow a busy program down with every pending wait.
    let mut searched_to: Option<u64> = None;
    let done = |reason, index, matched_text| Outcome {
        reason,
        index,
        matched_text,
        input: None,
        elapsed: start.elapsed(),
        settled: Duration::ZERO,
    };
    loop {
        // Mark the current update as seen before looking, so any later one wakes us.
        updates.borrow_and_update();
        let finished = session.finished();
        let found = session.with_screen(|screen| {
            let hash = screen.hash();
            if let Some((rule, visual)) = quieting.as_mut() {
                let seen = if *visual { screen.visual_hash() } else { hash };
                rule.saw(seen, tokio::time::Instant::now());
            }
            if !until.regexes.is_empty() {
                // Regexes see logical lines: output wider than the terminal is joined back together.
                let text = match options.scrollback {
                    Some(lines) => {
                        let now = screen.scroll_bound();
                        let rows = usize::from(screen.size().rows);
                        let new = match searched_to.replace(now) {
                            Some(then) => usize::try_from(now - then).unwrap_or(usize::MAX),
                            None => usize::MAX,
                        };
                        let mut all = screen
                            .history_search_tail(lines.min(new.saturating_add(rows)))
                            .to_owned();
                        if !all.is_empty() {
                            all.push('\n');
                        }
                        all.push_str(screen.search_text());
                        std::borrow::Cow::Owned(all)
                    }
                    None => std::borrow::Cow::Borrowed(screen.search_text()),
                };
                let before = until
                    .fresh_since
                    .as_deref()
                    .filter(|_| options.scrollback.is_none());
                let matched = match before {
                    None => until.regexes.iter().enumerate().find_map(|(i, re)| {
                        re.find(&text)
                            .map(|m| (Reason::Matched, Some(i), Some(m.as_str().to_owned())))
                    }),
                    // After input, only a match where the screen changed since counts: the rows
                    // are read too, so the text is copied (only once something matches at all).
                    Some(before) if until.regexes.iter().any(|re| re.is_match(&text)) => {
                        let text = text.into_owned();
                        let moved = screen.scroll_bound().saturating_sub(before.scroll_bound);
                        let alignment = align(&before.rows, screen.text(), moved);
                        let starts = screen.search_line_rows();
                        until.regexes.iter().enumerate().find_map(|(i, re)| {
                            fresh_find(re, &text, &starts, &before.rows, &alignment)
                                .map(|m| (Reason::Matched, Some(i), Some(m)))
                        })
                    }
                    Some(_) => None,
                };
                if matched.is_some() {
                    return matched;
                }
            }
            if until.change_from.is_some_and(|from| from != hash) {
                return Some((Reason::Changed, None, None));
            }
            if until
                .visual_from
                .is_some_and(|from| from != screen.visual_hash())
            {
                return Some((Reason::VisualChanged, None, None));
            }
            None
        });
        if let Some((reason, index, matched)) = found {
            return done(reason, index, matched);
        }
        if until.exit && finished {
            return done(Reason::Exited, None, None);
        }
        if until.command.is_some_and(|id| session.command_done(id)) {
            return done(Reason::CommandDone, None, None);
        }
        if until.prompt && session.shell_state() == crate::shell::ShellState::Prompt {
            return done(Reason::Prompt, None, None);
        }
        if session.is_closed() || (finished && until.end_on_exit) {
            return done(Reason::Exited, None, None);
        }
        let stable_until = quieting.as_ref().and_then(|(rule, _)| rule.quiet_at());
        let input_due = input_watch.as_ref().map(|w| w.due);
        tokio::select! {
            changed = updates.changed() => {
                if changed.is_err() {
                    // The session is gone (closed while we waited).
                    return done(if until.end_on_exit || until.exit { Reason::Exited } else { Reason::Timeout }, None, None);
                }
                if let Some(watch) = input_watch.as_mut() {
                    watch.output();
                }
            }
            _ = tokio::time::sleep_until(deadline) => return done(Reason::Timeout, None, None),
            _ = sleep_until_opt(stable_until), if stable_until.is_some() => return done(Reason::Stable, None, None),
            _ = sleep_until_opt(input_due), if input_due.is_some() => {
                if let Some(kind) = session.ready_for_input() {
                    let mut outcome = done(Reason::Input, None, None);
                    outcome.input = Some(kind);
                    return outcome;
                }
                if let Some(watch) = input_watch.as_mut() {
                    watch.not_yet();
                }
            }
        }
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
