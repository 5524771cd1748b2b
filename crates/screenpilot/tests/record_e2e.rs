//! Recording end to end: sessions running real programs (bash, less, vim) recorded as asciicast v3,
//! then played by asciinema 3 (the Rust CLI from crates.io, installed by scripts/test.sh into
//! .venv/asciinema) and by `screenpilot replay`, each inside a screenpilot session so the test reads
//! the screen a person would see, and by asciinema's web player (npm's asciinema-player, in
//! .venv/asciinema-player) in headless chromium. Replaying must end on the recorded session's last
//! screen.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use common::{binary, Daemon, PROMPT};
use serde_json::Value;

const LONG: &str = "20000";

/// asciinema 3, where scripts/test.sh installs it. Missing is a failure, not a skip: the README's
/// test command installs it.
fn asciinema() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv/asciinema/bin/asciinema");
    assert!(
        path.exists(),
        "asciinema 3 is not installed at {}: run scripts/test.sh (it runs `cargo install --locked asciinema --version '^3' --root .venv/asciinema`)",
        path.display()
    );
    path
}

/// asciinema-player's browser bundle, where scripts/test.sh installs it (missing is a failure).
fn web_player_bundle() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../.venv/asciinema-player/node_modules/asciinema-player/dist/bundle");
    assert!(
        path.join("asciinema-player.js").exists(),
        "asciinema-player is not installed in {}: run scripts/test.sh",
        path.display()
    );
    path
}

/// Play CAST to its end in asciinema-player, in headless chromium driven over DevTools by
/// `tests/play_cast_browser.py` (a page with the player, its CSS and the recording inline); the
/// player's terminal text at the end, one line per row, trailing spaces and blank rows at the bottom
/// dropped.
fn played_by_web_player(dir: &Path, cast: &Path) -> String {
    let bundle = web_player_bundle();
    let read = |name: &str| std::fs::read_to_string(bundle.join(name)).unwrap();
    let recording = std::fs::read_to_string(cast).unwrap();
    // `__played` settles two animation frames after 'ended': the player draws its terminal on an
    // animation frame, and a frame's callbacks run in the order they were asked for.
    let page = format!(
        "<!doctype html><html><head><meta charset=utf-8><style>{css}</style></head><body>\
         <div id=player></div><script>{js}</script><script>\
         const player = AsciinemaPlayer.create({{data: {data}}}, document.getElementById('player'),\
           {{autoPlay: true, speed: 100, idleTimeLimit: 0.1}});\
         window.__played = new Promise(resolve => player.addEventListener('ended', () =>\
           requestAnimationFrame(() => requestAnimationFrame(() => resolve(true)))));\
         </script></body></html>",
        css = read("asciinema-player.css"),
        js = read("asciinema-player.js").replace("</script", "<\\/script"),
        data = serde_json::to_string(&recording).unwrap(),
    );
    let html = dir.join("player.html");
    std::fs::write(&html, page).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/play_cast_browser.py");
    let out = std::process::Command::new(common::venv_python())
        .arg(&script)
        .arg(&html)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "asciinema-player did not play {} to its end: {}",
        cast.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    terminal_text(&String::from_utf8_lossy(&out.stdout))
}

