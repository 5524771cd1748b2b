//! Computer actions on an X11 desktop: each one a step on the desktop's connection under the step
//! limit, input through XTest, then a wait until the screen reacted and went quiet, woken by the
//! desktop's damage counter (the one settle loop, [`screenpilot_desktop::settle`]).
//!
//! Actions come in screenshot pixels; they are mapped to screen pixels here, just before input goes
//! out, and what the screen tells back (the pointer) is mapped to screenshot pixels.

use std::time::Duration;

use serde_json::{Map, Value};

use screenpilot_desktop::keysym::Keysym;
use screenpilot_desktop::scale::Scale;
use screenpilot_desktop::{Desktop, DesktopError, Point};

use super::actions::{Action, Px};
use super::answer::{Picture, ScreenWait, Step};
use super::keys::{keysym_of, Key};
use crate::ops::kit::button::Button;
use crate::ops::kit::display::{capture, scale_for, Pixel};
use crate::ops::kit::error::OpError;
use crate::ops::kit::model_size::ModelSize;
use crate::ops::kit::timing::{BLIND_MAX, BLIND_QUIET, DESKTOP_SETTLE, UNTIL_STILL, WAIT_BLIND};
use screenpilot_desktop::settle::{settle, until_still};

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

/// The screen pixel under a screenshot pixel.
fn to_screen(scale: Scale, px: Px) -> Px {
    let (x, y) = scale.to_screen(px.x, px.y);
    Px { x, y }
}

/// A screenshot region [x0, y0, x1, y1) (already checked to lie on it) as the screen region it
/// shows: each edge scaled and rounded, at least one pixel wide and tall.
pub(super) fn region_to_screen(scale: Scale, [x0, y0, x1, y1]: [u32; 4]) -> [u32; 4] {
    let edge = |v: u32, image: u32, screen: u32| -> u32 {
        if image == 0 {
            return 0;
        }
        ((u64::from(v) * u64::from(screen) * 2 + u64::from(image)) / (u64::from(image) * 2))
            .min(u64::from(screen)) as u32
    };
    let (sw, sh) = scale.screen;
    let (iw, ih) = scale.image;
    let (sx0, sy0) = (edge(x0, iw, sw), edge(y0, ih, sh));
    let sx1 = edge(x1, iw, sw).max(sx0 + 1).min(sw);
    let sy1 = edge(y1, ih, sh).max(sy0 + 1).min(sh);
    [sx0.min(sx1 - 1), sy0.min(sy1 - 1), sx1, sy1]
}

/// Insert a screen point into result fields as screenshot pixels `x`, `y`.
fn insert_point(fields: &mut Map<String, Value>, scale: Scale, at: Point) {
    let (x, y) = scale.to_image(at.x, at.y);
    fields.insert("x".into(), x.into());
    fields.insert("y".into(), y.into());
}

