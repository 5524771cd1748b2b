//! Commands as units in a real bash: the marks the daemon's bash integration makes it emit, the output
//! of one command between them, and its exit status.

use std::time::Duration;

use screenpilot_screen::Size;
use screenpilot_session::wait::{wait_until, Until, WaitOptions};
use screenpilot_session::{BaseEnv, Limits, Reason, Registry, ShellState, SpawnSpec};

fn bash() -> SpawnSpec {
    SpawnSpec {
        sid: None,
        argv: vec!["bash".into(), "--norc".into(), "--noprofile".into()],
        cwd: std::env::temp_dir(),
        base_env: BaseEnv::Exactly(vec![
            ("PATH".into(), "/usr/bin:/bin".into()),
            ("PS1".into(), "$ ".into()),
        ]),
        env: Vec::new(),
        size: Size::new(40, 10),
        detect_child_exit: true,
        images: false,
        record: None,
    }
}

const LONG: WaitOptions = WaitOptions {
    timeout: Duration::from_secs(20),
    scrollback: None,
};

async fn at_prompt(session: &screenpilot_session::Session) {
    let prompt = regex::Regex::new(r"(?m)^\$ $").unwrap();
    let until = Until {
        regexes: vec![prompt],
        ..Until::default()
    };
    let outcome = wait_until(session, &until, LONG).await;
    assert_eq!(outcome.reason, Reason::Matched);
    assert_eq!(session.shell_state(), ShellState::Prompt);
}

async fn run(
    session: &screenpilot_session::Session,
    line: &str,
) -> screenpilot_session::CommandRecord {
    let id = session.arm_command(line);
    session
        .write(&[line.as_bytes().to_vec(), b"\r".to_vec()])
        .await
        .unwrap();
    let until = Until {
        command: Some(id),
        end_on_exit: true,
        ..Until::default()
    };
    let outcome = wait_until(session, &until, LONG).await;
    assert_eq!(outcome.reason, Reason::CommandDone, "{line}");
    session.command(id).expect("the command is remembered")
}

#[tokio::test]
async fn a_command_is_its_own_output_and_exit_status() {
    let registry = Registry::new(Limits::default());
    let session = registry.spawn(bash()).unwrap();
    at_prompt(&session).await;

    let done = run(&session, "printf 'one\\ntwo\\n'; (exit 3)").await;
    assert!(done.done && done.started);
    assert_eq!(done.exit_code, Some(3));
    assert_eq!(
        done.lines,
        ["one", "two"],
        "neither prompt nor command line"
    );

    // The next command starts clean, and a line wider than the terminal is one line.
    let wide = "x".repeat(70);
    let done = run(&session, &format!("echo {wide}")).await;
    assert_eq!((done.exit_code, done.lines), (Some(0), vec![wide]));

    // A command with no output, and one that fails.
    let done = run(&session, "true").await;
    assert_eq!((done.exit_code, done.lines.len()), (Some(0), 0));
    let done = run(&session, "ls /no/such/dir").await;
    assert_eq!(done.exit_code, Some(2));
    assert!(done.lines[0].contains("No such file"), "{:?}", done.lines);
    assert_eq!(session.last_exit(), Some(2));
    registry.close_all(false).await;
}

#[tokio::test]
async fn the_integration_keeps_a_prompt_that_shows_the_status() {
    let registry = Registry::new(Limits::default());
    let mut spec = bash();
    spec.base_env = BaseEnv::Exactly(vec![
        ("PATH".into(), "/usr/bin:/bin".into()),
        ("PS1".into(), "[$?] $ ".into()),
    ]);
    let session = registry.spawn(spec).unwrap();
    let done = run(&session, "false").await;
    assert_eq!(done.exit_code, Some(1));
    let prompt = regex::Regex::new(r"(?m)^\[1\] \$ $").unwrap();
    let until = Until {
        regexes: vec![prompt],
        ..Until::default()
    };
    let shown = wait_until(&session, &until, LONG).await;
    assert_eq!(
        shown.reason,
        Reason::Matched,
        "{}",
        session.read(Default::default()).text
    );
    registry.close_all(false).await;
}

#[tokio::test]
async fn a_shell_of_its_own_prompt_command_gives_no_marks() {
    let registry = Registry::new(Limits::default());
    let mut spec = bash();
    spec.env = vec![("PROMPT_COMMAND".into(), "true".into())];
    let session = registry.spawn(spec).unwrap();
    let prompt = regex::Regex::new(r"(?m)^\$ $").unwrap();
    let until = Until {
        regexes: vec![prompt],
        ..Until::default()
    };
    wait_until(&session, &until, LONG).await;
    // PS0 is still ours; without PROMPT_COMMAND there is no end mark, and no prompt mark.
    assert_eq!(session.shell_state(), ShellState::Unmarked);
    registry.close_all(false).await;
}
