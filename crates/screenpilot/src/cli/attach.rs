//! `screenpilot attach SID`: a person's terminal shows a session live and types into it, until they
//! detach with Ctrl-] d (the program keeps running) or the program ends.
//!
//! The daemon paints the session for this terminal's size (the `attach` operation, one progress line
//! per paint); this side only puts the terminal in raw mode on its alternate screen, writes the
//! paints, and sends what the person types with `write_raw`, exactly as their terminal encoded it:
//! the paints set the terminal's input modes to the program's (cursor keys, bracketed paste, mouse,
//! kitty keys), so the bytes are already what the program expects. Only mouse reports are moved when
//! the view does not start at the screen's corner, and the detach chord is taken out
//! ([`super::attach_input`]).

use std::io::Write;
use std::os::fd::AsFd;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use rustix::termios::{self, OptionalActions, Termios};
use serde::Deserialize;
use serde_json::Value;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;

use super::args::AttachArgs;
use super::attach_input::{Chord, MouseShift};
use crate::client::{Call, Client};
use crate::fleet::Fleet;
use crate::ops::{self, Operation};
use crate::ops::{
    AttachParams, Detached, ErrorCode, Frame, OpError, Report, ResizeParams, ShownParams,
    TypeSecretParams, WriteRawParams,
};
use crate::protocol::Response;

/// How long the daemon may take to end an attachment the person left.
const LEAVE_LIMIT: Duration = Duration::from_secs(5);

/// How long, after the person detached, what they typed just before may take to reach the program.
const INPUT_DRAIN_LIMIT: Duration = Duration::from_secs(5);

/// Attach this terminal to session `args.sid`; returns the exit status: 0 after detaching, the
/// program's own status when it ended while attached.
pub async fn run(args: &AttachArgs, fleet: &Fleet) -> Result<i32, OpError> {
    if args.secret {
        return type_secret(args, fleet).await;
    }
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    if !termios::isatty(stdin.as_fd()) || !termios::isatty(stdout.as_fd()) {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            "attach: needs a terminal (stdin and stdout); programs drive sessions with keys, type and wait",
        ));
    }
    let (host, sid) = fleet.locate(ops::Attach::NAME, &args.sid).await?;
    let client = fleet.client(host, false).await?;
    let args = &AttachArgs {
        sid,
        ..args.clone()
    };
    let mut size = terminal_size()?;
    if args.resize {
        resize_session(&client, &args.sid, size).await?;
    }
    let mut call = start_attach(&client, args, size).await?;
    // The first answer is the first paint, or why there is none (no such session): only then does
    // the person's terminal change.
    let first = call.next().await?;
    if first.progress.is_none() {
        let detached = final_answer(first)?;
        say(&detached.human());
        return Ok(detached.status());
    }

    // Signals are caught before the terminal changes, so none can end us with it in raw mode.
    let signals = Signals::catch()?;
    let terminal = Terminal::enter()?;
    let mut view = View::default();
    if view.show(&first) {
        view.acknowledge(&client).await;
    }
    let keys = read_keys();
    let (input, forwarder) = if args.read_only {
        (None, None)
    } else {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(forward_input(client.clone(), args.sid.clone(), rx));
        (Some(tx), Some(task))
    };
    let outcome = attached(
        &client,
        args,
        &mut call,
        &mut size,
        &mut view,
        (keys, signals),
        input.as_ref(),
    )
    .await;
    // What the person typed before detaching still reaches the program.
    drop(input);
    if let Some(task) = forwarder {
        let _ = tokio::time::timeout(INPUT_DRAIN_LIMIT, task).await;
    }
    drop(terminal);
    if matches!(outcome, Ok(Leave::Detached | Leave::Signalled(_))) {
        view.leave(&client, &mut call).await;
    }
    match outcome? {
        Leave::Detached => {
            say(&format!(
                "detached from {}; it keeps running (screenpilot attach {} to come back)",
                args.sid, args.sid
            ));
            Ok(0)
        }
        Leave::Signalled(name) => {
            say(&format!(
                "{name}: detached from {}; it keeps running",
                args.sid
            ));
            Ok(0)
        }
        Leave::Ended(detached) => {
            say(&detached.human());
            Ok(detached.status())
        }
    }
}

