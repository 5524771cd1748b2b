//! `screenpilot dial-stdio`: this host's daemon on stdin and stdout, for a client on another host
//! (`ssh HOST screenpilot dial-stdio`, `docker exec -i BOX screenpilot dial-stdio`). The same JSON
//! lines as the socket pass both ways; requests are completed for this side first (relative paths,
//! the working directory, the environment programs start in, the umask are this host's, as the
//! client on the far side leaves them for us), so nothing of the far machine's own leaks here.
//!
//! It ends when the daemon closes the connection, or at once when whoever reads our stdout is gone
//! (the link dropped): the daemon then stops what this connection started, except requests sent with
//! a resume key, whose answers it keeps for the client's next link.

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

use crate::client::local_connection;
use crate::hang_up;
use crate::ops::Operation;
use crate::ops::{self, Caller, ErrorCode, OpError};
use crate::paths::Paths;
use crate::protocol::{Request, MAX_REQUEST_BYTES};

/// Serve the daemon of `paths` (started if none runs) on stdin and stdout until either side ends.
pub async fn dial_stdio(paths: &Paths) -> Result<i32, OpError> {
    let stream = local_connection(paths).await?;
    let (socket_read, mut socket_write) = stream.into_split();
    let caller = Caller {
        relay: true,
        ..Caller::this_process()
    };
    let hung_up = stdout_hang_up();

    let requests = async move {
        let mut stdin = BufReader::new(tokio::io::stdin());
        let mut line = Vec::new();
        loop {
            line.clear();
            let mut limited = (&mut stdin).take(MAX_REQUEST_BYTES as u64 + 1);
            match limited.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let ready = completed(&line, &caller).unwrap_or_else(|| line.clone());
            if socket_write.write_all(&ready).await.is_err() {
                return;
            }
        }
        // The far side sent its last request: the daemon answers what runs, then closes.
        let _ = socket_write.shutdown().await;
        // Keep the write half alive (dropping it is the same shutdown) until the answers are out.
        std::future::pending::<()>().await;
    };
    let answers = async move {
        let mut socket_read = socket_read;
        let mut stdout = tokio::io::stdout();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = match socket_read.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            if stdout.write_all(&buf[..n]).await.is_err() || stdout.flush().await.is_err() {
                break;
            }
        }
    };
    tokio::select! {
        _ = answers => {}
        _ = requests => {}
        _ = hung_up => {}
    }
    Ok(0)
}

/// `dial-stdio --watch`: stdin and stdout to this host's watch page (started if it is not running),
/// one browser connection that `watch --host` forwards from another machine.
pub async fn dial_watch(paths: &Paths) -> Result<i32, OpError> {
    let client = crate::client::Client::connect_or_start(paths).await?;
    let answer = client.call(ops::Watch::NAME, serde_json::json!({})).await?;
    let address = answer["address"].as_str().unwrap_or_default().to_owned();
    let mut page = tokio::net::TcpStream::connect(&address)
        .await
        .map_err(|e| {
            OpError::new(
                ErrorCode::IoError,
                format!("cannot reach the watch page at {address}: {e}"),
            )
        })?;
    let (mut page_read, mut page_write) = page.split();
    // The page closing ends the connection; our stdin closing only stops what we send it.
    let up = async {
        let _ = tokio::io::copy(&mut tokio::io::stdin(), &mut page_write).await;
        let _ = page_write.shutdown().await;
        std::future::pending::<()>().await;
    };
    let down = async {
        let mut stdout = tokio::io::stdout();
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = page_read.read(&mut buf).await {
            if n == 0 || stdout.write_all(&buf[..n]).await.is_err() || stdout.flush().await.is_err()
            {
                break;
            }
        }
    };
    tokio::select! {
        _ = up => {}
        _ = down => {}
        _ = stdout_hang_up() => {}
    }
    Ok(0)
}

/// A request line completed for this host, or `None` to pass it on as it came (the daemon then
/// answers whatever is wrong with it).
fn completed(line: &[u8], caller: &Caller) -> Option<Vec<u8>> {
    let mut request: Request = serde_json::from_slice(line).ok()?;
    if !matches!(request.params, Value::Object(_)) {
        return None;
    }
    let op = ops::find(&request.op).ok()?;
    request.params = (op.prepare)(request.params, caller).ok()?;
    let mut bytes = serde_json::to_vec(&request).ok()?;
    bytes.push(b'\n');
    Some(bytes)
}

/// Resolves when the reader of our stdout is gone (its end of the pipe or socket closed): the link
/// dropped, and nobody will read what we write. Never resolves when that cannot be watched.
async fn stdout_hang_up() {
    hang_up::hung_up(hang_up::watch(&std::io::stdout()).as_ref()).await
}

/// Refuse a terminal on stdin: `dial-stdio` speaks JSON lines to a program, not to a person.
pub fn check_not_a_terminal() -> Result<(), OpError> {
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return Err(OpError::new(
            ErrorCode::InvalidArgument,
            "dial-stdio connects a program on another host to this host's daemon (ssh HOST screenpilot dial-stdio); its stdin is a terminal here. To drive sessions from this terminal, use the other verbs",
        ));
    }
    Ok(())
}
