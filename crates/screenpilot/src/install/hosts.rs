//! The agent hosts `screenpilot install HOST` knows: where each reads its user configuration, and
//! what goes there. Each host's definition says which documentation (or the host's own CLI) it was
//! checked against.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::edit::Edit;
use super::error::InstallError;
use super::section;

/// An agent host screenpilot's MCP server can be installed into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentHost {
    /// Claude Code
    Claude,
    /// Codex CLI
    Codex,
    /// Gemini CLI
    Gemini,
    /// Cursor
    Cursor,
    /// Visual Studio Code (Copilot's agent mode)
    Vscode,
    /// Windsurf
    Windsurf,
    /// Zed
    Zed,
    /// pi (its built-in MCP)
    Pi,
}

/// Where the configuration folders are: `$HOME`, and the variables some hosts read instead.
#[derive(Debug, Clone)]
pub struct Places {
    pub home: PathBuf,
    /// `$XDG_CONFIG_HOME`, else `~/.config` (VS Code and Zed on Linux).
    pub config: PathBuf,
    /// `$CODEX_HOME`, else `~/.codex`.
    pub codex_home: PathBuf,
}

impl Places {
    /// From this process's environment.
    pub fn from_env() -> Result<Places, InstallError> {
        let absolute = |name: &str| {
            std::env::var_os(name)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let home = absolute("HOME").ok_or(InstallError::NoHome)?;
        Ok(Places {
            config: absolute("XDG_CONFIG_HOME").unwrap_or_else(|| home.join(".config")),
            codex_home: absolute("CODEX_HOME").unwrap_or_else(|| home.join(".codex")),
            home,
        })
    }
}

/// The command a host runs to start screenpilot's MCP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Server {
    /// The absolute path of the screenpilot executable.
    pub command: String,
    pub args: Vec<String>,
}

/// One file install writes, and what it puts there.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    pub path: PathBuf,
    pub edit: Edit,
}

/// The key of the transport field (`"type": "stdio"`) that Claude Code and VS Code want.
const TRANSPORT: &str = "type"; // not an operation

/// docs/SKILL.md, installed as Claude Code's skill (a copy kept beside the crate, which the
/// `installed_skill_is_docs_skill_md` test keeps equal to it).
const SKILL: &str = include_str!("../../assets/skill/SKILL.md");

/// The section of Codex's `AGENTS.md` and Gemini's `GEMINI.md`: when to use screenpilot rather than
/// the host's own shell tool.
fn instructions(host: &str) -> String {
    format!(
        "{} (`screenpilot install {host} --remove` takes this section out) -->
## Interactive programs: screenpilot

For a program that waits for keys or draws a screen (a REPL, an editor, a pager, htop, a menu, a
password or yes/no prompt, `git add -p`, a TUI, a desktop window), use the screenpilot MCP tools
(`spawn`, `send` with `until` to type and wait for what you expect, `snapshot` or `screenshot` to
look, `close` when done) instead of the shell tool, which gives it no terminal to answer in.
Commands that print and exit stay in the shell.
{}
",
        section::START,
        section::END
    )
}

