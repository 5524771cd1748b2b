//! Turning a verb into the operation it asks the daemon for, with that operation's own parameter
//! type built from the arguments. What only the caller knows (relative paths, the working directory)
//! is filled in afterwards by the operation's `prepare`, as for MCP calls.

use serde_json::{json, Map, Value};

use super::args::{
    ActArgs, ComputerArgs, DesktopStartArgs, DesktopVerb, RecordVerb, RunArgs, TextualArgs,
    UntilArgs, Verb, WaitArgs,
};
use crate::ops::{
    self, ComputerParams, DesktopStartParams, ErrorCode, ExpectParams, ListParams, MouseParams,
    OpError, Operation, RecordAction, RecordParams, ResizeParams, RunParams, ScreenshotParams,
    SendKeysParams, SendParams, SidParams, SnapshotParams, SpawnParams, TextParams,
    TextualRunParams, UntilParams, WaitChangeParams, WaitExitParams, WaitForParams, WaitParams,
    WaitReadyParams, WaitVisualChangeParams,
};

/// What a verb asks the daemon.
#[derive(Debug)]
pub struct Plan {
    pub op: String,
    pub params: Value,
}

impl Plan {
    /// Operation `O` with its own parameter type.
    fn of<O: Operation>(params: &O::Params) -> Result<Plan, OpError> {
        let params = serde_json::to_value(params).map_err(|e| {
            OpError::new(ErrorCode::Internal, format!("{}: parameters: {e}", O::NAME))
        })?;
        Ok(Plan {
            op: O::NAME.to_owned(),
            params,
        })
    }
}

fn parse_pair(text: &str, sep: char, field: &str, example: &str) -> Result<(u16, u16), OpError> {
    let parsed: Option<(u64, u64)> = text
        .split_once(sep)
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
    let (a, b) = parsed
        .ok_or_else(|| OpError::invalid(field, format!("{text:?} is not of the form {example}")))?;
    match (u16::try_from(a), u16::try_from(b)) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        _ => Err(OpError::invalid(
            field,
            format!("{text:?} is far too large (each number at most 65535)"),
        )),
    }
}

fn size(text: &str, example: &str) -> Result<(u16, u16), OpError> {
    parse_pair(&text.to_lowercase(), 'x', "size", example)
}

fn json_arg(text: &str, field: &str) -> Result<Value, OpError> {
    serde_json::from_str(text).map_err(|e| OpError::invalid(field, format!("not valid JSON: {e}")))
}

