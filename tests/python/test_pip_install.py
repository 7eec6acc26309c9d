"""pip install . (offline, --no-build-isolation, Debian's setuptools): the
package and the program for the running interpreter, from the CMake build
(WAFERSIM_BUILD_DIR: this build tree, so nothing is compiled again)."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.environ["WAFERSIM_SOURCE_DIR"]
BINARY = os.environ["WAFERSIM"]


class PipInstall(unittest.TestCase):
    def test_installs_the_module_and_the_program(self):
        with tempfile.TemporaryDirectory() as target:
            install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                                      "--no-index", "--quiet", "--target", target, SOURCE],
                                     capture_output=True, text=True, timeout=1800)
            self.assertEqual(install.returncode, 0, install.stderr)
            env = dict(os.environ, PYTHONPATH=target)
            program = os.path.join(target, "bin", "wafersim")
            version = subprocess.run([program, "--version"], env=env, capture_output=True, text=True, check=True)
            self.assertEqual(version.stdout, subprocess.run([BINARY, "--version"], capture_output=True, text=True,
                                                            check=True).stdout)
            # The installed module, run from elsewhere, gives the CLI's figures.
            script = ("import json, wafersim; print(json.dumps(wafersim.analytic(wafersim.config("
                      "model='llama3.2-1b', workload__decode_tokens=2, workload__prefill=False))['metrics']))")
            ours = subprocess.run([sys.executable, "-c", script], env=env, cwd=target, capture_output=True, text=True,
                                  check=True)
            theirs = subprocess.run([BINARY, "analytic", "--set", "model=llama3.2-1b", "--set",
                                     "workload.decode_tokens=2", "--set", "workload.prefill=false", "--quiet",
                                     "--json", "-"], capture_output=True, text=True, check=True)
            self.assertEqual(json.loads(ours.stdout)["total_cycles"], json.loads(theirs.stdout)["metrics"]["total_cycles"])


if __name__ == "__main__":
    unittest.main()
