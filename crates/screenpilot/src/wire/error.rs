//! Why an operation failed: [`ErrorCode`], the stable strings scripts and models branch on, and
//! [`OpError`], the code with its message and the field a caller got wrong. What both sides of the
//! wire share: the daemon answers with it, a client reads it back.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Defines [`ErrorCode`] with the stable string of each code.
macro_rules! error_codes {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, )*) => {
        /// Why an operation failed, as a stable string that scripts and models can branch on. The
        /// docs/errors.md lists them all.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum ErrorCode {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
            /// A code this build does not know (a newer daemon or probe sent it).
            #[serde(other, rename = "other")]
            Other,
        }

        impl ErrorCode {
            /// The stable string, as it appears in JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $( ErrorCode::$variant => $name, )*
                    ErrorCode::Other => "other",
                }
            }

            /// The code for a string from another component (the Textual probe, a library crate).
            pub fn parse(code: &str) -> ErrorCode {
                match code {
                    $( $name => ErrorCode::$variant, )*
                    _ => ErrorCode::Other,
                }
            }

            /// Every code, for documentation and tests.
            pub const ALL: &'static [ErrorCode] = &[$( ErrorCode::$variant, )*];
        }
    };
}

error_codes! {
    /// A parameter is missing, of the wrong type or out of range; `field` names it.
    InvalidArgument = "invalid_argument",
    UnknownSession = "unknown_session",
    DuplicateSession = "duplicate_session",
    /// A configured limit (sessions, size, pattern length, ...) would be exceeded.
    LimitExceeded = "limit_exceeded",
    SpawnFailed = "spawn_failed",
    SessionExited = "session_exited",
    SessionClosed = "session_closed",
    IoError = "io_error",
    /// An X display is gone or cannot be reached.
    DisplayUnavailable = "display_unavailable",
    /// An earlier call still holds the display.
    DisplayBusy = "display_busy",
    /// A desktop program never showed a usable window.
    WindowNotReady = "window_not_ready",
    Timeout = "timeout",
    Cancelled = "cancelled",
    /// No operation (MCP tool) of that name.
    UnknownOperation = "unknown_operation",
    /// A bug: a panic inside the daemon, or an impossible state.
    Internal = "internal",
    BadRequest = "bad_request",
    /// A request line is not valid JSON.
    BadJson = "bad_json",
    BadResponse = "bad_response",
    DaemonConfig = "daemon_config",
    DaemonFailed = "daemon_failed",
    DaemonGone = "daemon_gone",
    /// The daemon socket belongs to another user.
    DaemonUntrusted = "daemon_untrusted",
    /// No daemon answers and none could be started.
    DaemonUnavailable = "daemon_unavailable",
    /// A request reused the id of a running one on the same connection.
    DuplicateId = "duplicate_id",
    /// The daemon on another host cannot be reached: the `ssh` or bridge command failed, or
    /// screenpilot is not installed there.
    HostUnreachable = "host_unreachable",
    /// The link to another host dropped and was not restored in time: the request's outcome is
    /// unknown (the sessions live on in that host's daemon).
    LinkLost = "link_lost",
    /// The link dropped before the request reached the daemon: it was not run.
    NotDelivered = "not_delivered",
    /// A desktop element cannot take that now: disabled, hidden, covered, off screen, or it offers
    /// no such interface; nothing was done.
    ElementUnavailable = "element_unavailable",
    /// A desktop element (a ref) is gone: closed, or not in the latest snapshot.
    ElementGone = "element_gone",
    /// Nobody owns the clipboard (or primary selection): nothing was copied.
    SelectionEmpty = "selection_empty",
    /// The clipboard holds other types than the one asked for (the message lists them).
    TypeNotOffered = "type_not_offered",
    /// A window is gone (closed), or is not a top-level window of the desktop.
    WindowGone = "window_gone",
    McpFailed = "mcp_failed",
    /// The terminal app has not enabled mouse reporting.
    MouseUnavailable = "mouse_unavailable",
    RenderFailed = "render_failed",
    /// A Textual screenshot could not be written.
    ScreenshotFailed = "screenshot_failed",
    Runtime = "runtime",
    AppExited = "app_exited",
    AppLoadFailed = "app_load_failed",
    /// A Textual app failed to start.
    AppFailed = "app_failed",
    /// The Python interpreter for a Textual app cannot be started.
    PythonUnavailable = "python_unavailable",
    TextualMissing = "textual_missing",
    TextualTooOld = "textual_too_old",
    TextualSetup = "textual_setup",
    ProbeFailed = "probe_failed",
    ProbeTimeout = "probe_timeout",
    InvalidSelector = "invalid_selector",
    WidgetAbsent = "widget_absent",
    WidgetCovered = "widget_covered",
    WidgetHidden = "widget_hidden",
    WidgetDisabled = "widget_disabled",
    WidgetOffScreen = "widget_off_screen",
    WidgetOutside = "widget_outside",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<&str> for ErrorCode {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

/// Why an operation failed: a stable code, a message for people and models, and the field at fault.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, thiserror::Error, JsonSchema)]
#[error("{message}")]
pub struct OpError {
    pub code: ErrorCode,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub field: Option<String>,
}

impl OpError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        OpError {
            code,
            message: message.into(),
            field: None,
        }
    }

    /// A bad parameter: the message starts with the field's name, and `field` names it.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        OpError {
            code: ErrorCode::InvalidArgument,
            message: format!("{field}: {message}"),
            field: Some(field.into()),
        }
    }

    /// The same error, naming `field`.
    pub fn with_field(mut self, field: &str) -> Self {
        self.field = Some(field.to_owned());
        self
    }

    /// The same error about a field inside `parent` (`until.regex` inside `steps[1]` becomes
    /// `steps[1].until.regex`, in the field and at the start of the message).
    pub fn within(mut self, parent: &str) -> Self {
        if let Some(field) = self.field.take() {
            let path = format!("{parent}.{field}");
            if let Some(rest) = self.message.strip_prefix(&format!("{field}:")) {
                self.message = format!("{path}:{rest}");
            }
            self.field = Some(path);
        }
        self
    }
}

/// What a request the daemon ended under says: `daemon` names the daemon.
pub fn interrupted(daemon: &str) -> String {
    format!("{daemon} ended before answering: this request was interrupted. Its terminal sessions live on with their holders, and the next call starts a daemon that takes them over: run the request again")
}
