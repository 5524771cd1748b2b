//! Commands as units: a shell's OSC 133 marks ([`screenpilot_screen::shell_marks`]) say where each
//! command's output starts (`C`) and where it ends with its exit status (`D`). A command started by
//! `run` is armed here before its line is typed; the output between its marks is drawn on a screen of
//! its own (the same width, a long history), so the command's output reads as it would on a fresh
//! terminal: progress bars redrawn with `\r` show their last state, colours are gone, soft wraps are
//! joined, and neither the prompt nor the command line is in it.
//!
//! Bash gives no marks by itself; [`bash_integration`] is the environment that makes an interactive
//! bash emit them (`PROMPT_COMMAND` for `D` and `A`, `PS0` for `C`), which the daemon sets on the bash
//! sessions it starts. fish 4 emits them itself; other shells must be configured to.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use screenpilot_screen::{Mark, MarkScanner, Screen, Size};

/// The most lines of one command's output kept; older lines are dropped, and the record says how many.
pub const MAX_OUTPUT_LINES: usize = 10_000;

/// How many finished commands a session remembers.
const KEPT_COMMANDS: usize = 4;

/// Where the shell stands, as its marks tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellState {
    /// No mark seen yet: the program gives none (yet).
    Unmarked,
    /// At a prompt (after `A`, `B` or `D`): a command line can be typed.
    Prompt,
    /// A command runs (after `C`).
    Running,
}

/// A finished (or still running) command, as `run` reports it.
#[derive(Debug, Clone)]
pub struct CommandRecord {
    pub id: u64,
    /// The command line as `run` was given it.
    pub command: String,
    /// The shell saw the command start (its `C` mark).
    pub started: bool,
    /// The command ended (its `D` mark).
    pub done: bool,
    /// Its exit status, from the `D` mark.
    pub exit_code: Option<i32>,
    /// Its output as logical lines (soft wraps joined), trailing blank lines dropped.
    pub lines: Vec<String>,
    /// Lines dropped from the start of the output (past [`MAX_OUTPUT_LINES`]).
    pub dropped: usize,
    pub elapsed: Duration,
}

/// A command being captured.
struct Capture {
    id: u64,
    command: String,
    screen: Option<Screen>,
    since: Instant,
}

/// A session's shell marks and the commands `run` asked for.
pub struct Shell {
    scanner: MarkScanner,
    state: ShellState,
    /// Exit status of the last command the shell reported.
    pub last_exit: Option<i32>,
    next_id: u64,
    /// The command whose line was typed and whose `C` mark is awaited, or whose output is drawn.
    capture: Option<Capture>,
    finished: VecDeque<CommandRecord>,
    /// The token our integration signs its marks with: marks without it are output, not the
    /// shell's (`None`: a shell that marks by itself, such as fish, whose marks are taken as is).
    token: Option<u64>,
}

impl Default for Shell {
    fn default() -> Shell {
        Shell {
            scanner: MarkScanner::default(),
            state: ShellState::Unmarked,
            last_exit: None,
            next_id: 1,
            capture: None,
            finished: VecDeque::new(),
            token: None,
        }
    }
}

impl Shell {
    /// A shell whose marks carry `token` (see [`bash_integration`]).
    pub fn signed(token: Option<u64>) -> Shell {
        Shell {
            token,
            ..Shell::default()
        }
    }

    /// The shell of a session started from `spec` with `token`: signed when the whole of our
    /// integration went in (a PS0 of the user's own would give unsigned marks).
    pub fn for_spec(spec: &crate::spec::SpawnSpec, token: u64) -> Shell {
        Shell::signed(integrated(spec).then_some(token))
    }

    /// The token its marks are signed with, when they are.
    pub fn token(&self) -> Option<u64> {
        self.token
    }

    pub fn state(&self) -> ShellState {
        self.state
    }

