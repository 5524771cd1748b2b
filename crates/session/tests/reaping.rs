//! The one reaper takes the programs it started and the orphans they leave, and nothing else: a
//! library user's own children (std's `Command`) keep their exit status while sessions come and go.
//! Its own test binary: orphans come to this process, which makes itself their subreaper.

use std::time::{Duration, Instant};

use screenpilot_session::wait::{wait, Condition, WaitOptions};
use screenpilot_session::{Limits, Reason, Registry, SpawnSpec};

fn spec(argv: &[&str]) -> SpawnSpec {
    SpawnSpec::new(argv)
}

const LONG: WaitOptions = WaitOptions {
    timeout: Duration::from_secs(20),
    scrollback: None,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn children_the_caller_starts_keep_their_exit_status_while_sessions_end() {
    let registry = Registry::new(Limits::default());
    for round in 0..10 {
        // Our own child ends and is left unwaited; a session then ends once it has, so the reaper is
        // at work while our child's status waits for us.
        let mut own = std::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .unwrap();
        let zombie = format!(
            "until grep -q '^State:.*Z' /proc/{}/status; do :; done",
            own.id()
        );
        let session = registry.spawn(spec(&["sh", "-c", &zombie])).unwrap();
        let done = wait(&session, &Condition::Exit, LONG).await;
        assert_eq!(done.reason, Reason::Exited, "round {round}");
        assert_eq!(session.exit_info().and_then(|e| e.exit_code), Some(0));
        let status = own.wait().unwrap_or_else(|e| {
            panic!("round {round}: our own child's status was taken from us: {e}")
        });
        assert_eq!(status.code(), Some(3), "round {round}");
        registry.close(session.sid.as_str()).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_orphan_a_session_leaves_is_reaped_when_it_ends() {
    let fifo = std::env::temp_dir().join(format!("sp-reaping-{}.fifo", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let registry = Registry::new(Limits::default());
    // The shell leaves `cat` behind, blocked on the fifo, and exits: `cat` is reparented to us. In a
    // session of its own, the hangup of the shell's process group on its exit does not reach it.
    // Its pid comes through a command substitution that ends once `cat` holds no end of its pipe.
    let script = format!(
        "echo orphan=$( (setsid sh -c 'echo $$; exec cat {} >/dev/null' &) )",
        fifo.display()
    );
    let session = registry.spawn(spec(&["sh", "-c", &script])).unwrap();
    let done = wait(&session, &Condition::Exit, LONG).await;
    assert_eq!(done.reason, Reason::Exited);
    let screen = session.read(Default::default()).text;
    let pid: i32 = regex::Regex::new(r"orphan=(\d+)")
        .unwrap()
        .captures(&screen)
        .and_then(|c| c[1].parse().ok())
        .unwrap_or_else(|| panic!("no orphan pid on the screen:\n{screen}"));
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let parent = format!("PPid:\t{}\n", std::process::id());
    assert!(status.contains(&parent), "reparented to us:\n{status}");
    // Opening the fifo for writing waits for cat to read it; closing it ends cat.
    let writer = fifo.clone();
    let opened = tokio::task::spawn_blocking(move || {
        drop(std::fs::OpenOptions::new().write(true).open(writer))
    });
    tokio::time::timeout(Duration::from_secs(20), opened)
        .await
        .expect("cat opens the fifo")
        .unwrap();
    // Gone from the process table, not a zombie: the reaper took it at its SIGCHLD.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(Instant::now() < deadline, "orphan {pid} was never reaped");
        tokio::task::yield_now().await;
    }
    registry.close(session.sid.as_str()).await.unwrap();
    let _ = std::fs::remove_file(&fifo);
}
