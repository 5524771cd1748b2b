"""Drive `screenpilot mcp` with the official MCP Python SDK: a real client that nobody here wrote.

Usage: mcp_client.py SCREENPILOT_BINARY [--transport stdio|http|both]

Runs one agent-like flow over stdio and/or loopback streamable HTTP: initialize, list tools, spawn bash,
send a line, wait for its output, snapshot, screenshot (PNG image content, decoded with the stdlib), tool
errors, cancellation of a long wait, close. Over stdio it then calls every other listed tool at least once
on a real session, so every tool's structuredContent is checked against its outputSchema, the compact
one listed by default and the exact one of `--output-schemas full` (the summary's `validated_outputs`
and `validated_full_outputs`, which tests/mcp_e2e.rs compares with `listed_tools`). Uses $SCREENPILOT_DIR when set
(else a temp dir whose daemon it stops at the end). Prints one JSON summary on stdout; exits non-zero on
any failure.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request
import zlib
from pathlib import Path

import anyio
import httpx2
import jsonschema
from mcp import Client, ClientSession, StdioServerParameters
from mcp import types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TOOLS = {
    "spawn", "list", "alive", "close", "resize", "send_keys", "send_line", "type", "mouse", "snapshot",
    "screenshot", "wait_for", "expect", "wait_change", "wait_visual_change", "wait_ready", "wait_exit",
    "textual_run", "desktop_start", "computer", "record", "watch", "wait", "save_test",
}
# The classic tools (the seed's names and shapes) with the Textual and desktop ones: every tool.
PROFILES = ["--tools", "classic,textual,desktop"]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_PLACEHOLDER = "<attached as image content>"
# Bound on every step, so a broken server fails the test instead of hanging it.
STEP_LIMIT_S = 30
# A cancelled wait must end at least this fast (the wait itself would run 60 s).
CANCEL_LIMIT_S = 5


class Failure(Exception):
    pass


def check(condition: bool, what: str) -> None:
    if not condition:
        raise Failure(what)


def texts(result) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


def images(result) -> list:
    return [c for c in result.content if getattr(c, "type", None) == "image"]


def decode_png(data: bytes) -> tuple[int, int]:
    """Check a PNG end to end with the stdlib (signature, chunk CRCs, IHDR, inflated IDAT size)."""
    check(data.startswith(PNG_SIGNATURE), "screenshot: image does not start with the PNG signature")
    pos, width, height, channels, depth, idat = 8, 0, 0, 0, 0, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        check(zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"screenshot: bad CRC in chunk {kind!r}")
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(colour, 0)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    check(width > 0 and height > 0 and channels > 0, f"screenshot: IHDR says {width}x{height}")
    raw = zlib.decompress(idat)
    row_bytes = 1 + (width * channels * depth + 7) // 8
    check(len(raw) == height * row_bytes, "screenshot: image data does not match the IHDR size")
    return width, height


# Every tool's outputSchema, once listed (the compact one `screenpilot mcp` lists by default), and its
# exact one (`--output-schemas full`); each successful result's structuredContent is checked against
# both with a JSON Schema Draft 2020-12 validator (not only by the SDK's own check).
OUTPUT_SCHEMAS: dict[str, dict] = {}
FULL_OUTPUT_SCHEMAS: dict[str, dict] = {}
VALIDATED: set[str] = set()
VALIDATED_FULL: set[str] = set()
# Most schema objects in a compact outputSchema (MOST_SUBSCHEMAS in src/mcp/output_schemas.rs): what
# keeps SDK 1.x's metaschema check of each result under 2 ms.
MOST_SUBSCHEMAS = 4
SUBSCHEMA_ONE = {"additionalProperties", "unevaluatedProperties", "items", "additionalItems", "unevaluatedItems",
                 "contains", "propertyNames", "not", "if", "then", "else"}
SUBSCHEMA_MAPS = {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
SUBSCHEMA_LISTS = {"anyOf", "oneOf", "allOf", "prefixItems"}


def subschemas(schema) -> int:
    """Schema objects in a schema, itself included: what the metaschema check walks."""
    if not isinstance(schema, dict):
        return 1
    count = 1
    for key, value in schema.items():
        if key in SUBSCHEMA_MAPS and isinstance(value, dict):
            count += sum(subschemas(v) for v in value.values())
        elif key in SUBSCHEMA_LISTS and isinstance(value, list):
            count += sum(subschemas(v) for v in value)
        elif key in SUBSCHEMA_ONE:
            count += subschemas(value)
    return count


def remember_output_schemas(tools) -> None:
    for tool in tools:
        schema = tool.output_schema
        check(isinstance(schema, dict), f"{tool.name}: no outputSchema")
        check(schema.get("type") == "object", f"{tool.name}: outputSchema is not an object")
        check(subschemas(schema) <= MOST_SUBSCHEMAS,
              f"{tool.name}: the default outputSchema has {subschemas(schema)} subschemas: {schema}")
        jsonschema.Draft202012Validator.check_schema(schema)
        OUTPUT_SCHEMAS[tool.name] = schema


def remember_full_output_schemas(binary: str, env: dict) -> None:
    """Every tool's exact outputSchema, as `screenpilot mcp --output-schemas full` lists it (raw
    JSON-RPC over the pipes: no SDK needed to read a list)."""
    argv = [binary, "mcp", "--tools", "terminal,textual,desktop,classic", "--output-schemas", "full"]
    server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
    try:
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "mcp_client", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        ):
            server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
        listed = None
        while listed is None:
            line = server.stdout.readline()
            check(bool(line), "--output-schemas full: the server closed its stdout before tools/list")
            message = json.loads(line)
            if message.get("id") == 2:
                listed = message["result"]["tools"]
    finally:
        server.stdin.close()
        server.wait(timeout=STEP_LIMIT_S)
    for tool in listed:
        schema = tool.get("outputSchema")
        check(isinstance(schema, dict) and schema.get("type") == "object", f"{tool['name']}: no full outputSchema")
        jsonschema.Draft202012Validator.check_schema(schema)
        FULL_OUTPUT_SCHEMAS[tool["name"]] = schema


def validate_output(tool: str, result) -> None:
    if result.is_error and not (result.structured_content or {}).get("sid"):
        return  # an error answer ({ok: false, error}) is not the tool's output
    for schemas, validated, which in ((OUTPUT_SCHEMAS, VALIDATED, "outputSchema"),
                                      (FULL_OUTPUT_SCHEMAS, VALIDATED_FULL, "the full outputSchema")):
        schema = schemas.get(tool)
        if schema is None:
            continue
        errors = sorted(
            jsonschema.Draft202012Validator(schema).iter_errors(result.structured_content),
            key=lambda e: list(e.path),
        )
        check(not errors, f"{tool}: structuredContent does not match {which}: {[e.message for e in errors[:3]]}")
        validated.add(tool)


async def call(session: ClientSession, tool: str, args: dict, **kw):
    with anyio.fail_after(STEP_LIMIT_S):
        result = await session.call_tool(tool, args, **kw)
    validate_output(tool, result)
    return result


async def call_ok(session: ClientSession, tool: str, args: dict, **kw):
    result = await call(session, tool, args, **kw)
    check(not result.is_error, f"{tool}: unexpected tool error: {texts(result)}")
    check(isinstance(result.structured_content, dict), f"{tool}: no structuredContent")
    check(result.structured_content.get("ok") is True, f"{tool}: ok is not true")
    return result


async def call_error(session: ClientSession, tool: str, args: dict, must_mention: str) -> str:
    result = await call(session, tool, args)
    check(result.is_error is True, f"{tool} {args}: expected isError, got {texts(result)}")
    text = " ".join(texts(result))
    check(must_mention in text, f"{tool}: error text does not name {must_mention!r}: {text}")
    return text


def cli_sessions(binary: str, env: dict) -> list[str]:
    """The sessions the CLI sees: MCP and CLI are clients of one daemon."""
    out = subprocess.run(
        [binary, "--json", "list"], env=env, capture_output=True, text=True, timeout=STEP_LIMIT_S
    )
    check(out.returncode == 0, f"screenpilot list failed: {out.stderr}")
    return [s["sid"] for s in json.loads(out.stdout)["sessions"]]


async def flow(session: ClientSession, sid: str, binary: str, env: dict, workdir: Path) -> dict:
    """The agent's loop, with every check the issue asks for. Returns facts for the summary."""
    facts: dict = {}
    with anyio.fail_after(STEP_LIMIT_S):
        init = await session.initialize()
    check(init.server_info.name == "screenpilot", f"server name is {init.server_info.name!r}")
    check(bool(init.instructions) and "spawn" in init.instructions, "no instructions")
    facts["protocol_version"] = init.protocol_version

    with anyio.fail_after(STEP_LIMIT_S):
        listed = await session.list_tools()
    names = {t.name for t in listed.tools}
    check(TOOLS <= names, f"missing tools: {sorted(TOOLS - names)}")
    remember_output_schemas(listed.tools)
    for tool in listed.tools:
        check(bool(tool.description), f"{tool.name}: no description")
        check(tool.input_schema.get("type") == "object", f"{tool.name}: schema is not an object")
    listing = listed.model_dump_json(by_alias=True, exclude_none=True)
    facts["tools"] = len(listed.tools)
    facts["listed_tools"] = sorted(names)
    facts["tools_list_bytes"] = len(listing.encode())
    facts["tools_list_tokens_est"] = len(listing.encode()) // 4

    # No cwd given: the server fills in its own directory (the daemon needs an absolute one).
    spawned = await call_ok(
        session, "spawn", {"cmd": "bash --norc --noprofile", "sid": sid, "env": {"PS1": "$ "}}
    )
    check(spawned.structured_content["sid"] == sid, "spawn: wrong sid")
    listed_sessions = (await call_ok(session, "list", {})).structured_content["sessions"]
    mine = [s for s in listed_sessions if s["sid"] == sid]
    check(len(mine) == 1, f"list: {sid} missing")
    check(mine[0]["cwd"] == str(workdir), f"spawn: cwd {mine[0]['cwd']!r}, expected {workdir}")
    check(sid in cli_sessions(binary, env), "the CLI does not see the session the MCP client opened")

    await call_ok(session, "send_line", {"sid": sid, "text": "echo $((6*7))"})
    waited = await call_ok(session, "wait_for", {"sid": sid, "pattern": "^42$", "timeout_ms": 10000})
    check(waited.structured_content["matched"] is True, "wait_for: not matched")
    header = texts(waited)[0].splitlines()[0]
    check(f"sid={sid}" in header and "matched=true" in header, f"wait_for: header is {header!r}")

    snap = await call_ok(session, "snapshot", {"sid": sid})
    check(re.search(r"^42$", snap.structured_content["text"], re.M) is not None, "snapshot: no 42")
    check("42" in texts(snap)[0], "snapshot: text content lacks the screen")

    # A timeout is a result, not an error.
    quiet = await call_ok(session, "wait_for", {"sid": sid, "pattern": "^never$", "timeout_ms": 50})
    check(quiet.structured_content["matched"] is False, "wait_for timeout: matched is not false")

    shot = await call_ok(session, "screenshot", {"sid": sid})
    pictures = images(shot)
    check(len(pictures) == 1, f"screenshot: {len(pictures)} image contents")
    check(pictures[0].mime_type == "image/png", f"screenshot: mime type {pictures[0].mime_type}")
    width, height = decode_png(base64.b64decode(pictures[0].data))
    check(shot.structured_content.get("png") == PNG_PLACEHOLDER, "screenshot: base64 left in structuredContent")
    check(
        (shot.structured_content.get("width"), shot.structured_content.get("height")) == (width, height),
        "screenshot: width/height differ from the PNG",
    )
    check(not any("iVBOR" in t for t in texts(shot)), "screenshot: base64 PNG in the text content")
    facts["screenshot"] = f"{width}x{height}"

    # Tool-level failures are results with isError and the field named, never protocol errors.
    facts["bad_regex"] = await call_error(session, "wait_for", {"sid": sid, "pattern": "("}, "pattern")
    facts["unknown_sid"] = await call_error(session, "snapshot", {"sid": "no-such-session"}, "sid")
    await call_error(session, "no_such_tool", {}, "no_such_tool")
    await call_error(session, "resize", {"sid": sid, "cols": "wide", "rows": 5}, "resize")

    facts["cancel"] = await cancel_long_wait(session, sid)

    # The daemon is healthy after the cancellation: it answers and still has the session.
    after = await call_ok(session, "list", {})
    check(any(s["sid"] == sid for s in after.structured_content["sessions"]), "list after cancel: sid gone")
    await call_ok(session, "send_line", {"sid": sid, "text": "echo after-$((2*3))"})
    again = await call_ok(session, "wait_for", {"sid": sid, "pattern": "^after-6$", "timeout_ms": 10000})
    check(again.structured_content["matched"] is True, "wait_for after cancel: not matched")

    closed = await call_ok(session, "close", {"sid": sid})
    check(closed.structured_content["sid"] == sid, "close: wrong sid")
    check(sid not in cli_sessions(binary, env), "close: the CLI still lists the session")
    return facts


