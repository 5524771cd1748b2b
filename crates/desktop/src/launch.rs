//! Starting another program on a running desktop, returning once its first window is shown with
//! the keyboard: the same wait `Desktop::start` does for the program given at start (`ready`), and
//! the same environment ([`Desktop::program_environment`]). The program is the desktop's: it runs
//! in its own process group, and `close` ends it with the desktop.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use crate::desktop::Desktop;
use crate::desktop_entry;
use crate::error::{DesktopError, Result};
use crate::process::{Child, Launch};
use crate::ready::{self, FocusBy};
use crate::x11::WindowInfo;

/// What to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// A command line, already split into words (looked up on the environment's `PATH`).
    Command(Vec<String>),
    /// A desktop entry by name: `mousepad`, `org.xfce.mousepad`, `xterm.desktop`; run by its `Exec`
    /// line without file arguments (see `desktop_entry`).
    DesktopEntry(String),
}

/// A program started on a desktop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Launched {
    /// Its process id (the leader of its own process group).
    pub pid: i32,
    /// What was run.
    pub argv: Vec<String>,
    /// Its first window, shown and focused.
    pub window: WindowInfo,
    /// Its stdout and stderr.
    pub log: PathBuf,
}

impl Desktop {
    /// Start `program` on this desktop and wait (at most the desktop's ready limit) until its first
    /// window is shown with the keyboard. A program that ends first, or shows no window in time, is
    /// stopped and the error says what happened (field `cmd`, or `app` for a desktop entry).
    pub async fn launch(&self, program: Program) -> Result<Launched> {
        if self.is_closed() {
            return Err(DesktopError::Closed);
        }
        let env = self.program_environment();
        let (argv, cwd, field) = match program {
            Program::Command(argv) => {
                if argv.first().is_none_or(|p| p.is_empty()) {
                    return Err(DesktopError::invalid("cmd", "no program given"));
                }
                (argv, self.program_cwd().cloned(), "cmd")
            }
            Program::DesktopEntry(name) => {
                let entry = desktop_entry::resolve(&name, &env)?;
                (entry.argv, entry.cwd.or(self.program_cwd().cloned()), "app")
            }
        };
        let (before, wm) = self
            .run("looking at the display", self.step_timeout, |x| {
                Ok((x.windows()?, x.focus_by_window_manager()?))
            })
            .await?;
        let before: HashSet<u32> = before.iter().map(|w| w.id).collect();
        let log = self.next_program_log();
        let launch = Launch {
            argv: argv.clone(),
            env,
            env_clear: true,
            cwd,
            log: log.clone(),
            keep_fd: None,
        };
        let child = match Child::spawn(launch).await {
            Ok(child) => Arc::new(child),
            Err(e) => {
                let name = argv.first().cloned().unwrap_or_default();
                let message = if e.kind() == std::io::ErrorKind::NotFound {
                    format!("program {name:?} was not found on PATH")
                } else {
                    format!("cannot start {name:?}: {e}")
                };
                return Err(DesktopError::Start { field, message });
            }
        };
        self.adopt(child.clone());
        if !self.watches_windows() {
            return Err(DesktopError::WindowNotReady {
                field,
                message: format!(
                    "{} started (pid {}), but this display cannot be watched for its window",
                    child.program, child.pid
                ),
            });
        }
        let window = ready::program_window(
            self,
            &child,
            &log,
            &before,
            FocusBy::of(wm),
            self.ready_timeout(),
        )
        .await;
        match window {
            Ok(window) => Ok(Launched {
                pid: child.pid,
                argv,
                window,
                log,
            }),
            Err(e) => {
                child.stop(std::time::Duration::from_millis(1000)).await;
                self.forget(&child);
                Err(match e {
                    DesktopError::WindowNotReady { message, .. } => {
                        DesktopError::WindowNotReady { field, message }
                    }
                    other => other,
                })
            }
        }
    }
}
