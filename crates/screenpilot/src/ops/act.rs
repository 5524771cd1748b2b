//! `act`: do something to a desktop element named by its ref (or `ROLE "NAME"`) instead of by pixel,
//! then wait (`until` an element appears, goes or changes) and answer with the desktop's elements.
//!
//! An action goes through the application's accessibility when it offers it (a button's click
//! action, an entry's text, a list's selection); otherwise the pointer or keyboard does it at the
//! element, after checking that the element is there, shown, enabled and not covered by another
//! window, so a click never lands elsewhere. Without `ref` and `do`, `act` only waits.

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use base64::Engine;
use screenpilot_a11y::{Act as A11yAct, Done, Element, Snapshot};
use screenpilot_desktop::x11::{Point, BUTTON_LEFT};
use screenpilot_desktop::{ClipContent, ClipKind, CloseOutcome, Desktop, MoveResize, Selection};

use super::kit::accessibility::{self, Condition, ElementUntil};
use super::kit::common::{Context, ErrorCode, OpError, Progress};
use super::kit::display::{find_target, Target};
use super::kit::operation::{Operation, Profile, Report, View};
use crate::ops::kit::step_table::{Journaled, StepTable, ACT_FIELDS};
use crate::ops::kit::timing::DESKTOP_SETTLE;
use crate::ops::kit::until::{DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};

/// Parameters of `act`.
#[derive(Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActParams {
    pub sid: String,
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(rename = "do", default, skip_serializing_if = "Option::is_none")]
    pub action: Option<ActName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// move: [x,y]; resize: [w,h]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<[i32; 2]>,
    // Listed as a plain object: the description says its fields, and the daemon names a wrong one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub until: Option<ElementUntil>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}

/// What `do` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActName {
    Click,
    DoubleClick,
    Focus,
    Set,
    Type,
    Select,
    Toggle,
    Scroll,
    Raise,
    Minimize,
    Close,
    Move,
    Resize,
    Clipboard,
    Primary,
}

impl ActName {
    /// The name `do` takes, as serde reads it.
    fn name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// The element action this is, with its text (set and type need one).
    fn on_element(self, text: Option<&str>) -> Result<A11yAct, OpError> {
        let text = || {
            text.map(str::to_owned).ok_or_else(|| {
                OpError::invalid(
                    "text",
                    format!(
                        "{0} needs text, e.g. {{\"do\": \"{0}\", \"text\": \"hello\"}}",
                        self.name()
                    ),
                )
            })
        };
        Ok(match self {
            ActName::Click => A11yAct::Click,
            ActName::DoubleClick => A11yAct::DoubleClick,
            ActName::Focus => A11yAct::Focus,
            ActName::Set => A11yAct::Set(text()?),
            ActName::Type => A11yAct::Type(text()?),
            ActName::Select => A11yAct::Select,
            ActName::Toggle => A11yAct::Toggle,
            ActName::Scroll => A11yAct::Scroll,
            window => {
                return Err(OpError::invalid(
                    "do",
                    format!(
                        "{} acts on a window line's ref, not an element",
                        window.name()
                    ),
                ))
            }
        })
    }

    /// It acts on a window (a window line's ref), not an element.
    fn on_window(self) -> bool {
        matches!(
            self,
            ActName::Raise | ActName::Minimize | ActName::Close | ActName::Move | ActName::Resize
        )
    }

    /// It reads or sets a selection, and takes no ref.
    fn selection(self) -> Option<Selection> {
        match self {
            ActName::Clipboard => Some(Selection::Clipboard),
            ActName::Primary => Some(Selection::Primary),
            _ => None,
        }
    }
}

/// What `act` answers.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct Acted {
    pub sid: String,
    /// How it was done: through the application ("action click", "editable text", "selection") or
    /// by input ("pointer click at 120,44", "typed").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// With until: whether it held, and the element that made it (for appears and changed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_ms: Option<u64>,
    /// do: clipboard or primary without text: what it holds (text), or `png` (an image).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clipboard: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub png: Option<String>,
    /// The desktop after: its windows and elements, as snapshot shows them.
    pub elements: String,
}

