//! The command line's arguments: one verb per operation (clap types).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use screenpilot_screen::render::checked_font_px;

#[derive(Debug, Parser)]
#[command(
    name = "screenpilot",
    version,
    about = "Drive terminal programs and see what a person would see: live sessions in a per-user daemon, event-driven waits, screenshots.",
    after_help = "Example:\n  screenpilot spawn --sid sh -- bash\n  screenpilot line sh 'ls /'\n  screenpilot wait sh --regex 'usr'\n  screenpilot snapshot sh\n  screenpilot screenshot sh -o sh.png\n  screenpilot close sh"
)]
pub struct Cli {
    /// Print exactly one JSON object: the same fields the MCP tool returns.
    #[arg(long, global = true)]
    pub json: bool,
    /// Where the daemon is: local (default), ssh://[user@]host[:port], or exec:COMMAND (a command
    /// that runs `screenpilot dial-stdio` in a box, e.g. exec:docker exec -i box screenpilot
    /// dial-stdio); NAME=... names it. Repeat for several hosts (sids then read NAME/SID). Default:
    /// $SCREENPILOT_HOST.
    #[arg(long, global = true, value_name = "HOST")]
    pub host: Vec<String>,
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Debug, Subcommand)]
pub enum Verb {
    /// Start a program in a new session: spawn [--sid ID] [--size 120x40] -- PROGRAM ARGS...
    Spawn(SpawnArgs),
    /// List sessions.
    List,
    /// Is the program still running? Exit status 0 if so, 1 once it has ended.
    Alive { sid: String },
    /// End a session and every process in it.
    Close { sid: String },
    /// Resize a session's terminal: resize SID 120x40
    Resize { sid: String, size: String },
    /// Press keys: keys SID Down Down Enter | C-c | ctrl+s | M-x | text
    Keys {
        sid: String,
        /// Key tokens; put text that starts with '-' after `--`.
        #[arg(required = true, num_args = 1..)]
        keys: Vec<String>,
        /// Wait for the app to react and stay quiet this many ms, then print the screen.
        #[arg(long, value_name = "MS")]
        settle_ms: Option<u64>,
        /// With --settle-ms: print the screen with styles marked (see snapshot --styled).
        #[arg(long, requires = "settle_ms")]
        styled: bool,
        #[command(flatten)]
        until: UntilArgs,
    },
    /// Type text then press Enter (words are joined with spaces).
    Line {
        sid: String,
        /// The text; quote it, and put text that starts with '-' after `--`.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// Wait for the app to react and stay quiet this many ms, then print the screen.
        #[arg(long, value_name = "MS")]
        settle_ms: Option<u64>,
        /// With --settle-ms: print the screen with styles marked (see snapshot --styled).
        #[arg(long, requires = "settle_ms")]
        styled: bool,
        #[command(flatten)]
        until: UntilArgs,
    },
    /// Type text without Enter (words are joined with spaces).
    Type {
        sid: String,
        /// The text; quote it, and put text that starts with '-' after `--`.
        #[arg(required = true, num_args = 1..)]
        text: Vec<String>,
        /// Wait for the app to react and stay quiet this many ms, then print the screen.
        #[arg(long, value_name = "MS")]
        settle_ms: Option<u64>,
        /// With --settle-ms: print the screen with styles marked (see snapshot --styled).
        #[arg(long, requires = "settle_ms")]
        styled: bool,
        #[command(flatten)]
        until: UntilArgs,
    },
    /// Mouse event: mouse SID click --at 10,2 | --text OK; drag --at 1,1 --to 9,1; scroll --scroll-y 3
    Mouse(MouseArgs),
    /// Type a password, and Enter, into a program reading a hidden line (input=secret), from a
    /// variable or a file of yours; never shown, recorded or kept: secret SID --env VAR [--until-input]
    Secret(SecretArgs),
    /// Run a command line at a shell session's prompt; print its own output and exit with its status
    /// (needs the shell's OSC 133 marks: bash started by spawn has them): run SID -- make test
    Run(RunArgs),
    /// Print the screen (or its full state with --json).
    Snapshot(SnapshotArgs),
    /// Save a picture of the screen: screenshot SID -o screen.png|screen.svg
    Screenshot(ScreenshotArgs),
    /// Wait for the screen: exit status 0 when the condition held, 1 on timeout (or exit first).
    Wait(WaitArgs),
    /// Run a Textual app and drive it: textual APP [--actions JSON] [--query SEL]... [--screenshot];
    /// with --session NAME it stays open (later calls give --session without APP; --close stops it).
    Textual(TextualArgs),
    /// Desktop sessions (X11, or Wayland with --wayland): desktop start [--sid ID] [--size 1280x800] [--display :N] [--wayland] [-- PROGRAM ARGS]
    Desktop {
        #[command(subcommand)]
        action: DesktopVerb,
    },
    /// Act on a desktop element by its ref from snapshot (or ROLE "NAME"), no pixels:
    /// act SID e4 click | act SID e7 set --text Ada | act SID - clipboard
    Act(ActArgs),
    /// Computer-use actions on a desktop or terminal session, with a fresh screenshot:
    /// computer SID click 100 200 | type 'hi' | keypress CTRL c | scroll X Y 0 360 | drag 1,1 50,50 | '{"type": ...}' | '[...]'
    Computer(ComputerArgs),
    /// Show a session live in this terminal and type into it; detach with Ctrl-] then d (the program
    /// keeps running): attach SID [--read-only] [--resize]
    Attach(AttachArgs),
    /// Record a running session as asciicast v3, from its current screen: record SID start FILE.cast
    /// [--input] [--force]; record SID stop (the program keeps running)
    Record(RecordArgs),
    /// Run step files (TOML: spawn, input with until, expectations, goldens) and check what they
    /// expect: test FILE|DIR... [--update] [--junit FILE] [--report DIR]; exit status 1 if any failed
    Test(TestArgs),
    /// Write what was done in sessions since the last save-test as a step file that `test` runs
    /// again, each input with what it waited for: save-test FILE.toml [--sid SID]... [--force]
    SaveTest(SaveTestArgs),
    /// Play an asciicast v2 or v3 recording in this terminal with its timing: replay FILE.cast
    /// [--speed 4] [--idle-limit 1]; Ctrl-C stops it
    Replay(ReplayArgs),
    /// Draw an asciicast v2 or v3 recording as an animated GIF or a video (MP4, WebM: with ffmpeg):
    /// render FILE.cast -o OUT.gif [--font-px 16] [--theme dark] [--idle-limit 2] [--fps 30] [--speed 1]
    Render(RenderArgs),
    /// Show every session live in a browser: prints the page's URL (loopback, with its token after #);
    /// read-only unless --control; --stop stops the page
    Watch {
        /// Serve on this loopback IP:PORT (default: any free port on 127.0.0.1); refused when the page
        /// is already served elsewhere (--stop first to move it).
        #[arg(long, value_name = "IP:PORT", conflicts_with = "stop")]
        http: Option<String>,
        /// Let the person type and click through the page, not only look.
        #[arg(long, conflicts_with = "stop")]
        control: bool,
        /// Stop serving the page: open pages are disconnected and their tokens stop working.
        #[arg(long)]
        stop: bool,
    },
    /// Make screenpilot's MCP server available in an agent host: shows the change to its configuration
    /// first, asks when stdin is a terminal, and writes only screenpilot's entry (a backup beside each
    /// file): install claude|codex|gemini|cursor|vscode|windsurf|zed|pi [--profile P] [--dry-run] [--remove]
    Install(InstallArgs),
    /// Run any operation with JSON parameters: call spawn '{"cmd": "bash"}'
    Call { op: String, params: Option<String> },
    /// Every other operation is a verb of its name, with one flag per parameter:
    /// wait-for --sid sh --pattern 'ready'; NAME --help lists them
    #[command(external_subcommand)]
    Op(Vec<String>),
    /// Run the daemon in the foreground (no action), or: start, stop, status.
    Daemon {
        action: Option<DaemonAction>,
        /// status: answer once exactly N requests are running (e.g. 0: whatever a client gave up on
        /// was stopped); exit status 1 if not within --timeout-ms.
        #[arg(long, value_name = "N")]
        until_running: Option<usize>,
        /// With --until-running: the longest wait, in ms (at most 600000).
        #[arg(
            long,
            value_name = "MS",
            default_value_t = 30_000,
            requires = "until_running"
        )]
        timeout_ms: u64,
        /// stop: leave the sessions running, for the next daemon to take over (screens and all).
        #[arg(long, conflicts_with = "end_sessions")]
        keep_sessions: bool,
        /// stop: end every session (without either flag, stop refuses while sessions run, naming them).
        #[arg(long)]
        end_sessions: bool,
    },
    /// Connect stdin and stdout to this host's daemon (starting it if needed), for a client on
    /// another host: ssh HOST screenpilot dial-stdio, docker exec -i BOX screenpilot dial-stdio.
    /// With --watch, to its watch page instead (what `watch --host` forwards a browser to).
    DialStdio {
        #[arg(long)]
        watch: bool,
    },
    /// Serve MCP on stdio (for agents), or on loopback HTTP with --http 127.0.0.1:PORT.
    Mcp {
        /// Serve streamable HTTP on this loopback IP:PORT instead of stdio (port 0: any free port).
        #[arg(long, value_name = "IP:PORT")]
        http: Option<String>,
        /// Bearer token for --http, read from this file; default: a new one, printed to stderr and
        /// written to $SCREENPILOT_DIR/mcp-http.token.
        #[arg(long, value_name = "FILE", requires = "http")]
        token_file: Option<PathBuf>,
        /// Serve only the tools of these profiles, comma-separated: terminal, textual, desktop (the
        /// default: all three), classic (the seed's terminal tools: send_keys, wait_for, ...).
        #[arg(long, value_name = "PROFILES")]
        tools: Option<String>,
        /// What each tool lists as outputSchema: compact (the fields every answer has and the
        /// top-level types, cheap for clients that validate every result) or full (the exact schema).
        #[arg(long, value_enum, value_name = "SCHEMAS", default_value_t = crate::mcp::output_schemas::OutputSchemas::Compact)]
        output_schemas: crate::mcp::output_schemas::OutputSchemas,
    },
}

