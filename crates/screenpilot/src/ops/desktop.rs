//! Starting desktop sessions (`desktop_start`): a private Xvfb with an optional window manager and
//! program, or an existing display. Listing and closing them go through the ordinary `list`, `alive`
//! and `close`; acting on them through `computer`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::{
    Desktop, DesktopInfo, DesktopSpec, OtherSessions, Target, WindowManager, DEFAULT_SIZE,
    DEFAULT_STEP_TIMEOUT,
};
use screenpilot_session::spec::{check_cwd, check_env, CALLER_TERMINAL_VARS};
use screenpilot_session::SessionId;

use super::kit::common::{program_env, Caller, Context, OpError, Progress};
use super::kit::display::model_size;
use super::kit::model_size::ModelSize;
use super::kit::operation::{Operation, Profile, Report};
use super::kit::program::program_argv;
use crate::ops::kit::step_table::{Journaled, StepTable};

/// Parameters of `desktop_start`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DesktopStartParams {
    pub sid: Option<String>,
    /// [1280,800]
    pub size: Option<[u32; 2]>,
    pub cmd: Option<String>,
    /// The program and arguments, exactly (instead of cmd).
    pub argv: Option<Vec<String>>,
    /// Run cmd with `sh -c`.
    #[serde(default)]
    pub shell: bool,
    pub display: Option<String>,
    #[serde(default)]
    pub wayland: bool,
    /// "auto" (default: openbox, fluxbox, icewm, xfwm4, matchbox or twm if installed), "none", or a program.
    pub window_manager: Option<String>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Start the program from an empty environment: DISPLAY, XAUTHORITY and env only.
    #[serde(default)]
    pub clean_env: bool,
    /// The caller's environment, filled in by `prepare` (not a tool parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub caller_env: Option<BTreeMap<String, String>>,
    /// Screenshots of this desktop for models: longest side at most this many pixels (default 1568).
    pub max_long_edge: Option<u32>,
    /// ... and at most this many pixels in all (default 1150000). Coordinates are screenshot pixels.
    pub max_pixels: Option<u64>,
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

/// `desktop_start`: start (or attach to) an X11 desktop.
pub struct DesktopStart;

impl Report for DesktopInfo {
    fn human(&self) -> String {
        format!(
            "{} {} {}x{}",
            self.sid, self.display, self.width, self.height
        )
    }
}

impl Operation for DesktopStart {
    const NAME: &'static str = "desktop_start";
    const STARTS_SESSION: bool = true;
    const PROFILES: &'static [Profile] = &[Profile::Desktop];
    const DESCRIPTION: &'static str = "Start a desktop (Xvfb; wayland: sway) with cmd; answers once its window has the focus. display: attach (\":0\", or \"wayland-1\" with wayland). On a running desktop's sid: starts cmd there. E.g. {\"sid\":\"d\",\"cmd\":\"xterm\"}";
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] = &[
        ("argv", Profile::CLASSIC),
        ("shell", Profile::CLASSIC),
        ("window_manager", Profile::CLASSIC),
        ("clean_env", Profile::CLASSIC),
        ("max_long_edge", Profile::CLASSIC),
        ("max_pixels", Profile::CLASSIC),
    ];
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("Start a desktop session: a private Xvfb (default 1280x800; only you can connect), or with \"wayland\": true a private headless sway, optionally running cmd, \
or attach to an existing display (\"display\": \":0\", or \"wayland-1\" with wayland; close never stops it). See and act on it with `computer`; `list` shows it (kind desktop), \
`close` stops what it started; waits, snapshot and screenshot work on it as on terminals. Counts toward the session limit and idle expiry. \
With cmd it returns once the program's first window is shown with the keyboard focus (else window_not_ready). max_long_edge/max_pixels set its screenshot size for models. \
Returns {ok, sid, kind, display, width, height, attached, pid, program_pid, window {title, class, ...}, window_manager, xauthority}; start more programs on it with env DISPLAY and XAUTHORITY. \
Example: {\"sid\": \"desk\", \"size\": [1280, 800], \"cmd\": \"xterm\"}.");
    type Params = DesktopStartParams;
    type Output = DesktopInfo;

    fn journal(p: &DesktopStartParams, _: bool) -> Vec<Journaled> {
        let params = serde_json::to_value(p).unwrap_or_default();
        vec![Journaled::waiting(StepTable {
            desktop: Some(Journaled::table_of(
                &params,
                super::kit::step_table::CALLERS_OWN,
            )),
            ..StepTable::default()
        })]
    }

    fn prepare(p: &mut DesktopStartParams, caller: &Caller) {
        if p.cmd.is_some() || p.argv.is_some() {
            caller.resolve_cwd(&mut p.cwd);
            caller.fill_env(&mut p.caller_env, p.clean_env);
        }
    }

    async fn run(
        ctx: &Context,
        p: DesktopStartParams,
        _: &Progress,
    ) -> Result<DesktopInfo, OpError> {
        desktop_start(ctx, p).await
    }
}

