//! What a snapshot is made of: elements with a role, a name, a value, the states a person would
//! notice and a box on the screen, each line of the text a model reads.
//!
//! An element gets a ref (`e12`) when a person could act on it (it takes focus, offers an action,
//! edits text, selects among children) or when it is a window; text a person only reads (labels,
//! headings) is shown without one. Containers that only arrange others (panels, fillers, scroll
//! panes) and have no name are not shown: their children take their place.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use atspi::{Interface, InterfaceSet, Role, State, StateSet};
use serde::Serialize;

/// A box on the screen, in screen pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Bounds {
    pub x: i32,
    pub y: i32,
    pub width: i32,
    pub height: i32,
}

impl Bounds {
    pub fn new(x: i32, y: i32, width: i32, height: i32) -> Bounds {
        Bounds {
            x,
            y,
            width,
            height,
        }
    }

    /// The part of `self` inside `other`; `None` when they do not overlap.
    pub fn intersect(&self, other: &Bounds) -> Option<Bounds> {
        let x0 = self.x.max(other.x);
        let y0 = self.y.max(other.y);
        let x1 = (self.x + self.width).min(other.x + other.width);
        let y1 = (self.y + self.height).min(other.y + other.height);
        (x1 > x0 && y1 > y0).then(|| Bounds::new(x0, y0, x1 - x0, y1 - y0))
    }

    pub fn center(&self) -> (i32, i32) {
        (self.x + self.width / 2, self.y + self.height / 2)
    }

    pub fn is_empty(&self) -> bool {
        self.width <= 0 || self.height <= 0
    }
}

/// Where a window's own coordinates lie on the screen: its top-left corner there, and how many
/// screen pixels one of its units is (a Wayland output's scale: a client measures in logical
/// pixels; 1 elsewhere). Toolkits that give boxes relative to their window (GTK 4; every toolkit on
/// Wayland, where a client cannot know where its window is) are placed through it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Placement {
    pub x: i32,
    pub y: i32,
    pub scale: f64,
}

impl Placement {
    /// A box of the window's, on the screen.
    pub fn place(&self, b: Bounds) -> Bounds {
        let s = |v: i32| (f64::from(v) * self.scale).round() as i32;
        Bounds::new(self.x + s(b.x), self.y + s(b.y), s(b.width), s(b.height))
    }

    /// A point of the screen, in the window's coordinates (what its hit tests take).
    pub fn local(&self, x: i32, y: i32) -> (i32, i32) {
        let s = |v: i32| (f64::from(v) / self.scale).floor() as i32;
        (s(x - self.x), s(y - self.y))
    }

    /// A box of the screen, in the window's coordinates.
    pub fn local_box(&self, b: Bounds) -> Bounds {
        let (x0, y0) = self.local(b.x, b.y);
        let (x1, y1) = self.local(b.x + b.width, b.y + b.height);
        Bounds::new(x0, y0, x1 - x0, y1 - y0)
    }
}

/// How an element's box and showing state were given.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) enum Frame {
    /// A box on the screen; SHOWING means shown.
    #[default]
    Screen,
    /// A box relative to its window (GTK 4; any toolkit on Wayland), placed on the screen once the
    /// window's place is known (the window list's), which `bounds` then already include; `None`
    /// when it is not (a popup no window list holds), and the element has no box.
    Window {
        placed: Option<Placement>,
        /// GTK 4.8 marks only its window SHOWING: VISIBLE under it stands for shown.
        visible_is_shown: bool,
    },
}

/// An object on the accessibility bus: its application's connection and its path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Object {
    pub bus: String,
    pub path: String,
}

impl Object {
    /// The root object of the application (or the registry) at `bus`: what lists its windows.
    pub fn root(bus: impl Into<String>) -> Object {
        Object {
            bus: bus.into(),
            path: "/org/a11y/atspi/accessible/root".into(),
        }
    }
}

/// What a ref stands for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Target {
    Element(Object),
    /// A top-level window, by its X id (whether or not its application has a tree).
    Window(u32),
    /// Text read from a window's pixels: the window, the text and its box on the screen.
    Pixels(u32, String, Bounds),
}

/// One element as a snapshot shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Element {
    /// Its ref: `e{id}`; 0 for text that is only read.
    pub id: u64,
    pub role: String,
    pub name: String,
    /// An editable text's contents, a slider's or spin button's value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// The states a person notices: focused, disabled, checked/unchecked, selected,
    /// expanded/collapsed, editable, read-only, modal, required, invalid.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub states: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// Nesting among the shown elements (0: a window).
    pub depth: usize,
    /// The X window of a top-level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    #[serde(skip)]
    pub object: Option<Object>,
    #[serde(skip)]
    pub(crate) raw_states: StateSet,
    #[serde(skip)]
    pub(crate) interfaces: InterfaceSet,
    #[serde(skip)]
    pub(crate) raw_role: Role,
    /// How its box and showing state were given.
    #[serde(skip)]
    pub(crate) frame: Frame,
    /// Read from pixels (OCR), not from a tree.
    #[serde(skip)]
    pub pixels: Option<Pixels>,
}