/// Turn a verb into an operation and its parameters.
pub fn plan(verb: &Verb) -> Result<Plan, OpError> {
    match verb {
        Verb::Spawn(a) => {
            let env = env_pairs(&a.env)?;
            let (cols, rows) = match &a.size {
                Some(text) => {
                    let (c, r) = size(text, "COLSxROWS, e.g. 120x40")?;
                    (Some(c), Some(r))
                }
                None => (None, None),
            };
            let params = SpawnParams {
                cmd: a.shell.then(|| a.program.join(" ")),
                argv: (!a.shell).then(|| a.program.clone()),
                shell: a.shell,
                sid: a.sid.clone(),
                cwd: a.cwd.as_ref().map(|p| p.to_string_lossy().into_owned()),
                env,
                clean_env: a.clean_env,
                caller_env: None,
                cols,
                rows,
                detect_child_exit: a.detect_child_exit,
                images: a.images,
                record: a.record.as_ref().map(|p| p.to_string_lossy().into_owned()),
                record_input: a.record_input,
                force: a.force,
                caller_umask: None,
                until: until_value(&a.until)?,
                steps: steps_value(&a.until)?,
                timeout_ms: a.until.until_timeout_ms,
                screen: screen_mode(&a.until),
                reader: reader(&a.until),
            };
            Plan::of::<ops::Spawn>(&params)
        }
        Verb::List => Plan::of::<ops::List>(&ListParams {}),
        Verb::Alive { sid } => Plan::of::<ops::Alive>(&SidParams { sid: sid.clone() }),
        Verb::Close { sid } => Plan::of::<ops::Close>(&SidParams { sid: sid.clone() }),
        Verb::Resize { sid, size: text } => {
            let (cols, rows) = size(text, "COLSxROWS, e.g. 120x40")?;
            Plan::of::<ops::Resize>(&ResizeParams {
                sid: sid.clone(),
                cols,
                rows,
            })
        }
        Verb::Keys {
            sid,
            keys,
            until,
            settle_ms,
            ..
        } if until.given() || until.delta || until.no_screen => {
            no_settle(*settle_ms)?;
            send(sid, None, Some(keys.clone()), None, until)
        }
        Verb::Line {
            sid,
            text,
            until,
            settle_ms,
            ..
        } if until.given() || until.delta || until.no_screen => {
            no_settle(*settle_ms)?;
            send(
                sid,
                Some(text.join(" ")),
                Some(vec!["Enter".into()]),
                None,
                until,
            )
        }
        Verb::Type {
            sid,
            text,
            until,
            settle_ms,
            ..
        } if until.given() || until.delta || until.no_screen => {
            no_settle(*settle_ms)?;
            send(sid, Some(text.join(" ")), None, None, until)
        }
        Verb::Keys {
            sid,
            keys,
            settle_ms,
            styled,
            ..
        } => Plan::of::<ops::SendKeys>(&SendKeysParams {
            sid: sid.clone(),
            keys: keys.clone(),
            settle_ms: *settle_ms,
            settle_timeout_ms: None,
            styled: *styled,
        }),
        Verb::Line {
            sid,
            text,
            settle_ms,
            styled,
            ..
        }
        | Verb::Type {
            sid,
            text,
            settle_ms,
            styled,
            ..
        } => {
            let params = TextParams {
                sid: sid.clone(),
                text: text.join(" "),
                settle_ms: *settle_ms,
                settle_timeout_ms: None,
                styled: *styled,
            };
            if matches!(verb, Verb::Line { .. }) {
                Plan::of::<ops::SendLine>(&params)
            } else {
                Plan::of::<ops::Type>(&params)
            }
        }
        Verb::Mouse(a) if a.until.given() || a.until.delta || a.until.no_screen => {
            no_settle(a.settle_ms)?;
            let event = Value::Object(mouse_event(a)?);
            send(&a.sid, None, None, Some(event), &a.until)
        }
        Verb::Run(a) => plan_run(a),
        // Typing a secret is input: the send operation, with its reference read on this side.
        Verb::Secret(a) => {
            let mut plan = send(&a.sid, None, None, None, &a.until)?;
            let secret = crate::ops::SecretRef {
                env: a.env.clone(),
                file: a.file.clone(),
                ..Default::default()
            };
            plan.params["secret"] = serde_json::to_value(secret)
                .map_err(|e| OpError::new(ErrorCode::Internal, format!("secret: {e}")))?;
            Ok(plan)
        }
        Verb::Mouse(a) => {
            let mut fields = mouse_event(a)?;
            fields.insert("sid".into(), json!(a.sid));
            fields.insert("settle_ms".into(), json!(a.settle_ms));
            fields.insert("styled".into(), json!(a.styled));
            let params: MouseParams =
                serde_json::from_value(Value::Object(fields)).map_err(|e| {
                    let field = if e.to_string().contains("button") {
                        "button"
                    } else {
                        "action"
                    };
                    OpError::invalid(field, e.to_string())
                })?;
            Plan::of::<ops::Mouse>(&params)
        }
        Verb::Snapshot(a) => Plan::of::<ops::Snapshot>(&SnapshotParams {
            sid: a.sid.clone(),
            as_json: a.cells,
            styled: a.styled,
            scrollback: a.scrollback,
            image: None,
            screen: None,
            part: a.part.clone(),
            ocr: a.ocr,
            reader: a.delta.then(cli_reader),
        }),
        Verb::Act(a) => Plan::of::<ops::Act>(&plan_act(a)?),
        Verb::Screenshot(a) => {
            let svg = a
                .output
                .as_ref()
                .and_then(|o| o.extension())
                .and_then(|e| e.to_str())
                .is_some_and(|ext| ext.eq_ignore_ascii_case("svg"));
            let theme = a
                .theme
                .as_ref()
                .map(|t| {
                    serde_json::from_value(Value::String(t.clone())).map_err(|_| {
                        OpError::invalid("theme", format!("{t:?} is not dark or light"))
                    })
                })
                .transpose()?;
            let params = ScreenshotParams {
                sid: a.sid.clone(),
                format: Some(if svg {
                    crate::ops::ImageFormat::Svg
                } else {
                    crate::ops::ImageFormat::Png
                }),
                font_px: a.scale,
                theme,
                frame: a.frame,
                max_long_edge: a.max_long_edge,
                max_pixels: None,
                full_size: a.full_size,
                marks: a.marks,
            };
            Plan::of::<ops::Screenshot>(&params)
        }
        Verb::Wait(a) => plan_wait(a),
        Verb::Textual(a) => Plan::of::<ops::TextualRun>(&plan_textual(a)?),
        Verb::Desktop {
            action: DesktopVerb::Start(a),
        } => Plan::of::<ops::DesktopStart>(&plan_desktop_start(a)?),
        Verb::Computer(a) => Plan::of::<ops::Computer>(&plan_computer(a)?),
        Verb::Watch {
            http,
            control,
            stop,
        } => Plan::of::<ops::Watch>(&crate::ops::WatchParams {
            http: http.clone(),
            control: *control,
            stop: *stop,
        }),
        Verb::Record(a) => Plan::of::<ops::Record>(&RecordParams {
            sid: a.sid.clone(),
            action: match a.action {
                RecordVerb::Start => RecordAction::Start,
                RecordVerb::Stop => RecordAction::Stop,
            },
            path: a.file.as_ref().map(|p| p.to_string_lossy().into_owned()),
            input: a.input,
            force: a.force,
            caller_umask: None,
        }),
        Verb::SaveTest(a) => Plan::of::<ops::SaveTest>(&crate::ops::SaveTestParams {
            file: a.file.to_string_lossy().into_owned(),
            sids: (!a.sids.is_empty()).then(|| a.sids.clone()),
            name: a.name.clone(),
            force: a.force,
            caller_umask: None,
        }),
        Verb::Test(_) => Err(OpError::new(
            ErrorCode::BadRequest,
            "test runs step files here; it asks the daemon nothing",
        )),
        Verb::Replay(_) => Err(OpError::new(
            ErrorCode::BadRequest,
            "replay plays a file here; it asks the daemon nothing",
        )),
        Verb::Render(_) => Err(OpError::new(
            ErrorCode::BadRequest,
            "render draws a file here; it asks the daemon nothing",
        )),
        Verb::Install(_) => Err(OpError::new(
            ErrorCode::BadRequest,
            "install writes an agent host's files here; it asks the daemon nothing",
        )),
        Verb::Op(words) => {
            let (op, params) = super::op_verb::plan(words)?;
            Ok(Plan { op, params })
        }
        Verb::Call { op, params } => Ok(Plan {
            op: op.clone(),
            params: match params {
                Some(text) => json_arg(text, "params")?,
                None => json!({}),
            },
        }),
        Verb::Daemon { .. } | Verb::Mcp { .. } | Verb::Attach(_) | Verb::DialStdio { .. } => {
            Err(OpError::new(
                ErrorCode::Internal,
                "daemon, mcp, attach and dial-stdio are not single operations",
            ))
        }
    }
}

