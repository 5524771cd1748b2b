//! A desktop on Wayland: the [`Backend`] over a wlroots compositor (`wayland::Wayland` for the
//! screen, input and clipboard; sway's IPC for the windows), and what a Wayland desktop runs beside
//! it: our own headless sway or the compositor we attached to, a damage watch and sway's window
//! events for waits, the clipboard's data source.
//!
//! sway lays windows out in logical pixels; screenshots and input are in the output's pixels. Every
//! window box crosses here, multiplied or divided by the output's scale, so callers see screen
//! pixels only. The scale is read from sway at each crossing, not once: it can change while a
//! desktop runs (`swaymsg output HEADLESS-1 scale 2`, a user's display settings on an attached
//! desktop).

use std::cell::RefCell;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::backend::Backend;
use crate::capture::Frame;
use crate::error::{DesktopError, Result};
use crate::gestures::{Gestures as _, Seat as _};
use crate::keyboard::Modifier;
use crate::keysym::Keysym;
use crate::step::blocking;
use crate::sway::{self, Compositor, SwayEvents, SwayIpc};
use crate::target::Target;
use crate::watcher::Drawn;
use crate::wayland::{ClipboardServer, DamageWatch, Wayland};
use crate::x11::{Button, ClipContent, ClipKind, MoveResize, Point, Selection, WindowInfo};

/// The Wayland backend: one connection to the compositor, and sway's IPC when the compositor is
/// sway (without it the window list is empty and window actions say they cannot be done).
pub struct WaylandBackend {
    wayland: Wayland,
    sway: Option<RefCell<SwayIpc>>,
}

impl WaylandBackend {
    fn ipc(&self, doing: &str) -> Result<std::cell::RefMut<'_, SwayIpc>> {
        self.sway
            .as_ref()
            .map(RefCell::borrow_mut)
            .ok_or_else(|| DesktopError::Unsupported {
                what: format!("{doing} (the compositor is not sway: no window list to act on)"),
                backend: "wayland",
            })
    }

    /// Output pixels per layout pixel now: the scale of sway's (first active) output, else the
    /// integer scale the compositor gives the output (`wl_output.scale`).
    fn scale_now(&self, ipc: Option<&mut SwayIpc>) -> Result<f64> {
        let Some(ipc) = ipc else {
            return Ok(f64::from(self.wayland.output_scale()));
        };
        Ok(ipc
            .outputs()?
            .into_iter()
            .find(|o| o.active)
            .map_or(1.0, |o| o.scale))
    }

    /// A window as screenshots see it: layout pixels times the scale `s`.
    fn on_screen(mut info: WindowInfo, s: f64) -> WindowInfo {
        if s != 1.0 {
            info.x = (f64::from(info.x) * s).round() as i32;
            info.y = (f64::from(info.y) * s).round() as i32;
            info.width = (f64::from(info.width) * s).round() as u32;
            info.height = (f64::from(info.height) * s).round() as u32;
        }
        info
    }

    fn in_layout(to: MoveResize, s: f64) -> MoveResize {
        let i = |v: Option<i32>| v.map(|v| (f64::from(v) / s).round() as i32);
        let u = |v: Option<u32>| v.map(|v| ((f64::from(v) / s).round() as u32).max(1));
        MoveResize {
            x: i(to.x),
            y: i(to.y),
            width: u(to.width),
            height: u(to.height),
        }
    }
}

