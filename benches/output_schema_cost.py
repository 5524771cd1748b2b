#!/usr/bin/env python3
"""What screenpilot's output schemas cost a validating MCP client: the official Python SDK checks every
tool result's structuredContent against the tool's outputSchema, on the client's CPU, on every call.
SDK 1.30 and SDK 2.x side by side, every tool of every profile, with the compact output schemas
`screenpilot mcp` lists by default and the exact ones of `--output-schemas full`.

Run: python3 benches/output_schema_cost.py [--calls N] [--binary PATH] [--profiles LIST] [--schemas LIST]
                                           [--sdks LIST] [--textual-python PATH] [--constructs]
                                           [--repeat R] [--json FILE]
     (after `cargo build --release -p screenpilot`; needs bash, python3 and Xvfb on PATH.) Each SDK runs
     in a venv of its own: .venv/mcp1 with mcp==1.30.0 and .venv/mcp2 with mcp==2.3.0 (the newest 2.x
     when this was written); a missing venv is made (`python3 -m venv .venv/mcpN`, then
     `.venv/mcpN/bin/pip install mcp==VERSION`). This script runs each measuring pass as a child
     process under that venv's python (`--worker`). Default binary: target/release/screenpilot, or
     target/debug/screenpilot when that one is newer (the run says which it took). textual_run starts
     its app with --textual-python (default: $SCREENPILOT_TEST_PYTHON, else python3), which needs
     textual.

Where the SDKs validate (mcp/client/session.py): SDK 1.30's `call_tool`, on every result that is not
isError, calls `_validate_tool_result`, which runs `jsonschema.validate(result.structuredContent,
output_schema, registry=Registry())`. `jsonschema.validate` checks the *schema itself* against the Draft
2020-12 metaschema (`cls.check_schema`) and builds a fresh validator before it walks the result, every
call, so the cost grows with the number of schema objects (subschemas) in outputSchema. SDK 2.x
(`validate_tool_result`) checks a schema once and keeps a compiled validator per tool.

What it does: a private daemon (SCREENPILOT_DIR a fresh temp dir, SCREENPILOT_MAX_SESSIONS=32 so ten
sessions fit, stopped with `screenpilot daemon stop --end-sessions` at the end); then, for each profile
(default = `screenpilot mcp`, terminal = `--tools terminal`, all = `--tools classic,textual,desktop`,
which serves the classic tools beside the Textual and desktop ones), each kind of output schema
(compact, the default; full, `--output-schemas full`) and each SDK, one pass: `screenpilot mcp` over
stdio through that SDK's ClientSession, validating as it does by default, and a workload that calls
every tool the profile lists --calls times on real sessions (a bash with PS1='$ ', python3 REPLs,
Xvfb desktops, the Textual counter fixture). A listed tool with no timed call is reported as an error.

Per call it records:
- call: wall time of `await session.call_tool(...)` (request, server, response, parsing, validation);
- client CPU: this thread's CPU time (time.thread_time) over that await: what the client itself spends
  on the call (the SDK's reading, parsing and validation; the event loop's share), whatever else the
  machine runs;
- validation: the CPU time of the SDK's own validation step inside the call (the method wrapped with a
  timer).
The table gives medians per call kind. --constructs adds the earlier construct experiment (SDK 1.30 only):
one result per tool validated against variants of its schema (inlined, type lists, one shape,
draft-07), with the verdicts compared on the result's mutations.
"""

import argparse
import asyncio
import copy
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURES = os.path.join(ROOT, "crates", "screenpilot", "tests", "fixtures")
SDKS = {"1": ("mcp1", "1.30.0"), "2": ("mcp2", "2.3.0")}
CALL_TIMEOUT_S = 60
PROFILES = {"default": [], "terminal": ["--tools", "terminal"], "all": ["--tools", "classic,textual,desktop"]}
SCHEMAS = {"compact": [], "full": ["--output-schemas", "full"]}
PS1 = "$ "


