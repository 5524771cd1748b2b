//! One desktop session: the display (our Xvfb, or one we attached to), the processes we started for
//! it, and the connection every action goes through.
//!
//! Calls on the connection run one at a time on a blocking thread, each under a time limit. A call
//! stuck in the X server (a hung display) gives a timeout; the next call then times out waiting for
//! its turn rather than queueing forever.
//!
//! Beside it, a watcher on a second connection counts drawing and window changes
//! ([`Desktop::damage_updates`], [`Desktop::window_updates`]); every wait on a desktop (its start
//! included, see `ready`) is woken by those counters, never by polling.

use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;

use crate::backend::Backend;
use crate::error::{DesktopError, Result};
use crate::looks::Looks;
use crate::on_wayland::{self, WaylandParts};
use crate::private_dir::PrivateDir;
use crate::process::{find_on_path, log_tail, Child, ExitStatus, Launch};
use crate::ready::{self, FocusBy};
use crate::server::{display_env, launch_xvfb, WindowManager, KNOWN_WINDOW_MANAGERS};
use crate::session_bus::SessionBus;
use crate::settle::{self, Settle, Settled, DEFAULT_REACTION};
pub(crate) use crate::step::blocking;
pub use crate::target::Target;
use crate::watcher::Watcher;
use crate::x11::clipboard_owner::Owner as ClipboardOwner;
use crate::x11::{connect_local, WindowInfo, X11};

/// The default limit for one native step (starting Xvfb, one action, one capture).
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(30);
/// The default limit for a desktop to become usable at start: the window manager ready, the
/// program's window shown with the keyboard focus.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(20);
/// The default screen of a private Xvfb.
pub const DEFAULT_SIZE: (u32, u32) = (1280, 800);
/// Smallest and largest screen sides we start.
pub const MIN_SIDE: u32 = 64;
pub const MAX_SIDE: u32 = 8192;
/// Most pixels in one screen (8K UHD).
pub const MAX_PIXELS: u64 = 7680 * 4320;

/// What to start.
#[derive(Debug, Clone)]
pub struct DesktopSpec {
    /// Used in the name of the private directory only.
    pub label: String,
    pub target: Target,
    /// A program to run on the display.
    pub program: Option<Vec<String>>,
    /// The program's environment: `None` is this process's, `Some` exactly these variables (the
    /// daemon passes its caller's). Either way the display variables are this desktop's
    /// (`program_env`). The program is looked up on the resulting PATH.
    pub program_env: Option<Vec<(OsString, OsString)>>,
    pub cwd: Option<PathBuf>,
    /// Only for a launched Xvfb; an attached display keeps whatever it has.
    pub window_manager: WindowManager,
    pub step_timeout: Duration,
    /// How long [`Desktop::start`] waits for the window manager to take over and for the program's
    /// first window to be shown with the keyboard focus ([`DEFAULT_READY_TIMEOUT`]).
    pub ready_timeout: Duration,
}

impl Default for DesktopSpec {
    /// A private Xvfb of [`DEFAULT_SIZE`] with the first window manager installed, no program.
    fn default() -> Self {
        DesktopSpec {
            label: "desktop".into(),
            target: Target::Launch {
                width: DEFAULT_SIZE.0,
                height: DEFAULT_SIZE.1,
            },
            program: None,
            program_env: None,
            cwd: None,
            window_manager: WindowManager::Auto,
            step_timeout: DEFAULT_STEP_TIMEOUT,
            ready_timeout: DEFAULT_READY_TIMEOUT,
        }
    }
}

/// Variables that point a program at another display; a desktop's program never gets them.
/// `WAYLAND_DISPLAY` (from a caller on a Wayland session) would send GTK and Qt programs there.
const OTHER_DISPLAY_VARS: &[&str] = &["DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET"];

