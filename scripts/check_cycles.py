#!/usr/bin/env python3
"""Fail when two or more files of a crate import each other, directly or around a loop; or two or more
modules (folders) do.

    python3 scripts/check_cycles.py                   every crate under crates/
    python3 scripts/check_cycles.py screen session    only these crates (directory names under crates/)
    python3 scripts/check_cycles.py --crates-dir DIR  the crates under DIR instead (DIR/NAME/src)

File A depends on file B when A's code names an item of B: through a `use crate::`, `use super::`,
`use self::` or `use child::` declaration, or a path in code such as `crate::x::f(...)`, `super::T` or
`child::f(...)`. A path is followed through `use` and `pub use` to the file that defines the item; when
that file cannot be found (a macro, a glob), the edge goes to the module's own file (`mod.rs`).

What is not a dependency, and why:
- `mod child;` in a parent: that is the tree's structure, not an import.
- A re-export (`pub use child::Item`, `pub(crate) use ...`) whose name the file's own code never uses: it
  only passes the name through, and whoever uses it is linked to the defining file instead. With
  `--count-reexports` every re-export counts as an edge.
- Test code: any item under `#[cfg(test)]` (test modules may reach up into what they test).
- Method calls and trait impls: this reads paths, not types, so `self.click()` defined in another file's
  `impl` block is not seen.

Modules: files that do not import each other can still make two modules that do. A module here is a
child of a module (a file, or a directory module with everything under it), and module A depends on
its sibling B when a file under A depends on a file under B. So `ops/common.rs` naming
`crate::watch::WatchServer` (defined in `watch/running.rs`, re-exported by `watch/mod.rs`) made `ops`
depend on `watch`, while `watch/mod.rs` used `crate::ops::Context`: no two files imported each
other, the two modules did (`scripts/cycle_fixtures/reexport_loop` is that tree in small). A
module's own file (`mod.rs`) using its children, or a child using it, is the tree, not a sibling edge.
Siblings are compared at every level (the crate's top modules, the modules inside `ops`, ...).

Depth: `--depth CRATE/MODULE=N` (e.g. `--depth screenpilot/ops=7`) fails when the longest chain of
imports between the files under that module is more than N files long (a file importing none of them
is on level 1). It is printed for each module named, so a layering's height can be watched as it moves.

Apart: `--apart CRATE/A:B` (e.g. `--apart screenpilot/client:ops`) fails when a file under module A
imports one under module B: the client side builds without the operations.

Every strongly connected component of more than one file, and of more than one sibling module (one
of them a directory: a loop of single files is already a file cycle), is printed with one example
line per edge; the exit status is then 1. Otherwise it prints "no import cycles (N files, M modules
with children)" and exits 0.
"""

import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


# ---------------------------------------------------------------------------------------------------
# Lexing: blank out comments, string and char literal contents and test-only items, keeping every
# offset and newline where it was so line numbers still point at the source.


def strip_comments_and_literals(src):
    out = list(src)
    n = len(src)
    i = 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c in "rbc" and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = re.compile(r'(?:br|cr|r)(#*)"').match(src, i)
            if m:  # raw string: no escapes, ends at `"` followed by the same number of `#`
                end = src.find('"' + m.group(1), m.end())
                end = n if end < 0 else end
                blank(m.end(), end)
                i = end + 1 + len(m.group(1))
            else:
                i += 1  # an identifier, or the prefix of b"..." / b'.' (handled on the next turn)
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}') or a lifetime / label ('a, 'static).
            if i + 1 < n and src[i + 1] == "\\":
                j = src.find("'", i + 3)
                j = n if j < 0 else j
                blank(i + 1, j)
                i = j + 1
            elif i + 2 < n and src[i + 2] == "'":
                blank(i + 1, i + 2)
                i += 3
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


CFG_TEST = re.compile(r"#\[\s*cfg\s*\(\s*(?:test|all\s*\(\s*test\b[^\]]*)\s*\)\s*\]")


