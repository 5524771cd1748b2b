//! Sessions that outlive the daemon: each session's pty and program belong to a small process of
//! their own, its holder, so a daemon that crashes, is killed or is upgraded takes no program with it.
//!
//! The holder (this binary again, `screenpilot daemon hold`) starts the program: it is its parent and
//! subreaper, so it learns the exit status and reaps what the session orphans. It keeps the pty's
//! master open and listens on a private socket, `DIR/PID` (its own pid), for a daemon. The daemon it
//! talks to is given the master (SCM_RIGHTS) and reads, writes and resizes it as a pty of its own:
//! output latency, flood throughput and readiness read from the kernel are what they were without a
//! holder. What the holder adds is a memory of the screen: the daemon copies each chunk of output to
//! it, and every [`CHECKPOINT_BYTES`] (and after each resize) a checkpoint, the screen and its history
//! painted as bytes, which replaces what the holder kept. A daemon that starts connects to every
//! holder and rebuilds each screen from its checkpoint and the output since; what the program wrote
//! while no daemon ran is still in the pty (a program that fills it waits), and is read as any
//! output is. A holder alone for the idle limit ends its session, as a daemon does an idle one.
//!
//! The protocol, over a stream socket: frames of a kind byte, a little-endian u32 length and the
//! payload. The holder sends MASTER (one byte, the master's descriptor attached), HELLO (JSON
//! [`Hello`]) and REPLAY (bytes) to each daemon that connects, then EXIT (JSON [`ExitInfo`]) when the
//! program ends (in HELLO when it already has); or FAILED (JSON `{"message"}`) when the program cannot
//! start. The daemon sends SPEC first (JSON [`HoldSpec`], on the socket pair the holder starts with),
//! then OUTPUT, CHECKPOINT, NOTES (JSON: what the session is, kept for the next daemon) and END (the
//! session is closed: end what is left of it and exit). Versions only grow: a daemon takes over the
//! holders of its own and every earlier version, and leaves one of a later version alone, saying so.

use std::io::{Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream as StdStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use screenpilot_screen::{Screen, Size};
use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::{mpsc, watch};

use crate::error::{Result, SessionError};
use crate::process::{self, ExitInfo};
use crate::spec::SpawnSpec;

/// The protocol this build speaks with holders.
pub const PROTOCOL: u32 = 1;

/// Test-only: in a session's environment, the protocol its holder announces instead of
/// [`PROTOCOL`] (a holder of a future version).
pub const TEST_PROTOCOL_VAR: &str = "SCREENPILOT_TEST_HOLDER_PROTOCOL";

/// Output copied to a holder between checkpoints.
pub const CHECKPOINT_BYTES: usize = 256 << 10;

/// Output queued for a holder and not yet written: past it, copies are dropped and a checkpoint
/// follows (a holder that stopped reading never slows its session).
const QUEUE_LIMIT: usize = 8 << 20;

/// The most a holder keeps: a checkpoint and the output after it, trimmed from the front beyond this
/// (only a daemon that stopped sending checkpoints gets there).
const REPLAY_LIMIT: usize = 2 * CHECKPOINT_BYTES + (16 << 20);

/// The most frames a daemon writes to a holder at once, in bytes.
const BATCH_BYTES: usize = 256 << 10;

/// A holder's read buffer, and the most a daemon's batch buffer keeps between batches.
const READ_BUFFER: usize = 16 << 10;

/// The largest frame either side accepts.
const MAX_FRAME: usize = 64 << 20;

/// How long a daemon waits for a holder's greeting.
const GREETING_LIMIT: Duration = Duration::from_secs(10);

mod kind {
    pub const MASTER: u8 = b'M';
    pub const HELLO: u8 = b'H';
    pub const REPLAY: u8 = b'R';
    pub const EXIT: u8 = b'X';
    pub const FAILED: u8 = b'F';
    pub const SPEC: u8 = b'S';
    pub const OUTPUT: u8 = b'O';
    pub const CHECKPOINT: u8 = b'C';
    pub const NOTES: u8 = b'N';
    pub const END: u8 = b'E';
}

/// Where holders are started from and listen.
#[derive(Debug, Clone)]
pub struct HoldConfig {
    /// The program and the arguments that make it a holder (`/proc/self/exe daemon hold`).
    pub command: Vec<String>,
    /// The private directory of their sockets.
    pub dir: PathBuf,
}

/// What a holder is told to start, and how long it may wait alone.
#[derive(Debug, Serialize, Deserialize)]
pub struct HoldSpec {
    pub spec: SpawnSpec,
    pub token: u64,
    pub idle_ms: u64,
    pub grace_ms: u64,
    pub dir: PathBuf,
    pub notes: serde_json::Value,
}

/// What a holder tells each daemon that connects.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// The holder's pid.
    pub holder: i32,
    /// The program's pid: the session's leader.
    pub pid: i32,
    /// When the session started, in seconds since the Unix epoch.
    pub started: u64,
    /// How the program ended, when it has.
    #[serde(default)]
    pub exit: Option<ExitInfo>,
    /// What the daemon last said the session is.
    #[serde(default)]
    pub notes: serde_json::Value,
}