/// The text of asciinema-player's terminal in a dumped DOM: rows are `span.ap-line` with `--row: N`,
/// holding spans placed at `--offset: COL`.
fn terminal_text(dom: &str) -> String {
    let start = dom
        .find("<pre class=\"ap-term-text")
        .expect("the player's terminal text is in the page");
    let end = start + dom[start..].find("</pre>").expect("its end");
    let line = regex::Regex::new(r#"<span class="ap-line" style="--row: (\d+);">"#).unwrap();
    let cell = regex::Regex::new(r#"<span[^>]*--offset: (\d+);[^>]*>([^<]*)</span>"#).unwrap();
    let pre = &dom[start..end];
    let starts: Vec<(usize, usize)> = line
        .captures_iter(pre)
        .map(|c| (c.get(0).unwrap().start(), c[1].parse().unwrap()))
        .collect();
    let mut rows: Vec<Vec<char>> = Vec::new();
    for (i, &(at, row)) in starts.iter().enumerate() {
        let until = starts.get(i + 1).map_or(pre.len(), |next| next.0);
        if rows.len() <= row {
            rows.resize(row + 1, Vec::new());
        }
        for c in cell.captures_iter(&pre[at..until]) {
            let offset: usize = c[1].parse().unwrap();
            let text = c[2]
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\"")
                .replace("&#39;", "'")
                .replace("&nbsp;", " ")
                .replace("&amp;", "&");
            for (k, ch) in text.chars().enumerate() {
                let cells = &mut rows[row];
                if cells.len() <= offset + k {
                    cells.resize(offset + k + 1, ' ');
                }
                cells[offset + k] = ch;
            }
        }
    }
    let text: Vec<String> = rows
        .iter()
        .map(|r| r.iter().collect::<String>().trim_end().to_owned())
        .collect();
    visible(&text.join("\n"))
}

/// A screen's text without trailing blank rows.
fn visible(text: &str) -> String {
    text.trim_end_matches('\n').to_owned()
}

/// What `list` says `sid` is recording to (null when not recording).
fn recording_of(d: &Daemon, sid: &str) -> Value {
    let list = d.sp_json(&["list"]);
    let session = list["sessions"]
        .as_array()
        .and_then(|all| all.iter().find(|s| s["sid"] == sid))
        .unwrap_or_else(|| panic!("{sid} is not listed: {list}"));
    session["recording"].clone()
}

/// The events of an asciicast v3 file after its header: (interval, code, data).
fn events(cast: &Path) -> (Value, Vec<(f64, String, String)>) {
    let text = std::fs::read_to_string(cast).expect("the recording exists");
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next().expect("a header line")).unwrap();
    let events = lines
        .map(|line| {
            let event: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("event line is not JSON ({e}): {line}"));
            (
                event[0].as_f64().expect("an interval"),
                event[1].as_str().expect("a code").to_owned(),
                event[2].as_str().expect("data").to_owned(),
            )
        })
        .collect();
    (header, events)
}

/// Run `argv` as session `sid` in a terminal of `size` until it ends; its exit code and final screen.
fn run_in_terminal(d: &Daemon, sid: &str, size: &str, argv: &[&str]) -> (i64, String) {
    let mut spawn = vec!["spawn", "--sid", sid, "--size", size, "--"];
    spawn.extend_from_slice(argv);
    d.sp_json(&spawn);
    let exit = d.sp_json(&["wait", sid, "--exit", "--timeout-ms", LONG]);
    assert_eq!(exit["exited"], true, "{sid} did not end: {exit}");
    let alive = d.json_status(&["alive", sid]).1;
    (alive["exit_code"].as_i64().unwrap_or(-1), d.screen(sid))
}

/// `screenpilot replay --speed 1000 CAST` in a terminal of `size`: its exit code and final screen.
fn replayed(d: &Daemon, sid: &str, size: &str, cast: &Path) -> (i64, String) {
    let cast = cast.to_str().unwrap();
    run_in_terminal(d, sid, size, &[binary(), "replay", "--speed", "1000", cast])
}

/// `ASCIINEMA_CONFIG_HOME` for the test's asciinema runs: a directory of the test's own, so a
/// config file of the person running the tests (one from asciinema 2 makes every command warn) does
/// not change what asciinema prints.
fn asciinema_config_home(d: &Daemon) -> String {
    d.path().join("asciinema-config").display().to_string()
}

