//! A computer action once checked and normalised ([`Action`]), what it targets on the screen, and
//! the limits every action is held to. The request shape is in [`super::request`], the way from one to
//! the other in [`super::parse`].

use screenpilot_desktop::Modifier;

use super::keys::Chord;
use crate::ops::kit::button::Button;

/// A pixel of the screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Px {
    pub x: u32,
    pub y: u32,
}

/// A checked action, in pixels of the screenshot. Coordinates are checked against the screenshot
/// separately ([`super::parse::check_points`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Screenshot,
    /// `at: None` clicks where the pointer is (Anthropic's clicks without `coordinate`).
    Click {
        at: Option<Px>,
        button: Button,
        count: u32,
        hold: Vec<Modifier>,
    },
    /// Wheel steps, already converted: positive = right/down. `at: None`: where the pointer is.
    Scroll {
        at: Option<Px>,
        steps_x: i32,
        steps_y: i32,
        hold: Vec<Modifier>,
    },
    Type {
        text: String,
    },
    /// A fixed time, or (`ms: None`) until the screen has settled.
    Wait {
        ms: Option<u64>,
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

pub const MAX_WAIT_MS: u64 = 60_000;
/// Most wheel steps per axis in one scroll.
pub const MAX_SCROLL_STEPS: i32 = 50;
/// One wheel notch in the delta units models send (the Windows WHEEL_DELTA).
pub const WHEEL_DELTA: f64 = 120.0;
/// Most points in a drag path.
pub const MAX_PATH_POINTS: usize = 1000;
/// Longest text one `type` action takes.
pub const MAX_TEXT_CHARS: usize = 20_000;

/// Wheel steps for a delta: 0 stays 0; otherwise ceil(|delta| / 120), at least 1, with the delta's
/// sign. `None` past [`MAX_SCROLL_STEPS`] (or not a number): refused, never cut down.
pub fn wheel_steps(delta: f64) -> Option<i32> {
    if delta == 0.0 {
        return Some(0);
    }
    let steps = (delta.abs() / WHEEL_DELTA).ceil().max(1.0);
    if !delta.is_finite() || steps > f64::from(MAX_SCROLL_STEPS) {
        return None;
    }
    let steps = steps as i32;
    Some(if delta < 0.0 { -steps } else { steps })
}

/// Which request field a targeted point came from, for errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointField {
    /// x and y (or coordinate): an error names the axis that is off.
    Pointer,
    Path,
    Region,
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
    pub fn points(&self) -> Vec<(Px, PointField)> {
        match self {
            Action::Click { at: Some(at), .. }
            | Action::Scroll { at: Some(at), .. }
            | Action::Move { at, .. }
            | Action::MouseDown { at: Some(at) }
            | Action::MouseUp { at: Some(at) } => vec![(*at, PointField::Pointer)],
            Action::Drag { path, .. } => path.iter().map(|p| (*p, PointField::Path)).collect(),
            Action::Zoom { region } => vec![
                (
                    Px {
                        x: region[0],
                        y: region[1],
                    },
                    PointField::Region,
                ),
                (
                    Px {
                        x: region[2].saturating_sub(1),
                        y: region[3].saturating_sub(1),
                    },
                    PointField::Region,
                ),
            ],
            _ => Vec::new(),
        }
    }

    /// The same action with every point it targets passed through `f` (screenshot to screen).
    pub fn map_points(&self, f: impl Fn(Px) -> Px) -> Action {
        let mut action = self.clone();
        match &mut action {
            Action::Click { at: Some(at), .. }
            | Action::Scroll { at: Some(at), .. }
            | Action::Move { at, .. }
            | Action::MouseDown { at: Some(at) }
            | Action::MouseUp { at: Some(at) } => *at = f(*at),
            Action::Drag { path, .. } => path.iter_mut().for_each(|p| *p = f(*p)),
            _ => {}
        }
        action
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wheel_deltas_become_steps_and_too_many_are_refused() {
        assert_eq!(wheel_steps(0.0), Some(0));
        assert_eq!(wheel_steps(1.0), Some(1));
        assert_eq!(wheel_steps(120.0), Some(1));
        assert_eq!(wheel_steps(121.0), Some(2));
        assert_eq!(wheel_steps(-360.0), Some(-3));
        assert_eq!(wheel_steps(6000.0), Some(50));
        assert_eq!(wheel_steps(6001.0), None);
        assert_eq!(wheel_steps(1e9), None);
        assert_eq!(wheel_steps(f64::NAN), None);
    }

    #[test]
    fn points_map_to_the_screen_and_nothing_else_changes() {
        let drag = Action::Drag {
            path: vec![Px { x: 1, y: 2 }, Px { x: 3, y: 4 }],
            hold: Vec::new(),
        };
        let double = |p: Px| Px {
            x: p.x * 2,
            y: p.y * 2,
        };
        assert_eq!(
            drag.map_points(double),
            Action::Drag {
                path: vec![Px { x: 2, y: 4 }, Px { x: 6, y: 8 }],
                hold: Vec::new(),
            }
        );
        let at_pointer = Action::Scroll {
            at: None,
            steps_x: 0,
            steps_y: 3,
            hold: Vec::new(),
        };
        assert_eq!(at_pointer.map_points(double), at_pointer);
    }
}