/// What a daemon keeps with a holder so that the next daemon knows the session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Notes {
    pub sid: String,
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    #[serde(default)]
    pub kind: Option<String>,
    /// The token its shell signs marks with, when it does.
    #[serde(default)]
    pub signed: Option<u64>,
    #[serde(default)]
    pub marks_expected: bool,
    #[serde(default)]
    pub detect_child_exit: bool,
    /// Its screen shows pictures.
    #[serde(default)]
    pub images: bool,
    /// The recording going on: its file and whether input is recorded.
    #[serde(default)]
    pub recording: Option<(PathBuf, bool)>,
}

/// A holder as a daemon meets it: its greeting, the pty's master and what it kept of the screen.
pub struct Held {
    pub hello: Hello,
    pub master: OwnedFd,
    pub replay: Vec<u8>,
    stream: StdStream,
}

fn frame(kind: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + payload.len());
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(payload);
    out
}

fn bad(message: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message.into())
}

fn frame_len(head: &[u8; 5]) -> std::io::Result<usize> {
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_FRAME {
        return Err(bad(format!(
            "a frame of {len} bytes (kind {:?}); at most {MAX_FRAME}",
            head[0] as char
        )));
    }
    Ok(len)
}

fn read_frame_blocking(stream: &mut impl Read) -> std::io::Result<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    stream.read_exact(&mut head)?;
    let mut payload = vec![0; frame_len(&head)?];
    stream.read_exact(&mut payload)?;
    Ok((head[0], payload))
}

async fn read_frame(stream: &mut (impl AsyncReadExt + Unpin)) -> std::io::Result<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    stream.read_exact(&mut head).await?;
    let mut payload = vec![0; frame_len(&head)?];
    stream.read_exact(&mut payload).await?;
    Ok((head[0], payload))
}

/// Send one byte of `kind` with `fd` attached.
fn send_fd(socket: BorrowedFd<'_>, kind: u8, fd: BorrowedFd<'_>) -> std::io::Result<()> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
    let fds = [fd];
    control.push(rustix::net::SendAncillaryMessage::ScmRights(&fds));
    let sent = rustix::net::sendmsg(
        socket,
        &[std::io::IoSlice::new(&[kind])],
        &mut control,
        rustix::net::SendFlags::NOSIGNAL,
    )?;
    if sent != 1 {
        return Err(bad("the descriptor's byte was not sent"));
    }
    Ok(())
}

