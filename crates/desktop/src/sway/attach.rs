//! Finding the IPC socket of a sway we did not start, from the `WAYLAND_DISPLAY` it serves.
//!
//! How a socket is matched to its compositor: the kernel tells whoever connects to a Unix socket
//! the pid of the process that listens on it (`SO_PEERCRED`). The sway that serves the Wayland
//! socket is the one listening on it; its IPC socket is `$SWAYSOCK`, or `sway-ipc.<uid>.<pid>.sock`
//! in its runtime directory (or in /tmp when it had none), and is the one whose listener has that
//! same pid. A socket of another sway (a stale `SWAYSOCK`) is never taken.

use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

use crate::error::{DesktopError, Result};

/// The Wayland socket `wayland_display` names: itself when absolute, else in `runtime_dir`.
pub fn wayland_socket(runtime_dir: &Path, wayland_display: &str) -> PathBuf {
    let name = Path::new(wayland_display);
    if name.is_absolute() {
        name.to_path_buf()
    } else {
        runtime_dir.join(name)
    }
}

/// The IPC socket of the sway serving `wayland_display`: `Ok(None)` when the compositor there is
/// not sway (or hides its socket); an error when there is no Wayland socket of that name.
pub fn find_ipc(runtime_dir: &Path, wayland_display: &str) -> Result<Option<PathBuf>> {
    let swaysock = std::env::var_os("SWAYSOCK").map(PathBuf::from);
    find_ipc_with(runtime_dir, wayland_display, swaysock.as_deref())
}

/// [`find_ipc`] with `SWAYSOCK` given.
pub fn find_ipc_with(
    runtime_dir: &Path,
    wayland_display: &str,
    swaysock: Option<&Path>,
) -> Result<Option<PathBuf>> {
    let socket = wayland_socket(runtime_dir, wayland_display);
    if wayland_display.is_empty() || !socket.exists() {
        return Err(DesktopError::Connection(format!(
            "WAYLAND_DISPLAY {wayland_display:?}: there is no Wayland socket at {} (is the \
             compositor running, and is XDG_RUNTIME_DIR right?)",
            socket.display()
        )));
    }
    let compositor = listener_pid(&socket).map_err(|e| {
        DesktopError::Connection(format!(
            "WAYLAND_DISPLAY {wayland_display:?}: cannot connect to {}: {e}",
            socket.display()
        ))
    })?;
    let mut candidates: Vec<PathBuf> = swaysock.map(Path::to_path_buf).into_iter().collect();
    let suffix = format!(".{compositor}.sock");
    for dir in [runtime_dir.to_path_buf(), std::env::temp_dir()] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("sway-ipc.") && name.ends_with(&suffix) {
                candidates.push(entry.path());
            }
        }
    }
    Ok(candidates
        .into_iter()
        .find(|path| listener_pid(path).ok() == Some(compositor)))
}

/// The pid of the process listening on the Unix socket at `path`.
fn listener_pid(path: &Path) -> std::io::Result<i32> {
    let stream = UnixStream::connect(path)?;
    // SAFETY: ucred is plain data; getsockopt fills at most its size.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: a connected socket of ours, a buffer of the given length.
    let rc = unsafe {
        libc::getsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(cred.pid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_display_without_a_socket_is_named_in_the_error() {
        let err = find_ipc_with(Path::new("/nonexistent-runtime"), "wayland-97", None)
            .expect_err("no such socket");
        let message = err.to_string();
        assert!(message.contains("wayland-97"), "{message}");
        assert!(
            message.contains("/nonexistent-runtime/wayland-97"),
            "{message}"
        );
    }

    #[test]
    fn absolute_displays_are_taken_as_they_are() {
        assert_eq!(
            wayland_socket(Path::new("/run/user/1"), "/tmp/w/wayland-3"),
            Path::new("/tmp/w/wayland-3")
        );
        assert_eq!(
            wayland_socket(Path::new("/run/user/1"), "wayland-3"),
            Path::new("/run/user/1/wayland-3")
        );
    }
}
