//! Shared by the desktop tests: start real desktops (Xvfb, openbox, xterm), wait on events only.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use std::time::Instant;

use screenpilot_desktop::{Desktop, DesktopSpec, Target, WindowInfo, WindowManager};

/// Generous: a loaded 2-core machine starting several X programs at once.
pub const READY: Duration = Duration::from_secs(60);
pub const LONG: Duration = Duration::from_secs(30);

/// The programs these tests drive; a missing one is a broken set-up (scripts/test.sh installs them).
pub fn require(programs: &[&str]) {
    for program in programs {
        let found = std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join(program).is_file())
        });
        assert!(
            found,
            "{program} is not installed; scripts/test.sh installs what the desktop tests need"
        );
    }
}

pub fn spec(program: Option<&[&str]>, window_manager: WindowManager) -> DesktopSpec {
    DesktopSpec {
        label: "test".into(),
        target: Target::Launch {
            width: 1024,
            height: 768,
        },
        program: program.map(|argv| argv.iter().map(|a| a.to_string()).collect()),
        program_env: None,
        cwd: None,
        window_manager,
        step_timeout: LONG,
        ready_timeout: READY,
    }
}

pub fn openbox() -> WindowManager {
    WindowManager::Program("openbox".into())
}

pub async fn start(spec: DesktopSpec) -> Desktop {
    match Desktop::start("test".into(), spec).await {
        Ok(desktop) => desktop,
        Err(e) => panic!("the desktop did not start: {} ({e})", e.code()),
    }
}

/// A fresh path in a fresh temporary directory (removed when the returned guard goes).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let dir =
            std::env::temp_dir().join(format!("sp-desktop-{name}-{}-{n}", std::process::id(),));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Wait (woken by the window counter) until the window list satisfies `want`; the last list when
/// it never does within [`LONG`].
pub async fn windows_until(
    desktop: &Desktop,
    want: impl Fn(&[WindowInfo]) -> bool,
) -> Result<Vec<WindowInfo>, Vec<WindowInfo>> {
    let mut updates = desktop.window_updates();
    let deadline = Instant::now() + LONG;
    loop {
        updates.borrow_and_update();
        let windows = desktop.windows().await.expect("windows");
        if want(&windows) {
            return Ok(windows);
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, updates.changed()).await {
            Ok(Ok(())) => {}
            _ => return Err(windows),
        }
    }
}

/// Run `argv` to its end on `desktop` (its display, its environment), feeding it `stdin`; its
/// output, or a panic when it does not end within [`LONG`].
pub async fn run_on(desktop: &Desktop, argv: &[&str], stdin: &[u8]) -> std::process::Output {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .envs(desktop.program_environment())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {argv:?}: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    let data = stdin.to_vec();
    let feed = tokio::spawn(async move {
        let _ = input.write_all(&data).await;
        // Dropping it closes the pipe: the program sees the end of its input.
    });
    let output = tokio::time::timeout(LONG, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{argv:?} did not end within {LONG:?}"))
        .expect("wait for the program");
    let _ = feed.await;
    output
}

/// Run `argv` on `desktop` feeding it `stdin`, for a program that forks into the background (its
/// child keeps no pipe of ours open); the exit status of the part that stays in front.
pub async fn run_detaching(
    desktop: &Desktop,
    argv: &[&str],
    stdin: &[u8],
) -> std::process::ExitStatus {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(argv[0])
        .args(&argv[1..])
        .env_clear()
        .envs(desktop.program_environment())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {argv:?}: {e}"));
    let mut input = child.stdin.take().expect("stdin");
    input.write_all(stdin).await.expect("write stdin");
    drop(input);
    tokio::time::timeout(LONG, child.wait())
        .await
        .unwrap_or_else(|_| panic!("{argv:?} did not end within {LONG:?}"))
        .expect("wait for the program")
}

/// A connection that is told (XFIXES) whenever a selection gets a new owner, or loses it because
/// its window or client went: start it before the change, then wait.
pub struct OwnerWatch {
    conn: screenpilot_desktop::x11rb::rust_connection::RustConnection,
}

impl OwnerWatch {
    pub fn new(desktop: &Desktop, selection: &str) -> OwnerWatch {
        use screenpilot_desktop::x11rb::connection::Connection;
        use screenpilot_desktop::x11rb::protocol::xfixes::{
            ConnectionExt as _, SelectionEventMask,
        };
        use screenpilot_desktop::x11rb::protocol::xproto::ConnectionExt as _;
        let (conn, screen) =
            screenpilot_desktop::connect(&desktop.display, desktop.info().xauthority.as_deref())
                .expect("connect");
        conn.xfixes_query_version(5, 0)
            .expect("xfixes")
            .reply()
            .expect("xfixes version");
        let root = conn.setup().roots[screen].root;
        let atom = conn
            .intern_atom(false, selection.as_bytes())
            .expect("intern")
            .reply()
            .expect("atom")
            .atom;
        let mask = SelectionEventMask::SET_SELECTION_OWNER
            | SelectionEventMask::SELECTION_WINDOW_DESTROY
            | SelectionEventMask::SELECTION_CLIENT_CLOSE;
        conn.xfixes_select_selection_input(root, atom, mask)
            .expect("select")
            .check()
            .expect("select selection input");
        OwnerWatch { conn }
    }

    /// Wait (at most [`LONG`]) until the selection's owner changed; the new owner's window (0 for
    /// none).
    pub async fn changed(self) -> u32 {
        tokio::task::spawn_blocking(move || {
            use screenpilot_desktop::x11rb::connection::Connection;
            use screenpilot_desktop::x11rb::protocol::Event;
            use std::os::fd::AsRawFd;
            let end = Instant::now() + LONG;
            loop {
                while let Some(event) = self.conn.poll_for_event().expect("event") {
                    if let Event::XfixesSelectionNotify(e) = event {
                        return e.owner;
                    }
                }
                let left = end.saturating_duration_since(Instant::now());
                assert!(!left.is_zero(), "the selection got no new owner");
                let mut poll = libc::pollfd {
                    fd: self.conn.stream().as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe {
                    libc::poll(&mut poll, 1, left.as_millis().min(i32::MAX as u128) as i32);
                }
            }
        })
        .await
        .expect("the watch thread")
    }
}

/// This process's environment with the XDG homes in `home` and settings kept in memory, so GTK
/// programs neither read nor leave state in the caller's home (mousepad offers to restore unsaved
/// text from its last run, a dialog instead of the editor).
pub fn home_of_its_own(home: &TempDir) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut env: Vec<_> = std::env::vars_os().collect();
    for (var, dir) in [
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ] {
        env.push((var.into(), home.file(dir).into()));
    }
    env.push(("GSETTINGS_BACKEND".into(), "memory".into()));
    env
}
