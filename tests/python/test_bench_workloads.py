"""scripts/bench_workloads.py: one sitting, a table per workload and binary,
and a refusal of what it cannot measure."""
import os
import subprocess
import tempfile
import unittest

SOURCE = os.environ["WAFERSIM_SOURCE_DIR"]
SCRIPT = os.path.join(SOURCE, "scripts", "bench_workloads.py")
WAFERSIM = os.environ["WAFERSIM"]


def bench(*arguments):
    return subprocess.run(["/usr/bin/python3", SCRIPT, *arguments], capture_output=True, text=True, timeout=600)


class BenchWorkloads(unittest.TestCase):
    def test_table_has_a_row_per_binary_with_the_base_ratio(self):
        with tempfile.TemporaryDirectory() as folder:
            table = os.path.join(folder, "bench.md")
            done = bench("--runs", "1", "--only", "serve-10k", "--write", table, WAFERSIM, WAFERSIM)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(table) as f:
                lines = [line for line in f.read().splitlines() if line.startswith("| serve-10k |")]
            self.assertEqual(len(lines), 2)
            cells = [cell.strip() for cell in lines[0].strip("|").split("|")]
            self.assertEqual(cells[1], WAFERSIM)
            self.assertEqual(cells[-1], "1.00")  # the base against itself
            self.assertTrue(cells[3].endswith(" s"), cells[3])
            self.assertGreater(float(cells[5]), 0)  # peak memory in MiB

    def test_unknown_workload_is_refused(self):
        done = bench("--only", "no-such-workload", WAFERSIM)
        self.assertEqual(done.returncode, 2)
        self.assertIn("unknown workload 'no-such-workload'", done.stderr)

    def test_a_failing_binary_stops_the_sitting(self):
        done = bench("--runs", "1", "--only", "serve-10k", "/bin/false")
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("serve-10k: exit 1", done.stderr)


if __name__ == "__main__":
    unittest.main()