def venv_python(sdk):
    """The venv's python for SDK "1" or "2", making the venv when it is missing."""
    name, wanted = SDKS[sdk]
    venv = os.path.join(ROOT, ".venv", name)
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        print(f"making {venv} (python3 -m venv)", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", venv], check=True)
    has = subprocess.run([python, "-c", f"import importlib.metadata as m; assert m.version('mcp') == '{wanted}'"],
                         capture_output=True)
    if has.returncode != 0:
        print(f"installing mcp=={wanted} into {venv}", file=sys.stderr)
        subprocess.run([python, "-m", "pip", "install", "-q", f"mcp=={wanted}"], check=True)
    return python


def pick_binary(given):
    """The release binary, unless the debug one is newer (then that one, and why)."""
    if given:
        return given, "given with --binary"
    release = os.path.join(ROOT, "target", "release", "screenpilot")
    debug = os.path.join(ROOT, "target", "debug", "screenpilot")
    if os.path.exists(release) and os.path.exists(debug) and os.path.getmtime(debug) > os.path.getmtime(release):
        return debug, "target/debug/screenpilot: it is newer than target/release/screenpilot"
    if os.path.exists(release):
        return release, "target/release/screenpilot"
    if os.path.exists(debug):
        return debug, "target/debug/screenpilot: there is no release build"
    raise SystemExit("no screenpilot binary: cargo build --release -p screenpilot")


def ms_since(t0):
    return (time.perf_counter() - t0) * 1000.0


def cpu_ms_since(t0):
    """This thread's CPU time since t0 (time.thread_time()): what the client spends, whatever else the
    machine is running."""
    return (time.thread_time() - t0) * 1000.0


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def p95(xs):
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, -(-95 * len(s) // 100) - 1))]


def timed_median(fn, repeat):
    xs = []
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        xs.append(cpu_ms_since(t0))
    return median(xs)


# ----------------------------------------------------------------------------------------------------
# The client: whichever SDK this python has. call(tool, args) -> (structuredContent, is_error, text).


class SdkClient:
    """The SDK's ClientSession over stdio, validating as it does by default, each call timed."""

    def __init__(self, argv, env, log):
        self.argv, self.env, self.log = argv, env, log

    async def __aenter__(self):
        from contextlib import AsyncExitStack

        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self.stack = AsyncExitStack()
        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=self.env)
        read, write = await self.stack.enter_async_context(stdio_client(params, errlog=self.log))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        # Time the SDK's own validation step where it runs, by wrapping the method call_tool awaits
        # (SDK 1.x: _validate_tool_result; 2.x: validate_tool_result).
        name = "validate_tool_result" if hasattr(self.session, "validate_tool_result") else "_validate_tool_result"
        original = getattr(self.session, name)
        self.last_validation_ms = None

        async def timed_validation(tool, result):
            t0 = time.thread_time()
            try:
                return await original(tool, result)
            finally:
                self.last_validation_ms = cpu_ms_since(t0)

        setattr(self.session, name, timed_validation)
        await self.session.initialize()
        listed = await self.session.list_tools()
        self.tools = {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools}
        return self

    async def __aexit__(self, *exc):
        await self.stack.aclose()

    async def call(self, tool, args):
        """(wall ms, client CPU ms, validation CPU ms, structuredContent, is_error, text)"""
        from datetime import timedelta

        from importlib.metadata import version

        timeout = timedelta(seconds=CALL_TIMEOUT_S) if version("mcp").startswith("1.") else CALL_TIMEOUT_S
        self.last_validation_ms = None
        t0, c0 = time.perf_counter(), time.thread_time()
        result = await self.session.call_tool(tool, args, read_timeout_seconds=timeout)
        wall, cpu = ms_since(t0), cpu_ms_since(c0)
        sc = getattr(result, "structured_content", getattr(result, "structuredContent", None))
        err = bool(getattr(result, "is_error", getattr(result, "isError", False)))
        text = "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")
        return wall, cpu, self.last_validation_ms, sc, err, text


# ----------------------------------------------------------------------------------------------------
# The workload: every listed tool, each timed call kind a row of its own.


class Recorder:
    def __init__(self, client, prefix, workdir, textual_python):
        self.client, self.prefix, self.workdir, self.textual_python = client, prefix, workdir, textual_python
        self.rows = {}  # label -> {"tool", "wall_ms", "cpu_ms", "validation_ms", "instances", "errors", ...}

    def sid(self, name):
        return self.prefix + name

    def has(self, tool):
        return tool in self.client.tools

    async def untimed(self, tool, args):
        _, _, _, sc, err, text = await self.client.call(tool, args)
        if err:
            raise RuntimeError(f"{tool} {json.dumps(args)}: {text}")
        return sc

    async def timed(self, label, tool, args):
        wall, cpu, validation, sc, err, text = await self.client.call(tool, args)
        row = self.rows.setdefault(label, {"tool": tool, "wall_ms": [], "cpu_ms": [], "validation_ms": [],
                                           "instances": [], "errors": 0, "first_error": None})
        if err:
            row["errors"] += 1
            row["first_error"] = row["first_error"] or text[:200]
            return sc
        row["wall_ms"].append(wall)
        row["cpu_ms"].append(cpu)
        if validation is not None:
            row["validation_ms"].append(validation)
        if sc is not None and len(row["instances"]) < 3:
            row["instances"].append(sc)
        return sc


async def spawn_and_wait(r, sid, cmd, ready):
    """A session up and showing `ready`, with the profile's own tools (an until, or wait_for)."""
    if r.has("send"):
        await r.untimed("spawn", {"cmd": cmd, "sid": sid, "env": {"PS1": PS1}, "until": {"regex": ready}})
    else:
        await r.untimed("spawn", {"cmd": cmd, "sid": sid, "env": {"PS1": PS1}})
        await r.untimed("wait_for", {"sid": sid, "pattern": ready, "timeout_ms": 10000})


