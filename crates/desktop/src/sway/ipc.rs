//! Asking sway about its windows and telling it what to do with them, over its IPC socket.
//!
//! Every call is blocking and bounded by the connection's `limit` (one deadline per call). A
//! window is named by its container id (`con_id`), which [`SwayIpc::windows`] reports as
//! [`WindowInfo::id`]; commands address it with the criterion `[con_id=N]`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{DesktopError, Result};
use crate::sway::tree::{self, CommandOutcome, Output, View};
use crate::sway::wire::{Request, Wire};
use crate::x11::{MoveResize, WindowInfo};

/// A connection to sway's IPC socket for requests (never subscribed to events).
#[derive(Debug)]
pub struct SwayIpc {
    wire: Wire,
    path: PathBuf,
    limit: Duration,
}

impl SwayIpc {
    /// Connect to the socket at `path` (`SWAYSOCK`); each later call may take at most `limit`.
    pub fn connect(path: &Path, limit: Duration) -> Result<SwayIpc> {
        Ok(SwayIpc {
            wire: Wire::connect(path)?,
            path: path.to_path_buf(),
            limit,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// sway's version string ("1.7"): the cheapest round trip, so also "is it answering?".
    pub fn version(&mut self) -> Result<String> {
        #[derive(serde::Deserialize)]
        struct Version {
            human_readable: String,
        }
        let body = self.wire.call(Request::GetVersion, "", self.limit)?;
        let version: Version = serde_json::from_slice(&body)
            .map_err(|e| DesktopError::Compositor(format!("unreadable get_version answer: {e}")))?;
        Ok(version.human_readable)
    }

    /// Every window, with what only sway knows (shell, floating, workspace).
    pub fn views(&mut self) -> Result<Vec<View>> {
        let body = self.wire.call(Request::GetTree, "", self.limit)?;
        tree::views(&body)
    }

    /// Every window (minimised ones too). Coordinates are layout coordinates: screen pixels on an
    /// output of scale 1, logical pixels (physical / scale) on a scaled one.
    pub fn windows(&mut self) -> Result<Vec<WindowInfo>> {
        Ok(self.views()?.into_iter().map(|view| view.info).collect())
    }

    pub fn outputs(&mut self) -> Result<Vec<Output>> {
        let body = self.wire.call(Request::GetOutputs, "", self.limit)?;
        tree::outputs(&body)
    }

    /// Run sway commands (`;` or `,` separated); one outcome per command. A refused command is an
    /// outcome, not an error: see [`SwayIpc::command`] for that.
    pub fn run_command(&mut self, commands: &str) -> Result<Vec<CommandOutcome>> {
        let body = self.wire.call(Request::RunCommand, commands, self.limit)?;
        tree::command_outcomes(&body)
    }

    /// Run sway commands; the first refusal is an error carrying sway's reason.
    pub fn command(&mut self, commands: &str) -> Result<()> {
        let outcomes = self.run_command(commands)?;
        match outcomes.iter().find(|outcome| !outcome.success) {
            None => Ok(()),
            Some(failed) => Err(DesktopError::Compositor(format!(
                "{commands:?} was refused: {}",
                failed.error.as_deref().unwrap_or("no reason given")
            ))),
        }
    }

    /// The window `id`, or [`DesktopError::WindowGone`].
    pub fn view(&mut self, id: u32) -> Result<View> {
        self.views()?
            .into_iter()
            .find(|view| view.info.id == id)
            .ok_or_else(|| gone(id))
    }

    /// Give `id` the keyboard focus, raising it (and bringing it back from the scratchpad).
    pub fn focus(&mut self, id: u32) -> Result<()> {
        let view = self.view(id)?;
        if view.info.minimized {
            // `focus` on a hidden scratchpad window fails; `scratchpad show` shows and focuses it.
            return self.command(&format!("[con_id={id}] scratchpad show"));
        }
        self.command(&format!("[con_id={id}] focus"))
    }

    /// Move and/or resize `id`'s client area. A tiled window is made floating first (sway places
    /// tiled windows itself). Sizes are those of the client area, as [`SwayIpc::windows`] reports.
    pub fn move_resize(&mut self, id: u32, to: MoveResize) -> Result<()> {
        to.check("move_resize")?;
        let mut view = self.view(id)?;
        if !view.floating {
            self.command(&format!("[con_id={id}] floating enable"))?;
            view = self.view(id)?;
        }
        let (info, frame) = (&view.info, view.frame);
        let width = to.width.unwrap_or(info.width);
        let height = to.height.unwrap_or(info.height);
        let x = to.x.unwrap_or(info.x);
        let y = to.y.unwrap_or(info.y);
        // Resize first: sway grows a floating window around its centre, which would move it.
        self.command(&format!(
            "[con_id={id}] resize set width {} px height {} px, move absolute position {} px {} px",
            width as i64 + frame.extra_width as i64,
            height as i64 + frame.extra_height as i64,
            x - frame.left,
            y - frame.top,
        ))
    }

    /// Ask `id` to close (as its close button would). It goes once its program lets it.
    pub fn close(&mut self, id: u32) -> Result<()> {
        self.view(id)?;
        self.command(&format!("[con_id={id}] kill"))
    }

    /// Minimise `id`: sway has no minimised state, so it goes to the scratchpad (hidden until
    /// [`SwayIpc::focus`] shows it again).
    pub fn minimize(&mut self, id: u32) -> Result<()> {
        self.view(id)?;
        self.command(&format!("[con_id={id}] move scratchpad"))
    }
}

fn gone(id: u32) -> DesktopError {
    DesktopError::WindowGone {
        field: "window",
        message: format!("sway has no window {id} (closed?)"),
    }
}
