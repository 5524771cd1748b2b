//! Step files end to end: the files committed in tests/steps (dialog, vim, htop, Textual's own Input
//! example, a zenity dialog and a GTK dialog driven by its accessibility elements on a desktop) pass through the library and the CLI; each fails with a
//! readable report once the program behaves otherwise; a changed golden fails, shows what differs, and
//! passes again after `--update`; masks keep what varies out of a golden; JUnit XML and the HTML page
//! of a failure are written; bad files are refused naming the file, the line and the field.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use screenpilot::steps::{run_paths, RunOptions};

/// (from, to) text replacements in a step file.
type Edits = &'static [(&'static str, &'static str)];

fn steps_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/steps")
}

/// `screenpilot test ARGS...` in `dir`: exit status, stdout and stderr.
fn test_cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(common::binary())
        .arg("test")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run screenpilot test");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A copy of a committed step file in `dir`, with `edits` (from, to) made to it and its relative
/// paths (the Textual venv's, the fixtures') made absolute.
fn variant(dir: &Path, name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(steps_dir().join(name)).expect("a committed step file");
    text = text.replace("../../../../", &format!("{}/", common::repo().display()));
    let fixtures = steps_dir().join("../fixtures/");
    text = text.replace("../fixtures/", &fixtures.display().to_string());
    for (from, to) in edits {
        assert!(text.contains(from), "{name} has no {from:?}");
        text = text.replace(from, to);
    }
    // A program that behaves otherwise is seen at the limit: keep it short.
    let path = dir.join(name);
    std::fs::write(&path, format!("timeout_ms = 3000\n{text}")).expect("write the variant");
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_committed_step_file_passes_through_the_library() {
    let outcomes = run_paths(&[steps_dir()], &RunOptions::default(), 2)
        .await
        .unwrap_or_else(|errors| panic!("bad step files: {errors:?}"));
    assert!(outcomes.len() >= 5, "{} files", outcomes.len());
    for o in &outcomes {
        assert!(o.passed(), "{}: {:#?}", o.path.display(), o.failure);
        assert!(!o.steps.is_empty());
    }
}

#[test]
fn each_committed_file_fails_readably_when_its_program_behaves_otherwise() {
    let dir = tempfile::tempdir().expect("a temp dir");
    std::fs::create_dir_all(dir.path().join("goldens")).expect("goldens dir");
    std::fs::copy(
        steps_dir().join("goldens/dialog_menu.styled.txt"),
        dir.path().join("goldens/dialog_menu.styled.txt"),
    )
    .expect("copy the golden");
    let cases: [(&str, Edits, &str); 6] = [
        // A different item highlighted: the expectation names the row and shows the styled text.
        (
            "dialog_menu.toml",
            &[("keys = [\"Down\", \"Down\"]", "keys = [\"Down\"]")],
            "expected styled /\\[bold white on blue\\]Cherry/ in row 6",
        ),
        (
            "vim_edit.toml",
            &[(":2s/brown/red/", ":2s/quick/slow/")],
            "until did not hold",
        ),
        (
            "htop_sort.toml",
            &[("keys = [\"M\"]", "keys = [\"N\"]")],
            "expected text /PID\\s+USER.*MEM%▽/",
        ),
        (
            "textual_input.toml",
            &[(
                "text = \"Lovelace\"\nuntil = { regex = \"Lovelace\" }",
                "text = \"Byron\"\nuntil = { regex = \"Byron\" }",
            )],
            "value: want \"Lovelace\", got \"Byron\"",
        ),
        (
            "zenity_question.toml",
            &[("keys = [\"Return\"]", "keys = [\"Escape\"]")],
            "to exit with 0",
        ),
        // The other check box toggled: the expectation names the element and shows the desktop.
        (
            "gtk_settings.toml",
            &[(
                "act = { ref = 'check box \"Show hidden files\"'",
                "act = { ref = 'check box \"Save automatically\"'",
            )],
            "expected an element {\"name\":\"^Show hidden files$\",\"role\":\"check box\",\"state\":\"checked\"}",
        ),
    ];
    for (name, edits, said) in cases {
        let file = variant(dir.path(), name, edits);
        let report = dir.path().join(format!("report-{name}"));
        let junit = dir.path().join(format!("{name}.xml"));
        let (status, out, err) = test_cli(
            dir.path(),
            &[
                file.to_str().unwrap(),
                "--report",
                report.to_str().unwrap(),
                "--junit",
                junit.to_str().unwrap(),
            ],
        );
        assert_eq!(status, 1, "{name} should fail:\n{out}{err}");
        assert!(out.contains(&format!("FAIL {}:", file.display())), "{out}");
        assert!(
            out.contains(said),
            "{name}: the failure should say {said:?}:\n{out}"
        );
        assert!(out.contains("0 passed, 1 failed"), "{out}");
        let xml = std::fs::read_to_string(&junit).expect("junit written");
        assert!(
            xml.contains("failures=\"1\"") && xml.contains("<failure message="),
            "{xml}"
        );
        let pages: Vec<_> = std::fs::read_dir(&report)
            .expect("report dir")
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "html"))
            .collect();
        assert_eq!(pages.len(), 1, "one HTML page for the failed file");
        let page = std::fs::read_to_string(pages[0].path()).expect("page");
        assert!(
            page.contains("What failed") && page.contains("data:image/png;base64,"),
            "{name}: the page lacks the failure or the screens"
        );
    }
}

