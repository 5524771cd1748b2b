//! One member of a JSON object set or taken out in a document's text, with every other byte left as
//! the person wrote it: their spacing, key order, comments and trailing commas (JSONC: VS Code's and
//! Zed's settings files come with comments). Parsing into a value and printing it back would rewrite
//! all of that and drop the comments. [`scan`] finds where things are; this file writes.

mod scan;

use serde_json::Value;

pub use scan::{check, JsonTextError};
use scan::{has_comment, object_at, Object, Scan};

/// A value to write. Objects keep the order given (serde_json's map would sort their keys).
#[derive(Debug, Clone, PartialEq)]
pub enum Fragment {
    Leaf(Value),
    Object(Vec<(String, Fragment)>),
}

impl Fragment {
    /// Written on one line: `{"command": "x", "args": ["mcp"]}`.
    pub fn inline(&self) -> String {
        match self {
            Fragment::Leaf(value) => leaf_text(value),
            Fragment::Object(members) if members.is_empty() => "{}".into(),
            Fragment::Object(members) => {
                let inner: Vec<String> = members
                    .iter()
                    .map(|(k, f)| format!("{}: {}", quoted(k), f.inline()))
                    .collect();
                format!("{{{}}}", inner.join(", "))
            }
        }
    }

    /// Written over lines, each member on one of its own indented by `unit` more than `indent`
    /// (the indentation of the line the value starts on).
    pub fn pretty(&self, indent: &str, unit: &str) -> String {
        match self {
            Fragment::Object(members) if !members.is_empty() => {
                let inner = format!("{indent}{unit}");
                let lines: Vec<String> = members
                    .iter()
                    .map(|(k, f)| format!("{inner}{}: {}", quoted(k), f.pretty(&inner, unit)))
                    .collect();
                format!("{{\n{}\n{indent}}}", lines.join(",\n"))
            }
            _ => self.inline(),
        }
    }
}

/// A scalar, or an array on one line: `["mcp", "--tools", "terminal"]`.
fn leaf_text(value: &Value) -> String {
    match value {
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(leaf_text).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", quoted(k), leaf_text(v)))
                .collect();
            format!("{{{}}}", members.join(", "))
        }
        other => other.to_string(),
    }
}

fn quoted(key: &str) -> String {
    Value::String(key.to_owned()).to_string()
}

/// The blanks between the start of `pos`'s line and `pos`, when nothing else is there.
fn line_indent(text: &str, pos: usize) -> Option<&str> {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let lead = text[start..pos].trim_start_matches('\u{feff}');
    lead.bytes()
        .all(|b| b == b' ' || b == b'\t')
        .then_some(lead)
}

/// The blanks that start `pos`'s line.
fn leading_blanks(text: &str, pos: usize) -> &str {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..];
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

/// The document's indentation step: the top object's first member's, when it is on a line of its
/// own; else two spaces.
fn indent_unit<'t>(text: &'t str, top: &Object) -> &'t str {
    top.members
        .first()
        .and_then(|m| line_indent(text, m.key_start))
        .filter(|lead| !lead.is_empty())
        .unwrap_or("  ")
}

