//! A person's terminal attached to a session (`screenpilot attach`): `attach` streams paints of the
//! session's screen for the person's terminal size, and `write_raw` sends the person's bytes to the
//! program as their terminal encoded them.
//!
//! The daemon paints (with [`Painter`]) rather than forwarding the program's output, so a person who
//! joins late sees exactly what `snapshot` reads, at whatever size their terminal is, and a burst of
//! output costs one small difference. The client says when a paint has reached the person's
//! terminal (`attach_shown`), and no more than [`IN_FLIGHT`] paints are ever on the way: a terminal
//! that stops reading (Ctrl-S, a stalled ssh link) costs the daemon nothing, and when it reads again
//! it gets one paint of the screen as it is then, not the backlog. These operations are for people,
//! not models: they are left out of the MCP tool list ([`Operation::TOOL`]).

use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::sync::watch;
use tokio::time::Instant;

use screenpilot_screen::ansi::{Painter, Viewport, PAINT_INTERVAL};
use screenpilot_screen::Size;
use screenpilot_session::Session;

use super::kit::common::{Context, OpError, Progress};
use super::kit::operation::{Operation, Report};
use crate::ops::kit::step_table::Journaled;

/// Paints sent but not yet shown on the person's terminal, at most; past it, the attachment waits
/// (and what changes meanwhile goes into the next paint).
const IN_FLIGHT: u64 = 2;

/// The largest viewer terminal accepted, per side.
const MAX_VIEWER_SIDE: u16 = 2000;

/// Parameters of `attach`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AttachParams {
    pub sid: String,
    /// The person's terminal width in cells (the session keeps its own size).
    pub cols: u16,
    /// The person's terminal height in cells.
    pub rows: u16,
    /// The person only watches (shown by `list`; the client sends nothing).
    #[serde(default)]
    pub read_only: bool,
}

/// One paint, sent as a progress line of `attach`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Frame {
    /// This attachment, for `attach_shown`.
    pub attachment: u64,
    /// The paint's number in this attachment, from 1.
    pub seq: u64,
    /// Bytes for the person's terminal (escape sequences and text; always UTF-8).
    pub paint: String,
    /// The screen column shown in the person's top-left corner (non-zero when their terminal is
    /// narrower than the session and the view follows the cursor).
    pub origin_col: u16,
    /// The screen row shown in the person's top-left corner.
    pub origin_row: u16,
}

/// How an attachment ended: the program ended, the session was closed, or the person left.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Detached {
    pub sid: String,
    /// The program has ended (`exit_code` or `signal` says how).
    pub ended: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// The session was closed (`close`, the daemon stopping).
    pub closed: bool,
    /// The person left (`attach_shown` with `leave`); the program keeps running.
    #[serde(default)]
    pub detached: bool,
}

impl Detached {
    /// The session ended, was closed or is gone.
    fn ended(sid: String, session: &Session) -> Detached {
        let exit = session.exit_info();
        Detached {
            sid,
            ended: exit.is_some(),
            exit_code: exit.and_then(|e| e.exit_code),
            signal: exit.and_then(|e| e.signal),
            closed: session.is_closed() || exit.is_none(),
            detached: false,
        }
    }

    /// The exit status a shell would report for the program: its code, or 128 + the signal.
    pub fn status(&self) -> i32 {
        match (self.exit_code, self.signal) {
            (Some(code), _) => code,
            (None, Some(signal)) => 128 + signal,
            (None, None) => 0,
        }
    }

    /// The person left.
    fn left(sid: String) -> Detached {
        Detached {
            sid,
            ended: false,
            exit_code: None,
            signal: None,
            closed: false,
            detached: true,
        }
    }
}

impl Report for Detached {
    fn human(&self) -> String {
        match (self.exit_code, self.signal) {
            _ if self.detached => format!("detached from {}; it keeps running", self.sid),
            _ if self.closed => format!("{} was closed", self.sid),
            (Some(code), _) => format!("{} ended (exit status {code})", self.sid),
            (None, Some(signal)) => format!("{} ended (killed by signal {signal})", self.sid),
            (None, None) => format!("{} ended", self.sid),
        }
    }
}

/// `attach`: stream a session's screen to a person's terminal until they leave or it ends.
pub struct Attach;

