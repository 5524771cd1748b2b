//! `textual_run` end to end: the real binary, a real daemon, real Textual apps on real ptys. Each test
//! copies its fixture app into a private directory (screenshots are written beside the app) and runs
//! its own daemon there, stopped when the test ends.
//!
//! The interpreter is `$SCREENPILOT_TEST_PYTHON`, else `<repo>/.venv/bin/python` (scripts/test.sh makes
//! it). A missing one fails the test: Textual support is part of the product, not an optional extra.

#[path = "../common/mod.rs"]
mod common;
mod drive;
mod failures;
mod harness;
mod refusals;
