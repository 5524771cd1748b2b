//! Files written whole or not at all: through a hidden partial file beside the target (the same
//! folder, so the rename is atomic), put in place once complete. A full disk, an I/O error or a
//! person's Ctrl-C leaves no half file, and never half of a file that was to be replaced. Step
//! files (`save_test`), goldens (`test --update`) and renders write this way.

use std::io::Write;
use std::path::{Path, PathBuf};

/// A hidden name beside `path` for its partial file, ending in `.extension` when given (a
/// program that picks a format by the name, ffmpeg, must see the target's).
pub fn partial_beside(path: &Path, extension: Option<&str>) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let ending = extension.map(|e| format!(".{e}")).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.partial{ending}", std::process::id()))
}

/// Write `bytes` to `path` whole. `mode`: the new file's permission bits, set exactly (else the
/// usual 0666 less this process's umask). `replace`: put it in place over a file already there;
/// otherwise a file made meanwhile is never replaced (the link fails: `AlreadyExists`).
pub fn write_whole(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
    replace: bool,
) -> std::io::Result<()> {
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let partial = partial_beside(path, None);
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode.unwrap_or(0o666))
            .open(&partial)?;
        if let Some(mode) = mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        if replace {
            std::fs::rename(&partial, path)
        } else {
            std::fs::hard_link(&partial, path)?;
            std::fs::remove_file(&partial)
        }
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_written_whole_and_replaced_only_when_asked() {
        let dir = std::env::temp_dir().join(format!("whole-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("out.toml");
        write_whole(&path, b"one", Some(0o600), false).expect("written");
        let error = write_whole(&path, b"two", None, false).expect_err("not replaced");
        assert_eq!(error.kind(), std::io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&path).expect("read"), b"one");
        write_whole(&path, b"two", None, true).expect("replaced");
        assert_eq!(std::fs::read(&path).expect("read"), b"two");
        let left: Vec<_> = std::fs::read_dir(&dir).expect("list").flatten().collect();
        assert_eq!(left.len(), 1, "no partial file left: {left:?}");
        assert!(partial_beside(&path, Some("gif"))
            .to_string_lossy()
            .ends_with(".partial.gif"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
