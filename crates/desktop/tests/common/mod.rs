//! Shared by the desktop tests: start real desktops (Xvfb, openbox, xterm), wait on events only.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use screenpilot_desktop::{Desktop, DesktopSpec, Target, WindowManager};

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
        let dir = std::env::temp_dir().join(format!(
            "sp-desktop-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        ));
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
