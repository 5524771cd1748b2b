//! Step files: what a test does, as a person would write it down. TOML, one `[[step]]` table per step:
//!
//! ```toml
//! name = "dialog picks Cherry"     # optional: the file's name otherwise
//! timeout_ms = 10000               # optional: each wait's and each expectation's limit
//!
//! [[step]]
//! spawn = "dialog --menu Fruit 12 40 4 1 Apple 2 Banana 3 Cherry"
//! size = "60x15"                   # and sid, cwd, env: as the spawn tool takes them
//! until = { regex = "Cherry" }     # as the send tool takes it
//!
//! [[step]]
//! keys = ["Down", "Down"]          # or text, line (text, then Enter), mouse
//! until = { visual = true }
//!
//! [[step]]
//! run = "make test"                # in a bash session: until the command ends
//!
//! [[step]]
//! expect = { row = 9, styled = '\[reverse\].*Cherry' }
//!
//! [[step]]
//! golden = "dialog.txt"            # or { file, mask = [[row, col, rows, cols]], tolerance }
//!
//! [[step]]                         # desktops: an element by its role and name, as snapshot prints it
//! act = { ref = 'check box "Dark mode"', do = "toggle" }
//!
//! [[step]]
//! expect = { element = { role = "check box", name = "^Dark mode$", state = "checked" } }
//! ```
//!
//! Every error names the file, the line of the step, and the field: a file is checked whole before
//! anything runs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::ops::kit::step_table::{StepTable, ACT_FIELDS};

/// Each wait's and each expectation's limit when the file says none.
pub const DEFAULT_TIMEOUT: Duration =
    Duration::from_millis(crate::ops::kit::until::DEFAULT_TIMEOUT_MS);

/// Something wrong with a step file: where, which field, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: {field}: {message}", path.display())]
pub struct FileError {
    pub path: PathBuf,
    pub line: usize,
    pub field: String,
    pub message: String,
}

/// A step file, checked.
#[derive(Debug, Clone)]
pub struct StepFile {
    pub path: PathBuf,
    pub name: String,
    pub timeout: Duration,
    pub steps: Vec<Step>,
}

/// One step: which session it acts on, and what it does.
#[derive(Debug, Clone)]
pub struct Step {
    /// The line of its `[[step]]`, 1-based.
    pub line: usize,
    /// The session; none: the last one started.
    pub sid: Option<String>,
    pub timeout: Option<Duration>,
    pub action: Action,
}

/// What a step does.
#[derive(Debug, Clone)]
pub enum Action {
    /// Start a terminal program: the spawn tool's parameters (`cmd`, `cols`, `rows`, `cwd`, `env`,
    /// `until`).
    Spawn(serde_json::Map<String, Value>),
    /// Input and a condition: the send tool's parameters (`text`, `keys`, `mouse`, `until`).
    Send(serde_json::Map<String, Value>),
    /// A new terminal size.
    Resize { cols: u16, rows: u16 },
    /// A command line run in the session's bash, waited for until it ends (the run tool).
    Run(String),
    /// What the screen must show, each retried until it holds or the step's limit.
    Expect(Vec<Expectation>),
    /// The screen must equal a stored golden (written with `--update`).
    Golden(Golden),
    /// A Textual app, as the textual_run tool takes it; opened as a session named by the step's sid
    /// (default "app") unless it says otherwise.
    Textual(serde_json::Map<String, Value>),
    /// A desktop, as the desktop_start tool takes it.
    Desktop(serde_json::Map<String, Value>),
    /// Computer actions, as the computer tool takes `actions`.
    Computer(Vec<Value>),
    /// An action on a desktop element, as the act tool takes it (`ref`, `do`, `text`, `to`, `until`).
    Act(serde_json::Map<String, Value>),
    /// End the session.
    Close,
    /// Any other operation, by its name, with its parameters (the step's sid added).
    Op {
        name: String,
        params: serde_json::Map<String, Value>,
    },
}

