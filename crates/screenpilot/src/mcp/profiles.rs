//! Tool profiles (`screenpilot mcp --tools terminal,textual,desktop`): a client that drives only one
//! kind of session loads only the tools for it, and pays fewer tokens for tools/list. Each operation
//! declares its own profiles ([`crate::ops::Operation::PROFILES`]); this file only reads the flag.

use super::output_schemas::OutputSchemas;
use crate::ops::{ErrorCode, OpError, OperationDef, Profile, OPERATIONS};

/// What `--tools` asks for: the operations, and how they are listed.
#[derive(Clone, Default)]
pub struct Selection {
    pub ops: Vec<&'static OperationDef>,
    /// The profiles asked for: they say which parameters are listed, and whether screens are whole
    /// (the classic profile) or deltas.
    pub profiles: Vec<Profile>,
    /// Summaries or exact schemas as `outputSchema` (`--output-schemas`).
    pub output_schemas: OutputSchemas,
}

impl Selection {
    /// The classic profile is among them.
    pub fn classic(&self) -> bool {
        self.profiles.contains(&Profile::Classic)
    }
}

/// The profiles `--tools` names (comma-separated; `None`: the default ones).
pub fn profiles(tools: Option<&str>) -> Result<Vec<Profile>, OpError> {
    match tools {
        None => Ok(Profile::DEFAULT.to_vec()),
        Some(list) => parse(list).map_err(|unknown| unknown.refusal("--tools", "tools")),
    }
}

/// A name in a list of profiles that is none of [`Profile::ALL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProfile(pub String);

impl UnknownProfile {
    /// The refusal for the flag that gave it (`--tools`, or `install --profile`), naming the
    /// profiles there are.
    pub fn refusal(&self, flag: &str, field: &str) -> OpError {
        let known: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        OpError::new(
            ErrorCode::InvalidArgument,
            format!(
                "{flag}: unknown profile {:?}; give one or more of {}, comma-separated",
                self.0,
                known.join(", ")
            ),
        )
        .with_field(field)
    }
}

/// The profiles a comma-separated list names (`terminal, desktop`).
pub fn parse(list: &str) -> Result<Vec<Profile>, UnknownProfile> {
    list.split(',')
        .map(str::trim)
        .map(|name| {
            Profile::ALL
                .into_iter()
                .find(|p| p.name() == name)
                .ok_or_else(|| UnknownProfile(name.to_owned()))
        })
        .collect()
}

/// The operations to serve for `--tools`. Operations that are not tools
/// ([`crate::ops::Operation::TOOL`]) are never served.
pub fn select(tools: Option<&str>) -> Result<Selection, OpError> {
    let wanted = profiles(tools)?;
    Ok(Selection {
        ops: OPERATIONS
            .iter()
            .filter(|op| op.tool && op.profiles.iter().any(|p| wanted.contains(p)))
            .collect(),
        profiles: wanted,
        output_schemas: OutputSchemas::default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(tools: &str) -> Vec<&'static str> {
        select(Some(tools))
            .map(|s| s.ops.iter().map(|op| op.name).collect())
            .unwrap_or_default()
    }

    #[test]
    fn every_operation_is_in_a_profile_and_list_and_close_are_in_all() {
        let all = names("terminal,textual,desktop,classic");
        let tools = OPERATIONS.iter().filter(|op| op.tool).count();
        assert_eq!(all.len(), tools, "{all:?}");
        let default: Vec<&str> = select(None)
            .map(|s| s.ops.iter().map(|op| op.name).collect())
            .unwrap_or_default();
        assert_eq!(default, names("terminal,textual,desktop"));
        assert_eq!(
            default,
            [
                "spawn",
                "send",
                "run",
                "list",
                "close",
                "snapshot",
                "screenshot",
                "desktop_start",
                "computer",
                "act",
                "textual_run",
                "save_test"
            ]
        );
        assert!(
            !all.contains(&"attach")
                && !all.contains(&"attach_shown")
                && !all.contains(&"write_raw"),
            "{all:?}"
        );
        for profile in Profile::ALL {
            let served = names(profile.name());
            assert!(
                served.contains(&"list") && served.contains(&"close"),
                "{profile:?}: {served:?}"
            );
        }
        assert_eq!(
            names("desktop"),
            [
                "list",
                "close",
                "snapshot",
                "screenshot",
                "desktop_start",
                "computer",
                "act",
                "save_test"
            ]
        );
        assert_eq!(
            names("terminal"),
            [
                "spawn",
                "send",
                "run",
                "list",
                "close",
                "screenshot",
                "save_test"
            ]
        );
        // The classic profile is the seed's terminal tools, by their names, and ours beside them.
        let classic = names("classic");
        for seed in [
            "spawn",
            "list",
            "alive",
            "close",
            "resize",
            "send_keys",
            "send_line",
            "type",
            "snapshot",
            "wait_for",
            "expect",
            "wait_change",
            "wait_visual_change",
            "wait_ready",
        ] {
            assert!(classic.contains(&seed), "{seed}: {classic:?}");
        }
        assert!(!classic.contains(&"send") && !classic.contains(&"computer"));
    }

    #[test]
    fn profiles_combine_without_repeating_a_tool() {
        assert_eq!(
            names("textual"),
            ["list", "close", "textual_run", "save_test"]
        );
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
