//! What every HTTP server screenpilot opens shares (`mcp --http`, the `watch` page): loopback addresses
//! only, a bearer token kept in a 0600 file, and requests from a foreign `Host` or `Origin` refused.
//!
//! Loopback alone is not enough: any local user could otherwise drive this user's terminals, hence the
//! token. The token alone is not enough against a web page in the person's own browser: DNS rebinding
//! makes `evil.example` resolve to 127.0.0.1, so its scripts reach the port with `Host: evil.example`;
//! and a page from any origin may open a WebSocket to the port. Hence the `Host` and `Origin` checks.
//!
//! Request bodies have a limit ([`limit_body`]): a larger one is answered 413 with the limit, from its
//! `Content-Length` before a byte of it is read, or once a chunked one passes it.
//!
//! This sits below the operations (the `watch` operation checks its address here) and names nothing
//! of theirs: its errors are its own ([`SetupError`]), which become an `OpError` with their field.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Why a server could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A setting the caller gave is wrong; `field` names it.
    #[error("{field}: {message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    /// The system refused: random bytes, a token file.
    #[error("{0}")]
    Io(String),
}

impl SetupError {
    fn invalid(field: &'static str, message: impl Into<String>) -> SetupError {
        SetupError::Invalid {
            field,
            message: message.into(),
        }
    }
}

/// A refused body of at most this many bytes is still read (and dropped) after the 413, so that a
/// client that sends its whole body before it reads (Python's http.client, requests) gets the answer
/// instead of a connection reset; a larger one is cut at once.
const DRAIN_AT_MOST: u64 = 256 * 1024 * 1024;

/// How long such a body is read after the 413, at most.
const DRAIN_FOR: std::time::Duration = std::time::Duration::from_secs(10);