fn plan_act(a: &ActArgs) -> Result<crate::ops::ActParams, OpError> {
    use crate::ops::kit::accessibility::{ElementUntil, Find};
    let action = a
        .action
        .as_ref()
        .map(|name| {
            serde_json::from_value::<crate::ops::ActName>(Value::String(name.clone())).map_err(|_| {
                OpError::invalid(
                    "do",
                    format!("{name:?} is not an action: click, double_click, focus, set, type, select, toggle, scroll, raise, minimize, close, move, resize, clipboard or primary"),
                )
            })
        })
        .transpose()?;
    let to =
        a.to.as_deref()
            .map(|t| {
                let pair: Option<(i32, i32)> = t
                    .split_once(',')
                    .and_then(|(x, y)| Some((x.trim().parse().ok()?, y.trim().parse().ok()?)));
                pair.map(|(x, y)| [x, y])
                    .ok_or_else(|| OpError::invalid("to", format!("{t:?} is not A,B, e.g. 100,80")))
            })
            .transpose()?;
    let find = |role: &Option<String>, name: &Option<String>, state: &Option<String>| {
        (role.is_some() || name.is_some() || state.is_some()).then(|| Find {
            role: role.clone(),
            name: name.clone(),
            state: state.clone(),
        })
    };
    let until = ElementUntil {
        appears: find(&a.appears_role, &a.appears_name, &a.appears_state),
        gone: find(&a.gone_role, &a.gone_name, &a.gone_state),
        changed: a.changed.clone(),
    };
    let waits = until.appears.is_some() || until.gone.is_some() || until.changed.is_some();
    Ok(crate::ops::ActParams {
        sid: a.sid.clone(),
        target: a.target.clone().filter(|t| t != "-"),
        action,
        text: a.text.clone(),
        to,
        until: waits.then_some(until),
        timeout_ms: a.timeout_ms,
    })
}

