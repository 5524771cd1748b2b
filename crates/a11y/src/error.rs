//! Why reading or acting on the accessibility tree failed, with the field a caller got wrong.

use std::time::Duration;

/// The longest one call to an application may take.
pub const CALL_LIMIT: Duration = Duration::from_secs(3);

#[derive(Debug, thiserror::Error)]
pub enum A11yError {
    /// No accessibility bus to talk to: why, in a sentence (no session bus, no AT-SPI installed).
    #[error("{0}")]
    NoBus(String),
    /// A parameter is wrong; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    /// The element cannot take the action asked for now (disabled, hidden, covered, off screen, no
    /// such interface); nothing was done.
    #[error("{field}: {message}")]
    Refused {
        field: &'static str,
        message: String,
    },
    /// The element (or its application) is gone.
    #[error("{field}: {message}")]
    Gone {
        field: &'static str,
        message: String,
    },
    /// An application did not answer in time (hung, or busy).
    #[error("{what} did not answer within {limit:?}")]
    Timeout { what: String, limit: Duration },
    /// The bus refused or failed a call.
    #[error("accessibility bus: {0}")]
    Bus(String),
}

impl A11yError {
    pub fn invalid(field: &'static str, message: impl Into<String>) -> A11yError {
        A11yError::Invalid {
            field,
            message: message.into(),
        }
    }

    pub fn refused(field: &'static str, message: impl Into<String>) -> A11yError {
        A11yError::Refused {
            field,
            message: message.into(),
        }
    }

    /// The field at fault, when one is.
    pub fn field(&self) -> Option<&'static str> {
        match self {
            A11yError::Invalid { field, .. }
            | A11yError::Refused { field, .. }
            | A11yError::Gone { field, .. } => Some(field),
            _ => None,
        }
    }
}

/// What a failed D-Bus call means here: an object or application that went away is `Gone`; a call
/// that timed out is `Timeout`; anything else is the bus's own error.
pub(crate) fn from_zbus(e: zbus::Error, what: &str) -> A11yError {
    if let zbus::Error::MethodError(name, message, _) = &e {
        let name = name.as_str();
        if name.ends_with("UnknownObject") || name.ends_with("ServiceUnknown") {
            return A11yError::Gone {
                field: "ref",
                message: format!("{what} is gone (its window or application closed)"),
            };
        }
        if name.ends_with("UnknownMethod") {
            return A11yError::refused(
                "do",
                format!(
                    "{what} does not offer that ({})",
                    message.as_deref().unwrap_or(name)
                ),
            );
        }
        if name.ends_with("NoReply") || name.ends_with("Timeout") {
            return A11yError::Timeout {
                what: what.to_owned(),
                limit: CALL_LIMIT,
            };
        }
    }
    if let zbus::Error::InputOutput(io) = &e {
        if io.kind() == std::io::ErrorKind::TimedOut {
            return A11yError::Timeout {
                what: what.to_owned(),
                limit: CALL_LIMIT,
            };
        }
    }
    A11yError::Bus(format!("{what}: {e}"))
}

pub type Result<T> = std::result::Result<T, A11yError>;
