//! Answers an agent can trust: after input a condition judges only what came after it, the screen
//! answered is a whole frame, and the program's readiness comes from the kernel (the pty's line
//! settings and what the foreground group is blocked in), right for every class of program and
//! never "waiting" while a program computes, sleeps or serves.

use std::path::Path;

use serde_json::Value;

use super::common::{Daemon, LONG_MS, PLAIN_SHELL};

/// Runs per program class: a wrong "waiting" must not show up once.
const RUNS: usize = 20;

/// The screen text of an answer: spawn nests it under `screen`, send answers it flat.
fn text_of(answer: &Value) -> &str {
    answer["screen"]["text"]
        .as_str()
        .or_else(|| answer["text"].as_str())
        .unwrap_or("")
}

fn input_of(answer: &Value) -> &str {
    answer["screen"]["input"]
        .as_str()
        .or_else(|| answer["input"].as_str())
        .unwrap_or("")
}

/// Spawn `argv` as `sid` until it waits for input; the answer.
fn spawn_until_input(d: &Daemon, sid: &str, argv: &[&str]) -> Value {
    let timeout = LONG_MS.to_string();
    let mut args = vec!["spawn", "--sid", sid];
    args.extend_from_slice(&PLAIN_SHELL);
    args.extend_from_slice(&["--until-input", "--until-timeout-ms", &timeout, "--"]);
    args.extend_from_slice(argv);
    let (status, answer) = d.json_status(&args);
    assert_eq!(
        (status, answer["until"]["held"].as_str()),
        (0, Some("input")),
        "{argv:?} never waited for input: {answer}"
    );
    answer
}

fn close(d: &Daemon, sid: &str) {
    d.sp(&["close", sid]);
}

#[test]
fn a_prompt_still_on_the_screen_is_no_answer_after_input() {
    let d = Daemon::new();
    spawn_until_input(&d, "py", &["python3", "-q"]);
    // The REPL trap: `^>>> $` matches the prompt the input was typed at.
    let (status, answer) = d.json_status(&[
        "line",
        "py",
        "import time; time.sleep(1); print('do' + 'ne')",
        "--until",
        "^>>> $",
        "--until-timeout-ms",
        &LONG_MS.to_string(),
    ]);
    assert_eq!(status, 0, "{answer}");
    let elapsed = answer["until"]["elapsed_ms"].as_f64().unwrap_or(0.0);
    assert!(
        elapsed >= 1000.0,
        "answered after {elapsed} ms, before Python's 1 s sleep ended: {answer}"
    );
    let text = text_of(&answer);
    assert!(text.contains("\ndone\n>>> "), "{answer}");
    // An earlier prompt line still on the screen (`>>> ` with a command) is no answer either.
    let (status, answer) = d.json_status(&[
        "line",
        "py",
        "time.sleep(0.5); print(6 * 7)",
        "--until",
        ">>> ",
        "--until-timeout-ms",
        &LONG_MS.to_string(),
    ]);
    assert_eq!(status, 0, "{answer}");
    let text = text_of(&answer);
    assert!(text.contains("\n42\n>>> "), "held early: {answer}");
    // The same line again and again: once the screen is full, each answer looks exactly like the
    // screen before it (the rows scrolled up by one), and the new prompt still counts.
    for n in 0..30 {
        let (status, answer) = d.json_status(&[
            "line",
            "py",
            "x = 1",
            "--until",
            "^>>> $",
            "--no-screen",
            "--until-timeout-ms",
            &LONG_MS.to_string(),
        ]);
        assert_eq!(status, 0, "repeat {n}: {answer}");
    }
    // Without input, a wait keeps its meaning: the prompt on the screen holds at once.
    let (status, answer) = d.json_status(&["wait", "py", "--until", "^>>> $", "--no-screen"]);
    assert_eq!(
        (status, answer["until"]["held"].as_str()),
        (0, Some("regex"))
    );
}

#[test]
fn sqlite3_prompt_after_a_slow_query_is_the_new_one() {
    let d = Daemon::new();
    spawn_until_input(&d, "db", &["sqlite3"]);
    let slow = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000000) SELECT count(*) FROM c;";
    let (status, answer) = d.json_status(&[
        "line",
        "db",
        slow,
        "--until",
        "^sqlite> $",
        "--until-timeout-ms",
        &LONG_MS.to_string(),
    ]);
    assert_eq!(status, 0, "{answer}");
    let text = text_of(&answer);
    assert!(text.contains("\n3000000\nsqlite> "), "{answer}");
    assert_eq!(input_of(&answer), "line", "{answer}");
}

