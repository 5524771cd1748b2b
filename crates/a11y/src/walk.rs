//! Reading the trees: every application the registry knows, each of its windows, and their elements,
//! as a person could see them.
//!
//! Cost is calls times objects, and an application answers one call at a time, so: a node's calls go
//! out together and siblings are read at once; what cannot be seen is not read (a hidden subtree, an
//! element outside its window or scrolled out of its list: GTK marks every row of a long list as
//! showing, so the box is what tells); and in a long list (a file chooser in a folder of a thousand
//! files) the first row in view is found by bisection over the rows' boxes, then rows are read until
//! one falls below the view. Values (a text's contents) are read only for elements that are shown.

use std::time::Duration;

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::application::ApplicationProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::selection::SelectionProxy;
use atspi::proxy::text::TextProxy;
use atspi::proxy::value::ValueProxy;
use atspi::{CoordType, Interface, InterfaceSet, ObjectRefOwned, Role, State, StateSet};
use futures_util::future::{join_all, BoxFuture, FutureExt};
use zbus::proxy::CacheProperties;

use crate::bus::Bus;
use crate::element::{self, Bounds, Element, Frame, Object, Placement};
use crate::error::{from_zbus, A11yError, Result};

/// Children past this count are read by bisection, when the container lists rows.
const LONG_LIST: usize = 64;
/// The most objects one snapshot reads (a bound on its time whatever the tree).
pub const MAX_VISITS: usize = 6_000;
/// How long one application's windows may take to read.
const APP_LIMIT: Duration = Duration::from_secs(15);
/// A text's value is cut to this many characters.
const VALUE_CHARS: i32 = 400;
/// The most characters of an element's own text read as its name.
const OWN_TEXT_CHARS: i32 = 200;

/// An application on the bus.
#[derive(Debug, Clone)]
pub struct App {
    pub bus: String,
    pub name: String,
    pub pid: Option<u32>,
}

/// One window of an application, as read.
#[derive(Debug, Clone)]
pub struct WindowTree {
    pub app: App,
    /// The window itself first (depth 0), then what it shows, depth first.
    pub elements: Vec<Element>,
}

/// An application that could not be read, and why.
#[derive(Debug, Clone)]
pub struct Unread {
    pub app: App,
    pub why: String,
}

/// Everything read in one go.
#[derive(Debug, Clone, Default)]
pub struct Trees {
    pub windows: Vec<WindowTree>,
    pub unread: Vec<Unread>,
    /// Objects read.
    pub visited: usize,
    /// The walk stopped at [`MAX_VISITS`].
    pub cut_short: bool,
}

macro_rules! proxy {
    ($ty:ty, $conn:expr, $object:expr) => {
        <$ty>::builder($conn)
            .destination($object.bus.as_str())
            .and_then(|b| b.path($object.path.as_str()))
            .map_err(|e| A11yError::Bus(format!("{}: {e}", $object.path)))?
            .cache_properties(CacheProperties::No)
            .build()
            .await
            .map_err(|e| from_zbus(e, &$object.path))?
    };
}
pub(crate) use proxy;

pub(crate) fn object_of(reference: &ObjectRefOwned) -> Option<Object> {
    Some(Object {
        bus: reference.name_as_str()?.to_owned(),
        path: reference.path_as_str().to_owned(),
    })
}

/// What one object says about itself.
pub(crate) struct Fetched {
    pub role: Role,
    pub name: String,
    pub states: StateSet,
    pub interfaces: InterfaceSet,
    pub bounds: Option<Bounds>,
    pub children: Vec<ObjectRefOwned>,
}

/// How an application marks what is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lenient {
    /// Every shown element is SHOWING, with a box on the screen.
    No,
    /// GTK 4.8 sets SHOWING on the window only: what it shows is VISIBLE (under a showing window,
    /// that is shown), with boxes relative to the window.
    VisibleUnderShowingWindow,
}

/// What the walk must know of an application's toolkit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Toolkit {
    pub lenient: Lenient,
    /// Chromium or Electron: its tree is woken first ([`Bus::wake`]).
    pub chromium: bool,
    /// Its boxes are relative to its window (GTK 4; any toolkit on Wayland).
    pub relative: bool,
}

impl Toolkit {
    /// How its elements' boxes are given, before their window is placed.
    fn frame(&self) -> Frame {
        if self.relative {
            Frame::Window {
                placed: None,
                visible_is_shown: self.lenient == Lenient::VisibleUnderShowingWindow,
            }
        } else {
            Frame::Screen
        }
    }
}

