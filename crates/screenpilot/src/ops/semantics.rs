//! The in-process tier: what the operations mean, tested through [`super::execute`] on a context
//! of the test's own, with real programs on real ptys but no daemon, socket or CLI in between (the
//! end-to-end tests keep those contracts). It runs with the crate's unit tests, in seconds:
//! `cargo test -p screenpilot --lib`.

use serde_json::{json, Value};

use screenpilot_session::{Limits, Registry};

use super::{execute, prepare, Caller, Context, OpError, Progress};

/// A context of the test's own; [`Here::end`] ends its sessions.
struct Here {
    ctx: Context,
}

impl Here {
    fn new() -> Here {
        Here {
            ctx: Context::new(Registry::new(Limits::default())),
        }
    }

    /// Call operation `op` as a tool call from this process.
    async fn call(&self, op: &str, params: Value) -> Result<Value, OpError> {
        let params = prepare(op, params, &Caller::this_process())?;
        execute(&self.ctx, op, params, &Progress::default()).await
    }

    /// End every session it started.
    async fn end(self) {
        self.ctx.registry.close_all(false).await;
    }

    async fn ok(&self, op: &str, params: Value) -> Value {
        self.call(op, params.clone())
            .await
            .unwrap_or_else(|e| panic!("{op} {params}: {e:?}"))
    }
}

fn text(answer: &Value) -> &str {
    answer["text"].as_str().unwrap_or_default()
}

/// The REPL trap: after input, a prompt that was on the screen before is no answer; the program's
/// next prompt is. Without input, a wait keeps its plain meaning.
#[tokio::test]
async fn after_input_only_a_new_prompt_holds() {
    let here = Here::new();
    here.ok(
        "spawn",
        json!({"sid": "py", "argv": ["python3", "-q"], "until": {"input": true}}),
    )
    .await;
    let answer = here
        .ok(
            "send",
            json!({"sid": "py", "text": "import time; time.sleep(0.3); print('do' + 'ne')\r",
                "until": {"regex": "^>>> $"}, "screen": "full"}),
        )
        .await;
    assert_eq!(answer["until"]["held"], "regex", "{answer}");
    assert!(
        answer["until"]["elapsed_ms"].as_f64() >= Some(300.0),
        "held before the sleep ended: {answer}"
    );
    assert!(text(&answer).contains("\ndone\n>>> "), "{answer}");
    // No output comes after this: a wait that holds at all held on the prompt already shown.
    let answer = here
        .ok(
            "wait",
            json!({"sid": "py", "until": {"regex": "^>>> $"}, "timeout_ms": 5000}),
        )
        .await;
    assert_eq!(answer["until"]["held"], "regex", "{answer}");
    here.end().await;
}

/// A program's end holds `exit`, and its status is answered; a regex that never comes times out
/// without an error.
#[tokio::test]
async fn exit_holds_with_its_status_and_a_timeout_is_no_error() {
    let here = Here::new();
    here.ok(
        "spawn",
        json!({"sid": "sh", "argv": ["sh", "-c", "read x; exit 3"]}),
    )
    .await;
    let answer = here
        .ok(
            "send",
            json!({"sid": "sh", "keys": ["Enter"], "until": {"exit": true}, "timeout_ms": 10000}),
        )
        .await;
    assert_eq!(answer["until"]["held"], "exit", "{answer}");
    let listed = here.ok("list", json!({})).await;
    let sh = &listed["sessions"][0];
    assert_eq!(
        (sh["alive"].clone(), sh["exit_code"].clone()),
        (json!(false), json!(3))
    );
    here.ok("spawn", json!({"sid": "cat", "argv": ["cat"]}))
        .await;
    let answer = here
        .ok(
            "send",
            json!({"sid": "cat", "text": "a\r", "until": {"regex": "never"}, "timeout_ms": 200}),
        )
        .await;
    assert_eq!(answer["until"]["timed_out"], true, "{answer}");
    assert_eq!(answer["ok"], true, "{answer}");
    here.end().await;
}

