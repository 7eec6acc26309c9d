#!/usr/bin/python3
"""The fewest wafers a model fits on, for a given context: tries 1, 2, 3, ...
wafers with the compiler until the plan fits, then gives the closed form's
tokens/s there and on one more wafer."""
import argparse

import _path  # noqa: F401
import wafersim

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--hardware", default="wse3")
parser.add_argument("--model", default="llama3.1-70b")
parser.add_argument("--prompt-tokens", type=int, default=2048)
parser.add_argument("--max-wafers", type=int, default=16)
args = parser.parse_args()

base = wafersim.config({"hardware": args.hardware, "model": args.model,
                        "workload": {"prompt_tokens": args.prompt_tokens, "decode_tokens": 8}})
for wafers in range(1, args.max_wafers + 1):
    try:
        wafersim.map(wafersim.config(base, **{"hardware.wafers": wafers}))
    except wafersim.DoesNotFit as refused:
        print(f"{wafers} wafer(s): does not fit ({refused.message})")
        continue
    for count in (wafers, wafers + 1):
        result = wafersim.analytic(wafersim.config(base, **{"hardware.wafers": count}))
        print(f"{count} wafer(s): fits, {result['metrics']['tokens_per_second']:.1f} tokens/s")
    break
else:
    raise SystemExit(f"{args.model} does not fit on {args.max_wafers} wafers of {args.hardware}")
