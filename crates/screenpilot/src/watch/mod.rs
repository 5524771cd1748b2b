//! The watch page's server: every session live in a browser, terminals and desktops side by side.
//!
//! It runs inside the daemon (started by the `watch` operation), next to the sessions it shows: a
//! terminal is painted straight from its emulator's cells and a desktop captured when X DAMAGE fires,
//! with no protocol round trip, and the page stays up after the CLI that asked for it has exited.
//!
//! Routes (every one refuses a foreign `Host` or `Origin` with 403, see [`crate::loopback_http`]):
//! - `GET /` and `GET /assets/...`: the page, embedded in the binary ([`assets`]). They hold no data,
//!   and the browser cannot send a header when it opens a URL, so they need no token.
//! - `GET /ws/sessions` (WebSocket): the list of sessions, sent again whenever one comes or goes.
//! - `GET /ws/session/{sid}` (WebSocket): one session's live view, and input from people in control.
//!
//! The WebSockets answer 401 without a token. Browsers cannot set `Authorization` on a WebSocket, so the
//! page offers the token as a subprotocol, `Sec-WebSocket-Protocol: screenpilot.watch, bearer.TOKEN`
//! (as Kubernetes does), and the server selects `screenpilot.watch`; the token is never in a URL, which
//! could end up in a log or a `Referer`. Programs may send `Authorization: Bearer TOKEN` instead.
//!
//! There are two tokens: the view token lets a page look; the control token (`watch --control`) also
//! lets it type and click. Input from a page holding only the view token is refused.

mod assets;
mod desktop;
mod socket;
mod terminal;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex, Weak};

use axum::extract::ws::{
    rejection::WebSocketUpgradeRejection, Message, WebSocket, WebSocketUpgrade,
};
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use serde_json::{json, Value};

use tokio_util::sync::CancellationToken;

use screenpilot_desktop::Desktop;
use screenpilot_session::Session;

use crate::loopback_http::{self, bearer_token, same_secret};
use crate::ops::kit::display::{find_target, Target};
use crate::ops::{Context, OpError};
use crate::protocol::MAX_REQUEST_BYTES;
use crate::watch_state::Running;
use desktop::DesktopFeed;
use socket::{send_json, Access};
use terminal::TerminalFeed;

/// The WebSocket subprotocol the page speaks.
pub const PROTOCOL: &str = "screenpilot.watch";

/// The prefix of the subprotocol value that carries the token.
const TOKEN_PROTOCOL_PREFIX: &str = "bearer.";

/// Files the tokens are kept in, inside the daemon directory, mode 0600.
pub const VIEW_TOKEN_FILE: &str = "watch.token";
pub const CONTROL_TOKEN_FILE: &str = "watch-control.token";

/// Largest message a page may send (a paste).
const MAX_INPUT_MESSAGE: usize = 1 << 20;

struct Server {
    ctx: Context,
    view_token: String,
    control_token: String,
    port: u16,
    terminals: Mutex<HashMap<String, Weak<TerminalFeed>>>,
    desktops: Mutex<HashMap<String, Weak<DesktopFeed>>>,
    stop: CancellationToken,
}

/// Let the `watch` operation of `ctx` start this server (the daemon does so for its context).
pub fn install(ctx: &Context) {
    ctx.watch.install(Box::new(|ctx, addr, dir| {
        Box::pin(async move { start(ctx, addr, &dir).await })
    }));
}

/// Listen on `addr` (loopback) and serve the sessions of `ctx` until [`Running::stop`]; the tokens are
/// written to `dir`.
pub async fn start(ctx: Context, addr: SocketAddr, dir: &Path) -> Result<Running, OpError> {
    let (listener, bound) = loopback_http::listen(addr, "http").await?;
    let view_token = loopback_http::new_token()?;
    let control_token = loopback_http::new_token()?;
    let view_token_file = loopback_http::write_token(dir, VIEW_TOKEN_FILE, &view_token)?;
    let control_token_file = loopback_http::write_token(dir, CONTROL_TOKEN_FILE, &control_token)?;
    let stop = CancellationToken::new();
    let server = Arc::new(Server {
        ctx,
        view_token: view_token.clone(),
        control_token: control_token.clone(),
        port: bound.port(),
        terminals: Mutex::default(),
        desktops: Mutex::default(),
        stop: stop.clone(),
    });
    let app = axum::Router::new()
        .route("/ws/sessions", get(sessions_socket))
        .route("/ws/session/{sid}", get(session_socket))
        .fallback(get(asset))
        .layer(axum::middleware::from_fn_with_state(
            MAX_REQUEST_BYTES,
            loopback_http::limit_body,
        ))
        .layer(axum::middleware::from_fn_with_state(
            server.clone(),
            only_our_host,
        ))
        .with_state(server);
    let stopped = stop.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stopped.cancelled().await })
            .await;
    });
    Ok(Running {
        addr: bound,
        view_token,
        control_token,
        view_token_file,
        control_token_file,
        stop,
    })
}

