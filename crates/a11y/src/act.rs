//! Acting on an element the way its application offers: its Action interface (click, press,
//! toggle, activate), EditableText (set the text), Selection (pick a child), Component (focus,
//! scroll into view). What an application does not offer is done with the pointer or the keyboard
//! by the caller, at the element's box, which [`Bus::act`] hands back as [`Done::Pointer`] or
//! [`Done::Keyboard`] after checking that the element is there, shown and enabled.

use atspi::proxy::accessible::AccessibleProxy;
use atspi::proxy::action::ActionProxy;
use atspi::proxy::component::ComponentProxy;
use atspi::proxy::editable_text::EditableTextProxy;
use atspi::proxy::selection::SelectionProxy;
use atspi::{Interface, Role, ScrollType, State};
use zbus::proxy::CacheProperties;

use crate::bus::Bus;
use crate::element::{self, Bounds, Element, Frame, Object};
use crate::error::{from_zbus, A11yError, Result};
use crate::walk::{object_of, proxy, Fetched};

/// What to do to an element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    Click,
    DoubleClick,
    Focus,
    /// Replace its text.
    Set(String),
    /// Type into it (focused first).
    Type(String),
    /// Pick it among its siblings (a list row, a combo box's item, a tab).
    Select,
    Toggle,
    /// Scroll it into view.
    Scroll,
}

/// How an act was done, or what the caller is to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Done {
    /// Through the application's own interface (which one, e.g. "action click").
    Interface(String),
    /// Click (`clicks` times) with the pointer at this point of the screen.
    Pointer { x: i32, y: i32, clicks: u8 },
    /// The element has the focus now: type `text` (after selecting what it holds, when `replace`).
    Keyboard { text: String, replace: bool },
}

/// Action names that mean "do what a click does", in order of preference.
const CLICKS: &[&str] = &["click", "press", "activate", "jump", "open", "select"];
const TOGGLES: &[&str] = &["toggle", "click", "press", "activate"];

impl Bus {
    /// `element` as it is now: an error when it is gone, hidden or disabled (named in `field`).
    pub(crate) async fn live(&self, element: &Element, field: &'static str) -> Result<Fetched> {
        let what = element.describe();
        let Some(object) = &element.object else {
            return Err(A11yError::refused(
                field,
                format!("{what} has no accessibility tree (its application exposes none); act on it with computer"),
            ));
        };
        let fetched = self.fetch(object).await.map_err(|e| match e {
            A11yError::Gone { .. } => A11yError::Gone {
                field,
                message: format!(
                    "{what} is gone (closed, or replaced since the snapshot); snapshot again"
                ),
            },
            other => other,
        })?;
        if fetched.states.contains(State::Defunct) {
            return Err(A11yError::Gone {
                field,
                message: format!(
                    "{what} is gone (closed, or replaced since the snapshot); snapshot again"
                ),
            });
        }
        let mut fetched = fetched;
        // A box relative to its window is placed where the window is (none when that is not
        // known); GTK 4.8: VISIBLE under its window stands for SHOWING.
        if let Frame::Window {
            placed,
            visible_is_shown,
        } = element.frame
        {
            if visible_is_shown && fetched.states.contains(State::Visible) {
                fetched.states.insert(State::Showing);
            }
            fetched.bounds = placed.and_then(|p| fetched.bounds.map(|b| p.place(b)));
        }
        if !fetched.states.contains(State::Showing) {
            return Err(A11yError::refused(
                field,
                format!("{what} is hidden (not shown now: a closed menu, another tab, a minimised window)"),
            ));
        }
        Ok(fetched)
    }

