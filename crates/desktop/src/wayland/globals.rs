//! Reaching a compositor: the socket, the globals it advertises, and the probe that decides whether
//! screenpilot can work there. The probe looks at what the compositor offers, never at environment
//! variables: GNOME and KDE offer no wlroots input protocols, and we say so before sending anything.

use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Instant;

use wayland_client::protocol::wl_output::{self, WlOutput};
use wayland_client::protocol::wl_registry::{self, WlRegistry};
use wayland_client::{Connection, Dispatch, EventQueue, Proxy, QueueHandle, WEnum};

use super::blocking::{roundtrip, Until};
use crate::error::{DesktopError, Result};

pub(crate) const OUTPUT: &str = "wl_output";
pub(crate) const SEAT: &str = "wl_seat";
pub(crate) const SHM: &str = "wl_shm";
pub(crate) const SCREENCOPY: &str = "zwlr_screencopy_manager_v1";
pub(crate) const VIRTUAL_POINTER: &str = "zwlr_virtual_pointer_manager_v1";
pub(crate) const VIRTUAL_KEYBOARD: &str = "zwp_virtual_keyboard_manager_v1";
pub(crate) const DATA_CONTROL: &str = "zwlr_data_control_manager_v1";
pub(crate) const FOREIGN_TOPLEVEL: &str = "zwlr_foreign_toplevel_manager_v1";

/// Every global screenpilot uses, required ones first.
pub(crate) const KNOWN: [&str; 8] = [
    OUTPUT,
    SEAT,
    SHM,
    SCREENCOPY,
    VIRTUAL_POINTER,
    VIRTUAL_KEYBOARD,
    DATA_CONTROL,
    FOREIGN_TOPLEVEL,
];

/// One global the compositor advertises.
#[derive(Debug, Clone)]
pub(crate) struct Global {
    pub name: u32,
    pub interface: String,
    pub version: u32,
}

/// The state of a connection's main queue: the globals, and the one output we capture and point at.
#[derive(Default)]
pub(crate) struct Globals {
    pub list: Vec<Global>,
    pub output: OutputInfo,
}

/// What the output said about itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OutputInfo {
    /// The current mode, in pixels.
    pub width: u32,
    pub height: u32,
    /// Pixels per logical unit (wl_output v2); 1 until told.
    pub scale: i32,
}

impl Globals {
    pub fn find(&self, interface: &str) -> Option<&Global> {
        self.list.iter().find(|g| g.interface == interface)
    }

    pub fn has(&self, interface: &str) -> bool {
        self.find(interface).is_some()
    }
}

/// Refuse a compositor that lacks something required, naming what is missing and what that
/// prevents. `offered` is the set of interface names it advertises.
pub(crate) fn check_offered(offered: impl Fn(&str) -> bool) -> Result<()> {
    let missing = |names: &[&'static str]| -> Vec<&'static str> {
        names.iter().copied().filter(|n| !offered(n)).collect()
    };
    let input = missing(&[VIRTUAL_POINTER, VIRTUAL_KEYBOARD]);
    if !input.is_empty() {
        return Err(DesktopError::Connection(format!(
            "the compositor offers no {}, so input cannot be delivered (GNOME and KDE do not offer \
             the wlroots input protocols; sway, Hyprland, labwc and other wlroots compositors do)",
            input.join(" and no ")
        )));
    }
    let capture = missing(&[SCREENCOPY, SHM]);
    if !capture.is_empty() {
        return Err(DesktopError::Connection(format!(
            "the compositor offers no {}, so the screen cannot be captured",
            capture.join(" and no ")
        )));
    }
    let rest = missing(&[OUTPUT, SEAT]);
    if !rest.is_empty() {
        return Err(DesktopError::Connection(format!(
            "the compositor offers no {} (no screen or no seat to act on)",
            rest.join(" and no ")
        )));
    }
    Ok(())
}

/// Connect to the compositor listening at `socket` (an absolute path).
pub(crate) fn open(socket: &Path) -> Result<Connection> {
    if !socket.is_absolute() {
        return Err(DesktopError::invalid(
            "socket",
            format!(
                "{} is not an absolute path; give the compositor's socket as \
                 $XDG_RUNTIME_DIR/$WAYLAND_DISPLAY",
                socket.display()
            ),
        ));
    }
    let stream = UnixStream::connect(socket).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            DesktopError::Connection(format!(
                "no Wayland socket at {}: the compositor is not running, or its socket is elsewhere",
                socket.display()
            ))
        } else {
            DesktopError::Connection(format!(
                "cannot connect to the Wayland socket {}: {e}",
                socket.display()
            ))
        }
    })?;
    Connection::from_socket(stream).map_err(|e| {
        DesktopError::Connection(format!(
            "cannot use the Wayland socket {}: {e}",
            socket.display()
        ))
    })
}

