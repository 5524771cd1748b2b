//! The `mouse` operation: clicks, drags, moves and wheel scrolls at a cell or on visible text, encoded in
//! the application's own mouse protocol.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::keys::Modifiers;
use screenpilot_screen::mouse::{self as encode, MouseButton};
use screenpilot_screen::{CellPos, Size};
use screenpilot_session::Session;

use super::button::Button;
use super::common::{Context, ErrorCode, OpError, Progress};
use super::input::{write_input, After, InputDone};
use super::operation::Operation;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MouseActionName {
    Click,
    DoubleClick,
    Move,
    Down,
    Up,
    Drag,
    Scroll,
}

/// Parameters of `mouse`. Say where with `col`+`row` (0-based cells) or `text` (+`nth`).
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MouseParams {
    pub sid: String,
    pub action: MouseActionName,
    /// 0-based column of the target cell.
    pub col: Option<u16>,
    /// 0-based row of the target cell (row 0 is the first line of `text` in a snapshot).
    pub row: Option<u16>,
    /// Target the centre of this visible text instead of a cell.
    pub text: Option<String>,
    /// Which occurrence of `text` (0-based, in reading order). Default 0.
    pub nth: Option<usize>,
    /// Default left.
    pub button: Option<Button>,
    /// drag: where to release, [col, row]; the start is col/row or text.
    pub to: Option<[u16; 2]>,
    /// drag: every cell to pass through, [[col, row], ...], first = press, last = release (instead of a start and `to`).
    pub path: Option<Vec<[u16; 2]>>,
    /// scroll: wheel steps down (positive) or up (negative).
    pub scroll_y: Option<i32>,
    /// scroll: wheel steps right (positive) or left (negative).
    pub scroll_x: Option<i32>,
    /// Held modifiers: any of "shift", "alt", "ctrl".
    #[serde(default)]
    pub modifiers: Vec<String>,
    /// Answer with the screen once the app reacted and stayed quiet this many ms.
    pub settle_ms: Option<u64>,
    /// Limit for settle_ms (default 5000).
    pub settle_timeout_ms: Option<u64>,
    // With settle_ms: also return `styled` and `highlights`, as snapshot does (described there).
    #[serde(default)]
    pub styled: bool,
}

/// A mouse event without its session: what `send` takes as `mouse`, and the heart of `mouse`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MouseSpec {
    pub action: MouseActionName,
    pub col: Option<u16>,
    pub row: Option<u16>,
    pub text: Option<String>,
    pub nth: Option<usize>,
    pub button: Option<Button>,
    pub to: Option<[u16; 2]>,
    pub path: Option<Vec<[u16; 2]>>,
    pub scroll_y: Option<i32>,
    pub scroll_x: Option<i32>,
    #[serde(default)]
    pub modifiers: Vec<String>,
}

impl MouseParams {
    fn spec(&self) -> MouseSpec {
        MouseSpec {
            action: self.action,
            col: self.col,
            row: self.row,
            text: self.text.clone(),
            nth: self.nth,
            button: self.button,
            to: self.to,
            path: self.path.clone(),
            scroll_y: self.scroll_y,
            scroll_x: self.scroll_x,
            modifiers: self.modifiers.clone(),
        }
    }
}

fn modifiers(names: &[String]) -> Result<Modifiers, OpError> {
    let mut mods = Modifiers::default();
    for name in names {
        // A mouse report has bits for shift, alt and ctrl only.
        match Modifiers::named(name) {
            Some(held) if !held.super_key => mods = mods.with(held),
            _ => {
                return Err(OpError::invalid(
                    "modifiers",
                    format!("unknown modifier {name:?}; use shift, alt or ctrl"),
                ));
            }
        }
    }
    Ok(mods)
}

fn check_cell(pos: CellPos, size: Size, field: &str) -> Result<CellPos, OpError> {
    if size.contains(pos) {
        Ok(pos)
    } else {
        Err(OpError::invalid(
            field,
            format!(
                "cell (col {}, row {}) is off the {}x{} screen; columns are 0-{} and rows 0-{}",
                pos.col.0,
                pos.row.0,
                size.cols,
                size.rows,
                size.cols - 1,
                size.rows.saturating_sub(1)
            ),
        ))
    }
}

/// Where the event goes: a cell, or the centre of visible text.
fn target(session: &Session, p: &MouseSpec) -> Result<Option<CellPos>, OpError> {
    let size = session.with_screen(|s| s.size());
    match (&p.text, p.col, p.row) {
        (Some(_), Some(_), _) | (Some(_), _, Some(_)) => {
            Err(OpError::invalid("text", "give text or col+row, not both"))
        }
        (Some(needle), None, None) => {
            let nth = p.nth.unwrap_or(0);
            let found = session.with_screen(|s| encode::find_text_center(s.text(), needle, nth));
            match found {
                Some(pos) => Ok(Some(pos)),
                None => Err(OpError::invalid(
                    "text",
                    format!("{needle:?} (occurrence {nth}) is not on the screen; take a snapshot to see what is"),
                )),
            }
        }
        (None, Some(col), Some(row)) => {
            check_cell(CellPos::new(col, row), size, "col/row").map(Some)
        }
        (None, Some(_), None) => Err(OpError::invalid("row", "col is given without row")),
        (None, None, Some(_)) => Err(OpError::invalid("col", "row is given without col")),
        (None, None, None) => Ok(None),
    }
}