def item_end(text, start):
    """Offset just past the item starting at `start`: its `;` or the `}` closing its body."""
    m = re.compile(r"\s*(?:pub\s*(?:\([^)]*\))?\s*)?(use|const|static|type|let)\b").match(text, start)
    semicolon_only = bool(m)
    depth = 0
    for k in range(start, len(text)):
        ch = text[k]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0 and ch == "}" and not semicolon_only:
                return k + 1
        elif ch == ";" and depth == 0:
            return k + 1
    return len(text)


def strip_test_items(text):
    """Blank every item carrying `#[cfg(test)]` (with the attributes around it)."""
    out = list(text)
    pos = 0
    while True:
        m = CFG_TEST.search(text, pos)
        if not m:
            return "".join(out)
        k = m.end()
        while True:  # further attributes on the same item
            a = re.compile(r"\s*#\[").match(text, k)
            if not a:
                break
            depth, k = 1, a.end()
            while k < len(text) and depth:
                depth += {"[": 1, "]": -1}.get(text[k], 0)
                k += 1
        end = item_end(text, k)
        for j in range(m.start(), end):
            if out[j] != "\n":
                out[j] = " "
        pos = end


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


# ---------------------------------------------------------------------------------------------------
# Modules: which file holds which module, what each module defines and imports.


class Module:
    def __init__(self, path, file, parent, body_depth, span, child_dir):
        self.path = path  # ("crate", "render", "font")
        self.file = file  # SourceFile
        self.parent = parent
        self.body_depth = body_depth  # brace depth of its items inside the file
        self.span = span  # (start, end) offsets of its body in the file
        self.child_dir = child_dir  # where `mod x;` inside it looks for x.rs / x/mod.rs
        self.children = {}  # name -> Module
        self.items = set()  # names defined here
        self.bindings = {}  # name -> Binding (module-level `use`)
        self.globs = []  # Binding with name "*"

    def root(self):
        m = self
        while m.parent:
            m = m.parent
        return m


class Binding:
    def __init__(self, name, segs, module, offset, decl, public):
        self.name = name  # the name it binds ("*" for a glob)
        self.segs = segs  # the path it names, relative to `module`
        self.module = module
        self.offset = offset
        self.decl = decl  # the whole `use` declaration, on one line
        self.public = public


class SourceFile:
    def __init__(self, path):
        self.path = path
        self.raw = path.read_text(encoding="utf-8")
        self.text = strip_test_items(strip_comments_and_literals(self.raw))
        self.depth_at = self._depths()
        self.modules = []  # the file's module first, then inline modules
        self.uses = []  # every Binding declared in the file, at any depth
        self.use_spans = []

    def _depths(self):
        depths, d = [], 0
        for ch in self.text:
            depths.append(d)
            if ch == "{":
                d += 1
            elif ch == "}":
                d -= 1
        return depths

    def module_at(self, offset):
        """The innermost (inline) module whose body holds `offset`."""
        best = self.modules[0]
        for m in self.modules[1:]:
            if m.span[0] <= offset < m.span[1] and m.body_depth > best.body_depth:
                best = m
        return best

    def source_line(self, offset):
        n = line_of(self.text, offset)
        return n, self.raw.splitlines()[n - 1].strip()


# The lookahead keeps `const fn f` from being read as a const named `fn`.
ITEM = re.compile(
    r"\b(?:fn|struct|enum|trait|type|const|static|union|macro_rules!)\s+(?!fn\b)(" + IDENT + r")"
)
MOD_DECL = re.compile(r"\bmod\s+(" + IDENT + r")\s*([;{])")
USE_DECL = re.compile(r"(?:\bpub\s*(\([^)]*\))?\s*)?\buse\s")


def child_dir_of(file_path, is_dir_owner):
    return file_path.parent if is_dir_owner else file_path.parent / file_path.stem