async def beyond_terminals(session: ClientSession, workdir: Path) -> dict:
    """textual_run, desktop_start and computer through the same MCP client: each tool a model would call."""
    facts: dict = {}
    # textual_run with the seed's relative app path: the server resolves it against its own directory.
    shutil.copy(FIXTURES / "textual" / "counter.py", workdir / "counter.py")
    updates: list[str] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append(message or "")

    ran = await call_ok(
        session,
        "textual_run",
        {
            "app": "counter.py",
            "python": sys.executable,
            "actions": [{"press": "tab"}, {"click": "#inc"}, {"click": "#inc"}],
            "query": ["#label"],
            "screenshot": True,
        },
        progress_callback=on_progress,
    )
    screen = ran.structured_content["text"]
    check("count: 2" in screen, f"textual_run: two clicks did not count to 2: {screen!r}")
    check("count: 2" in texts(ran)[0], "textual_run: the text content lacks the screen")
    check(len(updates) >= 3, f"textual_run: {len(updates)} progress updates for 3 actions")
    svg = ran.structured_content["details"]["screenshot"]
    check(Path(svg).parent == workdir and Path(svg).exists(), f"textual_run: screenshot not beside the app: {svg}")
    facts["textual_progress_updates"] = len(updates)

    # computer on a terminal session: pixels of the rendered screen map to cells.
    await call_ok(session, "spawn", {"cmd": "cat", "sid": "mcp-cat"})
    typed = await call_ok(session, "computer", {"sid": "mcp-cat", "action": {"type": "type", "text": "pixels\n"}})
    check(len(images(typed)) == 1, "computer on a terminal: no screenshot")
    seen = await call_ok(session, "wait_for", {"sid": "mcp-cat", "pattern": "^pixels$", "timeout_ms": 10000})
    check(seen.structured_content["matched"] is True, "computer on a terminal: typed text not on screen")
    off = await call(session, "computer", {"sid": "mcp-cat", "action": {"type": "click", "x": 99999, "y": 5}})
    check(off.is_error is True, "computer: an off-screen click is not an error")
    await call_ok(session, "close", {"sid": "mcp-cat"})

    # A private X desktop: started, seen, clicked, closed.
    started = await call_ok(session, "desktop_start", {"sid": "mcp-desk", "size": [640, 400]})
    check(started.structured_content["sid"] == "mcp-desk", "desktop_start: wrong sid")
    clicked = await call_ok(session, "computer", {"sid": "mcp-desk", "action": {"type": "click", "x": 320, "y": 200}})
    width, height = decode_png(base64.b64decode(images(clicked)[0].data))
    check((width, height) == (640, 400), f"computer on a desktop: screenshot is {width}x{height}")
    # act: the desktop's clipboard, set and read back (the daemon owns it after the call).
    await call_ok(session, "act", {"sid": "mcp-desk", "do": "clipboard", "text": "from-mcp"})
    held = await call_ok(session, "act", {"sid": "mcp-desk", "do": "clipboard"})
    check(held.structured_content.get("clipboard") == "from-mcp", f"act clipboard: {held.structured_content}")
    await call_ok(session, "close", {"sid": "mcp-desk"})
    facts["desktop_screenshot"] = f"{width}x{height}"
    return facts


