"""A small Chrome DevTools Protocol driver for Debian's chromium, for the watch page's browser test
(watch_browser.py) and the watch benchmarks (benches/watch_*.py).

It starts `chromium --headless=new` on a private profile, learns the DevTools address from the line
chromium prints once it listens, and talks to each tab over its own websocket (websocket-client).
Waiting is done by the browser: `Page.evaluate` runs an expression whose promise resolves on the
event being waited for (a MutationObserver, xterm.js's onWriteParsed, a load event), and every wait
has a deadline, so a page that never shows something fails with a message instead of hanging.
"""

from __future__ import annotations

import collections
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

import websocket  # websocket-client, from scripts/requirements-test.txt


class CdpError(RuntimeError):
    """A DevTools call failed, a page threw, or a wait ran past its deadline."""


def chromium_binary() -> str:
    for name in (os.environ.get("SCREENPILOT_CHROMIUM"), "chromium", "chromium-browser"):
        if name and shutil.which(name):
            return shutil.which(name)
    raise CdpError("no chromium on PATH: scripts/test.sh installs Debian's chromium (as root)")


class Browser:
    """One headless chromium with a private profile; `close()` ends it and removes the profile."""

    def __init__(self, width: int = 1600, height: int = 900, start_timeout: float = 60.0):
        self.profile = tempfile.mkdtemp(prefix="sp-chromium-")
        args = [
            chromium_binary(),
            "--headless=new",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={self.profile}",
            f"--window-size={width},{height}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--mute-audio",
            # Containers often give /dev/shm a few MB; chromium then crashes its renderers.
            "--disable-dev-shm-usage",
            # Keep timers and animation frames running at full rate in tabs nobody looks at: the
            # benchmarks open several, and a throttled one would measure chromium, not the server.
            "--disable-background-timer-throttling",
            "--disable-backgrounding-occluded-windows",
            "--disable-renderer-backgrounding",
            "about:blank",
        ]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # chromium refuses to run as root with its sandbox
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.log: collections.deque[str] = collections.deque(maxlen=200)
        self.ws_url = self._read_devtools_url(start_timeout)
        # Keep draining chromium's stderr so it can never block on a full pipe.
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.http = "http://" + self.ws_url.split("/")[2]

    def _read_devtools_url(self, timeout: float) -> str:
        """Read stderr until chromium says where DevTools listens (it prints it once it does)."""
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stderr, selectors.EVENT_READ)
        pending = b""
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CdpError(f"chromium did not open DevTools within {timeout} s:\n" + "\n".join(self.log))
                if not sel.select(left):
                    continue
                chunk = os.read(self.proc.stderr.fileno(), 65536)
                if not chunk:
                    raise CdpError(
                        f"chromium exited ({self.proc.wait()}) before DevTools listened:\n" + "\n".join(self.log)
                    )
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for raw in lines:
                    line = raw.decode("utf-8", "replace")
                    self.log.append(line)
                    if "DevTools listening on " in line:
                        return line.split("DevTools listening on ", 1)[1].strip()
        finally:
            sel.close()

    def _drain_stderr(self) -> None:
        for raw in iter(self.proc.stderr.readline, b""):
            self.log.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def new_page(self, timeout: float = 30.0) -> "Page":
        """A new tab on about:blank, with its own DevTools connection."""
        request = urllib.request.Request(self.http + "/json/new?about:blank", method="PUT")
        with urllib.request.urlopen(request, timeout=timeout) as response:
            target = json.load(response)
        return Page(target["webSocketDebuggerUrl"], target["id"], self, timeout)

    def close(self) -> None:
        if self.proc.poll() is None:
            # Chromium's helpers (renderers, GPU process) share its process group: end them all.
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> "Browser":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class Page:
    """One tab. Calls are synchronous; events that arrive meanwhile are kept for `wait_event`."""

    def __init__(self, ws_url: str, target_id: str, browser: Browser, timeout: float = 30.0):
        self.target_id = target_id
        self.browser = browser
        # suppress_origin: chromium refuses DevTools connections that carry an Origin it was not told of.
        self.ws = websocket.create_connection(ws_url, timeout=timeout, suppress_origin=True)
        self.next_id = 0
        self.events: collections.deque[dict] = collections.deque()
        self.console: list[str] = []
        self.call("Runtime.enable")
        self.call("Page.enable")
        self.call("Network.enable")

    def _receive(self, deadline: float, what: str) -> dict:
        left = deadline - time.monotonic()
        if left <= 0:
            raise CdpError(f"timed out waiting for {what}")
        self.ws.settimeout(left)
        try:
            message = json.loads(self.ws.recv())
        except websocket.WebSocketTimeoutException:
            raise CdpError(f"timed out waiting for {what}") from None
        if message.get("method") == "Runtime.consoleAPICalled":
            args = message["params"].get("args", [])
            self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
        elif message.get("method") == "Runtime.exceptionThrown":
            details = message["params"]["exceptionDetails"]
            self.console.append("exception: " + details.get("exception", {}).get("description", details.get("text", "")))
        return message

    def call(self, method: str, params: dict | None = None, timeout: float = 30.0) -> dict:
        """Send one DevTools command and return its result; events arriving meanwhile are queued."""
        self.next_id += 1
        call_id = self.next_id
        self.ws.send(json.dumps({"id": call_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline, method)
            if message.get("id") == call_id:
                if "error" in message:
                    raise CdpError(f"{method}: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_event(self, method: str, predicate=lambda params: True, timeout: float = 30.0) -> dict:
        """The first queued or coming event `method` whose params satisfy `predicate`."""
        for message in list(self.events):
            if message["method"] == method and predicate(message["params"]):
                self.events.remove(message)
                return message["params"]
        deadline = time.monotonic() + timeout
        while True:
            message = self._receive(deadline, method)
            if message.get("method") == method and predicate(message["params"]):
                return message["params"]
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str, timeout: float = 30.0):
        """Evaluate `expression` in the page, awaiting it if it is a promise; its JSON value."""
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise CdpError(f"page threw: {text}")
        return result["result"].get("value")

    def navigate(self, url: str, timeout: float = 30.0) -> int:
        """Load `url`, wait for its load event, and return the document's HTTP status."""
        self.events.clear()
        frame = self.call("Page.navigate", {"url": url}, timeout=timeout)
        if frame.get("errorText"):
            raise CdpError(f"navigating to {url}: {frame['errorText']}")
        loader = frame.get("loaderId")
        response = self.wait_event(
            "Network.responseReceived",
            lambda p: p.get("type") == "Document" and p.get("loaderId") == loader,
            timeout,
        )
        self.wait_event("Page.loadEventFired", timeout=timeout)
        return int(response["response"]["status"])

    def screenshot(self, path: str, clip: dict | None = None) -> None:
        import base64

        params = {"format": "png", "captureBeyondViewport": False}
        if clip:
            params["clip"] = dict(clip, scale=1)
        data = self.call("Page.captureScreenshot", params, timeout=60)["data"]
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))

    def set_viewport(self, width: int, height: int, scale: float = 1) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": False},
        )

    def click(self, x: float, y: float, button: str = "left") -> None:
        """A real mouse click at viewport point (x, y): move, press, release."""
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        for kind in ("mousePressed", "mouseReleased"):
            self.call(
                "Input.dispatchMouseEvent",
                {"type": kind, "x": x, "y": y, "button": button, "buttons": 1 if kind == "mousePressed" else 0, "clickCount": 1},
            )

    def close(self) -> None:
        try:
            self.ws.close()
        except OSError:
            pass
        try:
            urllib.request.urlopen(self.browser.http + "/json/close/" + self.target_id, timeout=10).close()
        except OSError:
            pass
