//! Which screenpilot a process is: its version, the protocol it speaks and its build (the executable
//! file it runs), so that a client and a daemon of different builds say so plainly instead of failing
//! with "unknown operation" (an older daemon) or an answer that does not read (a newer one).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{ErrorCode, OpError};

/// The protocol's version: raised when a request or an answer changes in a way an older side cannot
/// read.
pub const PROTOCOL: u32 = 1;

/// Test-only switches, read by a daemon alone: it announces this version, as an older build would
/// (`ANNOUNCE_VAR`), and answers these operations (comma-separated) as unknown, as a build from
/// before them would (`FORGET_VAR`). So a test plays an older daemon without a second build.
pub const ANNOUNCE_VAR: &str = "SCREENPILOT_TEST_ANNOUNCE_VERSION";
pub const FORGET_VAR: &str = "SCREENPILOT_TEST_FORGET_OPS";

/// Where a daemon says which build it is (its [`Build`] as JSON), for clients to compare without a
/// request.
pub fn build_file(paths: &super::paths::Paths) -> std::path::PathBuf {
    paths.dir.join("daemon.build")
}

/// A process's build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    pub version: String,
    pub protocol: u32,
    /// The executable it runs (device, inode, modification time): a binary installed again over
    /// the old one is another build, though its version may not have changed.
    pub build: String,
}

impl Build {
    /// This process's.
    pub fn this() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            protocol: PROTOCOL,
            build: executable(),
        }
    }

    /// A daemon's: this process's, or the version a test asks it to announce ([`ANNOUNCE_VAR`]).
    pub fn this_daemon() -> Build {
        let announced = std::env::var(ANNOUNCE_VAR).ok().filter(|v| !v.is_empty());
        let this = Build::this();
        match announced {
            Some(version) => Build {
                version,
                protocol: 0,
                ..this
            },
            None => this,
        }
    }

    /// A daemon's, from its `status` answer (an older daemon's has no protocol or build).
    pub fn of_status(status: &Value) -> Build {
        Build {
            version: status["version"].as_str().unwrap_or("unknown").to_owned(),
            protocol: status["protocol"].as_u64().unwrap_or(0) as u32,
            build: status["build"].as_str().unwrap_or_default().to_owned(),
        }
    }

    /// How `daemon` differs from this client, in words; `None` when it is the same build.
    pub fn differs(&self, daemon: &Build) -> Option<String> {
        if self == daemon {
            return None;
        }
        let what = if daemon.version != self.version {
            format!(
                "screenpilot {} (this client is {})",
                daemon.version, self.version
            )
        } else {
            format!(
                "another build of screenpilot {} (a binary installed since it started)",
                daemon.version
            )
        };
        let protocol = if daemon.protocol != self.protocol {
            format!(
                "; it speaks protocol {} and this client {}",
                daemon.protocol, self.protocol
            )
        } else {
            String::new()
        };
        Some(format!(
            "the daemon runs {what}{protocol}: `screenpilot daemon stop --keep-sessions` ends it, and the next command starts this build's, which takes its terminal sessions over"
        ))
    }
}

/// Whether `error` may be a daemon of another build speaking: an older daemon does not know a
/// newer operation (`unknown_operation`), a newer one answers what this client cannot read
/// (`bad_response`).
pub fn may_be_another_build(error: &OpError) -> bool {
    matches!(
        error.code,
        ErrorCode::UnknownOperation | ErrorCode::BadResponse
    )
}

/// `error` with how the daemon whose `status` this is differs from this client, when it does.
pub fn explain(error: OpError, status: &Value) -> OpError {
    match Build::this().differs(&Build::of_status(status)) {
        Some(why) => OpError {
            message: format!("{}; {why}", error.message),
            ..error
        },
        None => error,
    }
}

fn executable() -> String {
    use std::os::unix::fs::MetadataExt;
    match std::fs::metadata("/proc/self/exe") {
        Ok(m) => format!("{:x}:{:x}:{}", m.dev(), m.ino(), m.mtime()),
        Err(_) => "unknown".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn another_version_or_build_is_said_plainly_and_the_same_is_not() {
        let me = Build::this();
        assert_eq!(me.differs(&me.clone()), None);
        let older = Build::of_status(&json!({"version": "0.0.9"}));
        let said = me.differs(&older).expect("an older daemon differs");
        assert!(
            said.starts_with("the daemon runs screenpilot 0.0.9 (this client is"),
            "{said}"
        );
        assert!(said.contains("protocol 0"), "{said}");
        let rebuilt = Build {
            build: "other".into(),
            ..me.clone()
        };
        let said = me.differs(&rebuilt).expect("another build differs");
        assert!(said.contains("another build of screenpilot"), "{said}");
    }
}
