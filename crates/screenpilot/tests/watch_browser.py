"""The watch page as a person sees it, in headless chromium (run by watch_browser_e2e.rs).

  watch_browser.py --binary SCREENPILOT --url URL --terminal SID --desktop SID   (SCREENPILOT_DIR set)

URL is what `screenpilot watch --control` answered (its token after `#`). The terminal session runs
bash at a prompt that already printed `before-6`; the desktop runs an xterm that prints CLICKED lines
and titles itself "clicked" on the first mouse press. The script prints one JSON object saying what
the page showed; the Rust test asserts on it. Every wait is an awaited promise in the page, resolved by
a MutationObserver (or the page's own events), with a deadline.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from watch_browser_cdp import Browser, CdpError, Page  # noqa: E402

# Generous deadlines: CI is a loaded two-core machine, and each wait ends as soon as it holds.
DEADLINE_MS = 30_000

# The page's shape (documented at the top of assets/watch/watch.js): one section per session with
# data-sid, data-kind, data-state and data-control; a terminal's xterm.js (its DOM renderer's rows) and
# pre.screen-text (the screen's text as `snapshot` reads it); a desktop's img.frame.
VIEW = 'section.session[data-sid="{sid}"]'
TERMINAL_ROWS = VIEW + " .xterm-rows"
TERMINAL_TEXT = VIEW + " pre.screen-text"
DESKTOP_FRAME = VIEW + " img.frame"

# Helpers defined once in the page: `until(check, what)` resolves with check()'s first truthy value,
# tested now and after every DOM change (a MutationObserver), and rejects at the deadline.
HELPERS = r"""
window.__sp = {
  until(check, what, timeoutMs = %d) {
    return new Promise((resolve, reject) => {
      const first = check();
      if (first) return resolve(first);
      const done = () => {
        observer.disconnect();
        document.removeEventListener('load', recheck, true);
        clearTimeout(timer);
      };
      const recheck = () => {
        const value = check();
        if (value) { done(); resolve(value); }
      };
      const observer = new MutationObserver(recheck);
      observer.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
      // An image's new pixels arrive with its load event, after its src changed.
      document.addEventListener('load', recheck, true);
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${what}: not within ${timeoutMs} ms; the page says: ${document.body.innerText.slice(0, 2000)}`));
      }, timeoutMs);
    });
  },
  rows(selector) {
    const root = document.querySelector(selector);
    return root ? Array.from(root.children, (row) => row.textContent.replace(/[\s\u00a0]+$/, '')) : null;
  },
  // The frame's pixels (RGBA) at its natural size, and a short fingerprint of them.
  pixels(selector) {
    const frame = document.querySelector(selector);
    if (!frame) return null;
    // Only a frame that loaded: between two frames the page may hold a broken or pending image.
    const width = frame.naturalWidth, height = frame.naturalHeight;
    if (!frame.complete || !width || !height) return null;
    const canvas = document.createElement('canvas');
    canvas.width = width; canvas.height = height;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    ctx.drawImage(frame, 0, 0);
    const data = ctx.getImageData(0, 0, width, height).data;
    let hash = 2166136261;
    for (let i = 0; i < data.length; i += 4) { hash = Math.imul(hash ^ (data[i] | data[i+1] << 8 | data[i+2] << 16), 16777619); }
    return {width, height, data, hash: (hash >>> 0).toString(16)};
  },
  // An image's box once it shows the image whole (loaded, its own aspect ratio: between two frames the
  // page may show the alt text instead) and stayed the same for three animation frames running.
  settledBox(selector, timeoutMs = %d) {
    return new Promise((resolve, reject) => {
      let last = null, same = 0;
      const timer = setTimeout(() => reject(new Error(`${selector} did not settle within ${timeoutMs} ms: ${last}`)), timeoutMs);
      const step = () => {
        const e = document.querySelector(selector);
        const r = e && e.getBoundingClientRect();
        const whole = r && e.complete && e.naturalWidth > 0 && r.width > 0
          && Math.abs(r.height / r.width - e.naturalHeight / e.naturalWidth) < 0.02;
        const box = whole ? [r.x, r.y, r.width, r.height] : null;
        if (box && last && box.join() === last.join()) same += 1; else same = 0;
        last = box;
        if (same >= 3) { clearTimeout(timer); resolve(box); } else requestAnimationFrame(step);
      };
      requestAnimationFrame(step);
    });
  },
  // What the page sends its server (kept for a failure's message).
  sent: [],
  differing(a, b) {
    if (!a || !b || a.data.length !== b.data.length) return -1;
    let n = 0;
    for (let i = 0; i < a.data.length; i += 4) {
      if (a.data[i] !== b.data[i] || a.data[i+1] !== b.data[i+1] || a.data[i+2] !== b.data[i+2]) n++;
    }
    return n;
  },
};
{
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    window.__sp.sent.push(typeof data === 'string' ? data.slice(0, 200) : `<${data.byteLength || data.length} bytes>`);
    return send.call(this, data);
  };
}
true
""" % (DEADLINE_MS, DEADLINE_MS)


def js(value) -> str:
    return json.dumps(value)


class CommandFailed(RuntimeError):
    """A screenpilot command failed (a wait that timed out, too)."""


def screenpilot(binary: str, *args: str) -> dict:
    out = subprocess.run([binary, "--json", *args], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise CommandFailed(f"screenpilot {args} failed ({out.returncode}): {out.stdout}{out.stderr}")
    return json.loads(out.stdout)


# What the page shows of every session, for a failure's message.
PAGE_STATE = """Array.from(document.querySelectorAll('section.session'), (s) => ({
  ...s.dataset, message: s.querySelector('.message')?.textContent, text: s.querySelector('pre.screen-text')?.textContent,
  frame: s.querySelector('img.frame')?.currentSrc,
  box: (() => { const f = s.querySelector('img.frame'); if (!f) return null; const r = f.getBoundingClientRect(); return [r.x, r.y, r.width, r.height, f.naturalWidth, f.naturalHeight]; })()}))
  .concat([{sent: __sp.sent}])"""


def open_page(browser: Browser, url: str) -> tuple[Page, int]:
    page = browser.new_page()
    status = page.navigate(url)
    page.evaluate(HELPERS)
    return page, status


def refused_pages(browser: Browser, base: str, sid: str) -> dict:
    """The page opened without its token, and with a wrong one. The page itself loads (it holds no
    data); every request for sessions is refused with 401, and no session shows."""
    seen = {}
    page, _ = open_page(browser, base)
    try:
        seen["no_token"] = page.evaluate(
            "__sp.until(() => document.querySelector('#connection[data-state=refused]'), 'the page saying it is refused')"
            f".then(() => Promise.all([fetch('/ws/sessions'), fetch('/ws/session/' + {js(sid)})]))"
            ".then(([list, view]) => ({list_status: list.status, view_status: view.status,"
            " views: document.querySelectorAll('[data-sid]').length, notice: document.querySelector('#notice').textContent}))",
            timeout=60,
        )
    finally:
        page.close()
    page, _ = open_page(browser, base + "#token=not-the-token")
    try:
        # The page offers the wrong token on its websocket: chromium reports the 401 answer to the
        # handshake as "HTTP Authentication failed; no valid credentials available".
        created = page.wait_event("Network.webSocketCreated", timeout=60)
        refused = page.wait_event("Network.webSocketFrameError", lambda p: p["requestId"] == created["requestId"], timeout=60)
        wrong = page.evaluate(
            "__sp.until(() => document.querySelector('#connection[data-state=refused]'), 'the page saying it is refused')"
            f".then(() => fetch('/ws/session/' + {js(sid)}, {{headers: {{Authorization: 'Bearer not-the-token'}}}}))"
            ".then((view) => ({view_status: view.status, views: document.querySelectorAll('[data-sid]').length}))",
            timeout=60,
        )
        seen["wrong_token"] = dict(wrong, socket=created["url"], socket_error=refused["errorMessage"])
    finally:
        page.close()
    return seen


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument("--terminal", required=True)
    parser.add_argument("--desktop", required=True)
    args = parser.parse_args()
    term, desk = args.terminal, args.desktop
    base = args.url.split("#", 1)[0]
    seen: dict = {}

    with Browser(width=1600, height=1000) as browser:
        seen.update(refused_pages(browser, base, term))

        page, status = open_page(browser, args.url)
        seen["page_status"] = status
        try:
            # Both sessions listed; the terminal painted from the session's current screen.
            seen["views"] = page.evaluate(
                f"__sp.until(() => document.querySelector({js(VIEW.format(sid=term))}) && document.querySelector({js(VIEW.format(sid=desk))})"
                " && Object.fromEntries(Array.from(document.querySelectorAll('[data-sid]'), (v) => [v.dataset.sid, v.dataset.kind])),"
                " 'both session views')",
                timeout=60,
            )
            rows = TERMINAL_ROWS.format(sid=term)
            first = page.evaluate(
                f"__sp.until(() => {{ const r = __sp.rows({js(rows)}); return r && r.some((l) => l.includes('before-6')) && r.join('\\n'); }},"
                " 'the terminal screen')",
                timeout=60,
            )
            seen["terminal"] = {"first": first}
            # Output after the page opened appears live.
            screenpilot(args.binary, "line", term, "echo live-$((6*7))")
            live = page.evaluate(
                f"__sp.until(() => {{ const r = __sp.rows({js(rows)}); return r && r.find((l) => l === 'live-42'); }}, 'live-42 in the terminal')",
                timeout=60,
            )
            seen["terminal"]["live"] = live
            # Once the prompt is back, the page shows exactly what snapshot reads.
            screenpilot(args.binary, "wait", term, "--regex", r"live-42\n\$ ?$", "--timeout-ms", str(DEADLINE_MS))
            snapshot = screenpilot(args.binary, "snapshot", term)["text"].rstrip()
            text = TERMINAL_TEXT.format(sid=term)
            seen["terminal"]["snapshot_lines"] = snapshot
            seen["terminal"]["page_lines"] = page.evaluate(
                f"__sp.until(() => {{ const t = document.querySelector({js(text)}); return t && t.textContent.trimEnd() === {js(snapshot)} && t.textContent.trimEnd(); }},"
                " 'the screen snapshot reads').catch(() => document.querySelector(" + js(text) + ").textContent.trimEnd())",
                timeout=60,
            )

            # The desktop: a frame shows; a click on it through the page reaches the xterm.
            frame = DESKTOP_FRAME.format(sid=desk)
            seen["desktop"] = {}
            seen["desktop"]["frame_before"] = page.evaluate(
                f"__sp.until(() => {{ const p = __sp.pixels({js(frame)}); if (p) window.__before = p; return p && p.hash; }}, 'a desktop frame')",
                timeout=60,
            )
            # In control (the URL is --control's), then a real click in the middle of the frame.
            page.evaluate(f"__sp.until(() => document.querySelector({js(VIEW.format(sid=desk) + '[data-control=true][data-state=live]')}), 'desktop view in control')")
            # Click once the frame shows whole and its place on the page has settled (views still
            # being laid out, or a frame still loading, would move it under the pointer).
            box = page.evaluate(f"__sp.settledBox({js(frame)})", timeout=60)
            seen["desktop"]["box"] = box
            page.click(box[0] + box[2] / 2, box[1] + box[3] / 2)
            clicked = screenpilot(args.binary, "wait", desk, "--regex", "^clicked$", "--timeout-ms", str(DEADLINE_MS))
            seen["desktop"]["title_after_click"] = "clicked" if clicked.get("matched") else clicked
            changed = page.evaluate(
                f"__sp.until(() => {{ const p = __sp.pixels({js(frame)}); const n = __sp.differing(window.__before, p);"
                " return n > 1000 && {hash: p.hash, changed: n}; }, 'a desktop frame showing the click')",
                timeout=60,
            )
            seen["desktop"]["frame_after"] = changed["hash"]
            seen["desktop"]["changed_pixels"] = changed["changed"]
        except (CdpError, CommandFailed) as e:
            seen["error"] = str(e)
            seen["console"] = page.console[-20:]
            try:
                seen["page"] = page.evaluate(PAGE_STATE, timeout=10)
            except CdpError as again:
                seen["page"] = str(again)
            print(json.dumps(seen, indent=2))
            sys.exit(1)
        finally:
            page.close()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
