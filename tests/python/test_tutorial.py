"""docs/TUTORIAL.md runs as written: every `$ command` of its console blocks,
from the source folder with the build's wafersim first on PATH, exits 0 and
prints every line shown under it (`...` skips lines; a line ending in ` ...`
stands for one that starts with what comes before it). Whitespace is
compared loosely: the tables' alignment may differ, their figures may not."""
import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import unittest

SOURCE = pathlib.Path(os.environ["WAFERSIM_SOURCE_DIR"])
BINARY = pathlib.Path(os.environ["WAFERSIM"])
BUILD = pathlib.Path(os.environ["WAFERSIM_BUILD_DIR"])
PAGE_SCRATCH = "/tmp/tutorial"  # where the page's commands write


def localized(text, scratch):
    """A line of the page with its scratch folder and build folder this run's: two suites running at once
    (other checkouts, other build trees) must not write into each other's files or load each other's module."""
    return text.replace(PAGE_SCRATCH, str(scratch)).replace("PYTHONPATH=build/python", f"PYTHONPATH={BUILD}/python")


def blocks():
    """[(command, expected lines)] of every console block, in order."""
    text = (SOURCE / "docs" / "TUTORIAL.md").read_text()
    steps = []
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


def loose(line):
    return " ".join(line.split())


class Tutorial(unittest.TestCase):
    def test_every_command_runs_and_prints_what_the_page_shows(self):
        scratch = pathlib.Path(tempfile.mkdtemp(prefix="wafersim-tutorial-"))
        self.addCleanup(shutil.rmtree, scratch, ignore_errors=True)
        env = dict(os.environ, PATH=f"{BINARY.parent}:{os.environ['PATH']}")
        steps = [(localized(command, scratch), [localized(line, scratch) for line in expected])
                 for command, expected in blocks()]
        self.assertGreaterEqual(len(steps), 8)
        self.assertTrue(any(str(scratch) in command for command, _ in steps))
        for command, expected in steps:
            with self.subTest(command=command):
                done = subprocess.run(["bash", "-c", command], cwd=SOURCE, env=env, capture_output=True, text=True,
                                      timeout=600)
                self.assertEqual(done.returncode, 0, done.stderr)
                printed = [loose(line) for line in (done.stdout + done.stderr).splitlines()]
                for line in expected:
                    if line.strip() == "...":
                        continue
                    if line.endswith(" ..."):
                        prefix = loose(line[:-4])
                        self.assertTrue(any(p.startswith(prefix) for p in printed), f"no line starts with: {prefix}")
                    else:
                        self.assertIn(loose(line), printed)


if __name__ == "__main__":
    unittest.main()
