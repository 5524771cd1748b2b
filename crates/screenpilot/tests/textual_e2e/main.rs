//! `textual_run` end to end: the real binary, a real daemon, real Textual apps on real ptys. Each test
//! copies its fixture app into a private directory (screenshots are written beside the app) and runs
//! its own daemon there, stopped when the test ends.
//!
//! The interpreter is `$SCREENPILOT_TEST_PYTHON`, else `<repo>/.venv/bin/python`, with the newest
//! supported Textual; tests that also run on the oldest supported Textual use
//! `$SCREENPILOT_TEST_PYTHON_OLDEST`, else `<repo>/.venv/textual-oldest/bin/python`; Textual's own example
//! apps are unpacked beside each (`<venv>/textual-examples`). scripts/test.sh makes all of them. A missing
//! one fails the test: Textual support is part of the product, not an optional extra.

mod differential;
mod drive;
mod failures;
mod harness;
mod refusals;
mod settled;
mod states;
mod versions;
