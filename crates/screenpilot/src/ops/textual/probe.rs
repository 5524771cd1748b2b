//! The Python probe, embedded in the binary and written out on first use.
//!
//! The files go to `<daemon dir>/probe-<content hash>/`, a directory only this user can enter, so a new
//! screenpilot build never runs an old probe and no other user can swap one in. The app's interpreter
//! finds the package through `PYTHONPATH`, which the probe then removes from its own environment.

use std::io;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The package, as (path inside the cache directory, contents).
const FILES: &[(&str, &str)] = &[
    (
        "screenpilot_probe/__init__.py",
        include_str!("probe/screenpilot_probe/__init__.py"),
    ),
    (
        "screenpilot_probe/__main__.py",
        include_str!("probe/screenpilot_probe/__main__.py"),
    ),
    (
        "screenpilot_probe/channel.py",
        include_str!("probe/screenpilot_probe/channel.py"),
    ),
    (
        "screenpilot_probe/driver.py",
        include_str!("probe/screenpilot_probe/driver.py"),
    ),
    (
        "screenpilot_probe/loader.py",
        include_str!("probe/screenpilot_probe/loader.py"),
    ),
    (
        "screenpilot_probe/server.py",
        include_str!("probe/screenpilot_probe/server.py"),
    ),
    (
        "screenpilot_probe/settle.py",
        include_str!("probe/screenpilot_probe/settle.py"),
    ),
    (
        "screenpilot_probe/state.py",
        include_str!("probe/screenpilot_probe/state.py"),
    ),
    (
        "screenpilot_probe/widgets.py",
        include_str!("probe/screenpilot_probe/widgets.py"),
    ),
];

/// The module the interpreter runs: `python -m screenpilot_probe APP_FILE`.
pub const MODULE: &str = "screenpilot_probe";

/// The environment variable carrying the side channel's socket path (the probe removes it at once).
pub const SOCKET_ENV: &str = "SCREENPILOT_PROBE_SOCKET";

/// FNV-1a over every file name and body: stable across builds and Rust versions, unlike `DefaultHasher`.
fn content_hash() -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for (name, body) in FILES {
        for byte in name.bytes().chain([0]).chain(body.bytes()).chain([0]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// Write the probe under `dir` unless this exact version is already there; returns the directory to put
/// on `PYTHONPATH`.
pub fn install(dir: &Path) -> io::Result<PathBuf> {
    let target = dir.join(format!("probe-{:016x}", content_hash()));
    if target.join(FILES[0].0).is_file() {
        return Ok(target);
    }
    // Written aside and renamed into place, so a concurrent start never sees half a package. The
    // staging name is unique per call: the daemon starts apps concurrently, and a shared one let one
    // start delete the files another was writing.
    static STAGING: AtomicU64 = AtomicU64::new(0);
    let staging = dir.join(format!(
        "probe-staging-{}-{}",
        std::process::id(),
        STAGING.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&staging);
    for (name, body) in FILES {
        let path = staging.join(name);
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(parent)?;
        }
        std::fs::write(&path, body)?;
    }
    match std::fs::rename(&staging, &target) {
        Ok(()) => {
            forget_other_versions(dir, &target);
            Ok(target)
        }
        // Another start installed the same version first: use theirs.
        Err(_) if target.join(FILES[0].0).is_file() => {
            let _ = std::fs::remove_dir_all(&staging);
            Ok(target)
        }
        Err(e) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(e)
        }
    }
}

/// Remove probes of other screenpilot builds: one daemon owns the directory, and it runs this build.
fn forget_other_versions(dir: &Path, current: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let old_probe = name.starts_with("probe-") && !name.starts_with("probe-staging-");
        if old_probe && path != current && entry.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn installs_once_and_reuses_the_same_directory() {
        let dir = std::env::temp_dir().join(format!("sp-probe-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let first = install(&dir).expect("install");
        let second = install(&dir).expect("reinstall");
        assert_eq!(first, second);
        for (name, body) in FILES {
            let written = std::fs::read_to_string(first.join(name)).expect("probe file");
            assert_eq!(&written, body);
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn concurrent_first_installs_all_get_the_whole_package() {
        let dir = std::env::temp_dir().join(format!("sp-probe-race-{}", std::process::id()));
        for _ in 0..20 {
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("temp dir");
            let installs: Vec<_> = (0..8)
                .map(|_| {
                    let dir = dir.clone();
                    std::thread::spawn(move || install(&dir))
                })
                .collect();
            for handle in installs {
                let target = handle.join().expect("thread").expect("install");
                for (name, body) in FILES {
                    let written = std::fs::read_to_string(target.join(name)).expect("probe file");
                    assert_eq!(&written, body, "{name}");
                }
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
