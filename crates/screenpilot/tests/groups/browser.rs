//! Also headless Chromium (the watch page, asciinema's web player, a web page's accessibility
//! tree).

#[path = "../desktop_a11y_e2e.rs"]
mod desktop_a11y;
#[path = "../record_e2e.rs"]
mod record;
#[path = "../watch_browser_e2e.rs"]
mod watch_browser;