async def line_and_wait(r, sid, line, ready):
    if r.has("send"):
        await r.untimed("send", {"sid": sid, "text": line, "keys": ["Enter"], "until": {"regex": ready}})
    else:
        await r.untimed("send_line", {"sid": sid, "text": line})
        await r.untimed("wait_for", {"sid": sid, "pattern": ready, "timeout_ms": 10000})


async def sessions_work(r, n):
    """The tools every profile has (list, close, save_test) and the terminal ones it lists."""
    sh = r.sid("sh")
    await spawn_and_wait(r, sh, "bash --norc --noprofile", r"\$ $")
    for _ in range(n):
        await r.timed("list (1 session)", "list", {})
    if r.has("snapshot"):
        for _ in range(n):
            await r.timed("snapshot terminal", "snapshot", {"sid": sh})
        if r.has("send"):
            for _ in range(n):
                await r.timed("snapshot terminal (screen=full)", "snapshot", {"sid": sh, "screen": "full"})
    if r.has("screenshot"):
        for _ in range(n):
            await r.timed("screenshot terminal", "screenshot", {"sid": sh})
    if r.has("send"):
        for i in range(n):
            await r.timed("send text+Enter until regex", "send",
                          {"sid": sh, "text": f"echo tok{i}", "keys": ["Enter"], "until": {"regex": f"^tok{i}$"}})
    if r.has("run"):
        for i in range(n):
            await r.timed("run", "run", {"sid": sh, "command": f"echo run{i}"})
    if r.has("send_line"):
        await classic_work(r, sh, n)
    test_file = os.path.join(r.workdir, f"{r.prefix}steps.toml")
    for i in range(n):
        # save_test writes what was done since the last one: something each time.
        await line_and_wait(r, sh, f"echo sv{i}", f"^sv{i}$")
        await r.timed("save_test", "save_test", {"file": test_file, "sids": [sh], "force": True})
    if r.has("spawn"):
        for i in range(n):
            sid = r.sid(f"s{i}")
            if r.has("send"):
                await r.timed("spawn python3 until >>>", "spawn",
                              {"cmd": "python3 -q", "sid": sid, "until": {"regex": "^>>> $"}})
            else:
                await r.timed("spawn python3", "spawn", {"cmd": "python3 -q", "sid": sid})
            await r.timed("close", "close", {"sid": sid})
        extra = [r.sid(f"b{k}") for k in range(9)]
        for sid in extra:
            await spawn_and_wait(r, sid, "bash --norc --noprofile", r"\$ $")
        for _ in range(n):
            await r.timed("list (10 sessions)", "list", {})
        for sid in extra:
            await r.untimed("close", {"sid": sid})
    await r.untimed("close", {"sid": sh})


async def classic_work(r, sh, n):
    """The classic tools, on the bash session and a mouse-reporting app."""
    for _ in range(n):
        await r.timed("alive", "alive", {"sid": sh})
    for i in range(n):
        size = (100, 30) if i % 2 == 0 else (80, 24)
        await r.timed("resize", "resize", {"sid": sh, "cols": size[0], "rows": size[1]})
    for i in range(n):
        await r.timed("send_line", "send_line", {"sid": sh, "text": f"echo wf{i}"})
        await r.timed("wait_for (output)", "wait_for", {"sid": sh, "pattern": f"^wf{i}$", "timeout_ms": 10000})
    for i in range(n):
        await r.timed("type", "type", {"sid": sh, "text": f"echo ty{i}"})
        await r.timed("send_keys Enter", "send_keys", {"sid": sh, "keys": ["Enter"]})
        await r.timed("expect (output)", "expect", {"sid": sh, "patterns": [f"^ty{i}$", "denied"], "timeout_ms": 10000})
    for i in range(n):
        before = await r.untimed("snapshot", {"sid": sh})
        await r.untimed("send_line", {"sid": sh, "text": f"echo wc{i}"})
        await r.timed("wait_change", "wait_change", {"sid": sh, "hash": before["hash"], "timeout_ms": 10000})
    for i in range(n):
        before = await r.untimed("snapshot", {"sid": sh})
        await r.untimed("send_line", {"sid": sh, "text": f"echo wv{i}"})
        await r.timed("wait_visual_change", "wait_visual_change",
                      {"sid": sh, "visual_hash": before["visual_hash"], "timeout_ms": 10000})
    for i in range(n):
        await r.untimed("send_line", {"sid": sh, "text": f"echo rd{i}"})
        await r.timed("wait_ready (marker)", "wait_ready", {"sid": sh, "marker": f"^rd{i}$", "max_wait_ms": 10000})
    for i in range(n):
        await r.untimed("send_line", {"sid": sh, "text": f"echo wt{i}"})
        await r.timed("wait (until regex)", "wait", {"sid": sh, "until": {"regex": f"^wt{i}$"}, "timeout_ms": 10000})
    cast = os.path.join(r.workdir, f"{r.prefix}record.cast")
    for _ in range(n):
        await r.timed("record start", "record", {"sid": sh, "action": "start", "path": cast, "force": True})
        await r.timed("record stop", "record", {"sid": sh, "action": "stop"})
    if r.has("watch"):
        for _ in range(n):
            await r.timed("watch start", "watch", {})
            await r.timed("watch stop", "watch", {"stop": True})
    reporter = r.sid("mouse")
    await r.untimed("spawn", {"argv": [sys.executable, os.path.join(FIXTURES, "input_reporter.py"), "--mouse"],
                              "sid": reporter})
    await r.untimed("wait_for", {"sid": reporter, "pattern": "^target: TARGET$", "timeout_ms": 10000})
    for _ in range(n):
        # By cell: the reporter's lines soon scroll its TARGET off the screen.
        await r.timed("mouse click", "mouse", {"sid": reporter, "action": "click", "col": 5, "row": 3})
    await r.untimed("close", {"sid": reporter})
    for i in range(n):
        sid = r.sid(f"x{i}")
        await r.untimed("spawn", {"cmd": "sleep 0.05", "sid": sid})
        await r.timed("wait_exit", "wait_exit", {"sid": sid, "timeout_ms": 10000})
        await r.untimed("close", {"sid": sid})


