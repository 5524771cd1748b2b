//! The screen crate's integration tests, in one binary: a module per file of tests/
//! (widths_libc.rs apart: it sets the whole process's locale).

#[path = "fuzz_screen.rs"]
mod fuzz_screen;
#[path = "input_encoding.rs"]
mod input_encoding;
#[path = "render_golden.rs"]
mod render_golden;
#[path = "widths.rs"]
mod widths;
