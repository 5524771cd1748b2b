#!/usr/bin/env bash
# The pi package end to end in real pi (1.6): `pi install` it into a scratch HOME, script the model
# with pi-ai's faux provider (test/faux_model.ts), and check the results pi got from textual_run (the
# seed's counter: tab, click #inc, pause, click #inc, screenshot) and computer (screenshot, click,
# type, keypress on a private desktop: DISPLAY is unset).
#
#   packages/pi/test/e2e.sh PI NODE_BIN SCREENPILOT PYTHON
#
# PI: the `pi` command of @earendil-works/pi-coding-agent; NODE_BIN: a directory with Node >= 22.19;
# SCREENPILOT: the binary; PYTHON: an interpreter with Textual.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pi=$1 node_bin=$2 binary=$3 python=$4
scratch=$(mktemp -d)
export SCREENPILOT_DIR=$scratch/daemon
cleanup() { "$binary" daemon stop >/dev/null 2>&1 || true; rm -rf "$scratch"; }
trap cleanup EXIT
export HOME=$scratch/home PATH="$node_bin:/usr/local/bin:/usr/bin:/bin" SCREENPILOT_BINARY=$binary
unset DISPLAY
mkdir -p "$HOME" "$scratch/work"
cat > "$scratch/work/counter.py" <<'PY'
from textual.app import App, ComposeResult
from textual.widgets import Button, Static


class CounterApp(App):
    def __init__(self):
        super().__init__()
        self.count = 0

    def compose(self) -> ComposeResult:
        yield Static(f"count: {self.count}", id="label")
        yield Button("Increment", id="inc")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.count += 1
        self.query_one("#label", Static).update(f"count: {self.count}")
PY
"$pi" install "$(dirname "$here")" >/dev/null
cd "$scratch/work"
PI_E2E_APP=$scratch/work/counter.py PI_E2E_PYTHON=$python timeout 180 \
  "$pi" -e "$here/faux_model.ts" --provider faux --model faux-1 --mode json -p "drive the counter, then the desktop" \
  > "$scratch/events.jsonl"
# The private desktop computer started is closed when pi ends.
left=$("$binary" --json list | python3 -c 'import json,sys; print(" ".join(s["sid"] for s in json.load(sys.stdin)["sessions"] if s["sid"].startswith("pi-computer-")))')
[ -z "$left" ] || { echo "pi left its desktop open: $left" >&2; exit 1; }
python3 - "$scratch/events.jsonl" "$scratch/work" <<'PY'
import base64, json, sys
from pathlib import Path
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ends = [e for e in events if e.get("type") == "tool_execution_end"]
names = [e["toolName"] for e in ends]
assert names == ["textual_run"] + ["computer"] * 4, names
for e in ends:
    assert not e["isError"], (e["toolName"], e["result"]["content"][:1])
t = ends[0]["result"]
assert t["content"][0]["text"].startswith("count: 2"), t["content"][0]["text"][:80]
assert t["details"]["size"] == [80, 25] and t["details"]["screenshot"].endswith(".svg"), t["details"]
assert Path(t["details"]["screenshot"]).is_file()
for e in ends[1:]:
    images = [c for c in e["result"]["content"] if c["type"] == "image"]
    assert len(images) == 1 and base64.b64decode(images[0]["data"]).startswith(b"\x89PNG"), e["result"]["content"][:1]
print(json.dumps({"ok": True, "tools": names, "textual_text": t["content"][0]["text"].splitlines()[0],
                  "desktop": ends[1]["result"]["details"]["sid"]}))
PY