    /// Do `act` on `element`: through its interfaces when it offers them, else say how with the
    /// pointer or keyboard. Checks first that it is there, shown and (for anything but focus and
    /// scroll) enabled.
    pub async fn act(&self, element: &Element, act: &Act, field: &'static str) -> Result<Done> {
        let fetched = self.live(element, field).await?;
        let what = element.describe();
        let object = element.object.clone().unwrap_or(Object {
            bus: String::new(),
            path: String::new(),
        });
        let enabled =
            fetched.states.contains(State::Sensitive) || fetched.states.contains(State::Enabled);
        if !enabled && !matches!(act, Act::Focus | Act::Scroll) {
            return Err(A11yError::refused(
                field,
                format!("{what} is disabled (the application does not take input there now)"),
            ));
        }
        let point = |clicks: u8| -> Result<Done> {
            let b = fetched.bounds.ok_or_else(|| {
                A11yError::refused(
                    field,
                    format!(
                        "{what} offers no action for that and has no box on the screen to click"
                    ),
                )
            })?;
            let (x, y) = b.center();
            Ok(Done::Pointer { x, y, clicks })
        };
        // A menu item runs its command inside the accessibility call (GTK 3), so one that opens a
        // modal dialog (Save As) leaves the application deaf to the tree until the dialog closes:
        // menu items are clicked with the pointer, as a person clicks them, when they are shown.
        let menu_item = matches!(
            fetched.role,
            Role::MenuItem | Role::CheckMenuItem | Role::RadioMenuItem
        ) && fetched.bounds.is_some();
        // On Wayland a popup is placed by the compositor against the input event that opened it; one
        // opened through the accessibility call has none, and Qt then shows it elsewhere than it
        // says (a click at an item's box misses). What opens a popup is clicked with the pointer.
        let opens_popup = self.relative_boxes()
            && matches!(fetched.role, Role::ComboBox | Role::Menu)
            && fetched.bounds.is_some();
        match act {
            Act::Click | Act::Toggle | Act::Select if menu_item => point(1),
            Act::Click if opens_popup => point(1),
            Act::Click => match self.named_action(&object, &fetched, CLICKS).await? {
                Some(name) => Ok(Done::Interface(format!("action {name}"))),
                None => point(1),
            },
            Act::DoubleClick => point(2),
            Act::Toggle => match self.named_action(&object, &fetched, TOGGLES).await? {
                Some(name) => Ok(Done::Interface(format!("action {name}"))),
                None => point(1),
            },
            Act::Focus => {
                if self.grab_focus(&object, &fetched).await? {
                    Ok(Done::Interface("focus".into()))
                } else {
                    point(1)
                }
            }
            Act::Scroll => {
                if fetched.interfaces.contains(Interface::Component) {
                    let component = proxy!(ComponentProxy, &self.conn, object);
                    if component
                        .scroll_to(ScrollType::Anywhere)
                        .await
                        .unwrap_or(false)
                    {
                        return Ok(Done::Interface("scroll".into()));
                    }
                }
                // GTK does not scroll on request, but a focused row is shown.
                if self.grab_focus(&object, &fetched).await? {
                    return Ok(Done::Interface("focus (to scroll it into view)".into()));
                }
                Err(A11yError::refused(
                    field,
                    format!("{what} can neither be scrolled to nor focused by its application"),
                ))
            }
            Act::Set(text) => {
                if fetched.interfaces.contains(Interface::EditableText)
                    && fetched.states.contains(State::Editable)
                {
                    let editable = proxy!(EditableTextProxy, &self.conn, object);
                    if editable
                        .set_text_contents(text)
                        .await
                        .map_err(|e| from_zbus(e, &what))?
                        && self.reads_back(&object, text).await
                    {
                        return Ok(Done::Interface("editable text".into()));
                    }
                }
                self.focus_for_typing(&object, &fetched, &what, field)
                    .await?;
                Ok(Done::Keyboard {
                    text: text.clone(),
                    replace: true,
                })
            }
            Act::Type(text) => {
                self.focus_for_typing(&object, &fetched, &what, field)
                    .await?;
                Ok(Done::Keyboard {
                    text: text.clone(),
                    replace: false,
                })
            }
            Act::Select => {
                if let Some(done) = self.select_in_parent(&object).await? {
                    return Ok(done);
                }
                // Not "activate": on a list's row that opens it, as a double click would. A
                // click on it selects it, as a person's does.
                match self.named_action(&object, &fetched, &["select"]).await? {
                    Some(name) => Ok(Done::Interface(format!("action {name}"))),
                    None => point(1),
                }
            }
        }
    }

