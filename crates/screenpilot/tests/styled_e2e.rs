//! Styled text, highlights and compact cells on real programs, through the real CLI: dialog,
//! whiptail, mc, htop, less (search hits), vim (a visual selection) and a Textual app. For each
//! screen a model must be able to tell what is selected from the text alone, cheaply: the styled text
//! at most 1.3x the plain text's bytes, naming the selection as a marked span; `highlights` holding
//! the selection; the cells under 10 KB.
//!
//! `cargo test -p screenpilot --test e2e styled:: -- --nocapture` prints each screen's figures (the
//! table in BENCHMARKS.md).

use crate::common;

use std::path::Path;

use common::{Daemon, LONG_MS};
use serde_json::Value;

/// A screen read with `snapshot --json --styled --cells`, and its figures.
struct Read {
    text: String,
    styled: String,
    highlights: Vec<Value>,
    highlights_bytes: usize,
    cells_bytes: usize,
}

impl Read {
    fn of(d: &Daemon, sid: &str) -> Read {
        let snap = d.sp_json(&["snapshot", sid, "--styled", "--cells"]);
        let text = snap["text"].as_str().expect("text").to_owned();
        let styled = snap["styled"].as_str().expect("styled").to_owned();
        let highlights = snap["highlights"]
            .as_array()
            .expect("highlights in every terminal snapshot")
            .clone();
        Read {
            text,
            styled,
            highlights_bytes: snap["highlights"].to_string().len(),
            cells_bytes: snap["cells"].to_string().len(),
            highlights,
        }
    }

    /// The texts of the highlights, in reading order.
    fn highlight_texts(&self) -> Vec<&str> {
        self.highlights
            .iter()
            .map(|h| h["text"].as_str().expect("a highlight has text"))
            .collect()
    }

    /// The issue's bounds: styled text within 1.3x the plain text, cells under 10 KB. Prints the
    /// figures.
    fn check_sizes(&self, name: &str) {
        let (plain, styled) = (self.text.len(), self.styled.len());
        println!(
            "figures: | {name} | {plain} | {styled} ({:.2}x) | {} | {} |",
            styled as f64 / plain as f64,
            self.highlights_bytes,
            self.cells_bytes
        );
        assert!(
            styled * 10 <= plain * 13,
            "{name}: styled text is {styled} bytes for {plain} plain:\n{}",
            self.styled
        );
        assert!(
            self.cells_bytes < 10_000,
            "{name}: cells are {} bytes",
            self.cells_bytes
        );
        assert_eq!(
            strip_markup(&self.styled),
            self.text,
            "{name}: the styled text without its markup is the plain text"
        );
    }

    /// The styled text marks a run holding `needle`.
    fn assert_marked(&self, needle: &str) {
        assert!(
            marked_runs(&self.styled)
                .iter()
                .any(|(_, text)| text.contains(needle)),
            "no marked run holds {needle:?}:\n{}",
            self.styled
        );
    }
}

/// The runs of styled text inside tags, as (words, text).
fn marked_runs(styled: &str) -> Vec<(String, String)> {
    let mut runs = Vec::new();
    let mut open: Option<(String, String)> = None;
    let mut chars = styled.chars().peekable();
    while let Some(ch) = chars.next() {
        if ch != '[' {
            if let Some((_, text)) = open.as_mut() {
                text.push(ch);
            }
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            if let Some((_, text)) = open.as_mut() {
                text.push('[');
            }
            continue;
        }
        let tag: String = chars.by_ref().take_while(|c| *c != ']').collect();
        match tag.as_str() {
            "/" => runs.extend(open.take()),
            "cursor/" => {}
            words => open = Some((words.to_owned(), String::new())),
        }
    }
    runs
}

/// Styled text without its markup.
fn strip_markup(styled: &str) -> String {
    let mut out = String::new();
    let mut chars = styled.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '[' if chars.peek() == Some(&'[') => {
                chars.next();
                out.push('[');
            }
            '[' => chars.by_ref().take_while(|c| *c != ']').for_each(drop),
            ch => out.push(ch),
        }
    }
    out
}

fn spawn(d: &Daemon, sid: &str, env: &[&str], program: &[&str]) {
    let mut args = vec!["spawn", "--sid", sid];
    for pair in env {
        args.extend(["--env", pair]);
    }
    args.push("--");
    args.extend_from_slice(program);
    d.sp_json(&args);
}

