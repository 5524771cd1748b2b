"""Drive an installed `screenpilot mcp` with the official MCP Python SDK (stdio), as a host would.

Usage: packages_client.py COMMAND [ARG...]

COMMAND is the `screenpilot` an install put on PATH (the npm launcher, the wheel's executable, ...);
the server runs as `COMMAND [ARG...] mcp` with this process's environment (so $PATH and
$SCREENPILOT_DIR are the caller's). Flow: initialize, tools/list, spawn bash, wait_for its output,
close. Prints one JSON summary on stdout; exits non-zero on any failure.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

STEP_LIMIT_S = 30


def check(condition: bool, what: str) -> None:
    if not condition:
        raise AssertionError(what)


async def flow(command: str, args: list[str], workdir: str, errlog) -> dict:
    server = StdioServerParameters(command=command, args=[*args, "mcp"], env=dict(os.environ), cwd=workdir)
    facts: dict = {}
    async with stdio_client(server, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(STEP_LIMIT_S):
                init = await session.initialize()
            check(init.server_info.name == "screenpilot", f"server name {init.server_info.name!r}")
            facts["server"] = f"{init.server_info.name} {init.server_info.version}"
            facts["protocol_version"] = init.protocol_version
            with anyio.fail_after(STEP_LIMIT_S):
                listed = await session.list_tools()
            names = {t.name for t in listed.tools}
            check({"spawn", "send", "close"} <= names, f"tools/list lacks spawn/send/close: {sorted(names)}")
            facts["tools"] = len(listed.tools)
            # One call: start the program and wait until its output shows.
            with anyio.fail_after(STEP_LIMIT_S):
                waited = await session.call_tool(
                    "spawn",
                    {"cmd": "bash --norc --noprofile -c 'echo packaged-$((6*7)); sleep 30'", "sid": "pkg",
                     "until": {"regex": "^packaged-42$"}, "timeout_ms": 10000},
                )
            check(not waited.is_error, f"spawn failed: {waited.content}")
            until = (waited.structured_content or {}).get("until") or {}
            check(until.get("held") == "regex", f"spawn's until did not hold: {waited.content}")
            facts["waited"] = True
            with anyio.fail_after(STEP_LIMIT_S):
                closed = await session.call_tool("close", {"sid": "pkg"})
            check(not closed.is_error, f"close failed: {closed.content}")
            facts["closed"] = True
    return facts


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    command, args = sys.argv[1], sys.argv[2:]
    with tempfile.TemporaryDirectory(prefix="sp-pkg-client-") as workdir:
        errlog_path = os.path.join(workdir, "server.stderr")
        try:
            with open(errlog_path, "w") as errlog:
                facts = anyio.run(flow, command, args, workdir, errlog)
        except BaseException:
            traceback.print_exc()
            sys.stderr.write("server stderr:\n" + open(errlog_path).read())
            sys.exit(1)
    print(json.dumps({"ok": True, **facts}))


if __name__ == "__main__":
    main()
