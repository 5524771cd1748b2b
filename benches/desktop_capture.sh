#!/usr/bin/env bash
# Desktop screenshot latency (capture to PNG bytes) at 1280x800 and 1920x1080, screenpilot next to
# ImageMagick's `import -window root png:-`, on the same Xvfb screens in one run.
# Needs: xvfb, imagemagick (for the comparison).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v import >/dev/null || echo "note: ImageMagick's import is not installed (apt-get install imagemagick); only screenpilot is measured" >&2
exec cargo bench -p screenpilot-desktop --bench desktop_capture
