//! Presenting results and progress: for a person (the screen, a table, a file path, an exit status), or as
//! one JSON object per answer with --json.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};

use super::plan::absolute;
use super::Verb;
use crate::ops::OpError;

/// Print a progress update of a running verb: a JSON line with --json, else the screen under a header.
pub fn progress(verb: &Verb, update: &Value, as_json: bool) {
    if !matches!(verb, Verb::Textual(_)) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(out, "{}", json!({ "progress": update }));
        return;
    }
    let header = update["message"]
        .as_str()
        .and_then(|m| m.lines().next())
        .unwrap_or("");
    let _ = writeln!(out, "── {header}");
    let _ = writeln!(
        out,
        "{}",
        update["text"].as_str().unwrap_or("").trim_end_matches('\n')
    );
}

/// The end of a `textual` run for a person: the screen, then what else came back.
fn print_textual(out: &mut impl Write, result: &Value) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        result["text"].as_str().unwrap_or("").trim_end_matches('\n')
    )?;
    let details = &result["details"];
    if let Some(svg) = details["screenshot"].as_str() {
        writeln!(
            out,
            "screenshot: {svg} ({})",
            details["png"].as_str().unwrap_or("")
        )?;
    }
    if !details["exit"].is_null() {
        writeln!(
            out,
            "exited: return code {}, value {}",
            details["exit"]["return_code"], details["exit_value"]
        )?;
    } else {
        writeln!(
            out,
            "session {} is running",
            result["sid"].as_str().unwrap_or("")
        )?;
    }
    for warning in details["warnings"].as_array().into_iter().flatten() {
        writeln!(out, "warning: {}", warning.as_str().unwrap_or(""))?;
    }
    for key in ["tree", "query"] {
        if let Some(value) = result.get(key) {
            let pretty = serde_json::to_string_pretty(value).unwrap_or_default();
            writeln!(out, "{key}: {pretty}")?;
        }
    }
    Ok(())
}

/// Print a result for a person or as JSON; returns the exit status.
pub fn present(verb: &Verb, result: &Value, as_json: bool) -> Result<i32, OpError> {
    let mut result = result.clone();
    if let Verb::Screenshot(a) = verb {
        if a.output.is_some() || !as_json {
            let sid = a.sid.as_str();
            let path = a
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{sid}.png")));
            write_image(&path, &mut result)?;
        }
    }
    if let Verb::Computer(a) = verb {
        if result.get("png").is_some() && (a.output.is_some() || !as_json) {
            let path = a
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}.png", a.sid)));
            write_image(&path, &mut result)?;
        }
    }
    let status = match verb {
        Verb::Wait(_) => i32::from(!wait_satisfied(&result)),
        Verb::Computer(_) => i32::from(result["ok"] != Value::Bool(true)),
        Verb::Alive { .. } => i32::from(result["alive"] != Value::Bool(true)),
        _ => 0,
    };
    let mut out = std::io::stdout().lock();
    if as_json {
        let _ = writeln!(out, "{result}");
        return Ok(status);
    }
    let text = |key: &str| result[key].as_str().unwrap_or("").to_owned();
    let _ = match verb {
        Verb::Spawn(_) => writeln!(out, "{}", text("sid")),
        Verb::List => print_list(&mut out, &result),
        Verb::Alive { .. } => writeln!(out, "{}", describe_exit(&result)),
        Verb::Close { sid } => writeln!(out, "closed {sid} ({})", describe_exit(&result)),
        // With --settle-ms an input verb answers with the screen it settled on.
        Verb::Keys { .. } | Verb::Line { .. } | Verb::Type { .. } | Verb::Mouse(_)
            if result.get("text").is_some() =>
        {
            writeln!(out, "{}", text("text").trim_end_matches('\n'))
        }
        Verb::Snapshot(_) => {
            let history = text("scrollback");
            if !history.is_empty() {
                let _ = writeln!(out, "{history}");
            }
            writeln!(out, "{}", text("text").trim_end_matches('\n'))
        }
        Verb::Wait(_) => {
            let _ = writeln!(out, "{}", text("text").trim_end_matches('\n'));
            let detail = match (result.get("index"), result.get("reason")) {
                (Some(index), _) => format!("index {index}"),
                (_, Some(reason)) => format!("reason {}", reason.as_str().unwrap_or("")),
                _ => String::new(),
            };
            if wait_satisfied(&result) {
                Ok(())
            } else {
                let why = if result["exited"] == Value::Bool(true) {
                    "ended: the program exited first"
                } else {
                    "timed out"
                };
                let detail = if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({detail})")
                };
                let mut err = std::io::stderr().lock();
                writeln!(err, "screenpilot: wait {why}{detail}")
            }
        }
        Verb::Screenshot(_) => writeln!(out, "{}", text("path")),
        Verb::Desktop { .. } => writeln!(
            out,
            "{} {} {}x{}",
            text("sid"),
            text("display"),
            result["width"],
            result["height"]
        ),
        Verb::Computer(_) => {
            if let Some(error) = result["error"]["message"].as_str() {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "screenpilot: computer: {error}");
            }
            let screen = match (result["width"].as_u64(), result["height"].as_u64()) {
                (Some(w), Some(h)) => format!("screen {w}x{h}; {}", text("path")),
                _ => "no screenshot".to_owned(),
            };
            writeln!(out, "{} action(s) done; {screen}", result["done"])
        }
        Verb::Call { .. } => writeln!(out, "{result}"),
        Verb::Textual(_) => print_textual(&mut out, &result),
        _ => Ok(()),
    };
    Ok(status)
}

