//! Textual apps (`textual_run`): a Python app built with Textual, run for real on one of our ptys, driven
//! by keys and mouse events as a terminal would send them, and read from our own emulator's screen.
//!
//! A small Python probe (embedded, see [`probe`]) runs the app with Textual's own terminal driver plus a
//! side channel ([`link`]) that answers what text cannot: which widget a click would hit, the widget
//! tree and widget state, and when the app has settled after a step. One-shot calls start, act and stop
//! the app; named sessions keep it running between calls, as ordinary screenpilot sessions.

mod app;
mod link;
pub mod params;
mod probe;
mod shots;
mod steps;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use tokio::time::Instant;

use screenpilot_screen::Size;
use screenpilot_session::{SessionError, SessionId};

use crate::ops::kit::common::{Caller, Context, ErrorCode, OpError, Progress};
use crate::ops::kit::operation::{Operation, Profile, Report, View};
use crate::ops::kit::step_table::{Journaled, StepTable};
use app::{CloseGuard, Launch, TextualApp};
use params::{Mode, Request, Step, DEFAULT_PYTHON, DEFAULT_SIZE};
use steps::{Driver, StepError};

pub use params::TextualRunParams;

/// `textual_run`: run a Textual app and drive it.
pub struct TextualRun;

impl Operation for TextualRun {
    const NAME: &'static str = "textual_run";
    const STARTS_SESSION: bool = true;
    const PROFILES: &'static [Profile] = &[Profile::Textual];
    const DESCRIPTION: &'static str = "A Textual app in a real terminal, acted on by widget; answers once it settled. One-shot (app, actions) or a session (app+session opens, session acts, close stops). E.g. {\"app\":\"/src/counter.py\",\"actions\":[{\"click\":\"#inc\"}],\"query\":[\"#label\"]}";
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("Run a Python Textual app in a real terminal and drive it: keys, clicks on CSS selectors, pauses, resizes, screenshots. \
One-shot (app + actions: start, act, stop; returns the exit value) or a session (app + session opens it and keeps it running; session alone acts on it; close: true stops it). \
A click goes to the visible centre of the widget (or offset from its top-left) and is refused with a clear error if the widget is absent, hidden, disabled, off screen, or covered (e.g. by a modal screen). \
After every action the app settles (input handled, short timers, animations and scrolls done, screen repainted); the screen text then streams as progress. \
Returns {ok, sid, kind, alive, text (the screen), cols, rows, details{exit_value, exit, screenshot (SVG beside the app; png too), size, python, python_version, textual_version, warnings}, tree?, query?}. \
Example: {\"app\": \"/src/counter.py\", \"screenshot\": true, \"actions\": [{\"press\": \"tab\"}, {\"click\": \"#inc\"}], \"query\": [\"#label\"]}.");
    type Params = TextualRunParams;
    type Output = TextualDone;

    fn journal(p: &TextualRunParams, _: bool) -> Vec<Journaled> {
        let params = serde_json::to_value(p).unwrap_or_default();
        vec![Journaled::waiting(StepTable {
            textual: Some(Journaled::table_of(
                &params,
                crate::ops::kit::step_table::CALLERS_OWN,
            )),
            ..StepTable::default()
        })]
    }

    fn prepare(p: &mut TextualRunParams, caller: &Caller) {
        caller.resolve(&mut p.app);
        caller.resolve_program(&mut p.python);
        if p.app.is_some() {
            caller.fill_env(&mut p.caller_env, false);
        }
    }

    async fn run(
        ctx: &Context,
        params: TextualRunParams,
        progress: &Progress,
    ) -> Result<TextualDone, OpError> {
        run(ctx, params, progress).await
    }
}

/// What `textual_run` answers: the app's screen, how it stands, and what was asked for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TextualDone {
    pub sid: String,
    /// Always "textual".
    pub kind: String,
    pub alive: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The screen, from our terminal emulator.
    pub text: String,
    pub cols: u16,
    pub rows: u16,
    pub details: TextualDetails,
    /// Every widget of the active screen, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Value>,
    /// The state of the widgets matching each selector, when asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<Value>,
}

