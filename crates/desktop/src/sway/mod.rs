//! Wayland desktops through sway: a private headless sway that this crate starts (or one it finds),
//! and its IPC, through which windows are listed, focused, placed, minimised and closed.
//!
//! - [`launch_sway`] starts sway 1.7 headless (pixman renderer, no input devices) in a private
//!   runtime directory, as `nobody` when we are root (sway refuses root), with a configuration of
//!   ours: one output of the asked size, floating windows, no borders, no bar, no XWayland. It
//!   returns once sway answers on its IPC socket; [`Compositor::env`] is what programs need to show
//!   their windows there natively.
//! - [`find_ipc`] finds the IPC socket of a sway already serving a `WAYLAND_DISPLAY`.
//! - [`SwayIpc`] asks and commands (blocking, one deadline per call); [`SwayEvents`] counts window
//!   and workspace events on a second connection, so waits need no polling.
//!
//! The Wayland protocol side (capture, virtual input, clipboard) lives in `crate::wayland`.

mod attach;
mod events;
mod ipc;
mod launch;
mod tree;
mod user;
mod wire;

pub use attach::{find_ipc, find_ipc_with, wayland_socket};
pub use events::SwayEvents;
pub use ipc::SwayIpc;
pub use launch::{
    config_text, launch_sway, launch_sway_with, start_error, Compositor, SwaySpec,
    OTHER_DISPLAY_VARS, OUTPUT, TOOLKIT_SWITCHES,
};
pub use tree::{CommandOutcome, Frame, Output, View, SCRATCHPAD};
pub use user::{sway_user, Credentials, SwayUser, UNPRIVILEGED};
