//! `screenpilot watch`: the page's server, driven as a browser would drive it (plain HTTP for the page,
//! WebSockets for the live views), against a real daemon with a real bash and a real Xvfb desktop.
//! Every wait is bounded and woken by what arrives; nothing sleeps.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream as AsyncTcp;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use screenpilot_screen::{Screen, Size};

use common::{Daemon, LONG_MS, PROMPT};

type Socket = WebSocketStream<MaybeTlsStream<AsyncTcp>>;

/// The page's address and token, from `screenpilot watch`'s answer.
struct Page {
    addr: String,
    token: String,
}

fn watch(daemon: &Daemon, args: &[&str]) -> Page {
    let mut full = vec!["watch"];
    full.extend_from_slice(args);
    let answer = daemon.sp_json(&full);
    let url = answer["url"].as_str().unwrap_or_default().to_owned();
    let addr = answer["address"].as_str().unwrap_or_default().to_owned();
    let token = url
        .split_once("#token=")
        .map(|(_, t)| t.to_owned())
        .unwrap_or_default();
    assert!(
        url.starts_with(&format!("http://{addr}/#token=")),
        "{answer}"
    );
    assert_eq!(token.len(), 64, "{answer}");
    let file = answer["token_file"].as_str().unwrap_or_default();
    let kept = std::fs::read_to_string(file).unwrap_or_default();
    assert_eq!(kept.trim(), token, "the token file holds the URL's token");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file)
        .map(|m| m.permissions().mode() & 0o777)
        .unwrap_or(0);
    assert_eq!(mode, 0o600, "{file}");
    Page { addr, token }
}

/// One HTTP/1.1 request with these extra headers; the status line's code, the headers and the body.
fn http_get(addr: &str, path: &str, headers: &[(&str, &str)]) -> (u16, String, Vec<u8>) {
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let mut request = format!("GET {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("send: {e}"));
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .unwrap_or_else(|e| panic!("read: {e}"));
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(response.len());
    let head = String::from_utf8_lossy(&response[..split]).to_string();
    let body = response.get(split + 4..).unwrap_or_default().to_vec();
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, head.to_lowercase(), body)
}

/// A WebSocket upgrade's request headers, as a browser sends them, plus `extra`.
fn upgrade_headers(addr: &str, extra: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut headers = vec![
        ("Upgrade".to_owned(), "websocket".to_owned()),
        ("Connection".to_owned(), "Upgrade".to_owned()),
        ("Sec-WebSocket-Version".to_owned(), "13".to_owned()),
        (
            "Sec-WebSocket-Key".to_owned(),
            "dGhlIHNhbXBsZSBub25jZQ==".to_owned(),
        ),
        ("Origin".to_owned(), format!("http://{addr}")),
    ];
    headers.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    headers
}

fn status_of_upgrade(addr: &str, path: &str, extra: &[(&str, &str)]) -> u16 {
    let headers = upgrade_headers(addr, extra);
    let borrowed: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    // An accepted upgrade keeps the connection open; read only the status line then.
    let mut stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
    let mut request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\n");
    for (k, v) in borrowed {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("send: {e}"));
    let mut line = [0u8; 12];
    stream
        .read_exact(&mut line)
        .unwrap_or_else(|e| panic!("read: {e}"));
    String::from_utf8_lossy(&line[9..12]).parse().unwrap_or(0)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"))
}

/// Open a WebSocket as the page does: the token as a subprotocol, our own Origin.
async fn connect(page: &Page, path: &str, token: &str) -> Socket {
    let mut request = format!("ws://{}{path}", page.addr)
        .into_client_request()
        .unwrap_or_else(|e| panic!("request: {e}"));
    let headers = request.headers_mut();
    let protocols = format!("screenpilot.watch, bearer.{token}");
    headers.insert(
        "Sec-WebSocket-Protocol",
        HeaderValue::from_str(&protocols).unwrap_or_else(|e| panic!("{e}")),
    );
    headers.insert(
        "Origin",
        HeaderValue::from_str(&format!("http://{}", page.addr)).unwrap_or_else(|e| panic!("{e}")),
    );
    let (socket, response) = tokio_tungstenite::connect_async(request)
        .await
        .unwrap_or_else(|e| panic!("WebSocket {path}: {e}"));
    assert_eq!(
        response
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok()),
        Some("screenpilot.watch")
    );
    socket
}

