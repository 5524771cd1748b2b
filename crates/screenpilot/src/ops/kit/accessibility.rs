//! What the operations keep of each desktop's accessibility tree: the bus (reached once, on first
//! use), the refs handed out, and the latest snapshot, which refs and `ROLE "NAME"` are read
//! against. Also the conditions of waits on elements.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use screenpilot_a11y::{
    self as a11y, parse_ref, snapshot, Budget, Bus, Element, Snapshot, TopLevel,
};
use screenpilot_desktop::scale::Scale;
use screenpilot_desktop::{ocr, Desktop};
use screenpilot_session::process::started_ago;

use super::error::{ErrorCode, OpError};
use super::model_size::ModelSizes;
use super::trees::{lock, Accessibility, DesktopTree};

impl From<a11y::A11yError> for OpError {
    fn from(e: a11y::A11yError) -> OpError {
        use a11y::A11yError as E;
        let code = match &e {
            E::NoBus(_) => ErrorCode::DisplayUnavailable,
            E::Invalid { .. } => ErrorCode::InvalidArgument,
            E::Refused { .. } => ErrorCode::ElementUnavailable,
            E::Gone { .. } => ErrorCode::ElementGone,
            E::Timeout { .. } => ErrorCode::Timeout,
            E::Bus(_) => ErrorCode::IoError,
        };
        let field = e.field();
        let error = OpError::new(code, e.to_string());
        match field {
            Some(field) => error.with_field(field),
            None => error,
        }
    }
}

impl DesktopTree {
    /// The bus, reached on first use; why not, when it cannot be.
    pub async fn bus(&self, desktop: &Desktop) -> Result<Arc<Bus>, OpError> {
        let reached = self
            .bus
            .get_or_init(|| async {
                let Some(address) = desktop.session_bus_address() else {
                    return Err(if desktop.info().attached {
                        format!("display {} was attached without a session bus (DBUS_SESSION_BUS_ADDRESS was not set for it), so its applications' accessibility cannot be reached; only window titles and pictures", desktop.display)
                    } else {
                        "this desktop has no session bus (dbus-daemon is not installed: apt install dbus at-spi2-core), so its applications' accessibility cannot be reached".to_owned()
                    });
                };
                let bus = Bus::connect(&address).await.map_err(|e| e.to_string())?;
                bus.boxes_relative_to_windows(desktop.is_wayland());
                Ok(Arc::new(bus))
            })
            .await;
        reached.clone().map_err(|why| {
            OpError::new(ErrorCode::DisplayUnavailable, format!("sid: {why}")).with_field("sid")
        })
    }
}

/// The window list's top-level windows (the X server's, sway's), as the tree is laid out under
/// them.
pub async fn top_levels(desktop: &Desktop) -> Result<Vec<TopLevel>, OpError> {
    let (windows, scale) = desktop
        .run("listing the windows", desktop.step_timeout, |x| {
            Ok((x.windows()?, x.window_scale()?))
        })
        .await?;
    Ok(windows
        .into_iter()
        .map(|w| TopLevel {
            id: w.id,
            title: w.title,
            class: w.class,
            pid: w.pid,
            bounds: a11y::Bounds::new(w.x, w.y, w.width as i32, w.height as i32),
            focused: w.focused,
            shown: w.mapped,
            scale,
        })
        .collect())
}

/// The budget of a snapshot of `desktop`, boxes in the pixels of its screenshots for models (those
/// `computer` takes).
pub fn budget(desktop: &Desktop, sizes: &ModelSizes) -> Budget {
    let size = sizes.get(&desktop.sid);
    let scale = Scale::fit(desktop.size(), size.max_long_edge, size.max_pixels);
    Budget {
        scale: 1.0 / scale.factor(),
        ..Budget::default()
    }
}

