//! What a session is asked to be, and the limits it must fit in. Everything here is validated before any
//! process starts, so a bad request never disturbs what is already running.

use std::path::PathBuf;
use std::time::Duration;

use screenpilot_screen::Size;

use crate::error::{Result, SessionError};

/// A session id: 1-64 characters, `[A-Za-z0-9][A-Za-z0-9_.-]*`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    pub const MAX_LEN: usize = 64;

    pub fn parse(raw: &str) -> Result<SessionId> {
        let bad = |why: &str| {
            SessionError::invalid("sid", format!("{why}; a sid is 1-64 characters matching [A-Za-z0-9][A-Za-z0-9_.-]*, e.g. \"editor-1\" (got {raw:?})"))
        };
        if raw.is_empty() {
            return Err(bad("empty"));
        }
        if raw.len() > Self::MAX_LEN {
            return Err(bad("longer than 64 characters"));
        }
        let mut chars = raw.chars();
        let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
        let rest_ok = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !first_ok || !rest_ok {
            return Err(bad("invalid character"));
        }
        Ok(SessionId(raw.to_owned()))
    }

    /// A readable id made from a program name and a counter, e.g. `vim-3`.
    pub fn generate(program: &str, counter: u64) -> SessionId {
        let base: String = program
            .rsplit('/')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            .take(40)
            .collect();
        let base = base.trim_start_matches(['_', '.', '-']);
        let base = if base.is_empty() { "s" } else { base };
        SessionId(format!("{base}-{counter}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Limits the daemon enforces. Each has a default and can be changed by configuration.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Running sessions at once.
    pub max_sessions: usize,
    /// A session nobody touched for this long is closed.
    pub idle_timeout: Duration,
    /// Lines of history kept above the screen.
    pub scrollback_lines: usize,
    pub max_cols: u16,
    pub max_rows: u16,
    pub max_cells: usize,
    /// Longest regex accepted, in bytes of pattern text.
    pub max_pattern_len: usize,
    /// How long `close` waits after HUP and after TERM before escalating.
    pub close_grace: Duration,
    /// How long one write to a program that is not reading its input may block.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_sessions: 8,
            idle_timeout: Duration::from_secs(15 * 60),
            scrollback_lines: 10_000,
            max_cols: 1000,
            max_rows: 500,
            max_cells: 100_000,
            max_pattern_len: 4096,
            close_grace: Duration::from_millis(500),
            write_timeout: Duration::from_secs(10),
        }
    }
}

impl Limits {
    /// Check a terminal size against the caps; `field` names the argument in errors.
    pub fn check_size(&self, size: Size, field: &'static str) -> Result<()> {
        if size.cols < 2 || size.rows < 1 {
            return Err(SessionError::invalid(
                field,
                format!(
                    "{}x{} is too small; the minimum is 2x1",
                    size.cols, size.rows
                ),
            ));
        }
        if size.cols > self.max_cols || size.rows > self.max_rows || size.cells() > self.max_cells {
            return Err(SessionError::invalid(
                field,
                format!(
                    "{}x{} is too large; the caps are {} columns, {} rows and {} cells in all",
                    size.cols, size.rows, self.max_cols, self.max_rows, self.max_cells
                ),
            ));
        }
        Ok(())
    }
}

/// What a program's environment starts from, before the session sets its terminal's variables
/// ([`TERMINAL_VARS`]) and the request's own `env`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum BaseEnv {
    /// This process's environment: what a program embedding this crate expects of a child it starts.
    #[default]
    Inherit,
    /// Exactly these variables and no others. A daemon passes its caller's (or none at all), so that
    /// its own environment never reaches a session. The program is looked up on this `PATH`; without
    /// one, the C library's default (`/bin:/usr/bin`) is searched.
    Exactly(Vec<(String, String)>),
}

/// What every session's program is told about its terminal: our emulator's type.
pub const TERMINAL_VARS: &[(&str, &str)] =
    &[("TERM", "xterm-256color"), ("COLORTERM", "truecolor")];

