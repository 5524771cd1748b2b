//! A client of a daemon: this machine's (over its socket, starting it when it is not running) or
//! another host's (over the host's link command, see [`crate::host`]). Many requests may be in flight
//! on one connection; answers are routed back by request id.
//!
//! A link to another host can drop (a network cut, ssh killed, a sandbox's exec timing out) while the
//! host's daemon and its sessions live on. So over such a link every request carries a resume key;
//! when the link drops, the client says so to every waiting call (a progress line `{"link": "lost"}`),
//! makes the link again, and asks the daemon for each waiting call's answer by its key
//! (`{"link": "restored"}` first). A request the daemon never got answers `not_delivered`, and is
//! never sent again on its own; when the link cannot be restored in time (or the daemon there is a new
//! one), waiting calls end with `link_lost`: their outcome is unknown.

mod limits;
mod local;
mod remote;
mod wire;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, watch};

pub use limits::RECONNECT_LIMIT_VAR;
pub use local::{call_blocking, connect as connect_local, connect_or_start as local_connection};
pub use remote::CONNECT_LIMIT_VAR;
pub use wire::Wire;

use limits::{answer_grace, reconnect_limit, remote_answer_grace, ANSWER_GRACE_VAR};
use wire::{final_answer, Feed, Read, Writer};

use crate::host::Host;
use crate::paths::Paths;
use crate::protocol::{Request, Response};
use crate::wire::build;
use crate::wire::error::ErrorCode;
use crate::wire::error::OpError;

/// Whether requests can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Up,
    /// A remote link is being made again.
    Down,
    /// Gone for good.
    Gone,
}

/// A connection to the daemon.
///
/// A daemon that stops answering (SIGSTOPped, wedged) must not hold a caller forever, yet a wait may
/// legitimately run for an hour without a line, and an `attach` for a day. So the bound is on the
/// daemon answering at all: once calls are waiting and nothing has come for the grace period
/// (`SCREENPILOT_ANSWER_GRACE_MS`, the CLI's; 10 s over a remote link), the watchdog asks the daemon
/// for its `status`; a daemon that does not answer that within [`STATUS_CHECK_LIMIT`] (or the grace,
/// if shorter) is given up: every waiting call ends with `daemon_unavailable`. Over a remote link the
/// link is dropped and made again instead (a silent link is most often a dead network).
pub struct Client {
    /// Becomes true when the connection is gone for good.
    closed: watch::Receiver<bool>,
    link: Arc<Link>,
}

/// A waiting call: where its answers go, and its resume key over a remote link.
struct Pending {
    answers: mpsc::UnboundedSender<Response>,
    key: Option<String>,
}

/// What the client, its calls, its reader and its watchdog share.
struct Link {
    /// Where the daemon is, for messages: its socket, or the host's name and link.
    place: String,
    /// `None` while a remote link is being made again.
    writer: tokio::sync::Mutex<Option<Writer>>,
    /// Whether requests can be sent now (a remote link may be down for a while).
    state: watch::Sender<State>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
    /// Wakes the watchdog when a call starts.
    call_started: tokio::sync::Notify,
    /// Asks the reader to drop the link (the watchdog found it silent).
    drop_link: Arc<tokio::sync::Notify>,
    /// Why the daemon was given up, once it was.
    given_up: Mutex<Option<String>>,
    /// The host, for a link that can be made again.
    host: Option<Host>,
    /// Resume keys are `PREFIX-ID`: unique to this client.
    key_prefix: String,
}

/// How long a daemon that has been silent with calls waiting may take to answer `status`.
const STATUS_CHECK_LIMIT: Duration = Duration::from_secs(10);

/// The answers to one request: progress lines, then the final answer.
pub struct Call {
    id: u64,
    answers: mpsc::UnboundedReceiver<Response>,
    link: Arc<Link>,
}

impl Call {
    /// The next progress line, or the final answer (then the call is over).
    pub async fn next(&mut self) -> Result<Response, OpError> {
        match self.answers.recv().await {
            Some(response) => Ok(response),
            None => Err(match self.link.given_up() {
                Some(why) => OpError::new(ErrorCode::DaemonUnavailable, why),
                None => OpError::new(
                    ErrorCode::DaemonGone,
                    crate::wire::error::interrupted(&format!(
                        "the screenpilot daemon ({})",
                        self.link.place
                    )),
                ),
            }),
        }
    }