/// The next message, within the test's long bound.
async fn next(socket: &mut Socket) -> Message {
    match tokio::time::timeout(Duration::from_millis(LONG_MS), socket.next()).await {
        Ok(Some(Ok(message))) => message,
        other => panic!("no message from the watch server: {other:?}"),
    }
}

async fn next_json(socket: &mut Socket) -> Value {
    loop {
        match next(socket).await {
            Message::Text(text) => {
                return serde_json::from_str(text.as_str())
                    .unwrap_or_else(|e| panic!("not JSON: {e}: {text}"))
            }
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("expected a JSON message, got {other:?}"),
        }
    }
}

/// How long a view must stay silent while nothing changes. A view that sent frames or paints on a
/// timer, rather than on change, would send one within this.
const QUIET: Duration = Duration::from_millis(700);

/// Assert that nothing arrives on `socket` for [`QUIET`]: `what` is still, so the server has nothing
/// to send. (A bounded read that expects nothing, not a sleep: it ends early, failing, on a message.)
async fn assert_silent(socket: &mut Socket, what: &str) {
    if let Ok(arrived) = tokio::time::timeout(QUIET, socket.next()).await {
        let arrived = match arrived {
            Some(Ok(Message::Binary(bytes))) => format!("{} binary bytes", bytes.len()),
            other => format!("{other:?}"),
        };
        panic!("{what}, yet the view sent {arrived} within {QUIET:?}");
    }
}

/// Wait (with the product's own wait) until `sid`'s screen has not changed for 300 ms; its text then.
/// For programs with no event that says they are done drawing (a Textual app, a desktop).
fn quiet_screen(daemon: &Daemon, sid: &str) -> String {
    let timeout = LONG_MS.to_string();
    let quiet = daemon.sp_json(&[
        "wait",
        sid,
        "--ready",
        "--stable-ms",
        "300",
        "--timeout-ms",
        &timeout,
    ]);
    assert_eq!(quiet["reason"], "STABLE", "{sid} never went quiet: {quiet}");
    daemon.screen(sid)
}

/// A terminal view's paints, fed to a fresh emulator of the size the server says, until its text
/// satisfies `done`.
async fn paint_until(
    socket: &mut Socket,
    screen: &mut Option<Screen>,
    done: impl Fn(&str) -> bool,
) -> String {
    loop {
        if let Some(screen) = screen.as_mut() {
            let text = screen.text().to_owned();
            if done(&text) {
                return text;
            }
        }
        let long = Duration::from_millis(LONG_MS);
        let Ok(Some(Ok(message))) = tokio::time::timeout(long, socket.next()).await else {
            let shown = screen.as_mut().map(|s| s.text().to_owned());
            panic!("the view stopped before showing what was expected; it shows:\n{shown:?}");
        };
        match message {
            Message::Binary(bytes) => {
                let screen = screen
                    .as_mut()
                    .unwrap_or_else(|| panic!("a paint arrived before the size"));
                screen.feed(&bytes);
            }
            Message::Text(text) => {
                let msg: Value = serde_json::from_str(text.as_str()).unwrap_or_default();
                if msg["type"] == "size" {
                    let size = Size::new(
                        msg["cols"].as_u64().unwrap_or(0) as u16,
                        msg["rows"].as_u64().unwrap_or(0) as u16,
                    );
                    *screen = Some(Screen::new(size, 0));
                }
            }
            _ => {}
        }
    }
}

