//! One live session: a program on a pty, the screen its output draws, and the input sent to it.
//!
//! A pump task reads the pty, feeds the emulator, answers terminal queries and announces every screen
//! update on a watch channel. Waits subscribe to that channel, so they wake on output itself.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use screenpilot_screen::{
    highlights, label_text, styled_text, CellRuns, Cursor, Highlight, InputModes, PictureInfo,
    Regions, Screen, Size,
};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::error::{Result, SessionError};
use crate::process::{self, ExitInfo};
use crate::readiness::Input;
use crate::record::{self, Recorder};
use crate::shell::{CommandRecord, Shell, ShellState};
use crate::spec::{Limits, Recording, SessionId, SpawnSpec};
use crate::views::{Seen, Views};

/// What `list` shows about a session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionInfo {
    pub sid: String,
    /// "terminal" for pty sessions, unless the owner labelled it (e.g. "textual").
    pub kind: String,
    pub pid: i32,
    /// The program and its arguments.
    pub cmd: Vec<String>,
    pub cwd: PathBuf,
    pub cols: u16,
    pub rows: u16,
    /// Seconds since the Unix epoch.
    pub started: u64,
    pub alive: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub detect_child_exit: bool,
    pub title: Option<String>,
    /// Seconds since the last request touched this session.
    pub idle_secs: u64,
    /// People watching it now (`screenpilot attach`, the watch page).
    #[serde(default)]
    pub viewers: Vec<ViewerInfo>,
    /// The asciicast file being recorded, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<String>,
    /// What it runs now: its processes and the ports they listen on (read by `list`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running: Option<crate::running::Running>,
    /// On close: processes that had left its process group (setsid, a double fork), ended too.
    /// Never in a `list` answer: not in its schema.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(skip)]
    pub escaped: Vec<String>,
}

/// Someone watching a session.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ViewerInfo {
    /// "attach" (a terminal) or "watch" (the web page).
    pub how: String,
    /// They can look but not type.
    pub read_only: bool,
    /// Seconds since they started watching.
    pub secs: u64,
}

/// Options for reading the screen.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Include up to this many lines of history above the screen.
    pub scrollback: Option<usize>,
    /// Include the cells, as runs of one style per row.
    pub cells: bool,
    /// Include the text with its styles marked (`styled`).
    pub styled: bool,
    /// Include the highlighted spans (`highlights`).
    pub highlights: bool,
}

/// What a person would see, at one moment.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScreenState {
    pub alive: bool,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub exit_code: Option<i32>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub signal: Option<i32>,
    pub alt_screen: bool,
    /// The screen, one line per row, no trailing spaces.
    pub text: String,
    /// xxh3 of `text`, 16 hex digits.
    pub hash: String,
    /// xxh3 of text, colours, attributes, cursor and title, 16 hex digits.
    pub visual_hash: String,
    pub cursor: Cursor,
    pub title: Option<String>,
    pub modes: InputModes,
    pub cols: u16,
    pub rows: u16,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scrollback: Option<String>,
    /// With `scrollback`: rows of history older than those given (ask for more to read them).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scrollback_left: Option<usize>,
    /// The text with styles marked, e.g. `[reverse]Banana[/]` (markup in screenpilot_screen::styled).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub styled: Option<String>,
    /// Spans a person reads as selected or focused: `{row, col, text, why, style}`.
    // Listed as plain objects, like `cells`: tools carrying a screen are many.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[schemars(with = "Option<Vec<serde_json::Map<String, serde_json::Value>>>")]
    pub highlights: Option<Vec<Highlight>>,
    /// The cells (`as_json`) as runs of one style per row: `{styles, rows: [[[col, text, style]]], cursor}`.
    // Listed as a plain object: its full schema would cost every tool listing several KB.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub cells: Option<CellRuns>,
    /// What the program waits for (line, secret, keys, none, unknown), read from the kernel.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub input: Option<Input>,
    /// Pictures on the screen (sessions spawned with images), each labelled `[image N ...]` in `text`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    #[schemars(with = "Option<Vec<serde_json::Map<String, serde_json::Value>>>")]
    pub images: Vec<PictureInfo>,
    /// Why pictures were refused, newest last.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub image_notes: Vec<String>,
}

/// Format a hash the way every result shows it.
pub fn hash_hex(hash: u64) -> String {
    format!("{hash:016x}")
}

