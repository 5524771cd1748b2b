//! `screenpilot install HOST`: the configuration that makes screenpilot's MCP server available in an
//! agent host (Claude Code, Codex, Gemini CLI, Cursor, VS Code, Windsurf, Zed, pi), and the
//! instructions that tell its model when to use it, written into the host's own files.
//!
//! Those files are the person's: only screenpilot's entry is added, changed or taken out, and every
//! other byte stays as it was (JSON and JSONC by text edits, not by printing a parsed value back; TOML
//! with toml_edit). Each file gets a backup before its first change, and `--remove` puts that back
//! when nothing but ours changed since. [`plan`] works out every change before anything is written,
//! so the CLI can show it and ask; [`write`] writes it.
//!
//! [`hosts`] says where each host reads its configuration and what goes there; [`edit`] how an entry
//! goes into a file of each format, and comes out again.

mod diff;
pub mod edit;
mod error;
mod files;
pub mod hosts;
mod jsonc;
mod plan;
mod section;
mod toml_table;

pub use diff::unified;
pub use error::{InstallError, Problem};
pub use files::BACKUP_SUFFIX;
pub use hosts::{AgentHost, Places, Server, Target};
pub use plan::{plan, write, Action, Change, Plan, Unchanged};
