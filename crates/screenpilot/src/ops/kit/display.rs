//! What operations share about desktop sessions: finding a session by sid (terminal or desktop), a
//! desktop's screen as results carry it (its window list as text, and hashes of its pixels), and
//! screenshots sized for models.
//!
//! Models are sent screenshots no larger than they see: Anthropic's API downscales images past 1568 px
//! on the long edge or about 1.15 megapixels, so a full-size 2560x1600 screenshot comes back with
//! clicks off by 1.9x. A desktop screenshot is therefore scaled down to fit ([`ModelSize`]), and the
//! coordinates a caller gives are pixels of that screenshot, mapped exactly to the screen ([`Scale`]).

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::scale::Scale;
use screenpilot_desktop::x11::WindowInfo;
use screenpilot_desktop::{encode_png, Desktop};
use screenpilot_session::{hash_hex, Session, SessionError};

pub use super::answers::{Framing, Pixel};
use super::common::{Context, OpError};
use super::model_size::ModelSize;
use super::screen::SessionScreen;
use super::view::View;

/// What a sid names.
pub enum Target {
    Terminal(Arc<Session>),
    Desktop(Arc<Desktop>),
}

/// The session `sid` names, terminal or desktop.
pub fn find_target(ctx: &Context, sid: &str) -> Result<Target, OpError> {
    match ctx.registry.get(sid) {
        Ok(session) => Ok(Target::Terminal(session)),
        Err(SessionError::UnknownSession(_)) => match ctx.desktops.get(sid) {
            Some(desktop) => Ok(Target::Desktop(desktop)),
            None => Err(SessionError::UnknownSession(sid.to_owned()).into()),
        },
        Err(other) => Err(other.into()),
    }
}

/// The size asked for in a call: `full_size` (`None`), or limits that override the session's `base`.
pub fn model_size(
    base: ModelSize,
    max_long_edge: Option<u32>,
    max_pixels: Option<u64>,
    full_size: bool,
) -> Result<Option<ModelSize>, OpError> {
    if full_size {
        if max_long_edge.is_some() || max_pixels.is_some() {
            return Err(OpError::invalid(
                "full_size",
                "full_size sends the screen as it is; leave out max_long_edge and max_pixels",
            ));
        }
        return Ok(None);
    }
    let size = ModelSize {
        max_long_edge: max_long_edge.unwrap_or(base.max_long_edge),
        max_pixels: max_pixels.unwrap_or(base.max_pixels),
    };
    if size.max_long_edge < 64 {
        return Err(OpError::invalid(
            "max_long_edge",
            format!("{} is below 64 pixels", size.max_long_edge),
        ));
    }
    if size.max_pixels < 64 * 64 {
        return Err(OpError::invalid(
            "max_pixels",
            format!("{} is below 4096 pixels", size.max_pixels),
        ));
    }
    Ok(Some(size))
}

/// How a screen of this size is sent: scaled to fit `size`, or as it is (`None`: full size).
pub fn scale_for(size: Option<ModelSize>, screen: (u32, u32)) -> Scale {
    match size {
        Some(size) => Scale::fit(screen, size.max_long_edge, size.max_pixels),
        None => Scale::identity(screen),
    }
}

/// A desktop screenshot: the PNG and how its pixels map to the screen.
pub struct DesktopPicture {
    pub png: Vec<u8>,
    pub scale: Scale,
    /// The pointer, in screenshot pixels.
    pub pointer: Pixel,
}

/// Capture `desktop` (with the pointer drawn), crop to `zoom` (screen pixels) when set, and scale to
/// `size`.
pub async fn capture(
    desktop: &Desktop,
    zoom: Option<[u32; 4]>,
    size: Option<ModelSize>,
    limit: Duration,
) -> Result<DesktopPicture, OpError> {
    capture_marked(desktop, zoom, size, limit, Vec::new()).await
}

