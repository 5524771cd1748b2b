//! Secrets never pass through the model. A program reading a hidden line (a password prompt: the
//! terminal's echo off, `input=secret`) gets its secret from a person (`screenpilot attach SID
//! --secret`, the watch page) or from a reference the caller resolves on its own side (an
//! environment variable of the caller's, or a file only the user can read): the value enters no
//! request a model writes, no answer, recording, journal or step file. It is typed only where the
//! terminal does not echo it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ops::kit::common::{Context, OpError, Progress};
use crate::ops::kit::operation::{Operation, Report};
use crate::ops::kit::secrets::type_hidden;
use crate::ops::kit::step_table::Journaled;

/// Parameters of `type_secret`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TypeSecretParams {
    pub sid: String,
    /// The line a person typed (echo off on their terminal).
    pub value: String,
}

/// What `type_secret` answers: only that it was typed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct SecretTyped {
    pub sid: String,
    pub typed: bool,
}

impl Report for SecretTyped {}

/// `type_secret`: a person's hidden line, typed into the program's hidden-line prompt.
pub struct TypeSecret;

impl Operation for TypeSecret {
    const NAME: &'static str = "type_secret";
    const DESCRIPTION: &'static str = "For `screenpilot attach --secret`, not for models: types a person's hidden line and Enter into a program reading a hidden line. Returns {sid, typed}.";
    const TOOL: bool = false;
    type Params = TypeSecretParams;
    type Output = SecretTyped;

    fn journal(_: &TypeSecretParams, _: bool) -> Vec<Journaled> {
        Vec::new()
    }

    async fn run(ctx: &Context, p: TypeSecretParams, _: &Progress) -> Result<SecretTyped, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        type_hidden(&session, &p.value, "value").await?;
        Ok(SecretTyped {
            sid: p.sid,
            typed: true,
        })
    }
}
