//! `screenpilot mcp --http 127.0.0.1:PORT`: the same server over streamable HTTP, for clients that cannot
//! start a process. Loopback only, and every request must carry `Authorization: Bearer TOKEN`: any local
//! user could otherwise drive this user's terminals.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::server::Screenpilot;
use crate::ops::ErrorCode;
use crate::ops::OpError;

/// The file a generated token is written to, inside the daemon directory.
const TOKEN_FILE: &str = "mcp-http.token";

/// Serve until SIGINT or SIGTERM.
pub async fn serve(
    server: Screenpilot,
    addr: &str,
    token_file: Option<&Path>,
) -> Result<(), OpError> {
    let addr = loopback_addr(addr)?;
    let token = match token_file {
        Some(file) => read_token(file)?,
        None => {
            let token = new_token()?;
            let file = write_token(&server.shared.paths.dir, &token)?;
            eprintln!(
                "screenpilot mcp: bearer token {token} (also in {})",
                file.display()
            );
            token
        }
    };
    let stop = CancellationToken::new();
    let calls = server.shared.shutdown.clone();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let mcp = StreamableHttpService::new(
        move || Ok(server.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let app =
        axum::Router::new()
            .nest_service("/mcp", mcp)
            .layer(axum::middleware::from_fn_with_state(
                Arc::new(token),
                require_token,
            ));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| OpError::invalid("http", format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| OpError::invalid("http", format!("cannot listen on {addr}: {e}")))?;
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

/// `IP:PORT` (or `localhost:PORT`) on a loopback address; anything else is refused.
fn loopback_addr(text: &str) -> Result<SocketAddr, OpError> {
    let addr = match text.strip_prefix("localhost:") {
        Some(port) => port
            .parse::<u16>()
            .map(|port| SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .ok(),
        None => text.parse::<SocketAddr>().ok(),
    };
    let addr = addr.ok_or_else(|| {
        OpError::invalid(
            "http",
            format!("{text:?} is not IP:PORT; e.g. 127.0.0.1:8765 (port 0 picks a free one)"),
        )
    })?;
    if !addr.ip().is_loopback() {
        return Err(OpError::invalid(
            "http",
            format!(
                "{} is not a loopback address; screenpilot serves MCP over HTTP on 127.0.0.1 or [::1] only",
                addr.ip()
            ),
        ));
    }
    Ok(addr)
}

fn read_token(file: &Path) -> Result<String, OpError> {
    if let Some(warning) = exposed_token_warning(file) {
        eprintln!("screenpilot mcp: warning: {warning}");
    }
    let text = std::fs::read_to_string(file).map_err(|e| {
        OpError::invalid("token_file", format!("cannot read {}: {e}", file.display()))
    })?;
    let token = text.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(OpError::invalid(
            "token_file",
            format!(
                "{} must hold one token of visible ASCII characters",
                file.display()
            ),
        ));
    }
    Ok(token.to_owned())
}

/// Why a token file is exposed, if it is: anyone who can read the token can drive this user's
/// sessions. A warning, not a refusal: the file is the caller's, and it may be on purpose.
fn exposed_token_warning(file: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file).ok()?.permissions().mode();
    (mode & 0o077 != 0).then(|| {
        format!(
            "token_file: {} is readable or writable by other users (mode {:o}); chmod 600 it",
            file.display(),
            mode & 0o777
        )
    })
}

/// 32 random bytes from the kernel, as hex.
fn new_token() -> Result<String, OpError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| {
            OpError::new(
                ErrorCode::McpFailed,
                format!("cannot read /dev/urandom: {e}"),
            )
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Write the token where only this user can read it: `DIR/mcp-http.token`, mode 0600.
fn write_token(dir: &Path, token: &str) -> Result<PathBuf, OpError> {
    let path = dir.join(TOKEN_FILE);
    let fail = |e: std::io::Error| {
        OpError::new(
            ErrorCode::McpFailed,
            format!("cannot write {}: {e}", path.display()),
        )
    };
    crate::paths::Paths::in_dir(dir.to_path_buf())
        .ensure_private_dir()
        .map_err(fail)?;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .map_err(fail)?;
    // An older file keeps its mode on open: make sure it is private now.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(fail)?;
    writeln!(file, "{token}").map_err(fail)?;
    Ok(path)
}

/// The credentials of an `Authorization: Bearer TOKEN` value. The scheme name is case-insensitive
/// (RFC 9110 section 11.1), so `bearer` and `BEARER` are the same scheme.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// Let through only requests with `Authorization: Bearer TOKEN`; others get 401.
async fn require_token(State(token): State<Arc<String>>, request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials);
    match presented {
        Some(presented) if same_secret(presented.as_bytes(), token.as_bytes()) => {
            next.run(request).await
        }
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "screenpilot mcp: missing or wrong bearer token\n",
        )
            .into_response(),
    }
}

/// Compare without stopping at the first difference, so timing tells nothing about the token.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert!(loopback_addr("127.0.0.1:0").is_ok());
        assert!(loopback_addr("[::1]:8765").is_ok());
        assert_eq!(
            loopback_addr("localhost:9").ok(),
            Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 9)))
        );
        let refused = loopback_addr("0.0.0.0:8765").err().map(|e| e.message);
        assert!(refused.is_some_and(|m| m.contains("not a loopback address")));
        assert!(loopback_addr("example.com:80").is_err());
        assert!(loopback_addr("127.0.0.1").is_err());
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
        let token = new_token().unwrap_or_default();
        assert_eq!(token.len(), 64);
    }

    #[test]
    fn the_bearer_scheme_is_matched_whatever_its_case() {
        assert_eq!(bearer_credentials("Bearer abc"), Some("abc"));
        assert_eq!(bearer_credentials("bearer abc"), Some("abc"));
        assert_eq!(bearer_credentials("BEARER  abc "), Some("abc"));
        assert_eq!(bearer_credentials("Basic abc"), None);
        assert_eq!(bearer_credentials("Bearerabc"), None);
    }

    #[test]
    fn a_token_file_others_can_read_is_warned_about() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("temp dir: {e}"));
        let file = dir.path().join("token");
        std::fs::write(&file, "secret\n").unwrap_or_else(|e| panic!("write: {e}"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|e| panic!("chmod: {e}"));
        let warning = exposed_token_warning(&file);
        assert!(
            warning.as_ref().is_some_and(|m| m.contains("chmod 600")),
            "{warning:?}"
        );
        assert_eq!(read_token(&file).ok().as_deref(), Some("secret"));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))
            .unwrap_or_else(|e| panic!("chmod: {e}"));
        assert_eq!(exposed_token_warning(&file), None);
    }
}
