"""Answering screenpilot's requests on the app's own event loop.

A thread reads requests from the channel and runs each as a coroutine on the app's loop, so every
answer sees the app between two of its own messages, never in the middle of one.
"""

import asyncio
import concurrent.futures
import threading
import traceback
import unicodedata

from . import settle, widgets


def _jsonable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return repr(value)


def _key_character(name):
    """The character a Textual key name stands for ("full_stop" is "."), or None. The lookup of
    Textual's Pilot (its name table, then the Unicode name), reading the tables defensively since they
    are private; spaces for underscores too, so "pound_sign" is "£"."""
    from textual import keys

    original = getattr(keys, "REPLACED_KEYS", {}).get(name, name)
    unicode_name = getattr(keys, "KEY_TO_UNICODE_NAME", {}).get(original, original)
    for candidate in (unicode_name, unicode_name.replace("_", " ")):
        try:
            return unicodedata.lookup(candidate)
        except KeyError:
            pass
    return None


class RequestError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class Probe:
    def __init__(self, app, channel, python, textual_version):
        self.app = app
        self.channel = channel
        self.python = python
        self.textual_version = textual_version
        self.loop = None
        self.ready = threading.Event()
        self.finished = threading.Event()

    def start(self):
        threading.Thread(target=self._serve, name="screenpilot-probe", daemon=True).start()

    async def on_ready(self, pilot):
        """Textual calls this once the app has composed and mounted its first screen."""
        self.loop = asyncio.get_running_loop()
        self.ready.set()
        self.channel.event(
            "ready",
            python=self.python,
            textual=self.textual_version,
            app=type(self.app).__name__,
        )

    def report_exit(self):
        self.finished.set()
        self.channel.event(
            "exit",
            return_code=self.app.return_code,
            return_value=_jsonable(self.app.return_value),
            return_repr=None if self.app.return_value is None else repr(self.app.return_value),
        )

    def _serve(self):
        for request in self.channel.requests():
            self.ready.wait()
            try:
                future = asyncio.run_coroutine_threadsafe(self._handle(request), self.loop)
            except RuntimeError:
                self._answer(request, error=("app_exited", "the app has exited"))
                continue
            future.add_done_callback(lambda done, request=request: self._finish(request, done))
        # screenpilot closed the channel: nobody can drive the app any more.
        if self.ready.is_set() and not self.finished.is_set():
            try:
                self.loop.call_soon_threadsafe(self.app.exit)
            except RuntimeError:
                pass

    def _finish(self, request, done):
        try:
            result = done.result()
        except RequestError as error:
            self._answer(request, error=(error.code, error.message))
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            # Textual cancels what runs on its loop as the app shuts down.
            self._answer(request, error=("app_exited", "the app is exiting"))
        except BaseException:
            self._answer(request, error=("probe_failed", traceback.format_exc()))
        else:
            self._answer(request, result=result)

    def _answer(self, request, result=None, error=None):
        answer = {"id": request.get("id")}
        if error is None:
            answer["ok"] = True
            answer["result"] = result
        else:
            answer["ok"] = False
            answer["error"] = {"code": error[0], "message": error[1]}
        self.channel.send(answer)

    async def _handle(self, request):
        op = request.get("op")
        app = self.app
        if op == "settle":
            size = request.get("size")
            return await settle.settle(
                app,
                limit=float(request.get("limit_ms", 10000)) / 1000.0,
                size=tuple(size) if size else None,
                paint=bool(request.get("paint", True)),
            )
        if op == "tree":
            return widgets.tree(app)
        if op == "query":
            return widgets.query(app, request.get("selectors") or [])
        if op == "region":
            try:
                place = widgets.locate(app, request.get("selector", ""), request.get("offset"))
            except widgets.Refusal as refusal:
                raise RequestError(refusal.code, refusal.message) from None
            # Each pointer action starts its own click chain, as a Pilot click does: otherwise clicks
            # of the action before, within Textual's double-click time, count toward it (a click
            # after a double click would arrive as the third of a triple click).
            if hasattr(app, "_click_chain_last_time"):
                app._click_chain_last_time = None
            return place
        if op == "key":
            return {"character": _key_character(str(request.get("name", "")))}
        if op == "widget_at":
            return widgets.widget_at(app, int(request.get("x", 0)), int(request.get("y", 0)))
        if op == "exit":
            # An app already on its way out keeps the result it chose.
            if not getattr(app, "_exit", False):
                app.exit()
            return {"exiting": True}
        raise RequestError("bad_request", f"unknown probe request {op!r}")