/// `IP:PORT` (or `localhost:PORT`) on a loopback address; anything else is refused. `field` names the
/// argument in errors.
pub fn loopback_addr(text: &str, field: &'static str) -> Result<SocketAddr, SetupError> {
    let addr = match text.strip_prefix("localhost:") {
        Some(port) => port
            .parse::<u16>()
            .map(|port| SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .ok(),
        None => text.parse::<SocketAddr>().ok(),
    };
    let addr = addr.ok_or_else(|| {
        SetupError::invalid(
            field,
            format!("{text:?} is not IP:PORT; e.g. 127.0.0.1:8765 (port 0 picks a free one)"),
        )
    })?;
    if !addr.ip().is_loopback() {
        return Err(SetupError::invalid(
            field,
            format!(
                "{} is not a loopback address; screenpilot serves HTTP on 127.0.0.1 or [::1] only",
                addr.ip()
            ),
        ));
    }
    Ok(addr)
}

/// Listen on `addr` (checked by [`loopback_addr`]); answers the listener and the address it got (port
/// 0 picks a free one). `field` names the argument in errors.
pub async fn listen(
    addr: SocketAddr,
    field: &'static str,
) -> Result<(tokio::net::TcpListener, SocketAddr), SetupError> {
    let refused =
        |e: std::io::Error| SetupError::invalid(field, format!("cannot listen on {addr}: {e}"));
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(refused)?;
    let bound = listener.local_addr().map_err(refused)?;
    Ok((listener, bound))
}

/// Read a token the caller keeps in a file (warning on stderr when others can read it).
pub fn read_token(file: &Path) -> Result<String, SetupError> {
    if let Some(warning) = exposed_token_warning(file) {
        eprintln!("screenpilot: warning: {warning}");
    }
    let text = std::fs::read_to_string(file).map_err(|e| {
        SetupError::invalid("token_file", format!("cannot read {}: {e}", file.display()))
    })?;
    let token = text.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(SetupError::invalid(
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
pub fn new_token() -> Result<String, SetupError> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| SetupError::Io(format!("cannot read /dev/urandom: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Write the token where only this user can read it: `DIR/NAME`, mode 0600.
pub fn write_token(dir: &Path, name: &str, token: &str) -> Result<PathBuf, SetupError> {
    let path = dir.join(name);
    let fail = |e: std::io::Error| SetupError::Io(format!("cannot write {}: {e}", path.display()));
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
pub fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim())
}

/// The token of a request's `Authorization: Bearer` header, if it has one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(bearer_credentials)
}

/// Compare without stopping at the first difference, so timing tells nothing about the token.
pub fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Is `host` (a `Host` header value, or the host of an origin) this server: a loopback address or
/// `localhost`, on the port we listen on?
fn is_our_host(host: &str, port: u16) -> bool {
    let Some((name, host_port)) = host.rsplit_once(':') else {
        return false;
    };
    if host_port.parse::<u16>().ok() != Some(port) {
        return false;
    }
    let name = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    name.eq_ignore_ascii_case("localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Refuse requests addressed to another host (DNS rebinding) or sent by a page of another origin;
/// requests without an `Origin` (programs, not browsers' cross-origin requests) pass.
pub fn check_host_and_origin(headers: &HeaderMap, port: u16) -> Result<(), Forbidden> {
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
    if !host.is_some_and(|h| is_our_host(h, port)) {
        return Err(Forbidden(
            "screenpilot: this server answers only requests addressed to a loopback address or localhost (Host header)\n",
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ours = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|h| is_our_host(h, port));
        if !ours {
            return Err(Forbidden(
                "screenpilot: requests from pages of other origins are refused (Origin header)\n",
            ));
        }
    }
    Ok(())
}

/// A request refused for its `Host` or `Origin` (403), and why.
#[derive(Debug)]
pub struct Forbidden(pub &'static str);

impl IntoResponse for Forbidden {
    fn into_response(self) -> Response {
        (StatusCode::FORBIDDEN, self.0).into_response()
    }
}

/// The answer to a request without the right token.
pub fn unauthorized(server: &str) -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        format!("screenpilot {server}: missing or wrong bearer token\n"),
    )
        .into_response()
}

/// What [`require_token`] checks.
pub struct Gate {
    /// The server's name in refusals ("mcp").
    pub server: &'static str,
    pub token: String,
    /// The port we listen on, which `Host` and `Origin` must name.
    pub port: u16,
}

/// Let through only requests for this host, from no foreign origin, with `Authorization: Bearer
/// TOKEN`; others get 403 (host, origin) or 401 (token).
pub async fn require_token(
    State(gate): State<Arc<Gate>>,
    request: Request,
    next: Next,
) -> Response {
    if let Err(refused) = check_host_and_origin(request.headers(), gate.port) {
        return refused.into_response();
    }
    match bearer_token(request.headers()) {
        Some(presented) if same_secret(presented.as_bytes(), gate.token.as_bytes()) => {
            next.run(request).await
        }
        _ => unauthorized(gate.server),
    }
}

/// Refuse a request body over `limit` bytes with 413 Payload Too Large, saying the limit: at once when
/// its `Content-Length` says so (nothing of it is read first), else (chunked) as soon as what arrived
/// passes the limit. A chunked body within it is passed on whole. A layer:
/// `axum::middleware::from_fn_with_state(limit, limit_body)`.
pub async fn limit_body(State(limit): State<usize>, request: Request, next: Next) -> Response {
    let expects_continue = request
        .headers()
        .get(header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    if let Some(declared) = content_length(request.headers()) {
        // hyper reads no more and no less than a Content-Length says.
        if declared <= limit as u64 {
            return next.run(request).await;
        }
        let drain = !expects_continue && declared <= DRAIN_AT_MOST;
        return too_large(request.into_body(), limit, drain);
    }
    if request.body().is_end_stream() {
        return next.run(request).await;
    }
    let (parts, mut body) = request.into_parts();
    let mut collected = Vec::new();
    loop {
        match std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await {
            None => break,
            Some(Ok(frame)) => {
                let Ok(data) = frame.into_data() else {
                    continue; // trailers
                };
                if collected.len() + data.len() > limit {
                    return too_large(body, limit, !expects_continue);
                }
                collected.extend_from_slice(&data);
            }
            Some(Err(e)) => {
                return (
                    StatusCode::BAD_REQUEST,
                    format!("screenpilot: the request body could not be read: {e}\n"),
                )
                    .into_response()
            }
        }
    }
    next.run(Request::from_parts(parts, Body::from(collected)))
        .await
}

/// The request's `Content-Length`, when it has one (hyper has refused a malformed one already).
fn content_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The 413 answer; with `drain`, the rest of `body` is read and dropped (within [`DRAIN_AT_MOST`]
/// and [`DRAIN_FOR`]) while it goes out, and the connection closes after.
fn too_large(body: Body, limit: usize, drain: bool) -> Response {
    if drain {
        tokio::spawn(async move {
            let mut body = body;
            let mut seen: u64 = 0;
            let _ = tokio::time::timeout(DRAIN_FOR, async {
                while let Some(Ok(frame)) =
                    std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
                {
                    seen += frame.data_ref().map_or(0, |data| data.len() as u64);
                    if seen > DRAIN_AT_MOST {
                        break;
                    }
                }
            })
            .await;
        });
    }
    let mut response = (
        StatusCode::PAYLOAD_TOO_LARGE,
        format!(
            "screenpilot: the request body is over the limit of {} MiB ({limit} bytes)\n",
            limit >> 20
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close")); // not an operation
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn only_loopback_addresses_are_accepted() {
        assert!(loopback_addr("127.0.0.1:0", "http").is_ok());
        assert!(loopback_addr("[::1]:8765", "http").is_ok());
        assert_eq!(
            loopback_addr("localhost:9", "http").ok(),
            Some(SocketAddr::from((Ipv4Addr::LOCALHOST, 9)))
        );
        let refused = loopback_addr("0.0.0.0:8765", "http").err();
        assert!(
            matches!(&refused, Some(SetupError::Invalid { field: "http", message }) if message.contains("not a loopback address")),
            "{refused:?}"
        );
        assert!(loopback_addr("example.com:80", "http").is_err());
        assert!(loopback_addr("127.0.0.1", "http").is_err());
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
    fn only_our_host_and_origin_pass() {
        let headers = |host: &str, origin: Option<&str>| {
            let mut h = HeaderMap::new();
            h.insert(
                header::HOST,
                HeaderValue::from_str(host).unwrap_or_else(|e| panic!("{e}")),
            );
            if let Some(o) = origin {
                h.insert(
                    header::ORIGIN,
                    HeaderValue::from_str(o).unwrap_or_else(|e| panic!("{e}")),
                );
            }
            h
        };
        let pass = |host: &str, origin: Option<&str>| {
            check_host_and_origin(&headers(host, origin), 8765).is_ok()
        };
        assert!(pass("127.0.0.1:8765", None));
        assert!(pass("localhost:8765", Some("http://localhost:8765")));
        assert!(pass("[::1]:8765", Some("http://127.0.0.1:8765")));
        assert!(!pass("evil.example:8765", None), "DNS rebinding");
        assert!(!pass("127.0.0.1:9999", None), "another port");
        assert!(!pass("127.0.0.1:8765", Some("http://evil.example")));
        assert!(!pass("127.0.0.1:8765", Some("null")));
        assert!(!pass("127.0.0.1:8765", Some("https://127.0.0.1:8765")));
    }

    #[test]
    fn a_token_file_others_can_read_is_warned_about() {
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
