#!/usr/bin/env python3
"""A suite of 20 terminal tests, two ways: as screenpilot step files (each input waits for what it
brings about) and as the same steps in tmux with fixed sleeps after each input, the way VHS tapes
and tmux scripts are written (Sleep 1s after a program starts, 500ms after a key). Both check the
same things at the end; both run the 20 at once, N at a time.

    python3 benches/steps_suite.py write DIR         # the 20 step files, for `screenpilot test DIR`
    python3 benches/steps_suite.py sleeps DIR --jobs 2 # the same steps with tmux and sleeps

Compare them side by side (BENCHMARKS.md has the figures):

    screenpilot test DIR --jobs 2   vs   python3 benches/steps_suite.py sleeps DIR --jobs 2
"""

import argparse
import concurrent.futures
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FRUITS = ["Apple", "Banana", "Cherry", "Damson", "Elder"]
START_SLEEP = 1.0  # after a program starts
KEY_SLEEP = 0.5  # after each input


def dialog_cmd(out: str) -> str:
    items = " ".join(f"{i + 1} {f}" for i, f in enumerate(FRUITS))
    return f"dialog --menu Fruit 14 40 5 {items} 2>{out}"


def scenarios():
    """(name, step-file text, tmux plan). A plan: the command, [(tmux keys, ...)], the check."""
    out = []
    for k in range(5):
        # dialog: pick the k-th fruit; the choice lands in a file.
        downs = ", ".join(['"Down"'] * k)
        steps = f'''name = "dialog picks {FRUITS[k]}"
[[step]]
spawn = {toml(f"sh -c '{dialog_cmd('choice')}'")}
size = "60x16"
until = {{ regex = "Elder" }}
''' + (f'''[[step]]
keys = [{downs}]
until = {{ visual = true }}
''' if k else "") + f'''[[step]]
keys = ["Enter"]
until = {{ exit = true }}
[[step]]
spawn = "cat choice"
sid = "check"
until = {{ exit = true }}
[[step]]
expect = {{ text = "^{k + 1}$" }}
'''
        plan = (f"sh -c {shlex.quote(dialog_cmd('choice'))}", [["Down"]] * k + [["Enter"]], ("file", "choice", f"{k + 1}"))
        out.append((f"dialog_{k}", steps, plan))
    for k in range(5):
        # bash: a sum, read back from the screen.
        n = (k + 3) * 7
        steps = f'''name = "bash sums {k}"
[[step]]
spawn = "bash --norc --noprofile"
env = {{ PS1 = "$ " }}
until = {{ regex = '^\\$ $' }}
[[step]]
line = "echo $(( {k + 3} * 7 ))"
until = {{ regex = "^{n}$" }}
'''
        plan = ("env PS1='$ ' bash --norc --noprofile", [[f"echo $(( {k + 3} * 7 ))", "Enter"]], ("screen", f"\n{n}\n"))
        out.append((f"bash_{k}", steps, plan))
    for k in range(5):
        # vim: change a word, save, quit; the file says so.
        prep = "printf 'one\\ntwo old three\\n' > f.txt"
        steps = f'''name = "vim edits {k}"
[[step]]
spawn = {toml(f"sh -c {shlex.quote(prep + ' && exec vim -u NONE -i NONE f.txt')}")}
size = "60x12"
until = {{ regex = "old" }}
[[step]]
keys = [":2s/old/new{k}/", "Enter"]
until = {{ regex = "two new{k} three" }}
[[step]]
keys = [":wq", "Enter"]
until = {{ exit = true }}
[[step]]
spawn = "cat f.txt"
sid = "check"
until = {{ exit = true }}
[[step]]
expect = {{ text = "^two new{k} three$" }}
'''
        plan = (f"sh -c {shlex.quote(prep + ' && exec vim -u NONE -i NONE f.txt')}",
                [[f":2s/old/new{k}/", "Enter"], [":wq", "Enter"]], ("file", "f.txt", f"two new{k} three"))
        out.append((f"vim_{k}", steps, plan))
    for k in range(5):
        # less: search a long file, then quit.
        prep = "seq -f 'line %g' 1 300 > l.txt"
        target = f"line {k + 1}7"
        steps = f'''name = "less finds {target}"
[[step]]
spawn = {toml(f"sh -c {shlex.quote(prep + ' && exec less l.txt')}")}
size = "60x12"
until = {{ regex = "^line 11$" }}
[[step]]
line = "/^{target}$"
until = {{ regex = "^{target}$" }}
[[step]]
expect = {{ text = "^line {k + 1}8$" }}
[[step]]
keys = ["q"]
until = {{ exit = true }}
'''
        plan = (f"sh -c {shlex.quote(prep + ' && exec less l.txt')}",
                [[f"/^{target}$", "Enter"]], ("screen", f"line {k + 1}8\n"))
        out.append((f"less_{k}", steps, plan))
    return out


def toml(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write(dir: Path) -> None:
    dir.mkdir(parents=True, exist_ok=True)
    for name, steps, _ in scenarios():
        (dir / f"{name}.toml").write_text(steps)


def run_with_sleeps(name: str, plan) -> tuple[str, bool]:
    command, inputs, check = plan
    with tempfile.TemporaryDirectory(prefix="sp-sleeps-") as work:
        tmux = ["tmux", "-L", f"sp-bench-{name}-{int(time.time() * 1000)}"]
        subprocess.run(tmux + ["new-session", "-d", "-x", "60", "-y", "16", "-c", work, command], check=True)
        try:
            time.sleep(START_SLEEP)
            for keys in inputs:
                for key in keys:
                    literal = key not in ("Enter", "Down", "Up", "q")
                    subprocess.run(tmux + ["send-keys"] + (["-l"] if literal else []) + ["--", key], check=True)
                time.sleep(KEY_SLEEP)
            if check[0] == "file":
                path = Path(work) / check[1]
                ok = path.exists() and check[2] in path.read_text()
            else:
                screen = subprocess.run(tmux + ["capture-pane", "-p"], capture_output=True, text=True).stdout
                ok = check[1] in screen
        finally:
            subprocess.run(tmux + ["kill-server"], capture_output=True)
    return name, ok


def sleeps(jobs: int) -> int:
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        for name, ok in pool.map(lambda s: run_with_sleeps(s[0], s[2]), scenarios()):
            if not ok:
                failed += 1
                print(f"FAIL {name}")
    print(f"{20 - failed} passed, {failed} failed")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["write", "sleeps"])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    if args.what == "write":
        write(args.dir)
        return 0
    return sleeps(args.jobs)


if __name__ == "__main__":
    sys.exit(main())
