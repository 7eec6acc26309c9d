#!/usr/bin/python3
# %% [markdown]
# # wafersim in a notebook
# A percent-format script: open it in Jupyter (jupytext), VS Code or Spyder
# and run it cell by cell, or run it whole with `/usr/bin/python3`. It loads
# the built-in default experiment, sweeps the batch in closed form, turns the
# points into a pandas DataFrame and plots throughput against latency.
# (`--hardware tiny --model tiny-dense` runs it in a second, as CI does.)

# %%
import argparse

import matplotlib

matplotlib.use("Agg")  # no display needed; in a notebook, drop this line to see the figure inline
import matplotlib.pyplot as plt

import _path  # noqa: F401
import wafersim

parser = argparse.ArgumentParser(description="wafersim in a notebook: a batch sweep as a DataFrame and a plot")
parser.add_argument("--hardware", default="wse3")
parser.add_argument("--model", default="llama3.1-8b")
parser.add_argument("--batches", type=int, nargs="+", default=[1, 2, 4, 8])
parser.add_argument("--plot", default="batch_sweep.png", help="where the figure goes")
args, _ = parser.parse_known_args()  # a notebook kernel passes arguments of its own

# %% The experiment: the built-in default, with the hardware and model chosen above.
base = wafersim.config(hardware=args.hardware, model=args.model, workload__prefill=False)
print(base.name, base.hash)

# %% A sweep in closed form, one point per batch size, as a DataFrame.
points = wafersim.sweep(base, {"workload.batch": args.batches}, jobs=2)
frame = points.frame()
table = frame[["point.workload.batch", "metrics.tokens_per_second", "metrics.per_token_latency_us.mean"]]
print(table.to_string(index=False))

# %% Throughput against per-token latency: what batching buys and costs.
figure, axes = plt.subplots(figsize=(5, 3.5))
axes.plot(frame["metrics.per_token_latency_us.mean"], frame["metrics.tokens_per_second"], marker="o")
for _, row in frame.iterrows():
    axes.annotate(f"batch {row['point.workload.batch']}",
                  (row["metrics.per_token_latency_us.mean"], row["metrics.tokens_per_second"]))
axes.set_xlabel("per-token latency, mean (us)")
axes.set_ylabel("throughput (tokens/s, all sequences)")
axes.set_title(f"{args.model} on {args.hardware}")
figure.tight_layout()
figure.savefig(args.plot)
print(f"wrote {args.plot}")
