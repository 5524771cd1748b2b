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

use serde_json::{json, Map, Value};
use tokio::time::Instant;

use screenpilot_screen::Size;
use screenpilot_session::{SessionError, SessionId};

use crate::ops::{Context, OpError, OpResult, Progress};
use app::{CloseGuard, Launch, TextualApp};
use params::{Mode, Request, Step, DEFAULT_PYTHON, DEFAULT_SIZE};
use steps::{Driver, StepError};

pub use params::TextualRunParams;

/// Run a `textual_run` call, streaming the screen after every step to `progress`.
pub async fn run(ctx: &Context, params: TextualRunParams, progress: &Progress) -> OpResult {
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
        code: "timeout".into(),
        message: format!(
            "timeout: textual_run did not finish within {} ms; {after}",
            request.timeout.as_millis()
        ),
        field: Some("timeout".into()),
    })
}

async fn drive(
    ctx: &Context,
    request: &Request,
    sid: &SessionId,
    opened: &AtomicBool,
    deadline: Instant,
    progress: &Progress,
) -> OpResult {
    let started_at = std::time::Instant::now();
    let registry = &ctx.registry;
    let python = request.python.as_deref().unwrap_or(DEFAULT_PYTHON);
    let size = request.size.unwrap_or(DEFAULT_SIZE);
    let launch = |sid| -> Result<Launch<'_>, OpError> {
        let app = request
            .app
            .as_ref()
            .ok_or_else(|| OpError::invalid("app", "starting an app needs app"))?;
        Ok(Launch {
            sid,
            app,
            python,
            size,
            limit: deadline.saturating_duration_since(Instant::now()),
        })
    };
    // A one-shot app is stopped however the call ends; an opened one only if opening fails.
    let mut guard: Option<CloseGuard> = None;
    let (app, fresh): (Arc<TextualApp>, bool) = match &request.mode {
        Mode::OneShot => {
            let app = app::start(registry, launch(sid.clone())?).await?;
            guard = Some(CloseGuard::new(registry.clone(), app.sid()));
            (app, true)
        }
        Mode::Open(_) => {
            let app = app::start(registry, launch(sid.clone())?).await?;
            app::keep(app.clone());
            opened.store(true, Ordering::Release);
            (app, true)
        }
        Mode::Act(_) => {
            let app = app::find(registry, sid)?;
            check_same_setup(&app, request)?;
            (app, false)
        }
    };
    let mut link = app.link.lock().await;
    let mut driver = Driver::new(&app, &mut link, deadline);
    let mut exited = false;
    // When the app ended with actions still to run: "while starting" or "during actions[i]".
    let mut exited_at = "while starting".to_owned();
    if fresh {
        exited = matches!(driver.settle(None, "start").await, Err(StepError::Exited));
    }
    let total = request.steps.len();
    let mut skipped = 0;
    for (i, (step, raw)) in request.steps.iter().enumerate() {
        if exited {
            skipped = total - i;
            break;
        }
        let field = format!("actions[{i}]");
        match driver.run(step, &field).await {
            Ok(()) => {}
            Err(StepError::Exited) => {
                exited = true;
                exited_at = format!("during {field}");
            }
            Err(StepError::Failed(e)) => return Err(after_start(e, request, app.sid())),
        }
        let text = app.screen_text();
        progress.send(json!({
            "sid": app.sid(),
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
    // The final picture shows the app at rest, after its short timers (a Button's pressed look).
    if !exited
        && matches!(
            driver.calm("the final screen").await,
            Err(StepError::Exited)
        )
    {
        exited = true;
    }
    let mut text = app.screen_text();
    let mut out = Map::new();
    let mut final_shot = false;
    if !exited {
        if request.screenshot {
            let shot = shots::write_beside(&app.app, &app.session)
                .map_err(|e| after_start(e, request, app.sid()))?;
            driver.shots.push(shot);
            final_shot = true;
        }
        if request.tree {
            match driver.ask("tree", json!({}), "tree").await {
                Ok(tree) => {
                    out.insert("tree".into(), tree);
                }
                Err(StepError::Exited) => exited = true,
                Err(StepError::Failed(e)) => return Err(after_start(e, request, app.sid())),
            }
        }
        if !request.query.is_empty() && !exited {
            match driver
                .ask("query", json!({ "selectors": request.query }), "query")
                .await
            {
                Ok(found) => {
                    out.insert("query".into(), found);
                }
                Err(StepError::Exited) => exited = true,
                Err(StepError::Failed(e)) => return Err(after_start(e, request, app.sid())),
            }
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
    if skipped > 0 {
        let how = ended
            .as_ref()
            .map(|e| {
                format!(
                    "return code {}, value {}",
                    e.app.return_code.map_or("none".into(), |c| c.to_string()),
                    e.app.return_value
                )
            })
            .unwrap_or_default();
        let unrun = if skipped == total {
            format!("none of the {total} action(s) ran")
        } else {
            format!("the last {skipped} of {total} action(s) did not run")
        };
        return Err(OpError {
            code: "app_exited".into(),
            message: format!(
                "actions: the app exited {exited_at} ({how}); {unrun}. Its last screen:\n{text}"
            ),
            field: Some("actions".into()),
        });
    }

    let (cols, rows) = app.session.with_screen(|s| {
        let size = s.size();
        (size.cols, size.rows)
    });
    let mut details = match app.describe() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    details.insert("size".into(), json!([cols, rows]));
    details.insert("steps".into(), json!(total));
    details.insert(
        "screenshot".into(),
        json!(shots.last().map(|s| s.svg.clone())),
    );
    details.insert("png".into(), json!(shots.last().map(|s| s.png.clone())));
    if !shots.is_empty() {
        details.insert("screenshots".into(), json!(shots));
    }
    details.insert(
        "exit_value".into(),
        ended
            .as_ref()
            .map(|e| e.app.return_value.clone())
            .unwrap_or(Value::Null),
    );
    details.insert("exit".into(), json!(ended));
    if !warnings.is_empty() {
        details.insert("warnings".into(), json!(warnings));
    }
    details.insert(
        "elapsed_ms".into(),
        json!(started_at.elapsed().as_millis() as u64),
    );

    out.insert("ok".into(), json!(true));
    out.insert("sid".into(), json!(app.sid()));
    out.insert("kind".into(), json!("textual"));
    out.insert("alive".into(), json!(ended.is_none()));
    if let Some(ended) = &ended {
        out.insert("exit_code".into(), json!(ended.exit_code));
    }
    out.insert("text".into(), json!(text));
    out.insert("cols".into(), json!(cols));
    out.insert("rows".into(), json!(rows));
    out.insert("details".into(), Value::Object(details));
    Ok(Value::Object(out))
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
