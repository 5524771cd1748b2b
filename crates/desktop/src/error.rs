//! Errors from desktop operations. Each says what went wrong and, when an argument was at fault, which
//! field, so the binary can point the caller at the exact thing to fix.

use std::time::Duration;

/// Why a desktop operation failed.
#[derive(Debug, thiserror::Error)]
pub enum DesktopError {
    /// An argument is malformed or out of range. Nothing was sent to the display.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    /// The X server (or a program for it) could not be started.
    #[error("{field}: {message}")]
    Start {
        field: &'static str,
        message: String,
    },
    /// The display could not be reached, or the connection broke.
    #[error("display: {0}")]
    Connection(String),
    /// The server answered a request with an error, or lacks something we need.
    #[error("X11: {0}")]
    Protocol(String),
    /// The Wayland compositor (sway) refused a request or answered with something we cannot read.
    #[error("sway: {0}")]
    Compositor(String),
    /// The EIS server (a compositor's libei side) lacks a device we need, or broke the protocol.
    #[error("libei: {0}")]
    Eis(String),
    /// The RemoteDesktop portal is missing, too old, or refused the session.
    #[error("RemoteDesktop portal: {0}")]
    Portal(String),
    /// A step did not finish in time. Input may or may not have reached the display.
    #[error("{what} did not finish within {} ms", limit.as_millis())]
    Timeout { what: String, limit: Duration },
    /// An earlier call still holds the display (it outlived its own limit); this one sent nothing.
    #[error("{what}: the display is still busy with an earlier call after {} ms; nothing was sent", waited.as_millis())]
    Busy { what: String, waited: Duration },
    /// A configured limit would be exceeded; nothing was started.
    #[error("{0}")]
    Limit(String),
    #[error("sid: a session named '{0}' already exists; pick another sid or close it first")]
    Duplicate(String),
    /// The desktop did not become usable in time: the window manager never took over, or the program
    /// never showed a window with the keyboard focus (or ended first). The desktop was closed again.
    #[error("{message}")]
    WindowNotReady {
        field: &'static str,
        message: String,
    },
    /// Nobody owns the selection that was asked for (nothing was copied, or its owner ended).
    #[error("{field}: {message}")]
    SelectionEmpty {
        field: &'static str,
        message: String,
    },
    /// The selection's owner does not offer the type asked for; `offered` lists what it does.
    #[error("{field}: {message}")]
    TypeNotOffered {
        field: &'static str,
        message: String,
        offered: Vec<String>,
    },
    /// The window asked for no longer exists, or is not a top-level window. Nothing was sent.
    #[error("{field}: {message}")]
    WindowGone {
        field: &'static str,
        message: String,
    },
    /// The desktop was closed while the operation ran.
    #[error("the desktop session was closed")]
    Closed,
    /// This desktop's window system cannot do what was asked (an X11-only step on Wayland, input on a
    /// compositor that offers no protocol for it). Nothing was sent.
    #[error("{what}: not possible on this {backend} desktop")]
    Unsupported { what: String, backend: &'static str },
    #[error("{0}")]
    Io(String),
}

impl DesktopError {
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        DesktopError::Invalid {
            field,
            message: message.into(),
        }
    }

    /// A stable machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            DesktopError::Invalid { .. } => "invalid_argument",
            DesktopError::Start { .. } => "spawn_failed",
            DesktopError::Connection(_) => "display_unavailable",
            DesktopError::Protocol(_) => "x11_error",
            DesktopError::Compositor(_) => "compositor_error",
            DesktopError::Eis(_) => "eis_error",
            DesktopError::Portal(_) => "portal_error",
            DesktopError::Timeout { .. } => "timeout",
            DesktopError::Busy { .. } => "display_busy",
            DesktopError::Limit(_) => "limit_exceeded",
            DesktopError::Duplicate(_) => "duplicate_session",
            DesktopError::WindowNotReady { .. } => "window_not_ready",
            DesktopError::SelectionEmpty { .. } => "selection_empty",
            DesktopError::TypeNotOffered { .. } => "type_not_offered",
            DesktopError::WindowGone { .. } => "window_gone",
            DesktopError::Closed => "session_closed",
            DesktopError::Unsupported { .. } => "unsupported",
            DesktopError::Io(_) => "io_error",
        }
    }

    /// The request field the error is about, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            DesktopError::Invalid { field, .. }
            | DesktopError::Start { field, .. }
            | DesktopError::WindowNotReady { field, .. }
            | DesktopError::SelectionEmpty { field, .. }
            | DesktopError::TypeNotOffered { field, .. }
            | DesktopError::WindowGone { field, .. } => Some(field),
            DesktopError::Duplicate(_) => Some("sid"),
            _ => None,
        }
    }
}

impl From<x11rb::errors::ConnectionError> for DesktopError {
    fn from(e: x11rb::errors::ConnectionError) -> Self {
        DesktopError::Connection(format!("connection to the X server failed: {e}"))
    }
}

impl From<x11rb::errors::ReplyError> for DesktopError {
    fn from(e: x11rb::errors::ReplyError) -> Self {
        match e {
            x11rb::errors::ReplyError::ConnectionError(e) => e.into(),
            x11rb::errors::ReplyError::X11Error(e) => {
                DesktopError::Protocol(format!("the server refused a request: {e:?}"))
            }
        }
    }
}

impl From<x11rb::errors::ReplyOrIdError> for DesktopError {
    fn from(e: x11rb::errors::ReplyOrIdError) -> Self {
        match e {
            x11rb::errors::ReplyOrIdError::ConnectionError(e) => e.into(),
            x11rb::errors::ReplyOrIdError::X11Error(e) => {
                DesktopError::Protocol(format!("the server refused a request: {e:?}"))
            }
            x11rb::errors::ReplyOrIdError::IdsExhausted => {
                DesktopError::Protocol("the connection ran out of resource ids".into())
            }
        }
    }
}

pub type Result<T, E = DesktopError> = std::result::Result<T, E>;
