#!/usr/bin/env python3
"""What screenpilot's output schemas cost a validating MCP client: the official Python SDK 1.x checks
every tool result's structuredContent against the tool's outputSchema, on the client's CPU, on every call.

Run: python3 benches/output_schema_cost.py [--calls N] [--repeat R] [--binary PATH] [--profiles LIST]
                                           [--json FILE]
     (after `cargo build --release -p screenpilot`; needs bash and python3 on PATH.) The script runs
     itself under a venv of its own, .venv/mcp1 with mcp==1.30.0: when that venv is missing it makes it
     (`python3 -m venv .venv/mcp1`, `.venv/mcp1/bin/pip install mcp==1.30.0`), then re-executes itself
     under .venv/mcp1/bin/python. Default binary: target/release/screenpilot, or target/debug/screenpilot
     when that one is newer (the run says which it took).

Where SDK 1.30 validates (mcp/client/session.py): `ClientSession.list_tools` caches each tool's
outputSchema in `_tool_output_schemas`; `call_tool`, on every result that is not isError, calls
`_validate_tool_result`, which runs `jsonschema.validate(result.structuredContent, output_schema,
registry=Registry())`. `jsonschema.validate` picks the validator class from `$schema` (2020-12 when
absent), then checks the *schema itself* against that dialect's metaschema (`cls.check_schema`), then
builds a fresh validator (so nothing is cached between calls: no resolved `$ref`) and walks the instance.
SDK 2.x validates too (read in 2.3.0: `validate_tool_result`), but checks each schema once and keeps a
compiled validator per tool, so its per-call cost is what the "reused validator" column below shows.

What it does: a private daemon (SCREENPILOT_DIR a fresh temp dir, SCREENPILOT_MAX_SESSIONS=32 so ten
sessions fit, stopped with `screenpilot daemon stop --end-sessions` at the end), then for each profile (the default one,
and `--tools classic,textual,desktop`, which serves every tool) `screenpilot mcp` over stdio three times:
1. through the SDK 1.30 ClientSession, validating as it does by default;
2. through the same session with validation skipped (the tool's cached schema set to None, which is what
   `_validate_tool_result` checks), so the difference is the validation and nothing else;
3. over raw JSON-RPC (newline-delimited over the pipes, no SDK), for comparison.
Each pass runs the same workload on real sessions of its own (a bash with PS1='$ ', a python3 REPL): list
with 1 and with 10 sessions, snapshot, send/spawn with until (default profile), send_line + wait_for,
expect, send_keys (classic profile), screenshot, run, close. Each timed call is made --calls times.

Columns of the table:
- SDK median/p95: wall time of `await session.call_tool(...)` (request, server, response, pydantic
  parsing, validation), validating as the SDK does by default.
- SDK no-val: the same without the validation.
- in-SDK validation: the CPU time of the SDK's own `_validate_tool_result` step inside those calls (the
  method wrapped with a timer).
- validation only: `jsonschema.validate(sc, schema, registry=Registry())`, exactly the SDK's call, timed
  in-process (CPU time) on the structuredContent each validated call returned and the schema tools/list
  gave.
Wall times (SDK, raw) move with the machine's load, which the run prints; validation times are this
thread's CPU time (time.thread_time), so other processes change them less.
- raw JSON-RPC: the same calls with no SDK at all.

The construct experiment takes one result per tool (the last one recorded) and validates it against
variants of the tool's schema, each timed --repeat times (median CPU time):
- listed: the schema as tools/list gives it; `validate()` as the SDK calls it, and its `check_schema`
  part (the metaschema check of the schema) on its own;
- inlined: every `$ref` replaced by what it points to, `$defs` dropped;
- compact: inlined, and nullable unions `anyOf [T, null]` as `type: [T, "null"]`, unions of consts as
  one `enum`, fields with the same subschema grouped under one `patternProperties` entry naming them
  exactly (`^(a|b|c)$`), descriptions dropped (annotations: they do not change what validates);
- one shape: inlined, and the unions of object shapes (terminal | desktop, Snapped | Looked) narrowed to
  the branch this result takes, as a tool answering with one shape would list it; nullable fields as
  type lists and const unions as enums, no grouping;
- one shape, compact: the same, grouped as in compact;
- draft-07: inlined, tuples as `items: [...]`, and `"$schema": "http://json-schema.org/draft-07/schema#"`
  (jsonschema then checks against the draft-07 metaschema; for reference only: clients that accept
  2020-12 only refuse it);
- one shape, compact, draft-07: both, to show where an older dialect's floor is.
For each: the number of subschemas (schema objects the metaschema check walks), bytes, `validate()` as
the SDK calls it, its `check_schema` part, a `Draft202012Validator` (or the declared dialect's) built once
and reused (`is_valid`, what a well-behaved client could do), and whether the variant gives the same
verdict as the listed schema on the result and on its mutations (each value given a value of another
type, each key removed, an unknown key added): "same" counts agreements; "stricter", mutations the variant
refuses and the listed schema lets through (a union accepting a broken result as its other shape).
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
VENV = os.path.join(ROOT, ".venv", "mcp1")
VENV_PY = os.path.join(VENV, "bin", "python")
MCP_VERSION = "1.30.0"
REEXEC_MARK = "OUTPUT_SCHEMA_COST_REEXEC"
CALL_TIMEOUT_S = 60
PROFILES = {"default": [], "all": ["--tools", "classic,textual,desktop"]}
PS1 = "$ "


def ensure_sdk():
    """Run under .venv/mcp1 with mcp==1.30.0, making it first when it is missing."""
    try:
        from importlib.metadata import version

        if version("mcp") == MCP_VERSION:
            return
    except Exception:
        pass
    if os.environ.get(REEXEC_MARK):
        raise SystemExit(f"{VENV_PY} still has no mcp=={MCP_VERSION}")
    if not os.path.exists(VENV_PY):
        print(f"making {VENV} (python3 -m venv)", file=sys.stderr)
        subprocess.run(["python3", "-m", "venv", VENV], check=True)
    has = subprocess.run([VENV_PY, "-c", f"import importlib.metadata as m; assert m.version('mcp') == '{MCP_VERSION}'"],
                         capture_output=True)
    if has.returncode != 0:
        print(f"installing mcp=={MCP_VERSION} into {VENV}", file=sys.stderr)
        subprocess.run([VENV_PY, "-m", "pip", "install", "-q", f"mcp=={MCP_VERSION}"], check=True)
    os.environ[REEXEC_MARK] = "1"
    os.execv(VENV_PY, [VENV_PY, os.path.abspath(__file__)] + sys.argv[1:])


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
# Clients. Each has call(tool, args) -> (ms, structuredContent, is_error, text) and a tools dict.


class SdkClient:
    """The SDK 1.30 ClientSession over stdio; `validate` False skips the SDK's own result validation."""

    def __init__(self, argv, env, log):
        self.argv, self.env, self.log = argv, env, log
        self.validate = True

    async def __aenter__(self):
        from contextlib import AsyncExitStack

        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        self.stack = AsyncExitStack()
        params = StdioServerParameters(command=self.argv[0], args=self.argv[1:], env=self.env)
        read, write = await self.stack.enter_async_context(stdio_client(params, errlog=self.log))
        self.session = await self.stack.enter_async_context(ClientSession(read, write))
        # Time the SDK's own validation step where it runs, by wrapping the method call_tool awaits.
        original = self.session._validate_tool_result
        self.last_validation_ms = None

        async def timed_validation(name, result):
            t0 = time.thread_time()
            try:
                return await original(name, result)
            finally:
                self.last_validation_ms = cpu_ms_since(t0)

        self.session._validate_tool_result = timed_validation
        await self.session.initialize()
        listed = await self.session.list_tools()
        self.tools = {t.name: t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools}
        return self

    async def __aexit__(self, *exc):
        await self.stack.aclose()

    async def call(self, tool, args):
        from datetime import timedelta

        cache = self.session._tool_output_schemas
        saved = cache.get(tool)
        if not self.validate:
            cache[tool] = None
        self.last_validation_ms = None
        try:
            t0 = time.perf_counter()
            result = await self.session.call_tool(tool, args, read_timeout_seconds=timedelta(seconds=CALL_TIMEOUT_S))
            elapsed = ms_since(t0)
        finally:
            cache[tool] = saved
        text = "\n".join(b.text for b in result.content if getattr(b, "type", "") == "text")
        return elapsed, result.structuredContent, bool(result.isError), text


