//! The `mouse` operation: clicks, drags, moves and wheel scrolls at a cell or on visible text, encoded in
//! the application's own mouse protocol.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ops::kit::button::Button;
use crate::ops::kit::common::{Context, OpError, Progress};
use crate::ops::kit::operation::Operation;
use crate::ops::kit::step_table::{Journaled, StepTable};
use crate::ops::kit::write::{
    mouse_writes, write_input, After, InputDone, MouseActionName, MouseSpec,
};

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

    fn journal(p: &MouseParams, _: bool) -> Vec<Journaled> {
        // The event as the send tool takes it (`mouse`), without how this call answered.
        let event = serde_json::to_value(p.spec()).unwrap_or_default();
        vec![Journaled::acting(StepTable {
            mouse: Some(Journaled::table_of(&event, &[])),
            ..StepTable::default()
        })]
    }

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
