//! From the request shape ([`ActionSpec`]) to a checked [`Action`]: OpenAI's names and fields, and
//! Anthropic's as aliases, normalised into one form. Every error names the field at fault
//! (`actions[2].x`), a field the action does not take included; nothing here knows the screen size
//! ([`check_points`] does that).

use screenpilot_desktop::{keysym, Modifier};

use super::actions::{
    wheel_steps, Action, PointField, Px, MAX_PATH_POINTS, MAX_SCROLL_STEPS, MAX_TEXT_CHARS,
    MAX_WAIT_MS, WHEEL_DELTA,
};
use super::keys::{parse_chord, parse_combo_text, Chord, Key};
use super::request::{ActionSpec, PointSpec};
use crate::ops::kit::button::Button;
use crate::ops::kit::error::OpError;

/// Fields of a pointer action that say where it acts.
const POINT: [&str; 3] = ["x", "y", "coordinate"];
/// Fields that name modifiers to hold during a pointer action: OpenAI's `keys`, Anthropic's `text`,
/// and `key`, where Anthropic's computer-use demo reads a click's modifiers.
const HOLD: [&str; 3] = ["keys", "text", "key"];

/// The fields an action of `kind` takes (beside its name), `None` for no such action. Each vendor's
/// own fields, and the other vendor's spelling of the same thing (`coordinate` for `x`, `y`), so
/// that a field which means nothing for the action is refused by name instead of ignored.
fn fields_of(kind: &str) -> Option<Vec<&'static str>> {
    let with = |groups: &[&[&'static str]]| Some(groups.concat());
    match kind {
        "screenshot" | "cursor_position" => with(&[]),
        "click" => with(&[&POINT, &HOLD, &["button"]]),
        "left_click" | "right_click" | "middle_click" | "double_click" | "triple_click"
        | "move" | "mouse_move" => with(&[&POINT, &HOLD]),
        "scroll" => with(&[
            &POINT,
            &HOLD,
            &["scroll_x", "scroll_y", "scroll_direction", "scroll_amount"],
        ]),
        "type" => with(&[&["text"]]),
        "wait" => with(&[&["ms", "duration"]]),
        "keypress" => with(&[&["keys", "ms"]]),
        "key" => with(&[&["text", "repeat"]]),
        "hold_key" => with(&[&["text", "duration"]]),
        "drag" | "left_click_drag" => with(&[&["path", "start_coordinate", "coordinate"], &HOLD]),
        "left_mouse_down" | "mouse_down" | "left_mouse_up" | "mouse_up" => with(&[&POINT]),
        "zoom" => with(&[&["region"]]),
        _ => None,
    }
}

/// Most presses of one `key` action (Anthropic's SDK allows `repeat` 1-100).
const MAX_KEY_REPEAT: u32 = 100;

/// A checked action from its request; `prefix` (e.g. "action" or "actions[2]") starts field names.
pub fn parse(spec: &ActionSpec, prefix: &str) -> Result<Action, OpError> {
    let fields = Fields { spec, prefix };
    let kind = spec.kind.trim().to_ascii_lowercase();
    if let Some(takes) = fields_of(&kind) {
        if let Some(extra) = spec.given().into_iter().find(|f| !takes.contains(f)) {
            let takes = if takes.is_empty() {
                "no fields".to_owned()
            } else {
                takes.join(", ")
            };
            return Err(OpError::invalid(
                &fields.name(extra),
                format!("{kind} takes no {extra} (it takes {takes})"),
            ));
        }
    }
    let action = match kind.as_str() {
        "screenshot" => Action::Screenshot,
        "click" => fields.click(fields.button()?, 1)?,
        "left_click" => fields.click(Button::Left, 1)?,
        "right_click" => fields.click(Button::Right, 1)?,
        "middle_click" => fields.click(Button::Middle, 1)?,
        "double_click" => fields.click(Button::Left, 2)?,
        "triple_click" => fields.click(Button::Left, 3)?,
        "move" | "mouse_move" => Action::Move {
            at: fields.at()?,
            hold: fields.hold()?,
        },
        "scroll" => fields.scroll()?,
        "type" => fields.type_text()?,
        "wait" => Action::Wait { ms: fields.wait()? },
        "keypress" => fields.keypress()?,
        "key" => Action::Keypress {
            chords: fields.repeated(parse_combo_text(
                fields.combo_text(&kind)?,
                &fields.name("text"),
            )?)?,
            hold_ms: 0,
        },
        "hold_key" => Action::Keypress {
            chords: parse_combo_text(fields.combo_text(&kind)?, &fields.name("text"))?,
            hold_ms: fields.hold_duration()?,
        },
        "drag" | "left_click_drag" => Action::Drag {
            path: fields.drag_path()?,
            hold: fields.hold()?,
        },
        "left_mouse_down" | "mouse_down" => Action::MouseDown {
            at: fields.optional_at()?,
        },
        "left_mouse_up" | "mouse_up" => Action::MouseUp {
            at: fields.optional_at()?,
        },
        "cursor_position" => Action::CursorPosition,
        "zoom" => Action::Zoom {
            region: fields.region()?,
        },
        "" => {
            return Err(OpError::invalid(
                &fields.name("type"),
                "missing; e.g. \"click\"",
            ))
        }
        other => {
            return Err(OpError::invalid(
                &fields.name("type"),
                format!(
                    "unknown action {other:?}; use screenshot, click, double_click, scroll, type, wait, move, keypress, drag \
(or left_click, right_click, middle_click, triple_click, mouse_move, left_click_drag, key, hold_key, left_mouse_down, left_mouse_up, cursor_position, zoom)"
                ),
            ))
        }
    };
    Ok(action)
}

/// A pixel coordinate from a JSON number: finite, not negative, rounded.
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

/// Milliseconds from a number of seconds, at most [`MAX_WAIT_MS`].
fn millis_of_seconds(secs: f64, field: &str) -> Result<u64, OpError> {
    if !secs.is_finite() || secs < 0.0 || secs * 1000.0 > MAX_WAIT_MS as f64 {
        return Err(OpError::invalid(
            field,
            format!("{secs} is not 0-{} seconds", MAX_WAIT_MS / 1000),
        ));
    }
    Ok((secs * 1000.0).round() as u64)
}

/// Milliseconds as given, at most [`MAX_WAIT_MS`].
fn bounded_ms(ms: u64, field: &str, what: &str) -> Result<u64, OpError> {
    if ms > MAX_WAIT_MS {
        return Err(OpError::invalid(
            field,
            format!("{ms} ms is longer than the {MAX_WAIT_MS} ms {what}"),
        ));
    }
    Ok(ms)
}

/// The fields of one action spec, read with their full names for errors.
struct Fields<'a> {
    spec: &'a ActionSpec,
    prefix: &'a str,
}

