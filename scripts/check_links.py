#!/usr/bin/env python3
"""Every relative link of the README, docs/ and BENCHMARKS.md leads somewhere: the file exists, and a
`#anchor` names a heading of that page (GitHub's slugs). Code blocks are skipped. Exits 1 naming each
broken link as FILE:LINE.

Usage: python3 scripts/check_links.py [FILE.md ...]   (default: README.md, docs/*.md, BENCHMARKS.md)
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(title):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def prose(path):
    """(line number, line) outside fenced code blocks."""
    fence = False
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
        elif not fence:
            yield n, line


def anchors(path):
    return {slug(m.group(1)) for _, line in prose(path) if (m := re.match(r"^#+ (.*)$", line))}


def main(files):
    broken = []
    for md in files:
        for n, line in prose(md):
            for target in LINK.findall(line):
                if re.match(r"^[a-z]+:", target):
                    continue  # http:, https:, mailto:
                file, _, anchor = target.partition("#")
                dest = (md.parent / file).resolve() if file else md
                where = f"{md.relative_to(ROOT)}:{n}: {target}"
                if not dest.exists():
                    broken.append(f"{where}: no such file")
                elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                    broken.append(f"{where}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    for b in broken:
        print(b, file=sys.stderr)
    print(f"{len(files)} pages, {'all links lead somewhere' if not broken else f'{len(broken)} broken links'}")
    return 1 if broken else 0


if __name__ == "__main__":
    args = [Path(a).resolve() for a in sys.argv[1:]]
    sys.exit(main(args or [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "BENCHMARKS.md"]))
