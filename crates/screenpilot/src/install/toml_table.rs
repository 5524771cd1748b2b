//! screenpilot's table in a TOML document (Codex's `[mcp_servers.screenpilot]`), set or taken out
//! with toml_edit, which keeps every other byte: comments, order, spacing and quoting.

use toml_edit::{DocumentMut, Item, Table, TableLike, Value};

/// Text that is not TOML, or not shaped as a server table can be added to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TomlTextError {
    #[error("not valid TOML at line {line}, column {column} ({message})")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{what} is not a table")]
    NotATable { what: String },
}

/// The document in `text`.
pub fn parse(text: &str) -> Result<DocumentMut, TomlTextError> {
    text.parse::<DocumentMut>().map_err(|e| {
        let at = e.span().map_or(0, |span| span.start).min(text.len());
        let before = &text[..at];
        TomlTextError::Syntax {
            line: before.matches('\n').count() + 1,
            column: before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1,
            message: e.message().trim().to_owned(),
        }
    })
}

/// The table `servers.name` (e.g. `mcp_servers.screenpilot`), when there is one.
pub fn get<'d>(doc: &'d DocumentMut, servers: &str, name: &str) -> Option<&'d dyn TableLike> {
    doc.get(servers)?
        .as_table_like()?
        .get(name)?
        .as_table_like()
}

/// Set `fields` in the table `servers.name`, making the tables that are missing (`servers` as an
/// implicit table: no `[mcp_servers]` header of its own). A field already there gets the new value
/// with its spacing and comment kept; the table's other fields stay.
pub fn set(
    doc: &mut DocumentMut,
    servers: &str,
    name: &str,
    fields: &[(&str, Value)],
) -> Result<(), TomlTextError> {
    let root = doc.as_table_mut();
    if !root.contains_key(servers) {
        let mut table = Table::new();
        table.set_implicit(true);
        root.insert(servers, Item::Table(table));
    }
    // `mcp_servers = { ... }` on one line: ours must be written inline too.
    let inline = matches!(root.get(servers), Some(Item::Value(_)));
    let list = root
        .get_mut(servers)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| TomlTextError::NotATable {
            what: servers.to_owned(),
        })?;
    if !list.contains_key(name) {
        let item = if inline {
            Item::Value(Value::InlineTable(Default::default()))
        } else {
            Item::Table(Table::new())
        };
        list.insert(name, item);
    }
    let ours = list
        .get_mut(name)
        .and_then(Item::as_table_like_mut)
        .ok_or_else(|| TomlTextError::NotATable {
            what: format!("{servers}.{name}"),
        })?;
    for (key, value) in fields {
        let mut value = value.clone();
        if let Some(old) = ours.get(key).and_then(Item::as_value) {
            *value.decor_mut() = old.decor().clone();
        }
        ours.insert(key, Item::Value(value));
    }
    Ok(())
}

/// Take out the table `servers.name`; false when it was not there.
pub fn remove(doc: &mut DocumentMut, servers: &str, name: &str) -> bool {
    doc.get_mut(servers)
        .and_then(Item::as_table_like_mut)
        .and_then(|list| list.remove(name))
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Vec<(&'static str, Value)> {
        let args: toml_edit::Array = ["mcp"].into_iter().collect();
        vec![
            ("command", Value::from("/bin/sp")),
            ("args", Value::Array(args)),
        ]
    }

    #[test]
    fn a_table_goes_in_beside_the_others_and_comes_out_leaving_every_byte() {
        let before = "# my codex\nmodel = \"o3\"  # fast\n\n[mcp_servers.other]\ncommand = 'x'\n\n[profiles.a]\nmodel = \"o4\"\n";
        let mut doc = parse(before).expect("parse");
        set(&mut doc, "mcp_servers", "screenpilot", &fields()).expect("set");
        let after = doc.to_string();
        assert_eq!(
            after,
            "# my codex\nmodel = \"o3\"  # fast\n\n[mcp_servers.other]\ncommand = 'x'\n\n[mcp_servers.screenpilot]\ncommand = \"/bin/sp\"\nargs = [\"mcp\"]\n\n[profiles.a]\nmodel = \"o4\"\n"
        );
        let mut doc = parse(&after).expect("parse");
        assert!(remove(&mut doc, "mcp_servers", "screenpilot"));
        assert_eq!(doc.to_string(), before);
        assert!(!remove(&mut doc, "mcp_servers", "screenpilot"));
    }

    #[test]
    fn a_value_changes_in_place_keeping_its_comment_and_the_keys_beside_it() {
        let before = "[mcp_servers.screenpilot]\ncommand = \"/old\" # built here\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n";
        let mut doc = parse(before).expect("parse");
        set(&mut doc, "mcp_servers", "screenpilot", &fields()).expect("set");
        assert_eq!(
            doc.to_string(),
            "[mcp_servers.screenpilot]\ncommand = \"/bin/sp\" # built here\nargs = [\"mcp\"]\nenv = { A = \"1\" }\n"
        );
    }

    #[test]
    fn an_inline_server_list_gets_an_inline_table() {
        let mut doc = parse("mcp_servers = { other = { command = \"x\" } }\n").expect("parse");
        set(&mut doc, "mcp_servers", "screenpilot", &fields()).expect("set");
        let text = doc.to_string();
        let back = parse(&text).expect("reads back");
        assert!(get(&back, "mcp_servers", "screenpilot").is_some(), "{text}");
        assert!(get(&back, "mcp_servers", "other").is_some(), "{text}");
    }

    #[test]
    fn text_that_is_not_toml_is_refused_with_its_line() {
        let error = parse("a = 1\nb = = 2\n").expect_err("bad");
        assert!(
            matches!(error, TomlTextError::Syntax { line: 2, .. }),
            "{error:?}"
        );
        let mut doc = parse("mcp_servers = 3\n").expect("parse");
        let error = set(&mut doc, "mcp_servers", "screenpilot", &fields()).expect_err("no table");
        assert_eq!(error.to_string(), "mcp_servers is not a table");
    }
}