def load_crate(src_dir, root_name):
    """Walk the module tree from a crate root (lib.rs, main.rs, bin/x.rs); return its SourceFiles."""
    files = []
    root_file = src_dir / root_name

    def load(path, mod_path, parent, child_dir):
        sf = SourceFile(path)
        files.append(sf)
        top = Module(mod_path, sf, parent, 0, (0, len(sf.text)), child_dir)
        if parent:
            parent.children[mod_path[-1]] = top
        sf.modules.append(top)
        scan(sf, top)
        return top

    def scan(sf, module):
        text = sf.text
        lo, hi = module.span
        for m in ITEM.finditer(text, lo, hi):
            if sf.depth_at[m.start()] == module.body_depth and sf.module_at(m.start()) is module:
                module.items.add(m.group(1))
        for m in MOD_DECL.finditer(text, lo, hi):
            if sf.depth_at[m.start()] != module.body_depth or sf.module_at(m.start()) is not module:
                continue
            name = m.group(1)
            if m.group(2) == "{":
                close = item_end(text, m.start())
                inner = Module(
                    module.path + (name,),
                    sf,
                    module,
                    module.body_depth + 1,
                    (m.end(), close - 1),
                    module.child_dir / name,
                )
                module.children[name] = inner
                sf.modules.append(inner)
                scan(sf, inner)
            else:
                explicit = path_attribute(sf, m.start())
                if explicit:
                    base = sf.path.parent if module.body_depth == 0 else module.child_dir
                    target = (base / explicit).resolve()
                    load(target, module.path + (name,), module, child_dir_of(target, True))
                    continue
                flat = module.child_dir / (name + ".rs")
                nested = module.child_dir / name / "mod.rs"
                if flat.exists():
                    load(flat, module.path + (name,), module, child_dir_of(flat, False))
                elif nested.exists():
                    load(nested, module.path + (name,), module, nested.parent)
                else:
                    n, _ = sf.source_line(m.start())
                    print(f"warning: {sf.path}:{n}: no file for `mod {name};`", file=sys.stderr)

    load(root_file, ("crate",), None, src_dir)
    for sf in files:
        parse_uses(sf)
    return files


def path_attribute(sf, mod_offset):
    """The `#[path = "..."]` string right before a `mod` declaration, if any."""
    before = sf.text[:mod_offset]
    m = re.search(r'#\[\s*path\s*=\s*"([^"]*)"\s*\]\s*(?:pub\s*(?:\([^)]*\))?\s*)?$', before)
    if not m:
        return None
    return sf.raw[m.start(1) : m.end(1)]


def parse_uses(sf):
    text = sf.text
    for m in USE_DECL.finditer(text):
        # `use` must start a statement: not part of an identifier or a path.
        if m.start() > 0 and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "_:"):
            continue
        end = text.find(";", m.end())
        if end < 0:
            continue
        public = "pub" in text[m.start() : m.end()]
        module = sf.module_at(m.start())
        decl = " ".join(sf.raw[m.start() : end + 1].split())
        sf.use_spans.append((m.start(), end + 1))
        module_level = sf.depth_at[m.start()] == module.body_depth
        for name, segs, off in use_tree(text, m.end(), end):
            b = Binding(name, segs, module, off, decl, public)
            sf.uses.append(b)
            if module_level:
                if name == "*":
                    module.globs.append(b)
                elif name != "_":
                    module.bindings[name] = b


TOKEN = re.compile(r"\s*(::|" + IDENT + r"|[{},*])")


def use_tree(text, start, end):
    """(bound name, path segments, offset) for every leaf of a use tree."""
    tokens = []
    pos = start
    while pos < end:
        m = TOKEN.match(text, pos)
        if not m:
            break
        tokens.append((m.group(1), m.start(1)))
        pos = m.end()

    leaves = []

    def tree(i, prefix):
        segs = list(prefix)
        if i < len(tokens) and tokens[i][0] == "::":
            i += 1  # a leading `::` (an external crate): keep going, resolution will drop it
            segs.append("::")
        while i < len(tokens):
            tok, off = tokens[i]
            if tok == "{":
                i += 1
                while i < len(tokens) and tokens[i][0] != "}":
                    i = tree(i, segs)
                    if i < len(tokens) and tokens[i][0] == ",":
                        i += 1
                return i + 1
            if tok == "*":
                leaves.append(("*", segs, off))
                return i + 1
            if tok in (",", "}"):
                return i
            if tok == "::":
                i += 1
                continue
            # an identifier: either a path segment or the leaf, maybe followed by `as alias`
            nxt = tokens[i + 1][0] if i + 1 < len(tokens) else None
            if nxt == "::":
                segs.append(tok)
                i += 1
                continue
            if tok == "self" and segs:
                name, path = segs[-1], segs
            else:
                name, path = tok, segs + [tok]
            i += 1
            if i < len(tokens) and tokens[i][0] == "as":
                name = tokens[i + 1][0]
                i += 2
            leaves.append((name, path, off))
            return i
        return i

    tree(0, [])
    return leaves


