//! Starting desktop sessions (`desktop_start`): a private Xvfb with an optional window manager and
//! program, or an existing display. Listing and closing them go through the ordinary `list`, `alive`
//! and `close`; acting on them through `computer`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

use screenpilot_desktop::{
    Desktop, DesktopError, DesktopSpec, OtherSessions, Target, WindowManager, DEFAULT_SIZE,
    DEFAULT_STEP_TIMEOUT,
};
use screenpilot_session::spec::{check_cwd, command_argv, Command};
use screenpilot_session::SessionId;

use super::{schema_of, Context, OpError, OpResult, OperationDef};

/// Parameters of `desktop_start`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DesktopStartParams {
    /// Session id (default "desktop-N").
    pub sid: Option<String>,
    /// [width, height] of the new Xvfb (default [1280, 800]).
    pub size: Option<[u32; 2]>,
    /// Program to run on the display: a command line, split like a shell (not run by one).
    pub cmd: Option<String>,
    /// The program and arguments, exactly (instead of cmd).
    pub argv: Option<Vec<String>>,
    /// Run cmd with `sh -c`.
    #[serde(default)]
    pub shell: bool,
    /// Attach to this existing display (":0") instead of starting Xvfb.
    pub display: Option<String>,
    /// "auto" (default: openbox, fluxbox, icewm, xfwm4, matchbox or twm if installed), "none", or a program.
    pub window_manager: Option<String>,
    /// The program's working directory (absolute).
    pub cwd: Option<String>,
}

pub const DESKTOP_START: OperationDef = OperationDef {
    name: "desktop_start",
    description: "Start an X11 desktop session: a private Xvfb (default 1280x800; only you can connect), optionally running cmd, \
or attach to an existing display (\"display\": \":0\"; close never stops it). See and act on it with `computer`; `list` shows it (kind desktop), \
`close` stops what it started. Counts toward the session limit and idle expiry. \
Returns {ok, sid, kind, display, width, height, attached, pid, program_pid, window_manager, xauthority}; start more programs on it with env DISPLAY and XAUTHORITY. \
Example: {\"sid\": \"desk\", \"size\": [1280, 800], \"cmd\": \"xterm\"}.",
    schema: schema_of::<DesktopStartParams>,
};

/// A desktop error as the operation layer reports it.
pub(super) fn desktop_error(e: DesktopError) -> OpError {
    OpError {
        code: e.code().to_owned(),
        message: e.to_string(),
        field: e.field().map(str::to_owned),
    }
}

fn window_manager(name: Option<&str>) -> Result<WindowManager, OpError> {
    Ok(match name.map(str::trim) {
        None | Some("auto") | Some("") => WindowManager::Auto,
        Some("none") => WindowManager::None,
        Some(program)
            if program
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)) =>
        {
            WindowManager::Program(program.to_owned())
        }
        Some(other) => {
            return Err(OpError::invalid(
                "window_manager",
                format!("{other:?} is not auto, none or a program name"),
            ))
        }
    })
}