impl Report for Acted {
    fn satisfied(&self) -> bool {
        self.held != Some(false)
    }

    fn view(&self) -> View {
        let mut view = View::default();
        if let Some(done) = &self.done {
            view.fact("done", format!("{done:?}"));
        }
        match (self.held, &self.matched) {
            (Some(true), Some(m)) => view.fact("held", m.trim()),
            (Some(true), None) => view.fact("held", "true"),
            (Some(false), _) => view.fact("held", "false (timeout)"),
            _ => {}
        }
        if let Some(text) = &self.clipboard {
            view.fact("clipboard", format!("{text:?}"));
        }
        view.screen = Some(self.elements.clone());
        view
    }

    fn complaint(&self) -> Option<String> {
        (self.held == Some(false)).then(|| "act: the wait timed out".to_owned())
    }
}

/// `act`.
pub struct Act;

impl Operation for Act {
    const NAME: &'static str = "act";
    const PROFILES: &'static [Profile] = Profile::DESKTOPS;
    const DESCRIPTION: &'static str = "Act on a desktop element by its ref from snapshot (or ROLE \"NAME\"), through its app, else the pointer. set/type: text. Windows: raise..resize (to). clipboard|primary: text sets, none reads. until: {appears|gone:{role,name,state}} or {changed:ref}. Returns the elements after. E.g. {\"sid\":\"d\",\"ref\":\"e4\",\"do\":\"click\"}";
    type Params = ActParams;
    type Output = Acted;

    fn journal(p: &ActParams, _: bool) -> Vec<Journaled> {
        let mut table = Journaled::table_of(&serde_json::to_value(p).unwrap_or_default(), &[]);
        table.retain(|key, _| ACT_FIELDS.contains(&key.as_str()));
        vec![Journaled::waiting(StepTable {
            act: Some(table),
            ..StepTable::default()
        })]
    }

