//! The `computer` operation: the OpenAI computer-use action surface (with Anthropic's action names as
//! aliases) on desktop sessions and on terminal sessions alike.
//!
//! A call is checked whole before anything is sent: every action parsed, every coordinate inside the
//! current screenshot. Then the actions run in order, stopping at the first failure. Whatever happens,
//! the answer carries a fresh PNG; a failure after input went out says the outcome is unknown.

mod actions;
mod answer;
mod keys;
mod on_desktop;
mod on_terminal;
mod parse;
mod request;
mod timing;

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::common::{Context, ErrorCode, OpError, Progress};
use super::display::{find_target, Target};
use super::operation::Operation;
use answer::{answer, Failure, Run};

pub use answer::ComputerDone;

pub use actions::Action;
pub use request::ActionSpec;

/// Parameters of `computer`. Give `action` or `actions`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputerParams {
    /// A desktop session (desktop_start) or a terminal session (spawn).
    pub sid: String,
    /// One action, e.g. {"type": "click", "x": 120, "y": 45}.
    #[schemars(with = "Option<ActionSpec>")]
    pub action: Option<Value>,
    /// Several action objects (as `action`), run in order; the run stops at the first failure.
    pub actions: Option<Vec<Value>>,
    /// Limit for each step in ms (default 30000).
    pub step_timeout_ms: Option<u64>,
}

/// Most actions in one call.
const MAX_ACTIONS: usize = 100;

/// `computer`: computer-use actions with a fresh screenshot.
pub struct Computer;

impl Operation for Computer {
    const NAME: &'static str = "computer";
    const DESCRIPTION: &'static str = "See and operate a screen like a person, on a desktop session (desktop_start; X11) or a terminal session (spawn; pixels map to cells, \
clicks reach the app in its mouse protocol). {sid, action: {type, ...}} or {sid, actions: [...]} (in order, stopping at the first failure). \
x, y are pixels of the latest screenshot; a point off it is refused before anything is sent. After input, the screenshot waits for the screen to be still 50 ms (max 1 s).\n\
Types: screenshot | click {x, y, button: left|right|wheel|back|forward} | double_click {x, y} | scroll {x, y, scroll_x, scroll_y} (+ = right/down; \
ceil(|delta|/120) wheel notches, 1-50 per axis) | type {text} (any Unicode, \\n = Enter) | wait {ms} (default 2000) | move {x, y} | \
keypress {keys: [\"CTRL\", \"c\"]} (one chord: CTRL, ALT/OPTION, SHIFT, META/CMD/SUPER/WIN (= Super), ENTER/RETURN, ESC, TAB, SPACE, BACKSPACE, \
DELETE, UP/ARROWUP..., HOME, END, PAGEUP, PAGEDOWN, F1-F24, KP_0-KP_9, KP_ENTER, KP_ADD..., any X keysym name on desktops, one character) | drag {path: [{x, y}, ...]}. Pointer actions take keys: [modifiers to hold].\n\
Anthropic names also work (`action` may stand for `type`, coordinate: [x, y] for x, y): left_click, right_click, middle_click, triple_click, mouse_move, \
left_click_drag {start_coordinate, coordinate}, scroll {scroll_direction, scroll_amount}, key {text: \"ctrl+s\"}, hold_key {text, duration}, \
wait {duration}, left_mouse_down, left_mouse_up, cursor_position, zoom {region: [x0, y0, x1, y1]}.\n\
Returns {ok, sid, kind, done, results: [{type, ...}], pointer {x, y}, png, width, height}, always with a fresh PNG. A failure gives ok=false, error, failed_index \
and outcome: \"unknown\" if input may have reached the screen (look before retrying) or \"not_sent\". Example: {\"sid\": \"desk\", \"action\": {\"type\": \"click\", \"x\": 200, \"y\": 150}}.";
    type Params = ComputerParams;
    type Output = ComputerDone;

    async fn run(
        ctx: &Context,
        p: ComputerParams,
        progress: &Progress,
    ) -> Result<ComputerDone, OpError> {
        computer(ctx, p, progress).await
    }
}

