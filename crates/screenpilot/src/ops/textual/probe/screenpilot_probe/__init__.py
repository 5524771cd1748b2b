"""screenpilot's probe: runs a Textual app in a real terminal and answers questions about it.

screenpilot starts it as ``python -m screenpilot_probe APP_FILE`` on a pseudo-terminal it watches, and
talks to it over a private unix socket (JSON lines). This package is embedded in the screenpilot binary
and written to a private cache directory at run time; it is not a public API.
"""

# The oldest Textual the probe is tested with.
MIN_TEXTUAL = (8, 2)
INSTALL_HINT = '{python} -m pip install "textual>=8.2"'
