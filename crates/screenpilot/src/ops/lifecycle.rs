//! Starting, listing, resizing and closing sessions.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::DesktopInfo;
use screenpilot_screen::Size;
use screenpilot_session::spec::{check_cwd, check_env};
use screenpilot_session::{
    BaseEnv, ExitInfo, Recording, SessionError, SessionId, SessionInfo, SpawnSpec,
};

use super::kit::common::{program_env, Caller, Context, OpError, Progress};
use super::kit::look::{how_it_ended, Look, ScreenMode};
use super::kit::operation::{Operation, Profile, Report, View};
use super::kit::program::{program_argv, this_process_umask};
use super::kit::step_table::{Journaled, StepTable};
use super::kit::until::{timeout, waiting_words};
use super::kit::walk::{checked_steps, walk, Outcomes, StepSpec};

/// Parameters of `spawn`. Give `cmd` or `argv`, not both.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SpawnParams {
    /// Split like a shell, not run by one
    pub cmd: Option<String>,
    /// Program and arguments, used exactly. Example: ["python3", "-q"].
    pub argv: Option<Vec<String>>,
    /// Run `cmd` with `sh -c`, for pipes, globs and `&&`.
    #[serde(default)]
    pub shell: bool,
    /// Default: generated
    pub sid: Option<String>,
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Start from an empty environment, not the caller's: TERM, COLORTERM and env only.
    #[serde(default)]
    pub clean_env: bool,
    /// The caller's environment, filled in by `prepare` (not a tool parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub caller_env: Option<BTreeMap<String, String>>,
    /// 80
    pub cols: Option<u16>,
    /// 24
    pub rows: Option<u16>,
    /// Waits end at once (exited: true) when the program exits, instead of running to their timeout.
    #[serde(default)]
    pub detect_child_exit: bool,
    /// Show pictures programs draw
    #[serde(default)]
    pub images: bool,
    /// Record the session as an asciicast v3 file at this path (refused if it exists, unless `force`).
    pub record: Option<String>,
    /// With `record`: record the input sent to the program too.
    #[serde(default)]
    pub record_input: bool,
    /// Replace an existing `record` file.
    #[serde(default)]
    pub force: bool,
    /// The caller's umask, filled in by `prepare` (not a tool parameter): a recording gets the
    /// permissions a file the caller created itself would.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub caller_umask: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub until: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Vec<serde_json::Map<String, serde_json::Value>>>")]
    pub steps: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenMode>,
    /// Who is looking, for deltas (not a tool parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub reader: Option<String>,
}

/// Parameters naming just a session.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SidParams {
    pub sid: String,
}

/// Parameters of `resize`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResizeParams {
    pub sid: String,
    pub cols: u16,
    pub rows: u16,
}

/// Parameters of `list` (none).
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListParams {}

/// `spawn`: start a program in a new terminal session.
pub struct Spawn;

/// What `spawn` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Spawned {
    pub sid: String,
    pub pid: i32,
    pub cols: u16,
    pub rows: u16,
    /// With `until` or `steps`: how the waits ended (`until` first), as `send` answers them.
    #[serde(flatten)]
    pub outcomes: Outcomes,
    /// With `until` or `steps`: the screen then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<Look>,
}

impl Report for Spawned {
    fn satisfied(&self) -> bool {
        self.outcomes.satisfied()
    }

    fn view(&self) -> View {
        match &self.screen {
            Some(look) => {
                let mut facts = vec![format!("sid={}", self.sid)];
                if self.outcomes.given.is_some() {
                    facts[0].push('\n');
                }
                facts.extend(self.outcomes.facts());
                look.view(&facts)
            }
            // The same shape as every answer that reads a screen: facts on one line.
            None => View {
                header: vec![
                    ("sid", self.sid.clone()),
                    ("pid", self.pid.to_string()),
                    ("size", format!("{}x{}", self.cols, self.rows)),
                ],
                screen: Some(String::new()),
                ..View::default()
            },
        }
    }

    fn human(&self) -> String {
        match &self.screen {
            Some(_) => self.view().render(),
            None => self.sid.clone(),
        }
    }

