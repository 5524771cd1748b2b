//! Mouse events and their bytes in the application's mouse protocol (SGR 1006, UTF-8 1005 or the
//! X10/normal byte encoding), plus finding on-screen text to click on.
//!
//! This module holds the event types and the encoding of one event; `gestures` turns a click, drag
//! or scroll into the events the application's tracking mode reports, and `find` locates text on
//! the screen in cells.
//!
//! Positions are 0-based cells; the protocols are 1-based, and the conversion happens here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::geometry::CellPos;
use crate::keys::Modifiers;
use crate::modes::{InputModes, MouseEncoding, MouseTracking};

mod find;
mod gestures;

pub use find::{find_text, find_text_center, find_text_match, TextMatch};
pub use gestures::{click, down, drag, move_to, scroll, up, MAX_SCROLL_STEPS};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseButton {
    Left,
    Middle,
    Right,
    WheelUp,
    WheelDown,
    WheelLeft,
    WheelRight,
    /// The "back" side button (xterm button 8).
    Back,
    /// The "forward" side button (xterm button 9).
    Forward,
    /// No button: a plain move.
    None,
}

impl MouseButton {
    fn is_wheel(self) -> bool {
        matches!(
            self,
            MouseButton::WheelUp
                | MouseButton::WheelDown
                | MouseButton::WheelLeft
                | MouseButton::WheelRight
        )
    }

    /// xterm's button number, before motion and modifier bits.
    fn code(self) -> u32 {
        match self {
            MouseButton::Left => 0,
            MouseButton::Middle => 1,
            MouseButton::Right => 2,
            MouseButton::None => 3,
            MouseButton::WheelUp => 64,
            MouseButton::WheelDown => 65,
            MouseButton::WheelLeft => 66,
            MouseButton::WheelRight => 67,
            MouseButton::Back => 128,
            MouseButton::Forward => 129,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseAction {
    Press,
    Release,
    /// The pointer moved to `pos`, with `button` held (or [`MouseButton::None`]).
    Move,
}

/// One mouse event at a cell. Only shift, alt and ctrl reach the application; super is ignored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MouseEvent {
    pub pos: CellPos,
    pub button: MouseButton,
    pub action: MouseAction,
    pub mods: Modifiers,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MouseError {
    #[error(
        "the application has not enabled mouse reporting (no DECSET 1000/1002/1003); \
         it cannot receive clicks — use keys instead"
    )]
    NotEnabled,
    #[error(
        "cell (col {}, row {}) is beyond the {encoding} mouse encoding the application chose, \
         which reaches only the first {limit} columns and rows",
        pos.col.0, pos.row.0
    )]
    OutOfRange {
        pos: CellPos,
        encoding: &'static str,
        limit: u32,
    },
    #[error("a drag needs at least one cell in its path")]
    EmptyPath,
    #[error("{steps} wheel steps is too many for one scroll (at most {max})")]
    TooManySteps { steps: u32, max: u32 },
}

