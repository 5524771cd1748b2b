"""Benchmark fixture: for each line read, wait DELAY seconds, then print `TOKEN <n> <t>` where t is
CLOCK_MONOTONIC in nanoseconds at the moment of the write. Waiters compare t with their own clock when
they see the line, which gives output-to-observer latency without any shared state."""
import os
import sys
import time

delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
n = 0
sys.stdout.write("READY\n")
sys.stdout.flush()
for _ in sys.stdin:
    n += 1
    if delay:
        time.sleep(delay)
    line = f"TOKEN {n} {time.monotonic_ns()}\n"
    os.write(1, line.encode())