    fn complaint(&self) -> Option<String> {
        self.outcomes.complaint("spawn")
    }
}

impl Operation for Spawn {
    const NAME: &'static str = "spawn";
    const STARTS_SESSION: bool = true;
    const PROFILES: &'static [Profile] = Profile::TERMINALS;
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] = &[
        ("argv", Profile::CLASSIC),
        ("shell", Profile::CLASSIC),
        ("clean_env", Profile::CLASSIC),
        ("detect_child_exit", Profile::CLASSIC),
        ("record", Profile::CLASSIC),
        ("record_input", Profile::CLASSIC),
        ("force", Profile::CLASSIC),
        ("screen", Profile::NONE),
    ];
    const DESCRIPTION: &'static str =
        "Start a program in a terminal that lives across calls; until, steps: as in send. \
E.g. {\"cmd\":\"python3 -q\",\"sid\":\"py\",\"until\":{\"regex\":\"^>>> $\"}}";
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("Start a program in a new terminal session (a real pty, TERM=xterm-256color) that stays alive across calls. \
Give `cmd` (a command line, split like a shell but not run by one; set shell=true for pipes/globs) or `argv`. \
Returns {ok, sid, pid, cols, rows}: use the sid in every other tool. \
Limits: 8 running sessions by default (close ones you are done with); idle sessions close after 15 min; size up to 1000x500 and 100000 cells. \
Example: {\"cmd\": \"python3 -q\", \"sid\": \"py\", \"cols\": 100, \"rows\": 30}. Then wait_for the prompt before typing.");
    type Params = SpawnParams;
    type Output = Spawned;

    fn progress(p: &SpawnParams) -> Option<String> {
        waiting_words(p.sid.as_deref().unwrap_or("?"), p.until.as_ref())
    }

    fn journal(p: &SpawnParams, held: bool) -> Vec<Journaled> {
        let cmd = match (&p.cmd, &p.argv) {
            (Some(cmd), _) if p.shell => shell_words::join(["sh", "-c", cmd]),
            (Some(cmd), _) => cmd.clone(),
            (_, Some(argv)) => shell_words::join(argv),
            _ => return Vec::new(),
        };
        let step = StepTable {
            spawn: Some(cmd),
            size: p.cols.zip(p.rows).map(|(c, r)| format!("{c}x{r}")),
            cwd: p.cwd.clone(),
            env: (!p.env.is_empty()).then(|| p.env.clone()),
            until: p.until.clone().filter(|u| held && !u.is_null()),
            ..StepTable::default()
        };
        let mut all = vec![Journaled::acting(step)];
        all.extend(Journaled::inputs(
            None,
            p.steps.as_deref().unwrap_or_default(),
            held,
        ));
        all
    }

    fn time_limit(p: &SpawnParams) -> Option<Duration> {
        let waits = p.until.is_some() || p.steps.as_ref().is_some_and(|s| !s.is_empty());
        waits
            .then(|| timeout(p.timeout_ms, "timeout_ms").ok())
            .flatten()
    }

    fn prepare(p: &mut SpawnParams, caller: &Caller) {
        caller.fill_reader(&mut p.reader);
        caller.resolve_cwd(&mut p.cwd);
        caller.resolve(&mut p.record);
        p.caller_umask = this_process_umask();
        caller.fill_env(&mut p.caller_env, p.clean_env);
    }

    async fn run(ctx: &Context, p: SpawnParams, _: &Progress) -> Result<Spawned, OpError> {
        let limit = timeout(p.timeout_ms, "timeout_ms")?;
        let first = StepSpec {
            until: p.until.clone(),
            ..StepSpec::default()
        };
        let steps = checked_steps(ctx, first, p.steps.clone()).await?;
        let argv = program_argv(p.cmd.as_deref(), p.argv.as_deref(), p.shell)?.ok_or_else(|| {
            OpError::invalid(
                "cmd",
                "no program given; e.g. {\"cmd\": \"bash\"} or {\"argv\": [\"vim\", \"notes.txt\"]}",
            )
        })?;
        let sid = p.sid.as_deref().map(SessionId::parse).transpose()?;
        let cwd = match &p.cwd {
            Some(cwd) => PathBuf::from(cwd),
            None => std::env::var_os("HOME")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("/")),
        };
        check_cwd(&cwd)?;
        let env: Vec<(String, String)> = p.env.into_iter().collect();
        check_env(&env)?;
        let base_env = BaseEnv::Exactly(program_env(p.caller_env, p.clean_env)?);
        let size = Size::new(p.cols.unwrap_or(80), p.rows.unwrap_or(24));
        ctx.registry.limits().check_size(size, "cols/rows")?;
        let spec = SpawnSpec {
            sid,
            argv,
            cwd,
            base_env,
            env,
            size,
            detect_child_exit: p.detect_child_exit,
            images: p.images,
            record: p.record.map(|path| Recording {
                path: PathBuf::from(path),
                mode: 0o666 & !p.caller_umask.unwrap_or(0o022),
                force: p.force,
                input: p.record_input,
            }),
        };
        let session = ctx.registry.spawn(spec)?;
        let mut answer = Spawned {
            sid: session.sid.to_string(),
            pid: session.pid,
            cols: size.cols,
            rows: size.rows,
            outcomes: Outcomes::default(),
            screen: None,
        };
        if steps.is_empty() && matches!(p.screen, None | Some(ScreenMode::None)) {
            return Ok(answer);
        }
        let mode = p.screen.unwrap_or_default();
        let walked = walk(&session, steps, limit, mode, p.reader.as_deref()).await?;
        answer.outcomes = walked.outcomes;
        answer.screen = Some(walked.look);
        Ok(answer)
    }
}

