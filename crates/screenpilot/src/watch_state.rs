//! The watch page's server as the daemon keeps it: where it listens, its tokens, how to stop it, and
//! how to start one. Plain data, below both the server ([`crate::watch`], which makes a [`Running`])
//! and the `watch` operation (which starts and stops it).
//!
//! Why the starter: the server uses the operations (it reads sessions through the context, and runs
//! `computer` for a page in control), so the operation cannot call the server without the two
//! depending on each other. It calls the [`Starter`] the daemon installs (`crate::watch::install`)
//! instead.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::OnceLock;

use tokio_util::sync::CancellationToken;

/// Starts a server over context `C` on a loopback address, writing its tokens into a directory.
pub type Starter<C, E> = Box<
    dyn Fn(C, SocketAddr, PathBuf) -> Pin<Box<dyn Future<Output = Result<Running, E>> + Send>>
        + Send
        + Sync,
>;

/// The daemon's watch server, when one runs (the `watch` operation starts and stops it), for a
/// context `C` whose errors are `E`.
pub struct WatchServer<C, E> {
    /// The server, while one runs.
    pub running: tokio::sync::Mutex<Option<Running>>,
    starter: OnceLock<Starter<C, E>>,
}

impl<C, E> Default for WatchServer<C, E> {
    fn default() -> Self {
        WatchServer {
            running: tokio::sync::Mutex::new(None),
            starter: OnceLock::new(),
        }
    }
}

impl<C, E> WatchServer<C, E> {
    /// How servers are started; the first one installed stays.
    pub fn install(&self, starter: Starter<C, E>) {
        let _ = self.starter.set(starter);
    }

    /// Start a server; `None` when no starter was installed.
    pub fn start(
        &self,
        ctx: C,
        addr: SocketAddr,
        dir: PathBuf,
    ) -> Option<impl Future<Output = Result<Running, E>>> {
        Some((self.starter.get()?)(ctx, addr, dir))
    }
}

/// A running watch server.
pub struct Running {
    pub addr: SocketAddr,
    pub view_token: String,
    pub control_token: String,
    pub view_token_file: PathBuf,
    pub control_token_file: PathBuf,
    pub(crate) stop: CancellationToken,
}

impl Running {
    /// The page's URL, with the token in the fragment (which the browser never sends anywhere).
    pub fn url(&self, control: bool) -> String {
        let token = if control {
            &self.control_token
        } else {
            &self.view_token
        };
        format!("http://{}/#token={token}", self.addr)
    }

    /// Stop serving: the listener closes and every open page is disconnected.
    pub fn stop(&self) {
        self.stop.cancel();
        let _ = std::fs::remove_file(&self.view_token_file);
        let _ = std::fs::remove_file(&self.control_token_file);
    }
}