#[test]
fn readiness_is_right_for_every_program_class() {
    let d = Daemon::new();
    let dir = tempfile_dir();
    let pdb_script = dir.join("prog.py");
    std::fs::write(&pdb_script, "x = 1\nprint(x)\n").expect("script");
    let pdb = pdb_script.to_string_lossy().into_owned();
    let text_file = dir.join("notes.txt");
    std::fs::write(&text_file, "one\ntwo\n").expect("file");
    let notes = text_file.to_string_lossy().into_owned();
    let getpass = "import getpass; getpass.getpass('Password: ')";
    let yes_no = "input('Do you want to continue? [Y/n] ')";
    let classes: &[(&str, &[&str], &str)] = &[
        ("python", &["python3", "-q"], "line"),
        ("sqlite3", &["sqlite3"], "line"),
        ("pdb", &["python3", "-m", "pdb", &pdb], "line"),
        ("gdb", &["gdb", "-q", "-nx"], "line"),
        (
            "read -p",
            &["bash", "--norc", "-c", "read -p 'name? ' x"],
            "line",
        ),
        (
            "read -s",
            &["bash", "--norc", "-c", "read -s -p 'pass: ' x"],
            "secret",
        ),
        ("getpass", &["python3", "-c", getpass], "secret"),
        ("y/n", &["python3", "-c", yes_no], "line"),
        ("bash", &["bash", "--norc", "--noprofile"], "line"),
        ("less", &["less", &notes], "keys"),
        ("vim", &["vim", "-Nu", "NONE", &notes], "keys"),
        ("nano", &["nano", "--ignorercfile", &notes], "keys"),
    ];
    for (name, argv, kind) in classes {
        for run in 0..RUNS {
            let sid = format!("r{run}");
            let answer = spawn_until_input(&d, &sid, argv);
            assert_eq!(input_of(&answer), *kind, "{name}, run {run}: {answer}");
            let look = d.snapshot(&sid);
            assert_eq!(look["input"], *kind, "{name}, run {run}: {look}");
            close(&d, &sid);
        }
    }
}

#[test]
fn a_busy_sleeping_serving_or_piped_program_is_never_waiting() {
    let d = Daemon::new();
    let classes: &[(&str, &[&str], Option<&str>)] = &[
        ("sleep", &["sleep", "60"], None),
        ("busy loop", &["python3", "-c", "while True: pass"], None),
        ("pipe", &["sh", "-c", "sleep 60 | cat"], None),
        (
            "dev server",
            &[
                "python3",
                "-u",
                "-m",
                "http.server",
                "0",
                "--bind",
                "127.0.0.1",
            ],
            Some("Serving HTTP"),
        ),
    ];
    for (name, argv, shows) in classes {
        let mut args = vec!["spawn", "--sid", "busy", "--"];
        args.extend_from_slice(argv);
        d.sp_json(&args);
        if let Some(shows) = shows {
            d.wait_regex("busy", shows);
        }
        // Never a waiting kind; `unknown` is allowed for a reading taken while a process of the
        // group is between states the kernel does not show (an exec), never a wrong "waiting".
        for run in 0..RUNS {
            let look = d.snapshot("busy");
            let input = look["input"].as_str().unwrap_or("");
            assert!(
                input == "none" || input == "unknown",
                "{name}, reading {run}: {look}"
            );
        }
        assert_eq!(d.snapshot("busy")["input"], "none", "{name}");
        // A wait for input does not hold while it runs.
        let (status, answer) = d.json_status(&[
            "wait",
            "busy",
            "--until-input",
            "--until-timeout-ms",
            "700",
            "--no-screen",
        ]);
        assert_eq!(status, 1, "{name}: {answer}");
        assert_eq!(answer["until"]["timed_out"], true, "{name}: {answer}");
        close(&d, "busy");
    }
}

#[test]
fn a_wait_for_input_drives_a_program_whose_prompt_is_unknown() {
    let d = Daemon::new();
    d.spawn_bash("sh");
    // The program computes silently, then asks: no prompt text to match, no output to wake on.
    let (status, answer) = d.json_status(&[
        "line",
        "sh",
        "sleep 1; read answer; echo got-$answer",
        "--until-input",
        "--until-timeout-ms",
        &LONG_MS.to_string(),
    ]);
    assert_eq!(status, 0, "{answer}");
    assert!(
        answer["until"]["elapsed_ms"].as_f64().unwrap_or(0.0) >= 1000.0,
        "{answer}"
    );
    assert_eq!(input_of(&answer), "line", "{answer}");
    let (status, answer) = d.json_status(&["line", "sh", "yes", "--until", "^got-yes$"]);
    assert_eq!(status, 0, "{answer}");
}

