//! Turning daemon answers into MCP tool results.
//!
//! Pure functions, so the shapes agents see are tested without a daemon: `structuredContent` is the same
//! object the CLI prints with `--json`; the text content is what a model reads first (the screen under a
//! one-line header, or the compact JSON), as the operation's output type says ([`crate::ops::View`]);
//! a base64 PNG travels as MCP image content instead of text.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{json, Map, Value};

use crate::ops::{OpError, OperationDef, View};

/// What replaces the base64 PNG in `structuredContent`: the picture is the image content next to it.
pub const PNG_PLACEHOLDER: &str = "<attached as image content>";

/// The tool result for a daemon answer to `op`: success or a tool-level error (`isError`), never a
/// protocol error.
pub fn tool_result(op: Option<&OperationDef>, outcome: Result<Value, OpError>) -> CallToolResult {
    match outcome {
        Ok(Value::Object(result)) => success(op, result),
        Ok(other) => success(op, Map::from_iter([("result".to_owned(), other)])),
        Err(error) => failure(&error),
    }
}

fn success(op: Option<&OperationDef>, mut result: Map<String, Value>) -> CallToolResult {
    // What the daemon tells the first caller after a restart, for the model to read first (it is
    // no field of any output schema).
    let notice = result
        .remove("notice")
        .and_then(|n| n.as_str().map(str::to_owned));
    let view = op.and_then(|op| (op.read)(&Value::Object(result.clone())).ok());
    let image = match result.get_mut("png") {
        Some(png @ Value::String(_)) => match std::mem::replace(png, PNG_PLACEHOLDER.into()) {
            Value::String(data) => Some(ContentBlock::image(data, "image/png")),
            _ => None,
        },
        _ => None,
    };
    // Pictures a terminal screen holds: each PNG as image content after the text that labels it.
    let mut pictures = Vec::new();
    if let Some(Value::Array(listed)) = result.get_mut("images") {
        for picture in listed {
            if let Some(png @ Value::String(_)) = picture.get_mut("png") {
                if let Value::String(data) = std::mem::replace(png, PNG_PLACEHOLDER.into()) {
                    pictures.push(ContentBlock::image(data, "image/png"));
                }
            }
        }
    }
    let text = match view.as_ref().map(|r| &r.view) {
        Some(
            view @ View {
                screen: Some(_), ..
            },
        ) => screen_text(view),
        _ => Value::Object(result.clone()).to_string(),
    };
    let text = match notice {
        Some(notice) => format!("[notice] {notice}\n{text}"),
        None => text,
    };
    let mut content = vec![ContentBlock::text(text)];
    content.extend(image);
    content.extend(pictures);
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

fn screen_text(view: &View) -> String {
    view.render()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops;

    fn texts(result: &CallToolResult) -> Vec<String> {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect()
    }

    fn screen(text: &str) -> Value {
        json!({
            "ok": true, "sid": "sh", "alive": true, "alt_screen": false,
            "cursor": {"row": 1, "col": 2, "visible": true, "shape": "block"}, "title": "", "hash": "ab12",
            "visual_hash": "cd34", "modes": screenpilot_screen::InputModes::default(),
            "cols": 80, "rows": 24, "text": text
        })
    }

    /// What the daemon tells its first caller after a restart is read first, and is no field of
    /// the structured answer (which its output schema describes).
    #[test]
    fn a_notice_is_read_first_and_kept_out_of_the_structured_answer() {
        let answer =
            json!({"ok": true, "sessions": [], "notice": "the daemon before this one was killed"});
        let result = tool_result(ops::find("list").ok(), Ok(answer));
        let text = texts(&result).join("\n");
        assert!(
            text.starts_with("[notice] the daemon before this one was killed\n"),
            "{text}"
        );
        let structured = result.structured_content.expect("structured");
        assert!(structured.get("notice").is_none(), "{structured}");
    }

    #[test]
    fn screen_results_read_as_header_then_screen() {
        let mut answer = screen("$ echo 42\n42\n\n");
        answer["matched"] = json!(true);
        answer["match"] = json!("42");
        answer["exited"] = json!(false);
        answer["elapsed_ms"] = json!(1.5);
        let result = tool_result(ops::find("wait_for").ok(), Ok(answer));
        assert_eq!(result.is_error, Some(false));
        assert_eq!(
            texts(&result),
            vec!["sid=sh alive=true matched=true alt_screen=false cursor=1,2 hash=ab12 size=80x24\n$ echo 42\n42"]
        );
        assert_eq!(
            result.structured_content.as_ref().map(|v| &v["text"]),
            Some(&json!("$ echo 42\n42\n\n"))
        );
    }

    #[test]
    fn other_results_read_as_compact_json() {
        let result = tool_result(
            ops::find("resize").ok(),
            Ok(json!({"ok": true, "sid": "py", "cols": 100, "rows": 30})),
        );
        assert_eq!(
            texts(&result),
            vec![r#"{"cols":100,"ok":true,"rows":30,"sid":"py"}"#]
        );
        // close and spawn read as a line of facts, as the answers with a screen do.
        let closed = tool_result(
            ops::find("close").ok(),
            Ok(json!({"ok": true, "sid": "py", "exit_code": 0, "signal": null})),
        );
        assert_eq!(texts(&closed), vec!["closed sid=py exit=0"]);
        let spawned = tool_result(
            ops::find("spawn").ok(),
            Ok(json!({"ok": true, "sid": "py", "pid": 42, "cols": 80, "rows": 24})),
        );
        assert_eq!(texts(&spawned), vec!["sid=py pid=42 size=80x24"]);
        let sessions = tool_result(
            ops::find("list").ok(),
            Ok(json!({"ok": true, "sessions": []})),
        );
        assert_eq!(texts(&sessions), vec!["no sessions"]);
    }

    #[test]
    fn png_goes_out_as_image_content_not_text() {
        let result = tool_result(
            ops::find("screenshot").ok(),
            Ok(json!({
                "ok": true, "sid": "sh", "format": "png", "width": 10, "height": 20, "png": "iVBORw0KGgo="
            })),
        );
        let image = result.content.iter().find_map(|c| c.as_image());
        assert_eq!(image.map(|i| i.data.as_str()), Some("iVBORw0KGgo="));
        assert_eq!(image.map(|i| i.mime_type.as_str()), Some("image/png"));
        let structured = result.structured_content.unwrap_or_default();
        assert_eq!(structured["png"], json!(PNG_PLACEHOLDER));
        assert!(!texts(&tool_result(None, Ok(structured)))[0].contains("iVBOR"));
    }

    #[test]
    fn a_failed_result_with_a_picture_is_a_tool_error_keeping_the_picture() {
        let result = tool_result(
            ops::find("computer").ok(),
            Ok(json!({
                "ok": false, "sid": "d", "kind": "desktop", "done": 1, "results": [{"type": "click"}],
                "outcome": "unknown", "error": {"code": "timeout", "message": "step 2 timed out"},
                "format": "png", "width": 10, "height": 20, "png": "iVBORw0KGgo="
            })),
        );
        assert_eq!(result.is_error, Some(true));
        assert!(result.content.iter().any(|c| c.as_image().is_some()));
    }

    #[test]
    fn errors_are_tool_errors_naming_the_field() {
        let result = tool_result(None, Err(OpError::invalid("pattern", "regex parse error")));
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            texts(&result),
            vec!["error (invalid_argument): pattern: regex parse error"]
        );
        let structured = result.structured_content.unwrap_or_default();
        assert_eq!(structured["error"]["field"], json!("pattern"));
    }
}