/// `install`: an agent host's configuration.
#[derive(Debug, Args)]
#[command(
    after_help = "Files (user scope): claude ~/.claude.json and ~/.claude/skills/screenpilot/SKILL.md; codex ~/.codex/config.toml and ~/.codex/AGENTS.md; gemini ~/.gemini/settings.json and ~/.gemini/GEMINI.md; cursor ~/.cursor/mcp.json; vscode ~/.config/Code/User/mcp.json; windsurf ~/.codeium/windsurf/mcp_config.json; zed ~/.config/zed/settings.json; pi ~/.pi/agent/mcp.json.\nExit status: 0 written, already so, or a dry run; 1 not confirmed; 2 an error (nothing written).\nExample:\n  screenpilot install claude --profile terminal --dry-run"
)]
pub struct InstallArgs {
    /// The agent host (not `--host`, which names where a daemon is).
    #[arg(value_enum, value_name = "HOST")]
    pub agent: crate::install::AgentHost,
    /// Serve only these tools: profiles as `mcp --tools` takes them (terminal, textual, desktop,
    /// classic; comma-separated). Default: the tools `mcp` serves without --tools.
    #[arg(long, value_name = "PROFILES", conflicts_with = "remove")]
    pub profile: Option<String>,
    /// Show what would change, and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Take out what install added (the file as it was before, when nothing else changed since).
    #[arg(long)]
    pub remove: bool,
    /// Write this file (in the host's format) instead of its user configuration, and nothing else:
    /// a project's .mcp.json (claude), .vscode/mcp.json (vscode), .cursor/mcp.json (cursor).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
#[command(
    after_help = "Keys while attached: Ctrl-] d detaches (the program keeps running); Ctrl-] Ctrl-] sends one Ctrl-] to the program.\nExit status: 0 after detaching; the program's own status if it ends while attached."
)]
pub struct AttachArgs {
    pub sid: String,
    /// Only watch: nothing typed here reaches the program (Ctrl-] d still detaches).
    #[arg(long)]
    pub read_only: bool,
    /// Type a password for the program's hidden-line prompt (input=secret) and leave: read here
    /// with echo off, typed with Enter, shown and kept nowhere.
    #[arg(long, conflicts_with = "read_only")]
    pub secret: bool,
    /// Resize the session to this terminal (and follow it when it is resized); by default the
    /// session keeps its size and this terminal shows the part around the cursor, or all of it.
    #[arg(long)]
    pub resize: bool,
}