#[test]
fn the_page_is_served_but_its_data_needs_the_token_and_foreign_hosts_are_refused() {
    let daemon = Daemon::new();
    let page = watch(&daemon, &[]);

    let (code, head, body) = http_get(&page.addr, "/", &[]);
    assert_eq!(code, 200, "{head}");
    assert!(
        head.contains("content-type: text/html; charset=utf-8"),
        "{head}"
    );
    let html = String::from_utf8_lossy(&body);
    assert!(
        html.contains("/assets/xterm.js") && html.contains("id=\"sessions\""),
        "{html}"
    );
    assert!(
        !html.contains("https://") && !html.contains("http://"),
        "nothing is fetched from the internet"
    );
    for (path, kind) in [
        ("/assets/xterm.js", "text/javascript"),
        ("/assets/watch.js", "text/javascript"),
        ("/assets/xterm.css", "text/css"),
        ("/assets/watch.css", "text/css"),
    ] {
        let (code, head, body) = http_get(&page.addr, path, &[]);
        assert_eq!(code, 200, "{path}: {head}");
        assert!(
            head.contains(&format!("content-type: {kind}")),
            "{path}: {head}"
        );
        assert!(body.len() > 100, "{path}");
    }
    assert_eq!(http_get(&page.addr, "/no-such-page", &[]).0, 404);

    // The data: 401 without the token, or with a wrong one.
    assert_eq!(status_of_upgrade(&page.addr, "/ws/sessions", &[]), 401);
    assert_eq!(
        status_of_upgrade(
            &page.addr,
            "/ws/sessions",
            &[("Sec-WebSocket-Protocol", "screenpilot.watch, bearer.0123")]
        ),
        401
    );
    let bearer = format!("Bearer {}", page.token);
    assert_eq!(
        status_of_upgrade(&page.addr, "/ws/sessions", &[("Authorization", &bearer)]),
        101,
        "the token as a bearer header works for programs"
    );
    let offered = format!("screenpilot.watch, bearer.{}", page.token);
    assert_eq!(
        status_of_upgrade(
            &page.addr,
            "/ws/sessions",
            &[("Sec-WebSocket-Protocol", &offered)]
        ),
        101
    );

    // A foreign Host (DNS rebinding) and a foreign Origin are refused, even with the token.
    let (code, _, _) = http_get(&page.addr, "/", &[("Host", "evil.example")]);
    assert_eq!(code, 403);
    let (code, _, _) = http_get(&page.addr, "/", &[("Origin", "http://evil.example")]);
    assert_eq!(code, 403);
    let headers = upgrade_headers(&page.addr, &[("Sec-WebSocket-Protocol", &offered)]);
    let mut stream = TcpStream::connect(&page.addr).unwrap_or_else(|e| panic!("{e}"));
    let mut request = format!("GET /ws/sessions HTTP/1.1\r\nHost: {}\r\n", page.addr);
    for (k, v) in &headers {
        let v = if k == "Origin" {
            "http://evil.example"
        } else {
            v.as_str()
        };
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut line = [0u8; 12];
    stream
        .read_exact(&mut line)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        &line[9..12],
        b"403",
        "a page of another origin cannot open the socket"
    );

    // A body over the limit (the page takes none, but a client may send one) is answered 413, from
    // its length, before a byte of it is sent.
    let (code, _, body) = http_get(
        &page.addr,
        "/",
        &[("Content-Length", "100000000"), ("Expect", "100-continue")],
    );
    assert_eq!(code, 413);
    let body = String::from_utf8_lossy(&body);
    assert!(
        body.contains("over the limit of 16 MiB (16777216 bytes)"),
        "{body}"
    );

    // Asking again answers the same server; --stop ends it and its token.
    let again = watch(&daemon, &[]);
    assert_eq!(again.addr, page.addr);
    assert_eq!(again.token, page.token);
    let stopped = daemon.sp_json(&["watch", "--stop"]);
    assert_eq!(stopped["running"], false, "{stopped}");
    assert!(TcpStream::connect(&page.addr).is_err() || status_of_upgrade_or_closed(&page.addr));
}

/// After `--stop`, a connection that still opens (the port may be reused) is not our server.
fn status_of_upgrade_or_closed(addr: &str) -> bool {
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return true;
    };
    let _ = stream.write_all(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    !String::from_utf8_lossy(&out).contains("screenpilot watch")
}

#[test]
fn another_address_while_the_page_runs_is_refused_saying_where_it_runs() {
    let daemon = Daemon::new();
    let page = watch(&daemon, &[]);
    // Its own address, or any port on its IP, answers the running page.
    assert_eq!(watch(&daemon, &["--http", &page.addr]).token, page.token);
    assert_eq!(watch(&daemon, &["--http", "127.0.0.1:0"]).addr, page.addr);

    // A free port other than the page's (the page holds its own).
    let other = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.to_string())
        .unwrap_or_else(|e| panic!("a free port: {e}"));
    let error = daemon.sp_error(&["watch", "--http", &other]);
    assert_eq!(error["field"], "http", "{error}");
    let message = error["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("already runs at http://{}/", page.addr))
            && message.contains("--stop")
            && message.contains(&other),
        "{message}"
    );
    let out = daemon.sp(&["watch", "--http", &other]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("already runs at http://{}/", page.addr)),
        "{stderr}"
    );
    // The page keeps running where it was; stopped first, it moves.
    assert_eq!(watch(&daemon, &[]).token, page.token);
    daemon.sp_json(&["watch", "--stop"]);
    assert_eq!(watch(&daemon, &["--http", &other]).addr, other);
}

