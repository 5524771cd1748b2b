//! Reading the screen: as text and state (`snapshot`) or as a picture (`screenshot`).

use base64::Engine;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_desktop::Desktop;
use screenpilot_screen::render::{checked_font_px, RenderOptions};
use screenpilot_screen::ThemeName;
use screenpilot_session::ReadOptions;

use super::kit::accessibility;
use super::kit::common::{Caller, Context, ErrorCode, OpError, Progress};
use super::kit::display::{
    capture, capture_marked, find_target, model_size, AnyScreen, DesktopScreen, Framing, Target,
};
use super::kit::look::{Look, ScreenMode};
use super::kit::operation::{Operation, Profile, Report, View};
use super::kit::picture::{render_error, Image, ImageFormat};
use super::kit::screen::SessionScreen;

/// Parameters of `snapshot`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnapshotParams {
    pub sid: String,
    /// Add `cells`: {styles, rows: runs [col, text, style index] per row}.
    #[serde(default)]
    pub as_json: bool,
    /// [reverse]Banana[/] ([[ is [)
    #[serde(default)]
    pub styled: bool,
    /// Lines of history to add
    pub scrollback: Option<usize>,
    /// Add a picture of the screen too (png as base64 `png`, or `svg`).
    pub image: Option<ImageFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen: Option<ScreenMode>,
    /// Desktops: the part under it
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub part: Option<String>,
    /// Desktops: OCR every window
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ocr: bool,
    /// Who is looking, for deltas (not a tool parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(skip)]
    pub reader: Option<String>,
}

/// Parameters of `screenshot`.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScreenshotParams {
    pub sid: String,
    pub format: Option<ImageFormat>,
    /// 6-96, default 16
    pub font_px: Option<f64>,
    pub theme: Option<ThemeName>,
    /// Window frame
    #[serde(default)]
    pub frame: bool,
    /// Desktops: longest side (default 1568)
    pub max_long_edge: Option<u32>,
    /// Desktops: most pixels (default 1150000)
    pub max_pixels: Option<u64>,
    /// Desktops: unscaled
    #[serde(default)]
    pub full_size: bool,
    /// Desktops: box each ref
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub marks: bool,
}

/// What `snapshot` answers: the screen, and a picture when asked for.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Snapped {
    #[serde(flatten)]
    pub screen: AnyScreen,
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
}

/// What `snapshot` answers: the whole state, or (for a reader of deltas) a look.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Snapshotted {
    Whole(Box<Snapped>),
    Look(Looked),
}

/// A terminal screen as a reader of deltas is shown it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Looked {
    pub sid: String,
    #[serde(flatten)]
    pub look: Look,
}

impl Report for Snapshotted {
    fn view(&self) -> View {
        match self {
            Snapshotted::Whole(whole) => whole.view(),
            Snapshotted::Look(looked) => looked.look.view(&[]),
        }
    }

    fn human(&self) -> String {
        match self {
            Snapshotted::Whole(whole) => whole.human(),
            Snapshotted::Look(looked) => looked.look.view(&[]).render(),
        }
    }
}

impl Report for Snapped {
    fn view(&self) -> View {
        self.screen.view(&[])
    }

    fn human(&self) -> String {
        let screen = match &self.screen {
            AnyScreen::Terminal(screen) => screen,
            AnyScreen::Desktop(screen) => {
                return screen
                    .elements
                    .clone()
                    .unwrap_or_else(|| screen.text.clone())
            }
        };
        let shown = screen.shown_text();
        match screen.state.scrollback.as_deref().filter(|s| !s.is_empty()) {
            Some(history) => format!("{history}\n{shown}"),
            None => shown.to_owned(),
        }
    }
}

/// What `screenshot` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Pictured {
    pub sid: String,
    #[serde(flatten)]
    pub image: Image,
    /// Desktops: how the picture maps to the screen.
    #[serde(flatten)]
    pub framing: Framing,
}

impl Report for Pictured {
    fn human(&self) -> String {
        self.image.path.clone().unwrap_or_default()
    }
}

/// `snapshot`: the screen as text and state.
pub struct Snapshot;

