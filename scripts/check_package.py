#!/usr/bin/env python3
"""Every crate's .crate holds every file its build reads, checked against what the compiler read.

`cargo package` builds each packed crate again to find a file the .crate left out (an asset named by
include_str!, a module, the build script): on a 2-core machine that is a second debug build of every
dependency, about 300 s of CI. The compiler already says which files it read: each build writes a
dep-info file (`target/*/deps/NAME-HASH.d`) listing them. So after a build of the workspace's libraries
and binaries (CI's release build), this checks, for every file such a build read:

- inside a crate's folder (outside its tests/, benches/ and examples/): it is in that crate's package
  (`cargo package --list`);
- inside the repository but outside every crate: an error, as no .crate can hold it.

Usage: python3 scripts/check_package.py [--root WORKSPACE]   (default: this repository; reads the
debug and release dep-info files of WORKSPACE/target). Exits 1 naming each file left out, 2 when no
build of a crate's library or binary is there to read. Tested by scripts/test_check_package.py.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if sys.argv[1:2] == ["--root"]:
    ROOT = Path(sys.argv[2]).resolve()
TEST_ONLY = ("tests", "benches", "examples")


def members():
    done = subprocess.run(["cargo", "metadata", "--no-deps", "--format-version", "1"],
                          cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"cargo metadata failed in {ROOT}:\n{done.stderr}")
    meta = json.loads(done.stdout)
    ids = set(meta["workspace_members"])
    return [p for p in meta["packages"] if p["id"] in ids]


def packaged(name):
    out = subprocess.run(["cargo", "package", "--list", "--allow-dirty", "--locked", "-p", name],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return set(out.split())


def dep_info_paths(path):
    """The files one dep-info file says its build read (Makefile syntax: `target: dep dep ...`,
    spaces in names escaped)."""
    read = set()
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("#") or ": " not in line:
            continue  # `# env-dep:` notes, and the `file:` lines that repeat each dependency for make
        deps = line.split(": ", 1)[1].replace("\\ ", "\0").split()
        read.update(d.replace("\0", " ") for d in deps)
    return read


def main():
    target = ROOT / "target"
    crates = members()
    stems = {"build_script_build"}
    for crate in crates:
        for t in crate["targets"]:
            if set(t["kind"]) & {"lib", "rlib", "proc-macro", "bin"}:
                stems.add(t["name"].replace("-", "_"))
    infos = [p for profile in ("debug", "release")
             for p in [*(target / profile / "deps").glob("*.d"),
                       *(target / profile / "build").glob("*/build_script_build-*.d")]
             if p.stem.rsplit("-", 1)[0] in stems]
    # Clippy's dep-info names the workspace manifest it reads for its lints: not a build's.
    infos = [p for p in infos if "CLIPPY_ARGS" not in p.read_text(errors="replace")]
    dirs = {Path(c["manifest_path"]).parent: c["name"] for c in crates}
    read_by = {name: set() for name in dirs.values()}
    outside = set()
    for info in infos:
        for file in dep_info_paths(info):
            path = Path(file) if os.path.isabs(file) else ROOT / file
            path = Path(os.path.normpath(path))
            if ROOT not in path.parents or (ROOT / "target") in path.parents:
                continue  # the registry's crates, the toolchain's, or generated in target/
            owner = next((d for d in dirs if d in path.parents), None)
            if owner is None:
                outside.add(path.relative_to(ROOT))
                continue
            relative = path.relative_to(owner)
            if relative.parts[0] not in TEST_ONLY:
                read_by[dirs[owner]].add(relative.as_posix())
    missing_builds = [name for name, files in read_by.items() if not files]
    if missing_builds:
        print(f"no dep-info of a build of {', '.join(missing_builds)} under {target}: build first "
              "(cargo build --release)", file=sys.stderr)
        return 2
    failures = [f"{path}: read by a build, but outside every crate's folder, so in no .crate"
                for path in sorted(outside)]
    for name, files in sorted(read_by.items()):
        left_out = sorted(files - packaged(name))
        failures += [f"{name}: {f} is read by its build but left out of its .crate" for f in left_out]
        print(f"{name}: the {len(files)} files its build reads are all in its .crate"
              if not left_out else f"{name}: {len(left_out)} of {len(files)} files left out")
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