/// Parse a hash given back by a client; `field` names the argument in errors.
pub fn parse_hash(text: &str, field: &'static str) -> Result<u64> {
    u64::from_str_radix(text.trim(), 16).map_err(|_| {
        SessionError::invalid(
            field,
            format!("{text:?} is not a hash from a snapshot (16 hex digits)"),
        )
    })
}

pub struct Session {
    pub sid: SessionId,
    pub pid: i32,
    argv: Vec<String>,
    cwd: PathBuf,
    started: SystemTime,
    pub detect_child_exit: bool,
    screen: Mutex<Screen>,
    writer: tokio::sync::Mutex<pty_process::OwnedWritePty>,
    /// Bumped on every screen update and when the program's end is known.
    updates: watch::Sender<u64>,
    exit: watch::Receiver<Option<ExitInfo>>,
    /// The program has ended and its last output has been read.
    finished: watch::Sender<bool>,
    last_used: Mutex<Instant>,
    recorder: Mutex<Option<Recorder>>,
    pump: Mutex<Option<JoinHandle<()>>>,
    closed: std::sync::atomic::AtomicBool,
    /// Waits in progress: a session someone is waiting on is not idle.
    waiters: std::sync::atomic::AtomicUsize,
    /// The pump is reading the pty, or holds output it read that is not on the screen yet: a
    /// screen read now may lack what the program wrote ([`PumpedReader`]).
    output_in_hand: std::sync::atomic::AtomicBool,
    /// The output generation at which readiness last saw single keys read on a blank main screen
    /// (`u64::MAX`: not seen); see [`Session::ready_for_input`].
    blank_keys_seen: std::sync::atomic::AtomicU64,
    limits: Arc<Limits>,
    /// What `list` calls it; "terminal" unless set.
    kind: std::sync::OnceLock<&'static str>,
    /// People watching, by a number given when they came.
    viewers: Mutex<Vec<(u64, &'static str, bool, Instant)>>,
    /// The shell's marks and the commands `run` captures.
    shell: Mutex<Shell>,
    /// What each reader last saw, for screens sent as what changed.
    views: Mutex<Views>,
    /// The program should mark its prompts (a bash we gave the integration, fish).
    marks_expected: bool,
    /// The pty as the kernel describes it: what the program in front waits for.
    terminal: Option<crate::readiness::Terminal>,
    /// The holder that keeps the pty and the program when this daemon is gone ([`crate::held`]);
    /// `None` for a session this process holds itself.
    held: Option<crate::held::Link>,
    /// Last, so it drops after the rest: gives the freed memory back (see [`ReturnMemory`]).
    _return_memory: ReturnMemory,
}

/// Gives the memory a closed session freed back to the system. glibc keeps freed memory in its
/// arenas for reuse, so a daemon that once held many full histories would stay that large after
/// they were all closed; `malloc_trim` returns the whole free pages (it walks every arena: fine when
/// a session goes, not on a hot path).
struct ReturnMemory;

impl Drop for ReturnMemory {
    fn drop(&mut self) {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free memory held by the allocator; it takes no pointers.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("sid", &self.sid)
            .field("pid", &self.pid)
            .field("argv", &self.argv)
            .finish()
    }
}

/// Lock a std mutex, recovering the data if a panicking thread poisoned it: the screen stays usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a session is made of, before its pump starts.
struct Parts {
    sid: SessionId,
    pid: i32,
    argv: Vec<String>,
    cwd: PathBuf,
    started: SystemTime,
    detect_child_exit: bool,
    screen: Screen,
    shell: Shell,
    marks_expected: bool,
    recorder: Option<Recorder>,
    held: Option<crate::held::Link>,
}

/// The `'static` name of a kind read back from a holder: the few kinds there are, or a leaked copy.
fn leak_kind(kind: &str) -> &'static str {
    match kind {
        "terminal" => "terminal",
        "textual" => "textual",
        other => Box::leak(other.to_owned().into_boxed_str()),
    }
}

