//! Turning a verb into the operation it asks the daemon for and that operation's JSON parameters.
//! Relative paths (working directory, app, recording) are made absolute here: the daemon does not share
//! the caller's working directory.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::{ComputerArgs, DesktopStartArgs, DesktopVerb, TextualArgs, Verb, WaitArgs};
use crate::ops::OpError;

/// What a verb asks the daemon.
pub struct Plan {
    pub op: String,
    pub params: Value,
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

pub(super) fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    }
}

/// The program's working directory: the one given (made absolute), else ours. The daemon needs an
/// absolute path and would otherwise use its own.
fn insert_cwd(params: &mut Map<String, Value>, given: Option<&Path>) {
    let cwd = given.map(absolute).or_else(|| std::env::current_dir().ok());
    if let Some(cwd) = cwd {
        params.insert("cwd".into(), cwd.to_string_lossy().into_owned().into());
    }
}

/// Turn a verb into an operation and its parameters.
pub fn plan(verb: &Verb) -> Result<Plan, OpError> {
    let (op, params) = match verb {
        Verb::Spawn(a) => {
            let mut p = Map::new();
            if a.shell {
                p.insert("cmd".into(), a.program.join(" ").into());
                p.insert("shell".into(), true.into());
            } else {
                p.insert("argv".into(), json!(a.program));
            }
            if let Some(sid) = &a.sid {
                p.insert("sid".into(), sid.clone().into());
            }
            insert_cwd(&mut p, a.cwd.as_deref());
            let mut env = Map::new();
            for entry in &a.env {
                let (k, v) = entry
                    .split_once('=')
                    .ok_or_else(|| OpError::invalid("env", format!("{entry:?} is not K=V")))?;
                env.insert(k.to_owned(), v.into());
            }
            p.insert("env".into(), Value::Object(env));
            if let Some(size) = &a.size {
                let (cols, rows) =
                    parse_pair(&size.to_lowercase(), 'x', "size", "COLSxROWS, e.g. 120x40")?;
                p.insert("cols".into(), cols.into());
                p.insert("rows".into(), rows.into());
            }
            p.insert("detect_child_exit".into(), a.detect_child_exit.into());
            if let Some(record) = &a.record {
                p.insert(
                    "record".into(),
                    absolute(record).to_string_lossy().into_owned().into(),
                );
            }
            ("spawn", Value::Object(p))
        }
        Verb::List => ("list", json!({})),
        Verb::Alive { sid } => ("alive", json!({ "sid": sid })),
        Verb::Close { sid } => ("close", json!({ "sid": sid })),
        Verb::Resize { sid, size } => {
            let (cols, rows) =
                parse_pair(&size.to_lowercase(), 'x', "size", "COLSxROWS, e.g. 120x40")?;
            ("resize", json!({ "sid": sid, "cols": cols, "rows": rows }))
        }
        Verb::Keys {
            sid,
            keys,
            settle_ms,
        } => (
            "send_keys",
            json!({ "sid": sid, "keys": keys, "settle_ms": settle_ms }),
        ),
        Verb::Line {
            sid,
            text,
            settle_ms,
        } => (
            "send_line",
            json!({ "sid": sid, "text": text.join(" "), "settle_ms": settle_ms }),
        ),
        Verb::Type {
            sid,
            text,
            settle_ms,
        } => (
            "type",
            json!({ "sid": sid, "text": text.join(" "), "settle_ms": settle_ms }),
        ),
        Verb::Mouse(a) => {
            let mut p = Map::new();
            p.insert("sid".into(), a.sid.clone().into());
            p.insert("action".into(), a.action.clone().into());
            if let Some(at) = &a.at {
                let (col, row) = parse_pair(at, ',', "at", "COL,ROW, e.g. 10,2")?;
                p.insert("col".into(), col.into());
                p.insert("row".into(), row.into());
            }
            if let Some(to) = &a.to {
                let (col, row) = parse_pair(to, ',', "to", "COL,ROW, e.g. 10,2")?;
                p.insert("to".into(), json!([col, row]));
            }
            for (key, value) in [
                ("text", a.text.clone().map(Value::from)),
                ("button", a.button.clone().map(Value::from)),
            ] {
                if let Some(value) = value {
                    p.insert(key.into(), value);
                }
            }
            if let Some(nth) = a.nth {
                p.insert("nth".into(), nth.into());
            }
            if let Some(n) = a.scroll_y {
                p.insert("scroll_y".into(), n.into());
            }
            if let Some(n) = a.scroll_x {
                p.insert("scroll_x".into(), n.into());
            }
            p.insert("modifiers".into(), json!(a.modifiers));
            if let Some(ms) = a.settle_ms {
                p.insert("settle_ms".into(), ms.into());
            }
            ("mouse", Value::Object(p))
        }
        Verb::Snapshot(a) => {
            let mut p = json!({ "sid": a.sid, "as_json": a.cells });
            if let Some(n) = a.scrollback {
                p["scrollback"] = n.into();
            }
            ("snapshot", p)
        }
        Verb::Screenshot(a) => {
            let format = match a
                .output
                .as_ref()
                .and_then(|o| o.extension())
                .and_then(|e| e.to_str())
            {
                Some(ext) if ext.eq_ignore_ascii_case("svg") => "svg",
                _ => "png",
            };
            let mut p = json!({ "sid": a.sid, "format": format, "frame": a.frame });
            if let Some(scale) = a.scale {
                p["font_px"] = json!(scale);
            }
            if let Some(theme) = &a.theme {
                p["theme"] = theme.clone().into();
            }
            ("screenshot", p)
        }
        Verb::Wait(a) => plan_wait(a)?,
        Verb::Textual(a) => ("textual_run", plan_textual(a)?),
        Verb::Desktop {
            action: DesktopVerb::Start(a),
        } => ("desktop_start", plan_desktop_start(a)?),
        Verb::Computer(a) => ("computer", plan_computer(a)?),
        Verb::Call { op, params } => {
            let params = match params {
                Some(text) => serde_json::from_str(text)
                    .map_err(|e| OpError::invalid("params", format!("not valid JSON: {e}")))?,
                None => json!({}),
            };
            return Ok(Plan {
                op: op.clone(),
                params,
            });
        }
        Verb::Daemon { .. } | Verb::Mcp { .. } => {
            return Err(OpError::new("internal", "daemon verbs are not operations"))
        }
    };
    Ok(Plan {
        op: op.to_owned(),
        params,
    })
}

