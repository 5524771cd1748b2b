#!/usr/bin/env python3
"""Build a binary-only Python wheel of screenpilot from a built binary (no Rust, no maturin needed).

Usage: build_wheel.py BINARY VERSION PLATFORM_TAG OUTDIR

The wheel has the layout maturin gives with `bindings = "bin"`: the executable in
`screenpilot-VERSION.data/scripts/`, which pip, uv and uvx install onto PATH, plus a small `screenpilot`
module so `python -m screenpilot` runs it too. The tag is py3-none-PLATFORM_TAG: any Python 3, one
platform (e.g. manylinux_2_34_x86_64, from the newest glibc symbol the binary needs).
"""

from __future__ import annotations

import base64
import hashlib
import sys
import zipfile
from pathlib import Path

NAME = "screenpilot"
SUMMARY = (
    "Drive terminal programs, Textual apps and X11 desktops, and see what a person would see: "
    "a CLI, an MCP server and a library over one daemon."
)

MAIN = '''"""`python -m screenpilot`: run the screenpilot executable this wheel installed."""

import os
import sys
import sysconfig


def find_binary() -> str:
    name = "screenpilot"
    candidates = [os.path.join(sysconfig.get_path("scripts"), name)]
    user = sysconfig.get_path("scripts", f"{os.name}_user") if os.name == "posix" else None
    if user:
        candidates.append(os.path.join(user, name))
    candidates.append(os.path.join(os.path.dirname(sys.executable), name))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise FileNotFoundError(f"the screenpilot executable is not in any of {candidates}")


def main() -> None:
    binary = find_binary()
    os.execv(binary, [binary, *sys.argv[1:]])


if __name__ == "__main__":
    main()
'''


def record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def main() -> None:
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    binary, version, platform_tag, outdir = Path(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
    readme = Path(__file__).resolve().parent / "README.md"
    dist_info = f"{NAME}-{version}.dist-info"
    data_dir = f"{NAME}-{version}.data"
    tag = f"py3-none-{platform_tag}"
    metadata = "\n".join(
        [
            "Metadata-Version: 2.1",
            f"Name: {NAME}",
            f"Version: {version}",
            f"Summary: {SUMMARY}",
            "License: MIT OR Apache-2.0",
            "Requires-Python: >=3.8",
            "Classifier: Operating System :: POSIX :: Linux",
            "Classifier: Programming Language :: Rust",
            "Description-Content-Type: text/markdown",
            "",
            readme.read_text(),
        ]
    )
    wheel = f"Wheel-Version: 1.0\nGenerator: screenpilot build_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    files: list[tuple[str, bytes, int]] = [
        (f"{NAME}/__init__.py", f'__version__ = "{version}"\n'.encode(), 0o644),
        (f"{NAME}/__main__.py", MAIN.encode(), 0o644),
        (f"{data_dir}/scripts/{NAME}", binary.read_bytes(), 0o755),
        (f"{dist_info}/METADATA", metadata.encode(), 0o644),
        (f"{dist_info}/WHEEL", wheel.encode(), 0o644),
    ]
    record = [record_line(path, data) for path, data, _ in files]
    record.append(f"{dist_info}/RECORD,,")
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode(), 0o644))
    outdir.mkdir(parents=True, exist_ok=True)
    out = outdir / f"{NAME}-{version}-{tag}.whl"
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as zf:
        for path, data, mode in files:
            info = zipfile.ZipInfo(path, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    print(out)


if __name__ == "__main__":
    main()
