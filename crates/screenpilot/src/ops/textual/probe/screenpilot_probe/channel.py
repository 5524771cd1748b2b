"""The side channel to screenpilot: JSON lines over a unix socket.

screenpilot listens on a socket in its private (0700) directory and passes the path in an environment
variable, which is removed here at once so the app and its children never see it. Requests carry an
``id``; answers echo it. Unsolicited events (``hello``, ``ready``, ``error``, ``exit``) carry ``event``.
"""

import json
import os
import socket
import threading

SOCKET_ENV = "SCREENPILOT_PROBE_SOCKET"


class Channel:
    def __init__(self, sock):
        self._sock = sock
        self._send_lock = threading.Lock()
        self._reader = sock.makefile("rb")

    @classmethod
    def from_environment(cls):
        """Connect to the socket named in the environment, forgetting the variable; None if unset."""
        path = os.environ.pop(SOCKET_ENV, None)
        if not path:
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
        return cls(sock)

    def send(self, message):
        line = json.dumps(message, default=repr).encode("utf-8") + b"\n"
        with self._send_lock:
            try:
                self._sock.sendall(line)
            except OSError:
                pass  # screenpilot went away; the app ends when the pty closes

    def event(self, name, **fields):
        fields["event"] = name
        self.send(fields)

    def requests(self):
        """Yield decoded requests until screenpilot closes the socket."""
        for line in self._reader:
            line = line.strip()
            if not line:
                continue
            try:
                request = json.loads(line)
            except ValueError as error:
                self.send({"id": None, "ok": False, "error": {"code": "bad_request", "message": str(error)}})
                continue
            if isinstance(request, dict):
                yield request

    def close(self):
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._sock.close()
