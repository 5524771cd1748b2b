//! screenpilot: drive terminal programs and see what a person would see.
//!
//! The library face: [`ops`] defines every operation once (parameters, JSON Schema, implementation),
//! [`daemon`] serves them over a unix socket, [`client`] talks to it (starting it on demand), [`cli`]
//! and the MCP server are thin presentations over the client.

pub mod cli;
pub mod client;
pub mod daemon;
pub mod mcp;
pub mod ops;
pub mod paths;
pub mod protocol;
pub mod textual;

pub use client::Client;
pub use ops::{execute, Context, OpError, Progress, OPERATIONS};
pub use paths::Paths;
