"""Benchmark fixture: for each line read, wait about DELAY seconds (0.5x to 1.5x, at random, so a polling
waiter's interval cannot line up with it), then print `TOKEN <n> <t>` where t is
CLOCK_MONOTONIC in nanoseconds at the moment of the write. Waiters compare t with their own clock when
they see the line, which gives output-to-observer latency without any shared state."""
import os
import random
import sys
import time

delay = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
n = 0
sys.stdout.write("READY\n")
sys.stdout.flush()
for _ in sys.stdin:
    n += 1
    if delay:
        time.sleep(delay * random.uniform(0.5, 1.5))
    line = f"TOKEN {n} {time.monotonic_ns()}\n"
    os.write(1, line.encode())
