//! Programs start in the caller's environment, not the daemon's. Every test starts its daemon first,
//! from an environment unlike the client's (a bare PATH and a variable only the daemon has), then
//! asks for programs from clients whose PATH and variables differ: what the program sees shows whose
//! environment it got.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;
use serde_json::{json, Value};

/// A variable only the daemon's environment holds; no program may see it.
const DAEMON_ONLY: &str = "SP_DAEMON_ONLY";

/// Start the test's daemon from a bare environment plus [`DAEMON_ONLY`], and check it holds it.
fn start_daemon_elsewhere(daemon: &Daemon) {
    let mut start = daemon.command(&["--json", "daemon", "start"]);
    start
        .env_clear()
        .env("SCREENPILOT_DIR", daemon.path())
        .env("PATH", "/usr/bin:/bin")
        .env(DAEMON_ONLY, "the daemon's own");
    let out = start.output().expect("run screenpilot daemon start");
    let pid = parse_json(&out)["pid"].as_i64().expect("a daemon pid");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).expect("the daemon's environ");
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        environ.contains(DAEMON_ONLY) && !environ.contains("SP_CALLER_"),
        "the daemon did not start from its own environment: {environ}"
    );
}

/// The client's PATH with `dir` first.
fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// An executable shell script `name` in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).expect("a directory for the script");
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

/// Run `screenpilot --json ARGS` as a client whose environment is changed by `setup`; must succeed.
fn client_json(daemon: &Daemon, args: &[&str], setup: impl FnOnce(&mut Command)) -> Value {
    let mut full = vec!["--json"];
    full.extend_from_slice(args);
    let mut cmd = daemon.command(&full);
    setup(&mut cmd);
    let out = cmd.output().expect("run screenpilot");
    let value = parse_json(&out);
    assert!(out.status.success(), "screenpilot {args:?} failed: {value}");
    value
}

/// Wait until `sid` has exited, and return its last screen.
fn screen_after_exit(daemon: &Daemon, sid: &str) -> String {
    let waited = daemon.sp_json(&["wait", sid, "--exit", "--timeout-ms", &LONG_MS.to_string()]);
    assert_eq!(waited["alive"], false, "{sid} did not exit: {waited}");
    daemon.screen(sid)
}

#[test]
fn a_program_on_the_callers_path_starts_and_sees_the_callers_variables_only() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    let bin = daemon.path().join("callers-bin");
    script(
        &bin,
        "only-on-callers-path",
        "echo \"token=$SP_CALLER_TOKEN daemon=${SP_DAEMON_ONLY-unset} term=$TERM\"\n\
         echo \"columns=${COLUMNS-unset} lines=${LINES-unset} tmux=${TMUX-unset} extra=$SP_EXTRA\"",
    );
    let spawned = client_json(
        &daemon,
        &[
            "spawn",
            "--sid",
            "tool",
            "--env",
            "SP_EXTRA=given",
            "--",
            "only-on-callers-path",
        ],
        |cmd| {
            cmd.env("PATH", path_with(&bin))
                .env("SP_CALLER_TOKEN", "s3cret-token-value")
                .env("TERM", "dumb")
                .env("COLUMNS", "300")
                .env("LINES", "99")
                .env("TMUX", "/tmp/tmux-1000/default,1,0");
        },
    );
    assert_eq!(spawned["sid"], "tool", "{spawned}");
    let screen = screen_after_exit(&daemon, "tool");
    assert!(
        screen.contains("token=s3cret-token-value daemon=unset term=xterm-256color"),
        "{screen}"
    );
    // The caller's own terminal is not the program's: its size and multiplexer stay behind.
    assert!(
        screen.contains("columns=unset lines=unset tmux=unset extra=given"),
        "{screen}"
    );

    // `list --json` shows what runs, never the environment it runs in.
    let list = daemon.sp_json(&["list"]);
    let text = list.to_string();
    assert!(text.contains("only-on-callers-path"), "{text}");
    for leak in [
        "s3cret-token-value",
        "SP_CALLER_TOKEN",
        "caller_env",
        "given",
    ] {
        assert!(!text.contains(leak), "list shows {leak:?}: {text}");
    }
}

#[test]
fn without_the_callers_path_the_program_is_not_found() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    let bin = daemon.path().join("callers-bin");
    script(&bin, "only-on-callers-path", "echo ran");
    // The same program, asked for by a client whose PATH lacks it: the daemon's PATH is not used.
    let error = daemon.sp_error(&["spawn", "--", "only-on-callers-path"]);
    assert_eq!(error["field"], "cmd", "{error}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("was not found in PATH")),
        "{error}"
    );
}

