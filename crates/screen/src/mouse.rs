//! Mouse events and their bytes in the application's mouse protocol (SGR 1006, UTF-8 1005 or the
//! X10/normal byte encoding), plus finding on-screen text to click on.
//!
//! Positions are 0-based cells; the protocols are 1-based, and the conversion happens here.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use thiserror::Error;
use unicode_width::UnicodeWidthChar;

use crate::geometry::CellPos;
use crate::keys::Modifiers;
use crate::modes::{InputModes, MouseEncoding, MouseTracking};

/// The most wheel steps one [`scroll`] sends on each axis.
pub const MAX_SCROLL_STEPS: u32 = 1000;

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

/// Encode a sequence of events, one write each, dropping the ones the application does not track.
fn writes(
    events: impl IntoIterator<Item = MouseEvent>,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    if modes.mouse_tracking == MouseTracking::Off {
        return Err(MouseError::NotEnabled);
    }
    let mut out = Vec::new();
    for ev in events {
        let bytes = encode_mouse(&ev, modes)?;
        if !bytes.is_empty() {
            out.push(bytes);
        }
    }
    Ok(out)
}

/// When the application follows every motion (1003), the pointer arrives before it clicks, as a
/// real mouse would; hover effects then match what a person sees.
fn arrive(pos: CellPos, mods: Modifiers, modes: &InputModes) -> Option<MouseEvent> {
    (modes.mouse_tracking == MouseTracking::Motion)
        .then(|| event(pos, MouseButton::None, MouseAction::Move, mods))
}

/// `count` clicks (press and release) at `pos`: 2 is a double click.
pub fn click(
    pos: CellPos,
    button: MouseButton,
    count: u32,
    mods: Modifiers,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    let presses = (0..count).flat_map(|_| {
        [
            event(pos, button, MouseAction::Press, mods),
            event(pos, button, MouseAction::Release, mods),
        ]
    });
    writes(arrive(pos, mods, modes).into_iter().chain(presses), modes)
}

/// Press at the first cell of `path`, move through every later cell with the button held, release
/// at the last. Cells are not interpolated: pass intermediate cells for a path the app should see.
pub fn drag(
    path: &[CellPos],
    button: MouseButton,
    mods: Modifiers,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    let (Some(first), Some(last)) = (path.first(), path.last()) else {
        return Err(MouseError::EmptyPath);
    };
    let moves = path[1..]
        .iter()
        .map(|pos| event(*pos, button, MouseAction::Move, mods));
    let events = arrive(*first, mods, modes)
        .into_iter()
        .chain([event(*first, button, MouseAction::Press, mods)])
        .chain(moves)
        .chain([event(*last, button, MouseAction::Release, mods)]);
    writes(events, modes)
}

/// Wheel steps at `pos`: `dy` > 0 scrolls down, < 0 up; `dx` > 0 right, < 0 left. Each step is one
/// wheel event; how far a step scrolls is up to the application (often three lines).
pub fn scroll(
    pos: CellPos,
    dx: i32,
    dy: i32,
    mods: Modifiers,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    for steps in [dx.unsigned_abs(), dy.unsigned_abs()] {
        if steps > MAX_SCROLL_STEPS {
            return Err(MouseError::TooManySteps {
                steps,
                max: MAX_SCROLL_STEPS,
            });
        }
    }
    let vertical = if dy > 0 {
        MouseButton::WheelDown
    } else {
        MouseButton::WheelUp
    };
    let horizontal = if dx > 0 {
        MouseButton::WheelRight
    } else {
        MouseButton::WheelLeft
    };
    let steps = std::iter::repeat_n(vertical, dy.unsigned_abs() as usize)
        .chain(std::iter::repeat_n(horizontal, dx.unsigned_abs() as usize))
        .map(|button| event(pos, button, MouseAction::Press, mods));
    writes(arrive(pos, mods, modes).into_iter().chain(steps), modes)
}

/// Move the pointer to `pos` with `held` pressed ([`MouseButton::None`] for a plain move). Empty
/// when the application does not track such motion.
pub fn move_to(
    pos: CellPos,
    held: MouseButton,
    mods: Modifiers,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    writes([event(pos, held, MouseAction::Move, mods)], modes)
}