/// A fresh snapshot of `desktop` (or of the part under `part`, a ref), kept as its latest. The
/// windows without a tree are read from their pixels; with `ocr`, every window is.
pub async fn take(
    tree: &DesktopTree,
    desktop: &Desktop,
    sizes: &ModelSizes,
    part: Option<&Element>,
    ocr: bool,
) -> Result<Arc<Snapshot>, OpError> {
    let bus = tree.bus(desktop).await?;
    let (w, h) = desktop.size();
    let screen = a11y::Bounds::new(0, 0, w as i32, h as i32);
    let budget = budget(desktop, sizes);
    let shot = match part {
        Some(element) => {
            let object = element.object.as_ref().ok_or_else(|| {
                OpError::invalid(
                    "ref",
                    format!("{} has no accessibility tree to read", element.describe()),
                )
            })?;
            // Where its window is, for boxes given relative to it: as the latest snapshot placed
            // them, or the window line's box.
            let window = match (element.placement(), part_window(tree, element)) {
                (Some(placed), _) => Some(placed),
                (None, Some(bounds)) => {
                    let scale = desktop
                        .run("reading the window scale", desktop.step_timeout, |x| {
                            x.window_scale()
                        })
                        .await?;
                    Some(a11y::Placement {
                        x: bounds.x,
                        y: bounds.y,
                        scale,
                    })
                }
                (None, None) => None,
            };
            let elements = bus.subtree(object, screen, window).await?;
            snapshot::compose_part(elements, &mut lock(&tree.refs), budget)
        }
        None => {
            let (tops, trees) = tokio::join!(top_levels(desktop), bus.trees(screen));
            let (tops, mut trees) = (tops?, trees?);
            // A program that speaks accessibility but has not put its window in the tree yet (it
            // just started: Qt does so a moment after the window shows) is waited for, woken by the
            // bus's events, rather than read as a window without a tree.
            let deadline = tokio::time::Instant::now() + REGISTER_LIMIT;
            let mut events = bus.events();
            while !unregistered(&tops, &trees, &bus).await.is_empty() {
                tokio::select! {
                    _ = events.changed() => {}
                    _ = tokio::time::sleep_until(deadline) => break,
                }
                trees = bus.trees(screen).await?;
            }
            let windows: Vec<TopLevel> = if ocr {
                tops.iter().filter(|t| t.shown).cloned().collect()
            } else {
                snapshot::unread_windows(&tops, &trees)
                    .into_iter()
                    .cloned()
                    .collect()
            };
            let (pixels, note) = read_pixels(tree, desktop, windows).await?;
            let mut shot = snapshot::compose(&tops, &trees, &pixels, &mut lock(&tree.refs), budget);
            if let Some(note) = note {
                shot.text.push_str(&format!("\n({note})"));
            }
            shot
        }
    };
    let shot = Arc::new(shot);
    *lock(&tree.last) = Some(shot.clone());
    Ok(shot)
}

/// The box of the listed window that `element` (of the latest snapshot) is shown in: the window
/// line it is under, or itself. `None` for what no window list holds (a popup).
fn part_window(tree: &DesktopTree, element: &Element) -> Option<a11y::Bounds> {
    let last = lock(&tree.last).clone()?;
    let at = last.elements.iter().position(|e| e.id == element.id)?;
    let window = last.elements[..=at].iter().rev().find(|e| e.depth == 0)?;
    window.window.and(window.bounds)
}

