//! The session crate's integration tests, in one binary: a module per file of tests/ (leaks.rs and
//! reaping.rs apart: one counts the process's descriptors, the other makes it a subreaper).

#[path = "commands.rs"]
mod commands;
#[path = "registry.rs"]
mod registry;
