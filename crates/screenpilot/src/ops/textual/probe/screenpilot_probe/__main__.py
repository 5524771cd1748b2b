"""Run a Textual app under screenpilot: ``python -m screenpilot_probe APP_FILE``."""

import os
import sys

from . import INSTALL_HINT, MIN_TEXTUAL, SUPPORTED
from .channel import Channel


def _version_tuple(text):
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _forget_probe_path():
    """Drop the probe's own directory from PYTHONPATH so the app's child processes never inherit it."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    entries = [e for e in os.environ.get("PYTHONPATH", "").split(os.pathsep) if e and e != here]
    if entries:
        os.environ["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        os.environ.pop("PYTHONPATH", None)


def main(argv):
    channel = Channel.from_environment()
    if channel is None:
        sys.stderr.write("screenpilot_probe: start it through `screenpilot textual`, not by hand\n")
        return 2
    if len(argv) != 1:
        channel.event("error", code="bad_request", message="usage: python -m screenpilot_probe APP_FILE")
        return 2
    _forget_probe_path()
    python = sys.version.split()[0]
    hint = INSTALL_HINT.format(python=sys.executable or "python3")
    try:
        import textual
    except Exception as error:
        channel.event(
            "error",
            code="textual_missing",
            message=f"python: Textual is not importable by {sys.executable} (Python {python}): "
            f"{type(error).__name__}: {error}. Install it: {hint}",
        )
        return 3
    version = getattr(textual, "__version__", "0")
    if _version_tuple(version) < MIN_TEXTUAL:
        channel.event(
            "error",
            code="textual_too_old",
            message=f"python: {sys.executable} has Textual {version}; screenpilot supports {SUPPORTED} "
            f"(newer releases run too). Upgrade it: {hint}",
        )
        return 3

    from .loader import LoadError, load_app

    try:
        app = load_app(argv[0])
    except LoadError as error:
        channel.event("error", code="app_load_failed", message=str(error))
        return 3

    from .driver import ProbeDriver
    from .server import Probe

    probe = Probe(app, channel, python=python, textual_version=version)
    app.driver_class = ProbeDriver
    probe.start()
    try:
        app.run(auto_pilot=probe.on_ready)
    finally:
        probe.report_exit()
        channel.close()
    code = app.return_code
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
