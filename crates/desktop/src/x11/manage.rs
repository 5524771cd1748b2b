//! Asking for a top-level window to be focused, raised, moved, resized, minimised or closed: the
//! requests only. Waiting until the effect shows is [`crate::Desktop`]'s part (`window_actions`).
//!
//! With an EWMH window manager (one that announced itself) every request goes through it, the way
//! a pager or taskbar asks (source indication 2, so no focus-stealing rule refuses it):
//! `_NET_ACTIVE_WINDOW`, `_NET_RESTACK_WINDOW`, `_NET_MOVERESIZE_WINDOW`, `_NET_CLOSE_WINDOW`;
//! minimising is ICCCM's `WM_CHANGE_STATE` to IconicState. A window manager that does not announce
//! itself (twm) gets the ICCCM forms: ConfigureWindow and MapWindow on the client, which it receives
//! as requests, and `WM_DELETE_WINDOW` to the client. With no window manager at all we do what one
//! would: configure and stack the window ourselves, and minimise by unmapping it with `WM_STATE`
//! IconicState (so it stays in the window list, minimised; focusing it maps it again).
//!
//! Every request is for a window in the client list at that moment; any other id is refused with
//! [`DesktopError::WindowGone`] before anything is sent.

use serde::{Deserialize, Serialize};
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConfigureWindowAux, ConnectionExt as _, EventMask, InputFocus,
    PropMode, StackMode, Window,
};
use x11rb::wrapper::ConnectionExt as _;

use super::windows::{self, WindowInfo, ICONIC_STATE};
use super::X11;
use crate::error::{DesktopError, Result};
use crate::gestures::Seat as _;

/// Where to put a window: its client area (as [`WindowInfo`] reports it), in screen pixels. A
/// part left `None` stays as it is.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct MoveResize {
    pub x: Option<i32>,
    pub y: Option<i32>,
    pub width: Option<u32>,
    pub height: Option<u32>,
}

