//! Computer-use actions: the flat request shape models send (OpenAI's names, and Anthropic's as
//! aliases), checked and normalised into [`Action`] before anything reaches a session.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::super::OpError;
use super::keys::{parse_chord, parse_combo_text, Chord};
use screenpilot_desktop::{keysym, Modifier};

/// {x, y} or [x, y].
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum PointSpec {
    Object { x: f64, y: f64 },
    Pair([f64; 2]),
}

/// One action: `type` plus the fields that type uses (see the tool description).
#[derive(Debug, Default, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActionSpec {
    /// screenshot, click, double_click, scroll, type, wait, move, keypress, drag, or an alias.
    #[serde(rename = "type", alias = "action")]
    pub kind: String,
    pub x: Option<f64>,
    pub y: Option<f64>,
    /// left (default), right, wheel, back, forward.
    pub button: Option<String>,
    pub scroll_x: Option<f64>,
    pub scroll_y: Option<f64>,
    pub text: Option<String>,
    /// keypress: one chord. Pointer actions: modifiers to hold.
    pub keys: Option<Vec<String>>,
    /// drag: [{x, y}, ...] or [[x, y], ...].
    pub path: Option<Vec<PointSpec>>,
    /// wait: milliseconds (default 2000).
    pub ms: Option<u64>,
    pub coordinate: Option<[f64; 2]>,
    pub start_coordinate: Option<[f64; 2]>,
    pub scroll_direction: Option<String>,
    pub scroll_amount: Option<u32>,
    /// Seconds (wait, hold_key).
    pub duration: Option<f64>,
    /// zoom: [x0, y0, x1, y1].
    pub region: Option<[f64; 4]>,
}

/// An action object from its JSON. A malformed field is named in the error (`actions[2].x`), which
/// serde alone does not do: each field is tried on its own to find the one at fault.
pub fn spec_from_json(value: Value, prefix: &str) -> Result<ActionSpec, OpError> {
    let error = match serde_json::from_value::<ActionSpec>(value.clone()) {
        Ok(spec) => return Ok(spec),
        Err(e) => e,
    };
    let Value::Object(fields) = value else {
        return Err(OpError::invalid(
            prefix,
            format!(
                "{}; an action is an object like {{\"type\": \"click\", \"x\": 10, \"y\": 20}}",
                in_plain_words(&error)
            ),
        ));
    };
    let culprit = fields.iter().find_map(|(key, field)| {
        let mut alone = Map::new();
        if key != "type" && key != "action" {
            alone.insert("type".into(), "screenshot".into());
        }
        alone.insert(key.clone(), field.clone());
        serde_json::from_value::<ActionSpec>(Value::Object(alone))
            .err()
            .map(|e| (key.clone(), e))
    });
    Err(match culprit {
        Some((key, e)) => OpError::invalid(&format!("{prefix}.{key}"), in_plain_words(&e)),
        None if !fields.contains_key("type") && !fields.contains_key("action") => {
            OpError::invalid(&format!("{prefix}.type"), "missing; e.g. \"click\"")
        }
        None => OpError::invalid(prefix, in_plain_words(&error)),
    })
}

/// serde's message with JSON words for Rust types ("expected a number", not "expected f64").
fn in_plain_words(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = text.split(" at line ").next().unwrap_or(&text);
    text.replace("expected f64", "expected a number")
        .replace("expected u32", "expected a whole number")
        .replace("expected u64", "expected a whole number")
        .replace("expected a sequence", "expected a list")
}

/// A pixel of the screenshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Px {
    pub x: u32,
    pub y: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ButtonName {
    Left,
    Middle,
    Right,
    Back,
    Forward,
}

