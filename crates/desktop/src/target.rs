//! Where a desktop's display comes from: a private Xvfb or sway of ours, or an existing display.

/// Where the desktop's display comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A private Xvfb of this size, started (and later stopped) by us.
    Launch { width: u32, height: u32 },
    /// An existing display, e.g. ":0"; never stopped by us.
    Attach { display: String },
    /// A private headless Wayland compositor (sway) of this size, started (and later stopped) by us;
    /// as an unprivileged user when we are root, since sway refuses root.
    LaunchWayland { width: u32, height: u32 },
    /// The wlroots compositor of an existing `WAYLAND_DISPLAY` ("wayland-1", or its socket's path);
    /// never stopped by us.
    AttachWayland { display: String },
}
