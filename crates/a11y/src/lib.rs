//! The accessibility tree of an X11 desktop, for screenpilot: what its applications say they show
//! (AT-SPI over D-Bus), read as compact text a model acts on by ref instead of by pixel.
//!
//! - [`Bus::connect`] reaches a desktop's accessibility bus through its session bus; every call is
//!   bounded ([`CALL_LIMIT`]), and [`Bus::events`] counts the tree's events for waits to wake on.
//! - [`Bus::trees`] reads every application's windows, leaving out what cannot be seen;
//!   [`snapshot::compose`] lays them out under the X server's windows as text with refs (`e12`),
//!   which [`Refs`] keeps stable from one snapshot to the next and unique across desktops.
//! - [`Bus::act`] clicks, focuses, sets text, selects, toggles or scrolls through the application's
//!   own interfaces, or says where the pointer or keyboard must do it.
//!
//! Nothing here starts processes or talks to X: the desktop owns its session bus, the caller its
//! windows and input.

mod act;
mod bus;
pub mod element;
mod error;
pub mod snapshot;
mod walk;

pub use act::{role_matches, Act, Done};
pub use bus::Bus;
pub use element::{
    parse_ref, state_named, Bounds, Element, Object, Pixels, Placement, Refs, Target, STATE_NAMES,
};
pub use error::{A11yError, Result, CALL_LIMIT};
pub use snapshot::{Budget, Snapshot, TopLevel};
pub use walk::{App, Trees, Unread, WindowTree};
