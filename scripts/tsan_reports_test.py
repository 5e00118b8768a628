#!/usr/bin/env python3
"""Tests scripts/tsan_reports.py on reports a TSan cluster run gave
(test/tsan/reports.log): a real race of shoal's (two deploy threads writing
one vector<bool>'s word) and three of the uninstrumented libraries (gRPC's
buffer reader, a shared_ptr of gRPC's channel arguments, a report whose
previous stack TSan could not restore), and one inside a pthreadpool loop
(test/tsan/pool.log: a pool worker reads the loop's arguments the calling
thread wrote before the loop; the pool's fork orders them, unseen)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import tsan_reports  # noqa: E402

LOG = os.path.join(os.path.dirname(HERE), "test", "tsan", "reports.log")
POOL = os.path.join(os.path.dirname(HERE), "test", "tsan", "pool.log")


class TsanReports(unittest.TestCase):
    def setUp(self):
        with open(LOG) as f:
            self.text = f.read()

    def owners(self, text):
        return [[tsan_reports.access_owner(s) for s in stacks]
                for _, stacks in tsan_reports.reports(text)]

    def test_each_access_has_its_owner(self):
        self.assertEqual(self.owners(self.text),
                         [["shoal", "shoal"], ["library", "library"],
                          ["library", "library"], ["library", None]])

    def test_a_shoal_race_fails_the_run_and_is_shown(self):
        r = subprocess.run([sys.executable, os.path.join(HERE,
                                                         "tsan_reports.py"),
                            LOG], capture_output=True, text=True)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertIn("3 with an access inside the uninstrumented "
                      "libraries, 0 in pthreadpool's loops, 1 in shoal",
                      r.stdout)
        self.assertIn("coordinator.cc", r.stdout)

    def test_library_reports_alone_pass(self):
        reports = self.text.split("==================\n")
        kept = [r for r in reports if "coordinator.cc" not in r]
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "tsan.123"), "w") as f:
                f.write("==================\n".join(kept))
            r = subprocess.run([sys.executable,
                                os.path.join(HERE, "tsan_reports.py"), d],
                               capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("3 ThreadSanitizer reports", r.stdout)

    def test_a_pthreadpool_loop_is_counted_not_failed(self):
        with open(POOL) as f:
            text = f.read()
        # Both accesses are shoal's code; one runs on a pool worker.
        (_, stacks), = list(tsan_reports.reports(text))
        self.assertEqual([tsan_reports.access_owner(s) for s in stacks],
                         ["shoal", "shoal"])
        self.assertEqual([tsan_reports.on_pool_worker(s) for s in stacks],
                         [True, False])
        r = subprocess.run([sys.executable,
                            os.path.join(HERE, "tsan_reports.py"), POOL],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.assertIn("1 in pthreadpool's loops, 0 in shoal", r.stdout)


if __name__ == "__main__":
    unittest.main()
