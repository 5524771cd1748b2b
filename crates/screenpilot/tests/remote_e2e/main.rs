//! Sessions on other hosts (issue 25), end to end on hosts this test makes (see `lab.rs`): through
//! `ssh://` and through a command bridge (`nsenter` into a namespace, standing in for `docker exec
//! -i`), every kind of operation; a link cut mid-wait and restored; four hosts of fifty sessions at
//! once; bad hosts named within a bound. Every wait is an event: a screen a wait matched, a daemon's
//! count of running requests, a line the client printed, a process's exit.

use crate::common;
mod lab;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

use common::{fixture, venv_python, wait_for_process_exit, Daemon, LONG_MS};
use lab::Lab;

const BOUND: Duration = Duration::from_secs(120);

/// Every kind of operation through `host`: a program started in the host's own environment, keys,
/// a wait, snapshot, a screenshot written here, Textual steps streamed back, a desktop's computer
/// action, a person attaching, and a long wait cancelled by Ctrl-C.
fn every_operation_through(lab: &Lab, k: usize, host: &str) {
    let ms = LONG_MS.to_string();
    // A variable of ours never reaches the host; the program starts in the host's home directory.
    let mut spawn = lab.cli(
        &[host],
        &[
            "--json",
            "spawn",
            "--sid",
            "sh",
            "--env",
            "PS1=$ ",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ],
    );
    spawn.env("LOCAL_SECRET", "s3cret");
    let out = lab.run(spawn, BOUND);
    assert!(out.status.success(), "spawn: {out:?}");
    let echoed = lab.ok(
        host,
        &[
            "line",
            "sh",
            "echo \"[${LOCAL_SECRET:-unset}] $(pwd)\"",
            "--until",
            r"^\[",
            "--until-timeout-ms",
            &ms,
        ],
    );
    let text = echoed["text"].as_str().unwrap_or_default();
    let here = lab.here().display().to_string();
    assert!(text.contains("[unset] /"), "{echoed}");
    assert!(
        !text.contains(&here),
        "the host ran the program in our directory: {text}"
    );

    // A secret by reference is read on our side (the variable is ours alone) and typed there.
    let check =
        "import getpass; print('pw-ok' if getpass.getpass('pw: ') == 'far' + 'pw9' else 'pw-bad')";
    lab.ok(
        host,
        &[
            "spawn",
            "--sid",
            "pw",
            "--until-input",
            "--",
            "python3",
            "-c",
            check,
        ],
    );
    let mut typed = lab.cli(
        &[host],
        &["--json", "secret", "pw", "--env", "PW_HERE", "--until-exit"],
    );
    typed.env("PW_HERE", "farpw9");
    let out = lab.run(typed, BOUND);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && said.contains("pw-ok"),
        "secret: {out:?}"
    );
    assert!(!said.contains("farpw9"), "{said}");
    lab.ok(host, &["close", "pw"]);

    // Keys, and the wait that sees them.
    lab.ok(host, &["type", "sh", "echo typed-$((6*7))"]);
    let keyed = lab.ok(
        host,
        &[
            "keys",
            "sh",
            "Enter",
            "--until",
            "^typed-42$",
            "--until-timeout-ms",
            &ms,
        ],
    );
    assert!(keyed["until"]["held"].is_string(), "{keyed}");
    let snap = lab.ok(host, &["snapshot", "sh"]);
    assert!(
        snap["text"]
            .as_str()
            .unwrap_or_default()
            .contains("typed-42"),
        "{snap}"
    );

    // A screenshot is written where the client runs.
    let shot = lab.ok(host, &["screenshot", "sh", "-o", "shot.png"]);
    let png = std::fs::read(lab.here().join("shot.png")).unwrap_or_else(|e| panic!("{shot}: {e}"));
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let info = decoder.read_info().expect("a PNG").info().clone();
    assert!(
        info.width > 200 && info.height > 100,
        "{}x{}",
        info.width,
        info.height
    );

    // Textual: each action's screen streams back over the link as it happens.
    let actions = json!([{"click": "#inc"}, {"click": "#inc"}]).to_string();
    let python = venv_python().display().to_string();
    let app = fixture("textual/counter.py");
    let out = lab.run(
        lab.cli(
            &[host],
            &[
                "--json",
                "textual",
                &app,
                "--python",
                &python,
                "--actions",
                &actions,
            ],
        ),
        BOUND,
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert!(out.status.success(), "textual: {out:?}");
    assert_eq!(
        lines.len(),
        3,
        "two streamed steps and the answer: {lines:?}"
    );
    assert_eq!(lines[0]["progress"]["step"], 1, "{lines:?}");
    assert!(
        lines[1]["progress"]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("count: 2"),
        "{lines:?}"
    );
    assert_eq!(lines[2]["ok"], true, "{lines:?}");

    // A desktop on the host, driven by a computer action.
    let started = lab.ok(
        host,
        &[
            "desktop", "start", "--sid", "d", "--size", "800x600", "--", "zenity", "--entry",
            "--title", "Remote", "--text", "Name",
        ],
    );
    assert_eq!(started["window"]["title"], "Remote", "{started}");
    let typed = lab.ok(
        host,
        &[
            "call",
            "computer",
            &json!({"sid": "d", "action": {"type": "type", "text": "over the link\n"}}).to_string(),
        ],
    );
    assert_eq!(typed["ok"], true);
    let ended = lab.ok(host, &["wait", "d", "--exit", "--timeout-ms", &ms]);
    assert_eq!(ended["exited"], true, "{ended}");
    let log = started["log"].as_str().expect("the program's log");
    let said = std::fs::read_to_string(log).expect("zenity's output");
    assert!(said.lines().any(|l| l == "over the link"), "{said:?}");
    lab.ok(host, &["close", "d"]);

    // A person attaches from a terminal here (a local session stands in for it) and types.
    let local = Daemon::new();
    let ssh = shell_words::join(lab.ssh_argv());
    let ssh_env = format!("SCREENPILOT_SSH={ssh}");
    let attach = format!(
        "{} --host {} attach sh",
        common::binary(),
        shell_words::quote(host)
    );
    local.sp_json(&[
        "spawn", "--sid", "viewer", "--size", "100x30", "--env", &ssh_env, "--", "sh", "-c",
        &attach,
    ]);
    local.wait_regex("viewer", r"typed-42");
    local.sp_json(&["line", "viewer", "echo via-attach"]);
    lab.ok(
        host,
        &["wait", "sh", "--regex", "^via-attach$", "--timeout-ms", &ms],
    );
    local.sp_json(&["keys", "viewer", "C-]", "d"]);
    local.wait_regex("viewer", "detached from sh");

    // Ctrl-C on a long wait stops it on the host too.
    let mut waiting = lab.cli(
        &[host],
        &[
            "wait",
            "sh",
            "--regex",
            "never-shows",
            "--timeout-ms",
            "600000",
        ],
    );
    waiting.stdout(Stdio::null()).stderr(Stdio::piped());
    let child = waiting.spawn().expect("a long wait");
    let until = |n: &str| {
        lab.at_host(
            k,
            &[
                "daemon",
                "status",
                "--until-running",
                n,
                "--timeout-ms",
                "60000",
            ],
        )
    };
    assert!(
        until("1").status.success(),
        "the wait never ran on the host"
    );
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("the wait ends");
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cancelled"),
        "{out:?}"
    );
    assert!(
        until("0").status.success(),
        "the host still runs the wait the client gave up"
    );
    let listed = lab.ok(host, &["list"]);
    assert_eq!(
        listed["sessions"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    lab.ok(host, &["close", "sh"]);
}

#[test]
fn an_ssh_host_runs_every_operation() {
    let lab = Lab::new(1, &[]);
    every_operation_through(&lab, 0, &lab.ssh_url(0));
}

#[test]
fn a_command_bridge_runs_every_operation() {
    let lab = Lab::new(1, &[]);
    every_operation_through(&lab, 0, &lab.exec_url(0));
}

/// The client's stderr, line by line, as it prints them.
fn lines_of(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let stderr = child.stderr.take().expect("piped stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    rx
}

/// Wait for a line containing `needle`; every line seen on the way.
fn expect_line(lines: &mpsc::Receiver<String>, needle: &str) -> Vec<String> {
    let mut seen = Vec::new();
    loop {
        match lines.recv_timeout(BOUND) {
            Ok(line) => {
                let found = line.contains(needle);
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(e) => panic!("no line with {needle:?} ({e}); seen: {seen:?}"),
        }
    }
}

/// The client's own ssh, which the link runs through.
fn kill_children(pid: u32) {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the client's threads");
    for task in tasks.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for child in children.split_whitespace() {
            if let Ok(child) = child.parse::<i32>() {
                // SAFETY: a signal to a process of the client we started.
                unsafe { libc::kill(child, libc::SIGKILL) };
            }
        }
    }
}

#[test]
fn a_cut_link_is_reported_and_the_pending_wait_is_answered_once_it_is_back() {
    let lab = Lab::new(1, &[]);
    let host = lab.ssh_url(0);
    lab.ok(
        &host,
        &[
            "spawn",
            "--sid",
            "sh",
            "--env",
            "PS1=$ ",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ],
    );
    let mut waiting = lab.cli(
        &[&host],
        &[
            "wait",
            "sh",
            "--regex",
            "^after-the-cut$",
            "--timeout-ms",
            "300000",
        ],
    );
    waiting.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = waiting.spawn().expect("a pending wait");
    let lines = lines_of(&mut child);
    assert!(lab
        .at_host(
            0,
            &[
                "daemon",
                "status",
                "--until-running",
                "1",
                "--timeout-ms",
                "60000"
            ]
        )
        .status
        .success());

    // The network goes, and the ssh carrying the link with it.
    lab.cut(0);
    kill_children(child.id());
    expect_line(&lines, "was lost");
    // Meanwhile, on the host (out of band), the awaited line shows.
    let typed = lab.at_host(0, &["line", "sh", "echo after-the-cut"]);
    assert!(typed.status.success(), "{typed:?}");
    lab.restore(0);
    expect_line(&lines, "is back");
    let pid = child.id() as i32;
    assert!(wait_for_process_exit(pid, BOUND), "the wait never ended");
    let out = child.wait_with_output().expect("the wait's output");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("after-the-cut"),
        "{out:?}"
    );
    // The session is as it was.
    let listed = lab.ok(&host, &["list"]);
    assert_eq!(listed["sessions"][0]["sid"], "sh", "{listed}");
    assert_eq!(listed["sessions"][0]["alive"], true, "{listed}");

    // A link that stays down past the reconnect window: the input's outcome is reported unknown, and
    // it is never sent again on its own.
    let mut sending = lab.cli(
        &[&host],
        &[
            "--json",
            "line",
            "sh",
            "echo once-$((40+2))",
            "--until",
            "^never$",
            "--until-timeout-ms",
            "300000",
        ],
    );
    sending
        .env("SCREENPILOT_RECONNECT_MS", "3000")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = sending.spawn().expect("an input with a wait");
    let lines = lines_of(&mut child);
    assert!(lab
        .at_host(
            0,
            &[
                "daemon",
                "status",
                "--until-running",
                "1",
                "--timeout-ms",
                "60000"
            ]
        )
        .status
        .success());
    lab.cut(0);
    kill_children(child.id());
    expect_line(&lines, "was lost");
    assert!(wait_for_process_exit(child.id() as i32, BOUND));
    let out = child.wait_with_output().expect("output");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(answer["error"]["code"], "link_lost", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("outcome is unknown"),
        "{answer}"
    );
    lab.restore(0);
    let shown = lab.at_host(0, &["snapshot", "sh"]);
    let screen = String::from_utf8_lossy(&shown.stdout);
    assert_eq!(
        screen.lines().filter(|l| *l == "once-42").count(),
        1,
        "the input ran once: {screen}"
    );
}

#[test]
fn four_hosts_of_fifty_sessions_are_listed_and_driven_at_once() {
    let lab = Lab::new(4, &[]);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        use screenpilot::fleet::Fleet;
        use screenpilot::host::Host;
        let hosts: Vec<Host> = (0..4)
            .map(|k| {
                Host::parse(&format!("h{}={}", k + 1, lab.ssh_url(k)))
                    .expect("a host")
                    .with_ssh(lab.ssh_argv())
            })
            .collect();
        let paths = screenpilot::Paths::in_dir(lab.dir.path().join("local"));
        let fleet = Fleet::new(paths, hosts);
        let names: Vec<String> = (1..=4)
            .flat_map(|k| (0..50).map(move |i| format!("h{k}/s{i}")))
            .collect();
        let spawns = names.iter().map(|sid| {
            fleet.call(
                "spawn",
                json!({"sid": sid, "argv": ["sh", "-c", "while read x; do echo \"got-$x\"; done"]}),
                None,
                |_| {},
            )
        });
        for (sid, spawned) in names.iter().zip(futures_join(spawns).await) {
            let spawned = spawned.unwrap_or_else(|e| panic!("{sid}: {e:?}"));
            assert_eq!(spawned["sid"], json!(sid));
        }
        let drives = names.iter().map(|sid| {
            let word = sid.replace('/', "-");
            fleet.call(
                "send",
                json!({"sid": sid, "text": format!("{word}\n"), "until": {"regex": format!("^got-{word}$")}, "timeout_ms": 120000}),
                None,
                |_| {},
            )
        });
        for (sid, driven) in names.iter().zip(futures_join(drives).await) {
            let driven = driven.unwrap_or_else(|e| panic!("{sid}: {e:?}"));
            assert!(driven["until"]["held"].is_string(), "{sid}: {driven}");
        }
        let listed = fleet
            .call("list", json!({}), None, |_| {})
            .await
            .expect("list");
        let sids: Vec<&str> = listed["sessions"]
            .as_array()
            .expect("sessions")
            .iter()
            .filter_map(|s| s["sid"].as_str())
            .collect();
        assert_eq!(sids.len(), 200, "{listed}");
        for name in &names {
            assert!(sids.contains(&name.as_str()), "{name} not listed");
        }
        assert!(listed.get("unreachable").is_none(), "{listed}");
    });
}