/// A line for the person on stderr; a terminal already gone (SIGHUP) is no error.
fn say(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// The signals that end an attachment (detaching, never the program) or change it.
struct Signals {
    winch: Signal,
    term: Signal,
    hangup: Signal,
    interrupt: Signal,
}

impl Signals {
    fn catch() -> Result<Signals, OpError> {
        let catch = |kind: SignalKind| {
            signal(kind)
                .map_err(|e| OpError::new(ErrorCode::IoError, format!("attach: signals: {e}")))
        };
        Ok(Signals {
            winch: catch(SignalKind::window_change())?,
            term: catch(SignalKind::terminate())?,
            hangup: catch(SignalKind::hangup())?,
            interrupt: catch(SignalKind::interrupt())?,
        })
    }
}

/// Why attaching ended.
enum Leave {
    /// The person typed the chord (or their terminal went away).
    Detached,
    /// SIGTERM, SIGHUP or SIGINT reached us.
    Signalled(&'static str),
    /// The program ended, or the session was closed.
    Ended(Detached),
}

/// Show paints and forward keys until the person leaves or the session ends.
async fn attached(
    client: &Arc<Client>,
    args: &AttachArgs,
    call: &mut Call,
    size: &mut (u16, u16),
    view: &mut View,
    (mut keys, mut signals): (mpsc::UnboundedReceiver<Vec<u8>>, Signals),
    input: Option<&mpsc::UnboundedSender<Vec<u8>>>,
) -> Result<Leave, OpError> {
    let mut chord = Chord::default();
    let mut mouse = MouseShift::default();
    loop {
        tokio::select! {
            answer = call.next() => {
                let answer = answer?;
                if answer.progress.is_some() {
                    if !view.show(&answer) {
                        return Ok(Leave::Detached);
                    }
                    view.acknowledge(client).await;
                    continue;
                }
                return Ok(Leave::Ended(final_answer(answer)?));
            }
            read = keys.recv() => {
                // The terminal closed: as good as detaching.
                let Some(bytes) = read else { return Ok(Leave::Detached) };
                let typed = chord.feed(&bytes);
                if let Some(input) = input {
                    let bytes = mouse.apply(&typed.forward, view.origin.0, view.origin.1);
                    if !bytes.is_empty() {
                        let _ = input.send(bytes);
                    }
                }
                if typed.detach {
                    return Ok(Leave::Detached);
                }
                if chord.armed() && !view.hinted {
                    view.hint(*size);
                } else if !chord.armed() && view.hinted {
                    // The hint covered part of the screen: paint it all again.
                    view.hinted = false;
                    reattach(client, args, call, *size, view).await?;
                }
            }
            _ = signals.winch.recv() => {
                let now = terminal_size()?;
                if now == *size {
                    continue;
                }
                *size = now;
                if args.resize {
                    // A size the session cannot take (past its limits) still shows, through the view.
                    let _ = resize_session(client, &args.sid, now).await;
                }
                // A new attachment paints everything for the new size.
                reattach(client, args, call, now, view).await?;
            }
            _ = signals.term.recv() => return Ok(Leave::Signalled("SIGTERM")),
            _ = signals.hangup.recv() => return Ok(Leave::Signalled("SIGHUP")),
            _ = signals.interrupt.recv() => return Ok(Leave::Signalled("SIGINT")),
        }
    }
}

/// End the attachment and start a new one, which paints everything afresh.
async fn reattach(
    client: &Client,
    args: &AttachArgs,
    call: &mut Call,
    size: (u16, u16),
    view: &mut View,
) -> Result<(), OpError> {
    let _ = client.cancel(call.id()).await;
    *call = start_attach(client, args, size).await?;
    view.attachment = None;
    Ok(())
}

/// The line shown on the person's last row while Ctrl-] waits for its second key.
const HINT: &str =
    " screenpilot: d detach (the program keeps running) | Ctrl-] sends Ctrl-] | other keys go on ";

/// What the person's terminal shows: the paints, and where the view starts on the screen.
#[derive(Default)]
struct View {
    /// The screen cell in the terminal's top-left corner (column, row).
    origin: (u16, u16),
    /// The last paint written: its attachment and number, until the daemon is told.
    written: Option<(u64, u64)>,
    /// The attachment now painting, once its first paint came.
    attachment: Option<u64>,
    /// The chord's hint covers the last row.
    hinted: bool,
}

impl View {
    /// Write a paint; false when the terminal can no longer be written to.
    fn show(&mut self, answer: &Response) -> bool {
        let frame = answer
            .progress
            .as_ref()
            .and_then(|p| Frame::deserialize(p).ok());
        let Some(frame) = frame else {
            return true;
        };
        self.origin = (frame.origin_col, frame.origin_row);
        let mut out = std::io::stdout().lock();
        let written = out.write_all(frame.paint.as_bytes()).is_ok() && out.flush().is_ok();
        if written {
            self.written = Some((frame.attachment, frame.seq));
        }
        self.attachment = Some(frame.attachment);
        written
    }

    /// Show [`HINT`] on the last row, in reverse video, leaving the cursor and pen as they were.
    fn hint(&mut self, (cols, rows): (u16, u16)) {
        let text: String = HINT.chars().take(cols as usize).collect();
        let line = format!(
            "\x1b7\x1b[{rows};1H\x1b[0;7m{text:<width$}\x1b8",
            width = cols as usize
        );
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(line.as_bytes()).and_then(|()| out.flush());
        self.hinted = true;
    }

    /// End the attachment for a person who left, and wait (bounded) for its answer: by then `list`
    /// no longer counts them. An attachment that has not painted yet is cancelled instead.
    async fn leave(&mut self, client: &Client, call: &mut Call) {
        if let Some(attachment) = self.attachment {
            let leave = ShownParams {
                attachment,
                seq: 0,
                leave: true,
            };
            if let Ok(params) = serde_json::to_value(leave) {
                if client.start(ops::AttachShown::NAME, params).await.is_ok() {
                    let answered = async {
                        while let Ok(answer) = call.next().await {
                            if answer.is_final() {
                                return;
                            }
                        }
                    };
                    if tokio::time::timeout(LEAVE_LIMIT, answered).await.is_ok() {
                        return;
                    }
                }
            }
        }
        let _ = client.cancel(call.id()).await;
    }

    /// Tell the daemon the terminal has taken the paints so far, so it sends more (it keeps only a
    /// few on the way). The answer is not awaited: the next paint is.
    async fn acknowledge(&mut self, client: &Client) {
        let Some((attachment, seq)) = self.written.take() else {
            return;
        };
        let shown = ShownParams {
            attachment,
            seq,
            leave: false,
        };
        if let Ok(params) = serde_json::to_value(shown) {
            let _ = client.start(ops::AttachShown::NAME, params).await;
        }
    }
}

/// The person's terminal while attached: raw mode on its alternate screen, its title saved. Dropping
/// it gives everything back (on every way out, errors and panics included).
struct Terminal {
    saved: Termios,
}

impl Terminal {
    fn enter() -> Result<Terminal, OpError> {
        let stdin = std::io::stdin();
        let saved = termios::tcgetattr(stdin.as_fd()).map_err(|e| {
            OpError::new(
                ErrorCode::IoError,
                format!("attach: reading terminal settings: {e}"),
            )
        })?;
        let mut raw = saved.clone();
        raw.make_raw();
        termios::tcsetattr(stdin.as_fd(), OptionalActions::Now, &raw)
            .map_err(|e| OpError::new(ErrorCode::IoError, format!("attach: raw mode: {e}")))?;
        let terminal = Terminal { saved };
        // Save the title, then the alternate screen (xterm's 1049 saves the cursor too).
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(b"\x1b[22;0t\x1b[?1049h");
        let _ = out.flush();
        Ok(terminal)
    }
}

/// Every input mode a paint may have turned on, off again; the pen, cursor and palette as the
/// terminal's own.
const RELEASE: &[u8] = b"\x1b[?2026l\x1b[0m\x1b[?7h\x1b[?25h\x1b[0 q\x1b[?1l\x1b>\x1b[?2004l\x1b[?1004l\x1b[?1007l\
\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[=0;1u\x1b]104\x07\x1b]110\x07\x1b]111\x07";

impl Drop for Terminal {
    fn drop(&mut self) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(RELEASE);
        let _ = out.write_all(b"\x1b[?1049l\x1b[23;0t");
        let _ = out.flush();
        let _ = termios::tcsetattr(std::io::stdin().as_fd(), OptionalActions::Now, &self.saved);
    }
}

/// The person's keystrokes, as their terminal sent them, read by a thread (a blocking read of stdin
/// cannot be cancelled; the thread ends with the process). The channel closes when stdin does.
fn read_keys() -> mpsc::UnboundedReceiver<Vec<u8>> {
    let (tx, rx) = mpsc::unbounded_channel();
    std::thread::spawn(move || {
        let stdin = std::io::stdin();
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match rustix::io::read(stdin.as_fd(), &mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
                Err(_) => return,
            }
        }
    });
    rx
}

