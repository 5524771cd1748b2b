//! The session registry in-process, on real ptys and real programs.

use std::time::Duration;

use screenpilot_session::process::session_members;
use screenpilot_session::wait::{compile, wait, Condition, WaitOptions};
use screenpilot_session::{BaseEnv, Limits, Reason, Registry, SessionError, SpawnSpec};

fn spec(argv: &[&str]) -> SpawnSpec {
    SpawnSpec {
        env: vec![("GREETING".into(), "hi from env".into())],
        detect_child_exit: true,
        ..SpawnSpec::new(argv)
    }
}

const LONG: WaitOptions = WaitOptions {
    timeout: Duration::from_secs(20),
    scrollback: None,
};

#[tokio::test]
async fn output_exit_code_and_env_reach_the_caller() {
    let registry = Registry::new(Limits::default());
    let session = registry
        .spawn(spec(&[
            "sh",
            "-c",
            "echo \"$GREETING\"; echo \"TERM=$TERM\"; exit 7",
        ]))
        .unwrap();
    let done = wait(&session, &Condition::Exit, LONG).await;
    assert_eq!(done.reason, Reason::Exited);
    let state = session.read(Default::default());
    assert!(state.text.contains("hi from env"), "{}", state.text);
    assert!(state.text.contains("TERM=xterm-256color"), "{}", state.text);
    assert_eq!(state.exit_code, Some(7));
    assert!(!state.alive);
    let err = session.write(&[b"x".to_vec()]).await.unwrap_err();
    assert!(matches!(err, SessionError::Exited(_)), "{err}");
}

#[tokio::test]
async fn the_session_limit_refuses_and_harms_nothing() {
    let registry = Registry::new(Limits {
        max_sessions: 2,
        ..Limits::default()
    });
    let a = registry.spawn(spec(&["cat"])).unwrap();
    let b = registry.spawn(spec(&["cat"])).unwrap();
    let err = registry.spawn(spec(&["cat"])).unwrap_err();
    assert!(matches!(err, SessionError::Limit(_)), "{err}");
    assert!(err.to_string().contains("2 sessions are running"), "{err}");
    assert!(a.alive() && b.alive());
    registry.close_all(false).await;
}

#[tokio::test]
async fn close_ends_processes_that_ignore_hup_and_term() {
    let registry = Registry::new(Limits {
        close_grace: Duration::from_millis(200),
        ..Limits::default()
    });
    let session = registry
        .spawn(spec(&[
            "sh",
            "-c",
            "trap '' HUP TERM; sleep 1000 & sleep 1000 & echo started; wait",
        ]))
        .unwrap();
    let started = compile("started", "pattern", registry.limits()).unwrap();
    assert_eq!(
        wait(&session, &Condition::Regex(started), LONG)
            .await
            .reason,
        Reason::Matched
    );
    let leader = session.pid;
    assert!(session_members(leader).len() >= 3, "shell and two sleeps");
    let info = registry.close(session.sid.as_str()).await.unwrap();
    assert_eq!(info.signal, Some(9), "only KILL ends it");
    assert!(
        session_members(leader).is_empty(),
        "left behind: {:?}",
        session_members(leader)
    );
}

#[tokio::test]
async fn an_idle_session_is_closed_and_its_waiters_released() {
    let registry = Registry::new(Limits {
        idle_timeout: Duration::from_millis(300),
        ..Limits::default()
    });
    let expiry = tokio::spawn(registry.clone().expire_idle());
    let session = registry.spawn(spec(&["cat"])).unwrap();
    // A wait keeps the session busy; once it ends the idle clock runs and the session is closed.
    let quiet = Condition::Ready {
        marker: None,
        stable: Duration::from_millis(400),
    };
    assert_eq!(wait(&session, &quiet, LONG).await.reason, Reason::Stable);
    assert!(
        registry.get(session.sid.as_str()).is_ok(),
        "not closed while waited on"
    );
    // Watch the update channel itself: a wait would count as use and keep the session open.
    let mut updates = session.subscribe();
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        while !session.is_closed() {
            if updates.changed().await.is_err() {
                break;
            }
        }
    });
    assert!(closed.await.is_ok(), "the idle session was not closed");
    assert!(registry.list().is_empty());
    expiry.abort();
}

