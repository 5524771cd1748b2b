//! Turning daemon answers into MCP tool results, and tool arguments into daemon parameters.
//!
//! Pure functions, so the shapes agents see are tested without a daemon: `structuredContent` is the same
//! object the CLI prints with `--json`; the text content is what a model reads first (the screen under a
//! one-line header, or the compact JSON); a base64 PNG travels as MCP image content instead of text.

use std::path::Path;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Map, Value};

use crate::ops::OpError;

/// What replaces the base64 PNG in `structuredContent`: the picture is the image content next to it.
pub const PNG_PLACEHOLDER: &str = "<attached as image content>";

/// Parameters that name files or directories: relative ones are taken from the MCP server's directory,
/// because the daemon runs elsewhere and accepts absolute paths only.
const PATH_PARAMS: &[&str] = &["cwd", "record", "app"];

/// Header fields of screen-bearing results, in the order a reader wants them. Values that are absent or
/// null are left out.
const HEADER_FIELDS: &[&str] = &[
    "sid",
    "alive",
    "exit_code",
    "signal",
    "exited",
    "matched",
    "index",
    "changed",
    "reason",
    "alt_screen",
    "cursor",
    "title",
    "hash",
];

/// Complete tool arguments before they go to the daemon: paths become absolute against `here`, and a
/// missing `cwd` becomes `here` when the tool takes one (its schema lists `cwd`).
pub fn prepare_params(schema: &Value, arguments: Option<Map<String, Value>>, here: &Path) -> Value {
    let mut params = arguments.unwrap_or_default();
    let takes = |field: &str| schema["properties"].get(field).is_some();
    for &field in PATH_PARAMS {
        match params.get(field) {
            Some(Value::String(path)) if !Path::new(path).is_absolute() => {
                let absolute = here.join(path).to_string_lossy().into_owned();
                params.insert(field.to_owned(), absolute.into());
            }
            None | Some(Value::Null) if field == "cwd" && takes(field) => {
                params.insert(field.to_owned(), here.to_string_lossy().into_owned().into());
            }
            _ => {}
        }
    }
    // An interpreter given as a relative path is ours to resolve; a bare name is looked up in PATH.
    if let Some(Value::String(python)) = params.get("python") {
        if python.contains('/') && !Path::new(python).is_absolute() {
            let absolute = here.join(python).to_string_lossy().into_owned();
            params.insert("python".to_owned(), absolute.into());
        }
    }
    Value::Object(params)
}

/// The tool result for a daemon answer: success or a tool-level error (`isError`), never a protocol error.
pub fn tool_result(outcome: Result<Value, OpError>) -> CallToolResult {
    match outcome {
        Ok(Value::Object(result)) => success(result),
        Ok(other) => success(Map::from_iter([("result".to_owned(), other)])),
        Err(error) => failure(&error),
    }
}

fn success(mut result: Map<String, Value>) -> CallToolResult {
    let image = match result.get_mut("png") {
        Some(png @ Value::String(_)) => match std::mem::replace(png, PNG_PLACEHOLDER.into()) {
            Value::String(data) => Some(ContentBlock::image(data, "image/png")),
            _ => None,
        },
        _ => None,
    };
    let text = match result.get("text") {
        Some(Value::String(screen)) => screen_text(&result, screen),
        _ => Value::Object(result.clone()).to_string(),
    };
    let mut content = vec![ContentBlock::text(text)];
    content.extend(image);
    // An operation can answer `ok: false` with evidence attached (computer: input was sent, then a
    // step failed; a fresh screenshot shows the outcome): a tool error that keeps its image.
    let failed = result.get("ok") == Some(&Value::Bool(false));
    let mut out = if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = Some(Value::Object(result));
    out
}

/// A tool error the model can act on: the message names the field at fault (the ops layer puts it there).
fn failure(error: &OpError) -> CallToolResult {
    let mut out = CallToolResult::error(vec![ContentBlock::text(format!(
        "error ({}): {}",
        error.code, error.message
    ))]);
    out.structured_content = Some(json!({ "ok": false, "error": error }));
    out
}

