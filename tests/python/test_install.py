"""cmake --install puts the program, the Python package, the scripts and the
ready experiments under a prefix, and each works from any folder: nothing refers back to the source or
build tree (presets and the model zoo are compiled in)."""
import json
import os
import pathlib
import subprocess
import tempfile
import unittest

BUILD = os.environ["WAFERSIM_BUILD_DIR"]
CMAKE = os.environ["CMAKE_COMMAND"]
TINY = "hardware: tiny\nmodel: tiny-dense\nworkload: {prompt_tokens: 16, decode_tokens: 2}\n"


class Install(unittest.TestCase):
    def test_installed_tree_works_from_any_folder(self):
        with tempfile.TemporaryDirectory() as prefix, tempfile.TemporaryDirectory() as elsewhere:
            subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], check=True, capture_output=True)
            binary = pathlib.Path(prefix) / "bin" / "wafersim"
            package = pathlib.Path(prefix) / "lib" / "python3" / "dist-packages"
            self.assertTrue((package / "wafersim" / "__init__.py").is_file())
            environment = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

            cli = subprocess.run([str(binary), "analytic", "-", "--quiet", "--json", "-"], input=TINY, text=True,
                                 capture_output=True, cwd=elsewhere, env=environment)
            self.assertEqual(cli.returncode, 0, cli.stderr)
            self.assertEqual(json.loads(cli.stdout)["experiment"]["model"], "tiny-dense")

            script = ("import json, wafersim; r = wafersim.analytic(wafersim.loads(%r)); "
                      "print(json.dumps(r['metrics']['tokens_per_second']))" % TINY)
            module = subprocess.run(["/usr/bin/python3", "-c", script], text=True, capture_output=True,
                                    cwd=elsewhere, env=dict(environment, PYTHONPATH=str(package)))
            self.assertEqual(module.returncode, 0, module.stderr)
            self.assertEqual(json.loads(module.stdout), json.loads(cli.stdout)["metrics"]["tokens_per_second"])

            example = pathlib.Path(prefix) / "share" / "wafersim" / "examples" / "hop_latency_whatif.py"
            ran = subprocess.run([str(example), "--hardware", "tiny", "--model", "tiny-dense", "--hops", "1"],
                                 text=True, capture_output=True, cwd=elsewhere, env=environment)
            self.assertEqual(ran.returncode, 0, ran.stderr)
            self.assertIn("throughput (tokens/s)", ran.stdout)
            self.assertTrue((pathlib.Path(prefix) / "share" / "wafersim" / "scripts" / "plot_sweep.py").is_file())

            # The shipped experiments, sweeps included (a sweep's base is a sibling file).
            experiments = pathlib.Path(prefix) / "share" / "wafersim" / "experiments"
            for name in ["quickstart.yaml", "sweep_context_latency.yaml", "serving/overload.yaml"]:
                checked = subprocess.run([str(binary), "validate", str(experiments / name)], text=True,
                                         capture_output=True, cwd=elsewhere, env=environment)
                self.assertEqual(checked.returncode, 0, name + ": " + checked.stderr)


if __name__ == "__main__":
    unittest.main()