    /// Take note of program output: marks change the state, and the output of an armed command is
    /// drawn on its own screen. `size` is the terminal's.
    pub fn absorb(&mut self, bytes: &[u8], size: Size) {
        let found = self.scanner.scan(bytes);
        if found.is_empty() {
            if let Some(screen) = self.capture.as_mut().and_then(|c| c.screen.as_mut()) {
                screen.feed(bytes);
            }
            return;
        }
        let mut from = 0;
        for f in found {
            if self.token.is_some() && f.token != self.token {
                // A program printed a mark: it is output, and ends nothing.
                continue;
            }
            if let Some(screen) = self.capture.as_mut().and_then(|c| c.screen.as_mut()) {
                screen.feed(&bytes[from..f.end]);
            }
            from = f.end;
            self.mark(f.mark, size);
        }
        if let Some(screen) = self.capture.as_mut().and_then(|c| c.screen.as_mut()) {
            screen.feed(&bytes[from..]);
        }
    }

    fn mark(&mut self, mark: Mark, size: Size) {
        match mark {
            Mark::PromptStart | Mark::CommandStart => {
                if self.state != ShellState::Running {
                    self.state = ShellState::Prompt;
                }
            }
            Mark::OutputStart => {
                self.state = ShellState::Running;
                if let Some(capture) = self.capture.as_mut().filter(|c| c.screen.is_none()) {
                    // The history keeps every line the record can hold; the screen's rows add to it.
                    let history = MAX_OUTPUT_LINES.saturating_sub(usize::from(size.rows));
                    capture.screen = Some(Screen::new(size, history));
                    capture.since = Instant::now();
                }
            }
            Mark::CommandEnd(status) => {
                self.last_exit = status;
                let ran = self.state == ShellState::Running;
                self.state = ShellState::Prompt;
                // A D without a C closes nothing of ours: the prompt before any command, or an
                // empty line.
                if ran {
                    if let Some(capture) = self.capture.take_if(|c| c.screen.is_some()) {
                        let record = finish(capture, true, status);
                        self.remember(record);
                    }
                }
            }
        }
    }

    /// Arm the next command: its output is captured from its `C` mark on. Returns its id.
    pub fn arm(&mut self, command: &str) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.capture = Some(Capture {
            id,
            command: command.to_owned(),
            screen: None,
            since: Instant::now(),
        });
        id
    }

    /// The command `id` as it stands: finished, or running with its output so far.
    pub fn command(&mut self, id: u64) -> Option<CommandRecord> {
        if let Some(record) = self.finished.iter().find(|r| r.id == id) {
            return Some(record.clone());
        }
        let capture = self.capture.as_mut().filter(|c| c.id == id)?;
        let (lines, dropped) = capture
            .screen
            .as_mut()
            .map(output_lines)
            .unwrap_or_default();
        Some(CommandRecord {
            id,
            command: capture.command.clone(),
            started: capture.screen.is_some(),
            done: false,
            exit_code: None,
            lines,
            dropped,
            elapsed: capture.since.elapsed(),
        })
    }

    /// Whether command `id` has ended (or is no longer known).
    pub fn is_done(&self, id: u64) -> bool {
        self.capture.as_ref().is_none_or(|c| c.id != id)
    }

    /// The program ended: a command still captured ends with it, without an exit status of its own.
    pub fn program_ended(&mut self) {
        if let Some(capture) = self.capture.take() {
            let record = finish(capture, false, None);
            self.remember(record);
        }
    }

    fn remember(&mut self, record: CommandRecord) {
        if self.finished.len() == KEPT_COMMANDS {
            self.finished.pop_front();
        }
        self.finished.push_back(record);
    }
}

fn finish(mut capture: Capture, ended: bool, exit_code: Option<i32>) -> CommandRecord {
    let started = capture.screen.is_some();
    let (lines, dropped) = capture
        .screen
        .as_mut()
        .map(output_lines)
        .unwrap_or_default();
    CommandRecord {
        id: capture.id,
        command: capture.command,
        started,
        done: ended,
        exit_code,
        lines,
        dropped,
        elapsed: capture.since.elapsed(),
    }
}

/// A capture screen's text as logical lines, history first, trailing blank lines dropped; and how
/// many lines its history dropped.
fn output_lines(screen: &mut Screen) -> (Vec<String>, usize) {
    let history = screen.scrollback_search_text(MAX_OUTPUT_LINES);
    let mut lines: Vec<String> = if history.is_empty() {
        Vec::new()
    } else {
        history.split('\n').map(str::to_owned).collect()
    };
    lines.extend(screen.search_text().split('\n').map(str::to_owned));
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    let dropped = usize::try_from(screen.history_dropped()).unwrap_or(usize::MAX);
    (lines, dropped)
}

