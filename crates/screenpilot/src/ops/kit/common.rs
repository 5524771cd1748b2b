//! What every operation shares, below the dispatch in `mod.rs`: the daemon context, progress
//! reporting, the caller's circumstances, and parameter parsing. The error type is in `error.rs`.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use screenpilot_desktop::DesktopRegistry;
use screenpilot_session::spec::check_base_env;
use screenpilot_session::Registry;

pub use super::error::{ErrorCode, OpError};
use super::model_size::ModelSizes;

/// Where an operation streams intermediate results (a screen update after each step of a long
/// operation); the daemon forwards them as progress lines, MCP as progress notifications.
#[derive(Clone, Default)]
pub struct Progress(Option<tokio::sync::mpsc::UnboundedSender<Value>>);

impl Progress {
    pub fn new(sink: tokio::sync::mpsc::UnboundedSender<Value>) -> Progress {
        Progress(Some(sink))
    }

    /// Report progress; silently dropped when nobody listens.
    pub fn send(&self, update: Value) {
        if let Some(sink) = &self.0 {
            let _ = sink.send(update);
        }
    }
}

/// What an operation needs from the daemon.
#[derive(Clone)]
pub struct Context {
    pub registry: Arc<Registry>,
    /// Desktop sessions (X11); `list`, `alive` and `close` consult it for sids that are not terminals.
    pub desktops: Arc<DesktopRegistry>,
    /// Each desktop's screenshot size for models.
    pub model_sizes: Arc<ModelSizes>,
    /// The watch page's server, when one runs (`watch`).
    pub watch: Arc<crate::watch_state::WatchServer<Context, OpError>>,
    /// What was done to each session, for `save_test`.
    pub journal: Arc<super::journal::Journal>,
    /// Each desktop's accessibility tree: its bus, its refs, its latest snapshot.
    pub accessibility: Arc<super::trees::Accessibility>,
}

/// Where a request comes from, for what the daemon cannot know itself: the caller's working directory
/// (relative paths are the caller's, and the daemon runs elsewhere) and its environment (programs start
/// in it, as under pexpect or `subprocess.run`, not in the daemon's).
#[derive(Debug, Clone)]
pub struct Caller {
    pub cwd: PathBuf,
    /// The variables a program started for this caller inherits (see [`Caller::fill_env`]).
    pub env: BTreeMap<String, String>,
    /// Who is looking, for screens sent as what changed since this reader's last look (an MCP
    /// server names itself; the CLI with `--delta`); `None`: whole screens.
    pub reader: Option<String>,
    /// The caller is on another host than the daemon: its directory and environment mean nothing
    /// there, so paths, the working directory and the environment are left for the bridge on the
    /// daemon's host to fill in (`screenpilot dial-stdio` does, as that host's caller).
    pub elsewhere: bool,
    /// The caller relays requests another process prepared (the bridge on the daemon's host): a
    /// secret in them was read where the request began, on the user's side, and is kept.
    pub relay: bool,
}

impl Caller {
    /// This process as the caller (the CLI, the MCP server, a program using the library): its
    /// directory and environment. A variable whose name or value is not UTF-8 is left out: parameters
    /// travel as JSON, and a variable missing is better than one silently changed on the way.
    pub fn this_process() -> Caller {
        Caller {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            env: utf8_vars(std::env::vars_os()),
            reader: None,
            elsewhere: false,
            relay: false,
        }
    }

    /// A caller on another host than the daemon: it fills in only who is looking.
    pub fn elsewhere(reader: Option<String>) -> Caller {
        Caller {
            cwd: PathBuf::new(),
            env: BTreeMap::new(),
            reader,
            elsewhere: true,
            relay: false,
        }
    }

    /// The same caller, looking as `reader`.
    pub fn reading_as(mut self, reader: Option<String>) -> Caller {
        self.reader = reader;
        self
    }

    /// Fill in who is looking, unless the request says.
    pub fn fill_reader(&self, reader: &mut Option<String>) {
        if reader.is_none() {
            reader.clone_from(&self.reader);
        }
    }

