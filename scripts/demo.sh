#!/usr/bin/env bash
# The main job, end to end: build screenpilot, drive a real full-screen program (vim) through the
# daemon, print what a person would see, and write a PNG screenshot of it.
#
#   scripts/demo.sh [OUT.png]      (default: screenpilot-demo.png here)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(realpath -m "${1:-screenpilot-demo.png}")

if ! command -v vim >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq && apt-get install -y -qq vim >/dev/null
  else
    echo "the demo drives vim; install it first (apt-get install vim)" >&2
    exit 1
  fi
fi

echo "== building (cargo build --release)"
cargo build --release --locked -q -p screenpilot
sp=target/release/screenpilot

# A private daemon for the demo, stopped at the end.
export SCREENPILOT_DIR=$(mktemp -d)
work=$(mktemp -d)
trap '$sp daemon stop --end-sessions >/dev/null 2>&1 || true; rm -rf "$SCREENPILOT_DIR" "$work"' EXIT

echo "== spawn vim in a 90x24 terminal"
$sp spawn --sid demo --size 90x24 --cwd "$work" -- vim -u NONE -N -c 'syntax on' -c 'set number' notes.py
$sp wait demo --regex 'notes.py' --timeout-ms 10000 >/dev/null

echo "== type a small program (insert mode), then Escape"
$sp keys demo i
$sp type demo $'# typed by screenpilot\ndef greet(name):\n    return f"hello, {name}"\n\nprint(greet("world"))'
$sp wait demo --regex 'print\(greet' --timeout-ms 10000 >/dev/null
# `keys --json` returns the screen hash from just before the keys: wait for the screen to move on from it.
before=$($sp --json keys demo Escape | sed -E 's/.*"hash":"([0-9a-f]+)".*/\1/')
$sp wait demo --change "$before" --timeout-ms 10000 >/dev/null

echo "== the screen, as text (screenpilot snapshot demo):"
$sp snapshot demo | sed 's/^/    | /'

echo "== screenshot: $($sp screenshot demo -o "$out" --frame)"

echo "== save and quit (:wq), wait for vim to exit"
$sp line demo ':wq'
$sp wait demo --exit --timeout-ms 10000 >/dev/null
echo "   $($sp alive demo || true)"
echo "== the file vim wrote, run with python3:"
python3 "$work/notes.py" | sed 's/^/    /'
$sp close demo >/dev/null
echo "== done: $out"
