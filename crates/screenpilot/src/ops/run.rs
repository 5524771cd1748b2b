//! `run`: a shell command as a unit. Typed at the prompt of a shell session, it answers when the
//! command ends, with its exit status and its own output (not the prompt, not the rest of the screen),
//! from the shell's OSC 133 marks ([`screenpilot_session::shell`]). Long output is cut to a budget
//! (its start and its end, which say what happened), and the cut lines are read with `offset`. A
//! command still running at the timeout answers with its output so far and its id, to wait again.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::keys;
use screenpilot_session::wait::{wait_until, Until, WaitOptions};
use screenpilot_session::{CommandRecord, Session, ShellState};

use super::kit::common::{Context, OpError, Progress};
use super::kit::operation::{Operation, Profile, Report, View};
use super::kit::until::timeout;
use crate::ops::kit::step_table::{Journaled, StepTable};

/// Default most lines of output answered.
const DEFAULT_MAX_LINES: usize = 60;
/// Default most bytes of output answered.
const DEFAULT_MAX_BYTES: usize = 8 * 1024;
/// Of a cut output, the share of lines shown from its start (the rest from its end).
const HEAD_SHARE: usize = 4;
/// How long a shell just started has to show its first prompt.
const FIRST_PROMPT: Duration = Duration::from_secs(10);

/// Parameters of `run`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunParams {
    pub sid: String,
    pub command: Option<String>,
    /// Of an earlier run
    pub id: Option<u64>,
    pub offset: Option<usize>,
    /// 60
    pub max_lines: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<usize>,
    /// 30000
    pub timeout_ms: Option<u64>,
}

/// What `run` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Ran {
    pub sid: String,
    /// The command's id in this session (for `id`).
    pub id: u64,
    /// The command ended; its exit status follows.
    pub done: bool,
    pub exit_code: Option<i32>,
    /// Lines of output in all.
    pub lines: usize,
    /// The lines shown, in order; a cut is one line `[... N lines ...]`.
    pub output: String,
    /// Lines of output left out (read them with offset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
    /// The shell ended before the command did.
    #[serde(default)]
    pub shell_exited: bool,
    pub elapsed_ms: f64,
}

/// The lines a cut left out: `[from, to)`, 0-based.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
pub struct Omitted {
    pub from: usize,
    pub to: usize,
}

impl Report for Ran {
    fn satisfied(&self) -> bool {
        (self.done || self.shell_exited) && self.exit_code == Some(0)
    }

    fn view(&self) -> View {
        let mut header = match (self.done, self.exit_code) {
            (true, Some(code)) => format!("exit={code}"),
            (true, None) => "exit=?".to_owned(),
            (false, Some(code)) if self.shell_exited => format!("exit={code} (the shell exited)"),
            _ if self.shell_exited => "shell exited".to_owned(),
            _ => format!("running id={} ({} ms)", self.id, self.elapsed_ms.round()),
        };
        header.push_str(&format!(
            " {} line{}",
            self.lines,
            if self.lines == 1 { "" } else { "s" }
        ));
        if let Some(cut) = self.omitted {
            header.push_str(&format!(
                "; {}-{} cut: {{\"id\":{},\"offset\":{}}}",
                cut.from, cut.to, self.id, cut.from
            ));
        }
        View {
            header: vec![("", header)],
            screen: Some(self.output.clone()),
            ..View::default()
        }
    }

    fn human(&self) -> String {
        self.output.clone()
    }

    fn complaint(&self) -> Option<String> {
        match (self.done, self.exit_code) {
            (true, Some(0)) => None,
            (true, code) => Some(format!(
                "run: exit status {}",
                code.map_or("unknown".to_owned(), |c| c.to_string())
            )),
            (false, Some(0)) if self.shell_exited => None,
            (false, Some(code)) if self.shell_exited => {
                Some(format!("run: the shell exited with status {code}"))
            }
            _ if self.shell_exited => Some("run: the shell exited first".to_owned()),
            _ => Some(format!(
                "run: still running after {} ms (id {})",
                self.elapsed_ms.round(),
                self.id
            )),
        }
    }
}

