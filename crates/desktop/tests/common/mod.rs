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