async def every_other_tool(session: ClientSession, workdir: Path) -> dict:
    """The tools the flows above leave out, each called on a real session the simplest way that
    succeeds, so that its structuredContent is validated against its outputSchema too."""
    facts: dict = {}
    sid = "mcp-all"
    await call_ok(session, "spawn", {"cmd": "bash --norc --noprofile", "sid": sid, "env": {"PS1": "$ "}})
    alive = await call_ok(session, "alive", {"sid": sid})
    check(alive.structured_content["alive"] is True, "alive: bash is not alive")
    resized = await call_ok(session, "resize", {"sid": sid, "cols": 100, "rows": 30})
    check((resized.structured_content["cols"], resized.structured_content["rows"]) == (100, 30), "resize: size")

    cast = workdir / "every-tool.cast"
    started = await call_ok(session, "record", {"sid": sid, "action": "start", "path": str(cast), "force": True})
    check(started.structured_content["recording"] is True, "record start: not recording")

    # type writes without Enter; send_keys ends the line; expect races two patterns.
    await call_ok(session, "type", {"sid": sid, "text": "echo typed-$((1+1))"})
    await call_ok(session, "send_keys", {"sid": sid, "keys": ["Enter"]})
    raced = await call_ok(
        session, "expect", {"sid": sid, "patterns": ["^never$", "^typed-2$"], "timeout_ms": 10000}
    )
    check(raced.structured_content.get("index") == 1, f"expect: {raced.structured_content.get('index')!r}")

    # Baselines from a snapshot, then output: both change waits see it has already changed.
    before = (await call_ok(session, "snapshot", {"sid": sid})).structured_content
    await call_ok(session, "send_line", {"sid": sid, "text": "echo changed-$((3*3))"})
    changed = await call_ok(session, "wait_change", {"sid": sid, "hash": before["hash"], "timeout_ms": 10000})
    check(changed.structured_content["changed"] is True, "wait_change: not changed")
    seen = await call_ok(
        session, "wait_visual_change", {"sid": sid, "visual_hash": before["visual_hash"], "timeout_ms": 10000}
    )
    check(seen.structured_content["changed"] is True, "wait_visual_change: not changed")
    ready = await call_ok(session, "wait_ready", {"sid": sid, "marker": "^changed-9$", "max_wait_ms": 10000})
    check(ready.structured_content["reason"] == "MARKER", f"wait_ready: {ready.structured_content['reason']}")
    # The one wait of the lean tools, served beside the classic ones: an until, as send takes it.
    waited = await call_ok(session, "wait", {"sid": sid, "until": {"regex": "^changed-9$"}, "timeout_ms": 10000})
    check(waited.structured_content["until"]["held"] == "regex", f"wait: {waited.structured_content}")

    stopped = await call_ok(session, "record", {"sid": sid, "action": "stop"})
    check(stopped.structured_content["recording"] is False, "record stop: still recording")
    check(cast.stat().st_size > 0, "record: the cast file is empty")
    await call_ok(session, "close", {"sid": sid})

    # mouse needs an app that turned mouse reporting on; the reporter prints what it received, quits
    # on "q", and wait_exit sees it go.
    reporter = "mcp-mouse"
    await call_ok(
        session,
        "spawn",
        {"argv": [sys.executable, str(FIXTURES / "input_reporter.py"), "--mouse"], "sid": reporter},
    )
    await call_ok(session, "wait_for", {"sid": reporter, "pattern": "^target: TARGET$", "timeout_ms": 10000})
    await call_ok(session, "mouse", {"sid": reporter, "action": "click", "text": "TARGET"})
    pressed = await call_ok(session, "wait_for", {"sid": reporter, "pattern": "^MOUSE press", "timeout_ms": 10000})
    check(pressed.structured_content["matched"] is True, "mouse: the app saw no press")
    await call_ok(session, "send_keys", {"sid": reporter, "keys": ["q"]})
    exited = await call_ok(session, "wait_exit", {"sid": reporter, "timeout_ms": 10000})
    check(exited.structured_content["exited"] is True, "wait_exit: the reporter did not exit")
    check(exited.structured_content.get("exit_code") == 0, f"wait_exit: {exited.structured_content}")
    await call_ok(session, "close", {"sid": reporter})

    # What was done to mcp-all, as a step file: its inputs, each with what it waited for.
    test_file = workdir / "every-tool.toml"
    test_file.unlink(missing_ok=True)
    saved = await call_ok(session, "save_test", {"file": str(test_file), "sids": [sid]})
    check(saved.structured_content["sessions"] == [sid], f"save_test: {saved.structured_content}")
    steps = test_file.read_text()
    for wanted in ['spawn = "bash --norc --noprofile"', 'resize = "100x30"', 'text = "echo typed-$((1+1))"',
                   'line = "echo changed-$((3*3))"', 'until = { regex = "^changed-9$" }', "close = true"]:
        check(wanted in steps, f"save_test: the file lacks {wanted!r}:\n{steps}")
    await call_error(session, "save_test", {"file": str(test_file)}, "already exists")

    # watch needs a person to look at the page; starting and stopping it is the whole result here.
    try:
        page = await call_ok(session, "watch", {})
        check(page.structured_content["running"] is True, "watch: not running")
        check((page.structured_content.get("url") or "").startswith("http://127.0.0.1:"), "watch: no loopback URL")
    finally:
        ended = await call_ok(session, "watch", {"stop": True})
    check(ended.structured_content["running"] is False, "watch stop: still running")
    return facts


