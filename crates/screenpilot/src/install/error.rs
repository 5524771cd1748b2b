//! What can go wrong installing: a file's text that cannot take our entry ([`Problem`]), and the
//! file, folder or setting it happened with ([`InstallError`]). The CLI turns these into its messages.

use std::path::PathBuf;

use super::jsonc::JsonTextError;
use super::toml_table::TomlTextError;

/// Why a file's text cannot take our entry, or give it back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    #[error(transparent)]
    Json(#[from] JsonTextError),
    #[error(transparent)]
    Toml(#[from] TomlTextError),
    /// Our own edit did not read back as meant: a bug.
    #[error("{0} (a bug in screenpilot)")]
    Internal(String),
}

/// What went wrong, and with which file.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// The file's text: not JSON or TOML, or shaped so our entry cannot go in without losing
    /// something; then `by_hand` is the entry to add by hand.
    #[error("{}: {problem}; nothing was changed{}", path.display(), by_hand.as_deref().map(|e| format!(". Add it by hand:\n{e}")).unwrap_or_default())]
    Text {
        path: PathBuf,
        problem: Problem,
        by_hand: Option<String>,
    },
    #[error("{} is read-only (mode {mode:o}); nothing was changed: make it writable (chmod u+w) or add the entry by hand", path.display())]
    ReadOnly { path: PathBuf, mode: u32 },
    #[error("{} is not UTF-8 text; nothing was changed", path.display())]
    NotText { path: PathBuf },
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("HOME is not set (or not an absolute path): there is no user configuration to write")]
    NoHome,
    #[error("cannot tell where this screenpilot executable is: {0}")]
    Executable(std::io::Error),
}
