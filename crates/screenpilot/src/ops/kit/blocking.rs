//! CPU-heavy work a request may ask for (compiling many regexes, rendering a large screenshot) runs here,
//! on tokio's blocking threads, never on the async workers that serve every other session's input and
//! waits. Each kind of heavy work has its own small bound on how many run at once, so a flood of such
//! requests cannot take every core or the memory of many at once (the rest queue for a permit), and a
//! flood of one kind never holds up the other.

use std::sync::OnceLock;

use tokio::sync::Semaphore;

use super::error::{ErrorCode, OpError};

/// The kinds of heavy work, each queued on its own.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Heavy {
    /// Compiling the regex list of an `expect`.
    Regexes,
    /// Drawing a screenshot.
    Picture,
}

/// How many jobs of one kind run at once: half the cores (at least one), so the rest stay free for the
/// async workers however many heavy requests arrive.
fn permits(kind: Heavy) -> &'static Semaphore {
    static REGEXES: OnceLock<Semaphore> = OnceLock::new();
    static PICTURES: OnceLock<Semaphore> = OnceLock::new();
    let cell = match kind {
        Heavy::Regexes => &REGEXES,
        Heavy::Picture => &PICTURES,
    };
    cell.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Semaphore::new((cores / 2).max(1))
    })
}

/// Run `job` on a blocking thread once a permit for its kind is free, and hand back what it returns.
pub(crate) async fn run_bounded<T, F>(kind: Heavy, job: F) -> Result<T, OpError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _permit = permits(kind)
        .acquire()
        .await
        .map_err(|_| OpError::new(ErrorCode::Internal, "the heavy-work queue was closed"))?;
    run_blocking(job).await
}

/// Run `job` on a blocking thread at once: for work whose cost is bounded and small (one regex, at
/// most a megabyte compiled), which must not queue behind a heavy job.
pub(crate) async fn run_blocking<T, F>(job: F) -> Result<T, OpError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    tokio::task::spawn_blocking(job)
        .await
        .map_err(|e| OpError::new(ErrorCode::Internal, format!("a blocking job failed: {e}")))
}