/// The shared state of one walk.
struct Walk<'a> {
    bus: &'a Bus,
    visits: std::sync::atomic::AtomicUsize,
}

impl Bus {
    /// The applications the registry knows, with their process ids.
    pub async fn apps(&self) -> Result<Vec<App>> {
        let root = Object::root("org.a11y.atspi.Registry");
        let registry = proxy!(AccessibleProxy, &self.conn, root);
        let children = registry
            .get_children()
            .await
            .map_err(|e| from_zbus(e, "the accessibility registry"))?;
        let dbus = zbus::fdo::DBusProxy::new(&self.conn)
            .await
            .map_err(|e| from_zbus(e, "the accessibility bus"))?;
        let apps = children.iter().filter_map(object_of).map(|object| {
            let dbus = &dbus;
            async move {
                let pid = match zbus::names::BusName::try_from(object.bus.as_str()) {
                    Ok(name) => dbus.get_connection_unix_process_id(name).await.ok(),
                    Err(_) => None,
                };
                let name = async {
                    let app = proxy!(AccessibleProxy, &self.conn, object);
                    app.name().await.map_err(|e| from_zbus(e, "an application"))
                }
                .await
                .unwrap_or_default();
                App {
                    bus: object.bus,
                    name,
                    pid,
                }
            }
        });
        Ok(join_all(apps).await)
    }

    /// Read one object.
    pub(crate) async fn fetch(&self, object: &Object) -> Result<Fetched> {
        let accessible = proxy!(AccessibleProxy, &self.conn, object);
        let component = proxy!(ComponentProxy, &self.conn, object);
        let (role, name, states, interfaces, children) = futures_util::join!(
            accessible.get_role(),
            accessible.name(),
            accessible.get_state(),
            accessible.get_interfaces(),
            accessible.get_children(),
        );
        let what = &object.path;
        let interfaces = interfaces.map_err(|e| from_zbus(e, what))?;
        // Asked only of components: GTK logs a critical warning for any other object.
        let bounds = if interfaces.contains(Interface::Component) {
            component
                .get_extents(CoordType::Screen)
                .await
                .ok()
                .map(|(x, y, w, h)| Bounds::new(x, y, w, h))
                .filter(|b| !b.is_empty())
        } else {
            None
        };
        Ok(Fetched {
            role: role.map_err(|e| from_zbus(e, what))?,
            name: name.map_err(|e| from_zbus(e, what))?,
            states: states.map_err(|e| from_zbus(e, what))?,
            interfaces,
            bounds,
            children: children.unwrap_or_default(),
        })
    }

    /// An object's text through its Text interface: its length in characters, and at most `max`
    /// characters of it.
    pub(crate) async fn text_of(&self, object: &Object, max: i32) -> Result<(i32, String)> {
        let text = proxy!(TextProxy, &self.conn, object);
        let count = text
            .character_count()
            .await
            .map_err(|e| from_zbus(e, &object.path))?;
        let shown = text
            .get_text(0, count.min(max))
            .await
            .map_err(|e| from_zbus(e, &object.path))?;
        Ok((count, shown))
    }