/// Every future at once, answers in order.
async fn futures_join<F: std::future::Future>(futures: impl Iterator<Item = F>) -> Vec<F::Output> {
    let handles: Vec<_> = futures.map(Box::pin).collect();
    let mut out = Vec::with_capacity(handles.len());
    let mut pending: Vec<_> = handles.into_iter().map(Some).collect();
    let mut results: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut left = false;
        for (i, slot) in pending.iter_mut().enumerate() {
            if let Some(f) = slot {
                match f.as_mut().poll(cx) {
                    std::task::Poll::Ready(v) => {
                        results[i] = Some(v);
                        *slot = None;
                    }
                    std::task::Poll::Pending => left = true,
                }
            }
        }
        if left {
            std::task::Poll::Pending
        } else {
            std::task::Poll::Ready(())
        }
    })
    .await;
    out.extend(results.into_iter().map(|r| r.expect("finished")));
    out
}

#[test]
fn bad_hosts_are_named_within_a_bound_and_harm_no_other() {
    let lab = Lab::new(1, &[]);
    let good = lab.ssh_url(0);
    lab.ok(&good, &["spawn", "--sid", "keep", "--", "cat"]);
    let refused = |host: &str, env: &[(&str, &str)]| -> Value {
        let mut cmd = lab.cli(&[host], &["--json", "list"]);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = lab.run(cmd, BOUND);
        assert_eq!(out.status.code(), Some(2), "{host}: {out:?}");
        let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        answer["error"].clone()
    };
    // Nothing at that address (its network is not reachable from the client).
    let e = refused("ssh://10.254.254.2", &[]);
    assert_eq!(e["code"], "host_unreachable", "{e}");
    assert_eq!(e["field"], "host", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("exited with status 255"),
        "{e}"
    );
    // A host without screenpilot.
    let e = refused(
        &good,
        &[("SCREENPILOT_REMOTE_BIN", "/nonexistent/screenpilot")],
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("status 127"),
        "{e}"
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("SCREENPILOT_REMOTE_BIN"),
        "{e}"
    );
    // A bridge command that exits at once, and one that speaks something else.
    let e = refused("exec:false", &[]);
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("false exited with status 1"),
        "{e}"
    );
    let e = refused("exec:echo hello", &[]);
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("did not answer in screenpilot's protocol"),
        "{e}"
    );
    // An ssh that would ask for a password (no key it may use): refused, never a prompt.
    let nokey = lab.dir.path().join("ssh_config_nokey");
    let config = std::fs::read_to_string(lab.dir.path().join("ssh_config"))
        .expect("config")
        .replace("IdentityFile", "#IdentityFile");
    std::fs::write(&nokey, config).expect("write");
    let ssh = lab
        .ssh_argv()
        .iter()
        .map(|a| {
            if a.ends_with("ssh_config") {
                nokey.display().to_string()
            } else {
                a.clone()
            }
        })
        .collect::<Vec<_>>();
    let e = refused(&good, &[("SCREENPILOT_SSH", &shell_words::join(ssh))]);
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("Permission denied"),
        "{e}"
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap_or_default()
            .contains("never asks for a password"),
        "{e}"
    );
    // A host that is not one.
    let e = refused("box", &[]);
    assert_eq!(e["field"], "host", "{e}");
    // Beside a failing host and a silent one, the good one answers, its session untouched; the
    // silent one is given up at its own bound.
    let mut both = lab.cli(
        &[&good, "bad=exec:false", "silent=exec:sleep 600"],
        &["--json", "list"],
    );
    both.env("SCREENPILOT_CONNECT_TIMEOUT_MS", "3000");
    let out = lab.run(both, BOUND);
    let listed: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        listed["sessions"][0]["sid"],
        format!("{}/keep", lab.hosts[0].addr),
        "{listed}"
    );
    assert_eq!(
        listed["sessions"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    let unreachable = listed["unreachable"].as_array().expect("unreachable hosts");
    let said = |name: &str| {
        unreachable
            .iter()
            .find(|u| u["host"] == name)
            .and_then(|u| u["error"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(
        said("bad").contains("false exited with status 1"),
        "{listed}"
    );
    assert!(
        said("silent").contains("no answer within 3000 ms"),
        "{listed}"
    );
}

#[test]
fn an_mcp_server_drives_two_hosts_for_a_real_mcp_client() {
    let lab = Lab::new(2, &[]);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_remote.py");
    let mut client = std::process::Command::new(venv_python());
    client
        .arg(&script)
        .arg(common::binary())
        .arg(lab.ssh_url(0))
        .arg(
            lab.exec_url(1)
                .split_once('=')
                .map(|(_, url)| url.to_owned())
                .unwrap_or_default(),
        )
        .env("SCREENPILOT_SSH", shell_words::join(lab.ssh_argv()))
        .env("SCREENPILOT_DIR", lab.dir.path().join("local"))
        .current_dir(lab.here());
    let out = lab.run(client, BOUND);
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert!(
        out.status.success() && summary["ok"] == true,
        "{summary}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(summary["after_cancel"], true, "{summary}");
    // The cancelled wait is stopped on its host, not left to run its ten minutes.
    let stopped = lab.at_host(
        1,
        &[
            "daemon",
            "status",
            "--until-running",
            "0",
            "--timeout-ms",
            "60000",
        ],
    );
    assert!(stopped.status.success(), "{stopped:?}");
}

#[test]
fn the_watch_page_of_a_host_is_reached_through_its_link() {
    let lab = Lab::new(1, &[]);
    let host = lab.ssh_url(0);
    lab.ok(
        &host,
        &[
            "spawn",
            "--sid",
            "sh",
            "--env",
            "PS1=$ ",
            "--",
            "bash",
            "--norc",
            "--noprofile",
        ],
    );
    let mut watching = lab.cli(&[&host], &["watch"]);
    watching.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = watching.spawn().expect("watch");
    let stdout = child.stdout.take().expect("stdout");
    let url = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .next()
        .expect("the local URL");
    let (addr, token) = url
        .trim_start_matches("http://")
        .split_once("/#token=")
        .map(|(a, t)| (a.to_owned(), t.to_owned()))
        .unwrap_or_else(|| panic!("not a watch URL: {url}"));
    assert!(addr.starts_with("127.0.0.1:"), "{url}");
    // The page, from the host, through a link made for this connection.
    let get = |headers: &str| -> String {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
        write!(stream, "GET / HTTP/1.1\r\nHost: {addr}\r\n{headers}\r\n").expect("send");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("read");
        response
    };
    let page = get("");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("xterm.js"), "{page}");
    // A page of another origin is still refused by the host's own check.
    let foreign = get("Origin: http://evil.example\r\n");
    assert!(foreign.starts_with("HTTP/1.1 403"), "{foreign}");
    // The live list of sessions, over a WebSocket through the same forwarding.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        use futures_util::StreamExt;
        use tokio_tungstenite::tungstenite::client::IntoClientRequest;
        use tokio_tungstenite::tungstenite::http::HeaderValue;
        let mut request = format!("ws://{addr}/ws/sessions")
            .into_client_request()
            .expect("request");
        let headers = request.headers_mut();
        headers.insert(
            "Sec-WebSocket-Protocol",
            HeaderValue::from_str(&format!("screenpilot.watch, bearer.{token}")).expect("header"),
        );
        headers.insert(
            "Origin",
            HeaderValue::from_str(&format!("http://{addr}")).expect("header"),
        );
        let (mut socket, _) = tokio_tungstenite::connect_async(request)
            .await
            .expect("the sessions socket");
        loop {
            let message = tokio::time::timeout(BOUND, socket.next())
                .await
                .expect("a message in time")
                .expect("open")
                .expect("a message");
            let Ok(text) = message.to_text() else {
                continue;
            };
            let value: Value = serde_json::from_str(text).unwrap_or(Value::Null);
            if value["type"] == "sessions" {
                assert_eq!(value["sessions"][0]["sid"], "sh", "{value}");
                break;
            }
        }
    });
    // SAFETY: a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert!(wait_for_process_exit(child.id() as i32, BOUND));
    let _ = child.wait();
}

#[test]
fn a_hosts_metrics_are_valid_prometheus_text_with_bounded_labels() {
    let lab = Lab::new(1, &[("SCREENPILOT_METRICS", "127.0.0.1:9464")]);
    let host = lab.ssh_url(0);
    let ms = LONG_MS.to_string();
    lab.ok(&host, &["spawn", "--sid", "m", "--", "cat"]);
    lab.ok(
        &host,
        &[
            "line",
            "m",
            "hello",
            "--until",
            "^hello$",
            "--until-timeout-ms",
            &ms,
        ],
    );
    let (status, _) = lab.json(
        &host,
        &["wait", "m", "--regex", "never", "--timeout-ms", "50"],
    );
    assert_eq!(status, 1);
    lab.ok(
        &host,
        &["desktop", "start", "--sid", "d", "--size", "320x240"],
    );
    lab.ok(&host, &["screenshot", "d", "-o", "d.png"]);
    // Scraped where it listens (inside the host), then checked by Prometheus's own linter.
    let scrape = std::process::Command::new("nsenter")
        .arg(format!("--net=/run/netns/{}", lab.hosts[0].ns))
        .args([
            "python3",
            "-c",
            "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:9464/metrics').read().decode())",
        ])
        .output()
        .expect("scrape");
    let page = String::from_utf8_lossy(&scrape.stdout).to_string();
    assert!(scrape.status.success(), "{scrape:?}");
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus)");
    {
        use std::io::Write;
        let mut stdin = promtool.stdin.take().expect("stdin");
        stdin.write_all(page.as_bytes()).expect("feed promtool");
    }
    let checked = promtool.wait_with_output().expect("promtool");
    assert!(checked.status.success(), "promtool: {checked:?}\n{page}");
    let has = |line: &str| page.lines().any(|l| l.starts_with(line));
    assert!(
        has("screenpilot_sessions{kind=\"terminal\",state=\"running\"} 1"),
        "{page}"
    );
    assert!(
        has("screenpilot_sessions{kind=\"desktop\",state=\"running\"} 1"),
        "{page}"
    );
    assert!(
        has("screenpilot_operations_total{op=\"spawn\",outcome=\"ok\"} 1"),
        "{page}"
    );
    assert!(has("screenpilot_waits_total{outcome=\"held\"} 1"), "{page}");
    assert!(
        has("screenpilot_waits_total{outcome=\"not_held\"} 1"),
        "{page}"
    );
    assert!(
        !has("screenpilot_desktop_capture_seconds_count 0"),
        "{page}"
    );
    assert!(
        !has("screenpilot_terminal_bytes_total{direction=\"out\"} 0"),
        "{page}"
    );
    // No series is per session: no sid, no command, anywhere.
    assert!(!page.contains("sid=") && !page.contains("\"m\""), "{page}");
    lab.ok(&host, &["close", "d"]);
}