/// Press `button` at `pos` and keep it held.
pub fn down(
    pos: CellPos,
    button: MouseButton,
    mods: Modifiers,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    let events =
        arrive(pos, mods, modes)
            .into_iter()
            .chain([event(pos, button, MouseAction::Press, mods)]);
    writes(events, modes)
}

/// Release `button` at `pos`.
pub fn up(
    pos: CellPos,
    button: MouseButton,
    mods: Modifiers,
    modes: &InputModes,
) -> Result<Vec<Vec<u8>>, MouseError> {
    writes([event(pos, button, MouseAction::Release, mods)], modes)
}

/// Where a piece of text is on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextMatch {
    /// The cell of its first character.
    pub start: CellPos,
    /// How many cells its first line covers.
    pub width: u16,
}

impl TextMatch {
    /// The middle cell of its first line (the left one of two middles).
    pub fn center(&self) -> CellPos {
        let offset = self.width.saturating_sub(1) / 2;
        CellPos::new(self.start.col.0.saturating_add(offset), self.start.row.0)
    }
}

/// The `nth` (0-based) occurrence of `needle` in `text`, a screen as [`crate::Screen::text`] gives
/// it (rows joined by `\n`). Columns count cells, so a wide (CJK) character counts two.
/// Occurrences do not overlap. `None` when there is no such occurrence or the needle is empty.
pub fn find_text_match(text: &str, needle: &str, nth: usize) -> Option<TextMatch> {
    if needle.is_empty() {
        return None;
    }
    let (index, _) = text.match_indices(needle).nth(nth)?;
    let before = &text[..index];
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    let row = before.bytes().filter(|b| *b == b'\n').count();
    let col = cell_width(&text[line_start..index]);
    let first_line = needle.split('\n').next().unwrap_or_default();
    Some(TextMatch {
        start: CellPos::new(u16::try_from(col).ok()?, u16::try_from(row).ok()?),
        width: u16::try_from(cell_width(first_line)).ok()?,
    })
}

/// The cell of the first character of the `nth` occurrence of `needle` (see [`find_text_match`]).
pub fn find_text(text: &str, needle: &str, nth: usize) -> Option<CellPos> {
    find_text_match(text, needle, nth).map(|m| m.start)
}

/// The middle cell of the `nth` occurrence of `needle` (see [`find_text_match`]): the safest cell to
/// click on a button label.
pub fn find_text_center(text: &str, needle: &str, nth: usize) -> Option<CellPos> {
    find_text_match(text, needle, nth).map(|m| m.center())
}