    /// Wait for the final answer, passing progress lines to `on_progress` (a link's loss and
    /// restoration among them, as `{"link": ...}`).
    pub async fn finish(mut self, mut on_progress: impl FnMut(&Value)) -> Result<Value, OpError> {
        loop {
            let response = self.next().await?;
            if let Some(progress) = &response.progress {
                on_progress(progress);
                continue;
            }
            return final_answer(response);
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Ok(mut pending) = self.link.pending.lock() {
            pending.remove(&self.id);
        }
    }
}

/// Is this progress line the client's own news of the link (`{"link": "lost" | "restored"}`)?
pub fn link_notice(progress: &Value) -> Option<String> {
    let what = progress.get("link")?.as_str()?;
    let host = progress.get("host").and_then(Value::as_str).unwrap_or("?");
    Some(match what {
        "lost" => format!(
            "the link to host {host} was lost ({}); making it again",
            progress.get("why").and_then(Value::as_str).unwrap_or("?")
        ),
        "restored" => format!(
            "the link to host {host} is back after {} ms; asking for what happened meanwhile",
            progress
                .get("after_ms")
                .and_then(Value::as_u64)
                .unwrap_or(0)
        ),
        other => format!("the link to host {host}: {other}"),
    })
}

impl Link {
    fn given_up(&self) -> Option<String> {
        self.given_up
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }

    fn remote(&self) -> bool {
        self.host.is_some()
    }

    /// Register a call and send its request (over a remote link, once the link is up). A `stream`
    /// (paints to a person's terminal) ends with the link; everything else can be asked for again.
    async fn start(
        self: &Arc<Self>,
        op: &str,
        params: Value,
        stream: bool,
    ) -> Result<Call, OpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = mpsc::unbounded_channel();
        let key = (self.remote() && !stream && !matches!(op, "cancel" | "status" | "shutdown"))
            .then(|| format!("{}-{id}", self.key_prefix));
        if let Ok(mut pending) = self.pending.lock() {
            pending.insert(
                id,
                Pending {
                    answers: tx,
                    key: key.clone(),
                },
            );
        }
        let call = Call {
            id,
            answers: rx,
            link: self.clone(),
        };
        let request = Request {
            id: json!(id),
            op: op.to_owned(),
            params,
            resume: key,
        };
        self.send(&request).await?;
        self.call_started.notify_one();
        Ok(call)
    }

    /// Write one request line, waiting (a bounded time) for a remote link that is being made again.
    async fn send(&self, request: &Request) -> Result<(), OpError> {
        let mut line = serde_json::to_vec(request)
            .map_err(|e| OpError::new(ErrorCode::BadRequest, e.to_string()))?;
        wire::check_request_size(&line)?;
        line.push(b'\n');
        let lost = || {
            OpError::new(
                ErrorCode::LinkLost,
                format!(
                    "the link to {} is down and could not be made again; nothing was sent",
                    self.place
                ),
            )
        };
        if self.remote() {
            let mut state = self.state.subscribe();
            let settled =
                tokio::time::timeout(reconnect_limit(), state.wait_for(|s| *s != State::Down))
                    .await;
            if !matches!(settled, Ok(Ok(s)) if *s == State::Up) {
                return Err(lost());
            }
        }
        let mut writer = self.writer.lock().await;
        let Some(writer) = writer.as_mut() else {
            return Err(lost());
        };
        let written = async {
            writer.write_all(&line).await?;
            writer.flush().await
        };
        written.await.map_err(|e| {
            OpError::new(
                if self.remote() {
                    ErrorCode::NotDelivered
                } else {
                    ErrorCode::DaemonGone
                },
                format!(
                    "cannot send to the screenpilot daemon ({}): {e}",
                    self.place
                ),
            )
        })
    }

    fn has_calls(&self) -> bool {
        self.pending.lock().map(|p| !p.is_empty()).unwrap_or(false)
    }

    /// Send `response` to the call `id` waits on (if it still waits).
    fn route(&self, id: u64, response: Response) {
        let Ok(mut pending) = self.pending.lock() else {
            return;
        };
        let is_final = response.is_final();
        if let Some(call) = pending.get(&id) {
            let _ = call.answers.send(response);
        }
        if is_final {
            pending.remove(&id);
        }
    }

    /// Tell every waiting call `progress` (news of the link).
    fn tell_all(&self, progress: &Value) {
        if let Ok(pending) = self.pending.lock() {
            for (id, call) in pending.iter() {
                let _ = call
                    .answers
                    .send(Response::progress(json!(id), progress.clone()));
            }
        }
    }