/// Run one action, whose points are pixels of a screenshot scaled by `scale`, then wait for the
/// screen. On failure: the error, and whether input may have gone out.
pub(super) async fn perform(
    desktop: &Desktop,
    action: &Action,
    scale: Scale,
    limit: Duration,
) -> Result<Step, (OpError, bool)> {
    match action {
        Action::Screenshot | Action::Zoom { .. } => return Ok(Step::default()),
        Action::Wait { ms: Some(ms) } => {
            tokio::time::sleep(Duration::from_millis(*ms)).await;
            return Ok(Step::default());
        }
        Action::Wait { ms: None } => {
            return Ok(Step {
                fields: Map::new(),
                wait: Some(wait_until_still(desktop).await),
            })
        }
        _ => {}
    }
    let name = action.name();
    let chords: Vec<Vec<Keysym>> = match action {
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
    let on_screen = action.map_points(|p| to_screen(scale, p));
    let watching = desktop.watches_damage();
    let updates = desktop.damage_updates();
    // Drawing counted from here on is the reaction to this input (or later).
    let before = *updates.borrow();
    let result = desktop
        .run(name, limit, move |x| {
            let mut fields = Map::new();
            // Where a click or scroll without a point acts: the pointer, as a person's would.
            let here = |x: &dyn screenpilot_desktop::Backend, at: Option<Px>| match at {
                Some(at) => Ok((point(at), false)),
                None => x.pointer().map(|(p, _)| (p, true)),
            };
            match &on_screen {
                Action::Screenshot | Action::Wait { .. } | Action::Zoom { .. } => {}
                Action::CursorPosition => {
                    let (at, _) = x.pointer()?;
                    insert_point(&mut fields, scale, at);
                    return Ok(fields);
                }
                Action::Click {
                    at,
                    button: b,
                    count,
                    hold,
                } => {
                    let (at, at_pointer) = here(x, *at)?;
                    if at_pointer {
                        insert_point(&mut fields, scale, at);
                    }
                    x.click(at, b.x11_number(), *count, hold)?
                }
                Action::Scroll {
                    at,
                    steps_x,
                    steps_y,
                    hold,
                } => {
                    let (at, at_pointer) = here(x, *at)?;
                    if at_pointer {
                        insert_point(&mut fields, scale, at);
                    }
                    x.scroll(at, *steps_x, *steps_y, hold)?;
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
            if watching {
                // Every event is in the server before the settle starts counting.
                x.sync()?;
            } else {
                x.settle(BLIND_QUIET, BLIND_MAX)?;
            }
            Ok(fields)
        })
        .await;
    let fields = result.map_err(|e| {
        let dispatched = maybe_dispatched(&e);
        (OpError::from(e), dispatched)
    })?;
    if !action.sends_input() {
        return Ok(Step { fields, wait: None });
    }
    let wait = if watching {
        let probe = updates.clone();
        let outcome = settle(updates, move || *probe.borrow(), before, DESKTOP_SETTLE).await;
        ScreenWait {
            reacted: Some(outcome.reacted),
            settled: outcome.settled,
        }
    } else {
        ScreenWait {
            reacted: None,
            settled: false,
        }
    };
    Ok(Step {
        fields,
        wait: Some(wait),
    })
}

/// A `wait` with no duration: until nothing has been drawn for a while ([`UNTIL_STILL`]); a plain
/// sleep where drawing cannot be watched.
async fn wait_until_still(desktop: &Desktop) -> ScreenWait {
    if !desktop.watches_damage() {
        tokio::time::sleep(WAIT_BLIND).await;
        return ScreenWait {
            reacted: None,
            settled: false,
        };
    }
    let updates = desktop.damage_updates();
    let probe = updates.clone();
    let outcome = until_still(updates, move || *probe.borrow(), UNTIL_STILL).await;
    ScreenWait {
        reacted: None,
        settled: outcome.settled,
    }
}

/// A fresh screenshot with the pointer drawn in, scaled to `size` (`None`: full size). With `zoom`
/// (a region of the screenshot `scale` describes), that region at the screen's full resolution,
/// scaled down only if it is larger than `size` allows.
pub(super) async fn picture(
    desktop: &Desktop,
    zoom: Option<[u32; 4]>,
    size: Option<ModelSize>,
    scale: Scale,
    limit: Duration,
) -> Result<Picture, OpError> {
    let Some(region) = zoom else {
        let shot = capture(desktop, None, size, limit).await?;
        return Ok(Picture {
            png: shot.png,
            width: shot.scale.image.0,
            height: shot.scale.image.1,
            scale: shot.scale.factor(),
            pointer: Some(shot.pointer),
        });
    };
    let shot = capture(desktop, Some(region_to_screen(scale, region)), size, limit).await?;
    // The pointer in the screenshot's space, where the next action's coordinates are, not the zoom's.
    let (at, _) = desktop
        .run("reading the pointer", limit, |x| x.pointer())
        .await
        .map_err(OpError::from)?;
    let whole = scale_for(size, desktop.size());
    Ok(Picture {
        png: shot.png,
        width: shot.scale.image.0,
        height: shot.scale.image.1,
        scale: shot.scale.factor(),
        pointer: Some({
            let (x, y) = whole.to_image(at.x, at.y);
            Pixel { x, y }
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_screenshot_region_covers_the_screen_pixels_it_shows() {
        let scale = Scale::fit((2560, 1600), 1568, 1_150_000);
        let (iw, ih) = scale.image;
        assert_eq!(
            region_to_screen(scale, [0, 0, iw, ih]),
            [0, 0, 2560, 1600],
            "the whole screenshot is the whole screen"
        );
        let [x0, y0, x1, y1] = region_to_screen(scale, [100, 100, 200, 150]);
        let f = scale.factor();
        assert!((f64::from(x0) - 100.0 * f).abs() <= 1.0, "{x0}");
        assert!((f64::from(x1) - 200.0 * f).abs() <= 1.0, "{x1}");
        assert!((f64::from(y0) - 100.0 * f).abs() <= 1.0, "{y0}");
        assert!((f64::from(y1) - 150.0 * f).abs() <= 1.0, "{y1}");
        // One screenshot pixel at the far corner is at least one screen pixel, on the screen.
        let [x0, y0, x1, y1] = region_to_screen(scale, [iw - 1, ih - 1, iw, ih]);
        assert!(x0 < x1 && y0 < y1 && x1 <= 2560 && y1 <= 1600);
        let identity = Scale::identity((640, 480));
        assert_eq!(
            region_to_screen(identity, [10, 20, 30, 40]),
            [10, 20, 30, 40]
        );
    }
}