async fn only_our_host(
    State(server): State<Arc<Server>>,
    request: Request,
    next: Next,
) -> Response {
    match loopback_http::check_host_and_origin(request.headers(), server.port) {
        Ok(()) => next.run(request).await,
        Err(refused) => refused.into_response(),
    }
}

/// The page's files.
async fn asset(request: Request) -> Response {
    let Some(asset) = assets::find(request.uri().path()) else {
        return (StatusCode::NOT_FOUND, "screenpilot watch: no such page\n").into_response();
    };
    let mut response = asset.body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(asset.content_type),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    // No framing (a page in control must not be clickjacked), and nothing but our own files.
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; connect-src 'self'; img-src 'self' blob:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    response
}

impl Server {
    /// What the request's token allows, if it carries one of ours.
    fn access(&self, headers: &HeaderMap) -> Option<Access> {
        let offered = bearer_token(headers)
            .map(str::to_owned)
            .or_else(|| protocol_token(headers))?;
        if same_secret(offered.as_bytes(), self.control_token.as_bytes()) {
            Some(Access::Control)
        } else if same_secret(offered.as_bytes(), self.view_token.as_bytes()) {
            Some(Access::View)
        } else {
            None
        }
    }

    fn terminal_feed(&self, session: Arc<Session>) -> Arc<TerminalFeed> {
        let mut feeds = self.terminals.lock().unwrap_or_else(|p| p.into_inner());
        feeds.retain(|_, feed| feed.strong_count() > 0);
        let sid = session.sid.to_string();
        if let Some(feed) = feeds.get(&sid).and_then(Weak::upgrade) {
            // A sid can name a new session after the old one closed.
            if Arc::ptr_eq(&feed.session, &session) {
                return feed;
            }
        }
        let feed = TerminalFeed::start(session);
        feeds.insert(sid, Arc::downgrade(&feed));
        feed
    }

    fn desktop_feed(&self, desktop: Arc<Desktop>) -> Arc<DesktopFeed> {
        let mut feeds = self.desktops.lock().unwrap_or_else(|p| p.into_inner());
        feeds.retain(|_, feed| feed.strong_count() > 0);
        if let Some(feed) = feeds.get(&desktop.sid).and_then(Weak::upgrade) {
            if Arc::ptr_eq(&feed.desktop, &desktop) {
                return feed;
            }
        }
        let sid = desktop.sid.clone();
        let feed = DesktopFeed::start(desktop);
        feeds.insert(sid, Arc::downgrade(&feed));
        feed
    }

    /// Every session, as the page lists it.
    fn sessions(&self) -> Vec<Value> {
        let mut list: Vec<Value> = self
            .ctx
            .registry
            .list()
            .into_iter()
            .map(|s| {
                json!({
                    "sid": s.sid,
                    "kind": s.kind,
                    "cols": s.cols,
                    "rows": s.rows,
                    "title": s.title,
                    "alive": s.alive,
                    "exit_code": s.exit_code,
                    "cmd": s.cmd,
                })
            })
            .collect();
        list.extend(self.ctx.desktops.list().into_iter().map(|d| {
            json!({
                "sid": d.sid,
                "kind": "desktop",
                "width": d.width,
                "height": d.height,
                "title": d.window.map(|w| w.title),
                "alive": d.alive,
                "exit_code": d.exit_code,
                "cmd": d.cmd,
            })
        }));
        list.sort_by(|a, b| a["sid"].as_str().cmp(&b["sid"].as_str()));
        list
    }
}

