//! The top-level windows of a display as a person sees them: each application window (a *client*,
//! in ICCCM's word), with its title, class, process, place on the screen, and whether it is shown
//! and has the keyboard. Also what the window manager says about itself.
//!
//! Which windows are clients: the window manager's `_NET_CLIENT_LIST` when an EWMH window manager
//! runs (its announcement, `_NET_SUPPORTING_WM_CHECK`, is valid); otherwise the root's children that
//! carry `WM_STATE` or hold a window that does (a reparenting window manager's frames, found the way
//! `xprop` and `xdotool` find them), and, with no window manager at all, the mapped children of the
//! root that are not override-redirect (menus and tooltips are).
//!
//! Every query is pipelined (all requests of one step sent before the first reply is read), so a
//! listing costs a few round trips however many windows there are. A window that disappears while
//! we look is left out, not an error.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use x11rb::cookie::Cookie;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{
    self, AtomEnum, ConnectionExt as _, EventMask, GetPropertyReply, MapState, Window,
};
use x11rb::rust_connection::RustConnection;

use crate::error::Result;

/// One top-level (client) window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WindowInfo {
    /// The X window id of the client window (not of a window manager's frame around it).
    pub id: u32,
    /// `_NET_WM_NAME` (UTF-8), else `WM_NAME`; empty when it has none.
    pub title: String,
    /// The class part of `WM_CLASS` ("XTerm"); empty when it has none.
    pub class: String,
    /// The instance part of `WM_CLASS` ("xterm").
    pub instance: String,
    /// `_NET_WM_PID`, when the program sets it.
    pub pid: Option<u32>,
    /// The client area (inside any frame and title bar the window manager draws), in root (screen)
    /// pixels. `x`/`y` may be negative or past the screen for a window partly off it.
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
    /// It has the keyboard focus (the focus is on it, inside it, or on its frame).
    pub focused: bool,
    /// It is shown: mapped, and so are its frame and every ancestor (not minimised, not withdrawn).
    pub mapped: bool,
    /// It is minimised (iconified: `WM_STATE` IconicState, or `_NET_WM_STATE_HIDDEN`); `mapped` is
    /// then false. A window that is neither mapped nor minimised is withdrawn (hidden by its program).
    /// Like `maximized` and `above`, written only when true (every byte of a window list is read by
    /// a model).
    #[serde(default, skip_serializing_if = "is_false")]
    pub minimized: bool,
    /// Maximised both ways (`_NET_WM_STATE_MAXIMIZED_VERT` and `_HORZ`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub maximized: bool,
    /// Kept above other windows (`_NET_WM_STATE_ABOVE`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub above: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

/// ICCCM `WM_STATE` values.
pub const NORMAL_STATE: u32 = 1;
pub const ICONIC_STATE: u32 = 3;

/// The atoms window listing needs, interned once per connection.
#[derive(Debug, Clone, Copy)]
pub struct Atoms {
    pub net_client_list: u32,
    pub net_active_window: u32,
    pub net_supporting_wm_check: u32,
    pub net_wm_name: u32,
    pub net_wm_pid: u32,
    pub utf8_string: u32,
    pub wm_state: u32,
    pub net_supported: u32,
    pub net_request_frame_extents: u32,
    pub net_frame_extents: u32,
    pub net_wm_state: u32,
    pub net_wm_state_hidden: u32,
    pub net_wm_state_above: u32,
    pub net_wm_state_maximized_vert: u32,
    pub net_wm_state_maximized_horz: u32,
    pub net_close_window: u32,
    pub net_moveresize_window: u32,
    pub net_restack_window: u32,
    pub wm_protocols: u32,
    pub wm_delete_window: u32,
    pub wm_change_state: u32,
}

