#!/usr/bin/env python3
"""Tests of scripts/check_package.py on a workspace made and built here (two small crates, no
dependencies): run as CI runs it, `python3 scripts/test_check_package.py`."""

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent

MANIFEST = """[package]
name = "{name}"
version = "0.1.0"
edition = "2021"
license = "MIT"
description = "a crate of the check's test"
{extra}
"""


class PackageContents(unittest.TestCase):
    def setUp(self):
        self.root = Path(tempfile.mkdtemp(prefix="check-package-test-"))
        (self.root / "Cargo.toml").write_text('[workspace]\nresolver = "2"\nmembers = ["kept", "leaky"]\n')
        for name in ("kept", "leaky"):
            (self.root / name / "src").mkdir(parents=True)
        (self.root / "kept" / "Cargo.toml").write_text(MANIFEST.format(name="kept", extra=""))
        (self.root / "kept" / "src" / "lib.rs").write_text('pub const A: &str = include_str!("a.txt");\n')
        (self.root / "kept" / "src" / "a.txt").write_text("a\n")
        (self.root / "shared.txt").write_text("outside every crate\n")
        (self.root / "leaky" / "data").mkdir()
        (self.root / "leaky" / "data" / "b.txt").write_text("b\n")

    def tearDown(self):
        shutil.rmtree(self.root, ignore_errors=True)

    def leaky(self, extra, lib):
        (self.root / "leaky" / "Cargo.toml").write_text(MANIFEST.format(name="leaky", extra=extra))
        (self.root / "leaky" / "src" / "lib.rs").write_text(lib)
        subprocess.run(["cargo", "build", "--offline", "--quiet"], cwd=self.root, check=True, timeout=300)
        done = subprocess.run([sys.executable, str(HERE / "check_package.py"), "--root", str(self.root)],
                              capture_output=True, text=True, timeout=300)
        return done.returncode, done.stdout + done.stderr

    def test_files_left_out_or_outside_every_crate_fail_and_name_the_file(self):
        status, out = self.leaky('exclude = ["data/b.txt"]',
                                 'pub const B: &str = include_str!("../data/b.txt");\n'
                                 'pub const S: &str = include_str!("../../shared.txt");\n')
        self.assertEqual(status, 1, out)
        self.assertIn("leaky: data/b.txt is read by its build but left out of its .crate", out)
        self.assertIn("shared.txt: read by a build, but outside every crate's folder", out)
        self.assertIn("kept: the 2 files its build reads are all in its .crate", out)

    def test_a_crate_that_holds_what_it_reads_passes(self):
        status, out = self.leaky("", 'pub const B: &str = include_str!("../data/b.txt");\n')
        self.assertEqual(status, 0, out)
        self.assertIn("leaky: the 2 files its build reads are all in its .crate", out)

    def test_no_build_to_read_is_said(self):
        (self.root / "leaky" / "Cargo.toml").write_text(MANIFEST.format(name="leaky", extra=""))
        (self.root / "leaky" / "src" / "lib.rs").write_text("")
        done = subprocess.run([sys.executable, str(HERE / "check_package.py"), "--root", str(self.root)],
                              capture_output=True, text=True, timeout=300)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertIn("build first", done.stderr)


if __name__ == "__main__":
    unittest.main()
