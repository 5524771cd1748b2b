//! Resources a session holds are all given back when it closes. Its own test binary, so that no other
//! test opens or closes descriptors while these count them.

use std::time::Duration;

use screenpilot_session::wait::{wait, Condition, WaitOptions};
use screenpilot_session::{Limits, Reason, Registry, SpawnSpec};

fn spec(argv: &[&str]) -> SpawnSpec {
    SpawnSpec::new(argv)
}

fn open_fds() -> Vec<String> {
    let mut fds: Vec<String> = std::fs::read_dir("/proc/self/fd")
        .expect("read /proc/self/fd")
        .flatten()
        .map(|entry| {
            let target = std::fs::read_link(entry.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            format!("{} -> {target}", entry.file_name().to_string_lossy())
        })
        .collect();
    fds.sort();
    fds
}

#[tokio::test]
async fn spawning_and_closing_sessions_leaks_no_descriptor() {
    let registry = Registry::new(Limits::default());
    // One session first, so that descriptors opened once per process (the reaper's signal pipe, the
    // runtime's own) are already there when we count.
    let warm = registry.spawn(spec(&["true"])).unwrap();
    registry.close(warm.sid.as_str()).await.unwrap();
    let before = open_fds();
    for _ in 0..20 {
        let session = registry.spawn(spec(&["cat"])).unwrap();
        registry.close(session.sid.as_str()).await.unwrap();
        let ended = registry.spawn(spec(&["true"])).unwrap();
        let done = wait(
            &ended,
            &Condition::Exit,
            WaitOptions {
                timeout: Duration::from_secs(20),
                scrollback: None,
            },
        )
        .await;
        assert_eq!(done.reason, Reason::Exited);
        registry.close(ended.sid.as_str()).await.unwrap();
    }
    let after = open_fds();
    let new: Vec<&String> = after.iter().filter(|fd| !before.contains(fd)).collect();
    assert!(
        after.len() <= before.len(),
        "{} descriptors before, {} after; new: {new:?}",
        before.len(),
        after.len()
    );
}
