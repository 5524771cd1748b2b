//! The MCP server handler: tools listed from [`crate::ops::OPERATIONS`], each call forwarded to the
//! daemon as one request (with progress and cancellation), its answer shaped by [`super::present`].

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ProgressToken,
    ServerCapabilities, ServerConfig, ServerRequest, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, Peer, RoleServer, ServerHandler};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::profiles::Selection;
use super::{present, tools};
use crate::client::{link_notice, Client};
use crate::fleet::{Fleet, Routed};
use crate::host::Host;
use crate::ops::Operation;
use crate::ops::{self, ErrorCode, OpError, OperationDef, OPERATIONS};
use crate::paths::Paths;

/// What the server tells a model before it uses any tool.
const INSTRUCTIONS: &str = "spawn, then one call a step: send input with until, never sleep. Later answers show only changed rows.";

/// How often a running call reports progress, when the client asked for it.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// How long shutdown waits for running calls to hand their cancellation to the daemon.
const DRAIN_LIMIT: Duration = Duration::from_millis(1500);

/// The MCP server handler. Cheap to clone: every HTTP session gets a clone over the same daemon link.
#[derive(Clone)]
pub struct Screenpilot {
    pub(super) shared: Arc<Shared>,
    /// Who is looking, for screens sent as what changed since this client's last look: one name per
    /// client (an HTTP server makes a clone per MCP session, [`Screenpilot::for_new_client`]).
    /// `None` for the classic tools, whose screens are whole.
    reader: Option<String>,
}

pub(super) struct Shared {
    /// The daemons: this machine's, or the hosts of `--host`; each connection opened on the first
    /// tool call for it, and reopened if the daemon went away.
    pub(super) fleet: Fleet,
    tools: Vec<Tool>,
    /// Cancelled at shutdown: every running call then cancels its daemon request.
    pub(super) shutdown: CancellationToken,
    /// How many tool calls are running.
    running: tokio::sync::watch::Sender<usize>,
    /// The classic tools are served: screens are whole.
    classic: bool,
    /// Sessions whose hidden-line prompt the client was asked to open the watch page for, until
    /// it answers: one request at a time per session.
    offered: Mutex<HashSet<String>>,
}

impl Screenpilot {
    /// A server listing every operation that is a tool, every parameter listed.
    pub fn new(paths: Paths) -> Screenpilot {
        Screenpilot::serving(
            paths,
            Selection {
                ops: OPERATIONS.iter().filter(|op| op.tool).collect(),
                profiles: crate::ops::Profile::ALL.to_vec(),
                output_schemas: Default::default(),
            },
        )
    }

    /// A server listing only the selected operations (`--tools` profiles); calls to other tools are
    /// refused.
    pub fn serving(paths: Paths, selection: Selection) -> Screenpilot {
        Screenpilot::serving_on(Fleet::new(paths, vec![Host::local()]), selection)
    }

    /// A server of the selected operations over the daemons of `fleet`.
    pub fn serving_on(fleet: Fleet, selection: Selection) -> Screenpilot {
        let classic = selection.classic();
        let server = Screenpilot {
            shared: Arc::new(Shared {
                fleet,
                tools: selection
                    .ops
                    .iter()
                    .map(|op| tools::tool_of(op, &selection.profiles, selection.output_schemas))
                    .collect(),
                shutdown: CancellationToken::new(),
                running: tokio::sync::watch::Sender::new(0),
                classic,
                offered: Default::default(),
            }),
            reader: None,
        };
        server.for_new_client()
    }

    /// The same server for another client, with a reader name of its own.
    pub fn for_new_client(&self) -> Screenpilot {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Screenpilot {
            shared: self.shared.clone(),
            reader: (!self.shared.classic).then(|| format!("mcp-{}-{n}", std::process::id())),
        }
    }

    /// What a model reads first: with several hosts, also how sids name them.
    pub fn instructions(&self) -> String {
        let hosts = self.shared.fleet.hosts();
        if hosts.len() < 2 {
            return INSTRUCTIONS.to_owned();
        }
        let names: Vec<&str> = hosts.iter().map(|h| h.name.as_str()).collect();
        format!(
            "{INSTRUCTIONS} Sessions live on hosts {}: every sid is HOST/SID; spawn with sid \"{}/\" to start one there.",
            names.join(", "),
            names[0]
        )
    }

    /// The tools, as `tools/list` sends them.
    pub fn tools(&self) -> &[Tool] {
        &self.shared.tools
    }
}