fn plan_textual(a: &TextualArgs) -> Result<TextualRunParams, OpError> {
    let actions = match &a.actions {
        Some(text) => match json_arg(text, "actions")? {
            Value::Array(list) => list,
            other => vec![other],
        },
        None => Vec::new(),
    };
    let size = a
        .size
        .as_deref()
        .map(|text| size(text, "WIDTHxHEIGHT, e.g. 100x30"))
        .transpose()?;
    Ok(TextualRunParams {
        app: a.app.as_ref().map(|p| p.to_string_lossy().into_owned()),
        actions,
        size: size.map(|(w, h)| [w, h]),
        screenshot: a.screenshot,
        tree: a.tree,
        query: a.query.clone(),
        session: a.session.clone(),
        close: a.close,
        python: a.python.clone(),
        timeout: a.timeout,
        caller_env: None,
    })
}

fn plan_desktop_start(a: &DesktopStartArgs) -> Result<DesktopStartParams, OpError> {
    let size = a
        .size
        .as_deref()
        .map(|text| size(text, "WIDTHxHEIGHT, e.g. 1280x800"))
        .transpose()?;
    Ok(DesktopStartParams {
        sid: a.sid.clone(),
        size: size.map(|(w, h)| [u32::from(w), u32::from(h)]),
        display: a.display.clone(),
        wayland: a.wayland,
        window_manager: a.wm.clone(),
        argv: (!a.program.is_empty()).then(|| a.program.clone()),
        cwd: a.cwd.as_ref().map(|p| p.to_string_lossy().into_owned()),
        env: env_pairs(&a.env)?,
        clean_env: a.clean_env,
        ..DesktopStartParams::default()
    })
}

/// `--env K=V` options as the `env` parameter.
fn env_pairs(entries: &[String]) -> Result<std::collections::BTreeMap<String, String>, OpError> {
    entries
        .iter()
        .map(|entry| {
            let (k, v) = entry
                .split_once('=')
                .ok_or_else(|| OpError::invalid("env", format!("{entry:?} is not K=V")))?;
            Ok((k.to_owned(), v.to_owned()))
        })
        .collect()
}

/// `computer SID NAME ARGS...` (or JSON) as `computer` parameters.
fn plan_computer(a: &ComputerArgs) -> Result<ComputerParams, OpError> {
    let mut params = ComputerParams {
        sid: a.sid.clone(),
        action: None,
        actions: None,
        step_timeout_ms: a.step_timeout_ms,
        max_long_edge: a.max_long_edge,
        full_size: a.full_size,
        ..ComputerParams::default()
    };
    let first = a.action[0].trim_start();
    if first.starts_with('{') || first.starts_with('[') {
        match json_arg(&a.action.join(" "), "action")? {
            Value::Array(list) => params.actions = Some(list),
            one => params.action = Some(one),
        }
        return Ok(params);
    }
    params.action = Some(Value::Object(action_words(&a.action)?));
    Ok(params)
}

