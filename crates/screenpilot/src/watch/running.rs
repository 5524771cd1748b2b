//! A running watch server as the daemon keeps it: where it listens, its tokens, how to stop it. Plain
//! data, below both the server and the `watch` operation that starts it.

use std::net::SocketAddr;
use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

/// The daemon's watch server, when one runs (the `watch` operation starts and stops it).
#[derive(Default)]
pub struct WatchServer(pub tokio::sync::Mutex<Option<Running>>);

/// A running watch server.
pub struct Running {
    pub addr: SocketAddr,
    pub view_token: String,
    pub control_token: String,
    pub view_token_file: PathBuf,
    pub control_token_file: PathBuf,
    pub(super) stop: CancellationToken,
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
