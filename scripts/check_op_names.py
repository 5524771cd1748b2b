#!/usr/bin/env python3
"""Fail when an operation's name is written as a string literal outside `crates/screenpilot/src/ops/`.

    python3 scripts/check_op_names.py              the screenpilot crate
    python3 scripts/check_op_names.py --src DIR    another tree laid out the same way (DIR/ops/...)

An operation says everything about itself in its own file (its name, its CLI verb, its progress text,
the steps it becomes in a step file), so nothing else names it: code outside ops/ reaches an
operation through its definition (`ops::find`, `OperationDef`'s fields, `Operation::NAME`), never by
spelling its name. The names are read from the operations themselves (`const NAME: &'static str =
"..."` under ops/).

What is not an operation's name, though spelled the same:
- comments and test code (`#[cfg(test)]` items), which may name what they test;
- a key of a JSON object or map: a literal followed by `:` (`json!({"type": ...})`), indexing
  (`value["type"]`), a pair's key (`("type".to_owned(), ...)`), passed to `get`, `insert`,
  `remove`, `contains_key`, `entry` (`params.get("list")` names a field), or a serde or clap
  attribute's field (`tag = "type"`, `requires = "record"`);
- a line that says so with `// not an operation` at its end, or alone on the line above it (a viewer
  kind, a computer action, a protocol word),
  each counted in the summary so the exceptions stay few and visible.
"""

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import check_cycles  # noqa: E402  (its lexer: comments, literals, test items)

NAME = re.compile(r"""const\s+NAME\s*:\s*&'static\s+str\s*=\s*"([a-z_]+)"\s*;""")
LITERAL = re.compile(r'"([a-z_]+)"')
KEY_CALL = re.compile(r"\.(?:get|insert|remove|contains_key|entry|get_mut)\(\s*$")
KEY_ATTR = re.compile(r"\b(?:requires|tag|rename|conflicts_with)\s*=\s*$")
MARK = "// not an operation"


def names_in(ops_dir):
    found = set()
    for path in ops_dir.rglob("*.rs"):
        found.update(NAME.findall(path.read_text()))
    return found


def offenders(src_dir):
    """(names, [(path, line number, line)], exceptions marked)."""
    names = names_in(src_dir / "ops")
    found, marked = [], 0
    for path in sorted(src_dir.rglob("*.rs")):
        rel = path.relative_to(src_dir)
        if rel.parts[0] == "ops":
            continue
        src = path.read_text()
        code = check_cycles.strip_test_items(check_cycles.strip_comments_and_literals(src))
        lines = src.split("\n")
        for m in LITERAL.finditer(src):
            if m.group(1) not in names:
                continue
            # A literal of code (not inside a comment or a test item, where the lexer blanked its
            # quotes too), not a map key.
            if code[m.start()] != '"' or code[m.end() - 1] != '"':
                continue
            after = src[m.end() : m.end() + 3].lstrip(" ")
            if after.startswith(":") and not after.startswith("::"):
                continue
            line_start = src.rfind("\n", 0, m.start()) + 1
            before = src[line_start : m.start()]
            if KEY_CALL.search(before) or KEY_ATTR.search(before):
                continue
            if before.endswith("[") and after.startswith("]"):  # value["type"]
                continue
            if before.endswith("(") and re.match(r"\.(?:to_owned|into)\(\),", src[m.end() :]):
                continue  # a pair's key: ("type".to_owned(), ...)
            n = src.count("\n", 0, m.start())
            if MARK in lines[n] or (n > 0 and lines[n - 1].strip() == MARK):
                marked += 1
                continue
            found.append((rel, n + 1, lines[n].strip()))
    return names, found, marked


def main(argv):
    src_dir = HERE.parent / "crates" / "screenpilot" / "src"
    if argv[:1] == ["--src"] and len(argv) > 1:
        src_dir = Path(argv[1]).resolve()
    if not (src_dir / "ops").is_dir():
        print(f"{src_dir} has no ops/ folder", file=sys.stderr)
        return 2
    names, found, marked = offenders(src_dir)
    for rel, n, line in found:
        print(f"{rel}:{n}: {line}")
    if found:
        print(
            f"{len(found)} operation name(s) written outside ops/: reach the operation through its "
            "definition (ops::find, OperationDef, Operation::NAME) instead",
            file=sys.stderr,
        )
        return 1
    print(f"no operation's name outside ops/ ({len(names)} operations; {marked} marked exceptions)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
