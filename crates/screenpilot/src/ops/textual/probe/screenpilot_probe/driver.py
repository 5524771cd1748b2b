"""The terminal driver: Textual's own Linux driver, plus a round trip through the terminal.

``round_trip()`` writes a cursor position request (DSR 6) behind everything the app has written so far.
The terminal (screenpilot's emulator) answers only after it has drawn all of that output, and the answer
arrives on the input after every key and mouse event screenpilot sent before asking. So when it comes
back, the app has received all input sent so far and the emulator shows all output written so far: the
two fences that make "settled" exact, with no timing guesses.

When the app ends cleanly, its last frame stays on the screen (the alternate screen is not left), so
screenpilot can report it. When the app ends, the terminal modes Textual restores have echo turned off: an answer to the last
round trip that arrives after the app let go of the terminal is then dropped, rather than echoed as
"^[[1;1R" above the traceback of an app that crashed. A suspend (running a shell or an editor) restores
the modes unchanged.

Stopping is quicker too: Textual's input thread looks for its exit flag between 0.1 s selects, twice, so
an app took 0.2 s just to let go of its input. Here the flag also writes to a pipe that thread's selector
watches, and it stops at once. (Both hooks degrade to Textual's own behaviour if its internals change.)
"""

import asyncio
import collections
import os
import selectors
import termios
import threading

from textual import events
from textual.drivers import linux_driver
from textual.drivers.linux_driver import LinuxDriver

# A cursor position request (DSR 6), asked with the cursor on row 2 and put back after: Textual before
# 4.0 reads a report for row 1 as the F3 key ("CSI 1 ; 1 R" is both).
CURSOR_POSITION_REQUEST = "\x1b7\x1b[2;1H\x1b[6n\x1b8"
# Leaving the alternate screen, which Textual does as it exits.
LEAVE_ALT_SCREEN = "\x1b[?1049l"


async def _resolve(future):
    if not future.done():
        future.set_result(None)


class _WakingEvent(threading.Event):
    """The input thread's exit flag: setting it also makes the wake pipe readable."""

    def __init__(self, read_fd, write_fd):
        super().__init__()
        self._read_fd = read_fd
        self._write_fd = write_fd

    def set(self):
        super().set()
        try:
            os.write(self._write_fd, b"\0")
        except OSError:
            pass

    def clear(self):
        # Drained, so an input thread started again (after a suspend) waits as it should.
        super().clear()
        try:
            while os.read(self._read_fd, 512):
                pass
        except OSError:
            pass


class _WakeableSelector(selectors.SelectSelector):
    """A selector that also returns (with no events) when the wake pipe is readable."""

    def __init__(self, wake_fd):
        super().__init__()
        self._wake_fd = wake_fd
        self.register(wake_fd, selectors.EVENT_READ)

    def select(self, timeout=None):
        return [(key, mask) for key, mask in super().select(timeout) if key.fd != self._wake_fd]


class _SelectorsForInput:
    """Stands in for the `selectors` module inside Textual's Linux driver."""

    EVENT_READ = selectors.EVENT_READ

    def __init__(self, wake_fd):
        self._wake_fd = wake_fd

    def SelectSelector(self):
        return _WakeableSelector(self._wake_fd)

    def __getattr__(self, name):
        return getattr(selectors, name)


class ProbeDriver(LinuxDriver):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fences = collections.deque()
        self._fences_lock = threading.Lock()
        self._suspending = False
        self._keeping_frame = False
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        os.set_blocking(write_fd, False)
        if isinstance(getattr(self, "exit_event", None), threading.Event):
            self.exit_event = _WakingEvent(read_fd, write_fd)
        if getattr(linux_driver, "selectors", None) is selectors:
            linux_driver.selectors = _SelectorsForInput(read_fd)

    def round_trip(self):
        """A future that resolves when the terminal has answered; call on the app's loop."""
        future = asyncio.get_running_loop().create_future()
        with self._fences_lock:
            self._fences.append(future)
        self.write(CURSOR_POSITION_REQUEST)
        self.flush()
        return future

    def suspend_application_mode(self):
        self._suspending = True
        try:
            super().suspend_application_mode()
        finally:
            self._suspending = False

    def stop_application_mode(self):
        attrs = getattr(self, "attrs_before", None)
        if not self._suspending and isinstance(attrs, list) and len(attrs) > 3:
            attrs = list(attrs)
            attrs[3] &= ~termios.ECHO
            self.attrs_before = attrs
        # An app that ends with nothing more to say keeps its last frame on the screen: that is what
        # screenpilot reports as its last screen (the terminal is the app's alone, and closes with it).
        # One that prints something once it has left (a crash's traceback, an exit message) leaves the
        # alternate screen as usual, so that is what shows.
        self._keeping_frame = not self._suspending and not getattr(self._app, "_exit_renderables", None)
        try:
            super().stop_application_mode()
        finally:
            self._keeping_frame = False

    def write(self, data):
        if self._keeping_frame and LEAVE_ALT_SCREEN in data:
            data = data.replace(LEAVE_ALT_SCREEN, "")
            if not data:
                return
        super().write(data)

    def process_message(self, message):
        # Runs on the input thread, in input order.
        if isinstance(message, events.CursorPosition):
            with self._fences_lock:
                future = self._fences.popleft() if self._fences else None
            if future is not None:
                # Through the same path as every event before it, so they are all queued first.
                asyncio.run_coroutine_threadsafe(_resolve(future), loop=self._loop)
                return
        super().process_message(message)
