//! A private headless sway: its runtime directory, its configuration, starting it, knowing when it
//! is ready, and the environment programs need to show windows on it.
//!
//! Ready without polling: sway opens its configuration right after it starts listening on its IPC
//! socket, so an inotify watch on the configuration file says the socket accepts connections; a
//! `get_version` request then returns once sway's event loop runs.
//!
//! When we are root sway runs as `nobody` ([`super::user`]), in a runtime directory owned by it.
//! Programs we start run as root: they get a runtime directory of their own (so Qt does not warn
//! about its owner, and what they put there is theirs), holding a link to sway's socket under the
//! same name, so `$XDG_RUNTIME_DIR/$WAYLAND_DISPLAY` reaches it however a toolkit builds the path.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::error::{DesktopError, Result};
use crate::process::{log_tail, Child, Launch};
use crate::sway::events::SwayEvents;
use crate::sway::ipc::SwayIpc;
use crate::sway::user::{sway_user, Credentials, SwayUser};

/// The one output of a headless sway.
pub const OUTPUT: &str = "HEADLESS-1";

/// What to start.
#[derive(Debug, Clone, PartialEq)]
pub struct SwaySpec {
    /// The output's size in physical pixels (what a screenshot has).
    pub width: u32,
    pub height: u32,
    /// The output's scale: windows are laid out in logical pixels, `width / scale` wide.
    pub scale: f64,
}

/// A private sway that is up and answering.
#[derive(Debug)]
pub struct Compositor {
    pub child: Child,
    /// The Wayland socket (absolute path).
    pub wayland_socket: PathBuf,
    /// Its name in the runtime directory: the `WAYLAND_DISPLAY` of programs on it.
    pub wayland_display: String,
    /// sway's `XDG_RUNTIME_DIR` (0700, owned by `uid`).
    pub runtime_dir: PathBuf,
    /// The `XDG_RUNTIME_DIR` of programs we start on it: `runtime_dir` when sway runs as us,
    /// else our own (0700) with a link named `wayland_display` to the socket.
    pub program_runtime_dir: PathBuf,
    /// sway's IPC socket (`SWAYSOCK`).
    pub ipc: PathBuf,
    /// The user sway runs as.
    pub uid: u32,
    /// sway's standard output and error.
    pub log: PathBuf,
    /// Directories we made outside the caller's `dir`, removed when this goes.
    own_dirs: Vec<PathBuf>,
}

/// What sends GTK, Qt, SDL, Firefox and Electron programs to Wayland rather than X11.
pub const TOOLKIT_SWITCHES: [(&str, &str); 5] = [
    ("GDK_BACKEND", "wayland"),
    ("QT_QPA_PLATFORM", "wayland"),
    ("SDL_VIDEODRIVER", "wayland"),
    ("MOZ_ENABLE_WAYLAND", "1"),
    ("ELECTRON_OZONE_PLATFORM_HINT", "wayland"),
];

/// Variables that point a program at another display or compositor; programs on ours never get
/// them from their base environment.
pub const OTHER_DISPLAY_VARS: &[&str] = &[
    "DISPLAY",
    "XAUTHORITY",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "SWAYSOCK",
    "I3SOCK",
    "XDG_RUNTIME_DIR",
];

