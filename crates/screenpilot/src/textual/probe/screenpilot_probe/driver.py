"""The terminal driver: Textual's own Linux driver, plus a round trip through the terminal.

``round_trip()`` writes a cursor position request (DSR 6) behind everything the app has written so far.
The terminal (screenpilot's emulator) answers only after it has drawn all of that output, and the answer
arrives on the input after every key and mouse event screenpilot sent before asking. So when it comes
back, the app has received all input sent so far and the emulator shows all output written so far: the
two fences that make "settled" exact, with no timing guesses.
"""

import asyncio
import collections
import threading

from textual import events
from textual.drivers.linux_driver import LinuxDriver

CURSOR_POSITION_REQUEST = "\x1b[6n"


async def _resolve(future):
    if not future.done():
        future.set_result(None)


class ProbeDriver(LinuxDriver):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._fences = collections.deque()
        self._fences_lock = threading.Lock()

    def round_trip(self):
        """A future that resolves when the terminal has answered; call on the app's loop."""
        future = asyncio.get_running_loop().create_future()
        with self._fences_lock:
            self._fences.append(future)
        self.write(CURSOR_POSITION_REQUEST)
        self.flush()
        return future

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