/// `list`: every session, terminal and desktop.
pub struct List;

/// One session in `list`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SessionEntry {
    Desktop(DesktopInfo),
    Terminal(SessionInfo),
}

/// What `list` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Sessions {
    pub sessions: Vec<SessionEntry>,
    /// With several hosts: those that did not answer, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreachable: Vec<Unreachable>,
    /// Sessions that ended with a killed daemon before this one (kept for this daemon's life).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lost: Vec<screenpilot_session::leftovers::Lost>,
    /// The daemon's screenpilot version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// A host `list` could not reach.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Unreachable {
    pub host: String,
    pub error: String,
}

impl Sessions {
    /// Lines after the sessions: the hosts that did not answer, and the sessions a killed daemon took.
    fn footer_lines(&self) -> impl Iterator<Item = String> + '_ {
        let lost = self
            .lost
            .iter()
            .map(|l| format!("{} lost (ended with a killed daemon) {}", l.sid, l.cmd));
        // Read where the answer is shown: this client's own version, against the daemon's.
        let client = env!("CARGO_PKG_VERSION");
        let other = self.version.as_deref().filter(|v| *v != client).map(|v| {
            format!("the daemon runs screenpilot {v}, this client {client}: `screenpilot daemon status` says more")
        });
        self.unreachable
            .iter()
            .map(|u| format!("host {} unreachable: {}", u.host, u.error))
            .chain(lost)
            .chain(other)
    }
}

impl Report for Sessions {
    /// One line a session for a model: `py terminal running 80x24 python3 -q`.
    fn view(&self) -> View {
        let lines: Vec<String> = self
            .sessions
            .iter()
            .map(|entry| match entry {
                SessionEntry::Terminal(s) => format!(
                    "{} {} {} {}x{} {}{}",
                    s.sid,
                    s.kind,
                    short_state(s.alive, (s.exit_code, s.signal)),
                    s.cols,
                    s.rows,
                    s.cmd.join(" "),
                    left_running(s.running.as_ref())
                ),
                SessionEntry::Desktop(d) => format!(
                    "{} desktop {} {}x{} {} {}",
                    d.sid,
                    short_state(d.alive, (d.exit_code, d.signal)),
                    d.width,
                    d.height,
                    d.display,
                    d.cmd.join(" ")
                ),
            })
            .collect();
        let mut lines = lines;
        if lines.is_empty() {
            lines.push("no sessions".to_owned());
        }
        lines.extend(self.footer_lines());
        View {
            screen: Some(lines.join("\n")),
            ..View::default()
        }
    }