/// The text of `windows`, read from their pixels (OCR), by window; and a note when it could not be
/// read. Each window's picture is read once: a window that looks as it did is answered from what
/// was read then.
async fn read_pixels(
    tree: &DesktopTree,
    desktop: &Desktop,
    windows: Vec<TopLevel>,
) -> Result<(HashMap<u32, Vec<Element>>, Option<String>), OpError> {
    let mut read = HashMap::new();
    if windows.is_empty() {
        return Ok((read, None));
    }
    if !ocr::available() {
        return Ok((read, Some(ocr::OcrError::Missing.to_string())));
    }
    let frame = desktop
        .run("capturing the screen to read", desktop.step_timeout, |x| {
            x.capture(false)
        })
        .await?;
    let mut notes = Vec::new();
    for window in windows {
        let b = window.bounds;
        let (x, y) = (b.x.max(0), b.y.max(0));
        let part = frame.crop(
            x as u32,
            y as u32,
            b.width.max(0) as u32,
            b.height.max(0) as u32,
        );
        if u64::from(part.width) * u64::from(part.height) > ocr::LARGEST {
            notes.push(format!(
                "window {} is too large to read from pixels",
                a11y::element::quoted(&window.title, 60)
            ));
            continue;
        }
        let look = part.hash();
        let known = lock(&tree.read_pixels)
            .iter()
            .find(|(l, _)| *l == look)
            .map(|(_, phrases)| phrases.clone());
        let phrases = match known {
            Some(phrases) => phrases,
            None => match ocr::read(&part).await {
                Ok(phrases) => {
                    let phrases = Arc::new(phrases);
                    let mut cache = lock(&tree.read_pixels);
                    cache.push((look, phrases.clone()));
                    if cache.len() > PIXELS_REMEMBERED {
                        cache.remove(0);
                    }
                    phrases
                }
                Err(e) => {
                    notes.push(e.to_string());
                    continue;
                }
            },
        };
        let elements = phrases
            .iter()
            .map(|p| {
                let bounds = a11y::Bounds::new(x + p.x, y + p.y, p.width as i32, p.height as i32);
                Element::from_pixels(window.id, p.text.clone(), bounds, look_of(&frame, bounds))
            })
            .collect();
        read.insert(window.id, elements);
    }
    notes.dedup();
    Ok((read, (!notes.is_empty()).then(|| notes.join("; "))))
}

/// How many windows' readings are remembered.
const PIXELS_REMEMBERED: usize = 16;

/// A hash of how `bounds` of `frame` look.
pub fn look_of(frame: &screenpilot_desktop::Frame, bounds: a11y::Bounds) -> u64 {
    frame
        .crop(
            bounds.x.max(0) as u32,
            bounds.y.max(0) as u32,
            bounds.width.max(0) as u32,
            bounds.height.max(0) as u32,
        )
        .hash()
}

/// How long after its start a program on the accessibility bus is waited for to put its window in
/// the tree (a Qt app on a loaded two-core machine took over 3 s).
const REGISTER_LIMIT: Duration = Duration::from_secs(8);

/// The shown windows whose program is on the accessibility bus but has no window in the tree read
/// (none when no such window: a program without accessibility, xterm, costs nothing).
async fn unregistered(tops: &[TopLevel], trees: &a11y::Trees, bus: &Bus) -> Vec<u32> {
    let read: std::collections::HashSet<u32> =
        trees.windows.iter().filter_map(|w| w.app.pid).collect();
    let missing: Vec<u32> = tops
        .iter()
        .filter(|t| t.shown)
        .filter_map(|t| t.pid)
        .filter(|pid| !read.contains(pid))
        // Only a program that just started: one that never puts its window in the tree (a browser
        // keeping its page to itself) is not waited for again at every snapshot.
        .filter(|pid| started_ago(*pid as i32).is_some_and(|age| age < REGISTER_LIMIT))
        .collect();
    if missing.is_empty() {
        return missing;
    }
    let speaking = bus.connected_pids().await.unwrap_or_default();
    missing
        .into_iter()
        .filter(|pid| speaking.contains(pid))
        .collect()
}

