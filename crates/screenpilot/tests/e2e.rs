//! Every end-to-end test of the screenpilot crate, in one binary (one link, one run that packs the
//! slow tests beside the quick ones): a module per area, each driving the real binary, daemon and
//! programs. `cargo test -p screenpilot --test e2e MODULE::` runs one area (`waits::`, `remote::`).

mod common;
/// The X recorder two desktop areas check input against.
#[path = "fixtures/x11/recorder.rs"]
mod recorder;

#[path = "abuse_limits_e2e.rs"]
mod abuse_limits;
#[path = "attach_e2e.rs"]
mod attach;
#[path = "computer_e2e.rs"]
mod computer;
#[path = "desktop_a11y_e2e.rs"]
mod desktop_a11y;
#[path = "desktop_computer_e2e.rs"]
mod desktop_computer;
#[path = "desktop_tasks_e2e.rs"]
mod desktop_tasks;
#[path = "desktop_waits_e2e.rs"]
mod desktop_waits;
#[path = "docs_e2e.rs"]
mod docs;
#[path = "economy_e2e.rs"]
mod economy;
#[path = "environment_e2e.rs"]
mod environment;
#[path = "fuzz_requests.rs"]
mod fuzz_requests;
#[path = "limits_e2e.rs"]
mod limits;
#[path = "mcp_e2e.rs"]
mod mcp;
#[path = "mcp_schemas_e2e.rs"]
mod mcp_schemas;
#[path = "orphans_e2e.rs"]
mod orphans;
#[path = "packages_e2e.rs"]
mod packages;
#[path = "pi_package_e2e.rs"]
mod pi_package;
#[path = "record_e2e.rs"]
mod record;
#[path = "remote_e2e/main.rs"]
mod remote;
#[path = "render_e2e.rs"]
mod render;
#[path = "sessions_e2e.rs"]
mod sessions;
#[path = "steps_e2e.rs"]
mod steps;
#[path = "stopped_daemon_e2e.rs"]
mod stopped_daemon;
#[path = "styled_e2e.rs"]
mod styled;
#[path = "textual_e2e/main.rs"]
mod textual;
#[path = "waits_e2e.rs"]
mod waits;
#[path = "watch_e2e.rs"]
mod watch;
#[path = "watch_browser_e2e.rs"]
mod watch_browser;