async def desktop_work(r, n):
    """desktop_start (and close) n times, then computer and act on one desktop."""
    for i in range(n):
        sid = r.sid(f"d{i}")
        await r.timed("desktop_start", "desktop_start", {"sid": sid, "size": [640, 400]})
        await r.timed("close desktop", "close", {"sid": sid})
    desk = r.sid("desk")
    await r.untimed("desktop_start", {"sid": desk, "size": [640, 400]})
    for i in range(n):
        await r.timed("computer click (desktop)", "computer",
                      {"sid": desk, "action": {"type": "click", "x": 100 + i, "y": 200}})
    await r.untimed("act", {"sid": desk, "do": "clipboard", "text": "from-bench"})
    for _ in range(n):
        await r.timed("act clipboard", "act", {"sid": desk, "do": "clipboard"})
    if r.has("snapshot"):
        for _ in range(n):
            await r.timed("snapshot desktop", "snapshot", {"sid": desk})
    await r.untimed("close", {"sid": desk})


async def textual_work(r, n):
    app = os.path.join(r.workdir, "counter.py")
    shutil.copy(os.path.join(FIXTURES, "textual", "counter.py"), app)
    for _ in range(n):
        await r.timed("textual_run", "textual_run",
                      {"app": app, "python": r.textual_python, "actions": [{"click": "#inc"}], "query": ["#label"]})


async def workload(r, n):
    await sessions_work(r, n)
    if r.has("desktop_start"):
        await desktop_work(r, n)
    if r.has("textual_run"):
        await textual_work(r, n)


async def run_worker(argv, env, prefix, n, workdir, textual_python):
    log = open(os.path.join(workdir, f"{prefix}server.log"), "wb")
    try:
        async with SdkClient(argv, env, log) as client:
            r = Recorder(client, prefix, workdir, textual_python)
            await workload(r, n)
            return r.rows, client.tools
    finally:
        log.close()


# ----------------------------------------------------------------------------------------------------
# Schema variants for the construct experiment.

SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
SCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
              "unevaluatedProperties", "unevaluatedItems", "additionalItems")
# Keywords that only constrain one instance type: adding "null" to `type` leaves them as they were.
TYPE_SPECIFIC = {"type", "properties", "patternProperties", "required", "additionalProperties", "items",
                 "prefixItems", "minItems", "maxItems", "minimum", "maximum", "exclusiveMinimum",
                 "exclusiveMaximum", "minLength", "maxLength", "pattern", "format", "description", "default",
                 "title"}


def subschemas(node):
    """Yield (container keyword, key or index, subschema) for each direct subschema of a schema."""
    if not isinstance(node, dict):
        return
    for kw in SCHEMA_MAPS:
        if isinstance(node.get(kw), dict):
            for k, v in node[kw].items():
                yield kw, k, v
    for kw in SCHEMA_LISTS:
        if isinstance(node.get(kw), list):
            for i, v in enumerate(node[kw]):
                yield kw, i, v
    for kw in SCHEMA_ONE:
        v = node.get(kw)
        if isinstance(v, dict):
            yield kw, None, v
        elif isinstance(v, list) and kw in ("items", "additionalItems"):
            for i, x in enumerate(v):
                yield kw, i, x


def count_subschemas(node):
    return 1 + sum(count_subschemas(s) for _, _, s in subschemas(node)) if isinstance(node, dict) else 1


