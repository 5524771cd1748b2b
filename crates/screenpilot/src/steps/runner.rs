//! Running a step file: its own sessions in its own context (files run side by side without seeing
//! each other's), each step through the operations the tools use, each expectation retried against the
//! live screen until it holds or its limit, woken by the screen's own updates (never a polling timer).
//! What each step did and the screen after it are kept for the report.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Map, Value};

use screenpilot_session::{Limits, ReadOptions, Registry, Session};

use super::file::{Action, Expectation, Scope, Step, StepFile};
use super::golden::{self, Compared};
use super::options::eventually;
pub use super::options::RunOptions;
use crate::ops::{self, execute, prepare, Caller, Context, OpError, Operation, Progress};

/// What a step did, for the report.
#[derive(Debug, Clone)]
pub struct StepRecord {
    pub line: usize,
    /// The step as a person reads it: `keys ["Down"] until {"visual":true}`.
    pub what: String,
    /// How it went: `held=regex`, `ok`, `golden updated`.
    pub result: String,
    /// The terminal screen after it, when there is one.
    pub screen: Option<String>,
    /// A PNG of that screen.
    pub png: Option<Vec<u8>>,
}

/// Why a file failed.
#[derive(Debug, Clone)]
pub struct StepFailure {
    pub line: usize,
    /// What was checked and what differed, with the screen.
    pub message: String,
    /// Files the failure left to look at (a golden's actual and its marked difference).
    pub files: Vec<PathBuf>,
}

/// How a file went.
#[derive(Debug, Clone)]
pub struct FileOutcome {
    pub path: PathBuf,
    pub name: String,
    pub elapsed: Duration,
    pub steps: Vec<StepRecord>,
    pub failure: Option<StepFailure>,
    /// Goldens written by `--update`.
    pub updated: Vec<PathBuf>,
    /// Recordings of its terminal sessions (with a report directory).
    pub recordings: Vec<PathBuf>,
}

impl FileOutcome {
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// What a failing step says: a message, and files to look at.
struct Failed(String, Vec<PathBuf>);

impl From<String> for Failed {
    fn from(message: String) -> Failed {
        Failed(message, Vec::new())
    }
}

impl From<OpError> for Failed {
    fn from(e: OpError) -> Failed {
        Failed(format!("error ({}): {}", e.code, e.message), Vec::new())
    }
}

/// The kinds of session a file starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Terminal,
    Textual,
    Desktop,
}

struct Run<'a> {
    file: &'a StepFile,
    /// Where programs start unless a step says `cwd`: a directory of this run's own, removed after.
    scratch: PathBuf,
    options: &'a RunOptions,
    ctx: Context,
    caller: Caller,
    /// The session a step without `sid` acts on: the last one started.
    current: Option<String>,
    kinds: BTreeMap<String, Kind>,
    outcome: FileOutcome,
}

/// Run `file` on sessions of its own, all of them ended before it returns.
pub async fn run_file(file: &StepFile, options: &RunOptions) -> FileOutcome {
    let ctx = Context::new(Registry::new(Limits::default()));
    let scratch = scratch_dir(&file.name);
    let mut run = Run {
        file,
        scratch: scratch.clone(),
        options,
        caller: Caller {
            cwd: std::fs::canonicalize(file.dir()).unwrap_or_else(|_| file.dir()),
            ..Caller::this_process()
        },
        ctx,
        current: None,
        kinds: BTreeMap::new(),
        outcome: FileOutcome {
            path: file.path.clone(),
            name: file.name.clone(),
            elapsed: Duration::ZERO,
            steps: Vec::new(),
            failure: None,
            updated: Vec::new(),
            recordings: Vec::new(),
        },
    };
    let started = Instant::now();
    for step in &file.steps {
        if let Err(Failed(message, files)) = run.step(step).await {
            let screen = run.screen_text(step).unwrap_or_default();
            let message = if screen.is_empty() {
                message
            } else {
                format!("{message}\nthe screen:\n{}", indent(&screen))
            };
            run.outcome.failure = Some(StepFailure {
                line: step.line,
                message,
                files,
            });
            break;
        }
    }
    run.outcome.elapsed = started.elapsed();
    let ctx = run.ctx.clone();
    tokio::join!(ctx.registry.close_all(false), ctx.desktops.close_all());
    let _ = std::fs::remove_dir_all(&scratch);
    run.outcome
}

