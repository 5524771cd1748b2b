//! `textual_run`: the operation's public face. The implementation lives in [`crate::textual`].

use crate::textual::TextualRunParams;

use super::{schema_of, OperationDef};

pub const TEXTUAL_RUN: OperationDef = OperationDef {
    name: "textual_run",
    description: "Run a Python Textual app in a real terminal and drive it: keys, clicks on CSS selectors, pauses, resizes, screenshots. \
One-shot (app + actions: start, act, stop; returns the exit value) or a session (app + session opens it and keeps it running; session alone acts on it; close: true stops it). \
A click goes to the visible centre of the widget (or offset from its top-left) and is refused with a clear error if the widget is absent, hidden, disabled, off screen, or covered (e.g. by a modal screen). \
After every action the app settles (input handled, queues drained, screen repainted) before the next; the screen text streams as progress after each. \
Returns {ok, sid, kind, alive, text (the screen), cols, rows, details{exit_value, exit, screenshot (SVG beside the app; png too), size, python, python_version, textual_version, warnings}, tree?, query?}. \
tree: every widget (type, id, classes, visible, disabled, focused, region [x,y,w,h]); query: state of matching widgets (Input value, Button label, Checkbox value, DataTable row_count/cursor, ...). \
Example: {\"app\": \"/src/counter.py\", \"screenshot\": true, \"actions\": [{\"press\": \"tab\"}, {\"click\": \"#inc\"}], \"query\": [\"#label\"]}.",
    schema: schema_of::<TextualRunParams>,
};