/// Receive one byte and the descriptor attached to it, if any.
fn receive_fd(socket: BorrowedFd<'_>) -> std::io::Result<(u8, Option<OwnedFd>)> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
    let mut byte = [0u8; 1];
    let received = loop {
        match rustix::net::recvmsg(
            socket,
            &mut [std::io::IoSliceMut::new(&mut byte)],
            &mut control,
            rustix::net::RecvFlags::CMSG_CLOEXEC,
        ) {
            // A signal (the daemon's SIGCHLD) before anything came.
            Err(rustix::io::Errno::INTR) => continue,
            received => break received?,
        }
    };
    if received.bytes == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let mut fd = None;
    for message in control.drain() {
        if let rustix::net::RecvAncillaryMessage::ScmRights(fds) = message {
            for received in fds {
                fd.get_or_insert(received);
            }
        }
    }
    Ok((byte[0], fd))
}

/// The uid of the process at the other end of `socket`.
fn peer_uid(socket: BorrowedFd<'_>) -> Option<u32> {
    rustix::net::sockopt::socket_peercred(socket)
        .ok()
        .map(|cred| cred.uid.as_raw())
}

/// Read a holder's greeting from `stream`: a holder of `what` (its socket, or "the new session").
fn greeting(mut stream: StdStream, what: &str) -> std::result::Result<Held, String> {
    let _ = stream.set_read_timeout(Some(GREETING_LIMIT));
    let broken = |e: std::io::Error| format!("{what}: the holder's greeting does not read: {e}");
    let (first, master) = receive_fd(stream.as_fd()).map_err(broken)?;
    if first == kind::FAILED {
        let mut rest = [0u8; 4];
        stream.read_exact(&mut rest).map_err(broken)?;
        let head = [first, rest[0], rest[1], rest[2], rest[3]];
        let mut payload = vec![0; frame_len(&head).map_err(broken)?];
        stream.read_exact(&mut payload).map_err(broken)?;
        let failed: serde_json::Value = serde_json::from_slice(&payload).unwrap_or_default();
        return Err(failed["message"]
            .as_str()
            .unwrap_or("the program could not start")
            .to_owned());
    }
    let master = match (first, master) {
        (kind::MASTER, Some(master)) => master,
        _ => return Err(broken(bad("it did not start with the pty"))),
    };
    let (k, payload) = read_frame_blocking(&mut stream).map_err(broken)?;
    if k != kind::HELLO {
        return Err(broken(bad(format!(
            "kind {:?} where its hello was due",
            k as char
        ))));
    }
    let hello: Hello = serde_json::from_slice(&payload).map_err(|e| broken(bad(e.to_string())))?;
    let (k, replay) = read_frame_blocking(&mut stream).map_err(broken)?;
    if k != kind::REPLAY {
        return Err(broken(bad(format!(
            "kind {:?} where its replay was due",
            k as char
        ))));
    }
    let _ = stream.set_read_timeout(None);
    Ok(Held {
        hello,
        master,
        replay,
        stream,
    })
}

/// Start a holder running `spec`, and meet it.
pub fn start(
    config: &HoldConfig,
    spec: &SpawnSpec,
    token: u64,
    notes: &Notes,
    limits: &crate::Limits,
) -> Result<Held> {
    let io = |what: &str, e: &dyn std::fmt::Display| SessionError::Spawn {
        field: "cmd",
        message: format!("{what}: {e}"),
    };
    make_private_dir(&config.dir).map_err(|e| io("cannot make the holders' directory", &e))?;
    let (ours, theirs) = StdStream::pair().map_err(|e| io("cannot make a socket pair", &e))?;
    let mut command = std::process::Command::new(&config.command[0]);
    std::os::unix::process::CommandExt::arg0(&mut command, "screenpilot");
    command
        .args(&config.command[1..])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null());
    let theirs_fd = theirs.as_raw_fd();
    // SAFETY: setsid and dup2 are async-signal-safe; the descriptor stays open in the parent.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, move || {
            libc::setsid();
            if libc::dup2(theirs_fd, 3) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    process::spawn_helper(command).map_err(|e| io("cannot start the session's holder", &e))?;
    drop(theirs);
    let hold = HoldSpec {
        spec: spec.clone(),
        token,
        idle_ms: limits.idle_timeout.as_millis() as u64,
        grace_ms: limits.close_grace.as_millis() as u64,
        dir: config.dir.clone(),
        notes: serde_json::to_value(notes).unwrap_or_default(),
    };
    let payload = serde_json::to_vec(&hold).map_err(|e| io("internal error", &e))?;
    (&ours)
        .write_all(&frame(kind::SPEC, &payload))
        .map_err(|e| io("cannot reach the session's holder", &e))?;
    greeting(ours, "the new session").map_err(|message| SessionError::Spawn {
        field: "cmd",
        message,
    })
}