/// `text` with `key: value` in the object found through `path` (the keys from the top); objects on
/// the path that are missing are added, a `key` already there has its value replaced. `text` must
/// have passed [`check`].
pub fn set(
    text: &str,
    path: &[&str],
    key: &str,
    value: &Fragment,
) -> Result<String, JsonTextError> {
    // Nothing but blanks or comments: the document is ours to write, after them.
    if check(text)?.is_none() {
        let names: Vec<&str> = path.iter().copied().chain([key]).collect();
        let document = tree(&names, value.clone());
        let lead = match text.trim() {
            "" => String::new(),
            _ if text.ends_with('\n') => text.to_owned(),
            _ => format!("{text}\n"),
        };
        return Ok(format!("{lead}{}\n", document.pretty("", "  ")));
    }
    let Some(top) = object_at(text, 0)? else {
        return Err(JsonTextError::NotAnObject {
            what: "the top level".into(),
        });
    };
    let unit = indent_unit(text, &top);
    let mut object = top.clone();
    for (i, name) in path.iter().enumerate() {
        let Some((_, member)) = object.member(name) else {
            let below: Vec<&str> = path[i + 1..].iter().copied().chain([key]).collect();
            return Ok(insert(
                text,
                &object,
                name,
                &tree(&below, value.clone()),
                unit,
            ));
        };
        object =
            object_at(text, member.value_start)?.ok_or_else(|| JsonTextError::NotAnObject {
                what: path[..=i].join("."),
            })?;
    }
    let Some((_, member)) = object.member(key) else {
        return Ok(insert(text, &object, key, value, unit));
    };
    let old = &text[member.value_start..member.value_end];
    if has_comment(old) {
        let mut full: Vec<&str> = path.to_vec();
        full.push(key);
        return Err(JsonTextError::CommentsInside {
            key: full.join("."),
            line: text[..member.value_start].matches('\n').count() + 1,
        });
    }
    let new = match line_indent(text, member.key_start) {
        Some(indent) => value.pretty(indent, unit),
        None => value.inline(),
    };
    Ok(format!(
        "{}{new}{}",
        &text[..member.value_start],
        &text[member.value_end..]
    ))
}

/// `{names[0]: {names[1]: ... value}}`; `value` itself for no names.
fn tree(names: &[&str], value: Fragment) -> Fragment {
    names.iter().rev().fold(value, |inner, name| {
        Fragment::Object(vec![((*name).to_owned(), inner)])
    })
}

/// `text` with the member `key: value` added at the end of `object`, laid out as its members are.
fn insert(text: &str, object: &Object, key: &str, value: &Fragment, unit: &str) -> String {
    let key_text = quoted(key);
    if let (Some(first), Some(last)) = (object.members.first(), object.members.last()) {
        let added = match line_indent(text, first.key_start) {
            Some(indent) => format!(",\n{indent}{key_text}: {}", value.pretty(indent, unit)),
            None => format!(", {key_text}: {}", value.inline()),
        };
        return format!(
            "{}{added}{}",
            &text[..last.value_end],
            &text[last.value_end..]
        );
    }
    let base = leading_blanks(text, object.open);
    let inner = format!("{base}{unit}");
    let member = format!("{inner}{key_text}: {}", value.pretty(&inner, unit));
    let interior = &text[object.open + 1..object.close];
    if interior.trim().is_empty() {
        format!(
            "{}\n{member}\n{base}{}",
            &text[..=object.open],
            &text[object.close..]
        )
    } else {
        format!(
            "{}\n{member}{}",
            &text[..=object.open],
            &text[object.open + 1..]
        )
    }
}

