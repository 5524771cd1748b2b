#!/usr/bin/env python3
"""What settling adds to a step: the same REPL step (`line py 'x = 1' --until '^>>> $'`) with the
default settle and with --no-settle, in turn, through the CLI; and the settle each answer reports
(`until.settle_ms`). Run: python3 benches/settle_cost.py [RUNS] (with target/release/screenpilot built).
"""
import json, os, statistics, subprocess, sys, tempfile, time

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 40
binary = os.path.join(os.path.dirname(__file__), "..", "target", "release", "screenpilot")
env = dict(os.environ, SCREENPILOT_DIR=tempfile.mkdtemp(prefix="sp-settle-"))


def sp(*args):
    return subprocess.run([binary, "--json", *args], env=env, capture_output=True, text=True)


sp("spawn", "--sid", "py", "--until", "^>>> $", "--", "python3", "-q")
walls = {"settle": [], "no-settle": []}
settles = []
for _ in range(runs):
    for mode in ("settle", "no-settle"):
        extra = ["--no-settle"] if mode == "no-settle" else []
        start = time.monotonic()
        out = sp("line", "py", "x = 1", "--until", "^>>> $", "--no-screen", *extra)
        walls[mode].append((time.monotonic() - start) * 1000)
        answer = json.loads(out.stdout)
        assert answer["until"]["held"] == "regex", answer
        if mode == "settle":
            settles.append(answer["until"].get("settle_ms", 0.0))
sp("daemon", "stop", "--end-sessions")
for mode, times in walls.items():
    print(f"{mode:10} step wall median {statistics.median(times):6.1f} ms  (min {min(times):.1f}, max {max(times):.1f}, {runs} steps)")
print(f"settle_ms reported: median {statistics.median(settles):.1f} ms, max {max(settles):.1f} ms")
