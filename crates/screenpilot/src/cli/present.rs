//! Presenting results and progress: for a person (the screen, a table, a file path, an exit status), or as
//! one JSON object per answer with --json.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::{json, Value};

use super::args::Verb;
use crate::ops::{self, Caller, ErrorCode, OpError};

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

/// Print a result for a person or as JSON; returns the exit status: 0, or 1 when the operation did not
/// get what was asked (a wait timed out, the program is not alive, a computer action failed).
pub fn present(verb: &Verb, op: &str, result: &Value, as_json: bool) -> Result<i32, OpError> {
    let mut result = result.clone();
    let image_to = match verb {
        Verb::Screenshot(a) => Some((&a.sid, &a.output)),
        Verb::Computer(a) if result.get("png").is_some() => Some((&a.sid, &a.output)),
        _ => None,
    };
    if let Some((sid, output)) = image_to {
        if output.is_some() || !as_json {
            let path = output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{sid}.png")));
            write_image(&path, &mut result)?;
        }
    }
    if let Some(notice) = result.get("notice").and_then(Value::as_str) {
        let _ = writeln!(std::io::stderr().lock(), "screenpilot: {notice}");
    }
    let mut out = std::io::stdout().lock();
    if let Verb::Call { .. } = verb {
        let _ = writeln!(out, "{result}");
        return Ok(0);
    }
    let reading = (ops::find(op)?.read)(&result)?;
    let status = i32::from(!reading.satisfied);
    if as_json {
        let _ = writeln!(out, "{result}");
        return Ok(status);
    }
    let human = reading.human.trim_end_matches('\n');
    if !human.is_empty() {
        let _ = writeln!(out, "{human}");
    }
    if let Some(complaint) = reading.complaint.filter(|_| !reading.satisfied) {
        let _ = writeln!(std::io::stderr().lock(), "screenpilot: {complaint}");
    }
    Ok(status)
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
                    ErrorCode::BadResponse,
                    format!("the daemon sent a malformed PNG: {e}"),
                )
            })?
    } else {
        return Err(OpError::new(
            ErrorCode::BadResponse,
            "the daemon sent no image",
        ));
    };
    let path = PathBuf::from(Caller::this_process().absolute(&path.to_string_lossy()));
    std::fs::write(&path, bytes)
        .map_err(|e| OpError::invalid("output", format!("cannot write {}: {e}", path.display())))?;
    if let Value::Object(map) = result {
        map.remove("png");
        map.remove("svg");
        map.insert("path".into(), path.to_string_lossy().into_owned().into());
    }
    Ok(())
}