impl Backend for WaylandBackend {
    fn kind(&self) -> &'static str {
        "wayland"
    }

    fn size(&self) -> (u32, u32) {
        self.wayland.size()
    }

    fn begin(&mut self, deadline: Instant) -> Result<()> {
        self.wayland.begin(deadline)
    }

    fn capture_method(&self) -> &'static str {
        "screencopy"
    }

    fn capture(&mut self, pointer: bool) -> Result<Frame> {
        self.wayland.capture(pointer)
    }

    fn screen_hash(&mut self) -> Result<u64> {
        self.wayland.screen_hash()
    }

    fn sync(&mut self) -> Result<()> {
        self.wayland.sync()
    }

    fn settle(&mut self, _quiet: Duration, _max: Duration) -> Result<()> {
        // Drawing is watched from outside every step (the damage watch): the desktop's settle
        // waits on it; inside a step a round trip is all there is to wait for.
        self.wayland.sync()
    }

    fn pointer(&self) -> Result<(Point, u16)> {
        self.wayland.pointer()
    }

    fn check_point(&self, point: Point, field: &'static str) -> Result<()> {
        self.wayland.check_point(point, field)
    }

    fn move_to(&mut self, to: Point, modifiers: &[Modifier]) -> Result<()> {
        self.wayland.move_to(to, modifiers)
    }

    fn click(
        &mut self,
        at: Point,
        button: Button,
        count: u32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.wayland.click(at, button, count, modifiers)
    }

    fn scroll(
        &mut self,
        at: Point,
        steps_x: i32,
        steps_y: i32,
        modifiers: &[Modifier],
    ) -> Result<()> {
        self.wayland.scroll(at, steps_x, steps_y, modifiers)
    }

    fn drag(&mut self, path: &[Point], button: Button, modifiers: &[Modifier]) -> Result<()> {
        self.wayland.drag(path, button, modifiers)
    }

    fn button(&mut self, at: Option<Point>, button: Button, press: bool) -> Result<()> {
        self.wayland.button(at, button, press)
    }

    fn key_chord(&mut self, keysyms: &[Keysym], hold: Duration) -> Result<()> {
        self.wayland.key_chord(keysyms, hold)
    }

    fn type_text(&mut self, text: &str) -> Result<()> {
        self.wayland.type_text(text)
    }

    fn leave_as_found(&mut self) -> Result<()> {
        self.wayland.leave_as_found()
    }

    fn windows(&self) -> Result<Vec<WindowInfo>> {
        let Some(sway) = &self.sway else {
            return Ok(Vec::new());
        };
        let mut ipc = sway.borrow_mut();
        let scale = self.scale_now(Some(&mut *ipc))?;
        let windows = ipc.windows()?;
        Ok(windows
            .into_iter()
            .map(|w| Self::on_screen(w, scale))
            .collect())
    }

    fn client(&self, window: u32) -> Result<WindowInfo> {
        let mut ipc = self.ipc("reading a window")?;
        let scale = self.scale_now(Some(&mut *ipc))?;
        let view = ipc.view(window)?;
        Ok(Self::on_screen(view.info, scale))
    }

    fn window_scale(&self) -> Result<f64> {
        match &self.sway {
            Some(sway) => self.scale_now(Some(&mut *sway.borrow_mut())),
            None => self.scale_now(None),
        }
    }

    fn popup_at(&self, _x: i16, _y: i16) -> Result<bool> {
        // Popups (xdg_popup) are no windows of sway's tree, and no protocol tells a client where
        // another's are: the accessibility tree answers instead (its popups' boxes).
        Ok(false)
    }

    fn focus_by_window_manager(&self) -> Result<bool> {
        Ok(true)
    }

    fn activate(&self, window: u32, _ask_window_manager: bool) -> Result<()> {
        self.ipc("focusing a window")?.focus(window)
    }

    fn request_focus(&mut self, window: u32) -> Result<WindowInfo> {
        let before = self.client(window)?;
        self.ipc("focusing a window")?.focus(window)?;
        Ok(before)
    }

    fn request_raise(&mut self, window: u32) -> Result<WindowInfo> {
        // sway raises a floating window when it gets the focus, and only then.
        self.request_focus(window)
    }

    fn on_top(&self, window: u32) -> Result<bool> {
        Ok(self.client(window)?.focused)
    }

    fn request_move_resize(&mut self, window: u32, to: MoveResize) -> Result<WindowInfo> {
        let before = self.client(window)?;
        let mut ipc = self.ipc("moving a window")?;
        let scale = self.scale_now(Some(&mut *ipc))?;
        ipc.move_resize(window, Self::in_layout(to, scale))?;
        Ok(before)
    }

    fn moves_exactly(&self) -> Result<bool> {
        Ok(true)
    }

    fn request_minimize(&mut self, window: u32) -> Result<WindowInfo> {
        let before = self.client(window)?;
        self.ipc("minimising a window")?.minimize(window)?;
        Ok(before)
    }

    fn request_close(&mut self, window: u32, kill: bool) -> Result<WindowInfo> {
        let before = self.client(window)?;
        if kill {
            // A Wayland client cannot be cut off from outside the compositor: end its process.
            let pid = before.pid.ok_or_else(|| {
                DesktopError::invalid(
                    "kill",
                    format!("window {window} has no process id to end; close it without kill"),
                )
            })?;
            // SAFETY: kill(2) with a pid the compositor reported and a plain signal number.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        } else {
            self.ipc("closing a window")?.close(window)?;
        }
        Ok(before)
    }

    fn clipboard_types(&mut self, which: Selection) -> Result<Option<Vec<String>>> {
        let types = self.wayland.clipboard_types(which)?;
        Ok((!types.is_empty()).then_some(types))
    }

    fn clipboard_get(&mut self, which: Selection, kind: ClipKind) -> Result<ClipContent> {
        self.wayland.clipboard_get(which, kind)
    }
}