/// The lines of `record` from `offset`, cut to `max_lines` and `max_bytes`: its start and its end.
fn budget(
    record: &CommandRecord,
    offset: usize,
    max_lines: usize,
    max_bytes: usize,
) -> (String, Option<Omitted>) {
    let lines = &record.lines[offset.min(record.lines.len())..];
    let fits = |take: &[String]| take.iter().map(|l| l.len() + 1).sum::<usize>() <= max_bytes;
    if lines.len() <= max_lines && fits(lines) {
        return (lines.join("\n"), None);
    }
    // Take lines from the start and the end while both budgets allow, a quarter of them from the start.
    let head_lines = (max_lines / HEAD_SHARE).max(1);
    let mut head = 0;
    let mut tail = 0;
    let mut bytes = 0;
    let mut long_line = false;
    while head + tail < max_lines.min(lines.len()) {
        let from_head = head < head_lines;
        let line = if from_head {
            &lines[head]
        } else {
            &lines[lines.len() - 1 - tail]
        };
        if bytes + line.len() + 1 > max_bytes {
            long_line = head + tail == 0;
            break;
        }
        bytes += line.len() + 1;
        if from_head {
            head += 1;
        } else {
            tail += 1;
        }
    }
    if long_line {
        // Not even one line fits: show the start of the first.
        let mut end = max_bytes.min(lines[0].len());
        while !lines[0].is_char_boundary(end) {
            end -= 1;
        }
        let cut = Omitted {
            from: offset + 1,
            to: offset + lines.len(),
        };
        return (format!("{}[...]", &lines[0][..end]), Some(cut));
    }
    let from = offset + head;
    let to = offset + lines.len() - tail;
    let mut shown: Vec<String> = lines[..head].to_vec();
    shown.push(format!("[... {} lines ...]", to - from));
    shown.extend_from_slice(&lines[lines.len() - tail..]);
    (shown.join("\n"), Some(Omitted { from, to }))
}

/// `run`: a shell command as a unit.
pub struct Run;

impl Operation for Run {
    const NAME: &'static str = "run";
    const PROFILES: &'static [Profile] = &[Profile::Terminal];
    const DESCRIPTION: &'static str = "Run a command in a bash session (spawn bash); returns when it ends: exit=N and its own output (long: start and end; offset reads more). \
Still running at timeout: output so far and id; pass id to wait again. E.g. {\"sid\":\"sh\",\"command\":\"make\"}";
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] =
        &[("max_bytes", Profile::NONE)];
    type Params = RunParams;
    type Output = Ran;

    fn progress(p: &RunParams) -> Option<String> {
        let command = p.command.as_deref().unwrap_or_default();
        Some(format!("running {command:?} on {}", p.sid))
    }

    fn journal(p: &RunParams, _: bool) -> Vec<Journaled> {
        let step = p.command.clone().map(|command| StepTable {
            run: Some(command),
            ..StepTable::default()
        });
        step.map(Journaled::waiting).into_iter().collect()
    }

    fn time_limit(p: &RunParams) -> Option<Duration> {
        timeout(Some(p.timeout_ms.unwrap_or(30_000)), "timeout_ms").ok()
    }

    async fn run(ctx: &Context, p: RunParams, _: &Progress) -> Result<Ran, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let limit = timeout(Some(p.timeout_ms.unwrap_or(30_000)), "timeout_ms")?;
        let max_lines = p.max_lines.unwrap_or(DEFAULT_MAX_LINES);
        let max_bytes = p.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        if max_lines == 0 {
            return Err(OpError::invalid("max_lines", "must be at least 1; e.g. 60"));
        }
        if max_bytes < 16 {
            return Err(OpError::invalid(
                "max_bytes",
                "must be at least 16; e.g. 8192",
            ));
        }
        let id = match (p.command, p.id) {
            (Some(_), Some(_)) => {
                return Err(OpError::invalid(
                    "id",
                    "give command (to run one) or id (an earlier one), not both",
                ))
            }
            (None, None) => {
                return Err(OpError::invalid(
                    "command",
                    "no command given; e.g. {\"command\": \"ls -l\"}",
                ))
            }
            (Some(command), None) => start(&session, &p.sid, &command, limit).await?,
            (None, Some(id)) => {
                if session.command(id).is_none() {
                    return Err(OpError::invalid(
                        "id",
                        format!("session '{}' has no command {id} (ids come from run; the last 4 finished are kept)", p.sid),
                    ));
                }
                id
            }
        };
        let until = Until {
            command: Some(id),
            end_on_exit: true,
            ..Until::default()
        };
        let options = WaitOptions {
            timeout: limit,
            scrollback: None,
        };
        wait_until(&session, &until, options).await;
        let record = session
            .command(id)
            .ok_or_else(|| OpError::invalid("id", format!("command {id} is no longer kept")))?;
        let offset = p.offset.unwrap_or(0);
        if offset > record.lines.len() {
            return Err(OpError::invalid(
                "offset",
                format!("{offset} is past the output's {} lines", record.lines.len()),
            ));
        }
        let (output, omitted) = budget(&record, offset, max_lines, max_bytes);
        let shell_exited = !record.done && !session.alive();
        // A command that ends the shell (`exit 3`, `exec false`) ends with the shell's status.
        let exit_code = match session.exit_info() {
            Some(exit) if shell_exited => exit.exit_code.or(exit.signal.map(|s| 128 + s)),
            _ => record.exit_code,
        };
        Ok(Ran {
            sid: p.sid,
            id,
            done: record.done,
            exit_code,
            lines: record.lines.len(),
            output,
            omitted,
            shell_exited,
            elapsed_ms: (record.elapsed.as_secs_f64() * 1e6).round() / 1e3,
        })
    }
}