/// One thing a person checks, and where.
#[derive(Debug, Clone, PartialEq)]
pub enum Expectation {
    /// A regex that must match the screen text (or a row of it, or a region).
    Text { regex: String, scope: Scope },
    /// A regex that must not match.
    Absent { regex: String, scope: Scope },
    /// A regex over the styled text (`[reverse]Banana[/]`).
    Styled { regex: String, scope: Scope },
    /// The cursor at `[row, col]`.
    Cursor { row: u16, col: u16 },
    /// The program ended with this status.
    ExitCode(i32),
    /// A regex over the terminal's title, or over a desktop's window titles.
    Title(String),
    /// A desktop element that must be there (or, `present: false`, not): the act tool's
    /// `until.appears` (`until.gone`) table, `{role, name (a regex), state}`.
    Element {
        find: serde_json::Map<String, Value>,
        present: bool,
    },
    /// A Textual widget's state: the fields given must equal the query's (`value`, `label`, ...).
    Widget {
        selector: String,
        /// Which of the widgets the selector matches (0-based, in the query's order).
        nth: usize,
        state: serde_json::Map<String, Value>,
    },
}

/// Where an expectation looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    #[default]
    Screen,
    Row(u16),
    /// `[row, col, rows, cols]`.
    Region([u16; 4]),
}

/// A golden screen.
#[derive(Debug, Clone, PartialEq)]
pub struct Golden {
    /// Relative to the step file's directory.
    pub file: PathBuf,
    pub kind: GoldenKind,
    /// Cell regions `[row, col, rows, cols]` that may differ (a clock, a pid).
    pub masks: Vec<[u16; 4]>,
    /// PNG: the share of pixels allowed to differ (0 to 1).
    pub tolerance: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GoldenKind {
    Text,
    Styled,
    Png,
    Svg,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: Option<String>,
    timeout_ms: Option<u64>,
    #[serde(default)]
    step: Vec<toml::Spanned<toml::Table>>,
}

/// The largest step file read, in bytes: far more than any person or `save-test` writes.
pub const MAX_STEP_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// The text of a regular file of at most [`MAX_STEP_FILE_BYTES`]; why not, otherwise. Opened
/// without blocking, so a FIFO is refused rather than waited on.
fn read_bounded(path: &Path) -> Result<String, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read it: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err(
            "not a regular file (a step file is a TOML file; FIFOs, devices and sockets are refused)"
                .into(),
        );
    }
    if meta.len() > MAX_STEP_FILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_STEP_FILE_BYTES} a step file may be",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_STEP_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() as u64 > MAX_STEP_FILE_BYTES {
        return Err(format!(
            "more than the {MAX_STEP_FILE_BYTES} bytes a step file may be"
        ));
    }
    String::from_utf8(bytes).map_err(|e| format!("cannot read it: not UTF-8 text ({e})"))
}

impl StepFile {
    /// Read and check `path`: a regular file of at most [`MAX_STEP_FILE_BYTES`] (a FIFO would block
    /// the run, `/dev/zero` would fill memory).
    pub fn read(path: &Path) -> Result<StepFile, FileError> {
        let text = read_bounded(path).map_err(|message| FileError {
            path: path.to_owned(),
            line: 0,
            field: "file".into(),
            message,
        })?;
        StepFile::parse(path, &text)
    }

    /// Check `text`, the contents of `path`.
    pub fn parse(path: &Path, text: &str) -> Result<StepFile, FileError> {
        let line_of = |offset: usize| text[..offset.min(text.len())].matches('\n').count() + 1;
        let raw: Raw = toml::from_str(text).map_err(|e| FileError {
            path: path.to_owned(),
            line: e.span().map_or(0, |s| line_of(s.start)),
            field: "toml".into(),
            message: e.message().to_owned(),
        })?;
        let error = |line: usize, field: &str, message: String| FileError {
            path: path.to_owned(),
            line,
            field: field.to_owned(),
            message,
        };
        if raw.step.is_empty() {
            return Err(error(1, "step", "no [[step]] tables: nothing to do".into()));
        }
        let mut steps = Vec::with_capacity(raw.step.len());
        for spanned in &raw.step {
            let line = line_of(spanned.span().start);
            steps.push(
                step(spanned.get_ref(), line)
                    .map_err(|(field, message)| error(line, &field, message))?,
            );
        }
        if let Some(ms) = raw
            .timeout_ms
            .filter(|ms| *ms == 0 || *ms > MAX_TIMEOUT_MS as u64)
        {
            return Err(error(
                0,
                "timeout_ms",
                format!("a number of ms from 1 to {MAX_TIMEOUT_MS} (1 h), not {ms}"),
            ));
        }
        let name = raw.name.unwrap_or_else(|| {
            path.file_stem()
                .map_or_else(|| "steps".to_owned(), |s| s.to_string_lossy().into_owned())
        });
        Ok(StepFile {
            path: path.to_owned(),
            name,
            timeout: raw
                .timeout_ms
                .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
            steps,
        })
    }