/// What else a `textual_run` call found.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct TextualDetails {
    /// [cols, rows] at the end.
    pub size: [u16; 2],
    /// How many actions were given.
    pub steps: usize,
    /// The last SVG screenshot written beside the app, and its PNG.
    pub screenshot: Option<String>,
    pub png: Option<String>,
    /// Every screenshot taken, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshots: Option<Value>,
    /// What the app's `exit()` returned, once it has ended.
    pub exit_value: Value,
    /// How the app ended (return code, value), or null while it runs.
    pub exit: Value,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub elapsed_ms: u64,
    /// The interpreter and versions the app runs under (python, python_version, textual_version, ...).
    #[serde(flatten)]
    pub app: Map<String, Value>,
}

impl Report for TextualDone {
    fn view(&self) -> View {
        let mut view = View::default();
        view.fact("sid", &self.sid);
        view.fact("alive", self.alive);
        if let Some(code) = self.exit_code {
            view.fact("exit_code", code);
        }
        view.fact("size", format!("{}x{}", self.cols, self.rows));
        view.screen = Some(self.text.clone());
        view.extras.push((
            "details",
            serde_json::to_value(&self.details).unwrap_or_default(),
        ));
        for (name, value) in [("query", &self.query), ("tree", &self.tree)] {
            if let Some(value) = value {
                view.extras.push((name, value.clone()));
            }
        }
        view
    }

    fn human(&self) -> String {
        let mut out = self.text.trim_end_matches('\n').to_owned();
        let details = &self.details;
        if let Some(svg) = &details.screenshot {
            out.push_str(&format!(
                "\nscreenshot: {svg} ({})",
                details.png.as_deref().unwrap_or("")
            ));
        }
        if details.exit.is_null() {
            out.push_str(&format!("\nsession {} is running", self.sid));
        } else {
            out.push_str(&format!(
                "\nexited: return code {}, value {}",
                details.exit["return_code"], details.exit_value
            ));
        }
        for warning in &details.warnings {
            out.push_str(&format!("\nwarning: {warning}"));
        }
        for (name, value) in [("tree", &self.tree), ("query", &self.query)] {
            if let Some(value) = value {
                let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
                out.push_str(&format!("\n{name}: {pretty}"));
            }
        }
        out
    }
}

/// Run a `textual_run` call, streaming the screen after every step to `progress`.
async fn run(
    ctx: &Context,
    params: TextualRunParams,
    progress: &Progress,
) -> Result<TextualDone, OpError> {
    let request = Request::from_params(params)?;
    check_sizes(ctx, &request)?;
    let deadline = Instant::now() + request.timeout;
    // The one-shot sid is chosen here, so that a timeout can stop that app by name.
    let sid = match &request.mode {
        Mode::OneShot => app::one_shot_sid(&ctx.registry),
        Mode::Open(sid) | Mode::Act(sid) => sid.clone(),
    };
    let opened = AtomicBool::new(false);
    let call = drive(ctx, &request, &sid, &opened, deadline, progress);
    if let Ok(outcome) = tokio::time::timeout_at(deadline, call).await {
        return outcome;
    }
    let kept = match request.mode {
        Mode::OneShot => false,
        Mode::Open(_) => opened.load(Ordering::Acquire),
        Mode::Act(_) => true,
    };
    let after = if kept {
        format!("session '{sid}' stays open: act on it with session, or close it with close: true")
    } else {
        // A session by this name is the one this call spawned: nothing is awaited between the start
        // of the call and the spawn, which fails at once if the name is taken. Closed here rather than
        // by the guards' background close, so the app is gone by the time the caller reads this.
        let _ = ctx.registry.close(sid.as_str()).await;
        match request.mode {
            Mode::Open(_) => format!("the app was stopped; session '{sid}' was not opened"),
            _ => "the app was stopped".to_owned(),
        }
    };
    Err(OpError {
        code: ErrorCode::Timeout,
        message: format!(
            "timeout: textual_run did not finish within {} ms; {after}",
            request.timeout.as_millis()
        ),
        field: Some("timeout".into()),
    })
}