impl MoveResize {
    /// Refuse a request that changes nothing or has an empty side; `field` names it in errors.
    pub fn check(&self, field: &'static str) -> Result<()> {
        if self.x.is_none() && self.y.is_none() && self.width.is_none() && self.height.is_none() {
            return Err(DesktopError::invalid(
                field,
                "give at least one of x, y, width, height",
            ));
        }
        for (name, side) in [("width", self.width), ("height", self.height)] {
            if let Some(side) = side {
                if !(1..=32767).contains(&side) {
                    return Err(DesktopError::invalid(
                        field,
                        format!("{name} {side} must be 1-32767 pixels"),
                    ));
                }
            }
        }
        for (name, at) in [("x", self.x), ("y", self.y)] {
            if let Some(at) = at {
                if !(-32768..=32767).contains(&at) {
                    return Err(DesktopError::invalid(
                        field,
                        format!("{name} {at} must be -32768-32767"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Has `now` taken this request, as far as a window manager lets it: each part asked for is
    /// either as asked, or no longer as it was in `before` (the window manager adjusted it, e.g. to
    /// xterm's character cells).
    pub fn taken(&self, before: &WindowInfo, now: &WindowInfo) -> bool {
        let part =
            |asked: Option<i64>, was: i64, is: i64| asked.is_none_or(|a| a == is || is != was);
        part(self.x.map(i64::from), before.x.into(), now.x.into())
            && part(self.y.map(i64::from), before.y.into(), now.y.into())
            && part(
                self.width.map(i64::from),
                before.width.into(),
                now.width.into(),
            )
            && part(
                self.height.map(i64::from),
                before.height.into(),
                now.height.into(),
            )
    }
}

/// How a window was asked to close.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CloseBy {
    WindowManager,
    DeleteWindow,
    Kill,
}

/// Who acts on requests: an EWMH window manager (with the requests it lists as supported), one
/// that does not announce itself, or nobody.
struct Manager {
    ewmh: Option<Vec<u32>>,
    present: bool,
}

impl Manager {
    fn supports(&self, atom: u32) -> bool {
        self.ewmh.as_ref().is_some_and(|s| s.contains(&atom))
    }
}

impl X11 {
    /// `window` as it is now, when it is a top-level (client) window; else
    /// [`DesktopError::WindowGone`] saying whether it no longer exists or never was one.
    pub fn client(&self, window: u32) -> Result<WindowInfo> {
        self.check_deadline("looking at the window")?;
        let clients = windows::client_windows(&self.conn, self.root, &self.atoms)?;
        if clients.contains(&window) {
            let described = windows::describe(&self.conn, self.root, &self.atoms, &[window])?;
            if let Some(info) = described.into_iter().next() {
                return Ok(info);
            }
        }
        let exists = self.conn.get_window_attributes(window)?.reply().is_ok();
        let message = if exists {
            format!(
                "{window:#x} is not a top-level window shown on this desktop (the window list has those)"
            )
        } else {
            format!("{window:#x} is gone (it was closed)")
        };
        Err(DesktopError::WindowGone {
            field: "window",
            message,
        })
    }

    fn manager(&self) -> Result<Manager> {
        let state = self.window_manager()?;
        let ewmh = match state.announced {
            Some(_) => Some(self.window_manager_supports()?),
            None => None,
        };
        Ok(Manager {
            ewmh,
            present: state.present(),
        })
    }

    /// A client message about `window` to the root, as window managers expect requests.
    fn ask_window_manager(&self, window: Window, message: u32, data: [u32; 5]) -> Result<()> {
        let event = ClientMessageEvent::new(32, window, message, data);
        self.conn.send_event(
            false,
            self.root,
            EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
            event,
        )?;
        Ok(())
    }

    /// Ask for `window` to get the keyboard (and be shown and raised). Returns its state before.
    pub fn request_focus(&self, window: u32) -> Result<WindowInfo> {
        let info = self.client(window)?;
        let manager = self.manager()?;
        if manager.ewmh.is_some() {
            self.activate(window, true)?;
            return Ok(info);
        }
        if !info.mapped {
            if !manager.present {
                // Our own minimising (see the module doc) is undone by us.
                self.conn.delete_property(window, self.atoms.wm_state)?;
            }
            // A window manager de-iconifies a client that maps itself (ICCCM 4.1.4).
            self.conn.map_window(window)?;
        }
        self.conn.configure_window(
            window,
            &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
        )?;
        if info.mapped {
            self.conn
                .set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)?;
        }
        self.sync()?;
        Ok(info)
    }

    /// Give `window` the keyboard directly (once it is shown; a window manager that maps it later
    /// leaves this to a second call).
    pub(crate) fn set_focus(&self, window: u32) -> Result<()> {
        self.conn
            .set_input_focus(InputFocus::PARENT, window, x11rb::CURRENT_TIME)?;
        self.sync()
    }

    /// Ask for `window` to go on top of the others. Returns its state before.
    pub fn request_raise(&self, window: u32) -> Result<WindowInfo> {
        let info = self.client(window)?;
        let manager = self.manager()?;
        if manager.supports(self.atoms.net_restack_window) {
            // Source 2 (a pager), no sibling, Above.
            self.ask_window_manager(
                window,
                self.atoms.net_restack_window,
                [2, x11rb::NONE, u32::from(StackMode::ABOVE), 0, 0],
            )?;
        } else {
            self.conn.configure_window(
                window,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            )?;
        }
        self.sync()?;
        Ok(info)
    }

    /// Is `window` shown above every other shown window (of its layer: one kept above the others
    /// does not count against a window that is not)?
    pub fn on_top(&self, window: u32) -> Result<bool> {
        let shown: Vec<WindowInfo> = self.windows()?.into_iter().filter(|w| w.mapped).collect();
        let Some(ours) = shown.iter().find(|w| w.id == window) else {
            return Ok(false);
        };
        let order = self.conn.query_tree(self.root)?.reply()?.children;
        let place = |id: u32| -> Result<Option<usize>> {
            let chain = windows::ancestry(&self.conn, self.root, id)?;
            Ok(chain
                .last()
                .and_then(|top| order.iter().position(|w| w == top)))
        };
        let Some(our_place) = place(window)? else {
            return Ok(false);
        };
        for other in shown.iter().filter(|w| w.id != window) {
            if other.above && !ours.above {
                continue;
            }
            if place(other.id)?.is_some_and(|p| p > our_place) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Does an EWMH window manager place windows for us (`_NET_MOVERESIZE_WINDOW`, which says
    /// where the client area goes)? Otherwise a window manager may read a position as its frame's.
    pub(crate) fn moves_by_ewmh(&self) -> Result<bool> {
        Ok(self.manager()?.supports(self.atoms.net_moveresize_window))
    }

    /// Ask for `window`'s client area to be moved and/or resized. Returns its state before.
    pub fn request_move_resize(&self, window: u32, to: MoveResize) -> Result<WindowInfo> {
        let info = self.client(window)?;
        let manager = self.manager()?;
        if manager.supports(self.atoms.net_moveresize_window) {
            // NorthWestGravity: x and y place the frame's corner, so take off the frame's left and
            // top edges (StaticGravity would count a border the window manager already removed).
            let extents = self
                .conn
                .get_property(
                    false,
                    window,
                    self.atoms.net_frame_extents,
                    AtomEnum::CARDINAL,
                    0,
                    4,
                )?
                .reply()?;
            let (left, top) = extents
                .value32()
                .map(|v| v.collect::<Vec<u32>>())
                .filter(|v| v.len() == 4)
                .map(|v| (v[0] as i32, v[2] as i32))
                .unwrap_or((0, 0));
            let mut flags = 1u32 | (2 << 12);
            for (bit, given) in [
                (8, to.x.is_some()),
                (9, to.y.is_some()),
                (10, to.width.is_some()),
                (11, to.height.is_some()),
            ] {
                if given {
                    flags |= 1 << bit;
                }
            }
            self.ask_window_manager(
                window,
                self.atoms.net_moveresize_window,
                [
                    flags,
                    to.x.map_or(0, |x| x - left) as u32,
                    to.y.map_or(0, |y| y - top) as u32,
                    to.width.unwrap_or(0),
                    to.height.unwrap_or(0),
                ],
            )?;
        } else {
            // Without a window manager the window is the root's child: its position is its
            // border's corner. With one (a ConfigureRequest), ICCCM asks for the same.
            let border = i32::from(self.conn.get_geometry(window)?.reply()?.border_width);
            let mut aux = ConfigureWindowAux::new();
            if let Some(x) = to.x {
                aux = aux.x(x - border);
            }
            if let Some(y) = to.y {
                aux = aux.y(y - border);
            }
            if let Some(width) = to.width {
                aux = aux.width(width);
            }
            if let Some(height) = to.height {
                aux = aux.height(height);
            }
            self.conn.configure_window(window, &aux)?;
        }
        self.sync()?;
        Ok(info)
    }

    /// Ask for `window` to be minimised (iconified). Returns its state before.
    pub fn request_minimize(&self, window: u32) -> Result<WindowInfo> {
        let info = self.client(window)?;
        let manager = self.manager()?;
        if manager.present {
            self.ask_window_manager(
                window,
                self.atoms.wm_change_state,
                [ICONIC_STATE, 0, 0, 0, 0],
            )?;
        } else {
            self.conn.change_property32(
                PropMode::REPLACE,
                window,
                self.atoms.wm_state,
                self.atoms.wm_state,
                &[ICONIC_STATE, x11rb::NONE],
            )?;
            self.conn.unmap_window(window)?;
        }
        self.sync()?;
        Ok(info)
    }

    /// Ask for `window` to close: through the window manager (`_NET_CLOSE_WINDOW`), else by
    /// `WM_DELETE_WINDOW` to the window; with `kill`, end its program's connection (XKillClient)
    /// instead. A window that takes neither request is refused (field `kill`).
    pub(crate) fn request_close(&self, window: u32, kill: bool) -> Result<(WindowInfo, CloseBy)> {
        let info = self.client(window)?;
        if kill {
            self.conn.kill_client(window)?;
            self.sync()?;
            return Ok((info, CloseBy::Kill));
        }
        let manager = self.manager()?;
        if manager.supports(self.atoms.net_close_window) {
            self.ask_window_manager(
                window,
                self.atoms.net_close_window,
                [x11rb::CURRENT_TIME, 2, 0, 0, 0],
            )?;
            self.sync()?;
            return Ok((info, CloseBy::WindowManager));
        }
        let protocols = self
            .conn
            .get_property(
                false,
                window,
                self.atoms.wm_protocols,
                AtomEnum::ATOM,
                0,
                64,
            )?
            .reply()?;
        let deletes = protocols
            .value32()
            .is_some_and(|mut v| v.any(|a| a == self.atoms.wm_delete_window));
        if !deletes {
            return Err(DesktopError::invalid(
                "kill",
                format!(
                    "window {window:#x} ('{}') cannot be asked to close (it does not take WM_DELETE_WINDOW); set kill to end its program's connection",
                    info.title
                ),
            ));
        }
        let event = ClientMessageEvent::new(
            32,
            window,
            self.atoms.wm_protocols,
            [self.atoms.wm_delete_window, x11rb::CURRENT_TIME, 0, 0, 0],
        );
        self.conn
            .send_event(false, window, EventMask::NO_EVENT, event)?;
        self.sync()?;
        Ok((info, CloseBy::DeleteWindow))
    }
}