impl ServerHandler for Screenpilot {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(
                "screenpilot",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(self.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.shared.tools.clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.shared.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let served = self.shared.tools.iter().any(|t| t.name == request.name);
        let op = match ops::find(&request.name) {
            Ok(op) if served => op,
            Ok(op) => {
                let why = if op.tool {
                    "not served here (screenpilot mcp --tools leaves it out)"
                } else {
                    "not a tool: it serves the screenpilot CLI (a person's terminal)"
                };
                let error =
                    OpError::new(ErrorCode::UnknownOperation, format!("{}: {why}", op.name));
                return Ok(present::tool_result(None, Err(error)).into());
            }
            Err(error) => return Ok(present::tool_result(None, Err(error)).into()),
        };
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let fleet = &self.shared.fleet;
        if op.every_host && fleet.hosts().len() > 1 {
            let listed = fleet.call(op.name, arguments, None, |_| {}).await;
            return Ok(present::tool_result(Some(op), listed).into());
        }
        let Routed { host, params } =
            match fleet.route(op.name, arguments, self.reader.clone()).await {
                Ok(routed) => routed,
                Err(error) => return Ok(present::tool_result(Some(op), Err(error)).into()),
            };
        let limit = (op.time_limit)(&params);
        let report = Progress {
            token: context.meta.get_progress_token(),
            peer: context.peer.clone(),
            message: progress_message(op, &params),
            started: Instant::now(),
            last: 0.0,
            long: limit.is_some(),
            total_secs: limit.map(|d| d.as_secs_f64()),
        };
        let sid = params["sid"].as_str().map(str::to_owned);
        let outcome = self
            .shared
            .forward(host, op.name, params, report, &context.ct)
            .await;
        if let Ok(answer) = &outcome {
            if let Some(sid) = waits_for_secret(answer, sid) {
                self.shared.offer_page(host, sid, context.peer.clone());
            }
        }
        let outcome = outcome.map(|mut answer| {
            fleet.label(host, &mut answer);
            answer
        });
        Ok(present::tool_result(Some(op), outcome).into())
    }
}

fn offered(set: &Mutex<HashSet<String>>) -> std::sync::MutexGuard<'_, HashSet<String>> {
    set.lock().unwrap_or_else(|e| e.into_inner())
}

/// The session of an answer whose program waits for a hidden line (a password).
fn waits_for_secret(answer: &Value, sid: Option<String>) -> Option<String> {
    let input = answer["screen"]["input"]
        .as_str()
        .or_else(|| answer["input"].as_str());
    if input != Some("secret") {
        return None;
    }
    answer["sid"].as_str().map(str::to_owned).or(sid)
}

impl Shared {
    /// A program waits for a password: a client that takes URL-mode elicitation (MCP 2025-11-25)
    /// is asked to open the watch page at that session, where the person types it; the model
    /// never sees it. Sent beside the answer, not awaited by it. Local sessions only (a remote
    /// host's page is on that host's loopback).
    fn offer_page(self: &Arc<Self>, host: usize, sid: String, peer: Peer<RoleServer>) {
        let takes_url = peer.peer_info().is_some_and(|info| {
            info.capabilities
                .elicitation
                .as_ref()
                .is_some_and(|e| e.url.is_some())
        });
        if !takes_url || !self.fleet.hosts()[host].is_local() {
            return;
        }
        if !offered(&self.offered).insert(sid.clone()) {
            return;
        }
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let shared = self.clone();
        tokio::spawn(async move {
            let page = match shared.fleet.client(host, false).await {
                Ok(client) => {
                    client
                        .call(ops::Watch::NAME, serde_json::json!({"control": true}))
                        .await
                }
                Err(e) => Err(e),
            };
            if let Some(url) = page.ok().and_then(|p| p["url"].as_str().map(str::to_owned)) {
                let params = ElicitRequestParams::UrlElicitationParams {
                    meta: None,
                    message: format!(
                        "Session {sid} waits for a password. Type it on this page, in {sid}'s \
                         terminal: it goes to the program only, never to the model."
                    ),
                    url: format!("{url}&sid={sid}"),
                    elicitation_id: format!("secret-{sid}-{}", NEXT.fetch_add(1, Relaxed)),
                };
                let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
                if let Err(e) = peer.send_request(request).await {
                    eprintln!("screenpilot mcp: asking the client to open the page for {sid}: {e}");
                }
            }
            offered(&shared.offered).remove(&sid);
        });
    }

