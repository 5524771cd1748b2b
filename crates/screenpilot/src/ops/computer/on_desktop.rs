//! Computer actions on an X11 desktop: each one a step on the desktop's connection under the step
//! limit, input through XTest, then a wait until the screen settles.

use std::time::Duration;

use serde_json::{Map, Value};

use screenpilot_desktop::keysym::Keysym;
use screenpilot_desktop::{encode_png, Desktop, DesktopError, Point};

use super::actions::{Action, Px};
use super::answer::Picture;
use super::keys::{keysym_of, Key};
use super::timing::{SETTLE_MAX, SETTLE_QUIET};
use crate::ops::button::Button;
use crate::ops::common::OpError;

fn point(px: Px) -> Point {
    Point { x: px.x, y: px.y }
}

/// Was input possibly sent when this error happened? Only a refused argument, a closed desktop and
/// a display busy with another call are sure not to have let any through.
fn maybe_dispatched(e: &DesktopError) -> bool {
    !matches!(
        e,
        DesktopError::Invalid { .. } | DesktopError::Closed | DesktopError::Busy { .. }
    )
}

/// Run one action. On failure: the error, and whether input may have gone out.
pub(super) async fn perform(
    desktop: &Desktop,
    action: &Action,
    limit: Duration,
) -> Result<Map<String, Value>, (OpError, bool)> {
    let action = action.clone();
    let name = action.name();
    let chords: Vec<Vec<Keysym>> = match &action {
        // A key without a keysym is refused, not skipped: the chord would press something else.
        Action::Keypress { chords, .. } => chords
            .iter()
            .map(|chord| chord.0.iter().map(|k| keysym_of(*k).ok_or(*k)).collect())
            .collect::<Result<_, Key>>()
            .map_err(|key| {
                let e = OpError::invalid("keys", format!("{key:?} has no X keysym"));
                (e, false)
            })?,
        _ => Vec::new(),
    };
    let result = desktop
        .run(name, limit, move |x| {
            let mut fields = Map::new();
            match &action {
                Action::Screenshot | Action::Wait { .. } | Action::Zoom { .. } => {
                    return Ok(fields)
                }
                Action::CursorPosition => {
                    let (at, _) = x.pointer()?;
                    fields.insert("x".into(), at.x.into());
                    fields.insert("y".into(), at.y.into());
                    return Ok(fields);
                }
                Action::Click {
                    at,
                    button: b,
                    count,
                    hold,
                } => x.click(point(*at), b.x11_number(), *count, hold)?,
                Action::Scroll {
                    at,
                    steps_x,
                    steps_y,
                    hold,
                } => {
                    x.scroll(point(*at), *steps_x, *steps_y, hold)?;
                    fields.insert("steps_x".into(), (*steps_x).into());
                    fields.insert("steps_y".into(), (*steps_y).into());
                }
                Action::Type { text } => x.type_text(text)?,
                Action::Move { at, hold } => x.move_to(point(*at), hold)?,
                Action::Keypress { hold_ms, .. } => {
                    for chord in &chords {
                        x.key_chord(chord, Duration::from_millis(*hold_ms))?;
                    }
                }
                Action::Drag { path, hold } => {
                    let points: Vec<Point> = path.iter().map(|p| point(*p)).collect();
                    x.drag(&points, Button::Left.x11_number(), hold)?;
                }
                Action::MouseDown { at } => {
                    x.button(at.map(point), Button::Left.x11_number(), true)?
                }
                Action::MouseUp { at } => {
                    x.button(at.map(point), Button::Left.x11_number(), false)?
                }
            }
            x.settle(SETTLE_QUIET, SETTLE_MAX)?;
            Ok(fields)
        })
        .await;
    result.map_err(|e| {
        let dispatched = maybe_dispatched(&e);
        (OpError::from(e), dispatched)
    })
}

/// A fresh screenshot with the pointer drawn in, cropped to `zoom` when set.
pub(super) async fn picture(
    desktop: &Desktop,
    zoom: Option<[u32; 4]>,
    limit: Duration,
) -> Result<Picture, OpError> {
    desktop
        .run("screenshot", limit, move |x| {
            let mut frame = x.capture(true)?;
            let (pointer, _) = x.pointer()?;
            if let Some([x0, y0, x1, y1]) = zoom {
                frame = frame.crop(x0, y0, x1 - x0, y1 - y0);
            }
            Ok(Picture {
                png: encode_png(&frame)?,
                width: frame.width,
                height: frame.height,
                pointer: Some((pointer.x, pointer.y)),
            })
        })
        .await
        .map_err(OpError::from)
}