def map_subschemas(node, fn):
    """A copy of node with fn applied to each direct subschema."""
    out = dict(node)
    for kw in SCHEMA_MAPS:
        if isinstance(node.get(kw), dict):
            out[kw] = {k: fn(v) for k, v in node[kw].items()}
    for kw in SCHEMA_LISTS:
        if isinstance(node.get(kw), list):
            out[kw] = [fn(v) for v in node[kw]]
    for kw in SCHEMA_ONE:
        v = node.get(kw)
        if isinstance(v, dict):
            out[kw] = fn(v)
        elif isinstance(v, list) and kw in ("items", "additionalItems"):
            out[kw] = [fn(x) for x in v]
    return out


def inline_refs(schema):
    """Every local `$ref` replaced by its target (siblings kept beside it in an allOf); `$defs` dropped."""
    root = schema

    def target(ref):
        if not ref.startswith("#/"):
            raise ValueError(f"not a local $ref: {ref}")
        node = root
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def walk(node, depth=0):
        if depth > 64:
            raise ValueError("recursive $ref: cannot inline")
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            resolved = walk(target(node["$ref"]), depth + 1)
            rest = {k: v for k, v in node.items() if k != "$ref"}
            if not rest:
                return resolved
            rest = walk(rest, depth)
            only_annotations = all(k in ("description", "title", "default") for k in rest)
            return {**resolved, **rest} if only_annotations else {"allOf": [resolved, rest]}
        return map_subschemas(node, lambda s: walk(s, depth + 1))

    out = walk(schema)
    out.pop("$defs", None)
    out.pop("definitions", None)
    return out


def is_null_schema(s):
    return s == {"type": "null"}


def is_shape(s):
    return isinstance(s, dict) and (s.get("type") == "object" or "properties" in s or "anyOf" in s)


def merge_shapes(base, branch):
    """base (without its union) and one branch of it, as one schema (allOf where they clash)."""
    out = dict(base)
    for k, v in branch.items():
        if k not in out or out[k] == v:
            out[k] = v
        elif k == "properties":
            props = dict(out[k])
            for name, sub in v.items():
                props[name] = sub if name not in props or props[name] == sub else {"allOf": [props[name], sub]}
            out[k] = props
        elif k == "required":
            out[k] = list(dict.fromkeys(list(out[k]) + list(v)))
        elif k in ("description", "title"):
            continue
        else:
            return {"allOf": [base, branch]}
    return out


def narrow(schema, instance, valid):
    """Unions of object shapes narrowed to the branch the instance takes; nullable unions kept."""
    if not isinstance(schema, dict):
        return schema
    s = schema
    for kw in ("anyOf", "oneOf"):
        branches = s.get(kw)
        if not isinstance(branches, list):
            continue
        non_null = [b for b in branches if not is_null_schema(b)]
        if len(non_null) >= 2 and all(is_shape(b) for b in non_null):
            chosen = next((b for b in non_null if valid(b, instance)), None)
            if chosen is not None:
                base = {k: v for k, v in s.items() if k != kw}
                return narrow(merge_shapes(base, chosen), instance, valid)
        elif len(non_null) == 1 and instance is not None and valid(non_null[0], instance):
            s = dict(s)
            s[kw] = [narrow(b, instance, valid) if b is non_null[0] else b for b in branches]
    if isinstance(instance, dict) and isinstance(s.get("properties"), dict):
        s = dict(s)
        s["properties"] = {k: narrow(v, instance[k], valid) if k in instance else v
                           for k, v in s["properties"].items()}
    if isinstance(instance, list) and instance and isinstance(s.get("items"), dict):
        narrowed = [narrow(s["items"], x, valid) for x in instance]
        if all(x == narrowed[0] for x in narrowed):
            s = dict(s)
            s["items"] = narrowed[0]
    return s


def simplify(schema, group):
    """Nullable unions as type lists, const unions as enums; with group, same-schema fields grouped
    under one exact-name patternProperties entry and descriptions dropped."""
    if not isinstance(schema, dict):
        return schema
    s = map_subschemas(schema, lambda x: simplify(x, group))
    if group:
        s.pop("description", None)
        s.pop("title", None)
    for kw in ("anyOf", "oneOf"):
        branches = s.get(kw)
        if not isinstance(branches, list) or not branches:
            continue
        rest = {k: v for k, v in s.items() if k != kw}
        consts = [b.get("const") for b in branches if isinstance(b, dict) and "const" in b
                  and set(b) <= {"const", "type"}]
        types = {b.get("type") for b in branches if isinstance(b, dict)}
        if len(consts) == len(branches) and len(types) == 1 and len(set(map(json.dumps, consts))) == len(consts):
            t = types.pop()
            s = {**rest, **({"type": t} if t else {}), "enum": consts}
            continue
        if all(isinstance(b, dict) and set(b) == {"type"} and isinstance(b["type"], str) for b in branches):
            s = {**rest, "type": [b["type"] for b in branches]}
            continue
        non_null = [b for b in branches if not is_null_schema(b)]
        if len(branches) == 2 and len(non_null) == 1 and isinstance(non_null[0], dict):
            x = non_null[0]
            if isinstance(x.get("type"), str) and set(x) <= TYPE_SPECIFIC | {"enum"} and not (set(x) & set(rest) - {"description"}):
                y = dict(x)
                y["type"] = [x["type"], "null"]
                if "enum" in y:
                    y["enum"] = list(y["enum"]) + [None]
                s = {**rest, **y}
    if group and isinstance(s.get("properties"), dict):
        by_schema = {}
        for name, sub in s["properties"].items():
            by_schema.setdefault(json.dumps(sub, sort_keys=True), []).append(name)
        props, patterns = {}, dict(s.get("patternProperties", {}))
        for key, names in by_schema.items():
            if len(names) == 1:
                props[names[0]] = s["properties"][names[0]]
            else:
                patterns["^(" + "|".join(re.escape(n) for n in names) + ")$"] = json.loads(key)
        s["properties"] = props
        if not props:
            del s["properties"]
        if patterns:
            s["patternProperties"] = patterns
    return s


