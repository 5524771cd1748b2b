//! What install puts in one file, and how it is put in, found and taken out again: an entry in a
//! JSON server list, a table in a TOML one, a section of an instructions file, or a whole file.

use serde_json::Value;

use super::error::Problem;
use super::jsonc::{self, Fragment};
use super::{section, toml_table};

/// The name screenpilot's entries go by.
pub const NAME: &str = "screenpilot";

/// What install puts in one file.
#[derive(Debug, Clone, PartialEq)]
pub enum Edit {
    /// Our member of a JSON object: `servers` are the keys from the top to the object holding the
    /// servers (`["mcpServers"]`), `fields` our entry's, in the order they are written.
    Json {
        servers: &'static [&'static str],
        fields: Vec<(String, Value)>,
    },
    /// Our table in a TOML document: `[servers.screenpilot]` with `command` and `args`.
    Toml {
        servers: &'static str,
        command: String,
        args: Vec<String>,
    },
    /// Our section of a Markdown file, marker lines included.
    Section { text: String },
    /// A file that is ours whole.
    File { contents: String },
}

/// Whether ours is in a file, and how.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    Absent,
    /// There; `as_written` is the edit that would have written exactly what is there (its values),
    /// when it has nothing install does not write (a key of the person's own in our entry).
    Present {
        as_written: Option<Edit>,
    },
}

impl Edit {
    /// What it is, for people: "the MCP server entry mcpServers.screenpilot".
    pub fn describe(&self) -> String {
        match self {
            Edit::Json { servers, .. } => {
                format!("the MCP server entry {}.{NAME}", servers.join("."))
            }
            Edit::Toml { servers, .. } => format!("the MCP server table [{servers}.{NAME}]"),
            Edit::Section { .. } => "screenpilot's section (between its marker comments)".into(),
            Edit::File { .. } => "screenpilot's skill".into(),
        }
    }

    /// Ours as a person would add it by hand.
    pub fn by_hand(&self) -> String {
        match self {
            Edit::Json { servers, fields } => {
                let entry = Fragment::Object(vec![(NAME.into(), entry_fragment(fields))]);
                let document = servers.iter().rev().fold(entry, |inner, name| {
                    Fragment::Object(vec![((*name).to_owned(), inner)])
                });
                document.pretty("", "  ")
            }
            Edit::Toml {
                servers,
                command,
                args,
            } => {
                let mut doc = toml_edit::DocumentMut::new();
                let _ = toml_table::set(&mut doc, servers, NAME, &toml_fields(command, args));
                doc.to_string()
            }
            Edit::Section { text } => text.clone(),
            Edit::File { contents } => contents.clone(),
        }
    }

    /// `current` (`None`: no such file) with ours in it. The same text when ours is there already as
    /// this edit writes it.
    pub fn apply(&self, current: Option<&str>) -> Result<String, Problem> {
        let text = current.unwrap_or("");
        match self {
            Edit::Json { servers, fields } => {
                let value = jsonc::check(text)?;
                let mut path: Vec<&str> = servers.to_vec();
                let ours = value.as_ref().and_then(|v| lookup(v, servers)?.get(NAME));
                let out = match ours {
                    // Our entry is there: set our fields one by one, so a key the person added
                    // to it (an `env` block) stays.
                    Some(Value::Object(entry)) => {
                        path.push(NAME);
                        let mut out = text.to_owned();
                        for (key, value) in fields {
                            if entry.get(key) != Some(value) {
                                let leaf = Fragment::Leaf(value.clone());
                                out = jsonc::set(&out, &path, key, &leaf)?;
                            }
                        }
                        out
                    }
                    _ => jsonc::set(text, &path, NAME, &entry_fragment(fields))?,
                };
                // The result must read back with our entry in it; anything else is our bug, and
                // nothing is written.
                let value = jsonc::check(&out)?.unwrap_or_default();
                let ours = lookup(&value, servers).and_then(|list| list.get(NAME));
                if !ours.is_some_and(|entry| has_fields(entry, fields)) {
                    return Err(Problem::Internal(format!(
                        "adding {} did not read back",
                        self.describe()
                    )));
                }
                Ok(out)
            }
            Edit::Toml {
                servers,
                command,
                args,
            } => {
                let mut doc = toml_table::parse(text)?;
                let there = toml_table::get(&doc, servers, NAME).map(toml_entry);
                if there
                    .is_some_and(|(c, a)| c.as_ref() == Some(command) && a.as_ref() == Some(args))
                {
                    return Ok(text.to_owned());
                }
                toml_table::set(&mut doc, servers, NAME, &toml_fields(command, args))?;
                Ok(doc.to_string())
            }
            Edit::Section { text: ours } => Ok(section::set(text, ours)),
            Edit::File { contents } => Ok(contents.clone()),
        }
    }