/// The call itself: get the app (start it, or find the open one), run the actions, look at the result,
/// stop the app if this call ends it, and say what happened.
async fn drive(
    ctx: &Context,
    request: &Request,
    sid: &SessionId,
    opened: &AtomicBool,
    deadline: Instant,
    progress: &Progress,
) -> Result<TextualDone, OpError> {
    let started_at = std::time::Instant::now();
    let registry = &ctx.registry;
    let (app, fresh, mut guard) = get_app(ctx, request, sid, opened, deadline).await?;
    let mut link = app.link.lock().await;
    let mut driver = Driver::new(&app, &mut link, deadline);
    driver
        .warnings
        .extend(untested_textual(&app.textual_version));
    let fail = |e: OpError| after_start(e, request, app.sid());
    let actions = run_actions(&mut driver, request, fresh, progress)
        .await
        .map_err(fail)?;
    let mut text = app.screen_text();
    let mut out = Map::new();
    let exited = look(&mut driver, request, actions.exited, &mut out)
        .await
        .map_err(fail)?;
    let warnings = std::mem::take(&mut driver.warnings);
    let shots = std::mem::take(&mut driver.shots);
    drop(driver);
    let stopping = exited || request.close || request.mode == Mode::OneShot;
    let ended = if stopping {
        Some(app::stop(registry, &app, &mut link).await)
    } else {
        None
    };
    drop(link);
    if let Some(guard) = guard.as_mut() {
        guard.disarm();
    }
    // An app that ended by itself may have gone on writing after we heard of it (Textual prints a
    // crash's traceback after leaving its screen). Once stopped, all its output is drawn: that is its
    // last screen, unless it left nothing there (a clean exit clears it), then the last frame stays.
    if exited {
        let last = app.screen_text();
        if !last.trim().is_empty() {
            text = last;
        }
    }
    if actions.skipped > 0 {
        return Err(cut_short(
            &actions,
            request.steps.len(),
            ended.as_ref(),
            &text,
        ));
    }

    let (cols, rows) = app.session.with_screen(|s| {
        let size = s.size();
        (size.cols, size.rows)
    });
    let app_facts = match app.describe() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let details = TextualDetails {
        size: [cols, rows],
        steps: request.steps.len(),
        screenshot: shots.last().map(|s| s.svg.to_string_lossy().into_owned()),
        png: shots.last().map(|s| s.png.to_string_lossy().into_owned()),
        screenshots: (!shots.is_empty()).then(|| json!(shots)),
        exit_value: ended
            .as_ref()
            .map(|e| e.app.return_value.clone())
            .unwrap_or(Value::Null),
        exit: json!(ended),
        warnings,
        elapsed_ms: started_at.elapsed().as_millis() as u64,
        app: app_facts,
    };
    Ok(TextualDone {
        sid: app.sid().to_owned(),
        kind: "textual".to_owned(),
        alive: ended.is_none(),
        exit_code: ended.as_ref().and_then(|e| e.exit_code),
        text,
        cols,
        rows,
        details,
        tree: out.remove("tree"),
        query: out.remove("query"),
    })
}

/// The app to drive: started for a one-shot run (with a guard that stops it however the call ends) or
/// to open a session, else the open session's. `fresh` when this call started it.
async fn get_app(
    ctx: &Context,
    request: &Request,
    sid: &SessionId,
    opened: &AtomicBool,
    deadline: Instant,
) -> Result<(Arc<TextualApp>, bool, Option<CloseGuard>), OpError> {
    let registry = &ctx.registry;
    let launch = || -> Result<Launch<'_>, OpError> {
        let app = request
            .app
            .as_ref()
            .ok_or_else(|| OpError::invalid("app", "starting an app needs app"))?;
        Ok(Launch {
            sid: sid.clone(),
            app,
            python: request.python.as_deref().unwrap_or(DEFAULT_PYTHON),
            size: request.size.unwrap_or(DEFAULT_SIZE),
            limit: deadline.saturating_duration_since(Instant::now()),
            env: &request.env,
        })
    };
    match &request.mode {
        Mode::OneShot => {
            let app = app::start(registry, launch()?).await?;
            let guard = CloseGuard::new(registry.clone(), app.sid());
            Ok((app, true, Some(guard)))
        }
        Mode::Open(_) => {
            let app = app::start(registry, launch()?).await?;
            app::keep(app.clone());
            opened.store(true, Ordering::Release);
            Ok((app, true, None))
        }
        Mode::Act(_) => {
            let app = app::find(registry, sid)?;
            check_same_setup(&app, request)?;
            Ok((app, false, None))
        }
    }
}