    /// The directory relative paths in the file are taken from.
    pub fn dir(&self) -> PathBuf {
        self.path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_owned)
    }
}

type Bad = (String, String);

fn bad(field: &str, message: impl Into<String>) -> Bad {
    (field.to_owned(), message.into())
}

fn json(value: &toml::Value) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn string(table: &toml::Table, key: &str) -> Result<Option<String>, Bad> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(bad(key, format!("a string, not {}", other.type_str()))),
    }
}

fn step(table: &toml::Table, line: usize) -> Result<Step, Bad> {
    let fields = StepTable::fields();
    // A key that is no field of a step but an operation's name runs that operation.
    let mut table = table.clone();
    let mut op = None;
    let others: Vec<String> = table
        .keys()
        .filter(|k| !fields.contains(&k.as_str()))
        .cloned()
        .collect();
    for key in others {
        if crate::ops::find(&key).is_err() {
            return Err(bad(
                &key,
                format!(
                    "not a step field; a step has {}, or an operation's name with its parameters",
                    fields.join(", ")
                ),
            ));
        }
        let Some(Value::Object(params)) = table.remove(&key).map(|v| json(&v)) else {
            return Err(bad(&key, "a table of the operation's parameters"));
        };
        if let Some((first, _)) = &op {
            return Err(bad(
                &key,
                format!("one step does one thing: {first} and {key} are two steps"),
            ));
        }
        op = Some((key, params));
    }
    let mut t: StepTable = serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| bad(&e.path().to_string(), e.inner().to_string()))?;
    t.op = op;
    let kinds = t.actions();
    let kind = match kinds[..] {
        [one] => one,
        [] => {
            return Err(bad(
                "step",
                format!(
                    "says nothing to do; give one of {}, or an operation's name",
                    StepTable::ACTIONS.join(", ")
                ),
            ))
        }
        _ => {
            return Err(bad(
                kinds[1],
                format!(
                    "one step does one thing: {} and {} are two steps",
                    kinds[0], kinds[1]
                ),
            ))
        }
    };
    let timeout = match t.timeout_ms {
        None => None,
        Some(ms) if ms > 0 && ms <= MAX_TIMEOUT_MS as u64 => Some(Duration::from_millis(ms)),
        Some(ms) => {
            return Err(bad(
                "timeout_ms",
                format!("a number of ms from 1 to {MAX_TIMEOUT_MS} (1 h), not {ms}"),
            ))
        }
    };
    let until = t.until.clone();
    let action =
        if let Some(spawn) = t.spawn {
            let mut params = serde_json::Map::new();
            params.insert("cmd".into(), Value::String(spawn));
            if let Some(size) = &t.size {
                let (cols, rows) = size_of(size, "size")?;
                params.insert("cols".into(), cols.into());
                params.insert("rows".into(), rows.into());
            }
            params.extend(t.cwd.map(|cwd| ("cwd".to_owned(), cwd.into())));
            params.extend(t.env.map(|env| ("env".to_owned(), json!(env))));
            params.extend(until.map(|u| ("until".to_owned(), u)));
            Action::Spawn(params)
        } else if t.gives_input() || kind == StepTable::UNTIL {
            let mut params = serde_json::Map::new();
            if let Some(text) = t.line {
                if t.text.is_some() {
                    return Err(bad(
                        "line",
                        "give line (text, then Enter) or text, not both",
                    ));
                }
                params.insert("text".into(), text.into());
                let keys: Vec<String> = std::iter::once("Enter".to_owned())
                    .chain(t.keys.into_iter().flatten())
                    .collect();
                params.insert("keys".into(), json!(keys));
            } else {
                params.extend(t.text.map(|text| ("text".to_owned(), text.into())));
                params.extend(t.keys.map(|keys| ("keys".to_owned(), json!(keys))));
            }
            params.extend(t.mouse.map(|m| ("mouse".to_owned(), Value::Object(m))));
            // A secret by reference ({env = "VAR"} or {file = "PATH"}), read by the runner.
            params.extend(t.secret.map(|s| ("secret".to_owned(), json!(s))));
            params.extend(until.map(|u| ("until".to_owned(), u)));
            Action::Send(params)
        } else if let Some(size) = t.resize {
            let (cols, rows) = size_of(&size, StepTable::RESIZE)?;
            Action::Resize { cols, rows }
        } else if let Some(command) = t.run {
            Action::Run(command)
        } else if let Some(expect) = &t.expect {
            Action::Expect(expectations(&toml_of(expect))?)
        } else if let Some(golden_table) = &t.golden {
            Action::Golden(golden(&toml_of(golden_table))?)
        } else if let Some(params) = t.textual {
            Action::Textual(params)
        } else if let Some(params) = t.desktop {
            Action::Desktop(params)
        } else if let Some(actions) = t.computer {
            match actions {
                Value::Array(actions) => Action::Computer(actions),
                one @ Value::Object(_) => Action::Computer(vec![one]),
                _ => return Err(bad(
                    StepTable::COMPUTER,
                    "an action table or a list of them, e.g. { type = \"click\", x = 10, y = 20 }",
                )),
            }
        } else if let Some(params) = t.act {
            if let Some(key) = params.keys().find(|k| !ACT_FIELDS.contains(&k.as_str())) {
                return Err(bad(
                    &format!("{}.{key}", StepTable::ACT),
                    format!("not an act field; they are {}", ACT_FIELDS.join(", ")),
                ));
            }
            Action::Act(params)
        } else if t.close.is_some() {
            Action::Close
        } else if let Some((name, params)) = t.op {
            Action::Op { name, params }
        } else {
            return Err(bad(kind, "not a step"));
        };
    Ok(Step {
        line,
        sid: t.sid,
        timeout,
        action,
    })
}

