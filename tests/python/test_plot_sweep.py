"""scripts/plot_sweep.py after a sweep: the files its help names, units on the
axes, from any folder; and the sweep leaves no sweep.lock behind."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

SOURCE = pathlib.Path(os.environ["WAFERSIM_SOURCE_DIR"])
BINARY = os.environ["WAFERSIM"]
SCRIPT = SOURCE / "scripts" / "plot_sweep.py"
sys.path.insert(0, str(SCRIPT.parent))
import plot_sweep  # noqa: E402


class PlotSweep(unittest.TestCase):
    def test_a_sweep_and_its_plot(self):
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder) / "out"
            subprocess.run([BINARY, "sweep", str(SOURCE / "tests/data/sweeps/grid.yaml"), "--out", str(out),
                            "--jobs", "2"], check=True, capture_output=True)
            self.assertFalse((out / "sweep.lock").exists())

            help_text = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, check=True).stdout
            self.assertIn("DIR/plots/METRIC_vs_X_by_HUE.png", help_text)
            written = subprocess.run([str(SCRIPT), str(out)], capture_output=True, text=True, check=True,
                                     cwd="/", env=dict(os.environ, WAFERSIM=BINARY)).stdout.split()
            self.assertEqual(written, [str(out / "plots" / "metrics.tokens_per_second_vs_workload.batch_by_"
                                                            "hardware.fabric.link_bytes_per_cycle.png")])
            self.assertTrue(pathlib.Path(written[0]).is_file())

    def test_a_repeat_axis_is_averaged_not_split(self):
        with tempfile.TemporaryDirectory() as folder:
            sweep = pathlib.Path(folder) / "defects.yaml"
            sweep.write_text(
                "base:\n"
                "  hardware: {preset: tiny, spares: {rows: 3}}\n"
                "  model: tiny-dense\n"
                "  workload: {prompt_tokens: 16, decode_tokens: 4}\n"
                "axes:\n"
                "  hardware.defects.tile_failure_rate: [0.002, 0.005]\n"
                "  hardware.defects.seed: [1, 2]\n")
            out = pathlib.Path(folder) / "out"
            subprocess.run([BINARY, "sweep", str(sweep), "--out", str(out), "--jobs", "2"], check=True,
                           capture_output=True)
            written = subprocess.run([str(SCRIPT), str(out), "--x", "hardware.defects.tile_failure_rate",
                                      "--repeat", "hardware.defects.seed"], capture_output=True, text=True,
                                     check=True, env=dict(os.environ, WAFERSIM=BINARY)).stdout.split()
            self.assertEqual(written, [str(out / "plots" / "metrics.tokens_per_second_vs_"
                                                            "hardware.defects.tile_failure_rate.png")])

    def test_axis_labels_carry_the_declared_units(self):
        os.environ["WAFERSIM"] = BINARY
        units = plot_sweep.declared_units()
        self.assertEqual(plot_sweep.label_with_unit("hardware.fabric.link_bytes_per_cycle", units),
                         "hardware.fabric.link_bytes_per_cycle (bytes/cycle)")
        self.assertEqual(plot_sweep.label_with_unit("metrics.tokens_per_second", units),
                         "metrics.tokens_per_second (tokens/s)")
        self.assertEqual(plot_sweep.label_with_unit("workload.batch", units), "workload.batch (sequences)")
        self.assertEqual(plot_sweep.label_with_unit("repeat.seed", units), "repeat.seed")


if __name__ == "__main__":
    unittest.main()
