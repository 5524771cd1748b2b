"""screenpilot's wheel: the `screenpilot` executable is what it installs; see `python -m screenpilot`."""

from importlib.metadata import version

__version__ = version("screenpilot")