# ---------------------------------------------------------------------------------------------------
# Resolution: a path, from the module where it is written, to the file that defines what it names.


def resolve(module, segs, seen=None):
    """The SourceFile a path leads to, or None when it leaves the crate (std, dependencies)."""
    seen = set() if seen is None else seen
    key = (id(module), tuple(segs))
    if key in seen or not segs:
        return None
    seen.add(key)
    first = segs[0]
    if first == "::":
        return None
    if first in ("crate", "self", "super"):
        cur = module.root() if first == "crate" else module
        i = 1
        if first == "super":
            cur = cur.parent
            while cur and i < len(segs) and segs[i] == "super":
                cur, i = cur.parent, i + 1
            if cur is None:
                return None
        return walk(cur, segs[i:], seen)
    found = lookup(module, first, segs[1:], seen)
    return found if found is not False else None


def lookup(cur, name, rest, seen):
    """Follow `name` (then `rest`) inside module `cur`; False when `cur` does not know the name."""
    if name in cur.children:
        return walk(cur.children[name], rest, seen)
    if name in cur.items:
        return cur.file
    if name in cur.bindings:
        b = cur.bindings[name]
        if b.segs and b.segs[0] == name and b.module is cur:
            # `use memchr::memchr;`: the path starts at the crate of that name, not at this binding.
            return None
        return resolve(b.module, b.segs + list(rest), seen)
    for g in cur.globs:
        target = resolve(g.module, g.segs + [name] + list(rest), seen)
        if target is not None:
            return target
    return False


def walk(cur, segs, seen):
    if not segs:
        return cur.file
    found = lookup(cur, segs[0], segs[1:], seen)
    # Not findable (a macro, a name made by a derive): the module's own file is the best answer.
    return cur.file if found is False else found


# ---------------------------------------------------------------------------------------------------
# Edges and cycles.

CODE_PATH = re.compile(r"(?<![A-Za-z0-9_:$.])(" + IDENT + r"(?:\s*::\s*" + IDENT + r")+)(\s*!)?")


def edges_of(sf, count_reexports):
    """{target file: (line, text)} for every file this one depends on."""
    edges = {}

    def add(target, offset, text=None):
        if target is None or target is sf or target in edges:
            return
        n, line = sf.source_line(offset)
        edges[target] = (n, text or line)

    outside_uses = code_outside_uses(sf)
    for b in sf.uses:
        if b.public and not count_reexports and b.name != "*":
            if not re.search(r"(?<![A-Za-z0-9_.:])" + re.escape(b.name) + r"\b", outside_uses):
                continue  # only passed through
        if b.public and not count_reexports and b.name == "*":
            continue
        add(resolve(b.module, b.segs), b.offset, b.decl)

    for m in CODE_PATH.finditer(outside_uses):
        if m.group(2):  # a macro call: macro_rules paths resolve differently
            continue
        segs = [s.strip() for s in m.group(1).split("::")]
        module = sf.module_at(m.start())
        add(resolve(module, segs), m.start())
    return edges


def code_outside_uses(sf):
    """The file's code without its `use` and `mod x;` declarations."""
    chars = list(sf.text)
    spans = sf.use_spans + [m.span() for m in MOD_DECL.finditer(sf.text) if m.group(2) == ";"]
    for a, b in spans:
        for k in range(a, b):
            if chars[k] != "\n":
                chars[k] = " "
    return "".join(chars)


def strongly_connected(nodes, graph):
    """Tarjan's algorithm, iterative."""
    index, low, on_stack, stack, result = {}, {}, set(), [], []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(graph.get(start, ())))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w is node:
                        break
                result.append(component)
    return result