/// Press keys and wait for the screen to react and go quiet for `quiet_ms`; the answer carries the
/// styled screen.
fn press(d: &Daemon, sid: &str, keys: &[&str], quiet_ms: u64) -> Value {
    let quiet = quiet_ms.to_string();
    let mut args = vec!["keys", sid];
    args.extend_from_slice(keys);
    args.extend(["--settle-ms", &quiet, "--styled"]);
    let done = d.sp_json(&args);
    assert!(
        done["styled"].is_string(),
        "keys --settle-ms --styled answers with the styled screen: {done}"
    );
    done
}

#[test]
fn dialog_menu_names_banana_as_its_selection() {
    let d = Daemon::new();
    let menu = [
        "dialog", "--menu", "Pick one", "15", "50", "5", "a", "Apple", "b", "Banana", "c", "Cherry",
    ];
    spawn(&d, "dlg", &[], &menu);
    d.wait_regex("dlg", "Cherry");
    press(&d, "dlg", &["Down"], 100);
    let read = Read::of(&d, "dlg");
    read.check_sizes("dialog --menu, after Down");
    read.assert_marked("Banana");
    assert!(
        read.styled.contains("[bold white on blue]Banana[/]"),
        "{}",
        read.styled
    );
    // dialog draws its default button highlighted while the list has the focus, so a person sees
    // two highlights: the selected item (with its tag letter) and <OK>.
    assert_eq!(read.highlight_texts(), vec!["b  Banana", "<  OK  >"]);
    assert_eq!(read.highlights[0]["why"], "background");
    assert_eq!(read.highlights[0]["style"], "bold white on blue");

    // Waits carry the same styled screen when asked.
    let hash = d.snapshot("dlg")["hash"].as_str().expect("hash").to_owned();
    let waited = d.sp_json(&["wait", "dlg", "--ready", "--stable-ms", "50", "--styled"]);
    assert_eq!(waited["styled"], Value::String(read.styled.clone()));
    assert_eq!(waited["hash"], Value::String(hash));
    assert!(waited["highlights"].is_array());
    let plain = d.sp_json(&["wait", "dlg", "--ready", "--stable-ms", "50"]);
    assert!(plain.get("styled").is_none() && plain.get("highlights").is_none());
    // Input answers with a screen only when it settles, so styled alone is refused.
    let error = d.sp_error(&[
        "call",
        "send_keys",
        r#"{"sid": "dlg", "keys": ["Up"], "styled": true}"#,
    ]);
    assert_eq!(error["field"], "styled", "{error}");
}

#[test]
fn whiptail_menu_names_banana_as_its_only_highlight() {
    let d = Daemon::new();
    let menu = [
        "whiptail", "--menu", "Pick one", "15", "50", "5", "a", "Apple", "b", "Banana", "c",
        "Cherry",
    ];
    spawn(&d, "wt", &[], &menu);
    d.wait_regex("wt", "Cherry");
    press(&d, "wt", &["Down"], 100);
    let read = Read::of(&d, "wt");
    read.check_sizes("whiptail --menu, after Down");
    read.assert_marked("Banana");
    assert_eq!(read.highlight_texts(), vec!["b Banana"]);
}

/// A directory with three subdirectories and three files, for file managers.
fn some_files(root: &Path) -> String {
    let dir = root.join("files");
    for sub in ["alpha", "beta", "gamma"] {
        std::fs::create_dir_all(dir.join(sub)).expect("make a directory");
    }
    for file in ["one.txt", "two.txt", "three.txt"] {
        std::fs::write(dir.join(file), "x\n").expect("write a file");
    }
    dir.to_string_lossy().into_owned()
}

#[test]
fn mc_names_the_selected_file() {
    let d = Daemon::new();
    let dir = some_files(d.path());
    let home = format!("HOME={}", d.path().display());
    spawn(&d, "mc", &[&home], &["mc", "--nosubshell", &dir, &dir]);
    d.wait_regex("mc", "three\\.txt");
    press(&d, "mc", &["Down"], 200);
    let read = Read::of(&d, "mc");
    read.check_sizes("mc, after Down");
    read.assert_marked("/alpha");
    // Besides the selected entry, mc highlights the focused panel's title.
    let texts = read.highlight_texts();
    let entries: Vec<&&str> = texts
        .iter()
        .filter(|t| {
            ["alpha", "beta", "gamma", ".txt", "/.."]
                .iter()
                .any(|e| t.contains(e))
        })
        .collect();
    assert_eq!(entries.len(), 1, "one selected entry: {texts:?}");
    assert!(entries[0].starts_with("/alpha"), "{texts:?}");
}