/// [`capture`], with `marks` (boxes in screen pixels, see `marks.rs`) drawn on the picture after
/// it is scaled, so their tags stay legible.
pub async fn capture_marked(
    desktop: &Desktop,
    zoom: Option<[u32; 4]>,
    size: Option<ModelSize>,
    limit: Duration,
    marks: Vec<super::marks::Mark>,
) -> Result<DesktopPicture, OpError> {
    desktop
        .run("screenshot", limit, move |x| {
            let mut frame = x.capture(true)?;
            let (pointer, _) = x.pointer()?;
            let (mut px, mut py) = (pointer.x, pointer.y);
            if let Some([x0, y0, x1, y1]) = zoom {
                frame = frame.crop(x0, y0, x1 - x0, y1 - y0);
                px = px.saturating_sub(x0);
                py = py.saturating_sub(y0);
            }
            let scale = scale_for(size, (frame.width, frame.height));
            if !scale.is_identity() {
                frame = frame.resize(scale.image.0, scale.image.1);
            }
            if !marks.is_empty() {
                let to_image = |v: i32, screen: u32, image: u32| {
                    (i64::from(v) * i64::from(image) / i64::from(screen.max(1))) as i32
                };
                let scaled: Vec<super::marks::Mark> = marks
                    .iter()
                    .map(|m| super::marks::Mark {
                        x: to_image(m.x, scale.screen.0, scale.image.0),
                        y: to_image(m.y, scale.screen.1, scale.image.1),
                        width: to_image(m.width, scale.screen.0, scale.image.0).max(4),
                        height: to_image(m.height, scale.screen.1, scale.image.1).max(4),
                        label: m.label.clone(),
                    })
                    .collect();
                super::marks::draw(&mut frame.rgb, frame.width, frame.height, &scaled);
            }
            Ok(DesktopPicture {
                png: encode_png(&frame)?,
                scale,
                pointer: {
                    let (x, y) = scale.to_image(px, py);
                    Pixel { x, y }
                },
            })
        })
        .await
        .map_err(OpError::from)
}

/// A desktop's screen as results carry it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct DesktopScreen {
    pub sid: String,
    /// Always "desktop".
    pub kind: String,
    /// The display still answers.
    pub alive: bool,
    /// The program started on the display still runs (when one was started).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_alive: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// The mapped top-level windows' titles, one per line, so the regexes of wait_for and expect match
    /// them (`windows` says which has the focus).
    pub text: String,
    /// xxh3 of the screen's pixels (without the pointer), 16 hex digits; it is also `visual_hash`.
    pub hash: String,
    pub visual_hash: String,
    /// The top-level windows, in stacking order.
    pub windows: Vec<WindowInfo>,
    /// `snapshot`: the windows and their elements as text, each a person could act on with a ref
    /// that `act` takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elements: Option<String>,
    /// Screen size in pixels.
    pub width: u32,
    pub height: u32,
}

impl DesktopScreen {
    /// `desktop`'s screen now.
    pub async fn read(desktop: &Desktop) -> Result<DesktopScreen, OpError> {
        let windows = desktop.windows().await?;
        let hash = hash_hex(desktop.screen_hash().await?);
        let info = desktop.info();
        Ok(DesktopScreen {
            sid: desktop.sid.clone(),
            kind: "desktop".to_owned(),
            alive: info.alive,
            program_alive: info.program_alive,
            exit_code: info.exit_code,
            signal: info.signal,
            text: titles(&windows),
            hash: hash.clone(),
            visual_hash: hash,
            windows,
            elements: None,
            width: info.width,
            height: info.height,
        })
    }

    /// The view of this screen, with `flags` after the process facts.
    pub fn view(&self, flags: &[(&'static str, String)]) -> View {
        let mut view = View::default();
        view.fact("sid", &self.sid);
        view.fact("kind", "desktop");
        view.fact("alive", self.alive);
        if let Some(code) = self.exit_code {
            view.fact("exit_code", code);
        }
        view.header.extend(flags.iter().cloned());
        if let Some(focused) = self.windows.iter().find(|w| w.focused) {
            view.fact("focused", format!("{:?}", focused.title));
        }
        view.fact("hash", &self.hash);
        view.fact("size", format!("{}x{}", self.width, self.height));
        view.screen = Some(self.elements.clone().unwrap_or_else(|| self.text.clone()));
        view
    }
}

/// Window titles, one per line, mapped windows only.
pub fn titles(windows: &[WindowInfo]) -> String {
    windows
        .iter()
        .filter(|w| w.mapped)
        .map(|w| w.title.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The screen a result carries: a terminal's, or a desktop's.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AnyScreen {
    Desktop(DesktopScreen),
    Terminal(SessionScreen),
}

impl AnyScreen {
    /// The view of this screen, with `flags` after the process facts.
    pub fn view(&self, flags: &[(&'static str, String)]) -> View {
        match self {
            AnyScreen::Desktop(screen) => screen.view(flags),
            AnyScreen::Terminal(screen) => screen.view(flags),
        }
    }
}