const GOLDEN_FILE: &str = r#"timeout_ms = 3000
name = "a menu, as a golden"
[[step]]
spawn = "sh -c 'dialog --menu Fruit 12 40 4 1 Apple 2 Banana 3 Cherry 2>/dev/null'"
size = "60x15"
until = { regex = "Cherry" }
[[step]]
golden = "goldens/menu.styled.txt"
[[step]]
golden = { file = "goldens/menu.png", tolerance = 0.001 }
[[step]]
golden = "goldens/menu.txt"
"#;

#[test]
fn a_changed_golden_fails_showing_what_differs_and_update_takes_it() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("menu.toml");
    std::fs::write(&file, GOLDEN_FILE).expect("write");
    let path = file.to_str().unwrap();
    // Missing goldens: a failure naming the file, the line and the field, until --update writes them.
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains(&format!("FAIL {path}:7"))
            && out.contains("golden: ")
            && out.contains("is missing; run `screenpilot test --update`"),
        "{out}"
    );
    let (status, out, _) = test_cli(dir.path(), &[path, "--update"]);
    assert_eq!(status, 0, "{out}");
    assert_eq!(out.matches("golden written").count(), 3, "{out}");
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 0, "the goldens just written hold: {out}");

    // The program changes: an item renamed. Every golden sees it; the text shows which row, the
    // picture its changed pixels.
    std::fs::write(&file, GOLDEN_FILE.replace("2 Banana", "2 Blueberry")).expect("write");
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("- golden, + screen") && out.contains("Banana") && out.contains("Blueberry"),
        "{out}"
    );
    assert!(
        dir.path().join("goldens/menu.styled.actual.txt").exists(),
        "the screen is written beside the golden"
    );
    // A changed colour: the styled golden sees it, the plain text does not.
    std::fs::write(&file, GOLDEN_FILE).expect("write");
    let rc = dir.path().join("dialogrc");
    std::fs::write(&rc, "item_selected_color = (YELLOW,RED,ON)\n").expect("dialogrc");
    let coloured = GOLDEN_FILE.replace(
        "sh -c 'dialog",
        &format!("sh -c 'DIALOGRC={} dialog", rc.display()),
    );
    std::fs::write(
        &file,
        coloured.replace(
            "golden = { file = \"goldens/menu.png\", tolerance = 0.001 }\n[[step]]\n",
            "",
        ),
    )
    .expect("write");
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("menu.styled.txt") && out.contains("yellow on red"),
        "{out}"
    );
    // --update takes the new look; then it passes again.
    let (status, out, _) = test_cli(dir.path(), &[path, "--update"]);
    assert_eq!(status, 0, "{out}");
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 0, "{out}");

    // A picture that differs: the screen's PNG with the differing pixels marked, for a person.
    let picture_only = |menu: &str| {
        format!(
            "timeout_ms = 3000\n[[step]]\nspawn = \"sh -c 'dialog --menu Fruit 12 40 4 1 Apple 2 Banana {menu} 2>/dev/null'\"\nsize = \"60x15\"\nuntil = {{ regex = \"Apple\" }}\n[[step]]\ngolden = {{ file = \"goldens/menu.png\", tolerance = 0.001 }}\n"
        )
    };
    let pictured = dir.path().join("picture.toml");
    std::fs::write(&pictured, picture_only("3 Cherry")).expect("write");
    let (status, out, _) = test_cli(dir.path(), &[pictured.to_str().unwrap(), "--update"]);
    assert_eq!(status, 0, "{out}");
    std::fs::write(&pictured, picture_only("3 Cheese")).expect("write");
    let report = dir.path().join("report");
    let (status, out, _) = test_cli(
        dir.path(),
        &[
            pictured.to_str().unwrap(),
            "--report",
            report.to_str().unwrap(),
        ],
    );
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains("of the pixels differ (tolerance 0.1000%)"),
        "{out}"
    );
    let marked = std::fs::read(report.join("menu.diff.png")).expect("the marked difference");
    assert!(marked.starts_with(b"\x89PNG"));
    assert!(std::fs::read(report.join("menu.actual.png")).is_ok_and(|p| p.starts_with(b"\x89PNG")));
}