impl Session {
    /// Start the program and the pump that watches it: on a pty of this process, or, given `hold`,
    /// of a holder of its own that outlives this process ([`crate::held`]).
    pub fn start(
        sid: SessionId,
        spec: SpawnSpec,
        limits: Arc<Limits>,
        hold: Option<&crate::held::HoldConfig>,
    ) -> Result<Arc<Session>> {
        let recorder = match &spec.record {
            Some(target) => Some(Recorder::create(target, spec.size, &spec.argv)?),
            None => None,
        };
        let token = crate::shell::new_token();
        let shell = Shell::for_spec(&spec, token);
        let marks_expected = crate::shell::marks_expected(&spec);
        let (pty, pid, exit, held) = match hold {
            None => {
                let spawned = process::spawn(&spec, token)?;
                (spawned.pty, spawned.pid, spawned.exit, None)
            }
            Some(config) => {
                let notes = crate::held::Notes {
                    sid: sid.to_string(),
                    argv: spec.argv.clone(),
                    cwd: spec.cwd.clone(),
                    kind: None,
                    signed: shell.token(),
                    marks_expected,
                    detect_child_exit: spec.detect_child_exit,
                    images: spec.images,
                    recording: spec.record.as_ref().map(|r| (r.path.clone(), r.input)),
                };
                let held = crate::held::start(config, &spec, token, &notes, &limits)?;
                let crate::held::Opened {
                    link,
                    exit,
                    master,
                    hello,
                    ..
                } = crate::held::Link::open(held)
                    .map_err(|e| SessionError::Io(format!("the session's holder: {e}")))?;
                let pty = process::async_master(master)
                    .map_err(|e| SessionError::Io(format!("the session's pty: {e}")))?;
                (pty, hello.pid, exit, Some(link))
            }
        };
        let parts = Parts {
            sid,
            pid,
            argv: spec.argv,
            cwd: spec.cwd,
            started: SystemTime::now(),
            detect_child_exit: spec.detect_child_exit,
            screen: {
                let mut screen = Screen::new(spec.size, limits.scrollback_lines);
                screen.set_images(spec.images);
                screen
            },
            shell,
            marks_expected,
            recorder,
            held,
        };
        Ok(Session::assemble(parts, pty, exit, limits))
    }

    /// Take over a session a daemon before this one left with its holder: its screen is rebuilt from
    /// what the holder kept, and it goes on as it was (its recording too).
    pub fn adopt(
        held: crate::held::Held,
        limits: Arc<Limits>,
    ) -> std::result::Result<Arc<Session>, String> {
        let crate::held::Opened {
            link,
            exit,
            master,
            hello,
            replay,
        } = crate::held::Link::open(held).map_err(|e| format!("the holder's link: {e}"))?;
        let notes: crate::held::Notes =
            serde_json::from_value(hello.notes.clone()).map_err(|e| {
                format!(
                    "holder {}: what it kept of the session does not read: {e}",
                    hello.holder
                )
            })?;
        let sid =
            SessionId::parse(&notes.sid).map_err(|e| format!("holder {}: {e}", hello.holder))?;
        let size = {
            use std::os::fd::AsFd;
            crate::held::pty_size(master.as_fd()).unwrap_or(Size::new(80, 24))
        };
        let pty =
            process::async_master(master).map_err(|e| format!("session '{sid}': its pty: {e}"))?;
        let mut screen = Screen::new(size, limits.scrollback_lines);
        screen.set_images(notes.images);
        // Queries in the replay were answered when they were new.
        let _ = screen.feed(&replay);
        let mut shell = Shell::signed(notes.signed);
        shell.absorb(&replay, size);
        let recorder = notes.recording.as_ref().and_then(|(path, input)| {
            crate::record::Recorder::resume(path, *input)
                .map_err(|e| {
                    eprintln!("screenpilot daemon: session '{sid}' no longer records: {e}")
                })
                .ok()
        });
        let parts = Parts {
            sid,
            pid: hello.pid,
            argv: notes.argv.clone(),
            cwd: notes.cwd.clone(),
            started: SystemTime::UNIX_EPOCH + Duration::from_secs(hello.started),
            detect_child_exit: notes.detect_child_exit,
            screen,
            shell,
            marks_expected: notes.marks_expected,
            recorder,
            held: Some(link),
        };
        let session = Session::assemble(parts, pty, exit, limits);
        if let Some(kind) = notes.kind.as_deref() {
            session.set_kind(leak_kind(kind));
        }
        Ok(session)
    }