/// A JSON value as the TOML it was read from (expectations and goldens are read from TOML).
fn toml_of(value: &Value) -> toml::Value {
    toml::Value::try_from(value).unwrap_or(toml::Value::Boolean(false))
}

/// The longest a step may wait, as a wait's `timeout_ms` may.
const MAX_TIMEOUT_MS: i64 = crate::ops::kit::until::MAX_TIMEOUT_MS as i64;

/// `COLSxROWS` within the terminal caps a spawn or a resize checks (the default limits), checked
/// with the file rather than when its step runs; errors name `field`.
fn size_of(text: &str, field: &'static str) -> Result<(u16, u16), Bad> {
    let parsed = text
        .to_lowercase()
        .split_once('x')
        .and_then(|(c, r)| Some((c.trim().parse().ok()?, r.trim().parse().ok()?)));
    let Some((cols, rows)) = parsed else {
        return Err(bad(
            field,
            format!("{text:?} is not COLSxROWS, e.g. \"80x24\""),
        ));
    };
    screenpilot_session::Limits::default()
        .check_size(screenpilot_screen::Size::new(cols, rows), field)
        .map_err(|e| bad(field, message_of(e)))?;
    Ok((cols, rows))
}

/// What a session check said, without the field it names (the step file names its own).
fn message_of(error: screenpilot_session::SessionError) -> String {
    match error {
        screenpilot_session::SessionError::Invalid { message, .. } => message,
        other => other.to_string(),
    }
}

/// `expect = {...}` or `expect = [{...}, ...]`.
fn expectations(value: &toml::Value) -> Result<Vec<Expectation>, Bad> {
    let tables: Vec<&toml::Table> = match value {
        toml::Value::Table(t) => vec![t],
        toml::Value::Array(items) => items
            .iter()
            .map(|v| {
                v.as_table().ok_or_else(|| {
                    bad(
                        StepTable::EXPECT,
                        "a list of tables, e.g. [{ text = \"ok\" }]",
                    )
                })
            })
            .collect::<Result<_, _>>()?,
        _ => {
            return Err(bad(
                StepTable::EXPECT,
                "a table, e.g. { text = \"^42$\" }, or a list of them",
            ))
        }
    };
    tables.into_iter().map(expectation).collect()
}