#[derive(Debug, Args)]
pub struct RecordArgs {
    pub sid: String,
    pub action: RecordVerb,
    /// start: the file to write (asciicast v3).
    #[arg(required_if_eq("action", "start"))]
    pub file: Option<PathBuf>,
    /// start: record the input sent to the program too.
    #[arg(long)]
    pub input: bool,
    /// start: replace an existing file.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecordVerb {
    Start,
    Stop,
}

#[derive(Debug, Args)]
pub struct SaveTestArgs {
    /// The step file to write.
    pub file: PathBuf,
    /// Only this session's steps (repeat for more; default: every session's).
    #[arg(long = "sid", value_name = "SID")]
    pub sids: Vec<String>,
    /// The test's name (default: the file's).
    #[arg(long)]
    pub name: Option<String>,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    /// Step files, or directories of them (every *.toml below).
    #[arg(required = true, num_args = 1..)]
    pub paths: Vec<PathBuf>,
    /// Write goldens that are missing or differ from the screen, instead of failing.
    #[arg(long)]
    pub update: bool,
    /// Write a JUnit XML report here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write into this directory: each session's recording, and an HTML page per failed file (the
    /// steps, the screen after each, what failed).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// How many files run at once (default: the cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Let goldens lie outside their step file's folder (absolute paths, `..`).
    #[arg(long)]
    pub goldens_anywhere: bool,
}

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// An asciicast v2 or v3 file (`.cast`).
    pub file: PathBuf,
    /// Playback speed: 2 plays twice as fast.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Cut pauses longer than this many seconds to it (default: the file's idle_time_limit).
    #[arg(long, value_name = "SECS")]
    pub idle_limit: Option<f64>,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    /// An asciicast v2 or v3 file (`.cast`).
    pub file: PathBuf,
    /// The file to write: .gif, .mp4 (H.264) or .webm (VP9); video is made by ffmpeg.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Font size in pixels, 6 to 96 (16: 10x20 px cells).
    #[arg(long, value_name = "PX", default_value_t = 16.0)]
    pub font_px: f64,
    /// The colours the screen is drawn in.
    #[arg(long, value_enum, default_value_t = RenderTheme::Dark)]
    pub theme: RenderTheme,
    /// Cut pauses longer than this many seconds to it (default: the file's idle_time_limit, else 2).
    #[arg(long, value_name = "SECS")]
    pub idle_limit: Option<f64>,
    /// At most this many frames a second (a frame only when the screen changed); GIF up to 50,
    /// video up to 60.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f64,
    /// Playback speed: 2 is twice as fast.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
}

