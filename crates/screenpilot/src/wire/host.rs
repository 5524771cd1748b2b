//! Where a daemon is: this machine's socket, another host over the system's `ssh`, or any command that
//! runs `screenpilot dial-stdio` inside a box (`docker exec -i`, `kubectl exec -i`, a provider's exec).
//! No protocol of our own crosses the network: the link is that command's stdin and stdout, carrying
//! the same JSON lines as the local socket.
//!
//! ```text
//! local                          this machine's daemon (the default)
//! ssh://[user@]host[:port]       ssh ... host screenpilot dial-stdio
//! exec:COMMAND ARGS...           that command, split like a shell; it must run the bridge
//! NAME=ssh://... | NAME=exec:... the same, called NAME in sids (NAME/SID) and messages
//! ```

use std::process::Stdio;

use crate::wire::error::{ErrorCode, OpError};

/// The `ssh` command and the options every link gets before the host: no prompts (a password or
/// a host-key question would hang a program with no terminal), a bounded connect, and a link that
/// notices a dead network within about 15 s. The user's `~/.ssh/config` (jump hosts, agents,
/// ControlMaster) still applies; our options come first, so they win over it.
const SSH_OPTIONS: &[&str] = &[
    "-T",
    "-e",
    "none",
    "-o",
    "BatchMode=yes",
    "-o",
    "ConnectTimeout=10",
    "-o",
    "ServerAliveInterval=5",
    "-o",
    "ServerAliveCountMax=3",
];

/// Names the ssh program (and leading arguments, split like a shell) to run instead of `ssh`.
pub const SSH_VAR: &str = "SCREENPILOT_SSH";
/// Names the screenpilot program on the far side of an `ssh://` host (default `screenpilot`).
pub const REMOTE_BIN_VAR: &str = "SCREENPILOT_REMOTE_BIN";
/// Names the host(s) when no `--host` is given.
pub const HOST_VAR: &str = "SCREENPILOT_HOST";

/// How a daemon is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// This machine's socket.
    Local,
    /// `ssh [-p PORT] DESTINATION screenpilot dial-stdio`.
    Ssh {
        destination: String,
        port: Option<u16>,
        /// The ssh program and its leading arguments: `SCREENPILOT_SSH` when the host was read,
        /// else `ssh` ([`Host::with_ssh`] sets it).
        ssh: Vec<String>,
    },
    /// A command (program and arguments) whose stdin and stdout are a bridge's.
    Exec(Vec<String>),
}

/// A daemon somewhere, with the name it goes by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Short, for `NAME/SID` and messages: `local`, the ssh host, or what `NAME=` gave.
    pub name: String,
    pub place: Place,
}

impl Host {
    pub fn local() -> Host {
        Host {
            name: "local".into(),
            place: Place::Local,
        }
    }

    /// Read a host as the CLI, the MCP server and `SCREENPILOT_HOST` take it; errors name `host`.
    pub fn parse(text: &str) -> Result<Host, OpError> {
        let text = text.trim();
        let bad = |why: String| OpError::invalid("host", why);
        let example =
            "e.g. ssh://me@box:2222, exec:docker exec -i box screenpilot dial-stdio, or local";
        // NAME= before a place; a place never starts with a NAME= of its own.
        let (name, spec) = match text.split_once('=') {
            Some((name, rest)) if is_name(name) && !name.contains(':') => {
                (Some(name.to_owned()), rest)
            }
            _ => (None, text),
        };
        let place = if spec == "local" {
            Place::Local
        } else if let Some(rest) = spec.strip_prefix("ssh://") {
            let rest = rest.trim_end_matches('/');
            let (destination, port) = split_port(rest).map_err(bad)?;
            let host_part = destination.rsplit('@').next().unwrap_or_default();
            if host_part.is_empty() || destination.starts_with('-') || destination.contains('/') {
                return Err(bad(format!(
                    "{text:?}: ssh://[user@]host[:port] needs a host; {example}"
                )));
            }
            Place::Ssh {
                destination: destination.to_owned(),
                port,
                ssh: ssh_from_env(),
            }
        } else if let Some(command) = spec.strip_prefix("exec:") {
            let argv = shell_words::split(command)
                .map_err(|e| bad(format!("{text:?}: the command does not split: {e}")))?;
            if argv.is_empty() {
                return Err(bad(format!("{text:?}: exec: needs a command; {example}")));
            }
            Place::Exec(argv)
        } else {
            return Err(bad(format!("{text:?} is not a host; {example}")));
        };
        let name = name.unwrap_or_else(|| match &place {
            Place::Local => "local".into(),
            Place::Ssh { destination, .. } => destination
                .rsplit('@')
                .next()
                .unwrap_or(destination)
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
            Place::Exec(argv) => exec_name(argv),
        });
        Ok(Host { name, place })
    }

