//! A picture in a result: PNG as base64 or SVG text, rendered off the async threads.

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_screen::render::{render_png, render_svg, Layout, RenderError, RenderOptions};
use screenpilot_session::Session;

use super::blocking::{run_bounded, Heavy};
use super::error::{ErrorCode, OpError};

#[derive(Debug, Clone, Copy, Serialize, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum ImageFormat {
    Png,
    Svg,
}

/// A picture in a result: PNG as base64, or SVG text.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Image {
    pub format: ImageFormat,
    /// Size in pixels.
    pub width: u32,
    pub height: u32,
    /// The PNG, base64 (MCP sends it as image content instead).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub png: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
    /// CLI only: the file the picture was saved to (then png/svg are left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl Image {
    /// A PNG picture.
    pub fn png(bytes: &[u8], width: u32, height: u32) -> Image {
        Image {
            format: ImageFormat::Png,
            width,
            height,
            png: Some(base64::engine::general_purpose::STANDARD.encode(bytes)),
            svg: None,
            path: None,
        }
    }

    /// The screen of `session` drawn as `format`, on a blocking thread: a large picture takes a core
    /// for a while and must not hold up the async workers that serve other sessions' input and waits.
    /// A PNG too large to draw is refused before the screen is copied out.
    pub(crate) async fn of_session(
        session: &Session,
        format: ImageFormat,
        options: RenderOptions,
    ) -> Result<Image, OpError> {
        let size = session.with_screen(|s| s.size());
        if format == ImageFormat::Png {
            Layout::new(size, &options)
                .check_drawable()
                .map_err(render_error)?;
        }
        let grid = session.with_screen(|s| s.cells());
        let layout = Layout::new(grid.size, &options);
        let (width, height) = (layout.image.width, layout.image.height);
        Ok(match format {
            ImageFormat::Png => {
                let png = run_bounded(Heavy::Picture, move || render_png(&grid, &options))
                    .await?
                    .map_err(render_error)?;
                Image::png(&png, width, height)
            }
            ImageFormat::Svg => Image {
                format,
                width,
                height,
                png: None,
                svg: Some(run_bounded(Heavy::Picture, move || render_svg(&grid, &options)).await?),
                path: None,
            },
        })
    }
}

/// A render error as the caller's: the image size follows from the font size, the knob to turn.
pub(crate) fn render_error(e: RenderError) -> OpError {
    match e {
        RenderError::TooLarge { .. } | RenderError::InvalidFontPx { .. } => {
            OpError::invalid("font_px", e.to_string())
        }
        e => OpError::new(ErrorCode::RenderFailed, format!("screenshot: {e}")),
    }
}
