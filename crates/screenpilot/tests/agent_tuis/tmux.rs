//! The same program in tmux, to compare with: a private server (`-L`, `-f /dev/null`), one pane of
//! a fixed size, and waits without polling: `pipe-pane` copies the pane's output into a FIFO that a
//! thread reads, so the test wakes on the program's output and reads the pane only once it has been
//! quiet for a while, as screenpilot's own waits do.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use regex::Regex;

use super::cells::Screen;

/// One tmux server with one pane running one program; killed when dropped.
pub struct TmuxPane {
    socket: String,
    fifo: PathBuf,
    output: Receiver<()>,
    reader: Option<JoinHandle<()>>,
}

/// `'word'` for sh, whatever the word holds.
pub fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

impl TmuxPane {
    /// Start `argv` in a pane of `cols` x `rows`, in `cwd`, with exactly the environment `env`
    /// (`env -i`: tmux's own TERM, TMUX and TMUX_PANE are not passed on, so the program sees what
    /// it sees in screenpilot).
    pub fn start(
        scratch: &Path,
        (cols, rows): (u16, u16),
        cwd: &Path,
        env: &[(String, String)],
        argv: &[String],
    ) -> TmuxPane {
        let socket = format!(
            "sp-agent-tuis-{}-{}",
            std::process::id(),
            scratch
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("pane")
        );
        let fifo = scratch.join("tmux-output.fifo");
        let c_fifo = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a plain syscall on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) }, 0, "mkfifo");
        let (tx, output) = mpsc::channel();
        let reader_fifo = fifo.clone();
        let reader = std::thread::spawn(move || {
            // Blocks until pipe-pane's `cat` opens the FIFO (or Drop does, to end this).
            let Ok(mut file) = File::open(&reader_fifo) else {
                return;
            };
            let mut buf = [0u8; 65536];
            while let Ok(n) = file.read(&mut buf) {
                if n == 0 || tx.send(()).is_err() {
                    break;
                }
            }
        });
        let mut command = vec!["env".to_owned(), "-i".to_owned()];
        command.extend(env.iter().map(|(k, v)| format!("{k}={v}")));
        command.extend(argv.iter().cloned());
        let line = command
            .iter()
            .map(|w| shell_quote(w))
            .collect::<Vec<_>>()
            .join(" ");
        let pane = TmuxPane {
            socket,
            fifo,
            output,
            reader: Some(reader),
        };
        let (cols, rows) = (cols.to_string(), rows.to_string());
        let pipe = format!("exec cat > {}", shell_quote(&pane.fifo.to_string_lossy()));
        let cwd = cwd.to_string_lossy();
        // One tmux command list: the pane's output is piped before the server reads any of it.
        // tmux answers a program's colour queries (OSC 10 and 11, which Codex and Claude Code
        // send to pick their colours) only with colours it was given, and a detached server has
        // none: it is given the ones screenpilot answers with (its dark theme), so both
        // terminals say the same and the program has no reason to draw differently.
        pane.tmux(&[
            "start-server",
            ";",
            "set-option",
            "-g",
            "window-style",
            "fg=#d8d8d8,bg=#16161c",
            ";",
            "new-session",
            "-d",
            "-s",
            "agent",
            "-x",
            &cols,
            "-y",
            &rows,
            "-c",
            &cwd,
            &line,
            ";",
            "pipe-pane",
            "-o",
            "-t",
            "agent",
            &pipe,
        ]);
        pane
    }

    /// Run `tmux ARGS` on this server; its standard output. Panics when it fails.
    pub fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run tmux");
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The pane as it is now: every cell's look, the cursor, the screen it is on.
    pub fn screen(&self) -> Screen {
        let capture = self.tmux(&["capture-pane", "-p", "-e", "-N", "-t", "agent"]);
        let state = self.tmux(&[
            "display-message",
            "-p",
            "-t",
            "agent",
            "#{cursor_y} #{cursor_x} #{cursor_flag} #{alternate_on}",
        ]);
        let n: Vec<u64> = state
            .split_whitespace()
            .map(|w| w.parse().expect("a number"))
            .collect();
        Screen::from_tmux(&capture, (n[0], n[1], n[2] == 1), n[3] == 1)
    }

    /// Wait until `pattern` matches the pane's text and the program has written nothing for
    /// `quiet`; the screen then. Panics with the last screen after `timeout`.
    pub fn settle(&self, pattern: &Regex, quiet: Duration, timeout: Duration) -> Screen {
        let deadline = Instant::now() + timeout;
        let left = || deadline.saturating_duration_since(Instant::now());
        loop {
            // Quiet: no output for `quiet` (or the pane ended, and its output with it).
            loop {
                if left().is_zero() {
                    panic!(
                        "tmux: {pattern:?} never held with {quiet:?} quiet; the screen:\n{}",
                        self.screen().text()
                    );
                }
                match self.output.recv_timeout(quiet.min(left())) {
                    Ok(()) => continue,
                    Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            let screen = self.screen();
            if pattern.is_match(&screen.text()) {
                return screen;
            }
            // Not yet: sleep until the program writes again.
            match self.output.recv_timeout(left()) {
                Ok(()) => {}
                Err(_) => panic!(
                    "tmux: {pattern:?} never showed; the screen:\n{}",
                    screen.text()
                ),
            }
        }
    }

    /// Press keys (tmux's names: `Down`, `Enter`, `C-c`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "agent"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    /// Paste `text` as a terminal does: bracketed when the program asked for it (`-p`), line
    /// breaks kept as they are (`-r`).
    pub fn paste(&self, text: &str) {
        self.tmux(&["set-buffer", "-b", "agent-paste", "--", text]);
        self.tmux(&[
            "paste-buffer",
            "-p",
            "-r",
            "-d",
            "-b",
            "agent-paste",
            "-t",
            "agent",
        ]);
    }
}

impl Drop for TmuxPane {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null", "kill-server"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // The reader may still wait in open() if pipe-pane never started: a writer that opens and
        // closes at once releases it.
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&self.fifo);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}