/// Where text read from pixels was, and how it looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pixels {
    /// The X window it was read in.
    pub window: u32,
    /// A hash of how its box looked when it was read: it must still look so before anything acts
    /// on it.
    pub look: u64,
}

impl Element {
    /// Text read from the pixels of window `window` (OCR) at `bounds` on the screen, which then
    /// looked as hashed by `look`: shown as `text "Save" [e7] ocr @...`, with a ref.
    pub fn from_pixels(window: u32, text: String, bounds: Bounds, look: u64) -> Element {
        Element {
            id: 0,
            role: "text".into(),
            name: text,
            value: None,
            states: vec!["ocr"],
            bounds: Some(bounds),
            depth: 1,
            window: None,
            object: None,
            raw_states: StateSet::empty(),
            interfaces: InterfaceSet::empty(),
            raw_role: Role::Label,
            frame: Frame::Screen,
            pixels: Some(Pixels { window, look }),
        }
    }

    /// Where its window's coordinates lie on the screen when its application gives boxes relative
    /// to the window (GTK 4; Wayland) and the window's place is known; its hit tests take those
    /// coordinates too. `None` when its boxes are the screen's, or cannot be placed.
    pub fn placement(&self) -> Option<Placement> {
        match self.frame {
            Frame::Window { placed, .. } => placed,
            Frame::Screen => None,
        }
    }

    pub fn reference(&self) -> Option<String> {
        (self.id != 0).then(|| format!("e{}", self.id))
    }

    pub fn has(&self, state: State) -> bool {
        self.raw_states.contains(state)
    }

    pub fn offers(&self, interface: Interface) -> bool {
        self.interfaces.contains(interface)
    }

    /// The element's line in a snapshot, indented by its depth:
    /// `button "OK" [e4] focused @645,438,86,34`.
    pub fn line(&self) -> String {
        let mut line = format!("{}{}", "  ".repeat(self.depth), self.role);
        if !self.name.is_empty() {
            line.push_str(&format!(" {}", quoted(&self.name, 120)));
        }
        if let Some(reference) = self.reference() {
            line.push_str(&format!(" [{reference}]"));
        }
        for state in &self.states {
            line.push(' ');
            line.push_str(state);
        }
        if let Some(value) = &self.value {
            line.push_str(&format!(" ={}", quoted(value, 200)));
        }
        if let Some(b) = self.bounds {
            line.push_str(&format!(" @{},{},{},{}", b.x, b.y, b.width, b.height));
        }
        line
    }
}

/// `"text"`, escaped, cut to `max` characters with `…`.
pub fn quoted(text: &str, max: usize) -> String {
    let mut cut: String = text.chars().take(max).collect();
    if text.chars().count() > max {
        cut.push('…');
    }
    let escaped = cut
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\t', "\\t");
    format!("\"{escaped}\"")
}

/// Roles that only arrange other elements: without a name, their children stand in their place.
/// Whether an element without a name may hold text a person reads in its Text interface alone (a
/// web page's paragraph or status line in Gecko, a status bar's fields in LibreOffice): read-only
/// text of a role that shows text.
pub(crate) fn holds_text(role: Role, states: &StateSet, interfaces: &InterfaceSet) -> bool {
    interfaces.contains(Interface::Text)
        && !states.contains(State::Editable)
        && matches!(
            role,
            Role::Paragraph
                | Role::StatusBar
                | Role::Label
                | Role::Static
                | Role::Heading
                | Role::Caption
                | Role::Section
                | Role::ListItem
                | Role::TableCell
                | Role::Text
                | Role::BlockQuote
                | Role::Footer
                | Role::Header
        )
}

pub(crate) fn arranges_only(role: Role) -> bool {
    matches!(
        role,
        Role::Filler
            | Role::Panel
            | Role::ScrollPane
            | Role::Viewport
            | Role::LayeredPane
            | Role::SplitPane
            | Role::RootPane
            | Role::GlassPane
            | Role::Section
            | Role::Grouping
            | Role::RedundantObject
            | Role::Unknown
            | Role::Invalid
            | Role::HTMLContainer
            | Role::OptionPane
            | Role::InternalFrame
            | Role::Form
            | Role::Landmark
            | Role::Embedded
            | Role::DocumentFrame
            | Role::Application
            | Role::TableRow
            | Role::ToolBar
            | Role::MenuBar
            | Role::PageTabList
            | Role::StatusBar
            | Role::Canvas
            | Role::DrawingArea
    )
}

