//! The stdio face of the MCP server: one JSON-RPC message per line, guarded before rmcp sees it.
//!
//! rmcp skips a line it cannot parse and has no bound on a line's length, so a client that sent one
//! would wait forever for an answer. Every line is checked here first: one too long, one that is not
//! JSON, or a `tools/call` whose `arguments` is not an object gets its JSON-RPC error at once, and
//! only good lines reach rmcp. Its answers and ours share stdout one whole line at a time.

use serde_json::{json, Value};
use tokio::io::DuplexStream;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// The longest line taken from an MCP client on stdio, in bytes (its newline aside): half of rmcp's
/// own bound (which drops a longer line unanswered) and of the daemon's request bound, so every
/// line taken is answered.
pub const MAX_LINE_BYTES: usize = 8 * 1024 * 1024;

/// The streams rmcp serves on, and the task that writes stdout (await it to flush the last answer).
pub struct Guarded {
    pub input: DuplexStream,
    pub output: DuplexStream,
    pub pump: JoinHandle<()>,
    /// The task reading stdin; abort it once rmcp is done, so that `pump` ends too.
    pub checker: JoinHandle<()>,
}

/// Put the guard between the client's `stdin`/`stdout` and rmcp.
pub fn guard(
    stdin: impl AsyncRead + Unpin + Send + 'static,
    stdout: impl AsyncWrite + Unpin + Send + 'static,
) -> Guarded {
    let (to_rmcp, input) = tokio::io::duplex(64 * 1024);
    let (output, from_rmcp) = tokio::io::duplex(64 * 1024);
    let (errors_tx, errors_rx) = mpsc::unbounded_channel();
    let checker = tokio::spawn(check_lines(stdin, to_rmcp, errors_tx));
    let pump = tokio::spawn(write_lines(stdout, from_rmcp, errors_rx));
    Guarded {
        input,
        output,
        pump,
        checker,
    }
}

/// Read the client's lines; pass good ones to rmcp, answer bad ones through `errors`.
async fn check_lines(
    stdin: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    errors: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut reader = BufReader::new(stdin);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)
            .await;
        match read {
            Ok(0) | Err(_) => break,
            Ok(n) if n - usize::from(line.last() == Some(&b'\n')) > MAX_LINE_BYTES => {
                let _ = errors.send(error_line(
                    Value::Null,
                    -32600,
                    format!("request line longer than {MAX_LINE_BYTES} bytes; it was skipped"),
                ));
                if line.last() != Some(&b'\n') && !skip_rest_of_line(&mut reader).await {
                    break;
                }
                continue;
            }
            Ok(_) => {}
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match check(&line) {
            Ok(()) => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
            Err(answer) => {
                let _ = errors.send(answer);
            }
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// Discard up to the next newline; false at end of input.
async fn skip_rest_of_line(reader: &mut BufReader<impl AsyncRead + Unpin>) -> bool {
    loop {
        let chunk = match reader.fill_buf().await {
            Ok([]) | Err(_) => return false,
            Ok(chunk) => chunk,
        };
        match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return true;
            }
            None => {
                let len = chunk.len();
                reader.consume(len);
            }
        }
    }
}

/// `Ok` for a line rmcp should see; otherwise the error line to answer it with.
fn check(line: &[u8]) -> Result<(), Vec<u8>> {
    let message: Value = serde_json::from_slice(line)
        .map_err(|e| error_line(Value::Null, -32700, format!("parse error: {e}")))?;
    if message.get("method").and_then(Value::as_str) != Some("tools/call") {
        return Ok(());
    }
    match message.pointer("/params/arguments") {
        None | Some(Value::Object(_)) | Some(Value::Null) => Ok(()),
        Some(other) => {
            let kind = match other {
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Bool(_) => "a boolean",
                _ => "a number",
            };
            Err(error_line(
                message.get("id").cloned().unwrap_or(Value::Null),
                -32602,
                format!("params.arguments: must be an object of the tool's parameters, not {kind}"),
            ))
        }
    }
}

fn error_line(id: Value, code: i64, message: String) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        .to_string()
        .into_bytes();
    line.push(b'\n');
    line
}

/// Write rmcp's lines and our error lines to stdout, each whole, until both are done.
async fn write_lines(
    mut stdout: impl AsyncWrite + Unpin,
    from_rmcp: DuplexStream,
    mut errors: mpsc::UnboundedReceiver<Vec<u8>>,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut rmcp_open = true;
    let mut errors_open = true;
    // Kept across iterations: a read interrupted by an error line keeps what it had read.
    let mut partial = Vec::new();
    while rmcp_open || errors_open {
        let next = tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut partial), if rmcp_open => match read {
                Ok(0) | Err(_) => { rmcp_open = false; None }
                Ok(_) => Some(std::mem::take(&mut partial)),
            },
            error = errors.recv(), if errors_open => match error {
                None => { errors_open = false; None }
                Some(line) => Some(line),
            },
        };
        if let Some(line) = next {
            if stdout.write_all(&line).await.is_err() || stdout.flush().await.is_err() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_get_errors_naming_what_is_wrong() {
        let parse = check(b"{not json")
            .err()
            .map(|l| String::from_utf8_lossy(&l).into_owned());
        assert!(parse.is_some_and(|l| l.contains("-32700")));
        let args = check(br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"list","arguments":"{}"}}"#)
            .err()
            .map(|l| String::from_utf8_lossy(&l).into_owned());
        assert!(args.is_some_and(|l| l.contains("params.arguments") && l.contains("\"id\":4")));
        assert!(check(br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list","arguments":{}}}"#).is_ok());
    }
}
