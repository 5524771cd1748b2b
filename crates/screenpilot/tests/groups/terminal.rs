//! Programs on ptys only (bash, vim, python3, sqlite3, tmux to compare with), and the Python venv
//! of the MCP client and the Textual apps.

#[path = "../abuse_limits_e2e.rs"]
mod abuse_limits;
#[path = "../economy_e2e.rs"]
mod economy;
#[path = "../images_e2e.rs"]
mod images;
#[path = "../install_e2e.rs"]
mod install;
#[path = "../limits_e2e.rs"]
mod limits;
#[path = "../mcp_e2e.rs"]
mod mcp;
#[path = "../render_e2e.rs"]
mod render;
#[path = "../sessions_e2e.rs"]
mod sessions;
#[path = "../stopped_daemon_e2e.rs"]
mod stopped_daemon;
#[path = "../styled_e2e.rs"]
mod styled;
#[path = "../survival_e2e.rs"]
mod survival;
#[path = "../textual_e2e/main.rs"]
mod textual;
#[path = "../waits_e2e.rs"]
mod waits;
