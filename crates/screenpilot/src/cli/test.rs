//! `screenpilot test`: run step files in this process (each on sessions of its own, several at once),
//! print one line a file, and the reports asked for. No daemon: a test run owns what it starts.

use std::io::Write;

use serde_json::json;

use super::args::TestArgs;
use crate::ops::{ErrorCode, OpError};
use crate::steps::{report, run_paths, FileOutcome, RunOptions};

/// Run the files `args` name; the exit status: 0 all passed, 1 some failed, 2 a file is not a step
/// file (every such error is printed, naming the file, the line and the field).
pub fn run(args: &TestArgs, as_json: bool) -> Result<i32, OpError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| {
            OpError::new(
                ErrorCode::Runtime,
                format!("cannot start the async runtime: {e}"),
            )
        })?;
    let options = RunOptions {
        update: args.update,
        report_dir: args.report.clone(),
        goldens_anywhere: args.goldens_anywhere,
    };
    if let Some(dir) = &options.report_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            OpError::invalid("report", format!("cannot create {}: {e}", dir.display()))
        })?;
    }
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let outcomes = match runtime.block_on(run_paths(&args.paths, &options, jobs)) {
        Ok(outcomes) => outcomes,
        Err(errors) => {
            let mut err = std::io::stderr().lock();
            for e in &errors {
                let _ = writeln!(err, "screenpilot: {e}");
            }
            if as_json {
                let list: Vec<_> = errors
                    .iter()
                    .map(|e| json!({"file": e.path, "line": e.line, "field": e.field, "message": e.message}))
                    .collect();
                println!(
                    "{}",
                    json!({"ok": false, "error": {"code": "invalid_argument", "message": errors[0].to_string(), "field": errors[0].field}, "errors": list})
                );
            }
            return Ok(2);
        }
    };
    if let Some(path) = &args.junit {
        std::fs::write(path, report::junit(&outcomes)).map_err(|e| {
            OpError::invalid("junit", format!("cannot write {}: {e}", path.display()))
        })?;
    }
    let pages = match &options.report_dir {
        Some(dir) => report::write_failure_pages(dir, &outcomes).map_err(|e| {
            OpError::invalid(
                "report",
                format!("cannot write into {}: {e}", dir.display()),
            )
        })?,
        None => Vec::new(),
    };
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    if as_json {
        println!("{}", summary_json(&outcomes, &pages));
    } else {
        print_people(&outcomes, &pages);
    }
    Ok(i32::from(failed > 0))
}

fn summary_json(outcomes: &[FileOutcome], pages: &[std::path::PathBuf]) -> serde_json::Value {
    let files: Vec<_> = outcomes
        .iter()
        .map(|o| {
            json!({
                "file": o.path, "name": o.name, "passed": o.passed(),
                "elapsed_ms": (o.elapsed.as_secs_f64() * 1e3).round(),
                "steps": o.steps.len(),
                "failure": o.failure.as_ref().map(|f| json!({"line": f.line, "message": f.message, "files": f.files})),
                "updated": o.updated, "recordings": o.recordings,
            })
        })
        .collect();
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    json!({"ok": true, "passed": outcomes.len() - failed, "failed": failed, "files": files, "reports": pages})
}

fn print_people(outcomes: &[FileOutcome], pages: &[std::path::PathBuf]) {
    let mut out = std::io::stdout().lock();
    for o in outcomes {
        let secs = o.elapsed.as_secs_f64();
        match &o.failure {
            None => {
                let _ = writeln!(out, "ok   {} ({secs:.2} s)", o.path.display());
                for path in &o.updated {
                    let _ = writeln!(out, "     golden written: {}", path.display());
                }
            }
            Some(f) => {
                let _ = writeln!(out, "FAIL {}:{} ({secs:.2} s)", o.path.display(), f.line);
                for line in f.message.lines() {
                    let _ = writeln!(out, "     {line}");
                }
            }
        }
    }
    for page in pages {
        let _ = writeln!(out, "report: {}", page.display());
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    let _ = writeln!(out, "{} passed, {failed} failed", outcomes.len() - failed);
}
