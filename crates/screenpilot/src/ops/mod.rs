//! Every operation screenpilot offers, each defined once: one file per operation (or a few related
//! ones), each an [`Operation`] with its parameter type, output type, description and implementation.
//!
//! The daemon executes them ([`execute`]); the CLI and the MCP server build the same parameters, send
//! them to the daemon and read the answers back into the same output types. [`OPERATIONS`] lists them
//! as the MCP server publishes them. Both are generated from the one list below.

use std::sync::{Arc, LazyLock};

use serde_json::Value;

use screenpilot_desktop::DesktopRegistry;
use screenpilot_session::Registry;

mod act;
mod attach;
pub(crate) mod classic;
mod computer;
mod desktop;
pub(crate) mod kit;
mod lifecycle;
mod observe;
#[cfg(test)]
mod probe;
mod run;
mod save_test;
#[cfg(test)]
mod semantics;
mod send;
mod textual;

pub use act::{Act, ActName, ActParams, Acted};
pub use attach::{
    Attach, AttachParams, AttachShown, Detached, Frame, ShownParams, WriteRaw, WriteRawParams,
};
pub use classic::input::{SendKeys, SendKeysParams, SendLine, TextParams, Type};
pub use classic::mouse::{Mouse, MouseParams};
pub use classic::record::{Record, RecordAction, RecordParams};
pub use classic::secret::{TypeSecret, TypeSecretParams};
pub use classic::waits::{
    ClassicWait, ExpectParams, WaitChangeParams, WaitExitParams, WaitForParams, WaitReadyParams,
    WaitVisualChangeParams,
};
pub use classic::watch::{Watch, WatchOutput, WatchParams};
pub use computer::{ActionSpec, Computer, ComputerParams};
pub use desktop::{DesktopStart, DesktopStartParams};
pub use kit::button::Button;
pub(crate) use kit::common::parse_params;
pub use kit::common::{schema_of, Caller, Context, ErrorCode, OpError, Progress};
pub use kit::look::ScreenMode;
pub use kit::operation::{Answer, Operation, OperationDef, Profile, Reading};
pub use kit::picture::ImageFormat;
pub use kit::secrets::SecretRef;
pub use kit::until::UntilParams;
pub use kit::view::{Report, View};
pub use lifecycle::{
    Alive, Close, List, ListParams, Resize, ResizeParams, SidParams, Spawn, SpawnParams,
};
pub use observe::{Screenshot, ScreenshotParams, Snapshot, SnapshotParams};
pub use run::{Run, RunParams};
pub use save_test::{SaveTest, SaveTestParams};
pub use send::{Send, SendParams, Wait, WaitParams};
pub use textual::{TextualRun, TextualRunParams};

/// Every operation, in the order tools are listed: dispatch ([`execute`]), the tool list, the CLI's
/// verbs and step files all read this one list. Adding an operation is one file and one line here.
pub static OPERATIONS: LazyLock<Vec<OperationDef>> = LazyLock::new(|| {
    #[allow(unused_mut)]
    let mut all = vec![
        OperationDef::of::<lifecycle::Spawn>(),
        OperationDef::of::<send::Send>(),
        OperationDef::of::<send::Wait>(),
        OperationDef::of::<run::Run>(),
        OperationDef::of::<lifecycle::List>(),
        OperationDef::of::<lifecycle::Alive>(),
        OperationDef::of::<lifecycle::Close>(),
        OperationDef::of::<lifecycle::Resize>(),
        OperationDef::of::<classic::record::Record>(),
        OperationDef::of::<classic::input::SendKeys>(),
        OperationDef::of::<classic::input::SendLine>(),
        OperationDef::of::<classic::input::Type>(),
        OperationDef::of::<classic::mouse::Mouse>(),
        OperationDef::of::<observe::Snapshot>(),
        OperationDef::of::<observe::Screenshot>(),
        OperationDef::of::<classic::waits::ClassicWait<WaitForParams>>(),
        OperationDef::of::<classic::waits::ClassicWait<ExpectParams>>(),
        OperationDef::of::<classic::waits::ClassicWait<WaitChangeParams>>(),
        OperationDef::of::<classic::waits::ClassicWait<WaitVisualChangeParams>>(),
        OperationDef::of::<classic::waits::ClassicWait<WaitReadyParams>>(),
        OperationDef::of::<classic::waits::ClassicWait<WaitExitParams>>(),
        OperationDef::of::<desktop::DesktopStart>(),
        OperationDef::of::<computer::Computer>(),
        OperationDef::of::<act::Act>(),
        OperationDef::of::<textual::TextualRun>(),
        OperationDef::of::<classic::watch::Watch>(),
        OperationDef::of::<attach::Attach>(),
        OperationDef::of::<attach::AttachShown>(),
        OperationDef::of::<attach::WriteRaw>(),
        OperationDef::of::<classic::secret::TypeSecret>(),
        OperationDef::of::<save_test::SaveTest>(),
    ];
    // The operation a test adds, as anyone adds one: a file (here a test module) and this line.
    #[cfg(test)]
    all.push(OperationDef::of::<probe::Probe>());
    all
});

