#!/usr/bin/python3
"""How long a context fits in how much SRAM per tile: the compiler's largest
context (tokens) for several tile SRAM sizes, from the plan alone (no
simulation). A size whose weights do not fit is reported as such."""
import argparse

import _path  # noqa: F401
import wafersim

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--hardware", default="wse3")
parser.add_argument("--model", default="llama3.1-8b")
parser.add_argument("--sram-kib", type=int, nargs="+", default=[40, 48, 64, 96], help="SRAM per tile (KiB)")
args = parser.parse_args()

print(f"{'SRAM per tile (KiB)':>19}  {'wafers':>6}  {'max context (tokens)':>20}")
for kib in args.sram_kib:
    cfg = wafersim.config({"hardware": args.hardware, "model": args.model},
                          **{"hardware.tile.sram_bytes": kib * 1024})
    try:
        plan = wafersim.map(cfg)
    except wafersim.DoesNotFit as refused:
        print(f"{kib:>19}  {'-':>6}  does not fit: {refused.message}")
        continue
    print(f"{kib:>19}  {plan['wafers']:>6}  {plan['max_context_tokens']:>20}")