impl Operation for Snapshot {
    const NAME: &'static str = "snapshot";
    const PROFILES: &'static [Profile] = Profile::DESKTOPS;
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] =
        &[("as_json", Profile::CLASSIC), ("image", Profile::CLASSIC)];
    const DESCRIPTION: &'static str =
        "The screen now, as send shows it (screen: full for all). Desktops: windows and elements with refs for act.";
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("Read the session's screen now. Returns {ok, sid, alive, exit_code?, alt_screen, text, hash, visual_hash, cursor{row,col,visible,shape}, title, modes, cols, rows, highlights}. \
text: one line per row (row 0 first), no trailing padding (the cursor row runs up to the cursor). alt_screen=true: a full-screen app owns the screen. \
hash covers text only (baseline for wait_change); visual_hash also styles and cursor (wait_visual_change). \
highlights: spans shown selected or focused [{row, col, text, why, style}]. \
Options add `styled` (the text with style tags, e.g. [reverse]Banana[/]), `cells`, `scrollback` history, a picture (see each parameter). \
On a desktop (no styled, highlights): {sid, kind, alive, text (window titles), windows [{id, title, class, pid, x, y, width, height, focused, mapped}], hash, width, height}. Example: {\"sid\": \"menu\", \"styled\": true}.");
    const READ_ONLY: bool = true;
    type Params = SnapshotParams;
    type Output = Snapshotted;

    fn prepare(p: &mut SnapshotParams, caller: &Caller) {
        caller.fill_reader(&mut p.reader);
    }

    async fn run(ctx: &Context, p: SnapshotParams, _: &Progress) -> Result<Snapshotted, OpError> {
        let session = match find_target(ctx, &p.sid)? {
            Target::Terminal(_) if p.ocr => {
                return Err(OpError::invalid(
                    "ocr",
                    format!("'{}' is a terminal session: its text is read exactly without OCR (snapshot without ocr); OCR reads desktop windows", p.sid),
                ))
            }
            Target::Terminal(session) => session,
            Target::Desktop(_) if p.ocr && p.part.is_some() => {
                return Err(OpError::invalid(
                    "ocr",
                    "OCR reads whole windows: snapshot with ocr and without ref",
                ))
            }
            Target::Desktop(desktop) => {
                return snapshot_desktop(ctx, &desktop, p)
                    .await
                    .map(|s| Snapshotted::Whole(Box::new(s)))
            }
        };
        // A reader of deltas asking for nothing more than the screen gets a look.
        let plain = !p.as_json && !p.styled && p.scrollback.is_none() && p.image.is_none();
        // Pictures on the screen come whole, each beside the text that labels it.
        let pictures = session.with_screen(|s| s.images());
        if plain && pictures.is_empty() && (p.reader.is_some() || p.screen.is_some()) {
            let look = Look::take(&session, p.screen.unwrap_or_default(), p.reader.as_deref())?;
            return Ok(Snapshotted::Look(Looked { sid: p.sid, look }));
        }
        let mut screen = SessionScreen::read(
            &session,
            ReadOptions {
                scrollback: p.scrollback,
                cells: p.as_json,
                styled: p.styled,
                highlights: true,
            },
        );
        attach_pictures(&mut screen.state.images, pictures).await?;
        let image = match p.image {
            Some(format) => {
                Some(Image::of_session(&session, format, RenderOptions::default()).await?)
            }
            None => None,
        };
        Ok(Snapshotted::Whole(Box::new(Snapped {
            screen: AnyScreen::Terminal(screen),
            image,
        })))
    }
}

/// The most pixels on the longer side of a picture attached to a snapshot: enough to tell what it
/// shows, a few hundred tokens each.
const PICTURE_MAX_EDGE: u32 = 512;

/// Give each picture listed its PNG (scaled down to [`PICTURE_MAX_EDGE`]), encoded off the async
/// threads.
async fn attach_pictures(
    listed: &mut [screenpilot_screen::PictureInfo],
    shown: Vec<screenpilot_screen::ShownImage>,
) -> Result<(), OpError> {
    if listed.is_empty() {
        return Ok(());
    }
    let encoded =
        super::kit::blocking::run_bounded(super::kit::blocking::Heavy::Picture, move || {
            shown
                .iter()
                .map(|image| (image.number, image.png(PICTURE_MAX_EDGE).ok()))
                .collect::<Vec<_>>()
        })
        .await?;
    for info in listed {
        let png = encoded
            .iter()
            .find(|(number, _)| *number == info.number)
            .and_then(|(_, png)| png.as_ref());
        info.png = png.map(|png| base64::engine::general_purpose::STANDARD.encode(png));
    }
    Ok(())
}

/// `snapshot` of a desktop: its windows and hash, and a model-sized picture when asked for.
async fn snapshot_desktop(
    ctx: &Context,
    desktop: &Desktop,
    p: SnapshotParams,
) -> Result<Snapped, OpError> {
    if p.scrollback.is_some() {
        return Err(OpError::invalid(
            "scrollback",
            "a desktop has no scrollback; its text is its elements",
        ));
    }
    let mut screen = DesktopScreen::read(desktop).await?;
    let tree = ctx.accessibility.of(desktop);
    let part = p
        .part
        .as_deref()
        .map(|r| accessibility::resolve(&ctx.accessibility, &tree, desktop, r, "ref"))
        .transpose()?;
    screen.elements = Some(
        match accessibility::take(&tree, desktop, &ctx.model_sizes, part.as_ref(), p.ocr).await {
            Ok(shot) => shot.text.clone(),
            // No tree to read: the windows, and why.
            Err(e) if part.is_none() && e.code == ErrorCode::DisplayUnavailable => {
                format!("{}\n({})", screen.text, e.message)
            }
            Err(e) => return Err(e),
        },
    );
    let image = match p.image {
        None => None,
        Some(ImageFormat::Svg) => {
            return Err(OpError::invalid(
                "image",
                "svg is drawn from a terminal's cells; a desktop gives png",
            ))
        }
        Some(ImageFormat::Png) => {
            let size = Some(ctx.model_sizes.get(&desktop.sid));
            let picture = capture(desktop, None, size, desktop.step_timeout).await?;
            let (width, height) = picture.scale.image;
            Some(Image::png(&picture.png, width, height))
        }
    };
    Ok(Snapped {
        screen: AnyScreen::Desktop(screen),
        image,
    })
}

