//! A small harness for end-to-end tests: every test gets its own daemon (its own SCREENPILOT_DIR in a
//! temp dir), drives it through the real `screenpilot` binary, and stops it when the test ends, even on
//! a panic. Tests synchronise only through the product's own event-driven waits, never by sleeping.

#![allow(dead_code)] // not every part of the harness is used by a test today

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

/// A generous wait timeout: CI is a loaded two-core machine, and a wait returns as soon as it holds.
pub const LONG_MS: u64 = 20_000;

/// `spawn` flags for a shell that shows `$ ` and keeps no history file.
pub const PLAIN_SHELL: [&str; 4] = ["--env", "PS1=$ ", "--env", "HISTFILE=/dev/null"];

/// An idle `bash` prompt (PS1 is `$ `). Snapshot lines are trimmed at the end, so the space after `$`
/// is optional here; `\$ $` itself is checked in waits_e2e.
pub const PROMPT: &str = r"^\$ ?$";

/// The screenpilot binary cargo built for these tests.
pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_screenpilot")
}

/// The repository's root (for its `.venv`, README.md, packages/).
pub fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The test venv's Python (scripts/test.sh makes it), or `SCREENPILOT_TEST_PYTHON`.
pub fn venv_python() -> std::path::PathBuf {
    std::env::var_os("SCREENPILOT_TEST_PYTHON")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/bin/python"))
}

/// A fixture program's absolute path.
pub fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// One test's private daemon. Dropping it stops the daemon and removes its directory.
pub struct Daemon {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl Daemon {
    /// A daemon with the default limits; it starts on the first command.
    pub fn new() -> Daemon {
        Daemon::with_env(&[])
    }

