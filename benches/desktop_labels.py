#!/usr/bin/env python3
"""How much of what a person sees on a desktop a snapshot reads: for each application, the share of
its visible labels (a list written from its screenshot) found in the snapshot's text, the snapshot's
tokens against the screenshot it replaces, and the time to snapshot. Applications with an
accessibility tree (GTK 4, Chromium, Firefox, LibreOffice, Swing, Qt) and without one (Tk, xterm,
xcalc: read from pixels by OCR, where the first read and a read of the same pixels again are timed
apart). One run, side by side.

    .venv/bin/python benches/desktop_labels.py --binary target/release/screenpilot [--rounds 5]

A label counts when a quoted name or value of the snapshot equals it, or (for labels longer than one
character) holds it. Tokens: tiktoken's cl100k_base (offline); the screenshot as Anthropic counts an
image, ceil(w/28) * ceil(h/28), on the model-sized PNG `computer` takes.
"""

import argparse
import base64
import json
import math
import os
import re
import shutil
import statistics
import struct
import sys
import time
from pathlib import Path

import a11y_cost
from a11y_cost import tokens

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "crates/screenpilot/tests/fixtures"

XTERM_LINES = [
    "screenpilot reads 42 from pixels",
    "hello world",
    "make test passed in 3.2 s",
    "error: file not found",
    "total 128",
    "drwxr-xr-x 2 root root 4096 docs",
]

# Labels a person reads on each screen, written from its screenshot (icon-only buttons left out).
WEB_LABELS = ["Order", "Name", "Size", "Small", "Place order", "Order form"]
APPS = {
    "gnome-calculator (GTK 4)": {
        "argv": ["gnome-calculator"],
        "ready": ["--appears-role", "push button", "--appears-name", "^=$"],
        "labels": ["Undo", "Basic", "(", ")", "mod", "π", "7", "8", "9", "÷", "√", "4", "5", "6", "×",
                   "x²", "1", "2", "3", "−", "=", "0", ".", "%", "+", "Calculator"],
    },
    "GTK 4 form (python3-gi)": {
        "argv": ["/usr/bin/python3", str(FIXTURES / "gtk4/form.py")],
        "ready": ["--appears-role", "push button", "--appears-name", "^Send$"],
        "labels": ["Sign up", "Name", "Newsletter", "Send"],
    },
    "Qt 5 form (PyQt5)": {
        "argv": ["/usr/bin/python3", str(FIXTURES / "qt/form.py")],
        "ready": ["--appears-role", "push button", "--appears-name", "^Submit$"],
        "labels": ["Qt Form", "Name", "Subscribe", "Colour", "Red", "Submit"],
    },
    "Swing form (ATK wrapper)": {
        "argv": ["java", str(FIXTURES / "swing/Form.java")],
        "ready": ["--appears-role", "push button", "--appears-name", "^Send$"],
        "labels": ["Swing Form", "Name", "Colour", "Red", "Subscribe", "Send", "Not sent"],
    },
    "Chromium, web form": {
        "argv": ["chromium", "--no-sandbox", "--no-first-run", "--no-default-browser-check",
                 "--user-data-dir={dir}/chromium", "file://" + str(FIXTURES / "web/form.html")],
        "ready": ["--appears-role", "push button", "--appears-name", "^Place order$"],
        "labels": WEB_LABELS,
    },
    "Firefox ESR, web form": {
        "argv": ["firefox-esr", "-profile", "{dir}/firefox", "-no-remote",
                 "file://" + str(FIXTURES / "web/form.html")],
        "ready": ["--appears-role", "push button", "--appears-name", "^Place order$"],
        "labels": WEB_LABELS,
    },
    "LibreOffice Writer": {
        "argv": ["soffice", "--writer", "--norestore", "-env:UserInstallation=file://{dir}/lo"],
        "ready": ["--appears-role", "label", "--appears-name", "^Page 1 of 1$"],
        "labels": ["File", "Edit", "View", "Insert", "Format", "Styles", "Table", "Form", "Tools",
                   "Window", "Help", "Default Paragraph Style", "Liberation Serif", "12 pt",
                   "Page 1 of 1", "0 words, 0 characters", "Default Page Style", "English (USA)",
                   "100%", "Untitled 1 - LibreOffice Writer"],
    },
    "Tk form (OCR)": {
        "argv": ["/usr/bin/python3", str(FIXTURES / "tk/form.py")],
        "ocr": True,
        "labels": ["Name:", "Email address", "Remember me", "Nothing saved yet", "Save", "Cancel",
                   "Apply changes"],
    },
    "xterm (OCR)": {
        "argv": ["xterm", "-e", "sh", "-c", "printf '%s\\n' " + " ".join(f"'{l}'" for l in XTERM_LINES)
                 + "; exec sleep 600"],
        "ocr": True,
        "labels": XTERM_LINES,
    },
    "xcalc (OCR)": {
        "argv": ["xcalc"],
        "ocr": True,
        # Its keys; x², √, y^x, π and ÷ are symbols the English model cannot write, left out.
        "labels": ["0", "DEG", "DEC", "1/x", "CE/C", "AC", "INV", "sin", "cos", "tan", "DRG", "e",
                   "EE", "log", "ln", "not", "and", "or", "xor", "trunc", "x!", "(", ")", "base",
                   "shl", "D", "E", "F", "shr", "mod", "A", "B", "C", "STO", "7", "8", "9", "*",
                   "RCL", "4", "5", "6", "-", "SUM", "1", "2", "3", "+", "EXC", ".", "+/-", "="],
    },
}