    /// Run `op` on the daemon of host `host`, reporting progress while it runs, and cancelling it
    /// there when the MCP client cancels the call (or the server shuts down).
    async fn forward(
        &self,
        host: usize,
        op: &str,
        params: Value,
        mut report: Progress,
        cancelled: &CancellationToken,
    ) -> Result<Value, OpError> {
        self.running.send_modify(|n| *n += 1);
        let _running = RunningCall(&self.running);
        let client = self.fleet.client(host, false).await?;
        let (client, mut call) = match client.start(op, params.clone()).await {
            Ok(call) => (client, call),
            // The daemon went away since the last call (stopped, restarted): once more on a new link.
            Err(e) if e.code == ErrorCode::DaemonGone => {
                let client = self.fleet.client(host, true).await?;
                let call = client.start(op, params).await?;
                (client, call)
            }
            Err(e) => return Err(e),
        };
        let mut guard = CancelOnDrop {
            client: client.clone(),
            id: Some(call.id()),
        };
        // Waits say at once that they started; everything reports each second after.
        let first = if report.long {
            Duration::ZERO
        } else {
            PROGRESS_EVERY
        };
        let mut ticks =
            tokio::time::interval_at(tokio::time::Instant::now() + first, PROGRESS_EVERY);
        loop {
            tokio::select! {
                answer = call.next() => {
                    let answer = answer?;
                    if let Some(progress) = &answer.progress {
                        report.send_unless(Some(progress), cancelled, &self.shutdown).await;
                        continue;
                    }
                    guard.id = None;
                    return match (answer.result, answer.error) {
                        (_, Some(error)) => Err(client.explain(error).await),
                        (result, None) => Ok(result.unwrap_or(Value::Null)),
                    };
                }
                why = cancelled_or_shutdown(cancelled, &self.shutdown) => {
                    guard.id = None;
                    let id = call.id();
                    let stopped = client.call("cancel", serde_json::json!({ "id": id })).await;
                    eprintln!(
                        "screenpilot mcp: {op} {why}; daemon request {id} {}",
                        match stopped {
                            Ok(answer) if answer["cancelled"] == true => "cancelled".to_owned(),
                            Ok(_) => "had already ended".to_owned(),
                            Err(e) => format!("could not be cancelled: {}", e.message),
                        }
                    );
                    return Err(OpError::new(ErrorCode::Cancelled, format!("{op} {why}")));
                }
                _ = ticks.tick(), if report.token.is_some() => {
                    report.send_unless(None, cancelled, &self.shutdown).await;
                }
            }
        }
    }

    /// Wait (briefly) until running calls have handed their cancellation to the daemon.
    pub(super) async fn drain(&self) {
        self.shutdown.cancel();
        let mut running = self.running.subscribe();
        let _ = tokio::time::timeout(DRAIN_LIMIT, running.wait_for(|n| *n == 0)).await;
    }
}

async fn cancelled_or_shutdown(
    cancelled: &CancellationToken,
    shutdown: &CancellationToken,
) -> &'static str {
    tokio::select! {
        _ = cancelled.cancelled() => "cancelled by the MCP client",
        _ = shutdown.cancelled() => "stopped: the MCP server is shutting down",
    }
}

/// Counts a running call for [`Shared::drain`].
struct RunningCall<'a>(&'a tokio::sync::watch::Sender<usize>);

impl Drop for RunningCall<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Cancels the daemon request if the tool call is dropped before it ends (the transport closed under
/// it), so no wait outlives the call that asked for it.
struct CancelOnDrop {
    client: Arc<Client>,
    id: Option<u64>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let (Some(id), Ok(runtime)) = (self.id, tokio::runtime::Handle::try_current()) {
            let client = self.client.clone();
            runtime.spawn(async move { client.cancel(id).await });
        }
    }
}

/// `notifications/progress` for one call, when the client sent a progress token.
struct Progress {
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    message: String,
    total_secs: Option<f64>,
    /// Calls that wait (they have a time limit) announce themselves at once.
    long: bool,
    started: Instant,
    last: f64,
}

impl Progress {
    /// [`Progress::send`], given up when the call is cancelled or the server shuts down: rmcp
    /// delivers a notification only while its service runs, and once the client closed stdin it no
    /// longer does, so the send would wait until rmcp gave up on the call (5 s) and the call would
    /// never get to cancel its daemon request.
    async fn send_unless(
        &mut self,
        daemon_progress: Option<&Value>,
        cancelled: &CancellationToken,
        shutdown: &CancellationToken,
    ) {
        tokio::select! {
            () = self.send(daemon_progress) => {}
            _ = cancelled_or_shutdown(cancelled, shutdown) => {}
        }
    }

    /// Send one notification: elapsed seconds as progress (strictly increasing, as the spec wants), and
    /// the daemon's own progress line when there is one.
    async fn send(&mut self, daemon_progress: Option<&Value>) {
        let Some(token) = self.token.clone() else {
            return;
        };
        let elapsed = self.started.elapsed().as_secs_f64();
        let progress = if elapsed > self.last {
            elapsed
        } else {
            self.last + 0.001
        };
        self.last = progress;
        let message = match daemon_progress {
            Some(line) if link_notice(line).is_some() => link_notice(line).unwrap_or_default(),
            Some(Value::String(line)) => line.clone(),
            Some(Value::Object(line)) if line.get("message").is_some_and(Value::is_string) => {
                line["message"].as_str().unwrap_or_default().to_owned()
            }
            Some(line) => line.to_string(),
            None => format!("{} ({:.0} s)", self.message, elapsed),
        };
        let mut param = ProgressNotificationParam::new(token, progress).with_message(message);
        if let Some(total) = self.total_secs {
            param = param.with_total(total);
        }
        // A client that stopped listening is not our failure: the call itself goes on.
        let _ = self.peer.notify_progress(param).await;
    }
}

