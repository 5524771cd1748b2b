//! The MCP server talks to the daemon through the async client. A daemon that stops answering
//! (SIGSTOP) must end its calls with a clear error after a bound, while a wait that legitimately runs
//! longer than that bound, silent, on a live daemon still runs to its own timeout.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{Daemon, Stopped};
use serde_json::{json, Value};

#[test]
fn mcp_calls_end_with_daemon_unavailable_when_the_daemon_is_stopped_and_long_waits_do_not() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "c", "--", "cat"]);
    let mut mcp = d
        .command(&["mcp"])
        .env("SCREENPILOT_ANSWER_GRACE_MS", "500")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start screenpilot mcp");
    let mut stdin = mcp.stdin.take().expect("stdin");
    let stdout = mcp.stdout.take().expect("stdout");
    let (lines_tx, lines) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(value) = serde_json::from_str(&line) {
                if lines_tx.send(value).is_err() {
                    return;
                }
            }
        }
    });
    let answer = |id: i64| -> Value {
        loop {
            let line = lines
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|e| panic!("no answer {id} from the MCP server: {e}"));
            if line["id"] == id {
                return line;
            }
        }
    };
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").expect("write to the MCP server");
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "stopped-daemon-test", "version": "0"}}}),
    );
    answer(1);
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let call = |id: i64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}})
    };

    // A live daemon, silent for four times the grace during a wait: the wait runs to its timeout.
    send(call(
        2,
        "send",
        json!({"sid": "c", "until": {"regex": "^never$"}, "timeout_ms": 2000}),
    ));
    let waited = answer(2);
    let outcome = &waited["result"]["structuredContent"]["until"];
    assert_eq!(
        outcome["timed_out"], true,
        "a live daemon was given up during a long wait: {waited}"
    );
    assert!(
        outcome["elapsed_ms"]
            .as_f64()
            .is_some_and(|ms| ms >= 1900.0),
        "the wait did not run to its timeout: {waited}"
    );

    // A stopped daemon: the call ends with a clear error after the grace and the status check.
    let pid = d.daemon_pid();
    let stopped = Stopped::stop(pid);
    let asked = Instant::now();
    send(call(3, "list", json!({})));
    let given_up = answer(3).to_string();
    let took = asked.elapsed();
    assert!(given_up.contains("\"isError\":true"), "{given_up}");
    assert!(given_up.contains("daemon_unavailable"), "{given_up}");
    assert!(
        given_up.contains("did not answer a status check"),
        "{given_up}"
    );
    assert!(
        took < Duration::from_secs(15),
        "gave up only after {took:?}"
    );

    // Resumed, the daemon is used again (on a fresh connection).
    drop(stopped);
    send(call(4, "list", json!({})));
    let listed = answer(4).to_string();
    assert!(listed.contains("\"isError\":false"), "{listed}");
    drop(stdin);
    let _ = mcp.wait();
}