/// Variables that describe the terminal the *caller* sits in (its emulator, its multiplexer, its size),
/// never passed on from a base environment: the program has another terminal. A stale `COLUMNS` or
/// `LINES` would override the pty's real size (Python's `shutil.get_terminal_size` reads them first),
/// `TMUX` makes tmux refuse to start "nested", and `KITTY_WINDOW_ID` or `TERM_PROGRAM` make programs
/// send graphics escapes our emulator does not speak. `env` may still set any of them.
pub const CALLER_TERMINAL_VARS: &[&str] = &[
    "TERM",
    "COLORTERM",
    "COLUMNS",
    "LINES",
    "TERMCAP",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "TERM_SESSION_ID",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "WINDOWID",
    "VTE_VERSION",
    "KITTY_WINDOW_ID",
    "WEZTERM_PANE",
    "ITERM_SESSION_ID",
    "WT_SESSION",
    "KONSOLE_VERSION",
];

/// A validated request to start a program in a new session. It travels to a session's holder
/// ([`crate::held`]) as JSON, without the sid and the recording, which stay with the daemon.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SpawnSpec {
    #[serde(skip)]
    pub sid: Option<SessionId>,
    /// Program and arguments; never empty.
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// What the environment starts from; [`CALLER_TERMINAL_VARS`] are removed from it.
    pub base_env: BaseEnv,
    /// Set last, over the base and [`TERMINAL_VARS`] (it may override `TERM`).
    pub env: Vec<(String, String)>,
    pub size: Size,
    /// Waits end at once when the program exits.
    pub detect_child_exit: bool,
    /// Show the pictures programs draw and answer their graphics queries
    /// ([`screenpilot_screen::Screen::set_images`]).
    #[serde(default)]
    pub images: bool,
    /// Write an asciicast v3 recording of the session here.
    #[serde(skip)]
    pub record: Option<Recording>,
}

impl SpawnSpec {
    /// `argv` in the temporary folder, with this process's environment, at 80x24, not recorded:
    /// the base that library users, tests and benchmarks change with `..`.
    pub fn new(argv: &[&str]) -> SpawnSpec {
        SpawnSpec {
            sid: None,
            argv: argv.iter().map(|a| (*a).to_owned()).collect(),
            cwd: std::env::temp_dir(),
            base_env: BaseEnv::Inherit,
            env: Vec::new(),
            size: Size::new(80, 24),
            detect_child_exit: false,
            images: false,
            record: None,
        }
    }
}

/// Where and how a session's recording is written.
#[derive(Debug, Clone)]
pub struct Recording {
    pub path: PathBuf,
    /// The permission bits a new file gets: the daemon creates it, but for the caller, so this is
    /// `0o666` less the caller's umask rather than less the daemon's.
    pub mode: u32,
    /// Replace an existing file (its permissions are kept, as a shell's `>` does); otherwise an
    /// existing file is refused.
    pub force: bool,
    /// Record the input sent to the program too (`i` events), not only its output.
    pub input: bool,
}