const EXPECT_KEYS: &[&str] = &[
    "text",
    "absent",
    "styled",
    "row",
    "region",
    "cursor",
    "exit_code",
    "title",
    "widget",
    "nth",
    "state",
    "element",
    "no_element",
];

/// Check a regex as waits check theirs (size of the pattern and of its compiled form), so an
/// expectation never takes one a wait would refuse; the message says why.
fn wait_regex(text: &str) -> Result<(), String> {
    let limits = screenpilot_session::Limits::default();
    screenpilot_session::wait::compile(text, "regex", &limits)
        .map(|_| ())
        .map_err(message_of)
}

fn cells(value: &toml::Value, field: &str, n: usize) -> Result<Vec<u16>, Bad> {
    let numbers: Option<Vec<u16>> = value.as_array().filter(|a| a.len() == n).and_then(|a| {
        a.iter()
            .map(|v| v.as_integer().and_then(|i| u16::try_from(i).ok()))
            .collect()
    });
    numbers.ok_or_else(|| bad(field, format!("{n} numbers (cells, 0-based), not {value}")))
}

fn expectation(table: &toml::Table) -> Result<Expectation, Bad> {
    if let Some(unknown) = table.keys().find(|k| !EXPECT_KEYS.contains(&k.as_str())) {
        return Err(bad(
            &format!("expect.{unknown}"),
            format!(
                "not an expectation field; they are {}",
                EXPECT_KEYS.join(", ")
            ),
        ));
    }
    let scope = match (table.get("row"), table.get("region")) {
        (Some(_), Some(_)) => return Err(bad("expect.region", "give row or region, not both")),
        (Some(row), None) => Scope::Row(
            row.as_integer()
                .and_then(|r| u16::try_from(r).ok())
                .ok_or_else(|| bad("expect.row", format!("a row number (0-based), not {row}")))?,
        ),
        (None, Some(region)) => {
            let r = cells(region, "expect.region", 4)?;
            Scope::Region([r[0], r[1], r[2], r[3]])
        }
        (None, None) => Scope::Screen,
    };
    let regex = |key: &str| -> Result<Option<String>, Bad> {
        let Some(value) = table.get(key) else {
            return Ok(None);
        };
        let text = value
            .as_str()
            .ok_or_else(|| bad(&format!("expect.{key}"), "a regex string"))?;
        wait_regex(text).map_err(|e| bad(&format!("expect.{key}"), e))?;
        Ok(Some(text.to_owned()))
    };
    let mut found = Vec::new();
    if let Some(r) = regex("text")? {
        found.push(Expectation::Text { regex: r, scope });
    }
    if let Some(r) = regex("absent")? {
        found.push(Expectation::Absent { regex: r, scope });
    }
    if let Some(r) = regex("styled")? {
        found.push(Expectation::Styled { regex: r, scope });
    }
    if let Some(r) = regex("title")? {
        found.push(Expectation::Title(r));
    }
    if let Some(cursor) = table.get("cursor") {
        let c = cells(cursor, "expect.cursor", 2)?;
        found.push(Expectation::Cursor {
            row: c[0],
            col: c[1],
        });
    }
    if let Some(code) = table.get("exit_code") {
        let code = code
            .as_integer()
            .and_then(|c| i32::try_from(c).ok())
            .ok_or_else(|| bad("expect.exit_code", format!("a number, not {code}")))?;
        found.push(Expectation::ExitCode(code));
    }
    for (key, present) in [("element", true), ("no_element", false)] {
        if let Some(value) = table.get(key) {
            found.push(Expectation::Element {
                find: element(value, key)?,
                present,
            });
        }
    }
    if let Some(selector) = string(table, "widget").map_err(|(_, m)| bad("expect.widget", m))? {
        let Some(Value::Object(state)) = table.get("state").map(json) else {
            return Err(bad(
                "expect.state",
                "a table of the widget's fields to check, e.g. { value = \"alice\" }",
            ));
        };
        let nth = match table.get("nth") {
            None => 0,
            Some(n) => n
                .as_integer()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| bad("expect.nth", format!("a 0-based index, not {n}")))?,
        };
        found.push(Expectation::Widget {
            selector,
            nth,
            state,
        });
    } else if table.contains_key("state") {
        return Err(bad("expect.state", "goes with widget = \"SELECTOR\""));
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(bad(
            StepTable::EXPECT,
            "says nothing to check: give text, absent, styled, cursor, exit_code, title, widget, element or no_element",
        )),
        _ => Err(bad(
            StepTable::EXPECT,
            "one check a table: put several in a list, expect = [{ ... }, { ... }]",
        )),
    }
    .and_then(|e| match (&e, scope) {
        (Expectation::Text { .. } | Expectation::Absent { .. } | Expectation::Styled { .. }, _)
        | (_, Scope::Screen) => Ok(e),
        _ => Err(bad(
            "expect.row",
            "row and region go with text, absent and styled",
        )),
    })
}

