//! Every operation without a verb of its own is still a verb: its name (`wait-for` or `wait_for`)
//! with one flag per parameter, read from the parameters' own schema: `--sid sh --pattern '\$ $'`.
//! A flag of a number, a list or a table takes JSON (`--times 2`, `--keys '["Down"]'`); a yes/no
//! parameter is a bare flag. So an operation added to `ops/` is on the command line with nothing
//! written here, and `screenpilot NAME --help` lists what it takes.

use clap::{Arg, ArgAction, Command};
use serde_json::{Map, Value};

use crate::ops::{self, OpError, OperationDef};

/// The operation `words` (the verb, then its arguments) asks for, with its parameters; or clap's
/// error, which the CLI shows as it shows any other bad argument (`--help` is one: it prints help).
pub fn parse(words: &[String]) -> Result<(String, Value), clap::Error> {
    use clap::error::ErrorKind;
    let verb = words.first().map(String::as_str).unwrap_or_default();
    let Ok(op) = ops::find(&verb.replace('-', "_")) else {
        let known: Vec<&str> = ops::OPERATIONS.iter().map(|op| op.name).collect();
        return Err(clap::Error::raw(
            ErrorKind::InvalidSubcommand,
            format!(
                "unrecognized subcommand '{verb}': neither a verb nor an operation (operations: {})\n",
                known.join(", ")
            ),
        ));
    };
    let schema = (op.params_schema)();
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let matches = command(op, verb, &schema).try_get_matches_from(words)?;
    let mut params = Map::new();
    for (name, property) in &properties {
        if takes_json(property) == Kind::Flag {
            if matches.get_flag(name) {
                params.insert(name.clone(), Value::Bool(true));
            }
            continue;
        }
        let Some(text) = matches.get_one::<String>(name) else {
            continue;
        };
        let value = match takes_json(property) {
            Kind::Text => Value::String(text.clone()),
            _ => serde_json::from_str(text).map_err(|e| {
                clap::Error::raw(
                    ErrorKind::ValueValidation,
                    format!("--{}: {text:?} is not JSON ({e})\n", name.replace('_', "-")),
                )
            })?,
        };
        params.insert(name.clone(), value);
    }
    Ok((op.name.to_owned(), Value::Object(params)))
}

/// [`parse`]'s error as the operation error a library caller gets: clap's words without its usage
/// lines ("the following required arguments were not provided: --text <TEXT>").
pub fn plan(words: &[String]) -> Result<(String, Value), OpError> {
    parse(words).map_err(|e| {
        let text = e.render().to_string();
        let said: Vec<&str> = text
            .lines()
            .take_while(|l| !l.starts_with("Usage:"))
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let said = said.join(" ");
        OpError::invalid("arguments", said.trim_start_matches("error: ").to_owned())
    })
}

#[derive(PartialEq)]
enum Kind {
    Flag,
    Text,
    Json,
}

/// How a parameter is written on the command line, from its schema.
fn takes_json(property: &Value) -> Kind {
    let types: Vec<&str> = match &property["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(list) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let types: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
    match types[..] {
        ["boolean"] => Kind::Flag,
        ["string"] => Kind::Text,
        _ => Kind::Json,
    }
}

/// The clap command of an operation's verb.
fn command(op: &OperationDef, verb: &str, schema: &Value) -> Command {
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut command = Command::new(verb.to_owned())
        .about(op.description)
        .after_help(
            "Flags of numbers, lists and tables take JSON; see the MCP tool of the same name.",
        );
    let properties = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for (name, property) in properties {
        let help = property["description"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let arg = Arg::new(name.clone())
            .long(name.replace('_', "-"))
            .help(help);
        command = command.arg(match takes_json(&property) {
            Kind::Flag => arg.action(ArgAction::SetTrue),
            Kind::Text => arg
                .value_name("TEXT")
                .required(required.contains(&name.as_str())),
            Kind::Json => arg
                .value_name("JSON")
                .required(required.contains(&name.as_str())),
        });
    }
    command
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    /// An operation added in a test module (`ops/probe.rs`) is a verb with flags from its schema.
    #[test]
    fn an_operation_without_a_verb_of_its_own_is_one_by_its_name() {
        let planned = plan(&words(&[
            "probe", "--sid", "sh", "--text", "hi", "--times", "2",
        ]))
        .expect("a plan");
        assert_eq!(planned.0, "probe");
        assert_eq!(planned.1, json!({"sid": "sh", "text": "hi", "times": 2}));
        // Dashes or underscores; a bare flag for yes/no; JSON for lists.
        let planned = plan(&words(&[
            "wait-for",
            "--sid",
            "a",
            "--pattern",
            "x",
            "--scrollback",
        ]))
        .expect("a plan");
        assert_eq!(planned.0, "wait_for");
        assert_eq!(planned.1["scrollback"], json!(true));
        let planned =
            plan(&words(&["send_keys", "--sid", "a", "--keys", "[\"Down\"]"])).expect("a plan");
        assert_eq!(planned.1["keys"], json!(["Down"]));
    }

    #[test]
    fn a_missing_or_bad_flag_and_an_unknown_verb_are_named() {
        let said = |list: &[&str]| plan(&words(list)).expect_err("refused").message;
        let message = said(&["probe", "--sid", "sh"]);
        assert!(
            message.contains("required") && message.contains("--text"),
            "{message}"
        );
        let message = said(&["probe", "--sid", "sh", "--text", "a", "--times", "two"]);
        assert!(
            message.contains("--times: \"two\" is not JSON"),
            "{message}"
        );
        let message = said(&["frobnicate"]);
        assert!(
            message.contains("unrecognized subcommand 'frobnicate'"),
            "{message}"
        );
        assert!(message.contains("probe"), "{message}");
    }
}
