//! One call per step, only what changed, commands as units: the lean tools end to end on real programs
//! through the real binary (the CLI, which runs the same operations as the MCP tools).
//!
//! - every input form (keys, line, type, mouse, spawn) with each condition: held, timed out, and the
//!   program ending first;
//! - several steps in one call, stopping at the first that does not hold;
//! - screens as deltas that rebuild the exact screen, over random edits of a real program's screen,
//!   read back from the text a model reads;
//! - shell commands as units in bash: exit status, its own output, a command that never ends, output
//!   over the budget;
//! - bad input named by its field.

use crate::common;

use common::{fixture, Daemon, LONG_MS, PROMPT};
use serde_json::{json, Value};

const TIMEOUT: &str = "20000";

/// `screenpilot call OP JSON`: the exit status and the answer.
fn call(d: &Daemon, op: &str, params: Value) -> (i32, Value) {
    d.json_status(&["call", op, &params.to_string()])
}

fn call_ok(d: &Daemon, op: &str, params: Value) -> Value {
    let (status, answer) = call(d, op, params.clone());
    assert!(
        status == 0 && answer["ok"] == true,
        "{op} {params} failed: {answer}"
    );
    answer
}

fn call_error(d: &Daemon, op: &str, params: Value) -> Value {
    let (_, answer) = call(d, op, params.clone());
    assert_eq!(answer["ok"], false, "{op} {params} should fail: {answer}");
    answer["error"].clone()
}

/// A bash session with a `$ ` prompt, shown.
fn bash(d: &Daemon, sid: &str) {
    d.spawn_bash(sid);
}