    fn human(&self) -> String {
        if self.sessions.is_empty() {
            return std::iter::once("no sessions".to_owned())
                .chain(self.footer_lines())
                .collect::<Vec<_>>()
                .join("\n");
        }
        let mut out = format!(
            "{:<20} {:<9} {:>8} {:<10} {:>9}  COMMAND",
            "SID", "KIND", "PID", "STATE", "SIZE"
        );
        for entry in &self.sessions {
            let (sid, kind, pid, alive, exit, size, cmd, watched) = match entry {
                SessionEntry::Terminal(s) => (
                    &s.sid,
                    &s.kind,
                    Some(s.pid),
                    s.alive,
                    (s.exit_code, s.signal),
                    format!("{}x{}", s.cols, s.rows),
                    &s.cmd,
                    format!(
                        "{}{}{}",
                        watchers(&s.viewers),
                        recording_note(s),
                        left_running(s.running.as_ref())
                    ),
                ),
                SessionEntry::Desktop(d) => (
                    &d.sid,
                    &d.kind,
                    d.pid,
                    d.alive,
                    (d.exit_code, d.signal),
                    format!("{}x{}", d.width, d.height),
                    &d.cmd,
                    watchers(
                        &d.viewers
                            .iter()
                            .map(|v| screenpilot_session::ViewerInfo {
                                how: v.how.clone(),
                                read_only: v.read_only,
                                secs: v.secs,
                            })
                            .collect::<Vec<_>>(),
                    ),
                ),
            };
            let pid = pid.map_or("null".to_owned(), |p| p.to_string());
            out.push_str(&format!(
                "\n{sid:<20} {kind:<9} {pid:>8} {:<10} {size:>9}  {}{watched}",
                short_state(alive, exit),
                cmd.join(" ")
            ));
        }
        for line in self.footer_lines() {
            out.push('\n');
            out.push_str(&line);
        }
        out
    }
}

/// Who is watching, for the end of a `list` line: "  (attached: 1, 1 read-only; watching: 2)".
fn watchers(viewers: &[screenpilot_session::ViewerInfo]) -> String {
    if viewers.is_empty() {
        return String::new();
    }
    let count = |how: &str| viewers.iter().filter(|v| v.how == how).count();
    let read_only = viewers
        .iter()
        .filter(|v| v.how == "attach" && v.read_only)
        .count();
    let mut parts = Vec::new();
    match (count("attach"), read_only) {
        (0, _) => {}
        (n, 0) => parts.push(format!("attached: {n}")),
        (n, r) => parts.push(format!("attached: {n}, {r} read-only")),
    }
    if count("watch") > 0 {
        parts.push(format!("watching: {}", count("watch")));
    }
    format!("  ({})", parts.join("; "))
}

/// "  (recording)" at the end of a `list` line while the session is recorded.
fn recording_note(session: &SessionInfo) -> &'static str {
    if session.recording.is_some() {
        "  (recording)"
    } else {
        ""
    }
}

/// A state short enough for a column: "running", "exit 3", "signal 9".
fn short_state(alive: bool, (code, signal): (Option<i32>, Option<i32>)) -> String {
    match (alive, code, signal) {
        (true, _, _) => "running".to_owned(),
        (_, Some(code), _) => format!("exit {code}"),
        (_, None, Some(signal)) => format!("signal {signal}"),
        _ => "ended".to_owned(),
    }
}

impl Operation for List {
    const NAME: &'static str = "list";
    const EVERY_HOST: bool = true;
    const IN_STEP_FILES: bool = false;
    const PROFILES: &'static [Profile] = Profile::EVERY;
    const DESCRIPTION: &'static str =
        "Sessions: sid, kind, state (exit N), size, command, its processes and ports.";
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("List sessions. Returns {ok, sessions: [{sid, kind, pid, cmd, cwd, cols, rows, started, alive, exit_code, signal, title, idle_secs, viewers: [{how: attach|watch, read_only, secs}], recording (a file, while recording)}]}. Desktop sessions (kind desktop) show display, width, height, attached, program_pid instead of cwd, cols, rows. Exited sessions stay listed until closed. Example: {}.");
    const READ_ONLY: bool = true;
    type Params = ListParams;
    type Output = Sessions;