class RawClient:
    """Newline-delimited JSON-RPC over the server's pipes, nothing else."""

    def __init__(self, argv, env, log):
        self.argv, self.env, self.log = argv, env, log
        self.next_id = 0

    async def __aenter__(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=self.env)
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "output_schema_cost", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.tools = {t["name"]: t for t in self.request("tools/list", {})["tools"]}
        return self

    async def __aexit__(self, *exc):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def send(self, msg):
        self.proc.stdin.write((json.dumps(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server closed its stdout during {method}")
            msg = json.loads(line)
            if msg.get("id") == self.next_id and ("result" in msg or "error" in msg):
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]

    async def call(self, tool, args):
        t0 = time.perf_counter()
        result = self.request("tools/call", {"name": tool, "arguments": args})
        elapsed = ms_since(t0)
        text = "\n".join(b.get("text", "") for b in result.get("content", []) if b.get("type") == "text")
        return elapsed, result.get("structuredContent"), bool(result.get("isError")), text


# ----------------------------------------------------------------------------------------------------
# The workload: the same calls for every pass; timed calls go to a row per label.


class Recorder:
    def __init__(self, client, prefix):
        self.client, self.prefix = client, prefix
        self.rows = {}  # label -> {"tool", "ms": [...], "instances": [...], "errors": int, "first_error"}

    def sid(self, name):
        return self.prefix + name

    async def untimed(self, tool, args):
        _, sc, err, text = await self.client.call(tool, args)
        if err:
            raise RuntimeError(f"{tool} {json.dumps(args)}: {text}")
        return sc

    async def timed(self, label, tool, args):
        ms, sc, err, text = await self.client.call(tool, args)
        row = self.rows.setdefault(label, {"tool": tool, "ms": [], "in_sdk_ms": [], "instances": [], "errors": 0,
                                           "first_error": None})
        row["ms"].append(ms)
        in_sdk = getattr(self.client, "last_validation_ms", None)
        if in_sdk is not None and getattr(self.client, "validate", False):
            row["in_sdk_ms"].append(in_sdk)
        if err:
            row["errors"] += 1
            row["first_error"] = row["first_error"] or text[:200]
        elif sc is not None:
            row["instances"].append(sc)
        return sc


def bash_args(sid, profile):
    args = {"cmd": "bash --norc --noprofile", "sid": sid, "env": {"PS1": PS1}}
    if profile == "default":
        args["until"] = {"regex": r"\$ $"}
    return args


async def start_bash(r, profile, name):
    await r.untimed("spawn", bash_args(r.sid(name), profile))
    if profile != "default":
        await r.untimed("wait_for", {"sid": r.sid(name), "pattern": r"\$ $", "timeout_ms": 10000})


async def start_python(r, profile, name):
    if profile == "default":
        await r.untimed("spawn", {"cmd": "python3 -q", "sid": r.sid(name), "until": {"regex": "^>>> $"}})
    else:
        await r.untimed("spawn", {"cmd": "python3 -q", "sid": r.sid(name)})
        await r.untimed("wait_for", {"sid": r.sid(name), "pattern": "^>>> $", "timeout_ms": 10000})


async def list_with_ten(r, profile, n):
    extra = [f"b{k}" for k in range(8)]
    for name in extra:
        await start_bash(r, profile, name)
    for _ in range(n):
        await r.timed("list (10 sessions)", "list", {})
    for name in extra:
        await r.untimed("close", {"sid": r.sid(name)})


async def workload_default(r, n):
    sh, py = r.sid("sh"), r.sid("py")
    await start_bash(r, "default", "sh")
    for _ in range(n):
        await r.timed("list (1 session)", "list", {})
    for _ in range(n):
        await r.timed("snapshot terminal (screen=full)", "snapshot", {"sid": sh, "screen": "full"})
    for _ in range(n):
        await r.timed("snapshot terminal (auto, unchanged)", "snapshot", {"sid": sh})
    for i in range(n):
        await r.timed("send text+Enter until regex (bash)", "send",
                      {"sid": sh, "text": f"echo tok{i}", "keys": ["Enter"], "until": {"regex": f"^tok{i}$"}})
    for i in range(n):
        await r.timed("run (bash)", "run", {"sid": sh, "command": f"echo run{i}"})
    for _ in range(n):
        await r.timed("screenshot terminal", "screenshot", {"sid": sh})
    await start_python(r, "default", "py")
    for i in range(n):
        await r.timed("send keys until regex (python)", "send",
                      {"sid": py, "keys": [f"{1000 + i}*2", "Enter"], "until": {"regex": f"^{2 * (1000 + i)}$"}})
    for i in range(n):
        sid = r.sid(f"s{i}")
        await r.timed("spawn python3 until >>>", "spawn", {"cmd": "python3 -q", "sid": sid, "until": {"regex": "^>>> $"}})
        await r.timed("close", "close", {"sid": sid})
    await list_with_ten(r, "default", n)
    await r.untimed("close", {"sid": sh})
    await r.untimed("close", {"sid": py})


async def workload_all(r, n):
    sh, py = r.sid("sh"), r.sid("py")
    await start_bash(r, "all", "sh")
    for _ in range(n):
        await r.timed("list (1 session)", "list", {})
    for _ in range(n):
        await r.timed("snapshot terminal", "snapshot", {"sid": sh})
    for i in range(n):
        await r.timed("send_line (bash)", "send_line", {"sid": sh, "text": f"echo tok{i}"})
        await r.timed("wait_for (bash output)", "wait_for", {"sid": sh, "pattern": f"^tok{i}$", "timeout_ms": 10000})
    for i in range(n):
        await r.untimed("send_line", {"sid": sh, "text": f"echo ex{i}"})
        await r.timed("expect (bash output)", "expect",
                      {"sid": sh, "patterns": [f"^ex{i}$", "denied"], "timeout_ms": 10000})
    await start_python(r, "all", "py")
    for i in range(n):
        await r.timed("send_keys (python)", "send_keys", {"sid": py, "keys": [f"{1000 + i}*3", "Enter"]})
        await r.timed("wait_for (python output)", "wait_for",
                      {"sid": py, "pattern": f"^{3 * (1000 + i)}$", "timeout_ms": 10000})
    for _ in range(n):
        await r.timed("screenshot terminal", "screenshot", {"sid": sh})
    for i in range(n):
        sid = r.sid(f"s{i}")
        await r.timed("spawn python3", "spawn", {"cmd": "python3 -q", "sid": sid})
        await r.untimed("wait_for", {"sid": sid, "pattern": "^>>> $", "timeout_ms": 10000})
        await r.timed("close", "close", {"sid": sid})
    await list_with_ten(r, "all", n)
    await r.untimed("close", {"sid": sh})
    await r.untimed("close", {"sid": py})


WORKLOADS = {"default": workload_default, "all": workload_all}


async def run_pass(kind, argv, env, log, profile, prefix, n):
    client = (SdkClient if kind != "raw" else RawClient)(argv, env, log)
    async with client:
        if kind == "sdk-noval":
            client.validate = False
        r = Recorder(client, prefix)
        await WORKLOADS[profile](r, n)
        return r.rows, client.tools


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


def validation_only(schema, instances, n):
    """jsonschema.validate exactly as SDK 1.30's _validate_tool_result calls it, n times over the instances."""
    from jsonschema import validate
    from referencing import Registry

    xs = []
    for i in range(n):
        inst = instances[i % len(instances)]
        t0 = time.thread_time()
        validate(inst, schema, registry=Registry())
        xs.append(cpu_ms_since(t0))
    return xs


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


def main():
    ensure_sdk()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=50, help="timed calls per tool and pass (default 50)")
    ap.add_argument("--repeat", type=int, default=15, help="repeats of each construct-experiment timing")
    ap.add_argument("--binary", help="screenpilot binary (default: release, or debug when newer)")
    ap.add_argument("--profiles", default="default,all", help="default,all (all: --tools classic,textual,desktop)")
    ap.add_argument("--json", metavar="FILE", help="write the raw figures here")
    args = ap.parse_args()
    import jsonschema
    from importlib.metadata import version

    binary, why = pick_binary(args.binary)
    why += time.strftime(", built %Y-%m-%d %H:%M:%S UTC", time.gmtime(os.path.getmtime(binary)))
    print(f"binary: {binary} ({why}); mcp {version('mcp')}, jsonschema {version('jsonschema')}, "
          f"python {sys.version.split()[0]}; {args.calls} calls per tool and pass", file=sys.stderr)
    load_before = os.getloadavg()
    spdir = tempfile.mkdtemp(prefix="output-schema-cost-")
    env = dict(os.environ, SCREENPILOT_DIR=spdir, SCREENPILOT_MAX_SESSIONS="32")
    env.pop("TMUX", None)
    log = open(os.path.join(spdir, "servers.log"), "wb")
    subprocess.run([binary, "daemon", "start"], env=env, check=True, capture_output=True, timeout=30)
    out = {"binary": binary, "binary_why": why, "mcp": version("mcp"), "jsonschema": version("jsonschema"),
           "calls": args.calls, "load_before": load_before, "rows": [], "constructs": []}
    try:
        for profile in args.profiles.split(","):
            argv = [binary, "mcp"] + PROFILES[profile]
            passes = {}
            for kind, prefix in (("sdk", "v"), ("sdk-noval", "n"), ("raw", "r")):
                print(f"{profile}: {kind} pass", file=sys.stderr)
                passes[kind], tools = asyncio.run(run_pass(kind, argv, env, log, profile, prefix, args.calls))
            seen_tools = set()
            for label, row in passes["sdk"].items():
                schema = tools[row["tool"]].get("outputSchema")
                vonly = validation_only(schema, row["instances"], args.calls) if schema and row["instances"] else []
                out["rows"].append({
                    "label": label, "tool": row["tool"], "profile": profile, "calls": len(row["ms"]),
                    "errors": {k: passes[k].get(label, {}).get("errors", 0) for k in passes},
                    "first_error": row["first_error"],
                    "sdk_ms": row["ms"], "in_sdk_validation_ms": row["in_sdk_ms"], "sdk_noval_ms": passes["sdk-noval"].get(label, {}).get("ms", []),
                    "raw_ms": passes["raw"].get(label, {}).get("ms", []), "validation_ms": vonly,
                    "instance_bytes": median([len(json.dumps(i)) for i in row["instances"]]) if row["instances"] else None,
                    "schema_bytes": len(json.dumps(schema, separators=(",", ":"))) if schema else 0,
                })
                key = (row["tool"], json.dumps(schema, sort_keys=True))
                if schema and row["instances"] and key not in seen_tools:
                    seen_tools.add(key)
                    print(f"{profile}: construct experiment on {row['tool']}", file=sys.stderr)
                    out.setdefault("instances", []).append({"tool": row["tool"], "profile": profile,
                                                            "instance": row["instances"][-1]})
                    for c in construct_experiment(row["tool"], schema, row["instances"][-1], args.repeat):
                        c.update(profile=profile, label=label)
                        out["constructs"].append(c)
    finally:
        subprocess.run([binary, "daemon", "stop", "--end-sessions"], env=env, capture_output=True, timeout=30)
        log.close()
        shutil.rmtree(spdir, ignore_errors=True)

    print(f"\nscreenpilot: {binary} ({why}); MCP Python SDK {out['mcp']}, jsonschema {out['jsonschema']}; "
          f"default = `screenpilot mcp`, all = `--tools classic,textual,desktop`; load average "
          f"{load_before[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end ({os.cpu_count()} CPUs); "
          f"validation columns are CPU ms, the others wall ms\n")
    print("| tool | profile | calls | SDK median ms | SDK p95 ms | SDK no-val median ms | in-SDK validation median ms "
          "| validation-only median ms | raw JSON-RPC median ms | schema B | result B |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in out["rows"]:
        errs = sum(r["errors"].values())
        note = f" ({errs} errors)" if errs else ""
        print(f"| {r['label']}{note} | {r['profile']} | {r['calls']} | {fmt(median(r['sdk_ms']))} | {fmt(p95(r['sdk_ms']))} "
              f"| {fmt(median(r['sdk_noval_ms']))} | {fmt(median(r['in_sdk_validation_ms']))} "
              f"| {fmt(median(r['validation_ms']))} | {fmt(median(r['raw_ms']))} "
              f"| {r['schema_bytes']} | {fmt(r['instance_bytes'])} |")
    print("\nConstruct experiment (one result per tool; ms are medians; validate() = the SDK's call; reused = "
          "a validator built once; same = verdicts equal to the listed schema's on the result and its mutations)\n")
    print("| tool | variant | subschemas | bytes | validate() ms | of which check_schema ms | fresh validator, "
          "instance only ms | reused validator ms | same |")
    print("|---|---|---|---|---|---|---|---|---|")
    for c in out["constructs"]:
        tag = f"{c['tool']} ({c['profile']})"
        print(f"| {tag} | {c['variant']} | {c['subschemas']} | {c['bytes']} | {fmt(c['validate_ms'])} "
              f"| {fmt(c['check_schema_ms'])} | {fmt(c['fresh_instance_ms'])} | {fmt(c['reused_ms'])} "
              f"| {c['same_verdicts']}/{c['cases']}{same_note(c)} |")
    print()
    for dialect in sorted({c["dialect"] for c in out["constructs"]}):
        fit = linear_fit([(c["subschemas"], c["validate_ms"]) for c in out["constructs"]
                          if c["dialect"] == dialect and c["validate_ms"] is not None])
        if fit:
            out.setdefault("fits", {})[dialect] = fit
            print(f"{dialect}: validate() as the SDK calls it ~ {fit['a']:.2f} ms + {fit['b']:.3f} ms per subschema "
                  f"(least squares over {fit['n']} variants, r^2 {fit['r2']:.2f})")
    for r in out["rows"]:
        if r["first_error"]:
            print(f"\nfirst error of {r['label']} ({r['profile']}): {r['first_error']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
