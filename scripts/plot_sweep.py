#!/usr/bin/python3
"""Plot the results of a `wafersim sweep`: one metric against one axis, one line
per value of the other axes; with --breakdown, each point's critical path.

    plot_sweep.py DIR [--x AXIS] [--y METRIC] [--hue AXIS] [--repeat AXIS] [--out FILE.png] [--all] [--breakdown]

Defaults: the first axis on x, the first metric on y, the second axis as hue.
The y axis starts at zero (it takes in zero below negative values), so
heights compare as the values do. The title names the model, the hardware
and the batch the points ran (or which axis varies them), from the points'
records. Points that failed or do not fit have no value: the title counts
them, and those that do not fit are marked x along the bottom edge. Repeats
of a point (the repeat.seed column, or the axis --repeat names, such as a
seed of the hardware's defects) are averaged, with their range as error
bars. Columns are named by the shortest end of their path that no other
column shares (metrics.tokens_per_second: tokens_per_second; a statistic
keeps its figure: per_token_latency_us.mean), in file names and legends.
Without --out, each plot goes to DIR/plots/METRIC_vs_X_by_HUE.png (no
_by_HUE part without a hue axis), odd characters of the names replaced by
_; --breakdown draws one stacked bar per point of metrics.breakdown (the
shares of the critical path) into DIR/plots/breakdown.png. The path of every
file written is printed. Axis labels
carry the units of the parameters and metrics, as `wafersim describe params`
and `wafersim describe metrics` declare them (the wafersim program is looked
for in $WAFERSIM, next to this script in a build or an install, then on PATH).
"""
import argparse
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend is chosen first)
import yaml  # noqa: E402

SEED_COLUMN = "repeat.seed"


def find_wafersim():
    """The wafersim program: $WAFERSIM, the source tree's build, the install this script is part of, or PATH."""
    here = os.path.dirname(os.path.realpath(__file__))
    candidates = [os.environ.get("WAFERSIM", ""),
                  os.path.join(here, "..", "build", "sim", "wafersim"),  # scripts/ of the source tree
                  os.path.join(here, "..", "..", "..", "bin", "wafersim"),  # PREFIX/share/wafersim/scripts
                  shutil.which("wafersim") or ""]
    return next((c for c in candidates if c and os.access(c, os.X_OK)), None)


def declared_units():
    """{parameter or metric path: unit} from the program's declarations; {} without the program."""
    program = find_wafersim()
    if not program:
        print("plot_sweep.py: wafersim not found (set WAFERSIM): axis labels without units", file=sys.stderr)
        return {}
    units = {}
    try:
        listed = subprocess.run([program, "describe", "metrics", "--json", "-"], capture_output=True, text=True,
                                check=True).stdout
        for metric in json.loads(listed)["metrics"]:
            units[metric["path"]] = metric["unit"]
        # "hardware.tile.sram_bytes  (int, bytes)": the header line of each parameter.
        params = subprocess.run([program, "describe", "params"], capture_output=True, text=True, check=True).stdout
        for match in re.finditer(r"^(\S+)  \(([^,)]+)(?:, ([^)]+))?\)$", params, re.MULTILINE):
            units[match.group(1)] = match.group(3) or ""
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as error:
        print(f"plot_sweep.py: cannot read the units from {program}: {error}", file=sys.stderr)
    return units


def label_with_unit(path, units):
    unit = units.get(path, "")
    return f"{path} ({unit})" if unit else path


