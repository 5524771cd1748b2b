//! Starting, listing, resizing and closing sessions.

use std::collections::BTreeMap;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use screenpilot_screen::Size;
use screenpilot_session::spec::{check_cwd, check_env, command_argv, Command};
use screenpilot_session::{SessionError, SessionId, SpawnSpec};

use super::{base, schema_of, Context, OpError, OpResult, OperationDef};

/// Parameters of `spawn`. Give `cmd` or `argv`, not both.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnParams {
    /// Command line, split into words like a shell would (quotes respected) but not run by one.
    /// Example: "vim notes.txt".
    pub cmd: Option<String>,
    /// Program and arguments, used exactly. Example: ["python3", "-q"].
    pub argv: Option<Vec<String>>,
    /// Run `cmd` with `sh -c`, for pipes, globs and `&&`.
    #[serde(default)]
    pub shell: bool,
    /// Session id, 1-64 chars [A-Za-z0-9][A-Za-z0-9_.-]*; generated (e.g. "vim-1") when omitted.
    pub sid: Option<String>,
    /// Working directory (absolute; must exist). Default: the caller's directory.
    pub cwd: Option<String>,
    /// Extra environment variables for the program only; keys must be identifiers.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Terminal width in cells (default 80, max 1000; cols*rows <= 100000).
    pub cols: Option<u16>,
    /// Terminal height in cells (default 24, max 500).
    pub rows: Option<u16>,
    /// Waits end at once (exited: true) when the program exits, instead of running to their timeout.
    #[serde(default)]
    pub detect_child_exit: bool,
    /// Record the output as an asciicast v2 file at this path.
    pub record: Option<String>,
}

/// Parameters naming just a session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SidParams {
    /// The session id returned by spawn.
    pub sid: String,
}

/// Parameters of `resize`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResizeParams {
    pub sid: String,
    pub cols: u16,
    pub rows: u16,
}

/// Parameters of `list` (none).
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {}

pub const SPAWN: OperationDef = OperationDef {
    name: "spawn",
    description: "Start a program in a new terminal session (a real pty, TERM=xterm-256color) that stays alive across calls. \
Give `cmd` (a command line, split like a shell but not run by one; set shell=true for pipes/globs) or `argv`. \
Returns {ok, sid, pid, cols, rows}: use the sid in every other tool. \
Limits: 8 running sessions by default (close ones you are done with); idle sessions close after 15 min; size up to 1000x500 and 100000 cells. \
Example: {\"cmd\": \"python3 -q\", \"sid\": \"py\", \"cols\": 100, \"rows\": 30}. Then wait_for the prompt before typing.",
    schema: schema_of::<SpawnParams>,
};

pub const LIST: OperationDef = OperationDef {
    name: "list",
    description: "List sessions. Returns {ok, sessions: [{sid, kind, pid, cmd, cwd, cols, rows, started, alive, exit_code, signal, title, idle_secs}]}. Desktop sessions (kind desktop) show display, width, height, attached, program_pid instead of cwd, cols, rows. Exited sessions stay listed until closed. Example: {}.",
    schema: schema_of::<ListParams>,
};

pub const ALIVE: OperationDef = OperationDef {
    name: "alive",
    description: "Is the session's program still running? Returns {ok, sid, alive, exit_code, signal}; exit_code (or signal) is set once it has ended. Example: {\"sid\": \"py\"}.",
    schema: schema_of::<SidParams>,
};

pub const CLOSE: OperationDef = OperationDef {
    name: "close",
    description: "End a session: its whole process group gets HUP, then TERM, then KILL (each after a short grace), and is reaped. Returns {ok, sid, exit_code, signal}. Always close sessions you are done with. Example: {\"sid\": \"py\"}.",
    schema: schema_of::<SidParams>,
};

pub const RESIZE: OperationDef = OperationDef {
    name: "resize",
    description: "Resize the terminal; the program gets SIGWINCH and redraws. Returns {ok, sid, cols, rows}. Example: {\"sid\": \"vim\", \"cols\": 120, \"rows\": 40}.",
    schema: schema_of::<ResizeParams>,
};

