#!/usr/bin/env python3
"""Memory per session with a full history, screenpilot's daemon against a tmux server, side by side in
one run on the same machine: N sessions each run `seq 1 200000` with a 10,000-line history, and the
resident memory each server gained (screenpilot: its daemon and the sessions' holders; PSS, so pages
shared between processes count in part) is divided by N. Run at 80 and 200 columns.

Run: python3 benches/memory_vs_tmux.py [--sessions 20] [--binary target/release/screenpilot]
     (after `cargo build --release`; needs tmux on PATH)

This is a measurement, not a timed test: it polls tmux for the end of the output (tmux has no wait),
and screenpilot's own `wait` for it.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from holders import ours  # the daemon's and its holders' pids

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
HISTORY = 10_000
DONE = "SEQ-DONE"
# The program prints, says it is done, then stays alive so the session (and its history) is kept.
PROGRAM = f"seq 1 200000; echo {DONE}; exec sleep 3600"


def rss_kib(pid):
    """Proportional resident memory of one process (pages shared with others count in part), from
    the kernel's own accounting."""
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("Pss:"):
                return int(line.split()[1])
    raise RuntimeError(f"no Pss for pid {pid}")


def measure_screenpilot(binary, sessions, cols, rows):
    tmp = tempfile.mkdtemp(prefix="sp-mem-")
    env = dict(os.environ)
    env.update(
        SCREENPILOT_DIR=tmp,
        SCREENPILOT_SCROLLBACK_LINES=str(HISTORY),
        SCREENPILOT_MAX_SESSIONS=str(sessions + 1),
    )
    run = lambda *a: subprocess.run([binary, *a], env=env, capture_output=True, text=True, check=True)
    try:
        run("daemon", "start")
        # One idle session first, so the figure counts what a session's history adds, not the first
        # session's one-off costs (threads, buffers).
        run("spawn", "--sid", "idle", "--size", f"{cols}x{rows}", "--", "sh", "-c", "exec sleep 3600")
        run("wait", "idle", "--ready", "--stable-ms", "200", "--timeout-ms", "5000")
        before = sum(rss_kib(p) for p in ours(tmp))
        for i in range(sessions):
            run("spawn", "--sid", f"s{i}", "--size", f"{cols}x{rows}", "--", "sh", "-c", PROGRAM)
        for i in range(sessions):
            run("wait", f"s{i}", "--regex", DONE, "--timeout-ms", "120000")
        after = sum(rss_kib(p) for p in ours(tmp))
        history = run("snapshot", "s0", "--scrollback", str(HISTORY + 100)).stdout.splitlines()
        return before, after, len(history)
    finally:
        subprocess.run([binary, "daemon", "stop", "--end-sessions"], env=env, capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)


def measure_tmux(sessions, cols, rows):
    sock = f"sp-mem-{os.getpid()}"
    conf = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    conf.write(f"set -g history-limit {HISTORY}\nset -g status off\n")
    conf.close()
    tmux = lambda *a: subprocess.run(
        ["tmux", "-L", sock, "-f", conf.name, *a], capture_output=True, text=True, check=True
    )
    try:
        tmux("new-session", "-d", "-s", "idle", "-x", str(cols), "-y", str(rows), "exec sleep 3600")
        pid = int(tmux("display-message", "-p", "-t", "idle", "#{pid}").stdout)
        time.sleep(0.2)
        before = rss_kib(pid)
        for i in range(sessions):
            tmux("new-session", "-d", "-s", f"s{i}", "-x", str(cols), "-y", str(rows), PROGRAM)
        deadline = time.monotonic() + 120
        for i in range(sessions):
            while DONE not in tmux("capture-pane", "-p", "-t", f"s{i}").stdout:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"tmux session s{i} did not finish")
                time.sleep(0.05)
        after = rss_kib(pid)
        size = tmux("display-message", "-p", "-t", "s0", "#{history_size}").stdout.strip()
        return before, after, int(size)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
        os.unlink(conf.name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "screenpilot"))
    parser.add_argument("--sizes", default="80x24,200x50")
    args = parser.parse_args()
    if not shutil.which("tmux"):
        sys.exit("tmux is not on PATH")
    results = []
    for size in args.sizes.split(","):
        cols, rows = (int(x) for x in size.split("x"))
        sp = measure_screenpilot(args.binary, args.sessions, cols, rows)
        tm = measure_tmux(args.sessions, cols, rows)
        row = {"size": size, "sessions": args.sessions}
        for name, (before, after, history) in (("screenpilot", sp), ("tmux", tm)):
            row[name] = {
                "rss_before_mib": round(before / 1024, 1),
                "rss_after_mib": round(after / 1024, 1),
                "per_session_mib": round((after - before) / 1024 / args.sessions, 2),
                "history_lines_kept": history,
            }
        row["ratio"] = round(
            row["screenpilot"]["per_session_mib"] / max(row["tmux"]["per_session_mib"], 0.01), 2
        )
        results.append(row)
        print(json.dumps(row), flush=True)
    print()
    print("| size | sessions | screenpilot MiB/session | tmux MiB/session | ratio |")
    print("|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['size']} | {r['sessions']} | {r['screenpilot']['per_session_mib']} "
            f"| {r['tmux']['per_session_mib']} | {r['ratio']} |"
        )


if __name__ == "__main__":
    main()
