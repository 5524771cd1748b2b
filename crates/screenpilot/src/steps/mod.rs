//! What an agent did, kept as a test: step files ([`file`]) run against real sessions ([`runner`]),
//! expectations retried on the live screen, golden screens ([`golden`]), and reports a CI system and a
//! person read ([`report`]). `screenpilot test FILE|DIR...` is the face; [`run_paths`] the library's.

pub mod file;
pub mod golden;
mod options;
pub mod report;
pub mod runner;

use std::path::{Path, PathBuf};

pub use file::{FileError, StepFile};
pub use runner::{run_file, FileOutcome, RunOptions};

/// The step files a path names: the file itself, or every `*.toml` under a directory, in order.
/// Symlinks are followed, but no folder or file is visited twice (a link back up the tree is not a
/// loop to run forever, and a file linked twice runs once).
pub fn files_of(path: &Path) -> Result<Vec<PathBuf>, FileError> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).map_err(|e| FileError {
        path: path.to_owned(),
        line: 0,
        field: "path".into(),
        message: format!("cannot read it: {e}"),
    })?;
    if !meta.is_dir() {
        return Ok(vec![path.to_owned()]);
    }
    let mut seen = std::collections::HashSet::new();
    seen.insert((meta.dev(), meta.ino()));
    let mut found = Vec::new();
    let mut dirs = vec![path.to_owned()];
    while let Some(dir) = dirs.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| FileError {
            path: dir.clone(),
            line: 0,
            field: "path".into(),
            message: format!("cannot list it: {e}"),
        })?;
        for entry in entries.flatten() {
            let p = entry.path();
            // A dangling link is left to the read below, which names it.
            let Ok(meta) = std::fs::metadata(&p) else {
                if p.extension().is_some_and(|e| e == "toml") {
                    found.push(p);
                }
                continue;
            };
            if meta.is_dir() {
                if seen.insert((meta.dev(), meta.ino())) {
                    dirs.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "toml")
                && seen.insert((meta.dev(), meta.ino()))
            {
                found.push(p);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The goldens of `file` whose path leaves its folder (absolute, or with `..`): a file found
/// somewhere must not make `--update` write elsewhere unless `--goldens-anywhere` says so.
fn goldens_outside(file: &StepFile) -> Vec<FileError> {
    file.steps
        .iter()
        .filter_map(|step| match &step.action {
            file::Action::Golden(golden)
                if golden.file.is_absolute()
                    || golden
                        .file
                        .components()
                        .any(|c| matches!(c, std::path::Component::ParentDir)) =>
            {
                Some(FileError {
                    path: file.path.clone(),
                    line: step.line,
                    field: "golden.file".into(),
                    message: format!(
                        "{} is outside the step file's folder; goldens stay under it (give --goldens-anywhere to allow it)",
                        golden.file.display()
                    ),
                })
            }
            _ => None,
        })
        .collect()
}

/// Read every step file `paths` name, then run them, `jobs` at a time, each on sessions of its own.
/// Every file is checked before any runs: one bad file is an error of the whole call.
pub async fn run_paths(
    paths: &[PathBuf],
    options: &RunOptions,
    jobs: usize,
) -> Result<Vec<FileOutcome>, Vec<FileError>> {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match files_of(path) {
            Ok(found) => {
                for f in found {
                    match StepFile::read(&f) {
                        Ok(file) => files.push(file),
                        Err(e) => errors.push(e),
                    }
                }
            }
            Err(e) => errors.push(e),
        }
    }
    if files.is_empty() && errors.is_empty() {
        errors.push(FileError {
            path: paths.first().cloned().unwrap_or_default(),
            line: 0,
            field: "path".into(),
            message: "no step files (*.toml) here".into(),
        });
    }
    if !options.goldens_anywhere {
        errors.extend(files.iter().flat_map(goldens_outside));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let permits = std::sync::Arc::new(tokio::sync::Semaphore::new(jobs.max(1)));
    let mut running = tokio::task::JoinSet::new();
    for (index, file) in files.into_iter().enumerate() {
        let permits = permits.clone();
        let options = options.clone();
        running.spawn(async move {
            let _permit = permits.acquire().await;
            (index, run_file(&file, &options).await)
        });
    }
    let mut outcomes = Vec::new();
    while let Some(done) = running.join_next().await {
        if let Ok(outcome) = done {
            outcomes.push(outcome);
        }
    }
    outcomes.sort_by_key(|(index, _)| *index);
    Ok(outcomes.into_iter().map(|(_, o)| o).collect())
}