    /// Fill in the environment a program of this caller starts from (a parameter the daemon reads
    /// with [`program_env`]): the caller's own, or none when it asked for a clean one.
    pub fn fill_env(&self, caller_env: &mut Option<BTreeMap<String, String>>, clean_env: bool) {
        if !self.elsewhere {
            *caller_env = (!clean_env).then(|| self.env.clone());
        }
    }

    /// `path` made absolute against the caller's directory.
    pub fn absolute(&self, path: &str) -> String {
        if Path::new(path).is_absolute() || self.elsewhere {
            path.to_owned()
        } else {
            self.cwd.join(path).to_string_lossy().into_owned()
        }
    }

    /// Make a path parameter absolute in place.
    pub fn resolve(&self, path: &mut Option<String>) {
        if let Some(p) = path {
            *p = self.absolute(p);
        }
    }

    /// An interpreter or program given as a relative path (`.venv/bin/python`) is the caller's to
    /// resolve; a bare name (`python3`) is looked up in PATH.
    pub fn resolve_program(&self, program: &mut Option<String>) {
        if let Some(p) = program {
            if p.contains('/') {
                *p = self.absolute(p);
            }
        }
    }

    /// The working directory for a program: the one given (made absolute), else the caller's.
    pub fn resolve_cwd(&self, cwd: &mut Option<String>) {
        if self.elsewhere {
            return;
        }
        match cwd {
            Some(dir) => *dir = self.absolute(dir),
            None => *cwd = Some(self.cwd.to_string_lossy().into_owned()),
        }
    }
}

