#!/usr/bin/env python3
"""What holders cost, and what a restart costs: the same binary with holders (the default) and without
(SCREENPILOT_HOLDERS=off: sessions end with their daemon, as before holders), side by side in one run.

  python3 benches/holders.py [--binary target/release/screenpilot] [--repeat 30] [--sessions 50]

Per mode: spawn time (bash to its prompt), wait latency (a line typed until its output shows), flood
(`seq 1 200000` until its last line), memory per session (the daemon's and the holders' PSS over 20 idle
bash sessions, less a daemon with none), and, with holders, the restart: `kill -9` of a daemon holding N
sessions, then the time until `list` answers from the next daemon with all N.
"""
import argparse
import os
import select
import signal
import statistics
import subprocess
import tempfile
import time


def run(binary, env, *args, check=True):
    out = subprocess.run([binary, *args], env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if check and out.returncode != 0:
        raise SystemExit(f"screenpilot {args}: {out.stderr}")
    return out.stdout


def pss_kb(pid):
    """Proportional set size: pages shared with other processes (the binary's) count in part."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def ours(directory):
    """The daemon's and the holders' pids (their environment names this directory)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{entry}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            continue
        if b"daemon" in argv and (b"run" in argv or b"hold" in argv) and f"SCREENPILOT_DIR={directory}".encode() in environ:
            pids.append(int(entry))
    return pids


def spawn(binary, env, sid):
    run(binary, env, "spawn", "--sid", sid, "--env", "PS1=$ ", "--until", r"^\$ $", "--no-screen", "--", "bash", "--norc", "--noprofile")


def measure(binary, holders, repeat, sessions):
    directory = tempfile.mkdtemp(prefix="sp-holders-")
    env = dict(os.environ, SCREENPILOT_DIR=directory, SCREENPILOT_MAX_SESSIONS="200")
    if not holders:
        env["SCREENPILOT_HOLDERS"] = "off"
    result = {}
    run(binary, env, "daemon", "start")
    base = sum(pss_kb(p) for p in ours(directory))
    spawns = []
    for n in range(repeat):
        t = time.perf_counter()
        spawn(binary, env, f"s{n}")
        spawns.append(time.perf_counter() - t)
        run(binary, env, "close", f"s{n}")
    result["spawn_ms"] = statistics.median(spawns) * 1000
    spawn(binary, env, "w")
    waits = []
    for n in range(repeat):
        t = time.perf_counter()
        run(binary, env, "line", "w", f"echo mark-{n}", "--until", f"^mark-{n}$", "--no-screen")
        waits.append(time.perf_counter() - t)
    result["wait_ms"] = statistics.median(waits) * 1000
    floods = []
    for n in range(max(5, repeat // 3)):
        t = time.perf_counter()
        run(binary, env, "line", "w", f"seq 1 200000; echo flood-{n}", "--until", f"^flood-{n}$", "--until-timeout-ms", "120000", "--no-screen")
        floods.append(time.perf_counter() - t)
    result["flood_ms"] = statistics.median(floods) * 1000
    run(binary, env, "close", "w")
    for n in range(20):
        spawn(binary, env, f"m{n}")
    total = sum(pss_kb(p) for p in ours(directory))
    result["kb_per_session"] = (total - base) / 20
    run(binary, env, "daemon", "stop", "--end-sessions")
    if holders:
        for n in range(sessions):
            spawn(binary, env, f"r{n}")
        daemon = int(run(binary, env, "--json", "daemon", "status").split('"pid":')[1].split(",")[0])
        # Gone when its pidfd says so: the whole process, every thread, its socket closed.
        pidfd = os.pidfd_open(daemon)
        os.kill(daemon, signal.SIGKILL)
        select.select([pidfd], [], [], 30)
        os.close(pidfd)
        t = time.perf_counter()
        listed = run(binary, env, "--json", "list")
        result["restart_ms"] = (time.perf_counter() - t) * 1000
        result["restart_sessions"] = listed.count('"sid"')
        run(binary, env, "daemon", "stop", "--end-sessions")
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default="target/release/screenpilot")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=50)
    args = parser.parse_args()
    rows = [("holders (default)", measure(args.binary, True, args.repeat, args.sessions)),
            ("SCREENPILOT_HOLDERS=off", measure(args.binary, False, args.repeat, args.sessions))]
    print(f"{'mode':26} {'spawn ms':>9} {'wait ms':>8} {'flood ms':>9} {'KB/session':>11} {'restart':>18}")
    for name, r in rows:
        restart = f"{r['restart_ms']:.0f} ms, {r['restart_sessions']} kept" if "restart_ms" in r else "sessions lost"
        print(f"{name:26} {r['spawn_ms']:9.1f} {r['wait_ms']:8.1f} {r['flood_ms']:9.0f} {r['kb_per_session']:11.0f} {restart:>18}")


if __name__ == "__main__":
    main()
