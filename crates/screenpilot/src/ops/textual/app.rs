//! A Textual app under screenpilot: a real session running the probe, and the link to it.
//!
//! Starting checks the prerequisites as it goes (the interpreter exists, Textual imports and is new
//! enough, the file gives exactly one app), each failure a clear error naming the field to fix. Open
//! apps are kept by session id beside the session registry; an entry whose session was closed some other
//! way (`close`, idle expiry) is dropped on the next look.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use screenpilot_screen::Size;
use screenpilot_session::wait::{self, Condition, WaitOptions};
use screenpilot_session::{
    BaseEnv, ReadOptions, Registry, Session, SessionError, SessionId, SpawnSpec,
};

use super::link::{AppExit, Link, LinkError, Rendezvous};
use super::probe;
use crate::ops::kit::error::{ErrorCode, OpError};
use crate::paths::Paths;

/// How long a stopping app may take to exit by itself before its session is closed hard.
const EXIT_GRACE: Duration = Duration::from_secs(5);

pub struct TextualApp {
    pub session: Arc<Session>,
    pub app: PathBuf,
    pub python: String,
    pub python_version: String,
    pub textual_version: String,
    pub app_class: String,
    /// One call at a time drives the app.
    pub link: tokio::sync::Mutex<Link>,
}

impl TextualApp {
    pub fn sid(&self) -> &str {
        self.session.sid.as_str()
    }

    /// The screen text now, from our emulator.
    pub fn screen_text(&self) -> String {
        self.session.read(ReadOptions::default()).text
    }

    /// What `details` says about the app and its interpreter.
    pub fn describe(&self) -> Value {
        json!({
            "app": self.app,
            "app_class": self.app_class,
            "python": self.python,
            "python_version": self.python_version,
            "textual_version": self.textual_version,
        })
    }
}

type Apps = Mutex<HashMap<String, Arc<TextualApp>>>;

/// Open apps by sid (the operation context holds only the session registry).
static OPEN: LazyLock<Apps> = LazyLock::new(Apps::default);

fn open_apps() -> std::sync::MutexGuard<'static, HashMap<String, Arc<TextualApp>>> {
    OPEN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The open app named `sid`, if its session is still the registry's.
pub fn find(registry: &Registry, sid: &SessionId) -> Result<Arc<TextualApp>, OpError> {
    forget_closed(registry);
    let session = registry.get(sid.as_str()).map_err(|e| match e {
        SessionError::UnknownSession(_) => OpError::invalid(
            "session",
            format!("no open session named '{sid}'; open one with app and session, or see `list`"),
        ),
        other => other.into(),
    })?;
    let found = open_apps().get(sid.as_str()).cloned();
    match found {
        Some(app) if Arc::ptr_eq(&app.session, &session) => Ok(app),
        _ => Err(OpError::invalid(
            "session",
            format!("session '{sid}' is a terminal session, not a Textual app; drive it with send_keys and mouse"),
        )),
    }
}

pub fn keep(app: Arc<TextualApp>) {
    open_apps().insert(app.sid().to_owned(), app);
}

pub fn forget(sid: &str) {
    open_apps().remove(sid);
}

/// Drop entries whose session the registry no longer has.
fn forget_closed(registry: &Registry) {
    open_apps().retain(|sid, app| {
        registry
            .get(sid)
            .is_ok_and(|session| Arc::ptr_eq(&session, &app.session))
    });
}

/// A sid for a one-shot run: `textual-N`.
pub fn one_shot_sid(registry: &Registry) -> SessionId {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed) + 1;
        let sid = SessionId::generate("textual", n);
        if registry.get(sid.as_str()).is_err() {
            return sid;
        }
    }
}

/// What starting needs.
pub struct Launch<'a> {
    pub sid: SessionId,
    pub app: &'a PathBuf,
    pub python: &'a str,
    pub size: Size,
    pub limit: Duration,
    /// The environment the interpreter starts from (the caller's); it is looked up on its PATH.
    pub env: &'a [(String, String)],
}

