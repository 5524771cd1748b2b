//! The `computer` operation: the OpenAI computer-use action surface on desktop sessions and on
//! terminal sessions alike, taking every action shape the vendors' tools emit as they emit it
//! (OpenAI's `{type, ...}`, Anthropic's `{action, ...}` and its toolset's `tool_use` blocks; the
//! request shape is in [`request`], the exact vendor JSON in the `vendor_shapes` tests).
//!
//! A call is checked whole before anything is sent: every action parsed, every coordinate inside the
//! screenshot. Then the actions run in order, stopping at the first failure, each followed by a wait
//! until the screen reacted and went quiet. Whatever happens, the answer carries a fresh PNG; a
//! failure after input went out says the outcome is unknown.
//!
//! On desktops the screenshot is sized for models (the session's [`ModelSize`], or this call's: a
//! vendor's preset by name, `fit`, from [`screenpilot_desktop::scale::PRESETS`]), and
//! coordinates are pixels of that screenshot: checked against its size, mapped to the screen exactly
//! ([`screenpilot_desktop::scale`]). A zoom region is given in screenshot pixels too, and answered
//! with that part of the screen at its own resolution (scaled down only if it alone exceeds the
//! size), while `pointer` stays in screenshot pixels. Terminal screenshots are the rendered screen at
//! full size.

mod actions;
mod answer;
mod keys;
mod on_desktop;
mod on_terminal;
mod parse;
mod request;
#[cfg(test)]
mod vendor_shapes;

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use screenpilot_desktop::scale::{self, Scale};

use crate::ops::kit::common::{Context, ErrorCode, OpError, Progress};
use crate::ops::kit::display::{find_target, model_size, scale_for, Target};
use crate::ops::kit::model_size::ModelSize;
use crate::ops::kit::operation::{Operation, Profile};
use crate::ops::kit::step_table::{Journaled, StepTable};
use answer::{answer, Failure, Run};

pub use answer::ComputerDone;

pub use actions::Action;
pub use request::ActionSpec;

/// Parameters of `computer`. Give `action` or `actions`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ComputerParams {
    pub sid: String,
    // Listed as a plain object: the tool's description says the action shapes in far fewer bytes
    // than their schema, and the daemon checks each action with errors naming its field.
    #[schemars(with = "Option<request::ActionObject>")]
    pub action: Option<Value>,
    #[schemars(with = "Option<Vec<request::ActionObject>>")]
    pub actions: Option<Vec<Value>>,
    /// Limit for each step in ms (default 30000).
    pub step_timeout_ms: Option<u64>,
    /// Desktops: longest screenshot side (default: the session's, 1568).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_long_edge: Option<u32>,
    /// Desktops: most screenshot pixels (default: the session's, 1150000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pixels: Option<u64>,
    /// Desktops: screenshot size preset; anthropic-hires: Claude Opus 4.7+.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "fit_schema")]
    pub fit: Option<String>,
    /// Desktops: the screenshot unscaled.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_size: bool,
    /// Terminals: as in send
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<request::ActionObject>")]
    // a plain object, as `action` is listed
    pub until: Option<Value>,
    /// With `until`: its limit in ms (default 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// `fit` as clients see it: one of the preset names.
fn fit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    let names: Vec<&str> = scale::PRESETS.iter().map(|p| p.name).collect();
    schemars::json_schema!({"type": "string", "enum": names})
}

/// The screenshot size a `fit` preset names ([`scale::PRESETS`]).
fn preset_size(name: &str, full_size: bool) -> Result<ModelSize, OpError> {
    if full_size {
        return Err(OpError::invalid(
            "fit",
            "fit limits the screenshot's size and full_size sends it unscaled: give one of them",
        ));
    }
    let fit = scale::preset(name).ok_or_else(|| {
        let names: Vec<&str> = scale::PRESETS.iter().map(|p| p.name).collect();
        OpError::invalid(
            "fit",
            format!("unknown preset {name:?}; use {}", names.join(", ")),
        )
    })?;
    Ok(ModelSize {
        max_long_edge: fit.max_long_edge,
        max_pixels: fit.max_pixels,
    })
}

/// How long one desktop action may take. A limit the caller gave is kept as it is; the default one
/// grows by the time an action holds its keys (a `hold_key` may last a minute), so that no duration
/// the action takes is bound to time out.
fn step_limit(action: &Action, limit: Duration, given: bool) -> Duration {
    match action {
        Action::Keypress { chords, hold_ms } if !given => {
            limit + Duration::from_millis(hold_ms.saturating_mul(chords.len() as u64))
        }
        _ => limit,
    }
}