/// How the actions went: whether the app has exited, and if that cut them short, where and how many
/// did not run.
struct ActionsRun {
    exited: bool,
    /// "while starting" or "during actions[i]".
    exited_at: String,
    skipped: usize,
}

/// Settle a fresh app, then run each action, streaming the screen once the app has settled after it.
async fn run_actions(
    driver: &mut Driver<'_>,
    request: &Request,
    fresh: bool,
    progress: &Progress,
) -> Result<ActionsRun, OpError> {
    let mut run = ActionsRun {
        exited: false,
        exited_at: "while starting".to_owned(),
        skipped: 0,
    };
    if fresh {
        run.exited = matches!(driver.settle(None, "start").await, Err(StepError::Exited));
    }
    let total = request.steps.len();
    for (i, (step, raw)) in request.steps.iter().enumerate() {
        if run.exited {
            run.skipped = total - i;
            break;
        }
        let field = format!("actions[{i}]");
        match driver.run(step, &field).await {
            Ok(()) => {}
            Err(StepError::Exited) => {
                run.exited = true;
                run.exited_at = format!("during {field}");
            }
            Err(StepError::Failed(e)) => return Err(e),
        }
        let text = driver.app.screen_text();
        progress.send(json!({
            "sid": driver.app.sid(),
            "step": i + 1,
            "of": total,
            "action": raw,
            "text": text,
            // What MCP clients show: blank rows below the last line cost tokens and say nothing.
            "message": format!(
                "{}/{total} {}\n{}",
                i + 1,
                params::describe(step),
                text.trim_end_matches('\n')
            ),
        }));
    }
    Ok(run)
}

/// Take what the caller asked to see of the app at rest (final screenshot, tree, query) into `out`.
/// Returns whether the app has exited; what it could then not give is said in a warning.
async fn look(
    driver: &mut Driver<'_>,
    request: &Request,
    mut exited: bool,
    out: &mut Map<String, Value>,
) -> Result<bool, OpError> {
    let mut final_shot = false;
    if !exited && request.screenshot {
        let shot = shots::write_beside(&driver.app.app, &driver.app.session)?;
        driver.shots.push(shot);
        final_shot = true;
    }
    let asks = [
        ("tree", request.tree, json!({})),
        (
            "query",
            !request.query.is_empty(),
            json!({ "selectors": request.query }),
        ),
    ];
    for (op, asked, fields) in asks {
        if !asked || exited {
            continue;
        }
        match driver.ask(op, fields, op).await {
            Ok(answer) => {
                out.insert(op.into(), answer);
            }
            Err(StepError::Exited) => exited = true,
            Err(StepError::Failed(e)) => return Err(e),
        }
    }
    let missing: Vec<&str> = [
        ("screenshot", request.screenshot && !final_shot),
        ("tree", request.tree && !out.contains_key("tree")),
        (
            "query",
            !request.query.is_empty() && !out.contains_key("query"),
        ),
    ]
    .into_iter()
    .filter_map(|(name, asked)| asked.then_some(name))
    .collect();
    if exited && !missing.is_empty() {
        driver.warnings.push(format!(
            "{}: not taken, the app had exited",
            missing.join(", ")
        ));
    }
    Ok(exited)
}

/// The error for an app that exited with actions still to run: how it ended and its last screen.
fn cut_short(
    actions: &ActionsRun,
    total: usize,
    ended: Option<&app::Ended>,
    text: &str,
) -> OpError {
    let how = ended
        .map(|e| {
            format!(
                "return code {}, value {}",
                e.app.return_code.map_or("none".into(), |c| c.to_string()),
                e.app.return_value
            )
        })
        .unwrap_or_default();
    let unrun = if actions.skipped == total {
        format!("none of the {total} action(s) ran")
    } else {
        format!(
            "the last {} of {total} action(s) did not run",
            actions.skipped
        )
    };
    OpError {
        code: ErrorCode::AppExited,
        message: format!(
            "actions: the app exited {} ({how}); {unrun}. Its last screen:\n{text}",
            actions.exited_at
        ),
        field: Some("actions".into()),
    }
}