/// The whole environment of a desktop's program: `base` (else this process's) without
/// [`OTHER_DISPLAY_VARS`], then `display` (this desktop's `DISPLAY`, and `XAUTHORITY` when it has its
/// own cookie; on an attached display the base's `XAUTHORITY` stays, the caller's key to it).
fn program_env(
    base: Option<&[(OsString, OsString)]>,
    display: Vec<(OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let base: Vec<(OsString, OsString)> = match base {
        Some(vars) => vars.to_vec(),
        None => std::env::vars_os().collect(),
    };
    let replaced = |key: &OsString| {
        OTHER_DISPLAY_VARS.iter().any(|var| key == var) || display.iter().any(|(k, _)| k == key)
    };
    let mut env: Vec<(OsString, OsString)> =
        base.into_iter().filter(|(key, _)| !replaced(key)).collect();
    env.extend(display);
    env
}

/// Check a requested screen size; `field` names the argument in errors.
pub fn check_size(width: u32, height: u32, field: &'static str) -> Result<()> {
    if !(MIN_SIDE..=MAX_SIDE).contains(&width) || !(MIN_SIDE..=MAX_SIDE).contains(&height) {
        return Err(DesktopError::invalid(
            field,
            format!("{width}x{height}: each side must be {MIN_SIDE}-{MAX_SIDE} pixels"),
        ));
    }
    if u64::from(width) * u64::from(height) > MAX_PIXELS {
        return Err(DesktopError::invalid(
            field,
            format!("{width}x{height} is more than {MAX_PIXELS} pixels (7680x4320)"),
        ));
    }
    Ok(())
}

/// What `list` shows about a desktop.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DesktopInfo {
    pub sid: String,
    /// Always "desktop".
    pub kind: String,
    /// The X display, e.g. ":3"; on Wayland its WAYLAND_DISPLAY, e.g. "wayland-1".
    pub display: String,
    /// A Wayland desktop (written only when true).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub wayland: bool,
    /// True when attached to an existing display (which `close` leaves running).
    pub attached: bool,
    /// The Xvfb (or sway) we started; `null` when attached.
    pub pid: Option<i32>,
    /// The program started on the display, if any.
    pub program_pid: Option<i32>,
    pub cmd: Vec<String>,
    pub width: u32,
    pub height: u32,
    pub window_manager: Option<String>,
    /// Set XAUTHORITY to this file (and DISPLAY) to start more programs on a private Xvfb.
    pub xauthority: Option<PathBuf>,
    /// stdout and stderr of the program.
    pub log: Option<PathBuf>,
    /// Seconds since the Unix epoch.
    pub started: u64,
    /// The display is up (our Xvfb runs; an attached display still answers).
    pub alive: bool,
    /// The program's exit status once it has ended (when known).
    pub program_alive: Option<bool>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub idle_secs: u64,
    /// The program's window once it was ready at start (shown, with the keyboard focus); `null`
    /// without a program.
    pub window: Option<WindowInfo>,
    /// People watching it now (the watch page).
    #[serde(default)]
    pub viewers: Vec<DesktopViewer>,
}

/// Someone watching a desktop.
#[derive(Debug, Clone, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DesktopViewer {
    /// "watch" (the web page).
    pub how: String,
    /// They can look but not click or type.
    pub read_only: bool,
    /// Seconds since they started watching.
    pub secs: u64,
}

/// A person watching a desktop, counted until dropped.
pub struct DesktopViewerGuard {
    desktop: Arc<Desktop>,
    id: u64,
}

impl Drop for DesktopViewerGuard {
    fn drop(&mut self) {
        lock(&self.desktop.viewers).retain(|v| v.0 != self.id);
    }
}