/// The variables that make an interactive bash mark its prompts and commands (see the module
/// documentation): `D` with the last status and `A` before each prompt, `C` before each command runs,
/// each signed with `token` (`sp=HEX`) so that output printing marks cannot end a command. Bash keeps
/// `$?` across `PROMPT_COMMAND`, so a prompt that shows it still does; the variables are taken out
/// of the environment the shell's commands inherit, so they do not learn the token from it.
pub fn bash_integration(token: u64) -> [(&'static str, String); 2] {
    [
        (
            "PROMPT_COMMAND",
            format!(
                r#"printf '\033]133;D;%s;sp={token:x}\007\033]133;A;sp={token:x}\007' "$?"; export -n PROMPT_COMMAND PS0"#
            ),
        ),
        ("PS0", format!(r"\e]133;C;sp={token:x}\a")),
    ]
}

/// The variables `spec` gets so its shell marks its prompts: [`bash_integration`] for an interactive
/// bash, unless the caller set those variables itself (then it keeps its own, and may give no marks).
pub fn integration(spec: &crate::spec::SpawnSpec, token: u64) -> Vec<(&'static str, String)> {
    if !is_interactive_bash(&spec.argv) {
        return Vec::new();
    }
    let set = |vars: &[(String, String)], key: &str| vars.iter().any(|(k, _)| k == key);
    bash_integration(token)
        .into_iter()
        .filter(|(key, _)| {
            let inherited = match &spec.base_env {
                crate::spec::BaseEnv::Exactly(vars) => set(vars, key),
                crate::spec::BaseEnv::Inherit => std::env::var_os(key).is_some(),
            };
            !inherited && !set(&spec.env, key)
        })
        .collect()
}

/// Whether the program of `argv` is expected to mark its prompts: a bash given the integration, or
/// fish (4 and later emit the marks themselves).
pub fn marks_expected(spec: &crate::spec::SpawnSpec) -> bool {
    integrated(spec) || program_name(&spec.argv) == "fish"
}

/// The whole of [`bash_integration`] goes into the program of `spec`.
fn integrated(spec: &crate::spec::SpawnSpec) -> bool {
    integration(spec, 0).len() == bash_integration(0).len()
}

/// A new random token to sign a session's marks with (the standard library's randomly keyed
/// hasher, over the time).
pub fn new_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    hasher.finish()
}

