//! A link to a daemon on another host: the host's command (`ssh ... screenpilot dial-stdio`, `docker
//! exec -i ...`) run with its stdin and stdout as the connection, checked by a first `status` before
//! anything else is sent.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::Child;

use super::wire::{end_group, read_answer_line, Feed, Read, Tail, Wire};
use crate::host::{Host, LinkFailure, Place, REMOTE_BIN_VAR};
use crate::protocol::Response;

/// How long making a link may take: ssh's own connect limit (10 s), then the far daemon starting (up
/// to 20 s). `SCREENPILOT_CONNECT_TIMEOUT_MS` changes it.
const CONNECT_LIMIT: Duration = Duration::from_secs(40);
pub const CONNECT_LIMIT_VAR: &str = "SCREENPILOT_CONNECT_TIMEOUT_MS";

/// The limit for making a link.
pub fn connect_limit() -> Duration {
    std::env::var(CONNECT_LIMIT_VAR)
        .ok()
        .and_then(|ms| ms.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(CONNECT_LIMIT)
}

/// Run the host's link command and check that a daemon answers through it. Returns the connection
/// and the daemon's `status`.
pub async fn dial(host: &Host) -> Result<(Wire, Value), LinkFailure> {
    let Some(mut command) = host.command() else {
        return Err(LinkFailure("not a remote host".into()));
    };
    let program = command
        .as_std()
        .get_program()
        .to_string_lossy()
        .into_owned();
    // Its own process group: a Ctrl-C at the person's terminal is ours to handle (we end the link
    // cleanly), not a signal that kills ssh under us.
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| {
        LinkFailure(match e.kind() {
            std::io::ErrorKind::NotFound => format!("{program} is not installed (not in PATH)"),
            _ => format!("cannot run {program}: {e}"),
        })
    })?;
    let group = child.id().and_then(|pid| i32::try_from(pid).ok());
    let tail = Tail::default();
    if let Some(mut stderr) = child.stderr.take() {
        let tail = tail.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                tail.push(&buf[..n]);
            }
        });
    }
    let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(LinkFailure(format!("{program} has no pipes")));
    };
    let mut reader = BufReader::new(stdout);
    let limit = connect_limit();
    let handshake = async {
        // A command that ended at once refuses the write; what it printed first still tells more.
        let _ = async {
            stdin
                .write_all(b"{\"id\":0,\"op\":\"status\",\"params\":{}}\n")
                .await?;
            stdin.flush().await
        }
        .await;
        let mut line = Vec::new();
        loop {
            match read_answer_line(&mut reader, &mut line).await {
                Read::Line => {}
                Read::End => return Err(String::new()),
                Read::TooLong(what) => {
                    return Err(format!("dropped the link: {program} sent {what}"))
                }
            }
            let Ok(response) = serde_json::from_slice::<Response>(&line) else {
                // Something that is not our protocol: a shell's banner, the wrong program.
                let said = String::from_utf8_lossy(&line);
                return Err(format!(
                    "{program} did not answer in screenpilot's protocol; it said: {:?}",
                    said.trim_end().chars().take(200).collect::<String>()
                ));
            };
            if response.id == 0 && response.is_final() {
                return Ok(response.result.unwrap_or(Value::Null));
            }
        }
    };
    let outcome = tokio::select! {
        // What the command printed before it ended says more than that it ended.
        biased;
        outcome = tokio::time::timeout(limit, handshake) => match outcome {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no answer within {} ms ({CONNECT_LIMIT_VAR})", limit.as_millis())),
        },
        status = child.wait() => Err(exited(host, &program, status.ok(), &tail).await),
    };
    match outcome {
        Ok(status) => Ok((
            Wire {
                writer: Box::new(stdin),
                feed: Feed {
                    reader: Box::new(reader),
                    child: Some(child),
                    tail: Some(tail),
                    group,
                },
            },
            status,
        )),
        Err(why) => {
            // A pipe that closed under us most often means the command ended: its exit says why.
            let status = if why.is_empty() || why.starts_with("cannot ") {
                tokio::time::timeout(Duration::from_secs(5), child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok)
            } else {
                None
            };
            let why = if let Some(status) = status {
                exited(host, &program, Some(status), &tail).await
            } else if why.is_empty() {
                exited(host, &program, None, &tail).await
            } else {
                let said = tail.text();
                if said.is_empty() {
                    why
                } else {
                    format!("{why}; {program} said: {said}")
                }
            };
            let _ = child.start_kill();
            end_group(group);
            Err(LinkFailure(why))
        }
    }
}

/// Why a link command ended: its status and what it said, with a hint where the status has one.
async fn exited(
    host: &Host,
    program: &str,
    status: Option<std::process::ExitStatus>,
    tail: &Tail,
) -> String {
    // What it wrote last may still be on its way through the pipe.
    tokio::task::yield_now().await;
    let said = tail.text();
    let how = match status {
        Some(s) => match (s.code(), std::os::unix::process::ExitStatusExt::signal(&s)) {
            (Some(code), _) => format!("{program} exited with status {code}"),
            (None, Some(signal)) => format!("{program} was killed by signal {signal}"),
            _ => format!("{program} ended"),
        },
        None => format!("{program} closed the link"),
    };
    let hint = match (status.and_then(|s| s.code()), &host.place) {
        (Some(127), Place::Ssh { .. }) => format!(
            " (is screenpilot installed on the host, in the PATH of a non-interactive ssh command? Set {REMOTE_BIN_VAR} to its path)"
        ),
        (Some(127), _) => " (is screenpilot installed where the command runs?)".into(),
        (Some(255), Place::Ssh { .. }) if said.contains("Permission denied") => {
            " (no key was accepted: ssh runs with BatchMode=yes and never asks for a password; load a key into ssh-agent or name one in ~/.ssh/config)".into()
        }
        _ => String::new(),
    };
    if said.is_empty() {
        format!("{how} before the daemon answered{hint}")
    } else {
        format!("{how} before the daemon answered: {said}{hint}")
    }
}

/// Why a link that was up went down: the command's exit, or what it said.
pub async fn why_down(child: Option<&mut Child>, tail: Option<&Tail>) -> String {
    let said = tail.map(Tail::text).unwrap_or_default();
    let status = match child {
        Some(child) => tokio::time::timeout(Duration::from_millis(500), child.wait())
            .await
            .ok()
            .and_then(Result::ok),
        None => None,
    };
    let how = match status {
        Some(s) if s.code().is_some() => format!(
            "the link command exited with status {}",
            s.code().unwrap_or_default()
        ),
        Some(_) => "the link command was killed".to_owned(),
        None => "the link closed".to_owned(),
    };
    if said.is_empty() {
        how
    } else {
        format!("{how}: {said}")
    }
}
