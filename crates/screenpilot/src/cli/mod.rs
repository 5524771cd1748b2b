//! The command line: one verb per operation. Each verb turns its arguments into the operation's JSON
//! parameters, asks the daemon, and presents the answer for a person, or as one JSON object with --json.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{json, Map, Value};

use crate::ops::OpError;

#[derive(Debug, Parser)]
#[command(
    name = "screenpilot",
    version,
    about = "Drive terminal programs and see what a person would see: live sessions in a per-user daemon, event-driven waits, screenshots.",
    after_help = "Example:\n  screenpilot spawn --sid sh -- bash\n  screenpilot line sh 'ls /'\n  screenpilot wait sh --regex 'usr'\n  screenpilot snapshot sh\n  screenpilot screenshot sh -o sh.png\n  screenpilot close sh"
)]
pub struct Cli {
    /// Print exactly one JSON object: the same fields the MCP tool returns.
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Start a program in a new session: spawn [--sid ID] [--size 120x40] -- PROGRAM ARGS...
    Spawn(SpawnArgs),
    /// List sessions.
    List,
    /// Is the program still running? Exit status 0 if so, 1 once it has ended.
    Alive { sid: String },
    /// End a session and every process in it.
    Close { sid: String },
    /// Resize a session's terminal: resize SID 120x40
    Resize { sid: String, size: String },
    /// Press keys: keys SID Down Down Enter | C-c | ctrl+s | M-x | text
    Keys {
        sid: String,
        #[arg(required = true, allow_hyphen_values = true, num_args = 1..)]
        keys: Vec<String>,
    },
    /// Type text then press Enter (words are joined with spaces).
    Line {
        sid: String,
        #[arg(required = true, allow_hyphen_values = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Type text without Enter (words are joined with spaces).
    Type {
        sid: String,
        #[arg(required = true, allow_hyphen_values = true, num_args = 1..)]
        text: Vec<String>,
    },
    /// Mouse event: mouse SID click --at 10,2 | --text OK; drag --at 1,1 --to 9,1; scroll --scroll-y 3
    Mouse(MouseArgs),
    /// Print the screen (or its full state with --json).
    Snapshot(SnapshotArgs),
    /// Save a picture of the screen: screenshot SID -o screen.png|screen.svg
    Screenshot(ScreenshotArgs),
    /// Wait for the screen: exit status 0 when the condition held, 1 on timeout (or exit first).
    Wait(WaitArgs),
    /// Run a Textual app and drive it: textual APP [--actions JSON] [--query SEL]... [--screenshot];
    /// with --session NAME it stays open (later calls give --session without APP; --close stops it).
    Textual(TextualArgs),
    /// X11 desktop sessions: desktop start [--sid ID] [--size 1280x800] [--display :N] [-- PROGRAM ARGS]
    Desktop {
        #[command(subcommand)]
        action: DesktopVerb,
    },
    /// Computer-use actions on a desktop or terminal session, with a fresh screenshot:
    /// computer SID click 100 200 | type 'hi' | keypress CTRL c | scroll X Y 0 360 | drag 1,1 50,50 | '{"type": ...}' | '[...]'
    Computer(ComputerArgs),
    /// Run any operation with JSON parameters: call spawn '{"cmd": "bash"}'
    Call { op: String, params: Option<String> },
    /// Run the daemon in the foreground (no action), or: start, stop, status.
    Daemon { action: Option<DaemonAction> },
    /// Serve MCP on stdio (for agents), or on loopback HTTP with --http 127.0.0.1:PORT.
    Mcp {
        /// Serve streamable HTTP on this loopback IP:PORT instead of stdio (port 0: any free port).
        #[arg(long, value_name = "IP:PORT")]
        http: Option<String>,
        /// Bearer token for --http, read from this file; default: a new one, printed to stderr and
        /// written to $SCREENPILOT_DIR/mcp-http.token.
        #[arg(long, value_name = "FILE", requires = "http")]
        token_file: Option<PathBuf>,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DaemonAction {
    Run,
    Start,
    Stop,
    Status,
}

#[derive(Debug, Args)]
pub struct SpawnArgs {
    #[arg(long)]
    pub sid: Option<String>,
    /// Working directory (default: here).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Environment for the program, K=V; repeatable.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Terminal size, COLSxROWS (default 80x24).
    #[arg(long, value_name = "COLSxROWS")]
    pub size: Option<String>,
    /// Waits end at once when the program exits.
    #[arg(long)]
    pub detect_child_exit: bool,
    /// Run the words as one command line with sh -c.
    #[arg(long)]
    pub shell: bool,
    /// Record the output as an asciicast v2 file.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub program: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MouseArgs {
    pub sid: String,
    /// click, double_click, move, down, up, drag, scroll
    pub action: String,
    /// Target cell COL,ROW (0-based).
    #[arg(long, value_name = "COL,ROW")]
    pub at: Option<String>,
    /// Target the centre of this visible text.
    #[arg(long)]
    pub text: Option<String>,
    /// Which occurrence of --text (0-based).
    #[arg(long)]
    pub nth: Option<usize>,
    /// left (default), middle, right, back, forward
    #[arg(long)]
    pub button: Option<String>,
    /// drag: release at COL,ROW.
    #[arg(long, value_name = "COL,ROW")]
    pub to: Option<String>,
    #[arg(long, allow_hyphen_values = true)]
    pub scroll_y: Option<i32>,
    #[arg(long, allow_hyphen_values = true)]
    pub scroll_x: Option<i32>,
    /// shift, alt, ctrl; repeatable.
    #[arg(long = "mod")]
    pub modifiers: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    pub sid: String,
    /// Include the cell model (with --json).
    #[arg(long)]
    pub cells: bool,
    /// Include up to N lines of scrollback.
    #[arg(long, value_name = "N")]
    pub scrollback: Option<usize>,
}

#[derive(Debug, Args)]
pub struct ScreenshotArgs {
    pub sid: String,
    /// Output file; .svg for SVG, anything else PNG. Default SID.png (with --json and no -o: base64 in the JSON).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Font size in pixels (default 16).
    #[arg(long)]
    pub scale: Option<f32>,
    /// dark (default) or light.
    #[arg(long)]
    pub theme: Option<String>,
    /// Draw a window frame with the title.
    #[arg(long)]
    pub frame: bool,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    pub sid: String,
    /// Wait until this regex matches (multi-line: ^ and $ work per line).
    #[arg(long, group = "what", allow_hyphen_values = true)]
    pub regex: Option<String>,
    /// Wait until any of these regexes matches; prints which (index).
    #[arg(long, group = "what", num_args = 1.., value_name = "RE")]
    pub any: Option<Vec<String>>,
    /// Wait until the text changes from HASH (default: now).
    #[arg(long, group = "what", num_args = 0..=1, value_name = "HASH", default_missing_value = "")]
    pub change: Option<String>,
    /// Wait until anything visible changes from HASH (default: now).
    #[arg(long, group = "what", num_args = 0..=1, value_name = "HASH", default_missing_value = "")]
    pub visual_change: Option<String>,
    /// Wait for --marker or a quiet screen (--stable-ms).
    #[arg(long, group = "what")]
    pub ready: bool,
    /// Wait until the program exits.
    #[arg(long, group = "what")]
    pub exit: bool,
    #[arg(long, allow_hyphen_values = true)]
    pub marker: Option<String>,
    #[arg(long)]
    pub stable_ms: Option<u64>,
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Search the scrollback too (--regex, --any).
    #[arg(long)]
    pub scrollback: bool,
}

#[derive(Debug, Args)]
pub struct TextualArgs {
    /// The Python file defining the app; omit it with --session to act on an open session.
    pub app: Option<PathBuf>,
    /// Keep the app running as this session: opened with APP, acted on without it.
    #[arg(long)]
    pub session: Option<String>,
    /// Actions as a JSON list, e.g. '[{"press": "tab"}, {"click": "#inc"}, {"pause": 0.5}]'.
    #[arg(long, value_name = "JSON")]
    pub actions: Option<String>,
    /// Print the widget tree of the active screen.
    #[arg(long)]
    pub tree: bool,
    /// Print the state of the widgets matching this CSS selector; repeatable.
    #[arg(long = "query", value_name = "SELECTOR")]
    pub query: Vec<String>,
    /// Write an SVG and a PNG of the final screen beside the app file.
    #[arg(long)]
    pub screenshot: bool,
    /// Initial terminal size, WIDTHxHEIGHT (default 80x25).
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
    /// The Python interpreter (default python3).
    #[arg(long)]
    pub python: Option<String>,
    /// Limit for the whole run in milliseconds (default 120000).
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
    /// With --session: stop the app and close the session (after any actions).
    #[arg(long)]
    pub close: bool,
}

#[derive(Debug, Subcommand)]
pub enum DesktopVerb {
    /// Start a private Xvfb (or attach to a display) and optionally a program on it.
    Start(DesktopStartArgs),
}

#[derive(Debug, Args)]
pub struct DesktopStartArgs {
    #[arg(long)]
    pub sid: Option<String>,
    /// Screen size, WIDTHxHEIGHT (default 1280x800).
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
    /// Attach to this existing display (e.g. :0) instead of starting Xvfb; close leaves it running.
    #[arg(long, value_name = ":N")]
    pub display: Option<String>,
    /// Window manager: auto (default), none, or a program name.
    #[arg(long, value_name = "WM")]
    pub wm: Option<String>,
    /// Working directory of the program (default: here).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// The program to run on the display, and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub program: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ComputerArgs {
    pub sid: String,
    /// An action: screenshot | click X Y [BUTTON] | double_click X Y | triple_click X Y | move X Y |
    /// scroll X Y SCROLL_X SCROLL_Y | type TEXT... | keypress KEY... | drag X,Y X,Y... | wait [MS] |
    /// cursor_position; or one JSON action object, or a JSON list of them.
    #[arg(required = true, allow_negative_numbers = true, num_args = 1..)]
    pub action: Vec<String>,
    /// Save the screenshot here (default SID.png; with --json and no -o it stays base64 in the JSON).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Limit for each step in milliseconds (default 30000).
    #[arg(long, value_name = "MS")]
    pub step_timeout_ms: Option<u64>,
}

/// What a verb asks the daemon.
pub struct Plan {
    pub op: String,
    pub params: Value,
}

fn parse_pair(text: &str, sep: char, field: &str, example: &str) -> Result<(u16, u16), OpError> {
    let parsed = text
        .split_once(sep)
        .and_then(|(a, b)| Some((a.trim().parse().ok()?, b.trim().parse().ok()?)));
    parsed.ok_or_else(|| OpError::invalid(field, format!("{text:?} is not of the form {example}")))
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
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
            let cwd = a
                .cwd
                .as_deref()
                .map(absolute)
                .or_else(|| std::env::current_dir().ok());
            if let Some(cwd) = cwd {
                p.insert("cwd".into(), cwd.to_string_lossy().into_owned().into());
            }
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
        Verb::Keys { sid, keys } => ("send_keys", json!({ "sid": sid, "keys": keys })),
        Verb::Line { sid, text } => ("send_line", json!({ "sid": sid, "text": text.join(" ") })),
        Verb::Type { sid, text } => ("type", json!({ "sid": sid, "text": text.join(" ") })),
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
    for (key, value) in [("session", a.session.clone()), ("python", a.python.clone())] {
        if let Some(value) = value {
            p.insert(key.into(), value.into());
        }
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

/// Print a progress update of a running verb: a JSON line with --json, else the screen under a header.
pub fn progress(verb: &Verb, update: &Value, as_json: bool) {
    if !matches!(verb, Verb::Textual(_)) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(out, "{}", json!({ "progress": update }));
        return;
    }
    let header = update["message"]
        .as_str()
        .and_then(|m| m.lines().next())
        .unwrap_or("");
    let _ = writeln!(out, "── {header}");
    let _ = writeln!(out, "{}", update["text"].as_str().unwrap_or(""));
}

/// The end of a `textual` run for a person: the screen, then what else came back.
fn print_textual(out: &mut impl Write, result: &Value) -> std::io::Result<()> {
    writeln!(out, "{}", result["text"].as_str().unwrap_or(""))?;
    let details = &result["details"];
    if let Some(svg) = details["screenshot"].as_str() {
        writeln!(
            out,
            "screenshot: {svg} ({})",
            details["png"].as_str().unwrap_or("")
        )?;
    }
    if !details["exit"].is_null() {
        writeln!(
            out,
            "exited: return code {}, value {}",
            details["exit"]["return_code"], details["exit_value"]
        )?;
    } else {
        writeln!(
            out,
            "session {} is running",
            result["sid"].as_str().unwrap_or("")
        )?;
    }
    for warning in details["warnings"].as_array().into_iter().flatten() {
        writeln!(out, "warning: {}", warning.as_str().unwrap_or(""))?;
    }
    for key in ["tree", "query"] {
        if let Some(value) = result.get(key) {
            let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
            writeln!(out, "{key}: {pretty}")?;
        }
    }
    Ok(())
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
        let cwd = a
            .cwd
            .as_deref()
            .map(absolute)
            .or_else(|| std::env::current_dir().ok());
        if let Some(cwd) = cwd {
            p.insert("cwd".into(), cwd.to_string_lossy().into_owned().into());
        }
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

/// Print a result for a person or as JSON; returns the exit status.
pub fn present(verb: &Verb, result: &Value, as_json: bool) -> Result<i32, OpError> {
    let mut result = result.clone();
    if let Verb::Screenshot(a) = verb {
        if a.output.is_some() || !as_json {
            let sid = a.sid.as_str();
            let path = a
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{sid}.png")));
            write_image(&path, &mut result)?;
        }
    }
    if let Verb::Computer(a) = verb {
        if result.get("png").is_some() && (a.output.is_some() || !as_json) {
            let path = a
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}.png", a.sid)));
            write_image(&path, &mut result)?;
        }
    }
    let status = match verb {
        Verb::Wait(_) => i32::from(!wait_satisfied(&result)),
        Verb::Computer(_) => i32::from(result["ok"] != Value::Bool(true)),
        Verb::Alive { .. } => i32::from(result["alive"] != Value::Bool(true)),
        _ => 0,
    };
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(out, "{result}");
        return Ok(status);
    }
    let text = |key: &str| result[key].as_str().unwrap_or("").to_owned();
    let _ = match verb {
        Verb::Spawn(_) => writeln!(out, "{}", text("sid")),
        Verb::List => print_list(&mut out, &result),
        Verb::Alive { .. } => writeln!(out, "{}", describe_exit(&result)),
        Verb::Close { sid } => writeln!(out, "closed {sid} ({})", describe_exit(&result)),
        Verb::Snapshot(_) => {
            let history = text("scrollback");
            if !history.is_empty() {
                let _ = writeln!(out, "{history}");
            }
            writeln!(out, "{}", text("text"))
        }
        Verb::Wait(_) => {
            let _ = writeln!(out, "{}", text("text"));
            let detail = match (result.get("index"), result.get("reason")) {
                (Some(index), _) => format!("index {index}"),
                (_, Some(reason)) => format!("reason {}", reason.as_str().unwrap_or("")),
                _ => String::new(),
            };
            if wait_satisfied(&result) {
                Ok(())
            } else {
                let why = if result["exited"] == Value::Bool(true) {
                    "the program exited first"
                } else {
                    "timed out"
                };
                let mut err = std::io::stderr().lock();
                writeln!(err, "screenpilot: wait {why} {detail}")
            }
        }
        Verb::Screenshot(_) => writeln!(out, "{}", text("path")),
        Verb::Desktop { .. } => writeln!(
            out,
            "{} {} {}x{}",
            text("sid"),
            text("display"),
            result["width"],
            result["height"]
        ),
        Verb::Computer(_) => {
            if let Some(error) = result["error"]["message"].as_str() {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "screenpilot: computer: {error}");
            }
            writeln!(
                out,
                "{} action(s) done; screen {}x{}; {}",
                result["done"],
                result["width"],
                result["height"],
                text("path")
            )
        }
        Verb::Call { .. } => writeln!(out, "{result}"),
        Verb::Textual(_) => print_textual(&mut out, &result),
        _ => Ok(()),
    };
    Ok(status)
}

fn wait_satisfied(result: &Value) -> bool {
    let yes = |key: &str| result[key] == Value::Bool(true);
    match result["reason"].as_str() {
        Some(reason) => matches!(reason, "MARKER" | "STABLE"),
        None if result.get("changed").is_some() => yes("changed"),
        None if result.get("matched").is_some() => yes("matched"),
        None => yes("exited"),
    }
}

fn describe_exit(result: &Value) -> String {
    if result["alive"] == Value::Bool(true) {
        return "running".into();
    }
    match (result["exit_code"].as_i64(), result["signal"].as_i64()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended".into(),
    }
}

fn print_list(out: &mut impl Write, result: &Value) -> std::io::Result<()> {
    let sessions = result["sessions"].as_array().cloned().unwrap_or_default();
    if sessions.is_empty() {
        return writeln!(out, "no sessions");
    }
    writeln!(
        out,
        "{:<20} {:>7} {:<10} {:>9}  COMMAND",
        "SID", "PID", "STATE", "SIZE"
    )?;
    for s in sessions {
        let cmd: Vec<String> = s["cmd"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        let state = if s["alive"] == Value::Bool(true) {
            "running".to_owned()
        } else {
            describe_exit(&s)
        };
        writeln!(
            out,
            "{:<20} {:>7} {:<10} {:>9}  {}",
            s["sid"].as_str().unwrap_or(""),
            s["pid"],
            state.split(' ').take(3).collect::<Vec<_>>().join(" "),
            if s["kind"] == "desktop" {
                format!("{}x{}", s["width"], s["height"])
            } else {
                format!("{}x{}", s["cols"], s["rows"])
            },
            cmd.join(" ")
        )?;
    }
    Ok(())
}

/// Write the image in `result` to `path`, replacing the inline data with the path.
fn write_image(path: &Path, result: &mut Value) -> Result<(), OpError> {
    let bytes = if let Some(svg) = result["svg"].as_str() {
        svg.as_bytes().to_vec()
    } else if let Some(png) = result["png"].as_str() {
        base64::engine::general_purpose::STANDARD
            .decode(png)
            .map_err(|e| {
                OpError::new(
                    "bad_response",
                    format!("the daemon sent a malformed PNG: {e}"),
                )
            })?
    } else {
        return Err(OpError::new("bad_response", "the daemon sent no image"));
    };
    let path = absolute(path);
    std::fs::write(&path, bytes)
        .map_err(|e| OpError::invalid("output", format!("cannot write {}: {e}", path.display())))?;
    if let Value::Object(map) = result {
        map.remove("png");
        map.remove("svg");
        map.insert("path".into(), path.to_string_lossy().into_owned().into());
    }
    Ok(())
}