fn program_name(argv: &[String]) -> &str {
    argv.first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

/// Whether `argv` starts an interactive bash that reads commands from its terminal: `bash` with
/// options only (no script, no `-c`), so the integration variables reach the shell that prompts.
pub fn is_interactive_bash(argv: &[String]) -> bool {
    let name = program_name(argv);
    // Long options (--norc, --login) and short ones without `c` (-i, -l); a word that is not an
    // option is a script.
    name == "bash"
        && argv.iter().skip(1).all(|a| match a.strip_prefix("--") {
            Some(_) => true,
            None => a.starts_with('-') && !a.contains('c'),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Size = Size { cols: 20, rows: 4 };

    fn feed(shell: &mut Shell, bytes: &[u8]) {
        shell.absorb(bytes, SIZE);
    }

    #[test]
    fn an_armed_command_is_its_output_between_its_marks() {
        let mut shell = Shell::default();
        feed(&mut shell, b"\x1b]133;D;0\x07\x1b]133;A\x07$ ");
        assert_eq!(shell.state(), ShellState::Prompt);
        let id = shell.arm("ls");
        feed(&mut shell, b"ls\r\n\x1b]133;C\x07one\r\ntwo\r\n");
        assert_eq!(shell.state(), ShellState::Running);
        let running = shell.command(id).expect("known");
        assert!(running.started && !running.done);
        assert_eq!(running.lines, ["one", "two"]);
        feed(&mut shell, b"\x1b]133;D;2\x07\x1b]133;A\x07$ ");
        let done = shell.command(id).expect("kept");
        assert!(done.done);
        assert_eq!(done.exit_code, Some(2));
        assert_eq!(done.lines, ["one", "two"], "no prompt, no command line");
        assert!(shell.is_done(id));
    }

    #[test]
    fn output_reads_as_on_a_fresh_terminal() {
        let mut shell = Shell::default();
        feed(&mut shell, b"\x1b]133;A\x07$ ");
        let id = shell.arm("build");
        // A progress line redrawn with CR, colours, and a line wider than the terminal.
        let out = b"\x1b]133;C\x07 10%\r 50%\r100%\r\n\x1b[31mred\x1b[0m\r\n0123456789012345678901234\r\n";
        feed(&mut shell, out);
        feed(&mut shell, b"\x1b]133;D;0\x07");
        let done = shell.command(id).expect("kept");
        assert_eq!(done.lines, ["100%", "red", "0123456789012345678901234"]);
    }

    #[test]
    fn long_output_keeps_its_end_and_counts_what_it_dropped() {
        let mut shell = Shell::default();
        feed(&mut shell, b"\x1b]133;A\x07");
        let id = shell.arm("seq");
        feed(&mut shell, b"\x1b]133;C\x07");
        let total = MAX_OUTPUT_LINES + 500;
        let text: String = (1..=total).map(|n| format!("{n}\r\n")).collect();
        feed(&mut shell, text.as_bytes());
        feed(&mut shell, b"\x1b]133;D;0\x07");
        let done = shell.command(id).expect("kept");
        assert_eq!(done.lines.last().map(String::as_str), Some("10500"));
        assert_eq!(done.lines.len() + done.dropped, total, "{}", done.dropped);
    }

    #[test]
    fn marks_split_across_reads_still_split_the_output() {
        let mut shell = Shell::default();
        feed(&mut shell, b"\x1b]133;A\x07");
        let id = shell.arm("x");
        for piece in [
            &b"x\r\n\x1b]13"[..],
            b"3;C\x07ou",
            b"t\r\n\x1b]133;D;",
            b"7\x07$ ",
        ] {
            feed(&mut shell, piece);
        }
        let done = shell.command(id).expect("kept");
        assert_eq!(
            (done.exit_code, done.lines),
            (Some(7), vec!["out".to_owned()])
        );
    }

    #[test]
    fn a_shell_that_ends_mid_command_ends_the_command_without_a_status() {
        let mut shell = Shell::default();
        feed(&mut shell, b"\x1b]133;A\x07");
        let id = shell.arm("exit 3");
        feed(&mut shell, b"\x1b]133;C\x07bye\r\n");
        shell.program_ended();
        let done = shell.command(id).expect("kept");
        assert!(!done.done && done.started && done.exit_code.is_none());
        assert!(shell.is_done(id));
    }

    #[test]
    fn a_signed_shell_takes_only_its_own_marks() {
        let mut shell = Shell::signed(Some(0xabc));
        feed(&mut shell, b"\x1b]133;A;sp=abc\x07$ ");
        let id = shell.arm("cat log");
        feed(&mut shell, b"\x1b]133;C;sp=abc\x07line\r\n");
        // The log holds marks of its own (another shell's, or forged): output, not the end.
        feed(
            &mut shell,
            b"\x1b]133;D;0\x07\x1b]133;D;0;sp=123\x07more\r\n",
        );
        assert!(!shell.is_done(id));
        feed(&mut shell, b"\x1b]133;D;4;sp=abc\x07");
        let done = shell.command(id).expect("kept");
        assert_eq!(done.exit_code, Some(4));
        assert_eq!(done.lines, ["line", "more"]);
    }

    #[test]
    fn only_an_interactive_bash_gets_the_integration() {
        let argv = |words: &[&str]| words.iter().map(|w| w.to_string()).collect::<Vec<_>>();
        assert!(is_interactive_bash(&argv(&["bash"])));
        assert!(is_interactive_bash(&argv(&["/bin/bash", "--norc", "-i"])));
        assert!(!is_interactive_bash(&argv(&["bash", "-c", "ls"])));
        assert!(!is_interactive_bash(&argv(&["bash", "-ic", "ls"])));
        assert!(!is_interactive_bash(&argv(&["bash", "script.sh"])));
        assert!(!is_interactive_bash(&argv(&["zsh"])));
    }
}
