"""scripts/plot_sweep.py after a sweep: the files its help names, units on the
axes, from any folder, y from zero, the set-up in the title, short names, the
breakdown per point; and the sweep leaves no sweep.lock behind."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

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
            self.assertEqual(written, [str(out / "plots" / "tokens_per_second_vs_batch_by_link_bytes_per_cycle.png")])
            self.assertTrue(pathlib.Path(written[0]).is_file())

            breakdown = subprocess.run([str(SCRIPT), str(out), "--breakdown"], capture_output=True, text=True,
                                       check=True, env=dict(os.environ, WAFERSIM=BINARY)).stdout.split()
            self.assertEqual(breakdown, [str(out / "plots" / "breakdown.png")])
            self.assertTrue(pathlib.Path(breakdown[0]).read_bytes().startswith(b"\x89PNG"))

    def test_y_starts_at_zero_and_the_title_names_the_set_up(self):
        with tempfile.TemporaryDirectory() as folder:
            out = pathlib.Path(folder) / "out"
            subprocess.run([BINARY, "sweep", str(SOURCE / "tests/data/sweeps/grid.yaml"), "--out", str(out),
                            "--jobs", "2"], check=True, capture_output=True)
            rows, axes, metrics, header = plot_sweep.read_sweep(str(out))
            setup = plot_sweep.setup_title(plot_sweep.read_records(str(out), rows), axes)
            self.assertEqual(setup, "model tiny-dense, hardware tiny, batch by workload.batch")
            drawn = []
            with unittest.mock.patch.object(plot_sweep.plt, "close", drawn.append):
                plot_sweep.plot(rows, axes, "workload.batch", "metrics.tokens_per_second",
                                "hardware.fabric.link_bytes_per_cycle", str(out / "plot.png"), {}, header, setup)
            axis = next(figure for figure in drawn if hasattr(figure, "axes")).axes[0]
            # Every tokens/s of this sweep is above 100,000: an autoscaled axis would start there.
            self.assertEqual(axis.get_ylim()[0], 0.0)
            self.assertIn("model tiny-dense, hardware tiny", axis.get_title())
            self.assertEqual([text.get_text() for text in axis.get_legend().get_texts()],
                             ["link_bytes_per_cycle=2", "link_bytes_per_cycle=8"])

    def test_short_names_are_the_shortest_unshared_ends(self):
        columns = ["workload.batch", "metrics.tokens_per_second", "metrics.prefill.tokens_per_second",
                   "metrics.per_token_latency_us.mean"]
        self.assertEqual(plot_sweep.short_name("workload.batch", columns), "batch")
        self.assertEqual(plot_sweep.short_name("metrics.tokens_per_second", columns), "metrics.tokens_per_second")
        self.assertEqual(plot_sweep.short_name("metrics.prefill.tokens_per_second", columns),
                         "prefill.tokens_per_second")
        self.assertEqual(plot_sweep.short_name("metrics.per_token_latency_us.mean", columns), "per_token_latency_us.mean")

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
            self.assertEqual(written, [str(out / "plots" / "metrics.tokens_per_second_vs_tile_failure_rate.png")])

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
