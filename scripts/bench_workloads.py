#!/usr/bin/python3
"""Wall time and peak memory of what users run, for one or more wafersim
binaries measured in one sitting: the runs alternate between the binaries, so a
noisy machine slows them alike, and each binary's figures are also given as a
ratio to the first binary's (the base).

  scripts/bench_workloads.py [--runs N] [--large] [--only NAME,...] [--write FILE] BINARY [BINARY ...]

The workloads are the rows of issue-tracked speed targets: decode of the full
WSE-3 quickstart (seconds per decoded token), the whole quickstart with its
prefill, a 4,096-token prefill, the closed form over 100,000 decoded tokens (of
8B, of gpt-oss-120b, an MoE model, and of deepseek-v3 over 10,000 tokens), over
a batch of 2,900 (8B) and of 64 (gpt-oss-120b), `map` of qwen3-235b-a22b (the
compiler on 14 wafers) and `serve` of 10,000 requests. --large adds Llama 3.1 70B on 4 WSE-3 (8 tokens,
every tile simulated; about 1.6 GB) and `map` of 405B with 1,024 layers (205
wafers; about 3 GB). Every run's result must agree between binaries where it
has a cycle count (the script stops if not: a speed change moves no cycle).
Peak memory is ru_maxrss as wait4 reports it for the command's process; a
`run` simulates its prefill in a child of its own, which that figure may leave
out. --write FILE writes the table as Markdown (the machine's cores and memory
and the binaries' commits in its heading).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXPERIMENTS = os.path.join(ROOT, "workloads", "experiments")
QUICKSTART = os.path.join(EXPERIMENTS, "quickstart.yaml")
SERVE_10K = os.path.join(EXPERIMENTS, "serving", "llama8b-10k.yaml")
CODING_SPARK = os.path.join(EXPERIMENTS, "coding_spark.yaml")


class Workload:
    def __init__(self, name, what, command, unit="s", per_token=False, large=False):
        self.name, self.what, self.command = name, what, command
        self.unit, self.per_token, self.large = unit, per_token, large


WORKLOADS = [
    Workload("decode-8b", "full WSE-3 Llama 3.1 8B decode, 32 tokens, every tile simulated (per token)",
             ["run", QUICKSTART, "--set", "workload.prefill=false"], unit="s/token", per_token=True),
    Workload("quickstart", "the quickstart: 2,900-token prefill and 32 tokens, every tile simulated",
             ["run", QUICKSTART]),
    Workload("prefill-4096", "4,096-token prefill of Llama 3.1 8B on WSE-3 (and 1 token)",
             ["run", QUICKSTART, "--set", "workload.prompt_tokens=4096", "--set", "workload.decode_tokens=1"]),
    Workload("analytic-100k", "closed form of 100,000 decoded tokens (8B, 100-token prompt)",
             ["analytic", QUICKSTART, "--set", "workload.prefill=false", "--set", "workload.prompt_tokens=100",
              "--set", "workload.decode_tokens=100000"]),
    Workload("analytic-moe-100k", "closed form of 100,000 decoded tokens of gpt-oss-120b (MoE, 4,096-token prompt)",
             ["analytic", CODING_SPARK, "--set", "workload.decode_tokens=100000"]),
    Workload("analytic-batch-2900", "closed form of batch 2,900 x 32 tokens (8B)",
             ["analytic", QUICKSTART, "--set", "workload.prefill=false", "--set", "workload.batch=2900"]),
    Workload("analytic-moe-batch-64", "closed form of batch 64 x 1,000 tokens of gpt-oss-120b (MoE)",
             ["analytic", CODING_SPARK, "--set", "workload.batch=64", "--set", "workload.decode_tokens=1000"]),
    Workload("analytic-deepseek-10k", "closed form of 10,000 decoded tokens of deepseek-v3 (29 WSE-3)",
             ["analytic", CODING_SPARK, "--set", "model=deepseek-v3", "--set", "workload.decode_tokens=10000"]),
    Workload("map-qwen3", "map of qwen3-235b-a22b (auto wafers, with its prefill plan)",
             ["map", QUICKSTART, "--set", "model=qwen3-235b-a22b"]),
    Workload("serve-10k", "serve of 10,000 requests of Llama 3.1 8B (closed form)", ["serve", SERVE_10K]),
    Workload("decode-70b", "Llama 3.1 70B on 4 WSE-3, 8 tokens, every tile simulated (per token)",
             ["run", QUICKSTART, "--set", "model=llama3.1-70b", "--set", "workload.prefill=false", "--set",
              "workload.decode_tokens=8", "--set", "workload.prompt_tokens=1024"],
             unit="s/token", per_token=True, large=True),
    Workload("map-405b-1024", "map of Llama 3.1 405B with 1,024 layers (205 WSE-3)",
             ["map", QUICKSTART, "--set", "model=llama3.1-405b", "--set", "model.n_layers=1024"], large=True),
]


def one_run(binary, workload):
    """(figure, peak RSS bytes, cycles or None, decoded tokens) of one run of `workload`."""
    with tempfile.TemporaryDirectory() as folder:
        result_path = os.path.join(folder, "result.json")
        command = [binary] + workload.command + ["--quiet", "--json", result_path]
        start = time.monotonic()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.monotonic() - start
        error = child.stderr.read().decode()
        child.stderr.close()
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"{binary} {workload.name}: exit {code}: {error.strip()}")
        with open(result_path) as f:
            result = json.load(f)
    cycles = result.get("metrics", {}).get("total_cycles")
    experiment = result.get("experiment", {})
    tokens = experiment.get("batch", 0) * experiment.get("decode_tokens", 0)
    return (wall / tokens if workload.per_token else wall), usage.ru_maxrss * 1024, cycles, tokens


def commit_of(binary):
    """The commit of the checkout a binary was built in (its build folder lies inside it), or '?'."""
    folder = os.path.dirname(os.path.realpath(binary))
    try:
        out = subprocess.run(["git", "-C", folder, "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except OSError:
        return "?"
    return out[:100] or "?"


def table(workloads, binaries, runs):
    base = binaries[0]
    header = ["workload", "binary", "runs", "median", "min", "peak RSS (MiB)", "median / base"]
    rows = []
    for workload in workloads:
        base_median = statistics.median(f for f, _, _, _ in runs[(workload.name, base)])
        for binary in binaries:
            measured = runs[(workload.name, binary)]
            figures = [f for f, _, _, _ in measured]
            median = statistics.median(figures)
            rows.append([workload.name, binary, " ".join(f"{f:.3g}" for f in figures),
                         f"{median:.3g} {workload.unit}", f"{min(figures):.3g} {workload.unit}",
                         f"{max(r for _, r, _, _ in measured) / 2**20:.0f}", f"{median / base_median:.2f}"])
    return header, rows


def markdown(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binaries", nargs="+", metavar="BINARY")
    parser.add_argument("--runs", type=int, default=2, help="runs per binary and workload (default 2)")
    parser.add_argument("--large", action="store_true", help="add the 70B and 405B workloads")
    parser.add_argument("--only", default="", help="comma-separated workload names (default: all)")
    parser.add_argument("--write", metavar="FILE", help="write the table as Markdown to FILE")
    options = parser.parse_args()
    if options.runs < 1:
        parser.error("--runs must be at least 1")
    for binary in options.binaries:
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary}: not an executable file")
    names = [name for name in options.only.split(",") if name]
    known = {w.name for w in WORKLOADS}
    for name in names:
        if name not in known:
            parser.error(f"--only: unknown workload '{name}' (known: {', '.join(sorted(known))})")
    workloads = [w for w in WORKLOADS if (w.name in names if names else options.large or not w.large)]

    runs = {}
    for workload in workloads:
        for index in range(options.runs):
            for binary in options.binaries:
                measured = one_run(binary, workload)
                runs.setdefault((workload.name, binary), []).append(measured)
                print(f"{workload.name} run {index + 1}/{options.runs} {binary}: {measured[0]:.3g} {workload.unit}, "
                      f"{measured[1] / 2**20:.0f} MiB", file=sys.stderr)
        cycles = {c for binary in options.binaries for _, _, c, _ in runs[(workload.name, binary)]}
        if len(cycles) > 1:
            sys.exit(f"{workload.name}: the binaries simulate different cycles: {sorted(cycles, key=str)}")

    header, rows = table(workloads, options.binaries, runs)
    text = markdown(header, rows)
    print(text)
    if options.write:
        heading = [f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} cores, "
                   f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; "
                   f"{options.runs} run(s) each, alternating between the binaries.", ""]
        heading += [f"- `{binary}`: {commit_of(binary)}" for binary in options.binaries]
        heading += ["", "Workloads:", ""] + [f"- `{w.name}`: {w.what}" for w in workloads] + [""]
        with open(options.write + ".tmp", "w") as f:
            f.write("\n".join(heading) + "\n" + text + "\n")
        os.replace(options.write + ".tmp", options.write)


if __name__ == "__main__":
    main()