/// What a Wayland desktop runs beside its backend.
pub(crate) struct WaylandParts {
    /// Our own sway; `None` on a compositor we attached to.
    pub compositor: Option<Compositor>,
    /// The compositor's socket (absolute).
    pub socket: PathBuf,
    /// What programs need to show their windows there.
    pub env: Vec<(OsString, OsString)>,
    pub damage: Option<DamageWatch>,
    pub events: Option<SwayEvents>,
    /// Window changes: sway's window events and any drawing (sway sends no event for a window
    /// that moved or was resized within its workspace, but the screen changes).
    pub window_updates: watch::Receiver<u64>,
    pub clipboard: tokio::sync::Mutex<Option<std::sync::Arc<ClipboardServer>>>,
}

impl WaylandParts {
    /// Stop the watches and the clipboard's source, waiting a moment for their threads.
    pub async fn stop_watches(&self) {
        let mut threads = Vec::new();
        threads.extend(self.damage.as_ref().and_then(DamageWatch::stop_and_take));
        threads.extend(self.events.as_ref().and_then(SwayEvents::stop_and_take));
        if let Ok(mut guard) =
            tokio::time::timeout(Duration::from_secs(2), self.clipboard.lock()).await
        {
            if let Some(server) = guard.take() {
                threads.extend(server.stop_and_take());
            }
        }
        for thread in threads {
            let joined = tokio::task::spawn_blocking(move || thread.join());
            let _ = tokio::time::timeout(Duration::from_secs(2), joined).await;
        }
    }

    pub fn damage_updates(&self) -> watch::Receiver<u64> {
        match &self.damage {
            Some(damage) => damage.damage_updates(),
            None => watch::channel(0).1,
        }
    }

    pub fn drawn(&self) -> Option<Drawn> {
        self.damage.as_ref().map(DamageWatch::drawn)
    }

    pub fn alive(&self) -> bool {
        self.compositor.as_ref().is_none_or(|c| !c.child.exited())
    }
}

/// The pieces of a new Wayland desktop, for `Desktop::start`.
pub(crate) struct Started {
    pub parts: WaylandParts,
    pub backend: WaylandBackend,
    /// Its `WAYLAND_DISPLAY`.
    pub display: String,
    pub attached: bool,
}

