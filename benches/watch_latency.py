#!/usr/bin/env python3
"""How long from a program writing a line to a live web view showing it: `screenpilot watch` side by
side with `asciinema stream --local` (asciinema 3's built-in server and asciinema-player), one run,
same machine, same program, same headless chromium. Target for screenpilot: < 50 ms median.

The program (watch_writer.py marks) prints `MARK <n> <t>;` lines 100-200 ms apart, t being its
CLOCK_REALTIME at the write. In the page, a MutationObserver on the terminal view's text timestamps
the moment each mark first appears there (performance.timeOrigin + performance.now()). The page's
clock is matched to ours by the round trip with the smallest delay (a few tenths of a millisecond).

Run (after `cargo build --release`; asciinema 3 in .venv/asciinema, chromium from scripts/test.sh):
  .venv/bin/python benches/watch_latency.py [--samples 200] [--only screenpilot|asciinema]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

from watch_common import WRITER, Asciinema, Screenpilot, summary
from watch_browser_cdp import Browser, Page

# For each {label: selector}, collects the first sighting of every mark inside that element into
# window.__marks[label], and resolves window.__marksDone once every label saw `count` marks (or at the
# deadline, with what it has).
OBSERVE_MARKS = r"""
((selectors, count, timeoutMs) => {
  const marks = window.__marks = {};
  const seen = {};
  for (const label in selectors) { marks[label] = []; seen[label] = new Set(); }
  const pattern = /MARK (\d+) (\d+);/g;
  window.__marksDone = new Promise((resolve) => {
    const scan = () => {
      const now = performance.timeOrigin + performance.now();
      let complete = true;
      for (const label in selectors) {
        const root = document.querySelector(selectors[label]);
        if (root) {
          for (const m of root.textContent.matchAll(pattern)) {
            if (!seen[label].has(m[1])) { seen[label].add(m[1]); marks[label].push([+m[1], m[2], now]); }
          }
        }
        complete = complete && seen[label].size >= count;
      }
      if (complete) { observer.disconnect(); resolve(marks); }
    };
    const observer = new MutationObserver(scan);
    observer.observe(document.body, {subtree: true, childList: true, characterData: true});
    setTimeout(() => { observer.disconnect(); resolve(marks); }, timeoutMs);
  });
  return true;
})
"""

# Resolves once `text` shows inside `selector` (a MutationObserver), or rejects at the deadline.
AWAIT_TEXT = r"""
((selector, text, timeoutMs) => new Promise((resolve, reject) => {
  const has = () => { const r = document.querySelector(selector); return r && r.textContent.includes(text); };
  if (has()) return resolve(true);
  const observer = new MutationObserver(() => { if (has()) { observer.disconnect(); resolve(true); } });
  observer.observe(document.body, {subtree: true, childList: true, characterData: true});
  setTimeout(() => { observer.disconnect(); reject(new Error(`${text} not in ${selector} after ${timeoutMs} ms`)); }, timeoutMs);
}))
"""


def clock_offset_ms(page: Page, rounds: int = 30) -> float:
    """The page's clock (timeOrigin + now) minus ours (CLOCK_REALTIME), from the tightest round trip."""
    best = None
    for _ in range(rounds):
        before = time.time_ns()
        theirs = page.evaluate("performance.timeOrigin + performance.now()")
        after = time.time_ns()
        rtt = after - before
        if best is None or rtt < best[0]:
            best = (rtt, theirs - (before + after) / 2e6)
    return best[1]


def measure(server, page: Page, fifo: str, samples: int) -> dict[str, list[float]]:
    """Latencies in ms for each of the server's text views (label -> samples)."""
    status = page.navigate(server.url)
    assert status == 200, f"{server.name}: the page answered {status}"
    first = next(iter(server.text_views.values()))
    page.evaluate(f"{AWAIT_TEXT}({json.dumps(first)}, 'READY', 30000)", timeout=40)
    offset = clock_offset_ms(page)
    page.evaluate(f"{OBSERVE_MARKS}({json.dumps(server.text_views)}, {samples}, {samples * 400 + 20000})")
    with open(fifo, "wb") as go:  # blocks until the program opens it: it is running and waiting
        go.write(b"g")
    marks = page.evaluate("window.__marksDone", timeout=samples * 0.4 + 60)
    latencies = {}
    for label, seen in marks.items():
        latencies[label] = [shown - offset - int(written) / 1e6 for _, written, shown in seen]
        if len(seen) < samples:
            print(f"{server.name} {label}: only {len(seen)} of {samples} marks showed", file=sys.stderr)
    return latencies


def run(kind: str, samples: int, browser: Browser, hash_params: str = "") -> list[dict]:
    scratch = tempfile.mkdtemp(prefix="sp-bench-latency-")
    fifo = os.path.join(scratch, "go")
    os.mkfifo(fifo)
    argv = [sys.executable, WRITER, "marks", str(samples), fifo]
    server = Screenpilot(argv) if kind == "screenpilot" else Asciinema(argv, hash_params)
    page = browser.new_page()
    try:
        latencies = measure(server, page, fifo, samples)
    finally:
        page.close()
        server.close()
        os.unlink(fifo)
        os.rmdir(scratch)
    name = server.name + (f" (#{hash_params})" if hash_params else "")
    return [dict(method=f"{name}: {label}", **summary(values)) for label, values in latencies.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--only", choices=["screenpilot", "asciinema"])
    args = parser.parse_args()
    results = []
    with Browser() as browser:
        if args.only in (None, "screenpilot"):
            results.extend(run("screenpilot", args.samples, browser))
        if args.only in (None, "asciinema"):
            results.extend(run("asciinema", args.samples, browser))
            # asciinema-player holds live output back by a jitter buffer; bufferTime=0 turns it off.
            results.extend(run("asciinema", args.samples, browser, "bufferTime=0"))
    print(json.dumps(results, indent=2))
    print("\n| viewer | samples | median | p95 | max |\n|---|---|---|---|---|")
    for r in results:
        print(f"| {r['method']} | {r['samples']} | {r['median_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms |")


if __name__ == "__main__":
    main()
