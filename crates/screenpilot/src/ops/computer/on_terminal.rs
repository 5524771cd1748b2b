//! Computer actions on a terminal session. The screenshot is the rendered screen (default font, no
//! frame); a pixel maps to the cell under it, mouse actions become mouse events in the app's protocol,
//! keys and text the bytes a terminal sends.

use serde_json::{Map, Value};

use screenpilot_desktop::{encode_png, Frame, Modifier};
use screenpilot_screen::keys::{self, Modifiers};
use screenpilot_screen::mouse::{self as encode, MouseButton, MouseError};
use screenpilot_screen::render::{render_pixels, Layout, RenderOptions};
use screenpilot_screen::CellPos;
use screenpilot_session::{Session, SessionError};

use super::actions::{Action, Px};
use super::answer::{Picture, ScreenWait, Step};
use super::keys::terminal_tokens;
use crate::ops::kit::error::{ErrorCode, OpError};
use crate::ops::kit::timing::{TERMINAL_SETTLE, UNTIL_STILL};
use screenpilot_desktop::settle::{settle, until_still};

fn layout(session: &Session) -> Layout {
    let size = session.with_screen(|s| s.size());
    Layout::new(size, &RenderOptions::default())
}

/// The size of the screenshot `computer` returns for this session.
pub(super) fn image_size(session: &Session) -> (u32, u32) {
    let layout = layout(session);
    (layout.image.width, layout.image.height)
}