/// Cells taken by `s`, measured as the emulator does (alacritty uses the same Unicode widths).
fn cell_width(s: &str) -> usize {
    s.chars().map(|ch| ch.width().unwrap_or(0)).sum()
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

    fn sgr(tracking: MouseTracking) -> InputModes {
        modes(tracking, MouseEncoding::Sgr)
    }

    fn press(col: u16, row: u16, button: MouseButton) -> MouseEvent {
        event(
            CellPos::new(col, row),
            button,
            MouseAction::Press,
            Modifiers::NONE,
        )
    }

    fn strings(writes: Vec<Vec<u8>>) -> Vec<String> {
        writes
            .into_iter()
            .map(|w| String::from_utf8_lossy(&w).into_owned())
            .collect()
    }

    #[test]
    fn sgr_click_at_origin() {
        let got = click(
            CellPos::new(0, 0),
            MouseButton::Left,
            1,
            Modifiers::NONE,
            &sgr(MouseTracking::Click),
        );
        assert_eq!(
            got.map(strings),
            Ok(vec!["\x1b[<0;1;1M".into(), "\x1b[<0;1;1m".into()])
        );
    }

    #[test]
    fn double_click_is_two_press_release_pairs() {
        let got = click(
            CellPos::new(4, 2),
            MouseButton::Right,
            2,
            Modifiers::NONE,
            &sgr(MouseTracking::Drag),
        );
        let one = ["\x1b[<2;5;3M", "\x1b[<2;5;3m"];
        assert_eq!(
            got.map(strings),
            Ok([one, one].concat().iter().map(|s| s.to_string()).collect())
        );
    }

    #[test]
    fn click_under_full_motion_tracking_moves_there_first() {
        let got = click(
            CellPos::new(1, 1),
            MouseButton::Left,
            1,
            Modifiers::NONE,
            &sgr(MouseTracking::Motion),
        );
        assert_eq!(
            got.map(strings),
            Ok(vec![
                "\x1b[<35;2;2M".into(),
                "\x1b[<0;2;2M".into(),
                "\x1b[<0;2;2m".into()
            ])
        );
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

    #[test]
    fn drag_presses_moves_and_releases() {
        let path = [CellPos::new(0, 0), CellPos::new(1, 0), CellPos::new(2, 1)];
        let got = drag(
            &path,
            MouseButton::Left,
            Modifiers::NONE,
            &sgr(MouseTracking::Drag),
        );
        assert_eq!(
            got.map(strings),
            Ok(vec![
                "\x1b[<0;1;1M".into(),
                "\x1b[<32;2;1M".into(),
                "\x1b[<32;3;2M".into(),
                "\x1b[<0;3;2m".into(),
            ])
        );
        // Mode 1000 sees only the press and the release.
        let got = drag(
            &path,
            MouseButton::Left,
            Modifiers::NONE,
            &sgr(MouseTracking::Click),
        );
        assert_eq!(
            got.map(strings),
            Ok(vec!["\x1b[<0;1;1M".into(), "\x1b[<0;3;2m".into()])
        );
        assert_eq!(
            drag(
                &[],
                MouseButton::Left,
                Modifiers::NONE,
                &sgr(MouseTracking::Drag)
            ),
            Err(MouseError::EmptyPath)
        );
    }

    #[test]
    fn scroll_sends_one_wheel_press_per_step() {
        let m = sgr(MouseTracking::Click);
        let pos = CellPos::new(0, 0);
        assert_eq!(
            scroll(pos, 0, 2, Modifiers::NONE, &m).map(strings),
            Ok(vec!["\x1b[<65;1;1M".into(), "\x1b[<65;1;1M".into()])
        );
        assert_eq!(
            scroll(pos, -1, -1, Modifiers::NONE, &m).map(strings),
            Ok(vec!["\x1b[<64;1;1M".into(), "\x1b[<66;1;1M".into()])
        );
        assert!(matches!(
            scroll(pos, 0, -5000, Modifiers::NONE, &m),
            Err(MouseError::TooManySteps { steps: 5000, .. })
        ));
        // A wheel has no release to report.
        let release = MouseEvent {
            action: MouseAction::Release,
            ..press(0, 0, MouseButton::WheelUp)
        };
        assert_eq!(encode_mouse(&release, &m), Ok(vec![]));
    }

    #[test]
    fn down_move_up() {
        let m = sgr(MouseTracking::Drag);
        let pos = CellPos::new(5, 5);
        let none = Modifiers::NONE;
        assert_eq!(
            down(pos, MouseButton::Left, none, &m).map(strings),
            Ok(vec!["\x1b[<0;6;6M".into()])
        );
        assert_eq!(
            move_to(CellPos::new(6, 5), MouseButton::Left, none, &m).map(strings),
            Ok(vec!["\x1b[<32;7;6M".into()])
        );
        assert_eq!(move_to(pos, MouseButton::None, none, &m), Ok(vec![]));
        assert_eq!(
            up(pos, MouseButton::Left, none, &m).map(strings),
            Ok(vec!["\x1b[<0;6;6m".into()])
        );
    }

    #[test]
    fn find_text_counts_cells_not_characters() {
        let screen = "名前: 山田\nOK 確認 OK\n  [ Save ]";
        assert_eq!(find_text(screen, "山田", 0), Some(CellPos::new(6, 0)));
        assert_eq!(find_text(screen, "確認", 0), Some(CellPos::new(3, 1)));
        assert_eq!(find_text(screen, "OK", 1), Some(CellPos::new(8, 1)));
        assert_eq!(find_text(screen, "OK", 2), None);
        assert_eq!(
            find_text_center(screen, "確認", 0),
            Some(CellPos::new(4, 1))
        );
        assert_eq!(
            find_text_center(screen, "[ Save ]", 0),
            Some(CellPos::new(5, 2))
        );
        assert_eq!(
            find_text_match(screen, "OK\n", 0),
            Some(TextMatch {
                start: CellPos::new(8, 1),
                width: 2
            })
        );
        assert_eq!(find_text(screen, "", 0), None);
        assert_eq!(find_text(screen, "absent", 0), None);
    }
}
