//! A computer action once checked and normalised ([`Action`]), what it targets on the screen, and
//! the limits every action is held to. The request shape is in [`super::request`], the way from one to
//! the other in [`super::parse`].

use screenpilot_desktop::Modifier;

use super::keys::Chord;
use crate::ops::button::Button;
use crate::ops::common::OpError;

/// A pixel of the screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Px {
    pub x: u32,
    pub y: u32,
}

/// A checked action. Coordinates are checked against the screen separately ([`Action::points`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Screenshot,
    Click {
        at: Px,
        button: Button,
        count: u32,
        hold: Vec<Modifier>,
    },
    /// Wheel steps, already converted: positive = right/down.
    Scroll {
        at: Px,
        steps_x: i32,
        steps_y: i32,
        hold: Vec<Modifier>,
    },
    Type {
        text: String,
    },
    Wait {
        ms: u64,
    },
    Move {
        at: Px,
        hold: Vec<Modifier>,
    },
    /// Chords pressed one after another (one for keypress; xdotool's "a b" gives several).
    Keypress {
        chords: Vec<Chord>,
        hold_ms: u64,
    },
    Drag {
        path: Vec<Px>,
        hold: Vec<Modifier>,
    },
    MouseDown {
        at: Option<Px>,
    },
    MouseUp {
        at: Option<Px>,
    },
    CursorPosition,
    Zoom {
        region: [u32; 4],
    },
}

pub const DEFAULT_WAIT_MS: u64 = 2000;
pub const MAX_WAIT_MS: u64 = 60_000;
/// Most wheel steps per axis in one scroll.
pub const MAX_SCROLL_STEPS: i32 = 50;
/// One wheel notch in the delta units models send (the Windows WHEEL_DELTA).
pub const WHEEL_DELTA: f64 = 120.0;
/// Most points in a drag path.
pub const MAX_PATH_POINTS: usize = 1000;
/// Longest text one `type` action takes.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Wheel steps for a delta: 0 stays 0; otherwise ceil(|delta| / 120), at least 1 and at most 50,
/// with the delta's sign.
pub fn wheel_steps(delta: f64) -> i32 {
    if delta == 0.0 || delta.is_nan() {
        return 0;
    }
    let steps = (delta.abs() / WHEEL_DELTA)
        .ceil()
        .clamp(1.0, MAX_SCROLL_STEPS as f64) as i32;
    if delta < 0.0 {
        -steps
    } else {
        steps
    }
}

impl Action {
    /// The action's type name as reported in results.
    pub fn name(&self) -> &'static str {
        match self {
            Action::Screenshot => "screenshot",
            Action::Click { count: 2, .. } => "double_click",
            Action::Click { count: 3, .. } => "triple_click",
            Action::Click { .. } => "click",
            Action::Scroll { .. } => "scroll",
            Action::Type { .. } => "type",
            Action::Wait { .. } => "wait",
            Action::Move { .. } => "move",
            Action::Keypress { .. } => "keypress",
            Action::Drag { .. } => "drag",
            Action::MouseDown { .. } => "mouse_down",
            Action::MouseUp { .. } => "mouse_up",
            Action::CursorPosition => "cursor_position",
            Action::Zoom { .. } => "zoom",
        }
    }

    /// Does it send input (so a failure midway leaves the outcome unknown)?
    pub fn sends_input(&self) -> bool {
        !matches!(
            self,
            Action::Screenshot | Action::Wait { .. } | Action::CursorPosition | Action::Zoom { .. }
        )
    }

    /// Every pixel it targets, with the field each came from.
    pub fn points(&self) -> Vec<(Px, &'static str)> {
        match self {
            Action::Click { at, .. } | Action::Scroll { at, .. } | Action::Move { at, .. } => {
                vec![(*at, "x")]
            }
            Action::MouseDown { at: Some(at) } | Action::MouseUp { at: Some(at) } => {
                vec![(*at, "x")]
            }
            Action::Drag { path, .. } => path.iter().map(|p| (*p, "path")).collect(),
            Action::Zoom { region } => vec![
                (
                    Px {
                        x: region[0],
                        y: region[1],
                    },
                    "region",
                ),
                (
                    Px {
                        x: region[2].saturating_sub(1),
                        y: region[3].saturating_sub(1),
                    },
                    "region",
                ),
            ],
            _ => Vec::new(),
        }
    }
}

/// Refuse any targeted pixel outside a `width` x `height` screenshot; `prefix` names the action.
pub fn check_points(action: &Action, width: u32, height: u32, prefix: &str) -> Result<(), OpError> {
    for (p, field) in action.points() {
        if p.x >= width || p.y >= height {
            return Err(OpError::invalid(
                &format!("{prefix}.{field}"),
                format!(
                    "({}, {}) is outside the {width}x{height} screenshot; x must be 0-{} and y 0-{} (nothing was sent)",
                    p.x,
                    p.y,
                    width.saturating_sub(1),
                    height.saturating_sub(1)
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_deltas_become_steps() {
        assert_eq!(wheel_steps(0.0), 0);
        assert_eq!(wheel_steps(1.0), 1);
        assert_eq!(wheel_steps(120.0), 1);
        assert_eq!(wheel_steps(121.0), 2);
        assert_eq!(wheel_steps(-360.0), -3);
        assert_eq!(wheel_steps(1e9), 50);
    }

    #[test]
    fn points_are_checked_against_the_screen() {
        let click = |x, y| Action::Click {
            at: Px { x, y },
            button: Button::Left,
            count: 1,
            hold: Vec::new(),
        };
        let err = check_points(&click(1280, 0), 1280, 800, "actions[1]").expect_err("off screen");
        assert_eq!(err.field.as_deref(), Some("actions[1].x"));
        assert!(check_points(&click(1279, 799), 1280, 800, "action").is_ok());
        let zoom = Action::Zoom {
            region: [0, 0, 1280, 801],
        };
        let err = check_points(&zoom, 1280, 800, "action").expect_err("region too tall");
        assert_eq!(err.field.as_deref(), Some("action.region"));
    }
}
