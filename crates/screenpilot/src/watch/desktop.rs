//! A desktop session's live view: frames captured when X DAMAGE says the screen changed or XInput
//! says the pointer moved (never by polling), shared by all its web viewers. The pointer needs its own
//! signal: Xvfb draws it in software without reporting damage.
//!
//! Viewers want the screen as it is now, not every frame in between: the feed keeps only the latest
//! frame, and a slow viewer simply skips to it. [`serve_viewer`] is one page's side: frames out, and
//! (in control) clicks and keys in, through `computer`. Capturing is rate limited ([`FRAME`]): a change after
//! a still spell is captured at once, a running animation at most once per frame.

use std::sync::{Arc, Weak};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use screenpilot_desktop::Desktop;

use super::socket::{refuse_input, send_json, Access};
use crate::ops::kit::display::{capture, Pixel};
use crate::ops::{Computer, ComputerParams, Context, ErrorCode, Operation, Progress};

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
            DesktopInput::Text { text } => json!({"type": "type", "text": text}), // not an operation
        }
    }
}

/// One page's view of a desktop: the latest frame whenever there is a new one; the page's clicks
/// and keys go to the desktop when it is in control.
pub async fn serve_viewer(
    mut socket: WebSocket,
    ctx: Context,
    feed: Arc<DesktopFeed>,
    access: Access,
    stop: CancellationToken,
) {
    let desktop = feed.desktop.clone();
    let _viewer = desktop.add_viewer("watch", access == Access::View); // not an operation
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
    let runner = tokio::spawn(run_actions(ctx, desktop.sid.clone(), queue));
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
            _ = stop.cancelled() => return,
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
            ..ComputerParams::default()
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
}
