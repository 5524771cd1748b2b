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
mod running;
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
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use screenpilot_desktop::Desktop;
use screenpilot_session::Session;

use crate::loopback_http::{self, bearer_token, same_secret};
use crate::ops::display::{find_target, Target};
use crate::ops::{Computer, ComputerParams, Context, ErrorCode, OpError, Operation, Progress};
use desktop::DesktopFeed;
pub use running::{Running, WatchServer};
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

/// What the page may do with a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    View,
    Control,
}

struct Server {
    ctx: Context,
    view_token: String,
    control_token: String,
    port: u16,
    terminals: Mutex<HashMap<String, Weak<TerminalFeed>>>,
    desktops: Mutex<HashMap<String, Weak<DesktopFeed>>>,
    stop: CancellationToken,
}

/// Listen on `addr` (loopback) and serve the sessions of `ctx` until [`Running::stop`]; the tokens are
/// written to `dir`.
pub async fn start(ctx: Context, addr: SocketAddr, dir: &Path) -> Result<Running, OpError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| OpError::invalid("http", format!("cannot listen on {addr}: {e}")))?;
    let bound = listener
        .local_addr()
        .map_err(|e| OpError::invalid("http", format!("cannot listen on {addr}: {e}")))?;
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
            Refused::Unauthorized => loopback_http::unauthorized("watch"),
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
    match target {
        Target::Terminal(session) => {
            ws.on_upgrade(move |socket| watch_terminal(server, socket, session, access))
        }
        Target::Desktop(desktop) => {
            ws.on_upgrade(move |socket| watch_desktop(server, socket, desktop, access))
        }
    }
}

async fn send_json(socket: &mut WebSocket, value: &Value) -> Result<(), axum::Error> {
    socket.send(Message::text(value.to_string())).await
}

/// Tell a read-only page that its input went nowhere.
async fn refuse_input(socket: &mut WebSocket) -> Result<(), axum::Error> {
    send_json(
        socket,
        &json!({"type": "refused", "message": "read-only: this page may look but not type or click; open the URL of `screenpilot watch --control` to take control"}),
    )
    .await
}

async fn watch_terminal(
    server: Arc<Server>,
    mut socket: WebSocket,
    session: Arc<Session>,
    access: Access,
) {
    let _viewer = session.add_viewer("watch", access == Access::View);
    let feed = server.terminal_feed(session.clone());
    let hello = json!({
        "type": "hello",
        "sid": session.sid.to_string(),
        "kind": session.kind(),
        "control": access == Access::Control,
    });
    if send_json(&mut socket, &hello).await.is_err() {
        return;
    }
    let mut shown = None;
    let mut alive = None;
    let (mut paint, mut paints) = feed.join();
    loop {
        if shown != Some(paint.size) {
            let size = json!({"type": "size", "cols": paint.size.cols, "rows": paint.size.rows});
            if send_json(&mut socket, &size).await.is_err() {
                return;
            }
            shown = Some(paint.size);
        }
        if !paint.bytes.is_empty()
            && socket
                .send(Message::binary(paint.bytes.clone()))
                .await
                .is_err()
        {
            return;
        }
        let now_alive = session.alive();
        if alive != Some(now_alive) {
            let status = json!({"type": "status", "alive": now_alive, "exit_code": session.info().exit_code});
            if send_json(&mut socket, &status).await.is_err() {
                return;
            }
            alive = Some(now_alive);
        }
        paint = loop {
            tokio::select! {
                next = paints.recv() => match next {
                    Ok(next) => break next,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // Too far behind to catch up on differences: start again from a full paint.
                        let (full, again) = feed.join();
                        paints = again;
                        break full;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                incoming = socket.recv() => match incoming {
                    Some(Ok(Message::Binary(bytes))) => {
                        if !take_terminal_input(&mut socket, &session, access, bytes.to_vec()).await {
                            return;
                        }
                    }
                    Some(Ok(Message::Text(text))) => {
                        if !take_terminal_input(&mut socket, &session, access, text.as_bytes().to_vec()).await {
                            return;
                        }
                    }
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                    Some(Ok(_)) => {}
                },
                _ = server.stop.cancelled() => return,
            }
        };
    }
}

/// Write a page's keys, paste or mouse report to the program (as the page's terminal encoded them,
/// in the modes the program set); false when the page is gone.
async fn take_terminal_input(
    socket: &mut WebSocket,
    session: &Session,
    access: Access,
    bytes: Vec<u8>,
) -> bool {
    if access != Access::Control {
        return refuse_input(socket).await.is_ok();
    }
    if let Err(e) = session.write(&[bytes]).await {
        let error = json!({"type": "error", "message": OpError::from(e).message});
        return send_json(socket, &error).await.is_ok();
    }
    true
}

/// Input from a page on a desktop, in screen pixels.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum DesktopInput {
    /// A click (`count` 2: a double click) with `button` "left", "middle" or "right".
    Click {
        x: u32,
        y: u32,
        #[serde(default)]
        button: Option<String>,
        #[serde(default)]
        count: Option<u8>,
    },
    /// Wheel clicks: positive `dy` scrolls down, positive `dx` right.
    Scroll {
        x: u32,
        y: u32,
        #[serde(default)]
        dx: i32,
        #[serde(default)]
        dy: i32,
    },
    /// A key chord, as `computer`'s keypress names it: "ctrl+c", "Return", "ArrowLeft".
    Key { keys: String },
    /// Text typed as it is.
    Text { text: String },
}

