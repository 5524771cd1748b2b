//! What every part of a run shares: how files are run, and the one way an expectation is retried
//! against a live screen (at each of its updates, never a polling timer).

use std::path::PathBuf;
use std::time::Duration;

use screenpilot_session::Session;

/// How to run files.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Write goldens that are missing or differ, instead of failing on them.
    pub update: bool,
    /// Where to write recordings, pictures and the HTML report of a failure.
    pub report_dir: Option<PathBuf>,
    /// Let goldens lie outside their step file's folder (absolute paths, `..`); by default a file
    /// found somewhere cannot make `--update` write anywhere else.
    pub goldens_anywhere: bool,
}

/// Wait until `check` passes on `session`, looking again at each screen update (and once the program
/// ends), at most `limit`; the last reason it did not.
pub(super) async fn eventually(
    session: &Session,
    limit: Duration,
    mut check: impl FnMut(&Session) -> Result<(), String>,
) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut updates = session.subscribe();
    loop {
        updates.borrow_and_update();
        let why = match check(session) {
            Ok(()) => return Ok(()),
            Err(why) => why,
        };
        tokio::select! {
            changed = updates.changed() => if changed.is_err() { return Err(why) },
            _ = tokio::time::sleep_until(deadline) => return Err(why),
        }
    }
}