    /// Run the first of `names` the element offers; `None` when it offers none of them.
    async fn named_action(
        &self,
        object: &Object,
        fetched: &Fetched,
        names: &[&str],
    ) -> Result<Option<String>> {
        if !fetched.interfaces.contains(Interface::Action) {
            return Ok(None);
        }
        let action = proxy!(ActionProxy, &self.conn, object);
        let count = action
            .n_actions()
            .await
            .map_err(|e| from_zbus(e, &object.path))?;
        // The stable names (GetName), not the localised ones GetActions gives.
        let mut offered = Vec::new();
        for i in 0..count {
            offered.push(action.get_name(i).await.unwrap_or_default());
        }
        for wanted in names {
            if let Some(i) = offered.iter().position(|n| n.eq_ignore_ascii_case(wanted)) {
                let done = action
                    .do_action(i as i32)
                    .await
                    .map_err(|e| from_zbus(e, &object.path))?;
                if done {
                    return Ok(Some((*wanted).to_owned()));
                }
            }
        }
        Ok(None)
    }

    async fn grab_focus(&self, object: &Object, fetched: &Fetched) -> Result<bool> {
        if !fetched.interfaces.contains(Interface::Component) {
            return Ok(false);
        }
        let component = proxy!(ComponentProxy, &self.conn, object);
        Ok(component.grab_focus().await.unwrap_or(false))
    }

    async fn focus_for_typing(
        &self,
        object: &Object,
        fetched: &Fetched,
        what: &str,
        field: &'static str,
    ) -> Result<()> {
        if !fetched.states.contains(State::Editable)
            && !fetched.interfaces.contains(Interface::EditableText)
        {
            return Err(A11yError::refused(
                field,
                format!("{what} takes no text (it is not editable)"),
            ));
        }
        if fetched.states.contains(State::Focused) || self.grab_focus(object, fetched).await? {
            return Ok(());
        }
        Err(A11yError::refused(
            field,
            format!("{what} does not take the keyboard focus"),
        ))
    }

    /// Whether `object`'s text now reads `text`: some engines (Gecko) answer SetTextContents with
    /// success and change nothing. A field that cannot be read back is taken at its word.
    async fn reads_back(&self, object: &Object, text: &str) -> bool {
        self.text_of(object, i32::MAX)
            .await
            .map_or(true, |(_, now)| now == text)
    }

    /// Select `object` through the Selection of the nearest container above it that offers one (a
    /// list's row, a table's cell: a cell's text sits in a cell of its row, whose table selects).
    async fn select_in_parent(&self, object: &Object) -> Result<Option<Done>> {
        let mut child = object.clone();
        for _ in 0..4 {
            let accessible = proxy!(AccessibleProxy, &self.conn, child);
            let Ok(parent) = accessible.parent().await else {
                return Ok(None);
            };
            let Some(parent) = object_of(&parent) else {
                return Ok(None);
            };
            let Ok(parent_fetched) = self.fetch(&parent).await else {
                return Ok(None);
            };
            if parent_fetched.interfaces.contains(Interface::Selection) {
                let index = accessible
                    .get_index_in_parent()
                    .await
                    .map_err(|e| from_zbus(e, &child.path))?;
                let selection = proxy!(SelectionProxy, &self.conn, parent);
                if selection.select_child(index).await.unwrap_or(false) {
                    return Ok(Some(Done::Interface("selection".into())));
                }
                return Ok(None);
            }
            if element::top_level(parent_fetched.role) {
                return Ok(None);
            }
            child = parent;
        }
        Ok(None)
    }
}

impl Element {
    /// `button "OK" (e4)`, for messages.
    pub fn describe(&self) -> String {
        let mut text = self.role.clone();
        if !self.name.is_empty() {
            text.push(' ');
            text.push_str(&crate::element::quoted(&self.name, 60));
        }
        if let Some(reference) = self.reference() {
            text.push_str(&format!(" ({reference})"));
        }
        text
    }

    /// Whether `point` (screen pixels) is inside the element's box.
    pub fn contains(&self, x: i32, y: i32) -> bool {
        self.bounds.is_some_and(|b: Bounds| {
            x >= b.x && y >= b.y && x < b.x + b.width && y < b.y + b.height
        })
    }
}

