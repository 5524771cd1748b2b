//! The files install reads and writes: read as UTF-8 text, written whole (a partial file renamed into
//! place, with the file's own permission bits), and each one's backup beside it: written once, before
//! the first change, and never over an existing one, so it keeps what the person had.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::error::InstallError;
use crate::whole_file::write_whole;

/// What follows a file's name to name its backup.
pub const BACKUP_SUFFIX: &str = ".screenpilot-backup";

/// The first line of a backup that stands for a file that did not exist; the folders install made
/// for it follow, one a line, so `--remove` takes those away too.
const ABSENT: &str =
    "screenpilot install: there was no such file; the folders made for it follow, one a line\n";

/// A file as it was before install first changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Original {
    /// There was no such file; install made these folders for it, outermost first.
    Absent {
        made: Vec<PathBuf>,
    },
    Text(String),
}

impl Original {
    /// The text, `None` for a file that was not there.
    pub fn text(&self) -> Option<&str> {
        match self {
            Original::Absent { .. } => None,
            Original::Text(text) => Some(text),
        }
    }

    fn encode(&self) -> String {
        match self {
            Original::Text(text) => text.clone(),
            Original::Absent { made } => {
                let mut out = ABSENT.to_owned();
                for dir in made {
                    out.push_str(&dir.to_string_lossy());
                    out.push('\n');
                }
                out
            }
        }
    }

    fn decode(text: String) -> Original {
        match text.strip_prefix(ABSENT) {
            Some(dirs) => Original::Absent {
                made: dirs.lines().map(PathBuf::from).collect(),
            },
            None => Original::Text(text),
        }
    }
}

/// The backup of `path`: `FILE.screenpilot-backup` beside it.
pub fn backup_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(BACKUP_SUFFIX);
    PathBuf::from(name)
}

/// The file `path` names, through symbolic links: a dotfile linked from a repository is written
/// where it lives, and stays a link.
pub fn resolve(path: &Path) -> Result<PathBuf, InstallError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            std::fs::canonicalize(path).map_err(|source| InstallError::Read {
                path: path.to_owned(),
                source,
            })
        }
        _ => Ok(path.to_owned()),
    }
}

/// `path`'s text; `None` when there is no such file.
pub fn read(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| InstallError::NotText {
                path: path.to_owned(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Read {
            path: path.to_owned(),
            source,
        }),
    }
}

/// What `path` was before install first changed it, when its backup says.
pub fn read_backup(path: &Path) -> Result<Option<Original>, InstallError> {
    Ok(read(&backup_of(path))?.map(Original::decode))
}

/// The folders above `path` that do not exist, outermost first.
pub fn missing_dirs(path: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = path
        .ancestors()
        .skip(1)
        .take_while(|dir| !dir.as_os_str().is_empty() && !dir.exists())
        .map(Path::to_owned)
        .collect();
    missing.reverse();
    missing
}

/// The permission bits of the file at `path`, if there is one.
fn mode_of(path: &Path) -> Option<u32> {
    std::fs::metadata(path)
        .ok()
        .map(|meta| meta.permissions().mode() & 0o7777)
}

/// Refuse a file its owner may not write: the person's way of saying "leave it alone", which a
/// write by rename (and root) would not be stopped by.
pub fn check_writable(path: &Path) -> Result<(), InstallError> {
    match mode_of(path) {
        Some(mode) if mode & 0o200 == 0 => Err(InstallError::ReadOnly {
            path: path.to_owned(),
            mode,
        }),
        _ => Ok(()),
    }
}

fn write_error(path: &Path) -> impl FnOnce(std::io::Error) -> InstallError + '_ {
    move |source| InstallError::Write {
        path: path.to_owned(),
        source,
    }
}

/// Keep `original` as `path`'s backup, unless it has one (then that one is older, and stays). The
/// backup gets the file's permission bits: a private file's backup is private too.
pub fn keep_backup(path: &Path, original: &Original) -> Result<(), InstallError> {
    let backup = backup_of(path);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
    }
    match write_whole(&backup, original.encode().as_bytes(), mode_of(path), false) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(write_error(&backup)(e)),
        _ => Ok(()),
    }
}

/// Write `text` to `path` whole, with the permission bits the file had.
pub fn write(path: &Path, text: &str) -> Result<(), InstallError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(write_error(parent))?;
    }
    write_whole(path, text.as_bytes(), mode_of(path), true).map_err(write_error(path))
}

/// Delete `path` (already gone is fine).
pub fn delete(path: &Path) -> Result<(), InstallError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(write_error(path)(e)),
        _ => Ok(()),
    }
}

/// Delete `path`'s backup, and the folders install made for it that are empty now, innermost
/// first (one that holds anything else stays).
pub fn discard_backup(path: &Path, made: &[PathBuf]) -> Result<(), InstallError> {
    delete(&backup_of(path))?;
    for dir in made.iter().rev() {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(())
}