def to_draft7(schema):
    """A schema without $refs in draft-07 spelling: tuples as `items: [...]`."""
    def walk(node):
        if not isinstance(node, dict):
            return node
        n = map_subschemas(node, walk)
        if "prefixItems" in n:
            n["items"] = n.pop("prefixItems")
        return n

    out = walk(inline_refs(schema))
    out.pop("$schema", None)
    out["$schema"] = "http://json-schema.org/draft-07/schema#"
    return out


def mutations(instance, limit=400):
    """Copies of the instance with one thing wrong (or one unknown key added)."""
    wrong = {bool: ["x"], int: ["x", 1.5], float: ["x"], str: [7], type(None): [7, "x"], list: ["x", {}],
             dict: ["x", []]}
    out = []

    def walk(node, path):
        if isinstance(node, dict):
            out.append(("add", path, "__unknown__"))
            for k, v in node.items():
                out.append(("del", path + [k], None))
                walk(v, path + [k])
        elif isinstance(node, list):
            for i, v in enumerate(node[:3]):
                walk(v, path + [i])
        for w in wrong.get(type(node), []):
            out.append(("set", path, w))

    walk(instance, [])
    result = []
    for op, path, value in out[:limit]:
        m = copy.deepcopy(instance)
        if not path:
            if op == "set":
                result.append(value)
            elif op == "add":
                m["__unknown__"] = 1
                result.append(m)
            continue
        parent = m
        for p in path[:-1]:
            parent = parent[p]
        if op == "set":
            parent[path[-1]] = value
        elif op == "del":
            del parent[path[-1]]
        else:
            parent[path[-1]]["__unknown__"] = 1 if isinstance(parent[path[-1]], dict) else None
        result.append(m)
    return result


def construct_experiment(tool, schema, instance, repeat):
    from jsonschema import Draft202012Validator, validate, validators
    from referencing import Registry

    def valid(s, inst):
        return Draft202012Validator(s).is_valid(inst)

    inlined = inline_refs(schema)
    shaped = narrow(inlined, instance, valid)
    variants = [
        ("listed", schema),
        ("inlined", inlined),
        ("compact", simplify(inlined, group=True)),
        ("one shape", simplify(shaped, group=False)),
        ("one shape, compact", simplify(shaped, group=True)),
        ("draft-07", to_draft7(schema)),
        ("one shape, compact, draft-07", to_draft7(simplify(shaped, group=True))),
    ]
    listed_cls = validators.validator_for(schema)
    listed_validator = listed_cls(schema, registry=Registry())
    cases = [instance] + mutations(instance)
    listed_verdicts = [listed_validator.is_valid(c) for c in cases]
    rows = []
    for name, s in variants:
        cls = validators.validator_for(s)
        reused = cls(s, registry=Registry())
        ok = reused.is_valid(instance)
        verdicts = [reused.is_valid(c) for c in cases]
        same = sum(a == b for a, b in zip(verdicts, listed_verdicts))
        stricter = sum(b and not a for a, b in zip(verdicts, listed_verdicts))
        rows.append({
            "tool": tool, "variant": name, "dialect": cls.__name__, "subschemas": count_subschemas(s),
            "bytes": len(json.dumps(s, separators=(",", ":"))), "valid": ok,
            "validate_ms": timed_median(lambda: validate(instance, s, registry=Registry()), repeat) if ok else None,
            "check_schema_ms": timed_median(lambda: cls.check_schema(s), repeat),
            "fresh_instance_ms": timed_median(lambda: cls(s, registry=Registry()).is_valid(instance), repeat),
            "reused_ms": timed_median(lambda: reused.is_valid(instance), max(repeat, 50)),
            "same_verdicts": same, "stricter": stricter, "looser": len(cases) - same - stricter, "cases": len(cases),
            "schema": s,
        })
    return rows


# ----------------------------------------------------------------------------------------------------


