//! The X server of a desktop: a private Xvfb we launch (and own), or an existing display we attach to
//! (and never stop).
//!
//! A private Xvfb gets a fresh MIT-MAGIC-COOKIE in a 0700 directory, so other local users cannot
//! connect to it; its display number comes back through `-displayfd`, so there is no polling for a
//! free number or for the socket to appear.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{DesktopError, Result};
use crate::process::{line_pipe, log_tail, Child, Launch};

pub const AUTH_NAME: &[u8] = b"MIT-MAGIC-COOKIE-1";

/// Fill `buf` from the kernel's random source.
pub(crate) fn random_bytes(buf: &mut [u8]) -> Result<()> {
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: writes at most the remaining length into our buffer.
        let n =
            unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), buf.len() - filled, 0) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(DesktopError::Io(format!("no random bytes: {e}")));
        }
        filled += n as usize;
    }
    Ok(())
}

/// One Xauthority entry for any address (FamilyWild), in the file format libXau reads.
pub fn xauthority_entry(display_number: Option<u32>, cookie: &[u8]) -> Vec<u8> {
    const FAMILY_WILD: u16 = 0xffff;
    let number = display_number.map(|n| n.to_string()).unwrap_or_default();
    let mut out = Vec::new();
    out.extend_from_slice(&FAMILY_WILD.to_be_bytes());
    for field in [&b""[..], number.as_bytes(), AUTH_NAME, cookie] {
        out.extend_from_slice(&(field.len() as u16).to_be_bytes());
        out.extend_from_slice(field);
    }
    out
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| DesktopError::Io(format!("cannot write {}: {e}", path.display())))?;
    file.write_all(bytes)
        .map_err(|e| DesktopError::Io(format!("cannot write {}: {e}", path.display())))
}

/// A private Xvfb that is up and accepting connections.
pub struct Xvfb {
    pub child: Child,
    pub display_number: u32,
    pub cookie: Vec<u8>,
    pub xauthority: PathBuf,
    pub log: PathBuf,
}

/// Start `Xvfb` at `width`x`height`x24 and wait (at most `limit`) until it accepts connections.
pub async fn launch_xvfb(dir: &Path, width: u32, height: u32, limit: Duration) -> Result<Xvfb> {
    let mut cookie = vec![0u8; 16];
    random_bytes(&mut cookie)?;
    let xauthority = dir.join("Xauthority");
    write_private(&xauthority, &xauthority_entry(None, &cookie))?;
    let log = dir.join("xvfb.log");

    let (read_end, write_end) =
        line_pipe().map_err(|e| DesktopError::Io(format!("cannot create a pipe: {e}")))?;
    let argv = vec![
        "Xvfb".to_owned(),
        "-displayfd".to_owned(),
        write_end.as_raw_fd().to_string(),
        "-screen".to_owned(),
        "0".to_owned(),
        format!("{width}x{height}x24"),
        "-nolisten".to_owned(),
        "tcp".to_owned(),
        "-noreset".to_owned(),
        "-auth".to_owned(),
        xauthority.to_string_lossy().into_owned(),
    ];
    let child = Child::spawn(Launch {
        argv,
        env: Vec::new(),
        env_clear: false,
        cwd: None,
        log: log.clone(),
        keep_fd: Some(write_end.as_raw_fd()),
    })
    .await
    .map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            " (install the xvfb package)"
        } else {
            ""
        };
        DesktopError::Start {
            field: "size",
            message: format!("cannot start Xvfb: {e}{hint}"),
        }
    })?;
    // Only Xvfb holds the write end now: its exit reads as end of file.
    drop(write_end);
    let number = match tokio::time::timeout(limit, read_display_number(read_end)).await {
        Ok(Ok(number)) => number,
        Ok(Err(why)) => {
            child.stop(Duration::from_millis(200)).await;
            return Err(DesktopError::Start {
                field: "size",
                message: format!(
                    "Xvfb did not start: {why}; its log says: {}",
                    log_tail(&log, 600)
                ),
            });
        }
        Err(_) => {
            child.stop(Duration::from_millis(200)).await;
            return Err(DesktopError::Timeout {
                what: "starting Xvfb".into(),
                limit,
            });
        }
    };
    write_private(&xauthority, &xauthority_entry(Some(number), &cookie))?;
    Ok(Xvfb {
        child,
        display_number: number,
        cookie,
        xauthority,
        log,
    })
}

/// Read "N\n" from the `-displayfd` pipe.
async fn read_display_number(fd: OwnedFd) -> std::result::Result<u32, String> {
    match crate::process::first_line(fd).await {
        Ok(Some(line)) => line
            .parse()
            .map_err(|_| format!("it reported {line:?} as its display number")),
        Ok(None) => Err("it exited before reporting its display number".into()),
        Err(why) => Err(format!("its display number: {why}")),
    }
}

/// Which window manager to run on a private Xvfb.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum WindowManager {
    /// The first one installed of [`KNOWN_WINDOW_MANAGERS`], or none.
    #[default]
    Auto,
    None,
    /// This program.
    Program(String),
}

/// Light window managers tried by [`WindowManager::Auto`], in order.
pub const KNOWN_WINDOW_MANAGERS: &[&str] = &[
    "openbox",
    "fluxbox",
    "icewm",
    "xfwm4",
    "matchbox-window-manager",
    "twm",
];

/// The environment a program needs to reach the display.
pub fn display_env(display: &str, xauthority: Option<&Path>) -> Vec<(OsString, OsString)> {
    let mut env = vec![(OsString::from("DISPLAY"), OsString::from(display))];
    if let Some(path) = xauthority {
        env.push((OsString::from("XAUTHORITY"), path.as_os_str().to_owned()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xauthority_entries_follow_the_libxau_layout() {
        let entry = xauthority_entry(Some(7), &[1, 2, 3]);
        let mut expected = vec![0xff, 0xff, 0, 0, 0, 1, b'7', 0, 18];
        expected.extend_from_slice(b"MIT-MAGIC-COOKIE-1");
        expected.extend_from_slice(&[0, 3, 1, 2, 3]);
        assert_eq!(entry, expected);
        let any = xauthority_entry(None, &[9]);
        assert_eq!(&any[..6], &[0xff, 0xff, 0, 0, 0, 0]);
    }
}