/// What a running call is doing, in words: the operation's own ("waiting for /^42$/ on sh"), or
/// its name and session.
fn progress_message(op: &OperationDef, params: &Value) -> String {
    (op.progress)(params).unwrap_or_else(|| match params["sid"].as_str() {
        Some(sid) => format!("{} on {sid}", op.name),
        None => op.name.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_operation_is_a_tool_with_an_object_schema() {
        let server = Screenpilot::new(Paths::in_dir(std::env::temp_dir()));
        let tools = OPERATIONS.iter().filter(|op| op.tool).count();
        assert_eq!(server.tools().len(), tools);
        assert!(server.tools().iter().all(|t| t.name != "attach"));
        for tool in server.tools() {
            assert_eq!(
                tool.input_schema.get("type"),
                Some(&json!("object")),
                "{}",
                tool.name
            );
            assert!(tool.input_schema.get("$schema").is_none());
        }
    }

    /// What a model reads of one profile's tools: name, description and input schema of each tool, as
    /// compact JSON, and the server's instructions (clients show both to the model).
    fn model_bytes(tools: Option<&str>) -> (usize, Vec<(String, usize)>) {
        let selection = super::super::profiles::select(tools).unwrap_or_default();
        let server = Screenpilot::serving(Paths::in_dir(std::env::temp_dir()), selection);
        let each: Vec<(String, usize)> = server
            .tools()
            .iter()
            .map(|tool| {
                let read = json!({
                    "name": tool.name,
                    "description": tool.description,
                    "inputSchema": tool.input_schema,
                });
                (tool.name.to_string(), read.to_string().len())
            })
            .collect();
        let total = each.iter().map(|(_, n)| n).sum::<usize>() + INSTRUCTIONS.len();
        (total, each)
    }

    /// What a model reads before its first call, instructions included: at most 3,777 bytes for the
    /// terminal tools and 7,432 for every tool listed by default (terminal, Textual, desktop). Issue
    /// 22 set 4 KB and 9 KB; these are tighter because `benches/agent_cost.py` must find every tool
    /// (definitions and work) cheaper than terminalcp's one tool, and the terminal tools cheaper than
    /// tmux. Issue 29 put `until`'s fields in send's schema (+157 bytes, other descriptions trimmed);
    /// issue 30 added snapshot's `ocr` (+64); issue 32 spawn's `images` (+65: a program's pictures
    /// are shown only when asked for).
    /// A description or parameter that grows past them fails here: trim first. Sizes are printed
    /// for BENCHMARKS.md (`cargo test tools_fit -- --nocapture`).
    #[test]
    fn tools_fit_their_budgets() {
        let mut over = Vec::new();
        for (profile, budget) in [(Some("terminal"), 3777), (None, 7490)] {
            let (total, each) = model_bytes(profile);
            let name = profile.unwrap_or("(default)");
            println!("--tools {name}: {total} bytes {each:?}");
            if total > budget {
                over.push(format!("--tools {name}: {total} bytes, over {budget}"));
            }
        }
        assert!(over.is_empty(), "{over:?}");
        // The classic tools keep their full descriptions; they are listed only on request.
        let (classic, _) = model_bytes(Some("classic"));
        println!("--tools classic: {classic} bytes");
        assert!(classic < 32_000, "--tools classic: {classic} bytes");
    }

    #[test]
    fn progress_messages_say_what_is_awaited() {
        let said = |op: &str, params: Value| progress_message(ops::find(op).unwrap(), &params);
        let params = json!({"sid": "sh", "pattern": "^42$"});
        assert_eq!(said("wait_for", params), "waiting for /^42$/ on sh");
        assert_eq!(said("list", json!({})), "list");
        let step = json!({"sid": "py", "keys": ["6*7", "Enter"], "until": {"regex": "^42$"}});
        assert_eq!(said("send", step), "waiting for /^42$/ on py");
        let run = json!({"sid": "sh", "command": "make"});
        assert_eq!(said("run", run), "running \"make\" on sh");
        let ready = json!({"sid": "sh", "marker": "\\$ $"});
        assert_eq!(
            said("wait_ready", ready),
            "waiting for sh to be ready (/\\$ $/)"
        );
        assert_eq!(said("close", json!({"sid": "sh"})), "close on sh");
    }
}
