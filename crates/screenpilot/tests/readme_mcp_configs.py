"""The MCP client configs of docs/mcp.md, read from the page itself, run with the official MCP Python SDK.

Usage: readme_mcp_configs.py BINARY DOCS_MCP_MD OUT_JSON_CONFIG

Claude Code's `claude mcp add screenpilot -- /path/to/screenpilot mcp` (the command after `--`) and
Codex's `[mcp_servers.screenpilot]` TOML (command, args) each start the server with /path/to/screenpilot
replaced by BINARY; the SDK initializes, lists the tools and calls `list`. The Cursor / VS Code JSON is
written to OUT_JSON_CONFIG (with BINARY) for MCP Inspector, which reads such files (`--config`).
Prints one JSON summary on stdout; exits non-zero on any failure.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PLACEHOLDER = "/path/to/screenpilot"


def block_after(readme: str, lead: str, lang: str) -> str:
    """The first ```LANG block after the paragraph that starts with `lead`."""
    start = readme.index(f"\n{lead}")
    match = re.compile(rf"```{lang}\n(.*?)```", re.S).search(readme, start)
    assert match, f"no {lang} block after {lead!r}"
    return match.group(1)


async def serve(command: str, args: list[str]) -> dict:
    server = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    with anyio.fail_after(60):
        async with stdio_client(server) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                tools = (await session.list_tools()).tools
                listed = await session.call_tool("list", {})
                assert not listed.is_error, listed
                assert (listed.structured_content or {}).get("ok") is True, listed.structured_content
                return {"server": init.server_info.name, "tools": len(tools)}


def main() -> None:
    binary, readme_path, json_out = sys.argv[1:]
    readme = open(readme_path).read()
    summary = {}

    claude = block_after(readme, "Claude Code:", "sh").split()
    assert claude[:4] == ["claude", "mcp", "add", "screenpilot"] and "--" in claude, claude
    command, *args = claude[claude.index("--") + 1 :]
    assert command == PLACEHOLDER, command
    summary["claude"] = anyio.run(serve, binary, args)

    codex = tomllib.loads(block_after(readme, "Codex (", "toml"))["mcp_servers"]["screenpilot"]
    assert codex["command"] == PLACEHOLDER, codex
    summary["codex"] = anyio.run(serve, binary, codex["args"])

    cursor = json.loads(block_after(readme, "Cursor (", "json"))
    server = cursor["mcpServers"]["screenpilot"]
    assert server["command"] == PLACEHOLDER, server
    server["command"] = binary
    # MCP clients start stdio servers with a few variables only (HOME, PATH, ...): without this the
    # server would use the user's own daemon directory, and leave a daemon running there.
    assert "env" not in server, server
    server["env"] = {"SCREENPILOT_DIR": os.environ["SCREENPILOT_DIR"]}
    with open(json_out, "w") as out:
        json.dump(cursor, out)
    summary["cursor_args"] = server["args"]
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