async fn desktop_start(ctx: &Context, p: DesktopStartParams) -> Result<DesktopInfo, OpError> {
    if let Some(desktop) = p.sid.as_deref().and_then(|sid| ctx.desktops.get(sid)) {
        return launch_on(&desktop, p).await;
    }
    let program = program_argv(p.cmd.as_deref(), p.argv.as_deref(), p.shell)?;
    let target = match (&p.display, p.size) {
        (Some(_), Some(_)) => {
            return Err(OpError::invalid(
                "size",
                "size is for a new desktop; an attached display keeps its own size",
            ))
        }
        (Some(display), None) if p.wayland => {
            let valid = !display.is_empty() && !display.contains(':') && !display.contains('\0');
            if !valid || display.len() > 200 {
                return Err(OpError::invalid(
                    "display",
                    format!("{display:?} is not a WAYLAND_DISPLAY like \"wayland-1\" (or a socket path)"),
                ));
            }
            Target::AttachWayland {
                display: display.clone(),
            }
        }
        (Some(display), None) => {
            let valid = display.starts_with(':') || display.contains(':');
            if !valid || display.len() > 100 {
                let hint = if display.starts_with("wayland") {
                    " (a Wayland display: add wayland: true)"
                } else {
                    ""
                };
                return Err(OpError::invalid(
                    "display",
                    format!("{display:?} is not an X display name like \":0\"{hint}"),
                ));
            }
            Target::Attach {
                display: display.clone(),
            }
        }
        (None, size) => {
            let [width, height] = size.unwrap_or([DEFAULT_SIZE.0, DEFAULT_SIZE.1]);
            screenpilot_desktop::check_size(width, height, "size")?;
            if p.wayland {
                Target::LaunchWayland { width, height }
            } else {
                Target::Launch { width, height }
            }
        }
    };
    let window_manager = window_manager(p.window_manager.as_deref())?;
    let model_size =
        model_size(ModelSize::default(), p.max_long_edge, p.max_pixels, false)?.unwrap_or_default();
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
    let env: Vec<(String, String)> = p.env.into_iter().collect();
    check_env(&env)?;
    // The caller's environment as a terminal session would pass it on (its own terminal's variables
    // left out), `env` over it; the desktop crate adds the display.
    let mut program_env: BTreeMap<String, String> = program_env(p.caller_env, p.clean_env)?
        .into_iter()
        .filter(|(key, _)| !CALLER_TERMINAL_VARS.contains(&key.as_str()))
        .collect();
    program_env.extend(env);

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
        ctx.desktops.reserve(p.sid.as_deref(), &others)?
    };
    ctx.desktops.start_expiry(limits.idle_timeout);
    let spec = DesktopSpec {
        label: reservation.sid().to_owned(),
        target,
        program,
        program_env: Some(
            program_env
                .into_iter()
                .map(|(key, value)| (key.into(), value.into()))
                .collect(),
        ),
        cwd,
        window_manager,
        step_timeout: DEFAULT_STEP_TIMEOUT,
        ready_timeout: screenpilot_desktop::desktop::DEFAULT_READY_TIMEOUT,
    };
    let desktop = Desktop::start(reservation.sid().to_owned(), spec).await?;
    let desktop = Arc::new(desktop);
    ctx.model_sizes.set(reservation.sid(), model_size);
    ctx.desktops.insert(reservation, desktop.clone());
    Ok(desktop.info())
}

/// `desktop_start` with the sid of a running desktop: start `cmd` (a command line, or the name of a
/// desktop entry such as `mousepad.desktop`) on it, and answer once its first window is shown with
/// the focus: the desktop, with `window` and `program_pid` those of the program just started.
async fn launch_on(desktop: &Desktop, p: DesktopStartParams) -> Result<DesktopInfo, OpError> {
    let settings_of_a_new_desktop = [
        ("size", p.size.is_some()),
        ("display", p.display.is_some()),
        ("wayland", p.wayland),
        ("window_manager", p.window_manager.is_some()),
        ("max_long_edge", p.max_long_edge.is_some()),
        ("max_pixels", p.max_pixels.is_some()),
    ];
    if let Some((field, _)) = settings_of_a_new_desktop.iter().find(|(_, given)| *given) {
        return Err(OpError::invalid(
            field,
            format!("desktop '{}' is running; {field} is for a new desktop (give cmd alone to start a program on it)", desktop.sid),
        ));
    }
    let argv = program_argv(p.cmd.as_deref(), p.argv.as_deref(), p.shell)?.ok_or_else(|| {
        OpError::invalid(
            "cmd",
            format!(
                "desktop '{}' is running; give cmd to start a program on it",
                desktop.sid
            ),
        )
    })?;
    // One word that names a desktop entry and no program (`org.xfce.mousepad`, `zenity.desktop`).
    let entry = argv.len() == 1
        && (argv[0].ends_with(".desktop")
            || (!argv[0].contains('/')
                && screenpilot_desktop::process::find_on_path(&[argv[0].as_str()]).is_none()));
    let program = if entry {
        screenpilot_desktop::Program::DesktopEntry(argv[0].trim_end_matches(".desktop").to_owned())
    } else {
        screenpilot_desktop::Program::Command(argv)
    };
    let launched = desktop.launch(program).await?;
    let mut info = desktop.info();
    info.program_pid = Some(launched.pid);
    info.cmd = launched.argv;
    info.window = Some(launched.window);
    info.log = Some(launched.log);
    Ok(info)
}