fn plan_textual(a: &TextualArgs) -> Result<Value, OpError> {
    let mut p = Map::new();
    if let Some(app) = &a.app {
        p.insert(
            "app".into(),
            absolute(app).to_string_lossy().into_owned().into(),
        );
    }
    if let Some(actions) = &a.actions {
        let actions: Value = serde_json::from_str(actions)
            .map_err(|e| OpError::invalid("actions", format!("not valid JSON: {e}")))?;
        p.insert("actions".into(), actions);
    }
    if let Some(size) = &a.size {
        let (w, h) = parse_pair(
            &size.to_lowercase(),
            'x',
            "size",
            "WIDTHxHEIGHT, e.g. 100x30",
        )?;
        p.insert("size".into(), json!([w, h]));
    }
    if let Some(session) = &a.session {
        p.insert("session".into(), session.clone().into());
    }
    if let Some(python) = &a.python {
        // A path (`.venv/bin/python`) is ours to resolve; a bare name (`python3`) is looked up in PATH.
        let python = if python.contains('/') {
            absolute(Path::new(python)).to_string_lossy().into_owned()
        } else {
            python.clone()
        };
        p.insert("python".into(), python.into());
    }
    if let Some(ms) = a.timeout {
        p.insert("timeout".into(), ms.into());
    }
    if !a.query.is_empty() {
        p.insert("query".into(), json!(a.query));
    }
    for (key, on) in [
        ("tree", a.tree),
        ("screenshot", a.screenshot),
        ("close", a.close),
    ] {
        if on {
            p.insert(key.into(), true.into());
        }
    }
    Ok(Value::Object(p))
}

fn plan_desktop_start(a: &DesktopStartArgs) -> Result<Value, OpError> {
    let mut p = Map::new();
    if let Some(sid) = &a.sid {
        p.insert("sid".into(), sid.clone().into());
    }
    if let Some(size) = &a.size {
        let (w, h) = parse_pair(
            &size.to_lowercase(),
            'x',
            "size",
            "WIDTHxHEIGHT, e.g. 1280x800",
        )?;
        p.insert("size".into(), json!([w, h]));
    }
    if let Some(display) = &a.display {
        p.insert("display".into(), display.clone().into());
    }
    if let Some(wm) = &a.wm {
        p.insert("window_manager".into(), wm.clone().into());
    }
    if !a.program.is_empty() {
        p.insert("argv".into(), json!(a.program));
        insert_cwd(&mut p, a.cwd.as_deref());
    }
    Ok(Value::Object(p))
}

