//! A desktop session's live view: frames captured when X DAMAGE says the screen changed or XInput
//! says the pointer moved (never by polling), shared by all its web viewers. The pointer needs its own
//! signal: Xvfb draws it in software without reporting damage.
//!
//! Viewers want the screen as it is now, not every frame in between: the feed keeps only the latest
//! frame, and a slow viewer simply skips to it. Capturing is rate limited ([`FRAME`]): a change after
//! a still spell is captured at once, a running animation at most once per frame.

use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use screenpilot_desktop::Desktop;

use crate::ops::display::{capture, Pixel};

/// The shortest time between two frames while the screen keeps changing. Each frame is a full-size
/// PNG captured on the desktop's own X connection, which `computer` shares, so it is kept cheaper than
/// a terminal's paint.
pub const FRAME: Duration = Duration::from_millis(33);

/// How long one capture may take.
const CAPTURE_LIMIT: Duration = Duration::from_secs(10);

/// One picture of the screen, full size, with the pointer drawn in.
#[derive(Debug)]
pub struct Picture {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// Where the pointer is, in screen pixels.
    pub pointer: Pixel,
}

/// The shared frames of one desktop.
pub struct DesktopFeed {
    pub desktop: Arc<Desktop>,
    latest: watch::Sender<Option<Arc<Picture>>>,
}

impl DesktopFeed {
    /// Start capturing `desktop` (the task ends once no viewer holds the feed).
    pub fn start(desktop: Arc<Desktop>) -> Arc<DesktopFeed> {
        let damage = desktop.damage_updates();
        let pointer = desktop.pointer_updates();
        let feed = Arc::new(DesktopFeed {
            desktop,
            latest: watch::channel(None).0,
        });
        tokio::spawn(capture_changes(Arc::downgrade(&feed), damage, pointer));
        feed
    }

    /// The latest frame and every later one (the first arrives as soon as it is captured).
    pub fn join(&self) -> watch::Receiver<Option<Arc<Picture>>> {
        let mut frames = self.latest.subscribe();
        // The current frame counts as new, so the viewer shows it at once.
        frames.mark_changed();
        frames
    }

    async fn capture(&self) {
        if let Ok(picture) = capture(&self.desktop, None, None, CAPTURE_LIMIT).await {
            let (width, height) = picture.scale.image;
            self.latest.send_replace(Some(Arc::new(Picture {
                png: picture.png,
                width,
                height,
                pointer: picture.pointer,
            })));
        }
    }
}

/// Capture once now, then again on every damage or pointer move, at most once per [`FRAME`], until
/// the feed is dropped or the desktop closed.
async fn capture_changes(
    feed: Weak<DesktopFeed>,
    mut damage: watch::Receiver<u64>,
    mut pointer: watch::Receiver<u64>,
) {
    let mut next;
    match feed.upgrade() {
        Some(feed) => {
            damage.borrow_and_update();
            pointer.borrow_and_update();
            feed.capture().await;
            next = Instant::now() + FRAME;
        }
        None => return,
    }
    // A display without XInput 2 has no pointer signal; its frames follow damage alone.
    let mut follow_pointer = true;
    loop {
        tokio::select! {
            changed = damage.changed() => if changed.is_err() { return },
            changed = pointer.changed(), if follow_pointer => if changed.is_err() {
                follow_pointer = false;
                continue;
            },
        }
        tokio::time::sleep_until(next).await;
        let Some(feed) = feed.upgrade() else {
            return;
        };
        damage.borrow_and_update();
        pointer.borrow_and_update();
        feed.capture().await;
        next = Instant::now() + FRAME;
    }
}
