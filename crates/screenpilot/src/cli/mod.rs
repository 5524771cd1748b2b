//! The command line: one verb per operation. Each verb turns its arguments into the operation's JSON
//! parameters, asks the daemon, and presents the answer for a person, or as one JSON object with --json.
//!
//! This file holds the arguments (the clap types); [`plan()`] turns a verb into an operation and its
//! typed parameters, [`request()`] completes them for the caller, and [`present()`] and [`progress()`]
//! show what came back, read into the operation's output type.

mod args;
pub mod attach;
mod attach_input;
mod ffmpeg;
pub mod install;
mod op_verb;
mod plan;
mod present;
pub mod render;
pub mod replay;
pub mod test;
pub mod watch_remote;

pub use args::*;

pub use op_verb::parse as parse_op_verb;
pub use plan::{plan, Plan};
pub use present::{present, progress};

/// The operation a verb asks for, with its parameters completed for this caller (relative paths, the
/// working directory), exactly as the MCP server completes a tool call's.
pub fn request(verb: &Verb) -> Result<Plan, crate::ops::OpError> {
    let plan = plan(verb)?;
    let caller = crate::ops::Caller::this_process();
    let params = crate::ops::prepare(&plan.op, plan.params, &caller)?;
    Ok(Plan {
        op: plan.op,
        params,
    })
}
