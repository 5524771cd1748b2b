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

# Collects the first sighting of every mark inside `root` (a CSS selector) into window.__marks and
# resolves window.__marksDone once `count` marks were seen (or at the deadline, with what it has).
OBSERVE_MARKS = r"""
((selector, count, timeoutMs) => {
  const marks = window.__marks = [];
  const seen = new Set();
  const pattern = /MARK (\d+) (\d+);/g;
  window.__marksDone = new Promise((resolve) => {
    const scan = () => {
      const now = performance.timeOrigin + performance.now();
      const root = document.querySelector(selector);
      if (!root) return;
      for (const m of root.textContent.matchAll(pattern)) {
        if (!seen.has(m[1])) { seen.add(m[1]); marks.push([+m[1], m[2], now]); }
      }
      if (seen.size >= count) { observer.disconnect(); resolve(marks); }
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


def measure(server, page: Page, fifo: str, samples: int) -> list[float]:
    status = page.navigate(server.url)
    assert status == 200, f"{server.name}: the page answered {status}"
    page.evaluate(f"{AWAIT_TEXT}({json.dumps(server.text_root)}, 'READY', 30000)", timeout=40)
    offset = clock_offset_ms(page)
    page.evaluate(f"{OBSERVE_MARKS}({json.dumps(server.text_root)}, {samples}, {samples * 400 + 20000})")
    with open(fifo, "wb") as go:  # blocks until the program opens it: it is running and waiting
        go.write(b"g")
    marks = page.evaluate("window.__marksDone", timeout=samples * 0.4 + 60)
    latencies = [seen - offset - int(written) / 1e6 for _, written, seen in marks]
    if len(latencies) < samples:
        print(f"{server.name}: only {len(latencies)} of {samples} marks showed", file=sys.stderr)
    return latencies


def run(kind: str, samples: int, browser: Browser, hash_params: str = "") -> dict:
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
    label = server.name + (f" (#{hash_params})" if hash_params else "")
    return dict(method=label, **summary(latencies))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--only", choices=["screenpilot", "asciinema"])
    args = parser.parse_args()
    results = []
    with Browser() as browser:
        if args.only in (None, "screenpilot"):
            results.append(run("screenpilot", args.samples, browser))
        if args.only in (None, "asciinema"):
            results.append(run("asciinema", args.samples, browser))
            # asciinema-player holds live output back by a jitter buffer; bufferTime=0 turns it off.
            results.append(run("asciinema", args.samples, browser, "bufferTime=0"))
    print(json.dumps(results, indent=2))
    print("\n| viewer | samples | median | p95 | max |\n|---|---|---|---|---|")
    for r in results:
        print(f"| {r['method']} | {r['samples']} | {r['median_ms']} ms | {r['p95_ms']} ms | {r['max_ms']} ms |")


if __name__ == "__main__":
    main()