#[test]
fn each_input_form_carries_each_condition_and_says_which_held() {
    let d = Daemon::new();
    bash(&d, "sh");
    // keys: the tokens, Enter included, then the condition.
    let (_, held) = call(
        &d,
        "send",
        json!({"sid": "sh", "keys": ["echo k-$((40+2))", "Enter"], "until": {"regex": "^k-42$"}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(held["until"]["held"], "regex", "{held}");
    assert_eq!(held["until"]["match"], "k-42");
    // The CLI forms: line (text then Enter), type (text), keys; each prints held=... and its screen.
    let out = d.sp(&[
        "line",
        "sh",
        "echo l-$((1+1))",
        "--until",
        "^l-2$",
        "--until-timeout-ms",
        TIMEOUT,
    ]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}");
    assert!(printed.starts_with("held=regex match=\"l-2\""), "{printed}");
    assert!(
        printed.contains("\nl-2\n") || printed.contains("l-2\n$"),
        "{printed}"
    );
    let out = d.sp(&[
        "type",
        "sh",
        "echo typed",
        "--until",
        "echo typed$",
        "--until-timeout-ms",
        TIMEOUT,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = d.sp(&[
        "keys",
        "sh",
        "Enter",
        "--until-any",
        "^never$",
        "--until-any",
        "^typed$",
        "--until-timeout-ms",
        TIMEOUT,
    ]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && printed.starts_with("held=any:1"),
        "{printed}"
    );

    // change and visual: the screen before the input is the baseline, so a fast change still counts.
    let (_, changed) = call(
        &d,
        "send",
        json!({"sid": "sh", "keys": ["x"], "until": {"change": true}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(changed["until"]["held"], "change", "{changed}");
    let (_, moved) = call(
        &d,
        "send",
        json!({"sid": "sh", "keys": ["Left"], "until": {"visual": true}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(moved["until"]["held"], "visual", "{moved}");
    // quiet: the program reacted, then stayed still.
    let (_, quiet) = call(
        &d,
        "send",
        json!({"sid": "sh", "keys": ["C-u", "echo q", "Enter"], "until": {"quiet_ms": 100}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(quiet["until"]["held"], "quiet", "{quiet}");

    // Timed out: an ordinary answer (the CLI's exit status 1), held is null and timed_out says why.
    let (_, late) = call(
        &d,
        "send",
        json!({"sid": "sh", "keys": ["echo t", "Enter"], "until": {"regex": "^never$"}, "timeout_ms": 300}),
    );
    assert_eq!(late["ok"], true, "{late}");
    assert_eq!(late["until"]["held"], Value::Null);
    assert_eq!(late["until"]["timed_out"], true);
    let out = d.sp(&[
        "line",
        "sh",
        "true",
        "--until",
        "^never$",
        "--until-timeout-ms",
        "300",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("timeout("));

    // The program ends first: the wait ends at once, held none, and the exit status is shown.
    let started = std::time::Instant::now();
    let (_, ended) = call(
        &d,
        "send",
        json!({"sid": "sh", "keys": ["exit 3", "Enter"], "until": {"regex": "^never$"}, "timeout_ms": 60000}),
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "it waited for the timeout"
    );
    assert_eq!(ended["until"]["held"], Value::Null, "{ended}");
    assert_eq!(ended["until"]["timed_out"], false);
    assert_eq!(ended["exit_code"], 3);
    // ... and with exit asked for, that is what held.
    let (_, exited) = call(
        &d,
        "spawn",
        json!({"argv": ["sh", "-c", "exit 4"], "until": {"exit": true}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(exited["until"]["held"], "exit", "{exited}");
    assert_eq!(exited["screen"]["exit_code"], 4);
}

#[test]
fn spawn_and_mouse_carry_conditions_too() {
    let d = Daemon::new();
    let reporter = [
        "python3".to_owned(),
        fixture("input_reporter.py"),
        "--mouse".to_owned(),
    ];
    let (_, spawned) = call(
        &d,
        "spawn",
        json!({"argv": reporter, "sid": "m", "until": {"regex": "^target: TARGET$"}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(spawned["until"]["held"], "regex", "{spawned}");
    assert!(spawned["screen"]["text"]
        .as_str()
        .unwrap_or("")
        .contains("target: TARGET"));
    let (_, clicked) = call(
        &d,
        "send",
        json!({"sid": "m", "mouse": {"action": "click", "text": "TARGET"}, "until": {"regex": "^MOUSE press"}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(clicked["until"]["held"], "regex", "{clicked}");
    assert!(clicked["cell"].is_array(), "{clicked}");
    let out = d.sp(&[
        "mouse",
        "m",
        "click",
        "--text",
        "TARGET",
        "--until",
        "MOUSE release",
        "--until-timeout-ms",
        TIMEOUT,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // A spawn whose condition never holds, and one whose program ends first.
    let (_, late) = call(
        &d,
        "spawn",
        json!({"cmd": "cat", "until": {"regex": "never"}, "timeout_ms": 200}),
    );
    assert_eq!(late["until"]["timed_out"], true, "{late}");
    let out = d.sp(&[
        "spawn",
        "--until",
        "never",
        "--until-timeout-ms",
        "200",
        "--",
        "cat",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a spawn whose until timed out exits 1"
    );
    let (_, gone) = call(
        &d,
        "spawn",
        json!({"argv": ["sh", "-c", "exit 5"], "until": {"regex": "never"}, "timeout_ms": 60000}),
    );
    assert_eq!(gone["until"]["held"], Value::Null, "{gone}");
    assert_eq!(gone["screen"]["exit_code"], 5, "{gone}");
}

#[test]
fn several_steps_run_in_order_and_stop_at_the_first_that_does_not_hold() {
    let d = Daemon::new();
    // Each step waits for the prompt the next input goes to: a REPL may drop keys typed ahead while
    // it switches terminal modes between two lines.
    let (_, done) = call(
        &d,
        "spawn",
        json!({"cmd": "python3 -q", "until": {"regex": ">>> $"}, "timeout_ms": LONG_MS, "screen": "none", "steps": [
            {"keys": ["6*7", "Enter"], "until": {"regex": "^42\n>>> $"}},
            {"keys": ["C-d"], "until": {"exit": true}}
        ]}),
    );
    let steps = done["steps"].as_array().expect("steps");
    assert_eq!(steps.len(), 3, "{done}");
    assert_eq!(steps[1]["match"], "42\n>>> ");
    assert_eq!(steps[2]["held"], "exit");
    assert!(done["screen"].get("text").is_none(), "screen none: {done}");

    bash(&d, "sh");
    let (_, stopped) = call(
        &d,
        "send",
        json!({"sid": "sh", "timeout_ms": 500, "steps": [
            {"keys": ["echo one", "Enter"], "until": {"regex": "^one$"}},
            {"keys": ["echo two", "Enter"], "until": {"regex": "^never$"}},
            {"keys": ["echo three", "Enter"], "until": {"regex": "^three$"}}
        ]}),
    );
    assert_eq!(stopped["given"], 3, "{stopped}");
    assert_eq!(
        stopped["steps"].as_array().map(Vec::len),
        Some(2),
        "{stopped}"
    );
    let text = d.screen("sh");
    assert!(
        text.contains("two") && !text.contains("three"),
        "step 3 was sent:\n{text}"
    );
    let out = d.sp(&[
        "keys",
        "sh",
        "Enter",
        "--steps",
        r#"[{"keys":["echo a-$((2+2))","Enter"],"until":{"regex":"^a-4$"}}]"#,
        "--until",
        r"\$ ",
        "--until-timeout-ms",
        TIMEOUT,
    ]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}");
    assert!(
        printed.starts_with("0: held=regex") && printed.contains("\n1: held=regex match=\"a-4\""),
        "{printed}"
    );
}

/// The screen as a model rebuilds it from what it read: a whole screen (header, then its rows; the
/// rest blank), or a delta (`ROW|text` rows after `scrolled=N`), or `unchanged`.
fn rebuild(model: &mut Vec<String>, rows: usize, printed: &str) {
    let mut lines = printed.split('\n');
    let header = lines.next().unwrap_or_default();
    let words: Vec<&str> = header.split(' ').collect();
    if words.contains(&"unchanged") {
        return;
    }
    if words.contains(&"delta") {
        let scrolled = words
            .iter()
            .find_map(|w| w.strip_prefix("scrolled="))
            .map_or(0, |n| n.parse::<usize>().expect("a number"));
        let mut next: Vec<String> = (0..rows)
            .map(|i| model.get(i + scrolled).cloned().unwrap_or_default())
            .collect();
        for line in lines {
            let (row, text) = line.split_once('|').expect("ROW|text");
            next[row.parse::<usize>().expect("a row number")] = text.to_owned();
        }
        *model = next;
    } else {
        let mut next: Vec<String> = lines.map(str::to_owned).collect();
        next.resize(rows, String::new());
        *model = next;
    }
}

#[test]
fn deltas_rebuild_the_exact_screen_over_random_edits_of_a_real_program() {
    let d = Daemon::new();
    let (cols, rows) = (60usize, 16usize);
    let mut smaller = 0;
    for seed in 1..=4u64 {
        let sid = format!("r{seed}");
        let size = format!("{cols}x{rows}");
        d.sp_json(&[
            "spawn",
            "--sid",
            &sid,
            "--size",
            &size,
            "--",
            "python3",
            &fixture("random_screen.py"),
            &seed.to_string(),
            &cols.to_string(),
            &rows.to_string(),
        ]);
        d.wait_regex(&sid, "step=0$");
        let mut model: Vec<String> = Vec::new();
        for step in 1..=40 {
            // The last row may carry a soft wrap from the row above: the marker ends the line.
            let marker = format!("step={step}$");
            let out = d.sp(&[
                "keys",
                &sid,
                "n",
                "--until",
                &marker,
                "--delta",
                "--until-timeout-ms",
                TIMEOUT,
            ]);
            let printed = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(out.status.success(), "step {step}: {printed}");
            if printed.lines().next().is_some_and(|h| h.contains(" delta")) {
                smaller += 1;
            }
            rebuild(&mut model, rows, printed.trim_end_matches('\n'));
            let truth: Vec<String> = d.screen(&sid).split('\n').map(str::to_owned).collect();
            assert_eq!(
                model, truth,
                "seed {seed} step {step}: the rebuilt screen differs; read:\n{printed}"
            );
        }
    }
    assert!(smaller > 40, "deltas were sent only {smaller} times of 156");
}

#[test]
fn a_delta_of_a_shell_is_the_scroll_and_the_new_rows() {
    let d = Daemon::new();
    bash(&d, "sh");
    for n in 0..30 {
        d.line("sh", &format!("echo line-{n}"));
        d.wait_regex("sh", &format!("^line-{n}$"));
    }
    let first = d.sp(&[
        "keys",
        "sh",
        "echo next",
        "Enter",
        "--until",
        "^next$",
        "--delta",
    ]);
    assert!(first.status.success());
    let out = d.sp(&[
        "keys",
        "sh",
        "echo after",
        "Enter",
        "--until",
        "^after$",
        "--delta",
    ]);
    let printed = String::from_utf8_lossy(&out.stdout);
    let header = printed.lines().next().unwrap_or_default();
    assert!(header.contains("delta scrolled=2"), "{printed}");
    assert_eq!(
        printed.lines().count(),
        4,
        "the scroll and three rows: {printed}"
    );
    // Nothing changed since: unchanged, no rows.
    let out = d.sp(&["snapshot", "sh", "--delta"]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.starts_with("unchanged cursor="), "{printed}");
    // Another reader sees the whole screen first.
    let fresh = call_ok(
        &d,
        "snapshot",
        json!({"sid": "sh", "reader": "someone-else"}),
    );
    assert!(
        fresh["text"].as_str().is_some_and(|t| t.contains("after")),
        "{fresh}"
    );
}

#[test]
fn a_shell_command_is_its_exit_status_and_its_own_output() {
    let d = Daemon::new();
    d.sp_json(&[
        "spawn",
        "--sid",
        "sh",
        "--env",
        "PS1=$ ",
        "--",
        "bash",
        "--norc",
        "--noprofile",
    ]);
    // No wait for the prompt: run waits for the first one.
    let (_, ran) = call(
        &d,
        "run",
        json!({"sid": "sh", "command": "printf 'a\\nb\\n'; ls /no/such; (exit 3)"}),
    );
    assert_eq!(ran["done"], true, "{ran}");
    assert_eq!(ran["exit_code"], 3);
    let output = ran["output"].as_str().unwrap_or_default();
    assert!(
        output.starts_with("a\nb\nls: cannot access '/no/such'"),
        "{output}"
    );
    assert!(
        !output.contains("$ ") && !output.contains("printf"),
        "prompt or command line in: {output}"
    );
    let out = d.sp(&["run", "sh", "--", "echo", "ok-$((6*7))"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ok-42\n");
    let out = d.sp(&["run", "sh", "--", "false"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failing command: exit status 1"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("run: exit status 1"));

    // Over the budget: its start and end, and what was cut, read with offset.
    let (_, long) = call(
        &d,
        "run",
        json!({"sid": "sh", "command": "seq 1 500", "max_lines": 20}),
    );
    assert_eq!(long["lines"], 500);
    let shown = long["output"].as_str().unwrap_or_default();
    assert!(
        shown.starts_with("1\n2\n3\n4\n5\n[... 480 lines ...]\n486\n"),
        "{shown}"
    );
    assert!(shown.ends_with("\n500"), "{shown}");
    assert_eq!(long["omitted"], json!({"from": 5, "to": 485}));
    let id = long["id"].clone();
    let (_, more) = call(
        &d,
        "run",
        json!({"sid": "sh", "id": id, "offset": 5, "max_lines": 3}),
    );
    assert!(
        more["output"]
            .as_str()
            .unwrap_or_default()
            .starts_with("6\n[... "),
        "{more}"
    );

    // A command that never ends: its output so far and its id; it keeps running until stopped.
    let (_, running) = call(
        &d,
        "run",
        json!({"sid": "sh", "command": "echo started; sleep 600", "timeout_ms": 500}),
    );
    assert_eq!(running["done"], false, "{running}");
    assert_eq!(running["output"], "started");
    let refused = call_error(&d, "run", json!({"sid": "sh", "command": "echo no"}));
    assert_eq!(refused["field"], "sid", "{refused}");
    call_ok(&d, "send", json!({"sid": "sh", "keys": ["C-c"]}));
    let (_, stopped) = call(
        &d,
        "run",
        json!({"sid": "sh", "id": running["id"], "timeout_ms": LONG_MS}),
    );
    assert_eq!(stopped["done"], true, "{stopped}");
    assert_eq!(stopped["exit_code"], 130, "{stopped}");
}

#[test]
fn a_shell_without_marks_is_told_plainly() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "plain", "--", "sh"]);
    let error = call_error(&d, "run", json!({"sid": "plain", "command": "ls"}));
    assert_eq!(error["field"], "sid");
    assert!(
        error["message"]
            .as_str()
            .unwrap_or("")
            .contains("no shell marks (OSC 133)"),
        "{error}"
    );
}

#[test]
fn bad_input_is_named_by_its_field() {
    let d = Daemon::new();
    bash(&d, "sh");
    let cases = [
        (
            "send",
            json!({"sid": "sh", "keys": ["x"], "until": {"regex": "(["}}),
            "until.regex",
        ),
        (
            "send",
            json!({"sid": "sh", "steps": [{"keys": ["x"]}, {"until": {"any": ["ok", "("]}}]}),
            "steps[1].until.any",
        ),
        ("send", json!({"sid": "sh", "until": {}}), "until"),
        (
            "send",
            json!({"sid": "sh", "until": {"quiet_ms": 0}}),
            "until.quiet_ms",
        ),
        (
            "send",
            json!({"sid": "sh", "until": {"regex": "a", "bogus": 1}}),
            "until.bogus",
        ),
        ("send", json!({"sid": "sh", "steps": [{}]}), "steps[0]"),
        (
            "send",
            json!({"sid": "sh", "mouse": {"action": "click", "col": 1}}),
            "mouse.row",
        ),
        (
            "send",
            json!({"sid": "sh", "keys": ["x"], "timeout_ms": 99_999_999}),
            "timeout_ms",
        ),
        (
            "snapshot",
            json!({"sid": "sh", "screen": "delta", "reader": "never-looked"}),
            "screen",
        ),
        (
            "run",
            json!({"sid": "sh", "command": "ls", "max_lines": 0}),
            "max_lines",
        ),
        ("run", json!({"sid": "sh"}), "command"),
        ("run", json!({"sid": "sh", "id": 99}), "id"),
    ];
    for (op, params, field) in cases {
        let error = call_error(&d, op, params.clone());
        assert_eq!(error["field"], field, "{op} {params}: {error}");
        assert_eq!(error["code"], "invalid_argument", "{op} {params}: {error}");
    }
    // Nothing of a bad call was sent: the shell is as it was, and still answers.
    d.wait_regex("sh", PROMPT);
    d.assert_bash_healthy("sh", "after");
}

#[test]
fn a_scrollback_budget_says_how_much_it_left() {
    let d = Daemon::new();
    bash(&d, "sh");
    call_ok(&d, "run", json!({"sid": "sh", "command": "seq 1 200"}));
    let some = call_ok(&d, "snapshot", json!({"sid": "sh", "scrollback": 10}));
    let left = some["scrollback_left"].as_u64().expect("scrollback_left");
    assert!(left >= 150, "{some}");
    let all = call_ok(&d, "snapshot", json!({"sid": "sh", "scrollback": 10_000}));
    assert_eq!(all["scrollback_left"], 0, "{all}");
    assert!(
        all["scrollback"]
            .as_str()
            .unwrap_or("")
            .starts_with("$ seq 1 200\n1\n2\n"),
        "{all}"
    );
}

#[test]
fn computer_on_a_terminal_carries_a_condition_too() {
    let d = Daemon::new();
    bash(&d, "sh");
    let (_, typed) = call(
        &d,
        "computer",
        json!({"sid": "sh", "actions": [{"type": "type", "text": "echo c-$((5*5))"}, {"type": "keypress", "keys": ["Return"]}],
               "until": {"regex": "^c-25$"}, "timeout_ms": LONG_MS}),
    );
    assert_eq!(typed["ok"], true, "{}", common::brief(&typed));
    assert_eq!(typed["until"]["held"], "regex", "{}", common::brief(&typed));
    let (_, late) = call(
        &d,
        "computer",
        json!({"sid": "sh", "action": {"type": "screenshot"}, "until": {"regex": "^never$"}, "timeout_ms": 200}),
    );
    assert_eq!(late["until"]["timed_out"], true, "{}", common::brief(&late));
    let bad = call_error(
        &d,
        "computer",
        json!({"sid": "sh", "action": {"type": "screenshot"}, "until": {"regex": "("}}),
    );
    assert_eq!(bad["field"], "until.regex", "{bad}");
}

/// fzf narrowing its list redraws it in place: the answer shows the rows as they now are (blank
/// ones included), not a scroll over blank rows left for the model to infer.
#[test]
fn a_list_redrawn_in_place_reads_as_its_rows_not_as_a_scroll() {
    let d = Daemon::new();
    d.sp_json(&["spawn", "--sid", "fz", "--", "bash", "-c", "seq 100 | fzf"]);
    d.wait_regex("fz", r"\b100/100");
    let mut model = Vec::new();
    let whole = d.sp(&["snapshot", "fz", "--delta"]);
    rebuild(
        &mut model,
        24,
        String::from_utf8_lossy(&whole.stdout).trim_end_matches('\n'),
    );
    let out = d.sp(&["keys", "fz", "77", "--until", r"\b1/100", "--delta"]);
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{printed}");
    // Listing 24 rows as they are costs more than the whole screen: the whole screen it is.
    let header = printed.lines().next().unwrap_or_default();
    assert!(!header.contains("scrolled="), "{printed}");
    rebuild(&mut model, 24, printed.trim_end_matches('\n'));
    let truth: Vec<String> = d.screen("fz").split('\n').map(str::to_owned).collect();
    assert_eq!(model, truth, "the rebuilt screen differs; read:\n{printed}");
}