/// Refuse, before anything is sent, what a terminal cannot do.
pub(super) fn check(action: &Action, prefix: &str) -> Result<(), OpError> {
    let field = format!("{prefix}.type");
    match action {
        Action::CursorPosition => Err(OpError::invalid(
            &field,
            "a terminal session has no pointer; cursor_position works on desktop sessions",
        )),
        Action::MouseDown { at: None }
        | Action::MouseUp { at: None }
        | Action::Click { at: None, .. }
        | Action::Scroll { at: None, .. } => Err(OpError::invalid(
            &format!("{prefix}.x"),
            format!(
                "a terminal session has no pointer to act at: give x and y (or coordinate) for {}",
                action.name()
            ),
        )),
        Action::Keypress { chords, .. } => {
            for chord in chords {
                terminal_tokens(chord, &format!("{prefix}.keys"))?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn modifiers(hold: &[Modifier]) -> Modifiers {
    let mut mods = Modifiers::NONE;
    for m in hold {
        match m {
            Modifier::Shift => mods.shift = true,
            Modifier::Ctrl => mods.ctrl = true,
            Modifier::Alt => mods.alt = true,
            Modifier::Super => mods.super_key = true,
        }
    }
    mods
}

/// Run one action, then wait for the screen. On failure: the error, and whether input may have gone
/// out.
pub(super) async fn perform(session: &Session, action: &Action) -> Result<Step, (OpError, bool)> {
    let not_sent = |e: OpError| (e, false);
    let layout = layout(session);
    let cell = |px: Px| -> Result<CellPos, (OpError, bool)> {
        layout.cell_at(px.x, px.y).ok_or_else(|| {
            not_sent(OpError::invalid(
                "x",
                format!("({}, {}) is not on a cell of the screen", px.x, px.y),
            ))
        })
    };
    let modes = session.modes();
    let mouse_error = |e: MouseError| {
        not_sent(OpError::new(
            ErrorCode::MouseUnavailable,
            format!("mouse: {e}"),
        ))
    };
    let mut fields = Map::new();
    let done = |fields| Ok(Step { fields, wait: None });
    let writes: Vec<Vec<u8>> = match action {
        Action::Screenshot | Action::Zoom { .. } => return done(fields),
        Action::Wait { ms: Some(ms) } => {
            tokio::time::sleep(std::time::Duration::from_millis(*ms)).await;
            return done(fields);
        }
        Action::Wait { ms: None } => {
            return Ok(Step {
                fields,
                wait: Some(wait_until_still(session).await),
            })
        }
        Action::CursorPosition => {
            return Err(not_sent(OpError::invalid(
                "type",
                "not available on terminal sessions",
            )))
        }
        Action::Click {
            at: Some(at),
            button: b,
            count,
            hold,
        } => {
            let pos = cell(*at)?;
            insert_cell(&mut fields, pos);
            encode::click(pos, MouseButton::from(*b), *count, modifiers(hold), &modes)
                .map_err(mouse_error)?
        }
        Action::Scroll {
            at: Some(at),
            steps_x,
            steps_y,
            hold,
        } => {
            let pos = cell(*at)?;
            insert_cell(&mut fields, pos);
            fields.insert("steps_x".into(), (*steps_x).into());
            fields.insert("steps_y".into(), (*steps_y).into());
            encode::scroll(pos, *steps_x, *steps_y, modifiers(hold), &modes).map_err(mouse_error)?
        }
        Action::Move { at, hold } => {
            let pos = cell(*at)?;
            insert_cell(&mut fields, pos);
            match encode::move_to(pos, MouseButton::None, modifiers(hold), &modes) {
                Ok(writes) => writes,
                // Hovering over an app that ignores the mouse changes nothing, as on a real terminal.
                Err(MouseError::NotEnabled) => {
                    fields.insert("sent".into(), false.into());
                    return done(fields);
                }
                Err(e) => return Err(mouse_error(e)),
            }
        }
        Action::Drag { path, hold } => {
            let cells: Vec<CellPos> = path.iter().map(|p| cell(*p)).collect::<Result<_, _>>()?;
            encode::drag(&cells, MouseButton::Left, modifiers(hold), &modes).map_err(mouse_error)?
        }
        Action::Click { at: None, .. }
        | Action::Scroll { at: None, .. }
        | Action::MouseDown { at: None }
        | Action::MouseUp { at: None } => {
            // Refused by `check` before anything is sent.
            return Err(not_sent(OpError::invalid(
                "x",
                "a terminal session has no pointer to act at: give x and y",
            )));
        }
        Action::MouseDown { at: Some(at) } | Action::MouseUp { at: Some(at) } => {
            let pos = cell(*at)?;
            insert_cell(&mut fields, pos);
            let result = if matches!(action, Action::MouseDown { .. }) {
                encode::down(pos, MouseButton::Left, Modifiers::NONE, &modes)
            } else {
                encode::up(pos, MouseButton::Left, Modifiers::NONE, &modes)
            };
            result.map_err(mouse_error)?
        }
        // Keystrokes, never a bracketed paste: `\n` is the Enter key here as on a desktop, so a
        // shell runs a typed command line instead of holding it as pasted text.
        Action::Type { text } => vec![keys::encode_text(text, &modes)],
        Action::Keypress { chords, .. } => {
            let mut writes = Vec::new();
            for chord in chords {
                for token in terminal_tokens(chord, "keys").map_err(not_sent)? {
                    let bytes = keys::try_encode(&token, &modes)
                        .map_err(|e| not_sent(OpError::invalid("keys", e.to_string())))?;
                    writes.push(bytes);
                }
            }
            writes
        }
    };
    let updates = session.subscribe();
    let before = session.with_screen(|s| s.visual_hash());
    session.write(&writes).await.map_err(|e| {
        // An ended program takes no input: that refusal comes before any byte is written.
        let maybe_sent = !matches!(e, SessionError::Exited(_));
        (OpError::from(e), maybe_sent)
    })?;
    let outcome = settle(
        updates,
        || session.with_screen(|s| s.visual_hash()),
        before,
        TERMINAL_SETTLE,
    )
    .await;
    Ok(Step {
        fields,
        wait: Some(ScreenWait {
            reacted: Some(outcome.reacted),
            settled: outcome.settled,
        }),
    })
}

/// A `wait` with no duration: until the screen has not changed for a while ([`UNTIL_STILL`]).
async fn wait_until_still(session: &Session) -> ScreenWait {
    let fingerprint = || session.with_screen(|s| s.visual_hash());
    let outcome = until_still(session.subscribe(), fingerprint, UNTIL_STILL).await;
    ScreenWait {
        reacted: None,
        settled: outcome.settled,
    }
}

fn insert_cell(fields: &mut Map<String, Value>, pos: CellPos) {
    fields.insert("col".into(), pos.col.0.into());
    fields.insert("row".into(), pos.row.0.into());
}

/// The rendered screen, cropped to `zoom` when set: drawn once into pixels, cropped, encoded once.
pub(super) fn picture(session: &Session, zoom: Option<[u32; 4]>) -> Result<Picture, OpError> {
    let grid = session.with_screen(|s| s.cells());
    let failed = |e: &dyn std::fmt::Display| {
        OpError::new(ErrorCode::RenderFailed, format!("screenshot: {e}"))
    };
    let (width, height, rgb) =
        render_pixels(&grid, &RenderOptions::default()).map_err(|e| failed(&e))?;
    let mut frame = Frame { width, height, rgb };
    if let Some([x0, y0, x1, y1]) = zoom {
        frame = frame.crop(x0, y0, x1 - x0, y1 - y0);
    }
    Ok(Picture {
        png: encode_png(&frame).map_err(|e| failed(&e))?,
        width: frame.width,
        height: frame.height,
        scale: 1.0,
        pointer: None,
    })
}
