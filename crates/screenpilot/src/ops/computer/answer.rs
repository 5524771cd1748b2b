//! The answer to a `computer` call: what was done, the fresh screenshot, and on failure which action
//! failed and whether its input may have reached the screen.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::actions::Action;
use crate::ops::kit::answers::{Framing, Pixel, UntilDone};
use crate::ops::kit::error::OpError;
use crate::ops::kit::operation::{Report, View};
use crate::ops::kit::picture::Image;

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
    /// Screen pixels per picture pixel.
    pub scale: f64,
    /// The pointer, in screenshot pixels (desktops).
    pub pointer: Option<Pixel>,
}

/// How waiting for the screen after an action went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ScreenWait {
    /// The screen changed after the input (`None` for a wait, which sends none, and where changes
    /// cannot be watched).
    pub reacted: Option<bool>,
    /// It changed and then was still (a wait: it was still), before the screenshot.
    pub settled: bool,
}

/// What one action did.
#[derive(Debug, Default)]
pub(super) struct Step {
    /// What it found, for its result entry.
    pub fields: Map<String, Value>,
    /// How waiting for the screen after it went; `None` when it did not wait.
    pub wait: Option<ScreenWait>,
}

/// What a run of actions did.
pub(super) struct Run {
    /// One entry per action done, in order.
    pub results: Vec<Map<String, Value>>,
    /// The region of a zoom that ended the run: the screenshot is cropped to it.
    pub zoom: Option<[u32; 4]>,
    pub failure: Option<Failure>,
    /// Some action that was done sent input.
    pub input_sent: bool,
    /// How the last action that waited for the screen found it.
    pub settled: Option<bool>,
    /// The size of the screen the coordinates map to, in its own pixels.
    pub screen: (u32, u32),
}

/// Whether a failed action's input may have reached the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Input may have gone out: look at the screenshot before retrying.
    Unknown,
    /// Nothing was sent.
    NotSent,
}

/// What `computer` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct ComputerDone {
    pub sid: String,
    /// "desktop" or "terminal".
    pub kind: String,
    /// How many actions were done.
    pub done: usize,
    /// One entry per action done: {type, ...what it found}.
    pub results: Vec<Map<String, Value>>,
    /// The screenshot was taken once the screen had settled after the last action that waited for
    /// it (false: it did not change, see the entry's `reacted`, or was still changing at the limit).
    /// Absent when no action waited (a screenshot alone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<bool>,
    /// The zoom region the screenshot shows, [x0, y0, x1, y1] in screenshot pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<[u32; 4]>,
    #[serde(flatten)]
    pub framing: Framing,
    /// The fresh screenshot.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    /// Why the screenshot is missing, when it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_error: Option<OpError>,
    /// The failure that stopped the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<OpError>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_index: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed_action: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// With `until` (terminals): how the wait after the actions ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<UntilDone>,
}

impl Report for ComputerDone {
    fn ok(&self) -> bool {
        self.error.is_none()
    }

    fn view(&self) -> View {
        View::default()
    }

    fn human(&self) -> String {
        let screen = match &self.image {
            Some(image) => {
                let mut screen = format!("screen {}x{}", image.width, image.height);
                let f = &self.framing;
                if let (Some(w), Some(h), Some(scale)) = (f.screen_width, f.screen_height, f.scale)
                {
                    if (w, h) != (image.width, image.height) {
                        screen = format!(
                            "screenshot {}x{} of the {w}x{h} screen (scale {scale:.3})",
                            image.width, image.height
                        );
                    }
                }
                format!("{screen}; {}", image.path.as_deref().unwrap_or(""))
            }
            None => "no screenshot".to_owned(),
        };
        // The last wait for the screen, as a person would want it said (a settled screen is the
        // normal case and goes unsaid).
        let last_wait = self
            .results
            .iter()
            .rev()
            .find(|r| r.contains_key("settled"));
        let wait = match last_wait {
            Some(r) if r.get("reacted") == Some(&Value::Bool(false)) => "no visible change; ",
            Some(r) if r.get("settled") == Some(&Value::Bool(false)) => "still changing; ",
            _ => "",
        };
        format!("{} action(s) done; {wait}{screen}", self.done)
    }