/// Meet every holder in `config.dir`: those a daemon before this one left. Each is tried at once,
/// on a thread of its own (a holder that does not answer delays only its own session).
pub fn find(config: &HoldConfig) -> Vec<std::result::Result<Held, String>> {
    let Ok(entries) = std::fs::read_dir(&config.dir) else {
        return Vec::new();
    };
    let sockets: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .collect();
    let meetings: Vec<_> = sockets
        .into_iter()
        .map(|path| std::thread::spawn(move || meet(&path)))
        .collect();
    meetings
        .into_iter()
        .filter_map(|m| m.join().ok().flatten())
        .collect()
}

/// Meet the holder at `path`; `None` when nothing listens there (a holder gone: its file is removed).
fn meet(path: &Path) -> Option<std::result::Result<Held, String>> {
    let what = format!("holder socket {}", path.display());
    let stream = match StdStream::connect(path) {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::NotFound
            ) =>
        {
            let _ = std::fs::remove_file(path);
            return None;
        }
        Err(e) => return Some(Err(format!("{what}: cannot connect: {e}"))),
    };
    let ours = rustix::process::getuid().as_raw();
    match peer_uid(stream.as_fd()) {
        Some(uid) if uid == ours => {}
        Some(uid) => {
            return Some(Err(format!(
                "{what} is served by uid {uid}, not this daemon's {ours}: left alone"
            )))
        }
        None => return Some(Err(format!("{what}: its owner cannot be told: left alone"))),
    }
    // A holder this process starts is of its own build; one found may be of a newer one.
    Some(greeting(stream, &what).and_then(|held| match held.hello.protocol {
        protocol if protocol > PROTOCOL => Err(format!(
            "{what}: its holder (pid {}) speaks protocol {protocol}, this daemon {PROTOCOL}: a newer screenpilot daemon can take it over; it is left running",
            held.hello.holder
        )),
        _ => Ok(held),
    }))
}

fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
        _ => Ok(()),
    }
}

/// The daemon's side of a holder, once met: what the session sends it, in order.
/// A holder met and linked: the link, the program's end as the holder reports it, the pty's master,
/// its greeting and what it kept of the screen.
pub struct Opened {
    pub link: Link,
    pub exit: watch::Receiver<Option<ExitInfo>>,
    pub master: OwnedFd,
    pub hello: Hello,
    pub replay: Vec<u8>,
}

/// A frame for the holder, and who waits to hear it was written.
type Outgoing = (Vec<u8>, Option<tokio::sync::oneshot::Sender<()>>);

pub struct Link {
    /// The holder's pid: every process of the session descends from it, those that left its
    /// process group too.
    pub holder: i32,
    frames: mpsc::UnboundedSender<Outgoing>,
    /// Bytes queued and not yet written.
    queued: Arc<AtomicUsize>,
    /// Output copied since the last checkpoint.
    since_checkpoint: AtomicUsize,
    /// Copies were dropped: the next output sends a checkpoint instead.
    behind: AtomicBool,
}

