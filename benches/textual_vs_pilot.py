#!/usr/bin/env python3
"""Side-by-side benchmark, one run, same machine: the reference example of textual_run (the counter app:
press tab, click #inc, pause 0.6 s, click #inc, screenshot) as one call of `screenpilot textual`, next to
the same steps through Textual's own headless Pilot (`App.run_test()`).

Each figure is wall time for the whole job, as an agent pays it: start the app, act, take the picture,
stop the app, get the answer. Pilot runs two ways: in a fresh interpreter per run (what a tool that runs
the app in a Python subprocess pays, like the reference tool) and inside this already-warm process (its
floor). Every run is checked: the label must read "count: 2" at the end.

A second line repeats the job without the pause (two clicks back to back): Textual's Button ignores a
click during its 0.2 s pressed look, so a driver that does not wait for it loses the second click.

A third part times calls on an open session (`--session NAME`, the app already running), as an agent
makes them step by step, next to the same actions as a one-shot call (which starts and stops the app):
a click (it includes waiting out the Button's 0.2 s pressed look), a key, a query with no action, and
the whole reference example.

Run: .venv/bin/python benches/textual_vs_pilot.py [--iterations N]   (after `cargo build --release`)
"""
import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COUNTER = os.path.join(ROOT, "crates", "screenpilot", "tests", "fixtures", "textual", "counter.py")

STEPS = [{"press": "tab"}, {"click": "#inc"}, {"pause": 0.6}, {"click": "#inc"}, {"screenshot": True}]

PILOT_SCRIPT = r"""
import asyncio, importlib.util, sys
path, shots, pause = sys.argv[1], sys.argv[2], float(sys.argv[3])
spec = importlib.util.spec_from_file_location("counter", path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
app = module.CounterApp()

async def main():
    async with app.run_test(size=(80, 25)) as pilot:
        await pilot.press("tab")
        await pilot.click("#inc")
        if pause:
            await pilot.pause(pause)
        await pilot.click("#inc")
        app.save_screenshot(path=shots)
        print(app.query_one("#label").content)

asyncio.run(main())
"""


def summary(name, values_ms, correct, runs):
    return {
        "method": name,
        "runs": runs,
        "median_ms": round(statistics.median(values_ms), 1),
        "min_ms": round(min(values_ms), 1),
        "max_ms": round(max(values_ms), 1),
        "correct_runs": f"{correct}/{runs}",
    }


def bench_screenpilot(binary, app, iterations, steps, env, expect="count: 2"):
    times, correct = [], 0
    args = [binary, "--json", "textual", app, "--python", sys.executable, "--actions", json.dumps(steps)]
    for _ in range(iterations):
        start = time.perf_counter()
        out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        correct += result["text"].startswith(expect)
    return times, correct


def bench_pilot_subprocess(app, shots, iterations, pause):
    times, correct = [], 0
    for _ in range(iterations):
        start = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", PILOT_SCRIPT, app, shots, str(pause)],
            capture_output=True, text=True, check=True,
        )
        times.append((time.perf_counter() - start) * 1000)
        correct += out.stdout.strip() == "count: 2"
    return times, correct


def bench_pilot_in_process(app, shots, iterations, pause):
    spec = importlib.util.spec_from_file_location("counter_bench", app)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    async def once():
        instance = module.CounterApp()
        async with instance.run_test(size=(80, 25)) as pilot:
            await pilot.press("tab")
            await pilot.click("#inc")
            if pause:
                await pilot.pause(pause)
            await pilot.click("#inc")
            instance.save_screenshot(path=shots)
            return str(instance.query_one("#label").content)

    times, correct = [], 0
    for _ in range(iterations):
        start = time.perf_counter()
        label = asyncio.run(once())
        times.append((time.perf_counter() - start) * 1000)
        correct += label == "count: 2"
    return times, correct


def bench_session(binary, app, iterations, steps, env, query=None):
    """Time `iterations` calls on one open session (opened and closed outside the timing)."""
    base = [binary, "--json", "textual"]
    subprocess.run(base + [app, "--python", sys.executable, "--session", "bench"], env=env, capture_output=True, check=True)
    times, correct = [], 0
    try:
        for _ in range(iterations):
            args = base + ["--session", "bench", "--actions", json.dumps(steps)]
            if query:
                args += ["--query", query]
            start = time.perf_counter()
            out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
            times.append((time.perf_counter() - start) * 1000)
            result = json.loads(out.stdout.strip().splitlines()[-1])
            correct += result["ok"] and (query is None or bool(result.get("query")))
    finally:
        subprocess.run(base + ["--session", "bench", "--close"], env=env, capture_output=True)
    return times, correct


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "screenpilot"))
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="sptextual-")
    app = os.path.join(work, "counter.py")
    shutil.copy(COUNTER, app)
    shots = os.path.join(work, "pilot-shots")
    os.makedirs(shots)
    env = dict(os.environ, SCREENPILOT_DIR=os.path.join(work, "daemon"))
    n = args.iterations
    results = {}
    try:
        # The first call starts the daemon; it is reported on its own, the rest are warm.
        cold, cold_ok = bench_screenpilot(args.binary, app, 1, STEPS, env)
        with_pause = [
            summary("screenpilot textual (CLI, daemon already running)", *bench_screenpilot(args.binary, app, n, STEPS, env), n),
            summary("screenpilot textual, first call (starts the daemon)", cold, cold_ok, 1),
            summary("Textual Pilot run_test(), fresh interpreter per run", *bench_pilot_subprocess(app, shots, n, 0.6), n),
            summary("Textual Pilot run_test(), in this warm process", *bench_pilot_in_process(app, shots, n, 0.6), n),
        ]
        no_pause = [step for step in STEPS if "pause" not in step]
        back_to_back = [
            summary("screenpilot textual", *bench_screenpilot(args.binary, app, n, no_pause, env), n),
            summary("Textual Pilot run_test(), fresh interpreter per run", *bench_pilot_subprocess(app, shots, n, 0), n),
        ]
        click, tab = [{"click": "#inc"}], [{"press": "tab"}]
        sessions = [
            summary("session call: click #inc", *bench_session(args.binary, app, n, click, env), n),
            summary("one-shot: click #inc", *bench_screenpilot(args.binary, app, n, click, env, expect="count: 1"), n),
            summary("session call: press tab", *bench_session(args.binary, app, n, tab, env), n),
            summary("session call: query #label, no action", *bench_session(args.binary, app, n, [], env, query="#label"), n),
            summary("session call: the reference example", *bench_session(args.binary, app, n, STEPS, env), n),
        ]
        pilot = with_pause[2]["median_ms"]
        results = {
            "reference example: tab, click, pause 0.6 s, click, screenshot (one-shot, wall time)": with_pause,
            "one-shot / Pilot in a fresh interpreter (medians)": round(with_pause[0]["median_ms"] / pilot, 3),
            "same without the pause (two clicks back to back; correct = both counted)": back_to_back,
            "calls on an open session, next to one-shot calls": sessions,
        }
    finally:
        subprocess.run([args.binary, "daemon", "stop", "--end-sessions"], env=env, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
