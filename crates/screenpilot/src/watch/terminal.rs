//! A terminal session's live view: one painter per watched session, shared by all its web viewers.
//!
//! The painter paints the emulator's cells ([`Painter`]), never the program's raw output, so a viewer
//! joining late sees exactly what `snapshot` reads. It paints once per update and broadcasts the bytes;
//! a viewer joining gets a full paint of the grid last painted, then the shared differences, so it
//! never misses or repeats one. A viewer that falls behind the broadcast starts again from a full paint.
//!
//! Painting is rate limited, not delayed: an update after a quiet spell is painted at once; while
//! output keeps coming, at most one paint per [`FRAME`].

use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::Duration;

use axum::body::Bytes;
use tokio::sync::broadcast;
use tokio::time::Instant;

use screenpilot_screen::{CellGrid, InputModes, Painter, Size, Viewport};
use screenpilot_session::Session;

/// The shortest time between two paints while output keeps coming (60 per second).
pub const FRAME: Duration = Duration::from_millis(16);

/// Paints a viewer may fall behind by before it is repainted whole.
const BACKLOG: usize = 256;

/// What viewers are sent: the bytes that bring a viewer of `size` from the previous paint to now.
#[derive(Debug)]
pub struct Paint {
    pub size: Size,
    pub bytes: Bytes,
}

struct Painted {
    painter: Painter,
    grid: CellGrid,
    modes: InputModes,
}

/// The shared painter of one session.
pub struct TerminalFeed {
    pub session: Arc<Session>,
    painted: Mutex<Painted>,
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
            painted: Mutex::new(Painted {
                painter,
                grid,
                modes,
            }),
            paints: broadcast::channel(BACKLOG).0,
        });
        tokio::spawn(paint_updates(Arc::downgrade(&feed), updates));
        feed
    }

    fn painted(&self) -> MutexGuard<'_, Painted> {
        self.painted.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Join as a viewer: a full paint of what was last painted, and the paints after it.
    pub fn join(&self) -> (Arc<Paint>, broadcast::Receiver<Arc<Paint>>) {
        let painted = self.painted();
        let size = painted.grid.size;
        let bytes = Painter::new().paint(&painted.grid, &painted.modes, Viewport::whole(size));
        let full = Arc::new(Paint {
            size,
            bytes: bytes.into(),
        });
        // Subscribed under the lock: no paint falls between the full one and the first received.
        (full, self.paints.subscribe())
    }

    /// Paint the session's screen now, and send the difference to every viewer.
    fn paint(&self) {
        let (grid, modes) = self.session.with_screen(|s| (s.cells(), s.modes()));
        let mut painted = self.painted();
        let size = grid.size;
        let bytes = painted.painter.paint(&grid, &modes, Viewport::whole(size));
        painted.grid = grid;
        painted.modes = modes;
        if !bytes.is_empty() {
            // No receivers is fine: viewers come and go.
            let _ = self.paints.send(Arc::new(Paint {
                size,
                bytes: bytes.into(),
            }));
        }
    }
}

/// Paint on every update of the session, at most once per [`FRAME`], until the feed is dropped or
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
        next = Instant::now() + FRAME;
    }
}
