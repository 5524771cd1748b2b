//! The answer to a `computer` call: what was done, the fresh screenshot, and on failure which action
//! failed and whether its input may have reached the screen.

use base64::Engine;
use serde_json::{json, Value};

use super::super::{base, OpError, OpResult};
use super::actions::Action;

/// A failed action in a run.
pub(super) struct Failure {
    pub index: usize,
    pub error: OpError,
    /// Input may have reached the screen before the failure.
    pub outcome_unknown: bool,
}

/// A picture of the screen for the answer.
pub(super) struct Picture {
    pub png: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub pointer: Option<(u32, u32)>,
}

/// What a run of actions did.
pub(super) struct Run {
    /// One entry per action done, in order.
    pub results: Vec<Value>,
    /// The region of a zoom that ended the run: the screenshot is cropped to it.
    pub zoom: Option<[u32; 4]>,
    pub failure: Option<Failure>,
    /// Some action that was done sent input.
    pub input_sent: bool,
}

/// The answer for `sid` (a session of `kind`) after `run` of `actions`, with the screenshot taken
/// after it (or why there is none).
pub(super) fn answer(
    sid: &str,
    kind: &str,
    actions: &[(String, Action)],
    run: Run,
    picture: Result<Picture, OpError>,
) -> OpResult {
    let done = run.results.len();
    let mut out = base(sid);
    out.insert("kind".into(), kind.into());
    out.insert("done".into(), done.into());
    out.insert("results".into(), Value::Array(run.results));
    if let Some(region) = run.zoom {
        out.insert("region".into(), json!(region));
    }
    let have_picture = picture.is_ok();
    match picture {
        Ok(picture) => {
            if let Some((x, y)) = picture.pointer {
                out.insert("pointer".into(), json!({ "x": x, "y": y }));
            }
            out.insert("format".into(), "png".into());
            out.insert(
                "png".into(),
                base64::engine::general_purpose::STANDARD
                    .encode(&picture.png)
                    .into(),
            );
            out.insert("width".into(), picture.width.into());
            out.insert("height".into(), picture.height.into());
        }
        // Every action was done; only the picture of the result is missing. Say so, or a caller
        // would take the call for failed and send the same input again.
        Err(mut e) if run.failure.is_none() => {
            if run.input_sent {
                e.message = format!(
                    "{}; the screenshot failed after all {done} action(s) were done (their input was sent): do not repeat them",
                    e.message
                );
            }
            return Err(e);
        }
        Err(e) => {
            out.insert("screenshot_error".into(), json!(e));
        }
    }
    if let Some(failure) = run.failure {
        let action = &actions[failure.index].1;
        out.insert("ok".into(), false.into());
        out.insert("failed_index".into(), failure.index.into());
        out.insert("failed_action".into(), action.name().into());
        let outcome = if failure.outcome_unknown {
            "unknown"
        } else {
            "not_sent"
        };
        out.insert("outcome".into(), outcome.into());
        let mut error = failure.error;
        if failure.outcome_unknown {
            let look = if have_picture {
                "look at the screenshot before retrying"
            } else {
                "the screenshot failed too, so take one before retrying"
            };
            error.message = format!(
                "{}; the outcome is unknown (input may have reached the screen): {look}",
                error.message
            );
        }
        out.insert("error".into(), json!(error));
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click() -> (String, Action) {
        (
            "action".into(),
            Action::Click {
                at: super::super::actions::Px { x: 1, y: 1 },
                button: super::super::actions::ButtonName::Left,
                count: 1,
                hold: Vec::new(),
            },
        )
    }

    fn run(input_sent: bool, failure: Option<Failure>) -> Run {
        Run {
            results: if failure.is_some() {
                Vec::new()
            } else {
                vec![json!({"type": "click"})]
            },
            zoom: None,
            failure,
            input_sent,
        }
    }

    fn no_picture() -> Result<Picture, OpError> {
        Err(OpError::new("display_unavailable", "display: gone"))
    }

    #[test]
    fn a_failed_screenshot_after_input_says_the_input_was_sent() {
        let err = answer("d", "desktop", &[click()], run(true, None), no_picture())
            .expect_err("no picture");
        assert_eq!(err.code, "display_unavailable");
        assert!(err.message.contains("do not repeat"), "{}", err.message);
        let err = answer("d", "desktop", &[click()], run(false, None), no_picture())
            .expect_err("no picture");
        assert_eq!(err.message, "display: gone");
    }

    #[test]
    fn a_failure_after_dispatch_is_an_unknown_outcome_with_a_picture() {
        let failure = || Failure {
            index: 0,
            error: OpError::new("timeout", "click did not finish"),
            outcome_unknown: true,
        };
        let picture = Picture {
            png: vec![1, 2, 3],
            width: 4,
            height: 5,
            pointer: Some((1, 1)),
        };
        let out = answer(
            "d",
            "desktop",
            &[click()],
            run(true, Some(failure())),
            Ok(picture),
        )
        .expect("an answer");
        assert_eq!(out["ok"], false);
        assert_eq!(out["outcome"], "unknown");
        assert_eq!(out["failed_action"], "click");
        assert_eq!(out["png"], "AQID");
        assert!(out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("look at the screenshot")));
        let out = answer(
            "d",
            "desktop",
            &[click()],
            run(true, Some(failure())),
            no_picture(),
        )
        .expect("an answer");
        assert!(out.get("png").is_none());
        assert_eq!(out["screenshot_error"]["message"], "display: gone");
        assert!(out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("take one before retrying")));
    }
}