impl Compositor {
    /// What a program needs to show its windows here (natively, not through X11). `DISPLAY` must
    /// be unset as well: see [`Compositor::program_env`].
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        let mut env = vec![
            (
                OsString::from("WAYLAND_DISPLAY"),
                OsString::from(&self.wayland_display),
            ),
            (
                OsString::from("XDG_RUNTIME_DIR"),
                self.program_runtime_dir.clone().into_os_string(),
            ),
            (
                OsString::from("SWAYSOCK"),
                self.ipc.clone().into_os_string(),
            ),
        ];
        for (key, value) in TOOLKIT_SWITCHES {
            env.push((OsString::from(key), OsString::from(value)));
        }
        env
    }

    /// The whole environment of a program here: `base` (else this process's) without
    /// [`OTHER_DISPLAY_VARS`], then [`Compositor::env`]. For a program started with a cleared
    /// environment.
    pub fn program_env(&self, base: Option<&[(OsString, OsString)]>) -> Vec<(OsString, OsString)> {
        let base: Vec<(OsString, OsString)> = match base {
            Some(vars) => vars.to_vec(),
            None => std::env::vars_os().collect(),
        };
        let ours = self.env();
        let mut env: Vec<(OsString, OsString)> = base
            .into_iter()
            .filter(|(key, _)| {
                !OTHER_DISPLAY_VARS.iter().any(|var| key == var)
                    && !ours.iter().any(|(k, _)| k == key)
            })
            .collect();
        env.extend(ours);
        env
    }

    /// A new request connection to its IPC; each call may take at most `limit`.
    pub fn connect_ipc(&self, limit: Duration) -> Result<SwayIpc> {
        SwayIpc::connect(&self.ipc, limit)
    }

    /// Count its window and workspace events from now on.
    pub fn events(&self, limit: Duration) -> Result<SwayEvents> {
        SwayEvents::start(&self.ipc, limit)
    }

    /// End sway (TERM, then KILL after `grace`) and what it started (swaybg), and remove the
    /// directories it used.
    pub async fn stop(&self, grace: Duration) {
        self.child.stop(grace).await;
        self.remove_dirs();
    }

    fn remove_dirs(&self) {
        for dir in &self.own_dirs {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Drop for Compositor {
    fn drop(&mut self) {
        self.remove_dirs();
    }
}

/// Start sway headless at `width`x`height` (scale 1) with its runtime directory under `dir`, and
/// wait (at most `limit`) until it answers on its IPC socket.
pub async fn launch_sway(
    dir: &Path,
    width: u32,
    height: u32,
    limit: Duration,
) -> Result<Compositor> {
    let spec = SwaySpec {
        width,
        height,
        scale: 1.0,
    };
    launch_sway_with(dir, &spec, limit).await
}

/// [`launch_sway`] with every choice: the output's scale too.
pub async fn launch_sway_with(dir: &Path, spec: &SwaySpec, limit: Duration) -> Result<Compositor> {
    let started = Instant::now();
    check_spec(spec)?;
    let user = sway_user(&Credentials::of_this_process())?;
    let (runtime_dir, own_dirs) = make_runtime_dir(dir, user)?;
    let log = dir.join("sway.log");
    let config = runtime_dir.join("sway.config");
    write_owned(&config, config_text(spec).as_bytes(), user)?;
    let ipc = runtime_dir.join("sway-ipc.sock");
    // Before sway starts, so its reading of the configuration cannot be missed.
    let config_read = ConfigRead::watch(&config)?;

    let mut env: Vec<(OsString, OsString)> = [
        ("WLR_BACKENDS", "headless"),
        ("WLR_RENDERER", "pixman"),
        ("WLR_LIBINPUT_NO_DEVICES", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect();
    env.push(("XDG_RUNTIME_DIR".into(), runtime_dir.clone().into()));
    // nobody's home does not exist; sway and swaybg need none, but give them a writable one.
    env.push(("HOME".into(), runtime_dir.clone().into()));
    // sway listens here when the path is free: no guessing its name from its pid.
    env.push(("SWAYSOCK".into(), ipc.clone().into()));
    for key in ["PATH", "LANG", "LC_ALL", "LC_CTYPE"] {
        if let Some(value) = std::env::var_os(key) {
            env.push((key.into(), value));
        }
    }
    let launch = Launch {
        argv: vec![
            "sway".to_owned(),
            "--config".to_owned(),
            config.to_string_lossy().into_owned(),
        ],
        env,
        env_clear: true,
        cwd: Some(runtime_dir.clone()),
        log: log.clone(),
        keep_fd: None,
    };
    let spawned = match user {
        SwayUser::Ourselves { .. } => Child::spawn(launch).await,
        SwayUser::Unprivileged { uid, gid } => Child::spawn_as(launch, (uid, gid)).await,
    };
    let child = match spawned {
        Ok(child) => child,
        Err(e) => {
            remove_all(&own_dirs);
            return Err(start_error(&e));
        }
    };

    let fail = |message: String| DesktopError::Start {
        field: "wayland",
        message: format!("{message}; its log says: {}", log_tail(&log, 600)),
    };
    let waited = tokio::select! {
        read = config_read.wait() => read.map_err(|why| fail(format!("cannot watch sway start: {why}"))),
        _ = child.wait_exit(limit) => Err(if child.exited() {
            fail("sway exited while starting".into())
        } else {
            DesktopError::Timeout { what: "starting sway".into(), limit }
        }),
    };
    let answered = match waited {
        Ok(()) => {
            let left = limit.saturating_sub(started.elapsed());
            let path = ipc.clone();
            tokio::task::spawn_blocking(move || SwayIpc::connect(&path, left)?.version())
                .await
                .unwrap_or_else(|e| Err(DesktopError::Io(format!("the IPC check failed: {e}"))))
                .map_err(|e| match e {
                    DesktopError::Timeout { .. } => DesktopError::Timeout {
                        what: "starting sway".into(),
                        limit,
                    },
                    other if child.exited() => {
                        fail(format!("sway exited while starting ({other})"))
                    }
                    other => other,
                })
        }
        Err(e) => Err(e),
    };
    let wayland = answered.and_then(|_| {
        wayland_socket_in(&runtime_dir).ok_or_else(|| {
            fail(format!(
                "sway made no Wayland socket in {}",
                runtime_dir.display()
            ))
        })
    });
    let wayland_display = match wayland {
        Ok(name) => name,
        Err(e) => {
            child.stop(Duration::from_millis(200)).await;
            remove_all(&own_dirs);
            return Err(e);
        }
    };
    let wayland_socket = runtime_dir.join(&wayland_display);
    let program_runtime_dir = match user {
        SwayUser::Ourselves { .. } => runtime_dir.clone(),
        SwayUser::Unprivileged { .. } => {
            match program_runtime_dir(dir, &wayland_display, &wayland_socket) {
                Ok(path) => path,
                Err(e) => {
                    child.stop(Duration::from_millis(200)).await;
                    remove_all(&own_dirs);
                    return Err(e);
                }
            }
        }
    };
    Ok(Compositor {
        child,
        wayland_socket,
        wayland_display,
        runtime_dir,
        program_runtime_dir,
        ipc,
        uid: user.uid(),
        log,
        own_dirs,
    })
}

fn check_spec(spec: &SwaySpec) -> Result<()> {
    for (name, side) in [("width", spec.width), ("height", spec.height)] {
        if !(16..=16384).contains(&side) {
            return Err(DesktopError::invalid(
                "size",
                format!("{name} {side} must be 16-16384 pixels"),
            ));
        }
    }
    if !(spec.scale.is_finite() && (0.25..=8.0).contains(&spec.scale)) {
        return Err(DesktopError::invalid(
            "scale",
            format!("scale {} must be 0.25-8", spec.scale),
        ));
    }
    Ok(())
}

/// Why sway could not be started, for the caller: a missing sway says what to install.
pub fn start_error(e: &std::io::Error) -> DesktopError {
    let message = if e.kind() == std::io::ErrorKind::NotFound {
        "cannot start sway: it is not installed (not found on PATH); install the sway package \
         (Debian and Ubuntu: apt-get install sway)"
            .to_owned()
    } else {
        format!("cannot start sway: {e}")
    };
    DesktopError::Start {
        field: "wayland",
        message,
    }
}

/// The configuration of a private sway.
///
/// Windows float: each keeps the size it asks for, centred, and a new window never moves or
/// resizes the others (tiling would halve the first window when a second appears), so what an
/// agent learnt about a window's place stays true until it acts on it; the window list and
/// screenshots are told apart by stacking, as on an X11 desktop. No borders, no title bars, no
/// bar: the screen holds only the programs' own pixels. The focus follows only clicks and
/// requests (not the pointer's wanderings), and a program asking for the focus gets it.
pub fn config_text(spec: &SwaySpec) -> String {
    format!(
        "# Written by screenpilot: a private headless desktop for automation.\n\
         output {OUTPUT} resolution {w}x{h} scale {scale} bg #204060 solid_color\n\
         xwayland disable\n\
         default_border none\n\
         default_floating_border none\n\
         focus_follows_mouse no\n\
         mouse_warping none\n\
         focus_on_window_activation focus\n\
         floating_minimum_size -1 x -1\n\
         floating_maximum_size -1 x -1\n\
         for_window [shell=\".*\"] floating enable\n",
        w = spec.width,
        h = spec.height,
        scale = spec.scale,
    )
}

/// Make sway's runtime directory (0700, owned by the user it runs as) under `dir`; when that
/// user cannot reach into `dir`, under the temporary directory instead (then it is also in the
/// returned list of directories to remove).
fn make_runtime_dir(dir: &Path, user: SwayUser) -> Result<(PathBuf, Vec<PathBuf>)> {
    let (uid, gid) = match user {
        SwayUser::Ourselves { .. } => {
            return Ok((create_private(&dir.join("wayland"), None)?, Vec::new()))
        }
        SwayUser::Unprivileged { uid, gid } => (uid, gid),
    };
    // Let sway's group (and no one else) pass through our private directory.
    if let Ok(meta) = std::fs::metadata(dir) {
        // SAFETY: geteuid cannot fail.
        if meta.uid() == unsafe { libc::geteuid() } && !traversable(&meta, uid, gid) {
            let _ = std::os::unix::fs::chown(dir, None, Some(gid));
            let mode = meta.permissions().mode() | 0o010;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode));
        }
    }
    if path_traversable(dir, uid, gid) {
        return Ok((
            create_private(&dir.join("wayland"), Some((uid, gid)))?,
            Vec::new(),
        ));
    }
    let mut bytes = [0u8; 6];
    crate::server::random_bytes(&mut bytes)?;
    let suffix: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let path = std::env::temp_dir().join(format!("screenpilot-sway-{suffix}"));
    let path = create_private(&path, Some((uid, gid)))?;
    Ok((path.clone(), vec![path]))
}

/// Create a 0700 directory, owned by `owner` when given.
fn create_private(path: &Path, owner: Option<(u32, u32)>) -> Result<PathBuf> {
    let io = |e: std::io::Error| DesktopError::Io(format!("cannot create {}: {e}", path.display()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(path)
        .map_err(io)?;
    if let Some((uid, gid)) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(io)?;
    }
    Ok(path.to_path_buf())
}

/// May `uid`/`gid` (without other groups) search the directory `meta` describes?
fn traversable(meta: &std::fs::Metadata, uid: u32, gid: u32) -> bool {
    let mode = meta.permissions().mode();
    if meta.uid() == uid {
        mode & 0o100 != 0
    } else if meta.gid() == gid {
        mode & 0o010 != 0
    } else {
        mode & 0o001 != 0
    }
}

/// May `uid`/`gid` reach into `path` (search it and every directory above it)?
fn path_traversable(path: &Path, uid: u32, gid: u32) -> bool {
    let Ok(path) = path.canonicalize() else {
        return false;
    };
    path.ancestors().all(|dir| {
        std::fs::metadata(dir)
            .map(|meta| traversable(&meta, uid, gid))
            .unwrap_or(false)
    })
}

/// Write `bytes` to a new 0600 file owned by the user sway runs as.
fn write_owned(path: &Path, bytes: &[u8], user: SwayUser) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let io = |e: std::io::Error| DesktopError::Io(format!("cannot write {}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    file.write_all(bytes).map_err(io)?;
    if let SwayUser::Unprivileged { uid, gid } = user {
        std::os::unix::fs::chown(path, Some(uid), Some(gid)).map_err(io)?;
    }
    Ok(())
}

/// Our own runtime directory for programs, with a link to sway's socket under its name.
fn program_runtime_dir(dir: &Path, name: &str, socket: &Path) -> Result<PathBuf> {
    let path = create_private(&dir.join("programs-runtime"), None)?;
    std::os::unix::fs::symlink(socket, path.join(name)).map_err(|e| {
        DesktopError::Io(format!(
            "cannot link {} into {}: {e}",
            socket.display(),
            path.display()
        ))
    })?;
    Ok(path)
}

/// The name of the Wayland socket in a runtime directory ("wayland-1"), when there is one.
fn wayland_socket_in(runtime_dir: &Path) -> Option<String> {
    use std::os::unix::fs::FileTypeExt;
    let mut names: Vec<String> = std::fs::read_dir(runtime_dir)
        .ok()?
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_socket()))
        .filter_map(|entry| entry.file_name().into_string().ok())
        .filter(|name| name.starts_with("wayland-"))
        .collect();
    names.sort();
    names.into_iter().next()
}

fn remove_all(dirs: &[PathBuf]) {
    for dir in dirs {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// An inotify watch for "sway opens its configuration", which it does right after it starts
/// listening on its IPC socket. (Not its closing: sway 1.7 keeps the file open.)
struct ConfigRead {
    fd: OwnedFd,
}

impl ConfigRead {
    fn watch(config: &Path) -> Result<ConfigRead> {
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain syscall; the result is a new descriptor we own, or -1.
        let raw = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        if raw < 0 {
            return Err(DesktopError::Io(format!(
                "inotify: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: a fresh descriptor nobody else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let path = std::ffi::CString::new(config.as_os_str().as_bytes())
            .map_err(|_| DesktopError::Io("the config path holds a NUL byte".into()))?;
        // SAFETY: a valid inotify descriptor and a NUL-terminated path.
        let watch =
            unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), libc::IN_OPEN) };
        if watch < 0 {
            return Err(DesktopError::Io(format!(
                "inotify on {}: {}",
                config.display(),
                std::io::Error::last_os_error()
            )));
        }
        Ok(ConfigRead { fd })
    }

    /// Until sway opened the file.
    async fn wait(self) -> std::result::Result<(), String> {
        // SAFETY: the AsyncFd owns the descriptor, so it stays the same one while registered.
        let fd = unsafe {
            tokio::io::unix::AsyncFd::register_with_interest(self.fd, tokio::io::Interest::READABLE)
        }
        .map_err(|e| format!("cannot watch inotify: {e}"))?;
        loop {
            let mut guard = fd.readable().await.map_err(|e| e.to_string())?;
            let mut buf = [0u8; 4096];
            let read = guard.try_io(|inner| {
                // SAFETY: reading into our buffer from the descriptor the AsyncFd owns.
                let n = unsafe {
                    libc::read(
                        inner.get_ref().as_raw_fd(),
                        buf.as_mut_ptr().cast(),
                        buf.len(),
                    )
                };
                if n < 0 {
                    Err(std::io::Error::last_os_error())
                } else {
                    Ok(n as usize)
                }
            });
            match read {
                // The only watch is for IN_OPEN on the file: any event is it.
                Ok(Ok(n)) if n > 0 => return Ok(()),
                Ok(Ok(_)) => return Err("inotify closed".into()),
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(Err(e)) => return Err(format!("reading inotify failed: {e}")),
                Err(_would_block) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_config_sizes_the_output_and_floats_every_window() {
        let text = config_text(&SwaySpec {
            width: 1280,
            height: 800,
            scale: 2.0,
        });
        assert!(
            text.contains("output HEADLESS-1 resolution 1280x800 scale 2 "),
            "{text}"
        );
        assert!(text.contains("xwayland disable"));
        assert!(text.contains("for_window [shell=\".*\"] floating enable"));
        assert!(!text.contains("bar {"));
    }

    #[test]
    fn a_missing_sway_says_what_to_install() {
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        let err = start_error(&missing);
        assert_eq!(err.field(), Some("wayland"));
        assert!(err.to_string().contains("apt-get install sway"), "{err}");
        let other = start_error(&std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert!(!other.to_string().contains("install"), "{other}");
    }

    #[test]
    fn sizes_and_scales_out_of_range_are_refused() {
        let spec = |width, scale| SwaySpec {
            width,
            height: 600,
            scale,
        };
        assert_eq!(check_spec(&spec(8, 1.0)).unwrap_err().field(), Some("size"));
        assert_eq!(
            check_spec(&spec(800, 0.0)).unwrap_err().field(),
            Some("scale")
        );
        assert_eq!(
            check_spec(&spec(800, f64::NAN)).unwrap_err().field(),
            Some("scale")
        );
        assert!(check_spec(&spec(800, 1.5)).is_ok());
    }
}
