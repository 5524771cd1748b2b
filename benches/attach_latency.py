#!/usr/bin/env python3
"""How long a person at `screenpilot attach` waits to see what they typed: from a key written to the
person's terminal to its echo painted back on that terminal. The whole way round: attach reads the
key, write_raw sends it to the session's pty, the program (cat, in cooked mode: the pty echoes)
answers, the daemon's emulator takes the echo, the attachment paints it, attach writes the paint.

The person's terminal is a pty this script holds (80x24); the program is `cat`. Each sample types a
word of one repeated letter, different from the words still on screen, so the paint carries it whole.

Run (after `cargo build`, or --bin target/release/screenpilot):
  python3 benches/attach_latency.py [--samples 200] [--bin PATH]
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import select
import statistics
import struct
import subprocess
import tempfile
import termios
import time


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=200)
    # Keys further apart than the attachment's 16 ms frame interval, as a person types (keys closer
    # together than that are painted together, at most one paint per 16 ms).
    parser.add_argument("--gap-ms", type=float, default=50)
    here = os.path.dirname(os.path.abspath(__file__))
    parser.add_argument("--bin", default=os.path.join(here, "..", "target", "debug", "screenpilot"))
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="sp-attach-bench-") as spdir:
        os.chmod(spdir, 0o700)
        env = dict(os.environ, SCREENPILOT_DIR=spdir)
        sp = lambda *a: subprocess.run([args.bin, *a], env=env, check=True, capture_output=True)
        sp("spawn", "--sid", "cat", "--", "cat")
        pid, master = pty.fork()
        if pid == 0:
            os.execve(args.bin, [args.bin, "attach", "cat"], env)
        fcntl.ioctl(master, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
        try:
            read_until(master, b"\x1b[?1049h", 10)
            samples = []
            for n in range(args.samples):
                word = bytes([ord("a") + n % 26]) * 6
                start = time.perf_counter()
                os.write(master, word + b"\r")
                read_until(master, word, 10)
                samples.append((time.perf_counter() - start) * 1000)
                read_until(master, word, 10)  # cat's own line: the screen is quiet again
                time.sleep(args.gap_ms / 1000)  # pacing, as a person types; not synchronisation
            os.write(master, b"\x1dd")
            read_until(master, b"detached", 10)
        finally:
            os.waitpid(pid, 0)
            sp("daemon", "stop", "--end-sessions")
    samples.sort()
    print(
        f"attach key-to-echo on the person's terminal, {len(samples)} samples {args.gap_ms:g} ms apart: "
        f"median {statistics.median(samples):.2f} ms, p90 {samples[int(len(samples) * 0.9)]:.2f} ms, "
        f"max {samples[-1]:.2f} ms"
    )


def read_until(fd: int, needle: bytes, timeout: float, _buf: dict = {"data": b""}) -> None:
    """Read the person's terminal until `needle` shows; what follows it stays for the next call."""
    deadline = time.monotonic() + timeout
    while needle not in _buf["data"]:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"{needle!r} never showed")
        _buf["data"] += os.read(fd, 65536)
    _buf["data"] = _buf["data"].split(needle, 1)[1]


if __name__ == "__main__":
    main()