/// Send the person's bytes to the program, one request at a time (requests on a connection run
/// concurrently, so the next waits for the last: keys arrive in order), with whatever was typed
/// meanwhile sent together.
async fn forward_input(client: Arc<Client>, sid: String, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(mut bytes) = rx.recv().await {
        while let Ok(more) = rx.try_recv() {
            bytes.extend_from_slice(&more);
        }
        let params = WriteRawParams {
            sid: sid.clone(),
            data: base64::engine::general_purpose::STANDARD.encode(&bytes),
        };
        let Ok(params) = serde_json::to_value(params) else {
            continue;
        };
        // A program that ended takes no more input; the attachment learns it from its own answer.
        let _ = client.call(ops::WriteRaw::NAME, params).await;
    }
}

async fn start_attach(
    client: &Client,
    args: &AttachArgs,
    (cols, rows): (u16, u16),
) -> Result<Call, OpError> {
    let params = AttachParams {
        sid: args.sid.clone(),
        cols,
        rows,
        read_only: args.read_only,
    };
    let params = serde_json::to_value(params)
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("attach: parameters: {e}")))?;
    client.start_stream(ops::Attach::NAME, params).await
}

async fn resize_session(
    client: &Client,
    sid: &str,
    (cols, rows): (u16, u16),
) -> Result<(), OpError> {
    let params = ResizeParams {
        sid: sid.to_owned(),
        cols,
        rows,
    };
    let params = serde_json::to_value(params)
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("resize: parameters: {e}")))?;
    client.call(ops::Resize::NAME, params).await.map(|_| ())
}

