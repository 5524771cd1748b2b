//! The daemon's wire protocol: JSON lines over a unix socket.
//!
//! A client sends `{"id": ID, "op": NAME, "params": {...}}`, one per line, and may send more before the
//! answers come: every request runs concurrently. The daemon answers each with
//! `{"id": ID, "ok": true, "result": {...}}` or `{"id": ID, "ok": false, "error": {code, message, field}}`,
//! possibly preceded by `{"id": ID, "progress": {...}}` lines. `{"op": "cancel", "params": {"id": ID}}`
//! stops a running request. Closing the connection cancels everything it started, except requests
//! sent with a `"resume": KEY`: those run to their end, and their answer is kept for
//! `{"op": "resume", "params": {"key": KEY}}` on a later connection (a client on another host whose
//! link dropped; see `resume.rs`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::error::OpError;

/// The longest request line accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;

/// The longest answer line a client reads from a daemon or a link, in bytes. A far side is often code
/// we do not trust (a sandbox behind `docker exec -i`): past this, the link is dropped, naming why,
/// rather than buffered until memory fails. Far above the largest real answer (screenshots are
/// capped at 12 megapixels).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024 * 1024;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Request {
    #[serde(default)]
    pub id: Value,
    pub op: String,
    #[serde(default)]
    pub params: Value,
    /// Keep running if the connection goes, and keep the answer for `resume` under this key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Response {
    pub id: Value,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub ok: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub result: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<OpError>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub progress: Option<Value>,
}

impl Response {
    pub fn done(id: Value, outcome: Result<Value, OpError>) -> Response {
        match outcome {
            Ok(result) => Response {
                id,
                ok: Some(true),
                result: Some(result),
                error: None,
                progress: None,
            },
            Err(error) => Response {
                id,
                ok: Some(false),
                result: None,
                error: Some(error),
                progress: None,
            },
        }
    }

    pub fn progress(id: Value, progress: Value) -> Response {
        Response {
            id,
            ok: None,
            result: None,
            error: None,
            progress: Some(progress),
        }
    }

    /// A final answer (not a progress line).
    pub fn is_final(&self) -> bool {
        self.ok.is_some()
    }
}