def linear_fit(points):
    """Least squares y = a + b x."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if not sxx:
        return None
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    a = my - b * mx
    ss = sum((y - my) ** 2 for _, y in points)
    r2 = 1 - sum((y - a - b * x) ** 2 for x, y in points) / ss if ss else 1.0
    return {"a": a, "b": b, "r2": r2, "n": n}


def same_note(c):
    parts = [f"{c[k]} {k}" for k in ("stricter", "looser") if c[k]]
    return f" ({', '.join(parts)})" if parts else ""




def fmt(x):
    return "-" if x is None or x != x else (f"{x:.1f}" if x >= 10 else f"{x:.2f}")


def worker(args):
    """One pass, in the SDK's venv: the workload through ClientSession; raw figures to args.json."""
    from importlib.metadata import version

    argv = [args.binary, "mcp"] + PROFILES[args.profile] + SCHEMAS[args.schemas]
    workdir = tempfile.mkdtemp(prefix="output-schema-cost-work-")
    prefix = f"{args.profile[0]}{args.schemas[0]}{version('mcp')[0]}-"
    try:
        rows, tools = asyncio.run(run_worker(argv, dict(os.environ), prefix, args.calls, workdir,
                                             args.textual_python))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    timed = {row["tool"] for row in rows.values()}
    out = {"mcp": version("mcp"), "jsonschema": version("jsonschema"), "rows": rows,
           "untimed_tools": sorted(set(tools) - timed),
           "schemas": {name: t.get("outputSchema") for name, t in tools.items()}, "constructs": []}
    if args.constructs:
        for label, row in rows.items():
            schema = out["schemas"].get(row["tool"])
            if schema and row["instances"]:
                for c in construct_experiment(row["tool"], schema, row["instances"][-1], args.repeat):
                    c.update(profile=args.profile, label=label)
                    out["constructs"].append(c)
    with open(args.json, "w") as f:
        json.dump(out, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=30, help="timed calls per call kind and pass (default 30)")
    ap.add_argument("--binary", help="screenpilot binary (default: release, or debug when newer)")
    ap.add_argument("--profiles", default="default,terminal,all",
                    help="default,terminal,all (all: --tools classic,textual,desktop)")
    ap.add_argument("--schemas", default="compact,full", help="compact,full (full: --output-schemas full)")
    ap.add_argument("--sdks", default="1,2", help="1,2: mcp 1.30.0 and 2.3.0")
    ap.add_argument("--textual-python", default=os.environ.get("SCREENPILOT_TEST_PYTHON", "python3"),
                    help="a python with textual, for textual_run's app")
    ap.add_argument("--constructs", action="store_true", help="also the construct experiment (SDK 1.30 passes)")
    ap.add_argument("--repeat", type=int, default=15, help="repeats of each construct-experiment timing")
    ap.add_argument("--json", metavar="FILE", help="write the raw figures here")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--profile", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    binary, why = pick_binary(args.binary)
    args.binary = os.path.abspath(binary)
    why += time.strftime(", built %Y-%m-%d %H:%M:%S UTC", time.gmtime(os.path.getmtime(binary)))
    pythons = {sdk: venv_python(sdk) for sdk in args.sdks.split(",")}
    print(f"binary: {binary} ({why}); {args.calls} calls per call kind and pass", file=sys.stderr)
    load_before = os.getloadavg()
    spdir = tempfile.mkdtemp(prefix="output-schema-cost-")
    env = dict(os.environ, SCREENPILOT_DIR=spdir, SCREENPILOT_MAX_SESSIONS="32")
    env.pop("TMUX", None)
    subprocess.run([args.binary, "daemon", "start"], env=env, check=True, capture_output=True, timeout=30)
    passes = {}  # (profile, schemas, sdk) -> worker output
    try:
        for profile in args.profiles.split(","):
            for schemas in args.schemas.split(","):
                for sdk, python in pythons.items():
                    print(f"{profile}, {schemas} output schemas, SDK {SDKS[sdk][1]}: pass", file=sys.stderr)
                    out_file = os.path.join(spdir, f"{profile}-{schemas}-{sdk}.json")
                    argv = [python, os.path.abspath(__file__), "--worker", "--profile", profile, "--schemas",
                            schemas, "--calls", str(args.calls), "--binary", args.binary, "--textual-python",
                            args.textual_python, "--repeat", str(args.repeat), "--json", out_file]
                    if args.constructs and sdk == "1":
                        argv.append("--constructs")
                    subprocess.run(argv, env=env, check=True)
                    with open(out_file) as f:
                        passes[(profile, schemas, sdk)] = json.load(f)
    finally:
        subprocess.run([args.binary, "daemon", "stop", "--end-sessions"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(spdir, ignore_errors=True)

    versions = {sdk: next(p["mcp"] for (_, _, s), p in passes.items() if s == sdk) for sdk in pythons}
    jsonschema_version = next(iter(passes.values()))["jsonschema"]
    print(f"\nscreenpilot: {binary} ({why}); MCP Python SDK {', '.join(versions.values())}, jsonschema "
          f"{jsonschema_version}; default = `screenpilot mcp`, terminal = `--tools terminal`, all = "
          f"`--tools classic,textual,desktop`; load average {load_before[0]:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end ({os.cpu_count()} CPUs). Medians of {args.calls} calls; "
          f"validation and client CPU are CPU ms of the client's thread, call is wall ms; each cell is "
          f"compact / full (`--output-schemas full`)\n")
    sdk_cols = "".join(f"| SDK {versions[s]} validation | SDK {versions[s]} client CPU | SDK {versions[s]} call "
                       for s in pythons)
    print(f"| call | profile | subschemas {sdk_cols}|")
    print("|---|---|---" + "|---|---|---" * len(pythons) + "|")

    def schema_of(profile, schemas, tool):
        for sdk in pythons:
            p = passes.get((profile, schemas, sdk))
            if p and p["schemas"].get(tool):
                return p["schemas"][tool]
        return None

    worst = {}
    for profile in args.profiles.split(","):
        labels = []
        for (p, _, _), out in passes.items():
            if p == profile:
                labels += [label for label in out["rows"] if label not in labels]
        for label in labels:
            tool = next(out["rows"][label]["tool"] for (p, _, _), out in passes.items()
                        if p == profile and label in out["rows"])
            counts = " / ".join(str(count_subschemas(schema_of(profile, s, tool)) if schema_of(profile, s, tool)
                                    else "-") for s in args.schemas.split(","))
            cells = []
            for sdk in pythons:
                for key in ("validation_ms", "cpu_ms", "wall_ms"):
                    values = []
                    for schemas in args.schemas.split(","):
                        row = passes.get((profile, schemas, sdk), {}).get("rows", {}).get(label)
                        m = median(row[key]) if row else float("nan")
                        values.append(fmt(m))
                        if key in ("validation_ms", "cpu_ms") and row and m == m:
                            k = (sdk, schemas, key)
                            if m > worst.get(k, (0, ""))[0]:
                                worst[k] = (m, f"{label} ({profile})")
                    cells.append(" / ".join(values))
            errors = sum(passes[k]["rows"].get(label, {}).get("errors", 0) for k in passes if k[0] == profile)
            note = f" ({errors} errors)" if errors else ""
            print(f"| {label}{note} | {profile} | {counts} | " + " | ".join(cells) + " |")
    print()
    for (sdk, schemas, key), (m, where) in sorted(worst.items()):
        what = "validation" if key == "validation_ms" else "client CPU"
        print(f"SDK {versions[sdk]}, {schemas} output schemas: most {what} per call {fmt(m)} ms ({where})")
    for (profile, schemas, sdk), out in passes.items():
        if out["untimed_tools"]:
            print(f"ERROR {profile}/{schemas}/SDK {versions[sdk]}: listed tools with no timed call: "
                  f"{out['untimed_tools']}")
        for label, row in out["rows"].items():
            if row["first_error"]:
                print(f"first error of {label} ({profile}, {schemas}, SDK {versions[sdk]}): {row['first_error']}")
    constructs = [c for out in passes.values() for c in out["constructs"]]
    if constructs:
        print("\nConstruct experiment (SDK 1.30; one result per tool; ms are medians; validate() = the SDK's "
              "call; reused = a validator built once; same = verdicts equal to the listed schema's on the "
              "result and its mutations)\n")
        print("| tool | variant | subschemas | bytes | validate() ms | of which check_schema ms | fresh validator, "
              "instance only ms | reused validator ms | same |")
        print("|---|---|---|---|---|---|---|---|---|")
        for c in constructs:
            print(f"| {c['tool']} ({c['profile']}) | {c['variant']} | {c['subschemas']} | {c['bytes']} "
                  f"| {fmt(c['validate_ms'])} | {fmt(c['check_schema_ms'])} | {fmt(c['fresh_instance_ms'])} "
                  f"| {fmt(c['reused_ms'])} | {c['same_verdicts']}/{c['cases']}{same_note(c)} |")
        for dialect in sorted({c["dialect"] for c in constructs}):
            fit = linear_fit([(c["subschemas"], c["validate_ms"]) for c in constructs
                              if c["dialect"] == dialect and c["validate_ms"] is not None])
            if fit:
                print(f"{dialect}: validate() as SDK 1.30 calls it ~ {fit['a']:.2f} ms + {fit['b']:.3f} ms per "
                      f"subschema (least squares over {fit['n']} variants, r^2 {fit['r2']:.2f})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": binary, "binary_why": why, "versions": versions, "calls": args.calls,
                       "load_before": load_before,
                       "passes": {"/".join(k): v for k, v in passes.items()}}, f, indent=1)


if __name__ == "__main__":
    main()