/// Closes a session unless disarmed: a start that fails, or a call that is cancelled or times out,
/// never leaves an app behind.
pub struct CloseGuard {
    registry: Arc<Registry>,
    sid: Option<String>,
}

impl CloseGuard {
    pub fn new(registry: Arc<Registry>, sid: &str) -> CloseGuard {
        CloseGuard {
            registry,
            sid: Some(sid.to_owned()),
        }
    }

    pub fn disarm(&mut self) {
        self.sid = None;
    }
}

impl Drop for CloseGuard {
    fn drop(&mut self) {
        let Some(sid) = self.sid.take() else { return };
        forget(&sid);
        let registry = self.registry.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let _ = registry.close(&sid).await;
            });
        }
    }
}

fn startup_error(code: &str, field: &str, message: String) -> OpError {
    OpError {
        code: ErrorCode::parse(code),
        message,
        field: Some(field.to_owned()),
    }
}

/// Start the app: spawn the probe in a new session, wait for the app to be ready and its first frame
/// drawn. On failure the session is closed again.
pub async fn start(
    registry: &Arc<Registry>,
    launch: Launch<'_>,
) -> Result<Arc<TextualApp>, OpError> {
    let paths = Paths::from_env();
    let setup = |e: std::io::Error| {
        OpError::new(
            ErrorCode::TextualSetup,
            format!("cannot prepare {}: {e}", paths.dir.display()),
        )
    };
    paths.ensure_private_dir().map_err(setup)?;
    let probe_dir = probe::install(&paths.dir).map_err(setup)?;
    // One socket per launch: named by the session alone, two launches of the same sid in one
    // directory (two `screenpilot test` runs, a daemon and a library caller) took each other's.
    static LAUNCHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let launch_no = LAUNCHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let socket = paths
        .dir
        .join(format!("textual-{}-{launch_no}.sock", std::process::id()));
    if !super::link::fits_socket_path(&socket) {
        return Err(OpError::new(ErrorCode::TextualSetup,
            format!(
                "the socket path {} is too long for a unix socket; set SCREENPILOT_DIR to a shorter directory",
                socket.display()
            ),
        ));
    }
    let rendezvous = Rendezvous::bind(socket).map_err(setup)?;
    // The probe first, then the caller's own PYTHONPATH (never the daemon's).
    let mut python_path = probe_dir.to_string_lossy().into_owned();
    let callers = launch.env.iter().find(|(key, _)| key == "PYTHONPATH");
    if let Some((_, existing)) = callers.filter(|(_, value)| !value.is_empty()) {
        python_path.push(':');
        python_path.push_str(existing);
    }
    let cwd = launch
        .app
        .parent()
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/"));
    let spec = SpawnSpec {
        sid: Some(launch.sid.clone()),
        argv: vec![
            launch.python.to_owned(),
            "-m".into(),
            probe::MODULE.into(),
            launch.app.to_string_lossy().into_owned(),
        ],
        cwd,
        base_env: BaseEnv::Exactly(launch.env.to_vec()),
        env: vec![
            ("PYTHONPATH".into(), python_path),
            (
                probe::SOCKET_ENV.into(),
                rendezvous.path.to_string_lossy().into_owned(),
            ),
            // In-band resize is never advertised; this keeps Textual from asking for pixel mouse too.
            ("TEXTUAL_SMOOTH_SCROLL".into(), "0".into()),
        ],
        size: launch.size,
        detect_child_exit: true,
        images: false,
        record: None,
    };
    let session = registry.spawn(spec).map_err(|e| match e {
        SessionError::Spawn { message, .. } => startup_error(
            "python_unavailable",
            "python",
            format!(
                "python: cannot start the interpreter {:?}: {message}. Install Python 3.9+ and Textual ({} -m pip install \"textual>=1.0\"), or pass python: \"/path/to/python\"",
                launch.python, launch.python
            ),
        ),
        SessionError::DuplicateSession(sid) => OpError {
            code: ErrorCode::DuplicateSession,
            message: format!(
                "session: a session named '{sid}' is already open; to act on it give session without app, or pick another name"
            ),
            field: Some("session".into()),
        },
        other => other.into(),
    })?;
    session.set_kind("textual");
    let mut guard = CloseGuard::new(registry.clone(), session.sid.as_str());

    let failed = |session: &Session, why: &str| {
        let state = session.read(ReadOptions::default());
        let status = match (state.exit_code, state.signal) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(signal)) => format!("signal {signal}"),
            (None, None) => "still running".into(),
        };
        OpError::new(
            ErrorCode::AppFailed,
            format!(
                "app: {why} ({status}); the terminal showed:\n{}",
                state.text.trim_end()
            ),
        )
    };
    let accepted = tokio::select! {
        link = rendezvous.accept(session.pid) => link.map_err(|e| OpError::new(ErrorCode::TextualSetup, format!("the probe could not connect: {e}"))),
        _ = wait::wait(&session, &Condition::Exit, WaitOptions { timeout: launch.limit, scrollback: None }) => {
            Err(if session.alive() {
                failed(&session, "the interpreter did not start the probe in time")
            } else {
                failed(&session, &format!("{} exited before the probe started; is it Python 3.9 or newer?", launch.python))
            })
        }
    };
    let mut link = accepted?;
    drop(rendezvous);
    let ready = match link.ready(launch.limit).await {
        Ok(ready) => ready,
        Err(LinkError::Probe { code, message }) => {
            let field = if code == "app_load_failed" {
                "app"
            } else {
                "python"
            };
            return Err(startup_error(&code, field, message));
        }
        Err(LinkError::Timeout) => {
            return Err(failed(&session, "the app was not ready in time"));
        }
        Err(LinkError::Exited(_)) | Err(LinkError::Io(_)) => {
            // Let the last output reach the screen before quoting it.
            let _ = wait::wait(
                &session,
                &Condition::Exit,
                WaitOptions {
                    timeout: Duration::from_secs(2),
                    scrollback: None,
                },
            )
            .await;
            return Err(failed(&session, "the app exited while starting"));
        }
    };
    let text = |key: &str| {
        ready
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    let app = TextualApp {
        session: session.clone(),
        app: launch.app.clone(),
        python: launch.python.to_owned(),
        python_version: text("python"),
        textual_version: text("textual"),
        app_class: text("app"),
        link: tokio::sync::Mutex::new(link),
    };
    guard.disarm();
    Ok(Arc::new(app))
}

/// How a stopped app ended.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Ended {
    #[serde(flatten)]
    pub app: AppExit,
    /// The interpreter's exit status.
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
}

/// Ask the app to exit, wait for it (bounded), then close its session. Returns how it ended.
pub async fn stop(registry: &Registry, app: &TextualApp, link: &mut Link) -> Ended {
    let mut report = match &link.exited {
        Some(exit) => exit.clone(),
        None => match link.request("exit", json!({}), EXIT_GRACE).await {
            Err(LinkError::Exited(exit)) => exit,
            _ => link.wait_exit(EXIT_GRACE).await,
        },
    };
    let _ = wait::wait(
        &app.session,
        &Condition::Exit,
        WaitOptions {
            timeout: EXIT_GRACE,
            scrollback: None,
        },
    )
    .await;
    forget(app.sid());
    let info = registry.close(app.sid()).await.ok();
    let exit = app.session.exit_info();
    Ended {
        app: report.take().unwrap_or_default(),
        exit_code: exit
            .and_then(|e| e.exit_code)
            .or(info.as_ref().and_then(|i| i.exit_code)),
        signal: exit.and_then(|e| e.signal).or(info.and_then(|i| i.signal)),
    }
}