/// Type `command` at the prompt, armed to capture its output; its id. A shell just started gets
/// its first prompt's time; a shell that gives no marks, or is busy with a command, is refused.
async fn start(
    session: &Session,
    sid: &str,
    command: &str,
    limit: Duration,
) -> Result<u64, OpError> {
    if command.trim().is_empty() {
        return Err(OpError::invalid("command", "is empty"));
    }
    if session.shell_state() == ShellState::Unmarked && session.alive() && session.marks_expected()
    {
        // A shell that marks its prompts shows the first within moments of starting.
        let until = Until {
            prompt: true,
            end_on_exit: true,
            ..Until::default()
        };
        // Only while the shell is young: one whose rc replaced the marks is refused at once after.
        let options = WaitOptions {
            timeout: limit.min(FIRST_PROMPT.saturating_sub(session.age())),
            scrollback: None,
        };
        wait_until(session, &until, options).await;
    }
    match session.shell_state() {
        ShellState::Prompt => {}
        ShellState::Running => {
            return Err(OpError::invalid(
                "sid",
                format!("'{sid}' is still running a command: wait with its id, or send C-c"),
            ))
        }
        ShellState::Unmarked if !session.alive() => {
            return Err(OpError::invalid("sid", format!("'{sid}' has ended")))
        }
        ShellState::Unmarked => {
            return Err(OpError::invalid(
                "sid",
                format!(
                    "'{sid}' gives no shell marks (OSC 133): run needs a shell that marks its prompts. \
bash started by spawn has them (unless its rc sets PROMPT_COMMAND or PS0); fish 4 emits them; \
for other shells or programs use send with until"
                ),
            ))
        }
    }
    // A multi-line command runs as one: a brace group is read whole before it runs.
    let line = if command.contains('\n') {
        format!("{{ {command}\n}}")
    } else {
        command.to_owned()
    };
    let id = session.arm_command(command);
    let modes = session.modes();
    let text = keys::encode_entered(&line, &modes);
    // Ctrl-U first empties the prompt's line: the terminal's answers to queries an earlier
    // command sent (`printf '\033[6n'`) and never read are there as typed text, and would become
    // part of this command.
    let mut chunks = vec![vec![0x15], text];
    chunks.extend(keys::encode_tokens(&["Enter"], &modes));
    session.write(&chunks).await?;
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: usize) -> CommandRecord {
        CommandRecord {
            id: 1,
            command: "seq".into(),
            started: true,
            done: true,
            exit_code: Some(0),
            lines: (1..=n).map(|i| i.to_string()).collect(),
            dropped: 0,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn output_within_budget_is_shown_whole() {
        let (shown, cut) = budget(&record(3), 0, 60, 8192);
        assert_eq!(shown, "1\n2\n3");
        assert!(cut.is_none());
    }

    #[test]
    fn long_output_keeps_its_start_and_end_and_says_what_it_cut() {
        let (shown, cut) = budget(&record(100), 0, 8, 8192);
        assert_eq!(shown, "1\n2\n[... 92 lines ...]\n95\n96\n97\n98\n99\n100");
        let cut = cut.expect("cut");
        assert_eq!((cut.from, cut.to), (2, 94));
        // Reading on from the cut shows what was left out.
        let (shown, _) = budget(&record(100), cut.from, 3, 8192);
        assert!(shown.starts_with("3\n[..."), "{shown}");
    }

    #[test]
    fn the_byte_budget_cuts_too_and_one_huge_line_is_cut_inside() {
        let mut huge = record(1);
        huge.lines = vec!["x".repeat(100_000)];
        let (shown, cut) = budget(&huge, 0, 60, 100);
        assert_eq!(shown.len(), 100 + "[...]".len());
        assert!(cut.is_some());
        let (shown, _) = budget(&record(1000), 0, 60, 40);
        assert!(
            shown.len() <= 40 + "[... 1000 lines ...]".len() + 1,
            "{shown}"
        );
    }
}