/// The token in a `Sec-WebSocket-Protocol: screenpilot.watch, bearer.TOKEN` request header.
fn protocol_token(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .find_map(|p| {
            p.trim()
                .strip_prefix(TOKEN_PROTOCOL_PREFIX)
                .map(str::to_owned)
        })
}

/// Why a WebSocket was not opened.
enum Refused {
    /// No token of ours: 401.
    Unauthorized,
    /// Not a WebSocket request.
    NotUpgrade(WebSocketUpgradeRejection),
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::Unauthorized => loopback_http::unauthorized("watch"), // not an operation
            Refused::NotUpgrade(rejection) => rejection.into_response(),
        }
    }
}

/// Check the token, then upgrade: 401 before anything else without one.
fn upgrade(
    server: &Server,
    headers: &HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<(WebSocketUpgrade, Access), Refused> {
    let access = server.access(headers).ok_or(Refused::Unauthorized)?;
    let ws = ws.map_err(Refused::NotUpgrade)?;
    Ok((
        ws.protocols([PROTOCOL]).max_message_size(MAX_INPUT_MESSAGE),
        access,
    ))
}

/// `/ws/sessions`: the list now, and again whenever a session comes or goes.
async fn sessions_socket(
    State(server): State<Arc<Server>>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    match upgrade(&server, &headers, ws) {
        Ok((ws, access)) => ws.on_upgrade(move |socket| list_sessions(server, socket, access)),
        Err(refused) => refused.into_response(),
    }
}

async fn list_sessions(server: Arc<Server>, mut socket: WebSocket, access: Access) {
    let mut terminals = server.ctx.registry.changes();
    let mut desktops = server.ctx.desktops.changes();
    let hello = json!({"type": "hello", "control": access == Access::Control});
    if send_json(&mut socket, &hello).await.is_err() {
        return;
    }
    loop {
        terminals.borrow_and_update();
        desktops.borrow_and_update();
        let list = json!({"type": "sessions", "sessions": server.sessions()});
        if send_json(&mut socket, &list).await.is_err() {
            return;
        }
        tokio::select! {
            changed = terminals.changed() => if changed.is_err() { return },
            changed = desktops.changed() => if changed.is_err() { return },
            incoming = socket.recv() => match incoming {
                // The list socket takes no input; anything but a close is ignored.
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            _ = server.stop.cancelled() => return,
        }
    }
}

/// `/ws/session/{sid}`: one session's live view.
async fn session_socket(
    State(server): State<Arc<Server>>,
    UrlPath(sid): UrlPath<String>,
    headers: HeaderMap,
    ws: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let (ws, access) = match upgrade(&server, &headers, ws) {
        Ok(upgraded) => upgraded,
        Err(refused) => return refused.into_response(),
    };
    let target = match find_target(&server.ctx, &sid) {
        Ok(target) => target,
        Err(e) => {
            return (
                StatusCode::NOT_FOUND,
                format!("screenpilot watch: {}\n", e.message),
            )
                .into_response()
        }
    };
    let stop = server.stop.clone();
    match target {
        Target::Terminal(session) => {
            let feed = server.terminal_feed(session);
            ws.on_upgrade(move |socket| terminal::serve_viewer(socket, feed, access, stop))
        }
        Target::Desktop(desktop) => {
            let feed = server.desktop_feed(desktop);
            let ctx = server.ctx.clone();
            ws.on_upgrade(move |socket| desktop::serve_viewer(socket, ctx, feed, access, stop))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_read_from_the_offered_subprotocols() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static("screenpilot.watch, bearer.abc123"),
        );
        assert_eq!(protocol_token(&headers).as_deref(), Some("abc123"));
        headers.insert(
            header::SEC_WEBSOCKET_PROTOCOL,
            HeaderValue::from_static("screenpilot.watch"),
        );
        assert_eq!(protocol_token(&headers), None);
        assert_eq!(protocol_token(&HeaderMap::new()), None);
    }

    #[test]
    fn every_asset_is_served_at_its_path_with_a_type() {
        for path in [
            "/",
            "/assets/watch.js",
            "/assets/xterm.js",
            "/assets/xterm.css",
        ] {
            let asset = assets::find(path).unwrap_or_else(|| panic!("{path} is served"));
            assert!(!asset.body.is_empty(), "{path}");
        }
        assert!(assets::find("/assets/../Cargo.toml").is_none());
    }
}