#[test]
fn htop_names_the_selected_process_row() {
    let d = Daemon::new();
    let home = format!("HOME={}", d.path().display());
    // Sorted by PID, the list keeps its order while the test runs.
    spawn(&d, "htop", &[&home], &["htop", "--sort-key", "PID"]);
    d.wait_regex("htop", "PID.USER");
    press(&d, "htop", &["Down"], 300);
    let read = Read::of(&d, "htop");
    read.check_sizes("htop, after Down");
    let processes: Vec<&Value> = read
        .highlights
        .iter()
        .filter(|h| {
            h["text"]
                .as_str()
                .and_then(|t| t.split_whitespace().next())
                .is_some_and(|pid| pid.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(
        processes.len(),
        1,
        "one selected process: {:?}",
        read.highlights
    );
    let row = processes[0]["row"].as_u64().expect("row") as usize;
    let pid = processes[0]["text"].as_str().expect("text");
    read.assert_marked(pid.split_whitespace().next().expect("a pid"));
    let header = read.text.lines().position(|l| l.contains("USER"));
    assert_eq!(
        header.map(|h| h + 2),
        Some(row),
        "Down moved the selection to the second process:\n{}",
        read.text
    );
}

#[test]
fn less_names_every_search_hit() {
    let d = Daemon::new();
    let words = [
        "apple", "banana", "cherry", "date", "elder", "fig", "grape", "kiwi", "lemon", "mango",
    ];
    let text: String = (0..60)
        .map(|i| {
            let line: Vec<&str> = (0..9)
                .map(|j| words[(i * 7 + j * 3) % words.len()])
                .collect();
            format!("{:>3}  {}\n", i + 1, line.join(" "))
        })
        .collect();
    let file = d.path().join("fruit.txt");
    std::fs::write(&file, text).expect("write the file");
    let home = format!("HOME={}", d.path().display());
    spawn(
        &d,
        "less",
        &[&home, "LESSHISTFILE=-"],
        &["less", &file.to_string_lossy()],
    );
    d.wait_regex("less", "^  1  ");
    press(&d, "less", &["/kiwi", "Enter"], 200);
    let read = Read::of(&d, "less");
    read.check_sizes("less, after /kiwi");
    let body: Vec<&str> = read.text.lines().collect();
    let shown = body[..body.len() - 1]
        .iter()
        .map(|l| l.matches("kiwi").count())
        .sum::<usize>();
    assert!(shown > 3, "the page shows several hits:\n{}", read.text);
    assert_eq!(read.highlight_texts(), vec!["kiwi"; shown]);
    assert!(read.highlights.iter().all(|h| h["why"] == "reverse"));
    read.assert_marked("kiwi");
}

#[test]
fn vim_names_its_visual_selection() {
    let d = Daemon::new();
    let file = d.path().join("words.txt");
    std::fs::write(
        &file,
        "alpha beta gamma\ndelta epsilon zeta\neta theta iota\n",
    )
    .expect("write the file");
    let home = format!("HOME={}", d.path().display());
    spawn(
        &d,
        "vim",
        &[&home],
        &["vim", "-u", "NONE", "-i", "NONE", &file.to_string_lossy()],
    );
    d.wait_regex("vim", "words\\.txt");
    // Next line, next word, visual mode, to the end of the word: "epsilon", the cursor on its n.
    press(&d, "vim", &["j", "w", "v", "e"], 200);
    let read = Read::of(&d, "vim");
    read.check_sizes("vim, visual selection");
    assert_eq!(read.highlight_texts(), vec!["epsilo"]);
    read.assert_marked("epsilo");
    assert!(
        read.styled.contains("[/][cursor/]n zeta"),
        "{}",
        read.styled
    );
}

#[test]
fn a_textual_data_table_names_its_cursor_row() {
    let d = Daemon::new();
    let python = std::env::var("SCREENPILOT_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/../../.venv/bin/python", env!("CARGO_MANIFEST_DIR")));
    let app = d.path().join("table.py");
    std::fs::copy(common::fixture("textual/table.py"), &app).expect("copy the app");
    let timeout = LONG_MS.to_string();
    let run = d.sp(&[
        "textual",
        &app.to_string_lossy(),
        "--session",
        "tx",
        "--python",
        &python,
        "--timeout",
        &timeout,
        "--actions",
        r#"[{"press": "down"}]"#,
    ]);
    assert!(
        run.status.success(),
        "textual: {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let read = Read::of(&d, "tx");
    read.check_sizes("Textual DataTable, after down");
    assert_eq!(read.highlights.len(), 1, "{:?}", read.highlights);
    assert!(
        read.highlight_texts()[0].starts_with("Venus"),
        "{:?}",
        read.highlights
    );
    read.assert_marked("Venus");
}