/// `text` without the member `key` of the object found through `path`; `None` when it is not there.
/// `text` must have passed [`check`].
pub fn remove(text: &str, path: &[&str], key: &str) -> Result<Option<String>, JsonTextError> {
    if check(text)?.is_none() {
        return Ok(None);
    }
    let Some(mut object) = object_at(text, 0)? else {
        return Ok(None);
    };
    for name in path {
        let Some((_, member)) = object.member(name) else {
            return Ok(None);
        };
        let Some(inner) = object_at(text, member.value_start)? else {
            return Ok(None);
        };
        object = inner;
    }
    let Some((index, member)) = object.member(key) else {
        return Ok(None);
    };
    let bytes = text.as_bytes();
    let mut scan = Scan {
        text,
        pos: member.value_end,
    };
    scan.trivia();
    let comma_after = (scan.byte() == Some(b',')).then_some(scan.pos);
    let own_line = line_indent(text, member.key_start).map(|lead| member.key_start - lead.len());
    if let Some(comma) = comma_after {
        // Take the member and the comma after it; on a line of its own, the whole line.
        let mut end = comma + 1;
        let start = match own_line {
            Some(line_start) => {
                let rest = &text[end..];
                let blanks = rest.len() - rest.trim_start_matches([' ', '\t']).len();
                if bytes.get(end + blanks) == Some(&b'\n') {
                    end += blanks + 1;
                }
                line_start
            }
            None => {
                let rest = &text[end..];
                end += rest.len() - rest.trim_start_matches([' ', '\t']).len();
                member.key_start
            }
        };
        return Ok(Some(format!("{}{}", &text[..start], &text[end..])));
    }
    // The last member: take it, from the end of the line before when it has a line of its own, and
    // the comma that led to it.
    let start = match own_line {
        Some(line_start) if line_start > 0 => line_start - 1,
        _ => text[..member.key_start].trim_end_matches([' ', '\t']).len(),
    };
    if index == 0 {
        let interior_rest = format!(
            "{}{}",
            &text[object.open + 1..start],
            &text[member.value_end..object.close]
        );
        if interior_rest.trim().is_empty() {
            return Ok(Some(format!(
                "{}{}",
                &text[..=object.open],
                &text[object.close..]
            )));
        }
        return Ok(Some(format!(
            "{}{}",
            &text[..start],
            &text[member.value_end..]
        )));
    }
    let previous = &object.members[index - 1];
    let mut scan = Scan {
        text,
        pos: previous.value_end,
    };
    scan.trivia();
    if scan.byte() != Some(b',') {
        return Err(scan.error("expected `,` between members"));
    }
    let comma = scan.pos;
    Ok(Some(format!(
        "{}{}{}",
        &text[..comma],
        &text[comma + 1..start],
        &text[member.value_end..]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Fragment {
        Fragment::Object(vec![
            ("command".into(), Fragment::Leaf(json!("/bin/sp"))),
            ("args".into(), Fragment::Leaf(json!(["mcp"]))),
        ])
    }

    fn set_ours(text: &str) -> String {
        set(text, &["mcpServers"], "screenpilot", &entry()).expect("set")
    }

    fn remove_ours(text: &str) -> Option<String> {
        remove(text, &["mcpServers"], "screenpilot").expect("remove")
    }

    #[test]
    fn an_empty_file_gets_the_whole_document() {
        let want = "{\n  \"mcpServers\": {\n    \"screenpilot\": {\n      \"command\": \"/bin/sp\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}\n";
        assert_eq!(set_ours(""), want);
        assert_eq!(set_ours("\n  \n"), want);
        assert_eq!(set_ours("// mine\n"), format!("// mine\n{want}"));
    }

    #[test]
    fn an_entry_goes_after_the_others_laid_out_as_they_are_and_comes_out_byte_for_byte() {
        let before = "{\n    // my servers\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"} // keep\n    },\n    \"theme\": \"dark\",\n}\n";
        let after = set_ours(before);
        assert_eq!(
            after,
            "{\n    // my servers\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"},\n        \"screenpilot\": {\n            \"command\": \"/bin/sp\",\n            \"args\": [\"mcp\"]\n        } // keep\n    },\n    \"theme\": \"dark\",\n}\n"
        );
        assert_eq!(remove_ours(&after).as_deref(), Some(before));
        let one_line = "{\"mcpServers\": {\"a\": {}}, \"b\": [1, 2]}";
        let after = set_ours(one_line);
        assert_eq!(
            after,
            "{\"mcpServers\": {\"a\": {}, \"screenpilot\": {\"command\": \"/bin/sp\", \"args\": [\"mcp\"]}}, \"b\": [1, 2]}"
        );
        assert_eq!(remove_ours(&after).as_deref(), Some(one_line));
    }

    #[test]
    fn a_missing_server_list_is_added_to_the_top_object_and_an_empty_one_filled() {
        let before = "{\n\t\"theme\": \"dark\"\n}";
        let after = set_ours(before);
        assert_eq!(
            after,
            "{\n\t\"theme\": \"dark\",\n\t\"mcpServers\": {\n\t\t\"screenpilot\": {\n\t\t\t\"command\": \"/bin/sp\",\n\t\t\t\"args\": [\"mcp\"]\n\t\t}\n\t}\n}"
        );
        let empty = "{\n  \"mcpServers\": {}\n}\n";
        let after = set_ours(empty);
        assert_eq!(
            after,
            "{\n  \"mcpServers\": {\n    \"screenpilot\": {\n      \"command\": \"/bin/sp\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}\n"
        );
        assert_eq!(remove_ours(&after).as_deref(), Some(empty));
        assert_eq!(set_ours("{}"), "{\n  \"mcpServers\": {\n    \"screenpilot\": {\n      \"command\": \"/bin/sp\",\n      \"args\": [\"mcp\"]\n    }\n  }\n}");
    }

    #[test]
    fn a_value_is_replaced_in_place_and_the_members_around_it_stay() {
        let before = "{\"mcpServers\": {\n  \"screenpilot\": {\"command\": \"old\", \"env\": {\"A\": \"1\"}},\n  \"z\": 1\n}}";
        let after = set(
            before,
            &["mcpServers", "screenpilot"],
            "command",
            &Fragment::Leaf(json!("/bin/sp")),
        )
        .expect("set");
        assert_eq!(
            after,
            "{\"mcpServers\": {\n  \"screenpilot\": {\"command\": \"/bin/sp\", \"env\": {\"A\": \"1\"}},\n  \"z\": 1\n}}"
        );
        let removed = remove_ours(&after).expect("there");
        assert_eq!(removed, "{\"mcpServers\": {\n  \"z\": 1\n}}");
    }

    #[test]
    fn a_member_comes_out_of_any_place_with_its_comma_and_line() {
        let first = "{\n  \"mcpServers\": {\n    \"screenpilot\": {},\n    \"b\": 2\n  }\n}";
        assert_eq!(
            remove_ours(first).as_deref(),
            Some("{\n  \"mcpServers\": {\n    \"b\": 2\n  }\n}")
        );
        let only = "{\"mcpServers\": { \"screenpilot\": {} }}";
        assert_eq!(remove_ours(only).as_deref(), Some("{\"mcpServers\": {}}"));
        let inline_first = "{\"mcpServers\": {\"screenpilot\": 1, \"b\": 2}}";
        assert_eq!(
            remove_ours(inline_first).as_deref(),
            Some("{\"mcpServers\": {\"b\": 2}}")
        );
        assert_eq!(remove_ours("{\"mcpServers\": {\"b\": 2}}"), None);
        assert_eq!(remove_ours("{}"), None);
        assert_eq!(remove_ours(""), None);
    }

    #[test]
    fn text_that_is_not_json_is_refused_with_its_line_and_column() {
        let error = check("{\n  \"a\": 1\n  \"b\": 2\n}").expect_err("no comma");
        assert!(
            matches!(
                error,
                JsonTextError::Syntax {
                    line: 3,
                    column: 3,
                    ..
                }
            ),
            "{error:?}"
        );
        assert!(error
            .to_string()
            .starts_with("not valid JSON at line 3, column 3"));
        // A comment that looks like a string, a string that looks like a comment.
        assert!(check("{\"a\": \"//x\", /* \" */ \"b\": [1,],}").is_ok());
    }

    #[test]
    fn an_object_expected_where_there_is_none_is_named() {
        let error = set("[1]", &["mcpServers"], "screenpilot", &entry()).expect_err("array");
        assert_eq!(error.to_string(), "the top level is not a JSON object");
        let error = set(
            "{\"mcpServers\": []}",
            &["mcpServers"],
            "screenpilot",
            &entry(),
        )
        .expect_err("array");
        assert_eq!(error.to_string(), "mcpServers is not a JSON object");
    }

    #[test]
    fn a_value_with_comments_inside_is_not_replaced() {
        let before = "{\"mcpServers\": {\"screenpilot\": {\n  // mine\n  \"command\": \"old\"\n}}}";
        let error = set(before, &["mcpServers"], "screenpilot", &entry()).expect_err("comments");
        assert_eq!(
            error,
            JsonTextError::CommentsInside {
                key: "mcpServers.screenpilot".into(),
                line: 1
            }
        );
    }
}