#[test]
fn nano_answers_with_a_whole_frame_every_time() {
    let d = Daemon::new();
    let dir = tempfile_dir();
    let file = dir.join("frame.txt");
    let path = file.to_string_lossy().into_owned();
    spawn_until_input(&d, "nano", &["nano", "--ignorercfile", &path]);
    for n in 1..=200 {
        let line = format!("line {n} of nano");
        // nano counts the empty line after the last Enter too.
        let wrote = format!("Wrote {} lines", n + 1);
        let (status, answer) = d.json_status(&[
            "keys",
            "nano",
            &line,
            "Enter",
            "C-o",
            "Enter",
            "--until",
            &wrote,
            "--until-timeout-ms",
            &LONG_MS.to_string(),
        ]);
        assert_eq!(status, 0, "save {n}: {answer}");
        let text = text_of(&answer);
        assert!(
            text.contains(&format!("\n{line}\n")) || text.contains(&format!("{line}\n")),
            "save {n}: the line typed is missing from the frame:\n{text}"
        );
        assert!(
            !text.contains("File Name to Write"),
            "save {n}: the Write-Out prompt is still drawn:\n{text}"
        );
        assert!(
            text.contains("^G Help"),
            "save {n}: the help rows are not redrawn:\n{text}"
        );
    }
}

#[test]
fn run_answers_the_status_of_a_command_that_ends_the_shell() {
    let d = Daemon::new();
    d.spawn_bash("c");
    let (status, answer) = d.json_status(&["run", "c", "--", "sleep 0.2; echo BUILD-OK; exit 3"]);
    assert_eq!(status, 1, "{answer}");
    assert_eq!(answer["exit_code"], 3, "{answer}");
    assert_eq!(answer["shell_exited"], true, "{answer}");
    assert!(
        answer["output"].as_str().unwrap_or("").contains("BUILD-OK"),
        "{answer}"
    );
}

#[test]
fn run_is_not_fooled_by_printed_marks_or_query_answers() {
    let d = Daemon::new();
    d.spawn_bash("c");
    // A command printing the shell's own end mark does not end early.
    let (status, answer) = d.json_status(&[
        "run",
        "c",
        "--",
        r"printf '\033]133;D;0\007'; sleep 0.5; echo real-end",
    ]);
    assert_eq!(status, 0, "{answer}");
    assert_eq!(answer["output"], "real-end", "{answer}");
    // The terminal's answers to queries a command never reads do not become the next command.
    let (status, answer) = d.json_status(&["run", "c", "--", r"printf '\033[c\033[6n'"]);
    assert_eq!(status, 0, "{answer}");
    let (status, answer) = d.json_status(&["run", "c", "--", "echo next-ok"]);
    assert_eq!(
        (status, answer["output"].as_str()),
        (0, Some("next-ok")),
        "{answer}"
    );
}

