//! Every end-to-end test of the screenpilot crate, in one binary (one link, one run that packs the
//! slow tests beside the quick ones): a module per area, each driving the real binary, daemon and
//! programs, grouped by what the area needs beyond a pty, so one group runs where only its parts are
//! installed: `cargo test -p screenpilot --test e2e terminal::` (or `x11::`, `wayland::`, `ssh::`, `browser::`,
//! `node::`); one area: `terminal::waits::`.

mod common;
/// The X recorder two desktop areas check input against.
#[path = "fixtures/x11/recorder.rs"]
mod recorder;

/// Programs on ptys only (bash, vim, python3, sqlite3, tmux to compare with), and the Python venv
/// of the MCP client and the Textual apps.
#[path = "groups/terminal.rs"]
mod terminal;

/// Also a private Xvfb desktop (Xvfb, openbox, xterm, GTK and Qt apps, AT-SPI).
#[path = "groups/x11.rs"]
mod x11;

/// Also a private headless Wayland desktop (sway, foot, GTK 3 on Wayland, wl-clipboard).
#[path = "groups/wayland.rs"]
mod wayland;

/// Also hosts of their own: network namespaces with a private sshd and exec bridges.
#[path = "groups/ssh.rs"]
mod ssh;

/// Also headless Chromium (the watch page, asciinema's web player, a web page's accessibility
/// tree).
#[path = "groups/browser.rs"]
mod browser;

/// Also Node 22 from npm (the npm packages, pi, the MCP Inspector, the agents' own CLIs: Codex,
/// Claude Code, Gemini CLI).
#[path = "groups/node.rs"]
mod node;
