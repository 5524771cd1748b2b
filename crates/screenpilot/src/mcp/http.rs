//! `screenpilot mcp --http 127.0.0.1:PORT`: the same server over streamable HTTP, for clients that cannot
//! start a process. Loopback only, every request must carry `Authorization: Bearer TOKEN`, and foreign
//! `Host` and `Origin` headers are refused ([`crate::loopback_http`], shared with the watch page).

use std::path::Path;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::server::Screenpilot;
use crate::loopback_http::{self, loopback_addr, new_token, read_token, write_token, Gate};
use crate::ops::ErrorCode;
use crate::ops::OpError;
use crate::protocol::MAX_REQUEST_BYTES;

/// The file a generated token is written to, inside the daemon directory.
const TOKEN_FILE: &str = "mcp-http.token";

/// Serve until SIGINT or SIGTERM.
pub async fn serve(
    server: Screenpilot,
    addr: &str,
    token_file: Option<&Path>,
) -> Result<(), OpError> {
    let addr = loopback_addr(addr, "http")?;
    let token = match token_file {
        Some(file) => read_token(file)?,
        None => {
            let token = new_token()?;
            let file = write_token(&server.shared.fleet.paths().dir, TOKEN_FILE, &token)?;
            eprintln!(
                "screenpilot mcp: bearer token {token} (also in {})",
                file.display()
            );
            token
        }
    };
    let stop = CancellationToken::new();
    let calls = server.shared.shutdown.clone();
    // rmcp's own limit (4 MiB by default) stays out of the way of ours: a body may hold what one
    // request line to the daemon may (and a line of `mcp` on stdio).
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(stop.child_token())
        .with_max_request_body_bytes(MAX_REQUEST_BYTES);
    let mcp = StreamableHttpService::new(
        move || Ok(server.for_new_client()),
        LocalSessionManager::default().into(),
        config,
    );
    let (listener, bound) = loopback_http::listen(addr, "http").await?;
    let gate = Gate {
        server: "mcp",
        token,
        port: bound.port(),
    };
    // The gate runs first (the outer layer): nothing of a body is read for a request not let in.
    let app = axum::Router::new()
        .nest_service("/mcp", mcp)
        .layer(axum::middleware::from_fn_with_state(
            MAX_REQUEST_BYTES,
            loopback_http::limit_body,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::new(gate),
            loopback_http::require_token,
        ));
    eprintln!("screenpilot mcp: listening on http://{bound}/mcp");
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            stop_signal().await;
            // Running calls first: each cancels its daemon request, so sessions close promptly.
            calls.cancel();
            stop.cancel();
        })
        .await
        .map_err(|e| OpError::new(ErrorCode::McpFailed, format!("HTTP server failed: {e}")))
}

async fn stop_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate => {}
    }
}
