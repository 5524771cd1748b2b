//! The MCP server (`screenpilot mcp`): every operation in [`crate::ops::OPERATIONS`] as a tool, over stdio
//! or loopback streamable HTTP.
//!
//! It is a thin client of the daemon, like the CLI: a tool call becomes one daemon request, so sessions
//! an agent opens are visible to `screenpilot list`, and survive the MCP client restarting. Nothing here
//! knows what a tool does beyond its name and schema; [`present`] shapes the answers.

mod http;
pub mod output_schemas;
pub mod present;
pub mod profiles;
mod server;
mod stdio;
pub mod tools;

pub use server::Screenpilot;

use std::path::Path;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use rmcp::ServiceExt;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::fleet::Fleet;
use crate::ops::{ErrorCode, OpError};

/// Serve MCP on stdio, or on loopback HTTP when `http` is `IP:PORT`. Returns when the client goes away
/// (stdio) or on SIGINT/SIGTERM (HTTP). `tools` picks profiles ([`profiles`]); `None` serves all.
/// `output_schemas` picks summaries or exact schemas as each tool's `outputSchema`.
pub async fn run(
    fleet: Fleet,
    http: Option<&str>,
    token_file: Option<&Path>,
    tools: Option<&str>,
    output_schemas: output_schemas::OutputSchemas,
) -> Result<(), OpError> {
    let selection = profiles::Selection {
        output_schemas,
        ..profiles::select(tools)?
    };
    let server = Screenpilot::serving_on(fleet, selection);
    let outcome = match http {
        Some(addr) => http::serve(server.clone(), addr, token_file).await,
        None => serve_stdio(server.clone()).await,
    };
    server.shared.drain().await;
    outcome
}

/// How long the last answers may take to reach stdout once the service has ended.
const FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_millis(1000);

async fn serve_stdio(server: Screenpilot) -> Result<(), OpError> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let guarded = stdio::guard(stdin, stdout);
    // The client closing our stdin means it is gone: stop its running calls at once rather than let
    // rmcp wait for them to finish (a wait could last an hour; the client kills us after 2 s).
    let stdin = EofSignal {
        inner: guarded.input,
        eof: server.shared.shutdown.clone(),
    };
    let served = serve_on(server, stdin, guarded.output).await;
    guarded.checker.abort();
    // Every answer, ours or rmcp's, reaches stdout before we exit: they are in the pipe by now, so
    // the pump needs moments. It is bounded because rmcp can hold its end of the pipe open for its
    // 5 s linger after the service ended, and the pump ends only when that end closes; a client that
    // closed stdin would see us take 5 s to exit (and kill us after about 2).
    let _ = tokio::time::timeout(FLUSH_LIMIT, guarded.pump).await;
    served
}

async fn serve_on(
    server: Screenpilot,
    input: EofSignal<tokio::io::DuplexStream>,
    output: tokio::io::DuplexStream,
) -> Result<(), OpError> {
    let running = server.serve((input, output)).await.map_err(|e| {
        OpError::new(
            ErrorCode::McpFailed,
            format!("MCP handshake on stdio failed: {e}"),
        )
    })?;
    running.waiting().await.map_err(|e| {
        OpError::new(
            ErrorCode::McpFailed,
            format!("MCP stdio service failed: {e}"),
        )
    })?;
    Ok(())
}

/// A reader that cancels `eof` when it reaches end of file.
struct EofSignal<R> {
    inner: R,
    eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(polled, Poll::Ready(Ok(())))
            && buf.filled().len() == before
            && buf.remaining() > 0
        {
            self.eof.cancel();
        }
        polled
    }
}
