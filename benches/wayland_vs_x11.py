#!/usr/bin/env python3
"""Wayland desktops against X11 ones, and against the reference Wayland clients, in one run.

Two desktops of one private daemon, both 1280x800: an X11 one (Xvfb, openbox, xterm) and a Wayland one
(headless sway, foot), each terminal running a shell that prints every line written into a pipe. Then,
ROUNDS times each, wall time of:

1. a screenshot: `screenpilot computer SID screenshot -o F` on each; on Wayland also `grim F`
   (the reference client: its own process, connection and PNG);
2. an action to a settled screenshot: `screenpilot computer SID type x` (input, then the screen
   settled, then the PNG); on Wayland also `wtype x` followed by `grim F` (no settling: what a script
   does today);
3. a wait: a waiter started first (`screenpilot wait SID --visual-change HASH`), then a line written
   into the pipe at t0 (the terminal draws it); the time until the waiter returns. On Wayland also the
   loop people write with grim: a screenshot every 100 ms until its bytes differ.

Usage: benches/wayland_vs_x11.py [ROUNDS] [--binary PATH]
(needs xvfb, openbox, xterm, sway, foot, grim, wtype; run as root, sway runs as nobody.)
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f}"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("rounds", nargs="?", type=int, default=15)
    parser.add_argument("--binary", default=str(ROOT / "target" / "release" / "screenpilot"))
    args = parser.parse_args()
    binary = args.binary
    work = Path(tempfile.mkdtemp(prefix="sp-wl-bench-"))
    env = dict(os.environ, SCREENPILOT_DIR=str(work / "run"))

    def sp(*argv: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run([binary, *argv], env=env, capture_output=True, text=True, **kw)

    pipes = {sid: work / f"{sid}.pipe" for sid in ("x", "w")}
    for pipe in pipes.values():
        os.mkfifo(pipe)
    shell = "env > {env}; exec 3<> '{pipe}'; while read -r l <&3; do echo \"$l\"; done"
    started = sp("desktop", "start", "--sid", "x", "--", "xterm", "-e", "sh", "-c",
                 shell.format(env=work / "x.env", pipe=pipes["x"]))
    assert started.returncode == 0, started.stderr
    started = sp("desktop", "start", "--wayland", "--sid", "w", "--", "foot", "sh", "-c",
                 shell.format(env=work / "w.env", pipe=pipes["w"]))
    assert started.returncode == 0, started.stderr
    while not (work / "w.env").exists() or not (work / "w.env").read_text():
        time.sleep(0.01)
    wl_env = dict(os.environ)
    for line in (work / "w.env").read_text().splitlines():
        key, _, value = line.partition("=")
        if key in ("WAYLAND_DISPLAY", "XDG_RUNTIME_DIR"):
            wl_env[key] = value
    wl_env.pop("DISPLAY", None)
    writers = {sid: open(pipe, "w") for sid, pipe in pipes.items()}  # noqa: SIM115

    def timed(argv: list[str], run_env: dict | None = None) -> float:
        t0 = time.perf_counter()
        subprocess.run(argv, env=run_env or env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
        return time.perf_counter() - t0

    rows: list[tuple[str, str]] = []
    shot = str(work / "shot.png")
    for sid, name in (("x", "X11"), ("w", "Wayland")):
        samples = [timed([binary, "computer", sid, "screenshot", "-o", shot]) for _ in range(args.rounds)]
        rows.append((f"screenshot, screenpilot on {name}", median_ms(samples)))
    samples = [timed(["grim", shot], wl_env) for _ in range(args.rounds)]
    rows.append(("screenshot, grim on Wayland", median_ms(samples)))

    for sid, name in (("x", "X11"), ("w", "Wayland")):
        samples = [timed([binary, "computer", sid, "type", "x"]) for _ in range(args.rounds)]
        rows.append((f"type a key to a settled screenshot, screenpilot on {name}", median_ms(samples)))
    samples = []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        subprocess.run(["wtype", "x"], env=wl_env, check=True)
        subprocess.run(["grim", shot], env=wl_env, check=True)
        samples.append(time.perf_counter() - t0)
    rows.append(("type a key, then a screenshot: wtype + grim on Wayland (not settled)", median_ms(samples)))

    for sid, name in (("x", "X11"), ("w", "Wayland")):
        samples = []
        for i in range(args.rounds):
            sp("wait", sid, "--ready", "--stable-ms", "150")
            snap = sp("--json", "snapshot", sid)
            digest = snap.stdout.split('"hash":"', 1)[1].split('"', 1)[0]
            waiter = subprocess.Popen([binary, "wait", sid, "--visual-change", digest, "--timeout-ms",
                                       "20000"], env=env, stdout=subprocess.DEVNULL)
            # The waiter is running and has read the baseline before t0.
            time.sleep(0.3)
            t0 = time.perf_counter()
            writers[sid].write(f"line {i}\n")
            writers[sid].flush()
            waiter.wait()
            samples.append(time.perf_counter() - t0)
        rows.append((f"a line drawn to the waiter returning, screenpilot on {name}", median_ms(samples)))
    samples = []
    for i in range(args.rounds):
        sp("wait", "w", "--ready", "--stable-ms", "150")
        subprocess.run(["grim", shot], env=wl_env, check=True)
        before = hashlib.sha1(Path(shot).read_bytes()).hexdigest()
        done = threading.Event()

        def loop() -> None:
            while True:
                subprocess.run(["grim", shot + ".2"], env=wl_env, check=True)
                if hashlib.sha1(Path(shot + ".2").read_bytes()).hexdigest() != before:
                    done.set()
                    return
                time.sleep(0.1)

        t0 = time.perf_counter()
        writers["w"].write(f"grim {i}\n")
        writers["w"].flush()
        thread = threading.Thread(target=loop)
        thread.start()
        thread.join()
        samples.append(time.perf_counter() - t0)
    rows.append(("a line drawn to the loop noticing: grim every 100 ms on Wayland", median_ms(samples)))

    sp("daemon", "stop", "--end-sessions")
    shutil.rmtree(work, ignore_errors=True)
    print(f"| ({args.rounds} rounds each, medians) | ms |")
    print("|---|---|")
    for what, ms in rows:
        print(f"| {what} | {ms} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