/// A checked action. Coordinates are checked against the screen separately ([`Action::points`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    Screenshot,
    Click {
        at: Px,
        button: ButtonName,
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

fn pixel(value: f64, field: &str) -> Result<u32, OpError> {
    if !value.is_finite() || value < 0.0 {
        return Err(OpError::invalid(
            field,
            format!("{value} is not a pixel coordinate (0 or more)"),
        ));
    }
    let rounded = value.round();
    if rounded > f64::from(u32::MAX) {
        return Err(OpError::invalid(
            field,
            format!("{value} is far off any screen"),
        ));
    }
    Ok(rounded as u32)
}

/// A checked action from its request; `prefix` (e.g. "action" or "actions[2]") starts field names.
pub fn parse(spec: &ActionSpec, prefix: &str) -> Result<Action, OpError> {
    let f = |name: &str| format!("{prefix}.{name}");
    let at = || -> Result<Px, OpError> {
        match (spec.x, spec.y, spec.coordinate) {
            (Some(x), Some(y), None) => Ok(Px {
                x: pixel(x, &f("x"))?,
                y: pixel(y, &f("y"))?,
            }),
            (None, None, Some([x, y])) => Ok(Px {
                x: pixel(x, &f("coordinate"))?,
                y: pixel(y, &f("coordinate"))?,
            }),
            (None, None, None) => Err(OpError::invalid(
                &f("x"),
                format!("{} needs x and y (pixels of the screenshot)", spec.kind),
            )),
            (Some(_), None, None) => Err(OpError::invalid(&f("y"), "x is given without y")),
            (None, Some(_), None) => Err(OpError::invalid(&f("x"), "y is given without x")),
            _ => Err(OpError::invalid(
                &f("coordinate"),
                "give x and y, or coordinate, not both",
            )),
        }
    };
    let optional_at = || -> Result<Option<Px>, OpError> {
        if spec.x.is_none() && spec.y.is_none() && spec.coordinate.is_none() {
            Ok(None)
        } else {
            at().map(Some)
        }
    };
    let hold = || -> Result<Vec<Modifier>, OpError> {
        let names: Vec<String> = match (&spec.keys, &spec.text) {
            (Some(keys), _) => keys.clone(),
            (None, Some(text)) => text
                .split(['+', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect(),
            (None, None) => return Ok(Vec::new()),
        };
        let field = if spec.keys.is_some() {
            f("keys")
        } else {
            f("text")
        };
        if names.is_empty() {
            return Ok(Vec::new());
        }
        let chord = parse_chord(&names, &field)?;
        chord
            .0
            .iter()
            .map(|key| match key {
                super::keys::Key::Modifier(m) => Ok(*m),
                other => Err(OpError::invalid(
                    &field,
                    format!(
                        "only modifier keys can be held during a {} (got {other:?})",
                        spec.kind
                    ),
                )),
            })
            .collect()
    };
    let click = |button: ButtonName, count: u32| -> Result<Action, OpError> {
        Ok(Action::Click {
            at: at()?,
            button,
            count,
            hold: hold()?,
        })
    };
    let kind = spec.kind.trim().to_ascii_lowercase();
    let action = match kind.as_str() {
        "screenshot" => Action::Screenshot,
        "click" => {
            let button = match spec.button.as_deref().map(str::to_ascii_lowercase).as_deref() {
                None | Some("left") => ButtonName::Left,
                Some("right") => ButtonName::Right,
                Some("wheel" | "middle") => ButtonName::Middle,
                Some("back") => ButtonName::Back,
                Some("forward") => ButtonName::Forward,
                Some(other) => {
                    return Err(OpError::invalid(
                        &f("button"),
                        format!("unknown button {other:?}; use left, right, wheel (middle), back or forward"),
                    ))
                }
            };
            click(button, 1)?
        }
        "left_click" => click(ButtonName::Left, 1)?,
        "right_click" => click(ButtonName::Right, 1)?,
        "middle_click" => click(ButtonName::Middle, 1)?,
        "double_click" => click(ButtonName::Left, 2)?,
        "triple_click" => click(ButtonName::Left, 3)?,
        "move" | "mouse_move" => Action::Move {
            at: at()?,
            hold: hold()?,
        },
        "scroll" => {
            let (steps_x, steps_y) = match (&spec.scroll_direction, spec.scroll_x, spec.scroll_y) {
                (Some(direction), None, None) => {
                    let n = spec.scroll_amount.unwrap_or(3).clamp(1, MAX_SCROLL_STEPS as u32) as i32;
                    match direction.to_ascii_lowercase().as_str() {
                        "up" => (0, -n),
                        "down" => (0, n),
                        "left" => (-n, 0),
                        "right" => (n, 0),
                        other => {
                            return Err(OpError::invalid(
                                &f("scroll_direction"),
                                format!("{other:?} is not up, down, left or right"),
                            ))
                        }
                    }
                }
                (Some(_), _, _) => {
                    return Err(OpError::invalid(
                        &f("scroll_direction"),
                        "give scroll_x/scroll_y or scroll_direction/scroll_amount, not both",
                    ))
                }
                (None, dx, dy) => (wheel_steps(dx.unwrap_or(0.0)), wheel_steps(dy.unwrap_or(0.0))),
            };
            if steps_x == 0 && steps_y == 0 {
                return Err(OpError::invalid(
                    &f("scroll_y"),
                    "scroll_x and scroll_y are both 0; e.g. scroll_y: 360 scrolls down 3 notches",
                ));
            }
            // Scrolling with the pointer left where it is, as Anthropic allows, needs a position.
            Action::Scroll {
                at: at()?,
                steps_x,
                steps_y,
                hold: if spec.text.is_some() || spec.keys.is_some() {
                    hold()?
                } else {
                    Vec::new()
                },
            }
        }
        "type" => {
            let text = spec
                .text
                .clone()
                .ok_or_else(|| OpError::invalid(&f("text"), "type needs text"))?;
            if text.chars().count() > MAX_TEXT_CHARS {
                return Err(OpError::invalid(
                    &f("text"),
                    format!("longer than {MAX_TEXT_CHARS} characters; split it"),
                ));
            }
            // Refused here, not halfway through typing: a control character has no key to press.
            if let Err((i, c)) = keysym::for_text(&text) {
                return Err(OpError::invalid(
                    &f("text"),
                    format!(
                        "character {i} is {c:?}, a control character, not text; press keys with keypress (\\n, \\t, backspace and escape are fine)"
                    ),
                ));
            }
            Action::Type { text }
        }
        "wait" => {
            let ms = match (spec.ms, spec.duration) {
                (Some(ms), _) => ms,
                (None, Some(secs)) if secs.is_finite() && secs >= 0.0 => (secs * 1000.0).round() as u64,
                (None, Some(secs)) => {
                    return Err(OpError::invalid(&f("duration"), format!("{secs} is not a number of seconds")))
                }
                (None, None) => DEFAULT_WAIT_MS,
            };
            if ms > MAX_WAIT_MS {
                return Err(OpError::invalid(
                    &f("ms"),
                    format!("{ms} ms is longer than the {MAX_WAIT_MS} ms a wait may last"),
                ));
            }
            Action::Wait { ms }
        }
        "keypress" => {
            let keys = spec
                .keys
                .as_ref()
                .ok_or_else(|| OpError::invalid(&f("keys"), "keypress needs keys, e.g. [\"CTRL\", \"c\"]"))?;
            Action::Keypress {
                chords: vec![parse_chord(keys, &f("keys"))?],
                hold_ms: spec.ms.unwrap_or(0).min(MAX_WAIT_MS),
            }
        }
        "key" | "hold_key" => {
            let text = spec.text.as_deref().ok_or_else(|| {
                OpError::invalid(&f("text"), format!("{kind} needs text, e.g. \"ctrl+s\""))
            })?;
            let hold_ms = if kind == "hold_key" {
                let secs = spec.duration.ok_or_else(|| {
                    OpError::invalid(&f("duration"), "hold_key needs duration (seconds)")
                })?;
                if !secs.is_finite() || secs < 0.0 || secs * 1000.0 > MAX_WAIT_MS as f64 {
                    return Err(OpError::invalid(
                        &f("duration"),
                        format!("{secs} is not 0-{} seconds", MAX_WAIT_MS / 1000),
                    ));
                }
                (secs * 1000.0).round() as u64
            } else {
                0
            };
            Action::Keypress {
                chords: parse_combo_text(text, &f("text"))?,
                hold_ms,
            }
        }
        "drag" | "left_click_drag" => {
            let path: Vec<Px> = match (&spec.path, spec.start_coordinate) {
                (Some(points), None) => points
                    .iter()
                    .enumerate()
                    .map(|(i, p)| {
                        let field = f(&format!("path[{i}]"));
                        let (x, y) = match *p {
                            PointSpec::Object { x, y } => (x, y),
                            PointSpec::Pair([x, y]) => (x, y),
                        };
                        Ok(Px {
                            x: pixel(x, &field)?,
                            y: pixel(y, &field)?,
                        })
                    })
                    .collect::<Result<_, OpError>>()?,
                (None, Some([x0, y0])) => vec![
                    Px {
                        x: pixel(x0, &f("start_coordinate"))?,
                        y: pixel(y0, &f("start_coordinate"))?,
                    },
                    at()?,
                ],
                (Some(_), Some(_)) => {
                    return Err(OpError::invalid(&f("path"), "give path or start_coordinate, not both"))
                }
                (None, None) => {
                    return Err(OpError::invalid(
                        &f("path"),
                        "drag needs path: [{\"x\": .., \"y\": ..}, ...] (at least two points)",
                    ))
                }
            };
            if path.len() < 2 {
                return Err(OpError::invalid(&f("path"), "a drag path needs at least two points"));
            }
            if path.len() > MAX_PATH_POINTS {
                return Err(OpError::invalid(
                    &f("path"),
                    format!("{} points; at most {MAX_PATH_POINTS}", path.len()),
                ));
            }
            Action::Drag {
                path,
                hold: hold()?,
            }
        }
        "left_mouse_down" | "mouse_down" => Action::MouseDown { at: optional_at()? },
        "left_mouse_up" | "mouse_up" => Action::MouseUp { at: optional_at()? },
        "cursor_position" => Action::CursorPosition,
        "zoom" => {
            let [x0, y0, x1, y1] = spec
                .region
                .ok_or_else(|| OpError::invalid(&f("region"), "zoom needs region: [x0, y0, x1, y1]"))?;
            let region = [
                pixel(x0, &f("region"))?,
                pixel(y0, &f("region"))?,
                pixel(x1, &f("region"))?,
                pixel(y1, &f("region"))?,
            ];
            if region[2] <= region[0] || region[3] <= region[1] {
                return Err(OpError::invalid(
                    &f("region"),
                    "region must be [x0, y0, x1, y1] with x1 > x0 and y1 > y0",
                ));
            }
            Action::Zoom { region }
        }
        "" => return Err(OpError::invalid(&f("type"), "missing; e.g. \"click\"")),
        other => {
            return Err(OpError::invalid(
                &f("type"),
                format!(
                    "unknown action {other:?}; use screenshot, click, double_click, scroll, type, wait, move, keypress, drag \
(or left_click, right_click, middle_click, triple_click, mouse_move, left_click_drag, key, hold_key, left_mouse_down, left_mouse_up, cursor_position, zoom)"
                ),
            ))
        }
    };
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_json(value: serde_json::Value) -> Result<Action, OpError> {
        let spec: ActionSpec = serde_json::from_value(value).expect("well-formed spec");
        parse(&spec, "action")
    }

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
    fn openai_and_anthropic_spellings_agree() {
        let openai =
            parse_json(json!({"type": "click", "x": 10, "y": 20, "button": "right"})).expect("ok");
        let anthropic =
            parse_json(json!({"action": "right_click", "coordinate": [10, 20]})).expect("ok");
        assert_eq!(openai, anthropic);
        let drag = parse_json(
            json!({"action": "left_click_drag", "start_coordinate": [1, 2], "coordinate": [3, 4]}),
        )
        .expect("ok");
        assert_eq!(
            drag,
            parse_json(json!({"type": "drag", "path": [{"x": 1, "y": 2}, [3, 4]]})).expect("ok")
        );
        let scroll = parse_json(json!({"action": "scroll", "coordinate": [5, 5], "scroll_direction": "up", "scroll_amount": 2}))
            .expect("ok");
        assert_eq!(
            scroll,
            parse_json(json!({"type": "scroll", "x": 5, "y": 5, "scroll_y": -240})).expect("ok")
        );
        assert_eq!(
            parse_json(json!({"action": "wait", "duration": 1.5})).expect("ok"),
            Action::Wait { ms: 1500 }
        );
        assert_eq!(
            parse_json(json!({"type": "wait"})).expect("ok"),
            Action::Wait {
                ms: DEFAULT_WAIT_MS
            }
        );
    }

    #[test]
    fn errors_name_the_field() {
        let err = parse_json(json!({"type": "click", "x": -1, "y": 2})).expect_err("negative");
        assert_eq!(err.field.as_deref(), Some("action.x"));
        let err = parse_json(json!({"type": "click", "x": 1})).expect_err("no y");
        assert_eq!(err.field.as_deref(), Some("action.y"));
        let err = parse_json(json!({"type": "click", "x": 1, "y": 1, "button": "fourth"}))
            .expect_err("button");
        assert_eq!(err.field.as_deref(), Some("action.button"));
        let err = parse_json(json!({"type": "fly"})).expect_err("type");
        assert_eq!(err.field.as_deref(), Some("action.type"));
        let err = parse_json(json!({"type": "drag", "path": [[1, 1]]})).expect_err("short path");
        assert_eq!(err.field.as_deref(), Some("action.path"));
        let err = parse_json(json!({"type": "type", "text": "ok\u{7}"})).expect_err("bell");
        assert_eq!(err.field.as_deref(), Some("action.text"));
        assert!(err.message.contains("character 2"), "{}", err.message);
    }

    #[test]
    fn malformed_fields_are_named() {
        let err = spec_from_json(json!({"type": "click", "x": "10", "y": 5}), "action")
            .expect_err("a string x");
        assert_eq!(err.field.as_deref(), Some("action.x"));
        assert!(err.message.contains("expected a number"), "{}", err.message);
        let err = spec_from_json(json!({"type": "keypress", "keys": "ctrl+c"}), "actions[3]")
            .expect_err("keys not a list");
        assert_eq!(err.field.as_deref(), Some("actions[3].keys"));
        let err = spec_from_json(json!({"type": "click", "bogus": 1}), "action")
            .expect_err("unknown field");
        assert_eq!(err.field.as_deref(), Some("action.bogus"));
        let err = spec_from_json(json!({"x": 1}), "action").expect_err("no type");
        assert_eq!(err.field.as_deref(), Some("action.type"));
        let err = spec_from_json(json!("click"), "action").expect_err("not an object");
        assert_eq!(err.field.as_deref(), Some("action"));
    }

    #[test]
    fn points_are_checked_against_the_screen() {
        let click = parse_json(json!({"type": "click", "x": 1280, "y": 0})).expect("ok");
        let err = check_points(&click, 1280, 800, "actions[1]").expect_err("off screen");
        assert_eq!(err.field.as_deref(), Some("actions[1].x"));
        let inside = parse_json(json!({"type": "click", "x": 1279, "y": 799})).expect("ok");
        assert!(check_points(&inside, 1280, 800, "action").is_ok());
    }

    #[test]
    fn held_keys_must_be_modifiers() {
        let click =
            parse_json(json!({"action": "left_click", "coordinate": [1, 1], "text": "shift"}))
                .expect("ok");
        assert_eq!(
            click,
            Action::Click {
                at: Px { x: 1, y: 1 },
                button: ButtonName::Left,
                count: 1,
                hold: vec![Modifier::Shift]
            }
        );
        assert!(parse_json(json!({"type": "click", "x": 1, "y": 1, "keys": ["a"]})).is_err());
    }
}
