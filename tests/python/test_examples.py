"""scripts/examples run as a user copies them, on the tiny wafer so they take seconds."""
import os
import pathlib
import subprocess
import tempfile
import unittest

EXAMPLES = pathlib.Path(os.environ["WAFERSIM_SOURCE_DIR"]) / "scripts/examples"


def run_example(name, *args):
    completed = subprocess.run(["/usr/bin/python3", str(EXAMPLES / name), *args], capture_output=True, text=True,
                               cwd="/")
    if completed.returncode != 0:
        raise AssertionError(f"{name}: exit {completed.returncode}: {completed.stderr}")
    return completed.stdout.splitlines()


class Examples(unittest.TestCase):
    def test_hop_latency_whatif(self):
        lines = run_example("hop_latency_whatif.py", "--hardware", "tiny", "--model", "tiny-dense", "--hops", "1", "8")
        self.assertEqual(len(lines), 3)
        rates = [float(line.split()[1]) for line in lines[1:]]
        self.assertGreater(rates[0], rates[1])  # slower hops, fewer tokens per second

    def test_sram_vs_context(self):
        lines = run_example("sram_vs_context.py", "--hardware", "tiny", "--model", "tiny-dense",
                            "--sram-kib", "8", "48", "96")
        self.assertIn("does not fit", lines[1])
        contexts = [int(line.split()[2]) for line in lines[2:]]
        self.assertLess(contexts[0], contexts[1])

    def test_fewest_wafers(self):
        lines = run_example("fewest_wafers.py", "--hardware", "tiny", "--model", "tiny-dense", "--prompt-tokens", "16",
                            "--max-wafers", "4")
        self.assertTrue(lines[-2].endswith("tokens/s"))
        self.assertIn("fits", lines[-1])

    def test_notebook_runs_top_to_bottom_into_a_frame_and_a_plot(self):
        with tempfile.TemporaryDirectory() as folder:
            plot = pathlib.Path(folder) / "sweep.png"
            lines = run_example("notebook.py", "--hardware", "tiny", "--model", "tiny-dense", "--batches", "1", "4",
                                "--plot", str(plot))
            self.assertTrue(plot.stat().st_size > 1000)
            self.assertEqual(lines[-1], f"wrote {plot}")
            rows = [line.split() for line in lines[2:4]]  # the frame: batch, tokens/s, latency
            self.assertEqual([row[0] for row in rows], ["1", "4"])
            self.assertLess(float(rows[0][1]), float(rows[1][1]))  # a larger batch, more tokens per second


if __name__ == "__main__":
    unittest.main()
