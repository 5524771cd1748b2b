//! `screenpilot install HOST`: show what would change in the host's files, ask when stdin is a
//! terminal (an agent or CI gets no question: the change is written and still shown), then write.
//! The work is in [`crate::install`]; this file prints, asks, and turns its errors into ours.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use serde_json::{json, Value};

use super::args::InstallArgs;
use crate::install::{self, Action, Change, InstallError, Places, Plan, Server};
use crate::mcp::profiles;
use crate::ops::{ErrorCode, OpError};

/// Install (or remove) for `args.agent`; the exit status: 0 written, nothing to do, or a dry run; 1
/// when the person said no.
pub fn run(args: &InstallArgs, as_json: bool) -> Result<i32, OpError> {
    let server = server(args.profile.as_deref())?;
    let places = Places::from_env().map_err(refusal)?;
    let config = match &args.config {
        Some(file) => Some(
            std::path::absolute(file)
                .map_err(|e| OpError::invalid("config", format!("{}: {e}", file.display())))?,
        ),
        None => None,
    };
    let targets = args.agent.targets(&places, &server, config.as_deref());
    let plan = install::plan(&targets, args.remove).map_err(refusal)?;
    let preview = preview(args, &plan);
    let ask = !args.dry_run && !plan.changes.is_empty() && std::io::stdin().is_terminal();
    if !as_json {
        print!("{preview}");
    } else if ask {
        eprint!("{preview}");
    }
    let written = if plan.changes.is_empty() || args.dry_run {
        false
    } else if ask && !confirmed() {
        if !as_json {
            println!("nothing written");
        }
        report(args, &plan, false, as_json);
        return Ok(1);
    } else {
        install::write(&plan).map_err(refusal)?;
        true
    };
    if !as_json {
        print!("{}", outcome(args, &plan, written));
    }
    report(args, &plan, written, as_json);
    Ok(0)
}

/// The command the host runs: this executable (its real path), `mcp`, and `--tools` with the
/// profiles asked for, checked as `mcp --tools` checks them.
fn server(profile: Option<&str>) -> Result<Server, OpError> {
    let mut args = vec!["mcp".to_owned()];
    if let Some(list) = profile {
        let named =
            profiles::parse(list).map_err(|unknown| unknown.refusal("--profile", "profile"))?;
        let names: Vec<&str> = named.iter().map(|p| p.name()).collect();
        args.extend(["--tools".to_owned(), names.join(",")]);
    }
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| refusal(InstallError::Executable(e)))?;
    let command = exe.to_str().map(str::to_owned).ok_or_else(|| {
        OpError::new(
            ErrorCode::IoError,
            format!("the executable's path {} is not UTF-8", exe.display()),
        )
    })?;
    Ok(Server { command, args })
}

/// An install error as ours: a file that cannot take the entry is bad input (`config`), one that
/// cannot be read or written an I/O error.
fn refusal(error: InstallError) -> OpError {
    let (code, field) = match &error {
        InstallError::Text { .. }
        | InstallError::ReadOnly { .. }
        | InstallError::NotText { .. } => (ErrorCode::InvalidArgument, "config"),
        InstallError::NoHome => (ErrorCode::InvalidArgument, "HOME"),
        _ => (ErrorCode::IoError, "config"),
    };
    OpError::new(code, error.to_string()).with_field(field)
}

/// "Write it? [y/N]" on stderr; yes for `y` or `yes`.
fn confirmed() -> bool {
    eprint!("Write it? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    let _ = std::io::stdin().lock().read_line(&mut answer);
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

fn shown(path: &Path) -> String {
    path.display().to_string()
}

/// What a change does, in a line.
fn headline(change: &Change) -> String {
    let path = shown(&change.path);
    let what = &change.what;
    match change.action {
        Action::Add if change.before.is_none() => format!("create {path} with {what}"),
        Action::Add => format!("add {what} to {path}"),
        Action::Update => format!("update {what} in {path}"),
        Action::TakeOut => format!("take {what} out of {path}"),
        Action::Restore => format!("put {path} back as it was before install (its backup)"),
        Action::Delete if change.whole_file => format!("delete {path} ({what})"),
        Action::Delete => format!(
            "delete {path}: it holds only {what}, and there was no such file before install"
        ),
    }
}

/// A change as a diff; a whole file of ours (the skill) by its size only.
fn change_text(change: &Change) -> String {
    let whole = change.whole_file;
    match (&change.before, &change.after) {
        (None, Some(after)) if whole => format!("  ({} lines)\n", after.lines().count()),
        (Some(_), None) if whole => String::new(),
        (before, after) => {
            install::unified(&shown(&change.path), before.as_deref(), after.as_deref())
        }
    }
}

/// What would change, or that nothing would.
fn preview(args: &InstallArgs, plan: &Plan) -> String {
    let mut out = String::new();
    for same in &plan.unchanged {
        let state = if same.installed {
            "already installed"
        } else {
            "not installed"
        };
        out.push_str(&format!("{state}: {} ({})\n", shown(&same.path), same.what));
    }
    if plan.changes.is_empty() {
        return out;
    }
    out.push_str(&format!(
        "screenpilot install {} ({}){}: {} file(s) to change\n",
        args.agent.word(),
        args.agent.title(),
        if args.remove { " --remove" } else { "" },
        plan.changes.len()
    ));
    for change in &plan.changes {
        out.push_str(&headline(change));
        out.push('\n');
        out.push_str(&change_text(change));
    }
    out
}

/// What was done, and what the person should know after it.
fn outcome(args: &InstallArgs, plan: &Plan, written: bool) -> String {
    let mut out = String::new();
    if args.dry_run && !plan.changes.is_empty() {
        out.push_str("dry run: nothing written\n");
        return out;
    }
    if !written {
        return out;
    }
    for change in &plan.changes {
        let done = match change.after {
            Some(_) => "wrote",
            None => "deleted",
        };
        let backup = change
            .backup()
            .map(|b| format!(" (backup: {})", shown(&b)))
            .unwrap_or_default();
        out.push_str(&format!("{done} {}{backup}\n", shown(&change.path)));
    }
    if let Some(note) = note(args) {
        out.push_str(&note);
        out.push('\n');
    }
    out
}

/// The line on the host's own terminal tool, after an install that wrote the instructions that
/// answer it (not `--remove`, not `--config`).
fn note(args: &InstallArgs) -> Option<String> {
    if args.remove || args.config.is_some() {
        return None;
    }
    args.agent.shell_tool_note()
}

/// With `--json`, the one object: what changed (or would), what did not, and the note.
fn report(args: &InstallArgs, plan: &Plan, written: bool, as_json: bool) {
    if !as_json {
        return;
    }
    let changes: Vec<Value> = plan
        .changes
        .iter()
        .map(|c| {
            json!({
                "path": shown(&c.path),
                "what": c.what,
                "action": c.action.as_str(),
                "diff": change_text(c),
                "backup": c.backup().map(|b| shown(&b)),
            })
        })
        .collect();
    let unchanged: Vec<Value> = plan
        .unchanged
        .iter()
        .map(|u| json!({"path": shown(&u.path), "what": u.what, "installed": u.installed}))
        .collect();
    println!(
        "{}",
        json!({
            "ok": true,
            "host": args.agent.word(),
            "remove": args.remove,
            "dry_run": args.dry_run,
            "written": written,
            "changes": changes,
            "unchanged": unchanged,
            "note": note(args),
        })
    );
}
