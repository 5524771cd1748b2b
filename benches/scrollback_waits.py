#!/usr/bin/env python3
"""Pending scrollback waits under a flood of output: does a `wait --scrollback` that never matches slow
the program down? (Issue 13, point 3: it used to rescan the whole history per chunk, 4x to 30x.)

Each round times `seq 1 LINES; echo TAG-done` in bash, from sending the line to the end marker on the
screen, first alone and then with WAITS scrollback waits pending (a pattern that never matches). The
waits go out on one connection before the flood, and a `status` on the same connection is answered
before the flood is sent: the daemon reads a connection's requests in order and starts each as its own
task, so the waits are running by the time the flood's output arrives (no sleeping to line them up).

Usage: benches/scrollback_waits.py [--lines 150000] [--waits 3] [--rounds 5] [--binary PATH]
Uses target/release/screenpilot, built first if missing (`cargo build --release -p screenpilot`).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "screenpilot"


class Connection:
    """JSON lines to the daemon; answers read back by id."""

    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next_id = 0

    def send(self, op: str, **params) -> int:
        self.next_id += 1
        self.sock.sendall((json.dumps({"id": self.next_id, "op": op, "params": params}) + "\n").encode())
        return self.next_id

    def answer(self, wanted: int) -> dict:
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("the daemon closed the connection")
            answer = json.loads(line)
            if answer.get("id") == wanted and "ok" in answer:
                if not answer["ok"]:
                    raise RuntimeError(answer["error"])
                return answer["result"]

    def call(self, op: str, **params) -> dict:
        return self.answer(self.send(op, **params))

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def flood(conn: Connection, lines: int, tag: str) -> float:
    """Seconds from sending the flood to its end marker on the screen."""
    start = time.perf_counter()
    conn.call("send_line", sid="sh", text=f"seq 1 {lines}; echo {tag}-''done")
    result = conn.call("wait_for", sid="sh", pattern=f"^{tag}-done$", timeout_ms=600_000)
    took = time.perf_counter() - start
    if not result.get("matched"):
        raise RuntimeError(f"the flood {tag} did not finish: {result}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=150_000)
    parser.add_argument("--waits", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--binary", type=Path, default=BINARY,
                        help="the screenpilot to measure (default: the release build, built if missing)")
    args = parser.parse_args()
    binary = args.binary
    if not binary.exists() and binary == BINARY:
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "screenpilot"], cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="sp-scrollback-"))
    run_dir = work / "run"
    run_dir.mkdir(mode=0o700)
    env = dict(os.environ, SCREENPILOT_DIR=str(run_dir))
    daemon = subprocess.Popen([str(binary), "daemon"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    assert daemon.stdout is not None
    if "ready" not in daemon.stdout.readline().decode():
        print("the daemon did not start", file=sys.stderr)
        return 1
    sock = str(run_dir / "daemon.sock")
    conn = Connection(sock)
    alone: list[float] = []
    watched: list[float] = []
    try:
        conn.call("spawn", sid="sh", argv=["bash", "--norc", "--noprofile"],
                  env={"PS1": "$ "})
        conn.call("wait_for", sid="sh", pattern=r"\$ ?$", timeout_ms=20_000)
        for round_ in range(args.rounds):
            alone.append(flood(conn, args.lines, f"alone{round_}"))
            waiter = Connection(sock)
            for _ in range(args.waits):
                waiter.send("wait_for", sid="sh", pattern="never-printed-[x]", scrollback=True,
                            timeout_ms=600_000)
            waiter.call("status")
            watched.append(flood(conn, args.lines, f"watched{round_}"))
            # Closing the connection stops its waits.
            waiter.close()
            print(f"round {round_ + 1}: alone {alone[-1]:.2f} s, with {args.waits} scrollback waits "
                  f"{watched[-1]:.2f} s", flush=True)
    finally:
        conn.close()
        daemon.terminate()
        daemon.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    a, w = statistics.median(alone), statistics.median(watched)
    print(f"\nseq 1 {args.lines}, median of {args.rounds}: alone {a:.2f} s, with {args.waits} pending "
          f"scrollback waits {w:.2f} s ({w / a:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