#[test]
fn a_non_loopback_address_is_refused() {
    let daemon = Daemon::new();
    let error = daemon.sp_error(&["watch", "--http", "0.0.0.0:0"]);
    assert_eq!(error["field"], "http", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not a loopback address"),
        "{error}"
    );
}

#[test]
fn a_terminal_view_starts_from_the_snapshot_and_follows_live_output_read_only() {
    let daemon = Daemon::new();
    daemon.spawn_bash("sh");
    daemon.line("sh", "printf '\\033[1;31mred\\033[0m and plain\\n'");
    daemon.wait_regex("sh", "^red and plain$");
    let page = watch(&daemon, &[]);
    let snapshot = daemon.snapshot("sh");

    runtime().block_on(async {
        let mut list = connect(&page, "/ws/sessions", &page.token).await;
        let hello = next_json(&mut list).await;
        assert_eq!(hello["control"], false, "{hello}");
        let sessions = next_json(&mut list).await;
        assert_eq!(sessions["type"], "sessions");
        assert_eq!(sessions["sessions"][0]["sid"], "sh", "{sessions}");
        assert_eq!(sessions["sessions"][0]["kind"], "terminal", "{sessions}");
        assert_eq!(sessions["sessions"][0]["cols"], 80, "{sessions}");

        let mut view = connect(&page, "/ws/session/sh", &page.token).await;
        let hello = next_json(&mut view).await;
        assert_eq!(hello["type"], "hello");
        assert_eq!(hello["kind"], "terminal");
        assert_eq!(hello["control"], false);
        // A late joiner sees exactly what snapshot reads.
        let mut screen = None;
        let expected = snapshot["text"].as_str().unwrap_or_default().to_owned();
        let first = paint_until(&mut view, &mut screen, |text| !text.trim().is_empty()).await;
        assert_eq!(first, expected);

        // `list` shows the person watching.
        let listed = daemon.sp_json(&["list"]);
        let viewers = &listed["sessions"][0]["viewers"];
        assert_eq!(viewers[0]["how"], "watch", "{listed}");
        assert_eq!(viewers[0]["read_only"], true, "{listed}");

        // Live output follows, to the screen `snapshot` reads once the program is done.
        daemon.line("sh", "echo live-$((40+2))");
        daemon.wait_regex("sh", "^live-42$");
        // Done once bash shows its next prompt: the only bare prompt line after the command.
        daemon.wait_regex("sh", PROMPT);
        let quiet = daemon.screen("sh");
        paint_until(&mut view, &mut screen, |t| t == quiet).await;

        // Paints are pushed on change only: once the screen is quiet and the view shows it, nothing
        // arrives until the program draws again, and then it is painted.
        assert_silent(&mut view, "the terminal's screen is quiet").await;
        daemon.line("sh", "echo woken-$((40+2))");
        daemon.wait_regex("sh", "^woken-42$");
        // Done once bash shows its next prompt: the only bare prompt line after the command.
        daemon.wait_regex("sh", PROMPT);
        let quiet = daemon.screen("sh");
        paint_until(&mut view, &mut screen, |t| t == quiet).await;

        // A read-only page's input is refused and never reaches the program.
        view.send(Message::binary(b"echo typed-by-viewer\r".to_vec()))
            .await
            .unwrap_or_else(|e| panic!("send: {e}"));
        let refused = next_json(&mut view).await;
        assert_eq!(refused["type"], "refused", "{refused}");
        daemon.line("sh", "echo after-refusal");
        daemon.wait_regex("sh", "^after-refusal$");
        assert!(!daemon.screen("sh").contains("typed-by-viewer"));

        // A new session is listed as it starts.
        daemon.spawn_bash("second");
        let sessions = next_json(&mut list).await;
        let sids: Vec<&str> = sessions["sessions"]
            .as_array()
            .map(|a| a.iter().filter_map(|s| s["sid"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(sids, ["second", "sh"], "{sessions}");
    });
}

/// `screenpilot --json textual --python PYTHON ARGS...`, which must succeed; its result (the last
/// line: a run with actions prints one progress line per action before it).
fn textual(daemon: &Daemon, args: &[&str]) -> Value {
    let python = common::venv_python();
    let mut full = vec![
        "--json",
        "textual",
        "--python",
        python.to_str().unwrap_or_default(),
    ];
    full.extend_from_slice(args);
    let out = daemon.sp(&full);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = stdout
        .lines()
        .last()
        .and_then(|line| serde_json::from_str(line).ok())
        .unwrap_or_default();
    assert!(
        out.status.success() && result["ok"] == true,
        "screenpilot {full:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    result
}

#[test]
fn a_textual_session_is_listed_as_textual_and_its_view_shows_its_screen() {
    let daemon = Daemon::new();
    // The app is run from the test's directory, so nothing is written beside the fixture.
    let app = daemon.path().join("counter.py");
    std::fs::copy(common::fixture("textual/counter.py"), &app)
        .unwrap_or_else(|e| panic!("copy the counter app: {e}"));
    let app = app.to_str().unwrap_or_default();
    let opened = textual(&daemon, &[app, "--session", "counter"]);
    assert_eq!(opened["sid"], "counter", "{opened}");
    let page = watch(&daemon, &[]);

    runtime().block_on(async {
        let mut list = connect(&page, "/ws/sessions", &page.token).await;
        assert_eq!(next_json(&mut list).await["type"], "hello");
        let sessions = next_json(&mut list).await;
        assert_eq!(sessions["type"], "sessions", "{sessions}");
        assert_eq!(sessions["sessions"][0]["sid"], "counter", "{sessions}");
        assert_eq!(sessions["sessions"][0]["kind"], "textual", "{sessions}");

        // Its view is a terminal view: the screen `snapshot` reads, then what changes.
        let mut view = connect(&page, "/ws/session/counter", &page.token).await;
        let hello = next_json(&mut view).await;
        assert_eq!(hello["type"], "hello", "{hello}");
        assert_eq!(hello["kind"], "textual", "{hello}");
        let mut screen = None;
        let quiet = quiet_screen(&daemon, "counter");
        assert!(quiet.starts_with("count: 0"), "{quiet}");
        paint_until(&mut view, &mut screen, |t| t == quiet).await;

        let click = json!([{"click": "#inc"}]).to_string();
        textual(&daemon, &["--session", "counter", "--actions", &click]);
        let quiet = quiet_screen(&daemon, "counter");
        assert!(quiet.starts_with("count: 1"), "{quiet}");
        paint_until(&mut view, &mut screen, |t| t == quiet).await;
    });
}

#[test]
fn with_control_the_pages_keys_reach_the_program() {
    let daemon = Daemon::new();
    daemon.spawn_bash("sh");
    let page = watch(&daemon, &["--control"]);
    runtime().block_on(async {
        let mut view = connect(&page, "/ws/session/sh", &page.token).await;
        let hello = next_json(&mut view).await;
        assert_eq!(hello["control"], true, "{hello}");
        view.send(Message::binary(b"echo from-the-page-$((6*7))\r".to_vec()))
            .await
            .unwrap_or_else(|e| panic!("send: {e}"));
        daemon.wait_regex("sh", "^from-the-page-42$");
        let mut screen = None;
        paint_until(&mut view, &mut screen, |t| {
            t.lines().any(|l| l == "from-the-page-42")
        })
        .await;
    });
}

/// A shell that titles its terminal's window with each line typed into it.
const TITLING_SHELL: &str = r#"printf '\033]0;ready\007'; while read -r line; do printf '\033]0;%s\007' "$line"; echo "$line"; done"#;

/// An xterm on a real Xvfb, running [`TITLING_SHELL`].
fn start_desktop(daemon: &Daemon) {
    let started = daemon.sp_json(&[
        "desktop",
        "start",
        "--sid",
        "desk",
        "--size",
        "640x480",
        "--",
        "xterm",
        "-e",
        "sh",
        "-c",
        TITLING_SHELL,
    ]);
    assert_eq!(started["kind"], "desktop", "{started}");
    daemon.wait_regex("desk", "^ready$");
}

async fn next_frame(socket: &mut Socket) -> (Value, Vec<u8>) {
    loop {
        let meta = next_json(socket).await;
        if meta["type"] != "frame" {
            continue;
        }
        match next(socket).await {
            Message::Binary(png) => return (meta, png.to_vec()),
            other => panic!("a frame's PNG should follow its description: {other:?}"),
        }
    }
}

#[test]
fn a_desktop_view_gets_a_new_frame_when_the_screen_changes_and_control_clicks_and_types() {
    let daemon = Daemon::new();
    start_desktop(&daemon);
    let view_only = watch(&daemon, &[]);
    let control = watch(&daemon, &["--control"]);
    runtime().block_on(async {
        let mut viewer = connect(&view_only, "/ws/session/desk", &view_only.token).await;
        let hello = next_json(&mut viewer).await;
        assert_eq!(hello["kind"], "desktop", "{hello}");
        assert_eq!(
            (hello["width"].as_u64(), hello["height"].as_u64()),
            (Some(640), Some(480))
        );
        let (meta, png) = next_frame(&mut viewer).await;
        let listed = daemon.sp_json(&["list"]);
        let desk = &listed["sessions"][0];
        assert_eq!(desk["viewers"][0]["how"], "watch", "{listed}");
        assert_eq!(desk["viewers"][0]["read_only"], true, "{listed}");
        assert_eq!(
            (meta["width"].as_u64(), meta["height"].as_u64()),
            (Some(640), Some(480))
        );
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));

        // A read-only page cannot click.
        viewer
            .send(Message::text(
                json!({"type": "click", "x": 10, "y": 10}).to_string(),
            ))
            .await
            .unwrap_or_else(|e| panic!("send: {e}"));
        loop {
            let msg = next_json(&mut viewer).await;
            if msg["type"] == "refused" {
                break;
            }
        }

        // The person in control clicks and types: it reaches the program, and the viewer's next frame
        // shows it with the pointer where they clicked.
        let mut controller = connect(&control, "/ws/session/desk", &control.token).await;
        assert_eq!(next_json(&mut controller).await["control"], true);
        for input in [
            json!({"type": "click", "x": 321, "y": 123}),
            json!({"type": "text", "text": "typed on the page"}),
            json!({"type": "key", "keys": "Return"}),
        ] {
            controller
                .send(Message::text(input.to_string()))
                .await
                .unwrap_or_else(|e| panic!("send: {e}"));
        }
        daemon.wait_regex("desk", "^typed on the page$");
        loop {
            let (meta, frame) = next_frame(&mut viewer).await;
            if frame != png && meta["pointer"] == json!({"x": 321, "y": 123}) {
                break;
            }
        }

        // The pointer moving alone draws nothing (Xvfb reports no damage for it), yet a frame follows.
        daemon.act("desk", json!({"type": "move", "x": 100, "y": 90}));
        loop {
            let (meta, _) = next_frame(&mut viewer).await;
            if meta["pointer"] == json!({"x": 100, "y": 90}) {
                break;
            }
        }

        // Frames are pushed on change only: once nothing has been drawn for a while, a view joining
        // gets the current frame and then nothing, until the screen changes again.
        quiet_screen(&daemon, "desk");
        let mut idle = connect(&view_only, "/ws/session/desk", &view_only.token).await;
        assert_eq!(next_json(&mut idle).await["type"], "hello");
        let (_, still) = next_frame(&mut idle).await;
        assert_silent(&mut idle, "the desktop is still").await;
        daemon.act("desk", json!({"type": "type", "text": "woken\n"}));
        daemon.wait_regex("desk", "^woken$");
        loop {
            let (_, frame) = next_frame(&mut idle).await;
            if frame != still {
                break;
            }
        }
    });
}

#[test]
fn a_wayland_desktop_view_gets_frames_and_control_types() {
    let daemon = Daemon::new();
    // foot on a private headless sway, as nobody when the tests are root.
    let started = daemon.sp_json(&[
        "desktop",
        "start",
        "--wayland",
        "--sid",
        "desk",
        "--size",
        "640x480",
        "--",
        "foot",
        "sh",
        "-c",
        TITLING_SHELL,
    ]);
    assert_eq!(started["wayland"], true, "{started}");
    daemon.wait_regex("desk", "^ready$");
    let control = watch(&daemon, &["--control"]);
    runtime().block_on(async {
        let mut view = connect(&control, "/ws/session/desk", &control.token).await;
        let hello = next_json(&mut view).await;
        assert_eq!(
            (hello["kind"].as_str(), hello["control"].as_bool()),
            (Some("desktop"), Some(true)),
            "{hello}"
        );
        let (meta, png) = next_frame(&mut view).await;
        assert_eq!(
            (meta["width"].as_u64(), meta["height"].as_u64()),
            (Some(640), Some(480))
        );
        for input in [
            json!({"type": "click", "x": 320, "y": 240}),
            json!({"type": "text", "text": "typed on wayland"}),
            json!({"type": "key", "keys": "Return"}),
        ] {
            view.send(Message::text(input.to_string()))
                .await
                .unwrap_or_else(|e| panic!("send: {e}"));
        }
        // The program got it (its window's title says so), and a new frame shows it.
        daemon.wait_regex("desk", "^typed on wayland$");
        loop {
            let (_, frame) = next_frame(&mut view).await;
            if frame != png {
                break;
            }
        }
    });
}

/// A person types a password on the page (with control) into a hidden-line prompt: the program gets
/// it, and no answer, recording, step file or daemon log keeps it.
#[test]
fn a_secret_typed_on_the_page_reaches_the_program_and_nothing_keeps_it() {
    let daemon = Daemon::new();
    let cast = daemon.path().join("pw.cast");
    let cast_path = cast.to_string_lossy().into_owned();
    let check = "import getpass; p = getpass.getpass('pw: '); print('page-ok' if p == 'page' + 'pw77' else 'bad')";
    let asked = daemon.sp_json(&[
        "spawn",
        "--sid",
        "pw",
        "--record",
        &cast_path,
        "--until-input",
        "--",
        "python3",
        "-c",
        check,
    ]);
    assert_eq!(asked["screen"]["input"], "secret", "{asked}");
    let page = watch(&daemon, &["--control"]);
    runtime().block_on(async {
        let mut view = connect(&page, "/ws/session/pw", &page.token).await;
        let hello = next_json(&mut view).await;
        assert_eq!(hello["control"], true, "{hello}");
        view.send(Message::binary(b"pagepw77\r".to_vec()))
            .await
            .unwrap_or_else(|e| panic!("send: {e}"));
        // The person keeps the page open until the program answers there.
        let mut screen = None;
        paint_until(&mut view, &mut screen, |t| {
            t.lines().any(|l| l == "page-ok")
        })
        .await;
    });
    let ended = daemon.sp_json(&["wait", "pw", "--until-exit"]);
    let mut kept = vec![("the answer", ended.to_string())];
    assert!(ended.to_string().contains("page-ok"), "{ended}");
    let steps = daemon.path().join("pw.toml");
    kept.push((
        "save-test's answer",
        daemon
            .sp_json(&["save-test", &steps.to_string_lossy()])
            .to_string(),
    ));
    for (what, path) in [
        ("the step file", steps),
        ("the recording", cast),
        ("the daemon log", daemon.path().join("daemon.log")),
    ] {
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{what} {}: {e}", path.display()));
        kept.push((what, text));
    }
    kept.push(("the snapshot", daemon.screen("pw")));
    for (what, text) in kept {
        assert!(
            !text.contains("pagepw77"),
            "the secret is in {what}:\n{text}"
        );
    }
}

/// Keys typed on the page and the page closed at once (before it read a thing): the keys still reach
/// the program.
#[test]
fn keys_sent_just_before_the_page_closes_still_reach_the_program() {
    let daemon = Daemon::new();
    daemon.spawn_bash("sh");
    let page = watch(&daemon, &["--control"]);
    runtime().block_on(async {
        for n in 0..5 {
            let mut view = connect(&page, "/ws/session/sh", &page.token).await;
            let keys = format!("echo closed-at-once-{n}-$((6*7))\r");
            view.send(Message::binary(keys.into_bytes()))
                .await
                .unwrap_or_else(|e| panic!("send: {e}"));
            drop(view);
            daemon.wait_regex("sh", &format!("^closed-at-once-{n}-42$"));
        }
    });
}