/// `render --theme`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RenderTheme {
    Dark,
    Light,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum DaemonAction {
    Run,
    Start,
    Stop,
    Status,
    /// The daemon's guard, which the daemon starts itself (see `guard.rs`).
    #[value(hide = true)]
    Guard,
}

/// After input, wait until a condition holds and print the screen: one call per step. Any of them
/// ends the wait; so does the program's end.
#[derive(Debug, Clone, Default, Args)]
pub struct UntilArgs {
    /// Until this regex matches the screen (^ and $ per line).
    #[arg(long, value_name = "RE", allow_hyphen_values = true)]
    pub until: Option<String>,
    /// Until any of these regexes matches (repeatable); prints which (held=any:N).
    #[arg(long, value_name = "RE", allow_hyphen_values = true)]
    pub until_any: Vec<String>,
    /// Until the program exits.
    #[arg(long)]
    pub until_exit: bool,
    /// Until the screen text changes.
    #[arg(long)]
    pub until_change: bool,
    /// Until anything visible changes (a highlight moving, the cursor).
    #[arg(long)]
    pub until_visual: bool,
    /// Until the screen changed and then stayed still this many ms.
    #[arg(long, value_name = "MS")]
    pub until_quiet: Option<u64>,
    /// Until the program waits for input (input=line, secret or keys, read from the kernel): for a
    /// prompt whose text you do not know.
    #[arg(long)]
    pub until_input: bool,
    /// Answer as soon as the condition holds, without waiting for the output to pause (30 ms).
    #[arg(long)]
    pub no_settle: bool,
    /// Limit of each --until wait in ms (default 10000).
    #[arg(long = "until-timeout-ms", value_name = "MS")]
    pub until_timeout_ms: Option<u64>,
    /// More steps after this one, as JSON: '[{"keys": [":wq", "Enter"], "until": {"exit": true}}]';
    /// each is sent once the one before held (fields as in the MCP tool send).
    #[arg(long, value_name = "JSON")]
    pub steps: Option<String>,
    /// Print only what changed since the CLI last printed this session's screen (rows as ROW|text,
    /// after scrolled=N when the old rows moved up); the reader is $SCREENPILOT_READER or "cli".
    #[arg(long)]
    pub delta: bool,
    /// Print only the outcome (held=..., the program's exit), not the screen.
    #[arg(long, conflicts_with = "delta")]
    pub no_screen: bool,
}