async def cancel_long_wait(session: ClientSession, sid: str) -> dict:
    """Start a 60 s wait, cancel it once the server reports progress, and time how fast it ends."""
    started = anyio.Event()
    messages: list[str] = []
    outcome: dict = {}

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")
        started.set()

    scope = anyio.CancelScope()

    async def waiter() -> None:
        with scope:
            await session.call_tool(
                "wait_for",
                {"sid": sid, "pattern": "^this-never-appears$", "timeout_ms": 60000},
                progress_callback=on_progress,
            )
            outcome["returned"] = True

    async with anyio.create_task_group() as group:
        group.start_soon(waiter)
        with anyio.fail_after(STEP_LIMIT_S):
            await started.wait()
        cancelled_at = time.monotonic()
        scope.cancel()
    took = time.monotonic() - cancelled_at
    check("returned" not in outcome, "cancel: the wait returned a result instead of being cancelled")
    check(took < CANCEL_LIMIT_S, f"cancel: took {took:.2f} s")
    check(any(f"waiting for /^this-never-appears$/ on {sid}" in m for m in messages), f"progress: {messages}")
    return {"seconds": round(took, 3), "progress": messages[0]}


def cancel_logged(log: str) -> bool:
    """The server's own record that it cancelled the daemon request (so the wait really stopped there)."""
    return re.search(r"wait_for cancelled by the MCP client; daemon request \d+ cancelled", log) is not None


