//! The watch page in a real browser: Debian's chromium, headless, driven over its DevTools protocol by
//! `tests/watch_browser.py`, against a real daemon with a bash session and an Xvfb desktop. A person
//! opening the URL `screenpilot watch` prints sees the terminal's output appear live and the desktop
//! change after they click it; a page without the token gets 401 and sees nothing.
//!
//! Needs what `scripts/test.sh` installs: chromium (apt) and the venv's websocket-client;
//! `SCREENPILOT_TEST_PYTHON` names another Python, `SCREENPILOT_CHROMIUM` another browser.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::Daemon;

/// The venv's Python, which must have websocket-client: a missing one is a failure, never a skip.
fn python() -> PathBuf {
    let python = common::venv_python();
    let ready = Command::new(&python)
        .args(["-c", "import websocket"])
        .output()
        .map(|out| out.status.success())
        .unwrap_or(false);
    assert!(
        ready,
        "{} cannot import websocket (websocket-client); run scripts/test.sh, or set \
         SCREENPILOT_TEST_PYTHON to a Python that has it",
        python.display()
    );
    python
}

/// An xterm that turns mouse reporting on and titles itself "armed", then, on the first mouse
/// press, titles itself "clicked" and fills its window with text: a click changes thousands of pixels.
const CLICKABLE: &str = r#"printf '\033[?1000h\033]0;armed\007'; stty raw -echo; head -c 6 >/dev/null; stty sane; printf '\033[?1000l\033]0;clicked\007'; i=0; while [ $i -lt 30 ]; do echo 'CLICKED CLICKED CLICKED CLICKED CLICKED CLICKED'; i=$((i+1)); done; exec cat >/dev/null"#;

/// Run the browser script; its JSON summary of what the page showed.
fn run_browser(daemon: &Daemon, args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/watch_browser.py");
    let out = Command::new(python())
        .arg(&script)
        .arg("--binary")
        .arg(common::binary())
        .args(args)
        .env("SCREENPILOT_DIR", daemon.path())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the browser script failed ({:?})\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON summary ({e})\nstdout: {stdout}\nstderr: {stderr}"))
}

#[test]
fn the_page_shows_terminals_live_desktops_after_a_click_and_nothing_without_the_token() {
    let daemon = Daemon::new();
    daemon.spawn_bash("term");
    daemon.line("term", "echo before-$((2*3))");
    daemon.wait_regex("term", "^before-6$");
    let started = daemon.sp_json(&[
        "desktop", "start", "--sid", "desk", "--size", "640x400", "--", "xterm", "-e", "sh", "-c",
        CLICKABLE,
    ]);
    assert_eq!(started["kind"], "desktop", "{started}");
    daemon.wait_regex("desk", "^armed$");

    let watch = daemon.sp_json(&["watch", "--control", "--http", "127.0.0.1:0"]);
    let url = watch["url"].as_str().expect("watch answers its url");
    assert!(url.starts_with("http://127.0.0.1:"), "{watch}");
    assert!(
        url.contains("#token="),
        "the URL carries its token: {watch}"
    );

    let seen = run_browser(
        &daemon,
        &["--url", url, "--terminal", "term", "--desktop", "desk"],
    );

    // Without the token the page loads (it holds no data) but is refused everything: 401 for the
    // session list and for a session's view, no session shown, and it says why.
    let no_token = &seen["no_token"];
    assert_eq!(no_token["list_status"], 401, "{seen}");
    assert_eq!(no_token["view_status"], 401, "{seen}");
    assert_eq!(no_token["views"], 0, "no session shows: {seen}");
    assert!(
        no_token["notice"].as_str().unwrap_or("").contains("token"),
        "the page says it needs its token: {seen}"
    );
    // A wrong token: the page's websocket is answered 401 (chromium: "HTTP Authentication failed"),
    // and so is a bearer header.
    let wrong = &seen["wrong_token"];
    assert!(
        wrong["socket_error"]
            .as_str()
            .is_some_and(|e| e.contains("Authentication failed")),
        "{seen}"
    );
    assert_eq!(wrong["view_status"], 401, "{seen}");
    assert_eq!(wrong["views"], 0, "{seen}");

    // With it, both sessions are listed, side by side.
    assert_eq!(seen["views"]["term"], "terminal", "{seen}");
    assert_eq!(seen["views"]["desk"], "desktop", "{seen}");

    // Joining late shows the screen as it was; output typed afterwards appears live.
    let first = seen["terminal"]["first"].as_str().unwrap_or("");
    assert!(first.contains("before-6"), "{seen}");
    assert!(!first.contains("live-42"), "{seen}");
    assert_eq!(seen["terminal"]["live"], "live-42", "{seen}");
    assert_eq!(
        seen["terminal"]["page_lines"], seen["terminal"]["snapshot_lines"],
        "the page shows what snapshot reads: {seen}"
    );

    // A click through the page reaches the desktop, and the page's frame changes.
    assert_eq!(seen["desktop"]["title_after_click"], "clicked", "{seen}");
    assert_ne!(
        seen["desktop"]["frame_before"], seen["desktop"]["frame_after"],
        "a new frame was shown: {seen}"
    );
    assert!(
        seen["desktop"]["changed_pixels"].as_u64().unwrap_or(0) > 1000,
        "the text the click printed shows: {seen}"
    );
}