/// Most actions in one call.
const MAX_ACTIONS: usize = 100;

/// `computer`: computer-use actions with a fresh screenshot.
pub struct Computer;

impl Operation for Computer {
    const NAME: &'static str = "computer";
    const PROFILES: &'static [Profile] = &[Profile::Desktop];
    const DESCRIPTION: &'static str = "OpenAI computer actions on a desktop (or terminal); answers a PNG once the screen settled. action {type,...}: screenshot, click {x,y,button}, double_click, move, scroll {x,y,scroll_x,scroll_y}, type {text}, keypress {keys}, drag {path:[{x,y}]}, wait {ms}; Anthropic's shapes too. x,y: screenshot pixels. actions: a list. E.g. {\"sid\":\"d\",\"action\":{\"type\":\"click\",\"x\":9,\"y\":9}}";
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] = &[
        ("step_timeout_ms", Profile::CLASSIC),
        ("max_long_edge", Profile::CLASSIC),
        ("max_pixels", Profile::CLASSIC),
        ("full_size", Profile::CLASSIC),
        ("timeout_ms", Profile::CLASSIC),
        ("fit", Profile::CLASSIC),
    ];
    type Params = ComputerParams;
    type Output = ComputerDone;

    fn journal(p: &ComputerParams, held: bool) -> Vec<Journaled> {
        let actions = match (&p.actions, &p.action) {
            (Some(actions), _) => Value::Array(actions.clone()),
            (None, Some(action)) => Value::Array(vec![action.clone()]),
            (None, None) => return Vec::new(),
        };
        vec![Journaled::waiting(StepTable {
            computer: Some(actions),
            until: p.until.clone().filter(|u| held && !u.is_null()),
            ..StepTable::default()
        })]
    }

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
    let limit_given = p.step_timeout_ms.is_some();
    let step_timeout = match p.step_timeout_ms {
        None => screenpilot_desktop::DEFAULT_STEP_TIMEOUT,
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
    let preset = p
        .fit
        .as_deref()
        .map(|name| preset_size(name, p.full_size))
        .transpose()?;
    let target = find_target(ctx, &p.sid)?;
    let size: Option<ModelSize> = match &target {
        Target::Desktop(_) => {
            let base = preset.unwrap_or_else(|| ctx.model_sizes.get(&p.sid));
            model_size(base, p.max_long_edge, p.max_pixels, p.full_size)?
        }
        Target::Terminal(_) => {
            let sizing = [
                ("fit", p.fit.is_some()),
                ("max_long_edge", p.max_long_edge.is_some()),
                ("max_pixels", p.max_pixels.is_some()),
                ("full_size", p.full_size),
            ];
            if let Some((field, _)) = sizing.iter().find(|(_, given)| *given) {
                return Err(OpError::invalid(
                    field,
                    "fit, max_long_edge, max_pixels and full_size size desktop screenshots; a terminal's is its rendered screen, unscaled",
                ));
            }
            None
        }
    };
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

    // Everything is checked before the first event goes out, in the screenshot's pixels.
    let scale: Scale = match &target {
        Target::Desktop(desktop) => scale_for(size, desktop.size()),
        Target::Terminal(session) => Scale::identity(on_terminal::image_size(session)),
    };
    let (width, height) = scale.image;
    for ((prefix, action), (_, spec)) in parsed.iter().zip(&specs) {
        parse::check_points(action, spec, width, height, prefix)?;
        if let Target::Terminal(_) = &target {
            on_terminal::check(action, prefix)?;
        }
    }

    // A terminal's actions may carry the condition to wait for after them, as `send`'s input does.
    let until = match (&target, p.until) {
        (_, None) => None,
        (Target::Desktop(_), Some(_)) => {
            return Err(OpError::invalid(
                "until",
                "waits for a terminal's screen; on a desktop use a wait action",
            ))
        }
        (Target::Terminal(session), Some(value)) => {
            let limit = crate::ops::kit::until::timeout(p.timeout_ms, "timeout_ms")?;
            let params = crate::ops::kit::walk::until_object(&value)?;
            let compiled = params.compile(ctx).await?;
            Some(compiled.arm(session, limit, true))
        }
    };

    let total = parsed.len();
    let mut results: Vec<Map<String, Value>> = Vec::with_capacity(total);
    let mut zoom: Option<[u32; 4]> = None;
    let mut failure: Option<Failure> = None;
    let mut input_sent = false;
    let mut settled: Option<bool> = None;
    for (index, ((_, action), (_, spec))) in parsed.iter().zip(&specs).enumerate() {
        let outcome = match &target {
            Target::Desktop(desktop) => {
                let limit = step_limit(action, step_timeout, limit_given);
                on_desktop::perform(desktop, action, scale, limit).await
            }
            Target::Terminal(session) => on_terminal::perform(session, action).await,
        };
        match outcome {
            Ok(mut step) => {
                input_sent |= action.sends_input();
                zoom = match action {
                    Action::Zoom { region } => Some(*region),
                    _ => None,
                };
                let mut entry = Map::new();
                entry.insert("type".into(), action.name().into());
                if let Some(id) = &spec.id {
                    entry.insert("id".into(), id.clone().into());
                }
                entry.append(&mut step.fields);
                if let Some(wait) = step.wait {
                    if let Some(reacted) = wait.reacted {
                        entry.insert("reacted".into(), reacted.into());
                    }
                    entry.insert("settled".into(), wait.settled.into());
                    settled = Some(wait.settled);
                }
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

    let waited = match (&until, &target, &failure) {
        (Some(armed), Target::Terminal(session), None) => Some(armed.wait(session).await),
        _ => None,
    };
    let picture = match &target {
        Target::Desktop(desktop) => {
            on_desktop::picture(desktop, zoom, size, scale, step_timeout).await
        }
        Target::Terminal(session) => on_terminal::picture(session, zoom),
    };
    let kind = match &target {
        Target::Desktop(_) => "desktop",
        Target::Terminal(_) => "terminal",
    };
    let screen = match &target {
        Target::Desktop(desktop) => desktop.size(),
        Target::Terminal(_) => scale.screen,
    };
    let run = Run {
        results,
        zoom,
        failure,
        input_sent,
        settled,
        screen,
    };
    let mut done = answer(&p.sid, kind, &parsed, run, picture)?;
    done.until = waited;
    Ok(done)
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    /// The input schema as MCP clients see it.
    fn published() -> Value {
        let schema = crate::ops::kit::common::schema_of::<ComputerParams>();
        Value::Object(crate::mcp::tools::compact_schema(
            schema.as_object().cloned().unwrap_or_default(),
        ))
    }

    /// Paths to every `true` used as a schema (some clients refuse boolean subschemas).
    fn true_schemas(value: &Value, path: &str, found: &mut Vec<String>) {
        match value {
            Value::Bool(true) => found.push(path.to_owned()),
            Value::Object(map) => {
                for (key, inner) in map {
                    if !matches!(key.as_str(), "default" | "const" | "enum" | "examples") {
                        true_schemas(inner, &format!("{path}/{key}"), found);
                    }
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    true_schemas(inner, &format!("{path}/{i}"), found);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn the_published_schema_has_no_boolean_subschema() {
        let mut found = Vec::new();
        true_schemas(&published(), "", &mut found);
        assert!(found.is_empty(), "`true` schemas at {found:?}");
    }

    /// The listed `action` is a plain object (the description says the shapes), so a validating
    /// client lets every shape through, and the server takes each of them.
    #[test]
    fn the_published_schema_lets_every_shape_we_take_through() {
        let schema = published();
        let action = &schema["properties"]["action"];
        assert_eq!(action, &json!({"type": "object"}));
        for shape in [
            json!({"type": "click", "x": 1, "y": 2, "button": "right", "keys": ["shift"]}),
            json!({"action": "left_click", "coordinate": [1, 2], "text": "ctrl"}),
            json!({"action": "left_click"}),
            json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}),
            json!({"action": "scroll", "coordinate": [1, 2], "scroll_direction": "down", "scroll_amount": 5}),
            json!({"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": 240}),
            json!({"action": "key", "text": "ctrl+s"}),
            json!({"action": "hold_key", "text": "shift", "duration": 1}),
            json!({"type": "keypress", "keys": ["ctrl+c"], "ms": 10}),
            json!({"type": "drag", "path": [{"x": 1, "y": 2}, [3, 4]]}),
            json!({"action": "wait", "duration": 1}),
            json!({"type": "wait", "ms": 100}),
            json!({"action": "zoom", "region": [0, 0, 10, 10]}),
            json!({"action": "key", "text": "ctrl+s", "repeat": 3}),
            json!({"action": "left_click", "coordinate": [1, 2], "key": "shift"}),
            json!({"type": "tool_use", "id": "toolu_1", "name": "left_click", "toolset_name": "computer", "input": {"coordinate": [1, 2], "text": "ctrl"}}),
            json!({"name": "screenshot", "input": {}}),
        ] {
            parse::parse(
                &request::spec_from_json(shape.clone(), "action").expect("the server takes it"),
                "action",
            )
            .expect("the server takes it");
        }
        assert_eq!(schema["properties"]["actions"]["items"]["type"], "object");
    }

    /// Run `computer` with these parameters where no session exists: a call whose every part is
    /// taken ends at the session lookup (`sid`).
    async fn refusal(params: Value) -> OpError {
        let ctx = Context::new(screenpilot_session::Registry::new(
            screenpilot_session::Limits::default(),
        ));
        crate::ops::execute(&ctx, "computer", params, &Progress::default())
            .await
            .expect_err("no session")
    }

    /// A batch as each vendor sends it is taken whole before anything is looked up.
    #[tokio::test]
    async fn batches_as_vendors_send_them_are_taken() {
        // OpenAI: a computer_call's `actions`, forwarded as they came (the GA guide's example).
        let openai = json!({"sid": "nosuch", "actions": [
            {"type": "click", "button": "left", "x": 405, "y": 157, "keys": ["SHIFT"]},
            {"type": "type", "text": "hello"},
            {"type": "keypress", "keys": ["ENTER"]},
            {"type": "wait"},
            {"type": "screenshot"},
        ]});
        assert_eq!(refusal(openai).await.field.as_deref(), Some("sid"));
        // Anthropic's toolset: one turn's tool_use blocks, forwarded as they came.
        let block = |id: &str, name: &str, input: Value| json!({"type": "tool_use", "id": id, "name": name, "toolset_name": "computer", "input": input});
        let toolset = json!({"sid": "nosuch", "actions": [
            block("toolu_1", "left_click", json!({"coordinate": [10, 10]})),
            block("toolu_2", "key", json!({"text": "ctrl+a", "repeat": 2})),
            block("toolu_3", "type", json!({"text": "hi"})),
            block("toolu_4", "screenshot", json!({})),
        ]});
        assert_eq!(refusal(toolset).await.field.as_deref(), Some("sid"));
        // A wrong field in the third block is named before anything else happens.
        let bad = json!({"sid": "nosuch", "actions": [
            block("toolu_1", "left_click", json!({"coordinate": [10, 10]})),
            block("toolu_2", "screenshot", json!({})),
            block("toolu_3", "scroll", json!({"scroll_direction": "down", "scroll_amount": 2, "repeat": 2})),
        ]});
        assert_eq!(
            refusal(bad).await.field.as_deref(),
            Some("actions[2].repeat")
        );
    }

    #[tokio::test]
    async fn fit_names_a_preset_and_an_unknown_one_lists_them() {
        let screenshot = json!({"type": "screenshot"});
        for name in [
            "anthropic",
            "anthropic-hires",
            "xga",
            "wxga",
            "openai",
            "openai-original",
        ] {
            let err = refusal(json!({"sid": "nosuch", "action": screenshot, "fit": name})).await;
            assert_eq!(err.field.as_deref(), Some("sid"), "{name}");
        }
        let err = refusal(json!({"sid": "nosuch", "action": screenshot, "fit": "claude"})).await;
        assert_eq!(err.field.as_deref(), Some("fit"));
        assert!(
            err.message.ends_with(
                "unknown preset \"claude\"; use anthropic, anthropic-hires, xga, wxga, openai, openai-original"
            ),
            "{}",
            err.message
        );
        let err = refusal(
            json!({"sid": "nosuch", "action": screenshot, "fit": "xga", "full_size": true}),
        )
        .await;
        assert_eq!(err.field.as_deref(), Some("fit"));
        // The listed parameter spells the names, so a validating client refuses a typo itself.
        let names: Vec<Value> = scale::PRESETS.iter().map(|p| json!(p.name)).collect();
        assert_eq!(
            published()["properties"]["fit"]["enum"],
            Value::Array(names)
        );
    }

    #[test]
    fn the_default_step_limit_grows_by_what_a_key_is_held_but_a_given_one_does_not() {
        let thirty = Duration::from_secs(30);
        let hold = parse::parse(
            &request::spec_from_json(
                json!({"action": "hold_key", "text": "shift", "duration": 45}),
                "action",
            )
            .expect("a spec"),
            "action",
        )
        .expect("an action");
        assert_eq!(step_limit(&hold, thirty, false), Duration::from_secs(75));
        assert_eq!(step_limit(&hold, thirty, true), thirty);
        assert_eq!(step_limit(&Action::Screenshot, thirty, false), thirty);
    }

    #[test]
    fn the_description_fits_openais_limit() {
        assert!(
            Computer::DESCRIPTION.chars().count() <= 1024,
            "{} characters",
            Computer::DESCRIPTION.chars().count()
        );
    }
}
