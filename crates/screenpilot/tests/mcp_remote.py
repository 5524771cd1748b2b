"""`screenpilot mcp --host A --host B` driven by the official MCP Python SDK: sessions on two hosts from
one MCP server, addressed as HOST/SID, listed together, and a long wait on a host cancelled by the client.

Usage: mcp_remote.py SCREENPILOT_BINARY HOST_A HOST_B   (the hosts as --host takes them, named a and b;
SCREENPILOT_SSH and the rest come from the environment). Prints one JSON summary; exits non-zero on a
failure.
"""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

STEP_LIMIT_S = 60


class Failure(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Failure(what)


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def call_ok(session: ClientSession, tool: str, args: dict):
    with anyio.fail_after(STEP_LIMIT_S):
        result = await session.call_tool(tool, args)
    check(not result.is_error, f"{tool} {args}: {text_of(result)}")
    return result


async def flow(session: ClientSession) -> dict:
    facts: dict = {}
    for host in ("a", "b"):
        spawned = await call_ok(
            session,
            "spawn",
            {"cmd": "bash --norc --noprofile", "sid": f"{host}/sh", "env": {"PS1": "$ "}, "until": {"regex": r"^\$"}},
        )
        check(spawned.structured_content["sid"] == f"{host}/sh", f"spawn on {host}: {spawned.structured_content}")
        sent = await call_ok(
            session,
            "send",
            {"sid": f"{host}/sh", "text": f"echo on-{host}-$((6*7))", "keys": ["Enter"], "until": {"regex": f"^on-{host}-42$"}},
        )
        check(f"on-{host}-42" in text_of(sent), f"send on {host}: {text_of(sent)}")
    listed = await call_ok(session, "list", {})
    sids = sorted(s["sid"] for s in listed.structured_content["sessions"])
    check(sids == ["a/sh", "b/sh"], f"list: {sids}")
    facts["listed"] = text_of(listed)
    # Without a host, a new session's place is asked for.
    ambiguous = await session.call_tool("spawn", {"cmd": "cat"})
    check(ambiguous.is_error and "NAME/SID" in text_of(ambiguous), f"spawn without a host: {text_of(ambiguous)}")

    # A long wait on host b, cancelled by the client once it runs.
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    scope = anyio.CancelScope()
    outcome: dict = {}

    async def waiter() -> None:
        with scope:
            await session.call_tool(
                "send",
                {"sid": "b/sh", "until": {"regex": "^never-shows$"}, "timeout_ms": 600000},
                progress_callback=on_progress,
            )
            outcome["returned"] = True

    async with anyio.create_task_group() as group:
        group.start_soon(waiter)
        with anyio.fail_after(STEP_LIMIT_S):
            await started.wait()
        scope.cancel()
    check("returned" not in outcome, "the cancelled wait returned")
    again = await call_ok(session, "send", {"sid": "b/sh", "text": "echo after", "keys": ["Enter"], "until": {"regex": "^after$"}})
    facts["after_cancel"] = "after" in text_of(again)
    for host in ("a", "b"):
        await call_ok(session, "close", {"sid": f"{host}/sh"})
    return facts


async def main() -> int:
    binary, host_a, host_b = sys.argv[1:4]
    server = StdioServerParameters(
        command=binary, args=["mcp", "--host", f"a={host_a}", "--host", f"b={host_b}"], env=dict(os.environ)
    )
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            facts = await flow(session)
    print(json.dumps({"ok": True, **facts}))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(anyio.run(main))
    except Failure as failure:
        print(json.dumps({"ok": False, "failure": str(failure)}))
        sys.exit(1)
