//! One blocking step of a desktop (a call on its connection, starting a helper thread) run on
//! tokio's blocking pool under a time limit.

use std::time::Duration;

use crate::error::{DesktopError, Result};

/// Run a blocking job under a time limit.
pub(crate) async fn blocking<R: Send + 'static>(
    what: &str,
    limit: Duration,
    job: impl FnOnce() -> Result<R> + Send + 'static,
) -> Result<R> {
    let task = tokio::task::spawn_blocking(job);
    match tokio::time::timeout(limit, task).await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => Err(DesktopError::Io(format!("{what} failed: {e}"))),
        Err(_) => Err(DesktopError::Timeout {
            what: what.to_owned(),
            limit,
        }),
    }
}
