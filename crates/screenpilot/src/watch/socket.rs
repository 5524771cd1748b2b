//! What the two kinds of live view share on their WebSocket: what the page may do, and the messages
//! every view sends.

use axum::extract::ws::{Message, WebSocket};
use serde_json::{json, Value};

/// What the page may do with a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    View,
    Control,
}

pub async fn send_json(socket: &mut WebSocket, value: &Value) -> Result<(), axum::Error> {
    socket.send(Message::text(value.to_string())).await
}

/// Tell a read-only page that its input went nowhere.
pub async fn refuse_input(socket: &mut WebSocket) -> Result<(), axum::Error> {
    send_json(
        socket,
        &json!({"type": "refused", "message": "read-only: this page may look but not type or click; open the URL of `screenpilot watch --control` to take control"}),
    )
    .await
}
