#!/usr/bin/env python3
"""Soak: mixed random operations on 20 sessions for a long time; does the daemon stay flat?

One private daemon (its own SCREENPILOT_DIR) serves a few worker threads, each with its own
connection, that pick random operations on 20 sessions: close and respawn, send_keys, send_line with
a wait for its echo, expect, wait_change, snapshots (with cells, styles, scrollback), screenshots,
resizes, and now and then a short-lived session, a program that ignores HUP, and (with --desktop) a
desktop that is started, screenshot and closed. Every few seconds the daemon's RSS, open descriptors
and threads are sampled from /proc. At the end it prints the figures, start against end (after a
warm-up) and the peak, and whether each stayed flat: the end within 20% (and a small absolute slack)
of the level after warm-up, with no steady climb over the second half.

Usage: benches/soak.py [--minutes 30] [--sessions 20] [--workers 4] [--sample-secs 5] [--desktop]
                       [--binary PATH] [--csv FILE]
Uses target/release/screenpilot, built first if missing (`cargo build --release -p screenpilot`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "screenpilot"

# Programs a session runs: shells and ones that draw, scroll or ignore hang-up.
PROGRAMS = [
    ["bash", "--norc", "--noprofile"],
    ["sh"],
    ["sh", "-c", "trap '' HUP; exec sh"],
    ["sh", "-c", "while :; do seq 1 200; sleep 0.5; done"],
    ["python3", "-q"],
]


class Client:
    """One connection to the daemon; one request at a time."""

    def __init__(self, path: str):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.file = self.sock.makefile("rb")
        self.next_id = 0

    def call(self, op: str, **params) -> dict:
        self.next_id += 1
        line = json.dumps({"id": self.next_id, "op": op, "params": params}) + "\n"
        self.sock.sendall(line.encode())
        while True:
            raw = self.file.readline()
            if not raw:
                raise ConnectionError("the daemon closed the connection")
            answer = json.loads(raw)
            if answer.get("id") == self.next_id and "ok" in answer:
                return answer

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def sample(pid: int) -> tuple[float, int, int]:
    """RSS in MiB, open descriptors, threads of process `pid`."""
    rss = threads = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("Threads:"):
                threads = int(line.split()[1])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss / 1024, fds, threads


class Soak:
    def __init__(self, args, sock: str):
        self.args = args
        self.sock = sock
        self.sids = [f"s{i}" for i in range(args.sessions)]
        self.locks = {sid: threading.Lock() for sid in self.sids}
        self.stop = threading.Event()
        self.counts: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.unexpected: list[str] = []
        self.tally = threading.Lock()

    def note(self, op: str, answer: dict) -> None:
        with self.tally:
            self.counts[op] = self.counts.get(op, 0) + 1
            if not answer.get("ok"):
                code = answer.get("error", {}).get("code", "?")
                key = f"{op}:{code}"
                self.errors[key] = self.errors.get(key, 0) + 1
                # Timeouts of waits and input to an exited program are expected in a random mix.
                if code not in ("timeout", "session_exited", "unknown_session", "duplicate_session",
                                "display_busy", "limit_exceeded"):
                    if len(self.unexpected) < 20:
                        self.unexpected.append(json.dumps(answer)[:300])

    def spawn(self, client: Client, sid: str) -> None:
        argv = random.choice(PROGRAMS)
        cols, rows = random.choice([(80, 24), (120, 40), (200, 50), (40, 10)])
        self.note("spawn", client.call("spawn", sid=sid, argv=argv, cols=cols, rows=rows))

    def one_step(self, client: Client, rng: random.Random) -> None:
        sid = rng.choice(self.sids)
        with self.locks[sid]:
            roll = rng.random()
            if roll < 0.05:
                self.note("close", client.call("close", sid=sid))
                self.spawn(client, sid)
            elif roll < 0.25:
                token = f"tok{rng.randrange(10**9)}"
                self.note("send_line", client.call("send_line", sid=sid, text=f"echo {token}"))
                self.note("wait_for", client.call("wait_for", sid=sid, pattern=token, timeout_ms=2000))
            elif roll < 0.35:
                keys = rng.choice([["Up"], ["C-c"], ["a", "b", "BSpace", "BSpace"], ["Tab"], ["Escape"]])
                self.note("send_keys", client.call("send_keys", sid=sid, keys=keys))
            elif roll < 0.45:
                self.note("expect", client.call("expect", sid=sid, patterns=[r"\$ ?$", r">>> ?$", r"\d+"],
                                                 timeout_ms=300))
            elif roll < 0.50:
                self.note("wait_change", client.call("wait_change", sid=sid, timeout_ms=200))
            elif roll < 0.75:
                params = rng.choice([{}, {"as_json": True}, {"styled": True}, {"scrollback": 500}])
                self.note("snapshot", client.call("snapshot", sid=sid, **params))
            elif roll < 0.82:
                self.note("screenshot", client.call("screenshot", sid=sid, format=rng.choice(["png", "svg"])))
            elif roll < 0.90:
                cols, rows = rng.choice([(80, 24), (132, 43), (60, 20), (200, 60)])
                self.note("resize", client.call("resize", sid=sid, cols=cols, rows=rows))
            elif roll < 0.95:
                self.note("list", client.call("list"))
            else:
                # A short-lived program beside the 20: spawn, wait for its exit, close.
                extra = f"x{rng.randrange(10**6)}"
                self.note("spawn", client.call("spawn", sid=extra, cmd="seq 1 3000", detect_child_exit=True))
                self.note("wait_exit", client.call("wait_exit", sid=extra, timeout_ms=5000))
                self.note("close", client.call("close", sid=extra))

    def worker(self, seed: int) -> None:
        rng = random.Random(seed)
        client = Client(self.sock)
        try:
            while not self.stop.is_set():
                self.one_step(client, rng)
                # A connection now and then ends and a new one starts, as CLI calls do.
                if rng.random() < 0.02:
                    client.close()
                    client = Client(self.sock)
        finally:
            client.close()

    def desktop_loop(self) -> None:
        client = Client(self.sock)
        rng = random.Random(7)
        while not self.stop.is_set():
            answer = client.call("desktop_start", sid="desk", argv=["xterm"])
            self.note("desktop_start", answer)
            for _ in range(rng.randrange(3, 10)):
                if self.stop.is_set():
                    break
                self.note("screenshot", client.call("screenshot", sid="desk"))
            self.note("close", client.call("close", sid="desk"))
            self.stop.wait(5)
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sample-secs", type=float, default=5)
    parser.add_argument("--warmup-secs", type=float, default=300)
    parser.add_argument("--desktop", action="store_true", help="also start and close a desktop (needs Xvfb, xterm)")
    parser.add_argument("--binary", type=Path, default=BINARY, help="the screenpilot to soak")
    parser.add_argument("--csv", help="write every sample (secs, rss_mib, fds, threads) here")
    args = parser.parse_args()
    if args.binary == BINARY and not BINARY.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "screenpilot"], cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="sp-soak-"))
    run_dir = work / "run"
    run_dir.mkdir(mode=0o700)
    env = dict(os.environ, SCREENPILOT_DIR=str(run_dir),
               SCREENPILOT_MAX_SESSIONS=str(args.sessions + 8))
    log = open(work / "daemon.log", "wb")
    daemon = subprocess.Popen([str(args.binary), "daemon"], env=env, stdout=subprocess.PIPE, stderr=log)
    assert daemon.stdout is not None
    ready = daemon.stdout.readline().decode()
    if "ready" not in ready:
        print(f"the daemon did not start: {ready!r}", file=sys.stderr)
        return 1
    sock = str(run_dir / "daemon.sock")
    soak = Soak(args, sock)
    setup = Client(sock)
    for sid in soak.sids:
        soak.spawn(setup, sid)
    setup.close()

    threads = [threading.Thread(target=soak.worker, args=(seed,), daemon=True) for seed in range(args.workers)]
    if args.desktop:
        threads.append(threading.Thread(target=soak.desktop_loop, daemon=True))
    for thread in threads:
        thread.start()

    samples: list[tuple[float, float, int, int]] = []
    started = time.monotonic()
    end = started + args.minutes * 60
    print(f"soak: {args.sessions} sessions, {args.workers} workers, {args.minutes} min; daemon pid {daemon.pid}",
          flush=True)
    while time.monotonic() < end:
        if daemon.poll() is not None:
            print(f"the daemon exited ({daemon.returncode})", file=sys.stderr)
            return 1
        now = time.monotonic() - started
        rss, fds, nthreads = sample(daemon.pid)
        samples.append((now, rss, fds, nthreads))
        if len(samples) % 12 == 1:
            print(f"  {now:7.0f} s  rss {rss:7.1f} MiB  fds {fds:4d}  threads {nthreads:3d}  "
                  f"ops {sum(soak.counts.values())}", flush=True)
        time.sleep(min(args.sample_secs, max(0.0, end - time.monotonic())))
    soak.stop.set()
    for thread in threads:
        thread.join(timeout=30)
    # Settle: every session closed, then one last sample.
    final = Client(sock)
    for info in final.call("list").get("result", {}).get("sessions", []):
        final.call("close", sid=info["sid"])
    after_close = sample(daemon.pid)
    final.close()
    if args.csv:
        with open(args.csv, "w") as out:
            out.write("secs,rss_mib,fds,threads\n")
            for row in samples:
                out.write(",".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) + "\n")

    warm = [s for s in samples if s[0] >= args.warmup_secs] or samples
    half = warm[len(warm) // 2:]

    def verdict(index: int, name: str, unit: str, slack: float) -> bool:
        first, last = warm[0][index], warm[-1][index]
        peak = max(s[index] for s in warm)
        # A climb: the second half's last quarter above its first quarter by more than the slack.
        quarter = max(1, len(half) // 4)
        early = sum(s[index] for s in half[:quarter]) / quarter
        late = sum(s[index] for s in half[-quarter:]) / quarter
        flat = last <= first * 1.2 + slack and late <= early * 1.1 + slack
        print(f"{name:8s} after warm-up {first:8.1f} {unit}  end {last:8.1f} {unit}  peak {peak:8.1f} {unit}  "
              f"{'flat' if flat else 'NOT FLAT'}")
        return flat

    total = sum(soak.counts.values())
    print(f"\n{total} operations in {samples[-1][0] / 60:.1f} min "
          f"({total / max(1.0, samples[-1][0]):.0f}/s), {len(samples)} samples")
    print("by operation: " + ", ".join(f"{k} {v}" for k, v in sorted(soak.counts.items())))
    print("errors: " + (", ".join(f"{k} {v}" for k, v in sorted(soak.errors.items())) or "none"))
    ok = all([verdict(1, "rss", "MiB", 8), verdict(2, "fds", "", 4), verdict(3, "threads", "", 2)])
    print(f"after closing every session: rss {after_close[0]:.1f} MiB, fds {after_close[1]}, "
          f"threads {after_close[2]}")
    if soak.unexpected:
        ok = False
        print("unexpected errors (first 20):")
        for line in soak.unexpected:
            print("  " + line)
    daemon.terminate()
    daemon.wait(timeout=60)
    log.close()
    shutil.rmtree(work, ignore_errors=True)
    print("FLAT" if ok else "NOT FLAT")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
