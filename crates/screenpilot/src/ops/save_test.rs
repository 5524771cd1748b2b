//! `save_test`: what was done in sessions since the last save, written as a step file that
//! `screenpilot test` runs again: each input with the condition it waited for (the one given, or one
//! read from what the screen showed before the next step).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kit::common::{Caller, Context, OpError, Progress};
use super::kit::operation::{Operation, Profile, Report};
use super::kit::program::this_process_umask;

/// Parameters of `save_test`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveTestParams {
    pub file: String,
    /// Default: all
    pub sids: Option<Vec<String>>,
    /// The test's name (default: the file's)
    pub name: Option<String>,
    /// Replace an existing file
    #[serde(default)]
    pub force: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub caller_umask: Option<u32>,
}

/// What `save_test` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SavedTest {
    pub file: String,
    pub steps: usize,
    pub sessions: Vec<String>,
}

impl Report for SavedTest {
    fn human(&self) -> String {
        format!(
            "wrote {} ({} steps on {}); run it with: screenpilot test {}",
            self.file,
            self.steps,
            self.sessions.join(", "),
            self.file
        )
    }
}

/// `save_test`: the sessions' steps as a step file.
pub struct SaveTest;

impl Operation for SaveTest {
    const NAME: &'static str = "save_test";
    const IN_STEP_FILES: bool = false;
    const PROFILES: &'static [Profile] = Profile::EVERY;
    const DESCRIPTION: &'static str = "Save the sessions' inputs since the last save_test, each with what it waited for, as a test file for `screenpilot test`. E.g. {\"file\":\"t/menu.toml\"}";
    /// Naming the test and replacing a file are for people; a model picks a new file.
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] =
        &[("name", Profile::NONE), ("force", Profile::CLASSIC)];
    type Params = SaveTestParams;
    type Output = SavedTest;

    fn prepare(p: &mut SaveTestParams, caller: &Caller) {
        p.file = caller.absolute(&p.file);
        p.caller_umask = this_process_umask();
    }

    async fn run(ctx: &Context, p: SaveTestParams, _: &Progress) -> Result<SavedTest, OpError> {
        let file = PathBuf::from(&p.file);
        if file.is_relative() {
            return Err(OpError::invalid(
                "file",
                format!("{} is relative; give an absolute path", file.display()),
            ));
        }
        let dir = file.parent().unwrap_or(Path::new("/")).to_owned();
        if !dir.is_dir() {
            return Err(OpError::invalid(
                "file",
                format!("{} is not a directory; create it first", dir.display()),
            ));
        }
        if file.exists() && !p.force {
            return Err(OpError::invalid(
                "file",
                format!(
                    "{} already exists; give force to replace it",
                    file.display()
                ),
            ));
        }
        let name = p.name.clone().unwrap_or_else(|| {
            file.file_stem()
                .map_or_else(|| "test".into(), |s| s.to_string_lossy().into_owned())
        });
        let written = ctx
            .journal
            .take(
                &ctx.registry,
                p.sids.as_deref().unwrap_or_default(),
                &name,
                &dir,
            )
            .map_err(|e| OpError::invalid("sids", e))?;
        let mode = 0o666 & !p.caller_umask.unwrap_or(0o022);
        crate::whole_file::write_whole(&file, written.text.as_bytes(), Some(mode), p.force)
            .map_err(|e| {
                OpError::invalid(
                    "file",
                    format!(
                        "cannot write {}: {e}; the steps are kept for the next save_test",
                        file.display()
                    ),
                )
            })?;
        let saved = SavedTest {
            file: p.file,
            steps: written.steps,
            sessions: written.sessions.clone(),
        };
        ctx.journal.written(written);
        Ok(saved)
    }
}