/// `asciinema play --quiet` of CAST (no `:::` lines of its own around the recording), fast, in a
/// terminal of `size`: its exit code and final screen.
fn played_by_asciinema(d: &Daemon, sid: &str, size: &str, cast: &Path) -> (i64, String) {
    let asciinema = asciinema();
    let config_home = format!("ASCIINEMA_CONFIG_HOME={}", asciinema_config_home(d));
    run_in_terminal(
        d,
        sid,
        size,
        &[
            "env",
            &config_home,
            asciinema.to_str().unwrap(),
            "play",
            "--quiet",
            "--speed",
            "100",
            "--idle-time-limit",
            "0.1",
            cast.to_str().unwrap(),
        ],
    )
}

#[test]
fn a_recording_of_real_programs_plays_in_asciinema_and_replays_to_the_last_screen() {
    let asciinema = asciinema();
    let d = Daemon::new();
    let cast = d.path().join("session.cast");
    d.spawn_bash_with(
        "rec",
        &["--record", cast.to_str().unwrap(), "--size", "80x24"],
    );
    d.line(
        "rec",
        r"printf '\e[1;31mred\e[0m \e[42mgreen\e[0m \e[38;5;208morange\e[0m\n'",
    );
    d.wait_regex("rec", "^red green orange$");
    d.line("rec", "seq 1 100 > nums.txt && less nums.txt");
    d.wait_regex("rec", "^23$");
    // less takes a resize only once it reads keys: one that lands while it is still drawing its
    // first page can be lost between its check of pending signals and its read (CI once).
    d.sp_json(&[
        "wait",
        "rec",
        "--until-input",
        "--until-timeout-ms",
        LONG,
        "--no-screen",
    ]);
    d.sp_json(&["resize", "rec", "100x30"]);
    d.wait_regex("rec", "^29$");
    d.sp_json(&["keys", "rec", "q"]);
    d.wait_regex("rec", PROMPT);
    d.line("rec", r"printf '\e[1;34mall done\e[0m\n'; exit 3");
    d.sp_json(&["wait", "rec", "--exit", "--timeout-ms", LONG]);
    let last = d.screen("rec");
    assert!(
        last.contains("red green orange") && last.contains("all done"),
        "{last}"
    );

    // The file: a v3 header with the starting size and the theme, the resize, the exit status last.
    let (header, events) = events(&cast);
    assert_eq!(header["version"], 3, "{header}");
    assert_eq!(
        (&header["term"]["cols"], &header["term"]["rows"]),
        (&Value::from(80), &Value::from(24))
    );
    assert_eq!(header["term"]["type"], "xterm-256color");
    assert!(header["term"]["theme"]["palette"].is_string(), "{header}");
    assert!(events.iter().all(|(interval, _, _)| *interval >= 0.0));
    assert!(events
        .iter()
        .any(|(_, code, data)| code == "r" && data == "100x30"));
    assert!(
        !events.iter().any(|(_, code, _)| code == "i"),
        "input is recorded only when asked"
    );
    let (_, code, data) = events.last().unwrap();
    assert_eq!((code.as_str(), data.as_str()), ("x", "3"));

    // asciinema 3 plays it to the end, on the session's last screen (it plays in a terminal of the
    // final size, as screenpilot replay does below), and converts it to v2 and to text without a
    // word on stderr.
    let (status, screen) = played_by_asciinema(&d, "asciinema", "100x30", &cast);
    assert_eq!(status, 0, "asciinema play failed:\n{screen}");
    assert_eq!(screen, last);
    let v2 = d.path().join("session-v2.cast");
    let txt = d.path().join("session.txt");
    for (format, out) in [("asciicast-v2", &v2), ("txt", &txt)] {
        let converted = std::process::Command::new(&asciinema)
            .args(["convert", "-f", format])
            .arg(&cast)
            .arg(out)
            .env("ASCIINEMA_CONFIG_HOME", asciinema_config_home(&d))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&converted.stderr);
        assert!(
            converted.status.success(),
            "asciinema convert -f {format}: {stderr}"
        );
        assert_eq!(stderr, "", "asciinema convert -f {format} complained");
    }
    assert!(std::fs::read_to_string(&txt).unwrap().contains("all done"));

    // screenpilot replay cannot resize the terminal it plays in, so it plays in one of the final
    // size: the session only grew and no line wrapped, so it ends on the same screen. The v2 file
    // asciinema wrote replays to it too.
    let (status, screen) = replayed(&d, "replay", "100x30", &cast);
    assert_eq!(status, 0, "{screen}");
    assert_eq!(screen, last);
    let (status, screen) = replayed(&d, "replay-v2", "100x30", &v2);
    assert_eq!(status, 0, "{screen}");
    assert_eq!(screen, last);

    // asciinema's web player plays it too (resizing its terminal as recorded), to the same screen.
    assert_eq!(played_by_web_player(d.path(), &cast), visible(&last));
}