/// One action from words: `click X Y [BUTTON]`, `type TEXT...`, `keypress KEY...`, ...
fn action_words(words: &[String]) -> Result<Map<String, Value>, OpError> {
    let name = words[0].as_str();
    let args = &words[1..];
    let number = |i: usize, what: &str| -> Result<f64, OpError> {
        args.get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .ok_or_else(|| OpError::invalid("action", format!("{name} needs {what}")))
    };
    let mut action = Map::new();
    action.insert("type".into(), name.into());
    match name {
        "click" | "double_click" | "triple_click" | "move" | "left_click" | "right_click"
        | "middle_click" | "mouse_move" => {
            action.insert("x".into(), json!(number(0, "X Y")?));
            action.insert("y".into(), json!(number(1, "X Y")?));
            if let Some(button) = args.get(2) {
                action.insert("button".into(), button.clone().into());
            }
        }
        "scroll" => {
            let what = "X Y SCROLL_X SCROLL_Y";
            action.insert("x".into(), json!(number(0, what)?));
            action.insert("y".into(), json!(number(1, what)?));
            action.insert("scroll_x".into(), json!(number(2, what)?));
            action.insert("scroll_y".into(), json!(number(3, what)?));
        }
        // not an operation
        "type" | "key" => {
            action.insert("text".into(), args.join(" ").into());
        }
        "keypress" => {
            let keys: Vec<String> = if args.len() == 1 && args[0].len() > 1 && args[0].contains('+')
            {
                args[0].split('+').map(str::to_owned).collect()
            } else {
                args.to_vec()
            };
            action.insert("keys".into(), json!(keys));
        }
        "drag" => {
            let path: Vec<Value> = args
                .iter()
                .map(|point| {
                    let (x, y) = parse_pair(point, ',', "path", "X,Y, e.g. 10,20")?;
                    Ok(json!({"x": x, "y": y}))
                })
                .collect::<Result<_, OpError>>()?;
            action.insert("path".into(), Value::Array(path));
        }
        // not an operation
        "wait" if !args.is_empty() => {
            action.insert("ms".into(), json!(number(0, "MS")? as u64));
        }
        _ => {}
    }
    Ok(action)
}

/// The event the mouse verb's flags say (action, where, button, modifiers), as `mouse` and `send`
/// both take it; flags not given are left out.
fn mouse_event(a: &super::args::MouseArgs) -> Result<Map<String, Value>, OpError> {
    let pair = |text: &Option<String>, field: &str| {
        text.as_deref()
            .map(|t| parse_pair(t, ',', field, "COL,ROW, e.g. 10,2"))
            .transpose()
    };
    let (at, to) = (pair(&a.at, "at")?, pair(&a.to, "to")?);
    let fields = [
        ("action", json!(a.action)),
        ("col", json!(at.map(|p| p.0))),
        ("row", json!(at.map(|p| p.1))),
        ("text", json!(a.text)),
        ("nth", json!(a.nth)),
        ("button", json!(a.button)),
        ("to", json!(to.map(|p| [p.0, p.1]))),
        ("scroll_y", json!(a.scroll_y)),
        ("scroll_x", json!(a.scroll_x)),
        ("modifiers", json!(a.modifiers)),
    ];
    Ok(fields
        .into_iter()
        // Not given: no value, or no modifiers.
        .filter(|(_, value)| !value.is_null() && *value != json!([]))
        .map(|(name, value)| (name.to_owned(), value))
        .collect())
}

/// The reader name of CLI calls with `--delta`.
fn cli_reader() -> String {
    std::env::var("SCREENPILOT_READER")
        .ok()
        .filter(|r| !r.is_empty())
        .unwrap_or_else(|| "cli".to_owned())
}

fn reader(until: &UntilArgs) -> Option<String> {
    until.delta.then(cli_reader)
}

fn screen_mode(until: &UntilArgs) -> Option<crate::ops::ScreenMode> {
    until.no_screen.then_some(crate::ops::ScreenMode::None)
}

/// The `until` object the flags say, if any.
fn until_value(u: &UntilArgs) -> Result<Option<Value>, OpError> {
    if !u.given() {
        return Ok(None);
    }
    let any_condition = u.until.is_some()
        || !u.until_any.is_empty()
        || u.until_exit
        || u.until_change
        || u.until_visual
        || u.until_input
        || u.until_quiet.is_some();
    if !any_condition {
        return Ok(None);
    }
    let params = UntilParams {
        regex: u.until.clone(),
        any: (!u.until_any.is_empty()).then(|| u.until_any.clone()),
        exit: u.until_exit,
        change: u.until_change,
        visual: u.until_visual,
        quiet_ms: u.until_quiet,
        input: u.until_input,
        settle_ms: u.no_settle.then_some(0),
    };
    serde_json::to_value(params)
        .map(Some)
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("until: {e}")))
}