/// Who (which element of the application) is at `x, y` of the screen, one level below `top`.
async fn accessible_at(bus: &Bus, top: &Object, x: i32, y: i32) -> Option<Object> {
    let component = ComponentProxy::builder(&bus.conn)
        .destination(top.bus.as_str())
        .ok()?
        .path(top.path.as_str())
        .ok()?
        .cache_properties(CacheProperties::No)
        .build()
        .await
        .ok()?;
    let found = component
        .get_accessible_at_point(x, y, atspi::CoordType::Screen)
        .await
        .ok()?;
    object_of(&found).filter(|o| !o.path.ends_with("/null") && o != top)
}

/// How deep a hit test or a walk up the parents goes.
const MAX_DEPTH: usize = 48;

impl Bus {
    /// What the application shows at `x, y` of `window` when that is not `target` nor on its line
    /// (a widget inside it, or one of its containers): `Some("push button \"Submit\"")`. Qt, for
    /// one, keeps a closed popup's items in its tree, showing, at their old boxes; a click there
    /// would land on whatever is below. `None` when the point is the target's, or when the
    /// application does not answer hit tests (nothing to go on: the caller's other checks stand).
    pub async fn shows_elsewhere(
        &self,
        window: &Object,
        target: &Object,
        x: i32,
        y: i32,
    ) -> Option<String> {
        let mut deepest = None;
        let mut at = window.clone();
        for _ in 0..MAX_DEPTH {
            let Some(next) = accessible_at(self, &at, x, y).await else {
                break;
            };
            if &next == target {
                return None;
            }
            deepest = Some(next.clone());
            at = next;
        }
        let deepest = deepest?;
        // A part of the target (the label inside a GTK 4 check box) is the target's.
        let mut down = deepest.clone();
        for _ in 0..MAX_DEPTH {
            let Some(parent) = self.parent_of(&down).await.ok().flatten() else {
                break;
            };
            if &parent == target {
                return None;
            }
            if &parent == window || parent.path.ends_with("/null") {
                break;
            }
            down = parent;
        }
        // A container of the target (a toolkit whose hit test stops above it) is on its line.
        let mut up = target.clone();
        for _ in 0..MAX_DEPTH {
            let parent = self.parent_of(&up).await.ok().flatten()?;
            if parent == deepest {
                return None;
            }
            if &parent == window || parent.path.ends_with("/null") {
                break;
            }
            up = parent;
        }
        let fetched = self.fetch(&deepest).await.ok()?;
        let mut what = fetched.role.name().to_owned();
        if !fetched.name.trim().is_empty() {
            what.push(' ');
            what.push_str(&element::quoted(fetched.name.trim(), 60));
        }
        Some(what)
    }

    /// Whether an open popup of `window`'s application covers `x, y` of `window`'s own
    /// coordinates: a shown top-level of the application that is neither `window` nor one of
    /// `listed` (the windows the window list shows), such as a menu or a combo box's list. On
    /// Wayland no client learns where another's popups are, so the application's word stands for
    /// the window system's; its popups' boxes are in the coordinates of the window they belong to.
    pub async fn popup_at(&self, window: &Object, listed: &[Object], x: i32, y: i32) -> bool {
        let root = Object::root(window.bus.clone());
        let Ok(app) = self.fetch(&root).await else {
            return false;
        };
        let point = Bounds::new(x, y, 1, 1);
        for top in app.children.iter().filter_map(object_of) {
            if &top == window || listed.contains(&top) {
                continue;
            }
            let Ok(top) = self.fetch(&top).await else {
                continue;
            };
            if top.states.contains(State::Showing)
                && top.bounds.is_some_and(|b| b.intersect(&point).is_some())
            {
                return true;
            }
        }
        false
    }

    async fn parent_of(&self, object: &Object) -> Result<Option<Object>> {
        let accessible = proxy!(AccessibleProxy, &self.conn, object);
        let parent = accessible
            .parent()
            .await
            .map_err(|e| from_zbus(e, &object.path))?;
        Ok(object_of(&parent))
    }
}

/// Role names as snapshots print them, for finding by `role "name"`.
pub fn role_matches(element: &Element, role: &str) -> bool {
    element.role.eq_ignore_ascii_case(role)
        || (role.eq_ignore_ascii_case("push button") && element.raw_role == Role::Button)
}