    fn time_limit(p: &ActParams) -> Option<Duration> {
        p.until
            .as_ref()
            .map(|_| Duration::from_millis(p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)))
    }

    async fn run(ctx: &Context, p: ActParams, _: &Progress) -> Result<Acted, OpError> {
        let desktop = match find_target(ctx, &p.sid)? {
            Target::Desktop(desktop) => desktop,
            Target::Terminal(_) => {
                return Err(OpError::invalid(
                    "sid",
                    format!("'{}' is a terminal; act works on desktop elements (send types and clicks in terminals)", p.sid),
                ))
            }
        };
        let timeout_ms = p.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if timeout_ms > MAX_TIMEOUT_MS {
            return Err(OpError::invalid(
                "timeout_ms",
                format!("{timeout_ms} is over the limit of {MAX_TIMEOUT_MS} (an hour)"),
            ));
        }
        let tree = ctx.accessibility.of(&desktop);
        if let Some(which) = p.action.and_then(ActName::selection) {
            return selection(ctx, &desktop, &tree, which, &p).await;
        }
        if p.to.is_some() && !matches!(p.action, Some(ActName::Move | ActName::Resize)) {
            return Err(OpError::invalid(
                "to",
                "goes with move ([x, y]) and resize ([w, h])",
            ));
        }
        let act = match (&p.target, p.action) {
            (Some(_), None) => {
                return Err(OpError::invalid(
                    "do",
                    "say what to do with the element, e.g. \"do\": \"click\"",
                ))
            }
            (None, Some(action)) => {
                return Err(OpError::invalid(
                    "ref",
                    format!(
                        "{} needs the element: a ref from snapshot (e12) or ROLE \"NAME\"",
                        action.name()
                    ),
                ))
            }
            (None, None) if p.until.is_none() => {
                return Err(OpError::invalid(
                    "do",
                    "nothing to do: give ref and do, or until to wait",
                ))
            }
            (None, None) => None,
            (Some(target), Some(action)) => Some((target.clone(), action)),
        };
        // The wait is checked before acting, so a bad one sends nothing.
        let condition = p
            .until
            .as_ref()
            .map(|u| u.condition(tree.last().as_deref()))
            .transpose()?;
        let mut done = None;
        if let Some((target, action)) = act {
            if p.text.is_some() && !matches!(action, ActName::Set | ActName::Type) {
                return Err(OpError::invalid(
                    "text",
                    format!("{} takes no text (set and type do)", action.name()),
                ));
            }
            // ROLE "NAME" means the element as it is now: read the tree first.
            if screenpilot_a11y::parse_ref(target.trim()).is_none() {
                accessibility::take(&tree, &desktop, &ctx.model_sizes, None, false).await?;
            }
            let element =
                accessibility::resolve(&ctx.accessibility, &tree, &desktop, &target, "ref")?;
            let before = *desktop.damage_updates().borrow();
            done = Some(match element.window {
                Some(window) if action.on_window() || action == ActName::Focus => {
                    let scale = accessibility::budget(&desktop, &ctx.model_sizes).scale;
                    on_window(&desktop, window, action, p.to, scale).await?
                }
                _ if action.on_window() => {
                    return Err(OpError::invalid(
                        "ref",
                        format!(
                        "{} is not a window; {} takes a window's ref (a window line of snapshot)",
                        element.describe(),
                        action.name()
                    ),
                    ))
                }
                _ => perform(&tree, &desktop, &element, action, p.text.as_deref()).await?,
            });
            if condition.is_none() {
                desktop
                    .settle_with(
                        before,
                        DESKTOP_SETTLE.quiet,
                        DESKTOP_SETTLE.reaction,
                        DESKTOP_SETTLE.limit,
                    )
                    .await;
            }
        }
        let (shot, held, matched, elapsed) = match condition {
            None => (
                accessibility::take(&tree, &desktop, &ctx.model_sizes, None, false).await?,
                None,
                None,
                None,
            ),
            Some(condition) => {
                let started = std::time::Instant::now();
                let (shot, found) = wait(
                    &tree,
                    &desktop,
                    ctx,
                    &condition,
                    Duration::from_millis(timeout_ms),
                )
                .await?;
                (
                    shot,
                    Some(found.is_some()),
                    found.flatten().map(|e| e.line()),
                    Some(started.elapsed().as_millis() as u64),
                )
            }
        };
        Ok(Acted {
            sid: desktop.sid.clone(),
            done,
            held,
            matched,
            elapsed_ms: elapsed,
            clipboard: None,
            png: None,
            elements: shot.text.clone(),
        })
    }
}

/// `do: clipboard | primary`: set it to `text` (`data:image/png;base64,...` for a picture), or read
/// it: text when it holds text, else a PNG.
async fn selection(
    ctx: &Context,
    desktop: &Arc<Desktop>,
    tree: &super::kit::trees::DesktopTree,
    which: Selection,
    p: &ActParams,
) -> Result<Acted, OpError> {
    let stray = [
        ("ref", p.target.is_some()),
        ("until", p.until.is_some()),
        ("to", p.to.is_some()),
    ];
    if let Some((field, _)) = stray.iter().find(|(_, given)| *given) {
        return Err(OpError::invalid(
            field,
            "clipboard and primary take only text (to set) or nothing (to read)",
        ));
    }
    let mut acted = Acted {
        sid: desktop.sid.clone(),
        done: None,
        held: None,
        matched: None,
        elapsed_ms: None,
        clipboard: None,
        png: None,
        elements: String::new(),
    };
    let name = match which {
        Selection::Clipboard => "clipboard",
        Selection::Primary => "primary selection",
    };
    match &p.text {
        Some(text) => {
            let content = match text.strip_prefix("data:image/png;base64,") {
                Some(data) => ClipContent::Png(
                    base64::engine::general_purpose::STANDARD
                        .decode(data.trim())
                        .map_err(|e| {
                            OpError::invalid("text", format!("the PNG's base64 does not read: {e}"))
                        })?,
                ),
                None => ClipContent::Text(text.clone()),
            };
            desktop.clipboard_set(which, content).await?;
            acted.done = Some(format!("{name} set"));
        }
        None => {
            let types = desktop.clipboard_types(which).await?;
            let text_offered = types.iter().any(|t| {
                matches!(
                    t.as_str(),
                    "UTF8_STRING" | "STRING" | "TEXT" | "text/plain" | "text/plain;charset=utf-8"
                )
            });
            let kind = if !text_offered && types.iter().any(|t| t == "image/png") {
                ClipKind::Png
            } else {
                ClipKind::Text
            };
            match desktop.clipboard_get(which, kind).await? {
                ClipContent::Text(text) => acted.clipboard = Some(text),
                ClipContent::Png(bytes) => {
                    acted.png = Some(base64::engine::general_purpose::STANDARD.encode(bytes))
                }
            }
            acted.done = Some(format!("{name} read"));
        }
    }
    acted.elements = accessibility::take(tree, desktop, &ctx.model_sizes, None, false)
        .await
        .map(|s| s.text.clone())
        .unwrap_or_else(|e| format!("({})", e.message));
    Ok(acted)
}