fn no_settle(settle_ms: Option<u64>) -> Result<(), OpError> {
    match settle_ms {
        Some(_) => Err(OpError::invalid(
            "settle_ms",
            "give --settle-ms or the --until flags, not both (--until-quiet MS settles)",
        )),
        None => Ok(()),
    }
}

/// Input with a wait after it: the `send` operation.
fn send(
    sid: &str,
    text: Option<String>,
    keys: Option<Vec<String>>,
    mouse: Option<Value>,
    until: &UntilArgs,
) -> Result<Plan, OpError> {
    Plan::of::<ops::Send>(&SendParams {
        sid: sid.to_owned(),
        text,
        keys,
        mouse,
        until: until_value(until)?,
        steps: steps_value(until)?,
        secret: None,
        timeout_ms: until.until_timeout_ms,
        screen: screen_mode(until),
        reader: reader(until),
    })
}

/// `--steps JSON` as the `steps` parameter.
fn steps_value(until: &UntilArgs) -> Result<Option<Vec<Value>>, OpError> {
    match until
        .steps
        .as_deref()
        .map(|text| json_arg(text, "steps"))
        .transpose()?
    {
        None => Ok(None),
        Some(Value::Array(list)) => Ok(Some(list)),
        Some(one @ Value::Object(_)) => Ok(Some(vec![one])),
        Some(_) => Err(OpError::invalid(
            "steps",
            "a JSON list of steps, e.g. '[{\"keys\": [\"q\"], \"until\": {\"exit\": true}}]'",
        )),
    }
}

fn plan_run(a: &RunArgs) -> Result<Plan, OpError> {
    Plan::of::<ops::Run>(&RunParams {
        sid: a.sid.clone(),
        command: (!a.command.is_empty()).then(|| a.command.join(" ")),
        id: a.id,
        offset: a.offset,
        max_lines: a.max_lines,
        max_bytes: None,
        timeout_ms: a.timeout_ms,
    })
}