def module_cycles(files, graph):
    """The loops between sibling modules: [(parent path, [unit path, ...], {(a, b): example})], where
    an example is (file, line, text) of one file-level edge from under `a` to under `b`."""
    paths = {sf: sf.modules[0].path for sf in files}
    directory = {p[:k] for p in paths.values() for k in range(1, len(p))}  # modules with children
    by_parent = {}  # parent path -> {unit -> set of units}, {(a, b): example}
    for sf in sorted(files, key=lambda f: str(f.path)):
        for target, (n, line) in sorted(graph[sf].items(), key=lambda kv: kv[1][0]):
            a, b = paths[sf], paths[target]
            common = 0
            while common < min(len(a), len(b)) and a[common] == b[common]:
                common += 1
            if common == len(a) or common == len(b):
                continue  # a module and its own child or parent: the tree
            parent, unit_a, unit_b = a[:common], a[: common + 1], b[: common + 1]
            units, examples = by_parent.setdefault(parent, ({}, {}))
            units.setdefault(unit_a, set()).add(unit_b)
            units.setdefault(unit_b, set())
            examples.setdefault((unit_a, unit_b), (sf, n, line))
    found = []
    for parent in sorted(by_parent):
        units, examples = by_parent[parent]
        for component in strongly_connected(sorted(units), {u: sorted(v) for u, v in units.items()}):
            if len(component) > 1 and any(u in directory for u in component):
                found.append((parent, sorted(component), examples, directory))
    return found


def module_place(unit, files, directory):
    """Where a module lives: its directory (for a directory module) or its file."""
    own = next(sf for sf in files if sf.modules[0].path == unit)
    if unit in directory:
        return relative(own.path.parent if own.path.name == "mod.rs" else own.path.with_suffix("")) + "/"
    return relative(own.path)


def depth_of(files, graph, prefix):
    """The longest import chain (in files) among the files whose module path starts with `prefix`."""
    inside = [sf for sf in files if sf.modules[0].path[: len(prefix)] == prefix]
    members = set(inside)
    memo = {}

    def level(sf, stack=()):
        if sf in memo:
            return memo[sf]
        if sf in stack:  # a loop is reported on its own
            return 0
        below = [level(t, stack + (sf,)) for t in graph[sf] if t in members and t is not sf]
        memo[sf] = 1 + max(below, default=0)
        return memo[sf]

    top = max(inside, key=level, default=None)
    chain = []
    while top is not None:
        chain.append(top)
        below = [t for t in graph[top] if t in members and t is not top and memo.get(t, 0) == memo[top] - 1]
        top = min(below, key=lambda t: str(t.path), default=None)
    return len(chain), chain


def relative(path):
    return os.path.relpath(path, ROOT)


def crate_roots(src_dir):
    roots = [name for name in ("lib.rs", "main.rs") if (src_dir / name).exists()]
    bins = src_dir / "bin"
    if bins.is_dir():
        roots += [str(p.relative_to(src_dir)) for p in sorted(bins.glob("*.rs"))]
        roots += [str(p.relative_to(src_dir)) for p in sorted(bins.glob("*/main.rs"))]
    return roots


