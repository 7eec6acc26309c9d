#!/usr/bin/python3
"""Wall time per token and peak memory of the full-WSE-3 quickstart, for one or
more wafersim binaries measured in one sitting (the runs alternate between the
binaries, so a noisy machine slows them alike).

  scripts/bench_quickstart.py [--runs N] [--prefill] BINARY [BINARY ...]
  scripts/bench_quickstart.py --instructions BINARY [BINARY ...]

Each run is `BINARY run workloads/experiments/quickstart.yaml --quiet` with
`workload.prefill=false` (decode only; --prefill keeps the prefill). Per binary
it prints every run's wall time, the minimum and median seconds per decoded
token, the largest peak resident memory and the simulated cycles, which must
agree between binaries whose engine and compiler move no cycle.

--instructions counts instead the instructions a decode of 4 tokens executes
(valgrind's cachegrind, without its cache model; a few minutes per binary).
The count does not depend on how busy the machine is, so it shows changes of
a few percent that the wall time's noise hides; it includes the setup (the
compiler and the SystemC elaboration), the same in both binaries unless the
change touches them.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_workloads import QUICKSTART, Workload, one_run as one_workload_run  # noqa: E402


def one_run(binary, prefill):
    """(wall seconds, peak RSS bytes, decoded tokens, cycles) of one run."""
    command = ["run", QUICKSTART] + ([] if prefill else ["--set", "workload.prefill=false"])
    seconds_per_token, rss, cycles, tokens = one_workload_run(binary, Workload("quickstart", "", command,
                                                                                per_token=True))
    return seconds_per_token * tokens, rss, tokens, cycles


def instructions(binary):
    """(instructions, cycles) of a 4-token decode of the quickstart under cachegrind."""
    with tempfile.TemporaryDirectory() as folder:
        result_path = os.path.join(folder, "result.json")
        command = ["valgrind", "--tool=cachegrind", "--cache-sim=no",
                   "--cachegrind-out-file=" + os.path.join(folder, "cachegrind.out"),
                   binary, "run", QUICKSTART, "--quiet", "--set", "workload.prefill=false",
                   "--set", "workload.decode_tokens=4", "--json", result_path]
        try:
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
        except FileNotFoundError:
            sys.exit("--instructions needs valgrind (apt-get install valgrind)")
        if done.returncode != 0:
            sys.exit(f"{binary}: exit {done.returncode}: {done.stderr.strip()[-500:]}")
        refs = re.search(r"I\s+refs:\s+([0-9,]+)", done.stderr)
        if not refs:
            sys.exit(f"{binary}: no instruction count in valgrind's output")
        with open(result_path) as f:
            cycles = json.load(f).get("metrics", {}).get("total_cycles")
    return int(refs.group(1).replace(",", "")), cycles


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binaries", nargs="+", metavar="BINARY")
    parser.add_argument("--runs", type=int, default=3, help="runs per binary (default 3)")
    parser.add_argument("--prefill", action="store_true", help="keep the quickstart's prefill")
    parser.add_argument("--instructions", action="store_true",
                        help="count the instructions of a 4-token decode instead (cachegrind)")
    options = parser.parse_args()
    if options.runs < 1:
        parser.error("--runs must be at least 1")
    if options.instructions and options.prefill:
        parser.error("--instructions counts the decode alone; drop --prefill")
    if options.instructions:
        print(f"{'binary':40s} {'instructions':>16s} {'cycles':>12s}")
        for binary in options.binaries:
            count, cycles = instructions(binary)
            print(f"{binary:40s} {count:16,d} {cycles:>12}")
        return
    runs = {binary: [] for binary in options.binaries}
    for index in range(options.runs):
        for binary in options.binaries:
            runs[binary].append(one_run(binary, options.prefill))
            wall, rss, _, _ = runs[binary][-1]
            print(f"run {index + 1}/{options.runs} {binary}: {wall:.1f} s, {rss / 2**20:.0f} MiB", file=sys.stderr)
    print(f"{'binary':40s} {'wall per run (s)':30s} {'min s/token':>11s} {'median s/token':>14s} "
          f"{'peak RSS (MiB)':>14s} {'cycles':>12s}")
    for binary, measured in runs.items():
        per_token = [wall / tokens for wall, _, tokens, _ in measured]
        cycles = sorted({c for _, _, _, c in measured})
        print(f"{binary:40s} {' '.join(f'{w:.1f}' for w, _, _, _ in measured):30s} {min(per_token):11.3f} "
              f"{statistics.median(per_token):14.3f} {max(r for _, r, _, _ in measured) / 2**20:14.0f} "
              f"{','.join(map(str, cycles)):>12s}")


if __name__ == "__main__":
    main()
