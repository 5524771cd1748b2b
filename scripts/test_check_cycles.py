#!/usr/bin/env python3
"""Tests of scripts/check_cycles.py on the fake crates in scripts/cycle_fixtures (see its README):
run as CI runs it, `python3 scripts/test_check_cycles.py`."""

import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "cycle_fixtures"


def check(*crates):
    """Run the checker on fixture crates; its exit status and output (stdout then stderr)."""
    done = subprocess.run(
        [sys.executable, str(HERE / "check_cycles.py"), "--crates-dir", str(FIXTURES), *crates],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr


class Depth(unittest.TestCase):
    def test_the_longest_chain_is_measured_and_held_to_its_limit(self):
        # layers: ops/mod.rs -> ops/a.rs -> ops/b.rs, three files deep.
        status, out = check("--depth", "layers/ops=3", "layers")
        self.assertEqual(status, 0, out)
        self.assertIn("layers/ops: 3 levels of imports (limit 3)", out)
        status, out = check("--depth", "layers/ops=2", "layers")
        self.assertEqual(status, 1, out)
        self.assertIn("layers/ops is 3 levels deep, more than 2", out)

    def test_a_module_that_is_not_there_or_a_bad_limit_is_refused(self):
        status, out = check("--depth", "reexport_fixed/nope=3", "reexport_fixed")
        self.assertEqual(status, 2, out)
        self.assertIn("--depth: crate reexport_fixed has no module nope", out)
        status, out = check("--depth", "ops", "reexport_fixed")
        self.assertEqual(status, 2, out)
        self.assertIn("--depth needs CRATE/MODULE=N", out)


class Apart(unittest.TestCase):
    def test_a_module_that_imports_what_it_must_not_fails(self):
        # layers: ops/a.rs names ops/b.rs.
        status, out = check("--apart", "layers/ops/a:ops/b", "layers")
        self.assertEqual(status, 1, out)
        self.assertIn("ops/a imports ops/b", out)
        status, out = check("--apart", "layers/ops/b:ops/a", "layers")
        self.assertEqual(status, 0, out)


class ModuleCycles(unittest.TestCase):
    def test_two_modules_importing_each_other_through_a_reexport_fail(self):
        status, out = check("reexport_loop")
        self.assertEqual(status, 1, out)
        self.assertIn("module cycle in reexport_loop, inside crate (2 modules):", out)
        self.assertIn("crate::ops  (scripts/cycle_fixtures/reexport_loop/src/ops/)", out)
        self.assertIn("crate::watch  (scripts/cycle_fixtures/reexport_loop/src/watch/)", out)
        # One example edge each way, with the line that makes it.
        self.assertIn(
            "crate::ops -> crate::watch\n"
            "        scripts/cycle_fixtures/reexport_loop/src/ops/common.rs:3: "
            "pub watch: crate::watch::WatchServer,",
            out,
        )
        self.assertIn(
            "crate::watch -> crate::ops\n"
            "        scripts/cycle_fixtures/reexport_loop/src/watch/mod.rs:5: use crate::ops::Context;",
            out,
        )

    def test_no_two_files_of_that_tree_import_each_other(self):
        # What the module check adds: the file check alone passes this tree.
        _, out = check("reexport_loop")
        self.assertNotIn("import cycle in", out)

    def test_the_tree_with_the_shared_type_below_both_passes(self):
        status, out = check("reexport_fixed")
        self.assertEqual(status, 0, out)
        self.assertIn("no import cycles (6 files, 3 modules with children)", out)

    def test_an_unknown_crate_is_refused(self):
        status, out = check("no_such_crate")
        self.assertEqual(status, 2, out)
        self.assertIn("unknown crate(s): no_such_crate (have: layers, reexport_fixed, reexport_loop)", out)


if __name__ == "__main__":
    unittest.main()