#[test]
fn the_virtualenv_the_caller_activated_is_the_python_that_runs() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    let venv = daemon.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv", "--without-pip"])
        .arg(&venv)
        .status()
        .expect("run python3 -m venv");
    assert!(made.success(), "python3 -m venv --without-pip failed");
    let venv = venv.canonicalize().expect("the venv's path");
    // What `source venv/bin/activate` does to the environment.
    let activate = |cmd: &mut Command| {
        cmd.env("PATH", path_with(&venv.join("bin")))
            .env("VIRTUAL_ENV", &venv);
    };
    client_json(
        &daemon,
        &[
            "spawn",
            "--sid",
            "py",
            "--size",
            "300x10",
            "--",
            "python",
            "-c",
            "import os, sys; print('prefix=' + sys.prefix); print('venv=' + os.environ['VIRTUAL_ENV'])",
        ],
        activate,
    );
    let screen = screen_after_exit(&daemon, "py");
    let expected = venv.display().to_string();
    assert!(
        screen.contains(&format!("prefix={expected}\nvenv={expected}")),
        "the venv's python did not run: {screen}"
    );
}

#[test]
fn clean_env_gives_the_program_nothing_but_the_terminal_type_and_env() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    client_json(
        &daemon,
        &[
            "spawn",
            "--sid",
            "bare",
            "--clean-env",
            "--env",
            "SP_ONLY=this",
            "--",
            "/usr/bin/env",
        ],
        |cmd| {
            cmd.env("SP_CALLER_TOKEN", "not wanted");
        },
    );
    let screen = screen_after_exit(&daemon, "bare");
    let mut lines: Vec<&str> = screen.lines().filter(|l| !l.is_empty()).collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["COLORTERM=truecolor", "SP_ONLY=this", "TERM=xterm-256color"],
        "{screen}"
    );
}

#[test]
fn textual_run_uses_the_callers_python_and_pythonpath() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    // The interpreter with Textual, found only on the caller's PATH (the daemon's has /usr/bin only).
    let python = std::env::var("SCREENPILOT_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/../../.venv/bin/python", env!("CARGO_MANIFEST_DIR")));
    let venv_bin = Path::new(&python)
        .parent()
        .expect("the venv's bin")
        .to_owned();
    let libs = daemon.path().join("callers-lib");
    std::fs::create_dir_all(&libs).expect("a PYTHONPATH directory");
    std::fs::write(
        libs.join("callers_module.py"),
        "GREETING = 'from the caller'\n",
    )
    .expect("write the module");
    let app = daemon.path().join("env_app.py");
    std::fs::write(
        &app,
        "import os, sys\n\
         from textual.app import App\n\
         from textual.widgets import Label\n\
         import callers_module\n\n\
         class EnvApp(App):\n\
         \x20   def compose(self):\n\
         \x20       yield Label(f'prefix={sys.prefix}')\n\
         \x20       yield Label(f'module={callers_module.GREETING} token={os.environ.get(\"SP_CALLER_TOKEN\")}')\n\
         \x20       yield Label(f'daemon={os.environ.get(\"SP_DAEMON_ONLY\", \"unset\")}')\n",
    )
    .expect("write the app");
    let app = app.to_string_lossy().into_owned();
    let done = client_json(&daemon, &["textual", &app, "--size", "200x10"], |cmd| {
        cmd.env("PATH", path_with(&venv_bin))
            .env("PYTHONPATH", &libs)
            .env("SP_CALLER_TOKEN", "for-the-app");
    });
    let text = done["text"].as_str().unwrap_or_default();
    let prefix = venv_bin
        .parent()
        .expect("the venv")
        .canonicalize()
        .expect("venv path");
    assert!(
        text.contains(&format!("prefix={}", prefix.display())),
        "not the caller's python: {done}"
    );
    assert!(
        text.contains("module=from the caller token=for-the-app") && text.contains("daemon=unset"),
        "{done}"
    );
}