    async fn run(ctx: &Context, _: ListParams, _: &Progress) -> Result<Sessions, OpError> {
        let mut terminals = ctx.registry.list();
        // What each live session runs now: its processes and the ports they listen on.
        let leaders: Vec<i32> = terminals
            .iter()
            .filter(|s| s.alive)
            .map(|s| s.pid)
            .collect();
        let mut running = screenpilot_session::running::of_sessions(&leaders);
        for info in &mut terminals {
            info.running = running.remove(&info.pid).filter(|_| info.alive);
        }
        let mut sessions: Vec<SessionEntry> =
            terminals.into_iter().map(SessionEntry::Terminal).collect();
        sessions.extend(ctx.desktops.list().into_iter().map(SessionEntry::Desktop));
        Ok(Sessions {
            sessions,
            unreachable: Vec::new(),
            lost: ctx.registry.lost(),
            version: Some(crate::wire::build::Build::this_daemon().version),
        })
    }
}

/// What a session runs beside its program, for its line in `list`: ` +2 processes, listening
/// 127.0.0.1:8000/tcp (pid 4242)`; nothing when only its program runs and listens on nothing.
fn left_running(running: Option<&screenpilot_session::running::Running>) -> String {
    let Some(running) = running else {
        return String::new();
    };
    let mut said = Vec::new();
    let others = running.processes.len().saturating_sub(1) + running.more;
    if others > 0 {
        said.push(format!(
            "+{others} process{}",
            if others == 1 { "" } else { "es" }
        ));
    }
    if !running.listening.is_empty() {
        let ports: Vec<String> = running
            .listening
            .iter()
            .map(|l| format!("{}:{}/{} (pid {})", l.address, l.port, l.proto, l.pid))
            .collect();
        said.push(format!("listening {}", ports.join(", ")));
    }
    match said.is_empty() {
        true => String::new(),
        false => format!(" [{}]", said.join("; ")),
    }
}

/// How a session's program stands: running, or how it ended.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ProgramStatus {
    pub sid: String,
    /// "desktop" for desktop sessions; absent for terminals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Absent in `close` answers (the program is gone by then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alive: Option<bool>,
    /// Desktops: whether the program started on the display still runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_alive: Option<bool>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    /// `close`: processes that had left the session's process group (setsid), ended too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub escaped: Vec<String>,
}

impl ProgramStatus {
    /// A terminal session's status: `alive` for `alive`, `None` for `close`.
    fn terminal(sid: String, alive: Option<bool>, exit: Option<ExitInfo>) -> ProgramStatus {
        ProgramStatus {
            sid,
            kind: None,
            alive,
            program_alive: None,
            exit_code: exit.and_then(|e| e.exit_code),
            signal: exit.and_then(|e| e.signal),
            escaped: Vec::new(),
        }
    }

    fn describe(&self) -> String {
        if self.alive == Some(true) {
            return "running".into();
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "ended".into(),
        }
    }
}

/// `alive`: is the program still running.
pub struct Alive;

impl Report for ProgramStatus {
    /// `alive` is satisfied by a running program (`close` always is).
    fn satisfied(&self) -> bool {
        self.alive != Some(false)
    }

    /// `close` reads as a line of facts, as the answers that show a screen do (`closed sid=py
    /// exit=0`); the classic `alive` keeps its JSON.
    fn view(&self) -> View {
        if self.alive.is_some() {
            return View::default();
        }
        let mut header = vec![
            ("", "closed".to_owned()),
            ("sid", self.sid.clone()),
            ("", how_it_ended(self.exit_code, self.signal)),
        ];
        if !self.escaped.is_empty() {
            header.push(("escaped", self.escaped.join("; ")));
        }
        View {
            header,
            screen: Some(String::new()),
            ..View::default()
        }
    }

    fn human(&self) -> String {
        match self.alive {
            Some(_) => self.describe(),
            None => format!("closed {} ({})", self.sid, self.describe()),
        }
    }
}

