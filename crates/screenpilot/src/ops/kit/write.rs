//! Writing input into a terminal session: keys and text as bytes already encoded, mouse events in the
//! application's own protocol, and what an input answers (at once, or once the screen settled).

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::settle::{settle, Settle};
use screenpilot_screen::keys::Modifiers;
use screenpilot_screen::mouse::{self as encode, MouseButton};
use screenpilot_screen::{CellPos, Size};
use screenpilot_session::{hash_hex, Session};

use super::button::Button;
use super::error::{ErrorCode, OpError};
use super::screen::SessionScreen;
use super::timing::INPUT_SETTLE_LIMIT_MS;
use super::view::{Report, View};

/// What an input operation answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum InputDone {
    /// With `settle_ms`: the screen once the app reacted and went quiet.
    Settled {
        #[serde(flatten)]
        screen: Box<SessionScreen>,
        /// The app reacted and went quiet within the limit.
        settled: bool,
        /// `mouse`: the cell the event went to.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        col: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        row: Option<u16>,
    },
    /// Without: the screen hashes from just before the input, the baseline for wait_change.
    Sent {
        sid: String,
        hash: String,
        visual_hash: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        col: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        row: Option<u16>,
    },
}

impl InputDone {
    /// The same answer, naming the cell a mouse event went to.
    pub(crate) fn at_cell(mut self, cell: Option<(u16, u16)>) -> InputDone {
        let (InputDone::Settled { col, row, .. } | InputDone::Sent { col, row, .. }) = &mut self;
        *col = cell.map(|c| c.0);
        *row = cell.map(|c| c.1);
        self
    }
}

impl Report for InputDone {
    fn view(&self) -> View {
        match self {
            InputDone::Settled {
                screen, settled, ..
            } => screen.view(&[("settled", settled.to_string())]),
            InputDone::Sent { .. } => View::default(),
        }
    }
}

/// What an input operation does once its input is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum After {
    /// Answer at once, with the screen hashes from just before the input.
    Return,
    /// Wait for the screen to change and then stay quiet (within a limit), and answer with it
    /// (styled when asked).
    Settle { limits: Settle, styled: bool },
}

impl After {
    pub(crate) fn from_params(
        settle_ms: Option<u64>,
        settle_timeout_ms: Option<u64>,
    ) -> Result<After, OpError> {
        let Some(quiet) = settle_ms else {
            return Ok(After::Return);
        };
        let limit = settle_timeout_ms.unwrap_or(INPUT_SETTLE_LIMIT_MS);
        if limit > 600_000 {
            return Err(OpError::invalid(
                "settle_timeout_ms",
                format!("{limit} ms is over the limit of 600000 ms"),
            ));
        }
        let limit = Duration::from_millis(limit);
        Ok(After::Settle {
            limits: Settle {
                reaction: limit,
                quiet: Duration::from_millis(quiet),
                limit,
            },
            styled: false,
        })
    }

    /// The same, answering with the styled screen and its highlights when `styled`; `styled`
    /// without a settled screen to carry it is refused.
    pub(crate) fn styled(self, styled: bool) -> Result<After, OpError> {
        match self {
            After::Settle { limits, .. } => Ok(After::Settle { limits, styled }),
            After::Return if styled => Err(OpError::invalid(
                "styled",
                "needs settle_ms: input returns a screen only then",
            )),
            After::Return => Ok(After::Return),
        }
    }
}

/// Write input; answer with the screen hashes from just before it, or with the settled screen.
pub(crate) async fn write_input(
    session: &Session,
    chunks: &[Vec<u8>],
    after: After,
) -> Result<InputDone, OpError> {
    let (hash, visual_hash) = session.with_screen(|s| (s.hash(), s.visual_hash()));
    let updates = session.subscribe();
    session.write(chunks).await?;
    let After::Settle { limits, styled } = after else {
        return Ok(InputDone::Sent {
            sid: session.sid.to_string(),
            hash: hash_hex(hash),
            visual_hash: hash_hex(visual_hash),
            col: None,
            row: None,
        });
    };
    // The visual hash sees a cursor move or a highlight as a reaction too.
    let outcome = settle(
        updates,
        || session.with_screen(|s| s.visual_hash()),
        visual_hash,
        limits,
    )
    .await;
    Ok(InputDone::Settled {
        screen: Box::new(SessionScreen::read(session, SessionScreen::options(styled))),
        // The documented meaning: the app reacted and then went quiet within the limit.
        settled: outcome.reacted && outcome.settled,
        col: None,
        row: None,
    })
}

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
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub modifiers: Vec<String>,
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

/// The bytes of a mouse event on `session`, in the app's protocol, and the cell it goes to.
pub(crate) fn mouse_writes(
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