impl Link {
    /// Talk to the holder of `held`. Returns the link and the program's end as the holder reports
    /// it (also when the holder itself ends: then once the program is gone, status unknown).
    pub fn open(held: Held) -> std::io::Result<Opened> {
        let Held {
            hello,
            master,
            replay,
            stream,
        } = held;
        stream.set_nonblocking(true)?;
        let stream = tokio::net::UnixStream::from_std(stream)?;
        let (mut reader, mut writer) = stream.into_split();
        let (exit_tx, exit) = watch::channel(hello.exit);
        let leader = hello.pid;
        tokio::spawn(async move {
            loop {
                match read_frame(&mut reader).await {
                    Ok((kind::EXIT, payload)) => {
                        if let Ok(info) = serde_json::from_slice::<ExitInfo>(&payload) {
                            exit_tx.send_replace(Some(info));
                        }
                    }
                    Ok(_) => {}
                    Err(_) => break,
                }
            }
            // The holder is gone: the program's end can still be seen, not its status.
            if exit_tx.borrow().is_none() {
                process::wait_gone(&[leader], Duration::from_secs(365 * 24 * 3600)).await;
                exit_tx.send_replace(Some(ExitInfo {
                    exit_code: None,
                    signal: None,
                }));
            }
        });
        let (frames, mut queue) = mpsc::unbounded_channel::<Outgoing>();
        let queued = Arc::new(AtomicUsize::new(0));
        let written = queued.clone();
        tokio::spawn(async move {
            // What queued while the last write ran goes out in one write: in a flood the holder
            // wakes once per batch, not once per chunk.
            let mut batch = Vec::new();
            let mut told = Vec::new();
            while let Some(first) = queue.recv().await {
                let mut next = Some(first);
                while let Some((frame, sent_tx)) = next {
                    batch.extend_from_slice(&frame);
                    told.extend(sent_tx);
                    next = if batch.len() < BATCH_BYTES {
                        queue.try_recv().ok()
                    } else {
                        None
                    };
                }
                let sent = writer.write_all(&batch).await;
                written.fetch_sub(batch.len(), Ordering::AcqRel);
                batch.clear();
                // A flood's batch is not kept for the quiet hours after it.
                if batch.capacity() > READ_BUFFER {
                    batch = Vec::new();
                }
                for sent_tx in told.drain(..) {
                    let _ = sent_tx.send(());
                }
                if sent.is_err() {
                    break;
                }
            }
        });
        let link = Link {
            holder: hello.holder,
            frames,
            queued,
            since_checkpoint: AtomicUsize::new(replay.len()),
            behind: AtomicBool::new(false),
        };
        Ok(Opened {
            link,
            exit,
            master,
            hello,
            replay,
        })
    }

    fn send(&self, frame: Vec<u8>) {
        self.queued.fetch_add(frame.len(), Ordering::AcqRel);
        let _ = self.frames.send((frame, None));
    }

    /// Copy output the screen has just absorbed (call it under the screen lock, so copies and
    /// checkpoints keep the screen's order).
    pub fn output(&self, bytes: &[u8], screen: &Screen) {
        let since = self
            .since_checkpoint
            .fetch_add(bytes.len(), Ordering::AcqRel)
            + bytes.len();
        if self.queued.load(Ordering::Acquire) > QUEUE_LIMIT {
            self.behind.store(true, Ordering::Release);
            return;
        }
        if since > CHECKPOINT_BYTES || self.behind.swap(false, Ordering::AcqRel) {
            self.checkpoint(screen);
        } else {
            self.send(frame(kind::OUTPUT, bytes));
        }
    }

    /// Replace what the holder keeps with the screen as it is (after a resize, and every
    /// [`CHECKPOINT_BYTES`] of output).
    pub fn checkpoint(&self, screen: &Screen) {
        self.since_checkpoint.store(0, Ordering::Release);
        self.send(frame(kind::CHECKPOINT, &checkpoint(screen)));
    }

    /// Tell the holder what the session is, for the next daemon.
    pub fn notes(&self, notes: &Notes) {
        if let Ok(payload) = serde_json::to_vec(notes) {
            self.send(frame(kind::NOTES, &payload));
        }
    }

