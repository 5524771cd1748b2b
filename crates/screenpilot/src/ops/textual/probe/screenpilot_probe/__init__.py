"""screenpilot's probe: runs a Textual app in a real terminal and answers questions about it.

screenpilot starts it as ``python -m screenpilot_probe APP_FILE`` on a pseudo-terminal it watches, and
talks to it over a private unix socket (JSON lines). This package is embedded in the screenpilot binary
and written to a private cache directory at run time; it is not a public API.
"""

# The Textual releases the probe is tested with, the oldest and the newest (CI runs the tests on both).
# Older ones are refused; newer ones run, with a warning (screenpilot's NEWEST_TESTED_TEXTUAL says so).
MIN_TEXTUAL = (1, 0)
NEWEST_TESTED = (8, 2)
SUPPORTED = "Textual 1.0 through 8.2"
INSTALL_HINT = '{python} -m pip install "textual>=1.0"'