/// Roles never worth a line: they carry nothing a person acts on or reads.
pub(crate) fn never_shown(role: Role) -> bool {
    matches!(
        role,
        Role::Separator | Role::ScrollBar | Role::ToolTip | Role::Image | Role::Icon | Role::Arrow
    )
}

/// Roles that cut what their descendants can show to their own box.
pub(crate) fn clips(role: Role) -> bool {
    matches!(
        role,
        Role::ScrollPane
            | Role::Viewport
            | Role::Table
            | Role::TreeTable
            | Role::List
            | Role::ListBox
            | Role::Tree
            | Role::Frame
            | Role::Dialog
            | Role::Window
            | Role::Alert
            | Role::FileChooser
    )
}

/// Top-level roles: a window of an application.
pub(crate) fn top_level(role: Role) -> bool {
    matches!(
        role,
        Role::Frame | Role::Dialog | Role::Window | Role::Alert | Role::FileChooser
    )
}

fn checkable(role: Role) -> bool {
    matches!(
        role,
        Role::CheckBox
            | Role::RadioButton
            | Role::ToggleButton
            | Role::CheckMenuItem
            | Role::RadioMenuItem
    )
}

/// A person could act on it: it takes focus, offers an action, edits text or selects children.
pub(crate) fn actionable(role: Role, states: &StateSet, interfaces: &InterfaceSet) -> bool {
    top_level(role)
        || states.contains(State::Focusable)
        || interfaces.contains(Interface::Action)
        || interfaces.contains(Interface::EditableText)
        || interfaces.contains(Interface::Selection)
        || interfaces.contains(Interface::Value)
}

/// The states a person notices, in a fixed order.
pub(crate) fn shown_states(role: Role, states: &StateSet, acts: bool) -> Vec<&'static str> {
    let mut shown = Vec::new();
    if states.contains(State::Focused) {
        shown.push("focused");
    }
    if acts && !(states.contains(State::Sensitive) || states.contains(State::Enabled)) {
        shown.push("disabled");
    }
    if checkable(role) || states.contains(State::Checkable) {
        shown.push(if states.contains(State::Indeterminate) {
            "mixed"
        } else if states.contains(State::Checked) || states.contains(State::Pressed) {
            "checked"
        } else {
            "unchecked"
        });
    } else if states.contains(State::Checked) {
        shown.push("checked");
    }
    if states.contains(State::Selected) && !top_level(role) {
        shown.push("selected");
    }
    if states.contains(State::Expandable) || states.contains(State::Expanded) {
        shown.push(if states.contains(State::Expanded) {
            "expanded"
        } else {
            "collapsed"
        });
    }
    if states.contains(State::Editable) && !states.contains(State::ReadOnly) {
        shown.push("editable");
    }
    if states.contains(State::Modal) {
        shown.push("modal");
    }
    if states.contains(State::Required) {
        shown.push("required");
    }
    if states.contains(State::InvalidEntry) {
        shown.push("invalid");
    }
    shown
}

/// The state names a wait or a find may ask for, and the raw states each stands for.
pub fn state_named(name: &str) -> Option<fn(&Element) -> bool> {
    Some(match name {
        "focused" => |e| e.has(State::Focused),
        "enabled" => |e| e.has(State::Sensitive) || e.has(State::Enabled),
        "disabled" => |e| !(e.has(State::Sensitive) || e.has(State::Enabled)),
        "checked" => |e| e.has(State::Checked) || e.has(State::Pressed),
        "unchecked" => |e| !(e.has(State::Checked) || e.has(State::Pressed)),
        "selected" => |e| e.has(State::Selected),
        "expanded" => |e| e.has(State::Expanded),
        "collapsed" => |e| e.has(State::Expandable) && !e.has(State::Expanded),
        "editable" => |e| e.has(State::Editable) && !e.has(State::ReadOnly),
        "showing" => |e| e.has(State::Showing),
        "active" => |e| e.has(State::Active),
        _ => return None,
    })
}

/// The names [`state_named`] knows, for errors.
pub const STATE_NAMES: &str =
    "focused, enabled, disabled, checked, unchecked, selected, expanded, collapsed, editable, showing, active";

/// Refs handed out in this process, one number space for every desktop, so a ref given to the
/// wrong desktop is told apart from one that is only stale.
static NEXT_REF: AtomicU64 = AtomicU64::new(1);

/// The refs of one desktop: the same element keeps its ref from one snapshot to the next.
#[derive(Debug, Default)]
pub struct Refs {
    ids: HashMap<Target, u64>,
    targets: HashMap<u64, (Target, String)>,
    /// The refs shown in the latest snapshot.
    current: std::collections::HashSet<u64>,
}