#[test]
fn a_desktop_program_starts_in_the_callers_environment_on_this_display_only() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    let bin = daemon.path().join("callers-bin");
    let seen = daemon.path().join("desktop-env.txt");
    script(
        &bin,
        "desktop-tool",
        &format!("/usr/bin/env > '{}'\nexec xterm", seen.display()),
    );
    let started = client_json(
        &daemon,
        &[
            "desktop",
            "start",
            "--sid",
            "desk",
            "--wm",
            "none",
            "--env",
            "SP_EXTRA=given",
            "--",
            "desktop-tool",
        ],
        |cmd| {
            cmd.env("PATH", path_with(&bin))
                .env("SP_CALLER_TOKEN", "for-the-desktop")
                .env("DISPLAY", ":4242")
                .env("WAYLAND_DISPLAY", "wayland-42")
                .env("TMUX", "/tmp/tmux-1000/default,1,0");
        },
    );
    // The program's window was shown before start returned, so the file was written before that.
    let env = std::fs::read_to_string(&seen).expect("the program wrote its environment");
    daemon.sp_json(&["close", "desk"]);
    let vars: Vec<&str> = env.lines().collect();
    let display = format!("DISPLAY={}", started["display"].as_str().unwrap_or("?"));
    for wanted in [
        "SP_CALLER_TOKEN=for-the-desktop",
        "SP_EXTRA=given",
        &display,
    ] {
        assert!(vars.contains(&wanted), "{wanted} missing: {env}");
    }
    for unwanted in [
        "SP_DAEMON_ONLY=",
        "WAYLAND_DISPLAY=",
        "TMUX=",
        "DISPLAY=:4242",
    ] {
        assert!(
            !vars.iter().any(|v| v.starts_with(unwanted)),
            "{unwanted} leaked: {env}"
        );
    }
}

/// A `screenpilot mcp` server over stdio, spoken to in JSON-RPC lines.
struct McpServer {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: mpsc::Receiver<String>,
    next_id: u64,
}

impl McpServer {
    fn start(mut cmd: Command) -> McpServer {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("start screenpilot mcp");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        let mut server = McpServer {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        server.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "environment_e2e", "version": "0"}
            }),
        );
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to the MCP server");
        self.stdin.flush().expect("flush");
    }

    /// Send a request; return its result (skipping notifications).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let line = self
                .lines
                .recv_timeout(Duration::from_millis(LONG_MS))
                .unwrap_or_else(|e| panic!("no answer to {method}: {e}"));
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == json!(id) {
                assert!(message.get("error").is_none(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Call a tool; returns its structured content.
    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(result["isError"], true, "{tool}: {result}");
        result["structuredContent"].clone()
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn an_mcp_server_passes_its_own_environment_to_the_programs_it_starts() {
    let daemon = Daemon::new();
    start_daemon_elsewhere(&daemon);
    let bin = daemon.path().join("hosts-bin");
    script(
        &bin,
        "hosts-tool",
        "echo \"host=$SP_CALLER_HOST_TOKEN daemon=${SP_DAEMON_ONLY-unset}\"",
    );
    // What an agent host puts in the server's environment (its config's "env" block, say).
    let mut cmd = daemon.command(&["mcp", "--tools", "classic"]);
    cmd.env("PATH", path_with(&bin))
        .env("SP_CALLER_HOST_TOKEN", "from-the-agent-host");
    let mut server = McpServer::start(cmd);

    let tools = server.request("tools/list", json!({})).to_string();
    assert!(tools.contains("clean_env"), "spawn lists clean_env");
    assert!(
        !tools.contains("caller_env"),
        "the transport field is not published"
    );

    let spawned = server.call(
        "spawn",
        json!({"sid": "host", "cmd": "hosts-tool", "detect_child_exit": true}),
    );
    assert_eq!(spawned["sid"], "host", "{spawned}");
    let seen = server.call(
        "wait_for",
        json!({"sid": "host", "pattern": "^host=from-the-agent-host daemon=unset$", "timeout_ms": LONG_MS}),
    );
    assert_eq!(seen["matched"], true, "{seen}");

    // clean_env over MCP: the host's variables stay out too.
    server.call(
        "spawn",
        json!({"sid": "clean", "argv": ["/usr/bin/env"], "clean_env": true, "detect_child_exit": true}),
    );
    let exited = server.call("wait_exit", json!({"sid": "clean", "timeout_ms": LONG_MS}));
    let text = exited["text"].as_str().unwrap_or_default();
    assert!(
        text.contains("TERM=xterm-256color") && !text.contains("SP_CALLER_HOST_TOKEN"),
        "{exited}"
    );
}