/// A window action through the window manager; `to` is in the pixels boxes are shown in (`scale`
/// of the screen's).
async fn on_window(
    desktop: &Desktop,
    window: u32,
    action: ActName,
    to: Option<[i32; 2]>,
    scale: f64,
) -> Result<String, OpError> {
    let screen = |v: i32| (f64::from(v) / scale).round() as i32;
    let needs_to = |example: &str| {
        to.ok_or_else(|| OpError::invalid("to", format!("{} needs to: {example}", action.name())))
    };
    let info = match action {
        ActName::Focus => desktop.focus_window(window).await?,
        ActName::Raise => desktop.raise_window(window).await?,
        ActName::Minimize => desktop.minimize_window(window).await?,
        ActName::Move => {
            let [x, y] = needs_to("[x, y]")?;
            let to = MoveResize {
                x: Some(screen(x)),
                y: Some(screen(y)),
                width: None,
                height: None,
            };
            desktop.move_resize_window(window, to).await?
        }
        ActName::Resize => {
            let [w, h] = needs_to("[w, h]")?;
            if w <= 0 || h <= 0 {
                return Err(OpError::invalid(
                    "to",
                    format!("[{w}, {h}]: a size is two numbers above 0"),
                ));
            }
            let to = MoveResize {
                x: None,
                y: None,
                width: Some(screen(w) as u32),
                height: Some(screen(h) as u32),
            };
            desktop.move_resize_window(window, to).await?
        }
        ActName::Close => {
            return Ok(match desktop.close_window(window, false).await? {
                CloseOutcome::Closed => "window closed".to_owned(),
                CloseOutcome::Asking { dialog } => format!(
                    "the window stays: its program asks in window {:?}",
                    dialog.title
                ),
            })
        }
        _ => unreachable!("window actions only"),
    };
    Ok(format!("window {} {:?}", action.name(), info.title))
}

/// Click text read from pixels, at the middle of its box, once its box still looks as it did when
/// it was read: a window that changed since is not clicked blindly.
async fn click_text_from_pixels(
    desktop: &Desktop,
    element: &Element,
    pixels: screenpilot_a11y::Pixels,
    action: ActName,
) -> Result<String, OpError> {
    let clicks = match action {
        ActName::Click | ActName::Focus => 1,
        ActName::DoubleClick => 2,
        _ => {
            return Err(OpError::invalid(
                "do",
                format!(
                    "{} was read from pixels, so it takes click, double_click or focus (a click), not {}; type with computer",
                    element.describe(),
                    action.name()
                ),
            ))
        }
    };
    let bounds = element.bounds.ok_or_else(|| {
        OpError::new(
            ErrorCode::ElementUnavailable,
            "ref: text read from pixels without a box",
        )
        .with_field("ref")
    })?;
    let (x, y) = bounds.center();
    let at = Point {
        x: x.max(0) as u32,
        y: y.max(0) as u32,
    };
    let looked = pixels.look;
    let done = desktop
        .run(
            "clicking text read from pixels",
            desktop.step_timeout,
            move |x11| {
                let now = x11.capture(false)?;
                if accessibility::look_of(&now, bounds) != looked {
                    return Ok(false);
                }
                x11.click(at, BUTTON_LEFT, clicks, &[])?;
                x11.sync()?;
                Ok(true)
            },
        )
        .await?;
    if !done {
        return Err(OpError::new(
            ErrorCode::ElementGone,
            format!(
                "ref: {} no longer looks as it did when it was read: its window changed or moved; nothing was clicked; snapshot again",
                element.describe()
            ),
        )
        .with_field("ref"));
    }
    Ok(format!(
        "pointer {} at {x},{y}",
        if clicks == 2 { "double click" } else { "click" }
    ))
}