async def run_stdio(binary: str, env: dict, root: Path) -> dict:
    workdir = root / "stdio-cwd"
    workdir.mkdir(exist_ok=True)
    errlog_path = root / "mcp-stdio.stderr"
    server = StdioServerParameters(command=binary, args=["mcp", *PROFILES], env=env, cwd=str(workdir))
    with open(errlog_path, "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                facts = await flow(session, "mcp-stdio", binary, env, workdir)
                facts["beyond_terminals"] = await beyond_terminals(session, workdir)
                facts["every_other_tool"] = await every_other_tool(session, workdir)
    # The server exits when its stdin closes, after handing running calls' cancellation to the daemon.
    log = errlog_path.read_text()
    check(cancel_logged(log), f"stdio: no record that the daemon wait was cancelled; stderr: {log!r}")
    return facts


async def run_stdio_modern(binary: str, env: dict, root: Path) -> dict:
    """The SDK's high-level Client in "auto" mode: it negotiates the newest protocol (2026-07-28,
    per-request metadata instead of a handshake) and falls back to initialize."""
    workdir = root / "stdio-cwd"
    workdir.mkdir(exist_ok=True)
    server = StdioServerParameters(command=binary, args=["mcp", *PROFILES], env=env, cwd=str(workdir))
    sid = "mcp-modern"
    with open(root / "mcp-modern.stderr", "w") as errlog:
        async with Client(stdio_client(server, errlog=errlog), mode="auto") as client:
            version = client.session.protocol_version
            listed = await client.list_tools()
            check(TOOLS <= {t.name for t in listed.tools}, "modern: tools missing")
            await call_ok(client, "spawn", {"cmd": "bash --norc --noprofile", "sid": sid, "env": {"PS1": "$ "}})
            await call_ok(client, "send_line", {"sid": sid, "text": "echo $((6*7))"})
            waited = await call_ok(client, "wait_for", {"sid": sid, "pattern": "^42$", "timeout_ms": 10000})
            check(waited.structured_content["matched"] is True, "modern: wait_for not matched")
            await call_error(client, "wait_for", {"sid": sid, "pattern": "("}, "pattern")
            await call_ok(client, "close", {"sid": sid})
    return {"protocol_version": version}


async def run_stdio_secret(binary: str, env: dict, root: Path) -> dict:
    """A client that takes URL-mode elicitation (MCP 2025-11-25): when a program waits for a password,
    the server asks it to open the watch page at that session; the person (here, this callback speaking
    the page's WebSocket as the page does) types the password there, and the model never sees it."""
    import websocket  # websocket-client, in the test venv

    workdir = root / "secret-cwd"
    workdir.mkdir(exist_ok=True)
    password = "mcp" + "-pw-55"
    asked: dict = {}
    typed = anyio.Event()

    async def on_elicit(context, params):
        asked.update(mode=params.mode, url=params.url, message=params.message)
        fragment = params.url.split("#", 1)[1]
        fields = dict(pair.split("=", 1) for pair in fragment.split("&"))
        address = params.url.split("//", 1)[1].split("/", 1)[0]
        page = websocket.create_connection(
            f"ws://{address}/ws/session/{fields['sid']}", timeout=STEP_LIMIT_S,
            subprotocols=["screenpilot.watch", "bearer." + fields["token"]])
        try:
            hello = json.loads(page.recv())
            check(hello.get("control") is True, f"the page offered gives no control: {hello}")
            page.send_binary((password + "\r").encode())
            # The person keeps the page open until the program answers there.
            shown = b""
            while b"secret-ok" not in shown:
                frame = page.recv()
                if isinstance(frame, bytes):
                    shown += frame
        finally:
            page.close()
        typed.set()
        return types.ElicitResult(action="accept")

    server = StdioServerParameters(command=binary, args=["mcp"], env=env, cwd=str(workdir))
    script = ("import getpass; p = getpass.getpass('pw: '); "
              f"print('secret-ok' if p == {password[:3]!r} + {password[3:]!r} else 'bad')")
    read_texts = []
    with open(root / "mcp-secret.stderr", "w") as errlog:
        async with stdio_client(server, errlog=errlog) as (read, write):
            async with ClientSession(read, write, elicitation_callback=on_elicit) as session:
                await session.initialize()
                spawned = await call_ok(session, "spawn", {"cmd": f"python3 -c \"{script}\"", "sid": "pw",
                                                           "until": {"input": True}})
                read_texts += texts(spawned)
                check("input=secret" in texts(spawned)[0], f"no input=secret: {texts(spawned)}")
                with anyio.fail_after(STEP_LIMIT_S):
                    await typed.wait()
                ended = await call_ok(session, "send", {"sid": "pw", "until": {"exit": True}})
                read_texts += texts(ended)
                check(any("secret-ok" in t for t in texts(ended)), f"the program did not get it: {texts(ended)}")
    check(asked.get("mode") == "url" and "&sid=pw" in asked.get("url", ""), f"elicitation: {asked}")
    check(not any(password in t for t in read_texts), "the password is in what the model read")
    return {"elicitation": {"mode": asked["mode"], "message": asked["message"]}}


class HttpServer:
    """`screenpilot mcp --http 127.0.0.1:0`: the address and token come from its stderr."""

    def __init__(self, binary: str, env: dict, cwd: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [binary, "mcp", *PROFILES, "--http", "127.0.0.1:0", *extra],
            env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True,
        )
        self.lines: list[str] = []
        self.url = self.token = None
        assert self.proc.stderr is not None
        for line in self.proc.stderr:  # blocks on the server's own output, no polling
            self.lines.append(line)
            if m := re.search(r"bearer token (\S+)", line):
                self.token = m.group(1)
            if m := re.search(r"listening on (http://\S+)", line):
                self.url = m.group(1)
                break
        check(self.url is not None, f"http: server did not say where it listens: {self.lines}")
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=STEP_LIMIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise Failure("http: server did not stop on SIGTERM")
        self.reader.join(timeout=STEP_LIMIT_S)
        return "".join(self.lines)


def raw_post(url: str, token: str | None) -> int:
    """One initialize POST with urllib; returns the HTTP status."""
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
    }).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=STEP_LIMIT_S) as response:
            return response.status
    except urllib.error.HTTPError as e:
        return e.code