    /// End waiting calls (those `which` picks) with `error`.
    fn end_calls(&self, which: impl Fn(&Pending) -> bool, error: impl Fn(u64) -> OpError) {
        if let Ok(mut pending) = self.pending.lock() {
            let ids: Vec<u64> = pending
                .iter()
                .filter(|(_, p)| which(p))
                .map(|(id, _)| *id)
                .collect();
            for id in ids {
                if let Some(call) = pending.remove(&id) {
                    let _ = call.answers.send(Response::done(json!(id), Err(error(id))));
                }
            }
        }
    }
}

impl Client {
    /// Connect to this machine's daemon of `paths`, starting it if none answers.
    pub async fn connect_or_start(paths: &Paths) -> Result<Arc<Client>, OpError> {
        let stream = local::connect_or_start(paths).await?;
        Ok(Client::over(
            Wire::over_socket(stream),
            paths.socket.display().to_string(),
            None,
        ))
    }

    /// Connect only if a daemon is running here (`None` when none answers).
    pub async fn connect_existing(paths: &Paths) -> Result<Option<Arc<Client>>, OpError> {
        Ok(local::connect(paths).await?.map(|stream| {
            Client::over(
                Wire::over_socket(stream),
                paths.socket.display().to_string(),
                None,
            )
        }))
    }

    /// Connect to the daemon of `host`: this machine's (`paths`), or another's over its link
    /// command, which starts that host's daemon when none runs there.
    pub async fn connect_host(host: &Host, paths: &Paths) -> Result<Arc<Client>, OpError> {
        if host.is_local() {
            return Client::connect_or_start(paths).await;
        }
        let (wire, status) = remote::dial(host)
            .await
            .map_err(|failure| failure.into_error(host))?;
        let instance = status["instance"].as_str().unwrap_or_default().to_owned();
        Ok(Client::over(
            wire,
            format!("host {} ({})", host.name, host.describe()),
            Some((host.clone(), instance)),
        ))
    }

    fn over(wire: Wire, place: String, remote: Option<(Host, String)>) -> Arc<Client> {
        let (host, instance) = match remote {
            Some((host, instance)) => (Some(host), instance),
            None => (None, String::new()),
        };
        let Wire { writer, feed } = wire;
        let drop_link = Arc::new(tokio::sync::Notify::new());
        let link = Arc::new(Link {
            place,
            writer: tokio::sync::Mutex::new(Some(writer)),
            state: watch::channel(State::Up).0,
            pending: Mutex::default(),
            next_id: AtomicU64::new(1),
            call_started: tokio::sync::Notify::new(),
            drop_link: drop_link.clone(),
            given_up: Mutex::new(None),
            host,
            key_prefix: key_prefix(),
        });
        let (closed_tx, closed) = watch::channel(false);
        let (lines_tx, lines) = watch::channel(0u64);
        let grace = if link.remote() {
            remote_answer_grace()
        } else {
            answer_grace()
        };
        tokio::spawn(read_answers(
            Arc::downgrade(&link),
            feed,
            drop_link,
            instance,
            lines_tx,
            closed_tx.clone(),
        ));
        tokio::spawn(watchdog(Arc::downgrade(&link), lines, closed_tx, grace));
        Arc::new(Client { closed, link })
    }

    /// Send a request; its answers arrive on the returned call.
    pub async fn start(&self, op: &str, params: Value) -> Result<Call, OpError> {
        self.link.start(op, params, false).await
    }

    /// Send a request whose answers are a stream to a person's terminal (`attach`): over a link
    /// that drops, it ends rather than being asked for again.
    pub async fn start_stream(&self, op: &str, params: Value) -> Result<Call, OpError> {
        self.link.start(op, params, true).await
    }

    /// Send a request and wait for its final answer.
    pub async fn call(&self, op: &str, params: Value) -> Result<Value, OpError> {
        self.start(op, params).await?.finish(|_| {}).await
    }

    /// `error` said plainly when it comes from a daemon of another build than this client: an
    /// older daemon does not know a newer operation (`unknown_operation`), a newer one answers
    /// what this client cannot read (`bad_response`). Other errors are as they are.
    pub async fn explain(&self, error: OpError) -> OpError {
        if !build::may_be_another_build(&error) {
            return error;
        }
        match self.call("status", json!({})).await {
            Ok(status) => build::explain(error, &status),
            Err(_) => error,
        }
    }

