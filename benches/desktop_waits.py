#!/usr/bin/env python3
"""Desktop waits, side by side in one run: how long after a window's title changes does the waiter
know? screenpilot's `wait --regex` (woken by the X watcher) next to the loop people write today:
`xdotool search --name` every 100 ms.

Each round writes a new title into a pipe that an xterm's shell reads; the moment the write returns
is t0 (the shell then prints the title escape within about a millisecond). The screenpilot waiter is
started 200 ms before t0, so its start-up is not counted.

Usage: benches/desktop_waits.py [ROUNDS]   (needs xvfb, xterm, xdotool; uses target/release/screenpilot,
built first if missing: `cargo build --release -p screenpilot`)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "screenpilot"


def poll(xenv: dict, title: str, found: threading.Event) -> None:
    """Today's loop: look for the window every 100 ms."""
    while subprocess.run(["xdotool", "search", "--name", f"^{title}$"], env=xenv,
                         stdout=subprocess.DEVNULL).returncode != 0:
        time.sleep(0.1)
    found.set()


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    if not BINARY.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "screenpilot"], cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="sp-bench-"))
    env = dict(os.environ, SCREENPILOT_DIR=str(work / "run"))
    sp = lambda *args, **kw: subprocess.run([str(BINARY), *args], env=env, **kw)  # noqa: E731
    fifo = work / "titles"
    os.mkfifo(fifo)
    # The shell holds the pipe open both ways, so no line is lost between two reads.
    script = f"""exec 3<> '{fifo}'; while read -r t <&3; do printf '\\033]0;%s\\007' "$t"; done"""
    started = sp("--json", "desktop", "start", "--sid", "b", "--", "xterm", "-e", "sh", "-c", script,
                 capture_output=True, text=True, check=True)
    info = json.loads(started.stdout)
    xenv = dict(os.environ, DISPLAY=info["display"], XAUTHORITY=info["xauthority"])
    ours: list[float] = []
    polled: list[float] = []
    try:
        for i in range(rounds):
            title = f"round-{i}"
            waiter = subprocess.Popen([str(BINARY), "wait", "b", "--regex", f"^{title}$", "--timeout-ms", "10000"],
                                      env=env, stdout=subprocess.DEVNULL)
            # Let the waiter start and subscribe before t0 (a benchmark's pause, not a test's sync).
            time.sleep(0.2)
            with open(fifo, "w") as pipe:
                pipe.write(title + "\n")
            t0 = time.perf_counter()
            waiter.wait()
            ours.append((time.perf_counter() - t0) * 1000)

            title = f"poll-{i}"
            found = threading.Event()
            poller = threading.Thread(target=poll, args=(xenv, title, found))
            poller.start()
            time.sleep(0.2)  # the poller is mid-cycle at t0, as it would be in an agent's loop
            with open(fifo, "w") as pipe:
                pipe.write(title + "\n")
            t0 = time.perf_counter()
            found.wait()
            polled.append((time.perf_counter() - t0) * 1000)
            poller.join()
    finally:
        sp("close", "b", capture_output=True)
        sp("daemon", "stop", "--end-sessions", capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    def row(name: str, xs: list[float]) -> str:
        xs = sorted(xs)
        p90 = xs[int(len(xs) * 0.9) - 1]
        return f"| {name} | {statistics.median(xs):.1f} ms | {p90:.1f} ms | {len(xs)} |"

    print("| waiter | median | p90 | rounds |")
    print("|---|---|---|---|")
    print(row("screenpilot wait --regex (CLI, X watcher)", ours))
    print(row("xdotool search --name every 100 ms", polled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
