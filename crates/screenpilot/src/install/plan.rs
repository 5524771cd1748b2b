//! What install (or `--remove`) would change, worked out before anything is written, so it can be
//! shown first; then written.
//!
//! Taking ours out gives the person's file back byte for byte when nothing else changed since: the
//! backup (the file before the first install) is put back when installing ours into it gives exactly
//! what the file holds now. Otherwise only ours is taken out, and the rest stays as it is now.

use std::path::{Path, PathBuf};

use super::edit::{Edit, Found};
use super::error::{InstallError, Problem};
use super::files::{self, Original};
use super::hosts::Target;
use super::jsonc::JsonTextError;
use super::toml_table::TomlTextError;

/// What a change does to its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Ours added (the file made, if there was none).
    Add,
    /// Ours was there, with other values.
    Update,
    /// Ours taken out, the rest left as it is now.
    TakeOut,
    /// The file put back as it was before the first install (its backup).
    Restore,
    /// The file deleted: there was none before install (or it was ours whole).
    Delete,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Add => "add",
            Action::Update => "update",
            Action::TakeOut => "take_out",
            Action::Restore => "restore",
            Action::Delete => "delete",
        }
    }
}

/// One file's change.
#[derive(Debug, Clone)]
pub struct Change {
    /// The file written (through symbolic links).
    pub path: PathBuf,
    /// What of ours it holds: "the MCP server entry mcpServers.screenpilot".
    pub what: String,
    /// The file is ours whole (the skill): shown by its size, not line by line.
    pub whole_file: bool,
    pub action: Action,
    pub before: Option<String>,
    /// `None`: the file is deleted.
    pub after: Option<String>,
    /// The backup written before the change (none when the file has one already).
    backup: Option<Original>,
    /// The backup is done with once the change is written: it is deleted, and these folders install
    /// made go too when empty.
    discard_backup: Option<Vec<PathBuf>>,
    /// The file has a backup already, of its text before install.
    backup_holds_text: bool,
}

impl Change {
    /// Where the backup of the file's text before install is, when it has one after this change
    /// (none for a file install made: there was nothing to keep).
    pub fn backup(&self) -> Option<PathBuf> {
        let kept = match (&self.discard_backup, &self.backup) {
            (Some(_), _) => false,
            (None, Some(original)) => original.text().is_some(),
            (None, None) => self.backup_holds_text,
        };
        kept.then(|| files::backup_of(&self.path))
    }
}

/// A file with nothing to change.
#[derive(Debug, Clone)]
pub struct Unchanged {
    pub path: PathBuf,
    pub what: String,
    /// Ours is there already (install), or is not (remove).
    pub installed: bool,
}

/// Everything install (or remove) would change.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub changes: Vec<Change>,
    pub unchanged: Vec<Unchanged>,
}

/// The error for a file whose text cannot take ours; with ours to add by hand when the file is fine
/// but shaped so ours cannot go in without losing something of the person's.
fn text_error<'e>(path: &Path, edit: &'e Edit) -> impl FnOnce(Problem) -> InstallError + 'e {
    let path = path.to_owned();
    move |problem| {
        let shape = matches!(
            problem,
            Problem::Json(JsonTextError::CommentsInside { .. } | JsonTextError::NotAnObject { .. })
                | Problem::Toml(TomlTextError::NotATable { .. })
        );
        InstallError::Text {
            path,
            by_hand: shape.then(|| edit.by_hand()),
            problem,
        }
    }
}

/// What putting ours into each target would change (with `remove`: taking it out).
pub fn plan(targets: &[Target], remove: bool) -> Result<Plan, InstallError> {
    let mut plan = Plan::default();
    for target in targets {
        let path = files::resolve(&target.path)?;
        let current = files::read(&path)?;
        let what = target.edit.describe();
        let unchanged = |installed| Unchanged {
            path: path.clone(),
            what: what.clone(),
            installed,
        };
        let change = if remove {
            take_out(&path, &target.edit, current)?
        } else {
            put_in(&path, &target.edit, current)?
        };
        match change {
            Some(change) => plan.changes.push(change),
            None => plan.unchanged.push(unchanged(!remove)),
        }
    }
    Ok(plan)
}

/// Ours put into `current`; `None` when it is there as it would be written.
fn put_in(
    path: &Path,
    edit: &Edit,
    current: Option<String>,
) -> Result<Option<Change>, InstallError> {
    let after = edit
        .apply(current.as_deref())
        .map_err(text_error(path, edit))?;
    if current.as_deref() == Some(after.as_str()) {
        return Ok(None);
    }
    let action = match &current {
        Some(text) => {
            files::check_writable(path)?;
            match edit.found(text).map_err(text_error(path, edit))? {
                Found::Absent => Action::Add,
                Found::Present { .. } => Action::Update,
            }
        }
        None => Action::Add,
    };
    let existing = files::read_backup(path)?;
    let backup_holds_text = existing.as_ref().is_some_and(|o| o.text().is_some());
    let backup = match existing {
        Some(_) => None,
        None => Some(match &current {
            Some(text) => Original::Text(text.clone()),
            None => Original::Absent {
                made: files::missing_dirs(path),
            },
        }),
    };
    Ok(Some(Change {
        path: path.to_owned(),
        what: edit.describe(),
        whole_file: matches!(edit, Edit::File { .. }),
        action,
        before: current,
        after: Some(after),
        backup,
        discard_backup: None,
        backup_holds_text,
    }))
}

/// Ours taken out of `current`; `None` when it is not there.
fn take_out(
    path: &Path,
    edit: &Edit,
    current: Option<String>,
) -> Result<Option<Change>, InstallError> {
    let Some(text) = current else {
        return Ok(None);
    };
    let as_written = match edit.found(&text).map_err(text_error(path, edit))? {
        Found::Absent => return Ok(None),
        Found::Present { as_written } => as_written,
    };
    files::check_writable(path)?;
    let original = files::read_backup(path)?;
    let backup_holds_text = original.as_ref().is_some_and(|o| o.text().is_some());
    // Nothing but ours changed since the backup: give the backup back, byte for byte (a file that
    // was not there is deleted, with the folders made for it).
    let exact = match (&original, &as_written) {
        (Some(original), Some(written)) => written
            .apply(original.text())
            .is_ok_and(|reinstalled| reinstalled == text),
        _ => false,
    };
    let (action, after, discard_backup) = match (exact, original) {
        (true, Some(Original::Absent { made })) => (Action::Delete, None, Some(made)),
        (true, Some(Original::Text(original))) => (Action::Restore, Some(original), Some(vec![])),
        _ => {
            let after = edit.strip(&text).map_err(text_error(path, edit))?;
            let action = if after.is_some() {
                Action::TakeOut
            } else {
                Action::Delete
            };
            (action, after, None)
        }
    };
    Ok(Some(Change {
        path: path.to_owned(),
        what: edit.describe(),
        whole_file: matches!(edit, Edit::File { .. }),
        action,
        before: Some(text),
        after,
        backup: None,
        discard_backup,
        backup_holds_text,
    }))
}

/// Write every change of `plan`, each file's backup first.
pub fn write(plan: &Plan) -> Result<(), InstallError> {
    for change in &plan.changes {
        if let Some(original) = &change.backup {
            files::keep_backup(&change.path, original)?;
        }
        match &change.after {
            Some(text) => files::write(&change.path, text)?,
            None => files::delete(&change.path)?,
        }
        if let Some(made) = &change.discard_backup {
            files::discard_backup(&change.path, made)?;
        }
    }
    Ok(())
}
