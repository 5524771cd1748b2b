//! The MCP server end to end, driven by a client nobody here wrote: the official MCP Python SDK runs
//! `tests/mcp_client.py` against the real binary, over stdio and over loopback HTTP. Each test has its
//! own daemon directory, and stops its daemon whatever happens.
//!
//! Needs the venv from `scripts/test.sh` (Python with the `mcp` package); `SCREENPILOT_TEST_PYTHON`
//! names another interpreter.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

const BINARY: &str = env!("CARGO_BIN_EXE_screenpilot");

/// A private daemon directory; on drop, its daemon is stopped and the directory removed.
struct DaemonDir {
    path: PathBuf,
}

impl DaemonDir {
    fn new(name: &str) -> DaemonDir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path =
            std::env::temp_dir().join(format!("sp-mcp-{name}-{}-{nanos}", std::process::id()));
        if let Err(e) = std::fs::create_dir_all(&path) {
            panic!("cannot create {}: {e}", path.display());
        }
        DaemonDir { path }
    }
}

impl Drop for DaemonDir {
    fn drop(&mut self) {
        let stopped = Command::new(BINARY)
            .args(["daemon", "stop", "--end-sessions"])
            .env("SCREENPILOT_DIR", &self.path)
            .output();
        if let Err(e) = stopped {
            eprintln!(
                "could not stop the test daemon in {}: {e}",
                self.path.display()
            );
        }
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// The venv's Python, which must have the `mcp` SDK: a missing client is a failure, never a skip.
fn python() -> PathBuf {
    let python = common::venv_python();
    let has_sdk = Command::new(&python)
        .args([
            "-c",
            "import mcp, mcp.client.stdio, mcp.client.streamable_http",
        ])
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false);
    assert!(
        has_sdk,
        "{} cannot import the MCP Python SDK; run scripts/test.sh (it creates .venv with mcp), \
         or set SCREENPILOT_TEST_PYTHON to a Python that has it",
        python.display()
    );
    python
}

/// Run the SDK client script over `transport`; returns its JSON summary.
fn run_client(transport: &str) -> serde_json::Value {
    let python = python();
    let dir = DaemonDir::new(transport);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_client.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(BINARY)
        .args(["--transport", transport])
        .env("SCREENPILOT_DIR", &dir.path)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", python.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the MCP client failed over {transport} ({})\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    let summary: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("the client printed no JSON summary ({e}):\n{stdout}"));
    println!("{summary:#}");
    summary
}

/// The strings of a JSON array, sorted.
fn sorted_strings(value: &serde_json::Value) -> Vec<&str> {
    let mut strings: Vec<&str> = value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str())
        .collect();
    strings.sort_unstable();
    strings
}

#[test]
fn mcp_over_stdio_with_the_python_sdk() {
    let summary = run_client("stdio");
    assert_eq!(summary["ok"], true);
    // The 17 terminal tools at least; other backends add theirs.
    assert!(summary["stdio"]["tools"].as_u64() >= Some(17));
    // Every tool tools/list names was called, and its result's structuredContent checked against its
    // outputSchema (Draft 2020-12), the compact one listed by default and the exact one of
    // `--output-schemas full`: a new tool with no validated call fails here.
    let listed = sorted_strings(&summary["stdio"]["listed_tools"]);
    let validated = sorted_strings(&summary["validated_outputs"]);
    assert_eq!(
        summary["stdio"]["tools"].as_u64(),
        Some(listed.len() as u64),
        "listed_tools is not the whole tools/list"
    );
    assert_eq!(
        validated, listed,
        "the tools validated are not the tools listed"
    );
    assert_eq!(
        sorted_strings(&summary["validated_full_outputs"]),
        listed,
        "the tools validated against their full outputSchema are not the tools listed"
    );
}

/// A program waits for a password: a client that takes URL-mode elicitation is asked to open the
/// watch page at that session (with control); the password typed there reaches the program and no
/// answer the model read holds it (checked in the client, `run_stdio_secret`).
#[test]
fn a_password_prompt_asks_the_client_to_open_the_page_for_the_person() {
    let summary = run_client("secret");
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["secret"]["elicitation"]["mode"], "url");
    assert!(
        summary["secret"]["elicitation"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("password")),
        "{summary}"
    );
}

#[test]
fn mcp_over_http_with_the_python_sdk() {
    let summary = run_client("http");
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["http"]["no_token_status"], 401);
    assert_eq!(summary["http"]["wrong_token_status"], 401);
}