    /// The session is closed: the holder ends what is left of it and exits. Returns once that is
    /// written to it (a daemon about to exit must not take it along unsent), or after a bound.
    pub async fn end(&self) {
        let (sent_tx, sent) = tokio::sync::oneshot::channel();
        let _ = self.frames.send((frame(kind::END, &[]), Some(sent_tx)));
        let _ = tokio::time::timeout(Duration::from_secs(5), sent).await;
    }
}

/// The bytes that draw `screen` again on a fresh one of its size: its history as lines that scroll
/// up out of sight, then the screen itself (see [`crate::record::opening`]).
pub fn checkpoint(screen: &Screen) -> Vec<u8> {
    let mut bytes = Vec::new();
    let history = screen.scrollback_text(usize::MAX);
    if !history.is_empty() {
        let lines = history.split('\n').count();
        for line in history.split('\n') {
            bytes.extend_from_slice(line.as_bytes());
            bytes.extend_from_slice(b"\r\n");
        }
        // Enough new lines that every history line has scrolled off the top.
        let rows = usize::from(screen.size().rows);
        for _ in lines.min(rows).saturating_sub(1)..rows.saturating_sub(1) {
            bytes.extend_from_slice(b"\r\n");
        }
        bytes.extend_from_slice(b"\x1b[H\x1b[2J");
    }
    bytes.extend(crate::record::opening(screen));
    bytes
}

/// The size of the pty whose master is `master`.
pub fn pty_size(master: BorrowedFd<'_>) -> Option<Size> {
    let size = rustix::termios::tcgetwinsize(master).ok()?;
    Some(Size::new(size.ws_col, size.ws_row))
}

// ---- The holder's side ----

/// `screenpilot daemon hold`: be the holder of one session, started by a daemon with the socket pair
/// on descriptor 3 (see [`start`]). Call it first thing in `main`: it closes every other descriptor
/// it inherited. Returns the exit status, or why it cannot run.
pub fn hold() -> std::result::Result<u8, String> {
    process::close_descriptors_from(4);
    // SAFETY: borrowing a descriptor number for one check; nothing is closed.
    if rustix::net::sockopt::socket_type(unsafe { BorrowedFd::borrow_raw(3) }).is_err() {
        return Err(
            "daemon hold: descriptor 3 is not a socket; a daemon starts its holders itself".into(),
        );
    }
    // SAFETY: descriptor 3 is open and a socket (just checked): the pair's end the daemon gave us.
    let link = unsafe { OwnedFd::from_raw_fd(3) };
    let _ = rustix::io::fcntl_setfd(&link, rustix::io::FdFlags::CLOEXEC);
    let mut link = StdStream::from(link);
    let (k, payload) = read_frame_blocking(&mut link).map_err(|e| format!("daemon hold: {e}"))?;
    if k != kind::SPEC {
        return Err("daemon hold: the daemon did not say what to start".into());
    }
    let spec: HoldSpec =
        serde_json::from_slice(&payload).map_err(|e| format!("daemon hold: the spec: {e}"))?;
    // One thread and few events at a time: a holder waits far more than it works.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_io_events_per_tick(64)
        .build()
        .map_err(|e| format!("daemon hold: cannot start the async runtime: {e}"))?;
    runtime.block_on(run_holder(link, spec))
}

/// One daemon connected to the holder.
struct Daemon {
    writer: tokio::net::unix::OwnedWriteHalf,
    number: u64,
}

enum Event {
    Frame(u64, u8, Vec<u8>),
    Gone(u64),
}

struct Holder {
    master: OwnedFd,
    hello: Hello,
    replay: Vec<u8>,
    events: mpsc::UnboundedSender<Event>,
    connections: u64,
}

