//! The program a session runs, from what the caller said: `cmd` (a command line, split like a shell
//! but not run by one), `cmd` with `shell` (run by `sh -c`), or `argv` (used exactly). One rule for
//! `spawn` and `desktop_start`.

use screenpilot_session::spec::{command_argv, Command};

use super::error::OpError;

/// The argv for `cmd`/`argv`/`shell`, or `None` when no program was given (the caller decides
/// whether one is needed). Errors name the field at fault.
pub fn program_argv(
    cmd: Option<&str>,
    argv: Option<&[String]>,
    shell: bool,
) -> Result<Option<Vec<String>>, OpError> {
    let command = match (cmd, argv, shell) {
        (Some(_), Some(_), _) => return Err(OpError::invalid("cmd", "give cmd or argv, not both")),
        (None, Some(_), true) => {
            return Err(OpError::invalid("shell", "shell=true needs cmd, not argv"))
        }
        (None, None, true) => return Err(OpError::invalid("shell", "shell=true needs cmd")),
        (None, None, false) => return Ok(None),
        (Some(line), None, true) => Command::Shell(line),
        (Some(line), None, false) => Command::Line(line),
        (None, Some(argv), false) => Command::Argv(argv),
    };
    Ok(Some(command_argv(command)?))
}

/// This process's umask, read from `/proc/self/status` (setting it to read it back would race with
/// other threads creating files).
pub(crate) fn this_process_umask() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("Umask:"))?;
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
}