/// `element = { role = "button", name = "^OK$", state = "enabled" }`, checked as the act tool checks
/// its `until.appears`.
fn element(value: &toml::Value, key: &str) -> Result<serde_json::Map<String, Value>, Bad> {
    let field = format!("expect.{key}");
    let example =
        "a table of role, name (a regex), state, e.g. { role = \"button\", name = \"^OK$\" }";
    let Value::Object(find) = json(value) else {
        return Err(bad(&field, example));
    };
    if find.is_empty() {
        return Err(bad(&field, example));
    }
    for (name, v) in &find {
        let Some(text) = v.as_str() else {
            return Err(bad(&format!("{field}.{name}"), "a string"));
        };
        match name.as_str() {
            "role" => {}
            "name" => {
                wait_regex(text).map_err(|e| bad(&format!("{field}.name"), e))?;
            }
            "state" if screenpilot_a11y::state_named(text).is_none() => {
                return Err(bad(
                    &format!("{field}.state"),
                    format!("{text:?} is not one of {}", screenpilot_a11y::STATE_NAMES),
                ));
            }
            "state" => {}
            other => {
                return Err(bad(
                    &format!("{field}.{other}"),
                    "not an element field; they are role, name, state",
                ))
            }
        }
    }
    Ok(find)
}

fn golden(value: &toml::Value) -> Result<Golden, Bad> {
    let (file, table) = match value {
        toml::Value::String(file) => (file.clone(), None),
        toml::Value::Table(t) => (
            string(t, "file")
                .map_err(|(_, m)| bad("golden.file", m))?
                .ok_or_else(|| bad("golden.file", "the golden's path, e.g. \"menu.txt\""))?,
            Some(t),
        ),
        _ => {
            return Err(bad(
                "golden",
                "a path, or a table { file, kind, mask, tolerance }",
            ))
        }
    };
    let mut golden = Golden {
        kind: kind_of(&file),
        file: PathBuf::from(file),
        masks: Vec::new(),
        tolerance: 0.0,
    };
    if let Some(t) = table {
        if let Some(unknown) = t
            .keys()
            .find(|k| !["file", "kind", "mask", "tolerance"].contains(&k.as_str()))
        {
            return Err(bad(
                &format!("golden.{unknown}"),
                "not a golden field; they are file, kind, mask, tolerance",
            ));
        }
        if let Some(kind) = string(t, "kind").map_err(|(_, m)| bad("golden.kind", m))? {
            golden.kind = match kind.as_str() {
                "text" => GoldenKind::Text,
                "styled" => GoldenKind::Styled,
                "png" => GoldenKind::Png,
                "svg" => GoldenKind::Svg,
                other => {
                    return Err(bad(
                        "golden.kind",
                        format!("{other:?} is not text, styled, png or svg"),
                    ))
                }
            };
        }
        if let Some(masks) = t.get("mask") {
            let list = masks
                .as_array()
                .ok_or_else(|| bad("golden.mask", "a list of [row, col, rows, cols]"))?;
            for m in list {
                let r = cells(m, "golden.mask", 4)?;
                golden.masks.push([r[0], r[1], r[2], r[3]]);
            }
        }
        if let Some(tolerance) = t.get("tolerance") {
            let share = tolerance
                .as_float()
                .or_else(|| tolerance.as_integer().map(|i| i as f64));
            golden.tolerance = share.filter(|s| (0.0..=1.0).contains(s)).ok_or_else(|| {
                bad(
                    "golden.tolerance",
                    format!("a share of pixels from 0 to 1, not {tolerance}"),
                )
            })?;
        }
    }
    Ok(golden)
}

