//! The documentation's examples run: every ```sh block of README.md and docs/*.md runs here as a
//! bash script (`set -e`: each command must succeed), with `screenpilot` on its PATH, against a
//! daemon of its own, in a scratch directory with a home of its own. A block that cannot run on this machine (another
//! host, a person's terminal, your own project's files) says so on the line above it:
//! `<!-- not run: why -->`. So an example that stops working fails CI, not a reader.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::{binary, repo, Daemon};

/// A shell block of a page: where it starts, and its text.
struct Block {
    page: PathBuf,
    line: usize,
    text: String,
}

/// The `sh` blocks of a page, and those marked as not run (with their reasons). A block indented
/// under a list item counts as well, its lines read without that indentation.
fn blocks(page: &Path) -> (Vec<Block>, Vec<(usize, String)>) {
    let text = std::fs::read_to_string(page).expect("read the page");
    let lines: Vec<&str> = text.lines().collect();
    let (mut run, mut skipped) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "```sh" {
            i += 1;
            continue;
        }
        let indent = lines[i].len() - lines[i].trim_start().len();
        let start = i + 1;
        let end = (start..lines.len())
            .find(|&k| lines[k].trim_start().starts_with("```"))
            .expect("the block ends");
        let above = lines[..i].iter().rev().find(|l| !l.trim().is_empty());
        let reason = above
            .and_then(|l| l.trim().strip_prefix("<!-- not run:"))
            .and_then(|r| r.strip_suffix("-->"))
            .map(|r| r.trim().to_owned());
        match reason {
            Some(reason) => skipped.push((start, reason)),
            None => run.push(Block {
                page: page.to_owned(),
                line: start,
                text: lines[start..end]
                    .iter()
                    .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
                    .collect::<Vec<_>>()
                    .join("\n"),
            }),
        }
        i = end + 1;
    }
    (run, skipped)
}

fn pages() -> Vec<PathBuf> {
    let root = repo();
    let mut pages = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// Run one block; its output when it fails.
fn run(block: &Block) -> Result<(), String> {
    let daemon = Daemon::new();
    let bin = daemon.path().join("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    std::os::unix::fs::symlink(binary(), bin.join("screenpilot")).expect("link screenpilot");
    let work = daemon.path().join("work");
    std::fs::create_dir_all(&work).expect("work dir");
    // A project as the examples suppose one (docs/SKILL.md runs `make test` in it).
    std::fs::write(work.join("Makefile"), "test:\n\t@echo all tests passed\n").expect("a Makefile");
    // A home of its own, as a new user's: no rc file of this machine's (a root .bashrc running
    // `pyenv rehash` under a lock) changes what the examples do.
    let home = daemon.path().join("home");
    std::fs::create_dir_all(&home).expect("home dir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let script = format!("set -e\n{}\n", block.text);
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(&work)
        .env("PATH", path)
        .env("SCREENPILOT_DIR", daemon.path())
        .env("HOME", &home)
        .env_remove("SCREENPILOT_HOST")
        .stdin(Stdio::null())
        .output()
        .expect("run bash");
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{}:{}: the example failed ({}):\n{}\n--- stdout\n{}\n--- stderr\n{}",
        block.page.display(),
        block.line,
        out.status,
        block.text,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    ))
}

/// Every `sh` block of every page runs (all at once, each against its own daemon), or says on the
/// line above it why not.
#[test]
fn every_example_runs_or_says_why_not() {
    let mut runnable = Vec::new();
    for page in pages() {
        let (run_here, skipped) = blocks(&page);
        for (line, reason) in skipped {
            assert!(
                reason.len() > 10,
                "{}:{line}: say why the block is not run",
                page.display()
            );
        }
        runnable.extend(run_here);
    }
    assert!(runnable.len() >= 6, "the pages lost their examples");
    let failures: Vec<String> = std::thread::scope(|scope| {
        let running: Vec<_> = runnable
            .iter()
            .map(|block| scope.spawn(move || run(block).err()))
            .collect();
        running
            .into_iter()
            .filter_map(|r| r.join().expect("a block's thread"))
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