    /// The text an element without a name holds itself, as a person reads it: what its Text
    /// interface says, where the children it holds (each marked by U+FFFC there, and read on their
    /// own) are left out. Empty when its children hold its text instead (Chromium's static text:
    /// no marks), or it has none.
    pub(crate) async fn own_text(&self, object: &Object, children: usize) -> String {
        let Ok((count, text)) = self.text_of(object, OWN_TEXT_CHARS).await else {
            return String::new();
        };
        let marks = text.chars().filter(|c| *c == '\u{fffc}').count();
        if children > 0 && marks == 0 {
            return String::new();
        }
        let mut own = text
            .split(|c: char| c == '\u{fffc}' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .collect::<Vec<_>>()
            .join(" ");
        if count > OWN_TEXT_CHARS && !own.is_empty() {
            own.push('…');
        }
        own
    }

    /// The item chosen in a combo box's list, from the list's Selection (Chromium's and Gecko's
    /// selects); `None` when no child of it selects (GTK names the box by its choice instead).
    async fn chosen_in(&self, combo: &Fetched) -> Option<String> {
        let read = async {
            for child in combo.children.iter().take(2).filter_map(object_of) {
                let accessible = proxy!(AccessibleProxy, &self.conn, child);
                let interfaces = accessible.get_interfaces().await;
                if !interfaces.is_ok_and(|i| i.contains(Interface::Selection)) {
                    continue;
                }
                let selection = proxy!(SelectionProxy, &self.conn, child);
                let chosen = selection.get_selected_child(0).await;
                let Some(item) = chosen.ok().as_ref().and_then(object_of) else {
                    return Ok(None);
                };
                let name = proxy!(AccessibleProxy, &self.conn, item).name().await;
                let name = name.unwrap_or_default();
                return Ok::<_, A11yError>(Some(name.trim().to_owned()).filter(|n| !n.is_empty()));
            }
            Ok(None)
        };
        read.await.ok().flatten()
    }

    /// How the application behind `root` marks what is shown: GTK 4 (its `Application` interface's
    /// toolkit and version) in its own way.
    pub(crate) async fn toolkit_of(&self, root: &Object) -> Toolkit {
        let read = async {
            let app = proxy!(ApplicationProxy, &self.conn, root);
            let (name, version) = futures_util::join!(app.toolkit_name(), app.version());
            Ok::<_, A11yError>((name.unwrap_or_default(), version.unwrap_or_default()))
        };
        let (name, version) = read.await.unwrap_or_default();
        let gtk4 = name.eq_ignore_ascii_case("gtk") && version.starts_with("4.");
        Toolkit {
            lenient: if gtk4 {
                Lenient::VisibleUnderShowingWindow
            } else {
                Lenient::No
            },
            chromium: name.eq_ignore_ascii_case("chromium"),
            relative: gtk4 || self.relative_boxes(),
        }
    }

    /// Ask `object` and what lies under it (`levels` deep) their attributes, and forget the
    /// answers: Chromium (and every Electron app) keeps its tree off until an assistive technology
    /// shows itself, and asking attributes is what turns it on (neither the bus's
    /// ScreenReaderEnabled nor `ACCESSIBILITY_ENABLED` alone does, on Chromium 156). Asleep, the
    /// tree is a window and two panels, so this costs a few calls.
    fn wake(&self, object: Object, levels: usize) -> BoxFuture<'_, ()> {
        async move {
            let asked = async {
                let accessible = proxy!(AccessibleProxy, &self.conn, object);
                let _ = accessible.get_attributes().await;
                accessible
                    .get_children()
                    .await
                    .map_err(|e| from_zbus(e, &object.path))
            };
            let Ok(children) = asked.await else { return };
            if levels > 0 {
                join_all(
                    children
                        .iter()
                        .filter_map(object_of)
                        .take(8)
                        .map(|child| self.wake(child, levels - 1)),
                )
                .await;
            }
        }
        .boxed()
    }

    /// Every application's windows and what they show, within `screen` (the display's box).
    pub async fn trees(&self, screen: Bounds) -> Result<Trees> {
        let apps = self.apps().await?;
        let walk = Walk {
            bus: self,
            visits: Default::default(),
        };
        let reads = apps.into_iter().map(|app| {
            let walk = &walk;
            async move {
                let read = tokio::time::timeout(APP_LIMIT, walk.app(&app, screen)).await;
                match read {
                    Ok(Ok(windows)) => Ok(windows),
                    Ok(Err(e)) => Err(Unread {
                        app,
                        why: e.to_string(),
                    }),
                    Err(_) => Err(Unread {
                        app,
                        why: format!("it did not answer within {APP_LIMIT:?}"),
                    }),
                }
            }
        });
        let mut trees = Trees::default();
        for read in join_all(reads).await {
            match read {
                Ok(windows) => trees.windows.extend(windows),
                Err(unread) => trees.unread.push(unread),
            }
        }
        trees.visited = walk.visits.load(std::sync::atomic::Ordering::Relaxed);
        trees.cut_short = trees.visited >= MAX_VISITS;
        Ok(trees)
    }

