//! Also a private headless Wayland desktop (sway as an unprivileged user, foot, GTK 3 natively on
//! Wayland, wl-clipboard and swaymsg to check against).

#[path = "../desktop_wayland_e2e.rs"]
mod desktop_wayland;