impl Holder {
    /// Greet a daemon that connected: the master, the hello, the replay; then read what it says.
    async fn greet(&mut self, stream: tokio::net::UnixStream) -> std::io::Result<Daemon> {
        stream.writable().await?;
        send_fd(stream.as_fd(), kind::MASTER, self.master.as_fd())?;
        let (reader, mut writer) = stream.into_split();
        let mut reader = tokio::io::BufReader::with_capacity(READ_BUFFER, reader);
        let hello = serde_json::to_vec(&self.hello).map_err(|e| bad(e.to_string()))?;
        writer.write_all(&frame(kind::HELLO, &hello)).await?;
        writer.write_all(&frame(kind::REPLAY, &self.replay)).await?;
        self.connections += 1;
        let number = self.connections;
        let events = self.events.clone();
        tokio::spawn(async move {
            loop {
                match read_frame(&mut reader).await {
                    Ok((k, payload)) => {
                        if events.send(Event::Frame(number, k, payload)).is_err() {
                            return;
                        }
                    }
                    Err(_) => {
                        let _ = events.send(Event::Gone(number));
                        return;
                    }
                }
            }
        });
        Ok(Daemon { writer, number })
    }

    fn keep(&mut self, kind: u8, payload: Vec<u8>) {
        match kind {
            kind::OUTPUT => {
                self.replay.extend_from_slice(&payload);
                if self.replay.len() > REPLAY_LIMIT {
                    let cut = self.replay.len() - REPLAY_LIMIT / 2;
                    self.replay.drain(..cut);
                }
            }
            kind::CHECKPOINT => self.replay = payload,
            kind::NOTES => {
                if let Ok(notes) = serde_json::from_slice(&payload) {
                    self.hello.notes = notes;
                }
            }
            _ => {}
        }
    }
}