/// The three ways to say what to run.
pub enum Command<'a> {
    /// A command line, split like a shell would but without running one.
    Line(&'a str),
    /// A command line run by `sh -c`.
    Shell(&'a str),
    Argv(&'a [String]),
}

/// Turn what the caller said into an argv, with errors naming `cmd` or `argv`.
pub fn command_argv(command: Command<'_>) -> Result<Vec<String>> {
    let argv = match command {
        Command::Line(line) => shell_words::split(line).map_err(|e| {
            SessionError::invalid(
                "cmd",
                format!("cannot split {line:?} into words: {e} (check the quotes)"),
            )
        })?,
        Command::Shell(line) => vec!["/bin/sh".to_owned(), "-c".to_owned(), line.to_owned()],
        Command::Argv(argv) => argv.to_vec(),
    };
    let field = if matches!(command, Command::Argv(_)) {
        "argv"
    } else {
        "cmd"
    };
    match argv.first() {
        None => Err(SessionError::invalid(
            field,
            "no program given; e.g. cmd: \"bash\" or argv: [\"vim\", \"notes.txt\"]",
        )),
        Some(p) if p.is_empty() => Err(SessionError::invalid(field, "the program name is empty")),
        Some(_) if argv.iter().any(|a| a.contains('\0')) => {
            Err(SessionError::invalid(field, "contains a NUL byte"))
        }
        Some(_) => Ok(argv),
    }
}

/// Check environment entries: keys must be identifiers, nothing may hold a NUL byte.
pub fn check_env(env: &[(String, String)]) -> Result<()> {
    for (key, value) in env {
        let mut chars = key.chars();
        let ok = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(SessionError::invalid(
                "env",
                format!("key {key:?} is not an identifier ([A-Za-z_][A-Za-z0-9_]*)"),
            ));
        }
        if value.contains('\0') {
            return Err(SessionError::invalid(
                "env",
                format!("the value of {key} contains a NUL byte"),
            ));
        }
    }
    Ok(())
}

/// Check a base environment passed on from elsewhere (a caller's): any name a process can hold (not only
/// identifiers: `BASH_FUNC_f%%` is one), but no `=` in a name and no NUL anywhere. `field` names the
/// parameter in errors; values are never quoted.
pub fn check_base_env(vars: &[(String, String)], field: &'static str) -> Result<()> {
    for (key, value) in vars {
        if key.is_empty() || key.contains(['=', '\0']) {
            return Err(SessionError::invalid(
                field,
                format!("{key:?} is not a variable name (empty, or holds '=' or NUL)"),
            ));
        }
        if value.contains('\0') {
            return Err(SessionError::invalid(
                field,
                format!("the value of {key} contains a NUL byte"),
            ));
        }
    }
    Ok(())
}

/// Check the working directory: absolute, existing, a directory.
pub fn check_cwd(cwd: &std::path::Path) -> Result<()> {
    if !cwd.is_absolute() {
        return Err(SessionError::invalid(
            "cwd",
            format!("{} is not an absolute path", cwd.display()),
        ));
    }
    match std::fs::metadata(cwd) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(SessionError::invalid(
            "cwd",
            format!("{} is not a directory", cwd.display()),
        )),
        Err(e) => Err(SessionError::invalid(
            "cwd",
            format!("{} does not exist or cannot be read: {e}", cwd.display()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sid_rules() {
        assert!(SessionId::parse("a").is_ok());
        assert!(SessionId::parse("vim-1.x_y").is_ok());
        assert!(SessionId::parse(&"a".repeat(64)).is_ok());
        for bad in ["", "-a", ".a", "a b", "a/b", &"a".repeat(65), "é"] {
            let err = SessionId::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("sid:"), "{err}");
        }
    }

    #[test]
    fn generated_sids_are_valid() {
        for program in ["/usr/bin/vim", "python3.11", "-weird", "/", "über"] {
            let sid = SessionId::generate(program, 7);
            assert!(SessionId::parse(sid.as_str()).is_ok(), "{sid}");
        }
        assert_eq!(SessionId::generate("/usr/bin/vim", 3).as_str(), "vim-3");
    }

    #[test]
    fn commands_split_like_a_shell() {
        assert_eq!(
            command_argv(Command::Line("vim 'my file.txt'")).unwrap(),
            ["vim", "my file.txt"]
        );
        assert_eq!(
            command_argv(Command::Shell("ls | wc")).unwrap(),
            ["/bin/sh", "-c", "ls | wc"]
        );
        assert!(command_argv(Command::Line("vim 'open"))
            .unwrap_err()
            .to_string()
            .starts_with("cmd:"));
        assert!(command_argv(Command::Argv(&[]))
            .unwrap_err()
            .to_string()
            .starts_with("argv:"));
    }

    #[test]
    fn env_keys_must_be_identifiers() {
        assert!(check_env(&[("PATH_2".into(), "x".into())]).is_ok());
        assert!(check_env(&[("2X".into(), "x".into())]).is_err());
        assert!(check_env(&[("A-B".into(), "x".into())]).is_err());
    }

    #[test]
    fn a_passed_on_environment_takes_any_name_a_process_can_hold() {
        let ok = [
            ("BASH_FUNC_f%%".to_owned(), "() { :; }".to_owned()),
            ("a.b".to_owned(), String::new()),
        ];
        assert!(check_base_env(&ok, "caller_env").is_ok());
        for bad in [("A=B", "x"), ("", "x"), ("A", "x\0y")] {
            let vars = [(bad.0.to_owned(), bad.1.to_owned())];
            let err = check_base_env(&vars, "caller_env").unwrap_err().to_string();
            assert!(err.starts_with("caller_env:"), "{err}");
            assert!(!err.contains("x\0y"), "a value is never quoted: {err}");
        }
    }

    #[test]
    fn sizes_are_capped() {
        let limits = Limits::default();
        assert!(limits.check_size(Size::new(1000, 100), "size").is_ok());
        assert!(limits.check_size(Size::new(1001, 10), "size").is_err());
        assert!(limits.check_size(Size::new(400, 400), "size").is_err());
        assert!(limits.check_size(Size::new(0, 10), "size").is_err());
    }
}