#[test]
fn a_secret_reaches_the_program_and_nothing_keeps_it() {
    let d = Daemon::new();
    let dir = tempfile_dir();
    let cast = dir.join("py.cast");
    let cast_path = cast.to_string_lossy().into_owned();
    let check = "import getpass; p = getpass.getpass('pw: '); print('ok' if p == 'hunter2' + 'xyz' else 'bad')";
    let (status, answer) = d.json_status(&[
        "spawn",
        "--sid",
        "py",
        "--record",
        &cast_path,
        "--until-input",
        "--",
        "python3",
        "-c",
        check,
    ]);
    assert_eq!(status, 0, "{answer}");
    assert_eq!(input_of(&answer), "secret", "{answer}");
    // Bad references are refused, naming the field; nothing is typed.
    let error = d.sp_error(&["secret", "py", "--env", "NO_SUCH_VAR_FOR_TEST"]);
    assert_eq!(error["field"], "secret", "{error}");
    let open = dir.join("open.txt");
    std::fs::write(&open, "hunter2xyz\n").expect("file");
    set_mode(&open, 0o644);
    let error = d.sp_error(&["secret", "py", "--file", &open.to_string_lossy()]);
    assert!(
        error["message"]
            .as_str()
            .unwrap_or("")
            .contains("readable by others"),
        "{error}"
    );
    // A value given in the request itself is dropped: only a reference brings one.
    let error = d.sp_error(&[
        "call",
        "send",
        r#"{"sid":"py","secret":{"value":"hunter2xyz"}}"#,
    ]);
    assert_eq!(error["field"], "secret", "{error}");
    // Where the terminal echoes, nothing is typed: the secret would be shown.
    d.spawn_bash("sh");
    let shown = d.screen("sh");
    let mut refused = d.command(&["secret", "sh", "--env", "TEST_SECRET", "--json"]);
    let out = refused
        .env("TEST_SECRET", "hunter2xyz")
        .output()
        .expect("run");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(answer["error"]["field"], "secret", "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("input=line"),
        "{answer}"
    );
    assert_eq!(d.screen("sh"), shown, "something was typed");
    // By reference: the variable is the caller's; its value enters no request the model writes.
    let mut typed = d.command(&[
        "secret",
        "py",
        "--env",
        "TEST_SECRET",
        "--until-exit",
        "--json",
    ]);
    let out = typed
        .env("TEST_SECRET", "hunter2xyz")
        .output()
        .expect("run");
    let answer: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(text_of(&answer).contains("ok"), "{answer}");
    assert!(!answer.to_string().contains("hunter2xyz"), "{answer}");
    // A person types one through attach --secret, itself driven in a session of ours.
    let binary = super::common::binary();
    let check = "import getpass; p = getpass.getpass('again: '); print('ok2' if p == 'person' + 'pw' else 'bad')";
    d.sp_json(&[
        "spawn",
        "--sid",
        "py2",
        "--until-input",
        "--",
        "python3",
        "-c",
        check,
    ]);
    d.sp_json(&[
        "spawn",
        "--sid",
        "person",
        "--env",
        &format!("SCREENPILOT_DIR={}", d.path().display()),
        "--until",
        "press Enter: $",
        "--",
        binary,
        "attach",
        "py2",
        "--secret",
    ]);
    let (status, answer) = d.json_status(&["keys", "person", "personpw", "Enter", "--until-exit"]);
    assert_eq!(status, 0, "{answer}");
    assert!(!answer.to_string().contains("personpw"), "{answer}");
    let answer = d.sp_json(&["wait", "py2", "--until-exit"]);
    assert!(text_of(&answer).contains("ok2"), "{answer}");
    // Typed into a hidden line by hand, a secret is kept by no step file either.
    d.sp_json(&[
        "spawn",
        "--sid",
        "py3",
        "--until-input",
        "--",
        "python3",
        "-c",
        "import getpass; getpass.getpass('x: ')",
    ]);
    d.sp_json(&["keys", "py3", "typedbyhand", "Enter", "--until-exit"]);
    let steps = dir.join("steps.toml");
    d.sp_json(&["save-test", &steps.to_string_lossy()]);
    let written = std::fs::read_to_string(&steps).expect("step file");
    let recorded = std::fs::read_to_string(&cast).expect("recording");
    for secret in ["hunter2xyz", "personpw", "typedbyhand"] {
        assert!(
            !written.contains(secret),
            "{secret} in the step file:\n{written}"
        );
        assert!(!recorded.contains(secret), "{secret} in the recording");
    }
    assert!(
        written.contains("secret = { env = \"TEST_SECRET\" }"),
        "{written}"
    );
}

#[test]
fn a_step_file_types_its_secret_from_the_runners_environment() {
    let d = Daemon::new();
    let dir = tempfile_dir();
    let check = "import getpass; p = getpass.getpass('pw: '); print('ok' if p == 'sesame' + '42' else 'bad')";
    d.sp_json(&[
        "spawn",
        "--sid",
        "s",
        "--until-input",
        "--",
        "python3",
        "-c",
        check,
    ]);
    let mut typed = d.command(&[
        "secret",
        "s",
        "--env",
        "STEP_SECRET",
        "--until",
        "^ok$",
        "--json",
    ]);
    let out = typed.env("STEP_SECRET", "sesame42").output().expect("run");
    assert!(out.status.success(), "{out:?}");
    let file = dir.join("secret.toml");
    let file = file.to_string_lossy();
    d.sp_json(&["save-test", &file]);
    let written = std::fs::read_to_string(&*file).expect("step file");
    assert!(!written.contains("sesame42"), "{written}");
    let run = |value: Option<&str>| {
        let mut cmd = d.command(&["test", &file]);
        match value {
            Some(value) => cmd.env("STEP_SECRET", value),
            None => cmd.env_remove("STEP_SECRET"),
        };
        cmd.output().expect("run test")
    };
    let passed = run(Some("sesame42"));
    assert!(passed.status.success(), "{passed:?}\n{written}");
    let failed = run(None);
    assert!(!failed.status.success(), "{failed:?}");
    assert!(
        String::from_utf8_lossy(&failed.stdout).contains("STEP_SECRET")
            || String::from_utf8_lossy(&failed.stderr).contains("STEP_SECRET"),
        "{failed:?}"
    );
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
}

fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "screenpilot-trust-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