#[test]
fn a_recording_started_mid_session_begins_with_the_screen_and_stops_leaving_the_program_running() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "vim",
        "--",
        "vim",
        "-u",
        "NONE",
        "-N",
        "-c",
        "syntax on",
        "-c",
        "set number",
        "notes.py",
    ]);
    d.wait_regex("vim", "notes.py");
    d.sp_json(&["keys", "vim", "i"]);
    d.sp_json(&[
        "type",
        "vim",
        "def greet(name):\n    return 'hello ' + name",
    ]);
    d.sp_json(&["keys", "vim", "Escape"]);
    d.wait_regex("vim", r"^ +2 +return 'hello ' \+ name$");

    let cast = d.path().join("late.cast");
    let started = d.sp_json(&["record", "vim", "start", "late.cast", "--input"]);
    assert_eq!(started["recording"], true, "{started}");
    assert_eq!(
        started["path"],
        cast.to_str().unwrap(),
        "relative to the caller"
    );
    assert_eq!(recording_of(&d, "vim"), Value::from(cast.to_str().unwrap()));
    d.sp_json(&["keys", "vim", "o"]);
    d.sp_json(&["type", "vim", "# recorded"]);
    d.sp_json(&["keys", "vim", "Escape"]);
    d.wait_regex("vim", r"^ +3 # recorded$");
    d.sp_json(&[
        "wait",
        "vim",
        "--ready",
        "--stable-ms",
        "300",
        "--timeout-ms",
        LONG,
    ]);
    let stopped = d.sp_json(&["record", "vim", "stop"]);
    assert_eq!(stopped["recording"], false, "{stopped}");
    assert_eq!(
        recording_of(&d, "vim"),
        Value::Null,
        "list shows no recording"
    );
    let at_stop = d.screen("vim");

    // Stopping leaves the program running and writes nothing more.
    let size = std::fs::metadata(&cast).unwrap().len();
    d.sp_json(&["keys", "vim", "o"]);
    d.sp_json(&["type", "vim", "not recorded"]);
    d.wait_regex("vim", "not recorded");
    assert_eq!(d.sp_json(&["alive", "vim"])["alive"], true);
    assert_eq!(std::fs::metadata(&cast).unwrap().len(), size);

    let (header, events) = events(&cast);
    assert_eq!(
        (&header["term"]["cols"], &header["term"]["rows"]),
        (&Value::from(80), &Value::from(24))
    );
    let typed: String = events
        .iter()
        .filter(|(_, code, _)| code == "i")
        .map(|(_, _, data)| data.as_str())
        .collect();
    assert!(
        typed.contains("# recorded"),
        "input was asked for: {typed:?}"
    );
    assert!(
        !typed.contains("hello"),
        "typed before the start: {typed:?}"
    );
    assert!(!events.iter().any(|(_, code, _)| code == "x"));

    // It opens with the screen as it was: replayed alone it ends where the session was at stop.
    let (status, screen) = replayed(&d, "replay", "80x24", &cast);
    assert_eq!(status, 0, "{screen}");
    assert_eq!(screen, at_stop);
    let (status, screen) = played_by_asciinema(&d, "asciinema", "80x24", &cast);
    assert_eq!(status, 0, "asciinema play failed:\n{screen}");
    assert_eq!(screen, at_stop);
    assert_eq!(played_by_web_player(d.path(), &cast), visible(&at_stop));
}

