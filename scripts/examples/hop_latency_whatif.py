#!/usr/bin/python3
"""What if a fabric hop took longer? Tokens/s and per-token latency of one
experiment (default: Llama 3.1 8B on one WSE-3) for several hop latencies,
from the closed form (milliseconds per point)."""
import argparse

import _path  # noqa: F401
import wafersim

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--hardware", default="wse3")
parser.add_argument("--model", default="llama3.1-8b")
parser.add_argument("--hops", type=int, nargs="+", default=[0, 1, 2, 4], help="hop latencies (cycles)")
args = parser.parse_args()

base = wafersim.config({"hardware": args.hardware, "model": args.model})
points = wafersim.sweep(base, {"hardware.fabric.hop_latency_cycles": args.hops}, jobs=2)
print(f"{'hop latency (cycles)':>20}  {'throughput (tokens/s)':>21}  {'latency p99 (us)':>16}")
for point in points:
    metrics = point["metrics"]
    print(f"{point['point']['hardware.fabric.hop_latency_cycles']:>20}  {metrics['tokens_per_second']:>21.1f}"
          f"  {metrics['per_token_latency_us']['p99']:>16.3f}")