/// `computer SID NAME ARGS...` (or JSON) as `computer` parameters.
fn plan_computer(a: &ComputerArgs) -> Result<Value, OpError> {
    let mut p = Map::new();
    p.insert("sid".into(), a.sid.clone().into());
    if let Some(ms) = a.step_timeout_ms {
        p.insert("step_timeout_ms".into(), ms.into());
    }
    let first = a.action[0].trim_start();
    if first.starts_with('{') || first.starts_with('[') {
        let value: Value = serde_json::from_str(&a.action.join(" "))
            .map_err(|e| OpError::invalid("action", format!("not valid JSON: {e}")))?;
        let key = if value.is_array() {
            "actions"
        } else {
            "action"
        };
        p.insert(key.into(), value);
        return Ok(Value::Object(p));
    }
    let name = a.action[0].as_str();
    let args = &a.action[1..];
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
            action.insert("x".into(), json!(number(0, "X Y SCROLL_X SCROLL_Y")?));
            action.insert("y".into(), json!(number(1, "X Y SCROLL_X SCROLL_Y")?));
            action.insert(
                "scroll_x".into(),
                json!(number(2, "X Y SCROLL_X SCROLL_Y")?),
            );
            action.insert(
                "scroll_y".into(),
                json!(number(3, "X Y SCROLL_X SCROLL_Y")?),
            );
        }
        "type" => {
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
        "key" => {
            action.insert("text".into(), args.join(" ").into());
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
        "wait" if !args.is_empty() => {
            action.insert("ms".into(), json!(number(0, "MS")? as u64));
        }
        _ => {}
    }
    p.insert("action".into(), Value::Object(action));
    Ok(Value::Object(p))
}

fn plan_wait(a: &WaitArgs) -> Result<(&'static str, Value), OpError> {
    let mut p = json!({ "sid": a.sid });
    let timeout_key = if a.ready { "max_wait_ms" } else { "timeout_ms" };
    if let Some(ms) = a.timeout_ms {
        p[timeout_key] = ms.into();
    }
    let op = if let Some(re) = &a.regex {
        p["pattern"] = re.clone().into();
        p["scrollback"] = a.scrollback.into();
        "wait_for"
    } else if let Some(any) = &a.any {
        p["patterns"] = json!(any);
        p["scrollback"] = a.scrollback.into();
        "expect"
    } else if let Some(hash) = &a.change {
        if !hash.is_empty() {
            p["hash"] = hash.clone().into();
        }
        "wait_change"
    } else if let Some(hash) = &a.visual_change {
        if !hash.is_empty() {
            p["visual_hash"] = hash.clone().into();
        }
        "wait_visual_change"
    } else if a.ready {
        if let Some(marker) = &a.marker {
            p["marker"] = marker.clone().into();
        }
        if let Some(ms) = a.stable_ms {
            p["stable_ms"] = ms.into();
        }
        "wait_ready"
    } else if a.exit {
        "wait_exit"
    } else {
        return Err(OpError::invalid("wait", "say what to wait for: --regex RE, --any RE..., --change, --visual-change, --ready or --exit"));
    };
    Ok((op, p))
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
    fn wait_any_expects_the_patterns() {
        let p = plan_of(&["wait", "s", "--any", "ok", "fail"]).expect("a plan");
        assert_eq!(p.op, "expect");
        assert_eq!(
            p.params,
            json!({"sid": "s", "patterns": ["ok", "fail"], "scrollback": false})
        );
    }

    #[test]
    fn wait_ready_takes_its_timeout_as_max_wait() {
        let p = plan_of(&["wait", "s", "--ready", "--timeout-ms", "500"]).expect("a plan");
        assert_eq!(p.op, "wait_ready");
        assert_eq!(p.params, json!({"sid": "s", "max_wait_ms": 500}));
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
        assert!(p.params.get("argv").is_none());
        assert!(p.params["cwd"].is_string());
    }

    #[test]
    fn resize_reads_cols_by_rows_in_either_case() {
        let p = plan_of(&["resize", "s", "120X40"]).expect("a plan");
        assert_eq!(p.op, "resize");
        assert_eq!(p.params, json!({"sid": "s", "cols": 120, "rows": 40}));
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
