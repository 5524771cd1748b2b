//! Also Node 22 from npm (the npm packages, pi, the MCP Inspector, the agents' own CLIs).

#[path = "../agent_tuis/main.rs"]
mod agent_tuis;
#[path = "../mcp_schemas_e2e.rs"]
mod mcp_schemas;
#[path = "../packages_e2e.rs"]
mod packages;
#[path = "../pi_package_e2e.rs"]
mod pi_package;
