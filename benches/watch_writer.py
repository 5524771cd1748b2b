"""Benchmark fixture for the watch benchmarks: the program a person watches.

  watch_writer.py marks N FIFO  once a byte can be read from FIFO (the benchmark's go: its page is
                                watching), print `MARK <n> <t>;` N times, 100-200 ms apart at random, where t is
                                CLOCK_REALTIME in nanoseconds at the moment of the write (the page
                                compares it with its own clock when the line shows); then idle
  watch_writer.py flood RATE    print RATE bytes per second of ordinary text lines, in 10 ms slices
                                on an absolute schedule (so a slow tick does not lower the rate),
                                until killed

Both start with `READY` and write with os.write, so nothing is held in a buffer.
"""
import os
import random
import sys
import time


def marks(count: int, go: str) -> None:
    with open(go, "rb") as fifo:
        fifo.read(1)
    for n in range(1, count + 1):
        time.sleep(random.uniform(0.1, 0.2))
        os.write(1, f"MARK {n} {time.time_ns()};\n".encode())
    os.write(1, b"MARKS DONE\n")
    while True:
        time.sleep(3600)


def flood(rate: int) -> None:
    tick = 0.01
    per_tick = rate * tick
    # 80-column lines of varied text, like a build log: a counter, words, a few digits.
    words = "compile link test check build fetch resolve parse render encode".split()
    sent = 0.0
    n = 0
    start = time.monotonic()
    while True:
        sent += per_tick
        chunk = []
        size = 0
        while size < sent:
            n += 1
            line = f"{n:08d} {words[n % len(words)]:<8} {' '.join(words[(n + i) % len(words)] for i in range(5))}"
            line = (line + " " + str(n * 7919))[:79] + "\n"
            chunk.append(line)
            size += len(line)
        data = "".join(chunk).encode()
        os.write(1, data)
        sent -= len(data)
        start += tick
        delay = start - time.monotonic()
        if delay > 0:
            time.sleep(delay)


if __name__ == "__main__":
    os.write(1, b"READY\n")
    mode = sys.argv[1]
    if mode == "marks":
        marks(int(sys.argv[2]), sys.argv[3])
    elif mode == "flood":
        flood(int(sys.argv[2]))
    else:
        sys.exit(f"unknown mode {mode!r}: marks N FIFO | flood BYTES_PER_SECOND")
