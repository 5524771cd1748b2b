//! A trivial operation, added the way anyone adds one: this file, and one line in the list of
//! `mod.rs`. Nothing else is written for it, and its tests find it everywhere an operation goes: the
//! MCP tool list (with its schemas), the CLI (a verb of its name, flags from its parameters), the
//! step files `save_test` writes and `screenpilot test` runs. Built only for tests.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::kit::common::{Context, OpError, Progress};
use super::kit::operation::Operation;
use super::kit::view::Report;

/// `probe`: type text into a terminal session, as it is.
pub struct Probe;

/// Parameters of `probe`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeParams {
    pub sid: String,
    /// Typed as it is
    pub text: String,
    /// Typed this many times (1)
    pub times: Option<u8>,
}

/// What `probe` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Probed {
    pub sid: String,
    /// Bytes written.
    pub bytes: usize,
}

impl Report for Probed {}

impl Operation for Probe {
    const NAME: &'static str = "probe";
    const DESCRIPTION: &'static str =
        "Type text into a session as it is. Example: {\"sid\": \"sh\", \"text\": \"hi\\r\"}";
    type Params = ProbeParams;
    type Output = Probed;

    async fn run(ctx: &Context, p: ProbeParams, _: &Progress) -> Result<Probed, OpError> {
        let session = ctx.registry.get(&p.sid)?;
        let text = p.text.repeat(usize::from(p.times.unwrap_or(1)));
        session.write(&[text.as_bytes().to_vec()]).await?;
        Ok(Probed {
            sid: p.sid,
            bytes: text.len(),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::ops::{self, Profile};

    /// MCP: listed by the profiles it names, with its parameters' schema, and called like any tool.
    #[test]
    fn the_mcp_server_lists_it_with_its_schema() {
        let served = crate::mcp::profiles::select(Some("classic")).expect("a profile");
        let op = served
            .ops
            .iter()
            .find(|op| op.name == "probe")
            .expect("probe is served with the classic tools");
        let tool = crate::mcp::tools::tool_of(
            op,
            &[Profile::Classic],
            crate::mcp::output_schemas::OutputSchemas::Compact,
        );
        let schema = serde_json::to_value(&tool.input_schema).expect("json");
        assert_eq!(schema["required"], json!(["sid", "text"]), "{schema}");
        assert_eq!(schema["properties"]["times"]["type"], "integer", "{schema}");
        let lean = crate::mcp::profiles::select(Some("terminal")).expect("a profile");
        assert!(!lean.ops.iter().any(|op| op.name == "probe"));
        assert!(ops::find("probe").is_ok());
    }

    /// The CLI: a verb of its name, with a flag per parameter.
    #[test]
    fn the_cli_has_a_verb_of_its_name() {
        use clap::Parser;
        let words = [
            "screenpilot",
            "probe",
            "--sid",
            "sh",
            "--text",
            "hi",
            "--times",
            "3",
        ];
        let cli = crate::cli::Cli::try_parse_from(words).expect("the words parse");
        let plan = crate::cli::plan(&cli.verb).expect("a plan");
        assert_eq!(plan.op, "probe");
        assert_eq!(plan.params, json!({"sid": "sh", "text": "hi", "times": 3}));
    }

    /// Step files: `save_test` writes a call to it as `probe = {...}` with nothing written for it,
    /// and `screenpilot test` runs that file again, its expectation checked on the live screen.
    #[tokio::test]
    async fn save_test_writes_it_and_the_file_runs_again() {
        let ctx = ops::Context::new(screenpilot_session::Registry::new(
            screenpilot_session::Limits::default(),
        ));
        let none = ops::Progress::default();
        let call = |op: &'static str, params: serde_json::Value| {
            let ctx = &ctx;
            let none = &none;
            async move {
                let params = ops::prepare(op, params, &ops::Caller::this_process())?;
                ops::execute(ctx, op, params, none).await
            }
        };
        let dir = tempfile::tempdir().expect("a directory");
        call(
            "spawn",
            json!({"sid": "main", "argv": ["cat"], "cols": 40, "rows": 5}),
        )
        .await
        .expect("cat starts");
        call(
            "probe",
            json!({"sid": "main", "text": "pong\r", "times": 2}),
        )
        .await
        .expect("probe runs");
        call("wait", json!({"sid": "main", "until": {"regex": "^pong$"}}))
            .await
            .expect("cat echoes");
        let file = dir.path().join("probe.toml");
        call("save_test", json!({"file": file.to_string_lossy()}))
            .await
            .expect("the file is written");
        call("close", json!({"sid": "main"})).await.expect("closed");
        let text = std::fs::read_to_string(&file).expect("the file");
        assert!(
            text.contains("\n[[step]]\nprobe = { text = \"pong\\r\", times = 2 }\n"),
            "{text}"
        );
        let steps = crate::steps::StepFile::parse(&file, &text).expect("it reads back");
        let crate::steps::file::Action::Op { name, params } = &steps.steps[1].action else {
            panic!("the second step runs probe: {text}")
        };
        assert_eq!(
            (name.as_str(), params["times"].clone()),
            ("probe", json!(2))
        );
        let outcome = crate::steps::run_file(&steps, &Default::default()).await;
        assert!(outcome.passed(), "{:?}\n{text}", outcome.failure);
    }
}