#[test]
fn masks_keep_what_varies_out_of_a_golden_and_a_mask_off_the_screen_is_named() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("clock.toml");
    let with_mask = r#"
[[step]]
spawn = "sh -c 'echo stamp; date +%N; echo end; exec cat'"
size = "30x5"
until = { regex = "end" }
[[step]]
golden = { file = "clock.txt", mask = [[1, 0, 1, 30]] }
"#;
    std::fs::write(&file, with_mask).expect("write");
    let path = file.to_str().unwrap();
    let (status, out, _) = test_cli(dir.path(), &[path, "--update"]);
    assert_eq!(status, 0, "{out}");
    let golden = std::fs::read_to_string(dir.path().join("clock.txt")).expect("golden");
    assert_eq!(golden, format!("stamp\n{}\nend\n", "░".repeat(30)));
    for _ in 0..2 {
        let (status, out, _) = test_cli(dir.path(), &[path]);
        assert_eq!(status, 0, "the nanoseconds are masked: {out}");
    }
    std::fs::write(&file, with_mask.replace(", mask = [[1, 0, 1, 30]]", "")).expect("write");
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 1, "unmasked, the nanoseconds differ: {out}");
    std::fs::write(
        &file,
        with_mask.replace("[[1, 0, 1, 30]]", "[[1, 0, 1, 31]]"),
    )
    .expect("write");
    let (status, out, _) = test_cli(dir.path(), &[path]);
    assert_eq!(status, 1, "{out}");
    assert!(
        out.contains(&format!("FAIL {path}:6"))
            && out.contains("golden.mask: [1, 0, 1, 31] is not inside the 30x5 screen"),
        "{out}"
    );
}

#[test]
fn bad_files_are_refused_naming_the_file_the_line_and_the_field() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let cases = [
        ("unknown.toml", "[[step]]\nspawn = \"cat\"\n\n[[step]]\nbogus = 1\n", ":4: bogus: not a step field"),
        ("regex.toml", "[[step]]\nspawn = \"cat\"\nuntil = { regex = \"x\" }\n[[step]]\nexpect = { text = \"([\" }\n", ":4: expect.text: invalid regex"),
        ("two.toml", "[[step]]\nspawn = \"cat\"\nresize = \"10x10\"\n", ":1: resize: one step does one thing"),
        ("syntax.toml", "[[step]\n", ":1: toml: "),
        ("state.toml", "[[step]]\nexpect = { element = { role = \"button\", state = \"pressed\" } }\n", ":1: expect.element.state: \"pressed\" is not one of"),
        ("act.toml", "[[step]]\nact = { ref = \"e4\", click = true }\n", ":1: act.click: not an act field"),
    ];
    for (name, text, said) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, text).expect("write");
        let (status, out, err) = test_cli(dir.path(), &[file.to_str().unwrap()]);
        assert_eq!(status, 2, "{name}: {out}{err}");
        assert!(
            err.contains(&format!("{}{said}", file.display())),
            "{name}: {err}"
        );
    }
    let (status, _, err) = test_cli(dir.path(), &["no/such/file.toml"]);
    assert_eq!(status, 2);
    assert!(
        err.contains("no/such/file.toml:0: path: cannot read it"),
        "{err}"
    );
}

