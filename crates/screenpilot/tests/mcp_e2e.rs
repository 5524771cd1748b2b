//! The MCP server end to end, driven by a client nobody here wrote: the official MCP Python SDK runs
//! `tests/mcp_client.py` against the real binary, over stdio and over loopback HTTP. Each test has its
//! own daemon directory, and stops its daemon whatever happens.
//!
//! Needs the venv from `scripts/test.sh` (Python with the `mcp` package); `SCREENPILOT_TEST_PYTHON`
//! names another interpreter.

mod common;

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
            .args(["daemon", "stop"])
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
    // outputSchema (Draft 2020-12): a new tool with no validated call fails here.
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