/// Start our own sway (`Target::LaunchWayland`) or reach an existing compositor
/// (`Target::AttachWayland`), connect, and start the watches.
pub(crate) async fn start(dir: &Path, target: &Target, limit: Duration) -> Result<Started> {
    let (compositor, socket, display, ipc, env) = match target {
        Target::LaunchWayland { width, height } => {
            let compositor = sway::launch_sway(dir, *width, *height, limit).await?;
            let socket = compositor.wayland_socket.clone();
            let display = compositor.wayland_display.clone();
            let ipc = Some(compositor.ipc.clone());
            let env = compositor.env();
            (Some(compositor), socket, display, ipc, env)
        }
        Target::AttachWayland { display } => {
            let (socket, runtime_dir) = attached_socket(display)?;
            let ipc = sway::find_ipc(&runtime_dir, display)?;
            let mut env = vec![
                (OsString::from("WAYLAND_DISPLAY"), OsString::from(display)),
                (
                    OsString::from("XDG_RUNTIME_DIR"),
                    runtime_dir.clone().into_os_string(),
                ),
            ];
            if let Some(ipc) = &ipc {
                env.push((OsString::from("SWAYSOCK"), ipc.clone().into_os_string()));
            }
            env.extend(sway::TOOLKIT_SWITCHES.map(|(k, v)| (OsString::from(k), OsString::from(v))));
            (None, socket, display.clone(), ipc, env)
        }
        Target::Launch { .. } | Target::Attach { .. } => {
            return Err(DesktopError::invalid("display", "not a Wayland target"))
        }
    };
    let connected = {
        let (socket, ipc) = (socket.clone(), ipc.clone());
        blocking("connecting to the compositor", limit, move || {
            let wayland = Wayland::connect(&socket)?;
            let sway = match &ipc {
                Some(path) => Some(SwayIpc::connect(path, limit)?),
                None => None,
            };
            let deadline = Instant::now() + limit;
            let damage = DamageWatch::start(&socket, deadline)?;
            let events = match &ipc {
                Some(path) => Some(SwayEvents::start(path, limit)?),
                None => None,
            };
            Ok((wayland, sway, damage, events))
        })
        .await
    };
    let (wayland, sway, damage, events) = match connected {
        Ok(parts) => parts,
        Err(e) => {
            if let Some(compositor) = &compositor {
                compositor.stop(Duration::from_millis(500)).await;
            }
            return Err(match (e, target) {
                (DesktopError::Connection(message), Target::AttachWayland { .. }) => {
                    DesktopError::Start {
                        field: "display",
                        message,
                    }
                }
                (e, _) => e,
            });
        }
    };
    let window_updates = merged(
        events.as_ref().map(SwayEvents::updates),
        damage.damage_updates(),
    );
    Ok(Started {
        parts: WaylandParts {
            compositor,
            socket,
            env,
            damage: Some(damage),
            events,
            window_updates,
            clipboard: tokio::sync::Mutex::new(None),
        },
        backend: WaylandBackend {
            wayland,
            sway: sway.map(RefCell::new),
        },
        display,
        attached: matches!(target, Target::AttachWayland { .. }),
    })
}

/// The socket of an existing `WAYLAND_DISPLAY` (a name in `$XDG_RUNTIME_DIR`, or an absolute path),
/// and the runtime directory it is in. Error: no socket there.
fn attached_socket(display: &str) -> Result<(PathBuf, PathBuf)> {
    let socket = if display.starts_with('/') {
        PathBuf::from(display)
    } else {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").ok_or_else(|| DesktopError::Start {
            field: "display",
            message: format!(
                "WAYLAND_DISPLAY {display:?} is a name in XDG_RUNTIME_DIR, which is not set here; give the socket's absolute path"
            ),
        })?;
        sway::wayland_socket(Path::new(&runtime), display)
    };
    use std::os::unix::fs::FileTypeExt;
    match std::fs::metadata(&socket) {
        Ok(meta) if meta.file_type().is_socket() => {}
        Ok(_) => {
            return Err(DesktopError::Start {
                field: "display",
                message: format!("{} is not a socket", socket.display()),
            })
        }
        Err(e) => {
            return Err(DesktopError::Start {
                field: "display",
                message: format!(
                    "no Wayland compositor at {} (WAYLAND_DISPLAY {display:?}): {e}",
                    socket.display()
                ),
            })
        }
    }
    let runtime_dir = socket
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    Ok((socket, runtime_dir))
}

/// One counter that moves whenever either of two does (a task forwards them; it ends when both
/// senders are gone).
fn merged(a: Option<watch::Receiver<u64>>, mut b: watch::Receiver<u64>) -> watch::Receiver<u64> {
    let (tx, rx) = watch::channel(0u64);
    tokio::spawn(async move {
        let mut a = a;
        loop {
            let changed = match a.as_mut() {
                Some(a) => tokio::select! {
                    r = a.changed() => r.is_ok(),
                    r = b.changed() => r.is_ok(),
                },
                None => b.changed().await.is_ok(),
            };
            if !changed || tx.is_closed() {
                return;
            }
            tx.send_modify(|n| *n += 1);
        }
    });
    rx
}