    /// Whether ours is in `current`, and as what.
    pub fn found(&self, current: &str) -> Result<Found, Problem> {
        Ok(match self {
            Edit::Json { servers, fields } => {
                let value = jsonc::check(current)?;
                match value.as_ref().and_then(|v| lookup(v, servers)?.get(NAME)) {
                    None => Found::Absent,
                    Some(entry) => {
                        let as_written = entry.as_object().and_then(|map| {
                            let keys_match = map.len() == fields.len()
                                && fields.iter().all(|(k, _)| map.contains_key(k));
                            keys_match.then(|| Edit::Json {
                                servers,
                                fields: fields
                                    .iter()
                                    .map(|(k, _)| (k.clone(), map[k].clone()))
                                    .collect(),
                            })
                        });
                        Found::Present { as_written }
                    }
                }
            }
            Edit::Toml { servers, .. } => {
                let doc = toml_table::parse(current)?;
                match toml_table::get(&doc, servers, NAME) {
                    None => Found::Absent,
                    Some(table) => {
                        let (command, args) = toml_entry(table);
                        let as_written = match (command, args, table.len()) {
                            (Some(command), Some(args), 2) => Some(Edit::Toml {
                                servers,
                                command,
                                args,
                            }),
                            _ => None,
                        };
                        Found::Present { as_written }
                    }
                }
            }
            Edit::Section { .. } => match section::get(current) {
                None => Found::Absent,
                Some(text) => Found::Present {
                    as_written: Some(Edit::Section { text: text.into() }),
                },
            },
            Edit::File { .. } => Found::Present {
                as_written: Some(Edit::File {
                    contents: current.into(),
                }),
            },
        })
    }

    /// `current` without ours (`None`: nothing of ours left in a file that is ours whole).
    pub fn strip(&self, current: &str) -> Result<Option<String>, Problem> {
        Ok(match self {
            Edit::Json { servers, .. } => {
                let out = jsonc::remove(current, servers, NAME)?.unwrap_or_else(|| current.into());
                if out != current && jsonc::check(&out).is_err() {
                    return Err(Problem::Internal(format!(
                        "taking out {} left a file that does not read",
                        self.describe()
                    )));
                }
                Some(out)
            }
            Edit::Toml { servers, .. } => {
                let mut doc = toml_table::parse(current)?;
                toml_table::remove(&mut doc, servers, NAME);
                Some(doc.to_string())
            }
            Edit::Section { .. } => {
                Some(section::remove(current).unwrap_or_else(|| current.into()))
            }
            Edit::File { .. } => None,
        })
    }
}

/// The object `path` leads to from `value`.
fn lookup<'v>(value: &'v Value, path: &[&str]) -> Option<&'v serde_json::Map<String, Value>> {
    path.iter()
        .try_fold(value, |v, key| v.get(key))?
        .as_object()
}

/// `entry` holds each of `fields` with its value.
fn has_fields(entry: &Value, fields: &[(String, Value)]) -> bool {
    fields.iter().all(|(k, v)| entry.get(k) == Some(v))
}

fn entry_fragment(fields: &[(String, Value)]) -> Fragment {
    Fragment::Object(
        fields
            .iter()
            .map(|(k, v)| (k.clone(), Fragment::Leaf(v.clone())))
            .collect(),
    )
}

/// The `command` and `args` of a server table, when they are a string and a list of strings.
fn toml_entry(table: &dyn toml_edit::TableLike) -> (Option<String>, Option<Vec<String>>) {
    let command = table
        .get("command")
        .and_then(|item| item.as_str())
        .map(str::to_owned);
    let args = table
        .get("args")
        .and_then(|item| item.as_array())
        .and_then(|array| {
            array
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect()
        });
    (command, args)
}

fn toml_fields(command: &str, args: &[String]) -> Vec<(&'static str, toml_edit::Value)> {
    let args: toml_edit::Array = args.iter().map(String::as_str).collect();
    vec![
        ("command", toml_edit::Value::from(command)),
        ("args", toml_edit::Value::Array(args)),
    ]
}
