"""Every Python 3 interpreter on the machine either imports the module built
for /usr/bin/python3 or is told, in one message, which interpreter the module
was built for and how to build it for this one (never a misleading error)."""
import glob
import os
import shutil
import subprocess
import sys
import unittest

BUILD = os.environ["WAFERSIM_BUILD_DIR"]


def interpreters():
    """Distinct python3.X executables: on PATH, in /usr/bin and in pyenv's versions."""
    found = {}
    candidates = [shutil.which(f"python3.{minor}") for minor in range(6, 20)]
    candidates += glob.glob("/usr/bin/python3.[0-9]*") + glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3"))
    for path in candidates:
        if not path or not os.access(path, os.X_OK) or path.endswith("-config"):
            continue
        # A pyenv shim for a version that is not selected is not an interpreter.
        if subprocess.run([path, "-c", "import sys"], capture_output=True).returncode != 0:
            continue
        real = os.path.realpath(path)
        found.setdefault(real, path)
    return sorted(found.values())


class EveryInterpreter(unittest.TestCase):
    def test_imports_or_names_the_interpreter_it_was_built_for(self):
        built = subprocess.run([sys.executable, "-c", "import wafersim._build_info as b; print(b.PYTHON_VERSION)"],
                               env=dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python")), capture_output=True,
                               text=True, check=True).stdout.strip()
        paths = interpreters()
        self.assertTrue(paths)
        for path in paths:
            with self.subTest(interpreter=path):
                result = subprocess.run([path, "-c", "import wafersim; print(wafersim.__version__)"],
                                        env=dict(os.environ, PYTHONPATH=os.path.join(BUILD, "python")),
                                        capture_output=True, text=True, timeout=600)
                if result.returncode == 0:
                    self.assertTrue(result.stdout.strip())
                    continue
                self.assertIn(f"built for Python {built}", result.stderr)
                self.assertIn("-DPython_EXECUTABLE=", result.stderr)
                self.assertNotIn("circular import", result.stderr.splitlines()[-1])


if __name__ == "__main__":
    unittest.main()