pub async fn desktop_start(ctx: &Context, p: DesktopStartParams) -> OpResult {
    let program = match (&p.cmd, &p.argv, p.shell) {
        (Some(_), Some(_), _) => return Err(OpError::invalid("cmd", "give cmd or argv, not both")),
        (None, Some(_), true) => {
            return Err(OpError::invalid("shell", "shell=true needs cmd, not argv"))
        }
        (None, None, true) => return Err(OpError::invalid("shell", "shell=true needs cmd")),
        (Some(line), None, true) => Some(command_argv(Command::Shell(line))?),
        (Some(line), None, false) => Some(command_argv(Command::Line(line))?),
        (None, Some(argv), false) => Some(command_argv(Command::Argv(argv))?),
        (None, None, false) => None,
    };
    let target = match (&p.display, p.size) {
        (Some(_), Some(_)) => {
            return Err(OpError::invalid(
                "size",
                "size is for a new Xvfb; an attached display keeps its own size",
            ))
        }
        (Some(display), None) => {
            let valid = display.starts_with(':') || display.contains(':');
            if !valid || display.len() > 100 {
                return Err(OpError::invalid(
                    "display",
                    format!("{display:?} is not an X display name like \":0\""),
                ));
            }
            Target::Attach {
                display: display.clone(),
            }
        }
        (None, size) => {
            let [width, height] = size.unwrap_or([DEFAULT_SIZE.0, DEFAULT_SIZE.1]);
            screenpilot_desktop::check_size(width, height, "size").map_err(desktop_error)?;
            Target::Launch { width, height }
        }
    };
    let window_manager = window_manager(p.window_manager.as_deref())?;
    let cwd = match &p.cwd {
        Some(cwd) => {
            let path = PathBuf::from(cwd);
            check_cwd(&path)?;
            Some(path)
        }
        None => std::env::var_os("HOME").map(PathBuf::from),
    };
    if let Some(sid) = &p.sid {
        SessionId::parse(sid)?;
    }

    let limits = ctx.registry.limits();
    // Desktops share the sid space and the running-session limit with terminal sessions.
    let reservation = {
        let terminals = ctx.registry.clone();
        let taken = move |sid: &str| terminals.get(sid).is_ok();
        let others = OtherSessions {
            running: ctx
                .registry
                .list()
                .into_iter()
                .filter(|s| s.alive)
                .map(|s| s.sid)
                .collect(),
            taken: &taken,
            max_sessions: limits.max_sessions,
        };
        ctx.desktops
            .reserve(p.sid.as_deref(), &others)
            .map_err(desktop_error)?
    };
    ctx.desktops.start_expiry(limits.idle_timeout);
    let spec = DesktopSpec {
        label: reservation.sid().to_owned(),
        target,
        program,
        cwd,
        window_manager,
        step_timeout: DEFAULT_STEP_TIMEOUT,
    };
    let desktop = Desktop::start(reservation.sid().to_owned(), spec)
        .await
        .map_err(desktop_error)?;
    let desktop = Arc::new(desktop);
    ctx.desktops.insert(reservation, desktop.clone());
    let info = desktop.info();
    Ok(json!({
        "ok": true,
        "sid": info.sid,
        "kind": info.kind,
        "display": info.display,
        "width": info.width,
        "height": info.height,
        "attached": info.attached,
        "pid": info.pid,
        "program_pid": info.program_pid,
        "window_manager": info.window_manager,
        "xauthority": info.xauthority,
        "log": info.log,
    }))
}

/// `list` entries for desktops.
pub(super) fn list(ctx: &Context) -> Vec<Value> {
    ctx.desktops
        .list()
        .into_iter()
        .filter_map(|info| serde_json::to_value(info).ok())
        .collect()
}

/// `alive` for a desktop; `None` when `sid` is not one.
pub(super) fn alive(ctx: &Context, sid: &str) -> Option<Value> {
    let info = ctx.desktops.get(sid)?.info();
    Some(json!({
        "ok": true,
        "sid": sid,
        "kind": "desktop",
        "alive": info.alive,
        "program_alive": info.program_alive,
        "exit_code": info.exit_code,
        "signal": info.signal,
    }))
}

/// `close` for a desktop; `None` when `sid` is not one.
pub(super) async fn close(ctx: &Context, sid: &str) -> Option<Value> {
    let (_, status) = ctx.desktops.close(sid).await?;
    Some(json!({
        "ok": true,
        "sid": sid,
        "kind": "desktop",
        "exit_code": status.and_then(|s| s.exit_code),
        "signal": status.and_then(|s| s.signal),
    }))
}

/// How long `computer` waits for one native step unless told otherwise.
pub(super) const STEP_TIMEOUT: Duration = DEFAULT_STEP_TIMEOUT;

/// Desktops as the terminal registry sees them: they share its sid space and session limit.
pub(crate) struct DesktopPeers(pub(crate) Arc<screenpilot_desktop::DesktopRegistry>);

impl screenpilot_session::PeerSessions for DesktopPeers {
    fn running(&self) -> Vec<String> {
        self.0.running()
    }

    fn has(&self, sid: &str) -> bool {
        self.0.contains(sid)
    }
}