pub async fn spawn(ctx: &Context, p: SpawnParams) -> OpResult {
    let command = match (&p.cmd, &p.argv, p.shell) {
        (Some(_), Some(_), _) => return Err(OpError::invalid("cmd", "give cmd or argv, not both")),
        (None, None, _) => return Err(OpError::invalid(
            "cmd",
            "no program given; e.g. {\"cmd\": \"bash\"} or {\"argv\": [\"vim\", \"notes.txt\"]}",
        )),
        (None, Some(_), true) => {
            return Err(OpError::invalid("shell", "shell=true needs cmd, not argv"))
        }
        (Some(line), None, true) => Command::Shell(line),
        (Some(line), None, false) => Command::Line(line),
        (None, Some(argv), false) => Command::Argv(argv),
    };
    let argv = command_argv(command)?;
    let sid = p.sid.as_deref().map(SessionId::parse).transpose()?;
    let cwd = match &p.cwd {
        Some(cwd) => PathBuf::from(cwd),
        None => std::env::var_os("HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/")),
    };
    check_cwd(&cwd)?;
    let env: Vec<(String, String)> = p.env.into_iter().collect();
    check_env(&env)?;
    let size = Size::new(p.cols.unwrap_or(80), p.rows.unwrap_or(24));
    ctx.registry.limits().check_size(size, "cols/rows")?;
    let spec = SpawnSpec {
        sid,
        argv,
        cwd,
        env,
        size,
        detect_child_exit: p.detect_child_exit,
        record: p.record.map(PathBuf::from),
    };
    let session = ctx.registry.spawn(spec)?;
    let mut out = base(session.sid.as_str());
    out.insert("pid".into(), session.pid.into());
    out.insert("cols".into(), size.cols.into());
    out.insert("rows".into(), size.rows.into());
    Ok(Value::Object(out))
}

pub fn list(ctx: &Context, _: ListParams) -> OpResult {
    let mut sessions: Vec<Value> = ctx
        .registry
        .list()
        .into_iter()
        .filter_map(|info| serde_json::to_value(info).ok())
        .collect();
    sessions.extend(super::desktop::list(ctx));
    Ok(serde_json::json!({ "ok": true, "sessions": sessions }))
}

pub fn alive(ctx: &Context, p: SidParams) -> OpResult {
    let session = match ctx.registry.get(&p.sid) {
        Err(SessionError::UnknownSession(sid)) => {
            return super::desktop::alive(ctx, &p.sid)
                .ok_or_else(|| SessionError::UnknownSession(sid).into())
        }
        other => other?,
    };
    let exit = session.exit_info();
    let mut out = base(&p.sid);
    out.insert("alive".into(), exit.is_none().into());
    out.insert("exit_code".into(), exit.and_then(|e| e.exit_code).into());
    out.insert("signal".into(), exit.and_then(|e| e.signal).into());
    Ok(Value::Object(out))
}

pub async fn close(ctx: &Context, p: SidParams) -> OpResult {
    let info = match ctx.registry.close(&p.sid).await {
        Err(SessionError::UnknownSession(sid)) => {
            return match super::desktop::close(ctx, &p.sid).await {
                Some(done) => Ok(done),
                None => Err(SessionError::UnknownSession(sid).into()),
            }
        }
        other => other?,
    };
    let mut out = base(&p.sid);
    out.insert("exit_code".into(), info.exit_code.into());
    out.insert("signal".into(), info.signal.into());
    Ok(Value::Object(out))
}

pub async fn resize(ctx: &Context, p: ResizeParams) -> OpResult {
    let session = ctx.registry.get(&p.sid)?;
    let size = Size::new(p.cols, p.rows);
    session.resize(size).await?;
    let mut out = base(&p.sid);
    out.insert("cols".into(), size.cols.into());
    out.insert("rows".into(), size.rows.into());
    Ok(Value::Object(out))
}
