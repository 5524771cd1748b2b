//! Input on GNOME (mutter) and KDE (kwin) through libei: the route for compositors that offer none
//! of the wlroots protocols `crate::wayland` uses. Built with the `libei` feature only.
//!
//! The route, end to end:
//!
//! 1. [`portal::RemoteDesktop`]: a session of the xdg-desktop-portal's RemoteDesktop interface over
//!    the session bus (the user allows it once, or a restore token from an earlier session allows
//!    it again), then `ConnectToEIS`: a socket to the compositor's EIS server for that session.
//!    A socket can also come from `LIBEI_SOCKET` or a path ([`socket`]), as libei clients take it.
//! 2. [`Input`]: the EI protocol as a sender on that socket (through `reis`, a pure-Rust libei):
//!    the handshake, the seat's pointer, button, scroll and keyboard capabilities bound, devices
//!    waited for until added and resumed, then absolute motion, buttons, wheel steps, keys and
//!    text, the text through the keymap the compositor sends (a client cannot upload one here).
//!
//! [`Input`] is the input half of a desktop, not a [`crate::Backend`]: its calls have the names and
//! the meaning of the backend's input calls (`move_to`, `click`, `scroll`, `drag`, `button`,
//! `key_chord`, `type_text`, `leave_as_found`, with `pointer` and `check_point`), so a backend for
//! GNOME and KDE is this input plus a capture path. That path is designed, not built: the
//! ScreenCast portal in the same portal session (`SelectSources` before `Start`), whose PipeWire
//! stream gives frames and damage (for waits without polling); the stream's `mapping_id` matches a
//! device region's, and a region's `scale` maps the stream's pixels to the region's logical pixels.
//! Windows would come from the accessibility tree (no Wayland protocol lists them there).
//!
//! What is tested: [`Input`] against an EIS server of reis's in the same process (this module's
//! tests), for the events that reach it. What is not: the portal, and a real mutter or kwin: neither
//! libei nor a portal with `ConnectToEIS` is in Debian 12.

mod input;
mod keymap;
mod link;
pub mod portal;
#[cfg(test)]
mod test_server;
#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;

use crate::error::{DesktopError, Result};

pub use input::Input;
pub use link::Region;

/// Connect to an EIS socket named as libei clients name it: `name`, else `$LIBEI_SOCKET`; a name
/// that is not an absolute path is in `$XDG_RUNTIME_DIR`. (From the portal, the socket comes with
/// the session: [`portal::RemoteDesktop::connect_to_eis`].)
pub fn socket(name: Option<OsString>) -> Result<UnixStream> {
    let name = name
        .or_else(|| std::env::var_os("LIBEI_SOCKET"))
        .ok_or_else(|| {
            DesktopError::Connection("LIBEI_SOCKET is not set, and no EIS socket was named".into())
        })?;
    let mut path = PathBuf::from(&name);
    if path.is_relative() {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR").ok_or_else(|| {
            DesktopError::Connection(format!(
                "the EIS socket {} is a name in XDG_RUNTIME_DIR, which is not set",
                path.display()
            ))
        })?;
        path = PathBuf::from(runtime).join(path);
    }
    UnixStream::connect(&path)
        .map_err(|e| DesktopError::Connection(format!("no EIS server at {}: {e}", path.display())))
}