/// `screenshot`: the screen as a picture.
pub struct Screenshot;

impl Operation for Screenshot {
    const NAME: &'static str = "screenshot";
    const PROFILES: &'static [Profile] = Profile::SCREENS;
    const DESCRIPTION: &'static str =
        "A PNG of the screen. Desktops: scaled for models, with the pointer.";
    const FIELD_PROFILES: &'static [(&'static str, &'static [Profile])] = &[
        ("max_long_edge", Profile::CLASSIC),
        ("max_pixels", Profile::CLASSIC),
        ("full_size", Profile::CLASSIC),
        ("font_px", Profile::CLASSIC),
        ("theme", Profile::CLASSIC),
        ("frame", Profile::CLASSIC),
        ("marks", Profile::DESKTOPS),
    ];
    const CLASSIC_DESCRIPTION: Option<&'static str> = Some("A picture of the session's screen as a real terminal shows it: colours, bold/italic/underline, wide CJK, box drawing, cursor. \
PNG (default) comes back as an image; svg as text. Returns {ok, sid, format, width, height, png (base64) | svg}. \
Options: font_px (default 16), theme dark|light, frame (window title bar). \
On a desktop: the screen with the pointer, scaled so the long edge is <= 1568 px and <= 1.15 MP (max_long_edge, max_pixels, full_size to change), with scale, screen_width, screen_height and pointer. \
Example: {\"sid\": \"htop\", \"format\": \"png\"}.");
    const READ_ONLY: bool = true;
    type Params = ScreenshotParams;
    type Output = Pictured;

    async fn run(ctx: &Context, p: ScreenshotParams, _: &Progress) -> Result<Pictured, OpError> {
        if let Target::Desktop(desktop) = find_target(ctx, &p.sid)? {
            return screenshot_desktop(ctx, &desktop, p).await;
        }
        if p.max_long_edge.is_some() || p.max_pixels.is_some() || p.full_size {
            return Err(OpError::invalid(
                "max_long_edge",
                "max_long_edge, max_pixels and full_size size desktop screenshots; a terminal's size comes from font_px",
            ));
        }
        let mut options = RenderOptions::default();
        if let Some(px) = p.font_px {
            options.font_px = checked_font_px(px).map_err(render_error)?;
        }
        options.theme = p.theme.unwrap_or_default();
        options.frame = p.frame;
        let session = ctx.registry.get(&p.sid)?;
        let image =
            Image::of_session(&session, p.format.unwrap_or(ImageFormat::Png), options).await?;
        Ok(Pictured {
            sid: p.sid,
            image,
            framing: Framing::default(),
        })
    }
}

/// `screenshot` of a desktop: the screen with the pointer, scaled for models unless `full_size`.
async fn screenshot_desktop(
    ctx: &Context,
    desktop: &Desktop,
    p: ScreenshotParams,
) -> Result<Pictured, OpError> {
    let terminal_only = [
        ("format", p.format == Some(ImageFormat::Svg)),
        ("font_px", p.font_px.is_some()),
        ("theme", p.theme.is_some()),
        ("frame", p.frame),
    ];
    if let Some((field, _)) = terminal_only.iter().find(|(_, given)| *given) {
        return Err(OpError::invalid(
            field,
            "applies to terminal sessions; a desktop screenshot is a png of its pixels",
        ));
    }
    let base = ctx.model_sizes.get(&desktop.sid);
    let size = model_size(base, p.max_long_edge, p.max_pixels, p.full_size)?;
    let marks = if p.marks {
        let last = ctx.accessibility.of(desktop).last().ok_or_else(|| {
            OpError::invalid(
                "marks",
                "marks come from the latest snapshot: snapshot first",
            )
        })?;
        last.elements
            .iter()
            .filter_map(|e| {
                let b = e.bounds?;
                Some(super::kit::marks::Mark {
                    x: b.x,
                    y: b.y,
                    width: b.width,
                    height: b.height,
                    label: e.reference()?,
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    let picture = capture_marked(desktop, None, size, desktop.step_timeout, marks).await?;
    let (width, height) = picture.scale.image;
    Ok(Pictured {
        sid: p.sid,
        image: Image::png(&picture.png, width, height),
        framing: Framing::of(
            picture.scale.screen,
            picture.scale.factor(),
            Some(picture.pointer),
        ),
    })
}