    fn assemble(
        parts: Parts,
        pty: pty_process::Pty,
        exit: watch::Receiver<Option<ExitInfo>>,
        limits: Arc<Limits>,
    ) -> Arc<Session> {
        let terminal = {
            use std::os::fd::AsFd;
            crate::readiness::Terminal::new(pty.as_fd(), parts.pid).ok()
        };
        let (reader, writer) = pty.into_split();
        let session = Arc::new(Session {
            sid: parts.sid,
            pid: parts.pid,
            argv: parts.argv,
            cwd: parts.cwd,
            started: parts.started,
            detect_child_exit: parts.detect_child_exit,
            screen: Mutex::new(parts.screen),
            writer: tokio::sync::Mutex::new(writer),
            updates: watch::Sender::new(0),
            exit: exit.clone(),
            finished: watch::Sender::new(false),
            last_used: Mutex::new(Instant::now()),
            recorder: Mutex::new(parts.recorder),
            pump: Mutex::new(None),
            closed: std::sync::atomic::AtomicBool::new(false),
            kind: std::sync::OnceLock::new(),
            waiters: std::sync::atomic::AtomicUsize::new(0),
            output_in_hand: std::sync::atomic::AtomicBool::new(false),
            blank_keys_seen: std::sync::atomic::AtomicU64::new(u64::MAX),
            limits,
            viewers: Mutex::new(Vec::new()),
            shell: Mutex::new(parts.shell),
            views: Mutex::new(Views::default()),
            marks_expected: parts.marks_expected,
            terminal,
            held: parts.held,
            _return_memory: ReturnMemory,
        });
        let handle = tokio::spawn(pump(session.clone(), reader, exit));
        *lock(&session.pump) = Some(handle);
        session
    }

    /// What a holder keeps for the next daemon: what the session is now.
    fn notes(&self) -> crate::held::Notes {
        let recording = lock(&self.recorder)
            .as_ref()
            .map(|r| (r.path().to_owned(), r.records_input()));
        crate::held::Notes {
            sid: self.sid.to_string(),
            argv: self.argv.clone(),
            cwd: self.cwd.clone(),
            kind: self.kind.get().map(|k| (*k).to_owned()),
            signed: lock(&self.shell).token(),
            marks_expected: self.marks_expected,
            detect_child_exit: self.detect_child_exit,
            images: lock(&self.screen).images_enabled(),
            recording,
        }
    }

    /// Tell the holder, if any, what the session is now.
    fn tell_holder(&self) {
        if let Some(link) = &self.held {
            link.notes(&self.notes());
        }
    }

