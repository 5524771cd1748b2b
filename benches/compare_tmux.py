#!/usr/bin/env python3
"""Side-by-side benchmark, one run, same machine: how fast an agent learns that a program printed
something, and how long one screen read takes, with screenpilot versus the tools people use today
(tmux send-keys/capture-pane polling loops, pexpect).

Run: .venv/bin/python benches/compare_tmux.py [--iterations N]   (after `cargo build --release`)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIXTURE = os.path.join(HERE, "emit_token.py")
DELAY = "0.1"  # the program answers 100 ms after each request, so every waiter is armed in time


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, round((len(values) - 1) * p))]


def summary(name, values_ms):
    return {
        "method": name,
        "runs": len(values_ms),
        "median_ms": round(statistics.median(values_ms), 3),
        "p95_ms": round(pct(values_ms, 0.95), 3),
    }


def token_time(text, n):
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "TOKEN" and parts[1] == str(n):
            return int(parts[2])
    return None


def bench_screenpilot(sp, iterations, env):
    run = lambda *a, **k: subprocess.run([sp, *a], env=env, capture_output=True, text=True, **k)
    run("spawn", "--sid", "bench", "--", sys.executable, "-u", FIXTURE, DELAY, check=True)
    run("wait", "bench", "--regex", "READY", "--timeout-ms", "10000", check=True)
    waits, reads = [], []
    for n in range(1, iterations + 1):
        run("line", "bench", "go", check=True)
        out = run("wait", "bench", "--regex", rf"^TOKEN {n} \d+$", "--timeout-ms", "10000", "--json", check=True)
        seen = time.monotonic_ns()
        written = token_time(json.loads(out.stdout)["text"], n)
        waits.append((seen - written) / 1e6)
    for _ in range(iterations):
        start = time.monotonic_ns()
        run("snapshot", "bench", check=True)
        reads.append((time.monotonic_ns() - start) / 1e6)
    run("close", "bench")
    return waits, reads


def bench_tmux(iterations, poll_s):
    sock = ["-L", f"spbench{os.getpid()}-{int(poll_s * 1000)}"]
    tmux = lambda *a: subprocess.run(["tmux", *sock, *a], capture_output=True, text=True, check=True)
    tmux("new-session", "-d", "-s", "b", "-x", "80", "-y", "24", f"{sys.executable} -u {FIXTURE} {DELAY}")
    while "READY" not in tmux("capture-pane", "-p", "-t", "b").stdout:
        time.sleep(0.01)
    waits, reads = [], []
    try:
        for n in range(1, iterations + 1):
            tmux("send-keys", "-t", "b", "go", "Enter")
            while True:
                written = token_time(tmux("capture-pane", "-p", "-t", "b").stdout, n)
                if written is not None:
                    waits.append((time.monotonic_ns() - written) / 1e6)
                    break
                time.sleep(poll_s)
        for _ in range(iterations):
            start = time.monotonic_ns()
            tmux("capture-pane", "-p", "-t", "b")
            reads.append((time.monotonic_ns() - start) / 1e6)
    finally:
        subprocess.run(["tmux", *sock, "kill-server"], capture_output=True)
    return waits, reads


def bench_pexpect(iterations):
    import pexpect

    child = pexpect.spawn(sys.executable, ["-u", FIXTURE, DELAY], encoding="utf-8", dimensions=(24, 80))
    child.expect("READY")
    waits = []
    for n in range(1, iterations + 1):
        child.sendline("go")
        child.expect(rf"TOKEN {n} (\d+)")
        waits.append((time.monotonic_ns() - int(child.match.group(1))) / 1e6)
    child.close(force=True)
    return waits


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "screenpilot"))
    args = parser.parse_args()
    env = dict(os.environ, SCREENPILOT_DIR=tempfile.mkdtemp(prefix="spbench-"))
    try:
        sp_waits, sp_reads = bench_screenpilot(args.binary, args.iterations, env)
    finally:
        subprocess.run([args.binary, "daemon", "stop", "--end-sessions"], env=env, capture_output=True)
    tmux10_waits, tmux_reads = bench_tmux(args.iterations, 0.01)
    tmux50_waits, _ = bench_tmux(args.iterations, 0.05)
    pexpect_waits = bench_pexpect(args.iterations)
    results = {
        "wait_latency (program writes -> waiter knows)": [
            summary("screenpilot CLI `wait --regex` (new process per wait)", sp_waits),
            summary("tmux capture-pane loop, 10 ms poll", tmux10_waits),
            summary("tmux capture-pane loop, 50 ms poll", tmux50_waits),
            summary("pexpect expect() (in-process, owns the pty)", pexpect_waits),
        ],
        "screen read round trip": [
            summary("screenpilot snapshot SID", sp_reads),
            summary("tmux capture-pane -p", tmux_reads),
        ],
    }
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