/// Run operation `name` with JSON parameters. Long operations report steps to `progress`.
pub async fn execute(
    ctx: &Context,
    name: &str,
    params: Value,
    progress: &Progress,
) -> Result<Value, OpError> {
    (find(name)?.run)(ctx, params, progress).await
}

/// The definition of operation `name`.
pub fn find(name: &str) -> Result<&'static OperationDef, OpError> {
    OPERATIONS
        .iter()
        .find(|op| op.name == name)
        .ok_or_else(|| unknown(name))
}

fn unknown(name: &str) -> OpError {
    let known: Vec<&str> = OPERATIONS.iter().map(|o| o.name).collect();
    OpError::new(
        ErrorCode::UnknownOperation,
        format!(
            "op: unknown operation {name:?}; known: {}",
            known.join(", ")
        ),
    )
    .with_field("op")
}

/// Complete the parameters of `op` for the caller before they go to the daemon (relative paths
/// become the caller's); a bad parameter is refused here with the same error the daemon would give.
pub fn prepare(op: &str, params: Value, caller: &Caller) -> Result<Value, OpError> {
    (find(op)?.prepare)(params, caller)
}

impl Context {
    /// A context over `registry`, with desktops sharing its sid space and session limit.
    pub fn new(registry: Arc<Registry>) -> Context {
        let desktops = DesktopRegistry::new();
        registry.set_peers(Arc::new(kit::desktops::DesktopPeers(desktops.clone())));
        Context {
            registry,
            desktops,
            model_sizes: Arc::default(),
            watch: Arc::default(),
            journal: Arc::default(),
            accessibility: Arc::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn error_of<T: serde::de::DeserializeOwned + std::fmt::Debug>(
        op: &str,
        value: Value,
    ) -> OpError {
        kit::common::parse_params::<T>(op, value).unwrap_err()
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_field() {
        let e = error_of::<SpawnParams>("spawn", json!({"cmd": "bash", "cols": -1}));
        assert_eq!(e.field.as_deref(), Some("cols"), "{e:?}");
        assert!(e.message.starts_with("spawn: cols: invalid value"), "{e:?}");

        let e = error_of::<WaitForParams>(
            "wait_for",
            json!({"sid": "a", "pattern": "x", "timeout_ms": "5"}),
        );
        assert_eq!(e.field.as_deref(), Some("timeout_ms"), "{e:?}");

        let e = error_of::<SpawnParams>("spawn", json!({"cmd": "bash", "env": {"A": 1}}));
        assert_eq!(e.field.as_deref(), Some("env"), "{e:?}");

        // A required field of the wrong type is named too (without it, the error is "missing field").
        let e = error_of::<ExpectParams>("expect", json!({"sid": "a", "patterns": "abc"}));
        assert_eq!(e.field.as_deref(), Some("patterns"), "{e:?}");
    }

    /// The published list and dispatch come from one list: every listed operation is dispatched (a bad
    /// parameter is its own error, never "unknown operation"), and names are unique.
    #[tokio::test]
    async fn every_listed_operation_is_dispatched() {
        let ctx = Context::new(Registry::new(screenpilot_session::Limits::default()));
        let mut names = std::collections::HashSet::new();
        for op in OPERATIONS.iter() {
            assert!(names.insert(op.name), "{} is listed twice", op.name);
            let error = execute(
                &ctx,
                op.name,
                json!({"no_such_field": 1}),
                &Progress::default(),
            )
            .await
            .expect_err("an unknown field is refused");
            assert_eq!(
                error.code,
                ErrorCode::InvalidArgument,
                "{}: {error:?}",
                op.name
            );
            assert_eq!(error.field.as_deref(), Some("no_such_field"), "{}", op.name);
            assert_eq!((op.output_schema)()["type"], "object", "{}", op.name);
        }
        let error = execute(&ctx, "no_such_op", json!({}), &Progress::default())
            .await
            .expect_err("unknown");
        assert_eq!(error.code, ErrorCode::UnknownOperation);
    }

    #[test]
    fn error_codes_read_back_as_the_same_code() {
        for &code in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(code.as_str()), code);
            assert_eq!(serde_json::to_value(code).ok(), Some(json!(code.as_str())));
        }
        assert_eq!(ErrorCode::parse("from_a_newer_daemon"), ErrorCode::Other);
    }

    #[test]
    fn unknown_and_missing_fields_and_non_objects_are_named() {
        let e = error_of::<SidParams>("alive", json!({"sid": "a", "bogus": 1}));
        assert_eq!(e.field.as_deref(), Some("bogus"), "{e:?}");
        let e = error_of::<SidParams>("alive", json!({}));
        assert_eq!(e.field.as_deref(), Some("sid"), "{e:?}");
        let e = error_of::<SidParams>("alive", json!(5));
        assert_eq!(e.field.as_deref(), Some("params"), "{e:?}");
    }
}
