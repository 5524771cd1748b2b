//! The one mouse-button type of every operation (`mouse`, `computer`, `textual_run`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::mouse::MouseButton;

/// A button to press. `wheel` is the middle button (pressing the wheel), as OpenAI's action names it;
/// Textual's numbers 1, 2, 3 (and X's 8, 9) are read too.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Button {
    #[default]
    Left,
    Middle,
    Right,
    Back,
    Forward,
}

impl Button {
    /// The button by name, as models and people write it (`left`, `wheel`, `MIDDLE`).
    pub fn parse(name: &str) -> Option<Button> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "left" => Button::Left,
            "middle" | "wheel" => Button::Middle,
            "right" => Button::Right,
            "back" => Button::Back,
            "forward" => Button::Forward,
            _ => return None,
        })
    }

    /// The button by number: 1 left, 2 middle, 3 right (as X and Textual count), 8 back, 9 forward.
    pub fn from_number(number: u64) -> Option<Button> {
        Some(match number {
            1 => Button::Left,
            2 => Button::Middle,
            3 => Button::Right,
            8 => Button::Back,
            9 => Button::Forward,
            _ => return None,
        })
    }

    /// The X11 button number (4-7 are the wheel).
    pub fn x11_number(self) -> u8 {
        match self {
            Button::Left => 1,
            Button::Middle => 2,
            Button::Right => 3,
            Button::Back => 8,
            Button::Forward => 9,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Button::Left => "left",
            Button::Middle => "middle",
            Button::Right => "right",
            Button::Back => "back",
            Button::Forward => "forward",
        }
    }
}

impl From<Button> for MouseButton {
    fn from(button: Button) -> MouseButton {
        match button {
            Button::Left => MouseButton::Left,
            Button::Middle => MouseButton::Middle,
            Button::Right => MouseButton::Right,
            Button::Back => MouseButton::Back,
            Button::Forward => MouseButton::Forward,
        }
    }
}

impl<'de> Deserialize<'de> for Button {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Button, D::Error> {
        use serde::de::Error;
        match serde_json::Value::deserialize(deserializer)? {
            serde_json::Value::String(name) => Button::parse(&name).ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown button {name:?}; use left, middle (or wheel), right, back or forward"
                ))
            }),
            serde_json::Value::Number(n) => n.as_u64().and_then(Button::from_number).ok_or_else(|| {
                D::Error::custom(format!(
                    "unknown button {n}; use 1 (left), 2 (middle), 3 (right), 8 (back) or 9 (forward)"
                ))
            }),
            other => Err(D::Error::custom(format!(
                "a button is a name like \"left\", not {other}"
            ))),
        }
    }
}