/// The kind a golden's file name says: `.png`, `.svg`, `.styled.txt`; text otherwise.
fn kind_of(file: &str) -> GoldenKind {
    if file.ends_with(".png") {
        GoldenKind::Png
    } else if file.ends_with(".svg") {
        GoldenKind::Svg
    } else if file.ends_with(".styled.txt") || file.ends_with(".styled") {
        GoldenKind::Styled
    } else {
        GoldenKind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<StepFile, FileError> {
        StepFile::parse(Path::new("t/menu.toml"), text)
    }

    #[test]
    fn a_file_reads_as_its_steps() {
        let file = parse(
            r#"
timeout_ms = 5000
[[step]]
spawn = "python3 -q"
size = "100x30"
until = { regex = '^>>> $' }

[[step]]
line = "6*7"
until = { regex = '^42$' }

[[step]]
expect = [{ text = "42", row = 1 }, { cursor = [2, 4] }]

[[step]]
golden = { file = "py.png", mask = [[0, 0, 1, 10]], tolerance = 0.01 }
"#,
        )
        .expect("a good file");
        assert_eq!(file.name, "menu");
        assert_eq!(file.timeout, Duration::from_millis(5000));
        assert_eq!(file.steps.len(), 4);
        assert_eq!(file.steps[1].line, 8);
        let Action::Spawn(spawn) = &file.steps[0].action else {
            panic!("spawn")
        };
        assert_eq!(
            (spawn["cols"].clone(), spawn["rows"].clone()),
            (100.into(), 30.into())
        );
        let Action::Send(send) = &file.steps[1].action else {
            panic!("send")
        };
        assert_eq!(send["keys"], serde_json::json!(["Enter"]));
        let Action::Expect(expect) = &file.steps[2].action else {
            panic!("expect")
        };
        assert_eq!(
            expect[0],
            Expectation::Text {
                regex: "42".into(),
                scope: Scope::Row(1)
            }
        );
        let Action::Golden(golden) = &file.steps[3].action else {
            panic!("golden")
        };
        assert_eq!(
            (golden.kind, golden.masks.clone(), golden.tolerance),
            (GoldenKind::Png, vec![[0, 0, 1, 10]], 0.01)
        );
    }

    #[test]
    fn errors_name_the_file_the_line_and_the_field() {
        let cases = [
            ("[[step]]\nbogus = 1\n", 1, "bogus"),
            (
                "[[step]]\nspawn = \"x\"\n\n[[step]]\nkeys = [\"a\"]\nresize = \"1x1\"\n",
                4,
                "resize",
            ),
            ("[[step]]\nexpect = { text = \"([\" }\n", 1, "expect.text"),
            (
                "[[step]]\nexpect = { row = 1, cursor = [1, 2] }\n",
                1,
                "expect.row",
            ),
            (
                "[[step]]\ngolden = { file = \"a.png\", tolerance = 2 }\n",
                1,
                "golden.tolerance",
            ),
            ("[[step]]\nspawn = \"x\"\nsize = \"big\"\n", 1, "size"),
            ("[[step]]\nsid = \"a\"\n", 1, "step"),
            ("[[step]\n", 1, "toml"),
            ("name = \"x\"\n", 1, "step"),
        ];
        for (text, line, field) in cases {
            let error = parse(text).expect_err(text);
            assert_eq!(
                (error.line, error.field.as_str()),
                (line, field),
                "{text:?}: {error}"
            );
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("t/menu.toml:{line}: {field}: ")),
                "{error}"
            );
        }
    }
}