/// `quiet_ms` holds once output pauses that long after the input: after a burst, before what the
/// program prints seconds later.
#[tokio::test]
async fn quiet_holds_after_the_output_pauses() {
    let here = Here::new();
    here.ok(
        "spawn",
        json!({"sid": "sh", "argv": ["bash", "--norc", "--noprofile"]}),
    )
    .await;
    let answer = here
        .ok(
            "send",
            json!({"sid": "sh", "text": "printf 'tick%s\\n' 1 2 3; sleep 5; echo late\r",
                "until": {"quiet_ms": 400}, "timeout_ms": 20000, "screen": "full"}),
        )
        .await;
    assert_eq!(answer["until"]["held"], "quiet", "{answer}");
    let text = text(&answer);
    assert!(
        text.contains("tick3\n"),
        "quiet before the burst ended: {answer}"
    );
    assert!(
        !text.contains("\nlate"),
        "quiet waited past the pause: {answer}"
    );
    here.end().await;
}

/// A second look shows what changed since the reader's first, not the whole screen again.
#[tokio::test]
async fn a_reader_is_shown_what_changed_since_it_last_looked() {
    let here = Here::new();
    here.ok(
        "spawn",
        json!({"sid": "cat", "argv": ["cat"], "cols": 40, "rows": 8}),
    )
    .await;
    let first = here
        .ok(
            "send",
            json!({"sid": "cat", "text": "one\r", "until": {"regex": "^one$"}, "reader": "me"}),
        )
        .await;
    assert!(text(&first).contains("one"), "{first}");
    let second = here
        .ok(
            "send",
            json!({"sid": "cat", "text": "two\r", "until": {"regex": "^two$"}, "reader": "me"}),
        )
        .await;
    // Only the rows that changed (cat's echo and its output), and no whole screen.
    assert_eq!(
        second["delta"]["rows"],
        json!([[2, "two"], [3, "two"]]),
        "{second}"
    );
    assert!(second.get("text").is_none(), "{second}");
    here.end().await;
}

/// `list` shows what a session left running: a dev server started in the background, its pid and
/// the port it listens on; `close` ends it, and the port is free again.
#[tokio::test]
async fn list_shows_a_background_servers_port_and_close_frees_it() {
    let here = Here::new();
    here.ok(
        "spawn",
        json!({"sid": "web", "argv": ["bash", "--norc", "--noprofile"], "until": {"input": true}}),
    )
    .await;
    let answer = here
        .ok(
            "send",
            json!({"sid": "web", "text": "python3 -m http.server 0 --bind 127.0.0.1 &\r",
                "until": {"regex": "port \\d+"}, "timeout_ms": 20000}),
        )
        .await;
    let port: u16 = answer["until"]["match"]
        .as_str()
        .and_then(|m| m.strip_prefix("port "))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {answer}"));
    let listed = here.ok("list", json!({})).await;
    let web = &listed["sessions"][0]["running"];
    let server = web["listening"]
        .as_array()
        .and_then(|l| l.iter().find(|l| l["port"] == port))
        .unwrap_or_else(|| panic!("port {port} not listed: {listed}"));
    assert_eq!(
        (server["proto"].clone(), server["address"].clone()),
        (json!("tcp"), json!("127.0.0.1"))
    );
    let pid = server["pid"].clone();
    let processes = web["processes"].as_array().cloned().unwrap_or_default();
    assert!(
        processes.iter().any(|p| p["pid"] == pid
            && p["command"]
                .as_str()
                .is_some_and(|c| c.contains("http.server"))),
        "the server's process is listed: {listed}"
    );
    assert!(
        processes[0]["command"]
            .as_str()
            .is_some_and(|c| c.starts_with("bash")),
        "the program first: {listed}"
    );
    here.ok("close", json!({"sid": "web"})).await;
    let refused = std::net::TcpStream::connect(("127.0.0.1", port));
    assert!(refused.is_err(), "port {port} still served after close");
    here.end().await;
}