/// Do `action` to `element`: through the application, else with the pointer or keyboard. Says how.
async fn perform(
    tree: &super::kit::trees::DesktopTree,
    desktop: &Arc<Desktop>,
    element: &Element,
    action: ActName,
    text: Option<&str>,
) -> Result<String, OpError> {
    if let Some(pixels) = element.pixels {
        return click_text_from_pixels(desktop, element, pixels, action).await;
    }
    if element.window.is_some() && element.object.is_none() {
        return Err(OpError::new(
            ErrorCode::ElementUnavailable,
            format!(
                "ref: {} has no accessibility tree (its application exposes none); act on it with computer",
                element.describe()
            ),
        )
        .with_field("ref"));
    }
    let bus = tree.bus(desktop).await?;
    let act = action.on_element(text)?;
    match bus.act(element, &act, "ref").await? {
        Done::Interface(how) => Ok(how),
        Done::Pointer { x, y, clicks } => {
            check_uncovered(tree, desktop, element, x, y).await?;
            let limit = desktop.step_timeout;
            let at = Point {
                x: x.max(0) as u32,
                y: y.max(0) as u32,
            };
            desktop
                .run("clicking the element", limit, move |x11| {
                    x11.click(at, BUTTON_LEFT, u32::from(clicks), &[])?;
                    x11.sync()
                })
                .await?;
            Ok(format!(
                "pointer {} at {x},{y}",
                if clicks == 2 { "double click" } else { "click" }
            ))
        }
        Done::Keyboard { text, replace } => {
            let limit = desktop.step_timeout;
            desktop
                .run("typing into the element", limit, move |x11| {
                    if replace {
                        let select_all = [
                            screenpilot_desktop::keysym::by_name("Control_L").unwrap_or(0xffe3),
                            u32::from('a'),
                        ];
                        x11.key_chord(&select_all, Duration::ZERO)?;
                    }
                    x11.type_text(&text)?;
                    x11.sync()
                })
                .await?;
            Ok(if replace {
                "selected all, typed"
            } else {
                "typed"
            }
            .to_owned())
        }
    }
}

