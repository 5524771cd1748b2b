"""Shared parts of the watch benchmarks (benches/watch_latency.py, benches/watch_cpu.py): the two
servers under test, started on the same fixture program, and small statistics helpers.

- screenpilot: a private daemon (its own SCREENPILOT_DIR), the program spawned as a session, and
  `screenpilot --json watch --http 127.0.0.1:0`, which starts the page's server in the daemon and
  answers its URL (the token after `#`) and token file.
- asciinema 3: `asciinema stream --local 127.0.0.1:PORT --headless -c PROGRAM`, the program run under
  asciinema's own pty, its built-in HTTP server and asciinema-player over the ALiS websocket.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "crates", "screenpilot", "tests"))

WRITER = os.path.join(HERE, "watch_writer.py")
ASCIINEMA = os.path.join(ROOT, ".venv", "asciinema", "bin", "asciinema")
SCREENPILOT = os.environ.get("SCREENPILOT", os.path.join(ROOT, "target", "release", "screenpilot"))
COLS, ROWS = 100, 30


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round((len(values) - 1) * p))]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def read_until(proc: subprocess.Popen, stream, pattern: str, timeout: float) -> re.Match:
    """Read `stream` of `proc` line by line until a line matches `pattern`; the match."""
    deadline = time.monotonic() + timeout
    sel = selectors.DefaultSelector()
    sel.register(stream, selectors.EVENT_READ)
    seen = []
    pending = b""
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"no line matching {pattern!r} within {timeout} s:\n" + "".join(seen))
            if not sel.select(left):
                continue
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                raise RuntimeError(f"exited ({proc.wait()}) before printing {pattern!r}:\n" + "".join(seen))
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8", "replace")
                seen.append(line + "\n")
                found = re.search(pattern, line)
                if found:
                    return found
    finally:
        sel.close()


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Asciinema:
    """`asciinema stream --local` running `argv` in its own pty, served on a free loopback port."""

    name = "asciinema stream --local"

    def __init__(self, argv: list[str], hash_params: str = ""):
        if not os.access(ASCIINEMA, os.X_OK):
            raise SystemExit(f"{ASCIINEMA} is missing: scripts/test.sh installs asciinema 3 there")
        self.home = tempfile.mkdtemp(prefix="sp-bench-asciinema-")
        port = free_port()
        env = dict(os.environ, ASCIINEMA_CONFIG_HOME=self.home, HOME=self.home, TERM="xterm-256color")
        self.proc = subprocess.Popen(
            [ASCIINEMA, "stream", "--local", f"127.0.0.1:{port}", "--headless",
             "--window-size", f"{COLS}x{ROWS}", "--log-file", os.path.join(self.home, "log"),
             "-c", shlex.join(argv)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env, start_new_session=True,
        )
        # It says `::: Live streaming at http://...` once its server listens.
        try:
            read_until(self.proc, self.proc.stdout, r"Live streaming at http://127\.0\.0\.1", 30)
        except BaseException:
            self.close()
            raise
        self.url = f"http://127.0.0.1:{port}/" + (f"#{hash_params}" if hash_params else "")
        self.ws_url = f"ws://127.0.0.1:{port}/ws"
        self.server_pids = [self.proc.pid]
        # Where the page shows the terminal's text: asciinema-player's DOM lines.
        self.text_views = {"player's lines": ".ap-term"}

    def viewer_endpoints(self) -> list[tuple[str, list[str]]]:
        """The websocket asciinema-player opens (ALiS)."""
        return [(self.ws_url, ["v1.alis"])]

    def close(self) -> None:
        stop(self.proc)
        shutil.rmtree(self.home, ignore_errors=True)


class Screenpilot:
    """A private daemon running `argv` as session `sid`, and its watch page (`screenpilot watch`).

    The page's server runs inside the daemon, so the daemon's CPU is the whole cost.
    """

    name = "screenpilot watch"

    def __init__(self, argv: list[str], sid: str = "bench"):
        if not os.access(SCREENPILOT, os.X_OK):
            raise SystemExit(f"{SCREENPILOT} is missing: run `cargo build --release` first")
        self.dir = tempfile.mkdtemp(prefix="sp-bench-watch-")
        os.chmod(self.dir, 0o700)
        self.env = dict(os.environ, SCREENPILOT_DIR=self.dir)
        self.sid = sid
        try:
            self._start(argv)
        except BaseException:
            self.close()  # no daemon left behind
            raise

    def _start(self, argv: list[str]) -> None:
        sid = self.sid
        self.sp("spawn", "--sid", sid, "--size", f"{COLS}x{ROWS}", "--", *argv)
        # The program runs: READY shows (a flood scrolls it away at once, so one of its lines will do).
        self.sp("wait", sid, "--regex", r"READY|^\d{8} ", "--timeout-ms", "20000")
        watch = json.loads(self.sp("--json", "watch", "--http", "127.0.0.1:0").stdout)
        self.url = watch["url"]
        self.address = watch["address"]
        with open(watch["token_file"]) as f:
            self.token = f.read().strip()
        status = json.loads(self.sp("--json", "daemon", "status").stdout)
        self.server_pids = [int(status["pid"])]
        # Where the page shows the terminal's text: xterm.js's DOM renderer rows (painted on the next
        # animation frame), and the page's copy of xterm's buffer, taken when xterm parsed the bytes.
        view = f'section.session[data-sid="{sid}"]'
        self.text_views = {"xterm.js rows": f"{view} .xterm-rows", "xterm.js buffer": f"{view} pre.screen-text"}

    def viewer_endpoints(self) -> list[tuple[str, list[str]]]:
        """The websockets one page opens for this session: the session list and the session's view;
        the token goes as a subprotocol, as the page sends it."""
        protocols = ["screenpilot.watch", f"bearer.{self.token}"]
        return [
            (f"ws://{self.address}/ws/sessions", protocols),
            (f"ws://{self.address}/ws/session/{self.sid}", protocols),
        ]

    def sp(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([SCREENPILOT, *args], env=self.env, capture_output=True, text=True, check=True)

    def close(self) -> None:
        subprocess.run([SCREENPILOT, "daemon", "stop", "--end-sessions"], env=self.env, capture_output=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def summary(values_ms):
    return {
        "samples": len(values_ms),
        "median_ms": round(statistics.median(values_ms), 2),
        "p95_ms": round(pct(values_ms, 0.95), 2),
        "min_ms": round(min(values_ms), 2),
        "max_ms": round(max(values_ms), 2),
    }
