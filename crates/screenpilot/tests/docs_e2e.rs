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

/// The `sh` blocks of a page, and those marked as not run (with their reasons).
fn blocks(page: &Path) -> (Vec<Block>, Vec<(usize, String)>) {
    let text = std::fs::read_to_string(page).expect("read the page");
    let lines: Vec<&str> = text.lines().collect();
    let (mut run, mut skipped) = (Vec::new(), Vec::new());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim_end() != "```sh" {
            i += 1;
            continue;
        }
        let start = i + 1;
        let end = (start..lines.len())
            .find(|&k| lines[k].starts_with("```"))
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
                text: lines[start..end].join("\n"),
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

/// Every block of a page runs, or its page says why not.
fn page_runs(name: &str) {
    let page = repo().join(name);
    let (run_here, _) = blocks(&page);
    let failures: Vec<String> = run_here.iter().filter_map(|b| run(b).err()).collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Every page's blocks are run by one of the tests below, or marked with a reason.
#[test]
fn every_example_runs_or_says_why_not() {
    let covered = [
        "README.md",
        "docs/desktops.md",
        "docs/recording.md",
        "docs/watch.md",
    ];
    let mut unrun = Vec::new();
    for page in pages() {
        let (run_here, skipped) = blocks(&page);
        let name = page
            .strip_prefix(repo())
            .expect("in the repo")
            .to_string_lossy()
            .into_owned();
        if !run_here.is_empty() && !covered.contains(&name.as_str()) {
            unrun.push(format!(
                "{name}:{}: no test runs this page's examples",
                run_here[0].line
            ));
        }
        for (line, reason) in skipped {
            assert!(
                reason.len() > 10,
                "{name}:{line}: say why the block is not run"
            );
        }
    }
    assert!(unrun.is_empty(), "{}", unrun.join("\n"));
}

#[test]
fn the_readme_examples_run() {
    page_runs("README.md");
}

#[test]
fn the_desktop_examples_run() {
    page_runs("docs/desktops.md");
}

#[test]
fn the_recording_examples_run() {
    page_runs("docs/recording.md");
}

#[test]
fn the_watch_examples_run() {
    page_runs("docs/watch.md");
}