#[test]
fn a_session_driven_by_hand_through_the_cli_becomes_a_step_file_that_passes_again() {
    let d = common::Daemon::new();
    let sp = |args: &[&str]| d.sp_ok(args);
    // A person picks Cherry in a dialog menu, looking at the screen between keys...
    sp(&[
        "spawn",
        "--sid",
        "menu",
        "--size",
        "60x15",
        "--until",
        "Cherry",
        "--",
        "sh",
        "-c",
        "dialog --menu Fruit 12 40 4 1 Apple 2 Banana 3 Cherry 2>choice",
    ]);
    sp(&["keys", "menu", "Down", "Down"]);
    sp(&["snapshot", "menu"]);
    sp(&["keys", "menu", "Enter"]);
    // ...then checks in a shell what it chose, and does a sum.
    sp(&[
        "spawn", "--sid", "sh", "--size", "50x10", "--", "bash", "--norc",
    ]);
    assert!(sp(&["run", "sh", "cat choice; echo"]).contains('3'));
    sp(&["type", "sh", "echo $((6*7))"]);
    sp(&["keys", "sh", "Enter"]);
    sp(&["wait", "sh", "--until", "^42$"]);
    sp(&["close", "sh"]);
    std::fs::create_dir(d.path().join("t")).expect("mkdir");
    let said = sp(&["save-test", "t/hand.toml"]);
    assert!(said.contains("hand.toml (9 steps on menu, sh)"), "{said}");
    let file = d.path().join("t/hand.toml");
    let text = std::fs::read_to_string(&file).expect("the step file");
    // Each input carries a condition, given or read from the screens; never a pause.
    for wanted in [
        "sid = \"menu\"\nspawn = \"sh -c 'dialog --menu Fruit 12 40 4 1 Apple 2 Banana 3 Cherry 2>choice'\"\nsize = \"60x15\"\ncwd = \"..\"\nuntil = { regex = \"Cherry\" }\n",
        "keys = [\"Down\", \"Down\"]\nuntil = { visual = true }\n",
        "run = \"cat choice; echo\"\n",
        "text = \"echo $((6*7))\"\nuntil = { regex = ",
        "sid = \"sh\"\nkeys = [\"Enter\"]\n\n[[step]]\nsid = \"sh\"\nuntil = { regex = \"^42$\" }\n",
        "close = true\n",
    ] {
        assert!(text.contains(wanted), "the file lacks {wanted:?}:\n{text}");
    }
    assert!(!text.contains("quiet") && !text.contains("sleep"), "{text}");
    let (status, out, err) = test_cli(d.path(), &[file.to_str().unwrap()]);
    assert_eq!(
        status, 0,
        "the saved test passes again:\n{text}\n{out}{err}"
    );
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    // What was saved is forgotten: a second save has nothing to write, and says so.
    let err = d.sp_error(&["save-test", "t/again.toml"]);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("nothing to write"),
        "{err}"
    );
    let err = d.sp_error(&["save-test", "t/hand.toml"]);
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("already exists; give force"),
        "{err}"
    );
}

/// `screenpilot test ARGS...` in `dir` under the memory limit: exit status, stdout and stderr.
fn limited_test_cli(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = Command::new(common::binary());
    cmd.arg("test").args(args).current_dir(dir);
    let out = common::limit_memory(&mut cmd)
        .output()
        .expect("run screenpilot test");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const ECHO_FILE: &str = "name = \"echo\"\n\n[[step]]\nspawn = \"sh -c 'echo hello; exec cat'\"\nuntil = { regex = \"hello\" }\n";

#[test]
fn test_reads_regular_files_of_a_bounded_size_once_each_never_a_loop_a_fifo_or_a_device() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("sub")).expect("mkdir");
    std::fs::write(tree.join("sub/echo.toml"), ECHO_FILE).expect("write");
    // Two loops back up the tree, and a second name for the file.
    std::os::unix::fs::symlink("..", tree.join("sub/up")).expect("symlink");
    std::os::unix::fs::symlink(".", tree.join("here")).expect("symlink");
    std::os::unix::fs::symlink("sub/echo.toml", tree.join("again.toml")).expect("symlink");
    let (status, out, err) = limited_test_cli(dir.path(), &[tree.to_str().unwrap()]);
    assert_eq!(status, 0, "{out}{err}");
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    // A FIFO is refused at once (nobody writes it), /dev/zero before memory fills, a huge file by
    // its size: each exit 2 at the file check, naming the file.
    let fifo = dir.path().join("steps.toml");
    let made = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C path.
    assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o600) }, 0);
    let big = dir.path().join("big.toml");
    std::fs::write(&big, "#".repeat(5 * 1024 * 1024)).expect("write");
    for (path, why) in [
        (fifo.to_str().unwrap(), "not a regular file"),
        ("/dev/zero", "not a regular file"),
        (
            big.to_str().unwrap(),
            "more than the 4194304 a step file may be",
        ),
    ] {
        let (status, out, err) = limited_test_cli(dir.path(), &[path]);
        assert_eq!(status, 2, "{path}: {out}{err}");
        assert!(err.contains(path) && err.contains(why), "{path}: {err}");
    }
}

