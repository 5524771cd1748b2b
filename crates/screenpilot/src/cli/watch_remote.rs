//! `screenpilot --host HOST watch`: another host's watch page, in this machine's browser, through the
//! host's own link (never by opening its port to the network). The page is started there; here a
//! loopback port forwards each browser connection over a link of its own (`dial-stdio --watch`) to
//! that page. It runs until Ctrl-C; the page keeps running on the host.
//!
//! The page there checks that requests name it (`Host`, `Origin`: the DNS-rebinding and cross-origin
//! defences of `loopback_http`). A request for our local address and origin is rewritten to name the
//! page's own; any other `Host` or `Origin` passes unchanged, and the page refuses it as before. Each
//! connection carries one request (`Connection: close`), so every request head is seen here.

use std::net::SocketAddr;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::args::Verb;
use crate::fleet::Fleet;
use crate::host::Host;
use crate::loopback_http::loopback_addr;
use crate::ops::{self, Operation};
use crate::ops::{ErrorCode, OpError};

/// The longest request head read before it is passed on as it is.
const MAX_HEAD: usize = 64 * 1024;

/// Start the host's page, forward a local port to it, print the local URL; until Ctrl-C.
pub async fn run(verb: &Verb, fleet: &Fleet, as_json: bool) -> Result<i32, OpError> {
    let Verb::Watch { http, control, .. } = verb else {
        return Err(OpError::new(ErrorCode::Internal, "watch_remote: not watch"));
    };
    if fleet.hosts().len() != 1 {
        return Err(OpError::invalid(
            "host",
            "watch shows one host's page; give one --host (or open one page per host)",
        ));
    }
    let host = fleet.hosts()[0].clone();
    let local = loopback_addr(http.as_deref().unwrap_or("127.0.0.1:0"), "http")?;
    let answer = fleet
        .call(
            ops::Watch::NAME,
            json!({ "control": control }),
            None,
            |_| {},
        )
        .await?;
    let (Some(url), Some(address)) = (answer["url"].as_str(), answer["address"].as_str()) else {
        return Err(OpError::new(
            ErrorCode::BadResponse,
            format!(
                "watch: the daemon on host {} gave no URL: {answer}",
                host.name
            ),
        ));
    };
    let remote: SocketAddr = address.parse().map_err(|_| {
        OpError::new(
            ErrorCode::BadResponse,
            format!("watch: the daemon on host {} gave no address", host.name),
        )
    })?;
    let listener = TcpListener::bind(local)
        .await
        .map_err(|e| OpError::invalid("http", format!("cannot listen on {local}: {e}")))?;
    let here = listener
        .local_addr()
        .map_err(|e| OpError::new(ErrorCode::IoError, format!("watch: the local port: {e}")))?;
    let fragment = url.split_once('#').map_or("", |(_, f)| f);
    let local_url = format!("http://{here}/#{fragment}");
    let said = if as_json {
        json!({"ok": true, "running": true, "url": local_url, "host": host.name, "forwarding_to": address, "control": control}).to_string()
    } else {
        format!(
            "{local_url}\nOpen this URL in a browser to {} every session of host {}; it is forwarded over the host's link to its page there. Ctrl-C stops forwarding (the page keeps running there; watch --stop --host {} stops it).",
            if *control { "watch and control" } else { "watch (read-only)" },
            host.name,
            host.name
        )
    };
    // In one write, and a reader that stopped after the URL (`| head -1`) does not end the
    // forwarding: what is printed after it is for a person, and nobody may be reading.
    {
        use std::io::Write;
        let _ = writeln!(std::io::stdout().lock(), "{said}");
    }
    let rewrite = Rewrite { here, remote };
    let mut interrupt =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())
            .map_err(|e| OpError::new(ErrorCode::Runtime, format!("signal handler: {e}")))?;
    let mut terminate =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| OpError::new(ErrorCode::Runtime, format!("signal handler: {e}")))?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    tokio::spawn(forward(stream, host.clone(), rewrite));
                }
            }
            _ = interrupt.recv() => return Ok(0),
            _ = terminate.recv() => return Ok(0),
        }
    }
}

/// Our address, and the page's.
#[derive(Clone, Copy)]
struct Rewrite {
    here: SocketAddr,
    remote: SocketAddr,
}