/// The client closing stdin while a long wait runs: the server cancels the daemon request and exits at
/// once (MCP clients kill a server that lingers). Raw JSON-RPC lines, no SDK needed.
#[test]
fn closing_stdin_stops_running_calls_and_exits() {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::process::Stdio;
    use std::sync::mpsc;
    use std::time::{Duration, Instant};

    let dir = DaemonDir::new("eof");
    let mut server = Command::new(BINARY)
        .arg("mcp")
        .env("SCREENPILOT_DIR", &dir.path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {BINARY} mcp: {e}"));
    let (Some(mut stdin), Some(stdout), Some(mut stderr)) = (
        server.stdin.take(),
        server.stdout.take(),
        server.stderr.take(),
    ) else {
        panic!("no pipes to the MCP server");
    };
    // Lines from the server arrive on a channel, so every wait for one has a deadline.
    let (lines_tx, lines) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if lines_tx.send(line).is_err() {
                return;
            }
        }
    });
    let next_line_with = |needle: &str| -> String {
        loop {
            match lines.recv_timeout(Duration::from_secs(30)) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => continue,
                Err(e) => panic!("no line with {needle:?} from the MCP server: {e}"),
            }
        }
    };
    let mut send = |message: serde_json::Value| {
        let sent = writeln!(stdin, "{message}");
        sent.unwrap_or_else(|e| panic!("cannot write to the MCP server: {e}"));
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "eof-test", "version": "0"}}}),
    );
    next_line_with(r#""id":1"#);
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "spawn", "arguments": {"cmd": "cat", "sid": "eof"}}}),
    );
    let spawned = next_line_with(r#""id":2"#);
    assert!(
        spawned.contains(r#""isError":false"#),
        "spawn failed: {spawned}"
    );
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "send", "arguments": {"sid": "eof", "until": {"regex": "^never$"}, "timeout_ms": 600000},
        "_meta": {"progressToken": "wait"}}}),
    );
    // The first progress notification says the wait is running.
    next_line_with("notifications/progress");

    let closed_at = Instant::now();
    drop(stdin);
    let mut log = String::new();
    let _ = stderr.read_to_string(&mut log); // ends when the server exits
    let status = server.wait();
    let took = closed_at.elapsed();
    assert!(
        status.as_ref().is_ok_and(|s| s.success()),
        "server exit: {status:?}\n{log}"
    );
    // Without the fix rmcp lingers 5 s for running calls; 4 s leaves a loaded machine room while still
    // telling the two apart (clients kill a server that lingers past about 2 s, so this is a floor).
    assert!(
        took < Duration::from_secs(4),
        "the server took {took:?} to exit after stdin closed"
    );
    assert!(
        log.contains("send stopped: the MCP server is shutting down; daemon request"),
        "no record that the running wait was cancelled in the daemon:\n{log}"
    );
}

/// How a client sends its body.
#[derive(Clone, Copy, PartialEq)]
enum Sending {
    /// From another thread while the answer is read, so a server that answers early is seen to.
    WhileReading,
    /// All of it before reading anything (Python's http.client and requests do this); it must all
    /// go through.
    ThenReading,
}

/// One raw HTTP/1.1 exchange with `mcp --http`: `head` (request line and headers, without the blank
/// line that ends them), then `body`. Returns the status code and the answer's body.
fn exchange(addr: &str, head: &str, body: Vec<u8>, sending: Sending) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr)
        .unwrap_or_else(|e| panic!("cannot connect to {addr}: {e}"));
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(60)))
        .unwrap_or_else(|e| panic!("read timeout: {e}"));
    let request = format!("{head}\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream
        .write_all(request.as_bytes())
        .unwrap_or_else(|e| panic!("cannot send the request head: {e}"));
    let mut writer = stream
        .try_clone()
        .unwrap_or_else(|e| panic!("clone the stream: {e}"));
    if sending == Sending::ThenReading {
        writer
            .write_all(&body)
            .unwrap_or_else(|e| panic!("the server cut the body short: {e}"));
    }
    // The server may stop reading once it has answered: a failed write here is its business.
    let sender = std::thread::spawn(move || {
        sending == Sending::ThenReading || writer.write_all(&body).is_ok()
    });
    // Read the answer as far as its Content-Length, or to the end: the server may read what it
    // refused for a while after answering, and the answer must not wait for that.
    let mut answer = Vec::new();
    let mut buf = [0u8; 64 << 10];
    let complete = |answer: &[u8]| -> bool {
        let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
            return false;
        };
        let head = String::from_utf8_lossy(&answer[..end]).to_ascii_lowercase();
        head.lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .is_some_and(|n| answer.len() >= end + 4 + n)
    };
    while !complete(&answer) {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
        }
    }
    drop(stream);
    let _ = sender.join();
    let text = String::from_utf8_lossy(&answer).into_owned();
    let code = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP answer: {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (code, body)
}