fn plan_wait(a: &WaitArgs) -> Result<Plan, OpError> {
    let sid = a.sid.clone();
    if a.until.given() {
        let classic = a.regex.is_some()
            || a.any.is_some()
            || a.change.is_some()
            || a.visual_change.is_some()
            || a.ready
            || a.exit;
        if classic {
            return Err(OpError::invalid(
                "until",
                "give the --until flags or one of --regex/--any/--change/--visual-change/--ready/--exit, not both",
            ));
        }
        let p = WaitParams {
            sid,
            until: until_value(&a.until)?.unwrap_or_default(),
            timeout_ms: a.until.until_timeout_ms.or(a.timeout_ms),
            screen: screen_mode(&a.until),
            reader: reader(&a.until),
        };
        return Plan::of::<ops::Wait>(&p);
    }
    let timeout_ms = a.timeout_ms;
    let baseline = |hash: &String| (!hash.is_empty()).then(|| hash.clone());
    if let Some(pattern) = &a.regex {
        let p = WaitForParams {
            sid,
            pattern: pattern.clone(),
            timeout_ms,
            scrollback: a.scrollback,
            styled: a.styled,
        };
        Plan::of::<ops::ClassicWait<WaitForParams>>(&p)
    } else if let Some(any) = &a.any {
        let p = ExpectParams {
            sid,
            patterns: any.clone(),
            timeout_ms,
            scrollback: a.scrollback,
            styled: a.styled,
        };
        Plan::of::<ops::ClassicWait<ExpectParams>>(&p)
    } else if let Some(hash) = &a.change {
        let p = WaitChangeParams {
            sid,
            hash: baseline(hash),
            timeout_ms,
            styled: a.styled,
        };
        Plan::of::<ops::ClassicWait<WaitChangeParams>>(&p)
    } else if let Some(hash) = &a.visual_change {
        let p = WaitVisualChangeParams {
            sid,
            visual_hash: baseline(hash),
            timeout_ms,
            styled: a.styled,
        };
        Plan::of::<ops::ClassicWait<WaitVisualChangeParams>>(&p)
    } else if a.ready {
        let p = WaitReadyParams {
            sid,
            marker: a.marker.clone(),
            stable_ms: a.stable_ms,
            max_wait_ms: timeout_ms,
            styled: a.styled,
        };
        Plan::of::<ops::ClassicWait<WaitReadyParams>>(&p)
    } else if a.exit {
        let p = WaitExitParams {
            sid,
            timeout_ms,
            styled: a.styled,
        };
        Plan::of::<ops::ClassicWait<WaitExitParams>>(&p)
    } else {
        // The verb's own name, for the error.
        let verb = "wait"; // not an operation: the CLI verb
        Err(OpError::invalid(verb, "say what to wait for: --regex RE, --any RE..., --change, --visual-change, --ready or --exit"))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use serde_json::json;

    use super::*;
    use crate::cli::Cli;

    fn plan_of(words: &[&str]) -> Result<Plan, OpError> {
        let cli = Cli::try_parse_from(std::iter::once("screenpilot").chain(words.iter().copied()))
            .expect("the words parse");
        plan(&cli.verb)
    }

    fn wrong_field(words: &[&str]) -> Option<String> {
        plan_of(words).err().and_then(|e| e.field)
    }

    #[test]
    fn secret_sends_a_reference_never_a_value() {
        let p = plan_of(&["secret", "db", "--env", "PW", "--until-input"]).expect("a plan");
        assert_eq!(p.op, "send");
        assert_eq!(p.params["secret"], json!({"env": "PW"}));
        assert_eq!(p.params["until"]["input"], json!(true));
        let parsed = |words: &[&str]| {
            Cli::try_parse_from(std::iter::once("screenpilot").chain(words.iter().copied()))
        };
        assert!(
            parsed(&["secret", "db"]).is_err(),
            "--env or --file is needed"
        );
        assert!(parsed(&["secret", "db", "--env", "A", "--file", "b"]).is_err());
    }

    #[test]
    fn wait_any_expects_the_patterns() {
        let p = plan_of(&["wait", "s", "--any", "ok", "fail"]).expect("a plan");
        assert_eq!(p.op, "expect");
        assert_eq!(p.params["patterns"], json!(["ok", "fail"]));
        assert_eq!(p.params["scrollback"], json!(false));
    }

    #[test]
    fn wait_ready_takes_its_timeout_as_max_wait() {
        let p = plan_of(&["wait", "s", "--ready", "--timeout-ms", "500"]).expect("a plan");
        assert_eq!(p.op, "wait_ready");
        assert_eq!(p.params["max_wait_ms"], json!(500));
        assert!(p.params.get("timeout_ms").is_none());
    }

    #[test]
    fn wait_without_a_condition_is_refused() {
        assert_eq!(wrong_field(&["wait", "s"]).as_deref(), Some("wait"));
    }

    #[test]
    fn spawn_shell_joins_the_words_into_one_command() {
        let p = plan_of(&["spawn", "--shell", "--", "echo", "hi"]).expect("a plan");
        assert_eq!(p.op, "spawn");
        assert_eq!(p.params["cmd"], "echo hi");
        assert_eq!(p.params["shell"], true);
        assert!(p.params["argv"].is_null());
    }

    #[test]
    fn resize_reads_cols_by_rows_in_either_case() {
        let p = plan_of(&["resize", "s", "120X40"]).expect("a plan");
        assert_eq!(p.op, "resize");
        assert_eq!(
            (p.params["cols"].clone(), p.params["rows"].clone()),
            (json!(120), json!(40))
        );
    }

    #[test]
    fn a_malformed_size_names_the_field() {
        assert_eq!(
            wrong_field(&["spawn", "--size", "big", "--", "sh"]).as_deref(),
            Some("size")
        );
        assert_eq!(
            wrong_field(&["resize", "s", "120"]).as_deref(),
            Some("size")
        );
    }

    #[test]
    fn computer_keypress_splits_a_chord() {
        let p = plan_of(&["computer", "d", "keypress", "ctrl+c"]).expect("a plan");
        assert_eq!(
            p.params["action"],
            json!({"type": "keypress", "keys": ["ctrl", "c"]})
        );
    }
}