fn wait_satisfied(result: &Value) -> bool {
    let yes = |key: &str| result[key] == Value::Bool(true);
    match result["reason"].as_str() {
        Some(reason) => matches!(reason, "MARKER" | "STABLE"),
        None if result.get("changed").is_some() => yes("changed"),
        None if result.get("matched").is_some() => yes("matched"),
        None => yes("exited"),
    }
}

fn describe_exit(result: &Value) -> String {
    if result["alive"] == Value::Bool(true) {
        return "running".into();
    }
    match (result["exit_code"].as_i64(), result["signal"].as_i64()) {
        (Some(code), _) => format!("exited with code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended".into(),
    }
}

fn print_list(out: &mut impl Write, result: &Value) -> std::io::Result<()> {
    let sessions = result["sessions"].as_array().cloned().unwrap_or_default();
    if sessions.is_empty() {
        return writeln!(out, "no sessions");
    }
    writeln!(
        out,
        "{:<20} {:<9} {:>8} {:<10} {:>9}  COMMAND",
        "SID", "KIND", "PID", "STATE", "SIZE"
    )?;
    for s in sessions {
        let cmd: Vec<String> = s["cmd"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        // Short enough for the column: "running", "exit 3", "signal 9".
        let state = match (
            s["alive"].as_bool(),
            s["exit_code"].as_i64(),
            s["signal"].as_i64(),
        ) {
            (Some(true), _, _) => "running".to_owned(),
            (_, Some(code), _) => format!("exit {code}"),
            (_, None, Some(signal)) => format!("signal {signal}"),
            _ => "ended".to_owned(),
        };
        let size = if s["kind"] == "desktop" {
            format!("{}x{}", s["width"], s["height"])
        } else {
            format!("{}x{}", s["cols"], s["rows"])
        };
        writeln!(
            out,
            "{:<20} {:<9} {:>8} {:<10} {:>9}  {}",
            s["sid"].as_str().unwrap_or(""),
            s["kind"].as_str().unwrap_or(""),
            s["pid"].to_string(),
            state,
            size,
            cmd.join(" ")
        )?;
    }
    Ok(())
}

/// Write the image in `result` to `path`, replacing the inline data with the path.
fn write_image(path: &Path, result: &mut Value) -> Result<(), OpError> {
    let bytes = if let Some(svg) = result["svg"].as_str() {
        svg.as_bytes().to_vec()
    } else if let Some(png) = result["png"].as_str() {
        base64::engine::general_purpose::STANDARD
            .decode(png)
            .map_err(|e| {
                OpError::new(
                    "bad_response",
                    format!("the daemon sent a malformed PNG: {e}"),
                )
            })?
    } else {
        return Err(OpError::new("bad_response", "the daemon sent no image"));
    };
    let path = absolute(path);
    std::fs::write(&path, bytes)
        .map_err(|e| OpError::invalid("output", format!("cannot write {}: {e}", path.display())))?;
    if let Value::Object(map) = result {
        map.remove("png");
        map.remove("svg");
        map.insert("path".into(), path.to_string_lossy().into_owned().into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_wait_is_satisfied_by_what_its_operation_reports() {
        assert!(wait_satisfied(&json!({"reason": "MARKER"})));
        assert!(wait_satisfied(&json!({"reason": "STABLE"})));
        assert!(!wait_satisfied(
            &json!({"reason": "TIMEOUT", "changed": true})
        ));
        assert!(wait_satisfied(&json!({"changed": true})));
        assert!(!wait_satisfied(&json!({"changed": false, "exited": true})));
        assert!(wait_satisfied(&json!({"matched": true, "index": 1})));
        assert!(!wait_satisfied(&json!({"matched": false, "exited": true})));
        assert!(wait_satisfied(&json!({"exited": true})));
        assert!(!wait_satisfied(&json!({"exited": false})));
    }

    #[test]
    fn an_exit_is_described_by_code_or_signal() {
        assert_eq!(describe_exit(&json!({"alive": true})), "running");
        assert_eq!(
            describe_exit(&json!({"alive": false, "exit_code": 3})),
            "exited with code 3"
        );
        assert_eq!(
            describe_exit(&json!({"alive": false, "signal": 9})),
            "killed by signal 9"
        );
        assert_eq!(describe_exit(&json!({"alive": false})), "ended");
    }
}