    /// One subtree (an element's), for a snapshot of a part: what shows within `screen`, boxes on
    /// the screen. `window` is where the window holding it is, for an application that gives boxes
    /// relative to its window (GTK 4; Wayland): placed there, or without boxes when `None`.
    pub async fn subtree(
        &self,
        object: &Object,
        screen: Bounds,
        window: Option<Placement>,
    ) -> Result<Vec<Element>> {
        let walk = Walk {
            bus: self,
            visits: Default::default(),
        };
        let root = Object::root(object.bus.clone());
        let toolkit = Toolkit {
            chromium: false,
            ..self.toolkit_of(&root).await
        };
        let clip = match (toolkit.relative, window) {
            (false, _) => Some(screen),
            (true, Some(window)) => Some(window.local_box(screen)),
            (true, None) => None,
        };
        // GTK 4 marks only its windows SHOWING: a part inside one is read as its children are,
        // shown when VISIBLE.
        let top = toolkit.lenient == Lenient::No;
        let mut elements = walk.visit(object.clone(), clip, 0, top, toolkit).await?;
        self.read_values(&mut elements).await;
        if toolkit.relative {
            for e in &mut elements {
                if let Frame::Window { placed, .. } = &mut e.frame {
                    *placed = window;
                }
                e.bounds = window.and_then(|w| e.bounds.map(|b| w.place(b)));
            }
        }
        Ok(elements)
    }

    /// Fill in the values of shown elements: a text's contents (a password's only its length), a
    /// slider's number.
    pub(crate) async fn read_values(&self, elements: &mut [Element]) {
        let reads = elements.iter().map(|e| async move {
            let object = e.object.as_ref()?;
            if e.offers(Interface::Text)
                && e.raw_role != Role::Label
                && !element::top_level(e.raw_role)
                && (e.has(State::Editable)
                    || matches!(
                        e.raw_role,
                        Role::Text | Role::Entry | Role::PasswordText | Role::Terminal
                    ))
            {
                let text = self.text_of(object, VALUE_CHARS).await.ok()?;
                if e.raw_role == Role::PasswordText {
                    return Some(format!("({} characters, hidden)", text.0));
                }
                let mut shown = text.1;
                if text.0 > VALUE_CHARS {
                    shown.push('…');
                }
                return Some(shown);
            }
            // LibreOffice gives its buttons and menus a Value of 0: only what sets a number says it.
            if e.offers(Interface::Value)
                && matches!(
                    e.raw_role,
                    Role::Slider
                        | Role::SpinButton
                        | Role::ProgressBar
                        | Role::ScrollBar
                        | Role::Dial
                        | Role::LevelBar
                )
            {
                let value = async {
                    let value = proxy!(ValueProxy, &self.conn, object);
                    value
                        .current_value()
                        .await
                        .map_err(|e| from_zbus(e, "value"))
                }
                .await
                .ok()?;
                return Some(if value.fract() == 0.0 {
                    format!("{value:.0}")
                } else {
                    format!("{value}")
                });
            }
            None
        });
        let values = join_all(reads).await;
        for (element, value) in elements.iter_mut().zip(values) {
            if value.is_some() {
                element.value = value;
            }
        }
    }
}

