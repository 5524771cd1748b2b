//! Where the daemon lives: a private directory holding its socket, lock and log.

use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::PathBuf;

/// The daemon's files.
#[derive(Debug, Clone)]
pub struct Paths {
    pub dir: PathBuf,
    pub socket: PathBuf,
    /// Held by the daemon for its whole life.
    pub lock: PathBuf,
    /// Held briefly by a client while it starts a daemon, so two clients never start two.
    pub start_lock: PathBuf,
    pub log: PathBuf,
}

impl Paths {
    /// `$SCREENPILOT_DIR`, else `$XDG_RUNTIME_DIR/screenpilot`, else `/tmp/screenpilot-UID`.
    pub fn from_env() -> Paths {
        let uid = rustix::process::getuid().as_raw();
        let dir = std::env::var_os("SCREENPILOT_DIR")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("XDG_RUNTIME_DIR")
                    .map(PathBuf::from)
                    .filter(|d| d.is_dir())
                    .map(|d| d.join("screenpilot"))
            })
            .unwrap_or_else(|| PathBuf::from(format!("/tmp/screenpilot-{uid}")));
        Paths::in_dir(dir)
    }

    pub fn in_dir(dir: PathBuf) -> Paths {
        Paths {
            socket: dir.join("daemon.sock"),
            lock: dir.join("daemon.lock"),
            start_lock: dir.join("start.lock"),
            log: dir.join("daemon.log"),
            dir,
        }
    }

    /// Create the directory with mode 0700, or check that an existing one is ours and private: another
    /// user must never be able to reach the socket.
    pub fn ensure_private_dir(&self) -> io::Result<()> {
        match std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
        {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create {}: {e}", self.dir.display()),
                ))
            }
        }
        let meta = std::fs::symlink_metadata(&self.dir)?;
        let uid = rustix::process::getuid().as_raw();
        if !meta.is_dir() || meta.uid() != uid {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "{} is not a directory owned by uid {uid}; refusing to use it",
                    self.dir.display()
                ),
            ));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o700))?;
        }
        Ok(())
    }
}

/// Take an exclusive lock on `path` (creating it) if nobody holds it; `WouldBlock` if someone does.
/// The lock lasts as long as the returned file is open.
pub fn try_lock_file(path: &std::path::Path) -> io::Result<std::fs::File> {
    let file = open_lock_file(path)?;
    rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive)?;
    Ok(file)
}

fn open_lock_file(path: &std::path::Path) -> io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
}

/// Take an exclusive lock on `path` (creating it), waiting up to `limit` for another holder to let go.
/// The lock lasts as long as the returned file is open.
pub async fn lock_file(
    path: &std::path::Path,
    limit: std::time::Duration,
) -> io::Result<std::fs::File> {
    let file = open_lock_file(path)?;
    if rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok() {
        return Ok(file);
    }
    // Held: the holder is a daemon shutting down or a client starting one; both let go soon. flock(2)
    // blocks in the kernel until then, which is the event we want, so it runs on a blocking thread.
    let waiting = tokio::task::spawn_blocking(move || {
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).map(|_| file)
    });
    match tokio::time::timeout(limit, waiting).await {
        Ok(Ok(Ok(file))) => Ok(file),
        Ok(Ok(Err(e))) => Err(e.into()),
        Ok(Err(e)) => Err(io::Error::other(e.to_string())),
        Err(_) => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            format!(
                "{} is still locked after {} s",
                path.display(),
                limit.as_secs()
            ),
        )),
    }
}
