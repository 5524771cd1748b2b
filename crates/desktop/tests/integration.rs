//! The desktop crate's integration tests (real Xvfb displays), in one binary: a module per file of tests/.

mod common;

#[path = "attach.rs"]
mod attach;
#[path = "attach_clipboard.rs"]
mod attach_clipboard;
#[path = "clipboard.rs"]
mod clipboard;
#[path = "keys.rs"]
mod keys;
#[path = "launch.rs"]
mod launch;
#[path = "start_ready.rs"]
mod start_ready;
#[path = "sway.rs"]
mod sway;
#[path = "watch.rs"]
mod watch;
#[path = "wayland.rs"]
mod wayland;
#[path = "windows.rs"]
mod windows;