impl Walk<'_> {
    /// An application's shown windows.
    async fn app(&self, app: &App, screen: Bounds) -> Result<Vec<WindowTree>> {
        let root = Object::root(app.bus.clone());
        let fetched = self.bus.fetch(&root).await?;
        let toolkit = self.bus.toolkit_of(&root).await;
        let windows = fetched
            .children
            .iter()
            .filter_map(object_of)
            .map(|object| async move {
                if toolkit.chromium {
                    self.bus.wake(object.clone(), 4).await;
                }
                let mut elements = self.visit(object, Some(screen), 0, true, toolkit).await?;
                self.bus.read_values(&mut elements).await;
                Ok::<_, A11yError>(elements)
            });
        let mut trees = Vec::new();
        for read in join_all(windows).await {
            let elements = read?;
            if elements
                .first()
                .is_some_and(|w| element::top_level(w.raw_role))
            {
                trees.push(WindowTree {
                    app: app.clone(),
                    elements,
                });
            }
        }
        Ok(trees)
    }

    /// `object` and what it shows, depth first: nothing when it cannot be seen.
    fn visit(
        &self,
        object: Object,
        clip: Option<Bounds>,
        depth: usize,
        top: bool,
        toolkit: Toolkit,
    ) -> BoxFuture<'_, Result<Vec<Element>>> {
        let lenient = toolkit.lenient;
        async move {
            if self
                .visits
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                >= MAX_VISITS
            {
                return Ok(Vec::new());
            }
            let fetched = match self.bus.fetch(&object).await {
                Ok(f) => f,
                // A child that went while we looked is left out; a window that did is the caller's.
                Err(A11yError::Gone { .. }) if !top => return Ok(Vec::new()),
                Err(e) => return Err(e),
            };
            let mut fetched = fetched;
            // An empty container of Chromium's may be a page still asleep: wake it, read again.
            if toolkit.chromium
                && fetched.children.is_empty()
                && matches!(fetched.role, Role::Panel | Role::Filler | Role::DocumentWeb)
            {
                self.bus.wake(object.clone(), 0).await;
                if let Ok(again) = self.bus.fetch(&object).await {
                    fetched = again;
                }
            }
            // Qt 5 gives a window that is a bare widget (no main window, no dialog) the role
            // filler (or panel): an application's own child is a window whatever it says.
            if top && matches!(fetched.role, Role::Filler | Role::Panel) {
                fetched.role = Role::Window;
            }
            let showing = fetched.states.contains(State::Showing)
                || (lenient == Lenient::VisibleUnderShowingWindow
                    && !top
                    && fetched.states.contains(State::Visible));
            if !showing || element::never_shown(fetched.role) {
                return Ok(Vec::new());
            }
            if let (Some(b), Some(c)) = (fetched.bounds, clip) {
                if b.intersect(&c).is_none() {
                    return Ok(Vec::new());
                }
            }
            if lenient == Lenient::VisibleUnderShowingWindow {
                fetched.name = gtk4_name(&fetched.name);
            }
            let acts = element::actionable(fetched.role, &fetched.states, &fetched.interfaces);
            // Gecko offers Action and EditableText on plain text too: whether it acts does not
            // tell whether it holds text.
            if fetched.name.trim().is_empty()
                && element::holds_text(fetched.role, &fetched.states, &fetched.interfaces)
            {
                fetched.name = self.bus.own_text(&object, fetched.children.len()).await;
            }
            let unnamed = fetched.name.trim().is_empty();
            // A table's cell without text is a row's or an icon's: what it holds stands for it.
            let bare_cell = unnamed && fetched.role == Role::TableCell;
            // A row without a box inside a view that has one is not where a person sees.
            let boxless_row = fetched.bounds.is_none()
                && clip.is_some()
                && matches!(
                    fetched.role,
                    Role::TableCell | Role::ListItem | Role::TreeItem
                );
            let skipped = bare_cell
                || (unnamed && (element::arranges_only(fetched.role) || !acts))
                || boxless_row;
            let shown = element::top_level(fetched.role) || !skipped;
            let child_clip = match (element::clips(fetched.role), fetched.bounds, clip) {
                (true, Some(b), Some(c)) => b.intersect(&c),
                (true, Some(b), None) => Some(b),
                _ => clip,
            };
            let child_depth = if shown { depth + 1 } else { depth };
            let children = self.children_in_view(&fetched, child_clip).await;
            let kids = join_all(
                children
                    .into_iter()
                    .map(|child| self.visit(child, child_clip, child_depth, false, toolkit)),
            )
            .await;
            let mut out = Vec::new();
            if shown {
                // A combo box's name is its chosen item (GTK): shown as its value, so the label
                // beside it can name it. A web select is named by its label, and its list (asleep
                // while it is closed) says the choice.
                let chosen = match fetched.role {
                    Role::ComboBox => self.bus.chosen_in(&fetched).await,
                    _ => None,
                };
                let (name, value) = match fetched.role {
                    Role::ComboBox if chosen.is_some() => (fetched.name.trim().to_owned(), chosen),
                    Role::ComboBox if !fetched.name.trim().is_empty() => {
                        (String::new(), Some(fetched.name.trim().to_owned()))
                    }
                    _ => (fetched.name.trim().to_owned(), None),
                };
                out.push(Element {
                    id: 0,
                    role: fetched.role.name().to_owned(),
                    name,
                    value,
                    states: element::shown_states(fetched.role, &fetched.states, acts),
                    bounds: fetched.bounds,
                    depth,
                    window: None,
                    object: Some(object),
                    raw_states: fetched.states,
                    interfaces: fetched.interfaces,
                    raw_role: fetched.role,
                    frame: toolkit.frame(),
                    pixels: None,
                });
            }
            let mut groups = Vec::new();
            for kid in kids {
                let group = kid?;
                if !group.is_empty() {
                    groups.push(group);
                }
            }
            let mut inner: Vec<Element> = in_reading_order(groups).into_iter().flatten().collect();
            // An element without a name, named by the one text inside it (a list item's label);
            // one named by it already (a GTK 4 button) does not repeat it.
            if let [only] = &inner[..] {
                let text_only =
                    matches!(only.raw_role, Role::Label | Role::Static) && !only.name.is_empty();
                if let Some(me) = out.first_mut() {
                    if me.name.is_empty() && text_only && !element::top_level(me.raw_role) {
                        me.name = only.name.clone();
                        inner.clear();
                    } else if text_only && me.name == only.name {
                        inner.clear();
                    }
                }
            }
            out.extend(inner);
            Ok(out)
        }
        .boxed()
    }

    /// The children worth reading: all of a short list; of a long list of rows, those in view.
    async fn children_in_view(&self, parent: &Fetched, clip: Option<Bounds>) -> Vec<Object> {
        let all: Vec<Object> = parent.children.iter().filter_map(object_of).collect();
        let lists_rows = parent.states.contains(State::ManagesDescendants)
            || matches!(
                parent.role,
                Role::Table | Role::TreeTable | Role::List | Role::ListBox | Role::Tree
            );
        let Some(view) = clip else {
            return all;
        };
        if all.len() <= LONG_LIST || !lists_rows {
            return all;
        }
        let top_of = |i: usize| {
            let object = all[i].clone();
            async move {
                let component =
                    async { Ok::<_, A11yError>(proxy!(ComponentProxy, &self.bus.conn, object)) }
                        .await
                        .ok()?;
                component
                    .get_extents(CoordType::Screen)
                    .await
                    .ok()
                    .map(|(x, y, w, h)| Bounds::new(x, y, w, h))
            }
        };
        // The first child not entirely above the view: rows come in order, top to bottom.
        let (mut low, mut high) = (0usize, all.len());
        while low < high {
            let mid = (low + high) / 2;
            match top_of(mid).await {
                Some(b) if b.y + b.height <= view.y => low = mid + 1,
                Some(_) => high = mid,
                // No box: the rows cannot be placed; read them in order from the top.
                None => {
                    low = 0;
                    break;
                }
            }
        }
        let mut chosen = Vec::new();
        let mut i = low;
        while i < all.len() && chosen.len() < LONG_LIST * 4 {
            match top_of(i).await {
                Some(b) if b.y >= view.y + view.height => break,
                _ => chosen.push(all[i].clone()),
            }
            i += 1;
        }
        chosen
    }
}