impl UntilArgs {
    /// Any condition was given.
    pub fn given(&self) -> bool {
        self.steps.is_some()
            || self.until.is_some()
            || !self.until_any.is_empty()
            || self.until_exit
            || self.until_change
            || self.until_visual
            || self.until_input
            || self.until_quiet.is_some()
    }
}

/// Where the secret comes from: exactly one of --env and --file.
#[derive(Debug, Args)]
#[group(required = true, multiple = false, id = "source")]
pub struct SecretArgs {
    pub sid: String,
    /// A variable of your environment holding it (read here, never sent to a model).
    #[arg(long, value_name = "VAR", group = "source")]
    pub env: Option<String>,
    /// A regular file of yours, readable only by you (chmod 600), holding it on one line.
    #[arg(long, value_name = "PATH", group = "source")]
    pub file: Option<String>,
    #[command(flatten)]
    pub until: UntilArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    pub sid: String,
    /// Instead of a command: an earlier run's id, to wait for it again or read its output.
    #[arg(long)]
    pub id: Option<u64>,
    /// The first line of output to print (0-based), to read what a long output cut.
    #[arg(long)]
    pub offset: Option<usize>,
    /// The most lines of output to print (default 60: its start and end).
    #[arg(long, value_name = "N")]
    pub max_lines: Option<usize>,
    /// Limit in ms (default 30000); a command still running then prints its output so far.
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
    /// The command line (one word, or several joined with spaces).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub command: Vec<String>,
}

