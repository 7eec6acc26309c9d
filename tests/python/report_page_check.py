#!/usr/bin/python3
"""`wafersim report` in a real browser: headless Chromium (Debian's `chromium`)
loads the page of a decode result (with an explanation), a serve result, a
search's search.json and a --heatmaps folder; the page
must render its sections and charts, log nothing to the console (it needs no
script, and its Content-Security-Policy makes a browser log any script or load)
and give a non-blank screenshot. Exit 77 (ctest: skipped) when chromium is not
installed (scripts/setup.sh installs it)."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import unittest
import zlib

SOURCE = os.environ.get("WAFERSIM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
WAFERSIM = os.environ.get("WAFERSIM", os.path.join(SOURCE, "build", "sim", "wafersim"))
SCREENSHOT = os.environ.get("REPORT_SCREENSHOT", "")  # where to keep the screenshot; a temporary file without
TINY_DENSE = os.path.join(SOURCE, "tests", "data", "experiments", "tiny-dense.yaml")
TINY_SERVE = os.path.join(SOURCE, "tests", "data", "serving", "tiny-serve.yaml")
CHROMIUM = shutil.which("chromium")


def chromium(scratch, page, *mode):
    """Chromium's stdout and its log (stderr) for `page` in `mode` (--dump-dom or --screenshot=...)."""
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
                           "--user-data-dir=" + os.path.join(scratch, "profile"), *mode, "file://" + page],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        raise AssertionError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout, done.stderr


def console_lines(log):
    """What the page logged to the console: script errors, refused scripts and loads."""
    return [line for line in log.splitlines() if ":CONSOLE" in line]


def png_pixels(path):
    """Width, height and the decompressed rows of a PNG file."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        raise AssertionError(f"{path} is not a PNG")
    width, height = struct.unpack(">II", data[16:24])
    idat, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + length]
        at += 12 + length
    return width, height, zlib.decompress(idat)


class ReportPage(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp()
        run = lambda *args: subprocess.run([WAFERSIM, *args, "--quiet"], check=True)  # noqa: E731
        decode = os.path.join(cls.scratch, "analytic.json")
        serve = os.path.join(cls.scratch, "serve.json")
        maps = os.path.join(cls.scratch, "maps")
        run("analytic", TINY_DENSE, "--json", decode)
        run("run", TINY_DENSE, "--set", "sim.contention=true", "--heatmaps", maps)
        run("serve", TINY_SERVE, "--json", serve)
        with open(decode) as handle:
            explained = json.load(handle)
        explained["explain"] = {"latency_bound_by": "reduce tree depth"}
        with open(decode, "w") as handle:
            json.dump(explained, handle)
        search = os.path.join(cls.scratch, "search.json")
        front = [{"values": {"mapping.reduce_k": k}, "objective": speed, "pareto": 1, "file": f"points/{k}.yaml"}
                 for k, speed in ((2, 5000.0), (3, 6000.0))]
        with open(search, "w") as handle:
            json.dump({"version": "0.1.0", "experiment": "tiny.yaml", "strategy": "grid", "default": front[0],
                       "best": front[1], "objective": {"name": "tokens_per_second_per_user"},
                       "pareto_against": {"name": "wafers"}, "pareto": front}, handle)
        cls.page = os.path.join(cls.scratch, "report.html")
        subprocess.run([WAFERSIM, "report", decode, serve, search, "--heatmaps", maps, "-o", cls.page], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def test_the_browser_renders_every_section_and_chart(self):
        dom, log = chromium(self.scratch, self.page, "--dump-dom")
        for title in ("Inputs", "Why", "Metrics", "Critical path", "Per layer", "Per step", "Energy", "Serving",
                      "Search", "Heatmaps"):
            self.assertIn(f"<h2>{title}</h2>", dom)
        self.assertGreaterEqual(dom.count("<svg"), 10)
        self.assertIn("<rect", dom)
        self.assertIn("<circle", dom)
        self.assertIn("throughput per user", dom)
        self.assertIn("compute_busy_fraction, wafer 0", dom)
        self.assertEqual(console_lines(log), [])

    def test_the_screenshot_shows_a_page(self):
        path = SCREENSHOT or os.path.join(self.scratch, "report.png")
        _, log = chromium(self.scratch, self.page, "--screenshot=" + path, "--window-size=1200,1600")
        self.assertEqual(console_lines(log), [])
        width, height, pixels = png_pixels(path)
        self.assertEqual((width, height), (1200, 1600))
        # A blank page is one colour: the charts and tables give many.
        self.assertGreater(len(set(pixels)), 64)

    def test_the_console_check_sees_what_a_page_logs(self):
        # The check above passes only if it can fail: a page with a script error and a refused load.
        bad = os.path.join(self.scratch, "bad.html")
        with open(self.page) as handle:
            page = handle.read()
        with open(bad, "w") as handle:
            handle.write(page.replace("</body>", "<script>missing();</script></body>"))
        _, log = chromium(self.scratch, bad, "--dump-dom")
        self.assertEqual(len(console_lines(log)), 1, log)


if __name__ == "__main__":
    if not CHROMIUM:
        print("report_page_check.py: chromium is not installed (apt-get install chromium): skipped", file=sys.stderr)
        sys.exit(77)
    unittest.main()