async fn computer(
    ctx: &Context,
    p: ComputerParams,
    progress: &Progress,
) -> Result<ComputerDone, OpError> {
    let specs: Vec<(String, ActionSpec)> = match (p.action, p.actions) {
        (Some(_), Some(_)) => return Err(OpError::invalid("action", "give action or actions, not both")),
        (None, None) => {
            return Err(OpError::invalid(
                "action",
                "say what to do, e.g. {\"type\": \"screenshot\"} or {\"type\": \"click\", \"x\": 10, \"y\": 20}",
            ))
        }
        (Some(one), None) => vec![(
            "action".to_owned(),
            request::spec_from_json(one, "action")?,
        )],
        (None, Some(list)) => {
            if list.is_empty() {
                return Err(OpError::invalid("actions", "the list is empty"));
            }
            if list.len() > MAX_ACTIONS {
                return Err(OpError::invalid(
                    "actions",
                    format!("{} actions; at most {MAX_ACTIONS} per call", list.len()),
                ));
            }
            list.into_iter()
                .enumerate()
                .map(|(i, value)| {
                    let prefix = format!("actions[{i}]");
                    let spec = request::spec_from_json(value, &prefix)?;
                    Ok((prefix, spec))
                })
                .collect::<Result<_, OpError>>()?
        }
    };
    let step_timeout = match p.step_timeout_ms {
        None => super::desktop::STEP_TIMEOUT,
        Some(ms @ 100..=600_000) => Duration::from_millis(ms),
        Some(ms) => {
            return Err(OpError::invalid(
                "step_timeout_ms",
                format!("{ms} is outside 100-600000"),
            ))
        }
    };
    let parsed: Vec<(String, Action)> = specs
        .iter()
        .map(|(prefix, spec)| Ok((prefix.clone(), parse::parse(spec, prefix)?)))
        .collect::<Result<_, OpError>>()?;
    let target = find_target(ctx, &p.sid)?;
    if let Target::Desktop(desktop) = &target {
        if !desktop.alive() {
            return Err(OpError::new(ErrorCode::DisplayUnavailable,
                format!(
                    "sid: the display of desktop '{}' is gone (its X server exited or stopped answering); nothing was sent. Close it and start a new one",
                    p.sid
                ),
            ));
        }
    }

    // Everything is checked before the first event goes out.
    let (width, height) = match &target {
        Target::Desktop(desktop) => desktop.size(),
        Target::Terminal(session) => on_terminal::image_size(session),
    };
    for (prefix, action) in &parsed {
        actions::check_points(action, width, height, prefix)?;
        if let Target::Terminal(_) = &target {
            on_terminal::check(action, prefix)?;
        }
    }

    let total = parsed.len();
    let mut results: Vec<Map<String, Value>> = Vec::with_capacity(total);
    let mut zoom: Option<[u32; 4]> = None;
    let mut failure: Option<Failure> = None;
    let mut input_sent = false;
    for (index, (_, action)) in parsed.iter().enumerate() {
        let outcome = match (&target, action) {
            (_, Action::Wait { ms }) => {
                tokio::time::sleep(Duration::from_millis(*ms)).await;
                Ok(Map::new())
            }
            (Target::Desktop(desktop), action) => {
                on_desktop::perform(desktop, action, step_timeout).await
            }
            (Target::Terminal(session), action) => on_terminal::perform(session, action).await,
        };
        match outcome {
            Ok(mut fields) => {
                input_sent |= action.sends_input();
                zoom = match action {
                    Action::Zoom { region } => Some(*region),
                    _ => None,
                };
                let mut entry = Map::new();
                entry.insert("type".into(), action.name().into());
                entry.append(&mut fields);
                results.push(entry);
                progress.send(json!({
                    "message": format!("{} {}/{} done", action.name(), index + 1, total)
                }));
            }
            Err((error, dispatched)) => {
                failure = Some(Failure {
                    index,
                    error,
                    outcome_unknown: dispatched && action.sends_input(),
                });
                break;
            }
        }
    }

    let picture = match &target {
        Target::Desktop(desktop) => on_desktop::picture(desktop, zoom, step_timeout).await,
        Target::Terminal(session) => on_terminal::picture(session, zoom),
    };
    let kind = match &target {
        Target::Desktop(_) => "desktop",
        Target::Terminal(_) => "terminal",
    };
    let run = Run {
        results,
        zoom,
        failure,
        input_sent,
    };
    answer(&p.sid, kind, &parsed, run, picture)
}
