//! Which user sway runs as. sway refuses to run with root's powers (it checks that it cannot
//! become root again), so when we are root it runs as the unprivileged user 65534 (`nobody`),
//! and as ourselves otherwise.

use crate::error::{DesktopError, Result};

/// The unprivileged user (and group) sway runs as when we are root.
pub const UNPRIVILEGED: u32 = 65534;

const CAP_SETGID: u32 = 6;
const CAP_SETUID: u32 = 7;

/// Who sway runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwayUser {
    /// We are not root: sway runs as us.
    Ourselves { uid: u32 },
    /// We are root: sway runs as this uid and gid, without supplementary groups.
    Unprivileged { uid: u32, gid: u32 },
}

impl SwayUser {
    pub fn uid(&self) -> u32 {
        match self {
            SwayUser::Ourselves { uid } | SwayUser::Unprivileged { uid, .. } => *uid,
        }
    }
}

/// What decides it: our effective uid, the user namespace's id maps, our effective capabilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub euid: u32,
    /// `/proc/self/uid_map` ("inside outside count" lines).
    pub uid_map: String,
    pub gid_map: String,
    /// `CapEff` of `/proc/self/status`.
    pub effective_caps: u64,
}

impl Credentials {
    pub fn of_this_process() -> Credentials {
        let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
        let status = read("/proc/self/status");
        let effective_caps = status
            .lines()
            .find_map(|line| line.strip_prefix("CapEff:"))
            .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
            .unwrap_or(0);
        Credentials {
            // SAFETY: geteuid cannot fail.
            euid: unsafe { libc::geteuid() },
            uid_map: read("/proc/self/uid_map"),
            gid_map: read("/proc/self/gid_map"),
            effective_caps,
        }
    }
}

/// Is `id` mapped in an id map (an empty map, as without /proc, counts as the identity)?
fn mapped(map: &str, id: u32) -> bool {
    if map.trim().is_empty() {
        return true;
    }
    map.lines().any(|line| {
        let fields: Vec<u64> = line
            .split_whitespace()
            .filter_map(|field| field.parse().ok())
            .collect();
        matches!(fields[..], [inside, _, count] if inside <= id as u64 && (id as u64) < inside + count)
    })
}

/// Who sway should run as, or why it cannot run at all.
pub fn sway_user(credentials: &Credentials) -> Result<SwayUser> {
    if credentials.euid != 0 {
        return Ok(SwayUser::Ourselves {
            uid: credentials.euid,
        });
    }
    let refuse = |why: String| DesktopError::Start {
        field: "wayland",
        message: format!(
            "sway refuses to run as root, and this root cannot run it as the unprivileged user \
             {UNPRIVILEGED} (nobody): {why}; run screenpilot as a regular user instead"
        ),
    };
    for (name, map) in [("uid", &credentials.uid_map), ("gid", &credentials.gid_map)] {
        if !mapped(map, UNPRIVILEGED) {
            return Err(refuse(format!(
                "{name} {UNPRIVILEGED} is not mapped in this user namespace ({name}_map: {:?})",
                map.trim()
            )));
        }
    }
    for (cap, name) in [(CAP_SETUID, "CAP_SETUID"), (CAP_SETGID, "CAP_SETGID")] {
        if credentials.effective_caps & (1 << cap) == 0 {
            return Err(refuse(format!("it lacks {name}")));
        }
    }
    Ok(SwayUser::Unprivileged {
        uid: UNPRIVILEGED,
        gid: UNPRIVILEGED,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(uid_map: &str, caps: u64) -> Credentials {
        Credentials {
            euid: 0,
            uid_map: uid_map.into(),
            gid_map: uid_map.into(),
            effective_caps: caps,
        }
    }

    const ALL_CAPS: u64 = 0x1ff_ffff_ffff;

    #[test]
    fn a_regular_user_runs_sway_as_itself() {
        let user = Credentials {
            euid: 1000,
            uid_map: String::new(),
            gid_map: String::new(),
            effective_caps: 0,
        };
        assert_eq!(sway_user(&user).unwrap(), SwayUser::Ourselves { uid: 1000 });
    }

    #[test]
    fn root_runs_sway_as_nobody() {
        let user = sway_user(&root("         0          0 4294967295\n", ALL_CAPS)).unwrap();
        assert_eq!(
            user,
            SwayUser::Unprivileged {
                uid: 65534,
                gid: 65534
            }
        );
    }

    #[test]
    fn a_root_without_nobody_or_the_power_to_become_it_is_told_why() {
        // A rootless container that maps only root.
        let err = sway_user(&root("0 1000 1\n", ALL_CAPS)).unwrap_err();
        assert_eq!(err.field(), Some("wayland"));
        let message = err.to_string();
        assert!(
            message.contains("not mapped") && message.contains("65534"),
            "{message}"
        );
        let err = sway_user(&root("0 0 4294967295\n", ALL_CAPS & !(1 << CAP_SETUID))).unwrap_err();
        assert!(err.to_string().contains("CAP_SETUID"), "{err}");
    }
}
