//! screenpilot: drive terminal programs and see what a person would see.
//!
//! The library face: [`ops`] defines every operation once (parameters, JSON Schema, implementation),
//! [`daemon`] serves them over a unix socket, [`client`] talks to it (starting it on demand), [`cli`]
//! and the MCP server are thin presentations over the client.
//!
//! In a test or an embedding program, run operations in-process with the same JSON the MCP tools take
//! (no daemon involved), or talk to the user's daemon with [`Client`] to share its sessions:
//!
//! ```
//! use screenpilot::{execute, Context, Progress};
//! use screenpilot_session::{Limits, Registry};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let ctx = Context::new(Registry::new(Limits::default()));
//! let none = Progress::default();
//! let spawned = execute(&ctx, "spawn", json!({"cmd": "sh -c 'echo ready; exec cat'", "cwd": "/"}), &none).await?;
//! let sid = spawned["sid"].clone();
//! let ready = execute(&ctx, "wait_for", json!({"sid": sid, "pattern": "^ready$"}), &none).await?;
//! assert_eq!(ready["matched"], true);
//! execute(&ctx, "send_line", json!({"sid": sid, "text": "hello"}), &none).await?;
//! let echoed = execute(&ctx, "wait_for", json!({"sid": sid, "pattern": "^hello$"}), &none).await?;
//! assert!(echoed["text"].as_str().unwrap().contains("hello"));
//! execute(&ctx, "close", json!({"sid": sid}), &none).await?;
//! # Ok::<(), screenpilot::OpError>(())
//! # }).unwrap();
//! ```

pub mod bridge;
pub mod cli;
pub mod client;
pub mod daemon;
pub mod fleet;
pub mod guard;
mod hang_up;
pub mod install;
pub mod loopback_http;
pub mod mcp;
pub mod metrics;
pub mod ops;
pub mod resume;
pub mod steps;
pub mod watch;
pub mod watch_state;
pub mod whole_file;
pub mod wire;

pub use wire::{host, paths, protocol};

pub use client::Client;
pub use ops::{execute, Context, OpError, Progress, OPERATIONS};
pub use paths::Paths;