/// The bytes for one event, or nothing when the application's tracking mode does not report it
/// (motion without mode 1002/1003, a wheel "release", a press of no button). An error when the
/// application has no mouse reporting at all, or the encoding cannot express the position.
pub fn encode_mouse(ev: &MouseEvent, modes: &InputModes) -> Result<Vec<u8>, MouseError> {
    let tracking = modes.mouse_tracking;
    let reported = match ev.action {
        _ if tracking == MouseTracking::Off => return Err(MouseError::NotEnabled),
        MouseAction::Press => ev.button != MouseButton::None,
        // Wheels click; they have no release.
        MouseAction::Release => ev.button != MouseButton::None && !ev.button.is_wheel(),
        MouseAction::Move => match tracking {
            MouseTracking::Motion => true,
            MouseTracking::Drag => ev.button != MouseButton::None,
            MouseTracking::Off | MouseTracking::Click => false,
        },
    };
    if !reported {
        return Ok(Vec::new());
    }

    let sgr = modes.mouse_encoding == MouseEncoding::Sgr;
    let mut code = if ev.action == MouseAction::Release && !sgr {
        // The byte encodings cannot say which button was released.
        3
    } else {
        ev.button.code()
    };
    if ev.action == MouseAction::Move {
        code += 32;
    }
    code +=
        u32::from(ev.mods.shift) * 4 + u32::from(ev.mods.alt) * 8 + u32::from(ev.mods.ctrl) * 16;
    let x = u32::from(ev.pos.col.0) + 1;
    let y = u32::from(ev.pos.row.0) + 1;

    let mut out = Vec::with_capacity(16);
    match modes.mouse_encoding {
        MouseEncoding::Sgr => {
            let last = if ev.action == MouseAction::Release {
                'm'
            } else {
                'M'
            };
            out.extend_from_slice(format!("\x1b[<{code};{x};{y}{last}").as_bytes());
        }
        MouseEncoding::X10 => {
            let out_of_range = || MouseError::OutOfRange {
                pos: ev.pos,
                encoding: "X10",
                limit: 223,
            };
            out.extend_from_slice(b"\x1b[M");
            for value in [code, x, y] {
                out.push(u8::try_from(value + 32).map_err(|_| out_of_range())?);
            }
        }
        MouseEncoding::Utf8 => {
            out.extend_from_slice(b"\x1b[M");
            for value in [code, x, y] {
                // xterm stops at 2047, the last two-byte UTF-8 character.
                let ch = Some(value + 32)
                    .filter(|v| *v < 0x800)
                    .and_then(char::from_u32)
                    .ok_or(MouseError::OutOfRange {
                        pos: ev.pos,
                        encoding: "UTF-8 (1005)",
                        limit: 2015,
                    })?;
                let mut buf = [0; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    Ok(out)
}

fn event(pos: CellPos, button: MouseButton, action: MouseAction, mods: Modifiers) -> MouseEvent {
    MouseEvent {
        pos,
        button,
        action,
        mods,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes(tracking: MouseTracking, encoding: MouseEncoding) -> InputModes {
        InputModes {
            mouse_tracking: tracking,
            mouse_encoding: encoding,
            ..InputModes::default()
        }
    }

    pub(super) fn sgr(tracking: MouseTracking) -> InputModes {
        modes(tracking, MouseEncoding::Sgr)
    }

    pub(super) fn press(col: u16, row: u16, button: MouseButton) -> MouseEvent {
        event(
            CellPos::new(col, row),
            button,
            MouseAction::Press,
            Modifiers::NONE,
        )
    }

    #[test]
    fn x10_press_and_release() {
        let m = modes(MouseTracking::Click, MouseEncoding::X10);
        let ev = press(0, 0, MouseButton::Left);
        assert_eq!(encode_mouse(&ev, &m), Ok(b"\x1b[M !!".to_vec()));
        let release = MouseEvent {
            action: MouseAction::Release,
            ..press(9, 4, MouseButton::Middle)
        };
        assert_eq!(
            encode_mouse(&release, &m),
            Ok(vec![0x1b, b'[', b'M', 35, 42, 37])
        );
    }

    #[test]
    fn x10_coordinates_stop_at_223() {
        let m = modes(MouseTracking::Click, MouseEncoding::X10);
        assert_eq!(
            encode_mouse(&press(222, 0, MouseButton::Left), &m),
            Ok(vec![0x1b, b'[', b'M', 32, 255, 33])
        );
        let err = encode_mouse(&press(223, 0, MouseButton::Left), &m);
        assert_eq!(
            err,
            Err(MouseError::OutOfRange {
                pos: CellPos::new(223, 0),
                encoding: "X10",
                limit: 223
            })
        );
    }

    #[test]
    fn utf8_coordinates_beyond_95_take_two_bytes() {
        let m = modes(MouseTracking::Click, MouseEncoding::Utf8);
        let mut expected = b"\x1b[M !".to_vec();
        expected.extend("\u{14d}".as_bytes()); // 32 + 301
        let ev = MouseEvent {
            pos: CellPos::new(0, 300),
            ..press(0, 0, MouseButton::Left)
        };
        assert_eq!(encode_mouse(&ev, &m), Ok(expected));
        assert!(matches!(
            encode_mouse(&press(2015, 0, MouseButton::Left), &m),
            Err(MouseError::OutOfRange { limit: 2015, .. })
        ));
        assert!(encode_mouse(&press(2014, 0, MouseButton::Left), &m).is_ok());
    }

    #[test]
    fn not_enabled_is_a_clear_error() {
        let err = click(
            CellPos::new(0, 0),
            MouseButton::Left,
            1,
            Modifiers::NONE,
            &InputModes::default(),
        );
        assert_eq!(err, Err(MouseError::NotEnabled));
        assert_eq!(
            MouseError::NotEnabled.to_string(),
            "the application has not enabled mouse reporting (no DECSET 1000/1002/1003); \
             it cannot receive clicks — use keys instead"
        );
        let off = InputModes::default();
        assert_eq!(
            encode_mouse(&press(0, 0, MouseButton::Left), &off),
            Err(MouseError::NotEnabled)
        );
        assert!(scroll(CellPos::new(0, 0), 0, 1, Modifiers::NONE, &off).is_err());
    }

    #[test]
    fn buttons_and_modifiers() {
        let m = sgr(MouseTracking::Click);
        let code = |button, mods| {
            let ev = MouseEvent {
                mods,
                ..press(0, 0, button)
            };
            encode_mouse(&ev, &m).map(|b| String::from_utf8_lossy(&b).into_owned())
        };
        assert_eq!(
            code(MouseButton::Middle, Modifiers::NONE),
            Ok("\x1b[<1;1;1M".into())
        );
        assert_eq!(
            code(MouseButton::WheelLeft, Modifiers::NONE),
            Ok("\x1b[<66;1;1M".into())
        );
        assert_eq!(
            code(MouseButton::WheelRight, Modifiers::NONE),
            Ok("\x1b[<67;1;1M".into())
        );
        assert_eq!(
            code(MouseButton::Back, Modifiers::NONE),
            Ok("\x1b[<128;1;1M".into())
        );
        assert_eq!(
            code(MouseButton::Forward, Modifiers::NONE),
            Ok("\x1b[<129;1;1M".into())
        );
        let ctrl_shift = Modifiers::CTRL.with(Modifiers::SHIFT);
        assert_eq!(
            code(MouseButton::Left, ctrl_shift),
            Ok("\x1b[<20;1;1M".into())
        );
        assert_eq!(
            code(MouseButton::Left, Modifiers::ALT),
            Ok("\x1b[<8;1;1M".into())
        );
    }

    #[test]
    fn motion_is_reported_only_when_tracked() {
        let moving = |held| MouseEvent {
            action: MouseAction::Move,
            ..press(3, 0, held)
        };
        let click_only = sgr(MouseTracking::Click);
        assert_eq!(
            encode_mouse(&moving(MouseButton::Left), &click_only),
            Ok(vec![])
        );
        let drag = sgr(MouseTracking::Drag);
        assert_eq!(encode_mouse(&moving(MouseButton::None), &drag), Ok(vec![]));
        assert_eq!(
            encode_mouse(&moving(MouseButton::Left), &drag),
            Ok(b"\x1b[<32;4;1M".to_vec())
        );
        let motion = sgr(MouseTracking::Motion);
        assert_eq!(
            encode_mouse(&moving(MouseButton::None), &motion),
            Ok(b"\x1b[<35;4;1M".to_vec())
        );
    }
}