class Daemon(a11y_cost.Daemon):
    """a11y_cost's daemon, timing a call and leaving no directory behind."""

    def timed(self, *args: str) -> tuple[dict, float]:
        start = time.perf_counter()
        answer = self.run(*args)
        return answer, (time.perf_counter() - start) * 1000

    def close(self):
        super().close()
        shutil.rmtree(self.dir, ignore_errors=True)


def found(label: str, text: str) -> bool:
    quoted = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
    return any(q == label or (len(label) > 1 and label in q) for q in quoted)


def prepare(dir: Path):
    (dir / "firefox").mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "firefox/user.js", dir / "firefox/user.js")
    (dir / "lo/user").mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURES / "libreoffice/registrymodifications.xcu", dir / "lo/user/registrymodifications.xcu")


def measure(daemon: Daemon, sid: str, app: dict, rounds: int) -> dict:
    argv = [a.replace("{dir}", daemon.dir) for a in app["argv"]]
    if not shutil.which(argv[0]):
        return {"skipped": f"{argv[0]} is not installed"}
    daemon.run("desktop", "start", "--sid", sid, "--", *argv)
    if "ready" in app:
        held = daemon.run("act", sid, *app["ready"], "--timeout-ms", "60000")
        if not held.get("held"):
            return {"skipped": f"never ready: {held}"}
    # The screen comes to rest first: a caret blinking is no change.
    daemon.run("wait", sid, "--ready", "--stable-ms", "500", "--timeout-ms", "20000")
    first, first_ms = daemon.timed("snapshot", sid)
    times = [daemon.timed("snapshot", sid)[1] for _ in range(rounds)]
    text = first["elements"]
    labels = app["labels"]
    missed = [label for label in labels if not found(label, text)]
    shot = daemon.run("computer", sid, "screenshot")
    png = base64.b64decode(shot["png"])
    w, h = struct.unpack(">II", png[16:24])
    daemon.run("close", sid)
    return {
        "labels": len(labels),
        "read": len(labels) - len(missed),
        "recall": round((len(labels) - len(missed)) / len(labels), 3),
        "missed": missed,
        "snapshot_tokens": tokens(text),
        "snapshot_lines": len(text.splitlines()),
        "screenshot_tokens": math.ceil(w / 28) * math.ceil(h / 28),
        "first_snapshot_ms": round(first_ms, 1),
        "snapshot_ms_median": round(statistics.median(times), 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default="target/release/screenpilot")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", help="a regex over the applications' names")
    args = parser.parse_args()
    daemon = Daemon(os.path.abspath(args.binary))
    rows = {}
    try:
        prepare(Path(daemon.dir))
        for i, (name, app) in enumerate(APPS.items()):
            if args.only and not re.search(args.only, name):
                continue
            try:
                rows[name] = measure(daemon, f"a{i}", app, args.rounds)
            except (RuntimeError, SystemExit) as e:
                rows[name] = {"skipped": str(e)}
            print(name, json.dumps(rows[name]), file=sys.stderr, flush=True)
    finally:
        daemon.close()
    tree = [r for n, r in rows.items() if "recall" in r and "OCR" not in n]
    pixels = [r for n, r in rows.items() if "recall" in r and "OCR" in n]
    summary = {
        name: round(sum(r["read"] for r in group) / sum(r["labels"] for r in group), 3)
        for name, group in (("with a tree", tree), ("from pixels", pixels)) if group
    }
    print(json.dumps({"apps": rows, "labels read": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