    /// Whether a holder keeps this session's program, so it outlives this process.
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }

    /// The session is over for good (closed, or its sid taken by a new one): its holder, if any,
    /// ends what is left of it and exits.
    pub async fn release(&self) {
        if let Some(link) = &self.held {
            link.end().await;
        }
    }

    /// Apply program output to the screen and answer any terminal queries in it.
    async fn absorb(&self, bytes: &[u8]) {
        let (replies, size) = {
            let mut screen = lock(&self.screen);
            if let Some(recorder) = lock(&self.recorder).as_mut() {
                recorder.output(bytes);
            }
            let replies = screen.feed(bytes);
            if let Some(link) = &self.held {
                link.output(bytes, &screen);
            }
            (replies, screen.size())
        };
        lock(&self.shell).absorb(bytes, size);
        self.answer(&replies).await;
        self.updates.send_modify(|g| *g += 1);
    }

    async fn answer(&self, replies: &[u8]) {
        if replies.is_empty() {
            return;
        }
        let mut writer = self.writer.lock().await;
        // A program that never reads its input must not stall the pump.
        let _ = tokio::time::timeout(self.limits.write_timeout, writer.write_all(replies)).await;
    }

    fn touch(&self) {
        *lock(&self.last_used) = Instant::now();
    }

    /// How long the session has existed.
    pub fn age(&self) -> Duration {
        self.started.elapsed().unwrap_or_default()
    }

    /// How long since anyone used the session; zero while a wait is in progress or a person is
    /// attached to it.
    pub fn idle_for(&self) -> Duration {
        if self.waiters.load(std::sync::atomic::Ordering::Acquire) > 0
            || lock(&self.viewers).iter().any(|v| v.1 == "attach")
        {
            return Duration::ZERO;
        }
        lock(&self.last_used).elapsed()
    }

    /// Mark a wait in progress until the guard is dropped.
    pub fn waiting(&self) -> WaitGuard<'_> {
        self.touch();
        self.waiters
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        WaitGuard(self)
    }

    pub fn exit_info(&self) -> Option<ExitInfo> {
        *self.exit.borrow()
    }

    pub fn alive(&self) -> bool {
        self.exit_info().is_none()
    }

    /// The program has ended and all it wrote has reached the screen.
    pub fn finished(&self) -> bool {
        *self.finished.borrow()
    }

    /// A receiver that wakes on every screen update and on the program's end.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.updates.subscribe()
    }

    /// Run `f` with the screen locked. Keep `f` short: the pump waits for the lock.
    pub fn with_screen<R>(&self, f: impl FnOnce(&mut Screen) -> R) -> R {
        f(&mut lock(&self.screen))
    }

    /// Count a person watching (`how`: "attach" or "watch") until the guard is dropped; `list` shows
    /// them. An attached person keeps the session from closing as idle.
    pub fn add_viewer(self: &Arc<Self>, how: &'static str, read_only: bool) -> ViewerGuard {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock(&self.viewers).push((id, how, read_only, Instant::now()));
        ViewerGuard {
            session: self.clone(),
            id,
        }
    }

    /// The people watching now.
    pub fn viewers(&self) -> Vec<ViewerInfo> {
        lock(&self.viewers)
            .iter()
            .map(|&(_, how, read_only, since)| ViewerInfo {
                how: how.to_owned(),
                read_only,
                secs: since.elapsed().as_secs(),
            })
            .collect()
    }

    /// Label the session for `list` (once; e.g. "textual" for a Textual app on the pty).
    pub fn set_kind(&self, kind: &'static str) {
        if self.kind.set(kind).is_ok() {
            self.tell_holder();
        }
    }

    pub fn kind(&self) -> &'static str {
        self.kind.get().copied().unwrap_or("terminal")
    }

    pub fn info(&self) -> SessionInfo {
        let exit = self.exit_info();
        let (size, title) = self.with_screen(|s| (s.size(), s.title().map(str::to_owned)));
        SessionInfo {
            sid: self.sid.to_string(),
            kind: self.kind().to_owned(),
            pid: self.pid,
            cmd: self.argv.clone(),
            cwd: self.cwd.clone(),
            cols: size.cols,
            rows: size.rows,
            started: self
                .started
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            alive: exit.is_none(),
            exit_code: exit.and_then(|e| e.exit_code),
            signal: exit.and_then(|e| e.signal),
            detect_child_exit: self.detect_child_exit,
            title,
            idle_secs: self.idle_for().as_secs(),
            viewers: self.viewers(),
            recording: self
                .recording()
                .map(|path| path.to_string_lossy().into_owned()),
            running: None,
            escaped: Vec::new(),
        }
    }

    /// The screen as it is now.
    pub fn read(&self, options: ReadOptions) -> ScreenState {
        self.touch();
        let exit = self.exit_info();
        let (mut state, grid) = self.with_screen(|screen| {
            // Highlights need the cells only where something is drawn in reverse or on a colour.
            let plain =
                options.highlights && !options.styled && !options.cells && screen.plain_backdrop();
            let wants_grid = options.cells || options.styled || (options.highlights && !plain);
            let hash = hash_hex(screen.hash());
            let size = screen.size();
            let images = screen.images();
            let text = if images.is_empty() {
                screen.text().to_owned()
            } else {
                label_text(screen.text(), &images, size.cols)
            };
            let state = ScreenState {
                alive: exit.is_none(),
                exit_code: exit.and_then(|e| e.exit_code),
                signal: exit.and_then(|e| e.signal),
                alt_screen: screen.alt_screen(),
                text,
                hash,
                visual_hash: hash_hex(screen.visual_hash()),
                cursor: screen.cursor(),
                title: screen.title().map(str::to_owned),
                modes: screen.modes(),
                cols: size.cols,
                rows: size.rows,
                scrollback: options.scrollback.map(|n| screen.scrollback_text(n)),
                scrollback_left: options
                    .scrollback
                    .map(|n| screen.history_rows().saturating_sub(n)),
                styled: None,
                highlights: plain.then(Vec::new),
                cells: None,
                input: None,
                images: images.iter().map(|i| i.info()).collect(),
                image_notes: screen.image_notes(),
            };
            (state, wants_grid.then(|| screen.cells()))
        });
        // Styles are read off a copy of the cells, so the pump is not kept waiting for the lock.
        if let Some(grid) = grid {
            if options.styled || options.highlights {
                let regions = Regions::of(&grid);
                state.styled = options.styled.then(|| styled_text(&grid, &regions));
                state.highlights = options.highlights.then(|| highlights(&grid, &regions));
            }
            state.cells = options.cells.then(|| CellRuns::of(&grid));
        }
        state
    }

    pub fn modes(&self) -> InputModes {
        self.with_screen(|s| s.modes())
    }

    /// Send input, one write per chunk, in order. Fails if the program has ended or stops reading.
    pub async fn write(&self, chunks: &[Vec<u8>]) -> Result<()> {
        self.touch();
        if !self.alive() {
            return Err(SessionError::Exited(self.sid.to_string()));
        }
        let mut writer = self.writer.lock().await;
        let hidden = self.reading_secret();
        for chunk in chunks.iter().filter(|c| !c.is_empty()) {
            let written = tokio::time::timeout(self.limits.write_timeout, async {
                writer.write_all(chunk).await?;
                writer.flush().await
            })
            .await;
            match written {
                Ok(Ok(())) => {
                    crate::stats::input(chunk.len());
                    // What is typed into a hidden line (a password) is never recorded.
                    if !hidden {
                        if let Some(recorder) = lock(&self.recorder).as_mut() {
                            recorder.input(chunk);
                        }
                    }
                }
                Ok(Err(e)) => return Err(SessionError::Io(format!("writing to session '{}': {e}", self.sid))),
                Err(_) => {
                    return Err(SessionError::Io(format!(
                        "session '{}': the program has not read its input for {} s; input may be partly delivered",
                        self.sid,
                        self.limits.write_timeout.as_secs()
                    )))
                }
            }
        }
        Ok(())
    }

    /// Change the terminal size: the kernel tells the program with SIGWINCH.
    pub async fn resize(&self, size: Size) -> Result<()> {
        self.limits.check_size(size, "cols/rows")?;
        self.touch();
        {
            let writer = self.writer.lock().await;
            // The pty is resized under the screen lock, where no output is absorbed: what the
            // program draws once told of the new size (SIGWINCH) reaches the screen, and a
            // recording, after the resize, never at the old size before it.
            let mut screen = lock(&self.screen);
            writer
                .resize(crate::process::kernel_size(size, screen.images_enabled()))
                .map_err(|e| SessionError::Io(format!("resizing session '{}': {e}", self.sid)))?;
            screen.resize(size);
            if let Some(recorder) = lock(&self.recorder).as_mut() {
                recorder.resize(size);
            }
            if let Some(link) = &self.held {
                link.checkpoint(&screen);
            }
        }
        self.updates.send_modify(|g| *g += 1);
        Ok(())
    }

    /// Start recording to `target` (asciicast v3). The recording opens with the screen as it is now,
    /// painted from the emulator's cells at the terminal's current size, so it plays from the same
    /// screen a snapshot shows; from then on it records as a recording begun at spawn does.
    pub fn start_recording(&self, target: &Recording) -> Result<()> {
        let busy = |path: &std::path::Path| {
            SessionError::invalid(
                "action",
                format!(
                    "session '{}' is already recording to {}; stop that recording first",
                    self.sid,
                    path.display()
                ),
            )
        };
        if let Some(recorder) = lock(&self.recorder).as_ref() {
            return Err(busy(recorder.path()));
        }
        if self.finished() {
            return Err(SessionError::invalid(
                "sid",
                format!(
                    "session '{}' has ended; there is nothing left to record",
                    self.sid
                ),
            ));
        }
        let file = record::open_target(target)?;
        // Under the screen lock no output is absorbed and no resize applied: the painted screen and
        // the first recorded output follow each other exactly.
        let screen = lock(&self.screen);
        let mut slot = lock(&self.recorder);
        if let Some(recorder) = slot.as_ref() {
            return Err(busy(recorder.path()));
        }
        let mut recorder = Recorder::begin(file, target, screen.size(), &self.argv)?;
        recorder.output(&record::opening(&screen));
        *slot = Some(recorder);
        drop((slot, screen));
        self.tell_holder();
        Ok(())
    }

    /// Stop recording and close the file; the program keeps running. The file recorded, if any.
    pub fn stop_recording(&self) -> Option<PathBuf> {
        let recorder = lock(&self.recorder).take()?;
        self.tell_holder();
        Some(recorder.path().to_owned())
    }

    /// The file being recorded to, if any.
    pub fn recording(&self) -> Option<PathBuf> {
        lock(&self.recorder).as_ref().map(|r| r.path().to_owned())
    }

    /// The program has ended and its output is read: announce it to waits, and end what it left
    /// open (a recording, a command `run` captures).
    fn announce_end(&self) {
        self.end_recording();
        lock(&self.shell).program_ended();
        self.finished.send_replace(true);
        self.updates.send_modify(|g| *g += 1);
    }

    /// What the program in front waits for now, from the kernel ([`crate::readiness`]);
    /// [`Input::None`] once it has ended.
    pub fn input_state(&self) -> Input {
        if !self.alive() {
            return Input::None;
        }
        let Some(terminal) = &self.terminal else {
            return Input::Unknown;
        };
        terminal.input(|| self.full_screen())
    }

    /// A line editor shows its prompt before it reads: a program reading raw keys with nothing
    /// shown yet is a full-screen one about to draw (less, between raw mode and its first paint).
    fn full_screen(&self) -> bool {
        self.with_screen(|s| s.alt_screen() || s.text().trim().is_empty())
    }

    /// The program in front waits for input and has read everything typed to it, and all it wrote
    /// has reached the screen, no synchronized update left open: the kind it waits for.
    pub fn ready_for_input(&self) -> Option<Input> {
        use std::sync::atomic::Ordering::SeqCst;
        let terminal = self.terminal.as_ref()?;
        if !self.alive() || terminal.input_pending() > 0 {
            return None;
        }
        let mut settled = false;
        let mut blank = false;
        // Looked at once the program is seen blocked reading, when it writes no more: all it wrote
        // is then unread in the pty, in the pump's hands, or on the screen.
        let kind = terminal.input(|| {
            settled = terminal.output_pending() == 0
                && !self.output_in_hand.load(SeqCst)
                && !self.with_screen(|s| s.in_sync_frame());
            let (alt, empty) = self.with_screen(|s| (s.alt_screen(), s.text().trim().is_empty()));
            blank = !alt && empty;
            alt || empty
        });
        if !(settled && kind.waiting()) {
            return None;
        }
        if kind == Input::Keys && blank {
            // The kernel hands what the program wrote to the pty's reading side a moment later,
            // from a work queue: a line editor's prompt may be on its way while the program already
            // reads raw keys. Answer once a check before, with no output since, saw the same.
            let now = *self.updates.borrow();
            if self.blank_keys_seen.swap(now, SeqCst) != now {
                return None;
            }
        }
        Some(kind)
    }

    /// Bytes the program wrote that the pump has not read yet.
    pub fn output_pending(&self) -> usize {
        self.terminal.as_ref().map_or(0, |t| t.output_pending())
    }

    /// The terminal reads a hidden line now (echo off): what is typed is a secret.
    pub fn reading_secret(&self) -> bool {
        self.terminal.as_ref().is_some_and(|t| t.hidden_line())
    }

    /// Where the shell stands, as its marks tell ([`crate::shell`]).
    pub fn shell_state(&self) -> ShellState {
        lock(&self.shell).state()
    }

    /// The program should mark its prompts: `run` waits for the first one instead of refusing.
    pub fn marks_expected(&self) -> bool {
        self.marks_expected
    }

    /// Exit status of the last command the shell reported ended.
    pub fn last_exit(&self) -> Option<i32> {
        lock(&self.shell).last_exit
    }

    /// Capture the output of the next command the shell runs; its id.
    pub fn arm_command(&self, command: &str) -> u64 {
        lock(&self.shell).arm(command)
    }

    /// The command `run` armed as `id`, finished or with its output so far.
    pub fn command(&self, id: u64) -> Option<CommandRecord> {
        lock(&self.shell).command(id)
    }

    /// Whether the command armed as `id` has ended.
    pub fn command_done(&self, id: u64) -> bool {
        lock(&self.shell).is_done(id)
    }

    /// What `reader` last saw of this session.
    pub fn last_seen(&self, reader: &str) -> Option<Seen> {
        lock(&self.views).last(reader).cloned()
    }

    /// Remember that `reader` has seen `seen`.
    pub fn saw(&self, reader: &str, seen: Seen) {
        lock(&self.views).remember(reader, seen);
    }

    /// The program has ended: record its exit status and close the recording.
    fn end_recording(&self) {
        if let Some(mut recorder) = lock(&self.recorder).take() {
            if let Some(exit) = self.exit_info() {
                recorder.exit(exit);
            }
        }
    }

    /// True once `close` has begun: every wait on the session ends.
    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// End every process of the session and stop watching it. Returns the processes that had left
    /// its process group (setsid, a double fork) and were ended too, as `PID COMMAND` (a held
    /// session's only: its holder is their ancestor).
    pub async fn close(&self) -> Vec<String> {
        self.closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.updates.send_modify(|g| *g += 1);
        if self.alive() || !process::session_members(self.pid).is_empty() {
            process::end_session(self.pid, self.limits.close_grace).await;
        }
        // The leader has been signalled; give the reaper a moment to record its status, bounded.
        let mut exit = self.exit.clone();
        let _ = tokio::time::timeout(Duration::from_secs(2), exit.wait_for(|e| e.is_some())).await;
        if let Some(pump) = lock(&self.pump).take() {
            pump.abort();
        }
        self.announce_end();
        let escaped = self
            .held
            .as_ref()
            .map(|link| process::descendants(link.holder))
            .unwrap_or_default();
        let named = process::named(&escaped);
        process::end_all(&escaped, self.limits.close_grace).await;
        self.release().await;
        named
    }
}

