//! `watch`: start (or find) the watch page's server in the daemon and answer its URL; `--stop` stops
//! it. The server itself is `crate::watch`, reached through the starter the daemon installs
//! ([`crate::watch_state`]): the server uses the operations, so they do not use it.

use std::net::SocketAddr;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::loopback_http::{loopback_addr, SetupError};
use crate::ops::kit::common::{Context, ErrorCode, OpError, Progress};
use crate::ops::kit::operation::{Operation, Profile, Report, View};

/// The HTTP helpers sit below the operations and have their own errors; this is where they become
/// ours (here, where the first operation needs one), with their field.
impl From<SetupError> for OpError {
    fn from(e: SetupError) -> OpError {
        match e {
            SetupError::Invalid { field, message } => OpError::invalid(field, message),
            SetupError::Io(message) => OpError::new(ErrorCode::IoError, message),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchParams {
    /// Loopback IP:PORT to serve the page on (default 127.0.0.1:0, any free port). When the server
    /// already runs on another address, refused (stop it first to move it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    /// Answer the URL that lets the person type and click through the page, not only look.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub control: bool,
    /// Stop the server: every open page is disconnected and the tokens stop working.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop: bool,
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct WatchOutput {
    /// The server runs (false after stop).
    pub running: bool,
    /// Open this in a browser: the page, with its token after `#` (never sent over the network).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Where the server listens, IP:PORT.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// The file holding this URL's token (mode 0600).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_file: Option<String>,
    /// The URL lets the person type and click.
    pub control: bool,
    /// This call started the server (false: it was already running).
    pub started: bool,
}

impl Report for WatchOutput {
    fn view(&self) -> View {
        let mut view = View::default();
        view.fact("running", self.running);
        if let Some(url) = &self.url {
            view.fact("url", url);
        }
        view.fact("control", self.control);
        view
    }

    fn human(&self) -> String {
        match &self.url {
            Some(url) => {
                let how = if self.control {
                    "watch and control"
                } else {
                    "watch (read-only)"
                };
                format!("{url}\nOpen this URL in a browser to {how} every session; the token after # stays in the browser.\n")
            }
            None => "The watch page is stopped.\n".to_owned(),
        }
    }
}

/// `watch`.
pub struct Watch;

impl Operation for Watch {
    const NAME: &'static str = "watch";
    const IN_STEP_FILES: bool = false;
    const DESCRIPTION: &'static str = "Give the person a web page showing every session live (terminals and desktops side by side), to hand them as a link: {control?: bool}. Answers {url, token_file, control}; the URL carries its token after #. Read-only unless control is true (then the person can type and click). Loopback only. {stop: true} stops the page. Example: {} or {\"control\": true}";
    const PROFILES: &'static [Profile] = &[Profile::Classic];
    type Params = WatchParams;
    type Output = WatchOutput;

    async fn run(
        ctx: &Context,
        p: WatchParams,
        _progress: &Progress,
    ) -> Result<WatchOutput, OpError> {
        let mut server = ctx.watch.running.lock().await;
        if p.stop {
            if p.http.is_some() || p.control {
                return Err(OpError::invalid("stop", "stop takes no other parameter"));
            }
            if let Some(running) = server.take() {
                running.stop();
            }
            return Ok(WatchOutput {
                running: false,
                url: None,
                address: None,
                token_file: None,
                control: false,
                started: false,
            });
        }
        let addr = loopback_addr(p.http.as_deref().unwrap_or("127.0.0.1:0"), "http")?;
        if let (Some(running), Some(_)) = (server.as_ref(), &p.http) {
            // One server per daemon: answering its URL for another address would send the person
            // to a port they did not ask for.
            if !serves(running.addr, addr) {
                return Err(OpError::invalid(
                    "http",
                    format!(
                        "the watch page already runs at http://{}/; stop it first (watch --stop) to serve it on {addr}, or leave http out for its URL",
                        running.addr
                    ),
                ));
            }
        }
        let started = server.is_none();
        let running = match server.take() {
            Some(running) => running,
            None => {
                let dir = crate::paths::Paths::from_env().dir;
                let start = ctx.watch.start(ctx.clone(), addr, dir).ok_or_else(|| {
                    OpError::new(
                        ErrorCode::Internal,
                        "watch: no watch server in this process (the daemon has one; a library context gets it from screenpilot::watch::install)",
                    )
                })?;
                start.await?
            }
        };
        let token_file = if p.control {
            &running.control_token_file
        } else {
            &running.view_token_file
        };
        let output = WatchOutput {
            running: true,
            url: Some(running.url(p.control)),
            address: Some(running.addr.to_string()),
            token_file: Some(token_file.display().to_string()),
            control: p.control,
            started,
        };
        *server = Some(running);
        Ok(output)
    }
}

/// Does a server listening on `running` serve what was asked for at `asked` (port 0: any port)?
fn serves(running: SocketAddr, asked: SocketAddr) -> bool {
    running.ip() == asked.ip() && (asked.port() == 0 || asked.port() == running.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> SocketAddr {
        text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn a_running_server_serves_its_own_address_or_any_port_on_its_ip() {
        let running = addr("127.0.0.1:41233");
        assert!(serves(running, addr("127.0.0.1:41233")));
        assert!(serves(running, addr("127.0.0.1:0")));
        assert!(!serves(running, addr("127.0.0.1:8765")));
        assert!(!serves(running, addr("127.0.0.2:41233")));
        assert!(!serves(running, addr("[::1]:0")));
    }
}