impl Operation for Alive {
    const NAME: &'static str = "alive";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    const DESCRIPTION: &'static str = "Is the session's program still running? Returns {ok, sid, alive, exit_code, signal}; exit_code (or signal) is set once it has ended. Example: {\"sid\": \"py\"}.";
    const READ_ONLY: bool = true;
    type Params = SidParams;
    type Output = ProgramStatus;

    async fn run(ctx: &Context, p: SidParams, _: &Progress) -> Result<ProgramStatus, OpError> {
        let session = match ctx.registry.get(&p.sid) {
            Err(SessionError::UnknownSession(sid)) => {
                let info = super::kit::desktops::info(ctx, &p.sid)
                    .ok_or(SessionError::UnknownSession(sid))?;
                return Ok(ProgramStatus {
                    sid: p.sid,
                    kind: Some(info.kind),
                    alive: Some(info.alive),
                    program_alive: info.program_alive,
                    exit_code: info.exit_code,
                    signal: info.signal,
                    escaped: Vec::new(),
                });
            }
            other => other?,
        };
        let exit = session.exit_info();
        Ok(ProgramStatus::terminal(p.sid, Some(exit.is_none()), exit))
    }
}

/// `close`: end a session and every process in it.
pub struct Close;

impl Operation for Close {
    const NAME: &'static str = "close";
    const PROFILES: &'static [Profile] = Profile::EVERY;
    const DESCRIPTION: &'static str =
        "End a session: HUP, TERM, then KILL its processes. E.g. {\"sid\":\"py\"}";
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("End a session: its whole process group gets HUP, then TERM, then KILL (each after a short grace), and is reaped. Returns {ok, sid, exit_code, signal}. Always close sessions you are done with. Example: {\"sid\": \"py\"}.");
    const DESTRUCTIVE: bool = true;
    type Params = SidParams;
    type Output = ProgramStatus;

    fn journal(_: &SidParams, _: bool) -> Vec<Journaled> {
        vec![Journaled::waiting(StepTable {
            close: Some(true),
            ..StepTable::default()
        })]
    }

    async fn run(ctx: &Context, p: SidParams, _: &Progress) -> Result<ProgramStatus, OpError> {
        let info = match ctx.registry.close(&p.sid).await {
            Err(SessionError::UnknownSession(sid)) => {
                let status = super::kit::desktops::close(ctx, &p.sid)
                    .await
                    .ok_or(SessionError::UnknownSession(sid))?;
                return Ok(ProgramStatus {
                    sid: p.sid,
                    kind: Some("desktop".to_owned()),
                    alive: None,
                    program_alive: None,
                    exit_code: status.and_then(|s| s.exit_code),
                    signal: status.and_then(|s| s.signal),
                    escaped: Vec::new(),
                });
            }
            other => other?,
        };
        let exit = ExitInfo {
            exit_code: info.exit_code,
            signal: info.signal,
        };
        Ok(ProgramStatus {
            escaped: info.escaped,
            ..ProgramStatus::terminal(p.sid, None, Some(exit))
        })
    }
}

/// `resize`: change a terminal's size.
pub struct Resize;

/// What `resize` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Resized {
    pub sid: String,
    pub cols: u16,
    pub rows: u16,
}

impl Report for Resized {}

impl Operation for Resize {
    const NAME: &'static str = "resize";
    const DESCRIPTION: &'static str = "Resize the terminal; the program gets SIGWINCH and redraws. Returns {ok, sid, cols, rows}. Example: {\"sid\": \"vim\", \"cols\": 120, \"rows\": 40}.";
    type Params = ResizeParams;
    type Output = Resized;

    fn journal(p: &ResizeParams, _: bool) -> Vec<Journaled> {
        vec![Journaled::waiting(StepTable {
            resize: Some(format!("{}x{}", p.cols, p.rows)),
            ..StepTable::default()
        })]
    }

    async fn run(ctx: &Context, p: ResizeParams, _: &Progress) -> Result<Resized, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let size = Size::new(p.cols, p.rows);
        session.resize(size).await?;
        Ok(Resized {
            sid: p.sid,
            cols: size.cols,
            rows: size.rows,
        })
    }
}