impl Atoms {
    pub fn intern(conn: &RustConnection) -> Result<Atoms> {
        let names: [&[u8]; 21] = [
            b"_NET_CLIENT_LIST",
            b"_NET_ACTIVE_WINDOW",
            b"_NET_SUPPORTING_WM_CHECK",
            b"_NET_WM_NAME",
            b"_NET_WM_PID",
            b"UTF8_STRING",
            b"WM_STATE",
            b"_NET_SUPPORTED",
            b"_NET_REQUEST_FRAME_EXTENTS",
            b"_NET_FRAME_EXTENTS",
            b"_NET_WM_STATE",
            b"_NET_WM_STATE_HIDDEN",
            b"_NET_WM_STATE_ABOVE",
            b"_NET_WM_STATE_MAXIMIZED_VERT",
            b"_NET_WM_STATE_MAXIMIZED_HORZ",
            b"_NET_CLOSE_WINDOW",
            b"_NET_MOVERESIZE_WINDOW",
            b"_NET_RESTACK_WINDOW",
            b"WM_PROTOCOLS",
            b"WM_DELETE_WINDOW",
            b"WM_CHANGE_STATE",
        ];
        let cookies = names
            .iter()
            .map(|name| conn.intern_atom(false, name))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut atoms = Vec::with_capacity(cookies.len());
        for cookie in cookies {
            atoms.push(cookie.reply()?.atom);
        }
        Ok(Atoms {
            net_client_list: atoms[0],
            net_active_window: atoms[1],
            net_supporting_wm_check: atoms[2],
            net_wm_name: atoms[3],
            net_wm_pid: atoms[4],
            utf8_string: atoms[5],
            wm_state: atoms[6],
            net_supported: atoms[7],
            net_request_frame_extents: atoms[8],
            net_frame_extents: atoms[9],
            net_wm_state: atoms[10],
            net_wm_state_hidden: atoms[11],
            net_wm_state_above: atoms[12],
            net_wm_state_maximized_vert: atoms[13],
            net_wm_state_maximized_horz: atoms[14],
            net_close_window: atoms[15],
            net_moveresize_window: atoms[16],
            net_restack_window: atoms[17],
            wm_protocols: atoms[18],
            wm_delete_window: atoms[19],
            wm_change_state: atoms[20],
        })
    }

    /// Properties of a client whose change changes what [`WindowInfo`] shows.
    pub fn describes_client(&self, atom: u32) -> bool {
        atom == self.net_wm_name
            || atom == u32::from(AtomEnum::WM_NAME)
            || atom == u32::from(AtomEnum::WM_CLASS)
            || atom == self.net_wm_pid
            || atom == self.wm_state
            || atom == self.net_wm_state
    }

    /// Properties of the root window that change the window list or the focus.
    pub fn describes_root(&self, atom: u32) -> bool {
        atom == self.net_client_list
            || atom == self.net_active_window
            || atom == self.net_supporting_wm_check
    }
}

/// What runs as window manager, as far as the display tells.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowManagerState {
    /// The window an EWMH window manager announced itself with (`_NET_SUPPORTING_WM_CHECK` on the
    /// root, pointing at a window that carries the same property pointing at itself).
    pub announced: Option<Window>,
    /// Its `_NET_WM_NAME` ("Openbox"), when announced.
    pub name: Option<String>,
    /// Some client holds SubstructureRedirect on the root: a window manager runs, announced or not.
    pub redirect_taken: bool,
}

impl WindowManagerState {
    /// Look at the root window (two or three round trips; changes nothing).
    pub fn read(conn: &RustConnection, root: Window, atoms: &Atoms) -> Result<WindowManagerState> {
        let attributes = conn.get_window_attributes(root)?;
        let announced = announced_window(conn, root, atoms)?;
        let redirect_taken = attributes.reply()?.all_event_masks & EventMask::SUBSTRUCTURE_REDIRECT
            != EventMask::NO_EVENT;
        let name = match announced {
            Some(window) => skip_gone(
                conn.get_property(false, window, atoms.net_wm_name, AtomEnum::ANY, 0, 256)?
                    .reply(),
            )?
            .map(|reply| text_of(&reply, atoms))
            .filter(|name| !name.is_empty()),
            None => None,
        };
        Ok(WindowManagerState {
            announced,
            name,
            redirect_taken,
        })
    }

    /// A window manager runs (announced, or at least holding the redirect).
    pub fn present(&self) -> bool {
        self.announced.is_some() || self.redirect_taken
    }
}