impl DesktopInput {
    /// The `computer` action that does this.
    fn action(self) -> Value {
        match self {
            DesktopInput::Click {
                x,
                y,
                count: Some(2),
                ..
            } => {
                json!({"type": "double_click", "x": x, "y": y})
            }
            DesktopInput::Click { x, y, button, .. } => {
                json!({"type": "click", "x": x, "y": y, "button": button.unwrap_or_else(|| "left".into())})
            }
            DesktopInput::Scroll { x, y, dx, dy } => {
                json!({"type": "scroll", "x": x, "y": y, "scroll_x": dx, "scroll_y": dy})
            }
            DesktopInput::Key { keys } => json!({"type": "keypress", "keys": [keys]}),
            DesktopInput::Text { text } => json!({"type": "type", "text": text}),
        }
    }
}

async fn watch_desktop(
    server: Arc<Server>,
    mut socket: WebSocket,
    desktop: Arc<Desktop>,
    access: Access,
) {
    let _viewer = desktop.add_viewer("watch", access == Access::View);
    let feed = server.desktop_feed(desktop.clone());
    let (width, height) = desktop.size();
    let hello = json!({
        "type": "hello",
        "sid": desktop.sid,
        "kind": "desktop",
        "width": width,
        "height": height,
        "control": access == Access::Control,
    });
    if send_json(&mut socket, &hello).await.is_err() {
        return;
    }
    // Actions run one batch at a time, in the order given, without holding up the frames.
    let (actions, queue) = mpsc::unbounded_channel::<Value>();
    let runner = tokio::spawn(run_actions(server.ctx.clone(), desktop.sid.clone(), queue));
    let _stop_runner = AbortOnDrop(runner.abort_handle());
    let mut frames = feed.join();
    loop {
        tokio::select! {
            changed = frames.changed() => {
                if changed.is_err() {
                    return;
                }
                let picture = frames.borrow_and_update().clone();
                if let Some(picture) = picture {
                    let meta = json!({
                        "type": "frame",
                        "width": picture.width,
                        "height": picture.height,
                        "pointer": picture.pointer,
                    });
                    if send_json(&mut socket, &meta).await.is_err()
                        || socket.send(Message::binary(picture.png.clone())).await.is_err()
                    {
                        return;
                    }
                }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => {
                    if access != Access::Control {
                        if refuse_input(&mut socket).await.is_err() {
                            return;
                        }
                        continue;
                    }
                    match serde_json::from_str::<DesktopInput>(text.as_str()) {
                        Ok(input) => {
                            let _ = actions.send(input.action());
                        }
                        Err(e) => {
                            let error = json!({"type": "error", "message": format!("input: {e}")});
                            if send_json(&mut socket, &error).await.is_err() {
                                return;
                            }
                        }
                    }
                }
                Some(Ok(Message::Binary(_))) => {
                    if access != Access::Control && refuse_input(&mut socket).await.is_err() {
                        return;
                    }
                }
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
            _ = server.stop.cancelled() => return,
        }
    }
}

struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Run the page's actions through `computer` (the same code a model's clicks and keys take), each
/// batch of those queued meanwhile in one call, full size: the page's pixels are the screen's.
async fn run_actions(ctx: Context, sid: String, mut queue: mpsc::UnboundedReceiver<Value>) {
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = queue.try_recv() {
            batch.push(more);
        }
        let params = ComputerParams {
            sid: sid.clone(),
            action: None,
            actions: Some(batch),
            step_timeout_ms: None,
            max_long_edge: None,
            max_pixels: None,
            full_size: true,
        };
        if let Err(e) = Computer::run(&ctx, params, &Progress::default()).await {
            if e.code == ErrorCode::UnknownSession {
                return;
            }
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

    fn action(input: Value) -> Value {
        serde_json::from_value::<DesktopInput>(input.clone())
            .unwrap_or_else(|e| panic!("{input}: {e}"))
            .action()
    }

    #[test]
    fn page_input_becomes_the_computer_action_that_does_it() {
        assert_eq!(
            action(json!({"type": "click", "x": 5, "y": 6})),
            json!({"type": "click", "x": 5, "y": 6, "button": "left"})
        );
        assert_eq!(
            action(json!({"type": "click", "x": 5, "y": 6, "button": "right"})),
            json!({"type": "click", "x": 5, "y": 6, "button": "right"})
        );
        assert_eq!(
            action(json!({"type": "click", "x": 5, "y": 6, "count": 2})),
            json!({"type": "double_click", "x": 5, "y": 6})
        );
        assert_eq!(
            action(json!({"type": "scroll", "x": 1, "y": 2, "dy": 3})),
            json!({"type": "scroll", "x": 1, "y": 2, "scroll_x": 0, "scroll_y": 3})
        );
        assert_eq!(
            action(json!({"type": "key", "keys": "ctrl+c"})),
            json!({"type": "keypress", "keys": ["ctrl+c"]})
        );
        assert_eq!(
            action(json!({"type": "text", "text": "hi"})),
            json!({"type": "type", "text": "hi"})
        );
        // Anything else is refused, not guessed at.
        assert!(serde_json::from_value::<DesktopInput>(json!({"type": "drag", "x": 1})).is_err());
        assert!(
            serde_json::from_value::<DesktopInput>(json!({"type": "click", "x": -1, "y": 0}))
                .is_err()
        );
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
