"""Play a page holding asciinema-player to its end in headless chromium and print the page's HTML.

Used by record_e2e.rs. The page (written by the test) sets `window.__played`, a promise resolved two
animation frames after the player's 'ended' event: the player draws its terminal on an animation
frame, so by then the last screen is in the DOM. Time is real (no virtual-time budget, whose end
does not wait for animation frames), and the wait has a deadline.

usage: play_cast_browser.py PAGE.html [TIMEOUT_SECONDS]
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch_browser_cdp import Browser, CdpError  # noqa: E402


def main() -> None:
    page_path = os.path.abspath(sys.argv[1])
    timeout = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    with Browser(width=1200, height=900) as browser:
        page = browser.new_page()
        try:
            page.call("Page.navigate", {"url": "file://" + page_path})
            page.wait_event("Page.loadEventFired", timeout=timeout)
            page.evaluate("window.__played", timeout=timeout)
            print(page.evaluate("document.documentElement.outerHTML"))
        except CdpError as error:
            sys.exit(f"{error}\nconsole: {page.console}\nchromium: " + "\n".join(browser.log))
        finally:
            page.close()


if __name__ == "__main__":
    main()
