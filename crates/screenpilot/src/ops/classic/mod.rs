//! The classic tools: the first waves' surface (the terminal-driving seed's names, one tool per kind
//! of input and per kind of wait), served with `screenpilot mcp --tools classic`, apart from the lean
//! tools so those read on their own. They are built from the same machinery ([`super::kit`]).

pub(crate) mod input;
pub(crate) mod mouse;
pub(crate) mod record;
pub(crate) mod secret;
pub(crate) mod waits;
pub(crate) mod watch;