#[derive(Debug, Args)]
pub struct SpawnArgs {
    #[arg(long)]
    pub sid: Option<String>,
    /// Working directory (default: here).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Environment for the program, K=V, over this shell's; repeatable.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Start from an empty environment instead of this shell's: only TERM, COLORTERM and --env.
    #[arg(long)]
    pub clean_env: bool,
    /// Terminal size, COLSxROWS (default 80x24).
    #[arg(long, value_name = "COLSxROWS")]
    pub size: Option<String>,
    /// Waits end at once when the program exits.
    #[arg(long)]
    pub detect_child_exit: bool,
    /// Show the pictures programs draw (kitty graphics, iTerm2 inline images, sixel) and answer
    /// their graphics queries; without it programs get a text terminal's answers.
    #[arg(long)]
    pub images: bool,
    /// Run the words as one command line with sh -c.
    #[arg(long)]
    pub shell: bool,
    /// Record the session as an asciicast v3 file (play it with `screenpilot replay FILE`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// With --record: record the input sent to the program too.
    #[arg(long, requires = "record")]
    pub record_input: bool,
    /// Replace an existing --record file.
    #[arg(long, requires = "record")]
    pub force: bool,
    #[command(flatten)]
    pub until: UntilArgs,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true, num_args = 1..)]
    pub program: Vec<String>,
}

#[derive(Debug, Args)]
pub struct MouseArgs {
    pub sid: String,
    /// Wait for the app to react and stay quiet this many ms, then print the screen.
    #[arg(long, value_name = "MS")]
    pub settle_ms: Option<u64>,
    /// With --settle-ms: print the screen with styles marked (see snapshot --styled).
    #[arg(long)]
    pub styled: bool,
    /// click, double_click, move, down, up, drag, scroll
    pub action: String,
    /// Target cell COL,ROW (0-based).
    #[arg(long, value_name = "COL,ROW")]
    pub at: Option<String>,
    /// Target the centre of this visible text.
    #[arg(long)]
    pub text: Option<String>,
    /// Which occurrence of --text (0-based).
    #[arg(long)]
    pub nth: Option<usize>,
    /// left (default), middle, right, back, forward
    #[arg(long)]
    pub button: Option<String>,
    /// drag: release at COL,ROW.
    #[arg(long, value_name = "COL,ROW")]
    pub to: Option<String>,
    #[arg(long, allow_hyphen_values = true)]
    pub scroll_y: Option<i32>,
    #[arg(long, allow_hyphen_values = true)]
    pub scroll_x: Option<i32>,
    /// shift, alt, ctrl; repeatable.
    #[arg(long = "mod")]
    pub modifiers: Vec<String>,
    #[command(flatten)]
    pub until: UntilArgs,
}

#[derive(Debug, Args)]
pub struct SnapshotArgs {
    pub sid: String,
    /// Include the cells, as runs of one style per row (with --json).
    #[arg(long)]
    pub cells: bool,
    /// Mark styles in the text: [reverse]Banana[/], [bold red]x[/]; [[ is a literal [.
    #[arg(long)]
    pub styled: bool,
    /// Include up to N lines of scrollback.
    #[arg(long, value_name = "N")]
    pub scrollback: Option<usize>,
    /// Print only what changed since the CLI last printed this session's screen (see --delta on keys).
    #[arg(long)]
    pub delta: bool,
    /// Desktops: only the part under this element's ref (a window, a list).
    #[arg(long = "ref", value_name = "REF")]
    pub part: Option<String>,
    /// Desktops: read every window's text from its pixels too (OCR), not only the windows without
    /// an accessibility tree
    #[arg(long)]
    pub ocr: bool,
}