async fn run_holder(link: StdStream, spec: HoldSpec) -> std::result::Result<u8, String> {
    link.set_nonblocking(true)
        .map_err(|e| format!("daemon hold: {e}"))?;
    let mut link =
        tokio::net::UnixStream::from_std(link).map_err(|e| format!("daemon hold: {e}"))?;
    // As subreaper the holder reaps the session's program and whatever it orphans; its SIGCHLD
    // handler is in before the program can end.
    let _ = rustix::process::set_child_subreaper(Some(rustix::process::getpid()));
    let mut children = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::child())
        .map_err(|e| format!("daemon hold: {e}"))?;
    let (pid, master) = match process::start_on_pty(&spec.spec, spec.token) {
        Ok((pid, pty)) => (pid, OwnedFd::from(pty)),
        Err(e) => {
            let message = match e {
                SessionError::Spawn { message, .. } => message,
                other => other.to_string(),
            };
            let failed = serde_json::json!({ "message": message }).to_string();
            let _ = link
                .write_all(&frame(kind::FAILED, failed.as_bytes()))
                .await;
            return Ok(1);
        }
    };
    let socket = spec.dir.join(std::process::id().to_string());
    let _ = std::fs::remove_file(&socket);
    let listener = tokio::net::UnixListener::bind(&socket)
        .map_err(|e| format!("daemon hold: cannot listen on {}: {e}", socket.display()))?;
    let _ = std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600));
    // Test-only: read from the session's own environment, so one holder of many can play a newer one.
    let protocol = spec
        .spec
        .env
        .iter()
        .find(|(key, _)| key == TEST_PROTOCOL_VAR)
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(PROTOCOL);
    let (events, mut incoming) = mpsc::unbounded_channel();
    let mut holder = Holder {
        master,
        hello: Hello {
            protocol,
            holder: std::process::id() as i32,
            pid,
            started: SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            exit: None,
            notes: spec.notes.clone(),
        },
        replay: Vec::new(),
        events,
        connections: 0,
    };
    let idle = Duration::from_millis(spec.idle_ms);
    let grace = Duration::from_millis(spec.grace_ms);
    let mut daemon = holder.greet(link).await.ok();
    let mut alone_since = tokio::time::Instant::now();
    loop {
        let deadline = alone_since + idle;
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let ours = rustix::process::getuid().as_raw();
                if peer_uid(stream.as_fd()) != Some(ours) {
                    continue;
                }
                // The newest daemon is the one: one that replaced another took its sessions.
                if let Ok(next) = holder.greet(stream).await {
                    daemon = Some(next);
                }
            }
            event = incoming.recv() => match event {
                Some(Event::Frame(number, kind::END, _)) if daemon.as_ref().is_some_and(|d| d.number == number) => break,
                Some(Event::Frame(number, k, payload)) if daemon.as_ref().is_some_and(|d| d.number == number) => holder.keep(k, payload),
                Some(Event::Gone(number)) if daemon.as_ref().is_some_and(|d| d.number == number) => {
                    daemon = None;
                    alone_since = tokio::time::Instant::now();
                }
                Some(_) => {}
                None => break,
            },
            // Orphans of the session are reaped as they end; the program's end is told.
            _ = children.recv() => {
                let ended = process::reap_any().into_iter().find(|(reaped, _)| *reaped == pid);
                let Some((_, info)) = ended.filter(|_| holder.hello.exit.is_none()) else {
                    continue;
                };
                holder.hello.exit = Some(info);
                if let Some(d) = daemon.as_mut() {
                    let payload = serde_json::to_vec(&info).unwrap_or_default();
                    if d.writer.write_all(&frame(kind::EXIT, &payload)).await.is_err() {
                        daemon = None;
                        alone_since = tokio::time::Instant::now();
                    }
                }
            }
            _ = tokio::time::sleep_until(deadline), if daemon.is_none() => break,
        }
    }
    let _ = std::fs::remove_file(&socket);
    drop(listener);
    // Closed by its daemon (which ended the processes already: this finds nothing) or alone for the
    // idle limit: what is left of the session ends as a closed one does.
    process::end_session(pid, grace).await;
    // What left the session (setsid, a daemon's double fork) is still ours: as subreaper we are the
    // ancestor of all of it.
    let escaped = process::descendants(std::process::id() as i32);
    if !escaped.is_empty() {
        eprintln!(
            "screenpilot holder {}: ended {} process(es) that had left the session: {}",
            std::process::id(),
            escaped.len(),
            process::named(&escaped).join(", ")
        );
        process::end_all(&escaped, grace).await;
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_draws_the_screen_and_its_history_again() {
        let size = Size::new(20, 5);
        let mut source = Screen::new(size, 1000);
        for n in 1..=40 {
            source.feed(format!("line {n}\r\n").as_bytes());
        }
        source.feed(b"\x1b[1;31mred\x1b[0m prompt");
        let mut rebuilt = Screen::new(size, 1000);
        rebuilt.feed(&checkpoint(&source));
        assert_eq!(rebuilt.text(), source.text());
        assert_eq!(rebuilt.cursor(), source.cursor());
        assert_eq!(rebuilt.scrollback_text(1000), source.scrollback_text(1000));
        assert_eq!(rebuilt.visual_hash(), source.visual_hash());

        // On the alternate screen: that screen, and the program's later output lands alike.
        source.feed(b"\x1b[?1049h\x1b[Hfull screen");
        let mut rebuilt = Screen::new(size, 1000);
        rebuilt.feed(&checkpoint(&source));
        assert!(rebuilt.alt_screen());
        assert_eq!(rebuilt.text(), source.text());
        source.feed(b"\r\nnext");
        rebuilt.feed(b"\r\nnext");
        assert_eq!(rebuilt.text(), source.text());
    }

    #[test]
    fn a_frame_too_large_or_cut_short_does_not_read() {
        let whole = frame(kind::OUTPUT, b"abc");
        let (k, payload) = read_frame_blocking(&mut &whole[..]).expect("a whole frame reads");
        assert_eq!((k, payload.as_slice()), (kind::OUTPUT, &b"abc"[..]));
        assert!(read_frame_blocking(&mut &whole[..6]).is_err(), "cut short");
        let mut huge = vec![kind::HELLO];
        huge.extend_from_slice(&u32::MAX.to_le_bytes());
        let error = read_frame_blocking(&mut &huge[..]).unwrap_err();
        assert!(
            error.to_string().contains("a frame of 4294967295 bytes"),
            "{error}"
        );
    }
}
