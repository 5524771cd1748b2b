//! The errors of the crates below, as operation errors ([`OpError`], defined with the wire).

use screenpilot_desktop::DesktopError;
use screenpilot_session::SessionError;

pub use crate::wire::error::{ErrorCode, OpError};

impl From<SessionError> for OpError {
    fn from(e: SessionError) -> Self {
        OpError {
            code: ErrorCode::parse(e.code()),
            message: e.to_string(),
            field: e.field().map(str::to_owned),
        }
    }
}

impl From<DesktopError> for OpError {
    fn from(e: DesktopError) -> Self {
        OpError {
            code: ErrorCode::parse(e.code()),
            message: e.to_string(),
            field: e.field().map(str::to_owned),
        }
    }
}