/// An error once the app runs says what became of it: a one-shot app is stopped, a session stays open.
fn after_start(mut error: OpError, request: &Request, sid: &str) -> OpError {
    let fate = match request.mode {
        Mode::OneShot => "the app was stopped".to_owned(),
        Mode::Open(_) | Mode::Act(_) => format!(
            "session '{sid}' is still open: act on it with session, or close it with close: true"
        ),
    };
    error.message = format!("{} ({fate})", error.message);
    error
}

/// The newest Textual release (major, minor) the tests run on; the probe's `NEWEST_TESTED` says the
/// same. Older than the probe's `MIN_TEXTUAL` is refused by the probe itself, before the app loads.
const NEWEST_TESTED_TEXTUAL: (u64, u64) = (8, 2);

/// A warning for a Textual newer than any tested: it runs, but a difference may be Textual's.
fn untested_textual(version: &str) -> Option<String> {
    let mut parts = version.split('.').map(|p| {
        p.chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
    });
    let major: u64 = parts.next()?.parse().ok()?;
    let minor: u64 = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let (newest_major, newest_minor) = NEWEST_TESTED_TEXTUAL;
    ((major, minor) > NEWEST_TESTED_TEXTUAL).then(|| {
        format!(
            "Textual {version} is newer than the newest screenpilot was tested with ({newest_major}.{newest_minor}); \
             if something looks wrong, try pip install \"textual<{}\"",
            newest_major + 1
        )
    })
}

/// Sizes within the daemon's caps, checked before the app starts and named by their own field (the
/// session layer would call them cols/rows, and a bad resize would only show after earlier steps ran).
fn check_sizes(ctx: &Context, request: &Request) -> Result<(), OpError> {
    let limits = ctx.registry.limits();
    let check = |size: Size, field: &str| {
        limits.check_size(size, "size").map_err(|e| match e {
            SessionError::Invalid { message, .. } => OpError::invalid(field, message),
            other => other.into(),
        })
    };
    if let Some(size) = request.size {
        check(size, "size")?;
    }
    for (i, (step, _)) in request.steps.iter().enumerate() {
        if let Step::Resize(size) = step {
            check(*size, &format!("actions[{i}]"))?;
        }
    }
    Ok(())
}

/// Acting on an open session: `python` and `size` may repeat what it was opened with, not change it.
fn check_same_setup(app: &TextualApp, request: &Request) -> Result<(), OpError> {
    if let Some(python) = &request.python {
        if python != &app.python {
            return Err(OpError::invalid(
                "python",
                format!(
                    "session '{}' already runs under {:?}; python applies when opening a session",
                    app.sid(),
                    app.python
                ),
            ));
        }
    }
    if let Some(size) = request.size {
        let now = app.session.with_screen(|s| s.size());
        if size != now {
            return Err(OpError::invalid(
                "size",
                format!(
                    "session '{}' is {}x{}; use a {{\"resize\": [{}, {}]}} action to change it",
                    app.sid(),
                    now.cols,
                    now.rows,
                    size.cols,
                    size.rows
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textual_newer_than_tested_is_a_warning_and_tested_ones_are_not() {
        assert!(untested_textual("8.2.8").is_none());
        assert!(untested_textual("1.0.0").is_none());
        assert!(untested_textual("8.1.1").is_none());
        assert!(untested_textual("not a version").is_none());
        let warning = untested_textual("8.3.0").expect("8.3 is newer than tested");
        assert!(warning.contains("8.2"), "{warning}");
        assert!(untested_textual("9.0.0a1").is_some());
    }

    #[test]
    fn the_probe_and_the_daemon_agree_on_the_newest_tested_textual() {
        let init = include_str!("probe/screenpilot_probe/__init__.py");
        let (major, minor) = NEWEST_TESTED_TEXTUAL;
        assert!(
            init.contains(&format!("NEWEST_TESTED = ({major}, {minor})")),
            "probe/__init__.py and NEWEST_TESTED_TEXTUAL disagree"
        );
        assert!(
            init.contains(&format!("through {major}.{minor}\"")),
            "SUPPORTED names it too"
        );
    }
}