/// `mouse`: mouse events on a terminal app.
pub struct Mouse;

impl Operation for Mouse {
    const NAME: &'static str = "mouse";
    const DESCRIPTION: &'static str = "Mouse input on a terminal app, encoded in the app's protocol (SGR 1006 or X10). actions: click, double_click, move, down, up, drag, scroll. \
Target a cell with col+row (0-based; row 0 = first line of the snapshot text) or the centre of visible text with text (+nth). \
drag takes a start plus to:[col,row], or path:[[c,r],...]; scroll takes scroll_y (+down/-up) and scroll_x steps. \
Fails with a clear error when the app has not enabled mouse reporting (then use keys). Returns {ok, sid, col, row, hash, visual_hash} (hashes from before the event). \
Example: {\"sid\": \"mc\", \"action\": \"click\", \"text\": \"OK\"}.";
    type Params = MouseParams;
    type Output = InputDone;

    async fn run(ctx: &Context, p: MouseParams, _: &Progress) -> Result<InputDone, OpError> {
        mouse(ctx, p).await
    }
}

async fn mouse(ctx: &Context, p: MouseParams) -> Result<InputDone, OpError> {
    let session = ctx.registry.get(&p.sid)?;
    let (writes, start) = mouse_writes(&session, &p.spec())?;
    let after = After::from_params(p.settle_ms, p.settle_timeout_ms)?.styled(p.styled)?;
    let done = write_input(&session, &writes, after).await?;
    Ok(done.at_cell(start.map(|pos| (pos.col.0, pos.row.0))))
}

/// The bytes of a mouse event on `session`, in the app's protocol, and the cell it goes to.
pub(super) fn mouse_writes(
    session: &Session,
    p: &MouseSpec,
) -> Result<(Vec<Vec<u8>>, Option<CellPos>), OpError> {
    let mods = modifiers(&p.modifiers)?;
    let button = MouseButton::from(p.button.unwrap_or_default());
    let modes = session.modes();
    let size = session.with_screen(|s| s.size());
    let start = target(session, p)?;
    let need_start =
        || start.ok_or_else(|| OpError::invalid("col", "say where: col+row (0-based) or text"));
    let writes = match p.action {
        MouseActionName::Click => encode::click(need_start()?, button, 1, mods, &modes),
        MouseActionName::DoubleClick => encode::click(need_start()?, button, 2, mods, &modes),
        MouseActionName::Move => encode::move_to(need_start()?, MouseButton::None, mods, &modes),
        MouseActionName::Down => encode::down(need_start()?, button, mods, &modes),
        MouseActionName::Up => encode::up(need_start()?, button, mods, &modes),
        MouseActionName::Scroll => {
            let (dx, dy) = (p.scroll_x.unwrap_or(0), p.scroll_y.unwrap_or(0));
            if dx == 0 && dy == 0 {
                return Err(OpError::invalid(
                    "scroll_y",
                    "give scroll_y and/or scroll_x (wheel steps; +down/right, -up/left)",
                ));
            }
            let at = start.unwrap_or(CellPos::new(size.cols / 2, size.rows / 2));
            encode::scroll(at, dx, dy, mods, &modes)
        }
        MouseActionName::Drag => {
            let path: Vec<CellPos> = match (&p.path, p.to) {
                (Some(_), Some(_)) => {
                    return Err(OpError::invalid("path", "give path or to, not both"))
                }
                (Some(points), None) => {
                    if points.len() < 2 {
                        return Err(OpError::invalid(
                            "path",
                            "a drag path needs at least two cells",
                        ));
                    }
                    points
                        .iter()
                        .map(|[c, r]| check_cell(CellPos::new(*c, *r), size, "path"))
                        .collect::<Result<_, _>>()?
                }
                (None, Some([c, r])) => {
                    vec![need_start()?, check_cell(CellPos::new(c, r), size, "to")?]
                }
                (None, None) => {
                    return Err(OpError::invalid(
                        "to",
                        "a drag needs to:[col,row] or path:[[col,row],...]",
                    ))
                }
            };
            encode::drag(&path, button, mods, &modes)
        }
    };
    let writes =
        writes.map_err(|e| OpError::new(ErrorCode::MouseUnavailable, format!("mouse: {e}")))?;
    Ok((writes, start))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn held_keys_are_read_by_the_names_key_chords_take() {
        let mods = modifiers(&names(&["Ctrl", "option", "SHIFT"])).expect("known names");
        assert!(mods.ctrl && mods.alt && mods.shift && !mods.super_key);
        assert_eq!(modifiers(&names(&["meta"])).map(|m| m.alt).ok(), Some(true));
        // A mouse report has no bit for super; an unknown name is refused, naming the field.
        for bad in ["super", "hyper"] {
            let error = modifiers(&names(&[bad])).expect_err(bad);
            assert_eq!(error.field.as_deref(), Some("modifiers"), "{bad}");
            assert!(error.message.contains(bad), "{}", error.message);
        }
    }
}