    fn complaint(&self) -> Option<String> {
        self.error
            .as_ref()
            .map(|e| format!("computer: {}", e.message))
    }
}

/// The answer for `sid` (a session of `kind`) after `run` of `actions`, with the screenshot taken
/// after it (or why there is none).
pub(super) fn answer(
    sid: &str,
    kind: &str,
    actions: &[(String, Action)],
    run: Run,
    picture: Result<Picture, OpError>,
) -> Result<ComputerDone, OpError> {
    let done = run.results.len();
    let mut out = ComputerDone {
        sid: sid.to_owned(),
        kind: kind.to_owned(),
        done,
        results: run.results,
        settled: run.settled,
        region: run.zoom,
        framing: Framing {
            screen_width: Some(run.screen.0),
            screen_height: Some(run.screen.1),
            ..Framing::default()
        },
        image: None,
        screenshot_error: None,
        error: None,
        failed_index: None,
        failed_action: None,
        outcome: None,
        until: None,
    };
    let have_picture = picture.is_ok();
    match picture {
        Ok(picture) => {
            out.framing = Framing::of(run.screen, picture.scale, picture.pointer);
            out.image = Some(Image::png(&picture.png, picture.width, picture.height));
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
        Err(e) => out.screenshot_error = Some(e),
    }
    if let Some(failure) = run.failure {
        let action = &actions[failure.index].1;
        out.failed_index = Some(failure.index);
        out.failed_action = Some(action.name().to_owned());
        out.outcome = Some(if failure.outcome_unknown {
            Outcome::Unknown
        } else {
            Outcome::NotSent
        });
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
        out.error = Some(error);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kit::error::ErrorCode;

    fn click() -> (String, Action) {
        (
            "action".into(),
            Action::Click {
                at: Some(super::super::actions::Px { x: 1, y: 1 }),
                button: crate::ops::kit::button::Button::Left,
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
                vec![Map::from_iter([("type".to_owned(), Value::from("click"))])]
            },
            zoom: None,
            failure,
            input_sent,
            settled: None,
            screen: (4, 5),
        }
    }

    fn no_picture() -> Result<Picture, OpError> {
        Err(OpError::new(ErrorCode::DisplayUnavailable, "display: gone"))
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
            error: OpError::new(ErrorCode::Timeout, "click did not finish"),
            outcome_unknown: true,
        };
        let picture = Picture {
            png: vec![1, 2, 3],
            width: 4,
            height: 5,
            scale: 1.0,
            pointer: Some(Pixel { x: 1, y: 1 }),
        };
        let out = answer(
            "d",
            "desktop",
            &[click()],
            run(true, Some(failure())),
            Ok(picture),
        )
        .expect("an answer");
        let out = serde_json::to_value(crate::ops::Answer {
            ok: out.ok(),
            output: out,
        })
        .expect("json");
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
        let out = serde_json::to_value(out).expect("json");
        assert!(out.get("png").is_none());
        assert_eq!(out["screenshot_error"]["message"], "display: gone");
        assert!(out["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("take one before retrying")));
    }

    #[test]
    fn people_are_told_when_the_screen_did_not_change_or_kept_changing() {
        let picture = || Picture {
            png: vec![1],
            width: 1356,
            height: 848,
            scale: 1.887_905,
            pointer: None,
        };
        let with = |entry: Value| {
            let mut run = run(true, None);
            run.results = vec![entry.as_object().cloned().unwrap_or_default()];
            run.screen = (2560, 1600);
            answer("d", "desktop", &[click()], run, Ok(picture()))
                .expect("an answer")
                .human()
        };
        let settled = with(serde_json::json!({"type": "click", "reacted": true, "settled": true}));
        assert_eq!(
            settled,
            "1 action(s) done; screenshot 1356x848 of the 2560x1600 screen (scale 1.888); "
        );
        let still = with(serde_json::json!({"type": "click", "reacted": false, "settled": false}));
        assert!(still.contains("; no visible change; "), "{still}");
        let busy = with(serde_json::json!({"type": "click", "reacted": true, "settled": false}));
        assert!(busy.contains("; still changing; "), "{busy}");
    }
}
