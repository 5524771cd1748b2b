//! Reading the screen: as text and state (`snapshot`) or as a picture (`screenshot`).

use base64::Engine;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use screenpilot_screen::render::{render_png, render_svg, RenderOptions};
use screenpilot_screen::{CellGrid, ThemeName};
use screenpilot_session::ReadOptions;

use super::{base, schema_of, with_state, Context, OpError, OpResult, OperationDef};

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Svg,
}

/// Parameters of `snapshot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotParams {
    pub sid: String,
    /// Add the cell model: every cell's text, colours and attributes.
    #[serde(default)]
    pub as_json: bool,
    /// Add up to this many lines of history above the screen, as `scrollback`.
    pub scrollback: Option<usize>,
    /// Add a picture of the screen too (png as base64 `png`, or `svg`).
    pub image: Option<ImageFormat>,
}

/// Parameters of `screenshot`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotParams {
    pub sid: String,
    /// png (default) or svg.
    pub format: Option<ImageFormat>,
    /// Font size in pixels (default 16, a 10x20 px cell); 6-64.
    pub font_px: Option<f32>,
    /// dark (default) or light.
    pub theme: Option<ThemeName>,
    /// Draw a window frame with the title bar.
    #[serde(default)]
    pub frame: bool,
}

pub const SNAPSHOT: OperationDef = OperationDef {
    name: "snapshot",
    description: "Read the session's screen now. Returns {ok, sid, alive, exit_code?, alt_screen, text, hash, visual_hash, cursor{row,col,visible,shape}, title, modes, cols, rows}. \
text is the screen, one line per row (row 0 first), no trailing padding (the cursor row runs up to the cursor). alt_screen=true means a full-screen app (vim, less, htop) owns the screen: keys go to it, not a shell. \
hash covers text only (baseline for wait_change); visual_hash also styles and cursor (baseline for wait_visual_change). \
Options: as_json adds `cells` (colours, attributes); scrollback:N adds history; image:\"png\"|\"svg\" adds a picture. Example: {\"sid\": \"vim\"}.",
    schema: schema_of::<SnapshotParams>,
};

pub const SCREENSHOT: OperationDef = OperationDef {
    name: "screenshot",
    description: "A picture of the session's screen as a real terminal shows it: colours, bold/italic/underline, wide CJK, box drawing, cursor. \
PNG (default) comes back as an image; svg as text. Returns {ok, sid, format, width, height, png (base64) | svg}. \
Options: font_px (default 16), theme dark|light, frame (window title bar). Example: {\"sid\": \"htop\", \"format\": \"png\"}.",
    schema: schema_of::<ScreenshotParams>,
};

pub fn snapshot(ctx: &Context, p: SnapshotParams) -> OpResult {
    let session = ctx.registry.get(&p.sid)?;
    let state = session.read(ReadOptions {
        scrollback: p.scrollback,
        cells: p.as_json,
    });
    let mut out = with_state(&p.sid, &state);
    if let Some(format) = p.image {
        let grid = match &state.cells {
            Some(grid) => grid.clone(),
            None => session.with_screen(|s| s.cells()),
        };
        add_image(&mut out, &grid, format, &RenderOptions::default())?;
    }
    Ok(Value::Object(out))
}

pub fn screenshot(ctx: &Context, p: ScreenshotParams) -> OpResult {
    let mut options = RenderOptions::default();
    if let Some(px) = p.font_px {
        if !(6.0..=64.0).contains(&px) {
            return Err(OpError::invalid("font_px", format!("{px} is outside 6-64")));
        }
        options.font_px = px;
    }
    options.theme = p.theme.unwrap_or_default();
    options.frame = p.frame;
    let session = ctx.registry.get(&p.sid)?;
    let grid = session.with_screen(|s| s.cells());
    let mut out = base(&p.sid);
    add_image(
        &mut out,
        &grid,
        p.format.unwrap_or(ImageFormat::Png),
        &options,
    )?;
    Ok(Value::Object(out))
}

fn add_image(
    out: &mut Map<String, Value>,
    grid: &CellGrid,
    format: ImageFormat,
    options: &RenderOptions,
) -> Result<(), OpError> {
    let layout = screenpilot_screen::render::Layout::new(grid.size, options);
    let (width, height) = (layout.image.width, layout.image.height);
    match format {
        ImageFormat::Png => {
            let png = render_png(grid, options)
                .map_err(|e| OpError::new("render_failed", format!("screenshot: {e}")))?;
            out.insert("format".into(), "png".into());
            out.insert(
                "png".into(),
                base64::engine::general_purpose::STANDARD.encode(png).into(),
            );
        }
        ImageFormat::Svg => {
            out.insert("format".into(), "svg".into());
            out.insert("svg".into(), render_svg(grid, options).into());
        }
    }
    out.insert("width".into(), width.into());
    out.insert("height".into(), height.into());
    Ok(())
}