pub struct Desktop {
    pub sid: String,
    pub display: String,
    attached: bool,
    xvfb: Option<Child>,
    window_manager: Option<(String, Child)>,
    program: Option<Child>,
    /// Counts drawing and window changes on its own connection; `None` when an attached display
    /// refused a second connection.
    watcher: Option<Watcher>,
    /// The program's window when it became ready.
    window: Option<WindowInfo>,
    argv: Vec<String>,
    xauthority: Option<PathBuf>,
    program_log: Option<PathBuf>,
    /// The connection every call goes through, one call at a time; `None` once closed.
    connection: Arc<tokio::sync::Mutex<Option<Box<dyn Backend>>>>,
    size: Mutex<(u32, u32)>,
    started: SystemTime,
    last_used: Mutex<Instant>,
    /// People watching: (id, how, read_only, since).
    viewers: Mutex<Vec<(u64, &'static str, bool, Instant)>>,
    closed: AtomicBool,
    broken: AtomicBool,
    pub step_timeout: Duration,
    /// The session bus its applications (and their accessibility) talk on: our own on a private
    /// Xvfb; on an attached display, the caller's (its `DBUS_SESSION_BUS_ADDRESS`), if it had one.
    session_bus: Option<SessionBus>,
    attached_bus: Option<String>,
    ready_timeout: Duration,
    /// The environment programs started here are given, before the display's variables
    /// (`DesktopSpec::program_env`), and the directory they start in.
    program_env_base: Option<Vec<(OsString, OsString)>>,
    program_cwd: Option<PathBuf>,
    /// Programs started on the running desktop ([`Desktop::launch`]); ended with it.
    launched: Mutex<Vec<Arc<Child>>>,
    /// The owner of the selections we set, started on the first `clipboard_set`.
    clipboard: tokio::sync::Mutex<Option<ClipboardOwner>>,
    /// On Wayland: the compositor, its watches and the clipboard's source.
    wayland: Option<WaylandParts>,
    /// Dropped (and removed) after everything else.
    private_dir: PrivateDir,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Desktop {
    /// Start (or attach to) a display, then the window manager and the program.
    pub async fn start(sid: String, spec: DesktopSpec) -> Result<Desktop> {
        let dir = PrivateDir::create(&spec.label)?;
        let limit = spec.step_timeout;
        if matches!(
            spec.target,
            Target::LaunchWayland { .. } | Target::AttachWayland { .. }
        ) {
            let started = on_wayland::start(dir.path(), &spec.target, limit).await?;
            let size = crate::backend::Backend::size(&started.backend);
            let desktop = Desktop::new(
                sid,
                &spec,
                started.display,
                size,
                Box::new(started.backend),
                dir,
            );
            let desktop = Desktop {
                attached: started.attached,
                wayland: Some(started.parts),
                ..desktop
            };
            return desktop.finish_start(&spec).await;
        }
        let (display, xvfb, xauthority, x, watch_conn) = match &spec.target {
            Target::Launch { width, height } => {
                check_size(*width, *height, "size")?;
                let server = launch_xvfb(dir.path(), *width, *height, limit).await?;
                let number = server.display_number;
                let cookie = server.cookie.clone();
                let connected = blocking("connecting to Xvfb", limit, move || {
                    let x = X11::new(connect_local(number, &cookie)?, 0)?;
                    let watch = connect_local(number, &cookie)?;
                    Ok((x, watch))
                })
                .await;
                let (x, watch) = match connected {
                    Ok(connections) => connections,
                    Err(e) => {
                        server.child.stop(Duration::from_millis(500)).await;
                        return Err(e);
                    }
                };
                (
                    format!(":{number}"),
                    Some(server.child),
                    Some(server.xauthority),
                    x,
                    Some((watch, 0)),
                )
            }
            Target::LaunchWayland { .. } | Target::AttachWayland { .. } => {
                unreachable!("started above")
            }
            Target::Attach { display } => {
                let name = display.clone();
                let x = blocking("connecting to the display", limit, move || {
                    let (conn, screen) = crate::x11::connect(&name, None)?;
                    let x = X11::new(conn, screen)?;
                    // A display that takes one connection but not a second still gets used; only
                    // its waits have nothing to wake them.
                    let watch = crate::x11::connect(&name, None).ok();
                    Ok((x, watch))
                })
                .await
                .map_err(|e| match e {
                    DesktopError::Connection(message) => DesktopError::Start {
                        field: "display",
                        message,
                    },
                    other => other,
                })?;
                (display.clone(), None, None, x.0, x.1)
            }
        };
        let size = x.size();
        let desktop = Desktop::new(sid, &spec, display, size, Box::new(x), dir);
        let mut desktop = Desktop {
            attached: xvfb.is_none(),
            xvfb,
            xauthority,
            ..desktop
        };
        if let Some((conn, screen)) = watch_conn {
            match blocking("watching the display", limit, move || {
                Watcher::start(conn, screen)
            })
            .await
            {
                Ok(watcher) => desktop.watcher = Some(watcher),
                Err(e) if !desktop.attached => {
                    desktop.close().await;
                    return Err(e);
                }
                Err(_) => {}
            }
        }
        desktop.finish_start(&spec).await
    }

    /// A desktop on `backend` with nothing started yet beside it.
    fn new(
        sid: String,
        spec: &DesktopSpec,
        display: String,
        size: (u32, u32),
        backend: Box<dyn Backend>,
        dir: PrivateDir,
    ) -> Desktop {
        Desktop {
            sid,
            display,
            attached: true,
            xvfb: None,
            window_manager: None,
            program: None,
            watcher: None,
            window: None,
            argv: spec.program.clone().unwrap_or_default(),
            xauthority: None,
            program_log: None,
            connection: Arc::new(tokio::sync::Mutex::new(Some(backend))),
            size: Mutex::new(size),
            started: SystemTime::now(),
            last_used: Mutex::new(Instant::now()),
            viewers: Mutex::default(),
            closed: AtomicBool::new(false),
            broken: AtomicBool::new(false),
            step_timeout: spec.step_timeout,
            session_bus: None,
            attached_bus: spec.program_env.as_deref().and_then(|vars| {
                vars.iter()
                    .find(|(k, _)| k == "DBUS_SESSION_BUS_ADDRESS")
                    .and_then(|(_, v)| v.to_str().map(str::to_owned))
            }),
            ready_timeout: spec.ready_timeout,
            program_env_base: spec.program_env.clone(),
            program_cwd: spec.cwd.clone(),
            launched: Mutex::default(),
            clipboard: tokio::sync::Mutex::new(None),
            wayland: None,
            private_dir: dir,
        }
    }

    /// The session bus of a desktop of our own, then the window manager and the program; closed
    /// again on any error.
    async fn finish_start(mut self, spec: &DesktopSpec) -> Result<Desktop> {
        if !self.attached {
            let launched = SessionBus::launch(
                self.private_dir.path(),
                self.display_env(),
                self.step_timeout,
            )
            .await;
            match launched {
                Ok(bus) => self.session_bus = bus,
                Err(e) => {
                    self.close().await;
                    return Err(e);
                }
            }
        }
        match self.bring_up(spec).await {
            Ok(()) => Ok(self),
            Err(e) => {
                self.close().await;
                Err(e)
            }
        }
    }

    /// Start the window manager and wait until it has taken over; start the program and wait until
    /// its window is shown with the keyboard focus.
    async fn bring_up(&mut self, spec: &DesktopSpec) -> Result<()> {
        let env = self.desktop_env();
        let limit = self.step_timeout;
        if !self.attached && self.wayland.is_none() {
            let wm = match &spec.window_manager {
                WindowManager::None => None,
                WindowManager::Auto => find_on_path(KNOWN_WINDOW_MANAGERS).map(|(name, _)| name),
                WindowManager::Program(name) => Some(name.clone()),
            };
            if let Some(name) = wm {
                let log = self.private_dir.path().join("window-manager.log");
                let launch = Launch {
                    argv: vec![name.clone()],
                    env: env.clone(),
                    env_clear: false,
                    cwd: None,
                    log: log.clone(),
                    keep_fd: None,
                };
                match Child::spawn(launch).await {
                    Ok(child) => {
                        self.window_manager = Some((name.clone(), child));
                        if let Some((_, child)) = &self.window_manager {
                            ready::window_manager(self, &name, child, &log, spec.ready_timeout)
                                .await?;
                        }
                    }
                    Err(e) if spec.window_manager != WindowManager::Auto => {
                        return Err(DesktopError::Start {
                            field: "window_manager",
                            message: format!("cannot start window manager {name:?}: {e}"),
                        });
                    }
                    Err(_) => {}
                }
            }
        }
        let Some(argv) = &spec.program else {
            return Ok(());
        };
        // Which windows were there before, and who gives the program's window the keyboard.
        let (before, wm) = self
            .run("looking at the display", limit, |x| {
                Ok((x.windows()?, x.focus_by_window_manager()?))
            })
            .await?;
        let before: HashSet<u32> = before.iter().map(|w| w.id).collect();
        let log = self.private_dir.path().join("program.log");
        let launch = Launch {
            argv: argv.clone(),
            env: self.program_environment(),
            env_clear: true,
            cwd: spec.cwd.clone(),
            log: log.clone(),
            keep_fd: None,
        };
        match Child::spawn(launch).await {
            Ok(child) => {
                self.program = Some(child);
                self.program_log = Some(log.clone());
            }
            Err(e) => {
                let program = argv.first().cloned().unwrap_or_default();
                let message = if e.kind() == std::io::ErrorKind::NotFound {
                    format!("program {program:?} was not found on PATH")
                } else {
                    format!("cannot start {program:?}: {e}")
                };
                return Err(DesktopError::Start {
                    field: "cmd",
                    message,
                });
            }
        }
        if !self.watches_windows() {
            // Nothing would wake the wait (an attached display without a second connection).
            return Ok(());
        }
        if let Some(program) = &self.program {
            let window = ready::program_window(
                self,
                program,
                &log,
                &before,
                FocusBy::of(wm),
                spec.ready_timeout,
            )
            .await?;
            ready::painted(self, &window, spec.ready_timeout.min(ready::PAINT_LIMIT)).await?;
            self.window = Some(window);
        }
        Ok(())
    }

    /// Run `job` on the connection, under `limit`. The job sees the limit as its deadline: waits
    /// inside it (holding keys, settling) stop there.
    pub async fn run<R: Send + 'static>(
        &self,
        what: &str,
        limit: Duration,
        job: impl FnOnce(&mut dyn Backend) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.touch();
        if self.closed.load(Ordering::SeqCst) {
            return Err(DesktopError::Closed);
        }
        let deadline = Instant::now() + limit;
        let Ok(mut guard) = tokio::time::timeout(limit, self.connection.clone().lock_owned()).await
        else {
            return Err(DesktopError::Busy {
                what: what.to_owned(),
                waited: limit,
            });
        };
        let remaining = deadline.saturating_duration_since(Instant::now());
        // A little more than the deadline: a job that respects it reports its own timeout.
        let outcome = blocking(what, remaining + Duration::from_millis(250), move || {
            let Some(x) = guard.as_mut() else {
                return Err(DesktopError::Closed);
            };
            x.begin(deadline)?;
            let result = job(x.as_mut());
            Ok((result, x.size()))
        })
        .await;
        let result = match outcome {
            Ok((result, size)) => {
                *lock(&self.size) = size;
                result
            }
            Err(e) => Err(e),
        };
        match result {
            Err(DesktopError::Timeout {
                what: step,
                limit: d,
            }) if d.is_zero() => Err(DesktopError::Timeout { what: step, limit }),
            Err(e @ DesktopError::Connection(_)) => {
                self.broken.store(true, Ordering::SeqCst);
                Err(e)
            }
            other => other,
        }
    }

    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// The whole environment a program started on this desktop gets: the caller's (or this
    /// process's) without other displays' variables, then this desktop's `DISPLAY` and `XAUTHORITY`.
    pub fn program_environment(&self) -> Vec<(OsString, OsString)> {
        program_env(self.program_env_base.as_deref(), self.desktop_env())
    }

    /// What this desktop sets for everything it runs: its display, and its session bus with the
    /// toolkits' accessibility switches.
    fn desktop_env(&self) -> Vec<(OsString, OsString)> {
        let mut env = self.display_env();
        if let Some(bus) = &self.session_bus {
            env.extend(bus.env());
        }
        env
    }

    /// What points a program at this desktop's display: `DISPLAY` and `XAUTHORITY`, or on Wayland
    /// `WAYLAND_DISPLAY`, `XDG_RUNTIME_DIR` and the toolkits' switches to it.
    fn display_env(&self) -> Vec<(OsString, OsString)> {
        match &self.wayland {
            Some(wayland) => wayland.env.clone(),
            None => display_env(&self.display, self.xauthority.as_deref()),
        }
    }

    pub(crate) fn program_cwd(&self) -> Option<&PathBuf> {
        self.program_cwd.as_ref()
    }

    pub(crate) fn ready_timeout(&self) -> Duration {
        self.ready_timeout
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    pub(crate) fn xauthority(&self) -> Option<&PathBuf> {
        self.xauthority.as_ref()
    }

    pub(crate) fn clipboard_owner(&self) -> &tokio::sync::Mutex<Option<ClipboardOwner>> {
        &self.clipboard
    }

    /// Window changes are counted (a watcher runs), so waits on them are woken.
    pub(crate) fn watches_windows(&self) -> bool {
        self.watcher.is_some() || self.wayland.is_some()
    }

    /// A Wayland desktop (else X11).
    pub fn is_wayland(&self) -> bool {
        self.wayland.is_some()
    }

    /// The Wayland parts, on a Wayland desktop.
    pub(crate) fn wayland(&self) -> Option<&WaylandParts> {
        self.wayland.as_ref()
    }

    /// A fresh log file for a program started on the running desktop.
    pub(crate) fn next_program_log(&self) -> PathBuf {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        self.private_dir.path().join(format!("launched-{n}.log"))
    }

    /// Own a program started on the running desktop: [`Desktop::close`] ends it.
    pub(crate) fn adopt(&self, child: Arc<Child>) {
        lock(&self.launched).push(child);
    }

    pub(crate) fn forget(&self, child: &Arc<Child>) {
        lock(&self.launched).retain(|c| !Arc::ptr_eq(c, child));
    }

    /// The programs started with [`Desktop::launch`]: pid, and whether it still runs.
    pub fn launched(&self) -> Vec<(i32, bool)> {
        lock(&self.launched)
            .iter()
            .map(|c| (c.pid, !c.exited()))
            .collect()
    }

    /// Count a person watching (`how`: "watch") until the guard is dropped; `list` shows them.
    pub fn add_viewer(self: &Arc<Self>, how: &'static str, read_only: bool) -> DesktopViewerGuard {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        lock(&self.viewers).push((id, how, read_only, Instant::now()));
        DesktopViewerGuard {
            desktop: self.clone(),
            id,
        }
    }

    /// The people watching now.
    pub fn viewers(&self) -> Vec<DesktopViewer> {
        lock(&self.viewers)
            .iter()
            .map(|&(_, how, read_only, since)| DesktopViewer {
                how: how.to_owned(),
                read_only,
                secs: since.elapsed().as_secs(),
            })
            .collect()
    }

    pub fn idle_for(&self) -> Duration {
        lock(&self.last_used).elapsed()
    }

    /// The screen size as of the last call.
    pub fn size(&self) -> (u32, u32) {
        *lock(&self.size)
    }

    /// The display is usable: our Xvfb runs (or the attached display's connection has not failed).
    pub fn alive(&self) -> bool {
        if self.closed.load(Ordering::SeqCst) || self.broken.load(Ordering::SeqCst) {
            return false;
        }
        self.xvfb.as_ref().is_none_or(|x| !x.exited())
            && self.wayland.as_ref().is_none_or(WaylandParts::alive)
    }

    pub fn info(&self) -> DesktopInfo {
        let status = self.program.as_ref().and_then(Child::status);
        let (width, height) = self.size();
        DesktopInfo {
            sid: self.sid.clone(),
            kind: "desktop".to_owned(),
            display: self.display.clone(),
            wayland: self.wayland.is_some(),
            attached: self.attached,
            pid: self.xvfb.as_ref().map(|c| c.pid).or_else(|| {
                let compositor = self.wayland.as_ref()?.compositor.as_ref()?;
                Some(compositor.child.pid)
            }),
            program_pid: self.program.as_ref().map(|c| c.pid),
            cmd: self.argv.clone(),
            width,
            height,
            window_manager: self.window_manager.as_ref().map(|(name, _)| name.clone()),
            xauthority: self.xauthority.clone(),
            log: self.program_log.clone(),
            started: self
                .started
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            alive: self.alive(),
            program_alive: self.program.as_ref().map(|c| !c.exited()),
            exit_code: status.and_then(|s| s.exit_code),
            signal: status.and_then(|s| s.signal),
            idle_secs: self.idle_for().as_secs(),
            window: self.window.clone(),
            viewers: self.viewers(),
        }
    }

    /// The top-level (client) windows: title, class, pid, geometry, focus, mapping.
    /// The session bus its applications talk on (and expose their accessibility trees on): our
    /// own on a private Xvfb, the caller's on an attached display; `None` when there is none.
    pub fn session_bus_address(&self) -> Option<String> {
        self.session_bus
            .as_ref()
            .map(|bus| bus.address.clone())
            .or_else(|| self.attached_bus.clone())
    }

    pub async fn windows(&self) -> Result<Vec<WindowInfo>> {
        self.run("listing the windows", self.step_timeout, |x| x.windows())
            .await
    }

    /// The program's window as it was when the desktop became ready (`None` without a program).
    pub fn window(&self) -> Option<&WindowInfo> {
        self.window.as_ref()
    }

    /// A hash of the screen's pixels without the pointer ([`X11::screen_hash`]): one capture.
    pub async fn screen_hash(&self) -> Result<u64> {
        self.run("hashing the screen", self.step_timeout, |x| x.screen_hash())
            .await
    }

    /// A generation counter bumped whenever something is drawn on the screen (X DAMAGE). Note its
    /// value before acting, then wait for it to pass that value ([`Desktop::settle`]). Its
    /// `changed()` fails once the desktop is closed, or at once when changes cannot be watched.
    pub fn damage_updates(&self) -> tokio::sync::watch::Receiver<u64> {
        match (&self.watcher, &self.wayland) {
            (Some(watcher), _) => watcher.damage_updates(),
            (None, Some(wayland)) => wayland.damage_updates(),
            (None, None) => tokio::sync::watch::channel(0).1,
        }
    }

    /// Looks read from the drawing to come (see [`Desktop::drawing_changed`]).
    pub fn looks(&self) -> Looks {
        Looks::since(*self.damage_updates().borrow())
    }

    /// Whether the drawing since `looks` last read changed what a person sees: false when all that
    /// was drawn is one box drawn again as it was or back to its look before (a blinking caret),
    /// true for anything else (several batches, a box larger than [`Looks::LARGEST`], a box that
    /// cannot be read).
    pub async fn drawing_changed(&self, looks: &mut Looks) -> bool {
        let drawn = match (&self.watcher, &self.wayland) {
            (Some(watcher), _) => Some(watcher.drawn()),
            (None, Some(wayland)) => wayland.drawn(),
            (None, None) => None,
        };
        let Some(drawn) = drawn else {
            return true;
        };
        let one_batch = drawn.generation == looks.seen + 1;
        looks.seen = drawn.generation;
        let Some((x, y, width, height)) = drawn.area.filter(|_| one_batch) else {
            return true;
        };
        if u32::from(width) * u32::from(height) > Looks::LARGEST {
            return true;
        }
        let look = self
            .run("reading what was drawn", self.step_timeout, move |x11| {
                let (left, top) = (x.max(0) as u32, y.max(0) as u32);
                Ok(x11
                    .capture(false)?
                    .crop(left, top, u32::from(width), u32::from(height))
                    .hash())
            })
            .await;
        match look {
            Ok(look) => looks.changed((x, y, width, height), look),
            Err(_) => true,
        }
    }

    /// A generation counter bumped whenever the window list, a title, a window's mapping or
    /// geometry, or the focus changes. Its `changed()` fails once the desktop is closed.
    pub fn window_updates(&self) -> tokio::sync::watch::Receiver<u64> {
        match (&self.watcher, &self.wayland) {
            (Some(watcher), _) => watcher.window_updates(),
            (None, Some(wayland)) => wayland.window_updates.clone(),
            (None, None) => tokio::sync::watch::channel(0).1,
        }
    }

    /// A generation counter bumped whenever the pointer moves (XInput 2 raw motion; it never moves on
    /// a display without XInput 2). Its `changed()` fails once the desktop is closed.
    pub fn pointer_updates(&self) -> tokio::sync::watch::Receiver<u64> {
        match &self.watcher {
            Some(watcher) => watcher.pointer_updates(),
            None => tokio::sync::watch::channel(0).1,
        }
    }

    /// Drawing can be watched (the display has DAMAGE and the watcher runs). Without it,
    /// [`Desktop::settle`] returns at once with `settled: false`.
    pub fn watches_damage(&self) -> bool {
        self.watcher.as_ref().is_some_and(|w| w.has_damage)
            || self.wayland.as_ref().is_some_and(|w| w.damage.is_some())
    }

    /// Wait until the screen reacted (drawn after generation `since`) and then was still for
    /// `quiet`, all within `limit`; waiting for the reaction at most [`DEFAULT_REACTION`] (see
    /// [`crate::settle`] for why, and for what the result says).
    pub async fn settle(&self, since: u64, quiet: Duration, limit: Duration) -> Settled {
        self.settle_with(since, quiet, DEFAULT_REACTION, limit)
            .await
    }

    /// [`Desktop::settle`] with its own reaction window; zero waits for quiet only.
    pub async fn settle_with(
        &self,
        since: u64,
        quiet: Duration,
        reaction: Duration,
        limit: Duration,
    ) -> Settled {
        self.touch();
        let updates = self.damage_updates();
        let probe = updates.clone();
        let limits = Settle {
            reaction,
            quiet,
            limit,
        };
        settle::settle(updates, move || *probe.borrow(), since, limits).await
    }

    /// Wait until the program given at start has ended, at most `limit`: its status, or `None` when
    /// it still runs (or there is none). The status has neither code nor signal when something
    /// else reaped it first.
    pub async fn wait_program_exit(&self, limit: Duration) -> Option<ExitStatus> {
        let program = self.program.as_ref()?;
        if program.wait_exit(limit).await {
            Some(program.status().unwrap_or_default())
        } else {
            None
        }
    }

    /// The last lines the program wrote, for error messages.
    pub fn program_log_tail(&self) -> String {
        self.program_log
            .as_deref()
            .map(|p| log_tail(p, 400))
            .unwrap_or_default()
    }

    /// End the desktop: release buttons left down, put the keymap back, drop the connection, stop the program, the window manager
    /// and our Xvfb (TERM, then KILL). An attached display itself is left running. Returns the
    /// program's exit status when known.
    pub async fn close(&self) -> Option<ExitStatus> {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(thread) = self.watcher.as_ref().and_then(Watcher::stop_and_take) {
            // It ends at once (its eventfd wakes it); waiting here means no watcher outlives a close.
            let joined = tokio::task::spawn_blocking(move || thread.join());
            let _ = tokio::time::timeout(Duration::from_secs(2), joined).await;
        }
        if let Some(wayland) = &self.wayland {
            wayland.stop_watches().await;
        }
        let owner = match tokio::time::timeout(Duration::from_secs(2), self.clipboard.lock()).await
        {
            Ok(mut guard) => guard.take(),
            Err(_) => None,
        };
        if let Some(thread) = owner.and_then(|mut owner| owner.stop()) {
            // It ends at once (its eventfd wakes it); with its connection go the selections we own.
            let joined = tokio::task::spawn_blocking(move || thread.join());
            let _ = tokio::time::timeout(Duration::from_secs(2), joined).await;
        }
        if let Ok(mut guard) =
            tokio::time::timeout(Duration::from_secs(2), self.connection.clone().lock_owned()).await
        {
            if let Some(mut x) = guard.take() {
                let _ = blocking(
                    "releasing buttons and restoring the keymap",
                    Duration::from_secs(2),
                    move || x.leave_as_found(),
                )
                .await;
            }
        }
        let grace = Duration::from_millis(1000);
        let program = async {
            if let Some(child) = &self.program {
                child.stop(grace).await;
            }
        };
        let wm = async {
            if let Some((_, child)) = &self.window_manager {
                child.stop(grace).await;
            }
        };
        let launched: Vec<Arc<Child>> = lock(&self.launched).clone();
        let others = async {
            // Together, so a stubborn one costs one grace period, not one each.
            let mut stops = tokio::task::JoinSet::new();
            for child in launched {
                stops.spawn(async move { child.stop(grace).await });
            }
            while stops.join_next().await.is_some() {}
        };
        tokio::join!(program, wm, others);
        if let Some(bus) = &self.session_bus {
            bus.child.stop(grace).await;
        }
        if let Some(xvfb) = &self.xvfb {
            xvfb.stop(grace).await;
        }
        if let Some(compositor) = self.wayland.as_ref().and_then(|w| w.compositor.as_ref()) {
            compositor.stop(grace).await;
        }
        self.program.as_ref().and_then(Child::status)
    }
}

impl ready::Display for Desktop {
    fn run<R: Send + 'static>(
        &self,
        what: &str,
        limit: Duration,
        job: impl FnOnce(&mut dyn Backend) -> Result<R> + Send + 'static,
    ) -> impl std::future::Future<Output = Result<R>> + Send {
        Desktop::run(self, what, limit, job)
    }

    fn window_updates(&self) -> tokio::sync::watch::Receiver<u64> {
        Desktop::window_updates(self)
    }

    fn damage_updates(&self) -> tokio::sync::watch::Receiver<u64> {
        Desktop::damage_updates(self)
    }

    fn attached(&self) -> bool {
        self.attached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn a_program_sees_this_desktop_and_no_other_display() {
        let base = vars(&[
            ("PATH", "/caller/bin"),
            ("DISPLAY", ":0"),
            ("WAYLAND_DISPLAY", "wayland-0"),
            ("XAUTHORITY", "/home/me/.Xauthority"),
        ]);
        let ours = vars(&[("DISPLAY", ":7"), ("XAUTHORITY", "/run/sp/d/Xauthority")]);
        let env = program_env(Some(&base), ours.clone());
        let mut expected = vars(&[("PATH", "/caller/bin")]);
        expected.extend(ours);
        assert_eq!(env, expected);
    }

    #[test]
    fn on_an_attached_display_the_callers_xauthority_stays() {
        let base = vars(&[("DISPLAY", ":0"), ("XAUTHORITY", "/home/me/.Xauthority")]);
        let env = program_env(Some(&base), vars(&[("DISPLAY", ":0")]));
        assert_eq!(
            env,
            vars(&[("XAUTHORITY", "/home/me/.Xauthority"), ("DISPLAY", ":0")])
        );
    }
}
