#!/usr/bin/python3
"""scripts/heatmaps.py on a small grid: it draws one PNG per array and wafer of
`run --heatmaps` and `map --heatmaps` (a repaired wafer's physical grid too),
and refuses a folder without arrays.
Exit 77 (ctest: skipped) with a message when matplotlib or numpy is missing."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ.get("WAFERSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WAFERSIM = os.environ.get("WAFERSIM", os.path.join(SOURCE, "build", "sim", "wafersim"))
SCRIPT = os.path.join(SOURCE, "scripts", "heatmaps.py")
TINY_DENSE = os.path.join(SOURCE, "tests", "data", "experiments", "tiny-dense.yaml")
TINY_MOE = os.path.join(SOURCE, "tests", "data", "experiments", "tiny-moe.yaml")
TINY_MAP = os.path.join(SOURCE, "tests", "data", "defects", "tiny-map.yaml")


class HeatmapsScript(unittest.TestCase):
    def draw(self, command, config, extra):
        with tempfile.TemporaryDirectory() as scratch:
            arrays = os.path.join(scratch, "maps")
            subprocess.run([WAFERSIM, command, config, "--quiet", "--heatmaps", arrays] + extra, check=True)
            pictures = os.path.join(scratch, "png")
            done = subprocess.run(["/usr/bin/python3", SCRIPT, arrays, "--out", pictures, "--width", "3", "--dpi", "50"],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(os.path.join(arrays, "heatmaps.json")) as handle:
                index = json.load(handle)
            arrays = index["arrays"] + index.get("physical_grid", {}).get("arrays", [])
            expected = sorted(os.path.splitext(name)[0] + ".png" for array in arrays for name in array["files"])
            self.assertEqual(sorted(os.listdir(pictures)), expected)
            self.assertEqual(sorted(os.path.basename(line) for line in done.stdout.split()), expected)
            for name in expected:
                with open(os.path.join(pictures, name), "rb") as picture:
                    data = picture.read()
                self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"), name)
                self.assertGreater(len(data), 1000, name)
            return index

    def test_run_arrays_one_picture_per_quantity(self):
        index = self.draw("run", TINY_DENSE, ["--set", "sim.contention=true"])
        self.assertEqual(len(index["arrays"]), 11)

    def test_map_arrays_of_every_wafer(self):
        index = self.draw("map", TINY_MOE, [])
        self.assertEqual(index["wafers"], 2)
        self.assertEqual(len(index["arrays"]), 6)

    def test_a_repaired_wafer_draws_its_physical_grid(self):
        index = self.draw("map", TINY_DENSE, ["--set", "hardware.spares.rows=2", "--set", "hardware.spares.columns=2",
                                              "--set", "hardware.defects.map=" + TINY_MAP])
        self.assertEqual(len(index["arrays"]), 6)
        self.assertEqual(index["physical_grid"]["arrays"][0]["files"], ["wafer0_physical_tile.npy"])

    def test_a_folder_without_arrays_is_refused(self):
        with tempfile.TemporaryDirectory() as scratch:
            done = subprocess.run(["/usr/bin/python3", SCRIPT, scratch], capture_output=True, text=True)
            self.assertNotEqual(done.returncode, 0)
            self.assertIn("heatmaps.json", done.stderr)


if __name__ == "__main__":
    try:
        import matplotlib  # noqa: F401
        import numpy  # noqa: F401
    except ImportError as missing:
        print(f"skipped: scripts/heatmaps.py needs {missing.name} (Debian: python3-{missing.name})")
        sys.exit(77)
    unittest.main(verbosity=2)