/// A fresh directory for one run of a file.
fn scratch_dir(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let safe: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = std::env::temp_dir().join(format!("sp-steps-{}-{n}-{safe}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn indent(text: &str) -> String {
    text.trim_end_matches('\n')
        .lines()
        .map(|l| format!("  | {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

impl Run<'_> {
    /// Run operation `op` as a tool call from the step file's directory.
    async fn op(&self, op: &str, params: Value) -> Result<Value, OpError> {
        let params = prepare(op, params, &self.caller)?;
        execute(&self.ctx, op, params, &Progress::default()).await
    }

    fn timeout(&self, step: &Step) -> Duration {
        step.timeout.unwrap_or(self.file.timeout)
    }

    /// The session a step acts on.
    fn sid(&self, step: &Step) -> Result<String, Failed> {
        step.sid
            .clone()
            .or_else(|| self.current.clone())
            .ok_or_else(|| {
                Failed::from(
                    "no session yet: start one with spawn, textual or desktop first".to_owned(),
                )
            })
    }

    fn terminal(&self, sid: &str) -> Result<std::sync::Arc<Session>, Failed> {
        Ok(self.ctx.registry.get(sid).map_err(OpError::from)?)
    }

    /// A terminal session's screen text, for a failure message.
    fn screen_text(&self, step: &Step) -> Option<String> {
        let sid = self.sid(step).ok()?;
        let session = self.ctx.registry.get(&sid).ok()?;
        Some(session.read(ReadOptions::default()).text)
    }

    async fn record(&mut self, step: &Step, what: String, result: String) {
        let sid = self.sid(step).ok();
        let pictured = self.options.report_dir.is_some();
        let (screen, png) = match sid.as_deref().map(|sid| (sid, self.ctx.registry.get(sid))) {
            Some((_, Ok(session))) => {
                let text = session.read(ReadOptions::default()).text;
                let png = pictured
                    .then(|| golden::picture(&session, &[]).ok())
                    .flatten();
                (Some(text), png)
            }
            // A desktop's screen, for the report only: a picture costs a capture.
            Some((sid, Err(_))) if pictured && self.kinds.get(sid) == Some(&Kind::Desktop) => {
                let shot = self.op(ops::Screenshot::NAME, json!({"sid": sid})).await;
                let png = shot.ok().and_then(|answer| {
                    let data = answer["png"].as_str()?;
                    base64::engine::general_purpose::STANDARD.decode(data).ok()
                });
                (None, png)
            }
            _ => (None, None),
        };
        self.outcome.steps.push(StepRecord {
            line: step.line,
            what,
            result,
            screen,
            png,
        });
    }

    async fn step(&mut self, step: &Step) -> Result<(), Failed> {
        let limit = self.timeout(step);
        let limit_ms = limit.as_millis() as u64;
        match &step.action {
            Action::Spawn(params) => {
                let sid = step.sid.clone().unwrap_or_else(|| "main".to_owned());
                let mut params = params.clone();
                params.insert("sid".into(), sid.clone().into());
                params.insert("timeout_ms".into(), limit_ms.into());
                // Programs start in the run's own directory and find the step file's as $STEPS_DIR.
                match params.get("cwd").and_then(Value::as_str) {
                    Some(cwd) => {
                        let cwd = self.caller.cwd.join(cwd);
                        params.insert("cwd".into(), cwd.to_string_lossy().into_owned().into());
                    }
                    None => {
                        params.insert(
                            "cwd".into(),
                            self.scratch.to_string_lossy().into_owned().into(),
                        );
                    }
                }
                let env = params.entry("env").or_insert_with(|| json!({}));
                if let Value::Object(env) = env {
                    env.entry("STEPS_DIR")
                        .or_insert_with(|| self.caller.cwd.to_string_lossy().into_owned().into());
                }
                if let Some(dir) = &self.options.report_dir {
                    let cast = dir.join(format!(
                        "{}-{sid}.cast",
                        self.file.name.replace(['/', ' '], "_")
                    ));
                    params.insert("record".into(), cast.to_string_lossy().into_owned().into());
                    params.insert("record_input".into(), true.into());
                    params.insert("force".into(), true.into());
                    self.outcome.recordings.push(cast);
                }
                let what = format!("spawn {}", params["cmd"]);
                let answer = self.op(ops::Spawn::NAME, Value::Object(params)).await?;
                self.current = Some(sid.clone());
                self.kinds.insert(sid, Kind::Terminal);
                let result = until_held(&answer)?;
                self.record(step, what, result).await;
            }
            Action::Send(params) => {
                let sid = self.sid(step)?;
                let mut params = params.clone();
                params.insert("sid".into(), sid.into());
                params.insert("timeout_ms".into(), limit_ms.into());
                params.insert("screen".into(), "none".into());
                let what = describe(ops::Send::NAME, &params);
                let answer = self.op(ops::Send::NAME, Value::Object(params)).await?;
                let result = until_held(&answer)?;
                self.record(step, what, result).await;
            }
            Action::Resize { cols, rows } => {
                let sid = self.sid(step)?;
                self.op(
                    ops::Resize::NAME,
                    json!({"sid": sid, "cols": cols, "rows": rows}),
                )
                .await?;
                self.record(step, format!("resize {cols}x{rows}"), "ok".into())
                    .await;
            }
            Action::Expect(expectations) => {
                for expectation in expectations {
                    self.expect(step, expectation, limit).await?;
                }
                let what = format!(
                    "expect {}",
                    expectations
                        .iter()
                        .map(brief)
                        .collect::<Vec<_>>()
                        .join(", ")
                );
                self.record(step, what, "held".into()).await;
            }
            Action::Golden(golden) => {
                let sid = self.sid(step)?;
                let session = self.terminal(&sid)?;
                let path = self.caller.cwd.join(&golden.file);
                let result = match golden::check(
                    &session,
                    golden,
                    &path,
                    &self.caller.cwd,
                    limit,
                    self.options,
                )
                .await?
                {
                    Compared::Equal => "equal".to_owned(),
                    Compared::Updated => {
                        self.outcome.updated.push(path.clone());
                        "updated".to_owned()
                    }
                    Compared::Differs { message, files } => return Err(Failed(message, files)),
                };
                self.record(step, format!("golden {}", golden.file.display()), result)
                    .await;
            }
            Action::Textual(params) => {
                let sid = step.sid.clone().unwrap_or_else(|| "app".to_owned());
                let mut params = params.clone();
                params
                    .entry("session")
                    .or_insert_with(|| sid.clone().into());
                let session = params["session"].as_str().unwrap_or(&sid).to_owned();
                let what = describe("textual", &params);
                let answer = self
                    .op(ops::TextualRun::NAME, Value::Object(params))
                    .await?;
                if answer["ok"] != true {
                    return Err(format!("textual_run failed: {answer}").into());
                }
                self.current = Some(session.clone());
                self.kinds.insert(session, Kind::Textual);
                self.record(step, what, "ok".into()).await;
            }
            Action::Desktop(params) => {
                let sid = step.sid.clone().unwrap_or_else(|| "desktop".to_owned());
                let mut params = params.clone();
                params.insert("sid".into(), sid.clone().into());
                let what = describe("desktop", &params);
                self.op(ops::DesktopStart::NAME, Value::Object(params))
                    .await?;
                self.current = Some(sid.clone());
                self.kinds.insert(sid, Kind::Desktop);
                self.record(step, what, "ok".into()).await;
            }
            Action::Computer(actions) => {
                let sid = self.sid(step)?;
                let answer = self
                    .op(ops::Computer::NAME, json!({"sid": sid, "actions": actions}))
                    .await?;
                if answer["ok"] != true {
                    return Err(format!("computer: {}", answer["error"]).into());
                }
                self.record(
                    step,
                    format!("computer {}", Value::Array(actions.clone())),
                    "ok".into(),
                )
                .await;
            }
            Action::Act(params) => {
                let sid = self.sid(step)?;
                let mut params = params.clone();
                params.insert("sid".into(), sid.into());
                if params.contains_key("until") {
                    params.insert("timeout_ms".into(), limit_ms.into());
                }
                let what = describe(ops::Act::NAME, &params);
                let answer = self.op(ops::Act::NAME, Value::Object(params)).await?;
                if answer["held"] == false {
                    let elements = answer["elements"].as_str().unwrap_or("");
                    return Err(format!(
                        "{what}: until did not hold within {limit_ms} ms; the desktop:\n{}",
                        indent(elements)
                    )
                    .into());
                }
                let done = answer["done"].as_str().unwrap_or("ok").to_owned();
                self.record(step, what, done).await;
            }
            Action::Run(command) => {
                let sid = self.sid(step)?;
                let answer = self
                    .op(
                        ops::Run::NAME,
                        json!({"sid": sid, "command": command, "timeout_ms": limit_ms}),
                    )
                    .await?;
                if answer["done"] != true {
                    return Err(
                        format!("run: {command:?} did not finish within {limit_ms} ms").into(),
                    );
                }
                let result = format!("exit {}", answer["exit_code"]);
                self.record(step, format!("run {command:?}"), result).await;
            }
            Action::Close => {
                let sid = self.sid(step)?;
                self.op(ops::Close::NAME, json!({"sid": sid})).await?;
                self.record(step, format!("close {sid}"), "ok".into()).await;
            }
            Action::Op { name, params } => {
                let sid = self.sid(step)?;
                let mut params = params.clone();
                params.insert("sid".into(), sid.into());
                let what = describe(name, &params);
                self.op(name, Value::Object(params)).await?;
                self.record(step, what, "ok".into()).await;
            }
        }
        Ok(())
    }

    async fn expect(
        &self,
        step: &Step,
        expectation: &Expectation,
        limit: Duration,
    ) -> Result<(), Failed> {
        let sid = self.sid(step)?;
        let kind = self.kinds.get(&sid).copied().unwrap_or(Kind::Terminal);
        match (expectation, kind) {
            (Expectation::Title(regex), Kind::Desktop) => {
                let answer = self
                    .op(ops::ClassicWait::<ops::WaitForParams>::NAME, json!({"sid": sid, "pattern": regex, "timeout_ms": limit.as_millis() as u64}))
                    .await?;
                if answer["matched"] == true {
                    return Ok(());
                }
                let titles = answer["text"].as_str().unwrap_or("").to_owned();
                Err(format!(
                    "expected a window title matching /{regex}/ within {} ms; the windows:\n{}",
                    limit.as_millis(),
                    indent(&titles)
                )
                .into())
            }
            (Expectation::ExitCode(code), Kind::Desktop) => {
                let answer = self
                    .op(ops::ClassicWait::<ops::WaitExitParams>::NAME, json!({"sid": sid, "timeout_ms": limit.as_millis() as u64}))
                    .await?;
                if answer["exited"] == true && answer["exit_code"] == json!(code) {
                    return Ok(());
                }
                let how = match answer["exited"] == true {
                    true => format!("it ended with exit_code {} signal {}", answer["exit_code"], answer["signal"]),
                    false => "it is still running".to_owned(),
                };
                Err(format!("expected the desktop's program to exit with {code} within {} ms, but {how}", limit.as_millis()).into())
            }
            (Expectation::Element { find, present }, Kind::Desktop) => {
                let until = if *present { "appears" } else { "gone" };
                let answer = self
                    .op(
                        ops::Act::NAME,
                        json!({"sid": sid, "until": {until: find}, "timeout_ms": limit.as_millis() as u64}),
                    )
                    .await?;
                if answer["held"] == true {
                    return Ok(());
                }
                let elements = answer["elements"].as_str().unwrap_or("").to_owned();
                Err(format!(
                    "expected {} within {} ms; the desktop:\n{}",
                    brief(expectation),
                    limit.as_millis(),
                    indent(&elements)
                )
                .into())
            }
            (_, Kind::Desktop) => Err(format!(
                "{} does not apply to a desktop: a desktop has title (its windows), exit_code (its program), element and no_element",
                brief(expectation)
            )
            .into()),
            (
                Expectation::Widget {
                    selector,
                    nth,
                    state,
                },
                _,
            ) => self.expect_widget(&sid, selector, *nth, state, limit).await,
            (expectation, _) => {
                let session = self.terminal(&sid)?;
                eventually(&session, limit, |s| holds(s, expectation))
                    .await
                    .map_err(|why| {
                        Failed::from(format!(
                            "expected {} within {} ms, but {why}",
                            brief(expectation),
                            limit.as_millis()
                        ))
                    })
            }
        }
    }

    /// A Textual widget's state, queried again after each screen update until it matches.
    async fn expect_widget(
        &self,
        sid: &str,
        selector: &str,
        nth: usize,
        state: &Map<String, Value>,
        limit: Duration,
    ) -> Result<(), Failed> {
        let session = self.terminal(sid)?;
        let deadline = tokio::time::Instant::now() + limit;
        let mut updates = session.subscribe();
        loop {
            updates.borrow_and_update();
            let answer = self
                .op(
                    ops::TextualRun::NAME,
                    json!({"session": sid, "query": [selector]}),
                )
                .await?;
            let widget = answer["query"][0]["widgets"][nth].clone();
            let differs: Vec<String> = state
                .iter()
                .filter(|(key, want)| widget.get(key.as_str()) != Some(want))
                .map(|(key, want)| {
                    format!(
                        "{key}: want {want}, got {}",
                        widget.get(key.as_str()).unwrap_or(&Value::Null)
                    )
                })
                .collect();
            if widget.is_object() && differs.is_empty() {
                return Ok(());
            }
            let why = if widget.is_object() {
                differs.join("; ")
            } else {
                let matches = answer["query"][0]["count"].as_u64().unwrap_or(0);
                format!("{selector:?} matches {matches} widget(s): there is no [{nth}]")
            };
            tokio::select! {
                changed = updates.changed() => if changed.is_err() { return Err(why.into()) },
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(format!("expected {selector} to have {} within {} ms: {why}", Value::Object(state.clone()), limit.as_millis()).into())
                }
            }
        }
    }
}

/// The `held=...` of a spawn or send answer, or the failure when its condition did not hold.
fn until_held(answer: &Value) -> Result<String, Failed> {
    let outcomes: Vec<&Value> = match answer["steps"].as_array() {
        Some(steps) => steps.iter().collect(),
        None => vec![&answer["until"]],
    };
    let mut held = Vec::new();
    for until in outcomes.into_iter().filter(|u| !u.is_null()) {
        match until["held"].as_str() {
            Some(name) => held.push(format!("held={name}")),
            None if until["timed_out"] == true => {
                return Err(format!(
                    "until did not hold: timed out after {} ms",
                    until["elapsed_ms"]
                )
                .into())
            }
            None => {
                return Err("until did not hold: the program ended first"
                    .to_owned()
                    .into())
            }
        }
    }
    Ok(if held.is_empty() {
        "sent".to_owned()
    } else {
        held.join(" ")
    })
}

fn describe(op: &str, params: &Map<String, Value>) -> String {
    let shown: Vec<String> = params
        .iter()
        .filter(|(k, _)| {
            ![
                "sid",
                "timeout_ms",
                "screen",
                "session",
                "record", // not an operation: spawn's field
                "record_input",
                "force",
            ]
            .contains(&k.as_str())
        })
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    format!("{op} {}", shown.join(" "))
}

/// An expectation as a person reads it: `text /^42$/ in row 1`.
pub fn brief(expectation: &Expectation) -> String {
    let scope = |s: &Scope| match s {
        Scope::Screen => String::new(),
        Scope::Row(r) => format!(" in row {r}"),
        Scope::Region([r, c, h, w]) => format!(" in the {w}x{h} region at row {r}, col {c}"),
    };
    match expectation {
        Expectation::Text { regex, scope: s } => format!("text /{regex}/{}", scope(s)),
        Expectation::Absent { regex, scope: s } => format!("no /{regex}/{}", scope(s)),
        Expectation::Styled { regex, scope: s } => format!("styled /{regex}/{}", scope(s)),
        Expectation::Cursor { row, col } => format!("the cursor at row {row}, col {col}"),
        Expectation::ExitCode(code) => format!("exit status {code}"),
        Expectation::Title(regex) => format!("title /{regex}/"),
        Expectation::Widget {
            selector,
            nth,
            state,
        } => format!("{selector}[{nth}] with {}", Value::Object(state.clone())),
        Expectation::Element { find, present } => format!(
            "{} element {}",
            if *present { "an" } else { "no" },
            Value::Object(find.clone())
        ),
    }
}

/// The part of `text` (one line per row) that `scope` names.
fn scoped(text: &str, scope: &Scope) -> String {
    let rows: Vec<&str> = text.split('\n').collect();
    match scope {
        Scope::Screen => text.to_owned(),
        Scope::Row(r) => rows.get(usize::from(*r)).copied().unwrap_or("").to_owned(),
        Scope::Region([r, c, h, w]) => rows
            .iter()
            .skip(usize::from(*r))
            .take(usize::from(*h))
            .map(|row| {
                row.chars()
                    .skip(usize::from(*c))
                    .take(usize::from(*w))
                    .collect::<String>()
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Whether `expectation` holds on `session` now; why not when it does not.
fn holds(session: &Session, expectation: &Expectation) -> Result<(), String> {
    let found = |regex: &str, text: &str| {
        regex::RegexBuilder::new(regex)
            .multi_line(true)
            .build()
            .map(|r| r.is_match(text))
            .unwrap_or(false)
    };
    match expectation {
        Expectation::Text { regex, scope } => {
            let text = scoped(&session.read(ReadOptions::default()).text, scope);
            if found(regex, &text) {
                Ok(())
            } else {
                Err(format!("it is not there{}", shown_part(scope, &text)))
            }
        }
        Expectation::Absent { regex, scope } => {
            let text = scoped(&session.read(ReadOptions::default()).text, scope);
            if found(regex, &text) {
                Err(format!("it is there{}", shown_part(scope, &text)))
            } else {
                Ok(())
            }
        }
        Expectation::Styled { regex, scope } => {
            let state = session.read(ReadOptions {
                styled: true,
                ..ReadOptions::default()
            });
            let text = scoped(state.styled.as_deref().unwrap_or(""), scope);
            if found(regex, &text) {
                Ok(())
            } else {
                Err(format!("the styled text is:\n{}", indent(&text)))
            }
        }
        Expectation::Cursor { row, col } => {
            let cursor = session.read(ReadOptions::default()).cursor;
            if (cursor.row, cursor.col) == (*row, *col) {
                Ok(())
            } else {
                Err(format!("it is at row {}, col {}", cursor.row, cursor.col))
            }
        }
        Expectation::ExitCode(code) => match session.exit_info() {
            Some(exit) if session.finished() && exit.exit_code == Some(*code) => Ok(()),
            Some(exit) if session.finished() => Err(format!("it ended with {exit:?}")),
            _ => Err("the program is still running".to_owned()),
        },
        Expectation::Title(regex) => {
            let title = session
                .read(ReadOptions::default())
                .title
                .unwrap_or_default();
            if found(regex, &title) {
                Ok(())
            } else {
                Err(format!("the title is {title:?}"))
            }
        }
        Expectation::Widget { .. } => {
            Err("a widget expectation needs a Textual session".to_owned())
        }
        Expectation::Element { .. } => {
            Err("an element expectation needs a desktop session".to_owned())
        }
    }
}

fn shown_part(scope: &Scope, text: &str) -> String {
    match scope {
        Scope::Screen => String::new(),
        _ => format!("; that part reads:\n{}", indent(text)),
    }
}