/// The window of a valid `_NET_SUPPORTING_WM_CHECK` announcement (a stale one, left by a window
/// manager that died, points at a window that no longer exists or no longer says so).
fn announced_window(conn: &RustConnection, root: Window, atoms: &Atoms) -> Result<Option<Window>> {
    let check = atoms.net_supporting_wm_check;
    let on_root = conn
        .get_property(false, root, check, AtomEnum::WINDOW, 0, 1)?
        .reply()?;
    let Some(window) = on_root.value32().and_then(|mut v| v.next()) else {
        return Ok(None);
    };
    let on_child = skip_gone(
        conn.get_property(false, window, check, AtomEnum::WINDOW, 0, 1)?
            .reply(),
    )?;
    let confirmed = on_child
        .and_then(|reply| reply.value32().and_then(|mut v| v.next()))
        .is_some_and(|w| w == window);
    Ok(confirmed.then_some(window))
}

/// A reply, or `None` when the server answered with an error (the window is gone, most often);
/// a broken connection stays an error.
fn skip_gone<T>(reply: std::result::Result<T, ReplyError>) -> Result<Option<T>> {
    match reply {
        Ok(value) => Ok(Some(value)),
        Err(ReplyError::X11Error(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// The text of a title property: Latin-1 for STRING, UTF-8 (lossy) for UTF8_STRING and anything else.
fn text_of(reply: &GetPropertyReply, atoms: &Atoms) -> String {
    let bytes = reply.value.as_slice();
    let bytes = bytes.strip_suffix(&[0]).unwrap_or(bytes);
    if reply.type_ == u32::from(AtomEnum::STRING) && reply.type_ != atoms.utf8_string {
        bytes.iter().map(|b| char::from(*b)).collect()
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// The client windows, in the window manager's order (the order they were managed) or, without one,
/// bottom to top.
pub fn client_windows(conn: &RustConnection, root: Window, atoms: &Atoms) -> Result<Vec<Window>> {
    if announced_window(conn, root, atoms)?.is_some() {
        let list = conn
            .get_property(
                false,
                root,
                atoms.net_client_list,
                AtomEnum::WINDOW,
                0,
                u32::MAX / 4,
            )?
            .reply()?;
        let clients: Option<Vec<Window>> = list.value32().map(|values| values.collect());
        if let Some(clients) = clients {
            return Ok(clients);
        }
    }
    clients_by_wm_state(conn, root, atoms)
}

/// Is `reply` a WM_STATE of a window in Normal or Iconic state?
fn has_wm_state(reply: &Option<GetPropertyReply>) -> bool {
    reply
        .as_ref()
        .and_then(|r| r.value32().and_then(|mut v| v.next()))
        .is_some_and(|state| state == 1 || state == 3)
}

/// Clients without an EWMH list: children of the root with WM_STATE, or holding one (at most three
/// levels down) that has it; else, when mapped, the child itself.
fn clients_by_wm_state(conn: &RustConnection, root: Window, atoms: &Atoms) -> Result<Vec<Window>> {
    let children = conn.query_tree(root)?.reply()?.children;
    type Look<'c> = (
        Cookie<'c, RustConnection, xproto::GetWindowAttributesReply>,
        Cookie<'c, RustConnection, GetPropertyReply>,
    );
    let looks: Vec<Look<'_>> = children
        .iter()
        .map(|w| {
            Ok((
                conn.get_window_attributes(*w)?,
                conn.get_property(false, *w, atoms.wm_state, atoms.wm_state, 0, 2)?,
            ))
        })
        .collect::<Result<_>>()?;
    let mut clients = Vec::new();
    let mut search = Vec::new();
    for (window, (attributes, state)) in children.iter().zip(looks) {
        let attributes = skip_gone(attributes.reply())?;
        let state = skip_gone(state.reply())?;
        let Some(attributes) = attributes else {
            continue;
        };
        if attributes.override_redirect {
            continue;
        }
        if has_wm_state(&state) {
            clients.push(Some(*window));
        } else {
            search.push((
                clients.len(),
                *window,
                attributes.map_state == MapState::VIEWABLE,
            ));
            clients.push(None);
        }
    }
    for (slot, top, mapped) in search {
        clients[slot] = match client_inside(conn, top, atoms)? {
            Some(client) => Some(client),
            None if mapped => Some(top),
            None => None,
        };
    }
    Ok(clients.into_iter().flatten().collect())
}

/// The first window below `top` (breadth first, three levels at most) that has WM_STATE.
fn client_inside(conn: &RustConnection, top: Window, atoms: &Atoms) -> Result<Option<Window>> {
    let mut level = vec![top];
    for _ in 0..3 {
        let trees = level
            .iter()
            .map(|w| conn.query_tree(*w))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut next = Vec::new();
        for tree in trees {
            if let Some(tree) = skip_gone(tree.reply())? {
                next.extend(tree.children);
            }
        }
        if next.is_empty() {
            return Ok(None);
        }
        let states = next
            .iter()
            .map(|w| conn.get_property(false, *w, atoms.wm_state, atoms.wm_state, 0, 2))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for (window, state) in next.iter().zip(states) {
            if has_wm_state(&skip_gone(state.reply())?) {
                return Ok(Some(*window));
            }
        }
        level = next;
    }
    Ok(None)
}

/// The windows from the focus window up to (not including) the root.
pub(crate) fn ancestry(
    conn: &RustConnection,
    root: Window,
    mut window: Window,
) -> Result<Vec<Window>> {
    let mut chain = Vec::new();
    while window != root && window != x11rb::NONE && chain.len() < 64 {
        chain.push(window);
        match skip_gone(conn.query_tree(window)?.reply())? {
            Some(tree) => window = tree.parent,
            None => break,
        }
    }
    Ok(chain)
}

/// Describe `clients` (ids from [`client_windows`]); windows that vanished meanwhile are left out.
pub fn describe(
    conn: &RustConnection,
    root: Window,
    atoms: &Atoms,
    clients: &[Window],
) -> Result<Vec<WindowInfo>> {
    struct Asked<'c> {
        id: Window,
        net_name: Cookie<'c, RustConnection, GetPropertyReply>,
        name: Cookie<'c, RustConnection, GetPropertyReply>,
        class: Cookie<'c, RustConnection, GetPropertyReply>,
        pid: Cookie<'c, RustConnection, GetPropertyReply>,
        attributes: Cookie<'c, RustConnection, xproto::GetWindowAttributesReply>,
        geometry: Cookie<'c, RustConnection, xproto::GetGeometryReply>,
        position: Cookie<'c, RustConnection, xproto::TranslateCoordinatesReply>,
        wm_state: Cookie<'c, RustConnection, GetPropertyReply>,
        net_state: Cookie<'c, RustConnection, GetPropertyReply>,
    }
    let focus = conn.get_input_focus()?;
    let mut asked = Vec::with_capacity(clients.len());
    for &id in clients {
        asked.push(Asked {
            id,
            net_name: conn.get_property(
                false,
                id,
                atoms.net_wm_name,
                atoms.utf8_string,
                0,
                1024,
            )?,
            name: conn.get_property(false, id, AtomEnum::WM_NAME, AtomEnum::ANY, 0, 1024)?,
            class: conn.get_property(false, id, AtomEnum::WM_CLASS, AtomEnum::STRING, 0, 256)?,
            pid: conn.get_property(false, id, atoms.net_wm_pid, AtomEnum::CARDINAL, 0, 1)?,
            attributes: conn.get_window_attributes(id)?,
            geometry: conn.get_geometry(id)?,
            position: conn.translate_coordinates(id, root, 0, 0)?,
            wm_state: conn.get_property(false, id, atoms.wm_state, atoms.wm_state, 0, 1)?,
            net_state: conn.get_property(false, id, atoms.net_wm_state, AtomEnum::ATOM, 0, 64)?,
        });
    }
    let focus = focus.reply()?.focus;
    let mut windows = Vec::with_capacity(asked.len());
    for a in asked {
        let net_name = skip_gone(a.net_name.reply())?;
        let name = skip_gone(a.name.reply())?;
        let class = skip_gone(a.class.reply())?;
        let pid = skip_gone(a.pid.reply())?;
        let attributes = skip_gone(a.attributes.reply())?;
        let geometry = skip_gone(a.geometry.reply())?;
        let position = skip_gone(a.position.reply())?;
        let wm_state = skip_gone(a.wm_state.reply())?;
        let net_state: Vec<u32> = skip_gone(a.net_state.reply())?
            .and_then(|r| r.value32().map(|v| v.collect()))
            .unwrap_or_default();
        let iconic = wm_state
            .and_then(|r| r.value32().and_then(|mut v| v.next()))
            .is_some_and(|state| state == ICONIC_STATE);
        let has = |atom: u32| net_state.contains(&atom);
        let (Some(attributes), Some(geometry), Some(position)) = (attributes, geometry, position)
        else {
            continue;
        };
        let title = net_name
            .filter(|r| r.type_ == atoms.utf8_string && !r.value.is_empty())
            .or(name)
            .map(|r| text_of(&r, atoms))
            .unwrap_or_default();
        let (instance, class) = class
            .map(|r| {
                let mut parts = r
                    .value
                    .split(|b| *b == 0)
                    .map(|p| p.iter().map(|b| char::from(*b)).collect::<String>());
                (
                    parts.next().unwrap_or_default(),
                    parts.next().unwrap_or_default(),
                )
            })
            .unwrap_or_default();
        windows.push(WindowInfo {
            id: a.id,
            title,
            class,
            instance,
            pid: pid.and_then(|r| r.value32().and_then(|mut v| v.next())),
            x: position.dst_x.into(),
            y: position.dst_y.into(),
            width: geometry.width.into(),
            height: geometry.height.into(),
            focused: false,
            mapped: attributes.map_state == MapState::VIEWABLE,
            minimized: iconic || has(atoms.net_wm_state_hidden),
            maximized: has(atoms.net_wm_state_maximized_vert)
                && has(atoms.net_wm_state_maximized_horz),
            above: has(atoms.net_wm_state_above),
        });
    }
    mark_focused(conn, root, focus, &mut windows)?;
    Ok(windows)
}

/// Set `focused` on the window that has the keyboard: the one the focus window is, or is inside;
/// failing that, the one inside the focus window (a frame that took the focus).
fn mark_focused(
    conn: &RustConnection,
    root: Window,
    focus: Window,
    windows: &mut [WindowInfo],
) -> Result<()> {
    // None and PointerRoot: no window holds the focus (keys go to whatever is under the pointer).
    if focus == x11rb::NONE || focus == 1 || focus == root || windows.is_empty() {
        return Ok(());
    }
    let chain = ancestry(conn, root, focus)?;
    if let Some(w) = windows.iter_mut().find(|w| chain.contains(&w.id)) {
        w.focused = true;
        return Ok(());
    }
    // The focus is on something outside every client: perhaps a frame holding one.
    let ids: HashSet<Window> = windows.iter().map(|w| w.id).collect();
    let mut level = vec![focus];
    for _ in 0..3 {
        let mut next = Vec::new();
        for window in &level {
            if let Some(tree) = skip_gone(conn.query_tree(*window)?.reply())? {
                next.extend(tree.children);
            }
        }
        if let Some(found) = next.iter().find(|w| ids.contains(w)) {
            if let Some(w) = windows.iter_mut().find(|w| w.id == *found) {
                w.focused = true;
            }
            return Ok(());
        }
        level = next;
    }
    Ok(())
}

/// Every client window, described.
pub fn list(conn: &RustConnection, root: Window, atoms: &Atoms) -> Result<Vec<WindowInfo>> {
    let clients = client_windows(conn, root, atoms)?;
    describe(conn, root, atoms, &clients)
}

/// What a watcher selects on the root window: windows appearing, moving, being (un)mapped and
/// restacked, root properties (the client list, the active window), and focus moving to the root.
pub fn root_event_mask() -> EventMask {
    EventMask::SUBSTRUCTURE_NOTIFY | EventMask::PROPERTY_CHANGE | EventMask::FOCUS_CHANGE
}

/// What a watcher selects on each client: its properties (title), its own map/unmap/configure
/// (inside a frame, which the root does not see), and focus.
pub fn client_event_mask() -> EventMask {
    EventMask::PROPERTY_CHANGE | EventMask::STRUCTURE_NOTIFY | EventMask::FOCUS_CHANGE
}