async def run_http(binary: str, env: dict, root: Path) -> dict:
    workdir = root / "http-cwd"
    workdir.mkdir(exist_ok=True)
    facts: dict = {}
    server = HttpServer(binary, env, workdir)
    try:
        check(server.token is not None, "http: no generated token on stderr")
        token_file = Path(env["SCREENPILOT_DIR"]) / "mcp-http.token"
        check(token_file.read_text().strip() == server.token, "http: token file differs from stderr")
        check(token_file.stat().st_mode & 0o777 == 0o600, "http: token file is not mode 0600")

        facts["no_token_status"] = raw_post(server.url, None)
        facts["wrong_token_status"] = raw_post(server.url, "wrong" + server.token)
        check(facts["no_token_status"] == 401, f"http: no token gave {facts['no_token_status']}")
        check(facts["wrong_token_status"] == 401, f"http: wrong token gave {facts['wrong_token_status']}")
        check(raw_post(server.url, server.token) == 200, "http: the right token is refused")

        # The SDK client without the token cannot even initialize.
        refused = False
        async with create_mcp_http_client() as bare:
            async with streamable_http_client(server.url, http_client=bare) as (read, write):
                async with ClientSession(read, write) as session:
                    try:
                        with anyio.fail_after(STEP_LIMIT_S):
                            await session.initialize()
                    except Exception:  # the SDK maps the 401 to an error response
                        refused = True
        check(refused, "http: the SDK initialized without a token")

        headers = {"Authorization": f"Bearer {server.token}"}
        async with create_mcp_http_client(headers=headers) as authed:
            async with streamable_http_client(server.url, http_client=authed) as (read, write):
                async with ClientSession(read, write) as session:
                    facts.update(await flow(session, "mcp-http", binary, env, workdir))
    finally:
        log = server.stop()
    check(cancel_logged(log), f"http: no record that the daemon wait was cancelled; stderr: {log!r}")

    # A token from --token-file is the one required.
    token_path = root / "given.token"
    token_path.write_text("given-token-0123456789\n")
    given = HttpServer(binary, env, workdir, "--token-file", str(token_path))
    try:
        check(given.token is None, "http: a token was generated despite --token-file")
        check(raw_post(given.url, "given-token-0123456789") == 200, "http: --token-file token refused")
        check(raw_post(given.url, server.token) == 401, "http: old token accepted with --token-file")
    finally:
        given.stop()

    # Never on a non-loopback address.
    refused_bind = subprocess.run(
        [binary, "mcp", "--http", "0.0.0.0:0"], env=env, capture_output=True, text=True, timeout=STEP_LIMIT_S
    )
    check(refused_bind.returncode != 0, "http: 0.0.0.0 was accepted")
    check("not a loopback address" in refused_bind.stderr, f"http: refusal says {refused_bind.stderr!r}")
    return facts


