//! Errors from session operations. Each names what was wrong, and the field it came from when there is
//! one, so a client can point at the exact argument to fix.

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// An argument is malformed or out of range.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("sid: no session named '{0}' (see the live ones with `list`)")]
    UnknownSession(String),
    #[error("sid: a session named '{0}' already exists; pick another sid or close it first")]
    DuplicateSession(String),
    /// A configured limit would be exceeded; nothing was changed.
    #[error("{0}")]
    Limit(String),
    /// The program could not be started.
    #[error("{field}: {message}")]
    Spawn {
        field: &'static str,
        message: String,
    },
    /// Input was sent to a session whose program has ended.
    #[error("sid: session '{0}' has exited; its screen can still be read, but it takes no input")]
    Exited(String),
    #[error("{0}")]
    Io(String),
}

impl SessionError {
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        SessionError::Invalid {
            field,
            message: message.into(),
        }
    }

    /// A stable machine-readable code for the protocol.
    pub fn code(&self) -> &'static str {
        match self {
            SessionError::Invalid { .. } => "invalid_argument",
            SessionError::UnknownSession(_) => "unknown_session",
            SessionError::DuplicateSession(_) => "duplicate_session",
            SessionError::Limit(_) => "limit_exceeded",
            SessionError::Spawn { .. } => "spawn_failed",
            SessionError::Exited(_) => "session_exited",
            SessionError::Io(_) => "io_error",
        }
    }

    /// The request field the error is about, when there is one.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            SessionError::Invalid { field, .. } | SessionError::Spawn { field, .. } => Some(field),
            SessionError::UnknownSession(_)
            | SessionError::DuplicateSession(_)
            | SessionError::Exited(_) => Some("sid"),
            SessionError::Limit(_) | SessionError::Io(_) => None,
        }
    }
}

pub type Result<T, E = SessionError> = std::result::Result<T, E>;