impl AgentHost {
    /// The host's own name.
    pub fn title(self) -> &'static str {
        match self {
            AgentHost::Claude => "Claude Code",
            AgentHost::Codex => "Codex",
            AgentHost::Gemini => "Gemini CLI",
            AgentHost::Cursor => "Cursor",
            AgentHost::Vscode => "VS Code",
            AgentHost::Windsurf => "Windsurf",
            AgentHost::Zed => "Zed",
            AgentHost::Pi => "pi",
        }
    }

    /// The word for it on the command line.
    pub fn word(self) -> &'static str {
        match self {
            AgentHost::Claude => "claude",
            AgentHost::Codex => "codex",
            AgentHost::Gemini => "gemini",
            AgentHost::Cursor => "cursor",
            AgentHost::Vscode => "vscode",
            AgentHost::Windsurf => "windsurf",
            AgentHost::Zed => "zed",
            AgentHost::Pi => "pi",
        }
    }

    /// The files install writes for this host: its MCP configuration first, then the instructions
    /// that tell its model when to use screenpilot. With `config`, that file instead of the MCP
    /// configuration, and nothing else.
    pub fn targets(self, places: &Places, server: &Server, config: Option<&Path>) -> Vec<Target> {
        let mcp = |path: PathBuf, edit: Edit| Target {
            path: config.map_or(path, Path::to_owned),
            edit,
        };
        // Our entry's fields, in the order they are written (a serde_json map would sort them).
        let json = |servers: &'static [&'static str], fields: &[(&str, Value)]| Edit::Json {
            servers,
            fields: fields
                .iter()
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect(),
        };
        let (command, args) = (&server.command, &server.args);
        let run = [("command", json!(command)), ("args", json!(args))];
        let with = |first: Option<(&'static str, Value)>, last: Option<(&'static str, Value)>| {
            first
                .into_iter()
                .chain(run.iter().cloned())
                .chain(last)
                .collect::<Vec<_>>()
        };
        let mut targets = match self {
            // Claude Code (code.claude.com/docs/en/mcp, "MCP installation scopes"): user scope
            // is the top-level `mcpServers` of ~/.claude.json; `claude mcp add --scope user NAME
            // -- CMD ARGS` (2.1) writes {"type": "stdio", "command", "args", "env": {}}, and
            // `claude mcp list` reads ours back (tests/install_e2e.rs). Skills
            // (code.claude.com/docs/en/skills): ~/.claude/skills/NAME/SKILL.md.
            AgentHost::Claude => vec![
                mcp(
                    places.home.join(".claude.json"),
                    json(
                        &["mcpServers"],
                        &with(Some((TRANSPORT, json!("stdio"))), Some(("env", json!({})))),
                    ),
                ),
                Target {
                    path: places.home.join(".claude/skills/screenpilot/SKILL.md"),
                    edit: Edit::File {
                        contents: SKILL.into(),
                    },
                },
            ],
            // Codex (developers.openai.com/codex/mcp, /codex/config-reference): stdio servers are
            // `[mcp_servers.NAME]` tables with `command` and `args` in $CODEX_HOME/config.toml
            // (default ~/.codex), as `codex mcp add NAME -- CMD ARGS` (0.169) writes them, and
            // `codex mcp list` reads ours back. Global instructions: $CODEX_HOME/AGENTS.md
            // (/codex/guides/agents-md).
            AgentHost::Codex => vec![
                mcp(
                    places.codex_home.join("config.toml"),
                    Edit::Toml {
                        servers: "mcp_servers",
                        command: command.clone(),
                        args: args.clone(),
                    },
                ),
                Target {
                    path: places.codex_home.join("AGENTS.md"),
                    edit: Edit::Section {
                        text: instructions(self.word()),
                    },
                },
            ],
            // Gemini CLI (geminicli.com/docs/tools/mcp-server, /docs/cli/configuration): user
            // settings ~/.gemini/settings.json, `mcpServers.NAME` with `command` and `args`, as
            // `gemini mcp add --scope user` (0.61) writes them; global context ~/.gemini/GEMINI.md
            // (/docs/cli/gemini-md).
            AgentHost::Gemini => vec![
                mcp(
                    places.home.join(".gemini/settings.json"),
                    json(&["mcpServers"], &run),
                ),
                Target {
                    path: places.home.join(".gemini/GEMINI.md"),
                    edit: Edit::Section {
                        text: instructions(self.word()),
                    },
                },
            ],
            // Cursor (cursor.com/docs/mcp): global servers in ~/.cursor/mcp.json, `mcpServers`
            // with `command` and `args` (a project's: .cursor/mcp.json, with --config).
            AgentHost::Cursor => vec![mcp(
                places.home.join(".cursor/mcp.json"),
                json(&["mcpServers"], &run),
            )],
            // VS Code (code.visualstudio.com/docs/copilot/reference/mcp-configuration): the user
            // profile's mcp.json (on Linux ~/.config/Code/User/mcp.json), top-level `servers`;
            // a stdio server needs `type` "stdio" and `command`, `args` optional (a workspace's:
            // .vscode/mcp.json, with --config).
            AgentHost::Vscode => vec![mcp(
                places.config.join("Code/User/mcp.json"),
                json(&["servers"], &with(Some((TRANSPORT, json!("stdio"))), None)),
            )],
            // Windsurf (docs.windsurf.com/windsurf/cascade/mcp): ~/.codeium/windsurf/mcp_config.json,
            // Claude Desktop's schema: `mcpServers` with `command` and `args`.
            AgentHost::Windsurf => vec![mcp(
                places.home.join(".codeium/windsurf/mcp_config.json"),
                json(&["mcpServers"], &run),
            )],
            // Zed (zed.dev/docs/ai/mcp, "As Custom Servers"): settings.json (on Linux
            // ~/.config/zed/settings.json, JSONC), `context_servers.NAME` with `command`, `args`
            // (required) and `env`. The `"source": "custom"` of older docs is gone: Zed's settings
            // migration m_2025_11_25 removes it, and its settings type is untagged since.
            AgentHost::Zed => vec![mcp(
                places.config.join("zed/settings.json"),
                json(&["context_servers"], &with(None, Some(("env", json!({}))))),
            )],
            // pi 1.6's built-in MCP (docs/mcp.md; tests/pi_package_e2e.rs runs it): `pi mcp add
            // NAME --exposure direct -- CMD ARGS` writes ~/.pi/agent/mcp.json, `mcpServers.NAME`
            // with `command`, `args` and "exposure": "direct" (the tools callable by their names,
            // not behind pi's code-mode proxy); `pi mcp list` reads ours back.
            AgentHost::Pi => vec![mcp(
                places.home.join(".pi/agent/mcp.json"),
                json(
                    &["mcpServers"],
                    &with(None, Some(("exposure", json!("direct")))),
                ),
            )],
        };
        if config.is_some() {
            targets.truncate(1);
        }
        targets
    }

    /// A line for the person when the host has a shell tool of its own that its model may reach
    /// for first, even for a program that needs a terminal.
    pub fn shell_tool_note(self) -> Option<String> {
        let (tool, file) = match self {
            AgentHost::Claude => ("Bash", "the skill ~/.claude/skills/screenpilot/SKILL.md"),
            AgentHost::Codex => ("exec_command", "the section added to AGENTS.md"),
            AgentHost::Gemini => ("run_shell_command", "the section added to GEMINI.md"),
            _ => return None,
        };
        Some(format!(
            "{} has a terminal tool of its own ({tool}) that the model may reach for first; {file} tells it when to use screenpilot instead.",
            self.title()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installed_skill_is_docs_skill_md() {
        let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/SKILL.md");
        let docs = std::fs::read_to_string(docs).expect("docs/SKILL.md");
        assert!(
            docs == SKILL,
            "crates/screenpilot/assets/skill/SKILL.md differs from docs/SKILL.md: copy it over"
        );
    }

    #[test]
    fn every_host_writes_under_home_and_config_writes_that_file_only() {
        let places = Places {
            home: "/h".into(),
            config: "/h/.config".into(),
            codex_home: "/h/.codex".into(),
        };
        let server = Server {
            command: "/bin/sp".into(),
            args: vec!["mcp".into()],
        };
        for host in <AgentHost as clap::ValueEnum>::value_variants() {
            let targets = host.targets(&places, &server, None);
            assert!(!targets.is_empty(), "{host:?}");
            assert!(targets.iter().all(|t| t.path.starts_with("/h")), "{host:?}");
            let project = host.targets(&places, &server, Some(Path::new("/p/.mcp.json")));
            assert_eq!(project.len(), 1);
            assert_eq!(project[0].path, Path::new("/p/.mcp.json"));
            assert_eq!(project[0].edit, targets[0].edit);
        }
    }
}