#[test]
fn recording_refuses_an_existing_file_without_force_and_creates_it_with_the_callers_umask() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "cat", "--", "cat"]);
    let cast = d.path().join("taken.cast");
    std::fs::write(&cast, "precious").unwrap();

    let error = d.sp_error(&["record", "cat", "start", "taken.cast"]);
    assert_eq!(error["field"], "path", "{error}");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("already exists"),
        "{error}"
    );
    assert_eq!(std::fs::read_to_string(&cast).unwrap(), "precious");

    // --force replaces it (keeping its permissions, as a shell's > does).
    d.sp_json(&["record", "cat", "start", "taken.cast", "--force"]);
    let error = d.sp_error(&["record", "cat", "start", "other.cast"]);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("already recording"),
        "{error}"
    );
    d.sp_json(&["record", "cat", "stop"]);
    let (header, _) = events(&cast);
    assert_eq!(header["version"], 3);

    // A new file gets the caller's umask, not the daemon's.
    let mut start = d.command(&["--json", "record", "cat", "start", "private.cast"]);
    // SAFETY: umask is async-signal-safe.
    unsafe {
        start.pre_exec(|| {
            libc::umask(0o077);
            Ok(())
        });
    }
    let out = start.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let mode = std::fs::metadata(d.path().join("private.cast"))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "the recording is {mode:o} under umask 077");

    // Ending the program ends the recording with its exit status.
    d.sp_json(&["keys", "cat", "C-d"]);
    d.sp_json(&["wait", "cat", "--exit", "--timeout-ms", LONG]);
    let (_, events) = events(&d.path().join("private.cast"));
    let (_, code, data) = events.last().unwrap();
    assert_eq!((code.as_str(), data.as_str()), ("x", "0"));
}

#[test]
fn replay_names_the_line_of_a_file_that_is_not_asciicast_and_stops_on_ctrl_c() {
    let d = Daemon::new();
    let notes = d.path().join("notes.txt");
    std::fs::write(&notes, "just some notes\n").unwrap();
    let out = d.sp(&["replay", notes.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("notes.txt:1: not an asciicast v2 or v3 recording"),
        "{stderr}"
    );

    let broken = d.path().join("broken.cast");
    std::fs::write(
        &broken,
        "{\"version\": 3, \"term\": {\"cols\": 80, \"rows\": 24}}\n[0.0, \"o\", \"ok\"]\n[0.0, \"o\"]\n",
    )
    .unwrap();
    let out = d.sp(&["replay", broken.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken.cast:3: "), "{stderr}");

    // A recording with an hour's pause: Ctrl-C stops the player during it.
    let long = d.path().join("long.cast");
    std::fs::write(
        &long,
        "{\"version\": 3, \"term\": {\"cols\": 80, \"rows\": 24}}\n[0.0, \"o\", \"first frame\\r\\n\"]\n[3600.0, \"o\", \"an hour later\"]\n",
    )
    .unwrap();
    d.sp_json(&[
        "spawn",
        "--sid",
        "player",
        "--",
        binary(),
        "replay",
        long.to_str().unwrap(),
    ]);
    d.wait_regex("player", "^first frame$");
    d.sp_json(&["keys", "player", "C-c"]);
    let exit = d.sp_json(&["wait", "player", "--exit", "--timeout-ms", LONG]);
    assert_eq!(exit["exited"], true, "{exit}");
    let alive = d.json_status(&["alive", "player"]).1;
    assert_eq!(alive["exit_code"], 130, "{alive}");
    assert!(!d.screen("player").contains("an hour later"));
}