    /// Resolves when the connection is gone for good (the daemon shut down, or a remote link could
    /// not be made again).
    pub async fn closed(&self) {
        let mut closed = self.closed.clone();
        let _ = closed.wait_for(|c| *c).await;
    }

    /// Whether this client reaches another host's daemon.
    pub fn is_remote(&self) -> bool {
        self.link.remote()
    }

    /// Ask the daemon to stop the request `id`.
    /// Returns whether the request was still running (and is now stopped).
    pub async fn cancel(&self, id: u64) -> Result<bool, OpError> {
        let mut params = json!({"id": id});
        if self.link.remote() {
            // After a reconnection the request is known to the daemon by its key alone.
            params["key"] = json!(format!("{}-{id}", self.link.key_prefix));
        }
        let answer = self.call("cancel", params).await?;
        Ok(answer["cancelled"] == serde_json::Value::Bool(true))
    }
}

/// A prefix for resume keys no other client picks: our pid, the time, and a counter.
fn key_prefix() -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos();
    format!(
        "{}-{nanos:x}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Read answers and route them to their calls. When a remote link drops, make it again and ask for
/// the waiting calls' answers; when it cannot be made in time, or a local daemon closes the socket,
/// end every waiting call. Holds the link only between reads, so a client dropped ends it.
async fn read_answers(
    link: std::sync::Weak<Link>,
    mut feed: Feed,
    drop_link: Arc<tokio::sync::Notify>,
    instance: String,
    lines: watch::Sender<u64>,
    closed: watch::Sender<bool>,
) {
    let mut line = Vec::new();
    loop {
        let read = tokio::select! {
            read = wire::read_answer_line(&mut feed.reader, &mut line) => read,
            _ = drop_link.notified() => Read::End,
        };
        let Some(strong) = link.upgrade() else {
            return;
        };
        match read {
            Read::Line => {
                lines.send_modify(|n| *n += 1);
                if let Ok(response) = serde_json::from_slice::<Response>(&line) {
                    if let Some(id) = response.id.as_u64() {
                        strong.route(id, response);
                    }
                }
                continue;
            }
            Read::TooLong(what) => {
                // Not a dropped network: the far side misbehaves, and making the link again would
                // only read the same. Every waiting call ends saying why; the link command's whole
                // process group ends with the feed.
                let message = format!("dropped the link to {}: it sent {what}", strong.place);
                strong.end_calls(
                    |_| true,
                    |_| OpError::new(ErrorCode::BadResponse, message.clone()),
                );
                strong.state.send_replace(State::Gone);
                closed.send_replace(true);
                return;
            }
            Read::End => {}
        }
        let Some(host) = strong.host.clone() else {
            // This machine's daemon went away (or was given up): every waiting call learns it.
            if let Ok(mut pending) = strong.pending.lock() {
                pending.clear();
            }
            strong.state.send_replace(State::Gone);
            closed.send_replace(true);
            return;
        };
        // A remote link dropped; the daemon there lives on.
        strong.state.send_replace(State::Down);
        *strong.writer.lock().await = None;
        let why = remote::why_down(feed.child.as_mut(), feed.tail.as_ref()).await;
        drop(feed);
        match remake(&strong, &host, &why, &instance).await {
            Some(new_feed) => feed = new_feed,
            None => {
                strong.state.send_replace(State::Gone);
                closed.send_replace(true);
                return;
            }
        }
    }
}

/// A remote link dropped (`why`): tell the waiting calls, make the link again (trying for
/// [`reconnect_limit`]), and ask for each waiting call's answer by its key. `None` when the link is
/// gone for good (every waiting call then ended, saying why).
async fn remake(link: &Arc<Link>, host: &Host, why: &str, instance: &str) -> Option<Feed> {
    // A stream to a person's terminal cannot be picked up again.
    link.end_calls(
        |p| p.key.is_none(),
        |_| {
            OpError::new(
                ErrorCode::LinkLost,
                format!("the link to {} was lost ({why})", link.place),
            )
        },
    );
    if !link.has_calls() {
        // Nobody waits: nothing to ask for. The next client makes a new link.
        return None;
    }
    link.tell_all(&json!({"link": "lost", "host": host.name, "why": why}));
    let lost_at = Instant::now();
    let limit = reconnect_limit();
    let mut pause = Duration::from_millis(200);
    let mut last_failure = String::new();
    let made = loop {
        match remote::dial(host).await {
            Ok(made) => break Some(made),
            Err(failure) => last_failure = failure.0,
        }
        if lost_at.elapsed() + pause > limit || !link.has_calls() {
            break None;
        }
        // Pacing between attempts (each is bounded on its own), not a wait standing in for an event.
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(Duration::from_secs(5));
    };
    let Some((wire, status)) = made else {
        let message = format!(
            "the link to {} was lost ({why}) and could not be made again within {} ms ({RECONNECT_LIMIT_VAR}): {last_failure}. The request's outcome is unknown; the sessions live on in that daemon",
            link.place,
            limit.as_millis()
        );
        link.end_calls(
            |_| true,
            |_| OpError::new(ErrorCode::LinkLost, message.clone()),
        );
        return None;
    };
    if status["instance"].as_str().unwrap_or_default() != instance {
        // Not the daemon the requests went to: what they did is unknown.
        let message = format!(
            "the link to {} was lost ({why}), and the daemon there is a new one since (its sessions are not the ones left): the request's outcome is unknown",
            link.place
        );
        link.end_calls(
            |_| true,
            |_| OpError::new(ErrorCode::LinkLost, message.clone()),
        );
        return None;
    }
    let Wire { mut writer, feed } = wire;
    link.tell_all(&json!({
        "link": "restored",
        "host": host.name,
        "after_ms": u64::try_from(lost_at.elapsed().as_millis()).unwrap_or(u64::MAX),
    }));
    // Each waiting call asks for its answer by its key, under its own id. A write that fails means
    // the new link dropped too: the reader finds that at once.
    let resumes: Vec<(u64, String)> = link
        .pending
        .lock()
        .map(|p| {
            p.iter()
                .filter_map(|(id, c)| Some((*id, c.key.clone()?)))
                .collect()
        })
        .unwrap_or_default();
    for (id, key) in resumes {
        let request = Request {
            id: json!(id),
            op: "resume".into(),
            params: json!({ "key": key }),
            resume: None,
        };
        let mut bytes = serde_json::to_vec(&request).unwrap_or_default();
        bytes.push(b'\n');
        if writer.write_all(&bytes).await.is_err() {
            break;
        }
    }
    let _ = writer.flush().await;
    *link.writer.lock().await = Some(writer);
    link.state.send_replace(State::Up);
    Some(feed)
}

/// Watch one connection: while calls wait and the daemon has been silent for `grace`, check that it
/// still answers. A local daemon that does not is given up; a remote link is dropped (and made again
/// by the reader). Sleeps on events (a line, a call starting), never polls.
async fn watchdog(
    link: std::sync::Weak<Link>,
    mut lines: watch::Receiver<u64>,
    closed: watch::Sender<bool>,
    grace: Duration,
) {
    loop {
        let Some(strong) = link.upgrade() else {
            return;
        };
        if !strong.has_calls() {
            // Idle: nothing to bound until a call starts (or the connection goes).
            tokio::select! {
                _ = strong.call_started.notified() => {}
                _ = lines.changed() => {}
            }
            if closed.is_closed() || *closed.borrow() {
                return;
            }
            continue;
        }
        drop(strong);
        lines.mark_unchanged();
        match tokio::time::timeout(grace, lines.changed()).await {
            Ok(Ok(())) => continue,
            Ok(Err(_)) => return, // the reader ended: the connection is gone for good
            Err(_) => {}
        }
        let Some(strong) = link.upgrade() else {
            return;
        };
        if !strong.has_calls() || *strong.state.borrow() != State::Up {
            continue;
        }
        let limit = grace.min(STATUS_CHECK_LIMIT);
        let alive = tokio::time::timeout(limit, async {
            let mut check = strong.start("status", json!({}), false).await.ok()?;
            check.next().await.ok()
        })
        .await;
        if matches!(alive, Ok(Some(_))) {
            continue;
        }
        if strong.remote() {
            // Most often a dead network: drop the link, and the reader makes it again.
            strong.drop_link.notify_one();
            continue;
        }
        let why = format!(
            "the screenpilot daemon at {} sent nothing for {} ms ({ANSWER_GRACE_VAR}) and did not answer a status check within {} ms; is it stopped (kill -STOP) or overloaded?",
            strong.place,
            grace.as_millis(),
            limit.as_millis(),
        );
        *strong
            .given_up
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(why);
        // Every waiting call ends (its channel closes) and says why.
        if let Ok(mut pending) = strong.pending.lock() {
            pending.clear();
        }
        closed.send_replace(true);
        return;
    }
}