/// One browser connection over a link of its own.
async fn forward(mut browser: TcpStream, host: Host, rewrite: Rewrite) {
    let Some(mut command) = host.command_with(&["--watch"]) else {
        return;
    };
    let Ok(mut child) = command.spawn() else {
        return;
    };
    let (Some(mut to_page), Some(mut from_page)) = (child.stdin.take(), child.stdout.take()) else {
        return;
    };
    let head = match read_head(&mut browser).await {
        Some(head) => head,
        None => return,
    };
    let (mut browser_read, mut browser_write) = browser.split();
    // The page's side closing ends the connection; the browser's closing only ends what it sends.
    let up = async {
        let _ = async {
            to_page.write_all(&rewrite.head(&head)).await?;
            tokio::io::copy(&mut browser_read, &mut to_page).await?;
            to_page.shutdown().await
        }
        .await;
        std::future::pending::<()>().await;
    };
    let down = async {
        let _ = tokio::io::copy(&mut from_page, &mut browser_write).await;
        let _ = browser_write.shutdown().await;
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
    let _ = child.start_kill();
    let _ = child.wait().await;
}

/// The request head (through its blank line), and whatever came after it in the same reads.
async fn read_head(stream: &mut TcpStream) -> Option<Vec<u8>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 4096];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Some(head)
}

impl Rewrite {
    /// The head with our `Host` and `Origin` made the page's, and `Connection: close` (but on a
    /// WebSocket upgrade, which keeps its connection).
    fn head(&self, bytes: &[u8]) -> Vec<u8> {
        let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
            return bytes.to_vec();
        };
        let (head, rest) = bytes.split_at(end + 4);
        let text = String::from_utf8_lossy(&head[..end]);
        let here_hosts = [
            self.here.to_string(),
            format!("localhost:{}", self.here.port()),
        ];
        let upgrade = text.lines().any(|l| {
            l.split_once(':')
                .is_some_and(|(k, _)| k.trim().eq_ignore_ascii_case("upgrade"))
        });
        let mut lines = Vec::new();
        for line in text.split("\r\n") {
            let Some((name, value)) = line.split_once(':') else {
                lines.push(line.to_owned());
                continue;
            };
            let (name_lc, value) = (name.trim().to_ascii_lowercase(), value.trim());
            match name_lc.as_str() {
                "host" if here_hosts.iter().any(|h| h == value) => {
                    lines.push(format!("Host: {}", self.remote));
                }
                "origin" if here_hosts.iter().any(|h| value == format!("http://{h}")) => {
                    lines.push(format!("Origin: http://{}", self.remote));
                }
                "connection" if !upgrade => {}
                _ => lines.push(line.to_owned()),
            }
        }
        if !upgrade {
            lines.push("Connection: close".to_owned());
        }
        let mut out = lines.join("\r\n").into_bytes();
        out.extend_from_slice(b"\r\n\r\n");
        out.extend_from_slice(rest);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_own_host_and_origin_are_made_the_pages() {
        let rewrite = Rewrite {
            here: "127.0.0.1:5000".parse().expect("addr"),
            remote: "127.0.0.1:41000".parse().expect("addr"),
        };
        let head = b"GET /ws/x HTTP/1.1\r\nHost: 127.0.0.1:5000\r\nOrigin: http://127.0.0.1:5000\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nrest";
        let out = String::from_utf8(rewrite.head(head)).expect("utf8");
        assert!(out.contains("Host: 127.0.0.1:41000\r\n"), "{out}");
        assert!(out.contains("Origin: http://127.0.0.1:41000\r\n"), "{out}");
        assert!(out.contains("Connection: Upgrade"), "{out}");
        assert!(out.ends_with("\r\n\r\nrest"), "{out}");
        // A foreign Host or Origin is left as it is: the page refuses it.
        let head = b"GET / HTTP/1.1\r\nHost: evil.example:5000\r\nOrigin: http://evil.example\r\nConnection: keep-alive\r\n\r\n";
        let out = String::from_utf8(rewrite.head(head)).expect("utf8");
        assert!(out.contains("Host: evil.example:5000\r\n"), "{out}");
        assert!(out.contains("Origin: http://evil.example\r\n"), "{out}");
        assert!(out.contains("Connection: close\r\n"), "{out}");
        assert!(!out.contains("keep-alive"), "{out}");
    }
}