#[tokio::test]
async fn a_regex_finds_output_wider_than_the_terminal() {
    let registry = Registry::new(Limits::default());
    let session = registry
        .spawn(spec(&[
            "sh",
            "-c",
            "printf 'start %0150d end\\n' 0; exec cat",
        ]))
        .unwrap();
    let wide = compile(r"^start 0{150} end$", "pattern", registry.limits()).unwrap();
    let found = wait(&session, &Condition::Regex(wide), LONG).await;
    assert_eq!(found.reason, Reason::Matched);
    // The screen itself still has one line per row.
    let text = session.read(Default::default()).text;
    assert!(text.lines().next().is_some_and(|l| l.len() == 80), "{text}");
    registry.close_all(false).await;
}

#[tokio::test]
async fn close_all_ends_stubborn_sessions_together_not_one_after_another() {
    let grace = Duration::from_millis(1000);
    let registry = Registry::new(Limits {
        close_grace: grace,
        ..Limits::default()
    });
    let started = compile("started", "pattern", registry.limits()).unwrap();
    let mut leaders = Vec::new();
    for _ in 0..4 {
        let session = registry
            .spawn(spec(&[
                "sh",
                "-c",
                "trap '' HUP TERM; echo started; sleep 1000",
            ]))
            .unwrap();
        assert_eq!(
            wait(&session, &Condition::Regex(started.clone()), LONG)
                .await
                .reason,
            Reason::Matched
        );
        leaders.push(session.pid);
    }
    let start = std::time::Instant::now();
    registry.close_all(false).await;
    let took = start.elapsed();
    // Each session needs both grace periods before KILL: together that is about two graces, one after
    // another at least eight. The bound sits just under eight so a loaded machine has 3.5x headroom.
    assert!(
        took < grace * 7,
        "closing 4 sessions took {took:?}; one takes about {:?}",
        grace * 2
    );
    for leader in leaders {
        assert!(session_members(leader).is_empty(), "{leader} left behind");
    }
}

#[tokio::test]
async fn no_session_starts_once_shutdown_has_begun() {
    let registry = Registry::new(Limits::default());
    let before = registry.spawn(spec(&["cat"])).unwrap();
    registry.close_all(false).await;
    assert!(before.is_closed());
    let err = registry.spawn(spec(&["cat"])).unwrap_err();
    assert!(err.to_string().contains("shutting down"), "{err}");
    assert!(registry.list().is_empty());
}

#[tokio::test]
async fn an_exact_base_environment_is_all_the_program_gets_and_its_path_finds_the_program() {
    let bin = std::env::temp_dir().join(format!("sp-base-env-{}", std::process::id()));
    std::fs::create_dir_all(&bin).expect("a directory for the tool");
    let tool = bin.join("only-here-tool");
    std::fs::write(
        &tool,
        "#!/bin/sh\necho \"BASE=$FROM_BASE EXTRA=$EXTRA TERM=$TERM HOME=${HOME-unset} COLUMNS=${COLUMNS-unset} TMUX=${TMUX-unset}\"\n",
    )
    .expect("write the tool");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let path = bin.to_string_lossy().into_owned();
    let registry = Registry::new(Limits::default());
    let mut spawn = spec(&["only-here-tool"]);
    spawn.base_env = BaseEnv::Exactly(vec![
        ("PATH".into(), path),
        ("FROM_BASE".into(), "1".into()),
        ("COLUMNS".into(), "999".into()),
        ("TMUX".into(), "/tmp/tmux-0/default,1,0".into()),
    ]);
    spawn.env = vec![("EXTRA".into(), "2".into())];
    let session = registry.spawn(spawn).expect("found on the base PATH");
    wait(&session, &Condition::Exit, LONG).await;
    let text = session.read(Default::default()).text;
    let _ = std::fs::remove_dir_all(&bin);
    assert!(
        text.contains("BASE=1 EXTRA=2 TERM=xterm-256color HOME=unset COLUMNS=unset TMUX=unset"),
        "{text}"
    );
    registry.close_all(false).await;
}

#[tokio::test]
async fn a_program_missing_from_an_environment_without_path_says_so() {
    let registry = Registry::new(Limits::default());
    let mut spawn = spec(&["no-such-program-anywhere"]);
    spawn.base_env = BaseEnv::Exactly(Vec::new());
    let Err(err) = registry.spawn(spawn) else {
        panic!("a program on no PATH started");
    };
    let err = err.to_string();
    assert!(err.contains("the environment has no PATH"), "{err}");
}