/// The element a ref (`e12`) or a `ROLE "NAME"` names, in `desktop`'s latest snapshot; `field` is
/// the parameter that gave it.
pub fn resolve(
    all: &Accessibility,
    tree: &DesktopTree,
    desktop: &Desktop,
    text: &str,
    field: &'static str,
) -> Result<Element, OpError> {
    let Some(last) = tree.last() else {
        return Err(OpError::invalid(
            field,
            format!(
                "no snapshot of desktop '{}' yet: snapshot it, then use the refs it shows",
                desktop.sid
            ),
        ));
    };
    let text = text.trim();
    if let Some(id) = parse_ref(text) {
        if let Some(element) = last.elements.iter().find(|e| e.id == id) {
            return Ok(element.clone());
        }
        let refs = lock(&tree.refs);
        if let Some((_, _, what)) = refs.resolve(id) {
            return Err(OpError::new(
                ErrorCode::ElementGone,
                format!("{field}: {text} ({what}) is not in the latest snapshot of '{}': it closed, was hidden or was left out; snapshot again", desktop.sid),
            )
            .with_field(field));
        }
        drop(refs);
        if let Some(other) = all.owner_of(id, &desktop.sid) {
            return Err(OpError::invalid(
                field,
                format!(
                    "{text} is an element of desktop '{other}', not of '{}'",
                    desktop.sid
                ),
            ));
        }
        return Err(OpError::invalid(
            field,
            format!("{text} was never handed out; refs come from snapshot, e.g. e12"),
        ));
    }
    let (role, name) = role_and_name(text).ok_or_else(|| {
        OpError::invalid(
            field,
            format!("{text:?} is neither a ref (e12) nor ROLE \"NAME\" as snapshot prints it (button \"OK\")"),
        )
    })?;
    let found: Vec<&Element> = last
        .elements
        .iter()
        .filter(|e| a11y::role_matches(e, &role) && e.name == name)
        .collect();
    match found[..] {
        [one] => Ok(one.clone()),
        [] => Err(OpError::new(
            ErrorCode::ElementGone,
            format!(
                "{field}: no {role} {name:?} in the latest snapshot of '{}'",
                desktop.sid
            ),
        )
        .with_field(field)),
        _ => Err(OpError::invalid(
            field,
            format!(
                "{} elements are {role} {name:?}: say which by ref ({})",
                found.len(),
                found
                    .iter()
                    .filter_map(|e| e.reference())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// `button "OK"` as (role, name).
fn role_and_name(text: &str) -> Option<(String, String)> {
    let open = text.find('"')?;
    let role = text[..open].trim();
    let rest = text[open + 1..].strip_suffix('"')?;
    (!role.is_empty()).then(|| (role.to_owned(), rest.replace("\\\"", "\"")))
}

/// Elements a wait looks for.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Find {
    pub role: Option<String>,
    /// A regex over the name.
    pub name: Option<String>,
    /// focused, enabled, disabled, checked, unchecked, selected, expanded, collapsed, editable.
    pub state: Option<String>,
}

/// What a desktop wait waits for: exactly one.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ElementUntil {
    pub appears: Option<Find>,
    pub gone: Option<Find>,
    /// A ref: until its name, value or states differ from the latest snapshot's (or it is gone).
    pub changed: Option<String>,
}

/// [`ElementUntil`], checked.
pub enum Condition {
    Appears(Matcher),
    Gone(Matcher),
    Changed { id: u64, was: String },
}

/// An element a wait matches.
pub struct Matcher {
    role: Option<String>,
    name: Option<Regex>,
    state: Option<fn(&Element) -> bool>,
    pub text: String,
}

impl Matcher {
    pub fn matches(&self, e: &Element) -> bool {
        self.role
            .as_deref()
            .is_none_or(|r| a11y::role_matches(e, r))
            && self.name.as_ref().is_none_or(|n| n.is_match(&e.name))
            && self.state.is_none_or(|s| s(e))
    }
}

impl ElementUntil {
    /// Check it against `last` (the snapshot a `changed` ref comes from).
    pub fn condition(&self, last: Option<&Snapshot>) -> Result<Condition, OpError> {
        let given = [
            self.appears.is_some(),
            self.gone.is_some(),
            self.changed.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(OpError::invalid(
                "until",
                "give exactly one of appears {role, name, state}, gone {...} or changed (a ref), e.g. {\"appears\": {\"role\": \"button\", \"name\": \"^OK$\", \"state\": \"enabled\"}}",
            ));
        }
        if let Some(reference) = &self.changed {
            let id = parse_ref(reference).ok_or_else(|| {
                OpError::invalid(
                    "until.changed",
                    format!("{reference:?} is not a ref like e12"),
                )
            })?;
            let was = last
                .and_then(|s| s.elements.iter().find(|e| e.id == id))
                .map(fingerprint)
                .ok_or_else(|| {
                    OpError::invalid(
                        "until.changed",
                        format!("{reference} is not in the latest snapshot; snapshot first"),
                    )
                })?;
            return Ok(Condition::Changed { id, was });
        }
        let (find, field) = match (&self.appears, &self.gone) {
            (Some(f), _) => (f, "until.appears"),
            (_, Some(f)) => (f, "until.gone"),
            _ => unreachable!("one is given"),
        };
        let name = find
            .name
            .as_deref()
            .map(|n| {
                regex::RegexBuilder::new(n)
                    .size_limit(1 << 20)
                    .build()
                    .map_err(|e| OpError::invalid(field, format!("name: invalid regex {n:?}: {e}")))
            })
            .transpose()?;
        let state = find
            .state
            .as_deref()
            .map(|s| {
                a11y::state_named(s).ok_or_else(|| {
                    OpError::invalid(
                        field,
                        format!("state: {s:?} is not one of {}", a11y::STATE_NAMES),
                    )
                })
            })
            .transpose()?;
        let text = serde_json::to_string(find).unwrap_or_default();
        let matcher = Matcher {
            role: find.role.clone(),
            name,
            state,
            text,
        };
        Ok(if self.appears.is_some() {
            Condition::Appears(matcher)
        } else {
            Condition::Gone(matcher)
        })
    }
}

/// What a `changed` wait compares: name, value and states.
pub fn fingerprint(e: &Element) -> String {
    format!("{}|{:?}|{:?}", e.name, e.value, e.states)
}

impl Condition {
    /// Whether it holds on `shot`; the element that made it hold, for the answer.
    pub fn holds(&self, shot: &Snapshot) -> Option<Option<Element>> {
        match self {
            Condition::Appears(m) => shot
                .elements
                .iter()
                .find(|e| m.matches(e))
                .cloned()
                .map(Some),
            Condition::Gone(m) => (!shot.elements.iter().any(|e| m.matches(e))).then_some(None),
            Condition::Changed { id, was } => match shot.elements.iter().find(|e| e.id == *id) {
                None => Some(None),
                Some(e) => (fingerprint(e) != *was).then(|| Some(e.clone())),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_and_name_read_as_snapshot_prints_them() {
        assert_eq!(
            role_and_name("button \"OK\""),
            Some(("button".into(), "OK".into()))
        );
        assert_eq!(
            role_and_name("check box \"Say \\\"hi\\\"\""),
            Some(("check box".into(), "Say \"hi\"".into()))
        );
        assert_eq!(role_and_name("e12"), None);
        assert_eq!(role_and_name("\"OK\""), None);
    }

    #[test]
    fn a_wait_takes_exactly_one_condition_and_names_a_bad_one() {
        let none = ElementUntil::default();
        assert_eq!(
            none.condition(None).err().and_then(|e| e.field),
            Some("until".into())
        );
        let bad = ElementUntil {
            appears: Some(Find {
                name: Some("(".into()),
                ..Find::default()
            }),
            ..ElementUntil::default()
        };
        assert_eq!(
            bad.condition(None).err().and_then(|e| e.field),
            Some("until.appears".into())
        );
        let state = ElementUntil {
            gone: Some(Find {
                state: Some("shiny".into()),
                ..Find::default()
            }),
            ..ElementUntil::default()
        };
        let e = state.condition(None).err().expect("refused");
        assert!(e.message.contains("focused, enabled"), "{e:?}");
    }
}
