//! X11 and Wayland desktops for screenpilot (one [`Backend`] trait; see the crate README for the
//! Wayland backend and for macOS and Windows on paper).
//!
//! A desktop is a display that agents look at and act on: a private Xvfb that this crate starts (with
//! an optional window manager and program), or an existing `DISPLAY` it attaches to. Frames are read
//! through MIT-SHM and returned as RGB or PNG with the pointer drawn in; input goes through XTest:
//! pointer motion, buttons 1-9, key chords and any Unicode text.
//!
//! [`Desktop::start`] returns once the desktop is usable (window manager ready, the program's window
//! mapped and focused; `ready`). A watcher on a second connection counts drawing and window changes
//! ([`Desktop::damage_updates`], [`Desktop::window_updates`]) so waits need no polling
//! ([`Desktop::settle`]). [`scale`] sizes screenshots for models and maps coordinates back.
//!
//! On a running desktop: the clipboard ([`Desktop::clipboard_get`], [`Desktop::clipboard_set`]),
//! window management ([`Desktop::focus_window`], [`Desktop::move_resize_window`],
//! [`Desktop::minimize_window`], [`Desktop::close_window`], ...), and more programs
//! ([`Desktop::launch`], by command line or desktop-entry name), each returning once its effect shows.
//!
//! [`DesktopRegistry`] holds the desktops of one daemon; [`Desktop::run`] runs one blocking step on a
//! desktop's connection under a time limit, with the [`X11`] calls inside it.
//!
//! [`wayland`] is the same for wlroots compositors (sway and others): [`wayland::Wayland`] captures
//! through screencopy and types and points through virtual input devices, with the method names of
//! [`X11`]; a damage watch, the clipboard and a window list come with it.
//!
//! With the `libei` feature, `ei` is input for GNOME and KDE: the RemoteDesktop portal's EIS socket,
//! spoken to by a pure-Rust libei client (the input half of a backend; capture is on paper).

pub mod backend;
pub mod capture;
mod clipboard;
pub mod desktop;
pub mod desktop_entry;
#[cfg(feature = "libei")]
pub mod ei;
pub mod error;
pub mod gestures;
pub mod keyboard;
pub mod keysym;
mod launch;
pub mod looks;
pub mod ocr;
pub mod on_wayland;
mod orphans;
mod private_dir;
pub mod process;
mod ready;
pub mod registry;
pub mod scale;
pub mod server;
pub mod session_bus;
pub mod settle;
pub mod stats;
mod step;
pub mod sway;
mod target;
mod wakeable;
mod watcher;
pub mod wayland;
mod window_actions;
pub mod x11;

pub use backend::Backend;
pub use capture::{decode_png, encode_png, Frame};
pub use desktop::{
    check_size, Desktop, DesktopInfo, DesktopSpec, Target, DEFAULT_READY_TIMEOUT, DEFAULT_SIZE,
    DEFAULT_STEP_TIMEOUT,
};
pub use error::{DesktopError, Result};
pub use gestures::{Gestures, Seat};
pub use keyboard::Modifier;
pub use launch::{Launched, Program};
pub use looks::Looks;
pub use private_dir::{end_abandoned, Abandoned};
pub use registry::{DesktopRegistry, OtherSessions, Reservation};
pub use scale::{fit, Scale, DEFAULT_MAX_LONG_EDGE, DEFAULT_MAX_PIXELS};
pub use server::WindowManager;
pub use settle::{Settle, Settled, DEFAULT_REACTION};
pub use window_actions::{CloseOutcome, WINDOW_ACTION_TIMEOUT};
pub use x11::{
    connect, Button, ClipContent, ClipKind, MoveResize, Point, Selection, WindowInfo,
    WindowManagerState, MAX_CLIP_BYTES, X11,
};
/// The X11 protocol crate this one speaks through, for callers of [`connect`].
pub use x11rb;
