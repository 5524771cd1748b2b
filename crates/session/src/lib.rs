//! Live terminal sessions: programs on pseudo-terminals, their screens, input, event-driven waits,
//! recording and limits. The daemon owns one [`Registry`]; everything else is reached through it.

pub mod error;
pub mod held;
pub mod leftovers;
pub mod process;
pub mod readiness;
pub mod record;
pub mod registry;
pub mod running;
pub mod session;
pub mod shell;
pub mod spec;
pub mod stats;
pub mod views;
pub mod wait;

pub use error::{Result, SessionError};
pub use process::ExitInfo;
pub use readiness::Input;
pub use registry::{PeerSessions, Registry};
pub use session::{
    hash_hex, parse_hash, ReadOptions, ScreenState, Session, SessionInfo, ViewerGuard, ViewerInfo,
};
pub use shell::{CommandRecord, ShellState};
pub use spec::{BaseEnv, Limits, Recording, SessionId, SpawnSpec};
pub use views::Seen;
pub use wait::{Condition, Outcome, Quiet, Reason, Settle, Until, WaitOptions};