impl Operation for Attach {
    const NAME: &'static str = "attach";
    const IN_STEP_FILES: bool = false;
    const DESCRIPTION: &'static str = "For `screenpilot attach` (a person's terminal), not for models: streams progress lines {attachment, seq, paint, origin_col, origin_row} with the bytes that show the session's screen on a terminal of cols x rows (the first paints everything, later ones the differences; no more than 2 beyond the last seq acknowledged with attach_shown) until the person leaves (attach_shown with leave, or cancel); answers {sid, ended, exit_code, signal, closed, detached}.";
    const TOOL: bool = false;
    type Params = AttachParams;
    type Output = Detached;

    async fn run(ctx: &Context, p: AttachParams, progress: &Progress) -> Result<Detached, OpError> {
        for (field, value) in [("cols", p.cols), ("rows", p.rows)] {
            if value == 0 || value > MAX_VIEWER_SIDE {
                return Err(OpError::invalid(
                    field,
                    format!("{value}: give the person's terminal size, 1 to {MAX_VIEWER_SIDE}"),
                ));
            }
        }
        if ctx.desktops.contains(&p.sid) {
            return Err(OpError::invalid(
                "sid",
                format!(
                    "{} is a desktop: attach shows terminal sessions (screenpilot watch shows desktops)",
                    p.sid
                ),
            ));
        }
        let session = ctx.registry.get(&p.sid)?;
        let _viewer = session.add_viewer("attach", p.read_only);
        let shown = Shown::register();
        let mut taken = shown.rx.clone();
        let mut leaving = shown.rx.clone();
        let mut updates = session.subscribe();
        let viewer = Size::new(p.cols, p.rows);
        let mut painter = Painter::new();
        let mut viewport: Option<Viewport> = None;
        let mut sent = 0;
        let over = |session: &Session| session.finished() || session.is_closed();
        loop {
            updates.borrow_and_update();
            // Read before the screen: once the program has finished, everything it wrote is on the
            // screen, so the paint below is the last one the person needs.
            let ending = over(&session);
            let (grid, modes) = session.with_screen(|s| (s.cells(), s.modes()));
            let view = Viewport::following(viewer, grid.size, grid.cursor.pos(), viewport);
            let paint = painter.paint(&grid, &modes, view);
            if !paint.is_empty() {
                sent += 1;
                progress.send(serde_json::json!(Frame {
                    attachment: shown.id,
                    seq: sent,
                    paint: String::from_utf8_lossy(&paint).into_owned(),
                    origin_col: view.origin.col.0,
                    origin_row: view.origin.row.0,
                }));
            }
            viewport = Some(view);
            if ending {
                return Ok(Detached::ended(p.sid, &session));
            }
            let painted = Instant::now();
            // Something to paint: a change, then the rate limit, then room on the way to the
            // person's terminal (meanwhile only the end matters). `None`: the session is gone.
            let ready = async {
                updates.changed().await.ok()?;
                tokio::time::sleep_until(painted + PAINT_INTERVAL).await;
                while taken.borrow_and_update().shown + IN_FLIGHT <= sent && !over(&session) {
                    tokio::select! {
                        changed = taken.changed() => changed.ok()?,
                        changed = updates.changed() => changed.ok()?,
                    }
                }
                Some(())
            };
            tokio::select! {
                ready = ready => if ready.is_none() {
                    return Ok(Detached::ended(p.sid, &session));
                },
                _ = leaving.wait_for(|t| t.leaving) => return Ok(Detached::left(p.sid)),
            }
        }
    }
}

/// What the client of an attachment has said: how far its terminal has taken the paints, and
/// whether the person has left.
#[derive(Debug, Default, Clone, Copy)]
struct Taken {
    shown: u64,
    leaving: bool,
}

/// Each running attachment's [`Taken`], by attachment id.
static SHOWN: LazyLock<Mutex<HashMap<u64, watch::Sender<Taken>>>> = LazyLock::new(Mutex::default);

/// One attachment's entry in [`SHOWN`], removed when the attachment ends.
struct Shown {
    id: u64,
    rx: watch::Receiver<Taken>,
}

impl Shown {
    fn register() -> Shown {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (tx, rx) = watch::channel(Taken::default());
        shown_table().insert(id, tx);
        Shown { id, rx }
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        shown_table().remove(&self.id);
    }
}

fn shown_table() -> std::sync::MutexGuard<'static, HashMap<u64, watch::Sender<Taken>>> {
    SHOWN
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Parameters of `attach_shown`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShownParams {
    /// The attachment (a frame's `attachment`).
    pub attachment: u64,
    /// The last paint written to the person's terminal (its `seq`).
    pub seq: u64,
    /// The person detached: the attachment ends, and answers once `list` no longer counts them.
    #[serde(default)]
    pub leave: bool,
}

/// What `attach_shown` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Acknowledged {
    /// The attachment is still running.
    pub attached: bool,
}

impl Report for Acknowledged {}

/// `attach_shown`: the client of an attachment has written its paints up to `seq`.
pub struct AttachShown;

impl Operation for AttachShown {
    const NAME: &'static str = "attach_shown";
    const IN_STEP_FILES: bool = false;
    const DESCRIPTION: &'static str = "For `screenpilot attach`, not for models: the person's terminal has taken the attachment's paints up to `seq`, so more may come; with `leave`, the person left and the attachment ends. Returns {attached}.";
    const TOOL: bool = false;
    type Params = ShownParams;
    type Output = Acknowledged;

    async fn run(_: &Context, p: ShownParams, _: &Progress) -> Result<Acknowledged, OpError> {
        let table = shown_table();
        let attached = match table.get(&p.attachment) {
            Some(shown) => {
                shown.send_if_modified(|taken| {
                    let before = *taken;
                    taken.shown = taken.shown.max(p.seq);
                    taken.leaving |= p.leave;
                    taken.shown != before.shown || taken.leaving != before.leaving
                });
                true
            }
            None => false,
        };
        Ok(Acknowledged { attached })
    }
}