/// A click at `x, y` must land on `element`: the window on top there is its own.
async fn check_uncovered(
    tree: &super::kit::trees::DesktopTree,
    desktop: &Desktop,
    element: &Element,
    x: i32,
    y: i32,
) -> Result<(), OpError> {
    let (w, h) = desktop.size();
    if x < 0 || y < 0 || x >= w as i32 || y >= h as i32 {
        return Err(OpError::new(
            ErrorCode::ElementUnavailable,
            format!(
                "ref: {} is off the screen (at {x},{y}); scroll it into view first (do: scroll)",
                element.describe()
            ),
        )
        .with_field("ref"));
    }
    let Some(last) = tree.last() else {
        return Ok(());
    };
    let Some(own) = window_holding(&last, element) else {
        // A popup (a menu, a list) the window manager does not list: it is on top.
        return Ok(());
    };
    let tops = accessibility::top_levels(desktop).await?;
    let on_top = tops.iter().rev().find(|t| {
        t.shown
            && t.bounds
                .intersect(&screenpilot_a11y::Bounds::new(x, y, 1, 1))
                .is_some()
    });
    if let Some(top) = on_top.filter(|top| top.id != own) {
        return Err(OpError::new(
            ErrorCode::ElementUnavailable,
            format!(
                "ref: {} is covered at {x},{y} by window {:?}; focus or move that window first",
                element.describe(),
                top.title
            ),
        )
        .with_field("ref"));
    }
    // Its own window is on top there; does the application show it there? (An open popup is
    // above everything, and its items are where they say.)
    let (Some(target), Some(window)) = (&element.object, window_object(&last, element)) else {
        return Ok(());
    };
    // An application whose boxes are its window's (GTK 4; Wayland) is asked in its window's
    // coordinates.
    let (lx, ly) = element.placement().map_or((x, y), |p| p.local(x, y));
    let bus = tree.bus(desktop).await?;
    let popup = if desktop.is_wayland() {
        // No Wayland client learns where another's popups are: the application says.
        let listed: Vec<screenpilot_a11y::Object> = last
            .elements
            .iter()
            .filter(|e| e.depth == 0 && e.window.is_some())
            .filter_map(|e| e.object.clone())
            .collect();
        bus.popup_at(&window, &listed, lx, ly).await
    } else {
        let (px, py) = (
            x.clamp(0, i16::MAX as i32) as i16,
            y.clamp(0, i16::MAX as i32) as i16,
        );
        desktop
            .run(
                "finding the window at a point",
                desktop.step_timeout,
                move |x11| x11.popup_at(px, py),
            )
            .await?
    };
    if popup {
        return Ok(());
    }
    let asked = bus.shows_elsewhere(&window, target, lx, ly).await;
    match asked {
        Some(there) => Err(OpError::new(
            ErrorCode::ElementUnavailable,
            format!(
                "ref: {} is not shown at {x},{y}: its application shows {there} there (an item of a popup that has closed?); take a new snapshot",
                element.describe()
            ),
        )
        .with_field("ref")),
        None => Ok(()),
    }
}

/// The accessibility object of the window line `element` is listed under in `shot`.
fn window_object(shot: &Snapshot, element: &Element) -> Option<screenpilot_a11y::Object> {
    let at = shot.elements.iter().position(|e| e.id == element.id)?;
    shot.elements[..=at]
        .iter()
        .rev()
        .find(|e| e.depth == 0)?
        .object
        .clone()
}

/// The X window `element` is shown in, in `shot`: the window line it is listed under.
fn window_holding(shot: &Snapshot, element: &Element) -> Option<u32> {
    let at = shot.elements.iter().position(|e| e.id == element.id)?;
    shot.elements[..=at].iter().rev().find_map(
        |e| {
            if e.depth == 0 {
                Some(e.window)
            } else {
                None
            }
        },
    )?
}

/// Wait until `condition` holds on fresh snapshots, each taken when the tree or the windows
/// changed (never on a timer), at most `limit`. The last snapshot, and what made it hold (`None`:
/// it did not).
async fn wait(
    tree: &super::kit::trees::DesktopTree,
    desktop: &Desktop,
    ctx: &Context,
    condition: &Condition,
    limit: Duration,
) -> Result<(Arc<Snapshot>, Option<Option<Element>>), OpError> {
    let deadline = tokio::time::Instant::now() + limit;
    let bus = tree.bus(desktop).await?;
    let mut events = bus.events();
    let mut windows = desktop.window_updates();
    loop {
        events.borrow_and_update();
        windows.borrow_and_update();
        let shot = accessibility::take(tree, desktop, &ctx.model_sizes, None, false).await?;
        if let Some(found) = condition.holds(&shot) {
            return Ok((shot, Some(found)));
        }
        tokio::select! {
            changed = events.changed() => if changed.is_err() { return Ok((shot, None)) },
            changed = windows.changed() => if changed.is_err() { return Ok((shot, None)) },
            _ = tokio::time::sleep_until(deadline) => return Ok((shot, None)),
        }
    }
}
