//! A terminal session's live view: one painter per watched session, shared by all its web viewers.
//!
//! The painter paints the emulator's cells ([`Painter`]), never the program's raw output, so a viewer
//! joining late sees exactly what `snapshot` reads. It paints once per update and broadcasts the bytes;
//! a viewer joining gets a full paint of the grid last painted, then the shared differences, so it
//! never misses or repeats one. A viewer that falls behind the broadcast starts again from a full paint.
//!
//! Painting is rate limited, not delayed: an update after a quiet spell is painted at once; while
//! output keeps coming, at most one paint per [`PAINT_INTERVAL`].
//!
//! [`serve_viewer`] is one page's side: the paints out, and (in control) the page's input in.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use axum::body::Bytes;
use axum::extract::ws::{Message, WebSocket};
use serde_json::json;
use tokio::sync::broadcast;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use screenpilot_screen::{Painter, Size, Viewport, PAINT_INTERVAL};
use screenpilot_session::Session;

use super::socket::{refuse_input, send_json, Access};
use crate::ops::OpError;

/// Paints a viewer may fall behind by before it is repainted whole.
const BACKLOG: usize = 256;

/// What viewers are sent: the bytes that bring a viewer of `size` from the previous paint to now.
#[derive(Debug)]
pub struct Paint {
    pub size: Size,
    pub bytes: Bytes,
}

/// The shared painter of one session.
pub struct TerminalFeed {
    pub session: Arc<Session>,
    /// Holds what was painted last: a joining viewer starts from a full paint of it.
    painter: Mutex<Painter>,
    paints: broadcast::Sender<Arc<Paint>>,
}

impl TerminalFeed {
    /// Start painting `session` (the painting task ends once no viewer holds the feed).
    pub fn start(session: Arc<Session>) -> Arc<TerminalFeed> {
        let updates = session.subscribe();
        let (grid, modes) = session.with_screen(|s| (s.cells(), s.modes()));
        let mut painter = Painter::new();
        painter.paint(&grid, &modes, Viewport::whole(grid.size));
        let feed = Arc::new(TerminalFeed {
            session,
            painter: Mutex::new(painter),
            paints: broadcast::channel(BACKLOG).0,
        });
        tokio::spawn(paint_updates(Arc::downgrade(&feed), updates));
        feed
    }

    fn painter(&self) -> MutexGuard<'_, Painter> {
        self.painter.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Join as a viewer: a full paint of what was last painted, and the paints after it.
    pub fn join(&self) -> (Arc<Paint>, broadcast::Receiver<Arc<Paint>>) {
        let painter = self.painter();
        // The feed painted once when it started, so there is always a last paint.
        let (view, bytes) = painter.repaint_last().unwrap_or_else(|| {
            (
                Viewport::whole(self.session.with_screen(|s| s.size())),
                Vec::new(),
            )
        });
        let full = Arc::new(Paint {
            size: view.size,
            bytes: bytes.into(),
        });
        // Subscribed under the lock: no paint falls between the full one and the first received.
        (full, self.paints.subscribe())
    }

    /// Paint the session's screen now, and send the difference to every viewer.
    fn paint(&self) {
        let (grid, modes) = self.session.with_screen(|s| (s.cells(), s.modes()));
        let size = grid.size;
        // Sent under the painter's lock, like a joining viewer subscribes: none misses a paint.
        let mut painter = self.painter();
        let bytes = painter.paint(&grid, &modes, Viewport::whole(size));
        if !bytes.is_empty() {
            // No receivers is fine: viewers come and go.
            let _ = self.paints.send(Arc::new(Paint {
                size,
                bytes: bytes.into(),
            }));
        }
    }
}

/// Paint on every update of the session, at most once per [`PAINT_INTERVAL`], until the feed is dropped or
/// the session is gone.
async fn paint_updates(feed: Weak<TerminalFeed>, mut updates: tokio::sync::watch::Receiver<u64>) {
    let mut next = Instant::now();
    loop {
        if updates.changed().await.is_err() {
            return;
        }
        tokio::time::sleep_until(next).await;
        let Some(feed) = feed.upgrade() else {
            return;
        };
        updates.borrow_and_update();
        feed.paint();
        next = Instant::now() + PAINT_INTERVAL;
    }
}

/// One page's view of a terminal: the full paint, then every paint after it; the page's input goes
/// to the program when it is in control.
pub async fn serve_viewer(
    mut socket: WebSocket,
    feed: Arc<TerminalFeed>,
    access: Access,
    stop: CancellationToken,
) {
    let session = feed.session.clone();
    let _viewer = session.add_viewer("watch", access == Access::View); // not an operation
    if paint_and_listen(&mut socket, &feed, access, &stop).await == Ended::PageGone {
        // What the page sent before it went (keys typed, then the tab closed at once) still
        // reaches the program. Bounded, for a connection that is half open.
        let drain = async {
            while let Some(Ok(message)) = socket.recv().await {
                let Some(bytes) = input_bytes(message) else {
                    continue;
                };
                if !take_terminal_input(&mut socket, &session, access, bytes).await {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), drain).await;
    }
}

/// Why a view ended.
#[derive(PartialEq)]
enum Ended {
    /// A send to the page failed: it may still have sent input before it went.
    PageGone,
    /// The page closed, the session ended or the server stops.
    Done,
}

/// Paint the session on the page, live, and pass on what the page sends, until either ends.
async fn paint_and_listen(
    socket: &mut WebSocket,
    feed: &TerminalFeed,
    access: Access,
    stop: &CancellationToken,
) -> Ended {
    let session = &feed.session;
    let hello = json!({
        "type": "hello",
        "sid": session.sid.to_string(),
        "kind": session.kind(),
        "control": access == Access::Control,
    });
    if send_json(socket, &hello).await.is_err() {
        return Ended::PageGone;
    }
    let mut shown = None;
    let mut alive = None;
    let (mut paint, mut paints) = feed.join();
    loop {
        if shown != Some(paint.size) {
            let size = json!({"type": "size", "cols": paint.size.cols, "rows": paint.size.rows});
            if send_json(socket, &size).await.is_err() {
                return Ended::PageGone;
            }
            shown = Some(paint.size);
        }
        if !paint.bytes.is_empty()
            && socket
                .send(Message::binary(paint.bytes.clone()))
                .await
                .is_err()
        {
            return Ended::PageGone;
        }
        let now_alive = session.alive();
        if alive != Some(now_alive) {
            let status = json!({"type": "status", "alive": now_alive, "exit_code": session.info().exit_code});
            if send_json(socket, &status).await.is_err() {
                return Ended::PageGone;
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
                    Err(broadcast::error::RecvError::Closed) => return Ended::Done,
                },
                incoming = socket.recv() => match incoming {
                    Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return Ended::Done,
                    Some(Ok(message)) => {
                        if let Some(bytes) = input_bytes(message) {
                            if !take_terminal_input(socket, session, access, bytes).await {
                                return Ended::PageGone;
                            }
                        }
                    }
                },
                _ = stop.cancelled() => return Ended::Done,
            }
        };
    }
}

/// What a page's message types: its bytes (keys, a paste, a mouse report), as binary or text.
fn input_bytes(message: Message) -> Option<Vec<u8>> {
    match message {
        Message::Binary(bytes) => Some(bytes.to_vec()),
        Message::Text(text) => Some(text.as_bytes().to_vec()),
        _ => None,
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
