//! Secrets never pass through the model. A program reading a hidden line (a password prompt: the
//! terminal's echo off, `input=secret`) gets its secret from a person (`screenpilot attach SID
//! --secret`, the watch page) or from a reference the caller resolves on its own side (an
//! environment variable of the caller's, or a file only the user can read): the value enters no
//! request a model writes, no answer, recording, journal or step file. It is typed only where the
//! terminal does not echo it.

use std::io::Read;

use screenpilot_screen::keys;
use screenpilot_session::Session;

use super::common::{Caller, OpError};
pub use super::step_table::SecretRef;

/// The longest secret typed, in bytes.
const MAX_SECRET: usize = 4096;

impl SecretRef {
    /// Read the value where the reference points, on the caller's side. Whatever value came with
    /// the request is dropped: only a reference brings one, so a model never has to hold it.
    pub fn resolve(&mut self, caller: &Caller) {
        let read = match (&self.env, &self.file) {
            (Some(_), Some(_)) => Err("give env or file, not both".to_owned()),
            (None, None) => Err("give env (a variable of yours) or file (readable only by you), e.g. {\"env\": \"DB_PASSWORD\"}".to_owned()),
            (Some(name), None) => read_env(name),
            (None, Some(path)) => read_file(&caller.absolute(path)),
        };
        (self.value, self.problem) = match read {
            Ok(value) => (Some(value), None),
            Err(problem) => (None, Some(problem)),
        };
    }

    /// The value, or the reason it is missing (naming `field`).
    pub(crate) fn value(&self, field: &str) -> Result<&str, OpError> {
        if let Some(problem) = &self.problem {
            return Err(OpError::invalid(field, problem.clone()));
        }
        self.value
            .as_deref()
            .ok_or_else(|| OpError::invalid(field, "was not resolved by the caller"))
    }
}

fn read_env(name: &str) -> Result<String, String> {
    match std::env::var(name) {
        Ok(value) if value.is_empty() => Err(format!("the variable {name} is empty")),
        Ok(value) => Ok(value),
        Err(_) => Err(format!("no variable {name} in the caller's environment")),
    }
}

fn read_file(path: &str) -> Result<String, String> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).map_err(|e| format!("{path}: {e}"))?;
    if !meta.file_type().is_file() {
        return Err(format!("{path} is not a regular file"));
    }
    // SAFETY: getuid only reads this process's user id.
    let uid = unsafe { libc::getuid() };
    if meta.uid() != uid {
        return Err(format!("{path} belongs to another user"));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{path} is readable by others (mode {:o}): chmod 600 it",
            meta.mode() & 0o777
        ));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .map_err(|e| format!("{path}: {e}"))?
        .take(MAX_SECRET as u64 + 2)
        .read_to_string(&mut text)
        .map_err(|e| format!("{path}: {e}"))?;
    let text = text
        .strip_suffix('\n')
        .map(|t| t.strip_suffix('\r').unwrap_or(t))
        .unwrap_or(&text)
        .to_owned();
    if text.is_empty() {
        return Err(format!("{path} is empty"));
    }
    Ok(text)
}

/// Type `secret` and Enter into `session`, which must be reading a hidden line (`field` names the
/// parameter in errors). Nothing is typed otherwise.
pub(crate) async fn type_hidden(
    session: &Session,
    secret: &str,
    field: &str,
) -> Result<(), OpError> {
    if secret.len() > MAX_SECRET {
        return Err(OpError::invalid(
            field,
            format!("{} bytes; at most {MAX_SECRET}", secret.len()),
        ));
    }
    if secret.contains(['\n', '\r']) {
        return Err(OpError::invalid(field, "holds a line break: one line only"));
    }
    if !session.reading_secret() {
        return Err(OpError::invalid(
            field,
            format!(
                "'{}' is not reading a hidden line (input={}): typed now, it would be shown. \
Wait with until {{\"input\": true}} for input=secret",
                session.sid,
                session.input_state().name()
            ),
        ));
    }
    let modes = session.modes();
    let mut chunks = vec![keys::encode_text(secret, &modes)];
    chunks.extend(keys::encode_tokens(&["Enter"], &modes));
    session.write(&chunks).await?;
    Ok(())
}
