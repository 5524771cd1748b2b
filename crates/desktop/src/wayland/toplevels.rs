//! The windows of a compositor without sway's IPC, through wlr-foreign-toplevel-management: a
//! manager bound for one call lists every toplevel (title, app id, state), then is let go.

use wayland_client::{Connection, Dispatch, Proxy, QueueHandle};
use wayland_protocols_wlr::foreign_toplevel::v1::client::zwlr_foreign_toplevel_handle_v1::{
    self, ZwlrForeignToplevelHandleV1,
};
use wayland_protocols_wlr::foreign_toplevel::v1::client::zwlr_foreign_toplevel_manager_v1::{
    self, ZwlrForeignToplevelManagerV1,
};

use super::blocking::roundtrip;
use super::globals::{self, FOREIGN_TOPLEVEL};
use super::Wayland;
use crate::error::{DesktopError, Result};

/// One toplevel window, as the compositor describes it to task bars.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Toplevel {
    pub title: String,
    pub app_id: String,
    /// It has the keyboard focus.
    pub activated: bool,
    pub maximized: bool,
    pub minimized: bool,
    pub fullscreen: bool,
}

#[derive(Default)]
struct Listing {
    handles: Vec<(ZwlrForeignToplevelHandleV1, Toplevel)>,
}

impl Wayland {
    /// The toplevel windows, in the order the compositor lists them. Needs
    /// `zwlr_foreign_toplevel_manager_v1` (see [`Wayland::protocols`]).
    pub fn toplevels(&mut self) -> Result<Vec<Toplevel>> {
        let mut queue = self.conn.new_event_queue::<Listing>();
        let qh = queue.handle();
        let manager: ZwlrForeignToplevelManagerV1 =
            globals::bind(&self.registry, &self.globals, FOREIGN_TOPLEVEL, 3, &qh, ()).ok_or_else(
                || {
                    DesktopError::Connection(
                        "the compositor offers no zwlr_foreign_toplevel_manager_v1, so its \
                         windows cannot be listed"
                            .into(),
                    )
                },
            )?;
        let mut listing = Listing::default();
        let until = self.until();
        let listed = roundtrip(
            &self.conn,
            &mut queue,
            &mut listing,
            until,
            "listing the windows",
        );
        manager.stop();
        for (handle, _) in &listing.handles {
            handle.destroy();
        }
        let _ = self.conn.flush();
        listed?;
        Ok(listing.handles.into_iter().map(|(_, t)| t).collect())
    }
}

impl Dispatch<ZwlrForeignToplevelManagerV1, ()> for Listing {
    fn event(
        state: &mut Self,
        _: &ZwlrForeignToplevelManagerV1,
        event: zwlr_foreign_toplevel_manager_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_foreign_toplevel_manager_v1::Event::Toplevel { toplevel } = event {
            state.handles.push((toplevel, Toplevel::default()));
        }
    }

    wayland_client::event_created_child!(Listing, ZwlrForeignToplevelManagerV1, [
        zwlr_foreign_toplevel_manager_v1::EVT_TOPLEVEL_OPCODE => (ZwlrForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<ZwlrForeignToplevelHandleV1, ()> for Listing {
    fn event(
        state: &mut Self,
        handle: &ZwlrForeignToplevelHandleV1,
        event: zwlr_foreign_toplevel_handle_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_foreign_toplevel_handle_v1::{Event, State};
        let Some((_, toplevel)) = state.handles.iter_mut().find(|(h, _)| h == handle) else {
            return;
        };
        match event {
            Event::Title { title } => toplevel.title = title,
            Event::AppId { app_id } => toplevel.app_id = app_id,
            Event::State { state: raw } => {
                let states: Vec<u32> = raw
                    .chunks_exact(4)
                    .map(|b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                let has = |s: State| states.contains(&(s as u32));
                toplevel.activated = has(State::Activated);
                toplevel.maximized = has(State::Maximized);
                toplevel.minimized = has(State::Minimized);
                toplevel.fullscreen = has(State::Fullscreen);
            }
            Event::Closed => {
                let id = handle.id();
                state.handles.retain(|(h, _)| h.id() != id);
            }
            _ => {}
        }
    }
}