/// `body` as HTTP/1.1 chunks of `size` bytes, with the last (empty) chunk.
fn chunked(body: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + body.len() / size * 16 + 8);
    for chunk in body.chunks(size) {
        out.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        out.extend_from_slice(chunk);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\n\r\n");
    out
}

/// A body over 16 MiB (the daemon's request-line limit) gets 413 saying the limit, from its
/// Content-Length before any of it is read, or as soon as a chunked one passes it; a client that
/// sends a whole oversize body before reading gets the 413 too, not a reset; calls within the limit
/// (also past rmcp's own 4 MiB default) still work. Raw HTTP against the real server.
#[test]
fn a_body_over_the_limit_gets_413_saying_why() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    let dir = DaemonDir::new("http-limit");
    let token_file = dir.path.join("token");
    std::fs::write(&token_file, "sekrit\n").unwrap_or_else(|e| panic!("write the token: {e}"));
    let mut server = Command::new(BINARY)
        .args(["mcp", "--http", "127.0.0.1:0", "--token-file"])
        .arg(&token_file)
        .env("SCREENPILOT_DIR", &dir.path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {BINARY} mcp --http: {e}"));
    struct KillOnDrop(std::process::Child);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stderr = server.stderr.take().expect("stderr pipe");
    let _server = KillOnDrop(server);
    // The address, from the line the server prints once it listens.
    let addr = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| {
            line.split_once("listening on http://")
                .and_then(|(_, rest)| rest.strip_suffix("/mcp"))
                .map(str::to_owned)
        })
        .expect("the server says where it listens");
    let headers = "Authorization: Bearer sekrit\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream";
    let limit_said = "over the limit of 16 MiB (16777216 bytes)";

    // 100 MB announced, nothing sent: the answer comes anyway.
    let started = Instant::now();
    let (code, body) = exchange(
        &addr,
        &format!("POST /mcp HTTP/1.1\r\n{headers}\r\nContent-Length: 100000000"),
        Vec::new(),
        Sending::WhileReading,
    );
    assert_eq!(code, 413, "{body}");
    assert!(body.contains(limit_said), "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the 413 took {:?}",
        started.elapsed()
    );

    // The same 100 MB sent whole before the answer is read (as Python's http.client does).
    let (code, body) = exchange(
        &addr,
        &format!("POST /mcp HTTP/1.1\r\n{headers}\r\nContent-Length: 100000000"),
        vec![b' '; 100_000_000],
        Sending::ThenReading,
    );
    assert_eq!(code, 413, "{body}");

    // Chunked, 17 MiB of 1 MiB chunks.
    let (code, body) = exchange(
        &addr,
        &format!("POST /mcp HTTP/1.1\r\n{headers}\r\nTransfer-Encoding: chunked"),
        chunked(&vec![b' '; 17 << 20], 1 << 20),
        Sending::WhileReading,
    );
    assert_eq!(code, 413, "{body}");
    assert!(body.contains(limit_said), "{body}");

    // Within the limit: initialize, with a 5 MiB client name (over rmcp's default of 4 MiB), sent
    // with a length and chunked.
    let initialize =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "x".repeat(5 << 20), "version": "0"}}})
        .to_string()
        .into_bytes();
    let (code, body) = exchange(
        &addr,
        &format!(
            "POST /mcp HTTP/1.1\r\n{headers}\r\nContent-Length: {}",
            initialize.len()
        ),
        initialize.clone(),
        Sending::WhileReading,
    );
    assert_eq!(code, 200, "{}", &body[..body.len().min(500)]);
    assert!(
        body.contains(r#""serverInfo":{"name":"screenpilot""#),
        "{body}"
    );
    let (code, body) = exchange(
        &addr,
        &format!("POST /mcp HTTP/1.1\r\n{headers}\r\nTransfer-Encoding: chunked"),
        chunked(&initialize, 64 << 10),
        Sending::WhileReading,
    );
    assert_eq!(code, 200, "{}", &body[..body.len().min(500)]);
    assert!(
        body.contains(r#""serverInfo":{"name":"screenpilot""#),
        "{body}"
    );

    // Without the token, nothing of the body is read: 401 whatever its size.
    let (code, _) = exchange(
        &addr,
        "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100000000",
        Vec::new(),
        Sending::WhileReading,
    );
    assert_eq!(code, 401);
}