/// Parameters of `write_raw`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteRawParams {
    pub sid: String,
    /// The bytes, base64: exactly what the person's terminal sent (keys, paste, mouse reports).
    pub data: String,
}

/// What `write_raw` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Written {
    pub sid: String,
    pub bytes: usize,
}

impl Report for Written {}

/// `write_raw`: send bytes to the program unchanged (an attached person's input).
pub struct WriteRaw;

impl Operation for WriteRaw {
    const NAME: &'static str = "write_raw";
    const DESCRIPTION: &'static str = "For `screenpilot attach`, not for models (use type, send_keys, mouse): writes base64 `data` to the program's terminal unchanged. Returns {sid, bytes}.";
    const TOOL: bool = false;
    type Params = WriteRawParams;
    type Output = Written;

    fn journal(_: &WriteRawParams, _: bool) -> Vec<Journaled> {
        Vec::new()
    }

    async fn run(ctx: &Context, p: WriteRawParams, _: &Progress) -> Result<Written, OpError> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&p.data)
            .map_err(|e| OpError::invalid("data", format!("not base64: {e}")))?;
        let session = ctx.registry.get(&p.sid)?;
        session.write(std::slice::from_ref(&bytes)).await?;
        Ok(Written {
            sid: p.sid,
            bytes: bytes.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::ops::execute;

    /// A person's terminal that never takes its paints (the client never says `attach_shown`) gets at
    /// most [`IN_FLIGHT`] of them, then one last one when the program ends, however much it printed.
    #[tokio::test]
    async fn a_terminal_that_stops_reading_is_sent_no_more_than_a_few_paints() {
        let registry = screenpilot_session::Registry::new(screenpilot_session::Limits::default());
        let ctx = Context::new(registry.clone());
        let spawn = json!({"sid": "printer", "argv": ["/usr/bin/seq", "1", "300000"]});
        execute(&ctx, "spawn", spawn, &Progress::default())
            .await
            .expect("spawn seq");
        let (tx, mut frames) = tokio::sync::mpsc::unbounded_channel();
        let attach = json!({"sid": "printer", "cols": 80, "rows": 24});
        let answer = execute(&ctx, "attach", attach, &Progress::new(tx))
            .await
            .expect("attach ends when the program does");
        assert_eq!(answer["ended"], true, "{answer}");
        assert_eq!(answer["exit_code"], 0, "{answer}");
        let mut seqs = Vec::new();
        // The person's terminal, taking every paint (later ones only change what differs).
        let mut terminal = screenpilot_screen::Screen::new(Size::new(80, 24), 0);
        while let Ok(frame) = frames.try_recv() {
            seqs.push(frame["seq"].as_u64().unwrap_or(0));
            terminal.feed(frame["paint"].as_str().unwrap_or_default().as_bytes());
        }
        assert!(
            !seqs.is_empty() && seqs.len() as u64 <= IN_FLIGHT + 1,
            "paints sent: {seqs:?}"
        );
        // The person still sees how it ended.
        let shown = terminal.text().to_owned();
        assert!(
            shown.lines().any(|line| line.trim_end() == "300000"),
            "{shown}"
        );
        registry.close_all(false).await;
    }

    /// A person who leaves is no longer counted by the time the attachment answers.
    #[tokio::test]
    async fn a_person_leaving_ends_the_attachment_and_is_no_longer_counted() {
        let registry = screenpilot_session::Registry::new(screenpilot_session::Limits::default());
        let ctx = Context::new(registry.clone());
        let spawn = json!({"sid": "cat", "argv": ["/bin/cat"]});
        execute(&ctx, "spawn", spawn, &Progress::default())
            .await
            .expect("spawn cat");
        let (tx, mut frames) = tokio::sync::mpsc::unbounded_channel();
        let attaching = ctx.clone();
        let attached = tokio::spawn(async move {
            let attach = json!({"sid": "cat", "cols": 80, "rows": 24, "read_only": true});
            execute(&attaching, "attach", attach, &Progress::new(tx)).await
        });
        let first = frames.recv().await.expect("a first paint");
        let session = registry.get("cat").expect("cat runs");
        assert_eq!(session.viewers().len(), 1);
        assert!(session.viewers()[0].read_only);
        let leave = json!({"attachment": first["attachment"], "seq": first["seq"], "leave": true});
        let ack = execute(&ctx, "attach_shown", leave, &Progress::default())
            .await
            .expect("attach_shown");
        assert_eq!(ack["attached"], true, "{ack}");
        let answer = attached
            .await
            .expect("the attachment task")
            .expect("attach answers");
        assert_eq!(answer["detached"], true, "{answer}");
        assert!(session.viewers().is_empty());
        assert!(session.alive());
        registry.close_all(false).await;
    }
}
