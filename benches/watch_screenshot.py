#!/usr/bin/env python3
"""Take the README's picture of the watch page (docs/watch-page.png): a private daemon with htop in a
terminal session and a desktop (vim in an xterm, a zenity dialog over it), the page opened in headless
chromium, and the page captured over DevTools once both views are live and painted.

Run (after `cargo build --release`; chromium and the venv from scripts/test.sh):
  .venv/bin/python benches/watch_screenshot.py [OUT.png]
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

from watch_common import ROOT, SCREENPILOT
from watch_browser_cdp import Browser

DEPLOY_PY = '''"""Deploy a build to staging once its checks pass."""
import subprocess
import sys


def checks_pass(build: int) -> bool:
    result = subprocess.run(["scripts/test.sh"], capture_output=True)
    return result.returncode == 0


def deploy(build: int, target: str = "staging") -> None:
    if not checks_pass(build):
        sys.exit(f"build {build}: checks failed, not deploying")
    print(f"deploying build {build} to {target}")


if __name__ == "__main__":
    deploy(int(sys.argv[1]))
'''

# Resolves once both views are live, htop is painted and the desktop has shown a frame.
BOTH_LIVE = r"""new Promise((resolve, reject) => {
  const ready = () => document.querySelectorAll('section.session[data-state=live]').length >= 2
    && document.querySelector('section.session[data-kind=desktop][data-frames]')
    && /F10/.test(document.querySelector('section.session[data-sid=htop] pre.screen-text')?.textContent || '');
  if (ready()) return resolve(true);
  const observer = new MutationObserver(() => { if (ready()) { observer.disconnect(); resolve(true); } });
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  setTimeout(() => reject(new Error('the views did not go live: ' + document.body.innerText.slice(0, 500))), 30000);
})"""


def main() -> None:
    out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs", "watch-page.png"))
    scratch = tempfile.mkdtemp(prefix="sp-watch-shot-")
    os.chmod(scratch, 0o700)
    project = os.path.join(scratch, "project")
    os.mkdir(project)
    with open(os.path.join(project, "deploy.py"), "w") as f:
        f.write(DEPLOY_PY)
    env = dict(os.environ, SCREENPILOT_DIR=scratch)

    def sp(*args: str) -> str:
        return subprocess.run([SCREENPILOT, *args], env=env, capture_output=True, text=True, check=True).stdout

    try:
        sp("spawn", "--sid", "htop", "--size", "80x24", "--", "htop")
        sp("wait", "htop", "--regex", "F10", "--timeout-ms", "20000")
        xterm = (
            "xterm -geometry 80x24+8+8 -fa 'DejaVu Sans Mono' -fs 10 -bg '#1d1f21' -fg '#c5c8c6'"
            " -T 'vim deploy.py' -e vim deploy.py & exec zenity --question --title Deploy"
            " --text 'Deploy build 42 to staging?' --width 300"
        )
        sp("desktop", "start", "--sid", "desk", "--size", "800x500", "--cwd", project, "--", "sh", "-c", xterm)
        sp("wait", "desk", "--regex", "^Deploy$", "--timeout-ms", "30000")
        sp("wait", "desk", "--regex", "^vim deploy.py$", "--timeout-ms", "30000")
        # The pointer off the windows.
        sp("call", "computer", json.dumps({"sid": "desk", "action": {"type": "move", "x": 720, "y": 470}}))
        url = json.loads(sp("--json", "watch", "--http", "127.0.0.1:0"))["url"]
        width = 1500
        with Browser(width=width, height=700) as browser:
            page = browser.new_page()
            page.set_viewport(width, 700)
            page.call("Emulation.setScrollbarsHidden", {"hidden": True})
            page.navigate(url)
            page.evaluate(BOTH_LIVE, timeout=40)
            # Two animation frames: whatever the last message changed is painted.
            page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
            bottom = page.evaluate(
                "Math.max(...Array.from(document.querySelectorAll('section.session'), (s) => s.getBoundingClientRect().bottom))"
            )
            page.screenshot(out, clip={"x": 0, "y": 0, "width": width, "height": int(bottom) + 16})
        print(out)
    finally:
        subprocess.run([SCREENPILOT, "daemon", "stop", "--end-sessions"], env=env, capture_output=True)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