    /// A daemon started with these environment variables (limits are read at daemon start), e.g.
    /// `[("SCREENPILOT_MAX_SESSIONS", "16")]`.
    pub fn with_env(env: &[(&str, &str)]) -> Daemon {
        let dir = tempfile::Builder::new()
            .prefix("sp-e2e-")
            .tempdir()
            .expect("create a temp dir for the daemon");
        Daemon {
            dir,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    /// A scratch directory for the test's own files (beside the daemon's socket).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A `screenpilot` command aimed at this daemon, with no limits inherited from the outer environment.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(binary());
        cmd.args(args)
            .env("SCREENPILOT_DIR", self.dir.path())
            .current_dir(self.dir.path())
            .stdin(Stdio::null());
        for var in [
            "SCREENPILOT_MAX_SESSIONS",
            "SCREENPILOT_IDLE_TIMEOUT_SECS",
            "SCREENPILOT_CLOSE_GRACE_MS",
            "SCREENPILOT_SCROLLBACK_LINES",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Run `screenpilot ARGS...` to completion.
    pub fn sp(&self, args: &[&str]) -> Output {
        self.command(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run screenpilot {args:?}: {e}"))
    }

    /// Run `screenpilot --json ARGS...` and parse the one JSON object it prints, whatever the exit status.
    pub fn json_status(&self, args: &[&str]) -> (i32, Value) {
        let mut full = vec!["--json"];
        full.extend_from_slice(args);
        let out = self.sp(&full);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
            panic!(
                "screenpilot {args:?} printed no JSON object ({e}); status {:?}\nstdout: {stdout}\nstderr: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        });
        (out.status.code().unwrap_or(-1), value)
    }

    /// Run `screenpilot ARGS...`; it must succeed (exit 0). Its standard output.
    pub fn sp_ok(&self, args: &[&str]) -> String {
        let out = self.sp(args);
        assert!(
            out.status.success(),
            "screenpilot {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Run `screenpilot --json ARGS...`; it must succeed (exit 0).
    pub fn sp_json(&self, args: &[&str]) -> Value {
        let (status, value) = self.json_status(args);
        assert_eq!(status, 0, "screenpilot {args:?} failed: {value}");
        value
    }

    /// Run a command that must fail as bad input (exit 2, ok=false); returns the `error` object.
    pub fn sp_error(&self, args: &[&str]) -> Value {
        let (status, value) = self.json_status(args);
        assert_eq!(
            status, 2,
            "screenpilot {args:?} should fail with status 2: {value}"
        );
        assert_eq!(value["ok"], false, "{value}");
        value["error"].clone()
    }

    /// Start `bash` with a plain `$ ` prompt and no rc files; returns once the prompt shows.
    /// Desktop `sid` running the Qt form fixture as a bare QWidget window (which Qt 5 calls a
    /// filler, not a window).
    pub fn start_qt_form(&self, sid: &str) -> Value {
        let form = fixture("qt/form.py");
        self.sp_json(&[
            "desktop",
            "start",
            "--sid",
            sid,
            "--",
            "/usr/bin/python3",
            &form,
            "--plain",
        ])
    }

    pub fn spawn_bash(&self, sid: &str) {
        self.spawn_bash_with(sid, &[]);
    }

    /// Like `spawn_bash`, with extra `spawn` flags (e.g. `--size 100x30`) before the program.
    pub fn spawn_bash_with(&self, sid: &str, flags: &[&str]) {
        let mut args = vec!["spawn", "--sid", sid];
        args.extend_from_slice(&PLAIN_SHELL);
        args.extend_from_slice(flags);
        args.extend_from_slice(&["--", "bash", "--norc", "--noprofile"]);
        self.sp_json(&args);
        self.wait_regex(sid, PROMPT);
    }

    /// Wait until `pattern` matches the screen of `sid`; returns the wait's result. Panics on timeout.
    pub fn wait_regex(&self, sid: &str, pattern: &str) -> Value {
        let timeout = LONG_MS.to_string();
        // `--regex=` so that patterns starting with a dash ("-- INSERT --") are not read as flags.
        let regex = format!("--regex={pattern}");
        let (status, value) = self.json_status(&["wait", sid, &regex, "--timeout-ms", &timeout]);
        assert!(
            status == 0 && value["matched"] == true,
            "{sid}: {pattern:?} never showed (status {status}); the screen was:\n{}",
            value["text"].as_str().unwrap_or(&value.to_string())
        );
        value
    }

    /// Type a command line into `sid` (text, then Enter).
    pub fn line(&self, sid: &str, text: &str) -> Value {
        self.sp_json(&["line", sid, text])
    }

    /// The current screen text of `sid`.
    pub fn screen(&self, sid: &str) -> String {
        self.snapshot(sid)["text"]
            .as_str()
            .expect("snapshot has text")
            .to_owned()
    }

    /// `snapshot SID`'s elements (a desktop's windows and their elements, with refs).
    pub fn elements(&self, sid: &str) -> String {
        let snap = self.sp_json(&["snapshot", sid]);
        snap["elements"]
            .as_str()
            .unwrap_or_else(|| panic!("no elements in {snap}"))
            .to_owned()
    }

    pub fn snapshot(&self, sid: &str) -> Value {
        self.sp_json(&["snapshot", sid])
    }

    /// The daemon's pid (starting it if needed).
    pub fn daemon_pid(&self) -> i32 {
        let status = self.sp_json(&["daemon", "start"]);
        status["pid"].as_i64().expect("daemon status has a pid") as i32
    }

    /// `computer` with JSON parameters (sid, action/actions, ...); the exit status and the answer.
    pub fn computer(&self, params: Value) -> (i32, Value) {
        self.json_status(&["call", "computer", &params.to_string()])
    }

    /// One `computer` action on `sid` that must succeed; its answer.
    pub fn act(&self, sid: &str, action: Value) -> Value {
        let (status, value) = self.computer(json!({"sid": sid, "action": action}));
        assert_eq!(status, 0, "{action} failed: {}", brief(&value));
        assert_eq!(value["ok"], true, "{action}: {}", brief(&value));
        value
    }

    /// Assert that `sid` still runs its program and still answers: a fresh command's output shows.
    pub fn assert_bash_healthy(&self, sid: &str, token: &str) {
        let alive = self.sp_json(&["alive", sid]);
        assert_eq!(alive["alive"], true, "{sid} should still run: {alive}");
        self.line(sid, &format!("echo {token}-$((6*7))"));
        self.wait_regex(sid, &format!("^{token}-42$"));
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // Stop the daemon (it closes its sessions) before the directory goes; ignore "not running".
        let _ = self
            .command(&["daemon", "stop", "--end-sessions"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A child process that is killed (and reaped) when the test ends, even on a panic.
pub struct Background(pub Option<Child>);

impl Background {
    pub fn spawn(mut cmd: Command) -> Background {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        Background(Some(cmd.spawn().expect("start a background screenpilot")))
    }

    /// Wait for it to finish and return its output.
    pub fn finish(mut self) -> Output {
        let child = self.0.take().expect("not finished yet");
        child
            .wait_with_output()
            .expect("collect a background output")
    }

    /// Whether it still runs (a look at its state, not a wait).
    pub fn running(&mut self) -> bool {
        self.0
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    /// Kill it now (SIGKILL) and reap it.
    pub fn kill(mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A process stopped with SIGSTOP, resumed when this is dropped, so a failing test leaves nothing
/// stopped.
pub struct Stopped(i32);

impl Stopped {
    pub fn stop(pid: i32) -> Stopped {
        // SAFETY: a plain signal to a process the test started.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        Stopped(pid)
    }
}

impl Drop for Stopped {
    fn drop(&mut self) {
        // SAFETY: a plain signal to the process we stopped.
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// Parse stdout of a `--json` run.
pub fn parse_json(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "no JSON object ({e}); status {:?}\nstdout: {stdout}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// Every live process whose session id (setsid) is `sid`, from /proc: the processes a terminal session
/// started, including zombies, wherever they were reparented.
pub fn processes_in_session(sid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue; // gone meanwhile
        };
        // Fields after the command name (which may hold spaces): state ppid pgrp session ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let session = rest.split_whitespace().nth(3).and_then(|s| s.parse().ok());
        if session == Some(sid) {
            found.push(pid);
        }
    }
    found
}

/// Block until process `pid` (not our child) has exited, woken by its pidfd; false on timeout.
pub fn wait_for_process_exit(pid: i32, timeout: Duration) -> bool {
    // SAFETY: plain syscalls on integers we own; the fd is closed below.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
        if fd < 0 {
            return true; // no such process: already gone
        }
        let deadline = std::time::Instant::now() + timeout;
        let ready = loop {
            let mut poll = libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let ready = libc::poll(&mut poll, 1, left.as_millis() as i32);
            // Another test's SIGCHLD handler (tokio's, process-wide) interrupts the wait: go on.
            if ready < 0
                && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
                continue;
            }
            break ready;
        };
        libc::close(fd);
        ready == 1
    }
}

/// A result without its (long) base64 PNG, for messages.
pub fn brief(value: &Value) -> String {
    let mut value = value.clone();
    if let Some(map) = value.as_object_mut() {
        map.remove("png");
    }
    value.to_string()
}

/// The PNG bytes of a result's base64 `png` field.
pub fn png_of(result: &Value) -> Vec<u8> {
    let data = result["png"].as_str().expect("a png field");
    base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("base64")
}

/// Block until `path` has been written and closed (inotify), then return its contents.
pub fn wait_for_file(path: &Path, timeout: Duration) -> String {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let dir = path.parent().expect("a directory");
    // SAFETY: plain syscalls on a descriptor we own and close below.
    let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
    assert!(fd >= 0, "inotify_init1");
    let c_dir = CString::new(dir.as_os_str().as_bytes()).expect("path");
    // SAFETY: valid descriptor and NUL-terminated path.
    let watch = unsafe {
        libc::inotify_add_watch(fd, c_dir.as_ptr(), libc::IN_CLOSE_WRITE | libc::IN_MOVED_TO)
    };
    assert!(watch >= 0, "inotify_add_watch");
    let end = Instant::now() + timeout;
    let result = loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            if !text.is_empty() {
                break Some(text);
            }
        }
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break None;
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let mut buf = [0u8; 4096];
        // SAFETY: one valid pollfd; reading into our own buffer.
        unsafe {
            libc::poll(&mut poll, 1, left.as_millis() as i32);
            libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        }
    };
    // SAFETY: closing our own descriptor.
    unsafe {
        libc::close(fd);
    }
    result.unwrap_or_else(|| panic!("{} was not written within {timeout:?}", path.display()))
}

/// The memory a client or a daemon may take in a hostile case: 256 MiB.
pub const MEMORY_LIMIT_BYTES: u64 = 256 * 1024 * 1024;

/// Run `cmd` (and whatever it starts, a daemon included) with at most [`MEMORY_LIMIT_BYTES`] of
/// data (RLIMIT_DATA: the heap and every private writable mapping, thread stacks too): past it an
/// allocation fails and the process aborts, which the test sees as a death, not an answer.
pub fn limit_memory(cmd: &mut Command) -> &mut Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: MEMORY_LIMIT_BYTES,
                rlim_max: MEMORY_LIMIT_BYTES,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// A `/bin/sh` script in `dir`, executable; its path.
pub fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write a script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("make the script executable");
    path
}

/// The largest this process has been (VmHWM), in KiB.
pub fn peak_kib(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// The ref on the first line of a snapshot's `elements` that `line` (a regex) matches.
pub fn ref_in(elements: &str, line: &str) -> String {
    let pattern = regex::Regex::new(line).expect("a regex");
    let found = elements
        .lines()
        .find(|l| pattern.is_match(l))
        .unwrap_or_else(|| panic!("no line matches {line:?} in:\n{elements}"));
    regex::Regex::new(r"\[(e\d+)\]")
        .expect("a regex")
        .captures(found)
        .map(|c| c[1].to_owned())
        .unwrap_or_else(|| panic!("no ref on {found:?}"))
}