/// A person watching a session, counted until dropped.
pub struct ViewerGuard {
    session: Arc<Session>,
    id: u64,
}

impl Drop for ViewerGuard {
    fn drop(&mut self) {
        self.session.touch();
        lock(&self.session.viewers).retain(|v| v.0 != self.id);
    }
}

/// Keeps a session from counting as idle while a wait runs.
pub struct WaitGuard<'a>(&'a Session);

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        self.0.touch();
        self.0
            .waiters
            .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// The pty's read half, marking its session's `output_in_hand` from before each read until the
/// pump has put what it read on the screen (the pump clears it), so that readiness never answers
/// from a screen that lacks output already taken from the pty.
struct PumpedReader {
    inner: pty_process::OwnedReadPty,
    session: Arc<Session>,
}

impl tokio::io::AsyncRead for PumpedReader {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use std::sync::atomic::Ordering::SeqCst;
        self.session.output_in_hand.store(true, SeqCst);
        let polled = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if polled.is_pending() {
            // Nothing was taken from the pty.
            self.session.output_in_hand.store(false, SeqCst);
        }
        polled
    }
}

/// Read the pty until the program is gone, feeding the screen and waking waiters.
async fn pump(
    session: Arc<Session>,
    reader: pty_process::OwnedReadPty,
    mut exit: watch::Receiver<Option<ExitInfo>>,
) {
    let mut reader = PumpedReader {
        inner: reader,
        session: session.clone(),
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut reading = true;
    let mut exited = exit.borrow().is_some();
    // Output still buffered in the pty when the program ends is read before the end is announced, unless
    // another process keeps the pty open; then the end is announced after this long.
    const DRAIN_LIMIT: Duration = Duration::from_millis(250);
    let mut drain_deadline: Option<tokio::time::Instant> = None;
    loop {
        let sync_deadline = session
            .with_screen(|s| s.sync_deadline())
            .map(tokio::time::Instant::from_std);
        tokio::select! {
            read = reader.read(&mut buf), if reading => match read {
                Ok(0) | Err(_) => {
                    reading = false;
                    session.output_in_hand.store(false, std::sync::atomic::Ordering::SeqCst);
                }
                Ok(n) => {
                    crate::stats::output(n);
                    session.absorb(&buf[..n]).await;
                    session.output_in_hand.store(false, std::sync::atomic::Ordering::SeqCst);
                }
            },
            _ = exit.changed(), if !exited => {
                exited = true;
                drain_deadline = Some(tokio::time::Instant::now() + DRAIN_LIMIT);
            },
            _ = sleep_until_opt(sync_deadline), if sync_deadline.is_some() => {
                let replies = session.with_screen(|s| s.flush_sync());
                session.answer(&replies).await;
                session.updates.send_modify(|g| *g += 1);
            },
            _ = sleep_until_opt(drain_deadline), if drain_deadline.is_some() && reading => {
                drain_deadline = None;
                session.announce_end();
            },
            else => break,
        }
        if exited && !reading && !*session.finished.borrow() {
            session.announce_end();
        }
    }
}

async fn sleep_until_opt(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}
