//! `record`: start or stop an asciicast v3 recording of a running terminal session, so a person (or
//! the model itself) can replay what was done. A recording begun here opens with the screen as it is;
//! stopping closes the file and leaves the program running.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_session::{Recording, SessionError};

use crate::ops::kit::common::{Caller, Context, OpError, Progress};
use crate::ops::kit::operation::{Operation, Report};
use crate::ops::kit::program::this_process_umask;
use crate::ops::kit::step_table::Journaled;

/// Start or stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RecordAction {
    Start,
    Stop,
}

/// Parameters of `record`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RecordParams {
    /// The session id returned by spawn.
    pub sid: String,
    /// "start" (give `path`) or "stop".
    pub action: RecordAction,
    /// start: the file to write, e.g. "session.cast".
    pub path: Option<String>,
    /// start: record the input sent to the program too.
    #[serde(default)]
    pub input: bool,
    /// start: replace an existing file.
    #[serde(default)]
    pub force: bool,
    /// The caller's umask, filled in by `prepare` (not a tool parameter): the file gets the
    /// permissions a file the caller created itself would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub caller_umask: Option<u32>,
}

/// What `record` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Recorded {
    pub sid: String,
    /// True while a recording runs (after start), false after stop.
    pub recording: bool,
    /// The file started or stopped; absent when stop found no recording.
    pub path: Option<String>,
}

impl Report for Recorded {
    fn human(&self) -> String {
        match (&self.path, self.recording) {
            (Some(path), true) => format!("recording {} to {path}", self.sid),
            (Some(path), false) => format!("stopped recording {} ({path})", self.sid),
            (None, _) => format!("{} was not recording", self.sid),
        }
    }
}

/// `record`: start or stop recording a running session.
pub struct Record;

impl Operation for Record {
    const NAME: &'static str = "record";
    const DESCRIPTION: &'static str = "Start or stop recording a session to an asciicast v3 file (for `screenpilot replay` or asciinema). \
start: begins with the current screen; records output, resizes, the exit status, and input if input=true; an existing file needs force. \
stop: closes it; the program keeps running. Returns {ok, sid, recording, path}. \
Example: {\"sid\": \"vim\", \"action\": \"start\", \"path\": \"vim.cast\"}.";
    type Params = RecordParams;
    type Output = Recorded;

    fn journal(_: &RecordParams, _: bool) -> Vec<Journaled> {
        Vec::new()
    }

    fn prepare(p: &mut RecordParams, caller: &Caller) {
        caller.resolve(&mut p.path);
        p.caller_umask = this_process_umask();
    }

    async fn run(ctx: &Context, p: RecordParams, _: &Progress) -> Result<Recorded, OpError> {
        let session = match ctx.registry.get(&p.sid) {
            Err(SessionError::UnknownSession(_))
                if crate::ops::kit::desktops::info(ctx, &p.sid).is_some() =>
            {
                return Err(OpError::invalid(
                    "sid",
                    format!(
                        "'{}' is a desktop; recordings (asciicast) are of terminal sessions",
                        p.sid
                    ),
                ))
            }
            other => other?,
        };
        match p.action {
            RecordAction::Start => {
                let path = p.path.ok_or_else(|| {
                    OpError::invalid(
                        "path",
                        "start needs the file to write, e.g. {\"path\": \"session.cast\"}",
                    )
                })?;
                let path = PathBuf::from(path);
                if path.is_relative() {
                    return Err(OpError::invalid(
                        "path",
                        format!(
                            "{} is relative; give an absolute path (the CLI and MCP server make it so)",
                            path.display()
                        ),
                    ));
                }
                session
                    .start_recording(&Recording {
                        path: path.clone(),
                        mode: 0o666 & !p.caller_umask.unwrap_or(0o022),
                        force: p.force,
                        input: p.input,
                    })
                    .map_err(|e| match e {
                        // The file is this tool's `path` (spawn calls it `record`).
                        SessionError::Invalid {
                            field: "record",
                            message,
                        } => SessionError::invalid("path", message),
                        e => e,
                    })?;
                Ok(Recorded {
                    sid: p.sid,
                    recording: true,
                    path: Some(path.to_string_lossy().into_owned()),
                })
            }
            RecordAction::Stop => {
                if p.path.is_some() || p.input || p.force {
                    return Err(OpError::invalid(
                        "action",
                        "stop takes only the sid; path, input and force belong to start",
                    ));
                }
                let path = session.stop_recording();
                Ok(Recorded {
                    sid: p.sid,
                    recording: false,
                    path: path.map(|p| p.to_string_lossy().into_owned()),
                })
            }
        }
    }
}