    /// The same host reached with this ssh program (and leading arguments, e.g. `-F FILE`).
    pub fn with_ssh(mut self, argv: Vec<String>) -> Host {
        if let Place::Ssh { ssh, .. } = &mut self.place {
            if !argv.is_empty() {
                *ssh = argv;
            }
        }
        self
    }

    pub fn is_local(&self) -> bool {
        self.place == Place::Local
    }

    /// The command that makes the link, for a host that is not local.
    pub fn command(&self) -> Option<tokio::process::Command> {
        self.command_with(&[])
    }

    /// The same, with `extra` arguments for the bridge (`--watch`); an exec host's command ends
    /// with the bridge, so they go last.
    pub fn command_with(&self, extra: &[&str]) -> Option<tokio::process::Command> {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        let argv: Vec<String> = match &self.place {
            Place::Local => return None,
            Place::Exec(argv) => argv.iter().chain(&extra).cloned().collect(),
            Place::Ssh {
                destination,
                port,
                ssh,
            } => {
                let remote_bin =
                    std::env::var(REMOTE_BIN_VAR).unwrap_or_else(|_| "screenpilot".into());
                let mut argv = ssh.clone();
                argv.extend(SSH_OPTIONS.iter().map(|s| (*s).to_owned()));
                if let Some(port) = port {
                    argv.extend(["-p".to_owned(), port.to_string()]);
                }
                argv.extend([
                    "--".to_owned(),
                    destination.clone(),
                    // The far side's shell reads this line.
                    std::iter::once(shell_words::quote(&remote_bin).into_owned())
                        .chain(std::iter::once("dial-stdio".to_owned()))
                        .chain(extra)
                        .collect::<Vec<_>>()
                        .join(" "),
                ]);
                argv
            }
        };
        let mut command = tokio::process::Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        Some(command)
    }

    /// What the link runs, for messages (no secrets: we never put any on a command line).
    pub fn describe(&self) -> String {
        match &self.place {
            Place::Local => "this machine's daemon".into(),
            Place::Ssh {
                destination, port, ..
            } => match port {
                Some(port) => format!("ssh://{destination}:{port}"),
                None => format!("ssh://{destination}"),
            },
            Place::Exec(argv) => format!("exec:{}", shell_words::join(argv)),
        }
    }
}

/// The hosts named by `--host` (any number), else by `SCREENPILOT_HOST` (one), else this machine's.
pub fn hosts_from(args: &[String]) -> Result<Vec<Host>, OpError> {
    let texts: Vec<String> = if args.is_empty() {
        std::env::var(HOST_VAR)
            .ok()
            .filter(|h| !h.trim().is_empty())
            .into_iter()
            .collect()
    } else {
        args.to_vec()
    };
    if texts.is_empty() {
        return Ok(vec![Host::local()]);
    }
    let hosts = texts
        .iter()
        .map(|t| Host::parse(t))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, host) in hosts.iter().enumerate() {
        if hosts[..i].iter().any(|h| h.name == host.name) {
            return Err(OpError::invalid(
                "host",
                format!(
                    "two hosts are called {:?}; name them apart, e.g. a=ssh://{}",
                    host.name, host.name
                ),
            ));
        }
    }
    Ok(hosts)
}

/// The ssh program from `SCREENPILOT_SSH` (split like a shell), else `ssh`.
fn ssh_from_env() -> Vec<String> {
    std::env::var(SSH_VAR)
        .ok()
        .and_then(|s| shell_words::split(&s).ok())
        .filter(|argv| !argv.is_empty())
        .unwrap_or_else(|| vec!["ssh".into()])
}