/// What GTK 4.8 names an element, as a person would: it names a widget without a label by its
/// type (`GtkButton`, `AdwGizmo`: no name), and a button by its label twice (`7 7`: once).
fn gtk4_name(name: &str) -> String {
    let name = name.trim();
    let type_name = ["Gtk", "Adw", "Gdk"].iter().any(|prefix| {
        name.strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_uppercase()))
    }) && !name.contains(char::is_whitespace);
    if type_name {
        return String::new();
    }
    let chars: Vec<char> = name.chars().collect();
    if chars.len() % 2 == 1 {
        let half = chars.len() / 2;
        if chars[half] == ' ' && chars[..half] == chars[half + 1..] {
            return chars[..half].iter().collect();
        }
    }
    name.to_owned()
}

/// Sibling subtrees in the order a person reads them: top to bottom, then left to right (toolkits
/// list children in the order they were added, which is not always where they show), and a field
/// without a name named by the label beside or above it (GTK forms seldom relate the two), the
/// label then not shown again.
fn in_reading_order(mut groups: Vec<Vec<Element>>) -> Vec<Vec<Element>> {
    let place = |g: &Vec<Element>| g[0].bounds.map(|b| (b.y + b.height / 2, b.x));
    // A stable sort on rows (a few pixels apart are one row), keeping elements without a box put.
    groups.sort_by(|a, b| match (place(a), place(b)) {
        (Some((ya, xa)), Some((yb, xb))) if (ya - yb).abs() <= 4 => xa.cmp(&xb),
        (Some((ya, _)), Some((yb, _))) => ya.cmp(&yb),
        _ => std::cmp::Ordering::Equal,
    });
    // A short label: a long one is a message, not a field's name.
    let is_label = |g: &Vec<Element>| {
        g.len() == 1
            && g[0].raw_role == Role::Label
            && !g[0].name.is_empty()
            && g[0].name.chars().count() <= 40
            && g[0].bounds.is_some()
    };
    let wants_name = |e: &Element| {
        e.name.is_empty()
            && e.bounds.is_some()
            && !e.has(State::MultiLine)
            && matches!(
                e.raw_role,
                Role::Text
                    | Role::Entry
                    | Role::PasswordText
                    | Role::ComboBox
                    | Role::SpinButton
                    | Role::Slider
                    | Role::List
                    | Role::ListBox
                    | Role::Table
                    | Role::TreeTable
                    | Role::Tree
                    | Role::ScrollPane
                    | Role::DateEditor
            )
    };
    let mut used = vec![false; groups.len()];
    let mut names = vec![None; groups.len()];
    for (i, group) in groups.iter().enumerate() {
        if !wants_name(&group[0]) {
            continue;
        }
        let Some(field) = group[0].bounds else {
            continue;
        };
        let beside = |l: &Bounds| {
            let middle = l.y + l.height / 2;
            middle >= field.y && middle <= field.y + field.height && l.x + l.width <= field.x + 4
        };
        let above = |l: &Bounds| {
            l.y + l.height <= field.y + 4
                && field.y - (l.y + l.height) <= 24
                && l.x < field.x + field.width
                && l.x + l.width > field.x
        };
        let label = (0..groups.len())
            .filter(|j| !used[*j] && is_label(&groups[*j]))
            .filter_map(|j| Some((j, groups[j][0].bounds?)))
            .filter(|(_, l)| beside(l) || above(l))
            // The nearest one.
            .min_by_key(|(_, l)| (field.x - (l.x + l.width)).abs() + (field.y - l.y).abs());
        if let Some((j, _)) = label {
            used[j] = true;
            names[i] = Some(groups[j][0].name.clone());
        }
    }
    groups
        .into_iter()
        .zip(names)
        .enumerate()
        .filter(|(j, _)| !used[*j])
        .map(|(_, (mut group, name))| {
            if let Some(name) = name {
                group[0].name = name;
            }
            group
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{gtk4_name, in_reading_order};
    use crate::element::{Bounds, Element, Frame};
    use atspi::{InterfaceSet, Role, StateSet};

    fn at(role: Role, name: &str, x: i32, y: i32, width: i32) -> Vec<Element> {
        vec![Element {
            id: 0,
            role: format!("{role:?}").to_lowercase(),
            name: name.into(),
            value: None,
            states: Vec::new(),
            bounds: Some(Bounds::new(x, y, width, 30)),
            depth: 1,
            window: None,
            object: None,
            raw_states: StateSet::empty(),
            interfaces: InterfaceSet::empty(),
            raw_role: role,
            frame: Frame::Screen,
            pixels: None,
        }]
    }

    fn names(groups: &[Vec<Element>]) -> Vec<String> {
        groups
            .iter()
            .map(|g| format!("{:?} {}", g[0].raw_role, g[0].name))
            .collect()
    }

    /// Rows top to bottom, left to right within a row; a field without a name takes the short label
    /// beside it (or just above it), which is then not shown again; a long label is a message.
    #[test]
    fn siblings_read_in_rows_and_unnamed_fields_take_their_labels() {
        let groups = vec![
            at(Role::Button, "OK", 300, 200, 80),
            at(Role::Entry, "", 120, 50, 200),
            at(Role::Button, "Cancel", 200, 202, 80),
            at(Role::Label, "Name", 10, 50, 90),
            at(Role::Label, "Email", 120, 95, 60),
            at(Role::Entry, "", 120, 130, 200),
            at(
                Role::Label,
                "Changes are saved when you press OK, and not before then.",
                10,
                250,
                400,
            ),
            at(Role::ComboBox, "", 120, 300, 200),
        ];
        assert_eq!(
            names(&in_reading_order(groups)),
            [
                "Entry Name",
                "Entry Email",
                "Button Cancel",
                "Button OK",
                "Label Changes are saved when you press OK, and not before then.",
                "ComboBox ",
            ]
        );
    }

    #[test]
    fn gtk4_names_lose_type_names_and_doubled_labels() {
        assert_eq!(gtk4_name("GtkMenuButton"), "");
        assert_eq!(gtk4_name("AdwGizmo"), "");
        assert_eq!(gtk4_name("7 7"), "7");
        assert_eq!(gtk4_name("mod mod"), "mod");
        assert_eq!(gtk4_name("Undo"), "Undo");
        assert_eq!(gtk4_name("Gtk is fun"), "Gtk is fun");
        assert_eq!(gtk4_name("Gtkx"), "Gtkx");
    }
}
