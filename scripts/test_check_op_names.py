#!/usr/bin/env python3
"""Tests of scripts/check_op_names.py on scripts/op_name_fixtures (an ops/ folder naming `spawn`, and
a file outside it that spells the name in each way the check tells apart)."""

import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def check(*args):
    done = subprocess.run(
        [sys.executable, str(HERE / "check_op_names.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.returncode, done.stdout + done.stderr


class OpNames(unittest.TestCase):
    def test_a_name_spelled_outside_ops_fails_and_keys_comments_tests_and_marks_do_not(self):
        status, out = check("--src", str(HERE / "op_name_fixtures" / "src"))
        self.assertEqual(status, 1, out)
        # Only the call: the JSON key, the map key, the comment, the marked line and the test pass.
        self.assertIn('cli.rs:3: client.call("spawn", json!({"spawn": 1}));', out)
        self.assertIn("1 operation name(s) written outside ops/", out)
        self.assertNotIn("cli.rs:4", out)
        self.assertNotIn("cli.rs:5", out)
        self.assertNotIn("cli.rs:11", out)

    def test_the_crate_itself_passes(self):
        status, out = check()
        self.assertEqual(status, 0, out)
        self.assertIn("no operation's name outside ops/", out)

    def test_a_tree_without_ops_is_refused(self):
        status, out = check("--src", str(HERE))
        self.assertEqual(status, 2, out)
        self.assertIn("has no ops/ folder", out)


if __name__ == "__main__":
    unittest.main()