#[test]
fn goldens_stay_under_the_step_files_folder_and_update_never_writes_through_a_symlink() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let tests = dir.path().join("tests");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&tests).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    let with_golden = |name: &str, golden: &str| {
        let file = tests.join(name);
        std::fs::write(
            &file,
            format!("{ECHO_FILE}\n[[step]]\ngolden = \"{golden}\"\n"),
        )
        .expect("write");
        file.to_str().unwrap().to_owned()
    };
    // Paths that leave the folder are refused before anything runs.
    let absolute = outside.join("abs.txt");
    for golden in ["../outside/up.txt", absolute.to_str().unwrap()] {
        let file = with_golden("leaves.toml", golden);
        let (status, out, err) = test_cli(&tests, &[&file, "--update"]);
        assert_eq!(status, 2, "{golden}: {out}{err}");
        assert!(
            err.contains("golden.file") && err.contains("--goldens-anywhere"),
            "{golden}: {err}"
        );
    }
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    // A golden that is a symlink out, or under a folder that is one, is not written through.
    std::fs::write(outside.join("kept.txt"), "a person's file\n").expect("write");
    std::os::unix::fs::symlink(outside.join("kept.txt"), tests.join("link.txt")).expect("link");
    std::os::unix::fs::symlink(&outside, tests.join("away")).expect("link");
    for (golden, why) in [
        ("link.txt", "is a symlink"),
        ("away/new.txt", "outside the step file's folder"),
    ] {
        let file = with_golden("through.toml", golden);
        let (status, out, err) = test_cli(&tests, &[&file, "--update"]);
        assert_eq!(status, 1, "{golden}: {out}{err}");
        assert!(out.contains(why), "{golden}: {out}");
        // Without --update the differing screen is not put outside either.
        let (status, out, _) = test_cli(&tests, &[&file]);
        assert_eq!(status, 1, "{golden}: {out}");
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("kept.txt")).unwrap(),
        "a person's file\n"
    );
    let names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("kept.txt")]);
    // Said so, a golden may live elsewhere.
    let file = with_golden("anywhere.toml", "../outside/shared.txt");
    let (status, out, err) = test_cli(&tests, &[&file, "--update", "--goldens-anywhere"]);
    assert_eq!(status, 0, "{out}{err}");
    assert!(outside.join("shared.txt").exists());
}

