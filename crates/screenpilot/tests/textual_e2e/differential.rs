//! Differential test against Textual's own Pilot: Textual's example apps (its docs examples, from the
//! source distribution of the Textual under test), the same actions through `screenpilot textual` (a
//! real terminal, real key and mouse bytes) and through Pilot (headless, in-process events), and the
//! same final screen text, widget states and exit value expected from both. The cases are in
//! `fixtures/textual/differential_cases.json`; the Pilot side is `fixtures/textual/pilot_run.py`.
//! Runs on the newest and on the oldest supported Textual.

use std::process::Command;
use std::sync::Mutex;

use serde_json::{json, Value};

use super::harness::{oldest_python, textual_examples, Harness};

/// Cases run at once: each side is mostly a Python start-up, so a few overlap well on two cores.
const WORKERS: usize = 3;

fn cases() -> Vec<Value> {
    let path = format!(
        "{}/tests/fixtures/textual/differential_cases.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Screen text as compared: lines without trailing blanks, no blank lines at the end.
fn normalised(text: &str) -> String {
    let lines: Vec<&str> = text.split('\n').map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[..end].join("\n")
}

/// What Pilot ended with: {exited, text?, query?, return_value}.
fn pilot(h: &Harness, app: &str, case: &Value) -> Result<Value, String> {
    let spec = json!({
        "app": app,
        "size": case.get("size").cloned().unwrap_or(json!([80, 25])),
        "actions": case.get("actions").cloned().unwrap_or(json!([])),
        "query": case.get("query").cloned().unwrap_or(json!([])),
    });
    let manifest = env!("CARGO_MANIFEST_DIR");
    let out = Command::new(&h.python)
        .arg(format!("{manifest}/tests/fixtures/textual/pilot_run.py"))
        .arg(format!("{manifest}/src/ops/textual/probe"))
        .arg(spec.to_string())
        .current_dir(&h.dir)
        .output()
        .map_err(|e| format!("run pilot_run.py: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match stdout.lines().last().map(serde_json::from_str::<Value>) {
        Some(Ok(result)) if out.status.success() => Ok(result),
        _ => Err(format!(
            "Pilot failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )),
    }
}

/// Run one case both ways; a description of every difference, or none.
fn compare(h: &Harness, case: &Value) -> Result<(), String> {
    let app = h.example(case["app"].as_str().expect("case app"));
    let actions = case
        .get("actions")
        .cloned()
        .unwrap_or(json!([]))
        .to_string();
    let mut args = vec![
        "textual",
        "--python",
        &h.python,
        &app,
        "--actions",
        &actions,
    ];
    let size = case
        .get("size")
        .map(|s| format!("{}x{}", s[0], s[1]))
        .unwrap_or_else(|| "80x25".to_owned());
    args.extend(["--size", &size]);
    let queries: Vec<String> = case["query"]
        .as_array()
        .map(|q| {
            q.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for query in &queries {
        args.extend(["--query", query]);
    }
    let (_, _, ours) = h.run(&args);
    let theirs = pilot(h, &app, case)?;
    if theirs["exited"] == true {
        let value = &ours["details"]["exit_value"];
        return if ours["ok"] == true && value == &theirs["return_value"] {
            Ok(())
        } else {
            Err(format!(
                "Pilot's app exited with {}; screenpilot: {ours}",
                theirs["return_value"]
            ))
        };
    }
    if ours["ok"] != true {
        return Err(format!("screenpilot failed: {}", ours["error"]));
    }
    let mut differences = Vec::new();
    let (our_text, their_text) = (
        normalised(ours["text"].as_str().unwrap_or("")),
        normalised(theirs["text"].as_str().unwrap_or("")),
    );
    if our_text != their_text {
        differences.push(format!(
            "screens differ\n--- Pilot\n{their_text}\n--- screenpilot\n{our_text}"
        ));
    }
    let our_query = ours.get("query").cloned().unwrap_or(json!([]));
    if our_query != theirs["query"] {
        differences.push(format!(
            "widget states differ\n--- Pilot\n{}\n--- screenpilot\n{our_query}",
            theirs["query"]
        ));
    }
    if differences.is_empty() {
        Ok(())
    } else {
        Err(differences.join("\n"))
    }
}

fn same_outcome_as_pilot(python: String) {
    // Fail early, with the way to get them, when the examples are missing.
    textual_examples(&python);
    let h = Harness::with_python(python);
    let cases = cases();
    assert!(cases.len() >= 20, "two dozen cases or so");
    let next = Mutex::new(cases.iter());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..WORKERS {
            scope.spawn(|| loop {
                let Some(case) = next.lock().unwrap().next() else {
                    return;
                };
                if let Err(why) = compare(&h, case) {
                    failures
                        .lock()
                        .unwrap()
                        .push(format!("{}: {why}", case["name"]));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from Pilot under {}:\n\n{}",
        failures.len(),
        cases.len(),
        h.python,
        failures.join("\n\n")
    );
}

#[test]
fn textual_examples_end_as_under_pilot() {
    same_outcome_as_pilot(super::harness::python());
}

#[test]
fn textual_examples_end_as_under_pilot_on_the_oldest_textual() {
    same_outcome_as_pilot(oldest_python());
}
