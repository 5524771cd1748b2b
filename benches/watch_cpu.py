#!/usr/bin/env python3
"""What live viewers cost the server: CPU of `screenpilot watch` (daemon + watch process) side by side
with `asciinema stream --local` (one process), while a program prints 1 MB/s and 0 or 5 viewers
watch it (by default 0, 1 and 5 viewers). Target for screenpilot: < 10% of one core with 5 viewers.

Viewers are light websocket clients that behave like each page does: they open the same websocket
the page opens (same path, token and subprotocol) and read every message as fast as it comes, but
draw nothing. Five headless chromium tabs painting 1 MB/s each would take both cores of the machine
and read slower than the server can send, and a slow reader lets a server skip work (coalesce
frames, drop queued output); a client that reads everything at once is the harder case for the server,
and leaves the CPU to what is measured.

With --tabs, the viewers are headless chromium tabs on the real page instead (one browser, one tab
per viewer), for comparison; the browser's own CPU is not counted.

CPU is user + system time from /proc/PID/stat over a window of --seconds (after a 2 s warm-up),
divided by the window: 100% is one core.

Run (after `cargo build --release`):
  .venv/bin/python benches/watch_cpu.py [--seconds 20] [--rate 1000000] [--viewers 0,1,5] [--tabs] [--only ...]
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time

import websocket

from watch_common import WRITER, Asciinema, Screenpilot, cpu_seconds
from watch_browser_cdp import Browser  # noqa: E402 (watch_common puts the tests' directory on the path)


class Viewer(threading.Thread):
    """One websocket client that reads and counts everything the server sends."""

    def __init__(self, url: str, subprotocols: list[str] | None):
        super().__init__(daemon=True)
        self.ws = websocket.create_connection(url, subprotocols=subprotocols, timeout=30, suppress_origin=True)
        self.bytes = 0
        self.messages = 0
        self.stopped = False

    def run(self) -> None:
        try:
            while not self.stopped:
                opcode, data = self.ws.recv_data()
                if opcode == websocket.ABNF.OPCODE_CLOSE:
                    break
                self.bytes += len(data)
                self.messages += 1
        except (websocket.WebSocketException, OSError):
            pass

    def close(self) -> None:
        self.stopped = True
        try:
            self.ws.close(timeout=1)
        except (websocket.WebSocketException, OSError):
            pass


def open_tabs(browser: Browser, server, viewers: int) -> list:
    """`viewers` chromium tabs on the server's page, each showing the terminal."""
    first = next(iter(server.text_views.values()))
    tabs = []
    for _ in range(viewers):
        tab = browser.new_page()
        tab.navigate(server.url)
        tab.evaluate(
            "new Promise((resolve, reject) => { const ok = () => document.querySelector(%s);"
            " if (ok()) return resolve(true); const o = new MutationObserver(() => { if (ok()) { o.disconnect(); resolve(true); } });"
            " o.observe(document, {subtree: true, childList: true}); setTimeout(() => reject(new Error('no view')), 30000); })"
            % json.dumps(first),
            timeout=40,
        )
        tabs.append(tab)
    return tabs


def measure(kind: str, viewers: int, seconds: float, rate: int, browser: Browser | None) -> dict:
    argv = [sys.executable, WRITER, "flood", str(rate)]
    server = Screenpilot(argv) if kind == "screenpilot" else Asciinema(argv)
    clients = []
    tabs = []
    try:
        if browser:
            tabs = open_tabs(browser, server, viewers)
        else:
            clients = [Viewer(url, protocols) for _ in range(viewers) for url, protocols in server.viewer_endpoints()]
        for c in clients:
            c.start()
        time.sleep(2)  # warm-up: a measurement window, not synchronisation
        cpu0 = sum(cpu_seconds(p) for p in server.server_pids)
        got0 = [c.bytes for c in clients]
        t0 = time.monotonic()
        time.sleep(seconds)
        elapsed = time.monotonic() - t0
        cpu1 = sum(cpu_seconds(p) for p in server.server_pids)
        # What each viewer's busiest socket (its terminal view) received.
        per_socket = [(c.bytes - g) / elapsed for c, g in zip(clients, got0)]
        sockets = len(server.viewer_endpoints())
        got = [max(per_socket[i : i + sockets]) for i in range(0, len(per_socket), sockets)]
    finally:
        for c in clients:
            c.close()
        for tab in tabs:
            tab.close()
        server.close()
    return {
        "server": server.name,
        "viewers": f"{viewers} chromium tabs" if browser and viewers else viewers,
        "cpu_percent_of_one_core": round(100 * (cpu1 - cpu0) / elapsed, 1),
        "each_viewer_received_bytes_per_s": [round(g) for g in got],
        "seconds": round(elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--rate", type=int, default=1_000_000, help="bytes per second the program prints")
    parser.add_argument("--viewers", default="0,1,5", help="viewer counts to measure, comma-separated")
    parser.add_argument("--only", choices=["screenpilot", "asciinema"])
    parser.add_argument("--tabs", action="store_true", help="viewers are headless chromium tabs on the page")
    args = parser.parse_args()
    kinds = [k for k in ("screenpilot", "asciinema") if args.only in (None, k)]
    results = []
    browser = Browser() if args.tabs else None
    try:
        for kind in kinds:
            for viewers in [int(v) for v in args.viewers.split(",")]:
                results.append(measure(kind, viewers, args.seconds, args.rate, browser))
                print(json.dumps(results[-1]), file=sys.stderr)
    finally:
        if browser:
            browser.close()
    print("\n| server | viewers | CPU (% of one core) | each viewer received |\n|---|---|---|---|")
    for r in results:
        each = r["each_viewer_received_bytes_per_s"]
        recv = f"{min(each) / 1e6:.2f}-{max(each) / 1e6:.2f} MB/s" if each else "-"
        print(f"| {r['server']} | {r['viewers']} | {r['cpu_percent_of_one_core']}% | {recv} |")


if __name__ == "__main__":
    main()