def fail(message):
    print(f"plot_sweep.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_sweep(folder):
    """The table's rows and which of its columns are axes and which metrics."""
    csv_path = os.path.join(folder, "results.csv")
    sweep_path = os.path.join(folder, "sweep.yaml")
    for path in (csv_path, sweep_path):
        if not os.path.isfile(path):
            fail(f"{path} not found: is {folder} the --out folder of a wafersim sweep?")
    with open(sweep_path) as f:
        metrics = (yaml.safe_load(f) or {}).get("metrics") or []
    with open(csv_path, newline="") as f:
        reader = csv.DictReader(f)
        header = reader.fieldnames or []
        rows = list(reader)
    # The table holds the axis columns first, then the metrics (docs/SWEEPS.md).
    first_metric = next((i for i, name in enumerate(header) if name in metrics), len(header))
    return rows, header[:first_metric], [m for m in metrics if m in header], header


def number(text):
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def ordered_values(rows, column):
    """Distinct values of a column: numerically sorted when all are numbers."""
    values = list(dict.fromkeys(row[column] for row in rows))
    if all(number(v) is not None for v in values):
        values.sort(key=number)
    return values


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_")


STATISTICS = {"mean", "p50", "p90", "p99", "max", "min", "peak"}


def short_name(path, columns):
    """The shortest end of a dotted path that no other column ends with and that says more than a statistic
    (per_token_latency_us.mean, not mean)."""
    parts = path.split(".")
    for count in range(1, len(parts) + 1):
        end = ".".join(parts[-count:])
        if all(part in STATISTICS for part in parts[-count:]):
            continue
        if not any(other != path and (other == end or other.endswith("." + end)) for other in columns):
            return end
    return path


def read_records(folder, rows):
    """Each finished row's point record (points/<config_hash>.json), in row order; None where there is none."""
    records = []
    for row in rows:
        path = os.path.join(folder, "points", safe_name(row.get("config_hash", "")) + ".json")
        try:
            with open(path) as f:
                records.append(json.load(f))
        except (OSError, ValueError):
            records.append(None)
    return records


def setup_title(records, axes):
    """"model M, hardware H, batch B" of the points' results; a figure that differs between points is named by
    the axis that varies it (hardware: a preset's modified parameters are the axes, so only the preset counts)."""
    def values(key):
        found = set()
        for record in records:
            experiment = ((record or {}).get("result") or {}).get("experiment") or {}
            if key in experiment:
                found.add(str(experiment[key]).split(" (modified")[0])
        return found
    parts = []
    for key, name, axis_prefix in (("model", "model", "model"), ("hardware", "hardware", "hardware"),
                                   ("batch", "batch", "workload.batch"), ("max_batch", "max batch", "serving")):
        found = values(key)
        if len(found) == 1:
            parts.append(f"{name} {found.pop()}")
        elif found:
            varying = [a for a in axes if a == axis_prefix or a.startswith(axis_prefix + ".")]
            parts.append(f"{name} by {', '.join(varying) or 'point'}")
    return ", ".join(parts)


def start_from_zero(axis):
    """Zero in view on the y axis: bars and lines are read against it."""
    low, high = axis.get_ylim()
    axis.set_ylim(min(0.0, low), max(0.0, high))


def plot(rows, axes, x, y, hue, out_path, units, columns, setup, repeats=frozenset({SEED_COLUMN})):
    x_values = ordered_values(rows, x)
    numeric_x = all(number(v) is not None for v in x_values)
    position = {v: (number(v) if numeric_x else i) for i, v in enumerate(x_values)}
    # One line per combination of the other axes, the hue axis first.
    others = [a for a in axes if a != x and a not in repeats and a != hue]
    others = [a for a in others if len(set(row[a] for row in rows)) > 1]
    line_axes = ([hue] if hue else []) + others

    lines = {}
    missing = 0
    not_fitting = []
    for row in rows:
        value = number(row.get(y, ""))
        if value is None:
            missing += 1
            if row.get("status") == "does_not_fit":
                not_fitting.append(position[row[x]])
            continue
        key = tuple(row[a] for a in line_axes)
        lines.setdefault(key, {}).setdefault(row[x], []).append(value)

    figure, axis = plt.subplots(figsize=(8, 5), dpi=120)
    keys = sorted(lines, key=lambda k: tuple(
        (0, number(v), "") if number(v) is not None else (1, 0.0, v) for v in k))
    for key in keys:
        by_x = lines[key]
        xs = [v for v in x_values if v in by_x]
        means = [sum(by_x[v]) / len(by_x[v]) for v in xs]
        # The mean of equal values may round past them: a range is never negative.
        low = [max(0.0, m - min(by_x[v])) for m, v in zip(means, xs)]
        high = [max(0.0, max(by_x[v]) - m) for m, v in zip(means, xs)]
        label = ", ".join(f"{short_name(a, columns)}={v}" for a, v in zip(line_axes, key)) or None
        # Categories (model names) have no order to draw a line along.
        style = "-" if numeric_x else "none"
        if any(low) or any(high):
            axis.errorbar([position[v] for v in xs], means, yerr=[low, high], marker="o", capsize=3,
                          linestyle=style, label=label)
        else:
            axis.plot([position[v] for v in xs], means, marker="o", linestyle=style, label=label)

    if not_fitting:
        # Along the bottom edge: where the model does not fit, there is no value to draw.
        axis.plot(not_fitting, [0.03] * len(not_fitting), "x", color="black",
                  transform=axis.get_xaxis_transform(), label="does not fit")
    if numeric_x:
        positive = [position[v] for v in x_values if position[v] > 0]
        # Powers-of-two sweeps read best on a log2 axis.
        if len(positive) == len(x_values) and len(x_values) > 2 and max(positive) / min(positive) >= 16:
            axis.set_xscale("log", base=2)
        if len(x_values) <= 12:
            axis.set_xticks([position[v] for v in x_values])
            axis.set_xticklabels(x_values)
    else:
        axis.set_xticks(range(len(x_values)))
        axis.set_xticklabels(x_values, rotation=30, ha="right")
    start_from_zero(axis)
    axis.set_xlabel(label_with_unit(x, units))
    axis.set_ylabel(label_with_unit(y, units))
    title = f"{short_name(y, columns)} vs {short_name(x, columns)}" + (f"\n{setup}" if setup else "")
    if missing:
        title += f"\n({missing} point(s) without a value: failed or do not fit)"
    axis.set_title(title, fontsize=10)
    axis.grid(True, alpha=0.3)
    if line_axes or not_fitting:
        # Beside the plot, not over the lines.
        axis.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    figure.savefig(out_path, bbox_inches="tight")
    plt.close(figure)


def plot_breakdown(rows, records, axes, out_path, columns, setup):
    """One horizontal bar per point: the shares of its critical path (metrics.breakdown), stacked to 100 %."""
    varying = [a for a in axes if len(set(row[a] for row in rows)) > 1]
    labels, shares = [], []
    for row, record in zip(rows, records):
        breakdown = (((record or {}).get("result") or {}).get("metrics") or {}).get("breakdown")
        if not breakdown:
            continue
        labels.append(", ".join(f"{short_name(a, columns)}={row[a]}" for a in varying) or row.get("config_hash", ""))
        shares.append(breakdown)
    if not shares:
        fail("no point has a metrics.breakdown to draw (a run or analytic sweep's points/<hash>.json)")
    # The order docs/METRICS.md lists them in, whatever order the records keep.
    order = ["compute", "fabric", "reduce", "offwafer", "contention"]
    parts = order + sorted(set(part for share in shares for part in share) - set(order))
    figure, axis = plt.subplots(figsize=(9, 1.2 + 0.35 * len(shares)), dpi=120)
    left = [0.0] * len(shares)
    for part in parts:
        widths = [100 * share.get(part, 0.0) for share in shares]
        axis.barh(range(len(shares)), widths, left=left, label=part)
        left = [a + b for a, b in zip(left, widths)]
    axis.set_yticks(range(len(shares)))
    axis.set_yticklabels(labels, fontsize=8)
    axis.invert_yaxis()  # the first point on top, as in results.csv
    axis.set_xlim(0, 100)
    axis.set_xlabel("share of the critical path (%)")
    axis.set_title("critical path per point" + (f"\n{setup}" if setup else ""), fontsize=10)
    axis.legend(fontsize=9, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    figure.savefig(out_path, bbox_inches="tight")
    plt.close(figure)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", metavar="DIR", help="the --out folder of a wafersim sweep")
    parser.add_argument("--x", help="column on the x axis (default: the first axis)")
    parser.add_argument("--y", help="column on the y axis (default: the first metric)")
    parser.add_argument("--hue", help="axis drawn as one line per value (default: the second axis)")
    parser.add_argument("--repeat", help="axis whose values repeat one point (a seed): averaged, with their range")
    parser.add_argument("--out", help="PNG file to write (default: DIR/plots/Y_vs_X_by_HUE.png)")
    parser.add_argument("--all", action="store_true", help="one plot per metric, each into DIR/plots/")
    parser.add_argument("--breakdown", action="store_true",
                        help="one stacked bar per point of its critical path (metrics.breakdown), "
                             "to DIR/plots/breakdown.png or --out")
    args = parser.parse_args()

    rows, axes, metrics, header = read_sweep(args.folder)
    if not rows:
        fail(f"{args.folder}/results.csv has no rows yet")
    if not axes:
        fail(f"{args.folder}/results.csv has no axis columns")
    for option in ("x", "y", "hue", "repeat"):
        name = getattr(args, option)
        if name and name not in header:
            fail(f"--{option} {name} is not a column of results.csv; columns: {', '.join(header)}")
    x = args.x or axes[0]
    repeats = {SEED_COLUMN, args.repeat} - {None}
    free_axes = [a for a in axes if a != x and a not in repeats]
    hue = args.hue if args.hue else (free_axes[0] if free_axes else None)
    if hue == x:
        fail("--hue and --x name the same column")
    records = read_records(args.folder, rows)
    setup = setup_title(records, axes)
    if args.breakdown:
        if args.all:
            fail("--breakdown draws one plot; --all one per metric")
        out_path = args.out or os.path.join(args.folder, "plots", "breakdown.png")
        os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
        plot_breakdown(rows, records, axes, out_path, header, setup)
        print(out_path)
        return
    ys = metrics if args.all else [args.y or (metrics[0] if metrics else None)]
    if not ys or ys[0] is None:
        fail("the sweep has no metric columns; name one with --y")
    if args.out and len(ys) > 1:
        fail("--out names one file; --all writes one per metric into DIR/plots/")

    units = declared_units()
    for y in ys:
        out_path = args.out
        if not out_path:
            os.makedirs(os.path.join(args.folder, "plots"), exist_ok=True)
            name = (f"{safe_name(short_name(y, header))}_vs_{safe_name(short_name(x, header))}" +
                    (f"_by_{safe_name(short_name(hue, header))}" if hue else ""))
            out_path = os.path.join(args.folder, "plots", name + ".png")
        plot(rows, axes, x, y, hue, out_path, units, header, setup, repeats)
        print(out_path)


if __name__ == "__main__":
    main()