/// A host name is a sid-like word: it goes before `/` in `NAME/SID`.
fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 64
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `user@host:port` into the destination and port; `[v6]:port` too.
fn split_port(text: &str) -> Result<(&str, Option<u16>), String> {
    let colon = if text.ends_with(']') {
        None
    } else {
        text.rfind(':')
    };
    match colon {
        None => Ok((text, None)),
        Some(at) => {
            let (destination, port) = (&text[..at], &text[at + 1..]);
            if destination.contains(':') && !destination.starts_with('[') {
                // A bare IPv6 address: no port.
                return Ok((text, None));
            }
            let port = port
                .parse::<u16>()
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| format!("{port:?} is not a port (1-65535)"))?;
            Ok((destination, Some(port)))
        }
    }
}

/// A name for an exec host: the word after the exec verb's options (`docker exec -i box ...` is
/// `box`), else the program's name.
fn exec_name(argv: &[String]) -> String {
    let after_exec = argv
        .iter()
        .position(|a| a == "exec")
        .and_then(|at| argv[at + 1..].iter().find(|a| !a.starts_with('-')));
    let word = after_exec.unwrap_or(&argv[0]);
    let word = word.rsplit('/').next().unwrap_or(word);
    let cleaned: String = word
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "exec".into()
    } else {
        cleaned
    }
}

impl From<std::io::Error> for LinkFailure {
    fn from(e: std::io::Error) -> LinkFailure {
        LinkFailure(e.to_string())
    }
}

/// Why a link could not be made, as a sentence.
#[derive(Debug)]
pub struct LinkFailure(pub String);

impl LinkFailure {
    pub fn into_error(self, host: &Host) -> OpError {
        OpError::new(
            ErrorCode::HostUnreachable,
            format!("host {} ({}): {}", host.name, host.describe(), self.0),
        )
        .with_field("host")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_read_as_places_with_names() {
        let h = Host::parse("ssh://me@box.example:2222").expect("ok");
        assert_eq!(h.name, "box.example");
        assert!(matches!(
            &h.place,
            Place::Ssh { destination, port: Some(2222), .. } if destination == "me@box.example"
        ));
        let h = Host::parse("ssh://box").expect("ok");
        assert!(matches!(
            &h.place,
            Place::Ssh { destination, port: None, .. } if destination == "box"
        ));
        let h = Host::parse("ssh://[::1]:22").expect("ok");
        assert_eq!(h.name, "::1");
        let h = Host::parse("exec:docker exec -i sandbox-7 screenpilot dial-stdio").expect("ok");
        assert_eq!(h.name, "sandbox-7");
        assert!(matches!(&h.place, Place::Exec(argv) if argv.len() == 6));
        let h = Host::parse("k=exec:kubectl exec -i pod -- screenpilot dial-stdio").expect("ok");
        assert_eq!(h.name, "k");
        assert_eq!(Host::parse("local").expect("ok"), Host::local());
    }

    #[test]
    fn a_bad_host_is_named() {
        for text in [
            "box",
            "ssh://",
            "ssh://me@",
            "ssh://box:0",
            "ssh://box:http",
            "exec:",
            "exec:'unclosed",
            "ssh://-oProxyCommand=x",
        ] {
            let e = Host::parse(text).expect_err(text);
            assert_eq!(e.field.as_deref(), Some("host"), "{text}: {e:?}");
        }
    }

    #[test]
    fn the_ssh_command_asks_nothing_and_runs_the_bridge() {
        let h = Host::parse("ssh://me@box:2222").expect("ok").with_ssh(vec![
            "ssh".into(),
            "-F".into(),
            "/cfg".into(),
        ]);
        let command = h.command().expect("a command");
        let argv: Vec<String> = std::iter::once(command.as_std().get_program())
            .chain(command.as_std().get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let text = argv.join(" ");
        assert!(text.starts_with("ssh -F /cfg -T"), "{text}");
        assert!(text.contains("BatchMode=yes"), "{text}");
        assert!(
            text.ends_with("-p 2222 -- me@box screenpilot dial-stdio"),
            "{text}"
        );
        assert!(Host::local().command().is_none());
    }

    #[test]
    fn two_hosts_of_one_name_are_refused() {
        let e = hosts_from(&["ssh://a".into(), "ssh://me@a".into()]).expect_err("same name");
        assert_eq!(e.field.as_deref(), Some("host"));
        let hosts = hosts_from(&["x=ssh://a".into(), "ssh://a".into()]).expect("named apart");
        assert_eq!(hosts[0].name, "x");
    }
}