/// `act`: an element of a desktop, by ref.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  screenpilot act d e4 click\n  screenpilot act d 'button \"OK\"' click\n  screenpilot act d e7 set --text 'Ada'\n  screenpilot act d e2 move --to 100,80\n  screenpilot act d - clipboard --text copied; screenpilot act d - clipboard\n  screenpilot act d --appears-role dialog --appears-name 'Save'"
)]
pub struct ActArgs {
    pub sid: String,
    /// The element: a ref from snapshot (e12) or ROLE "NAME"; `-` for none (clipboard, waits).
    pub target: Option<String>,
    /// click, double_click, focus, set, type, select, toggle, scroll; on a window: focus, raise,
    /// minimize, close, move, resize; clipboard, primary (read, or set with --text).
    pub action: Option<String>,
    #[arg(long)]
    pub text: Option<String>,
    /// move: X,Y; resize: W,H
    #[arg(long, value_name = "A,B")]
    pub to: Option<String>,
    /// Then wait until an element of this role (and --appears-name, --appears-state) is shown.
    #[arg(long, value_name = "ROLE")]
    pub appears_role: Option<String>,
    #[arg(long, value_name = "REGEX")]
    pub appears_name: Option<String>,
    #[arg(long, value_name = "STATE")]
    pub appears_state: Option<String>,
    /// Then wait until no element matches this role (and --gone-name, --gone-state).
    #[arg(long, value_name = "ROLE")]
    pub gone_role: Option<String>,
    #[arg(long, value_name = "REGEX")]
    pub gone_name: Option<String>,
    #[arg(long, value_name = "STATE")]
    pub gone_state: Option<String>,
    /// Then wait until this element's name, value or states change.
    #[arg(long, value_name = "REF")]
    pub changed: Option<String>,
    #[arg(long, value_name = "MS")]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Args)]
pub struct ScreenshotArgs {
    pub sid: String,
    /// Desktops: box and tag each element of the latest snapshot with its ref ("set of marks").
    #[arg(long)]
    pub marks: bool,
    /// Output file; .svg for SVG, anything else PNG. Default SID.png (with --json and no -o: base64 in the JSON).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Font size in pixels (default 16).
    #[arg(long, value_parser = finite_scale)]
    pub scale: Option<f64>,
    /// dark (default) or light.
    #[arg(long)]
    pub theme: Option<String>,
    /// Draw a window frame with the title.
    #[arg(long)]
    pub frame: bool,
    /// Desktops: the screen at its own size (default: scaled to at most 1568 px and 1.15 MP).
    #[arg(long)]
    pub full_size: bool,
    /// Desktops: the longest side of the picture in pixels.
    #[arg(long, value_name = "PX")]
    pub max_long_edge: Option<u32>,
}

#[derive(Debug, Args)]
pub struct WaitArgs {
    pub sid: String,
    /// Wait until this regex matches (multi-line: ^ and $ work per line).
    #[arg(long, group = "what", allow_hyphen_values = true)]
    pub regex: Option<String>,
    /// Wait until any of these regexes matches; prints which (index).
    #[arg(long, group = "what", num_args = 1.., value_name = "RE")]
    pub any: Option<Vec<String>>,
    /// Wait until the text changes from HASH (default: now).
    #[arg(long, group = "what", num_args = 0..=1, value_name = "HASH", default_missing_value = "")]
    pub change: Option<String>,
    /// Wait until anything visible changes from HASH (default: now).
    #[arg(long, group = "what", num_args = 0..=1, value_name = "HASH", default_missing_value = "")]
    pub visual_change: Option<String>,
    /// Wait for --marker or a quiet screen (--stable-ms).
    #[arg(long, group = "what")]
    pub ready: bool,
    /// Wait until the program exits.
    #[arg(long, group = "what")]
    pub exit: bool,
    #[arg(long, allow_hyphen_values = true)]
    pub marker: Option<String>,
    #[arg(long)]
    pub stable_ms: Option<u64>,
    #[arg(long)]
    pub timeout_ms: Option<u64>,
    /// Search the scrollback too (--regex, --any).
    #[arg(long)]
    pub scrollback: bool,
    /// Print the screen with styles marked (see snapshot --styled).
    #[arg(long)]
    pub styled: bool,
    /// Wait for these conditions instead (--until RE, --until-any, --until-exit, --until-change,
    /// --until-visual, --until-quiet MS; --timeout-ms for the limit): prints held=... and the screen.
    #[command(flatten)]
    pub until: UntilArgs,
}

#[derive(Debug, Args)]
pub struct TextualArgs {
    /// The Python file defining the app; omit it with --session to act on an open session.
    pub app: Option<PathBuf>,
    /// Keep the app running as this session: opened with APP, acted on without it.
    #[arg(long)]
    pub session: Option<String>,
    /// Actions as a JSON list, e.g. '[{"press": "tab"}, {"click": "#inc"}, {"pause": 0.5}]'.
    #[arg(long, value_name = "JSON")]
    pub actions: Option<String>,
    /// Print the widget tree of the active screen.
    #[arg(long)]
    pub tree: bool,
    /// Print the state of the widgets matching this CSS selector; repeatable.
    #[arg(long = "query", value_name = "SELECTOR")]
    pub query: Vec<String>,
    /// Write an SVG and a PNG of the final screen beside the app file.
    #[arg(long)]
    pub screenshot: bool,
    /// Initial terminal size, WIDTHxHEIGHT (default 80x25).
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
    /// The Python interpreter (default python3).
    #[arg(long)]
    pub python: Option<String>,
    /// Limit for the whole run in milliseconds (default 120000).
    #[arg(long, value_name = "MS")]
    pub timeout: Option<u64>,
    /// With --session: stop the app and close the session (after any actions).
    #[arg(long)]
    pub close: bool,
}

#[derive(Debug, Subcommand)]
pub enum DesktopVerb {
    /// Start a private Xvfb (or attach to a display) and optionally a program on it.
    Start(DesktopStartArgs),
}

#[derive(Debug, Args)]
pub struct DesktopStartArgs {
    #[arg(long)]
    pub sid: Option<String>,
    /// Screen size, WIDTHxHEIGHT (default 1280x800).
    #[arg(long, value_name = "WxH")]
    pub size: Option<String>,
    /// Attach to this existing display (e.g. :0, or wayland-1 with --wayland) instead of starting
    /// one; close leaves it running.
    #[arg(long, value_name = ":N")]
    pub display: Option<String>,
    /// A Wayland desktop: a private headless sway (as an unprivileged user when run as root), or
    /// with --display the wlroots compositor of that WAYLAND_DISPLAY.
    #[arg(long)]
    pub wayland: bool,
    /// Window manager: auto (default), none, or a program name.
    #[arg(long, value_name = "WM")]
    pub wm: Option<String>,
    /// Working directory of the program (default: here).
    #[arg(long)]
    pub cwd: Option<PathBuf>,
    /// Environment for the program, K=V, over this shell's; repeatable.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Start the program from an empty environment (plus DISPLAY, XAUTHORITY and --env).
    #[arg(long)]
    pub clean_env: bool,
    /// The program to run on the display, and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub program: Vec<String>,
}

#[derive(Debug, Args)]
pub struct ComputerArgs {
    pub sid: String,
    /// An action: screenshot | click X Y [BUTTON] | double_click X Y | triple_click X Y | move X Y |
    /// scroll X Y SCROLL_X SCROLL_Y | type TEXT... | keypress KEY... | drag X,Y X,Y... | wait [MS] |
    /// cursor_position; or one JSON action object, or a JSON list of them.
    #[arg(required = true, allow_negative_numbers = true, num_args = 1..)]
    pub action: Vec<String>,
    /// Save the screenshot here (default SID.png; with --json and no -o it stays base64 in the JSON).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Limit for each step in milliseconds (default 30000).
    #[arg(long, value_name = "MS")]
    pub step_timeout_ms: Option<u64>,
    /// Desktops: the screenshot's longest side in pixels (default: the session's, 1568).
    #[arg(long, value_name = "PX")]
    pub max_long_edge: Option<u32>,
    /// Desktops: the screenshot at the screen's own size (coordinates are then screen pixels).
    #[arg(long)]
    pub full_size: bool,
}

/// `--scale`: a font size the renderer draws, refused here to name the flag (the screenshot
/// operation refuses the same for `font_px`).
fn finite_scale(text: &str) -> Result<f64, String> {
    let scale = text
        .trim()
        .parse::<f64>()
        .map_err(|_| format!("{text:?} is not a number of pixels"))?;
    checked_font_px(scale)
        .map(|_| scale)
        .map_err(|e| e.to_string())
}
