//! The gestures a person makes with a mouse (click, drag, scroll, press, move, release) as the
//! events the application's tracking mode reports, one write each.

use super::{encode_mouse, event, MouseAction, MouseButton, MouseError, MouseEvent};
use crate::geometry::CellPos;
use crate::keys::Modifiers;
use crate::modes::{InputModes, MouseTracking};

/// The most wheel steps one [`scroll`] sends on each axis.
pub const MAX_SCROLL_STEPS: u32 = 1000;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mouse::tests::{press, sgr};

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
}