/// The person's terminal size (columns, rows).
fn terminal_size() -> Result<(u16, u16), OpError> {
    let size = termios::tcgetwinsize(std::io::stdout().as_fd())
        .map_err(|e| OpError::new(ErrorCode::IoError, format!("attach: terminal size: {e}")))?;
    // A terminal that does not know its size (0x0) is taken as the classic 80x24.
    let or = |n: u16, default: u16| if n == 0 { default } else { n };
    Ok((or(size.ws_col, 80), or(size.ws_row, 24)))
}

/// The outcome a final answer of `attach` carries.
fn final_answer(answer: Response) -> Result<Detached, OpError> {
    if let Some(error) = answer.error {
        return Err(error);
    }
    let result = answer.result.unwrap_or(Value::Null);
    Detached::deserialize(&result).map_err(|e| {
        OpError::new(
            ErrorCode::BadResponse,
            format!("attach: the daemon's answer does not read: {e}"),
        )
    })
}

/// `attach --secret`: read one line from this terminal with its echo off and type it, with Enter,
/// into the session's hidden-line prompt. The line is shown nowhere and kept nowhere.
async fn type_secret(args: &AttachArgs, fleet: &Fleet) -> Result<i32, OpError> {
    let stdin = std::io::stdin();
    if !termios::isatty(stdin.as_fd()) {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            "attach --secret: needs a terminal to read the secret from, with its echo off",
        ));
    }
    let (host, sid) = fleet.locate(ops::Attach::NAME, &args.sid).await?;
    let client = fleet.client(host, false).await?;
    let saved = termios::tcgetattr(stdin.as_fd()).map_err(|e| {
        OpError::new(
            ErrorCode::IoError,
            format!("attach --secret: the terminal: {e}"),
        )
    })?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(termios::LocalModes::ECHO);
    quiet.local_modes.insert(termios::LocalModes::ICANON);
    termios::tcsetattr(stdin.as_fd(), termios::OptionalActions::Flush, &quiet).map_err(|e| {
        OpError::new(
            ErrorCode::IoError,
            format!("attach --secret: the terminal: {e}"),
        )
    })?;
    eprint!("{sid} reads a hidden line; type it (not shown) and press Enter: ");
    let mut line = String::new();
    let read = std::io::stdin().read_line(&mut line);
    let _ = termios::tcsetattr(stdin.as_fd(), termios::OptionalActions::Flush, &saved);
    eprintln!();
    read.map_err(|e| OpError::new(ErrorCode::IoError, format!("attach --secret: reading: {e}")))?;
    let value = line.trim_end_matches(['\n', '\r']).to_owned();
    let params = serde_json::to_value(TypeSecretParams {
        sid: sid.clone(),
        value,
    })
    .map_err(|e| OpError::new(ErrorCode::Internal, format!("type_secret: {e}")))?;
    client.call(ops::TypeSecret::NAME, params).await?;
    eprintln!("typed into {sid}");
    Ok(0)
}