#[test]
fn save_test_round_trips_every_input_form_and_a_failed_write_loses_no_step() {
    let d = common::Daemon::new();
    let sp = |args: &[&str]| d.sp_ok(args);
    d.spawn_bash("a");
    d.spawn_bash("b");
    // The CLI's forms, with and without until, on two sessions.
    sp(&["line", "a", "echo one-$((1+1))", "--until", "^one-2$"]);
    sp(&["line", "b", "echo two-$((1+2))"]);
    sp(&["wait", "b", "--until", "^two-3$"]);
    sp(&["keys", "a", "echo three", "Enter", "--until", "^three$"]);
    sp(&["type", "b", "echo four"]);
    sp(&["keys", "b", "Enter"]);
    sp(&["wait", "b", "--until", "^four$"]);
    // The MCP tool's form (the same operation the daemon runs for it), with until and without.
    let mut conn =
        std::os::unix::net::UnixStream::connect(d.path().join("daemon.sock")).expect("connect");
    for (id, params) in [
        (
            1,
            serde_json::json!({"sid": "a", "text": "echo five\r", "until": {"regex": "^five$"}}),
        ),
        (
            2,
            serde_json::json!({"sid": "b", "keys": ["e", "c", "h", "o", " ", "s", "i", "x", "Enter"], "until": {"regex": "^six$"}}),
        ),
        (3, serde_json::json!({"sid": "a", "text": "echo seven\r"})),
    ] {
        use std::io::{BufRead, Write};
        let request = serde_json::json!({"id": id, "op": "send", "params": params});
        conn.write_all(format!("{request}\n").as_bytes())
            .expect("send");
        let mut reader = std::io::BufReader::new(&conn);
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("an answer");
            let answer: serde_json::Value = serde_json::from_str(&line).expect("JSON");
            if answer.get("progress").is_none() {
                assert_eq!(answer["ok"], true, "{answer}");
                break;
            }
        }
    }
    d.wait_regex("a", "^seven$");
    // A write that fails (a name too long) keeps every step for the next save.
    std::fs::create_dir(d.path().join("t")).expect("mkdir");
    let long = format!("t/{}.toml", "x".repeat(300));
    let err = d.sp_error(&["save-test", &long]);
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.contains("the steps are kept")),
        "{err}"
    );
    let first = sp(&["save-test", "t/first.toml"]);
    assert!(first.contains("on a, b"), "{first}");
    let text = std::fs::read_to_string(d.path().join("t/first.toml")).expect("the file");
    assert!(
        !text.contains("= \"\""),
        "a field not given was saved empty:\n{text}"
    );
    // A second file after the first, on the same session: it starts the session again.
    d.line("a", "echo eight");
    d.wait_regex("a", "^eight$");
    sp(&["save-test", "t/second.toml"]);
    let second = std::fs::read_to_string(d.path().join("t/second.toml")).expect("the file");
    assert!(second.contains("spawn = "), "{second}");
    for file in ["t/first.toml", "t/second.toml"] {
        let (status, out, err) = test_cli(d.path(), &[file]);
        let text = std::fs::read_to_string(d.path().join(file)).unwrap();
        assert_eq!(status, 0, "{file} does not pass again:\n{text}\n{out}{err}");
    }
}

#[test]
fn out_of_range_step_values_are_refused_at_the_file_check_before_anything_runs() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let marker = dir.path().join("ran");
    for (bad, field) in [
        ("[[step]]\nresize = \"5000x10\"\n", "resize"),
        ("[[step]]\nspawn = \"true\"\nsize = \"0x10\"\n", "size"),
        (
            "[[step]]\nrun = \"true\"\ntimeout_ms = 99999999999\n",
            "timeout_ms",
        ),
        ("[[step]]\nrun = \"true\"\n", "timeout_ms"),
    ] {
        let head = if bad.ends_with("run = \"true\"\n") && !bad.contains("timeout") {
            "timeout_ms = 0\n"
        } else {
            ""
        };
        let file = dir.path().join("late.toml");
        std::fs::write(
            &file,
            format!(
                "{head}[[step]]\nspawn = \"sh -c 'touch {}; exec cat'\"\n\n{bad}",
                marker.display()
            ),
        )
        .expect("write");
        let (status, out, err) = test_cli(dir.path(), &[file.to_str().unwrap()]);
        assert_eq!(status, 2, "{bad}: {out}{err}");
        assert!(err.contains(&format!("{field}: ")), "{bad}: {err}");
        assert!(
            !marker.exists(),
            "{bad}: a step ran before the file was refused"
        );
    }
}

/// Two runs of the same Textual step file at once, sharing one screenpilot directory: each app
/// reaches its own probe (the side channel's socket was once named by the session alone, and the
/// second launch removed the first's).
#[test]
fn two_runs_of_one_textual_file_at_once_keep_their_own_channels() {
    let dir = std::env::temp_dir().join(format!("sp-steps-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let file = variant(&dir, "textual_input.toml", &[]);
    let shared = dir.join("sp");
    let runs: Vec<_> = (0..2)
        .map(|_| {
            Command::new(common::binary())
                .arg("test")
                .arg(&file)
                .env("SCREENPILOT_DIR", &shared)
                .current_dir(&dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("run screenpilot test")
        })
        .collect();
    for run in runs {
        let out = run.wait_with_output().expect("wait");
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