impl Fields<'_> {
    fn name(&self, field: &str) -> String {
        format!("{}.{field}", self.prefix)
    }

    /// The point it targets: x and y, or Anthropic's coordinate.
    fn at(&self) -> Result<Px, OpError> {
        let spec = self.spec;
        match (spec.x, spec.y, spec.coordinate) {
            (Some(x), Some(y), None) => Ok(Px {
                x: pixel(x, &self.name("x"))?,
                y: pixel(y, &self.name("y"))?,
            }),
            (None, None, Some([x, y])) => Ok(Px {
                x: pixel(x, &self.name("coordinate"))?,
                y: pixel(y, &self.name("coordinate"))?,
            }),
            (None, None, None) => Err(OpError::invalid(
                &self.name("x"),
                format!("{} needs x and y (pixels of the screenshot)", spec.kind),
            )),
            (Some(_), None, None) => Err(OpError::invalid(&self.name("y"), "x is given without y")),
            (None, Some(_), None) => Err(OpError::invalid(&self.name("x"), "y is given without x")),
            _ => Err(OpError::invalid(
                &self.name("coordinate"),
                "give x and y, or coordinate, not both",
            )),
        }
    }

    /// A point when one is given (Anthropic's mouse down/up may leave the pointer where it is).
    fn optional_at(&self) -> Result<Option<Px>, OpError> {
        let spec = self.spec;
        if spec.x.is_none() && spec.y.is_none() && spec.coordinate.is_none() {
            Ok(None)
        } else {
            self.at().map(Some)
        }
    }

    /// Modifiers to hold during a pointer action: OpenAI's keys list, or Anthropic's text ("shift",
    /// "ctrl+shift"; its demo reads them from `key`). One of the three at most.
    fn hold(&self) -> Result<Vec<Modifier>, OpError> {
        let spec = self.spec;
        let given: Vec<&str> = HOLD
            .into_iter()
            .filter(|f| spec.given().contains(f))
            .collect();
        if let [first, second, ..] = given[..] {
            return Err(OpError::invalid(
                &self.name(second),
                format!("{first} already says which keys to hold; give one of keys, text, key"),
            ));
        }
        let words = |text: &str| -> Vec<String> {
            text.split(['+', ' '])
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        let (names, field): (Vec<String>, String) = match (&spec.keys, &spec.text, &spec.key) {
            (Some(keys), _, _) => (keys.clone(), self.name("keys")),
            (None, Some(text), _) => (words(text), self.name("text")),
            (None, None, Some(key)) => (words(key), self.name("key")),
            (None, None, None) => return Ok(Vec::new()),
        };
        if names.is_empty() {
            return Ok(Vec::new());
        }
        parse_chord(&names, &field)?
            .0
            .iter()
            .map(|key| match key {
                Key::Modifier(m) => Ok(*m),
                other => Err(OpError::invalid(
                    &field,
                    format!(
                        "only modifier keys can be held during a {} (got {other:?})",
                        spec.kind
                    ),
                )),
            })
            .collect()
    }

    /// OpenAI's button names; "middle" is taken for "wheel" too.
    fn button(&self) -> Result<Button, OpError> {
        match self.spec.button.as_deref() {
            None => Ok(Button::Left),
            Some(name) => Button::parse(name).ok_or_else(|| {
                OpError::invalid(
                    &self.name("button"),
                    format!(
                        "unknown button {name:?}; use left, right, wheel (middle), back or forward"
                    ),
                )
            }),
        }
    }

    /// A click at x, y (or coordinate), or where the pointer is when neither is given.
    fn click(&self, button: Button, count: u32) -> Result<Action, OpError> {
        Ok(Action::Click {
            at: self.optional_at()?,
            button,
            count,
            hold: self.hold()?,
        })
    }

    /// OpenAI's deltas (scroll_x, scroll_y) or Anthropic's direction and amount (in notches), at x, y
    /// or where the pointer is. More than [`MAX_SCROLL_STEPS`] notches is refused, never cut down.
    fn scroll(&self) -> Result<Action, OpError> {
        let spec = self.spec;
        let (steps_x, steps_y) = match (&spec.scroll_direction, spec.scroll_x, spec.scroll_y) {
            (Some(direction), None, None) => {
                let n = match spec.scroll_amount {
                    None => 3,
                    Some(n) if (1..=MAX_SCROLL_STEPS.unsigned_abs()).contains(&n) => n as i32,
                    Some(n) => {
                        return Err(OpError::invalid(
                            &self.name("scroll_amount"),
                            format!(
                                "{n} notches; give 1-{MAX_SCROLL_STEPS} (scroll again for more)"
                            ),
                        ))
                    }
                };
                match direction.to_ascii_lowercase().as_str() {
                    "up" => (0, -n),
                    "down" => (0, n),
                    "left" => (-n, 0),
                    "right" => (n, 0),
                    other => {
                        return Err(OpError::invalid(
                            &self.name("scroll_direction"),
                            format!("{other:?} is not up, down, left or right"),
                        ))
                    }
                }
            }
            (Some(_), _, _) => {
                return Err(OpError::invalid(
                    &self.name("scroll_direction"),
                    "give scroll_x/scroll_y or scroll_direction/scroll_amount, not both",
                ))
            }
            (None, dx, dy) => {
                if spec.scroll_amount.is_some() {
                    return Err(OpError::invalid(
                        &self.name("scroll_amount"),
                        "scroll_amount goes with scroll_direction (up, down, left, right)",
                    ));
                }
                (self.steps(dx, "scroll_x")?, self.steps(dy, "scroll_y")?)
            }
        };
        if steps_x == 0 && steps_y == 0 {
            return Err(OpError::invalid(
                &self.name("scroll_y"),
                "scroll_x and scroll_y are both 0; e.g. scroll_y: 360 scrolls down 3 notches",
            ));
        }
        Ok(Action::Scroll {
            at: self.optional_at()?,
            steps_x,
            steps_y,
            hold: self.hold()?,
        })
    }

    /// Wheel notches for one of OpenAI's scroll deltas.
    fn steps(&self, delta: Option<f64>, field: &str) -> Result<i32, OpError> {
        let delta = delta.unwrap_or(0.0);
        wheel_steps(delta).ok_or_else(|| {
            OpError::invalid(
                &self.name(field),
                format!(
                    "{delta} is more than {MAX_SCROLL_STEPS} wheel notches of {WHEEL_DELTA}; give at most {} (scroll again for more)",
                    f64::from(MAX_SCROLL_STEPS) * WHEEL_DELTA
                ),
            )
        })
    }

    fn type_text(&self) -> Result<Action, OpError> {
        let field = self.name("text");
        let text = self
            .spec
            .text
            .clone()
            .ok_or_else(|| OpError::invalid(&field, "type needs text"))?;
        if text.chars().count() > MAX_TEXT_CHARS {
            return Err(OpError::invalid(
                &field,
                format!("longer than {MAX_TEXT_CHARS} characters; split it"),
            ));
        }
        // Refused here, not halfway through typing: a control character has no key to press.
        if let Err((i, c)) = keysym::for_text(&text) {
            return Err(OpError::invalid(
                &field,
                format!(
                    "character {i} is {c:?}, a control character, not text; press keys with keypress (\\n, \\t, backspace and escape are fine)"
                ),
            ));
        }
        Ok(Action::Type { text })
    }

    /// OpenAI's ms, or Anthropic's duration in seconds; neither: until the screen settles.
    fn wait(&self) -> Result<Option<u64>, OpError> {
        match (self.spec.ms, self.spec.duration) {
            (Some(_), Some(_)) => Err(OpError::invalid(
                &self.name("duration"),
                "give ms or duration, not both",
            )),
            (Some(ms), None) => bounded_ms(ms, &self.name("ms"), "a wait may last").map(Some),
            (None, Some(secs)) => millis_of_seconds(secs, &self.name("duration")).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// One chord as a list of key names, held for `ms` when given.
    fn keypress(&self) -> Result<Action, OpError> {
        let field = self.name("keys");
        let keys = self.spec.keys.as_ref().ok_or_else(|| {
            OpError::invalid(&field, "keypress needs keys, e.g. [\"CTRL\", \"c\"]")
        })?;
        Ok(Action::Keypress {
            chords: vec![parse_chord(keys, &field)?],
            hold_ms: match self.spec.ms {
                Some(ms) => bounded_ms(ms, &self.name("ms"), "a key may be held")?,
                None => 0,
            },
        })
    }

    /// Anthropic's key text ("ctrl+s", chords separated by spaces).
    fn combo_text(&self, kind: &str) -> Result<&str, OpError> {
        self.spec.text.as_deref().ok_or_else(|| {
            OpError::invalid(
                &self.name("text"),
                format!("{kind} needs text, e.g. \"ctrl+s\""),
            )
        })
    }

    /// The chords of a `key` action, pressed `repeat` times (1-100, default 1) in a row.
    fn repeated(&self, chords: Vec<Chord>) -> Result<Vec<Chord>, OpError> {
        match self.spec.repeat {
            None | Some(1) => Ok(chords),
            Some(n @ 2..=MAX_KEY_REPEAT) => {
                Ok((0..n).flat_map(|_| chords.iter().cloned()).collect())
            }
            Some(n) => Err(OpError::invalid(
                &self.name("repeat"),
                format!("{n} is not 1-{MAX_KEY_REPEAT} (press again for more)"),
            )),
        }
    }

    /// How long hold_key holds, in ms.
    fn hold_duration(&self) -> Result<u64, OpError> {
        let field = self.name("duration");
        let secs = self
            .spec
            .duration
            .ok_or_else(|| OpError::invalid(&field, "hold_key needs duration (seconds)"))?;
        millis_of_seconds(secs, &field)
    }

    /// OpenAI's path, or Anthropic's start_coordinate to coordinate.
    fn drag_path(&self) -> Result<Vec<Px>, OpError> {
        let spec = self.spec;
        let path: Vec<Px> = match (&spec.path, spec.start_coordinate) {
            (Some(points), None) => points
                .iter()
                .enumerate()
                .map(|(i, point)| {
                    let field = self.name(&format!("path[{i}]"));
                    let (x, y) = match *point {
                        PointSpec::Object { x, y } => (x, y),
                        PointSpec::Pair([x, y]) => (x, y),
                    };
                    Ok(Px {
                        x: pixel(x, &field)?,
                        y: pixel(y, &field)?,
                    })
                })
                .collect::<Result<_, OpError>>()?,
            (None, Some([x0, y0])) => {
                let field = self.name("start_coordinate");
                vec![
                    Px {
                        x: pixel(x0, &field)?,
                        y: pixel(y0, &field)?,
                    },
                    self.at()?,
                ]
            }
            (Some(_), Some(_)) => {
                return Err(OpError::invalid(
                    &self.name("path"),
                    "give path or start_coordinate, not both",
                ))
            }
            (None, None) => {
                return Err(OpError::invalid(
                    &self.name("path"),
                    "drag needs path: [{\"x\": .., \"y\": ..}, ...] (at least two points)",
                ))
            }
        };
        if path.len() < 2 {
            return Err(OpError::invalid(
                &self.name("path"),
                "a drag path needs at least two points",
            ));
        }
        if path.len() > MAX_PATH_POINTS {
            return Err(OpError::invalid(
                &self.name("path"),
                format!("{} points; at most {MAX_PATH_POINTS}", path.len()),
            ));
        }
        Ok(path)
    }

    /// zoom's [x0, y0, x1, y1], a non-empty rectangle.
    fn region(&self) -> Result<[u32; 4], OpError> {
        let field = self.name("region");
        let [x0, y0, x1, y1] = self
            .spec
            .region
            .ok_or_else(|| OpError::invalid(&field, "zoom needs region: [x0, y0, x1, y1]"))?;
        let region = [
            pixel(x0, &field)?,
            pixel(y0, &field)?,
            pixel(x1, &field)?,
            pixel(y1, &field)?,
        ];
        if region[2] <= region[0] || region[3] <= region[1] {
            return Err(OpError::invalid(
                &field,
                "region must be [x0, y0, x1, y1] with x1 > x0 and y1 > y0",
            ));
        }
        Ok(region)
    }
}

/// Refuse any targeted pixel outside a `width` x `height` screenshot. `prefix` names the action and
/// `spec` is its request, so the error names the field the caller wrote (`x`, `coordinate`, ...).
pub fn check_points(
    action: &Action,
    spec: &ActionSpec,
    width: u32,
    height: u32,
    prefix: &str,
) -> Result<(), OpError> {
    let bounds = format!(
        "the {width}x{height} screenshot (x 0-{}, y 0-{}); coordinates are pixels of the screenshot, nothing was sent",
        width.saturating_sub(1),
        height.saturating_sub(1)
    );
    for (i, (p, field)) in action.points().into_iter().enumerate() {
        if p.x < width && p.y < height {
            continue;
        }
        let pair = format!("({}, {})", p.x, p.y);
        let (name, what) = match field {
            PointField::Pointer if spec.coordinate.is_some() => ("coordinate", pair),
            PointField::Pointer if p.x >= width => ("x", p.x.to_string()),
            PointField::Pointer => ("y", p.y.to_string()),
            PointField::Path if spec.start_coordinate.is_some() && i == 0 => {
                ("start_coordinate", pair)
            }
            PointField::Path if spec.start_coordinate.is_some() => ("coordinate", pair),
            PointField::Path => ("path", pair),
            PointField::Region => ("region", pair),
        };
        return Err(OpError::invalid(
            &format!("{prefix}.{name}"),
            format!("{what} is outside {bounds}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kit::button::Button;

    #[test]
    fn points_are_checked_against_the_screenshot_naming_the_field() {
        let spec = ActionSpec::default();
        let click = |x, y| Action::Click {
            at: Some(Px { x, y }),
            button: Button::Left,
            count: 1,
            hold: Vec::new(),
        };
        let err =
            check_points(&click(1500, 0), &spec, 1356, 848, "action").expect_err("off screen");
        assert_eq!(err.field.as_deref(), Some("action.x"));
        assert!(
            err.message
                .starts_with("action.x: 1500 is outside the 1356x848 screenshot"),
            "{}",
            err.message
        );
        let err =
            check_points(&click(0, 848), &spec, 1356, 848, "actions[1]").expect_err("off screen");
        assert_eq!(err.field.as_deref(), Some("actions[1].y"));
        let anthropic = ActionSpec {
            coordinate: Some([0.0, 848.0]),
            ..ActionSpec::default()
        };
        let err = check_points(&click(0, 848), &anthropic, 1356, 848, "action").expect_err("off");
        assert_eq!(err.field.as_deref(), Some("action.coordinate"));
        assert!(
            err.message.contains("(0, 848) is outside"),
            "{}",
            err.message
        );
        assert!(check_points(&click(1355, 847), &spec, 1356, 848, "action").is_ok());
        let at_pointer = Action::Click {
            at: None,
            button: Button::Left,
            count: 1,
            hold: Vec::new(),
        };
        assert!(check_points(&at_pointer, &spec, 1, 1, "action").is_ok());
        let zoom = Action::Zoom {
            region: [0, 0, 1280, 801],
        };
        let err = check_points(&zoom, &spec, 1280, 800, "action").expect_err("region too tall");
        assert_eq!(err.field.as_deref(), Some("action.region"));
    }

    use serde_json::json;

    fn parse_json(value: serde_json::Value) -> Result<Action, OpError> {
        let spec: ActionSpec = serde_json::from_value(value).expect("well-formed spec");
        parse(&spec, "action")
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
            Action::Wait { ms: Some(1500) }
        );
        assert_eq!(
            parse_json(json!({"type": "wait"})).expect("ok"),
            Action::Wait { ms: None }
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
    fn held_keys_must_be_modifiers() {
        let click =
            parse_json(json!({"action": "left_click", "coordinate": [1, 1], "text": "shift"}))
                .expect("ok");
        assert_eq!(
            click,
            Action::Click {
                at: Some(Px { x: 1, y: 1 }),
                button: Button::Left,
                count: 1,
                hold: vec![Modifier::Shift]
            }
        );
        assert!(parse_json(json!({"type": "click", "x": 1, "y": 1, "keys": ["a"]})).is_err());
    }

    #[test]
    fn waits_and_holds_are_bounded() {
        let err = parse_json(json!({"type": "wait", "ms": 60_001})).expect_err("too long");
        assert_eq!(err.field.as_deref(), Some("action.ms"));
        let err = parse_json(json!({"action": "wait", "duration": 1e300})).expect_err("too long");
        assert_eq!(err.field.as_deref(), Some("action.duration"));
        let err = parse_json(json!({"type": "keypress", "keys": ["a"], "ms": 90_000}))
            .expect_err("held too long");
        assert_eq!(err.field.as_deref(), Some("action.ms"));
        let held = parse_json(json!({"type": "keypress", "keys": ["a"], "ms": 500})).expect("ok");
        assert!(matches!(held, Action::Keypress { hold_ms: 500, .. }));
    }

    #[test]
    fn clicks_and_scrolls_without_a_point_act_at_the_pointer() {
        assert_eq!(
            parse_json(json!({"action": "left_click"})).expect("ok"),
            Action::Click {
                at: None,
                button: Button::Left,
                count: 1,
                hold: Vec::new()
            }
        );
        assert!(matches!(
            parse_json(json!({"action": "double_click"})),
            Ok(Action::Click {
                at: None,
                count: 2,
                ..
            })
        ));
        assert_eq!(
            parse_json(json!({"action": "scroll", "scroll_direction": "down", "scroll_amount": 5}))
                .expect("ok"),
            Action::Scroll {
                at: None,
                steps_x: 0,
                steps_y: 5,
                hold: Vec::new()
            }
        );
        // Half a point is still a mistake.
        let err = parse_json(json!({"action": "left_click", "x": 3})).expect_err("no y");
        assert_eq!(err.field.as_deref(), Some("action.y"));
        // A move needs somewhere to go.
        let err = parse_json(json!({"action": "mouse_move"})).expect_err("no point");
        assert_eq!(err.field.as_deref(), Some("action.x"));
    }

    #[test]
    fn scroll_amounts_past_the_limit_are_refused_not_cut_down() {
        let err = parse_json(json!({"action": "scroll", "coordinate": [1, 1], "scroll_direction": "down", "scroll_amount": 100}))
            .expect_err("too many notches");
        assert_eq!(err.field.as_deref(), Some("action.scroll_amount"));
        assert!(err.message.contains("100"), "{}", err.message);
        let err =
            parse_json(json!({"action": "scroll", "scroll_direction": "up", "scroll_amount": 0}))
                .expect_err("no notches");
        assert_eq!(err.field.as_deref(), Some("action.scroll_amount"));
        let most =
            parse_json(json!({"action": "scroll", "scroll_direction": "up", "scroll_amount": 50}))
                .expect("the most");
        assert!(matches!(most, Action::Scroll { steps_y: -50, .. }));
        let err =
            parse_json(json!({"type": "scroll", "x": 1, "y": 1, "scroll_x": 0, "scroll_y": 7200}))
                .expect_err("too far");
        assert_eq!(err.field.as_deref(), Some("action.scroll_y"));
        let err = parse_json(
            json!({"type": "scroll", "x": 1, "y": 1, "scroll_y": 120, "scroll_amount": 2}),
        )
        .expect_err("amount without direction");
        assert_eq!(err.field.as_deref(), Some("action.scroll_amount"));
    }

    #[test]
    fn a_chord_written_as_one_string_is_split() {
        let one = parse_json(json!({"type": "keypress", "keys": ["ctrl+c"]})).expect("ok");
        let list = parse_json(json!({"type": "keypress", "keys": ["CTRL", "c"]})).expect("ok");
        assert_eq!(one, list);
        let mixed =
            parse_json(json!({"type": "keypress", "keys": ["ctrl+shift", "t"]})).expect("ok");
        assert_eq!(
            mixed,
            parse_json(json!({"type": "keypress", "keys": ["CTRL", "SHIFT", "t"]})).expect("ok")
        );
        let plus = parse_json(json!({"type": "keypress", "keys": ["ctrl++"]})).expect("ok");
        assert_eq!(
            plus,
            parse_json(json!({"type": "keypress", "keys": ["CTRL", "+"]})).expect("ok")
        );
        let err = parse_json(json!({"type": "keypress", "keys": ["CTRL", "ctrl+nope"]}))
            .expect_err("unknown key");
        assert_eq!(err.field.as_deref(), Some("action.keys[1]"));
    }
}