/// How many refs a desktop remembers (the oldest are forgotten first).
const REMEMBERED: usize = 20_000;

impl Refs {
    /// The ref of `target` (`what` describes it for errors), making one for a new target.
    pub fn id_for(&mut self, target: &Target, what: &str) -> u64 {
        if let Some(id) = self.ids.get(target) {
            self.targets.insert(*id, (target.clone(), what.to_owned()));
            return *id;
        }
        if self.ids.len() >= REMEMBERED {
            let oldest = self.ids.values().copied().min().unwrap_or(0);
            if let Some((target, _)) = self.targets.remove(&oldest) {
                self.ids.remove(&target);
            }
        }
        let id = NEXT_REF.fetch_add(1, Ordering::Relaxed);
        self.ids.insert(target.clone(), id);
        self.targets.insert(id, (target.clone(), what.to_owned()));
        id
    }

    /// The refs of the snapshot just taken.
    pub fn mark_current(&mut self, shown: impl IntoIterator<Item = u64>) {
        self.current = shown.into_iter().collect();
    }

    /// What `id` stands for, whether the latest snapshot showed it, and its description.
    pub fn resolve(&self, id: u64) -> Option<(&Target, bool, &str)> {
        self.targets
            .get(&id)
            .map(|(t, what)| (t, self.current.contains(&id), what.as_str()))
    }

    /// Whether this desktop ever handed out `id`.
    pub fn knows(&self, id: u64) -> bool {
        self.targets.contains_key(&id)
    }
}

/// `e12` as 12.
pub fn parse_ref(text: &str) -> Option<u64> {
    text.strip_prefix('e')?.parse().ok().filter(|n| *n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_intersect_and_centre() {
        let a = Bounds::new(0, 0, 100, 50);
        let b = Bounds::new(50, 25, 100, 50);
        assert_eq!(a.intersect(&b), Some(Bounds::new(50, 25, 50, 25)));
        assert_eq!(a.intersect(&Bounds::new(100, 0, 10, 10)), None);
        assert_eq!(b.center(), (100, 50));
    }

    #[test]
    fn a_line_reads_like_the_element() {
        let element = Element {
            id: 4,
            role: "button".into(),
            name: "Say \"hi\"".into(),
            value: None,
            states: vec!["focused"],
            bounds: Some(Bounds::new(645, 438, 86, 34)),
            depth: 1,
            window: None,
            object: None,
            raw_states: StateSet::empty(),
            interfaces: InterfaceSet::empty(),
            raw_role: Role::Button,
            frame: Frame::Screen,
            pixels: None,
        };
        assert_eq!(
            element.line(),
            "  button \"Say \\\"hi\\\"\" [e4] focused @645,438,86,34"
        );
    }

    #[test]
    fn a_window_s_boxes_go_on_the_screen_and_screen_points_come_back_to_the_window() {
        let at = Placement {
            x: 100,
            y: 60,
            scale: 2.0,
        };
        assert_eq!(
            at.place(Bounds::new(10, 20, 80, 15)),
            Bounds::new(120, 100, 160, 30)
        );
        // Every screen pixel of a unit of the window's is that unit.
        assert_eq!(at.local(120, 100), (10, 20));
        assert_eq!(at.local(121, 101), (10, 20));
        assert_eq!(at.local(99, 59), (-1, -1));
        assert_eq!(
            at.local_box(Bounds::new(0, 0, 1280, 800)),
            Bounds::new(-50, -30, 640, 400)
        );
        let plain = Placement {
            x: 5,
            y: 7,
            scale: 1.0,
        };
        assert_eq!(
            plain.place(Bounds::new(1, 2, 3, 4)),
            Bounds::new(6, 9, 3, 4)
        );
        assert_eq!(plain.local(6, 9), (1, 2));
    }

    #[test]
    fn an_element_keeps_its_ref_and_refs_are_unique_across_desktops() {
        let mut one = Refs::default();
        let mut two = Refs::default();
        let ok = Target::Element(Object {
            bus: ":1.5".into(),
            path: "/a/1".into(),
        });
        let first = one.id_for(&ok, "button \"OK\"");
        assert_eq!(one.id_for(&ok, "button \"OK\""), first);
        let other = two.id_for(&ok, "button \"OK\"");
        assert_ne!(first, other, "another desktop's element gets another ref");
        assert!(one.knows(first) && !one.knows(other));
        one.mark_current([first]);
        assert!(matches!(one.resolve(first), Some((_, true, _))));
        one.mark_current([]);
        assert!(matches!(
            one.resolve(first),
            Some((_, false, "button \"OK\""))
        ));
        assert_eq!(parse_ref("e12"), Some(12));
        assert_eq!(parse_ref("12"), None);
        assert_eq!(parse_ref("e0"), None);
    }
}