/// The registry and its globals: one round trip, and no other request.
pub(crate) fn discover(
    conn: &Connection,
    deadline: Instant,
) -> Result<(EventQueue<Globals>, Globals, WlRegistry)> {
    let mut queue = conn.new_event_queue::<Globals>();
    let qh = queue.handle();
    let registry = conn.display().get_registry(&qh, ());
    let mut globals = Globals::default();
    let until = Until::deadline(deadline);
    roundtrip(
        conn,
        &mut queue,
        &mut globals,
        until,
        "listing the compositor's globals",
    )?;
    Ok((queue, globals, registry))
}

/// Bind the first output and read its mode (into `globals.output`): one round trip.
pub(crate) fn bind_output(
    conn: &Connection,
    queue: &mut EventQueue<Globals>,
    globals: &mut Globals,
    registry: &WlRegistry,
    deadline: Instant,
) -> Result<WlOutput> {
    let Some(g) = globals.find(OUTPUT) else {
        return Err(DesktopError::Connection(
            "the compositor offers no wl_output (no screen to act on)".into(),
        ));
    };
    let output: WlOutput = registry.bind(g.name, g.version.min(3), &queue.handle(), ());
    globals.output.scale = 1;
    roundtrip(
        conn,
        queue,
        globals,
        Until::deadline(deadline),
        "reading the output's mode",
    )?;
    Ok(output)
}

/// Bind the global `interface` at most at `version`, on the queue of `qh`.
pub(crate) fn bind<I, U, S>(
    registry: &WlRegistry,
    globals: &Globals,
    interface: &str,
    version: u32,
    qh: &QueueHandle<S>,
    data: U,
) -> Option<I>
where
    I: Proxy + 'static,
    U: Send + Sync + 'static,
    S: Dispatch<I, U> + 'static,
{
    let g = globals.find(interface)?;
    Some(registry.bind(g.name, g.version.min(version), qh, data))
}

impl Dispatch<WlRegistry, ()> for Globals {
    fn event(
        state: &mut Self,
        _: &WlRegistry,
        event: wl_registry::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            wl_registry::Event::Global {
                name,
                interface,
                version,
            } => state.list.push(Global {
                name,
                interface,
                version,
            }),
            wl_registry::Event::GlobalRemove { name } => state.list.retain(|g| g.name != name),
            _ => {}
        }
    }
}

impl Dispatch<WlOutput, ()> for Globals {
    fn event(
        state: &mut Self,
        _: &WlOutput,
        event: wl_output::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        match event {
            wl_output::Event::Mode {
                flags: WEnum::Value(flags),
                width,
                height,
                ..
            } if flags.contains(wl_output::Mode::Current) => {
                state.output.width = width.max(0) as u32;
                state.output.height = height.max(0) as u32;
            }
            wl_output::Event::Scale { factor } => state.output.scale = factor.max(1),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offering(names: &[&str]) -> Result<()> {
        check_offered(|n| names.contains(&n))
    }

    #[test]
    fn a_compositor_without_wlroots_input_is_refused_naming_what_is_missing() {
        // What GNOME's mutter offers, roughly: capture through portals, no virtual input.
        let err = offering(&[OUTPUT, SEAT, SHM]).unwrap_err().to_string();
        assert!(
            err.contains(
                "the compositor offers no zwlr_virtual_pointer_manager_v1 and no \
                 zwp_virtual_keyboard_manager_v1, so input cannot be delivered"
            ),
            "{err}"
        );
        let err = offering(&[OUTPUT, SEAT, SHM, SCREENCOPY, VIRTUAL_POINTER])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no zwp_virtual_keyboard_manager_v1, so input cannot be delivered"),
            "{err}"
        );
        assert!(!err.contains("virtual_pointer"), "{err}");
    }

    #[test]
    fn capture_and_the_basics_are_required_too_but_clipboard_and_toplevels_are_not() {
        let err = offering(&[OUTPUT, SEAT, SHM, VIRTUAL_POINTER, VIRTUAL_KEYBOARD])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no zwlr_screencopy_manager_v1, so the screen cannot be captured"),
            "{err}"
        );
        let err = offering(&[SHM, SCREENCOPY, VIRTUAL_POINTER, VIRTUAL_KEYBOARD])
            .unwrap_err()
            .to_string();
        assert!(err.contains("no wl_output and no wl_seat"), "{err}");
        assert!(offering(&KNOWN[..6]).is_ok());
    }

    #[test]
    fn a_relative_or_missing_socket_is_named_in_the_error() {
        let Err(err) = open(Path::new("wayland-1")) else {
            panic!("a relative path was accepted");
        };
        assert_eq!(err.field(), Some("socket"));
        let Err(err) = open(Path::new("/nonexistent/screenpilot/wayland-9")) else {
            panic!("a missing socket connected");
        };
        let text = err.to_string();
        assert!(
            text.contains("no Wayland socket at /nonexistent/screenpilot/wayland-9"),
            "{text}"
        );
    }
}
