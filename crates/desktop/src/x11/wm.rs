//! Asking the window manager whether its event loop runs. An EWMH window manager announces itself
//! (`_NET_SUPPORTING_WM_CHECK`) early in its start-up, before it handles any request: openbox then
//! spends another 10-30 ms setting up, and a program started in that gap can lose its first
//! configure request (xterm then waits 5 s, libXt's wmTimeout, before it maps). So after the
//! announcement we send one request a window manager must answer and wait for the answer:
//! `_NET_REQUEST_FRAME_EXTENTS` for a small window of ours, answered by setting `_NET_FRAME_EXTENTS`
//! on it. Only for window managers that list it in `_NET_SUPPORTED`.
//!
//! Why the request is sent again (after 5, 10, 20, ... ms, at most 100 ms apart) until answered:
//! events that reach openbox while it starts are read into its queue, and its main loop, once
//! running, only looks at that queue when more data arrives on its socket. A request sent too early
//! is answered only when something else happens; the next copy is that something.

use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

use x11rb::connection::Connection;
use x11rb::protocol::xproto::{
    AtomEnum, ClientMessageEvent, ConnectionExt as _, CreateWindowAux, EventMask, WindowClass,
};
use x11rb::protocol::Event;

use super::X11;
use crate::error::{DesktopError, Result};

impl X11 {
    /// What the window manager says it supports (`_NET_SUPPORTED` on the root), as atoms.
    pub fn window_manager_supports(&self) -> Result<Vec<u32>> {
        let supported = self
            .conn
            .get_property(
                false,
                self.root,
                self.atoms.net_supported,
                AtomEnum::ATOM,
                0,
                4096,
            )?
            .reply()?;
        Ok(supported.value32().map(|v| v.collect()).unwrap_or_default())
    }

    /// Does the window manager answer `_NET_REQUEST_FRAME_EXTENTS` (listed in `_NET_SUPPORTED`)?
    pub fn window_manager_answers_frame_requests(&self) -> Result<bool> {
        let supported = self.window_manager_supports()?;
        Ok(supported.contains(&self.atoms.net_request_frame_extents))
    }

    /// Send the window manager a `_NET_REQUEST_FRAME_EXTENTS` for a window of ours and wait until it
    /// has answered (true), or until `give_up` becomes readable (false: the window manager's pidfd,
    /// it ended), or the call's deadline (a timeout error).
    pub fn window_manager_answers(&mut self, give_up: Option<&OwnedFd>) -> Result<bool> {
        let window = self.conn.generate_id()?;
        self.conn.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            window,
            self.root,
            -10,
            -10,
            1,
            1,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        let answered = self.wait_for_property(window, self.atoms.net_frame_extents, give_up);
        let destroyed = self.conn.destroy_window(window).map(|_| ());
        let answered = answered?;
        destroyed?;
        self.sync()?;
        Ok(answered)
    }

    fn request_frame_extents(&self, window: u32) -> Result<()> {
        let request = ClientMessageEvent::new(
            32,
            window,
            self.atoms.net_request_frame_extents,
            [0, 0, 0, 0, 0],
        );
        self.conn.send_event(
            false,
            self.root,
            EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
            request,
        )?;
        self.conn.flush()?;
        Ok(())
    }

    /// Ask for the frame extents of `window` (PropertyChange selected by the caller) until they are
    /// set, or `give_up` becomes readable.
    fn wait_for_property(
        &mut self,
        window: u32,
        atom: u32,
        give_up: Option<&OwnedFd>,
    ) -> Result<bool> {
        let mut mapping_changed = false;
        let mut again_after = Duration::from_millis(5);
        let mut next_request = Instant::now();
        let outcome = loop {
            if Instant::now() >= next_request {
                self.request_frame_extents(window)?;
                next_request = Instant::now() + again_after;
                again_after = (again_after * 2).min(Duration::from_millis(100));
            }
            while let Some(event) = self.conn.poll_for_event()? {
                match event {
                    Event::PropertyNotify(e) if e.window == window && e.atom == atom => {
                        return self.after_events(mapping_changed).map(|()| true);
                    }
                    Event::MappingNotify(_) => mapping_changed = true,
                    _ => {}
                }
            }
            let now = Instant::now();
            if now >= self.deadline {
                break Err(DesktopError::Timeout {
                    what: "waiting for the window manager to answer".into(),
                    limit: Duration::ZERO,
                });
            }
            let mut fds = [
                libc::pollfd {
                    fd: self.conn.stream().as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: give_up.map_or(-1, |fd| fd.as_raw_fd()),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let wake = self.deadline.min(next_request);
            let ms = wake
                .saturating_duration_since(now)
                .as_millis()
                .min(i32::MAX as u128) as i32;
            // SAFETY: two valid pollfds (a negative fd is ignored by poll).
            unsafe {
                libc::poll(fds.as_mut_ptr(), 2, ms.max(1));
            }
            if fds[1].revents != 0 {
                break Ok(false);
            }
        };
        self.after_events(mapping_changed)?;
        outcome
    }

    fn after_events(&mut self, mapping_changed: bool) -> Result<()> {
        if mapping_changed {
            self.keyboard.reload(&self.conn)?;
        }
        Ok(())
    }
}