/// One header line (`sid=sh alive=true matched=true ...`), then the scrollback if asked for, then the
/// screen.
fn screen_text(result: &Map<String, Value>, screen: &str) -> String {
    let mut header: Vec<String> = Vec::new();
    for &field in HEADER_FIELDS {
        let value = match result.get(field) {
            None | Some(Value::Null) => continue,
            Some(Value::String(s)) if s.is_empty() => continue,
            // Only news: a wait says exited=false on every ordinary return.
            Some(Value::Bool(false)) if field == "exited" => continue,
            Some(Value::String(s)) if field == "sid" || field == "reason" || field == "hash" => {
                s.clone()
            }
            Some(Value::Object(cursor)) if field == "cursor" => {
                format!("{},{}", cursor["row"], cursor["col"])
            }
            Some(value) => value.to_string(),
        };
        header.push(format!("{field}={value}"));
    }
    if let (Some(cols), Some(rows)) = (result.get("cols"), result.get("rows")) {
        header.push(format!("size={cols}x{rows}"));
    }
    let mut text = header.join(" ");
    if let Some(Value::String(history)) = result.get("scrollback") {
        if !history.is_empty() {
            text.push_str("\n[scrollback]\n");
            text.push_str(history);
            text.push_str("\n[screen]");
        }
    }
    text.push('\n');
    // Blank rows below the last line of text cost tokens and say nothing (size= gives the row count).
    text.push_str(screen.trim_end_matches('\n'));
    // What else the operation found (textual_run's tree, query and details), for models that read only
    // the text content.
    for field in ["details", "query", "tree", "results"] {
        match result.get(field) {
            None | Some(Value::Null) => {}
            Some(value) => text.push_str(&format!("\n[{field}] {value}")),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(result: &CallToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    #[test]
    fn screen_results_read_as_header_then_screen() {
        let result = tool_result(Ok(json!({
            "ok": true, "sid": "sh", "alive": true, "matched": true, "alt_screen": false,
            "cursor": {"row": 1, "col": 2, "visible": true}, "title": "", "hash": "ab12",
            "text": "$ echo 42\n42", "exit_code": null, "exited": false
        })));
        assert_eq!(result.is_error, Some(false));
        assert_eq!(
            texts(&result),
            vec!["sid=sh alive=true matched=true alt_screen=false cursor=1,2 hash=ab12\n$ echo 42\n42"]
        );
        assert_eq!(
            result.structured_content.as_ref().map(|v| &v["text"]),
            Some(&json!("$ echo 42\n42"))
        );
    }

    #[test]
    fn other_results_read_as_compact_json() {
        let result = tool_result(Ok(json!({"ok": true, "sessions": []})));
        assert_eq!(texts(&result), vec![r#"{"ok":true,"sessions":[]}"#]);
    }

    #[test]
    fn png_goes_out_as_image_content_not_text() {
        let result = tool_result(Ok(json!({
            "ok": true, "sid": "sh", "format": "png", "width": 10, "height": 20, "png": "iVBORw0KGgo="
        })));
        let image = result.content.iter().find_map(|c| c.as_image());
        assert_eq!(image.map(|i| i.data.as_str()), Some("iVBORw0KGgo="));
        assert_eq!(image.map(|i| i.mime_type.as_str()), Some("image/png"));
        let structured = result.structured_content.unwrap_or_default();
        assert_eq!(structured["png"], json!(PNG_PLACEHOLDER));
        assert!(!texts(&tool_result(Ok(structured)))[0].contains("iVBOR"));
    }

    #[test]
    fn a_failed_result_with_a_picture_is_a_tool_error_keeping_the_picture() {
        let result = tool_result(Ok(json!({
            "ok": false, "outcome": "unknown", "error": {"code": "timeout", "message": "step 2 timed out"},
            "format": "png", "width": 10, "height": 20, "png": "iVBORw0KGgo="
        })));
        assert_eq!(result.is_error, Some(true));
        assert!(result.content.iter().any(|c| c.as_image().is_some()));
    }

    #[test]
    fn errors_are_tool_errors_naming_the_field() {
        let result = tool_result(Err(OpError::invalid("pattern", "regex parse error")));
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            texts(&result),
            vec!["error (invalid_argument): pattern: regex parse error"]
        );
        let structured = result.structured_content.unwrap_or_default();
        assert_eq!(structured["error"]["field"], json!("pattern"));
    }

    #[test]
    fn relative_and_missing_cwd_become_absolute() {
        let schema = json!({"properties": {"cwd": {}, "record": {}}});
        let here = Path::new("/work/here");
        let given = json!({"cwd": "sub", "record": "/abs/x.cast"});
        let prepared = prepare_params(&schema, given.as_object().cloned(), here);
        assert_eq!(prepared["cwd"], json!("/work/here/sub"));
        assert_eq!(prepared["record"], json!("/abs/x.cast"));
        assert_eq!(
            prepare_params(&schema, None, here)["cwd"],
            json!("/work/here")
        );
        let no_cwd = json!({"properties": {"sid": {}}});
        assert_eq!(prepare_params(&no_cwd, None, here), json!({}));
    }
}
