//! Tool profiles (`screenpilot mcp --tools terminal,textual,desktop`): a client that drives only one
//! kind of session loads only the tools for it, and pays fewer tokens for tools/list.
//!
//! Sessions of every kind stay in one daemon whatever a server lists, so `list` and `close` are in
//! each profile: a model can always see and end what it started.

use crate::ops::{ErrorCode, OpError, OperationDef, OPERATIONS};

/// Each profile and the operations it lists (in [`OPERATIONS`] order whatever the order here).
pub const PROFILES: &[(&str, &[&str])] = &[
    (
        "terminal",
        &[
            "spawn",
            "list",
            "alive",
            "close",
            "resize",
            "send_keys",
            "send_line",
            "type",
            "mouse",
            "snapshot",
            "screenshot",
            "wait_for",
            "expect",
            "wait_change",
            "wait_visual_change",
            "wait_ready",
            "wait_exit",
        ],
    ),
    ("textual", &["list", "close", "textual_run"]),
    (
        "desktop",
        &[
            "desktop_start",
            "computer",
            "list",
            "alive",
            "close",
            "snapshot",
            "wait_for",
            "expect",
            "wait_change",
            "wait_visual_change",
            "wait_ready",
            "wait_exit",
        ],
    ),
];

/// The operations to serve for `--tools` (comma-separated profile names; `None`: every operation).
pub fn select(tools: Option<&str>) -> Result<Vec<&'static OperationDef>, OpError> {
    let Some(tools) = tools else {
        return Ok(OPERATIONS.iter().collect());
    };
    let mut wanted: Vec<&str> = Vec::new();
    for name in tools.split(',').map(str::trim) {
        let Some((_, ops)) = PROFILES.iter().find(|(profile, _)| *profile == name) else {
            let known: Vec<&str> = PROFILES.iter().map(|(profile, _)| *profile).collect();
            return Err(OpError::new(
                ErrorCode::InvalidArgument,
                format!(
                    "--tools: unknown profile {name:?}; give one or more of {}, comma-separated",
                    known.join(", ")
                ),
            )
            .with_field("tools"));
        };
        wanted.extend_from_slice(ops);
    }
    Ok(OPERATIONS
        .iter()
        .filter(|op| wanted.contains(&op.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &str) -> Vec<&'static str> {
        select(Some(tools))
            .map(|ops| ops.iter().map(|op| op.name).collect())
            .unwrap_or_default()
    }

    #[test]
    fn every_profile_names_only_real_operations_and_every_operation_is_in_one() {
        for (profile, ops) in PROFILES {
            for op in *ops {
                assert!(
                    OPERATIONS.iter().any(|o| o.name == *op),
                    "profile {profile} lists unknown operation {op}"
                );
            }
        }
        let all = names("terminal,textual,desktop");
        assert_eq!(all.len(), OPERATIONS.len(), "{all:?}");
    }

    #[test]
    fn profiles_combine_without_repeating_a_tool() {
        assert_eq!(names("textual"), ["list", "close", "textual_run"]);
        let both = names("textual, desktop");
        assert!(both.contains(&"textual_run") && both.contains(&"computer"));
        assert!(!both.contains(&"spawn"));
        assert_eq!(both.iter().filter(|n| **n == "list").count(), 1, "{both:?}");
    }

    #[test]
    fn an_unknown_profile_is_refused_naming_the_flag_and_the_known_ones() {
        let error = select(Some("terminal,browser")).err().map(|e| e.message);
        let message = error.unwrap_or_default();
        assert!(
            message.starts_with("--tools: unknown profile \"browser\""),
            "{message}"
        );
        assert!(message.contains("terminal, textual, desktop"), "{message}");
    }
}