/// The variables whose name and value are both UTF-8.
fn utf8_vars(vars: impl Iterator<Item = (OsString, OsString)>) -> BTreeMap<String, String> {
    vars.filter_map(|(key, value)| Some((key.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// The environment a program starts from, on the daemon's side: the caller's, as `prepare` sent it
/// ([`Caller::fill_env`]); nothing at all with `clean_env`, or when the request carries no environment
/// (a raw request that skipped `prepare`), so the daemon's own never reaches a program. The session
/// then adds its terminal's variables and the request's `env`.
pub fn program_env(
    caller_env: Option<BTreeMap<String, String>>,
    clean_env: bool,
) -> Result<Vec<(String, String)>, OpError> {
    let vars: Vec<(String, String)> = match caller_env {
        Some(vars) if !clean_env => vars.into_iter().collect(),
        _ => Vec::new(),
    };
    check_base_env(&vars, "caller_env")?;
    Ok(vars)
}

/// The JSON Schema of a type, as a plain JSON value.
pub fn schema_of<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// Parse parameters, naming the operation and the field at fault in errors.
pub fn parse_params<T: DeserializeOwned>(op: &str, value: Value) -> Result<T, OpError> {
    parse_fields(&value).map_err(|bad| {
        let message = match &bad.field {
            Some(field) if !bad.named_by_serde => format!("{op}: {field}: {}", bad.error),
            _ => format!("{op}: {}", bad.error),
        };
        OpError {
            code: ErrorCode::InvalidArgument,
            message,
            field: bad.field,
        }
    })
}

/// Why an object did not parse, and the field at fault when one is.
pub struct BadField {
    /// The field at fault; `params` when the value is not an object at all.
    pub field: Option<String>,
    /// serde's message.
    pub error: String,
    /// serde's message already names the field (unknown, missing and duplicate fields).
    pub named_by_serde: bool,
}

/// Parse an object (null counts as `{}`), finding the field at fault on failure. The one finder of
/// bad fields: operation parameters and `computer` action objects both go through it. Anything but
/// an object or null is refused here: serde would read a struct from an array (`[]` as `{}`).
pub fn parse_fields<T: DeserializeOwned>(value: &Value) -> Result<T, BadField> {
    let empty = Value::Object(Map::new());
    let value = match value {
        Value::Null => &empty,
        Value::Object(_) => value,
        other => {
            let got = match other {
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                _ => "a boolean",
            };
            return Err(BadField {
                field: Some("params".to_owned()),
                error: format!("expected an object, got {got}"),
                named_by_serde: false,
            });
        }
    };
    T::deserialize(value).map_err(|e| {
        let error = e.to_string();
        let error = error.split(" at line ").next().unwrap_or(&error).to_owned();
        if error.contains("field `") {
            return BadField {
                field: error.split('`').nth(1).map(str::to_owned),
                error,
                named_by_serde: true,
            };
        }
        let field = match value {
            Value::Object(fields) => culprit::<T>(fields, &e.to_string()),
            _ => Some("params".to_owned()),
        };
        BadField {
            field,
            error,
            named_by_serde: false,
        }
    })
}

/// The field whose value makes `fields` fail to parse with `error`: serde's message for a wrong type
/// ("invalid type: string \"5\", expected u64") does not say where. Without the culprit the error
/// changes (or parsing succeeds); without any other field it stays the same. Runs only on failure.
fn culprit<T: DeserializeOwned>(fields: &Map<String, Value>, error: &str) -> Option<String> {
    fields.keys().find_map(|key| {
        let mut without = fields.clone();
        without.remove(key);
        let same = T::deserialize(&Value::Object(without)).is_err_and(|e| e.to_string() == error);
        (!same).then(|| key.clone())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::os::unix::ffi::OsStringExt;

    #[test]
    fn parameters_that_are_not_an_object_are_refused_naming_params() {
        #[derive(Debug, Deserialize)]
        struct Optional {
            #[serde(default)]
            n: u32,
        }
        for (value, got) in [
            (json!([]), "an array"),
            (json!([1, 2]), "an array"),
            (json!(5), "a number"),
            (json!(1e308), "a number"),
            (json!("{}"), "a string"),
            (json!(true), "a boolean"),
        ] {
            let error = parse_params::<Optional>("list", value.clone()).expect_err("not an object");
            assert_eq!(error.code, ErrorCode::InvalidArgument, "{value}");
            assert_eq!(error.field.as_deref(), Some("params"), "{value}");
            assert_eq!(
                error.message,
                format!("list: params: expected an object, got {got}"),
                "{value}"
            );
        }
        // Null and an object are parameters; an empty struct still reads from them.
        assert_eq!(
            parse_params::<Optional>("list", Value::Null)
                .map(|o| o.n)
                .ok(),
            Some(0)
        );
        assert_eq!(
            parse_params::<Optional>("list", json!({"n": 3}))
                .map(|o| o.n)
                .ok(),
            Some(3)
        );
    }

    #[test]
    fn a_caller_variable_that_is_not_utf8_is_left_out_not_mangled() {
        let latin1 = OsString::from_vec(b"caf\xe9".to_vec());
        let vars = vec![
            ("PATH".into(), "/venv/bin:/usr/bin".into()),
            ("LATIN1".into(), latin1.clone()),
            (latin1, "x".into()),
        ];
        let kept = utf8_vars(vars.into_iter());
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert_eq!(kept["PATH"], "/venv/bin:/usr/bin");
    }

    #[test]
    fn a_program_gets_the_callers_environment_unless_it_asked_for_a_clean_one() {
        let caller = Caller {
            cwd: PathBuf::from("/"),
            env: BTreeMap::from([("TOKEN".to_owned(), "t".to_owned())]),
            reader: None,
            elsewhere: false,
            relay: false,
        };
        let mut sent = None;
        caller.fill_env(&mut sent, false);
        let vars = program_env(sent.clone(), false).expect("valid");
        assert_eq!(vars, [("TOKEN".to_owned(), "t".to_owned())]);
        // clean_env wins even over an environment that came along; none at all is the same.
        assert!(program_env(sent, true).expect("valid").is_empty());
        let mut clean = Some(BTreeMap::new());
        caller.fill_env(&mut clean, true);
        assert_eq!(clean, None);
        assert!(program_env(None, false).expect("valid").is_empty());
        let bad = BTreeMap::from([("A=B".to_owned(), "x".to_owned())]);
        let error = program_env(Some(bad), false).expect_err("a name with =");
        assert_eq!(error.field.as_deref(), Some("caller_env"));
    }
}