def innermost(error: BaseException) -> BaseException:
    """The first real exception inside the task-group wrappers anyio adds."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=os.environ.get("SCREENPILOT_BIN_PATH"))
    parser.add_argument("--transport", choices=["stdio", "http", "both", "secret"], default="both")
    args = parser.parse_args()
    if not args.binary:
        print("usage: mcp_client.py SCREENPILOT_BINARY [--transport stdio|http|both]", file=sys.stderr)
        return 2

    args.binary = str(Path(args.binary).resolve())
    own_dir = "SCREENPILOT_DIR" not in os.environ
    root = Path(tempfile.mkdtemp(prefix="screenpilot-mcp-test-"))
    daemon_dir = root / "daemon" if own_dir else Path(os.environ["SCREENPILOT_DIR"])
    env = {"SCREENPILOT_DIR": str(daemon_dir), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for key in ("HOME", "USER", "LANG"):
        if key in os.environ:
            env[key] = os.environ[key]

    summary: dict = {"ok": False, "binary": args.binary}
    try:
        remember_full_output_schemas(args.binary, env)
        if args.transport in ("stdio", "both"):
            summary["stdio"] = anyio.run(run_stdio, args.binary, env, root)
            summary["stdio_auto_mode"] = anyio.run(run_stdio_modern, args.binary, env, root)
        if args.transport in ("http", "both"):
            summary["http"] = anyio.run(run_http, args.binary, env, root)
        if args.transport == "secret":
            summary["secret"] = anyio.run(run_stdio_secret, args.binary, env, root)
        summary["validated_outputs"] = sorted(VALIDATED) if args.transport != "secret" else []
        summary["validated_full_outputs"] = sorted(VALIDATED_FULL) if args.transport != "secret" else []
        summary["ok"] = True
    except BaseException as e:  # noqa: BLE001 - every failure goes into the summary
        leaf = innermost(e)
        summary["error"] = f"{type(leaf).__name__}: {leaf}"
        summary["traceback"] = "".join(traceback.format_exception(leaf))
    finally:
        if own_dir:
            subprocess.run([args.binary, "daemon", "stop", "--end-sessions"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps(summary, indent=2))
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