def main(argv):
    count_reexports = "--count-reexports" in argv
    crates_dir = ROOT / "crates"
    names = []
    depths = {}
    aparts = {}
    args = iter(argv)
    for a in args:
        # --apart CRATE/A:B and --depth CRATE/MODULE=N: a crate, a module path, and what follows.
        forms = {
            "--apart": (r"([\w-]+)/([\w/]+):([\w/]+)", "CRATE/A:B, e.g. screenpilot/client:ops", aparts),
            "--depth": (r"([\w-]+)/([\w/]+)=(\d+)", "CRATE/MODULE=N, e.g. screenpilot/ops=7", depths),
        }
        if a in forms:
            pattern, example, into = forms[a]
            given = next(args, "")
            m = re.fullmatch(pattern, given)
            if not m:
                print(f"{a} needs {example} (got {given!r})", file=sys.stderr)
                return 2
            rest = int(m.group(3)) if a == "--depth" else tuple(m.group(3).split("/"))
            into.setdefault(m.group(1), []).append((tuple(m.group(2).split("/")), rest))
            continue
        if a == "--crates-dir":
            given = next(args, None)
            if given is None:
                print("--crates-dir needs a directory", file=sys.stderr)
                return 2
            crates_dir = Path(given).resolve()
        elif not a.startswith("--"):
            names.append(a)
    available = sorted(p.parent.name for p in crates_dir.glob("*/src"))
    unknown = [n for n in names if n not in available]
    if unknown:
        print(f"unknown crate(s): {', '.join(unknown)} (have: {', '.join(available)})", file=sys.stderr)
        return 2
    total, modules, cycles = 0, 0, 0
    measured, too_deep = set(), 0
    for crate in names or available:
        src_dir = crates_dir / crate / "src"
        for root_name in crate_roots(src_dir):
            files = load_crate(src_dir, root_name)
            total += len(files)
            modules += len({p[:k] for p in (sf.modules[0].path for sf in files) for k in range(1, len(p))})
            graph = {sf: edges_of(sf, count_reexports) for sf in files}
            for upper, lower in aparts.get(crate, []):
                under = lambda sf, m: sf.modules[0].path[: len(m) + 1] == ("crate",) + m
                if not any(under(sf, upper) for sf in files):
                    continue
                measured.add((crate, upper))
                for sf in files:
                    if not under(sf, upper):
                        continue
                    for target, (n, line) in graph[sf].items():
                        if under(target, lower):
                            too_deep += 1
                            print(f"{relative(sf.path)}:{n}: {'/'.join(upper)} imports {'/'.join(lower)}: {line}")
            for module, limit in depths.get(crate, []):
                height, chain = depth_of(files, graph, ("crate",) + module)
                where = "/".join(module)
                if not chain:
                    continue
                measured.add((crate, module))
                print(f"{crate}/{where}: {height} levels of imports (limit {limit})")
                base = crates_dir / crate / "src" / Path(*module)
                print("  longest: " + " -> ".join(os.path.relpath(f.path, base) for f in chain))
                if height > limit:
                    too_deep += 1
                    print(f"  {crate}/{where} is {height} levels deep, more than {limit}: move what its files share below them")
            for component in strongly_connected(files, {k: list(v) for k, v in graph.items()}):
                if len(component) < 2:
                    continue
                cycles += 1
                members = sorted(component, key=lambda f: str(f.path))
                rel = {f: relative(f.path) for f in members}
                print(f"import cycle in {crate} ({len(members)} files):")
                for f in members:
                    print(f"  {rel[f]}")
                for f in members:
                    for target, (n, line) in sorted(graph[f].items(), key=lambda kv: kv[1][0]):
                        if target in component:
                            print(f"    {rel[f]} -> {rel[target]}")
                            print(f"        {f.path.name}:{n}: {line}")
                print()
            for parent, component, examples, directory in module_cycles(files, graph):
                cycles += 1
                name = lambda unit: "::".join(unit)
                print(f"module cycle in {crate}, inside {name(parent)} ({len(component)} modules):")
                for unit in component:
                    print(f"  {name(unit)}  ({module_place(unit, files, directory)})")
                for a in component:
                    for b in component:
                        if (a, b) in examples:
                            sf, n, line = examples[(a, b)]
                            print(f"    {name(a)} -> {name(b)}")
                            print(f"        {relative(sf.path)}:{n}: {line}")
                print()
    for crate, asked in list(depths.items()) + [(c, [(u, 0) for u, _ in a]) for c, a in aparts.items()]:
        for module, _ in asked:
            if (crate, module) not in measured:
                print(f"--depth: crate {crate} has no module {'/'.join(module)}", file=sys.stderr)
                return 2
    if too_deep and not cycles:
        return 1
    if cycles:
        print(
            f"{cycles} import cycle(s); move what the files or modules share into a module below them",
            file=sys.stderr,
        )
        return 1
    print(f"no import cycles ({total} files, {modules} modules with children)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
